"""The ReplicatedLog contract, run against both MemoryLog and SegmentedLog (the ``harness`` fixture)."""

from __future__ import annotations

import pytest

from kraftwire.errors import (
    InvalidAppendError,
    InvalidSnapshotIdError,
    InvalidTruncationError,
    LogIOError,
    OffsetOutOfRangeError,
)
from kraftwire.ids import OffsetAndEpoch, SnapshotId
from kraftwire.log.api import Isolation, LogView, ReplicatedLog, ValidationKind
from kraftwire.records import read_batches


def offsets(data: bytes) -> list[tuple[int, int, int]]:
    return [(b.base_offset, b.last_offset, b.partition_leader_epoch) for b in read_batches(data)]


def fill(log, batch, spec):
    """spec: list of (epoch, record count); appends each as a leader batch."""
    for epoch, count in spec:
        log.append_as_leader(batch(count, tag=epoch), epoch)


def test_empty_log(harness):
    log = harness.open()
    assert isinstance(log, ReplicatedLog) and isinstance(log, LogView)
    assert (log.start_offset(), log.end_offset(), log.flushed_offset(), log.high_watermark()) == (0, 0, 0, 0)
    assert log.last_fetched_epoch() == 0
    info = log.read(0, 1000)
    assert (bytes(info.records), info.start_offset) == (b"", 0)
    assert log.validate_offset_and_epoch(0, 0).kind is ValidationKind.VALID
    assert log.latest_snapshot_id() is None and log.earliest_snapshot_id() is None
    assert list(log.snapshot_ids()) == []
    with pytest.raises(OffsetOutOfRangeError):
        log.read(1, 1000)


def test_append_as_leader_rebases_and_stamps(harness, batch):
    log = harness.open()
    info = log.append_as_leader(batch(3, base_offset=77), 1)
    assert (info.first_offset, info.last_offset) == (0, 2)
    info = log.append_as_leader(batch(2) + batch(4), 1)
    assert (info.first_offset, info.last_offset) == (3, 8)
    assert log.end_offset() == 9
    assert log.last_fetched_epoch() == 1
    data = log.read(0, 1 << 20).records
    assert offsets(bytes(data)) == [(0, 2, 1), (3, 4, 1), (5, 8, 1)]
    # CRC still valid after re-stamping, and the records are the ones appended.
    values = [r.value for b in read_batches(bytes(data)) for r in b]
    assert values == [bytes([i % 256]) * 10 for i in (0, 1, 2, 0, 1, 0, 1, 2, 3)]
    assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(1, 0)]


def test_append_as_leader_in_place_rebases_the_callers_buffer(harness, batch):
    """``in_place`` (a received Produce frame, handed over): the validated batches are re-based where they are — the
    caller's buffer now holds the stored batches — and the log reads back as after a copying append; a read-only
    buffer is copied as ever."""
    from kraftwire.records import validate_batches

    log = harness.open()
    log.append_as_leader(batch(2), 1)
    frame = bytearray(batch(3, base_offset=77) + batch(1))
    view = memoryview(frame)
    info = log.append_as_leader(view, 1, validate_batches(view).batches, in_place=True)
    assert (info.first_offset, info.last_offset) == (2, 5)
    assert offsets(bytes(frame)) == [(2, 4, 1), (5, 5, 1)]
    assert offsets(bytes(log.read(0, 1 << 20).records)) == [(0, 1, 1), (2, 4, 1), (5, 5, 1)]
    fixed = batch(2, base_offset=9)
    log.append_as_leader(memoryview(fixed), 2, validate_batches(fixed).batches, in_place=True)
    assert offsets(fixed) == [(9, 10, -1)]  # bytes: untouched, the log stored a copy
    assert offsets(bytes(log.read(6, 1 << 20).records)) == [(6, 7, 2)]


def test_leader_epochs_recorded_at_first_offset(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 2), (1, 1), (3, 2), (4, 1)])
    assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(1, 0), (3, 3), (4, 5)]
    with pytest.raises(InvalidAppendError):
        log.append_as_leader(batch(1), 2)  # epoch going backwards


