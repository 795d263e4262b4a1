"""Transactions end to end with confluent-kafka (librdkafka), in-process on real sockets and files: the transaction
coordinator (``txn_apis``), the partition side (transactional Produce, WriteTxnMarkers, the last stable offset,
``read_committed`` fetch) and TxnOffsetCommit held in the group coordinator until its marker. A committed
transaction's records and offsets are visible, an aborted one's never, and the offsets survive a restart."""

from __future__ import annotations

import asyncio
import time

from confluent_kafka import Consumer, Producer, TopicPartition

from kraftwire import error_codes as ec
from kraftwire.server.edge.client import KafkaConnection
from server.test_kraft_node import Combined, _create, _online
from server.test_replication import _until
from server.test_txn_coordinator import PROPS, _states

ALL_PROPS = PROPS + "group.initial.rebalance.delay.ms=0\n"


def _feed(port: int, n: int) -> None:
    p = Producer({"bootstrap.servers": f"127.0.0.1:{port}"})
    for i in range(n):
        p.produce("in", value=f"v{i}".encode(), partition=i % 3)
    assert p.flush(30) == 0


def _transform(port: int, want: int, *, abort: bool) -> int:
    """One consume-transform-produce transaction over ``want`` input records, committed or aborted."""
    c = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "g", "auto.offset.reset": "earliest",
                  "isolation.level": "read_committed", "enable.auto.commit": False})
    p = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "transactional.id": "ctp", "linger.ms": 5})
    try:
        p.init_transactions(30)
        c.subscribe(["in"])
        n = 0
        deadline = time.monotonic() + 30
        p.begin_transaction()
        while time.monotonic() < deadline and n < want:
            m = c.poll(0.2)
            if m is None or m.error():
                continue
            p.produce("out", value=m.value().upper(), partition=m.partition())
            n += 1
        p.send_offsets_to_transaction(c.position(c.assignment()), c.consumer_group_metadata(), 30)
        if abort:
            p.abort_transaction(30)
        else:
            p.commit_transaction(30)
        return n
    finally:
        c.close()


def _read_committed(port: int, topic: str, want: int) -> list[bytes]:
    c = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "reader", "auto.offset.reset": "earliest",
                  "isolation.level": "read_committed", "enable.auto.commit": False})
    got = []
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and len(got) < want:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got.append(m.value())
        end = time.monotonic() + 1  # nothing more arrives (an aborted record would)
        while time.monotonic() < end:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got.append(m.value())
        return got
    finally:
        c.close()


def _committed(port: int) -> list[int]:
    c = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "g"})
    try:
        return [tp.offset for tp in c.committed([TopicPartition("in", i) for i in range(3)], timeout=20)]
    finally:
        c.close()


def test_consume_transform_produce_exactly_once(tmp_path):
    c = Combined(tmp_path, extra=ALL_PROPS)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                for t in ("in", "out"):
                    assert (await conn.request(_create(t), 7)).topics[0].error_code == ec.NONE
            finally:
                await conn.close()
            await asyncio.to_thread(_feed, c.bport, 30)
            assert await asyncio.to_thread(_transform, c.bport, 30, abort=True) == 30
            assert await asyncio.to_thread(_committed, c.bport) == [-1001] * 3  # the aborted offsets are dropped
            assert await asyncio.to_thread(_transform, c.bport, 30, abort=False) == 30
            assert await asyncio.to_thread(_committed, c.bport) == [10, 10, 10]
            out = await asyncio.to_thread(_read_committed, c.bport, "out", 30)
            assert sorted(out) == sorted(f"V{i}".encode() for i in range(30))  # once each: the abort's never
            states = [s[0] for s in _states(node, "ctp")]
            assert states[-1] == 4 and 5 in states  # CompleteCommit last, a CompleteAbort before it
        finally:
            await node.shutdown()
        node = c.node()
        await node.start()
        try:
            await _online(node)
            assert await asyncio.to_thread(_committed, c.bport) == [10, 10, 10]  # reloaded from the log
        finally:
            await node.shutdown()

    asyncio.run(main())


