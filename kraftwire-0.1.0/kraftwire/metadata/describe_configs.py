"""DescribeConfigs from the metadata image (what ``kafka-configs --describe`` and admin clients read), pure.

``describe_configs(image, request, version, node_id=..., static=...)``:

* a topic: every topic key of Kafka's table with its effective value and source as Kafka's LogConfig resolves it
  (``kafka_configs.BrokerConfigs``): TOPIC_CONFIG where a ConfigRecord sets it, else the first broker synonym this
  broker's dynamic config, the cluster-wide dynamic default or the properties file sets (DYNAMIC_BROKER_CONFIG,
  DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG), else DEFAULT_CONFIG; synonyms list every layer that has a
  value, strongest first; an illegal name is INVALID_TOPIC_EXCEPTION with Kafka's reason, an unknown (or the internal
  metadata) topic UNKNOWN_TOPIC_OR_PARTITION;
* this broker (its id as the name): the keys of its properties file (``static``: STATIC_BROKER_CONFIG where the
  file sets them, DEFAULT_CONFIG otherwise), overlaid by the cluster-wide dynamic defaults
  (DYNAMIC_DEFAULT_BROKER_CONFIG) and then by dynamic values for this broker (DYNAMIC_BROKER_CONFIG); synonyms list
  every source that has a value, strongest first, as Kafka's do;
* the empty broker name: the cluster-wide dynamic defaults only; another broker's id, or a name that is no number,
  is INVALID_REQUEST (a client asks each broker for its own, as Kafka requires);
* a group (type 32, KIP-848): every group key, its value and source as ``metadata.group_configs.describe`` says
  (GROUP_CONFIG where the group sets it, else the broker's); the empty name is INVALID_REQUEST;
* a broker logger (type 8): this broker's loggers and their levels (``broker_loggers``);
* other resource types are INVALID_REQUEST.

``ConfigurationKeys`` filters; ``IncludeSynonyms`` and ``IncludeDocumentation`` add what they name (a topic key's
documentation is kraftwire's own, ``topic_docs``). A result's
ErrorMessage is the schema's default "" unless Kafka words the refusal (its ConfigHelper sets no message on success or
on an unknown topic).
"""

from __future__ import annotations

from typing import Mapping

from kraftwire import kafka_configs
from kraftwire.java_order import hashmap_capacity, hashmap_order, string_hash
from kraftwire.error_codes import INVALID_REQUEST, INVALID_TOPIC_EXCEPTION, UNKNOWN_TOPIC_OR_PARTITION, default_message
from kraftwire.metadata import broker_loggers, group_configs
from kraftwire.metadata.config_order import in_described_order
from kraftwire.metadata.controller import topic_configs
from kraftwire.kafka_configs import BrokerConfigs
from kraftwire.metadata.controller.topics import METADATA_TOPIC, broker_configs, name_error
from kraftwire.metadata.image import MetadataImage
from kraftwire.metadata.topic_docs import TOPIC_DOCS
from kraftwire.protocol import messages as m

TOPIC, BROKER, GROUP = 2, 4, group_configs.GROUP
# ConfigSource
TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 2, 3, 4, 5
STRING = topic_configs.STRING


def describe_configs(image: MetadataImage, request, version: int, *, node_id: int, static,
                     props: dict[str, str] | None = None, loggers: Mapping[str, str] | None = None) -> object:
    """``static``: ``(name, value, source, type, documentation)`` of every key this broker reads; ``props``: its
    properties file (the static layer of topic configs); ``loggers``: this broker's loggers and their levels
    (``broker_loggers``)."""
    brokers = broker_configs(image, node_id, props or {})
    R = m.DescribeConfigsResponse
    results = []
    for res in request.resources:
        result = R.DescribeConfigsResult(error_code=0, error_message="", resource_type=res.resource_type,
                                         resource_name=res.resource_name, configs=[])
        results.append(result)
        if res.resource_type == TOPIC:
            name = res.resource_name
            if name_error(name):
                result.error_code, result.error_message = INVALID_TOPIC_EXCEPTION, name_error(name)
                continue
            if name == METADATA_TOPIC or image.topic(name) is None:
                result.error_code = UNKNOWN_TOPIC_OR_PARTITION
                continue
            overrides = image.configs.get((TOPIC, name), {})
            entries = [(key, *brokers.topic_entry(key, overrides), topic_configs.TOPIC_CONFIGS[key].type_id,
                        TOPIC_DOCS.get(key), False) for key in in_described_order("topic", topic_configs.TOPIC_CONFIGS)]
        elif res.resource_type == BROKER:
            defaults = image.configs.get((BROKER, ""), {})
            if res.resource_name == "":
                entries = [(key, value, DYNAMIC_DEFAULT_BROKER_CONFIG, [(key, value, DYNAMIC_DEFAULT_BROKER_CONFIG)],
                            _type(key), None, _sensitive(key)) for key, value in sorted(defaults.items())]
            elif not _is_int(res.resource_name):
                result.error_code = INVALID_REQUEST
                result.error_message = f"Broker id must be an integer, but it is: {res.resource_name}"
                continue
            elif int(res.resource_name) != node_id:
                result.error_code = INVALID_REQUEST
                result.error_message = (f"Unexpected broker id, expected {node_id} or empty string, but received "
                                        f"{res.resource_name}")
                continue
            else:
                entries = _broker_entries(static, defaults, image.configs.get((BROKER, res.resource_name), {}),
                                          props or {})
        elif res.resource_type == GROUP:
            if res.resource_name == "":
                result.error_code = INVALID_REQUEST
                result.error_message = "Group name must not be empty"
                continue
            entries = [(key, value, source, synonyms or [(key, value, source)], kind, None, False)
                       for key, value, source, synonyms, kind in
                       group_configs.describe(image.configs.get((GROUP, res.resource_name), {}), brokers)]
        elif res.resource_type == broker_loggers.BROKER_LOGGER:
            refusal = broker_loggers.resource_error(res.resource_name, node_id)
            if refusal:
                result.error_code, result.error_message = refusal
                continue
            result.configs = [R.DescribeConfigsResourceResult(
                name=name, value=level, read_only=False, config_source=broker_loggers.DYNAMIC_BROKER_LOGGER_CONFIG,
                is_sensitive=False, synonyms=[], config_type=0, documentation=None)
                for name, level in broker_loggers.describe(loggers or {}, res.configuration_keys)]
            continue
        else:  # Kafka's ConfigHelper throws InvalidRequestException without a message: the error's own words
            result.error_code = INVALID_REQUEST
            result.error_message = default_message(INVALID_REQUEST)
            continue
        wanted = None if res.configuration_keys is None else set(res.configuration_keys)
        for key, value, source, synonyms, kind, doc, sensitive in entries:
            if wanted is not None and key not in wanted:
                continue
            synonyms = ([R.DescribeConfigsSynonym(name=n, value=None if sensitive else v, source=s)
                         for n, v, s in synonyms]
                        if request.include_synonyms else [])
            if res.resource_type == BROKER:
                fact = kafka_configs.BROKER.get(key)
                read_only = fact is None or fact.dynamic == "read-only"
            else:
                read_only = False
            result.configs.append(R.DescribeConfigsResourceResult(
                name=key, value=None if sensitive else value, read_only=read_only, config_source=source,
                is_sensitive=sensitive, synonyms=synonyms, config_type=kind,
                documentation=doc if request.include_documentation else None))
    return R(throttle_time_ms=0, results=results)


