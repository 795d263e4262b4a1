"""Kafka's topic-level configuration keys (4.0): type, default and valid values, as data.

``check(name, value)`` returns "" for a value Kafka accepts, else the reason (CreateTopics, IncrementalAlterConfigs
and AlterConfigs answer INVALID_CONFIG with it). ``describe(overrides)`` is every key with its effective value and
source (DYNAMIC_TOPIC_CONFIG where the topic sets it, DEFAULT_CONFIG otherwise), as CreateTopics v5+ and
DescribeConfigs report them. Pure data and checks; the broker-level synonyms (``log.retention.ms`` for
``retention.ms`` ...) are the configs manager's business.
"""

from __future__ import annotations

from typing import NamedTuple

# ConfigType of DescribeConfigs v3+ / CreateTopics
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = 1, 2, 3, 4, 5, 6, 7, 8, 9
# ConfigSource
DYNAMIC_TOPIC_CONFIG, DEFAULT_CONFIG = 1, 5

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


class TopicConfig(NamedTuple):
    name: str
    type: int
    default: str
    low: float | None = None  # numbers: the smallest valid value
    high: float | None = None
    choices: tuple[str, ...] = ()  # strings (and list items): the valid values, case-sensitive as Kafka's


_LIST = (
    TopicConfig("cleanup.policy", LIST, "delete", choices=("compact", "delete")),
    TopicConfig("compression.gzip.level", INT, "-1", -1, 9),
    TopicConfig("compression.lz4.level", INT, "9", 1, 17),
    TopicConfig("compression.type", STRING, "producer",
                choices=("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")),
    TopicConfig("compression.zstd.level", INT, "3", -131072, 22),
    TopicConfig("delete.retention.ms", LONG, "86400000", 0),
    TopicConfig("file.delete.delay.ms", LONG, "60000", 0),
    TopicConfig("flush.messages", LONG, str(LONG_MAX), 1),
    TopicConfig("flush.ms", LONG, str(LONG_MAX), 0),
    TopicConfig("follower.replication.throttled.replicas", LIST, ""),
    TopicConfig("index.interval.bytes", INT, "4096", 0),
    TopicConfig("leader.replication.throttled.replicas", LIST, ""),
    TopicConfig("local.retention.bytes", LONG, "-2", -2),
    TopicConfig("local.retention.ms", LONG, "-2", -2),
    TopicConfig("max.compaction.lag.ms", LONG, str(LONG_MAX), 1),
    TopicConfig("max.message.bytes", INT, "1048588", 0),
    TopicConfig("message.timestamp.after.max.ms", LONG, "3600000", 0),
    TopicConfig("message.timestamp.before.max.ms", LONG, str(LONG_MAX), 0),
    TopicConfig("message.timestamp.type", STRING, "CreateTime", choices=("CreateTime", "LogAppendTime")),
    TopicConfig("min.cleanable.dirty.ratio", DOUBLE, "0.5", 0, 1),
    TopicConfig("min.compaction.lag.ms", LONG, "0", 0),
    TopicConfig("min.insync.replicas", INT, "1", 1),
    TopicConfig("preallocate", BOOLEAN, "false"),
    TopicConfig("remote.log.copy.disable", BOOLEAN, "false"),
    TopicConfig("remote.log.delete.on.disable", BOOLEAN, "false"),
    TopicConfig("remote.storage.enable", BOOLEAN, "false"),
    TopicConfig("retention.bytes", LONG, "-1"),
    TopicConfig("retention.ms", LONG, "604800000", -1),
    TopicConfig("segment.bytes", INT, "1073741824", 1048576),
    TopicConfig("segment.index.bytes", INT, "10485760", 4),
    TopicConfig("segment.jitter.ms", LONG, "0", 0),
    TopicConfig("segment.ms", LONG, "604800000", 1),
    TopicConfig("unclean.leader.election.enable", BOOLEAN, "false"),
)
TOPIC_CONFIGS: dict[str, TopicConfig] = {c.name: c for c in _LIST}


def _number(c: TopicConfig, value: str) -> str:
    text = value.strip()
    try:
        number: float = float(text) if c.type == DOUBLE else int(text)
    except ValueError:
        kind = {INT: "int", LONG: "long", DOUBLE: "double"}[c.type]
        return f"Invalid value {value} for configuration {c.name}: Not a number of type {kind.upper()}"
    top = INT_MAX if c.type == INT else LONG_MAX
    if c.type != DOUBLE and not -top - 1 <= number <= top:
        return f"Invalid value {value} for configuration {c.name}: Not a number of type {'INT' if c.type == INT else 'LONG'}"
    if c.low is not None and number < c.low:
        bound = f"[{_fmt(c.low)},...,{_fmt(c.high)}]" if c.high is not None else f"at least {_fmt(c.low)}"
        return f"Invalid value {value} for configuration {c.name}: Value must be {bound}"
    if c.high is not None and number > c.high:
        return f"Invalid value {value} for configuration {c.name}: Value must be [{_fmt(c.low)},...,{_fmt(c.high)}]"
    return ""


def _fmt(x) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def check(name: str, value: str | None) -> str:
    """"" when ``value`` is valid for the topic key ``name``, else why not."""
    c = TOPIC_CONFIGS.get(name)
    if c is None:
        return f"Unknown topic config name: {name}"
    if value is None:
        return f"Null value not supported for topic configs: {name}"
    if c.type in (INT, LONG, DOUBLE):
        return _number(c, value)
    if c.type == BOOLEAN:
        if value.strip().lower() not in ("true", "false"):
            return f"Invalid value {value} for configuration {name}: Expected value to be either true or false"
        return ""
    if c.type == LIST:
        items = [v.strip() for v in value.split(",") if v.strip()]
        if c.choices:
            if not items:
                return f"Invalid value {value} for configuration {name}: Empty list"
            for item in items:
                if item not in c.choices:
                    return (f"Invalid value {item} for configuration {name}: String must be one of: "
                            f"{', '.join(c.choices)}")
        return ""
    if c.choices and value not in c.choices:
        return f"Invalid value {value} for configuration {name}: String must be one of: {', '.join(c.choices)}"
    return ""


def describe(overrides) -> list[tuple[str, str, int, int]]:
    """``(name, value, source, type)`` for every topic key, sorted by name: the topic's own values first."""
    out = []
    for c in _LIST:
        if c.name in overrides:
            out.append((c.name, overrides[c.name], DYNAMIC_TOPIC_CONFIG, c.type))
        else:
            out.append((c.name, c.default, DEFAULT_CONFIG, c.type))
    return out


def flag(overrides, name: str) -> bool:
    """A boolean key's effective value for a topic (``overrides``: its ConfigRecords)."""
    return (overrides.get(name) or TOPIC_CONFIGS[name].default).strip().lower() == "true"


def number(overrides, name: str) -> int:
    """A numeric key's effective value for a topic (``overrides``: its ConfigRecords), as an int."""
    return int(float(overrides.get(name) or TOPIC_CONFIGS[name].default))