def _transitions(node, tid: str) -> list[int]:
    """The states ``tid`` went through (an Ongoing written again as partitions are added counts once): Empty 0,
    Ongoing 1, PrepareCommit 2, PrepareAbort 3, CompleteCommit 4, CompleteAbort 5."""
    out: list[int] = []
    for state, *_ in _states(node, tid):
        if not out or out[-1] != state:
            out.append(state)
    return out


def _kafka_python_transactions(port: int) -> list[bytes]:
    from kafka import KafkaConsumer, KafkaProducer

    p = KafkaProducer(bootstrap_servers=f"127.0.0.1:{port}", transactional_id="kp-tx")
    try:
        p.init_transactions()
        p.begin_transaction()
        for i in range(5):
            p.send("t", value=f"k{i}".encode(), partition=i % 3)
        p.commit_transaction()
        p.begin_transaction()
        for i in range(5):
            p.send("t", value=f"x{i}".encode(), partition=i % 3)
        # the records go out (their partitions added to the transaction) before the abort: a producer aborting
        # with everything still buffered adds no partition and sends no EndTxn (kafka-python does just that)
        p.flush()
        p.abort_transaction()
    finally:
        p.close()
    c = KafkaConsumer("t", bootstrap_servers=f"127.0.0.1:{port}", auto_offset_reset="earliest",
                      isolation_level="read_committed", consumer_timeout_ms=3000)
    try:
        return sorted(m.value for m in c)
    finally:
        c.close()


def test_kafka_python_transactional_producer(tmp_path):
    c = Combined(tmp_path, extra=ALL_PROPS)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                assert (await conn.request(_create("t"), 7)).topics[0].error_code == ec.NONE
            finally:
                await conn.close()
            got = await asyncio.wait_for(asyncio.to_thread(_kafka_python_transactions, c.bport), 90)
            assert got == [f"k{i}".encode() for i in range(5)]
            await _until("CompleteAbort", lambda: _states(node, "kp-tx")[-1][0] == 5)
            assert _transitions(node, "kp-tx") == [0, 1, 2, 4, 1, 3, 5]
        finally:
            await node.shutdown()

    asyncio.run(main())


KAFKAJS_TXN = r"""
const { Kafka, logLevel } = require('kafkajs');
async function main() {
  const [brokers] = process.argv.slice(1);
  const kafka = new Kafka({ clientId: 'kraftwire-kafkajs-txn', brokers: [brokers], logLevel: logLevel.WARN,
                            retry: { retries: 8 } });
  const producer = kafka.producer({ transactionalId: 'js-tx', idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  let txn = await producer.transaction();
  await txn.send({ topic: 't', messages: [0, 1, 2].map((i) => ({ partition: i, value: `j${i}` })) });
  await txn.commit();
  txn = await producer.transaction();
  await txn.send({ topic: 't', messages: [0, 1, 2].map((i) => ({ partition: i, value: `y${i}` })) });
  await txn.abort();
  await producer.disconnect();
  console.log('done');
}
main().catch((err) => { console.error(err); process.exit(1); });
"""


def test_kafkajs_transactional_producer(tmp_path):
    import subprocess

    from harness import clients

    clients.ensure_kafkajs()
    c = Combined(tmp_path, extra=ALL_PROPS)

    def run_js() -> subprocess.CompletedProcess:
        return subprocess.run(["node", "-e", KAFKAJS_TXN, f"127.0.0.1:{c.bport}"], cwd=clients.KAFKAJS_DIR,
                              capture_output=True, text=True, timeout=90)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                assert (await conn.request(_create("t"), 7)).topics[0].error_code == ec.NONE
            finally:
                await conn.close()
            out = await asyncio.to_thread(run_js)
            assert out.returncode == 0, out.stderr
            got = await asyncio.to_thread(_read_committed, c.bport, "t", 3)
            assert sorted(got) == [b"j0", b"j1", b"j2"]
            await _until("CompleteAbort", lambda: _states(node, "js-tx")[-1][0] == 5)
            assert _transitions(node, "js-tx") == [0, 1, 2, 4, 1, 3, 5]
        finally:
            await node.shutdown()

    asyncio.run(main())
