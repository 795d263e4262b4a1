"""The partition side of Kafka transactions on a KRaft broker (in-process, real sockets and files): transactional
Produce, WriteTxnMarkers (COMMIT / ABORT control batches), the last stable offset in Fetch and ListOffsets,
READ_COMMITTED fetches with their AbortedTransactions, Kafka's epoch and coordinator-epoch fencing of markers, the
``.txnindex`` files, and a restart (clean, then with the producer snapshots and ``.txnindex`` files gone) that keeps
the open transaction and the aborted ones. confluent-kafka and kafka-python consumers with read_committed read only
the committed records."""

from __future__ import annotations

import asyncio
import os

from harness import clients
from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.records.api import CONTROL_ABORT, CONTROL_COMMIT, parse_control_key
from kraftwire.replica.transactions import AbortedTxn, decode_txn_index
from kraftwire.server.edge.client import KafkaConnection
from tests.server.test_kraft_node import Combined, _create, _online
from tests.server.test_partitions import _fetch, _hosted

P = w.ProduceRequest
#: these tests write transactional batches with no transaction coordinator behind them: the leader's check with the
#: coordinator (KIP-890, tests/server/test_txn_verification_e2e.py) is off
UNVERIFIED = "transaction.partition.verification.enable=false\n"
L = w.ListOffsetsRequest
M = w.WriteTxnMarkersRequest
TOPIC = "txn"


def _txn_batch(values, *, pid, epoch=0, seq=0, transactional=True) -> bytes:
    b = RecordBatchBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=transactional)
    for i, v in enumerate(values):
        b.append(f"k{i}".encode(), v, timestamp=1_700_000_000_000 + i)
    return b.build()


def _plain(values) -> bytes:
    b = RecordBatchBuilder()
    for v in values:
        b.append(b"k", v, timestamp=1_700_000_000_000)
    return b.build()


def _produce(records: bytes, transactional_id: str | None = "app-1"):
    return P(transactional_id=transactional_id, acks=-1, timeout_ms=5000, topic_data=[P.TopicProduceData(
        name=TOPIC, partition_data=[P.PartitionProduceData(index=0, records=records)])])


def _markers(*markers, transaction_version: int = 0):
    """markers: (producer id, epoch, commit, coordinator epoch, partitions); ``transaction_version`` goes at v2."""
    return M(markers=[M.WritableTxnMarker(producer_id=pid, producer_epoch=epoch, transaction_result=commit,
                                          topics=[M.WritableTxnMarkerTopic(name=TOPIC, partition_indexes=parts)],
                                          coordinator_epoch=coordinator, transaction_version=transaction_version)
                      for pid, epoch, commit, coordinator, parts in markers])


def _marker_errors(resp) -> list[list[tuple[int, int]]]:
    return [[(p.partition_index, p.error_code) for t in m.topics for p in t.partitions] for m in resp.markers]


def _read_committed(tid, offset=0):
    f = _fetch(tid, {0: offset})
    f.isolation_level = 1
    return f


def _data(records) -> list[bytes]:
    return [r.value for b in read_batches(bytes(records or b"")) if not b.is_control for r in b]


def _controls(records) -> list[tuple[int, int]]:
    """(producer id, control type) of each control batch."""
    return [(b.producer_id, parse_control_key(r.key)[1]) for b in read_batches(bytes(records or b""))
            if b.is_control for r in b]


def _latest(isolation: int):
    return L(replica_id=-1, isolation_level=isolation, topics=[L.ListOffsetsTopic(name=TOPIC, partitions=[
        L.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=-1)])])


def _at(timestamp: int, isolation: int):
    r = _latest(isolation)
    r.topics[0].partitions[0].timestamp = timestamp
    return r


async def _pids(conn, n: int) -> list[int]:
    I = w.InitProducerIdRequest
    out = []
    for _ in range(n):
        r = await conn.request(I(transactional_id=None, transaction_timeout_ms=60000, producer_id=-1,
                                 producer_epoch=-1), 4)
        assert r.error_code == ec.NONE
        out.append(r.producer_id)
    return out


