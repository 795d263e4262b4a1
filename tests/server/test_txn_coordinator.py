"""The transaction coordinator on a KRaft broker, in-process on real sockets and files: ``__transaction_state`` is
created on the first FindCoordinator(key type 1), InitProducerId/AddPartitionsToTxn/AddOffsetsToTxn/EndTxn are
answered from the pure ``TxnShard`` once its records are committed, markers go to the partition leaders (a fake
leader here, so the test does not depend on the partition side), timeouts abort, and a restart reloads the state.
The marker sender itself against a fake leader: ``test_marker_sender_*``."""

from __future__ import annotations

import asyncio
import time

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.partitioning import GROUP_TOPIC, TRANSACTION_TOPIC, partition_for
from kraftwire.coordinator.txn.coordinator import Marker
from kraftwire.protocol import messages as w
from kraftwire.records import read_batches
from kraftwire.server.edge.client import KafkaConnection
from kraftwire.server.apis.txn_apis import MarkerSender
from kraftwire.server.runtime.txn_markers import marker_version
from server.test_kraft_node import Combined, _create, _online
from server.test_replication import _until

PROPS = ("transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n"
         "transaction.state.log.num.partitions=3\noffsets.topic.replication.factor=1\n"
         "offsets.topic.num.partitions=5\n")
F = w.FindCoordinatorRequest
I = w.InitProducerIdRequest
A = w.AddPartitionsToTxnRequest
E = w.EndTxnRequest


class FakeLeaders:
    """Stands for the partition leaders' WriteTxnMarkers: records what it is sent, answers NONE (after ``fail``
    answers of NOT_LEADER_OR_FOLLOWER)."""

    def __init__(self, fail: int = 0) -> None:
        self.sent = []
        self.fail = fail

    async def call(self, broker, body):
        self.sent.append((broker, body))
        R = w.WriteTxnMarkersResponse
        code = ec.NOT_LEADER_OR_FOLLOWER if self.fail > 0 else ec.NONE
        self.fail -= 1
        return R(markers=[R.WritableTxnMarkerResult(producer_id=m.producer_id, topics=[
            R.WritableTxnMarkerTopicResult(name=t.name, partitions=[
                R.WritableTxnMarkerPartitionResult(partition_index=p, error_code=code)
                for p in t.partition_indexes]) for t in m.topics]) for m in body.markers])


def _states(node, tid: str):
    """(state, producer id, epoch, partitions) of each ``__transaction_state`` record of ``tid`` on ``node``."""
    hp = node.replicas.get(TRANSACTION_TOPIC, partition_for(tid, 3))
    data = hp.log.read(hp.log.start_offset(), 1 << 24).records
    out = []
    for b in read_batches(data):
        for r in b:
            rec = cr.decode(r.key, r.value, cr.TRANSACTION_RECORDS)
            if rec.key.transactional_id == tid:
                v = rec.value
                if v is None:  # the tombstone of an expired id
                    out.append((None, -1, -1, []))
                    continue
                out.append((v.transaction_status, v.producer_id, v.producer_epoch,
                            sorted((t.topic, p) for t in (v.transaction_partitions or ()) for p in t.partition_ids)))
    return out


async def _coordinator(conn, tid: str):
    for _ in range(300):
        found = (await conn.request(F(key_type=1, coordinator_keys=[tid]), 4)).coordinators[0]
        if found.error_code == ec.NONE:
            return found
        assert found.error_code == ec.COORDINATOR_NOT_AVAILABLE
        await asyncio.sleep(0.05)
    raise AssertionError("no transaction coordinator")


async def _init(conn, tid: str, timeout_ms: int = 60_000):
    for _ in range(200):
        r = await conn.request(I(transactional_id=tid, transaction_timeout_ms=timeout_ms, producer_id=-1,
                                 producer_epoch=-1), 4)
        if r.error_code not in (ec.COORDINATOR_LOAD_IN_PROGRESS, ec.NOT_COORDINATOR, ec.CONCURRENT_TRANSACTIONS):
            return r
        await asyncio.sleep(0.05)
    raise AssertionError(f"InitProducerId kept answering {ec.name_of(r.error_code)}")


def _add(tid, pid, epoch, parts):
    topics = {}
    for t, p in parts:
        topics.setdefault(t, []).append(p)
    return A(v3_and_below_transactional_id=tid, v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
             v3_and_below_topics=[A.AddPartitionsToTxnTopic(name=t, partitions=ps) for t, ps in topics.items()])


