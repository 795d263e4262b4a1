"""Group configs (KIP-848's dynamic per-group settings, ConfigResource type GROUP = 32), pure: which keys there are,
how the controller validates a group's new set against the broker bounds (Kafka's ``GroupConfig.validate``), what
DescribeConfigs answers for a group, and which value the coordinator uses.

Facts of Kafka 4.4, checked against a running broker:

* the keys are the ``group`` rows of ``kafka_configs.tsv``; each reads its default from a broker key
  (``consumer.session.timeout.ms`` from ``group.consumer.session.timeout.ms``, ``streams.assignor.name`` from the
  first of ``group.streams.assignors``), except a few that only have their own default (``share.auto.offset.reset``,
  the dead-letter-queue keys...);
* the controller refuses, INVALID_CONFIG: an unknown key (``Unknown group config name: x``), a value of the wrong
  type (``kafka_configs.check``'s messages), a value outside the broker's bounds (``consumer.session.timeout.ms must
  be in the range 45000 to 60000 inclusive.`` with ``group.consumer.min/max.session.timeout.ms``), a session timeout
  not above the heartbeat interval (the broker's value standing in for the one the group does not set), a streams
  assignor the broker does not register, duplicate rack tags, a DLQ topic name starting with ``__``; the empty group
  name: INVALID_REQUEST ``Default group resources are not allowed.``;
* DescribeConfigs lists every key in Kafka's (HashMap) order, none read-only nor flagged default: GROUP_CONFIG (8)
  where the group sets it, else the broker key's value and the source of the layer that sets it (dynamic broker,
  dynamic default, static file, else DEFAULT_CONFIG); the empty name is INVALID_REQUEST ``Group name must not be
  empty``; any other name is answered, whether a group of that name exists or not;
* the coordinator uses the group's value clamped into the broker's current bounds (Kafka's ``GroupConfig.evaluate``:
  bounds may have changed since the value was set), else the broker's.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping

from kraftwire import kafka_configs
from kraftwire.metadata.config_order import in_described_order

GROUP = 32  # ConfigResource.Type.GROUP
GROUP_CONFIG = 8  # DescribeConfigs ConfigSource.GROUP_CONFIG
KEYS = kafka_configs.GROUP
#: DescribeConfigs' order (``config_order``)
ORDER: tuple[str, ...] = tuple(in_described_order("group", KEYS))

SESSION, HEARTBEAT = "consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"
ASSIGNOR, ASSIGNORS = "streams.assignor.name", "group.streams.assignors"
RACK_TAGS = "streams.rack.aware.assignment.tags"
DLQ_TOPIC = "errors.deadletterqueue.topic.name"
AUTO_OFFSET_RESET = "share.auto.offset.reset"

#: group key -> (broker key of its lower bound, of its upper bound), in the order Kafka checks them
BOUNDS: dict[str, tuple[str | None, str | None]] = {
    "consumer.heartbeat.interval.ms": ("group.consumer.min.heartbeat.interval.ms",
                                       "group.consumer.max.heartbeat.interval.ms"),
    "consumer.session.timeout.ms": ("group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
    "consumer.assignment.interval.ms": ("group.consumer.min.assignment.interval.ms",
                                        "group.consumer.max.assignment.interval.ms"),
    "share.heartbeat.interval.ms": ("group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"),
    "share.session.timeout.ms": ("group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"),
    "share.record.lock.duration.ms": ("group.share.min.record.lock.duration.ms",
                                      "group.share.max.record.lock.duration.ms"),
    "share.delivery.count.limit": ("group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"),
    "share.partition.max.record.locks": ("group.share.min.partition.max.record.locks",
                                         "group.share.max.partition.max.record.locks"),
    "share.assignment.interval.ms": ("group.share.min.assignment.interval.ms",
                                     "group.share.max.assignment.interval.ms"),
    "streams.heartbeat.interval.ms": ("group.streams.min.heartbeat.interval.ms",
                                      "group.streams.max.heartbeat.interval.ms"),
    "streams.session.timeout.ms": ("group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"),
    "streams.num.standby.replicas": (None, "group.streams.max.standby.replicas"),
    "streams.assignment.interval.ms": ("group.streams.min.assignment.interval.ms",
                                       "group.streams.max.assignment.interval.ms"),
}
#: (session key, heartbeat key) pairs: the session must exceed the heartbeat interval
SESSION_PAIRS = (("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"),
                 ("share.session.timeout.ms", "share.heartbeat.interval.ms"),
                 ("streams.session.timeout.ms", "streams.heartbeat.interval.ms"))

BrokerValue = Callable[[str], "str | None"]


def broker_synonym(key: str) -> str | None:
    """The broker key a group key takes its default from, or None."""
    if key == ASSIGNOR:
        return ASSIGNORS
    name = "group." + key
    return name if name in kafka_configs.BROKER else None


def _int(value: str | None) -> int | None:
    try:
        return int(value.strip()) if value is not None else None
    except ValueError:
        return None


def _broker_int(broker: BrokerValue, key: str | None) -> int | None:
    return _int(broker(key)) if key is not None else None


def _list(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _check_auto_offset_reset(value: str) -> str:
    text = value.strip().lower()
    if text in ("earliest", "latest") or (text.startswith("by_duration:") and _iso_duration(text[12:])):
        return ""
    return (f"Invalid value {value} for configuration {AUTO_OFFSET_RESET}: Invalid value `{value}` for configuration "
            f"{AUTO_OFFSET_RESET}. The value must be either 'earliest', 'latest' or of the format "
            "'by_duration:<PnDTnHnMn.nS>'.")


def _iso_duration(text: str) -> bool:
    """A non-negative ISO-8601 duration as Java's ``Duration.parse`` reads it (PnDTnHnMn.nS)."""
    return re.fullmatch(r"p(\d+d)?(t(\d+h)?(\d+m)?(\d+(\.\d+)?s)?)?", text) is not None and text not in ("p", "pt") \
        and not text.endswith("t")


