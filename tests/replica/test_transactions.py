"""A partition's transaction state (``kraftwire.replica.transactions``): open transactions, the last stable offset,
aborted transactions and Kafka's ``.txnindex`` layout. Tests named ``test_<kafka name>`` mirror Kafka's
``ProducerStateManagerTest`` / ``UnifiedLogTest`` cases of the same name."""

from __future__ import annotations

import pytest

from kraftwire.records.api import CONTROL_ABORT, CONTROL_COMMIT
from kraftwire.replica.transactions import AbortedTxn, PartitionTxns, decode_txn_index, encode_txn_index


def test_open_transactions_hold_the_last_stable_offset_and_aborts_are_recorded():
    t = PartitionTxns()
    t.apply(-1, 0, 4, False, False)  # plain data: nothing to track
    t.apply(7, 5, 9, True, False)  # producer 7 opens at 5
    t.apply(8, 10, 12, True, False)  # producer 8 opens at 10
    t.apply(7, 13, 14, True, False)  # more of 7: still open from 5
    assert t.last_stable_offset(100) == 5 and t.last_stable_offset(3) == 3
    assert t.apply(7, 15, 15, True, True, CONTROL_COMMIT) is None
    assert t.last_stable_offset(100) == 10
    aborted = t.apply(8, 16, 16, True, True, CONTROL_ABORT)
    assert aborted == AbortedTxn(8, 10, 16, 17) and t.last_stable_offset(100) == 100
    assert t.aborted_between(0, 10) == [] and t.aborted_between(12, 13) == [aborted]
    assert t.aborted_between(17, 20) == []
    t.apply(9, 17, 17, True, False)
    with pytest.raises(ValueError):
        t.apply(9, 18, 18, True, True, marker=5)  # a transactional control batch must be a marker


def test_truncation_and_log_start():
    t = PartitionTxns()
    t.apply(1, 0, 0, True, False)
    t.apply(1, 1, 1, True, True, CONTROL_ABORT)
    t.apply(2, 2, 2, True, False)
    t.truncate_to(2)
    assert t.ongoing == {} and t.aborted == [AbortedTxn(1, 0, 1, 2)]
    t.truncate_to(1)
    assert t.aborted == []
    t.apply(3, 5, 5, True, False)
    t.apply(3, 6, 6, True, True, CONTROL_ABORT)
    t.delete_before(7)
    assert t.aborted == []


def _open(t: PartitionTxns, pid: int, first: int, last: int | None = None) -> None:
    t.apply(pid, first, first if last is None else last, True, False)


def _end(t: PartitionTxns, pid: int, offset: int, commit: bool):
    return t.apply(pid, offset, offset, True, True, CONTROL_COMMIT if commit else CONTROL_ABORT)


def test_first_unstable_offset():
    # a completed transaction stays unstable until the high watermark passes its marker
    t = PartitionTxns()
    assert t.first_undecided_offset() is None and t.first_unstable_offset() is None
    _open(t, 1, 99)
    assert t.first_undecided_offset() == 99 and t.first_unstable_offset() == 99
    _open(t, 2, 105)
    assert t.first_undecided_offset() == 99 and t.first_unstable_offset() == 99
    _end(t, 1, 109, commit=True)
    assert t.first_undecided_offset() == 105 and t.first_unstable_offset() == 99
    t.on_high_watermark(100)
    assert t.first_unstable_offset() == 99
    t.on_high_watermark(110)
    assert t.first_unstable_offset() == 105
    _end(t, 2, 112, commit=False)
    assert t.first_undecided_offset() is None and t.first_unstable_offset() == 105
    t.on_high_watermark(113)
    assert t.first_unstable_offset() is None


