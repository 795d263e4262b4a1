"""DescribeConfigs of a BROKER_LOGGER resource (type 8), pure: the broker's loggers and their levels, as Kafka's
``ConfigHelper`` lists its log4j loggers.

kraftwire's loggers are its Python loggers (``kraftwire.server...``, ``root``); the edge reads their levels and
passes them in Kafka's words (``kafka_level``), so ``kafka-configs --describe --entity-type broker-loggers`` shows
them. As Kafka answers:

* the resource name is this broker's id: empty is INVALID_REQUEST "Broker id must not be empty", another id
  "Unexpected broker id, expected <id> but received <name>", a name that is no number "Broker id must be an
  integer, but it is: <name>";
* every logger (or those ``ConfigurationKeys`` names: an unknown logger is simply not listed), in the order of the
  ``HashMap`` Kafka's logging controller returns, each DYNAMIC_BROKER_LOGGER_CONFIG, neither read-only nor
  sensitive, without synonyms, type or documentation.
"""

from __future__ import annotations

from typing import Mapping

from kraftwire.error_codes import INVALID_REQUEST
from kraftwire.java_order import hashmap_order, string_hash

BROKER_LOGGER = 8
DYNAMIC_BROKER_LOGGER_CONFIG = 6  # DescribeConfigs ConfigSource
ROOT = "root"
#: Python's level numbers -> Kafka's (log4j's) level names; a level between two takes the coarser name
_KAFKA_LEVELS = ((5, "TRACE"), (10, "DEBUG"), (20, "INFO"), (30, "WARN"), (40, "ERROR"), (50, "FATAL"))


def kafka_level(level: int) -> str:
    """The log4j name of a Python logging level (WARNING is WARN, CRITICAL is FATAL, below DEBUG is TRACE)."""
    name = "TRACE"
    for number, kafka in _KAFKA_LEVELS:
        if level >= number:
            name = kafka
    return name


def resource_error(name: str | None, node_id: int) -> tuple[int, str] | None:
    """Kafka's refusal of a BROKER_LOGGER resource's name, or None when it names this broker."""
    if not name:
        return INVALID_REQUEST, "Broker id must not be empty"
    digits = name[1:] if name[:1] in "+-" else name
    if not (digits.isascii() and digits.isdigit() and -2**31 <= int(name) < 2**31):
        return INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}"
    if int(name) != node_id:
        return INVALID_REQUEST, f"Unexpected broker id, expected {node_id} but received {name}"
    return None


def describe(loggers: Mapping[str, str], keys) -> list[tuple[str, str]]:
    """``(logger, level)`` of the loggers listed (all, or those ``keys`` names), in Kafka's order."""
    wanted = None if not keys else set(keys)
    return [(name, loggers[name]) for name in hashmap_order(loggers, string_hash)
            if wanted is None or name in wanted]