def validate(configs: Mapping[str, str], broker: BrokerValue) -> str:
    """"" when Kafka's controller accepts ``configs`` (a group's whole new set) with the broker keys ``broker(name)``
    answers, else its INVALID_CONFIG message."""
    for key in configs:
        if key not in KEYS:
            return f"Unknown group config name: {key}"
    tags = _list(configs.get(RACK_TAGS))
    if len(set(tags)) != len(tags):
        return f"{RACK_TAGS} must not contain duplicate tag keys."
    for key, value in configs.items():
        why = _check_auto_offset_reset(value) if key == AUTO_OFFSET_RESET else kafka_configs.check(KEYS[key], value)
        if why:
            return why
    for key, (low_key, high_key) in BOUNDS.items():
        value = _int(configs.get(key))
        if value is None:
            continue
        low, high = _broker_int(broker, low_key), _broker_int(broker, high_key)
        if low is not None and high is not None:
            if not low <= value <= high:
                return f"{key} must be in the range {low} to {high} inclusive."
        elif high is not None and value > high:
            return f"{key} must be less than or equal to {high}"
        elif low is not None and value < low:
            return f"{key} must be greater than or equal to {low}"
    if ASSIGNOR in configs:
        registered = _list(broker(ASSIGNORS))
        if configs[ASSIGNOR] not in registered:
            return (f"{ASSIGNOR} '{configs[ASSIGNOR]}' is not a registered task assignor. Registered assignors are: "
                    f"[{', '.join(registered)}].")
    for session_key, heartbeat_key in SESSION_PAIRS:
        if session_key not in configs and heartbeat_key not in configs:
            continue
        session = _int(configs.get(session_key)) if session_key in configs else \
            _broker_int(broker, broker_synonym(session_key))
        heartbeat = _int(configs.get(heartbeat_key)) if heartbeat_key in configs else \
            _broker_int(broker, broker_synonym(heartbeat_key))
        if session is not None and heartbeat is not None and session <= heartbeat:
            return f"{session_key} must be greater than {heartbeat_key}"
    topic = configs.get(DLQ_TOPIC)
    if topic and topic.startswith("__"):
        return f"{DLQ_TOPIC}: DLQ topic name must not start with '__'"
    return ""


