"""The rules both logs share, written once on top of a few storage hooks. Pure (no I/O, no clock).

``MemoryLog`` and ``SegmentedLog`` differ only in where bytes live; everything Raft relies on — epoch lookups,
fetch validation, snapshot id checks, truncation and log-start rules — lives here so the two cannot drift.
The semantics follow Kafka's ``ReplicatedLog`` defaults and ``KafkaMetadataLog`` (facts, our words):

* ``end_offset_for_epoch(e)``: the epoch cache's answer (see ``epoch_cache``); when it is undefined (cache empty,
  ``e`` above every epoch, or ``e == -1``) the answer is ``(end offset, last fetched epoch)``; when the answer is
  ``(e, earliest snapshot end offset)`` it is replaced by the earliest snapshot's id (its epoch).
* ``validate_offset_and_epoch(o, e)``: ``(0, any)`` on a log that starts at 0 is VALID; with a snapshot, SNAPSHOT
  (latest snapshot id) when ``o`` < log start, or ``o`` == log start and ``e`` != earliest snapshot epoch, or ``e`` <
  earliest snapshot epoch; otherwise DIVERGING(end_offset_for_epoch(e)) when that has another epoch or ends before
  ``o``, else VALID.
* Reads return whole batches: from the batch holding ``offset`` while a batch's last offset is below the limit
  (the high watermark for COMMITTED, the log end for UNCOMMITTED), at least one batch, at most ``max_bytes``
  otherwise. ``LogFetchInfo.start_offset`` is the first returned batch's base offset.
* ``truncate_to(o)`` drops every batch whose last offset is ≥ ``o`` (a batch is never split), so the end offset
  becomes ≤ ``o``; epoch-cache entries starting at or after the new end go too, also when ``o`` is the end and no
  batch goes (an epoch initialised with no batch yet: Kafka keeps it there, which can make a follower re-fetch the
  same diverging answer forever).
"""

from __future__ import annotations

import struct
from typing import Iterator

from kraftwire.errors import (
    InvalidAppendError,
    InvalidSnapshotIdError,
    InvalidTruncationError,
    LogIOError,
    OffsetOutOfRangeError,
)
from kraftwire.ids import OffsetAndEpoch, SnapshotId
from kraftwire.log.api import Isolation, LogAppendInfo, LogFetchInfo, RawSnapshotReader, RawSnapshotWriter, ValidOffsetAndEpoch
from kraftwire.log.epoch_cache import LeaderEpochCache
from kraftwire.records import (MAX_BATCH_SIZE, BatchInfo, CorruptRecordError, ValidationResult, read_batches,
                               rebase_batches, set_base_offset_and_epoch, validate_batches)

__all__ = ["BaseLog", "check_batches", "check_batches_with_headers"]

_SNAPSHOT_HEADER_VALUE = struct.Struct(">hq")  # SnapshotHeaderRecord v0: Version int16, LastContainedLogTimestamp


def check_batches(records: bytes | memoryview, max_batch_size: int = MAX_BATCH_SIZE,
                  check_records: bool = True) -> list[BatchInfo]:
    """Framing, CRC and (by default) every record's framing — the codec's validate-only path, no per-record
    objects (~27 µs per 1000-record batch with the extension); the input must be whole batches only. The log
    never stores what the codec would reject."""
    return _checked(records, max_batch_size, check_records, False).batches


def check_batches_with_headers(records: bytes | memoryview, max_batch_size: int = MAX_BATCH_SIZE,
                               check_records: bool = True) -> ValidationResult:
    """``check_batches``' checks, its report whole with each batch's header (``headers``): for a caller that hands
    the report to the append (``batches``) and then needs the batches' fields (a follower's producer state), so
    the batches are read once."""
    return _checked(records, max_batch_size, check_records, True)


