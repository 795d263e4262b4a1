"""transaction.version 2 (KIP-890 part 2) end to end on a node formatted at transaction.version 2, on real sockets:

* Kafka 4.4's Java producer speaks it (it reads the finalized level from ApiVersions): it never sends
  AddPartitionsToTxn or AddOffsetsToTxn (Produce v12 and TxnOffsetCommit v5 have the leaders add the partitions) and
  each EndTxn v5 bumps the epoch; a read_committed consumer sees exactly the committed records and offsets.
* confluent-kafka's bundled librdkafka (2.16) has no KIP-890 part 2: it keeps the classic protocol (AddPartitionsToTxn
  v3, EndTxn v4), which the same cluster serves with the classic rules, as Kafka decides by the request's version.
"""

from __future__ import annotations

import asyncio

from confluent_kafka import Consumer, Producer, TopicPartition

from harness.kafka import run_java
from kraftwire import error_codes as ec
from kraftwire.coordinator.txn import coordinator as tc
from kraftwire.metadata.bootstrap import BOOTSTRAP_FILE, bootstrap_records, encode_bootstrap_file
from kraftwire.metadata.version import BY_NAME
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import KafkaConnection
from server.test_kraft_node import Combined, _create, _online
from server.test_txn_coordinator import _states
from server.test_txn_e2e import ALL_PROPS, _committed, _feed, _read_committed, _transform

PREPARES = (tc.PREPARE_COMMIT, tc.PREPARE_ABORT)


def _tv2_node(tmp_path) -> Combined:
    c = Combined(tmp_path, extra=ALL_PROPS)
    (c.logs / BOOTSTRAP_FILE).write_bytes(encode_bootstrap_file(
        bootstrap_records(BY_NAME["4.0-IV3"], {"transaction.version": 2, "group.version": 1}), timestamp=0))
    return c


def _transactions(port: int) -> None:
    """Three transactions of one producer: 10 records committed, 5 aborted, 5 committed."""
    p = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "transactional.id": "classic", "linger.ms": 5})
    p.init_transactions(30)
    for n, commit, tag in ((10, True, "a"), (5, False, "b"), (5, True, "c")):
        p.begin_transaction()
        for i in range(n):
            p.produce("out", value=f"{tag}{i}".encode(), partition=i % 3)
        assert p.flush(30) == 0  # sent before the end (an abort would drop what is still queued)
        if commit:
            p.commit_transaction(30)
        else:
            p.abort_transaction(30)


def _group_offset(port: int, group: str, topic: str) -> int:
    c = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": group})
    try:
        return c.committed([TopicPartition(topic, 0)], timeout=20)[0].offset
    finally:
        c.close()


def _prepares(node, tid: str) -> list[tuple[int, int, int]]:
    """(state, producer id, epoch) of each PrepareCommit/PrepareAbort record of ``tid``."""
    return [(s, pid, epoch) for s, pid, epoch, _parts in _states(node, tid) if s in PREPARES]


async def _topics(port: int, *names: str) -> None:
    conn = await KafkaConnection.open("127.0.0.1", port)
    try:
        for t in names:
            assert (await conn.request(_create(t), 7)).topics[0].error_code == ec.NONE
    finally:
        await conn.close()


