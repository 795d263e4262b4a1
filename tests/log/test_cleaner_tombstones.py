"""Tombstones and ``delete.retention.ms`` as Kafka's cleaner handles them since KIP-534: the first pass that keeps a
tombstone stamps a delete horizon (``now + delete.retention.ms``, RecordBatch attribute bit 6, BaseTimestamp = the
horizon) into its rewritten batch; later passes remove the tombstone only once ``now >= horizon``. A consumer that
reads from the start within ``delete.retention.ms`` of that first pass therefore sees every deletion, however old
the tombstone's own timestamp."""

from __future__ import annotations

import uuid

from kraftwire.log import cleaner
from kraftwire.log.cleaner import CleanerConfig
from kraftwire.log.partition_log import LogDirCheckpoints, PartitionLog
from kraftwire.records import RecordBatchBuilder, read_batches

RETENTION = 86_400_000  # delete.retention.ms, Kafka's default
NOW = 1_700_000_000_000
CFG = CleanerConfig(delete_retention_ms=RETENTION, min_compaction_lag_ms=0, min_cleanable_dirty_ratio=0.0,
                    dedupe_buffer_size=1 << 20)


def _open(root) -> PartitionLog:
    return PartitionLog(str(root / "t-0"), LogDirCheckpoints(str(root)), topic_id=uuid.UUID(int=11), segment_bytes=300,
                        high_watermark_checkpoint_interval_ms=0)


def _append(lg, records, ts: int) -> int:
    b = RecordBatchBuilder()
    for key, value in records:
        b.append(key, value, timestamp=ts)
    info = lg.append_as_leader(b.build(), 1)
    lg.update_high_watermark(lg.end_offset())
    return info.first_offset


def _filler(lg, tag: str, n: int = 12, ts: int = NOW) -> None:
    """Unique keys, enough to roll the segments so that what came before is cleanable."""
    for i in range(n):
        _append(lg, [(f"{tag}-{i}".encode(), b"x" * 20)], ts)


def _batches(lg):
    """(batch, its records) for every batch from the log start, read as a consumer does (CRC checked)."""
    out, pos = [], lg.start_offset()
    while pos < lg.end_offset():
        info = lg.read(pos, 1 << 20)
        if not len(info.records):
            break
        for batch in read_batches(info.records, validate=True):
            out.append((batch, [(r.offset, r.timestamp, r.key, r.value) for r in batch]))
            pos = batch.last_offset + 1
    return out


def _records(lg):
    return [r for _b, recs in _batches(lg) for r in recs]


def _batch_of(lg, offset: int):
    return next(b for b, recs in _batches(lg) if any(r[0] == offset for r in recs))


def test_a_reader_from_the_start_sees_an_old_tombstone_until_its_horizon_has_passed(tmp_path):
    """The deletion a consumer must not miss: the tombstone's timestamp is already older than delete.retention.ms
    when the first clean sees it, yet the clean keeps it (and the value it deleted goes); it stays through passes
    before the horizon and goes with the first pass at the horizon."""
    lg = _open(tmp_path)
    try:
        _append(lg, [(b"k", b"old value")], NOW - 10 * RETENTION)
        dead = _append(lg, [(b"k", None)], NOW - 2 * RETENTION)  # older than delete.retention.ms already
        _filler(lg, "a")
        assert cleaner.clean(lg, NOW, CFG) is not None
        got = _records(lg)
        assert [r for r in got if r[2] == b"k"] == [(dead, NOW - 2 * RETENTION, b"k", None)]
        horizon_batch = _batch_of(lg, dead)
        assert horizon_batch.has_delete_horizon and horizon_batch.delete_horizon_ms == NOW + RETENTION
        assert horizon_batch.max_timestamp == NOW - 2 * RETENTION  # the record keeps its timestamp

        _filler(lg, "b")
        assert cleaner.clean(lg, NOW + RETENTION - 1, CFG) is not None  # a pass just before the horizon
        assert [r for r in _records(lg) if r[2] == b"k"] == [(dead, NOW - 2 * RETENTION, b"k", None)]
        assert _batch_of(lg, dead).delete_horizon_ms == NOW + RETENTION  # the horizon is not moved on

        _filler(lg, "c")
        assert cleaner.clean(lg, NOW + RETENTION, CFG) is not None  # now >= horizon
        assert [r for r in _records(lg) if r[2] == b"k"] == []
    finally:
        lg.close()


