"""DescribeConfigs (API 32): what ``kafka-configs.sh --describe`` and the admin clients read. Read-only: kraftwire
takes its configuration from the properties file at start (there is no AlterConfigs).

* a broker resource named by this node's id: every key kraftwire reads (``kraftwire.config.KEYS``) with its
  effective value, STATIC_BROKER_CONFIG when the file sets it, DEFAULT_CONFIG otherwise; the empty name (the
  cluster-wide dynamic defaults) has no entries; another node's id is INVALID_REQUEST, as Kafka answers (a client
  asks each broker for its own);
* the quorum's topic: the topic-level view of how the log is kept (segment and retention from the ``metadata.*``
  keys, delete policy, the 8 MiB batch limit, CreateTime, producer compression, acks=all waiting for a majority of
  the voters); another topic is UNKNOWN_TOPIC_OR_PARTITION;
* other resource types (broker loggers, groups, client metrics) are INVALID_REQUEST.

``ConfigurationKeys`` filters; ``IncludeSynonyms`` lists, for a topic key, the broker key it comes from;
``IncludeDocumentation`` adds the key's description.
"""

from __future__ import annotations

from kraftwire.config import KEYS
from kraftwire.error_codes import INVALID_REQUEST
from kraftwire.protocol import messages as w
from kraftwire.raft.config import MAX_BATCH_SIZE_BYTES
from kraftwire.server.broker import context as c

TOPIC, BROKER = 2, 4
# ConfigSource
STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 4, 5
# ConfigType
BOOLEAN, STRING, INT, LONG, LIST = 1, 2, 3, 5, 7


def _text(value) -> str | None:
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
    return [(k.name, _text(getattr(config, k.attr)), STATIC_BROKER_CONFIG if k.name in raw else DEFAULT_CONFIG,
             _type_of(k), k.doc or None) for k in KEYS]


def logger_levels() -> dict[str, str]:
    """This process's loggers (``root`` and every named Python logger) with their effective levels in Kafka's words:
    what a BROKER_LOGGER resource describes (``kraftwire.metadata.broker_loggers``)."""
    import logging

    from kraftwire.metadata.broker_loggers import ROOT, kafka_level

    levels = {ROOT: kafka_level(logging.getLogger().getEffectiveLevel())}
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger):
            levels[name] = kafka_level(logger.getEffectiveLevel())
    return levels


def set_logger_levels(changes) -> None:
    """Apply a BROKER_LOGGER change (``broker_loggers.level_changes``): a level, or None to inherit again; the
    root logger is named ``root``."""
    import logging

    from kraftwire.metadata.broker_loggers import ROOT

    for name, level in changes.items():
        logger = logging.getLogger() if name == ROOT else logging.getLogger(name)
        logger.setLevel(logging.NOTSET if level is None else level)


class DescribeConfigs:
    def __init__(self, ctx: c.BrokerContext) -> None:
        self.ctx = ctx

    # (name, value, source, type, synonym key, documentation)
    def broker_entries(self) -> list[tuple]:
        return [(name, value, source, kind, None, doc)
                for name, value, source, kind, doc in static_broker_entries(self.ctx.node.settings.config)]

    def topic_entries(self) -> list[tuple]:
        config = self.ctx.node.settings.config
        raw = config.raw
        majority = len(self.ctx.voters) // 2 + 1

        def from_broker(name, broker_key, value, kind, doc):
            source = STATIC_BROKER_CONFIG if broker_key in raw else DEFAULT_CONFIG
            return name, _text(value), source, kind, broker_key, doc

        return [
            ("cleanup.policy", "delete", DEFAULT_CONFIG, LIST, None, "segments are deleted by retention"),
            from_broker("segment.bytes", "metadata.log.segment.bytes", config.metadata_log_segment_bytes, INT,
                        "roll a segment at this size"),
            from_broker("segment.ms", "metadata.log.segment.ms", config.metadata_log_segment_ms, LONG,
                        "roll a segment at this age"),
            from_broker("retention.bytes", "metadata.max.retention.bytes", config.metadata_max_retention_bytes, LONG,
                        "retention by size, applied below the latest snapshot (-1: off)"),
            from_broker("retention.ms", "metadata.max.retention.ms", config.metadata_max_retention_ms, LONG,
                        "retention by age, applied below the latest snapshot (-1: off)"),
            from_broker("index.interval.bytes", "log.index.interval.bytes", config.log_index_interval_bytes, INT,
                        "bytes between offset index entries"),
            ("max.message.bytes", str(MAX_BATCH_SIZE_BYTES), DEFAULT_CONFIG, INT, None,
             "the largest record batch accepted"),
            ("message.timestamp.type", "CreateTime", DEFAULT_CONFIG, STRING, None, "timestamps are the producer's"),
            ("compression.type", "producer", DEFAULT_CONFIG, STRING, None, "batches are kept as produced"),
            ("min.insync.replicas", str(majority), DEFAULT_CONFIG, INT, None,
             "acks=all waits for a majority of the voters"),
            ("unclean.leader.election.enable", "false", DEFAULT_CONFIG, BOOLEAN, None,
             "only a voter with every committed record can lead"),
        ]

    def handle(self, request, conn) -> None:
        ctx = self.ctx
        body, version = request.body, request.version
        R = w.DescribeConfigsResponse
        results = []
        for res in body.resources:
            result = R.DescribeConfigsResult(error_code=0, error_message=None, resource_type=res.resource_type,
                                             resource_name=res.resource_name, configs=[])
            results.append(result)
            if res.resource_type == TOPIC:
                if res.resource_name != ctx.topic_name:
                    result.error_code = c.UNKNOWN_TOPIC_OR_PARTITION
                    result.error_message = f"this quorum serves one topic, {ctx.topic_name}"
                    continue
                entries = self.topic_entries()
            elif res.resource_type == BROKER:
                if res.resource_name == "":
                    entries = []  # no cluster-wide dynamic defaults: everything comes from each node's file
                elif res.resource_name != str(ctx.node_id):
                    result.error_code = INVALID_REQUEST
                    result.error_message = (f"unexpected broker id, expected {ctx.node_id} or the empty string, "
                                            f"but received {res.resource_name}")
                    continue
                else:
                    entries = self.broker_entries()
            else:
                result.error_code = INVALID_REQUEST
                result.error_message = f"resource type {res.resource_type} has no configuration in kraftwire"
                continue
            wanted = None if res.configuration_keys is None else set(res.configuration_keys)
            for name, value, source, kind, synonym, doc in entries:
                if wanted is not None and name not in wanted:
                    continue
                # where the value comes from: the broker key a topic key is read from, else the key itself
                synonyms = ([R.DescribeConfigsSynonym(name=synonym or name, value=value, source=source)]
                            if body.include_synonyms else [])
                result.configs.append(R.DescribeConfigsResourceResult(
                    name=name, value=value, read_only=True,
                    config_source=source, is_sensitive=False, synonyms=synonyms, config_type=kind,
                    documentation=doc if body.include_documentation else None))
        conn.send_response(R(throttle_time_ms=0, results=results), version, request.header.correlation_id)
