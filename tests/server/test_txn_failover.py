"""The transaction coordinator moves: three brokers in-process (real sockets and files), ``__transaction_state`` at
replication factor 3 (min.insync.replicas 2, Kafka's defaults). A transaction is committed (PrepareCommit written,
the client answered) while its coordinator cannot reach the partition leaders; the coordinator broker then stops.
The new leader of the ``__transaction_state`` partition loads it, finds the transaction prepared, sends its markers
(real WriteTxnMarkers to the partition leaders) and completes it; the old producer epoch stays fenced."""

from __future__ import annotations

import asyncio

from kraftwire import error_codes as ec
from kraftwire.coordinator.partitioning import TRANSACTION_TOPIC
from kraftwire.protocol import messages as w
from kraftwire.records import read_batches
from kraftwire.server.edge.client import KafkaConnection
from server.test_replication import CT, Cluster, _until
from server.test_txn_coordinator import E, F, _add, _codes, _init

TXN_PROPS = "transaction.state.log.num.partitions=1\n"


class TxnCluster(Cluster):
    def _common(self) -> str:
        return super()._common() + TXN_PROPS


async def _never(broker, body):
    await asyncio.Event().wait()  # the partition leaders are unreachable from this coordinator


def _markers(node, topic: str, index: int) -> list[tuple[int, int]]:
    """(producer id, epoch) of each transaction marker batch in the partition's log on ``node``."""
    hp = node.replicas.get(topic, index)
    data = hp.log.read(hp.log.start_offset(), 1 << 24).records
    return [(b.producer_id, b.producer_epoch) for b in read_batches(data) if b.is_control and b.is_transactional]


def test_a_prepared_commit_is_completed_by_the_next_coordinator(tmp_path):
    cluster = TxnCluster(tmp_path)

    async def main():
        await cluster.start()
        try:
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(1))
            try:
                created = await conn.request(CT(topics=[CT.CreatableTopic(
                    name="t", num_partitions=2, replication_factor=3, assignments=[], configs=[])],
                    timeout_ms=5000, validate_only=False), 7)
                assert created.topics[0].error_code == ec.NONE
                found = None
                for _ in range(300):
                    found = (await conn.request(F(key_type=1, coordinator_keys=["tx"]), 4)).coordinators[0]
                    if found.error_code == ec.NONE:
                        break
                    await asyncio.sleep(0.05)
                assert found.error_code == ec.NONE
            finally:
                await conn.close()
            old = found.node_id
            cluster.nodes[old].txn_apis.markers.call = _never
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(old))
            try:
                init = await _init(conn, "tx")
                pid = init.producer_id
                assert (init.error_code, init.producer_epoch) == (ec.NONE, 0)
                assert set(_codes(await conn.request(_add("tx", pid, 0, [("t", 0), ("t", 1)]), 3)).values()) == {0}
                ended = await conn.request(E(transactional_id="tx", producer_id=pid, producer_epoch=0,
                                             committed=True), 3)
                assert ended.error_code == ec.NONE  # PrepareCommit is on 2+ replicas; the markers are stuck
            finally:
                await conn.close()
            await cluster.nodes[old].shutdown()
            del cluster.nodes[old]
            await _until("a new transaction coordinator", lambda: cluster.partition(TRANSACTION_TOPIC, 0).leader
                         not in (-1, old), 30)
            new = cluster.partition(TRANSACTION_TOPIC, 0).leader
            leaders = {i: cluster.partition("t", i).leader for i in (0, 1)}
            await _until("the markers on both partitions", lambda: all(
                leaders[i] in cluster.nodes and (pid, 0) in _markers(cluster.nodes[leaders[i]], "t", i)
                for i in (0, 1)), 30)
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(new))
            try:
                for _ in range(200):
                    d = (await conn.request(w.DescribeTransactionsRequest(transactional_ids=["tx"]), 0)
                         ).transaction_states[0]
                    if d.error_code == 0 and d.transaction_state == "CompleteCommit":
                        break
                    await asyncio.sleep(0.05)
                assert (d.transaction_state, d.producer_id, d.producer_epoch) == ("CompleteCommit", pid, 0)
                again = await conn.request(E(transactional_id="tx", producer_id=pid, producer_epoch=0,
                                             committed=True), 3)
                assert again.error_code == ec.NONE  # the client's retry of the commit
                bumped = await _init(conn, "tx")
                assert (bumped.producer_id, bumped.producer_epoch) == (pid, 1)
                zombie = await conn.request(_add("tx", pid, 0, [("t", 0)]), 3)
                assert set(_codes(zombie).values()) == {ec.PRODUCER_FENCED}
            finally:
                await conn.close()
        finally:
            await cluster.stop()

    asyncio.run(main())