def test_clean_tombstone(tmp_path):
    """Kafka's LogCleanerTest.testCleanTombstone: a value with a timestamp far in the future is cleaned, then a
    tombstone of its key with a timestamp older than delete.retention.ms is retained by the next pass, and still by
    the one after that (its horizon has not come)."""
    lg = _open(tmp_path)
    try:
        _append(lg, [(b"0", b"0")], NOW + RETENTION + 10_000)
        _filler(lg, "a")
        cleaner.clean(lg, NOW, CFG)
        dead = _append(lg, [(b"0", None)], NOW - RETENTION - 10_000)
        _filler(lg, "b")
        cleaner.clean(lg, NOW, CFG)
        assert [r[0] for r in _records(lg) if r[2] == b"0"] == [dead], "The tombstone should be retained."
        _append(lg, [(b"1", b"1")], NOW)
        _filler(lg, "c")
        cleaner.clean(lg, NOW, CFG)
        assert [r[0] for r in _records(lg) if r[2] == b"0"] == [dead], "The tombstone should be retained."
    finally:
        lg.close()


def test_cleaning_with_deletes(tmp_path):
    """Kafka's LogCleanerTest.testCleaningWithDeletes, with its runTwoPassClean: values for keys 0..N, tombstones
    for the even keys, padding; the first pass stamps the tombstones' horizon, a second one past it removes them, and
    none of the deleted keys is left."""
    lg = _open(tmp_path)
    try:
        n = 20
        for i in range(n):
            _append(lg, [(str(i).encode(), str(i).encode())], NOW)
        for i in range(0, n, 2):
            _append(lg, [(str(i).encode(), None)], NOW)
        _filler(lg, "pad")
        cleaner.clean(lg, NOW, CFG)
        keys = {r[2] for r in _records(lg) if r[3] is None}
        assert keys == {str(i).encode() for i in range(0, n, 2)}  # first pass: the tombstones stay, stamped
        _filler(lg, "pad2")
        cleaner.clean(lg, NOW + RETENTION + 1, CFG)
        keys = {r[2] for r in _records(lg)}
        assert not any(str(i).encode() in keys for i in range(0, n, 2)), "None of the keys we deleted should still exist."
        assert all(str(i).encode() in keys for i in range(1, n, 2))
    finally:
        lg.close()


def test_the_horizon_is_stamped_once_and_kept_by_the_batch_records_that_outlive_the_tombstone(tmp_path):
    """Kafka's MemoryRecordsTest.testBaseTimestampToDeleteHorizonConversion through the cleaner: a batch with values
    and a tombstone gets the horizon on its first pass, its records keep their timestamps (deltas now from the
    horizon); a later pass before the horizon copies it as it is; past the horizon the tombstone goes and the
    values stay in a batch that keeps the horizon (Kafka keeps a batch's horizon when it rewrites it)."""
    lg = _open(tmp_path)
    try:
        first = _append(lg, [(b"a", b"1"), (b"d", None), (b"c", b"3")], NOW - 5 * RETENTION)
        _filler(lg, "a")
        cleaner.clean(lg, NOW, CFG)
        batch = _batch_of(lg, first)
        assert (batch.base_offset, batch.record_count, batch.delete_horizon_ms) == (first, 3, NOW + RETENTION)
        assert [(r[0], r[1], r[3]) for r in _records(lg)[:3]] == [
            (first, NOW - 5 * RETENTION, b"1"), (first + 1, NOW - 5 * RETENTION, None), (first + 2, NOW - 5 * RETENTION, b"3")]
        stamped = bytes(batch.buffer)

        _filler(lg, "b")
        cleaner.clean(lg, NOW + 10, CFG)  # a later pass: the horizon is not stamped again
        assert bytes(_batch_of(lg, first).buffer) == stamped

        _filler(lg, "c")
        cleaner.clean(lg, NOW + RETENTION, CFG)
        assert [(r[0], r[3]) for r in _records(lg) if r[2] in (b"a", b"d", b"c")] == [(first, b"1"), (first + 2, b"3")]
        assert all(_batch_of(lg, o).delete_horizon_ms == NOW + RETENTION for o in (first, first + 2))
    finally:
        lg.close()


def test_a_batch_without_tombstones_gets_no_horizon_and_is_copied_whole(tmp_path):
    """Only a batch that keeps a tombstone is stamped (Kafka: containsTombstones); one that keeps all its values is
    copied byte for byte."""
    lg = _open(tmp_path)
    try:
        first = _append(lg, [(b"a", b"1"), (b"b", b"2")], NOW - 5 * RETENTION)
        before = bytes(_batch_of(lg, first).buffer)
        _filler(lg, "a")
        cleaner.clean(lg, NOW, CFG)
        batch = _batch_of(lg, first)
        assert not batch.has_delete_horizon and bytes(batch.buffer) == before
    finally:
        lg.close()
