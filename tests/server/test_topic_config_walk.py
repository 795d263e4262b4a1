"""Every topic-level key of Kafka's table (``kraftwire/kafka_configs.tsv``), walked on a running node: a key
kraftwire honours reaches what acts on it — set to a value other than its default by IncrementalAlterConfigs, the
partition's own settings, the cleaner's, the leader's recompression, the controller's election rule or retention read
the new value, a share group's DLQ writer its check — and a key it does not implement is refused with INVALID_CONFIG
(never accepted and ignored). The remote-storage keys behave as on a Kafka broker without tiered storage:
``remote.storage.enable=true`` is refused with Kafka's message, the others are inert. The list of keys comes from the table, so a key added to the pinned
release fails here until it is classified and, if honoured, given a probe."""

from __future__ import annotations

import asyncio

from kraftwire import error_codes as ec
from kraftwire import kafka_configs as kc
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.replica.log_append_time import log_append_time
from kraftwire.replica.recompression import level, recompress
from kraftwire.replica import share_dlq
from kraftwire.replica.leader_append import compacts as _compacts, deletes as _deletes
from server.test_kraft_node import Combined, _create

TOPIC = "walk"
IAC = w.IncrementalAlterConfigsRequest

#: a valid value other than Kafka's default, where the rule below would not find one
CHOSEN = {"cleanup.policy": "compact", "compression.type": "zstd", "message.timestamp.type": "LogAppendTime",
          "follower.replication.throttled.replicas": "0:1", "leader.replication.throttled.replicas": "0:1",
          "retention.bytes": "1048576", "min.cleanable.dirty.ratio": "0.25", "compression.gzip.level": "1"}


def _other_value(key: kc.KafkaKey) -> str:
    if key.name in CHOSEN:
        return CHOSEN[key.name]
    if key.type == "BOOLEAN":
        return "false" if kc.flag(key.default) else "true"
    for candidate in (int(key.default) + 1, int(key.default) - 1, 1, 2):
        if kc.check(key, str(candidate)) == "" and str(candidate) != key.default:
            return str(candidate)
    raise AssertionError(f"no other valid value found for {key.name}: add one to CHOSEN")


def _unclean(node) -> bool:
    return node.metadata.controller.topics.node_config.unclean_allowed(node.metadata.image, TOPIC)


def _recompressed_codec(cfg) -> str:
    b = RecordBatchBuilder()
    b.append(b"k", b"v" * 100)
    out = recompress(b.build(), cfg)
    return next(iter(read_batches(out))).compression if out is not None else "none"


#: honoured key -> what acts on it, read back from the running node (node, hosted partition)
PROBES = {
    "leader.replication.throttled.replicas": lambda node, hp: node.partition_apis._throttled(TOPIC, hp.index),
    "follower.replication.throttled.replicas": lambda node, hp: node.replicas.fetchers._throttled(hp),
    "cleanup.policy": lambda node, hp: "compact" if _compacts(hp.config) and not _deletes(hp.config) else "delete",
    "compression.type": lambda node, hp: _recompressed_codec(hp.config),
    "compression.gzip.level": lambda node, hp: level(hp.config, "gzip"),
    "compression.lz4.level": lambda node, hp: level(hp.config, "lz4"),
    "compression.zstd.level": lambda node, hp: level(hp.config, "zstd"),
    "delete.retention.ms": lambda node, hp: node.replicas.cleaner_config(TOPIC).delete_retention_ms,
    "min.compaction.lag.ms": lambda node, hp: node.replicas.cleaner_config(TOPIC).min_compaction_lag_ms,
    "min.cleanable.dirty.ratio": lambda node, hp: node.replicas.cleaner_config(TOPIC).min_cleanable_dirty_ratio,
    "flush.messages": lambda node, hp: hp.flush_messages,
    "flush.ms": lambda node, hp: hp.flush_ms,
    "index.interval.bytes": lambda node, hp: hp.log.index_interval_bytes,
    "segment.bytes": lambda node, hp: hp.log.segment_bytes,
    "segment.ms": lambda node, hp: hp.log.segment_ms,
    "max.message.bytes": lambda node, hp: hp.log.max_batch_size,
    "min.insync.replicas": lambda node, hp: hp.min_isr,
    "retention.ms": lambda node, hp: kc.number(hp.config["retention.ms"]),
    "retention.bytes": lambda node, hp: kc.number(hp.config["retention.bytes"]),
    "unclean.leader.election.enable": lambda node, hp: _unclean(node),
    "message.timestamp.type": lambda node, hp: "LogAppendTime" if log_append_time(hp.config) else "CreateTime",
    # the leader's record checks read these (kraftwire.replica.record_errors)
    "message.timestamp.before.max.ms": lambda node, hp: kc.number(hp.config["message.timestamp.before.max.ms"]),
    "message.timestamp.after.max.ms": lambda node, hp: kc.number(hp.config["message.timestamp.after.max.ms"]),
    # a share group's DLQ writer (KIP-1191) checks it before writing to an existing topic
    "errors.deadletterqueue.group.enable": lambda node, hp: share_dlq.refusal(
        "g", TOPIC, prefix="", topic_exists=True, auto_create="false",
        topic_configs=node.share_apis.fetching.dlq.topic_configs(TOPIC)) is None,
}
#: as on a Kafka broker without tiered storage: accepted, and nothing reads them
INERT = {"local.retention.ms", "local.retention.bytes", "remote.log.copy.disable", "remote.log.delete.on.disable",
         "remote.copy.lag.bytes", "remote.copy.lag.ms"}