def test_append_rejects_bad_input(harness, batch):
    log = harness.open()
    with pytest.raises(InvalidAppendError):
        log.append_as_leader(b"", 1)
    good = batch(2)
    with pytest.raises(InvalidAppendError):
        log.append_as_leader(good[:-3], 1)  # incomplete
    bad = bytearray(good)
    bad[-1] ^= 0xFF
    with pytest.raises(InvalidAppendError):
        log.append_as_follower(bytes(bad), 5)  # crc mismatch
    assert log.end_offset() == 0


def test_append_as_follower(harness, batch):
    log = harness.open()
    log.append_as_follower(batch(2, base_offset=0, epoch=1) + batch(1, base_offset=2, epoch=2), 2)
    assert log.end_offset() == 3
    assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(1, 0), (2, 2)]
    with pytest.raises(InvalidAppendError, match="end offset"):
        log.append_as_follower(batch(1, base_offset=5, epoch=2), 2)  # gap
    with pytest.raises(InvalidAppendError, match="end offset"):
        log.append_as_follower(batch(1, base_offset=1, epoch=2), 2)  # overlap
    with pytest.raises(InvalidAppendError, match="above the current epoch"):
        log.append_as_follower(batch(1, base_offset=3, epoch=4), 3)  # KAFKA-18723
    with pytest.raises(InvalidAppendError, match="below the previous epoch"):
        log.append_as_follower(batch(1, base_offset=3, epoch=1), 3)
    assert log.end_offset() == 3


def test_read_whole_batches(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 3), (1, 3), (2, 3), (2, 3)])
    one = len(batch(3, tag=1))
    r = log.read(4, 1)  # at least one batch even if larger than max_bytes
    assert r.start_offset == 3 and offsets(bytes(r.records)) == [(3, 5, 1)]
    r = log.read(4, 2 * one)
    assert offsets(bytes(r.records)) == [(3, 5, 1), (6, 8, 2)]
    r = log.read(0, 1 << 20)
    assert [o[0] for o in offsets(bytes(r.records))] == [0, 3, 6, 9]
    assert isinstance(r.records, (bytes, memoryview))
    assert log.read(12, 100).records == b""
    with pytest.raises(OffsetOutOfRangeError):
        log.read(13, 100)


def test_read_committed_stops_below_high_watermark(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 3), (1, 3), (1, 3)])
    log.update_high_watermark(7)  # inside the third batch
    r = log.read(0, 1 << 20, Isolation.COMMITTED)
    assert offsets(bytes(r.records)) == [(0, 2, 1), (3, 5, 1)]
    assert log.read(6, 1 << 20, Isolation.COMMITTED).records == b""
    assert log.read(7, 1 << 20, Isolation.COMMITTED).records == b""
    log.update_high_watermark(100)  # clamped to the end
    assert log.high_watermark() == 9


def test_read_up_to_a_limit_returns_whole_batches_below_it(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 3), (1, 3), (1, 3)])
    log.update_high_watermark(9)
    assert offsets(bytes(log.read(0, 1 << 20, limit=7).records)) == [(0, 2, 1), (3, 5, 1)]  # 7 is in the third
    assert offsets(bytes(log.read(3, 1 << 20, limit=6).records)) == [(3, 5, 1)]
    assert log.read(6, 1 << 20, limit=8).records == b""
    log.update_high_watermark(3)  # the tighter of the limit and the isolation's bound wins
    assert offsets(bytes(log.read(0, 1 << 20, Isolation.COMMITTED, limit=9).records)) == [(0, 2, 1)]


def test_follower_append_with_the_callers_validation(harness, batch):
    from kraftwire.records import validate_batches

    log = harness.open()
    data = batch(2, base_offset=0, epoch=1) + batch(1, base_offset=2, epoch=1)
    infos = validate_batches(data).batches
    log.append_as_follower(memoryview(data), 1, infos)
    assert offsets(bytes(log.read(0, 1 << 20).records)) == [(0, 1, 1), (2, 2, 1)]
    # the log's own rules still hold for what the caller validated: offsets, epochs, and its batch size limit
    more = batch(1, base_offset=5, epoch=1)
    with pytest.raises(InvalidAppendError, match="end offset"):
        log.append_as_follower(more, 1, validate_batches(more).batches)
    big = batch(1, base_offset=3, epoch=1)
    log.max_batch_size = len(big) - 1
    with pytest.raises(InvalidAppendError, match="above the maximum"):
        log.append_as_follower(big, 1, validate_batches(big).batches)
    assert log.end_offset() == 3


