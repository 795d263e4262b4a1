"""Produce checks each record's timestamp as Kafka's LogValidator does (KIP-467 record errors), in-process on a real
node: a CreateTime record more than ``message.timestamp.before.max.ms`` in the past or ``message.timestamp.after.max.ms``
in the future (the topic's, else the broker's ``log.message.timestamp.*``) fails its batch with INVALID_TIMESTAMP,
each such record named by its index in ``record_errors``. Mirrors Kafka's
ProduceRequestTest.testProduceWithInvalidTimestamp (both of its parameters)."""

from __future__ import annotations

import re
import time

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from server.test_kraft_node import CT, Combined
from server.test_replication import _until

HOUR = 3_600_000
P = w.ProduceRequest
RANGE = re.compile(r"Timestamp (-?\d+) of message with offset (\d+) is out of range\. The timestamp should be within "
                   r"\[(-?\d+), (-?\d+)\]")


async def _produce(conn, topic: str, stamps, compression: str = "gzip"):
    b = RecordBatchBuilder(compression=compression)
    for ts in stamps:
        b.append(b"k", b"v", timestamp=ts)
    resp = await conn.request(P(acks=-1, timeout_ms=5000, topic_data=[P.TopicProduceData(
        name=topic, partition_data=[P.PartitionProduceData(index=0, records=b.build())])]), 9)
    return resp.responses[0].partition_responses[0]


def test_produce_with_invalid_timestamp(tmp_path):
    async def scenario(node, conn):
        for name, cfg in (("before", ("message.timestamp.before.max.ms", "60000")), ("after", None)):
            created = await conn.request(CT(topics=[CT.CreatableTopic(
                name=name, num_partitions=1, replication_factor=1, assignments=[],
                configs=[CT.CreatableTopicConfig(name=cfg[0], value=cfg[1])] if cfg else [])],
                timeout_ms=5000, validate_only=False), 7)
            assert created.topics[0].error_code == ec.NONE
            await _until("hosted", lambda: node.replicas.get(name, 0) is not None)
        now = int(time.time() * 1000)
        for topic, ts, low_of, high_of in (
                ("before", now - 2 * 60_000, lambda n: n - 60_000, lambda n: n + 2 * HOUR),
                ("after", now + 3 * HOUR, lambda n: n - (2**63 - 1), lambda n: n + 2 * HOUR)):
            part = await _produce(conn, topic, [ts] * 3)
            assert part.error_code == ec.INVALID_TIMESTAMP and part.base_offset == -1
            assert part.error_message == "One or more records have been rejected due to invalid timestamp"
            assert [e.batch_index for e in part.record_errors] == [0, 1, 2]
            for e in part.record_errors:
                got = RANGE.fullmatch(e.batch_index_error_message)
                assert got is not None, e.batch_index_error_message
                stamp, offset, low, high = map(int, got.groups())
                leader_now = high - 2 * HOUR
                assert (stamp, offset) == (ts, e.batch_index) and low == low_of(leader_now)
                assert now <= leader_now <= now + 60_000
            assert node.replicas.get(topic, 0).log.end_offset() == 0
        assert (await _produce(conn, "after", [now, -1, now + HOUR // 2], "none")).error_code == ec.NONE

    Combined(tmp_path, extra="log.message.timestamp.after.max.ms=7200000\n").run(scenario)
