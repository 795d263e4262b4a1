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

from kraftwire.error_codes import INVALID_REQUEST
from kraftwire.protocol import messages as w
from kraftwire.raft.config import MAX_BATCH_SIZE_BYTES
from kraftwire.server.apis.broker_configs import (
    BOOLEAN,
    DEFAULT_CONFIG,
    INT,
    LIST,
    LONG,
    STATIC_BROKER_CONFIG,
    STRING,
    config_text,
    static_broker_entries,
)
from kraftwire.server.test_server import context as c

TOPIC, BROKER = 2, 4


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
            return name, config_text(value), source, kind, broker_key, doc

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
