"""transaction.version 2 (KIP-890 part 2) in the pure transaction coordinator: the epoch bumped at every end, the
producer id replaced when the epoch runs out, the retries of an EndTxn recognised, the records that carry it all.
Mirrors the TV2 cases of Kafka's TransactionCoordinatorTest (``shouldReturnOkOnEndTxnWhenStatusIsCompleteCommitAnd
ResultIsCommitInV2``, ``...CompleteAbortAndResultIsAbortInV2``, ``shouldReturnConcurrentTransactionsOnEndTxnRequest
WhenStatusIsPrepareCommit`` in V2, ``shouldReturnInvalidEpochOnEndTxnWhenEpochIsLarger``, the epoch-overflow
cases) and TransactionMetadataTest (``prepareAbortOrCommit``/``prepareComplete`` with TV_2: epoch + 1, last epoch,
nextProducerId taking over at epoch 0)."""

from __future__ import annotations

import pytest

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.txn import coordinator as tc

TV2 = 2


class Log:
    def __init__(self, version: int = TV2):
        self.records = []
        self.config = tc.TxnConfig(transaction_version=version)

    def write(self, result):
        self.records.extend(result.records)
        return result

    def load(self):
        shard = tc.TxnShard(0, self.config)
        for key, value in self.records:
            shard.replay(key, value)
        return shard

    def values(self):
        return [cr.decode(k, v, cr.TRANSACTION_RECORDS) for k, v in self.records]


def answer(result):
    body = result.replies[-1].body
    per = getattr(body, "results_by_topic_v3_and_below", None)
    if per:
        return per[0].results_by_partition[0].partition_error_code
    return body.error_code, getattr(body, "producer_id", None), getattr(body, "producer_epoch", None)


def started(log: Log, epoch: int = 0):
    """A shard with transactional id "tx" at ``epoch`` and one TV2 transaction open on t-0 (added by a leader)."""
    shard = tc.TxnShard(0, log.config)
    init = log.write(shard.init_producer_id("tx", 60_000, None, "i", 0)).replies[0].body
    t = shard.txns["tx"]
    t.producer_epoch = epoch
    assert answer(log.write(shard.add_partitions("tx", init.producer_id, epoch, [("t", 0)], "a", 1,
                                                 client_version=TV2))) == 0
    return shard, init.producer_id


def test_commit_bumps_the_epoch_in_the_record_the_markers_and_the_answer():
    log = Log()
    shard, pid = started(log)
    end = log.write(shard.end_txn("tx", pid, 0, True, "e", 5, client_version=TV2))
    assert answer(end) == (0, pid, 1)
    t = shard.txns["tx"]
    assert (t.state, t.producer_epoch, t.last_producer_epoch) == (tc.PREPARE_COMMIT, 1, 0)
    [marker] = end.markers
    assert (marker.producer_id, marker.producer_epoch, marker.commit) == (pid, 1, True)
    assert marker.transaction_version == TV2  # sent in WriteTxnMarkers v2 (KIP-1228): the leaders' epoch rule
    prepare = log.values()[-1]
    assert prepare.value_version == 1  # TV1+: the flexible value
    v = prepare.value
    assert (v.producer_epoch, v.transaction_status, v.client_transaction_version, v.next_producer_id) == (
        1, tc.PREPARE_COMMIT, 2, -1)
    log.write(shard.markers_written("tx", pid, 1, 6))
    assert (t.state, t.producer_id, t.producer_epoch) == (tc.COMPLETE_COMMIT, pid, 1)
    # the next transaction runs at the bumped epoch, and its end bumps again
    assert answer(log.write(shard.add_partitions("tx", pid, 1, [("t", 1)], "a", 7, client_version=TV2))) == 0
    assert answer(log.write(shard.end_txn("tx", pid, 1, False, "e", 8, client_version=TV2))) == (0, pid, 2)
    loaded = log.load().txns["tx"]
    assert (loaded.producer_epoch, loaded.client_version, loaded.state) == (2, 2, tc.PREPARE_ABORT)


@pytest.mark.parametrize("commit", [True, False])
def test_a_retried_end_is_recognised_by_the_epoch_before_the_bump(commit):
    """In Prepare*: CONCURRENT_TRANSACTIONS; in Complete*: NONE with the current producer (Kafka's ...InV2 cases);
    the other result is INVALID_TXN_STATE."""
    log = Log()
    shard, pid = started(log)
    log.write(shard.end_txn("tx", pid, 0, commit, "e", 5, client_version=TV2))
    assert answer(shard.end_txn("tx", pid, 0, commit, "e", 6, client_version=TV2))[0] == ec.CONCURRENT_TRANSACTIONS
    assert answer(shard.end_txn("tx", pid, 0, not commit, "e", 6, client_version=TV2))[0] == ec.INVALID_TXN_STATE
    log.write(shard.markers_written("tx", pid, 1, 7))
    retry = shard.end_txn("tx", pid, 0, commit, "e", 8, client_version=TV2)
    assert answer(retry) == (0, pid, 1) and retry.records == [] and retry.markers == []
    assert answer(shard.end_txn("tx", pid, 0, not commit, "e", 8, client_version=TV2))[0] == ec.INVALID_TXN_STATE


