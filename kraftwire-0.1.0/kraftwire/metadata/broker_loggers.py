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

IncrementalAlterConfigs is decided in part by the broker that receives it, before the rest goes to the controller
(Kafka's ``ConfigAdminManager.preprocess``; ``preprocess`` here):

* a BROKER_LOGGER resource: its name is this broker's id (Kafka's words for the incremental form: "Node id must be
  an integer, but it is: <name>", empty names too, "Unexpected broker id, expected <id>, but received <name>"); the
  principal needs ALTER_CONFIGS on the cluster (checked by the edge); no key twice ("Error
  due to duplicate config keys"), no null value but to DELETE ("Null value not supported for : <keys>"); then each
  operation: SET needs an existing logger (INVALID_CONFIG "Logger <name> does not exist!") and one of log4j's
  levels, DELETE an existing logger other than root, APPEND and SUBTRACT are INVALID_REQUEST, an unknown operation
  UNKNOWN_SERVER_ERROR without a message; when all hold and the request is not ValidateOnly the levels change
  (``level_changes``);
* a BROKER resource with a name: the name must be this broker's id, as above.

A resource named twice is left to the controller, which refuses both ("Each resource must appear at most once.").
"""

from __future__ import annotations

from typing import Mapping

from kraftwire.error_codes import INVALID_CONFIG, INVALID_REQUEST, NONE, UNKNOWN_SERVER_ERROR
from kraftwire.java_order import hashmap_order, string_hash

BROKER, BROKER_LOGGER = 4, 8
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3  # IncrementalAlterConfigs' config operations
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


#: log4j's levels Kafka accepts (its message lists them in a set's order, which varies between its runs)
LEVELS = ("FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE")


def _node_error(name: str, node_id: int) -> str | None:
    digits = name[1:] if name[:1] in "+-" else name
    if not (digits.isascii() and digits.isdigit() and -2**31 <= int(name) < 2**31):
        return f"Node id must be an integer, but it is: {name}"
    if int(name) != node_id:
        return f"Unexpected broker id, expected {node_id}, but received {name}"
    return None


def _logger_error(configs, loggers: Mapping[str, str]) -> tuple[int, str] | None:
    names = [c.name for c in configs]
    if len(set(names)) < len(names):
        return INVALID_REQUEST, "Error due to duplicate config keys"
    nulls = [c.name for c in configs if c.config_operation != DELETE and c.value is None]
    if nulls:
        return INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls)
    for c in configs:
        if c.config_operation in (SET, DELETE) and c.name not in loggers:
            return INVALID_CONFIG, f"Logger {c.name} does not exist!"
        if c.config_operation == SET and c.value not in LEVELS:
            return INVALID_CONFIG, (f"Cannot set the log level of {c.name} to {c.value} as it is not a supported log "
                                    f"level. Valid log levels are {', '.join(LEVELS)}")
        if c.config_operation == DELETE and c.name == ROOT:
            return INVALID_REQUEST, f"Removing the log level of the {ROOT} logger is not allowed"
        if c.config_operation in (APPEND, SUBTRACT):
            return INVALID_REQUEST, (f"{'APPEND' if c.config_operation == APPEND else 'SUBTRACT'} operation is not "
                                     "allowed for the BROKER_LOGGER resource")
        if c.config_operation not in (SET, DELETE):  # Kafka's OpType.forId throws: no message
            return UNKNOWN_SERVER_ERROR, None
    return None


def preprocess(resources, node_id: int, loggers: Mapping[str, str]) -> dict[int, tuple[int, str | None]]:
    """What the receiving broker answers itself: request position -> (error code, message) of the resources it
    decides (see the module's account); the others go to the controller."""
    answered: dict[int, tuple[int, str | None]] = {}
    named = [(r.resource_type, r.resource_name) for r in resources]
    for i, r in enumerate(resources):
        if named.count(named[i]) > 1:
            continue  # a resource named twice: the controller answers both (Kafka's "at most once" check comes first)
        if r.resource_type == BROKER_LOGGER:
            message = _node_error(r.resource_name or "", node_id)
            answered[i] = ((INVALID_REQUEST, message) if message else _logger_error(r.configs, loggers)) or (NONE,
                                                                                                             None)
        elif r.resource_type == BROKER and r.resource_name:
            message = _node_error(r.resource_name, node_id)
            if message:
                answered[i] = (INVALID_REQUEST, message)
    return answered


def level_changes(configs) -> dict[str, int | None]:
    """A valid BROKER_LOGGER resource's changes: logger -> its new Python level, or None to inherit its parent's
    again (DELETE)."""
    python = dict(zip(reversed(LEVELS), (number for number, _ in _KAFKA_LEVELS)))
    return {c.name: python[c.value] if c.config_operation == SET else None for c in configs}
