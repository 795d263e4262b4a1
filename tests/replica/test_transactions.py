"""A partition's transaction state (``kraftwire.replica.transactions``): open transactions, the last stable offset,
aborted transactions and Kafka's ``.txnindex`` layout."""

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
    assert t.apply(7, 15, 15, True, True, CONTROL_COMMIT, high_watermark=16) is None
    assert t.last_stable_offset(100) == 10
    aborted = t.apply(8, 16, 16, True, True, CONTROL_ABORT, high_watermark=17)
    assert aborted == AbortedTxn(8, 10, 16, 17) and t.last_stable_offset(100) == 100
    assert t.aborted_between(0, 10) == [] and t.aborted_between(12, 13) == [aborted]
    assert t.aborted_between(17, 20) == []
    t.apply(9, 17, 17, True, False)
    with pytest.raises(ValueError):
        t.apply(9, 18, 18, True, True, marker=5)  # a transactional control batch must be a marker


def test_truncation_and_log_start():
    t = PartitionTxns()
    t.apply(1, 0, 0, True, False)
    t.apply(1, 1, 1, True, True, CONTROL_ABORT, high_watermark=2)
    t.apply(2, 2, 2, True, False)
    t.truncate_to(2)
    assert t.ongoing == {} and t.aborted == [AbortedTxn(1, 0, 1, 2)]
    t.truncate_to(1)
    assert t.aborted == []
    t.apply(3, 5, 5, True, False)
    t.apply(3, 6, 6, True, True, CONTROL_ABORT, high_watermark=7)
    t.delete_before(7)
    assert t.aborted == []


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
