"""Topic-level configuration as the controller and brokers use it: the facts come from ``kraftwire.kafka_configs``
(Kafka's table), the effective values from ``kafka_configs.BrokerConfigs`` (the topic's own value, then the broker
synonyms through the dynamic and static layers, then Kafka's default).

``check(name, value)`` returns "" for a value Kafka accepts, else the reason (CreateTopics, IncrementalAlterConfigs
and AlterConfigs answer INVALID_CONFIG with it). ``describe(overrides, brokers)`` is every key with its effective
value and source, as CreateTopics v5+ reports them. Pure.
"""

from __future__ import annotations

from typing import Mapping

from kraftwire import kafka_configs as kc
from kraftwire.kafka_configs import BrokerConfigs

TOPIC_CONFIGS = kc.TOPIC
BOOLEAN, STRING, INT, LONG, DOUBLE, LIST = (kc.TYPE_IDS[t] for t in ("BOOLEAN", "STRING", "INT", "LONG", "DOUBLE",
                                                                     "LIST"))
DYNAMIC_TOPIC_CONFIG, DEFAULT_CONFIG = kc.TOPIC_CONFIG, kc.DEFAULT_CONFIG
#: no broker-level settings at all: Kafka's defaults
KAFKA_DEFAULTS = BrokerConfigs()


def check(name: str, value: str | None) -> str:
    """"" when ``value`` is valid for the topic key ``name``, else why not."""
    return kc.check_topic(name, value)


def describe(overrides: Mapping[str, str], brokers: BrokerConfigs = KAFKA_DEFAULTS) -> list[tuple[str, str, int, int]]:
    """``(name, value, source, type)`` for every topic key, sorted by name."""
    out = []
    for name in sorted(TOPIC_CONFIGS):
        value, source, _ = brokers.topic_entry(name, overrides)
        out.append((name, value, source, TOPIC_CONFIGS[name].type_id))
    return out


def flag(overrides: Mapping[str, str], name: str, brokers: BrokerConfigs = KAFKA_DEFAULTS) -> bool:
    """A boolean key's effective value for a topic (``overrides``: its ConfigRecords)."""
    return kc.flag(brokers.topic_value(name, overrides))


def number(overrides: Mapping[str, str], name: str, brokers: BrokerConfigs = KAFKA_DEFAULTS) -> int:
    """A numeric key's effective value for a topic (``overrides``: its ConfigRecords), as an int."""
    return kc.number(brokers.topic_value(name, overrides))
