"""Kafka's configuration, as one table of facts: every broker, topic and group key of the pinned Kafka release.

The table is ``kafka_configs.tsv`` beside this module, generated from Kafka's own definitions
(``python -m kraftwire.tools.generate_configs``; the oracle test checks it against the release's jars). A row:

    scope  name  type  default  validator  importance  dynamic  synonyms  described  kraftwire

* ``default`` is Kafka's, as text; ``(none)`` where the key has none, ``null`` where it is null;
* ``validator`` is Kafka's rendering of the key's validator (``[1,...]``, ``[0,...,1]``, ``[compact, delete]``);
* ``dynamic`` is a broker key's update mode (``read-only``, ``per-broker``, ``cluster-wide``);
* ``synonyms`` are a topic key's broker keys, in the order a broker resolves the topic's default from them
  (``log.retention.ms``, ``log.retention.minutes:minutes``, ``log.retention.hours:hours``); ``described`` are those
  DescribeConfigs lists;
* ``kraftwire`` is the only column that is ours: ``honoured`` (it has its effect; the remote-storage topic keys
  behave as on a Kafka broker without tiered storage: ``remote.storage.enable=true`` is refused, the others are
  inert), ``meaningless`` (a JVM or thread-pool knob with nothing to act on here; logged once), ``unsupported``
  (not implemented: a broker key set away from Kafka's default is warned about at start-up, a topic key set away
  from it is refused with INVALID_CONFIG rather than accepted and ignored).

This module reads the table and answers: a key's facts, whether a value is valid (Kafka's messages), and the
effective value of a topic key through its synonyms (``BrokerConfigs``) — the topic's own setting, then this
broker's dynamic setting, the cluster-wide dynamic default, the static properties file, and Kafka's default.
A leaf module: pure, no I/O beyond reading its own table at import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from typing import Mapping, NamedTuple

#: the Kafka release the table, the oracle tests and the benchmarks are pinned to (tests/kafka/pom.xml too)
KAFKA_VERSION = "4.4.0"

HEADER = "#scope\tname\ttype\tdefault\tvalidator\timportance\tdynamic\tsynonyms\tdescribed\tkraftwire"
HONOURED, MEANINGLESS, UNSUPPORTED = "honoured", "meaningless", "unsupported"

# DescribeConfigs ConfigType (v3+) by Kafka's ConfigDef.Type name
TYPE_IDS = {"BOOLEAN": 1, "STRING": 2, "INT": 3, "SHORT": 4, "LONG": 5, "DOUBLE": 6, "LIST": 7, "CLASS": 8,
            "PASSWORD": 9}
# DescribeConfigs ConfigSource
TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 2, 3, 4, 5
INT_MAX, LONG_MAX = 2**31 - 1, 2**63 - 1
_UNITS = {"": 1, "minutes": 60_000, "hours": 3_600_000}


class KafkaKey(NamedTuple):
    scope: str
    name: str
    type: str
    default: str | None  # None: null or no default
    validator: str
    importance: str
    dynamic: str
    synonyms: tuple[tuple[str, int], ...]  # (broker key, milliseconds per unit)
    described: tuple[str, ...]
    kraftwire: str

    @property
    def type_id(self) -> int:
        return TYPE_IDS[self.type]

    @property
    def has_default(self) -> bool:
        return self.default is not None


def _row(line: str) -> KafkaKey:
    scope, name, kind, dflt, validator, importance, dynamic, synonyms, described, ours = line.split("\t")
    pairs = []
    for item in filter(None, synonyms.split(",")):
        key, _, unit = item.partition(":")
        pairs.append((key, _UNITS[unit]))
    return KafkaKey(scope, name, kind, None if dflt in ("(none)", "null") else dflt, validator, importance, dynamic,
                    tuple(pairs), tuple(filter(None, described.split(","))), ours)


TABLE_PATH = resources.files(__package__).joinpath("kafka_configs.tsv")
ALL: tuple[KafkaKey, ...] = tuple(_row(line) for line in TABLE_PATH.read_text(encoding="utf-8").splitlines()
                                  if line and not line.startswith("#"))
BROKER: dict[str, KafkaKey] = {k.name: k for k in ALL if k.scope == "broker"}
TOPIC: dict[str, KafkaKey] = {k.name: k for k in ALL if k.scope == "topic"}
GROUP: dict[str, KafkaKey] = {k.name: k for k in ALL if k.scope == "group"}
#: broker key -> the topic keys whose default it sets
TOPIC_KEYS_OF: dict[str, tuple[str, ...]] = {}
for _k in TOPIC.values():
    for _syn, _unit in _k.synonyms:
        TOPIC_KEYS_OF[_syn] = TOPIC_KEYS_OF.get(_syn, ()) + (_k.name,)


# --------------------------------------------------------------------------------------------- validation
def _java_number(kind: str, value: float | int) -> str:
    return repr(float(value)) if kind == "DOUBLE" else str(value)


def _bounds(validator: str) -> tuple[float | None, float | None, float | None] | None:
    """``[a,...]`` / ``[a,...,b]`` / ``[a,...,b] or c`` -> (low, high, also); None for any other validator."""
    text, _, extra = validator.partition(" or ")
    if not (text.startswith("[") and text.endswith("]") and ",..." in text):
        return None
    parts = text[1:-1].split(",...")
    try:
        low = float(parts[0]) if parts[0] else None
        high = float(parts[1].lstrip(",")) if len(parts) > 1 and parts[1].lstrip(",") else None
        also = float(extra) if extra else None
    except ValueError:
        return None
    return low, high, also


def _choices(validator: str) -> tuple[str, ...] | None:
    if not (validator.startswith("[") and validator.endswith("]")) or ",..." in validator or "]:[" in validator:
        return None
    return tuple(item.strip() for item in validator[1:-1].split(","))


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def check(key: KafkaKey, value: str | None) -> str:
    """"" when Kafka accepts ``value`` for ``key``, else Kafka's reason (``Invalid value ... for configuration ...``)."""
    name = key.name
    if value is None:
        return f"Null value not supported for topic configs: {name}" if key.scope == "topic" else \
            f"Null value not supported for configuration {name}"
    text = value.strip()
    if key.type in ("INT", "SHORT", "LONG", "DOUBLE"):
        try:
            number: float | int = float(text) if key.type == "DOUBLE" else int(text)
        except ValueError:
            return f"Invalid value {value} for configuration {name}: Not a number of type {key.type}"
        top = {"INT": INT_MAX, "SHORT": 2**15 - 1, "LONG": LONG_MAX}.get(key.type)
        if top is not None and not -top - 1 <= number <= top:
            return f"Invalid value {value} for configuration {name}: Not a number of type {key.type}"
        bounds = _bounds(key.validator)
        if bounds is None:
            return ""
        low, high, also = bounds
        shown = _java_number(key.type, number)
        if also is not None:
            if number != also and not (low <= number <= high):
                return (f"Invalid value {shown} for configuration {name}: Value must be between {_fmt(low)} and "
                        f"{_fmt(high)} or equal to {_fmt(also)}")
            return ""
        if low is not None and number < low:
            return f"Invalid value {shown} for configuration {name}: Value must be at least {_fmt(low)}"
        if high is not None and number > high:
            return f"Invalid value {shown} for configuration {name}: Value must be no more than {_fmt(high)}"
        return ""
    if key.type == "BOOLEAN":
        if text.lower() not in ("true", "false"):
            return f"Invalid value {value} for configuration {name}: Expected value to be either true or false"
        return ""
    choices = _choices(key.validator)
    if key.type == "LIST":
        items = [v.strip() for v in value.split(",") if v.strip()]
        if choices:
            if not items:
                return f"Invalid value {value} for configuration {name}: Empty list"
            for item in items:
                if item not in choices:
                    return f"Invalid value {item} for configuration {name}: String must be one of: {', '.join(choices)}"
        return ""
    if choices and key.type == "STRING" and text not in choices:
        return f"Invalid value {value} for configuration {name}: String must be one of: {', '.join(choices)}"
    return ""


