"""A producer's next transaction waits a little for its last one's markers (``txn_apis.NEXT_TXN_HOLD_S``),
in-process on real sockets and files. EndTxn is answered once PrepareCommit is committed, as Kafka answers, while the
markers are still on their way; an AddPartitionsToTxn (or AddOffsetsToTxn) starting the next transaction meanwhile
waits for them instead of meeting CONCURRENT_TRANSACTIONS, which librdkafka and the Java producer retry after 20 ms
(it made small transactions on RF-3 topics several times slower); with a slow partition leader it is answered
CONCURRENT_TRANSACTIONS after the hold, as Kafka answers. Also: the answers of clients too old to know
PRODUCER_FENCED carry INVALID_PRODUCER_EPOCH, as Kafka maps them."""

from __future__ import annotations

import asyncio

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.server.apis import txn_apis
from server.test_kraft_node import Combined, _create
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


def _run(tmp_path, delay_s: float, next_request: str = "AddPartitionsToTxn"):
    """What was written when EndTxn and the next transaction's first request were answered, and that answer."""
    leaders = SlowLeaders(delay_s)
    out = {}

    async def scenario(node, conn):
        node.txn_apis.links.call = leaders.call
        node.txn_apis.markers.call = leaders.call
        assert (await conn.request(_create("t"), 7)).topics[0].error_code == ec.NONE
        await _coordinator(conn, "tx")
        init = await _init(conn, "tx")
        pid = init.producer_id
        assert set(_codes(await conn.request(_add("tx", pid, 0, [("t", 0)]), 3)).values()) == {ec.NONE}
        ended = await conn.request(E(transactional_id="tx", producer_id=pid, producer_epoch=0, committed=True), 3)
        assert ended.error_code == ec.NONE
        out["written_at_end"] = leaders.written
        out["state_at_end"] = _states(node, "tx")[-1][0]
        if next_request == "AddPartitionsToTxn":
            out["next"] = set(_codes(await conn.request(_add("tx", pid, 0, [("t", 1)]), 3)).values())
        else:
            added = await conn.request(w.AddOffsetsToTxnRequest(transactional_id="tx", producer_id=pid,
                                                                producer_epoch=0, group_id="g"), 3)
            out["next"] = {added.error_code}
        out["written_at_next"] = leaders.written
        await _until("CompleteCommit", lambda: 4 in [s[0] for s in _states(node, "tx")])

    Combined(tmp_path, extra=PROPS).run(scenario)
    return out


def test_end_txn_is_answered_once_prepared_and_the_next_transaction_waits_for_the_markers(tmp_path):
    delay_s = 0.005  # a partition leader writing its marker in 5 ms, within the hold
    assert txn_apis.NEXT_TXN_HOLD_S >= 3 * delay_s
    got = _run(tmp_path, delay_s=delay_s)
    # answered as Kafka answers: PrepareCommit (2) committed, the markers not yet written
    assert got["written_at_end"] == 0 and got["state_at_end"] == 2
    # the next transaction waited for them rather than meeting CONCURRENT_TRANSACTIONS
    assert got["next"] == {ec.NONE}, f"the next transaction met {got['next']}"
    assert got["written_at_next"] > 0


def test_add_offsets_to_txn_waits_for_the_markers_too(tmp_path):
    got = _run(tmp_path, delay_s=0.005, next_request="AddOffsetsToTxn")
    assert got["next"] == {ec.NONE} and got["written_at_next"] > 0


def test_a_slow_partition_leader_stalls_the_next_transaction_no_longer_than_the_hold(tmp_path):
    got = _run(tmp_path, delay_s=1.0)
    assert got["written_at_end"] == 0
    # answered after the hold with Kafka's answer while the markers are being written; the client retries
    assert got["next"] == {ec.CONCURRENT_TRANSACTIONS} and got["written_at_next"] == 0


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