def _expected(name: str, value: str):
    if name == "cleanup.policy":
        return value
    if name in ("compression.type", "message.timestamp.type"):
        return value
    if name in ("unclean.leader.election.enable", "errors.deadletterqueue.group.enable"):
        return kc.flag(value)
    if name in ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas"):
        return True  # "0:1": this broker's replica of partition 0 is throttled
    if name in ("compression.gzip.level", "compression.lz4.level", "compression.zstd.level"):
        return int(value)
    return float(value) if name == "min.cleanable.dirty.ratio" else int(value)


async def _set(conn, name: str, value: str):
    req = IAC(resources=[IAC.AlterConfigsResource(resource_type=2, resource_name=TOPIC, configs=[
        IAC.AlterableConfig(name=name, config_operation=0, value=value)])], validate_only=False)
    (res,) = (await conn.request(req, 1)).responses
    return res.error_code, res.error_message


async def _delete(conn, name: str) -> None:
    req = IAC(resources=[IAC.AlterConfigsResource(resource_type=2, resource_name=TOPIC, configs=[
        IAC.AlterableConfig(name=name, config_operation=1, value=None)])], validate_only=False)
    assert (await conn.request(req, 1)).responses[0].error_code == ec.NONE


async def _until(predicate, what: str):
    for _ in range(250):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{what} not seen within 5 s")


def test_every_topic_key_has_an_effect_or_is_refused(tmp_path):
    c = Combined(tmp_path)
    seen: dict[str, str] = {}

    async def scenario(node, conn):
        assert (await conn.request(_create(TOPIC, partitions=1), 7)).topics[0].error_code == ec.NONE
        await _until(lambda: node.replicas.get(TOPIC, 0) is not None, "the partition hosted")
        for name in sorted(kc.TOPIC):
            key = kc.TOPIC[name]
            value = _other_value(key)
            error, message = await _set(conn, name, value)
            if name == "remote.storage.enable":
                assert (error, message) == (ec.INVALID_CONFIG, "Tiered Storage functionality is disabled in the "
                                            "broker. Topic cannot be configured with remote log storage.")
                seen[name] = "refused as Kafka refuses it"
            elif key.kraftwire == kc.UNSUPPORTED:
                assert error == ec.INVALID_CONFIG and "kraftwire does not implement" in message, (name, message)
                seen[name] = "refused"
            elif name in INERT:
                assert error == ec.NONE, (name, message)
                seen[name] = "inert, as without tiered storage"
            else:
                assert error == ec.NONE, (name, message)
                probe = PROBES.get(name)
                assert probe is not None, f"{name} is honoured but nothing here shows its effect: add a probe"
                want = _expected(name, value)
                await _until(lambda: probe(node, node.replicas.get(TOPIC, 0)) == want, f"{name}={value} in effect")
                seen[name] = "in effect"
            if error == ec.NONE:
                await _delete(conn, name)
        assert set(seen) == set(kc.TOPIC)

    c.run(scenario)
