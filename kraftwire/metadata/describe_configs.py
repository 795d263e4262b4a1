"""DescribeConfigs from the metadata image (what ``kafka-configs --describe`` and admin clients read), pure.

``describe_configs(image, request, version, node_id=..., static=...)``:

* a topic: every topic key of Kafka's table with its effective value and source as Kafka's LogConfig resolves it
  (``kafka_configs.BrokerConfigs``): TOPIC_CONFIG where a ConfigRecord sets it, else the first broker synonym this
  broker's dynamic config, the cluster-wide dynamic default or the properties file sets (DYNAMIC_BROKER_CONFIG,
  DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG), else DEFAULT_CONFIG; synonyms list every layer that has a
  value, strongest first; an unknown (or the internal metadata) topic is UNKNOWN_TOPIC_OR_PARTITION;
* this broker (its id as the name): the keys of its properties file (``static``: STATIC_BROKER_CONFIG where the
  file sets them, DEFAULT_CONFIG otherwise), overlaid by the cluster-wide dynamic defaults
  (DYNAMIC_DEFAULT_BROKER_CONFIG) and then by dynamic values for this broker (DYNAMIC_BROKER_CONFIG); synonyms list
  every source that has a value, strongest first, as Kafka's do;
* the empty broker name: the cluster-wide dynamic defaults only; another broker's id is INVALID_REQUEST (a client
  asks each broker for its own, as Kafka requires);
* other resource types are INVALID_REQUEST.

``ConfigurationKeys`` filters; ``IncludeSynonyms`` and ``IncludeDocumentation`` add what they name.
"""

from __future__ import annotations

from kraftwire.error_codes import INVALID_REQUEST, UNKNOWN_TOPIC_OR_PARTITION
from kraftwire.metadata.controller import topic_configs
from kraftwire.metadata.controller.topics import METADATA_TOPIC, broker_configs
from kraftwire.metadata.image import MetadataImage
from kraftwire.protocol import messages as m

TOPIC, BROKER = 2, 4
# ConfigSource
TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 2, 3, 4, 5
STRING = topic_configs.STRING


def describe_configs(image: MetadataImage, request, version: int, *, node_id: int, static,
                     props: dict[str, str] | None = None) -> object:
    """``static``: ``(name, value, source, type, documentation)`` of every key this broker reads; ``props``: its
    properties file (the static layer of topic configs)."""
    brokers = broker_configs(image, node_id, props or {})
    R = m.DescribeConfigsResponse
    results = []
    for res in request.resources:
        result = R.DescribeConfigsResult(error_code=0, error_message=None, resource_type=res.resource_type,
                                         resource_name=res.resource_name, configs=[])
        results.append(result)
        if res.resource_type == TOPIC:
            name = res.resource_name
            if name == METADATA_TOPIC or image.topic(name) is None:
                result.error_code = UNKNOWN_TOPIC_OR_PARTITION
                result.error_message = f"Topic {name} does not exist."
                continue
            overrides = image.configs.get((TOPIC, name), {})
            entries = []
            for key in sorted(topic_configs.TOPIC_CONFIGS):
                value, source, synonyms = brokers.topic_entry(key, overrides)
                sources = [(v, s, n) for n, v, s in synonyms] or [(value, source, None)]
                sources[0] = (value, source, sources[0][2])
                entries.append((key, sources, topic_configs.TOPIC_CONFIGS[key].type_id, None))
        elif res.resource_type == BROKER:
            defaults = image.configs.get((BROKER, ""), {})
            if res.resource_name == "":
                entries = [(key, [(value, DYNAMIC_DEFAULT_BROKER_CONFIG)], STRING, None)
                           for key, value in sorted(defaults.items())]
            elif res.resource_name != str(node_id):
                result.error_code = INVALID_REQUEST
                result.error_message = (f"Unexpected broker id, expected {node_id} or empty string, but received "
                                        f"{res.resource_name}")
                continue
            else:
                entries = _broker_entries(static, defaults, image.configs.get((BROKER, res.resource_name), {}))
        else:
            result.error_code = INVALID_REQUEST
            result.error_message = f"Unsupported resource type {res.resource_type}"
            continue
        wanted = None if res.configuration_keys is None else set(res.configuration_keys)
        for key, sources, kind, doc in entries:
            if wanted is not None and key not in wanted:
                continue
            value, source = sources[0][:2]
            synonyms = ([R.DescribeConfigsSynonym(name=(rest[0] if rest and rest[0] else key), value=v, source=s)
                         for v, s, *rest in sources if not (rest and rest[0] is None)]
                        if request.include_synonyms else [])
            result.configs.append(R.DescribeConfigsResourceResult(
                name=key, value=value, read_only=res.resource_type != TOPIC and source in (STATIC_BROKER_CONFIG,
                                                                                         DEFAULT_CONFIG),
                is_default=source == DEFAULT_CONFIG, config_source=source, is_sensitive=False, synonyms=synonyms,
                config_type=kind, documentation=doc if request.include_documentation else None))
    return R(throttle_time_ms=0, results=results)


def _broker_entries(static, defaults, dynamic) -> list[tuple]:
    out = []
    known = set()
    for key, value, source, kind, doc in static:
        known.add(key)
        sources = []
        if key in dynamic:
            sources.append((dynamic[key], DYNAMIC_BROKER_CONFIG))
        if key in defaults:
            sources.append((defaults[key], DYNAMIC_DEFAULT_BROKER_CONFIG))
        sources.append((value, source))
        out.append((key, sources, kind, doc))
    for key in sorted((set(dynamic) | set(defaults)) - known):
        sources = ([(dynamic[key], DYNAMIC_BROKER_CONFIG)] if key in dynamic else []) + \
                  ([(defaults[key], DYNAMIC_DEFAULT_BROKER_CONFIG)] if key in defaults else [])
        out.append((key, sources, STRING, None))
    return out