def test_last_stable_offset_completed_txn():
    # the .txnindex entry's last stable offset is the next open transaction of another producer, else the marker's
    # offset + 1; the partition's first unstable offset moves as the high watermark passes each marker
    t = PartitionTxns()
    start1 = 992342
    start2, start3 = start1 + 25, start1 + 57
    for pid, start in ((1, start1), (2, start2), (3, start3)):
        _open(t, pid, start)
    last1 = start3 + 15
    assert _end(t, 1, last1, commit=False) == AbortedTxn(1, start1, last1, start2)
    t.on_high_watermark(last1 + 1)
    assert t.first_unstable_offset() == start2
    last3 = last1 + 20
    assert _end(t, 3, last3, commit=False) == AbortedTxn(3, start3, last3, start2)
    t.on_high_watermark(last3 + 1)
    assert t.first_unstable_offset() == start2
    last2 = last3 + 78
    assert _end(t, 2, last2, commit=False) == AbortedTxn(2, start2, last2, last2 + 1)
    t.on_high_watermark(last2 + 1)
    assert t.first_unstable_offset() is None


def test_first_unstable_offset_with_transactional_data():
    # UnifiedLogTest: the commit marker does not free the last stable offset until the high watermark passes it
    t = PartitionTxns()
    _open(t, 137, 0, 2)
    assert t.last_stable_offset(3) == 0
    _open(t, 137, 3)
    assert t.last_stable_offset(4) == 0
    _end(t, 137, 4, commit=True)  # appended as leader: the high watermark is still 4
    assert t.last_stable_offset(4) == 0
    assert t.last_stable_offset(5) == 5


def test_last_stable_offset_with_mixed_producer_data():
    t = PartitionTxns()
    _open(t, 137, 0, 2)
    t.apply(-1, 3, 5, False, False)  # plain data in between
    _open(t, 983, 6, 8)
    assert t.last_stable_offset(9) == 0
    _end(t, 137, 9, commit=False)
    assert t.last_stable_offset(9) == 0
    assert t.last_stable_offset(10) == 6
    _end(t, 983, 10, commit=True)
    assert t.last_stable_offset(10) == 6
    assert t.last_stable_offset(11) == 11 and t.first_unstable_offset() is None


def test_fetch_up_to_last_stable_offset():
    t = PartitionTxns()
    _open(t, 1, 0, 4)
    t.apply(-1, 5, 7, False, False)
    _open(t, 2, 8, 9)
    t.apply(1, 10, 13, True, False)
    t.apply(-1, 14, 15, False, False)
    t.apply(1, 16, 25, True, False)
    assert t.last_stable_offset(0) == 0 and t.last_stable_offset(26) == 0
    _end(t, 1, 26, commit=True)
    assert t.last_stable_offset(26) == 0
    assert t.last_stable_offset(27) == 8
    _end(t, 2, 27, commit=False)
    assert t.last_stable_offset(27) == 8
    assert t.last_stable_offset(28) == 28


def test_last_stable_offset_never_passes_the_high_watermark():
    t = PartitionTxns()
    assert t.last_stable_offset(0) == 0 and t.last_stable_offset(7) == 7
    _open(t, 1, 10)
    assert t.last_stable_offset(7) == 7 and t.last_stable_offset(11) == 10
    _end(t, 1, 11, commit=True)
    assert t.last_stable_offset(11) == 10 and t.last_stable_offset(12) == 12


def test_last_stable_offset_does_not_exceed_log_start_offset_mid_segment():
    # (Kafka's name: the first unstable offset is bounded below by the log start)
    t = PartitionTxns()
    _open(t, 1, 0, 4)
    t.apply(-1, 5, 7, False, False)
    t.apply(1, 8, 12, True, False)
    assert t.first_unstable_offset() == 0 and t.last_stable_offset(13) == 0
    assert t.last_stable_offset(13, log_start=5) == 5
    t.delete_before(8)
    assert t.last_stable_offset(13, log_start=8) == 8