def _broker_layers(brokers: kafka_configs.BrokerConfigs):
    return ((brokers.broker, kafka_configs.DYNAMIC_BROKER_CONFIG),
            (brokers.cluster, kafka_configs.DYNAMIC_DEFAULT_BROKER_CONFIG),
            (brokers.static, kafka_configs.STATIC_BROKER_CONFIG))


def describe(overrides: Mapping[str, str], brokers: kafka_configs.BrokerConfigs) -> list[tuple]:
    """DescribeConfigs' entries of a group: ``(key, value, source, synonyms, type id)`` in Kafka's order, synonyms
    ``(name, value, source)`` strongest first."""
    out = []
    for key in ORDER:
        synonym = broker_synonym(key)
        synonyms: list[tuple[str, str | None, int]] = []
        if key in overrides:
            synonyms.append((key, overrides[key], GROUP_CONFIG))
        if synonym is None:
            synonyms.append((key, KEYS[key].default, kafka_configs.DEFAULT_CONFIG))
        else:
            for layer, source in _broker_layers(brokers):
                if synonym in layer:
                    synonyms.append((synonym, _from_broker(key, layer[synonym]), source))
            default = kafka_configs.BROKER[synonym].default
            if default is not None:
                synonyms.append((synonym, _from_broker(key, default), kafka_configs.DEFAULT_CONFIG))
        value, source = (synonyms[0][1], synonyms[0][2]) if synonyms else (KEYS[key].default,
                                                                           kafka_configs.DEFAULT_CONFIG)
        out.append((key, value, source, synonyms, KEYS[key].type_id))
    return out


def _from_broker(key: str, value: str) -> str:
    """A broker value as the group key reads it (the streams assignor: the first registered one)."""
    if key == ASSIGNOR:
        names = _list(value)
        return names[0] if names else ""
    return value


#: Kafka 4.4's ShareGroupConfig checks of the broker's share-partition keys, in its order: (key, the key it must be
#: greater than or equal to)
SHARE_PARTITION_BOUNDS = (
    ("group.share.max.delivery.count.limit", "group.share.delivery.count.limit"),
    ("group.share.delivery.count.limit", "group.share.min.delivery.count.limit"),
    ("group.share.max.partition.max.record.locks", "group.share.partition.max.record.locks"),
    ("group.share.partition.max.record.locks", "group.share.min.partition.max.record.locks"),
    ("group.share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms"),
    ("group.share.max.record.lock.duration.ms", "group.share.record.lock.duration.ms"),
    ("group.share.max.share.sessions", "group.share.max.size"),
)


def share_partition_config_error(broker: BrokerValue) -> tuple[str, int, str] | None:
    """The first of ShareGroupConfig's checks the broker keys ``broker(name)`` answers break, as ``(key, value,
    message)`` (a broker so configured does not start), or None. A key the broker does not set has its default."""
    def value(key: str) -> int:
        found = _broker_int(broker, key)
        return found if found is not None else int(kafka_configs.BROKER[key].default)

    for key, other in SHARE_PARTITION_BOUNDS:
        if value(key) < value(other):
            return key, value(key), f"{key} must be greater than or equal to {other}"
    return None


def effective_ms(key: str, overrides: Mapping[str, str], broker: BrokerValue) -> int:
    """The value the coordinator uses for an int group key: the group's own clamped into the broker's current bounds
    (they may have changed since it was set), else the broker's."""
    value = _int(overrides.get(key))
    if value is None:
        value = _broker_int(broker, broker_synonym(key))
        return value if value is not None else _int(KEYS[key].default) or 0
    low_key, high_key = BOUNDS.get(key, (None, None))
    low, high = _broker_int(broker, low_key), _broker_int(broker, high_key)
    if low is not None and value < low:
        value = low
    if high is not None and value > high:
        value = high
    return value
