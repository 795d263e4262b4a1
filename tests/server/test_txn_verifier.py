"""The partition leader's verification requests (``txn_verifier.TxnVerifier``, Kafka's AddPartitionsToTxnManager):
batching per coordinator with one request in flight per node, the rules for a second verification of the same
transactional id, and how the coordinator's answers reach the Produce. The coordinator's side stands in as a
function here (the real one: tests/server/test_txn_verification_e2e.py)."""

from __future__ import annotations

import asyncio

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.replica import verification
from kraftwire.server.runtime import txn_verifier as tv

R = w.AddPartitionsToTxnResponse


def _response(codes: dict, error: int = ec.NONE):
    """codes: transactional id -> {(topic, partition): code}."""
    return R(throttle_time_ms=0, error_code=error, results_by_transaction=[
        R.AddPartitionsToTxnResult(transactional_id=tid, topic_results=[
            R.AddPartitionsToTxnTopicResult(name=t, results_by_partition=[
                R.AddPartitionsToTxnPartitionResult(partition_index=p, partition_error_code=c)])
            for (t, p), c in parts.items()]) for tid, parts in codes.items()])


class Coordinator:
    """Answers each request with ``answer(request)`` after ``gate`` opens; records the requests."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.requests = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def call(self, broker, body):
        self.requests.append((broker, [(t.transactional_id, t.producer_epoch, t.verify_only,
                                        sorted((x.name, p) for x in t.topics for p in x.partitions))
                                       for t in body.transactions]))
        await self.gate.wait()
        result = self.answer(body)
        if isinstance(result, BaseException):
            raise result
        return 5, result


def _verifier(coordinator: Coordinator) -> tv.TxnVerifier:
    v = tv.TxnVerifier(node=None, replicas=None)
    v.coordinator = lambda tid: 1
    v.links.call = coordinator.call
    return v


def _all_in(body):
    return _response({t.transactional_id: {(x.name, p): ec.NONE for x in t.topics for p in x.partitions}
                      for t in body.transactions})


async def _settle(v: tv.TxnVerifier) -> None:
    for _ in range(100):
        if not v.tasks and not v.in_flight:
            return
        await asyncio.sleep(0.001)
    raise AssertionError("the verifier did not settle")


def test_verifications_batch_per_node_one_request_in_flight():
    async def main():
        coord = Coordinator(_all_in)
        v = _verifier(coord)
        got = []
        coord.gate.clear()
        v.verify("a", 1, 0, [("t", 0)], lambda e: got.append(("a1", e)))
        await asyncio.sleep(0.01)  # the first request is out, held by the coordinator
        v.verify("a", 1, 0, [("t", 1)], lambda e: got.append(("a2", e)))  # same producer and epoch: joins
        v.verify("a", 1, 0, [("t", 2)], lambda e: got.append(("a3", e)))
        v.verify("b", 2, 3, [("t", 0)], lambda e: got.append(("b", e)))
        coord.gate.set()
        await _settle(v)
        assert coord.requests == [(1, [("a", 0, True, [("t", 0)])]),
                                  (1, [("a", 0, True, [("t", 1), ("t", 2)]), ("b", 3, True, [("t", 0)])])]
        assert got == [("a1", {}), ("a2", {}), ("a3", {}), ("b", {})]  # in the order asked
        assert v.verified == 4 and v.failures == 0

    asyncio.run(main())


def test_a_newer_epoch_fences_the_waiting_verification_and_an_older_one_is_refused():
    async def main():
        coord = Coordinator(_all_in)
        v = _verifier(coord)
        got = []
        coord.gate.clear()
        v.verify("x", 1, 0, [("t", 9)], lambda e: got.append(("first", e)))
        await asyncio.sleep(0.01)  # in flight
        v.verify("a", 1, 4, [("t", 0)], lambda e: got.append(("old", e)))
        v.verify("a", 1, 5, [("t", 0)], lambda e: got.append(("new", e)))
        v.verify("a", 1, 3, [("t", 1)], lambda e: got.append(("older", e)))
        v.verify("a", 2, 5, [("t", 2)], lambda e: got.append(("other pid", e)))
        assert got == [("old", {("t", 0): ec.INVALID_PRODUCER_EPOCH}), ("older", {("t", 1): ec.INVALID_PRODUCER_EPOCH}),
                       ("new", {("t", 0): ec.NETWORK_EXCEPTION})]
        coord.gate.set()
        await _settle(v)
        assert coord.requests[1] == (1, [("a", 5, True, [("t", 2)])])
        assert got[3:] == [("first", {}), ("other pid", {})]

    asyncio.run(main())


def test_the_coordinators_answers_as_the_produce_sees_them():
    async def main():
        answers = {ec.PRODUCER_FENCED, ec.TRANSACTION_ABORTABLE, ec.CONCURRENT_TRANSACTIONS}

        def answer(body):
            t = body.transactions[0]
            codes = dict(zip([(x.name, p) for x in t.topics for p in x.partitions], sorted(answers)))
            return _response({t.transactional_id: codes})

        v = _verifier(Coordinator(answer))
        got = []
        tps = [("t", 0), ("t", 1), ("t", 2), ("t", 3)]  # the last one missing from the answer
        v.verify("a", 1, 0, tps, lambda e: got.append(e))
        await _settle(v)
        v.verify("a", 1, 0, tps, lambda e: got.append(e), generic=True)  # a Produce v11+
        await _settle(v)
        codes = sorted(answers)  # CONCURRENT_TRANSACTIONS 51, PRODUCER_FENCED 90, TRANSACTION_ABORTABLE 120
        assert codes == [ec.CONCURRENT_TRANSACTIONS, ec.PRODUCER_FENCED, ec.TRANSACTION_ABORTABLE]
        assert got[0] == {("t", 0): ec.CONCURRENT_TRANSACTIONS, ("t", 1): ec.INVALID_PRODUCER_EPOCH,
                          ("t", 2): ec.INVALID_TXN_STATE, ("t", 3): ec.NETWORK_EXCEPTION}
        assert got[1][("t", 2)] == ec.TRANSACTION_ABORTABLE
        assert [tv.produce_error(c)[0] for c in got[0].values()] == [
            ec.NOT_ENOUGH_REPLICAS, ec.INVALID_PRODUCER_EPOCH, ec.INVALID_TXN_STATE, ec.NOT_ENOUGH_REPLICAS]
        assert tv.produce_error(ec.NETWORK_EXCEPTION)[1] == (
            "Unable to verify the partition has been added to the transaction. Underlying error: NETWORK_EXCEPTION")

    asyncio.run(main())


def test_whole_request_failures():
    async def main():
        got = []
        for answer in (lambda b: _response({}, ec.CLUSTER_AUTHORIZATION_FAILED), lambda b: ConnectionError("gone"),
                       lambda b: tv._NotSupported(1)):
            v = _verifier(Coordinator(answer))
            v.verify("a", 1, 0, [("t", 0)], lambda e: got.append(e))
            await _settle(v)
        assert got == [{("t", 0): ec.INVALID_TXN_STATE}, {("t", 0): ec.NETWORK_EXCEPTION}, {}]  # last: skipped
        v = _verifier(Coordinator(_all_in))
        v.coordinator = lambda tid: None  # no __transaction_state leader
        v.verify("a", 1, 0, [("t", 0)], lambda e: got.append(e))
        assert got[-1] == {("t", 0): ec.COORDINATOR_NOT_AVAILABLE}

    asyncio.run(main())


def test_a_produce_waiting_behind_one_that_opened_the_transaction_is_not_asked_again():
    """A producer's pipelined Produce that arrived while its predecessor was being verified: once the predecessor
    is appended (its callback), the transaction is open on the partition and the waiting one goes on unasked."""
    async def main():
        coord = Coordinator(_all_in)
        v = _verifier(coord)
        open_on = set()  # partitions where the producer's transaction is open (what the append would make so)
        got = []

        def appended(name, tps):
            def callback(errors):
                got.append((name, errors))
                if not errors:
                    open_on.update(tps)
            return callback

        def needed(tp):
            return tp not in open_on

        coord.gate.clear()
        v.verify("a", 1, 0, [("t", 0)], appended("first", [("t", 0)]), needed=needed)
        await asyncio.sleep(0.01)  # in flight
        v.verify("a", 1, 0, [("t", 0)], appended("second", [("t", 0)]), needed=needed)
        v.verify("a", 1, 0, [("t", 1)], appended("third", [("t", 1)]), needed=needed)  # still needs asking
        coord.gate.set()
        await _settle(v)
        assert got == [("first", {}), ("second", {}), ("third", {})]
        assert coord.requests == [(1, [("a", 0, True, [("t", 0)])]), (1, [("a", 0, True, [("t", 1)])])]

    asyncio.run(main())


def test_a_tv2_clients_partitions_are_added_not_verified():
    """Produce v12 / TxnOffsetCommit v5 (KIP-890 part 2): the request asks the coordinator to add (VerifyOnly
    false); a transactional id waiting with both kinds is added as a whole."""
    async def main():
        coord = Coordinator(_all_in)
        v = _verifier(coord)
        got = []
        coord.gate.clear()
        v.verify("x", 1, 0, [("t", 9)], lambda e: got.append("x"))
        await asyncio.sleep(0.01)  # in flight: what follows waits for the next request
        v.verify("a", 1, 0, [("t", 0)], lambda e: got.append("a0"), add=True)
        v.verify("b", 2, 0, [("t", 0)], lambda e: got.append("b0"))
        v.verify("b", 2, 0, [("t", 1)], lambda e: got.append("b1"), add=True)
        coord.gate.set()
        await _settle(v)
        assert coord.requests == [(1, [("x", 0, True, [("t", 9)])]),
                                  (1, [("a", 0, False, [("t", 0)]), ("b", 0, False, [("t", 0), ("t", 1)])])]
        assert got == ["x", "a0", "b0", "b1"]
        assert verification.ADD_SINCE == {"Produce": 12, "TxnOffsetCommit": 5}

    asyncio.run(main())
