"""Transactions across replicas, in-process (one controller, three brokers): the followers fold the leader's
transactional batches and markers in offset order — one incrementally as it appends, the other from its log when it
is first asked — and keep the aborted transactions in their own ``.txnindex`` files; WriteTxnMarkers is answered
once the markers are replicated (acks=-1, as Kafka appends them); after the leader stops, the new leader serves the
same last stable offset and AbortedTransactions, and completes the still-open transaction."""

from __future__ import annotations

import asyncio
import os

from kraftwire import error_codes as ec
from kraftwire.replica.transactions import AbortedTxn
from kraftwire.server.edge.client import KafkaConnection
from tests.server.test_replication import CT, LAG_MS, Cluster, _until
from tests.server.test_txn_partitions import (TOPIC, UNVERIFIED, _data, _latest, _marker_errors, _markers, _pids,
                                              _produce, _read_committed, _txn_batch)


class _Unverified(Cluster):
    """Transactional batches with no coordinator behind them: the leaders' KIP-890 check is off."""

    def _common(self) -> str:
        return super()._common() + UNVERIFIED


async def _three_replicas(cluster: Cluster):
    """Create TOPIC with one partition on the three brokers: (topic id, leader, followers, each one's ``Hosted``)."""
    conn = await KafkaConnection.open("127.0.0.1", cluster.port(1))
    try:
        created = await conn.request(CT(topics=[CT.CreatableTopic(
            name=TOPIC, num_partitions=1, replication_factor=3, assignments=[], configs=[])],
            timeout_ms=5000, validate_only=False), 7)
        assert created.topics[0].error_code == ec.NONE
    finally:
        await conn.close()
    reg = cluster.partition(TOPIC, 0)
    followers = [b for b in reg.replicas if b != reg.leader]
    await _until("hosted", lambda: all(cluster.nodes[b].replicas.get(TOPIC, 0) is not None for b in (1, 2, 3)))
    return (created.topics[0].topic_id, reg.leader, followers,
            {b: cluster.nodes[b].replicas.get(TOPIC, 0) for b in (1, 2, 3)})


def test_followers_track_transactions_and_a_new_leader_serves_them(tmp_path):
    cluster = _Unverified(tmp_path)

    async def main():
        await cluster.start()
        try:
            tid, leader, followers, hps = await _three_replicas(cluster)
            hps[followers[0]].txn_state()  # this one folds as it appends; the other folds from its log later
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(leader))
            try:
                await _until("leading", lambda: hps[leader].state.role == "leader")
                a, b, c = await _pids(conn, 3)
                for records, tx in ((_txn_batch([b"a0", b"a1"], pid=a), "app-a"), (_txn_batch([b"b0"], pid=b), "app-b"),
                                    (_txn_batch([b"a2"], pid=a, seq=2), "app-a")):
                    r = await conn.request(_produce(records, tx), 9)
                    assert r.responses[0].partition_responses[0].error_code == ec.NONE
                other = await KafkaConnection.open("127.0.0.1", cluster.port(followers[1]))
                try:  # a follower hosts the partition but does not lead it
                    r = await other.request(_markers((a, 0, True, 1, [0])), 1)
                    assert _marker_errors(r) == [[(0, ec.NOT_LEADER_OR_FOLLOWER)]]
                finally:
                    await other.close()
                r = await conn.request(_markers((a, 0, True, 1, [0]), (b, 0, False, 1, [0])), 1)
                assert _marker_errors(r) == [[(0, ec.NONE)], [(0, ec.NONE)]]
                # answered once replicated: every replica holds both markers
                assert all(hps[x].log.end_offset() == 6 for x in followers)
                r = await conn.request(_produce(_txn_batch([b"c0"], pid=c), "app-c"), 9)
                assert r.responses[0].partition_responses[0].base_offset == 6
                await _until("followers caught up", lambda: all(hps[x].log.end_offset() == 7 for x in followers))
            finally:
                await conn.close()
            expected = [AbortedTxn(b, 2, 5, 6)]
            for x in followers:
                txns = hps[x].txn_state()
                assert txns.ongoing == {c: 6} and txns.aborted == expected, x
                assert [n for n in os.listdir(hps[x].log.directory) if n.endswith(".txnindex")], x

            await cluster.nodes[leader].shutdown()
            del cluster.nodes[leader]
            new = await _until("new leader", lambda: (cluster.partition(TOPIC, 0).leader
                                                      if cluster.partition(TOPIC, 0).leader in followers else None))
            hp = hps[new]
            await _until("leading", lambda: hp.state.role == "leader")
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(new))
            try:
                async def lso_reached():
                    f = (await conn.request(_read_committed(tid), 13)).responses[0].partitions[0]
                    return f if f.error_code == ec.NONE and f.high_watermark == 7 else None

                for _ in range(200):
                    f = await lso_reached()
                    if f is not None:
                        break
                    await asyncio.sleep(0.05)
                assert f is not None and f.last_stable_offset == 6
                assert _data(f.records) == [b"a0", b"a1", b"b0", b"a2"]
                assert [(t.producer_id, t.first_offset) for t in f.aborted_transactions] == [(b, 2)]
                assert (await conn.request(_latest(1), 8)).topics[0].partitions[0].offset == 6
                r = await conn.request(_markers((c, 0, True, 2, [0])), 1)
                assert _marker_errors(r) == [[(0, ec.NONE)]]
                f = (await conn.request(_read_committed(tid), 13)).responses[0].partitions[0]
                assert f.last_stable_offset == f.high_watermark == 8 and _data(f.records)[-1] == b"c0"
            finally:
                await conn.close()
        finally:
            await cluster.stop()

    asyncio.run(main())


