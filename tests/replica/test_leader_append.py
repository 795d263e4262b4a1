"""The leader's append plan (``kraftwire.replica.leader_append``), pure: the rules Kafka's ``UnifiedLog.appendAsLeader``
(with ``LogValidator`` and ``ProducerAppendInfo``) applies before and after a producer's append or a transaction
marker, without a log. The broker's answers over the wire are covered by tests/server (test_partitions,
test_txn_partitions, test_produce_timestamps); these pin the decisions themselves."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.log.memory import MemoryPartitionLog
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.records.api import CONTROL_ABORT
from kraftwire.replica.leader_append import (AppendPlan, AppendResult, plan_append, plan_marker, record_append,
                                             record_marker)
from kraftwire.replica.producers import ProducerTable
from kraftwire.replica.transactions import PartitionTxns, fold_batch, read_marker
from kraftwire.replica.verification import ProducerVerifications, has_ongoing_transaction

CONFIG = {"message.timestamp.type": "CreateTime", "message.timestamp.before.max.ms": "9223372036854775807",
          "message.timestamp.after.max.ms": "9223372036854775807", "compression.type": "producer",
          "cleanup.policy": "delete"}
NOW = 1_700_000_000_000


def _batch(*, pid: int = -1, seq: int = -1, txn: bool = False, control: bool = False, n: int = 2,
           key: bytes | None = None, epoch: int = 0) -> bytes:
    b = RecordBatchBuilder(base_offset=0, producer_id=pid, producer_epoch=epoch if pid >= 0 else -1, base_sequence=seq,
                           is_transactional=txn, is_control=control)
    for i in range(n):
        b.append(key, f"v{i}".encode(), timestamp=NOW)
    return b.build()


class Partition:
    """The pure state a leader keeps beside its log, and an in-memory log for the offsets."""

    def __init__(self, config=CONFIG) -> None:
        self.table, self.txns, self.verifications = ProducerTable(), PartitionTxns(), ProducerVerifications()
        self.config, self.log = dict(config), MemoryPartitionLog()

    def plan(self, raw, **kw):
        return plan_append(raw, topic="t", index=0, config=self.config, max_batch_size=1_000_000, log_start=0,
                           producers=lambda: (self.table, self.txns), verifications=self.verifications,
                           wall_ms=NOW, **kw)

    def append(self, raw, **kw):
        plan = self.plan(raw, **kw)
        if isinstance(plan, AppendResult):
            return plan
        info = self.log.append_as_leader(plan.raw, 0, plan.batches)
        record_append(plan, info.first_offset, info.last_offset, self.table, self.txns, self.verifications)
        return AppendResult(base_offset=info.first_offset, end=info.last_offset + 1)

    def marker(self, pid: int, epoch: int, coordinator_epoch: int, commit: bool, max_batch_size: int = 1_000_000,
               transaction_version: int = 0):
        plan = plan_marker(self.table, pid, epoch, coordinator_epoch, commit, base_offset=self.log.end_offset(),
                           leader_epoch=0, wall_ms=NOW, max_batch_size=max_batch_size,
                           transaction_version=transaction_version, txn_open=pid in self.txns.ongoing)
        if isinstance(plan, AppendResult):
            return plan
        info = self.log.append_as_leader(plan.raw, 0)
        return record_marker(plan, info.first_offset, info.last_offset, self.table, self.txns, self.verifications,
                             self.log.high_watermark())


def test_corrupt_or_empty_records_are_corrupt_message():
    p = Partition()
    assert p.plan(b"").error == ec.CORRUPT_MESSAGE
    raw = bytearray(_batch())
    raw[-1] ^= 0xFF  # the CRC-32C no longer matches
    assert p.plan(bytes(raw)).error == ec.CORRUPT_MESSAGE


def test_a_partial_batch_after_whole_ones_is_dropped():
    # Kafka's LogValidator keeps the whole batches of a request whose tail is cut
    raw = _batch() + _batch()[:20]
    plan = Partition().plan(raw)
    assert isinstance(plan, AppendPlan) and plan.raw == _batch()


def test_a_producer_may_not_write_control_batches():
    result = Partition().plan(_batch(control=True, n=1))
    assert (result.error, result.message) == (ec.INVALID_RECORD, "a producer may not write control batches")


def test_a_compacted_topic_refuses_keyless_records_with_per_record_errors():
    p = Partition(dict(CONFIG, **{"cleanup.policy": "compact"}))
    result = p.plan(_batch())
    assert result.error == ec.INVALID_RECORD and [i for i, _ in result.record_errors] == [0, 1]
    assert isinstance(p.plan(_batch(key=b"k")), AppendPlan)


def test_an_idempotent_producer_sends_one_batch_per_partition():
    result = Partition().plan(_batch(pid=5, seq=0) + _batch(pid=5, seq=2))
    assert result.error == ec.INVALID_RECORD


def test_a_retried_batch_gets_its_first_offsets_and_is_not_appended_again():
    # Kafka's ProducerStateManagerTest.testDeduplication: the same sequences answer with the cached batch's offsets
    p = Partition()
    first = p.append(_batch(pid=5, seq=0))
    again = p.append(_batch(pid=5, seq=0))
    assert (again.error, again.base_offset, again.end) == (ec.NONE, first.base_offset, first.end) and p.log.end_offset() == 2
    assert p.append(_batch(pid=5, seq=5)).error == ec.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_a_plain_write_while_the_producers_transaction_is_open_is_invalid_txn_state():
    # Kafka's ProducerStateManagerTest.testNonTransactionalAppendWithOngoingTransaction
    p = Partition()
    assert p.append(_batch(pid=5, seq=0, txn=True)).error == ec.NONE
    assert 5 in p.txns.ongoing
    result = p.append(_batch(pid=5, seq=2))
    assert result.error == ec.INVALID_TXN_STATE and "producer 5" in result.message


def test_verification_comes_after_a_duplicate_and_before_the_sequence():
    # KIP-890: a first transactional batch without the coordinator's guard is refused, a retried one is answered
    p = Partition()
    refused = p.plan(_batch(pid=5, seq=7, txn=True), verify=True)
    assert (refused.error, refused.message) == (ec.INVALID_TXN_STATE, "Record was not part of an ongoing transaction")
    guard = p.verifications.start(5, 0, 0, False, 0)
    assert p.append(_batch(pid=5, seq=0, txn=True), verify=True, guard=guard).error == ec.NONE
    assert not p.verifications.entries  # the transaction is open here now: verified
    assert p.append(_batch(pid=5, seq=0, txn=True), verify=True).base_offset == 0  # the duplicate first


def test_a_tv2_batch_at_the_bumped_epoch_waits_for_the_last_transactions_marker():
    """transaction.version 2: EndTxn bumps the epoch and is answered before the markers are written, so the next
    transaction's first batch (at the bumped epoch) can reach a partition whose last transaction is still open.
    It is not part of that transaction (Kafka's ``UnifiedLog.hasOngoingTransaction`` compares the epoch): without a
    guard it is refused; verified, it waits for the marker, which — written at the bumped epoch — keeps the guard
    (Kafka's ``isV2NextTransactionStarted``); the batch then opens a transaction of its own, so the abort of that
    one covers it. Taking it into the open transaction let that transaction's COMMIT marker commit it: a
    read_committed consumer saw a record of an aborted transaction."""
    p = Partition()
    guard = p.verifications.start(5, 0, 0, False, 0, supports_epoch_bump=True)
    assert p.append(_batch(pid=5, seq=0, txn=True), verify=True, guard=guard).error == ec.NONE  # offsets 0-1
    next_first = _batch(pid=5, seq=0, txn=True, epoch=1)
    assert has_ongoing_transaction(p.table, p.txns, 5, 0) and not has_ongoing_transaction(p.table, p.txns, 5, 1)
    refused = p.plan(next_first, verify=True)
    assert (refused.error, refused.message) == (ec.INVALID_TXN_STATE, "Record was not part of an ongoing transaction")
    guard = p.verifications.start(5, 0, 1, has_ongoing_transaction(p.table, p.txns, 5, 1), 0,
                                  supports_epoch_bump=True)
    assert guard is not None  # the coordinator is asked (and holds the add until the markers are written)
    assert p.marker(5, 1, 0, True) is None  # the last transaction's COMMIT, at the bumped epoch (offset 2)
    assert p.verifications.guard(5) is guard
    appended = p.append(next_first, verify=True, guard=guard)
    assert (appended.error, appended.base_offset) == (ec.NONE, 3) and p.txns.ongoing == {5: 3}
    aborted = p.marker(5, 2, 0, False)
    assert (aborted.producer_id, aborted.first_offset, aborted.last_offset) == (5, 3, 5)


def test_log_append_time_stamps_the_leaders_clock():
    p = Partition(dict(CONFIG, **{"message.timestamp.type": "LogAppendTime"}))
    plan = p.plan(_batch())
    assert plan.appended_at == NOW and next(read_batches(plan.raw)).max_timestamp == NOW


def test_a_marker_closes_the_transaction_and_records_an_abort():
    p = Partition()
    p.append(_batch(pid=5, seq=0, txn=True))
    assert p.marker(5, -1, 0, False).error == ec.INVALID_PRODUCER_EPOCH
    entry = p.marker(5, 0, 2, False)
    assert (entry.producer_id, entry.first_offset, entry.last_offset) == (5, 0, 2) and not p.txns.ongoing
    batch = p.log.batches()[-1][3]
    marker = next(read_batches(batch))
    assert marker.is_control and marker.is_transactional and read_marker(marker) == (CONTROL_ABORT, 2)
    assert p.marker(5, 0, 1, True).error == ec.TRANSACTION_COORDINATOR_FENCED


def test_a_tv2_marker_at_the_epoch_of_the_open_transaction_is_refused():
    """KIP-1228 on the leader (KafkaApisTest's shouldAppendToLogOnWriteTxnMarkersWhenCorrectMagicVersion now passes
    the marker's transaction version to the append): a TV2 COMMIT at the epoch of the open transaction is
    INVALID_PRODUCER_EPOCH and appends nothing; at the bumped epoch it closes the transaction, and its repeat (the
    coordinator's retry, no transaction open) is appended again, as Kafka 4.4 writes a repeated marker; TV_UNKNOWN is
    UNKNOWN_SERVER_ERROR after the size check."""
    p = Partition()
    p.append(_batch(pid=5, seq=0, txn=True))
    assert p.marker(5, 0, 0, True, transaction_version=2).error == ec.INVALID_PRODUCER_EPOCH
    assert p.log.end_offset() == 2 and p.txns.ongoing == {5: 0}
    assert p.marker(5, 0, 0, True, max_batch_size=10, transaction_version=-1).error == ec.MESSAGE_TOO_LARGE
    assert p.marker(5, 0, 0, True, transaction_version=-1).error == ec.UNKNOWN_SERVER_ERROR
    assert p.marker(5, 1, 0, True, transaction_version=2) is None and not p.txns.ongoing
    assert p.marker(5, 1, 0, True, transaction_version=2) is None and p.log.end_offset() == 4
    assert p.table[5].epoch == 1


def test_a_marker_above_max_message_bytes_is_message_too_large():
    """Kafka's log checks a marker's batch against the topic's max.message.bytes as any other, before the
    producer's state (the conformance run's WriteTxnMarkers-v1-above-max-message-bytes): a stale marker too large is
    MESSAGE_TOO_LARGE, and nothing is appended or recorded."""
    p = Partition()
    p.append(_batch(pid=5, seq=0, txn=True))
    result = p.marker(5, -1, 0, True, max_batch_size=10)
    assert result.error == ec.MESSAGE_TOO_LARGE and "max.message.bytes 10" in result.message
    assert p.log.end_offset() == 2 and p.txns.ongoing == {5: 0}
    assert p.marker(5, 0, 0, True) is None  # within the limit it closes the transaction (a commit: no abort)
    assert not p.txns.ongoing


def test_folding_the_log_gives_what_the_leader_recorded():
    """What a follower or a restarted broker folds from the log (``fold_batch``) equals what the leader recorded as
    it appended: the last stable offset does not move when leadership does."""
    p = Partition()
    for raw in (_batch(pid=5, seq=0, txn=True), _batch(), _batch(pid=6, seq=0, txn=True)):
        assert p.append(raw).error == ec.NONE
    p.marker(5, 0, 0, True)
    table, txns = ProducerTable(), PartitionTxns()
    for _base, _last, _epoch, data in p.log.batches():
        for batch in read_batches(data):
            fold_batch(table, txns, batch)
    assert txns.ongoing == p.txns.ongoing == {6: 4}
    assert txns.last_stable_offset(7) == p.txns.last_stable_offset(7) == 4
    assert {pid: e.last_seq for pid, e in table.items()} == {pid: e.last_seq for pid, e in p.table.items()}


def test_batches_larger_than_a_segment_are_record_list_too_large():
    """Kafka's UnifiedLog.append (RecordBatchTooLargeException): the batches must fit in one segment, even where
    max.message.bytes allows them (the conformance run's Produce-v12-batch-above-segment); nothing is appended."""
    raw = _batch(n=3)
    p = Partition({**CONFIG, "segment.bytes": str(len(raw) - 1)})
    assert p.append(raw).error == ec.RECORD_LIST_TOO_LARGE and p.log.end_offset() == 0
    assert Partition({**CONFIG, "segment.bytes": str(len(raw))}).append(raw).error == ec.NONE