def check_topic(name: str, value: str | None) -> str:
    """"" when ``value`` is valid for the topic key ``name`` here, else why not (INVALID_CONFIG's message): Kafka's
    checks, Kafka's refusal of remote storage on a broker without tiered storage, and kraftwire's refusal of a
    value other than Kafka's default for a key it does not implement (accepting it would change nothing)."""
    key = TOPIC.get(name)
    if key is None:
        return f"Unknown topic config name: {name}"
    why = check(key, value)
    if why or value is None:
        return why
    if name == "remote.storage.enable" and flag(value):
        return ("Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote "
                "log storage.")
    if key.kraftwire == UNSUPPORTED and not same_value(key, value, key.default):
        return (f"Invalid value {value} for configuration {name}: kraftwire does not implement {name}; only "
                f"Kafka's default ({key.default or 'empty'}) is accepted")
    return ""


def same_value(key: KafkaKey, a: str | None, b: str | None) -> bool:
    """Whether two texts are the same value of ``key`` (numbers, booleans and lists compared as Kafka parses them)."""
    if a is None or b is None:
        return a is b
    if key.type in ("INT", "SHORT", "LONG", "DOUBLE"):
        parse = float if key.type == "DOUBLE" else int
        try:
            return parse(a.strip()) == parse(b.strip())
        except ValueError:
            return False
    if key.type == "BOOLEAN":
        return a.strip().lower() == b.strip().lower()
    if key.type == "LIST":
        return [x.strip() for x in a.split(",") if x.strip()] == [x.strip() for x in b.split(",") if x.strip()]
    return a.strip() == b.strip()


