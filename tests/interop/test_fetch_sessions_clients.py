"""Fetch sessions (KIP-227) with a real client, against a ``server-start`` process: kafka-python's consumer (which
keeps sessions, Fetch v12: topics by name) reads 200 partitions; after its first (full) Fetch every request is
incremental, as the node's metrics count them, the session holds the 200 partitions, and every record arrives in
order exactly once."""

from __future__ import annotations

import asyncio
import re
import urllib.request

from harness import processes, roles
from harness.kafka import free_ports

from kraftwire import error_codes as ec
from kraftwire.server.edge.client import KafkaConnection
from server.test_kraft_node import _create

PARTITIONS, RECORDS = 200, 1000
PROPS = "offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\n"


def scrape(port: int) -> dict[str, float]:
    """The node's Prometheus text as {'name{labels}': value}."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(kraftwire_[^ ]+) ([0-9.e+-]+)$", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def create_topic(port: int, name: str, partitions: int) -> None:
    async def run():
        conn = await KafkaConnection.open("127.0.0.1", port)
        try:
            created = await conn.request(_create(name, partitions), 7, timeout=30)
            assert created.topics[0].error_code == ec.NONE, created
        finally:
            await conn.close()
    asyncio.run(run())


def produce(port: int, topic: str) -> dict[int, list[bytes]]:
    """``RECORDS`` records round-robin over the partitions; what each partition holds, in order."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{port}", linger_ms=5)
    sent: dict[int, list[bytes]] = {}
    for i in range(RECORDS):
        value = f"r{i}".encode()
        producer.send(topic, value=value, partition=i % PARTITIONS)
        sent.setdefault(i % PARTITIONS, []).append(value)
    producer.flush(60)
    producer.close()
    return sent


def consume(port: int, topic: str, extra_polls: int, **config) -> dict[int, list[bytes]]:
    """Every record of ``topic`` through one assigned kafka-python consumer, then ``extra_polls`` polls that find
    nothing new (incremental fetches answered with no partition)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{port}", group_id=None, enable_auto_commit=False,
                             auto_offset_reset="earliest", fetch_max_wait_ms=100, **config)
    got: dict[int, list[bytes]] = {}
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
        for _ in range(600):
            for tp, records in consumer.poll(timeout_ms=200).items():
                got.setdefault(tp.partition, []).extend(r.value for r in records)
            if sum(map(len, got.values())) >= RECORDS:
                break
        for _ in range(extra_polls):
            for tp, records in consumer.poll(timeout_ms=200).items():
                got.setdefault(tp.partition, []).extend(r.value for r in records)
    finally:
        consumer.close()
    return got


def test_kafka_python_consumer_fetches_incrementally_over_200_partitions(tmp_path):
    (mport,) = free_ports(1)
    with processes.CombinedNode(tmp_path, PROPS + f"kraftwire.metrics.port={mport}\n") as node:
        roles.wait_until(lambda: roles.broker_ids(node.port) == [1], "the kraftwire node online")
        create_topic(node.port, "many", PARTITIONS)
        sent = produce(node.port, "many")
        got = consume(node.port, "many", extra_polls=10)
        assert got == sent
        m = scrape(mport)
        full = m.get('kraftwire_fetch_session_requests_total{context="FullContext"}', 0)
        incremental = m.get('kraftwire_fetch_session_requests_total{context="IncrementalContext"}', 0)
        assert full == 1, m
        assert incremental >= 10, m
        # the consumer closed its connection, not its session: the broker still holds it, all 200 partitions
        assert m["kraftwire_fetch_sessions"] == 1
        assert m["kraftwire_fetch_session_partitions"] == PARTITIONS
