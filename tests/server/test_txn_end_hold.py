"""EndTxn waits a little for its markers (``txn_apis.END_TXN_HOLD_S``), in-process on real sockets and files: with
markers written within the hold the answer leaves once they are, so the producer's next AddPartitionsToTxn finds
the transaction complete instead of CONCURRENT_TRANSACTIONS (which librdkafka and the Java producer retry after
20 ms: it made small transactions on RF-3 topics ~5x slower); with a slow partition leader the answer leaves after
the hold, as Kafka answers, and the next transaction meets CONCURRENT_TRANSACTIONS until the markers are written.
Also: the answers of clients too old to know PRODUCER_FENCED carry INVALID_PRODUCER_EPOCH, as Kafka maps them."""

from __future__ import annotations

import asyncio

from kraftwire import error_codes as ec
from kraftwire.server import txn_apis
from kraftwire.server.client import KafkaConnection
from server.test_kraft_node import Combined, _create, _online
from server.test_replication import _until
from server.test_txn_coordinator import PROPS, E, FakeLeaders, _add, _codes, _coordinator, _init, _states


class SlowLeaders(FakeLeaders):
    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.delay_s = delay_s

        self.written = 0  # markers answered (written) so far

    async def call(self, broker, body):
        await asyncio.sleep(self.delay_s)
        answer = await super().call(broker, body)
        self.written += 1
        return answer


def _run(tmp_path, delay_s: float):
    """(whether the markers were written when EndTxn was answered, the next AddPartitionsToTxn's codes)."""
    c = Combined(tmp_path, extra=PROPS)
    leaders = SlowLeaders(delay_s)
    out = {}

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            node.txn_apis.links.call = leaders.call
            node.txn_apis.markers.call = leaders.call
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                assert (await conn.request(_create("t"), 7)).topics[0].error_code == ec.NONE
                await _coordinator(conn, "tx")
                init = await _init(conn, "tx")
                pid = init.producer_id
                assert set(_codes(await conn.request(_add("tx", pid, 0, [("t", 0)]), 3)).values()) == {ec.NONE}
                ended = await conn.request(E(transactional_id="tx", producer_id=pid, producer_epoch=0,
                                             committed=True), 3)
                out["markers_written"] = leaders.written > 0
                assert ended.error_code == ec.NONE
                out["next"] = set(_codes(await conn.request(_add("tx", pid, 0, [("t", 1)]), 3)).values())
                await _until("CompleteCommit", lambda: 4 in [s[0] for s in _states(node, "tx")])
            finally:
                await conn.close()
        finally:
            await node.shutdown()

    asyncio.run(main())
    return out


def test_end_txn_answers_once_the_markers_are_written_within_the_hold(tmp_path):
    delay_s = 0.005  # a partition leader writing its marker in 5 ms, within the hold
    assert txn_apis.END_TXN_HOLD_S >= 4 * delay_s
    got = _run(tmp_path, delay_s=delay_s)
    assert got["next"] == {ec.NONE}, f"the next transaction met {got['next']}: EndTxn answered before its markers"
    assert got["markers_written"]


def test_a_slow_partition_leader_does_not_stall_end_txn(tmp_path):
    got = _run(tmp_path, delay_s=1.0)
    assert not got["markers_written"], "EndTxn waited for a slow partition leader beyond the hold"
    assert got["next"] == {ec.CONCURRENT_TRANSACTIONS}  # Kafka's answer while the markers are being written


def test_old_clients_get_invalid_producer_epoch_for_fenced():
    from kraftwire.protocol import messages as w

    def init(code):
        return w.InitProducerIdResponse(throttle_time_ms=0, error_code=code, producer_id=-1, producer_epoch=-1)

    assert txn_apis.for_version(init(ec.PRODUCER_FENCED), 3).error_code == ec.INVALID_PRODUCER_EPOCH
    assert txn_apis.for_version(init(ec.PRODUCER_FENCED), 4).error_code == ec.PRODUCER_FENCED
    assert txn_apis.for_version(init(ec.NOT_COORDINATOR), 0).error_code == ec.NOT_COORDINATOR
    offsets = w.AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=ec.PRODUCER_FENCED)
    assert txn_apis.for_version(offsets, 1).error_code == ec.INVALID_PRODUCER_EPOCH
    assert txn_apis.for_version(w.EndTxnResponse(throttle_time_ms=0, error_code=ec.PRODUCER_FENCED),
                                2).error_code == ec.PRODUCER_FENCED