def check_dynamic_broker(changes: Mapping[str, str], *, per_broker: bool) -> str:
    """"" when Kafka takes ``changes`` (key -> new value) as dynamic broker configs — of one broker
    (``per_broker``) or as the cluster-wide default — else its refusal (answered INVALID_REQUEST), checked in Kafka's
    order: keys that are not dynamic, security keys without a listener prefix, per-broker keys at the cluster
    level, then each value against its key's type and validator. Keys Kafka does not know are taken, as Kafka
    takes them."""
    def listed(keys) -> str:
        return "[" + ", ".join(sorted(keys)) + "]"

    known = {k: BROKER[k] for k in changes if k in BROKER}
    fixed = [k for k, key in known.items() if key.dynamic == "read-only"]
    if fixed:
        return f"Cannot update these configs dynamically: {listed(fixed)}"
    bare = [k for k in known if k in _LISTENER_SECURITY]
    if bare:
        return f"These security configs can be dynamically updated only per-listener using the listener prefix: {listed(bare)}"
    if not per_broker:
        own = [k for k, key in known.items() if key.dynamic == "per-broker"]
        if own:
            return f"Cannot update these configs at default cluster level, broker id must be specified: {listed(own)}"
    for k, key in sorted(known.items()):
        why = check(key, changes[k])
        if why:
            return why
    return ""


#: the keystore and truststore keys Kafka updates dynamically only per listener (its DynamicBrokerConfig's
#: DYNAMIC_SECURITY_CONFIGS); other per-broker security keys (sasl.kerberos.*, ssl.cipher.suites...) go bare
_LISTENER_SECURITY = frozenset({
    "ssl.key.password", "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.keystore.location",
    "ssl.keystore.password", "ssl.keystore.type", "ssl.truststore.certificates", "ssl.truststore.location",
    "ssl.truststore.password", "ssl.truststore.type"})