def test_leader_append_with_the_callers_validation(harness, batch):
    from kraftwire.records import validate_batches

    log = harness.open()
    placed = batch(2, base_offset=0, epoch=1)  # already at the log end in the leader's epoch: stored as it is
    log.append_as_leader(placed, 1, validate_batches(placed).batches)
    produced = batch(3, base_offset=40, epoch=-1) + batch(1, base_offset=99, epoch=-1)  # a client's: re-based
    info = log.append_as_leader(produced, 1, validate_batches(produced).batches)
    assert (info.first_offset, info.last_offset) == (2, 5)
    assert offsets(bytes(log.read(0, 1 << 20).records)) == [(0, 1, 1), (2, 4, 1), (5, 5, 1)]
    assert bytes(log.read(0, 1 << 20).records)[:len(placed)] == placed
    stored = bytes(log.read(0, 1 << 20).records)
    assert validate_batches(stored).valid_bytes == len(stored)  # CRCs still hold after the re-basing
    big = batch(1, epoch=1)
    log.max_batch_size = len(big) - 1
    with pytest.raises(InvalidAppendError, match="above the maximum"):
        log.append_as_leader(big, 1, validate_batches(big).batches)
    assert log.end_offset() == 6


def test_read_bytes_never_change_under_a_reader(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 3), (1, 3)])
    r = log.read(0, 1 << 20)
    before = bytes(r.records)
    log.truncate_to(3)
    fill(log, batch, [(2, 5)])
    assert bytes(r.records) == before


def test_end_offset_for_epoch_and_validate(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 5), (3, 5), (5, 5)])  # epochs 1@0, 3@5, 5@10, end 15
    assert log.end_offset_for_epoch(5) == OffsetAndEpoch(15, 5)
    assert log.end_offset_for_epoch(4) == OffsetAndEpoch(10, 3)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(5, 1)
    assert log.end_offset_for_epoch(0) == OffsetAndEpoch(0, 0)
    assert log.end_offset_for_epoch(9) == OffsetAndEpoch(15, 5)  # undefined: (end, last fetched epoch)
    v = log.validate_offset_and_epoch(12, 5)
    assert v.kind is ValidationKind.VALID and v.offset_and_epoch == OffsetAndEpoch(12, 5)
    v = log.validate_offset_and_epoch(8, 4)
    assert v.kind is ValidationKind.DIVERGING and v.offset_and_epoch == OffsetAndEpoch(10, 3)
    v = log.validate_offset_and_epoch(7, 1)
    assert v.kind is ValidationKind.DIVERGING and v.offset_and_epoch == OffsetAndEpoch(5, 1)
    assert log.validate_offset_and_epoch(5, 1).kind is ValidationKind.VALID
    assert log.validate_offset_and_epoch(0, 7).kind is ValidationKind.VALID


def test_truncate(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 3), (2, 3), (3, 3)])
    log.update_high_watermark(3)
    with pytest.raises(InvalidTruncationError):
        log.truncate_to(2)
    log.truncate_to(7)  # mid-batch: the whole batch [6, 8] goes
    assert log.end_offset() == 6
    assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(1, 0), (2, 3)]
    log.initialize_leader_epoch(4)
    log.truncate_to(100)  # beyond the end: no-op (the epoch starting at the end stays)
    assert log.end_offset() == 6 and log.last_fetched_epoch() == 4
    log.truncate_to(6)  # at the end: an epoch with no batch yet goes (see truncate_to_end_offset)
    assert log.last_fetched_epoch() == 2
    log.truncate_to(3)
    assert log.end_offset() == 3 and log.last_fetched_epoch() == 1
    fill(log, batch, [(4, 2)])
    assert offsets(bytes(log.read(0, 1 << 20).records))[-1] == (3, 4, 4)


def test_truncate_to_end_offset_drops_an_epoch_without_batches(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 3)])
    log.initialize_leader_epoch(5)  # became leader, crashed out of leadership before appending
    assert log.last_fetched_epoch() == 5
    # The new leader says our epoch-5 history diverges; the leader's epoch 4 ends at 10.
    assert log.truncate_to_end_offset(OffsetAndEpoch(10, 4)) == 3
    assert log.last_fetched_epoch() == 1


