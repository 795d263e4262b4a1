"""BatchAccumulator: atomic appends, linger with a wake-up, the 8 MiB cap."""

from __future__ import annotations

import pytest

from kraftwire.errors import RecordTooLargeError
from kraftwire.raft.accumulator import BatchAccumulator
from kraftwire.records import read_batches


def acc(**kw) -> BatchAccumulator:
    args = dict(epoch=4, next_offset=100, linger_ms=25, max_batch_size=1000)
    args.update(kw)
    return BatchAccumulator(**args)


def test_append_returns_last_offset_and_lingers():
    a = acc()
    assert a.append([b"a", b"b"], now_ms=0) == 101
    assert a.append([b"c"], now_ms=10) == 102
    assert a.next_deadline_ms() == 25  # wake-up at linger expiry even without further appends
    assert a.drain(24) == []
    [raw] = a.drain(25)
    [rb] = list(read_batches(raw))
    assert (rb.base_offset, rb.last_offset, rb.partition_leader_epoch) == (100, 102, 4)
    assert [r.value for r in rb] == [b"a", b"b", b"c"]
    assert a.next_deadline_ms() is None


def test_an_append_never_splits_across_batches():
    a = acc(max_batch_size=200, linger_ms=0)
    a.append([b"x" * 40, b"y" * 40], 0)
    a.append([b"z" * 40, b"w" * 40], 0)  # does not fit next to the first group: new batch
    batches = [list(read_batches(raw))[0] for raw in a.drain(0)]
    assert [(b.base_offset, b.last_offset) for b in batches] == [(100, 101), (102, 103)]


def test_oversized_append_fails_cleanly():
    a = acc(max_batch_size=200)
    a.append([b"ok"], 0)
    with pytest.raises(RecordTooLargeError):
        a.append([b"x" * 300], 0)
    assert a.next_offset == 101 and a.pending_records() == 1


def test_skip_after_flush_open_keeps_offsets_in_order():
    a = acc()
    a.append([b"a"], 0)
    a.flush_open()
    [raw] = a.drain(0)
    a.skip(5)
    assert a.append([b"b"], 0) == 106