def _codes(resp):
    return {(t.name, r.partition_index): r.partition_error_code for t in resp.results_by_topic_v3_and_below
            for r in t.results_by_partition}


def test_transactions_commit_abort_fence_and_reload(tmp_path):
    c = Combined(tmp_path, extra=PROPS)
    fake = FakeLeaders(fail=1)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            node.txn_apis.links.call = fake.call  # the partition leaders' side is not under test here
            node.txn_apis.markers.call = fake.call
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                assert (await conn.request(_create("t"), 7)).topics[0].error_code == ec.NONE
                first = await conn.request(F(key_type=1, coordinator_keys=["tx1"]), 4)
                assert first.coordinators[0].error_code == ec.COORDINATOR_NOT_AVAILABLE  # creates the topic
                await _until("transaction topic", lambda: node.metadata.image.topic(TRANSACTION_TOPIC))
                assert len(node.metadata.image.topic(TRANSACTION_TOPIC).partitions) == 3
                cfg = node.metadata.image.configs.get((2, TRANSACTION_TOPIC), {})
                assert cfg.get("cleanup.policy") == "compact" and cfg.get("min.insync.replicas") == "1"
                found = await _coordinator(conn, "tx1")
                assert (found.node_id, found.port) == (1, c.bport)
                old = await conn.request(F(key_type=1, key="tx1"), 3)  # the single-key form
                assert (old.error_code, old.node_id) == (ec.NONE, 1)

                init = await _init(conn, "tx1")
                assert init.error_code == ec.NONE and init.producer_epoch == 0 and init.producer_id >= 0
                pid = init.producer_id
                bad = await conn.request(I(transactional_id="tx1", transaction_timeout_ms=10**9, producer_id=-1,
                                           producer_epoch=-1), 4)
                assert bad.error_code == ec.INVALID_TRANSACTION_TIMEOUT
                added = await conn.request(_add("tx1", pid, 0, [("t", 0), ("t", 1)]), 3)
                assert _codes(added) == {("t", 0): 0, ("t", 1): 0}
                unknown = await conn.request(_add("tx1", pid, 0, [("t", 2), ("nope", 0)]), 3)
                assert _codes(unknown) == {("t", 2): ec.OPERATION_NOT_ATTEMPTED,
                                           ("nope", 0): ec.UNKNOWN_TOPIC_OR_PARTITION}
                fenced = await conn.request(_add("tx1", pid, 7, [("t", 2)]), 3)
                assert set(_codes(fenced).values()) == {ec.PRODUCER_FENCED}
                offsets = await conn.request(w.AddOffsetsToTxnRequest(
                    transactional_id="tx1", producer_id=pid, producer_epoch=0, group_id="g"), 3)
                assert offsets.error_code == ec.NONE
                ended = await conn.request(E(transactional_id="tx1", producer_id=pid, producer_epoch=0,
                                             committed=True), 3)
                assert ended.error_code == ec.NONE
                await _until("CompleteCommit", lambda: _states(node, "tx1")[-1][0] == 4)
                gp = partition_for("g", 5)
                assert [s[0] for s in _states(node, "tx1")] == [0, 1, 1, 2, 4]  # Empty Ongoing Ongoing Prep Compl
                assert _states(node, "tx1")[3][3] == [(GROUP_TOPIC, gp), ("t", 0), ("t", 1)]
                # the marker went to the leader (broker 1), once refused (NOT_LEADER_OR_FOLLOWER) and sent again
                assert len(fake.sent) == 2
                m = fake.sent[-1][1].markers[0]
                assert (fake.sent[-1][0], m.producer_id, m.producer_epoch, m.transaction_result) == (1, pid, 0, True)
                # __consumer_offsets does not exist here: its partition is skipped, as Kafka skips a partition with
                # no leader endpoint (the topic is gone)
                assert sorted((t.name, p) for t in m.topics for p in t.partition_indexes) == [("t", 0), ("t", 1)]
                tp = node.replicas.get(TRANSACTION_TOPIC, partition_for("tx1", 3))
                assert m.coordinator_epoch == tp.state.leader_epoch
                again = await conn.request(E(transactional_id="tx1", producer_id=pid, producer_epoch=0,
                                             committed=True), 3)
                assert again.error_code == ec.NONE  # a retry of the commit
                other = await conn.request(E(transactional_id="tx1", producer_id=pid, producer_epoch=0,
                                             committed=False), 3)
                assert other.error_code == ec.INVALID_TXN_STATE

                # a second instance of the producer fences the first
                second = await _init(conn, "tx1")
                assert (second.error_code, second.producer_id, second.producer_epoch) == (ec.NONE, pid, 1)
                zombie = await conn.request(_add("tx1", pid, 0, [("t", 0)]), 3)
                assert set(_codes(zombie).values()) == {ec.PRODUCER_FENCED}
                zombie_end = await conn.request(E(transactional_id="tx1", producer_id=pid, producer_epoch=0,
                                                  committed=True), 3)
                assert zombie_end.error_code == ec.PRODUCER_FENCED
                # clients older than PRODUCER_FENCED (EndTxn/AddPartitionsToTxn v0-1) get INVALID_PRODUCER_EPOCH
                old_end = await conn.request(E(transactional_id="tx1", producer_id=pid, producer_epoch=0,
                                               committed=True), 1)
                assert old_end.error_code == ec.INVALID_PRODUCER_EPOCH
                old_add = await conn.request(_add("tx1", pid, 0, [("t", 0)]), 1)
                assert set(_codes(old_add).values()) == {ec.INVALID_PRODUCER_EPOCH}
                assert (await conn.request(_add("tx1", pid, 1, [("t", 2)]), 3)).results_by_topic_v3_and_below

                # a transaction open past its timeout is fenced and aborted by the coordinator's timer
                short = await _init(conn, "tx2", timeout_ms=1)
                assert short.error_code == ec.NONE
                assert set(_codes(await conn.request(_add("tx2", short.producer_id, 0, [("t", 0)]), 3)).values()) \
                    == {0}
                await asyncio.sleep(0.01)
                node.txn_apis.tick()
                await _until("timed-out abort", lambda: _states(node, "tx2")[-1][0] == 5)
                assert [(s[0], s[2]) for s in _states(node, "tx2")] == [(0, 0), (1, 0), (3, 1), (5, 1)]
                late = await conn.request(E(transactional_id="tx2", producer_id=short.producer_id,
                                            producer_epoch=0, committed=True), 3)
                assert late.error_code == ec.PRODUCER_FENCED
                assert fake.sent[-1][1].markers[0].transaction_result is False

                listed = await conn.request(w.ListTransactionsRequest(state_filters=[], producer_id_filters=[],
                                                                      duration_filter=-1), 1)
                assert [(s.transactional_id, s.transaction_state) for s in listed.transaction_states] == [
                    ("tx1", "Ongoing"), ("tx2", "CompleteAbort")]
                described = await conn.request(w.DescribeTransactionsRequest(transactional_ids=["tx1", "nope"]), 0)
                d1, d2 = described.transaction_states
                assert (d1.transaction_state, d1.producer_id, d1.producer_epoch) == ("Ongoing", pid, 1)
                assert [(t.topic, t.partitions) for t in d1.topics] == [("t", [2])]
                assert d2.error_code == ec.TRANSACTIONAL_ID_NOT_FOUND
            finally:
                await conn.close()
        finally:
            await node.shutdown()
        node = c.node()  # a restart: the coordinator state is loaded from __transaction_state
        await node.start()
        try:
            await _online(node)
            node.txn_apis.markers.call = fake.call
            await _until("transaction state loaded", lambda: len(node.txn_apis.shards) == 3 and not any(
                s.loading for s in node.txn_apis.shards.values()))
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                described = await conn.request(w.DescribeTransactionsRequest(transactional_ids=["tx1", "tx2"]), 0)
                assert [(d.transaction_state, d.producer_epoch) for d in described.transaction_states] == [
                    ("Ongoing", 1), ("CompleteAbort", 1)]
                loading = node.txn_apis.shards[partition_for("tx1", 3)]
                loading.loading = True
                try:
                    r = await conn.request(E(transactional_id="tx1", producer_id=pid, producer_epoch=1,
                                             committed=False), 3)
                    assert r.error_code == ec.COORDINATOR_LOAD_IN_PROGRESS
                finally:
                    loading.loading = False
                r = await conn.request(E(transactional_id="tx1", producer_id=pid, producer_epoch=1, committed=False),
                                       3)
                assert r.error_code == ec.NONE
                await _until("CompleteAbort after the restart", lambda: _states(node, "tx1")[-1][0] == 5)
                # transactional.id.expiration.ms later (here: a clock far ahead), idle ids are removed
                far = int(time.time() * 1000) + 10**10
                node.txn_apis._each_shard(lambda shard: shard.expire(far, 604_800_000), "expiry")
                await _until("tombstones", lambda: _states(node, "tx1")[-1][0] is None
                             and _states(node, "tx2")[-1][0] is None)
                gone = await conn.request(w.DescribeTransactionsRequest(transactional_ids=["tx1"]), 0)
                assert gone.transaction_states[0].error_code == ec.TRANSACTIONAL_ID_NOT_FOUND
            finally:
                await conn.close()
        finally:
            await node.shutdown()

    asyncio.run(main())