def test_kafka_java_producer_runs_tv2_transactions(tmp_path):
    c = _tv2_node(tmp_path)

    async def scenario(node, conn):
        versions = await conn.request(w.ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
        assert ("transaction.version", 2) in [(f.name, f.max_version_level) for f in versions.finalized_features]
        await _topics(c.bport, "out")
        out = await asyncio.to_thread(run_java, "TxnV2Producer.java", f"127.0.0.1:{c.bport}", "tv2", "out")
        assert out.split() == ["done"]
        got = await asyncio.to_thread(_read_committed, c.bport, "out", 15)
        assert sorted(got) == sorted([f"a{i}".encode() for i in range(10)] + [f"c{i}".encode() for i in range(5)])
        assert await asyncio.to_thread(_group_offset, c.bport, "g2", "out") == 7  # the aborted 3 dropped
        states = _states(node, "tv2")
        # the client sent no AddPartitionsToTxn/AddOffsetsToTxn, yet the partitions were added (by the leaders)
        added = set().union(*(set(parts) for s, _pid, _epoch, parts in states if s == tc.ONGOING))
        assert {("out", 0), ("out", 1), ("out", 2)} <= added
        assert any(topic == "__consumer_offsets" for topic, _p in added)
        # every end bumped the epoch: three Prepare* records at three successive epochs of one producer id
        prepares = _prepares(node, "tv2")
        assert [s for s, _pid, _epoch in prepares] == [tc.PREPARE_COMMIT, tc.PREPARE_ABORT, tc.PREPARE_COMMIT]
        assert len({pid for _s, pid, _epoch in prepares}) == 1
        first = prepares[0][2]
        assert [epoch for _s, _pid, epoch in prepares] == [first, first + 1, first + 2]

    c.run(scenario)


def test_confluent_kafka_keeps_the_classic_protocol_on_a_tv2_cluster(tmp_path):
    """librdkafka without KIP-890 part 2 (AddPartitionsToTxn v3, EndTxn v4): its transactions run at one epoch, as
    Kafka serves those versions; consume-transform-produce keeps its offsets exactly once."""
    c = _tv2_node(tmp_path)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            await _topics(c.bport, "in", "out")
            await asyncio.to_thread(_transactions, c.bport)
            got = await asyncio.to_thread(_read_committed, c.bport, "out", 15)
            assert sorted(got) == sorted([f"a{i}".encode() for i in range(10)] + [f"c{i}".encode() for i in range(5)])
            prepares = _prepares(node, "classic")
            assert [s for s, _pid, _epoch in prepares] == [tc.PREPARE_COMMIT, tc.PREPARE_ABORT, tc.PREPARE_COMMIT]
            assert len({(pid, epoch) for _s, pid, epoch in prepares}) == 1  # no bump: the classic rules
            await asyncio.to_thread(_feed, c.bport, 30)
            assert await asyncio.to_thread(_transform, c.bport, 30, abort=True) == 30
            assert await asyncio.to_thread(_committed, c.bport) == [-1001] * 3
            assert await asyncio.to_thread(_transform, c.bport, 30, abort=False) == 30
            assert await asyncio.to_thread(_committed, c.bport) == [10, 10, 10]
        finally:
            await node.shutdown()

    asyncio.run(main())


A = w.AddPartitionsToTxnRequest
E = w.EndTxnRequest


def _leader_add(tid: str, pid: int, epoch: int, parts, verify_only: bool = False):
    """A partition leader's AddPartitionsToTxn v4+ for one transaction."""
    topics: dict[str, list[int]] = {}
    for t, p in parts:
        topics.setdefault(t, []).append(p)
    return A(transactions=[A.AddPartitionsToTxnTransaction(
        transactional_id=tid, producer_id=pid, producer_epoch=epoch, verify_only=verify_only,
        topics=[A.AddPartitionsToTxnTopic(name=t, partitions=ps) for t, ps in topics.items()])])


def _add_codes(resp) -> dict:
    return {(t.name, r.partition_index): r.partition_error_code for tx in resp.results_by_transaction
            for t in tx.topic_results for r in t.results_by_partition}


async def _wire_scenario(node, conn, *, tv2: bool) -> None:
    from server.test_txn_coordinator import _coordinator, _init

    assert (await conn.request(_create("w"), 7)).topics[0].error_code == ec.NONE
    await _coordinator(conn, "wire")
    init = await _init(conn, "wire")
    pid, epoch = init.producer_id, init.producer_epoch
    answer = await conn.request(_leader_add("wire", pid, epoch, [("w", 0)]), 5)
    added = _add_codes(answer)
    if not tv2:  # below transaction.version 2 a leader's add is refused whole, as Kafka 4.4 answers (the conformance
        # run's AddPartitionsToTxn-v4/v5 'add' scenarios)
        assert (answer.error_code, added) == (ec.UNSUPPORTED_VERSION, {})
        return
    assert added == {("w", 0): ec.NONE}
    verified = _add_codes(await conn.request(_leader_add("wire", pid, epoch, [("w", 0)], verify_only=True), 5))
    assert verified == {("w", 0): ec.NONE}
    end = await conn.request(E(transactional_id="wire", producer_id=pid, producer_epoch=epoch, committed=True), 5)
    assert (end.error_code, end.producer_id, end.producer_epoch) == (ec.NONE, pid, epoch + 1)
    for _ in range(100):  # the retry of the same EndTxn: CONCURRENT_TRANSACTIONS until complete, then NONE
        retry = await conn.request(E(transactional_id="wire", producer_id=pid, producer_epoch=epoch,
                                     committed=True), 5)
        if retry.error_code != ec.CONCURRENT_TRANSACTIONS:
            break
        await asyncio.sleep(0.05)
    assert (retry.error_code, retry.producer_id, retry.producer_epoch) == (ec.NONE, pid, epoch + 1)
    # the markers went at WriteTxnMarkers v2 (KIP-1228), the version the leader (this node) advertises
    assert [version for _conn, version in node.txn_apis.links.conns.values()] == [2]
    # the old epoch's write is fenced on the partition: the marker was written at the bumped epoch
    stale = await conn.request(_leader_add("wire", pid, epoch, [("w", 1)]), 5)
    assert _add_codes(stale) == {("w", 1): ec.PRODUCER_FENCED}


def test_a_leaders_add_and_end_txn_v5_on_the_wire(tmp_path):
    _tv2_node(tmp_path / "tv2").run(lambda node, conn: _wire_scenario(node, conn, tv2=True))


def test_a_leaders_add_is_refused_below_transaction_version_2(tmp_path):
    Combined(tmp_path / "tv0", extra=ALL_PROPS).run(lambda node, conn: _wire_scenario(node, conn, tv2=False))


def test_a_leaders_add_for_the_next_transaction_waits_for_the_markers(tmp_path, monkeypatch):
    """EndTxn v5 is answered once PrepareCommit is committed; the leader's add starting the next transaction (at the
    bumped epoch) while the markers are still being written waits for them, as a client's AddPartitionsToTxn does,
    instead of meeting CONCURRENT_TRANSACTIONS (which the Produce would answer as NOT_ENOUGH_REPLICAS). The wait's
    cap (``NEXT_TXN_HOLD_S``, 20 ms: test_txn_marker_hold) is lifted here: on a loaded machine the slow leader's
    markers take longer than that, and the add would then rightly meet CONCURRENT_TRANSACTIONS."""
    from kraftwire.server.apis import txn_apis
    from server.test_txn_coordinator import _coordinator, _init
    from server.test_txn_marker_hold import SlowLeaders

    monkeypatch.setattr(txn_apis, "NEXT_TXN_HOLD_S", 60.0)
    leaders = SlowLeaders(0.005)
    got = {}

    async def scenario(node, conn):
        node.txn_apis.links.call = leaders.call
        node.txn_apis.markers.call = leaders.call
        assert (await conn.request(_create("t"), 7)).topics[0].error_code == ec.NONE
        await _coordinator(conn, "hold")
        init = await _init(conn, "hold")
        pid, epoch = init.producer_id, init.producer_epoch
        assert _add_codes(await conn.request(_leader_add("hold", pid, epoch, [("t", 0)]), 5)) == {("t", 0): 0}
        end = await conn.request(E(transactional_id="hold", producer_id=pid, producer_epoch=epoch, committed=True), 5)
        got["end"] = (end.error_code, end.producer_epoch - epoch, leaders.written)
        got["next"] = _add_codes(await conn.request(_leader_add("hold", pid, epoch + 1, [("t", 1)]), 5))
        got["written_at_next"] = leaders.written

    _tv2_node(tmp_path).run(scenario)
    assert got["end"] == (ec.NONE, 1, 0)  # answered before any marker was written
    assert got["next"] == {("t", 1): ec.NONE} and got["written_at_next"] > 0


def test_an_exhausted_epoch_moves_to_a_new_producer_id_on_the_wire(tmp_path):
    """EndTxn v5 at the last usable epoch fetches a producer id first (none at hand), answers it at epoch 0; the
    markers go out at MAX_EPOCH for the old id, and the new id's next transaction goes on."""
    from kraftwire.coordinator.partitioning import partition_for
    from server.test_txn_coordinator import _coordinator, _init

    got = {}

    async def scenario(node, conn):
        assert (await conn.request(_create("t"), 7)).topics[0].error_code == ec.NONE
        await _coordinator(conn, "old")
        pid = (await _init(conn, "old")).producer_id
        shard = node.txn_apis.shards[partition_for("old", node.txn_apis.partitions())].shard
        shard.txns["old"].producer_epoch = tc.EPOCH_EXHAUSTED  # as after 32,766 transactions
        epoch = tc.EPOCH_EXHAUSTED
        assert _add_codes(await conn.request(_leader_add("old", pid, epoch, [("t", 0)]), 5)) == {("t", 0): 0}
        node.txn_apis.spare.clear()
        end = await conn.request(E(transactional_id="old", producer_id=pid, producer_epoch=epoch, committed=True), 5)
        got["end"] = (end.error_code, end.producer_id != pid, end.producer_epoch)
        new = end.producer_id
        for _ in range(100):  # until the markers are written and the transaction completes
            t = shard.txns["old"]
            if t.state == tc.COMPLETE_COMMIT:
                break
            await asyncio.sleep(0.05)
        got["complete"] = (t.state, t.producer_id == new, t.producer_epoch, t.last_producer_id == pid)
        got["next add"] = _add_codes(await conn.request(_leader_add("old", new, 0, [("t", 1)]), 5))
        got["prepares"] = [(pid_ == pid, e) for _s, pid_, e in _prepares(node, "old")]

    _tv2_node(tmp_path).run(scenario)
    assert got["end"] == (ec.NONE, True, 0)
    assert got["complete"] == (tc.COMPLETE_COMMIT, True, 0, True)
    assert got["next add"] == {("t", 1): ec.NONE}
    assert got["prepares"] == [(True, tc.MAX_EPOCH)]
