"""The size limits of a Fetch answer on a real one-node cluster: the request's MaxBytes and PartitionMaxBytes, the
broker's ``fetch.max.bytes`` (Kafka's ReplicaManager.readFromLog rule, KIP-74), and librdkafka's own check that
an answer stays within what it allows (its test 0082, fetch.max.bytes)."""

from __future__ import annotations

import asyncio
import time

from confluent_kafka import Consumer, TopicPartition

from kraftwire.protocol import messages as w
from kraftwire.records import read_batches
from tests.server.test_kraft_node import Combined, _create
from tests.server.test_partitions import _batch, _hosted, _produce

F = w.FetchRequest
MAX_RESPONSE, MAX_PARTITION = 800, 190  # Kafka's test's limits


def _fetch(topic_id, parts: list[tuple[int, int]], max_bytes: int, partition_max_bytes: int):
    return F(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=max_bytes, isolation_level=0, session_id=0,
             session_epoch=-1, topics=[F.FetchTopic(topic_id=topic_id, partitions=[
                 F.FetchPartition(partition=i, current_leader_epoch=-1, fetch_offset=off, last_fetched_epoch=-1,
                                  log_start_offset=-1, partition_max_bytes=partition_max_bytes)
                 for i, off in parts])], forgotten_topics_data=[], rack_id="")


def _sizes(response) -> list[int]:
    """Bytes of records per partition, in answer order; each holds whole batches only."""
    out = []
    for p in response.responses[0].partitions:
        data = bytes(p.records or b"")
        assert sum(b.size_in_bytes for b in read_batches(data)) == len(data)
        out.append(len(data))
    return out


def test_broker_respects_partitions_order_and_size_limits(tmp_path):
    """Mirrors Kafka's FetchRequestTest.testBrokerRespectsPartitionsOrderAndSizeLimits: partitions 0-3 hold small
    batches, 4 one over the partition limit and 5 one over the response limit (each after nine small ones). The
    answer keeps the request's order; only the first partition with records may exceed the limits, with its first
    batch; a later partition whose first batch does not fit what is left carries nothing. ``fetch.max.bytes`` caps
    a request asking for more."""
    c = Combined(tmp_path, extra="fetch.max.bytes=2048\n")

    async def scenario(node, conn):
        created = await conn.request(_create("limits", partitions=6), 7)
        tid = created.topics[0].topic_id
        await _hosted(node, "limits", 6)
        for i in range(9):
            r = await conn.request(_produce("limits", {p: _batch([b"v%d" % i]) for p in range(6)}), 9)
            assert all(p.error_code == 0 for p in r.responses[0].partition_responses)
        r = await conn.request(_produce("limits", {4: _batch([b"x" * (MAX_PARTITION + 1)]),
                                                   5: _batch([b"y" * (MAX_RESPONSE + 1)])}), 9)
        assert all(p.error_code == 0 for p in r.responses[0].partition_responses)
        small = len(_batch([b"v0"]))
        assert 2 * small <= MAX_PARTITION < 3 * small

        # 1. the large ones last, all from offset 0: within every limit
        order = [(3, 0), (0, 0), (2, 0), (1, 0), (4, 0), (5, 0)]
        f = await conn.request(_fetch(tid, order, MAX_RESPONSE, MAX_PARTITION), 13)
        assert [p.partition_index for p in f.responses[0].partitions] == [3, 0, 2, 1, 4, 5]
        sizes = _sizes(f)
        assert sizes[:4] == [2 * small] * 4 and sum(sizes) <= MAX_RESPONSE
        assert all(s <= MAX_PARTITION for s in sizes)

        # 2. the batch over the partition limit first: whole; the one over the response limit next: nothing
        order = [(4, 9), (5, 9), (0, 0), (1, 0), (2, 0), (3, 0)]
        sizes = _sizes(await conn.request(_fetch(tid, order, MAX_RESPONSE, MAX_PARTITION), 13))
        assert MAX_PARTITION < sizes[0] <= MAX_RESPONSE and sizes[1] == 0
        assert sum(sizes) <= MAX_RESPONSE and all(s <= MAX_PARTITION for s in sizes[1:])

        # 3. the batch over the response limit first: it alone goes out
        order = [(5, 9), (4, 9), (0, 0), (1, 0)]
        sizes = _sizes(await conn.request(_fetch(tid, order, MAX_RESPONSE, MAX_PARTITION), 13))
        assert sizes[0] > MAX_RESPONSE and sizes[1:] == [0, 0, 0]

        # 4. fetch.max.bytes (2048) caps a request for 1 MiB
        order = [(0, 0), (1, 0), (2, 0), (3, 0)]
        sizes = _sizes(await conn.request(_fetch(tid, order, 1 << 20, 1 << 20), 13))
        assert sizes[:2] == [9 * small] * 2 and 0 < sum(sizes) <= 2048

    c.run(scenario)