def _checked(records, max_batch_size: int, check_records: bool, headers: bool) -> ValidationResult:
    if len(records) == 0:
        raise InvalidAppendError("attempt to append an empty record set")
    try:
        result = validate_batches(records, max_batch_size, check_records=check_records, headers=headers)
    except CorruptRecordError as exc:
        raise InvalidAppendError(f"refusing to append a corrupt batch: {exc}") from exc
    if result.valid_bytes != len(records):
        raise InvalidAppendError(f"append ends with an incomplete batch at byte {result.valid_bytes}")
    return result


def _placed(batches: list[BatchInfo], end: int, epoch: int) -> bool:
    """Whether validated batches already sit at consecutive offsets from ``end``, stamped with ``epoch``."""
    for info in batches:
        if info.base_offset != end or info.partition_leader_epoch != epoch:
            return False
        end = info.last_offset + 1
    return True


def _rebased(batches: list[BatchInfo], end: int, epoch: int) -> list[BatchInfo]:
    """The validation report of ``batches`` after ``rebase_batches(…, end, epoch)``: offsets and epoch change,
    positions and sizes (and the CRC, which does not cover them) do not."""
    out = []
    for info in batches:
        last = end + info.last_offset - info.base_offset
        out.append(BatchInfo(end, last, epoch, info.position, info.size))
        end = last + 1
    return out