def test_initialize_leader_epoch(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 2)])
    log.initialize_leader_epoch(3)
    assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(1, 0), (3, 2)]
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(2, 3)
    log.append_as_leader(batch(1), 3)
    assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(1, 0), (3, 2)]


def test_flush_and_clean_reopen(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 2), (2, 2)])
    assert log.flushed_offset() == 0
    assert log.flush() == 4 == log.flushed_offset()
    fill(log, batch, [(2, 2)])
    log.flush()
    log = harness.reopen_clean()
    assert log.end_offset() == 6 and log.flushed_offset() == 6
    assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(1, 0), (2, 2)]
    assert offsets(bytes(log.read(0, 1 << 20).records)) == [(0, 1, 1), (2, 3, 2), (4, 5, 2)]


def test_crash_loses_only_unflushed(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 2), (2, 2)])
    log.flush()
    fill(log, batch, [(3, 2)])
    log.update_high_watermark(4)
    log = harness.crash()
    assert log.end_offset() == 4
    assert log.high_watermark() <= 4
    assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(1, 0), (2, 2)]
    assert offsets(bytes(log.read(0, 1 << 20).records)) == [(0, 1, 1), (2, 3, 2)]
    fill(log, batch, [(4, 1)])
    assert log.end_offset() == 5


def write_snapshot(log, sid, payload=b"snapshot-bytes", create=True):
    w = log.create_new_snapshot(sid) if create else log.store_snapshot(sid)
    assert w is not None
    w.append(payload)
    assert w.size_in_bytes() == len(payload)
    w.freeze()
    return w


def test_snapshot_rules(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 3), (2, 3), (2, 3)])
    log.update_high_watermark(6)
    with pytest.raises(InvalidSnapshotIdError, match="high watermark"):
        log.create_new_snapshot(SnapshotId(9, 2))
    with pytest.raises(InvalidSnapshotIdError, match="batch boundary"):
        log.create_new_snapshot(SnapshotId(4, 2))
    with pytest.raises(InvalidSnapshotIdError):
        log.create_new_snapshot(SnapshotId(3, 5))  # epoch 5 is unknown to the log: diverging
    w = log.create_new_snapshot(SnapshotId(3, 1))
    assert w is not None
    assert log.latest_snapshot_id() is None  # invisible until frozen
    w.append(b"abc")
    w.freeze()
    with pytest.raises(Exception):
        w.append(b"more")
    assert log.latest_snapshot_id() == SnapshotId(3, 1)
    assert log.create_new_snapshot(SnapshotId(3, 1)) is None  # exists
    r = log.read_snapshot(SnapshotId(3, 1))
    assert r.records() == b"abc" and r.size_in_bytes() == 3 and r.slice(1, 5) == b"bc"
    assert r.snapshot_id == SnapshotId(3, 1)
    assert log.read_snapshot(SnapshotId(6, 2)) is None
    write_snapshot(log, SnapshotId(6, 2))
    assert list(log.snapshot_ids()) == [SnapshotId(3, 1), SnapshotId(6, 2)]
    assert log.earliest_snapshot_id() == SnapshotId(3, 1)


def test_abandoned_snapshot_is_invisible(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 3)])
    log.update_high_watermark(3)
    w = log.create_new_snapshot(SnapshotId(3, 1))
    w.append(b"partial")
    w.close()
    assert log.latest_snapshot_id() is None
    assert log.create_new_snapshot(SnapshotId(3, 1)) is not None