def test_epochs_other_than_the_current_or_the_retried_one_are_fenced():
    """shouldReturnInvalidEpochOnEndTxnWhenEpochIsLarger / ...IsSmaller. After an end, the current (bumped) epoch
    is the next transaction's, which added nothing: CONCURRENT_TRANSACTIONS while the markers are written, then an
    abort goes through (bumping again) and a commit is INVALID_TXN_STATE — Kafka 4.4's answers
    (tests/kafka/test_txn_v2_oracle.py)."""
    log = Log()
    shard, pid = started(log, epoch=3)
    for epoch in (2, 4):
        assert answer(shard.end_txn("tx", pid, epoch, True, "e", 5, client_version=TV2))[0] == ec.PRODUCER_FENCED
    assert answer(shard.end_txn("tx", pid + 1, 3, True, "e", 5, client_version=TV2))[0] == (
        ec.INVALID_PRODUCER_ID_MAPPING)
    log.write(shard.end_txn("tx", pid, 3, True, "e", 5, client_version=TV2))
    for epoch in (2, 5):
        assert answer(shard.end_txn("tx", pid, epoch, True, "e", 6, client_version=TV2))[0] == ec.PRODUCER_FENCED
    assert answer(shard.end_txn("tx", pid, 4, False, "e", 6, client_version=TV2))[0] == ec.CONCURRENT_TRANSACTIONS
    log.write(shard.markers_written("tx", pid, 4, 7))
    assert answer(shard.end_txn("tx", pid, 5, True, "e", 8, client_version=TV2))[0] == ec.PRODUCER_FENCED
    assert answer(shard.end_txn("tx", pid, 4, True, "e", 8, client_version=TV2))[0] == ec.INVALID_TXN_STATE
    aborted = log.write(shard.end_txn("tx", pid, 4, False, "e", 9, client_version=TV2))
    assert answer(aborted) == (0, pid, 5) and aborted.markers[0].partitions == frozenset()
    assert shard.txns["tx"].state == tc.PREPARE_ABORT


def test_an_exhausted_epoch_moves_to_a_new_producer_id_when_the_markers_are_written():
    """Kafka's epoch overflow with TV2: the Prepare* record (and the markers) carry MAX_EPOCH and name the next
    producer id, the answer already names it at epoch 0, Complete* switches to it; the retry naming the replaced id
    and its exhausted epoch is answered with the new producer."""
    log = Log()
    shard, pid = started(log, epoch=tc.EPOCH_EXHAUSTED)
    end = log.write(shard.end_txn("tx", pid, tc.EPOCH_EXHAUSTED, True, "e", 5, client_version=TV2))
    t = shard.txns["tx"]
    new = t.next_producer_id
    assert new not in (-1, pid) and answer(end) == (0, new, 0)
    [marker] = end.markers
    assert (marker.producer_id, marker.producer_epoch) == (pid, tc.MAX_EPOCH)
    v = log.values()[-1].value
    assert (v.producer_id, v.producer_epoch, v.next_producer_id) == (pid, tc.MAX_EPOCH, new)
    # a load while the markers are on their way resends them for the old producer
    [again] = log.load().loaded()
    assert (again.producer_id, again.producer_epoch, again.transaction_version) == (pid, tc.MAX_EPOCH, TV2)
    log.write(shard.markers_written("tx", pid, tc.MAX_EPOCH, 6))
    assert (t.state, t.producer_id, t.producer_epoch, t.last_producer_id, t.next_producer_id) == (
        tc.COMPLETE_COMMIT, new, 0, pid, -1)
    v = log.values()[-1].value
    assert (v.producer_id, v.producer_epoch, v.previous_producer_id, v.next_producer_id) == (new, 0, pid, -1)
    retry = shard.end_txn("tx", pid, tc.EPOCH_EXHAUSTED, True, "e", 7, client_version=TV2)
    assert answer(retry) == (0, new, 0)
    assert answer(log.write(shard.add_partitions("tx", new, 0, [("t", 0)], "a", 8, client_version=TV2))) == 0
    assert log.load().txns["tx"].snapshot()[:2] == (new, 0)


def test_an_abort_from_empty_is_allowed_with_tv2_only():
    """A TV2 client cannot know whether its Produce added a partition: its abort of nothing bumps the epoch and
    completes without markers. A commit of nothing, and a TV0 abort of nothing, are INVALID_TXN_STATE."""
    log = Log()
    shard = tc.TxnShard(0, log.config)
    pid = log.write(shard.init_producer_id("tx", 60_000, None, "i", 0)).replies[0].body.producer_id
    assert answer(shard.end_txn("tx", pid, 0, True, "e", 1, client_version=TV2))[0] == ec.INVALID_TXN_STATE
    assert answer(shard.end_txn("tx", pid, 0, False, "e", 1))[0] == ec.INVALID_TXN_STATE
    end = log.write(shard.end_txn("tx", pid, 0, False, "e", 2, client_version=TV2))
    assert answer(end) == (0, pid, 1)
    [marker] = end.markers
    assert marker.partitions == frozenset()
    t = shard.txns["tx"]
    assert (t.state, t.start_ms) == (tc.PREPARE_ABORT, 2)
    log.write(shard.markers_written("tx", pid, 1, 3))
    assert t.state == tc.COMPLETE_ABORT


