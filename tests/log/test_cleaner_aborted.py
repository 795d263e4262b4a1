"""The cleaner removes the records of aborted transactions, as Kafka's does: they are never read again, and an
aborted write never hides the committed value of its key from compaction. Markers and the committed records stay."""

from __future__ import annotations

import uuid

from kraftwire.log import cleaner
from kraftwire.log.cleaner import AbortedRanges, CleanerConfig
from kraftwire.log.partition_log import LogDirCheckpoints, PartitionLog
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.replica.transactions import PartitionTxns, marker_key, marker_value

CFG = CleanerConfig(delete_retention_ms=10**12, min_compaction_lag_ms=0, min_cleanable_dirty_ratio=0.0,
                    dedupe_buffer_size=1 << 20)


def _open(root) -> PartitionLog:
    return PartitionLog(str(root / "t-0"), LogDirCheckpoints(str(root)), topic_id=uuid.UUID(int=9), segment_bytes=400,
                        high_watermark_checkpoint_interval_ms=0)


class Writer:
    def __init__(self, lg: PartitionLog) -> None:
        self.lg = lg
        self.txns = PartitionTxns()
        self.seq: dict[int, int] = {}

    def _append(self, data: bytes) -> None:
        self.lg.append_as_leader(data, 0)
        for batch in read_batches(data):
            self.txns.apply_batch(batch)

    def data(self, pid: int | None, records) -> None:
        if pid is None:
            b = RecordBatchBuilder(base_offset=self.lg.end_offset())
        else:
            seq = self.seq.get(pid, 0)
            b = RecordBatchBuilder(base_offset=self.lg.end_offset(), is_transactional=True, producer_id=pid,
                                   producer_epoch=0, base_sequence=seq)
            self.seq[pid] = seq + len(records)
        for key, value in records:
            b.append(key, value, timestamp=1000)
        self._append(b.build())

    def marker(self, pid: int, commit: bool) -> None:
        b = RecordBatchBuilder(base_offset=self.lg.end_offset(), is_control=True, is_transactional=True,
                               producer_id=pid, producer_epoch=0)
        b.append(marker_key(commit), marker_value(0), timestamp=1000)
        self._append(b.build())


def _contents(lg) -> list[tuple[int, bool, bytes | None, bytes | None]]:
    out, pos = [], lg.start_offset()
    while pos < lg.end_offset():
        info = lg.read(pos, 1 << 20)
        if not len(info.records):
            break
        for batch in read_batches(info.records):
            for rec in batch:
                if rec.offset >= pos:
                    out.append((rec.offset, batch.is_control, rec.key, rec.value))
            pos = batch.last_offset + 1
    return out


def test_aborted_records_go_and_never_hide_a_committed_value(tmp_path):
    lg = _open(tmp_path)
    w = Writer(lg)
    w.data(7, [(b"a", b"a-committed"), (b"b", b"b-committed")])
    w.marker(7, commit=True)
    w.data(8, [(b"a", b"a-aborted"), (b"c", b"c-aborted")])  # an aborted write of a later offset for key a
    w.data(None, [(b"d", b"d-plain")])
    w.data(8, [(b"b", b"b-aborted")])
    w.marker(8, commit=False)
    for i in range(12):  # enough plain records to roll the segments past the transactions
        w.data(None, [(b"x%d" % i, b"filler" * 8)])
    lg.update_high_watermark(lg.end_offset())
    assert len(lg._segments) > 2
    before = _contents(lg)
    assert (b"a", b"a-aborted") in [(k, v) for _o, _c, k, v in before]

    stats = cleaner.clean(lg, 10_000, CFG, force=True, aborted=list(w.txns.aborted))
    assert stats is not None and stats.segments > 0
    after = _contents(lg)
    values = {(k, v) for _o, control, k, v in after if not control}
    assert (b"a", b"a-committed") in values, "an aborted record shadowed the committed value of its key"
    assert (b"b", b"b-committed") in values
    assert (b"d", b"d-plain") in values
    assert not {v for _k, v in values if v and v.endswith(b"-aborted")}, f"aborted records survived: {after}"
    assert sum(1 for _o, control, _k, _v in after if control) == 2, "both markers stay"
    offsets = [o for o, *_ in after]
    assert offsets == sorted(set(offsets)) and set(offsets) <= {o for o, *_ in before}


def test_without_the_aborted_list_the_cleaner_keeps_them(tmp_path):
    """The control: the same log cleaned without its .txnindex entries keeps the aborted value of ``a`` (the newest
    record of the key), which is what the list changes."""
    lg = _open(tmp_path)
    w = Writer(lg)
    w.data(7, [(b"a", b"a-committed")])
    w.marker(7, commit=True)
    w.data(8, [(b"a", b"a-aborted")])
    w.marker(8, commit=False)
    for i in range(12):
        w.data(None, [(b"x%d" % i, b"filler" * 8)])
    lg.update_high_watermark(lg.end_offset())
    cleaner.clean(lg, 10_000, CFG, force=True)
    values = {(k, v) for _o, control, k, v in _contents(lg) if not control}
    assert (b"a", b"a-aborted") in values and (b"a", b"a-committed") not in values


def test_aborted_ranges_match_only_the_producers_data_batches_inside_a_range():
    class B:
        def __init__(self, pid, base, txn=True, control=False):
            self.producer_id, self.base_offset, self.is_transactional, self.is_control = pid, base, txn, control

    from kraftwire.replica.transactions import AbortedTxn

    r = AbortedRanges([AbortedTxn(5, 10, 20, 10), AbortedTxn(5, 40, 41, 40), AbortedTxn(6, 0, 3, 0)])
    assert r.holds(B(5, 10)) and r.holds(B(5, 15)) and r.holds(B(5, 40))
    assert not r.holds(B(5, 21)) and not r.holds(B(5, 9)) and not r.holds(B(5, 42))
    assert not r.holds(B(5, 15, txn=False)) and not r.holds(B(5, 20, control=True)) and not r.holds(B(7, 15))
    assert r.overlap(3, 10) and r.overlap(41, 50) and not r.overlap(4, 10) and not r.overlap(21, 40)
    assert not AbortedRanges([])
