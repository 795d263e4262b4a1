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
from kraftwire.server.client import KafkaConnection
from tests.server.test_replication import CT, Cluster, _until
from tests.server.test_txn_partitions import (TOPIC, UNVERIFIED, _data, _latest, _marker_errors, _markers, _pids,
                                              _produce, _read_committed, _txn_batch)


class _Unverified(Cluster):
    """Transactional batches with no coordinator behind them: the leaders' KIP-890 check is off."""

    def _common(self) -> str:
        return super()._common() + UNVERIFIED


def test_followers_track_transactions_and_a_new_leader_serves_them(tmp_path):
    cluster = _Unverified(tmp_path)

    async def main():
        await cluster.start()
        try:
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(1))
            try:
                created = await conn.request(CT(topics=[CT.CreatableTopic(
                    name=TOPIC, num_partitions=1, replication_factor=3, assignments=[], configs=[])],
                    timeout_ms=5000, validate_only=False), 7)
                assert created.topics[0].error_code == ec.NONE
                tid = created.topics[0].topic_id
            finally:
                await conn.close()
            reg = cluster.partition(TOPIC, 0)
            leader, followers = reg.leader, [b for b in reg.replicas if b != reg.leader]
            await _until("hosted", lambda: all(cluster.nodes[b].replicas.get(TOPIC, 0) is not None
                                               for b in (1, 2, 3)))
            hps = {b: cluster.nodes[b].replicas.get(TOPIC, 0) for b in (1, 2, 3)}
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