# ==================================================================================================== MarkerSender
def test_marker_sender_retries_until_written_and_skips_gone_partitions():
    leaders = {("a", 0): 1, ("a", 1): 2, ("b", 0): -1, ("gone", 0): None}
    answers = {1: [ec.NOT_ENOUGH_REPLICAS, ec.NONE], 2: [ec.NONE], 3: [ec.NONE]}
    sent = []

    async def call(broker, body):
        sent.append((broker, sorted((t.name, p) for t in body.markers[0].topics for p in t.partition_indexes)))
        if broker == 2 and not any(b == 2 for b, _ in sent[:-1]):
            raise ConnectionError("refused")  # an unreachable leader is retried
        code = answers[broker].pop(0)
        R = w.WriteTxnMarkersResponse
        return R(markers=[R.WritableTxnMarkerResult(producer_id=7, topics=[R.WritableTxnMarkerTopicResult(
            name=t.name, partitions=[R.WritableTxnMarkerPartitionResult(partition_index=p, error_code=code)
                                     for p in t.partition_indexes]) for t in body.markers[0].topics])])

    async def main():
        done = []
        sender = MarkerSender(lambda t, p: leaders[(t, p)], call, backoff_s=0.001)
        marker = Marker("x", 7, 3, True, frozenset(leaders))
        task = sender.send(marker, 5, done.append)
        for _ in range(50):
            await asyncio.sleep(0.002)
        assert not done  # ("b", 0) has no leader yet
        leaders[("b", 0)] = 3
        await asyncio.wait_for(task, 5)
        assert done == [True]

    asyncio.run(main())
    assert ("gone", 0) not in [tp for _, tps in sent for tp in tps]
    assert [b for b, _ in sent].count(2) == 2 and [b for b, _ in sent].count(3) == 1
    assert sent[0][1] == [("a", 0)] or sent[0][1] == [("a", 1)]


