"""kafka-python, aiokafka and confluent-kafka (librdkafka) through a 3-node quorum: ≥ 10,000 records each,
checked for content and order by a consumer; compression kept as produced; ListOffsets; Metadata refusals."""

from __future__ import annotations

import asyncio
import time

import pytest

from harness import clients

TIMEOUT_S = 120


def consume_kafka_python(quorum, tag, n, **kwargs):
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=quorum.servers, group_id=None, auto_offset_reset="earliest",
                             consumer_timeout_ms=2000, request_timeout_ms=10000, **kwargs)
    try:
        tp = TopicPartition(clients.TOPIC, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got: list = []
        deadline = clients.bounded(TIMEOUT_S)
        while len(clients.only(tag, got)) < n and not deadline.expired():
            got.extend(m.value for m in consumer)  # stops after consumer_timeout_ms without records
        return clients.only(tag, got)
    finally:
        consumer.close()


def test_kafka_python_producer_without_idempotence(quorum):
    from kafka import KafkaProducer

    want = clients.values("kp-plain")
    producer = KafkaProducer(bootstrap_servers=quorum.servers, enable_idempotence=False, acks="all",
                             request_timeout_ms=10000, max_block_ms=10000)
    try:
        futures = [producer.send(clients.TOPIC, value=v) for v in want]
        producer.flush(TIMEOUT_S)
        offsets = [f.get(timeout=10).offset for f in futures]
    finally:
        producer.close(10)
    assert offsets == sorted(offsets) and len(set(offsets)) == len(want)
    assert consume_kafka_python(quorum, "kp-plain", len(want)) == want


def test_kafka_python_default_idempotent_producer(quorum):
    from kafka import KafkaProducer

    want = clients.values("kp-idem")
    producer = KafkaProducer(bootstrap_servers=quorum.servers, request_timeout_ms=10000, max_block_ms=10000)
    try:
        assert producer.config["enable_idempotence"]
        futures = [producer.send(clients.TOPIC, key=b"k", value=v) for v in want]
        producer.flush(TIMEOUT_S)
        offsets = [f.get(timeout=10).offset for f in futures]
    finally:
        producer.close(10)
    assert offsets == sorted(offsets) and len(set(offsets)) == len(want)
    assert consume_kafka_python(quorum, "kp-idem", len(want)) == want
    # the batches carry the producer id the node handed out (InitProducerId) and sequences from 0
    leader = quorum.leader()
    data = [b for b in quorum.batches(leader) if not b["is_control"] and b["base_offset"] >= offsets[0]
            and b["last_offset"] <= offsets[-1]]
    assert sum(b["record_count"] for b in data) == len(want)


@pytest.mark.parametrize("compression", ["lz4", "zstd"])
def test_confluent_kafka_producer_keeps_compression(quorum, compression):
    from confluent_kafka import Consumer, Producer, TopicPartition

    tag = f"ck-{compression}"
    want = clients.values(tag)
    errors: list = []
    offsets: list = []

    def delivered(err, msg):
        if err is not None:
            errors.append(err)
        else:
            offsets.append(msg.offset())

    producer = Producer({"bootstrap.servers": quorum.bootstrap, "compression.type": compression, "acks": "all",
                         "linger.ms": 5, "message.timeout.ms": 60000})
    for i, v in enumerate(want):
        producer.produce(clients.TOPIC, value=v, on_delivery=delivered)
        if i % 500 == 0:
            producer.poll(0)
    assert producer.flush(TIMEOUT_S) == 0
    assert not errors and len(offsets) == len(want)
    # the leader stored the client's batches as produced (no recompression); librdkafka itself sends a batch
    # uncompressed when compressing would not make it smaller, so "none" may appear for a small batch
    lo, hi = min(offsets), max(offsets)
    data = [b for b in quorum.batches(quorum.leader()) if not b["is_control"] and lo <= b["base_offset"] <= hi]
    assert {b["compression"] for b in data} <= {compression, "none"}
    packed = sum(b["record_count"] for b in data if b["compression"] == compression)
    assert packed >= 0.9 * len(want)

    consumer = Consumer({"bootstrap.servers": quorum.bootstrap, "group.id": f"assign-{tag}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        consumer.assign([TopicPartition(clients.TOPIC, 0, lo)])
        got: list = []
        deadline = clients.bounded(TIMEOUT_S)
        while len(got) < len(want) and not deadline.expired():
            msg = consumer.poll(1.0)
            if msg is None or msg.error():
                continue
            if msg.value().startswith(tag.encode() + b"-"):
                got.append(msg.value())
    finally:
        consumer.close()
    assert got == want


def test_aiokafka_producer_and_consumer(quorum):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    want = clients.values("aio")

    async def run():
        producer = AIOKafkaProducer(bootstrap_servers=quorum.bootstrap, acks="all", request_timeout_ms=10000)
        await producer.start()
        try:
            futures = [await producer.send(clients.TOPIC, v) for v in want]
            metas = await asyncio.wait_for(asyncio.gather(*futures), TIMEOUT_S)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=quorum.bootstrap, group_id=None,
                                    auto_offset_reset="earliest", request_timeout_ms=10000)
        await consumer.start()
        try:
            tp = TopicPartition(clients.TOPIC, 0)
            consumer.assign([tp])
            consumer.seek(tp, metas[0].offset)
            got: list = []
            deadline = clients.bounded(TIMEOUT_S)
            while len(got) < len(want) and not deadline.expired():
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 10)
                for msgs in batch.values():
                    got.extend(m.value for m in msgs if m.value.startswith(b"aio-"))
            return [m.offset for m in metas], got
        finally:
            await consumer.stop()

    offsets, got = asyncio.run(run())
    assert offsets == list(range(offsets[0], offsets[0] + len(want)))
    assert got == want


def test_list_offsets_earliest_latest_and_by_timestamp(quorum):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    producer = KafkaProducer(bootstrap_servers=quorum.servers, enable_idempotence=False, acks="all",
                             request_timeout_ms=10000, max_block_ms=10000)
    try:
        base = int(time.time() * 1000) + 60_000  # explicit timestamps in the future: unique to this test
        metas = [producer.send(clients.TOPIC, value=b"ts-%d" % i, timestamp_ms=base + 10 * i).get(timeout=20)
                 for i in range(5)]
    finally:
        producer.close(10)
    consumer = KafkaConsumer(bootstrap_servers=quorum.servers, group_id=None, request_timeout_ms=10000)
    try:
        tp = TopicPartition(clients.TOPIC, 0)
        assert consumer.beginning_offsets([tp])[tp] == 0
        assert consumer.end_offsets([tp])[tp] == metas[-1].offset + 1
        found = consumer.offsets_for_times({tp: base + 15})[tp]
        assert (found.offset, found.timestamp) == (metas[2].offset, base + 20)
        assert consumer.offsets_for_times({tp: base + 10_000})[tp] is None
    finally:
        consumer.close()


def test_unknown_topic_and_non_leader_produce(quorum):
    """Metadata: UNKNOWN_TOPIC_OR_PARTITION for other topics (no auto-creation); a Produce sent to a follower gets
    NOT_LEADER_OR_FOLLOWER; a Fetch below the log start... (log start is 0 here) above the log end is out of range."""
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import request_once

    leader = quorum.leader()
    follower = next(n for n in quorum.cluster.nodes.values() if n is not leader)
    md = asyncio.run(request_once("127.0.0.1", follower.port, w.MetadataRequest(topics=[
        w.MetadataRequest.MetadataRequestTopic(name="nope"), w.MetadataRequest.MetadataRequestTopic(name=clients.TOPIC)],
        allow_auto_topic_creation=True), 12))
    by_name = {t.name: t for t in md.topics}
    assert by_name["nope"].error_code == 3 and by_name["nope"].partitions == []
    part = by_name[clients.TOPIC].partitions[0]
    assert part.leader_id == leader.node_id and sorted(part.replica_nodes) == [1, 2, 3]
    assert by_name[clients.TOPIC].topic_id.int != 0
    assert sorted(b.node_id for b in md.brokers) == [1, 2, 3]

    from kraftwire.records import RecordBatchBuilder

    builder = RecordBatchBuilder()
    builder.append(None, b"to-a-follower")
    P = w.ProduceRequest
    resp = asyncio.run(request_once("127.0.0.1", follower.port, P(acks=-1, timeout_ms=5000, topic_data=[
        P.TopicProduceData(name=clients.TOPIC, partition_data=[P.PartitionProduceData(index=0,
                                                                                      records=builder.build())])]), 9))
    assert resp.responses[0].partition_responses[0].error_code == 6  # NOT_LEADER_OR_FOLLOWER

    F = w.FetchRequest
    fetch = asyncio.run(request_once("127.0.0.1", leader.port, F(replica_id=-1, max_wait_ms=0, min_bytes=1,
                                                                 max_bytes=1 << 20, topics=[
        F.FetchTopic(topic=clients.TOPIC, partitions=[F.FetchPartition(partition=0, fetch_offset=10**9,
                                                                       partition_max_bytes=1 << 20)])]), 11))
    assert fetch.responses[0].partitions[0].error_code == 1  # OFFSET_OUT_OF_RANGE