def _consume(port: int, want: int, config: dict) -> tuple[int, list[str]]:
    """Messages of topic ``big`` consumed from the start (partitions 0-2 assigned), and the errors seen."""
    errors: list[str] = []
    consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "limits",
                         "enable.auto.commit": False, "error_cb": lambda e: errors.append(str(e)), **config})
    n = 0
    try:
        consumer.assign([TopicPartition("big", i, 0) for i in range(3)])
        deadline = time.monotonic() + 15
        while n < want and time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is None:
                continue
            if m.error():
                errors.append(str(m.error()))
                continue
            n += 1
    finally:
        consumer.close()
    return n, errors


def test_librdkafka_fetch_max_bytes(tmp_path):
    """librdkafka's test 0082 (fetch.max.bytes): batches of 40 kB on three partitions, consumed with
    fetch.max.bytes 100 kB and receive.message.max.bytes 512 bytes above it. Each answer must stay within what the
    client allows (the third partition's batch does not fit what the first two left), or librdkafka drops it
    ("Invalid response size ... increase receive.message.max.bytes") and never gets anywhere."""
    c = Combined(tmp_path)

    async def scenario(node, conn):
        await conn.request(_create("big", partitions=3), 7)
        await _hosted(node, "big", 3)
        for i in range(4):
            r = await conn.request(_produce("big", {p: _batch([bytes([65 + i]) * 40_000]) for p in range(3)}), 9)
            assert all(p.error_code == 0 for p in r.responses[0].partition_responses)
        config = {"fetch.max.bytes": 100_000, "receive.message.max.bytes": 100_512, "message.max.bytes": 100_000,
                  "max.partition.fetch.bytes": 60_000}
        n, errors = await asyncio.to_thread(_consume, c.bport, 12, config)
        assert (n, [e for e in errors if "response size" in e]) == (12, [])

    c.run(scenario)


def test_the_test_servers_fetch_keeps_the_same_limits():
    """The test server's Fetch of its Raft log as a topic: ``fetch.max.bytes`` caps the request's MaxBytes, and a
    first batch larger than PartitionMaxBytes still goes out whole (Kafka's rule, as on a broker)."""
    import uuid
    from types import SimpleNamespace

    from kraftwire.config import Config
    from kraftwire.log.memory import MemoryLog
    from kraftwire.server.test_server.fetch import ConsumerFetch

    lg = MemoryLog()
    for i in range(5):
        lg.append_as_leader(_batch([b"%d" % i * 1000]), 1)
    lg.flush()
    lg.update_high_watermark(lg.end_offset())
    size = len(_batch([b"0" * 1000]))
    topic_id = uuid.uuid4()
    ctx = SimpleNamespace(log=lg, topic_id=topic_id, topic_name="t", watchers=[],
                          node=SimpleNamespace(settings=SimpleNamespace(config=Config(fetch_max_bytes=2 * size + 10))))
    fetch = ConsumerFetch(ctx)

    def answer(max_bytes: int, partition_max_bytes: int) -> int:
        req = _fetch(topic_id, [(0, 0)], max_bytes, partition_max_bytes)
        resp, _ready = fetch._ready_answer(SimpleNamespace(body=req, version=13))
        return _sizes(resp)[0]

    assert answer(1 << 20, 1 << 20) == 2 * size  # capped by fetch.max.bytes
    assert answer(1 << 20, 10) == size  # the first batch whole, beyond PartitionMaxBytes