def _broker_entries(static, defaults, dynamic, props) -> list[tuple]:
    """The keys a broker describes: ``(name, value, source, synonyms, type, documentation, sensitive)``, the value
    the key's own, the synonyms ``(name, value, source)`` as Kafka 4.4 lists them (``BrokerConfigs.synonyms``:
    source by source, from the key itself on). Passwords are sensitive: no value is shown.

    As Kafka's (``ConfigHelperUtils``): first the keys that are set (in the properties file or dynamically) but are
    not among Kafka's described keys — kraftwire's own, the authorizer's, Kafka's internal ones — in the order of
    the ``HashMap`` of originals Kafka copies them from; then every broker key of Kafka's table, set or not, in
    Kafka's order (``config_order``)."""
    docs = {name: doc for name, _, _, _, doc in static}
    if "node.id" in props and "broker.id" not in props:
        props = {**props, "broker.id": props["node.id"]}  # Kafka's KafkaConfig fills either id from the other
    layers = BrokerConfigs(static=props, cluster=defaults, broker=dynamic)
    out = _set_elsewhere(static, defaults, dynamic, props)
    for name in in_described_order("broker", kafka_configs.BROKER):
        key = kafka_configs.BROKER[name]
        sensitive = key.type == "PASSWORD"
        synonyms = layers.synonyms(name, _SYNONYM_GROUPS.get(name, (name,)))
        value = None if sensitive else next(
            (layer[name] for layer in (dynamic, defaults, props) if name in layer), key.default)
        source = synonyms[0][2] if synonyms else DEFAULT_CONFIG
        out.append((name, value, source, synonyms, key.type_id, docs.get(name), sensitive))
    return out


def _set_elsewhere(static, defaults, dynamic, props) -> list[tuple]:
    """The entries of the keys set but not in Kafka's table (see ``_broker_entries``): those kraftwire reads with
    their type and documentation, the others as strings, as Kafka takes keys it does not know."""
    read = {name: (value, source, kind, doc) for name, value, source, kind, doc in static
            if name not in kafka_configs.BROKER}
    names = [name for name in dict.fromkeys([*props, *defaults, *dynamic]) if name not in kafka_configs.BROKER]
    out = []
    for name in hashmap_order(names, string_hash, hashmap_capacity(len(names), copied=True)):
        synonyms = _dynamic(name, dynamic, defaults)
        if name in read:
            value, source, kind, doc = read[name]
            synonyms.append((name, value, source))
        else:
            kind, doc = STRING, None
            if name in props:
                synonyms.append((name, props[name], STATIC_BROKER_CONFIG))
        out.append((name, *synonyms[0][1:], synonyms, kind, doc, False))
    return out


def _dynamic(name: str, dynamic, defaults) -> list[tuple[str, str, int]]:
    """``name``'s dynamic values as synonyms: this broker's, then the cluster default."""
    return ([(name, dynamic[name], DYNAMIC_BROKER_CONFIG)] if name in dynamic else []) + \
        ([(name, defaults[name], DYNAMIC_DEFAULT_BROKER_CONFIG)] if name in defaults else [])


def _is_int(text: str) -> bool:
    """Java's Integer.parseInt accepts it (an optional sign, decimal digits)."""
    digits = text[1:] if text[:1] in "+-" else text
    return digits.isascii() and digits.isdigit() and -2**31 <= int(text) < 2**31


def _type(name: str) -> int:
    fact = kafka_configs.BROKER.get(name)
    return fact.type_id if fact is not None else STRING


def _sensitive(name: str) -> bool:
    fact = kafka_configs.BROKER.get(name.rsplit(".", 1)[-1] if name.startswith("listener.name.") else name)
    return fact is not None and fact.type == "PASSWORD"


#: broker keys that are synonyms of one another (Kafka's brokerConfigSynonyms), from the topic keys' described lists
_SYNONYM_GROUPS = {name: tuple(k.described) for k in kafka_configs.TOPIC.values() if len(k.described) > 1
                   for name in k.described}