def test_truncation_drops_unreplicated_transactions_whose_marker_it_cuts():
    # the caller folds the kept tail again (Kafka's truncateAndReload clears them and reloads)
    t = PartitionTxns()
    _open(t, 1, 0)
    _end(t, 1, 1, commit=True)
    _open(t, 2, 2)
    _end(t, 2, 3, commit=True)
    assert t.unreplicated == {0: (1, 1), 2: (2, 3)}
    t.truncate_to(3)
    assert t.unreplicated == {0: (1, 1)} and t.first_unstable_offset() == 0
    t.delete_before(2)
    assert t.unreplicated == {} and t.first_unstable_offset() is None


def test_txn_index_layout():
    entries = [AbortedTxn(8, 10, 16, 17), AbortedTxn(2**40, 2**33, 2**33 + 5, 2**33)]
    data = encode_txn_index(entries)
    assert len(data) == 68 and data[:2] == b"\x00\x00"
    assert data[:34].hex() == "0000" + "%016x" % 8 + "%016x" % 10 + "%016x" % 16 + "%016x" % 17
    assert decode_txn_index(data) == entries
    assert decode_txn_index(data + b"\x00\x00\x01") == entries  # a torn last entry is dropped
    with pytest.raises(ValueError):
        decode_txn_index(b"\x00\x01" + data[2:34])


def _marker_batch(pid: int, offset: int, commit: bool, coordinator_epoch: int = 3):
    from kraftwire.records import RecordBatchBuilder, read_batches
    from kraftwire.replica.transactions import marker_key, marker_value

    b = RecordBatchBuilder(base_offset=offset, is_control=True, is_transactional=True, producer_id=pid,
                           producer_epoch=0)
    b.append(marker_key(commit), marker_value(coordinator_epoch), timestamp=0)
    return next(iter(read_batches(b.build())))


def _data_batch(pid: int, offset: int, n: int, transactional: bool = True):
    from kraftwire.records import RecordBatchBuilder, read_batches

    b = RecordBatchBuilder(base_offset=offset, is_transactional=transactional, producer_id=pid, producer_epoch=0,
                           base_sequence=0)
    for _ in range(n):
        b.append(b"k", b"v", timestamp=0)
    return next(iter(read_batches(b.build())))


def test_markers_are_kafkas_end_transaction_records_and_fold_from_batches():
    from kraftwire.replica.transactions import marker_key, marker_value, read_marker

    assert marker_key(True) == b"\x00\x00\x00\x01" and marker_key(False) == b"\x00\x00\x00\x00"
    assert marker_value(7) == b"\x00\x00\x00\x00\x00\x07"  # int16 version 0, int32 coordinator epoch
    commit = _marker_batch(4, 9, True, 7)
    assert commit.is_control and commit.is_transactional and read_marker(commit) == (CONTROL_COMMIT, 7)
    t = PartitionTxns()
    assert t.apply_batch(_data_batch(4, 0, 3)) is None and t.ongoing == {4: 0}
    t.apply_batch(_data_batch(5, 3, 2))
    t.apply_batch(_data_batch(6, 5, 1, transactional=False))  # idempotent, not transactional: nothing
    assert t.ongoing == {4: 0, 5: 3} and t.last_stable_offset(100) == 0
    assert t.apply_batch(commit) is None and t.last_stable_offset(100) == 3
    aborted = t.apply_batch(_marker_batch(5, 10, False))
    assert aborted == AbortedTxn(5, 3, 10, 11) and t.ongoing == {} and t.last_stable_offset(100) == 100


def test_aborted_transactions_go_to_the_segment_holding_their_marker():
    from kraftwire.replica.transactions import by_segment

    a, b, c = AbortedTxn(1, 0, 4, 5), AbortedTxn(2, 3, 10, 11), AbortedTxn(3, 8, 12, 13)
    assert by_segment([c, a, b], [0, 10, 20]) == {0: [a], 10: [b, c]}
    assert by_segment([a], [5]) == {}  # below the first segment: nowhere
