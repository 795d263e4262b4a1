"""This node's own configuration as DescribeConfigs describes it, shared by the KRaft node (``kraft_apis``) and
the test server: the static broker entries (every key kraftwire reads, with its source) and the process's logger
levels (a BROKER_LOGGER resource), read and changed."""

from __future__ import annotations

import logging

from kraftwire.config import KEYS
from kraftwire.metadata.broker_loggers import ROOT, kafka_level

# ConfigSource
STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 4, 5
# ConfigType
BOOLEAN, STRING, INT, LONG, LIST = 1, 2, 3, 5, 7


def config_text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _type_of(key) -> int:
    default = key.default
    if isinstance(default, bool):
        return BOOLEAN
    if isinstance(default, int):
        return LONG if key.name.endswith(".ms") else INT
    if isinstance(default, (tuple, list)):
        return LIST
    return STRING


def static_broker_entries(config) -> list[tuple]:
    """``(name, value, source, type, documentation)`` of every key kraftwire reads: STATIC_BROKER_CONFIG when the
    properties file sets it, DEFAULT_CONFIG otherwise."""
    raw = config.raw
    return [(k.name, config_text(getattr(config, k.attr)), STATIC_BROKER_CONFIG if k.name in raw else DEFAULT_CONFIG,
             _type_of(k), k.doc or None) for k in KEYS]


def logger_levels() -> dict[str, str]:
    """This process's loggers (``root`` and every named Python logger) with their effective levels in Kafka's words:
    what a BROKER_LOGGER resource describes (``kraftwire.metadata.broker_loggers``)."""
    levels = {ROOT: kafka_level(logging.getLogger().getEffectiveLevel())}
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger):
            levels[name] = kafka_level(logger.getEffectiveLevel())
    return levels


def set_logger_levels(changes) -> None:
    """Apply a BROKER_LOGGER change (``broker_loggers.level_changes``): a level, or None to inherit again; the
    root logger is named ``root``."""
    for name, level in changes.items():
        logger = logging.getLogger() if name == ROOT else logging.getLogger(name)
        logger.setLevel(logging.NOTSET if level is None else level)