# --------------------------------------------------------------------------------------------- resolution
@dataclass(frozen=True)
class BrokerConfigs:
    """What a node knows of the broker-level configuration: its properties file (``static``), the cluster-wide
    dynamic defaults and its own dynamic settings (the metadata image's ConfigRecords of broker ``""`` and of its
    id). The effective value of a topic key for a topic follows Kafka's LogConfig: the topic's own value, else the
    first of its broker synonyms that any layer sets (this broker's dynamic value, the cluster default, the file),
    else Kafka's default of that synonym, else the topic key's own default."""

    static: Mapping[str, str] = field(default_factory=dict)
    cluster: Mapping[str, str] = field(default_factory=dict)
    broker: Mapping[str, str] = field(default_factory=dict)

    def _layers(self):
        return ((self.broker, DYNAMIC_BROKER_CONFIG), (self.cluster, DYNAMIC_DEFAULT_BROKER_CONFIG),
                (self.static, STATIC_BROKER_CONFIG))

    def value(self, name: str) -> str | None:
        """A broker key's effective value (dynamic broker, dynamic default, file, Kafka's default)."""
        for layer, _ in self._layers():
            if name in layer:
                return layer[name]
        key = BROKER.get(name)
        return key.default if key is not None else None

    def topic_default(self, name: str) -> str | None:
        """What a topic without its own ``name`` gets from the brokers' configuration."""
        key = TOPIC[name]
        for synonym, unit in key.synonyms:
            for layer, _ in self._layers():
                raw = layer.get(synonym)
                if raw is not None and raw.strip() != "":
                    return _scaled(raw, unit)
        for synonym, unit in key.synonyms:
            broker_key = BROKER.get(synonym)
            if broker_key is not None and broker_key.default is not None:
                return _scaled(broker_key.default, unit)
        return key.default

    def topic_value(self, name: str, overrides: Mapping[str, str]) -> str | None:
        value = overrides.get(name)
        return value if value is not None else self.topic_default(name)

    def topic_config(self, overrides: Mapping[str, str]) -> dict[str, str | None]:
        """Every topic key's effective value for a topic with ``overrides`` (Kafka's LogConfig)."""
        return {name: self.topic_value(name, overrides) for name in TOPIC}

    def synonyms(self, name: str, group: tuple[str, ...]) -> list[tuple[str, str, int]]:
        """``(key, value, source)`` of the broker keys of ``group`` (``name`` and its synonyms, Kafka's
        brokerConfigSynonyms) that each layer sets, source by source (this broker's dynamic value, the cluster
        default, the file, Kafka's default), from the first entry that is ``name`` itself on — as Kafka lists them
        (so ``log.retention.minutes`` lists nothing while only ``.ms`` and ``.hours`` are set)."""
        out = [(s, layer[s], source) for layer, source in self._layers() for s in group if s in layer]
        out += [(s, BROKER[s].default, DEFAULT_CONFIG) for s in group
                if s in BROKER and BROKER[s].default is not None]
        for i, (s, _, _) in enumerate(out):
            if s == name:
                return out[i:]
        return []

    def topic_entry(self, name: str, overrides: Mapping[str, str]) -> tuple[str | None, int, list[tuple[str, str, int]]]:
        """``(value, source, synonyms)`` as DescribeConfigs reports a topic key: synonyms strongest first, each
        ``(name, value, source)`` — the topic's own value, then per source the described broker keys that it sets."""
        key = TOPIC[name]
        synonyms = self.synonyms(key.described[0], key.described) if key.described else []
        if name in overrides:
            synonyms.insert(0, (name, overrides[name], TOPIC_CONFIG))
        source = synonyms[0][2] if synonyms else DEFAULT_CONFIG
        return self.topic_value(name, overrides), source, synonyms


def _scaled(raw: str, unit: int) -> str:
    if unit == 1:
        return raw.strip()
    try:
        return str(int(raw.strip()) * unit)
    except ValueError:
        return raw.strip()


def flag(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def number(value: str | None) -> int:
    """A numeric config value as an int (exact for longs; a double's integer part)."""
    if value is None:
        return 0
    try:
        return int(value.strip())
    except ValueError:
        return int(float(value))