def test_delete_before_snapshot(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 3), (2, 3), (2, 3), (3, 3)])
    log.update_high_watermark(9)
    write_snapshot(log, SnapshotId(3, 1))
    write_snapshot(log, SnapshotId(6, 2))
    assert not log.delete_before_snapshot(SnapshotId(5, 2))  # unknown snapshot
    assert log.delete_before_snapshot(SnapshotId(6, 2))
    assert log.start_offset() == 6
    assert list(log.snapshot_ids()) == [SnapshotId(6, 2)]
    assert [(e.epoch, e.start_offset) for e in log.epoch_entries()] == [(2, 6), (3, 9)]
    with pytest.raises(OffsetOutOfRangeError):
        log.read(5, 100)
    assert log.read(6, 1 << 20).start_offset == 6
    v = log.validate_offset_and_epoch(4, 2)
    assert v.kind is ValidationKind.SNAPSHOT and v.offset_and_epoch == OffsetAndEpoch(6, 2)
    v = log.validate_offset_and_epoch(6, 1)
    assert v.kind is ValidationKind.SNAPSHOT
    assert log.validate_offset_and_epoch(6, 2).kind is ValidationKind.VALID
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(6, 2)  # below the log: the snapshot id
    with pytest.raises(InvalidTruncationError):
        log.truncate_to(5)
    log.flush()
    log = harness.reopen_clean()
    assert log.start_offset() == 6 and log.end_offset() == 12
    assert list(log.snapshot_ids()) == [SnapshotId(6, 2)]
    assert log.read_snapshot(SnapshotId(6, 2)).records() == b"snapshot-bytes"


def test_truncate_to_latest_snapshot(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 3)])
    log.update_high_watermark(3)
    write_snapshot(log, SnapshotId(3, 1))
    assert not log.truncate_to_latest_snapshot()  # snapshot is not ahead of the log
    write_snapshot(log, SnapshotId(50, 4), create=False)  # downloaded from the leader
    assert log.truncate_to_latest_snapshot()
    assert (log.start_offset(), log.end_offset(), log.high_watermark()) == (50, 50, 50)
    assert log.last_fetched_epoch() == 4
    assert list(log.snapshot_ids()) == [SnapshotId(50, 4)]
    assert log.validate_offset_and_epoch(50, 4).kind is ValidationKind.VALID
    assert log.read(50, 100).records == b""
    log.append_as_follower(_rebased(batch(2, epoch=4), 50), 4)
    assert log.end_offset() == 52
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(50, 4)


def _rebased(data, base):
    from kraftwire.records import rebase_batches

    first = next(iter(read_batches(data)))
    return rebase_batches(data, base, first.partition_leader_epoch)


def test_store_snapshot_refuses_duplicates(harness, batch):
    log = harness.open()
    write_snapshot(log, SnapshotId(10, 1), create=False)
    with pytest.raises(InvalidSnapshotIdError):
        log.store_snapshot(SnapshotId(10, 1))


def test_io_error_is_fail_stop(harness, batch):
    log = harness.open()
    fill(log, batch, [(1, 2)])
    log.flush()
    log.inject_io_error()
    with pytest.raises(LogIOError):
        fill(log, batch, [(1, 2)])
    for action in (lambda: fill(log, batch, [(1, 1)]), log.flush, lambda: log.truncate_to(1),
                   lambda: log.initialize_leader_epoch(2)):
        with pytest.raises(LogIOError):
            action()
    # Reads keep working, and serve only what was appended before the error.
    assert offsets(bytes(log.read(0, 1 << 20).records)) == [(0, 1, 1)]
    log = harness.crash()
    assert log.end_offset() == 2
    fill(log, batch, [(2, 1)])
    assert log.end_offset() == 3


def test_retention_on_both_logs(harness, batch):
    log = harness.open()
    log.retention_bytes, log.retention_ms = 0, -1
    fill(log, batch, [(1, 3), (1, 3), (1, 3)])
    log.update_high_watermark(9)
    assert not log.maybe_clean(0)  # no snapshot: nothing may go
    write_snapshot(log, SnapshotId(3, 1))
    assert not log.maybe_clean(0)  # only one snapshot: it is the latest and is kept
    write_snapshot(log, SnapshotId(6, 1))
    assert log.maybe_clean(0)
    assert list(log.snapshot_ids()) == [SnapshotId(6, 1)] and log.start_offset() == 6


def test_a_record_level_defect_under_a_valid_crc_is_refused(harness, batch):
    import crc32c
    import struct

    log = harness.open()
    good = bytearray(batch(2))
    # Break the first record's offset delta (a zig-zag varint right after its length and attributes) and
    # recompute the CRC, so only a record-level check can catch it.
    good[61 + 1 + 1 + 1] = 0x08
    good[17:21] = struct.pack(">I", crc32c.crc32c(bytes(good[21:])))
    with pytest.raises(InvalidAppendError, match="offset delta mismatch"):
        log.append_as_leader(bytes(good), 1)
    assert log.end_offset() == 0
