"""Compacted topics on a KRaft broker, in-process on real files: the cleaner runs off the event loop at
``log.cleaner.backoff.ms``, kcat reads back the latest value of every key with the tombstones gone after
``delete.retention.ms`` (counted, as in Kafka, from the pass that first kept them: a later pass removes them), and a
keyless record is refused as Kafka refuses it."""

from __future__ import annotations

import asyncio
import subprocess
import time

from confluent_kafka import Producer

from kraftwire import error_codes as ec
from kraftwire.log.cleaner import CLEANER_OFFSET_CHECKPOINT
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.server.edge.client import KafkaConnection
from server.test_kraft_node import CT, Combined, _online
from server.test_replication import _until

KEYS = [f"key{i}" for i in range(5)]


def _write(port: int) -> dict[str, str | None]:
    """50 rounds of every key, then a tombstone for key4, then filler on key0 in a later segment (``segment.ms``)
    so that the tombstone's segment is no longer the active one; the latest value of each key (None: deleted)."""
    p = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "linger.ms": 0, "acks": "all"})
    latest: dict[str, str | None] = {}
    for r in range(50):
        for k in KEYS:
            latest[k] = f"{k}-round{r}"
            p.produce("compacted", key=k, value=latest[k])
        p.flush(10)
    time.sleep(0.1)  # segment.ms: the tombstone opens a new segment...
    p.produce("compacted", key="key4", value=None)
    latest["key4"] = None
    p.flush(10)
    time.sleep(0.1)  # ...and the filler another, so the tombstone's is cleanable
    _filler(p, latest, "filler")
    return latest


def _filler(p, latest: dict, tag: str) -> None:
    for r in range(40):
        latest["key0"] = f"key0-{tag}{r}"
        p.produce("compacted", key="key0", value=latest["key0"])
        p.flush(10)


def _more(port: int, latest: dict) -> None:
    """More filler in later segments (``segment.ms``), so that another pass runs after the one that kept key4's
    tombstone and stamped its delete horizon."""
    time.sleep(0.1)
    _filler(Producer({"bootstrap.servers": f"127.0.0.1:{port}", "linger.ms": 0, "acks": "all"}), latest, "more")


async def _create_compacted(node, conn, configs=()) -> None:
    """Topic ``compacted`` (one partition, cleanup.policy=compact and ``configs``), hosted by ``node``."""
    cfg = [("cleanup.policy", "compact"), *configs]
    created = await conn.request(CT(topics=[CT.CreatableTopic(
        name="compacted", num_partitions=1, replication_factor=1, assignments=[],
        configs=[CT.CreatableTopicConfig(name=k, value=v) for k, v in cfg])], timeout_ms=5000, validate_only=False), 7)
    assert created.topics[0].error_code == ec.NONE
    await _until("hosted", lambda: node.replicas.get("compacted", 0) is not None)


def test_a_compacted_topic_keeps_the_latest_value_of_each_key(tmp_path):
    c = Combined(tmp_path, extra="log.cleaner.backoff.ms=100\n")

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                await _create_compacted(node, conn, [("segment.ms", "50"), ("min.cleanable.dirty.ratio", "0.01"),
                                                     ("delete.retention.ms", "0")])
                b = RecordBatchBuilder()
                b.append(None, b"no key")
                P = w.ProduceRequest
                keyless = await conn.request(P(acks=-1, timeout_ms=5000, topic_data=[P.TopicProduceData(
                    name="compacted", partition_data=[P.PartitionProduceData(index=0, records=b.build())])]), 9)
                part = keyless.responses[0].partition_responses[0]
                assert part.error_code == ec.INVALID_RECORD
                assert part.error_message.startswith("One or more records have been rejected due to 1 record errors")
            finally:
                await conn.close()
            latest = await asyncio.to_thread(_write, c.bport)
            hp = node.replicas.get("compacted", 0)
            written = hp.log.end_offset()
            assert written == 50 * 5 + 1 + 40
            # every pass ends where it cleaned to; passes go on until everything below the active segment is clean
            await _until("cleaned", lambda: hp.log.checkpoints.get(CLEANER_OFFSET_CHECKPOINT, ("compacted", 0))
                         == hp.log.segment_base_offsets()[-1], 30)
            # the pass that first kept key4's tombstone stamped its horizon (delete.retention.ms=0: that pass's
            # time); the tombstone goes with the next pass, which needs new dirty data
            await asyncio.to_thread(_more, c.bport, latest)
            written = hp.log.end_offset()
            await _until("cleaned again", lambda: hp.log.checkpoints.get(CLEANER_OFFSET_CHECKPOINT, ("compacted", 0))
                         == hp.log.segment_base_offsets()[-1], 30)
            active = hp.log.segment_base_offsets()[-1]
            out = await asyncio.to_thread(subprocess.run, [
                "kcat", "-C", "-b", f"127.0.0.1:{c.bport}", "-t", "compacted", "-o", "beginning", "-e", "-q",
                "-Z", "-f", "%o %k=%s\n"], capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, out.stderr
            rows = [line.split(" ", 1) for line in out.stdout.splitlines()]
            got: dict[str, str | None] = {}
            below = []
            for offset, kv in rows:
                key, value = kv.split("=", 1)
                got[key] = None if value == "NULL" else value
                if int(offset) < active:
                    below.append(key)
            assert got.get("key4") is None and {k: v for k, v in got.items() if v is not None} == {
                k: v for k, v in latest.items() if v is not None}
            assert sorted(below) == sorted(set(below))  # one record per key in the cleaned part
            assert "key4" not in below  # the tombstone went (delete.retention.ms=0) with the records it deleted
            assert len(rows) < written // 3
        finally:
            await node.shutdown()

    asyncio.run(main())


def test_each_keyless_record_of_a_batch_is_named_in_record_errors(tmp_path):
    """KIP-467, as Kafka's LogValidator answers (ProduceRequestTest's record-errors checks; librdkafka's test 0011):
    INVALID_RECORD for the partition, every keyless record of the batch in ``record_errors`` by its index in the
    batch, and a partition message quoting the first three; nothing is appended."""
    async def scenario(node, conn):
        await _create_compacted(node, conn)
        b = RecordBatchBuilder()
        for key in (b"k", None, b"k2", None, None, None):
            b.append(key, b"v")
        P = w.ProduceRequest
        for version in (8, 9, 11):
            resp = await conn.request(P(acks=-1, timeout_ms=5000, topic_data=[P.TopicProduceData(
                name="compacted", partition_data=[P.PartitionProduceData(index=0, records=b.build())])]),
                version)
            part = resp.responses[0].partition_responses[0]
            assert part.error_code == ec.INVALID_RECORD and part.base_offset == -1
            assert part.log_start_offset == 0
            m = "Compacted topic cannot accept message without key in topic partition compacted-0"
            assert [(e.batch_index, e.batch_index_error_message) for e in part.record_errors] == [
                (1, m), (3, m), (4, m), (5, m)]
            assert part.error_message == (
                "One or more records have been rejected due to 4 record errors in total, and only showing "
                f"the first three errors at most: [RecordError(batchIndex=1, message='{m}'), "
                f"RecordError(batchIndex=3, message='{m}'), RecordError(batchIndex=4, message='{m}')]")
        assert node.replicas.get("compacted", 0).log.end_offset() == 0

    Combined(tmp_path).run(scenario)
