"""A partition leader's transaction verification state (KIP-890 part 1; Kafka's ``VerificationStateEntry`` and
``VerificationGuard``), pure: a guard per verification, appends only with the matching guard, cleared by the
producer's next transactional batch or marker, the lowest sequence kept, expiry."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.replica.producers import ProducerTable
from kraftwire.replica.transactions import PartitionTxns
from kraftwire.replica.verification import VERIFICATION_EXPIRY_MS, ProducerVerifications, has_ongoing_transaction


def _check(v, pid, seq, guard, *, ongoing=False, transactional=True, enabled=True):
    return v.check_append(pid, seq, transactional, ongoing, guard, enabled=enabled)[0]


def test_an_open_transaction_needs_no_verification():
    v = ProducerVerifications()
    assert v.start(7, 0, 0, True, 0) is None and len(v) == 0
    assert _check(v, 7, 5, None, ongoing=True) == ec.NONE  # later batches of the open transaction


def test_only_the_guard_of_the_current_verification_appends():
    v = ProducerVerifications()
    g = v.start(7, 0, 0, False, 0)
    assert g is not None and v.guard(7) is g
    assert v.start(7, 0, 0, False, 5) is g  # the same verification until it ends
    assert _check(v, 7, 0, None) == ec.INVALID_TXN_STATE  # no guard: a batch nobody verified
    assert _check(v, 7, 0, ProducerVerifications().start(7, 0, 0, False, 0)) == ec.INVALID_TXN_STATE
    assert _check(v, 7, 0, g) == ec.NONE
    assert _check(v, 8, 0, g) == ec.INVALID_TXN_STATE  # another producer's guard


def test_a_marker_between_the_answer_and_the_append_voids_the_guard():
    """The race KIP-890 closes: verified, then the transaction is aborted (its marker lands, clearing the entry),
    then the late append arrives with the old guard — refused; a new verification gets a new guard (no ABA)."""
    v = ProducerVerifications()
    g = v.start(7, 0, 0, False, 0)
    v.clear(7)  # the ABORT marker of producer 7 was appended
    assert v.guard(7) is None
    assert _check(v, 7, 0, g) == ec.INVALID_TXN_STATE
    g2 = v.start(7, 0, 0, False, 1)
    assert g2 is not g
    assert _check(v, 7, 0, g) == ec.INVALID_TXN_STATE and _check(v, 7, 0, g2) == ec.NONE


def test_a_tv2_marker_at_the_verified_epoch_keeps_the_guard():
    """Kafka's ``isV2NextTransactionStarted``: a transaction.version 2 entry verifies the next transaction at the
    bumped epoch, at which the last transaction's marker is written — that marker leaves the guard; a marker at
    another epoch, any marker for a classic entry, and a data batch clear it."""
    v = ProducerVerifications()
    g = v.start(7, 0, 3, False, 0, supports_epoch_bump=True)
    v.clear(7, marker_epoch=3)
    assert v.guard(7) is g and _check(v, 7, 0, g) == ec.NONE
    v.clear(7, marker_epoch=4)  # a newer epoch: the coordinator fenced the producer, this verification is void
    assert v.guard(7) is None
    g = v.start(7, 0, 3, False, 0, supports_epoch_bump=True)
    v.clear(7)  # the transactional batch it verified
    assert v.guard(7) is None
    classic = v.start(8, 0, 3, False, 0)
    v.clear(8, marker_epoch=3)
    assert v.guard(8) is None and _check(v, 8, 0, classic) == ec.INVALID_TXN_STATE


def test_an_open_transaction_is_open_only_at_its_epoch():
    """Kafka's ``UnifiedLog.hasOngoingTransaction``: the producer's open transaction, at the epoch it was opened."""
    table, txns = ProducerTable(), PartitionTxns()
    table.apply(7, 2, 0, 1, 10, 10)
    assert not has_ongoing_transaction(table, txns, 7, 2)  # no open transaction
    txns.apply(7, 10, 10, True, False)
    assert has_ongoing_transaction(table, txns, 7, 2)
    assert not has_ongoing_transaction(table, txns, 7, 3)  # the next transaction (transaction.version 2)
    assert not has_ongoing_transaction(table, txns, 8, 2)


def test_verification_off_or_a_plain_batch_needs_no_guard():
    v = ProducerVerifications()
    assert _check(v, 7, 0, None, enabled=False) == ec.NONE
    assert _check(v, 7, 0, None, transactional=False) == ec.NONE
    assert _check(v, -1, 0, None) == ec.NONE  # no producer id


def test_the_lowest_sequence_seen_goes_first():
    v = ProducerVerifications()
    g = v.start(7, 10, 0, False, 0)
    v.start(7, 5, 0, False, 0)  # a lower sequence of the same epoch: kept
    v.start(7, 20, 0, False, 0)  # a higher one: not
    entry = v.entries[7]
    assert (entry.lowest_sequence, entry.epoch) == (5, 0)
    assert _check(v, 7, 10, g) == ec.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert _check(v, 7, 5, g) == ec.NONE
    v.start(7, 0, 1, False, 0)  # a newer epoch restarts the sequence
    assert (entry.lowest_sequence, entry.epoch) == (0, 1) and v.guard(7) is g
    v.start(7, 3, 0, False, 0)  # an older epoch changes nothing
    assert (entry.lowest_sequence, entry.epoch) == (0, 1)


def test_entries_never_used_expire():
    v = ProducerVerifications()
    v.start(7, 0, 0, False, 0)
    v.start(8, 0, 0, False, 1000)
    assert v.expire(VERIFICATION_EXPIRY_MS - 1) == [] and len(v) == 2
    assert v.expire(VERIFICATION_EXPIRY_MS) == [7] and list(v.entries) == [8]
    assert v.expire(1000 + 50, max_age_ms=50) == [8] and len(v) == 0