def test_marker_sender_stops_when_fenced_or_superseded():
    async def fenced(broker, body):
        R = w.WriteTxnMarkersResponse
        return R(markers=[R.WritableTxnMarkerResult(producer_id=7, topics=[R.WritableTxnMarkerTopicResult(
            name="a", partitions=[R.WritableTxnMarkerPartitionResult(partition_index=0,
                                                                     error_code=ec.TRANSACTION_COORDINATOR_FENCED)])])])

    async def main():
        done = []
        sender = MarkerSender(lambda t, p: 1, fenced, backoff_s=0.001)
        assert await sender.run(Marker("x", 7, 3, False, frozenset({("a", 0)})), 5, done.append) is False
        assert done == [False]
        done.clear()
        ok = MarkerSender(lambda t, p: 1, FakeLeaders().call, backoff_s=0.001)
        assert await ok.run(Marker("x", 7, 3, False, frozenset({("a", 0)})), 5, done.append,
                            lambda: False) is False
        assert done == [False]

    asyncio.run(main())


def test_markers_carry_the_transaction_version_at_the_negotiated_version():
    """Kafka's TransactionMarkerChannelManager puts the transaction's clientTransactionVersion in each marker and its
    NetworkClient sends WriteTxnMarkers at the highest version both brokers serve: v2 (KIP-1228) to a leader that
    advertises it, v1 (which drops the ignorable field) to one that does not."""
    assert [marker_version(v) for v in (None, 0, 1, 2, 9)] == [1, 1, 1, 2, 2]
    leaders = FakeLeaders()

    async def main():
        done = []
        sender = MarkerSender(lambda t, p: 1, leaders.call, backoff_s=0.001)
        assert await sender.run(Marker("x", 7, 3, True, frozenset({("a", 0)}), 2), 5, done.append) is True
        assert done == [True]

    asyncio.run(main())
    [(_broker, body)] = leaders.sent
    assert [(m.producer_epoch, m.coordinator_epoch, m.transaction_version) for m in body.markers] == [(3, 5, 2)]