def _kafka_python_values(port: int) -> list[bytes]:
    """kafka-python's KafkaConsumer (isolation_level=read_committed) from the beginning to the last stable offset."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{port}", isolation_level="read_committed",
                             enable_auto_commit=False, auto_offset_reset="earliest", consumer_timeout_ms=1500,
                             request_timeout_ms=5000)
    try:
        tp = TopicPartition(TOPIC, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        return [m.value for m in consumer]
    finally:
        consumer.close()


def test_transactional_produce_markers_last_stable_offset_and_restart(tmp_path):
    c = Combined(tmp_path, extra=UNVERIFIED)
    state = {}

    async def scenario(node, conn):
        created = await conn.request(_create(TOPIC, partitions=1), 7)
        tid = state["tid"] = created.topics[0].topic_id
        await _hosted(node, TOPIC, 1)
        a, b = state["pids"] = await _pids(conn, 2)

        # a transactional batch needs a transactional id in its request
        r = await conn.request(_produce(_txn_batch([b"a0"], pid=a), transactional_id=None), 9)
        assert r.responses[0].partition_responses[0].error_code == ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        # plain 0; A's transaction at 1-2; B's at 3; plain 4
        for records, tx in ((_plain([b"p0"]), None), (_txn_batch([b"a0", b"a1"], pid=a), "app-a"),
                            (_txn_batch([b"b0"], pid=b), "app-b"), (_plain([b"p1"]), None)):
            r = await conn.request(_produce(records, tx), 9)
            assert r.responses[0].partition_responses[0].error_code == ec.NONE
        # a plain write from a producer whose transaction is open: Kafka's INVALID_TXN_STATE
        r = await conn.request(_produce(_txn_batch([b"x"], pid=a, seq=2, transactional=False), None), 9)
        assert r.responses[0].partition_responses[0].error_code == ec.INVALID_TXN_STATE
        hp = node.replicas.get(TOPIC, 0)
        assert hp.log.end_offset() == 5 and hp.txn_state().ongoing == {a: 1, b: 3}

        # READ_COMMITTED stops at the last stable offset (A's first offset); read_uncommitted reads to the HW
        f = (await conn.request(_read_committed(tid), 13)).responses[0].partitions[0]
        assert (f.high_watermark, f.last_stable_offset, _data(f.records)) == (5, 1, [b"p0"])
        assert f.aborted_transactions == []
        f = (await conn.request(_fetch(tid, {0: 0}), 13)).responses[0].partitions[0]
        assert (f.last_stable_offset, len(_data(f.records))) == (1, 5)
        lo = await conn.request(_latest(1), 8)
        assert lo.topics[0].partitions[0].offset == 1
        assert (await conn.request(_latest(0), 8)).topics[0].partitions[0].offset == 5
        # by timestamp: a record at or past the last stable offset is not found under READ_COMMITTED
        assert (await conn.request(_at(1_700_000_000_000, 1), 8)).topics[0].partitions[0].offset == 0
        found = (await conn.request(_at(1_700_000_000_001, 1), 8)).topics[0].partitions[0]
        assert (found.error_code, found.offset, found.timestamp) == (ec.NONE, -1, -1)
        assert (await conn.request(_at(1_700_000_000_001, 0), 8)).topics[0].partitions[0].offset == 2
        # a READ_COMMITTED fetch parked at the last stable offset wakes when the markers land
        parked_conn = await KafkaConnection.open("127.0.0.1", c.bport)
        parked_req = _read_committed(tid, 1)
        parked_req.max_wait_ms = 5000
        parked = asyncio.ensure_future(parked_conn.request(parked_req, 13))
        await asyncio.sleep(0.2)
        assert not parked.done()

        # the markers: COMMIT A, ABORT B; a partition that does not exist is UNKNOWN_TOPIC_OR_PARTITION
        r = await conn.request(_markers((a, 0, True, 5, [0]), (b, 0, False, 5, [0, 7])), 1)
        assert _marker_errors(r) == [[(0, ec.NONE)], [(0, ec.NONE), (7, ec.UNKNOWN_TOPIC_OR_PARTITION)]]
        p = (await asyncio.wait_for(parked, 3)).responses[0].partitions[0]
        assert _data(p.records)[:2] == [b"a0", b"a1"]
        await parked_conn.close()
        assert hp.log.end_offset() == 7 and hp.txn_state().ongoing == {}
        f = (await conn.request(_fetch(tid, {0: 0}), 13)).responses[0].partitions[0]
        assert _data(f.records) == [b"p0", b"a0", b"a1", b"b0", b"p1"]
        assert _controls(f.records) == [(a, CONTROL_COMMIT), (b, CONTROL_ABORT)]
        assert f.last_stable_offset == 7
        f = (await conn.request(_read_committed(tid), 13)).responses[0].partitions[0]
        assert f.last_stable_offset == 7 and len(_data(f.records)) == 5
        assert [(t.producer_id, t.first_offset) for t in f.aborted_transactions] == [(b, 3)]
        assert (await conn.request(_latest(1), 8)).topics[0].partitions[0].offset == 7
        # Kafka's .txnindex of the segment: the abort, its last stable offset the marker's + 1
        [index] = [n for n in os.listdir(hp.log.directory) if n.endswith(".txnindex")]
        with open(os.path.join(hp.log.directory, index), "rb") as fh:
            assert decode_txn_index(fh.read()) == [AbortedTxn(b, 3, 6, 7)]

        # a real read_committed consumer: the committed records only
        assert await asyncio.to_thread(clients.read_committed_to_end, c.bport, TOPIC) == [b"p0", b"a0", b"a1", b"p1"]
        assert await asyncio.to_thread(_kafka_python_values, c.bport) == [b"p0", b"a0", b"a1", b"p1"]

        # B opens another transaction (offset 7) and stays open over the restarts
        r = await conn.request(_produce(_txn_batch([b"b1"], pid=b, seq=1), "app-b"), 9)
        assert r.responses[0].partition_responses[0].base_offset == 7
        assert (await conn.request(_latest(1), 8)).topics[0].partitions[0].offset == 7

    c.run(scenario)

    async def restarted(expect_snapshot: bool):
        node = c.node()
        await node.start()
        try:
            await _online(node)
            await _hosted(node, TOPIC, 1)
            hp = node.replicas.get(TOPIC, 0)
            a, b = state["pids"]
            assert bool(hp.log.producer_snapshots()) == expect_snapshot
            txns = hp.txn_state()
            assert txns.ongoing == {b: 7} and txns.aborted == [AbortedTxn(b, 3, 6, 7)]
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                for _ in range(100):  # the high watermark comes back with the leader's first append or checkpoint
                    f = (await conn.request(_read_committed(state["tid"]), 13)).responses[0].partitions[0]
                    if f.high_watermark == 8:
                        break
                    await asyncio.sleep(0.05)
                assert (f.high_watermark, f.last_stable_offset) == (8, 7)
                assert [(t.producer_id, t.first_offset) for t in f.aborted_transactions] == [(b, 3)]
                assert (await conn.request(_latest(1), 8)).topics[0].partitions[0].offset == 7
            finally:
                await conn.close()
        finally:
            await node.shutdown()

    asyncio.run(restarted(True))
    # a crash-like start: no producer snapshot, no .txnindex: both are rebuilt from the log
    part = c.logs / f"{TOPIC}-0"
    for name in os.listdir(part):
        if name.endswith((".snapshot", ".txnindex")):
            os.unlink(part / name)
    asyncio.run(restarted(False))
    assert [n for n in os.listdir(part) if n.endswith(".txnindex")]  # written again

    async def fencing():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            await _hosted(node, TOPIC, 1)
            a, b = state["pids"]
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                # KIP-1228: a transaction version 2 marker (WriteTxnMarkers v2) must bump the epoch of B's open
                # transaction; it appends nothing
                r = await conn.request(_markers((b, 0, False, 6, [0]), transaction_version=2), 2)
                assert _marker_errors(r) == [[(0, ec.INVALID_PRODUCER_EPOCH)]]
                hp = node.replicas.get(TOPIC, 0)
                assert hp.txn_state().ongoing == {b: 7} and hp.log.end_offset() == 8
                # the coordinator fences B: an ABORT with the next epoch; B's old epoch is then refused
                r = await conn.request(_markers((b, 1, False, 6, [0])), 1)
                assert _marker_errors(r) == [[(0, ec.NONE)]]
                assert hp.txn_state().ongoing == {} and hp.last_stable_offset() == hp.log.high_watermark() == 9
                # a TV2 coordinator's retry of that marker (no transaction open): appended again, aborting nothing
                r = await conn.request(_markers((b, 1, False, 6, [0]), transaction_version=2), 2)
                assert _marker_errors(r) == [[(0, ec.NONE)]]
                assert hp.txn_state().ongoing == {} and hp.last_stable_offset() == hp.log.high_watermark() == 10
                r = await conn.request(_produce(_txn_batch([b"z"], pid=b, seq=2), "app-b"), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.INVALID_PRODUCER_EPOCH
                # stale markers: an older producer epoch, an older coordinator epoch
                r = await conn.request(_markers((b, 0, True, 6, [0]), (a, 0, True, 4, [0])), 1)
                assert _marker_errors(r) == [[(0, ec.INVALID_PRODUCER_EPOCH)],
                                             [(0, ec.TRANSACTION_COORDINATOR_FENCED)]]
                f = (await conn.request(_read_committed(state["tid"]), 13)).responses[0].partitions[0]
                assert [(t.producer_id, t.first_offset) for t in f.aborted_transactions] == [(b, 3), (b, 7)]
                assert _data(f.records) == [b"p0", b"a0", b"a1", b"b0", b"p1", b"b1"]
            finally:
                await conn.close()
        finally:
            await node.shutdown()

    asyncio.run(fencing())


def test_acls_on_transactional_produce_and_write_txn_markers(tmp_path):
    """With an authorizer: a transactional Produce needs WRITE on the transactional id (else every partition is
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED, nothing appended); WriteTxnMarkers needs ALTER or CLUSTER_ACTION on the
    cluster (else every partition is CLUSTER_AUTHORIZATION_FAILED, nothing appended), as KafkaApis checks."""
    from kraftwire.security.authorizer import AclOperation as Op
    from kraftwire.security.authorizer import ResourceType
    from tests.server.test_acls_enforced import _acl, _login, _node, _until

    node, _cport, sport = _node(tmp_path, UNVERIFIED)

    async def main():
        await node.start()
        try:
            admin = await _login(sport, "admin")
            alice = await _login(sport, "alice")
            try:
                await _until(lambda: _ready(admin))
                await admin.request(_create(TOPIC, partitions=1), 7)
                await _hosted(node, TOPIC, 1)
                C = w.CreateAclsRequest
                r = await admin.request(C(creations=[_acl(ResourceType.TOPIC, TOPIC, "User:alice", Op.WRITE),
                                                     _acl(ResourceType.CLUSTER, "kafka-cluster", "User:alice",
                                                          Op.IDEMPOTENT_WRITE)]), 3)
                assert all(x.error_code == 0 for x in r.results)
                await _until(lambda: _acls_seen(node, 2))
                [pid] = await _pids(alice, 1)
                hp = node.replicas.get(TOPIC, 0)
                r = await alice.request(_produce(_txn_batch([b"v"], pid=pid), "app-1"), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
                r = await admin.request(_produce(_txn_batch([b"v"], pid=pid), "app-1"), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.NONE
                r = await alice.request(_markers((pid, 0, True, 0, [0])), 1)
                assert _marker_errors(r) == [[(0, ec.CLUSTER_AUTHORIZATION_FAILED)]]
                assert hp.log.end_offset() == 1 and hp.txn_state().ongoing == {pid: 0}
                r = await admin.request(_markers((pid, 0, True, 0, [0])), 1)
                assert _marker_errors(r) == [[(0, ec.NONE)]]
                assert hp.log.end_offset() == 2 and hp.txn_state().ongoing == {}
            finally:
                await admin.close()
                await alice.close()
        finally:
            await node.shutdown()

    async def _ready(conn):
        b = node.metadata.image.brokers.get(1)
        return b is not None and not b.fenced

    async def _acls_seen(n, count):
        return len(n.metadata.image.acls) >= count

    asyncio.run(main())
