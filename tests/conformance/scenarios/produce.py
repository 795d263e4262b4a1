"""Produce at every version both serve: acks -1/1/0 (and an invalid one), unknown topics and partitions, each topic
rule a batch can break (max.message.bytes, keys on a compacted topic, message.timestamp.*.max.ms, min.insync.replicas
above the replication factor), corrupt, partial, empty and compressed batches, the idempotent producer's sequence
rules and a transactional batch outside a transaction; a look at the partition (ListOffsets) after a write that gets
no answer or is refused. The cases whose answer does not change with the version run at the key versions only."""

from __future__ import annotations

from conformance.data_steps import (A, INIT_VERSION, T0, every_and_key_versions, idempotent, init_producer_id,
                                    key_versions, produce, records, topic_with, transactional)
from conformance.runner import Step, each_version

from kraftwire.protocol import messages as w

LO = w.ListOffsetsRequest
MISSING = "{ns}.missing"
#: a record's timestamp far in the future: 2100-01-01
FUTURE = 4_102_444_800_000


def latest(name: str = A, partitions=(0,)) -> Step:
    """ListOffsets (v7) for the end of ``partitions``: what a write that got no answer left."""
    return Step(LO(replica_id=-1, isolation_level=0, topics=[LO.ListOffsetsTopic(name=name, partitions=[
        LO.ListOffsetsPartition(partition_index=p, timestamp=-1) for p in partitions])]), 7)


def corrupt() -> bytes:
    """A batch whose CRC does not hold (its last value byte changed)."""
    data = bytearray(records(2))
    data[-2] ^= 0x01
    return bytes(data)


def _on(configs, steps_of):
    """Topic A with ``configs``, then ``steps_of(v)``."""
    return lambda v: [*topic_with(A, *configs), *steps_of(v)]


#: at every version: a valid write, a refused one, and the rules whose answer changes with the version (ZStandard
#: from v7, per-record errors from v8)
EVERY = {
    "acks-all": lambda v: [*topic_with(A), produce(v, (A, 0, records(3))), produce(v, (A, 0, records(2, first=3)))],
    "unknown-topic": lambda v: [produce(v, (MISSING, 0, records(1)))],
    "zstd": lambda v: [*topic_with(A), produce(v, (A, 0, records(3, compression="zstd"))), latest()],
    "compacted-without-key": _on([("cleanup.policy", "compact")],
                                 lambda v: [produce(v, (A, 0, records(2, keys=False))), latest()]),
    "timestamp-too-old": _on([("message.timestamp.before.max.ms", "60000")],
                             lambda v: [produce(v, (A, 0, records(2, timestamp=T0))), latest()]),
    "idempotent-duplicate": lambda v: [*topic_with(A), init_producer_id(INIT_VERSION),
                                       produce(v, (A, 0, idempotent(3, 0))), produce(v, (A, 0, idempotent(3, 0))),
                                       latest()],
}

#: at the oldest and newest versions and where the answer's layout changes (v8: record errors, v10: leaders)
SOME = {
    # Kafka orders the partitions of an answer by a hash map keyed by topic id (random): see allowed.py
    "two-partitions": lambda v: [*topic_with(A, partitions=2), produce(v, (A, 0, records(3)), (A, 1, records(2)))],
    "acks-leader": lambda v: [*topic_with(A), produce(v, (A, 0, records(3)), acks=1)],
    "acks-none": lambda v: [*topic_with(A), produce(v, (A, 0, records(3)), acks=0), latest()],
    "acks-none-unknown-topic": lambda v: [produce(v, (MISSING, 0, records(1)), acks=0)],
    "acks-invalid": lambda v: [*topic_with(A), produce(v, (A, 0, records(1)), acks=2), latest()],
    "unknown-partition": lambda v: [*topic_with(A), produce(v, (A, 3, records(1)), (A, 0, records(1))), latest()],
    "invalid-topic-name": lambda v: [produce(v, ("{ns}/a", 0, records(1)))],
    "two-batches": lambda v: [*topic_with(A), produce(v, (A, 0, records(2) + records(3, first=2))), latest()],
    "partial-trailing-batch": lambda v: [*topic_with(A), produce(v, (A, 0, records(2) + records(3)[:30])), latest()],
    "empty-records": lambda v: [*topic_with(A), produce(v, (A, 0, b""))],
    # Kafka never answers it (its handler fails on the null records): once, with a short wait
    "null-records": lambda v: [*topic_with(A), produce(v, (A, 0, None), timeout=2.0), latest()] if v == 11 else None,
    "corrupt-batch": lambda v: [*topic_with(A), produce(v, (A, 0, corrupt())), latest()],
    "gzip": lambda v: [*topic_with(A), produce(v, (A, 0, records(3, compression="gzip")))],
    "message-too-large": _on([("max.message.bytes", "200")],
                             lambda v: [produce(v, (A, 0, records(1, value_size=300))),
                                        produce(v, (A, 0, records(1, value_size=50))), latest()]),
    "timestamp-too-new": _on([("message.timestamp.after.max.ms", "60000")],
                             lambda v: [produce(v, (A, 0, records(2, timestamp=FUTURE))), latest()]),
    "log-append-time": _on([("message.timestamp.type", "LogAppendTime")],
                           lambda v: [produce(v, (A, 0, records(2)))]),
    # Kafka caps min.insync.replicas at the replication factor (KIP-966): one replica is enough here
    "min-insync-above-replication": _on([("min.insync.replicas", "2")],
                               lambda v: [produce(v, (A, 0, records(1))), produce(v, (A, 0, records(1)), acks=1),
                                          latest()]),
    "idempotent": lambda v: [*topic_with(A), init_producer_id(INIT_VERSION), produce(v, (A, 0, idempotent(3, 0))),
                             produce(v, (A, 0, idempotent(2, 3, first=3)))],
    "idempotent-sequence-gap": lambda v: [*topic_with(A), init_producer_id(INIT_VERSION),
                                          produce(v, (A, 0, idempotent(3, 0))),
                                          produce(v, (A, 0, idempotent(1, 7, first=3))), latest()],
    "idempotent-first-sequence-not-zero": lambda v: [*topic_with(A), init_producer_id(INIT_VERSION),
                                                     produce(v, (A, 0, idempotent(1, 5))), latest()],
    "idempotent-old-epoch": lambda v: [*topic_with(A), init_producer_id(INIT_VERSION),
                                       produce(v, (A, 0, idempotent(1, 0, epoch=1))),
                                       produce(v, (A, 0, idempotent(1, 1, epoch=0))), latest()],
}

#: a transactional batch needs the transaction coordinator: on the pair configured for coordinators
TXN_CASES = {
    "transactional-without-add-partitions": lambda v: [
        *topic_with(A), *transactional(), produce(v, (A, 0, idempotent(2, 0, transactional=True)),
                                               transactional_id="{ns}.t"), latest()],
    "transactional-id-unknown": lambda v: [
        *topic_with(A), init_producer_id(INIT_VERSION),
        produce(v, (A, 0, idempotent(2, 0, transactional=True)), transactional_id="{ns}.t"), latest()],
}

SCENARIOS = [*every_and_key_versions("Produce", EVERY, SOME, 8, 10),
             *each_version("Produce", TXN_CASES, config="coordinators", at=key_versions("Produce", 8, 10))]