class _Patient(_Unverified):
    """Followers stay in the ISR however long their fetchers are stopped (the leader never shrinks it meanwhile)."""

    def _common(self) -> str:
        return super()._common().replace(f"replica.lag.time.max.ms={LAG_MS}", "replica.lag.time.max.ms=60000")


def test_a_marker_holds_the_last_stable_offset_until_replicated_and_it_never_goes_back(tmp_path):
    """Kafka's rule (ProducerStateManager's unreplicated transactions): a COMMIT appended by the leader but not yet
    below the high watermark still holds the last stable offset at its transaction's first offset, so read_committed
    consumers never read a transaction whose marker a leader change can lose; the new leader, without the marker,
    serves the same last stable offset (the transaction is open there), and the marker written again releases it."""
    cluster = _Patient(tmp_path)

    async def read_committed(port, tid):
        conn = await KafkaConnection.open("127.0.0.1", port)
        try:
            for _ in range(200):
                f = (await conn.request(_read_committed(tid), 13)).responses[0].partitions[0]
                if f.error_code == ec.NONE:
                    latest = (await conn.request(_latest(1), 8)).topics[0].partitions[0]
                    return f, latest.offset
                await asyncio.sleep(0.05)
            raise AssertionError(f"no read_committed fetch from {port}: {f}")
        finally:
            await conn.close()

    async def main():
        await cluster.start()
        try:
            tid, leader, followers, hps = await _three_replicas(cluster)
            await _until("leading", lambda: hps[leader].state.role == "leader")
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(leader))
            try:
                [a] = await _pids(conn, 1)
                r = await conn.request(_produce(_txn_batch([b"a0", b"a1"], pid=a), "app-a"), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.NONE
                await _until("followers know the high watermark",
                             lambda: all(hps[x].log.high_watermark() == 2 for x in followers))
                for x in followers:  # the marker will not be replicated
                    await cluster.nodes[x].replicas.fetchers.close()
                pending = asyncio.ensure_future(conn.request(_markers((a, 0, True, 1, [0])), 1))
                await _until("marker appended", lambda: hps[leader].log.end_offset() == 3)
                assert hps[leader].log.high_watermark() == 2
                f, latest = await read_committed(cluster.port(leader), tid)
                # the high watermark (2) is past the transaction's records, but not past its marker
                assert (f.high_watermark, f.last_stable_offset, latest) == (2, 0, 0)
                assert _data(f.records) == []
                before = f.last_stable_offset

                await cluster.nodes[leader].shutdown()  # the marker is lost with the leader
                del cluster.nodes[leader]
                try:
                    await pending
                except Exception:  # noqa: BLE001 - the connection went with the leader
                    pass
            finally:
                await conn.close()
            new = await _until("new leader", lambda: (cluster.partition(TOPIC, 0).leader
                                                      if cluster.partition(TOPIC, 0).leader in followers else None))
            await _until("leading", lambda: hps[new].state.role == "leader")
            for x in followers:
                if x != new:
                    fetchers = cluster.nodes[x].replicas.fetchers
                    fetchers.closed = False
                    fetchers.follow(hps[x])
            assert hps[new].log.end_offset() == 2 and hps[new].txn_state().ongoing == {a: 0}
            f, latest = await read_committed(cluster.port(new), tid)
            assert f.last_stable_offset == latest == 0 >= before  # never back

            # the coordinator writes the marker again, to the new leader: replicated, it releases the records
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(new))
            try:
                r = await conn.request(_markers((a, 0, True, 1, [0])), 1)
                assert _marker_errors(r) == [[(0, ec.NONE)]]
            finally:
                await conn.close()
            f, latest = await read_committed(cluster.port(new), tid)
            assert (f.high_watermark, f.last_stable_offset, latest) == (3, 3, 3)
            assert _data(f.records) == [b"a0", b"a1"]
        finally:
            await cluster.stop()

    asyncio.run(main())