def test_a_tv0_client_keeps_its_epoch():
    """EndTxn v4 and below (``client_version`` 0): no bump, the answer carries the unchanged producer."""
    log = Log()
    shard = tc.TxnShard(0, log.config)
    pid = log.write(shard.init_producer_id("tx", 60_000, None, "i", 0)).replies[0].body.producer_id
    log.write(shard.add_partitions("tx", pid, 0, [("t", 0)], "a", 1))
    end = log.write(shard.end_txn("tx", pid, 0, True, "e", 2))
    assert answer(end) == (0, pid, 0) and end.markers[0][2:] == (0, True, frozenset({("t", 0)}), 0)
    log.write(shard.markers_written("tx", pid, 0, 3))
    assert answer(shard.end_txn("tx", pid, 0, True, "e", 4)) == (0, pid, 0)  # TV0's retry: the same epoch
    assert shard.txns["tx"].client_version == 0 and log.values()[-1].value.client_transaction_version == 0


def test_a_timed_out_tv2_transaction_is_fenced_by_one_bump():
    """The coordinator's abort of a timed-out transaction fences (epoch + 1) and does not bump again for the
    abort, as Kafka's PrepareEpochFence path. The producer's commit then meets the abort it cannot retry
    (INVALID_TXN_STATE: its epoch is the one before that bump, as Kafka's ``endTxnEpochBumped`` reads it)."""
    log = Log()
    shard, pid = started(log)
    aborted = log.write(shard.tick(60_000 + 10))
    [marker] = aborted.markers
    assert (marker.producer_epoch, marker.commit, marker.transaction_version) == (1, False, TV2)
    assert shard.txns["tx"].producer_epoch == 1
    assert answer(shard.end_txn("tx", pid, 0, True, "e", 60_020, client_version=TV2))[0] == ec.INVALID_TXN_STATE
    log.write(shard.markers_written("tx", pid, 1, 60_030))
    assert shard.txns["tx"].producer_epoch == 1
    assert answer(shard.end_txn("tx", pid, 0, True, "e", 60_040, client_version=TV2))[0] == ec.INVALID_TXN_STATE


def test_transaction_version_0_writes_the_v0_value():
    """Below TV1 the value stays v0 (no flexible fields), as Kafka's ``transactionLogValueVersion``."""
    log = Log(version=0)
    shard = tc.TxnShard(0, log.config)
    log.write(shard.init_producer_id("tx", 60_000, None, "i", 0))
    assert log.values()[-1].value_version == 0


@pytest.mark.parametrize("version", [0, 1])
def test_an_end_txn_v5_below_transaction_version_2_is_unsupported(version):
    """Kafka 4.4 at transaction.version 0 answers EndTxn v5 UNSUPPORTED_VERSION (producer id and epoch -1) where it
    would write the prepare; the checks before stay (the conformance run's EndTxn-v5 scenarios at metadata.version
    3.9); v4 ends as ever."""
    log = Log(version)
    shard = tc.TxnShard(0, log.config)
    init = log.write(shard.init_producer_id("tx", 60_000, None, "i", 0)).replies[0].body
    assert answer(log.write(shard.add_partitions("tx", init.producer_id, 0, [("t", 0)], "a", 1))) == 0
    refused = log.write(shard.end_txn("tx", init.producer_id, 0, True, "e", 2, client_version=TV2))
    assert answer(refused) == (ec.UNSUPPORTED_VERSION, -1, -1) and not refused.records
    assert answer(log.write(shard.end_txn("nobody", 1, 0, False, "e", 2, client_version=TV2)))[0] == \
        ec.INVALID_PRODUCER_ID_MAPPING
    empty = tc.TxnShard(0, log.config)
    other = empty.init_producer_id("e", 60_000, None, "i", 0).replies[0].body
    assert answer(empty.end_txn("e", other.producer_id, 0, True, "e", 2, client_version=TV2))[0] == ec.INVALID_TXN_STATE
    assert answer(empty.end_txn("e", other.producer_id, 0, False, "e", 2, client_version=TV2))[0] == \
        ec.UNSUPPORTED_VERSION  # an empty abort would write its prepare
    assert answer(log.write(shard.end_txn("tx", init.producer_id, 0, True, "e", 3)))[0] == ec.NONE


def test_a_txn_offset_commit_v5_adds_only_at_transaction_version_2():
    """Below transaction.version 2 a TxnOffsetCommit v5 is verified as a v4 one (Kafka 4.4 commits it after an
    AddOffsetsToTxn); a Produce v12 adds by its version alone."""
    from kraftwire.replica.verification import adds_partitions

    assert [adds_partitions("TxnOffsetCommit", v, tv) for v, tv in ((4, 2), (5, 0), (5, 1), (5, 2))] == \
        [False, False, False, True]
    assert [adds_partitions("Produce", v, 0) for v in (11, 12, 13)] == [False, True, True]
