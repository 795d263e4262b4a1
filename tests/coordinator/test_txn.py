"""The transaction coordinator of one ``__transaction_state`` partition (pure): Kafka's states and transitions,
producer fencing by epoch, timeouts, the records and their replay (a new coordinator finishes what the old one
prepared)."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.txn import coordinator as tc
from kraftwire.protocol import messages as w


class Log:
    def __init__(self):
        self.records = []

    def write(self, shard, result):
        self.records.extend(result.records)  # the live shard already holds what it wrote
        return result

    def load(self):
        shard = tc.TxnShard(0)
        for key, value in self.records:
            shard.replay(key, value)
        return shard


def code(result):
    body = result.replies[-1].body
    per_partition = getattr(body, "results_by_topic_v3_and_below", None)
    if per_partition:  # AddPartitionsToTxn before v4 answers per partition
        return per_partition[0].results_by_partition[0].partition_error_code
    return body.error_code


def fresh():
    return tc.TxnShard(0), Log()


def test_a_transaction_commits_through_prepare_and_markers():
    shard, log = fresh()
    init = log.write(shard, shard.init_producer_id("tx", 60_000, None, "i", 0)).replies[0].body
    assert (init.error_code, init.producer_id, init.producer_epoch) == (0, 1000, 0)
    pid = init.producer_id
    added = log.write(shard, shard.add_partitions("tx", pid, 0, [("t", 0), ("t", 1)], "a", 10))
    assert code(added) == 0 and shard.txns["tx"].state == tc.ONGOING and shard.txns["tx"].start_ms == 10
    again = shard.add_partitions("tx", pid, 0, [("t", 1)], "a", 11)
    assert code(again) == 0 and again.records == []  # already in: no write
    log.write(shard, shard.add_offsets("tx", pid, 0, 7, "o", 12))
    assert ("__consumer_offsets", 7) in shard.txns["tx"].partitions
    end = log.write(shard, shard.end_txn("tx", pid, 0, True, "e", 20))
    assert code(end) == 0 and shard.txns["tx"].state == tc.PREPARE_COMMIT
    [marker] = end.markers
    assert marker.commit and marker.partitions == {("t", 0), ("t", 1), ("__consumer_offsets", 7)}
    assert code(shard.end_txn("tx", pid, 0, True, "e", 21)) == ec.CONCURRENT_TRANSACTIONS
    assert code(shard.end_txn("tx", pid, 0, False, "e", 21)) == ec.INVALID_TXN_STATE
    # a new coordinator loading the partition now resends the markers
    assert [m.commit for m in log.load().loaded()] == [True]
    log.write(shard, shard.markers_written("tx", pid, 0, 30))
    t = shard.txns["tx"]
    assert t.state == tc.COMPLETE_COMMIT and t.partitions == set()
    assert code(shard.end_txn("tx", pid, 0, True, "e", 31)) == 0  # a retry after completion
    assert log.load().txns["tx"].snapshot() == t.snapshot()
    kinds = [cr.decode(k, v, cr.TRANSACTION_RECORDS).value.transaction_status for k, v in log.records]
    assert kinds == [tc.EMPTY, tc.ONGOING, tc.ONGOING, tc.PREPARE_COMMIT, tc.COMPLETE_COMMIT]


def test_a_new_producer_instance_fences_the_old_one_and_aborts_its_transaction():
    shard, log = fresh()
    init = log.write(shard, shard.init_producer_id("tx", 60_000, None, "i", 0)).replies[0].body
    log.write(shard, shard.add_partitions("tx", init.producer_id, 0, [("t", 0)], "a", 1))
    second = log.write(shard, shard.init_producer_id("tx", 60_000, None, "i2", 2))
    assert code(second) == ec.CONCURRENT_TRANSACTIONS  # the open transaction is fenced and aborted first
    [marker] = second.markers
    assert not marker.commit and marker.producer_epoch == 1
    assert shard.txns["tx"].state == tc.PREPARE_ABORT
    log.write(shard, shard.markers_written("tx", init.producer_id, 1, 3))
    retry = log.write(shard, shard.init_producer_id("tx", 60_000, None, "i2", 4)).replies[0].body
    assert (retry.error_code, retry.producer_epoch) == (0, 2)
    # the zombie: its epoch is gone
    assert code(shard.add_partitions("tx", init.producer_id, 0, [("t", 0)], "z", 5)) == ec.PRODUCER_FENCED
    assert code(shard.end_txn("tx", init.producer_id, 0, True, "z", 5)) == ec.PRODUCER_FENCED
    assert code(shard.end_txn("tx", 4242, 2, True, "z", 5)) == ec.INVALID_PRODUCER_ID_MAPPING
    assert code(shard.init_producer_id("tx", 60_000, (init.producer_id, 0), "z", 6)) == ec.PRODUCER_FENCED


def test_a_transaction_past_its_timeout_is_aborted():
    shard, log = fresh()
    init = log.write(shard, shard.init_producer_id("tx", 1000, None, "i", 0)).replies[0].body
    log.write(shard, shard.add_partitions("tx", init.producer_id, 0, [("t", 0)], "a", 100))
    assert log.write(shard, shard.tick(1100)).markers == []
    r = log.write(shard, shard.tick(1101))
    [marker] = r.markers
    assert not marker.commit and shard.txns["tx"].producer_epoch == 1
    assert code(shard.end_txn("tx", init.producer_id, 0, True, "e", 1102)) == ec.PRODUCER_FENCED


def test_refusals_and_epoch_exhaustion():
    shard, log = fresh()
    assert code(shard.init_producer_id("", 1000, None, "i", 0)) == ec.INVALID_REQUEST
    assert code(shard.init_producer_id("tx", 0, None, "i", 0)) == ec.INVALID_TRANSACTION_TIMEOUT
    assert code(shard.init_producer_id("tx", 900_001, None, "i", 0)) == ec.INVALID_TRANSACTION_TIMEOUT
    init = log.write(shard, shard.init_producer_id("tx", 1000, None, "i", 0)).replies[0].body
    assert code(shard.end_txn("tx", init.producer_id, 0, True, "e", 1)) == ec.INVALID_TXN_STATE  # Empty
    shard.txns["tx"].producer_epoch = tc.EPOCH_EXHAUSTED
    bumped = log.write(shard, shard.init_producer_id("tx", 1000, None, "i", 2)).replies[0].body
    assert bumped.producer_id != init.producer_id and bumped.producer_epoch == 0
    assert shard.txns["tx"].last_producer_id == init.producer_id


def _listing(version=2, *, states=(), pids=(), duration=-1, pattern=None, now_ms=10_000):
    body = w.ListTransactionsRequest(state_filters=list(states), producer_id_filters=list(pids),
                                     duration_filter=duration, transactional_id_pattern=pattern)
    return tc.ListingFilter(body, version, now_ms)


def _txn(tid, pid=1, state=tc.EMPTY, start_ms=-1):
    t = tc.TxnMetadata(tid, pid, 0, 60_000, 0)
    t.state, t.start_ms = state, start_ms
    return t


def test_list_transactions_filters():
    """ListTransactions' filters (Kafka's TransactionStateManager.listTransactionStates): states by name, any case,
    unknown names reported; producer ids; v1's DurationFilter (Ongoing for longer than it, KIP-994); v2's
    TransactionalIdPattern (KIP-1152), a regular expression the whole id must match, ignored below v2 and when
    empty; one that does not compile is INVALID_REGULAR_EXPRESSION, as Kafka 4.4 answered "([" (error 128)."""
    txns = [_txn("app-1", 1), _txn("app-2", 2, tc.ONGOING, start_ms=1_000), _txn("other", 3, tc.ONGOING, 9_500)]

    def listed(f):
        return [t.transactional_id for t in txns if f.accepts(t)]

    assert listed(_listing(pattern="app-.*")) == ["app-1", "app-2"]
    assert listed(_listing(pattern="app")) == []  # the whole id, not a part of it
    assert listed(_listing(1, pattern="app")) == ["app-1", "app-2", "other"]  # v1 has no pattern
    assert listed(_listing(pattern="")) == ["app-1", "app-2", "other"]
    assert listed(_listing(states=["ONGOING", "nope"])) == ["app-2", "other"]
    assert _listing(states=["ONGOING", "nope"]).unknown_states == ["nope"]
    assert listed(_listing(states=["nope"])) == []  # only unknown states: nothing matches, as Kafka 4.4 answers
    assert listed(_listing(pids=[1, 3])) == ["app-1", "other"]
    assert listed(_listing(duration=1_000)) == ["app-2"]  # Ongoing for 9 s; "other" only for 0.5 s
    assert listed(_listing(0, duration=1_000)) == ["app-1", "app-2", "other"]  # v0 has no duration
    assert listed(_listing(states=["Ongoing"], pattern="o.*")) == ["other"]
    assert _listing(pattern="([").error == ec.INVALID_REGULAR_EXPRESSION
    assert _listing(pattern="(a)\\1").error == ec.INVALID_REGULAR_EXPRESSION  # RE2/J has no backreferences
    assert listed(_listing(pattern="(y+)+z")) == []  # linear time, whatever the pattern
    assert _listing(pattern="app.*").error == ec.NONE