class BaseLog:
    """Shared logic of the two ``ReplicatedLog`` implementations. Subclasses provide the storage hooks
    (``_append_storage``, ``_read_storage``, ``_batch_start_for``, ``_truncate_storage``, ``_reset_storage``,
    ``_delete_storage_before``, ``_flush_storage``, ``_epoch_cache_changed``, the snapshot hooks) and set
    ``_start``, ``_end``, ``_flushed``, ``_hwm``, ``_cache`` and ``_snapshots`` (id → size)."""

    #: whether offsets may skip (a compacted topic partition's log); the Raft log's never do
    allow_offset_gaps = False

    _start: int
    _end: int
    _flushed: int
    _hwm: int
    _cache: LeaderEpochCache
    _snapshots: dict[SnapshotId, int]
    _failed: BaseException | None = None
    _closed: bool = False
    max_batch_size: int = MAX_BATCH_SIZE
    #: Validate every record's framing on append (not only the batch CRC). On by default.
    check_records: bool = True
    #: How many times batches were removed from the end (truncation, reset to a snapshot): a reader folding the
    #: log compares it with the value it saw, since the log may have grown back past where it stopped.
    truncations: int = 0

    # ------------------------------------------------------------------------------------------------ LogView

    def start_offset(self) -> int:
        return self._start

    def end_offset(self) -> int:
        return self._end

    def flushed_offset(self) -> int:
        return self._flushed

    def high_watermark(self) -> int:
        return self._hwm

    def epoch_entries(self) -> tuple:
        """The epoch cache's entries ((epoch, start offset) pairs), for tests, tools and invariants."""
        return self._cache.entries()

    def last_fetched_epoch(self) -> int:
        latest = self._cache.latest_epoch()
        if latest is not None:
            return latest
        snap = self.latest_snapshot_id()
        return snap.epoch if snap is not None else 0

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        found_epoch, found_offset = self._cache.end_offset_for(epoch, self._end)
        if found_offset == -1:
            return OffsetAndEpoch(self._end, self.last_fetched_epoch())
        earliest = self.earliest_snapshot_id()
        if earliest is not None and found_offset == earliest.end_offset and found_epoch == epoch:
            return OffsetAndEpoch(earliest.end_offset, earliest.epoch)
        return OffsetAndEpoch(found_offset, found_epoch)

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> ValidOffsetAndEpoch:
        if self._start == 0 and offset == 0:
            return ValidOffsetAndEpoch.valid(OffsetAndEpoch(0, 0))
        earliest = self.earliest_snapshot_id()
        if earliest is not None and (
            offset < self._start or (offset == self._start and epoch != earliest.epoch) or epoch < earliest.epoch
        ):
            latest = self.latest_snapshot_id()
            assert latest is not None
            return ValidOffsetAndEpoch.snapshot(OffsetAndEpoch(latest.end_offset, latest.epoch))
        end = self.end_offset_for_epoch(epoch)
        if end.epoch != epoch or end.offset < offset:
            return ValidOffsetAndEpoch.diverging(end)
        return ValidOffsetAndEpoch.valid(OffsetAndEpoch(offset, epoch))

    def read(self, offset: int, max_bytes: int, isolation: Isolation = Isolation.UNCOMMITTED, *,
             limit: int | None = None) -> LogFetchInfo:
        if offset < self._start or offset > self._end:
            raise OffsetOutOfRangeError(offset, self._start, self._end)
        bound = self._hwm if isolation is Isolation.COMMITTED else self._end
        limit = bound if limit is None else min(limit, bound)
        if offset >= limit:
            return LogFetchInfo(b"", offset)
        data, first = self._read_storage(offset, limit, max_bytes)
        return LogFetchInfo(data, first if data else offset)

    def timestamp_search_ranges(self, timestamp: int) -> list[tuple[int, int]]:
        """Offset ranges ``[from, to)``, oldest first, outside of which no record has a timestamp ≥ ``timestamp``
        (ListOffsets by timestamp scans them in order). Without indexes: the whole log."""
        return [(self._start, self._end)]

    def timestamp_ranges(self) -> list[tuple[int, int, int]]:
        """``(largest timestamp, from, to)`` ranges covering the log, no record in a range newer than its bound.
        Without indexes: one range, unbounded."""
        return [(2 ** 63 - 1, self._start, self._end)] if self._end > self._start else []

    def epoch_for_offset(self, offset: int) -> int:
        """The leader epoch of the batch holding ``offset`` by the epoch cache (-1 when it does not say)."""
        epoch = self._cache.epoch_for_offset(offset)
        return -1 if epoch is None else epoch

    def latest_snapshot_id(self) -> SnapshotId | None:
        return max(self._snapshots) if self._snapshots else None

    def earliest_snapshot_id(self) -> SnapshotId | None:
        return min(self._snapshots) if self._snapshots else None

    def snapshot_ids(self) -> Iterator[SnapshotId]:
        return iter(sorted(self._snapshots))

    # ------------------------------------------------------------------------------------------------ writes

    def _check_writable(self) -> None:
        if self._failed is not None:
            raise LogIOError(f"the log stopped after an I/O error and refuses writes: {self._failed}")
        if self._closed:
            raise LogIOError("the log is closed")

    def append_as_leader(self, records: bytes | memoryview, epoch: int,
                         batches: list[BatchInfo] | None = None, *, in_place: bool = False) -> LogAppendInfo:
        """Append batches re-based to the log end and stamped with ``epoch``. ``batches``: what the codec's full
        validation of exactly ``records`` reported, when the caller ran it (the core validates a produced batch;
        its accumulator builds its own). Batches already at the log end in ``epoch`` are stored as they are, without
        a copy; otherwise they are re-based (a copy; at the reported positions, without reading the headers again),
        and validated here only if nobody did. ``in_place``: ``records`` is a writable buffer the caller hands over
        and never reads again (a received Produce frame): with ``batches`` it is re-based where it is, no copy."""
        self._check_writable()
        if epoch < 0:
            raise InvalidAppendError(f"leader epoch {epoch} is negative")
        latest = self._cache.latest_epoch()
        if latest is not None and epoch < latest:
            raise InvalidAppendError(f"leader append in epoch {epoch} below the log's latest epoch {latest}")
        if batches is not None:
            self._check_sizes(batches)
            if _placed(batches, self._end, epoch):
                return self._append(records, batches)
        if in_place and batches is not None and isinstance(records, memoryview) and not records.readonly:
            infos = _rebased(batches, self._end, epoch)
            for info in infos:  # the offsets and the epoch are outside the CRC: the batches stay valid
                set_base_offset_and_epoch(records, info.position, info.base_offset, epoch)
            return self._append(records, infos)
        try:
            data = rebase_batches(records, self._end, epoch, self.max_batch_size, batches=batches)
        except (ValueError, CorruptRecordError) as exc:
            raise InvalidAppendError(f"refusing a malformed leader append: {exc}") from exc
        if batches is None:
            infos = check_batches(data, self.max_batch_size, self.check_records)
        else:
            infos = _rebased(batches, self._end, epoch)
        return self._append(data, infos)

    def _check_sizes(self, batches: list[BatchInfo]) -> None:
        too_large = next((i for i in batches if i.size > self.max_batch_size), None)
        if too_large is not None:
            raise InvalidAppendError(f"refusing to append a batch of {too_large.size} bytes at offset "
                                     f"{too_large.base_offset}: above the maximum of {self.max_batch_size}")

    def append_as_follower(self, records: bytes | memoryview, epoch: int,
                           batches: list[BatchInfo] | None = None) -> LogAppendInfo:
        """Append a leader's batches as they are. ``batches``: what the codec's full validation (CRC and record
        framing) of exactly these bytes reported, when the caller already ran it (the follower's epoch filter);
        otherwise the log validates them itself. Either way nothing the codec would reject is stored."""
        self._check_writable()
        if batches is None:
            infos = check_batches(records, self.max_batch_size, self.check_records)
        else:
            infos = batches
            self._check_sizes(infos)
        expected = self._end
        latest = self._cache.latest_epoch()
        prev_epoch = -1 if latest is None else latest
        for info in infos:
            # A compacted leader's log has gaps: a topic partition takes a batch past its end (never before it);
            # the Raft log's offsets stay contiguous.
            if info.base_offset != expected and not (self.allow_offset_gaps and info.base_offset > expected):
                raise InvalidAppendError(
                    f"follower append at offset {info.base_offset} but the log end offset is {expected}"
                )
            if info.partition_leader_epoch > epoch:
                raise InvalidAppendError(
                    f"batch at offset {info.base_offset} has epoch {info.partition_leader_epoch} above the "
                    f"current epoch {epoch}"
                )
            if info.partition_leader_epoch < 0:
                raise InvalidAppendError(f"batch at offset {info.base_offset} has no partition leader epoch")
            if info.partition_leader_epoch < prev_epoch:
                raise InvalidAppendError(
                    f"batch at offset {info.base_offset} has epoch {info.partition_leader_epoch} below the "
                    f"previous epoch {prev_epoch}"
                )
            prev_epoch = info.partition_leader_epoch
            expected = info.last_offset + 1
        return self._append(records, infos)

    def _append(self, data: bytes, infos: list[BatchInfo]) -> LogAppendInfo:
        first, last = infos[0].base_offset, infos[-1].last_offset
        self._append_storage(data, infos)
        self._end = last + 1
        changed = False
        for info in infos:
            changed |= self._cache.assign(info.partition_leader_epoch, info.base_offset)
        if changed:
            self._epoch_cache_changed()
        return LogAppendInfo(first, last)

    def initialize_leader_epoch(self, epoch: int) -> None:
        self._check_writable()
        if self._cache.assign(epoch, self._end):
            self._epoch_cache_changed()

    def flush(self) -> int:
        """Durable up to the end offset seen when the flush started (appends may continue meanwhile)."""
        self._check_writable()
        target = self._end
        if self._flushed < target:
            self._flush_storage()
            self._flushed = max(self._flushed, min(target, self._end))
        return self._flushed

    def update_high_watermark(self, offset: int) -> None:
        """Clamped to [log start, log end], like Kafka's UnifiedLog."""
        self._hwm = max(self._start, min(offset, self._end))

    def truncate_to(self, offset: int) -> None:
        self._check_writable()
        if offset < self._hwm:
            raise InvalidTruncationError(f"truncation to offset {offset} is below the high watermark {self._hwm}")
        if offset < self._start:
            raise InvalidTruncationError(f"truncation to offset {offset} is below the log start {self._start}")
        if offset < self._end:
            self.truncations += 1
            new_end = self._truncate_storage(offset)
            self._end = new_end
            self._flushed = min(self._flushed, new_end)
            self._hwm = min(self._hwm, new_end)
            cut = new_end
        else:
            cut = offset  # no batch goes; an epoch that starts at ``offset`` (== end: no batch yet) still does
        if self._cache.truncate_from_end(cut):
            self._epoch_cache_changed()

    def truncate_to_end_offset(self, end: OffsetAndEpoch) -> int:
        """Kafka's ``truncateToEndOffset``: truncate after a diverging epoch (``end`` is the leader's answer).
        Returns the offset truncated to."""
        local = self.end_offset_for_epoch(end.epoch)
        if local.epoch == end.epoch:
            target = min(end.offset, self._end)
        else:
            target = local.offset
        self.truncate_to(target)
        return self._end

    def truncate_to_latest_snapshot(self) -> bool:
        self._check_writable()
        snap = self.latest_snapshot_id()
        if snap is None:
            return False
        latest_epoch = self._cache.latest_epoch() or 0
        if snap.epoch > latest_epoch or (snap.epoch == latest_epoch and snap.end_offset > self._end):
            self.truncations += 1
            self._reset_storage(snap.end_offset)
            self._start = self._end = self._flushed = snap.end_offset
            self._hwm = snap.end_offset
            self._cache.clear()
            self._epoch_cache_changed()
            self._forget_snapshots_before(snap)
            return True
        return False

    # ------------------------------------------------------------------------------------------------ snapshots

    def create_new_snapshot(self, snapshot_id: SnapshotId) -> RawSnapshotWriter | None:
        self._check_writable()
        if snapshot_id.end_offset < self._start:
            return None
        if snapshot_id.end_offset > self._hwm:
            raise InvalidSnapshotIdError(
                f"snapshot id {snapshot_id} is above the high watermark {self._hwm}"
            )
        check = self.validate_offset_and_epoch(snapshot_id.end_offset, snapshot_id.epoch)
        if check.kind.value != "valid":
            raise InvalidSnapshotIdError(f"snapshot id {snapshot_id} is not valid against the log: {check}")
        if snapshot_id.end_offset < self._end:
            boundary = self._batch_start_for(snapshot_id.end_offset)
            if boundary != snapshot_id.end_offset:
                raise InvalidSnapshotIdError(
                    f"snapshot id {snapshot_id} is not on a batch boundary (the batch holding it starts at {boundary})"
                )
        if snapshot_id in self._snapshots:
            return None
        return self._new_snapshot_writer(snapshot_id)

    def store_snapshot(self, snapshot_id: SnapshotId) -> RawSnapshotWriter:
        self._check_writable()
        if snapshot_id in self._snapshots:
            raise InvalidSnapshotIdError(f"snapshot {snapshot_id} already exists")
        return self._new_snapshot_writer(snapshot_id)

    def _on_snapshot_frozen(self, snapshot_id: SnapshotId, size: int) -> None:
        self._snapshots[snapshot_id] = size

    def delete_before_snapshot(self, snapshot_id: SnapshotId) -> bool:
        self._check_writable()
        latest = self.latest_snapshot_id()
        if (
            latest is None
            or snapshot_id not in self._snapshots
            or not (self._start < snapshot_id.end_offset <= latest.end_offset)
            or snapshot_id.end_offset > self._hwm
        ):
            return False
        new_start = snapshot_id.end_offset
        self._start = new_start
        if self._cache.truncate_from_start(new_start):
            self._epoch_cache_changed()
        self._delete_storage_before(new_start)
        self._forget_snapshots_before(snapshot_id)
        return True

    def _forget_snapshots_before(self, snapshot_id: SnapshotId) -> None:
        old = [s for s in self._snapshots if s < snapshot_id]
        for s in old:
            del self._snapshots[s]
        if old:
            self._delete_snapshots(old)

    def snapshot_size(self, snapshot_id: SnapshotId) -> int | None:
        return self._snapshots.get(snapshot_id)

    #: Retention limits (``metadata.max.retention.bytes`` / ``.ms``); -1 disables one. Subclasses set them.
    retention_bytes: int = -1
    retention_ms: int = -1

    def size_in_bytes(self) -> int:
        """Bytes the log's batches occupy (retention adds the snapshots to this)."""
        raise NotImplementedError

    def snapshot_timestamp(self, snapshot_id: SnapshotId) -> int | None:
        """The snapshot header's LastContainedLogTimestamp (SnapshotHeaderRecord v0: int16 version, int64
        timestamp, in the first record of the first batch), or None if it cannot be read."""
        reader = self.read_snapshot(snapshot_id)
        if reader is None:
            return None
        try:
            head = reader.slice(0, 1 << 16)
            for batch in read_batches(head, validate=False):
                for record in batch:
                    value = record.value
                    if value is not None and len(value) >= _SNAPSHOT_HEADER_VALUE.size:
                        return _SNAPSHOT_HEADER_VALUE.unpack_from(value)[1]
                    return None
                return None
        except (CorruptRecordError, ValueError):
            return None
        finally:
            reader.close()
        return None

    def maybe_clean(self, now_ms: int) -> bool:
        """Retention (Kafka's ``maybeClean``): while log + snapshots exceed ``retention_bytes``, or the oldest
        snapshot is older than ``retention_ms`` (by its header's last contained timestamp), advance the log start
        to the next snapshot — deleting the older snapshot and whole segments below the new start. The latest
        snapshot is never deleted, so nothing above it goes. Returns whether anything was deleted."""
        self._check_writable()
        cleaned = False
        if self.retention_bytes >= 0:
            ids = sorted(self._snapshots)
            for older, newer in zip(ids, ids[1:]):
                if self.size_in_bytes() + sum(self._snapshots.values()) <= self.retention_bytes:
                    break
                if not self.delete_before_snapshot(newer):
                    break
                cleaned = True
        if self.retention_ms >= 0:
            ids = sorted(self._snapshots)
            for older, newer in zip(ids, ids[1:]):
                ts = self.snapshot_timestamp(older)
                if ts is None or now_ms - ts <= self.retention_ms:
                    break
                if not self.delete_before_snapshot(newer):
                    break
                cleaned = True
        return cleaned

    def bytes_between(self, offset: int, limit: int) -> int:
        """At least the bytes a read from ``offset`` bounded by ``limit`` could return (whole batches from the one
        holding ``offset``); 0 when ``offset >= limit``. A parked Fetch asks this to see whether MinBytes is
        reached without reading (Kafka's ``DelayedFetch`` compares log positions). This default cannot tell and
        says "as much as there could be"; a log that knows its batch positions answers exactly."""
        return 0 if offset >= limit else 1 << 62

    # ------------------------------------------------------------------------------------------------ hooks

    def _append_storage(self, data: bytes, infos: list[BatchInfo]) -> None:
        raise NotImplementedError

    def _read_storage(self, offset: int, limit: int, max_bytes: int) -> tuple[bytes, int]:
        """Whole batches from the one holding ``offset`` while last offset < ``limit``; (bytes, first base offset)."""
        raise NotImplementedError

    def _batch_start_for(self, offset: int) -> int:
        """Base offset of the batch holding ``offset`` (``start ≤ offset < end``)."""
        raise NotImplementedError

    def _truncate_storage(self, offset: int) -> int:
        """Drop batches whose last offset ≥ ``offset``; return the new end offset."""
        raise NotImplementedError

    def _reset_storage(self, offset: int) -> None:
        """Drop every batch; the (empty) log now starts and ends at ``offset``."""
        raise NotImplementedError

    def _delete_storage_before(self, offset: int) -> None:
        """Free storage that lies entirely below the new log start ``offset``."""
        raise NotImplementedError

    def _flush_storage(self) -> None:
        raise NotImplementedError

    def _epoch_cache_changed(self) -> None:
        raise NotImplementedError

    def _new_snapshot_writer(self, snapshot_id: SnapshotId) -> RawSnapshotWriter:
        raise NotImplementedError

    def _delete_snapshots(self, snapshot_ids: list[SnapshotId]) -> None:
        raise NotImplementedError

    def read_snapshot(self, snapshot_id: SnapshotId) -> RawSnapshotReader | None:
        raise NotImplementedError
