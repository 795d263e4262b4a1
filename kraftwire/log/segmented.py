"""The file log: Kafka's on-disk layout in ``<metadata log dir>/<topic>-0/`` (facts: kraft-facts.md §5).

Files in the partition directory::

    00000000000000000000.log / .index / .timeindex   segments (see ``segment.py``)
    leader-epoch-checkpoint                          epoch → start offset (Kafka's text checkpoint)
    partition.metadata                               ``version: 0`` / ``topic_id: <base64 uuid>``
    quorum-state                                     election state (``quorum_state_store.py``; not opened here)
    high-watermark-checkpoint                        a lazily written lower bound of the high watermark
    log-start-offset-checkpoint                      the log start (it moves when a snapshot lets the prefix go)
    recovery-point-offset-checkpoint                 segments below this base offset are flushed and indexed
    clean-shutdown                                   written last by a clean ``close()``; removed at open
    .lock                                            ``flock``-ed while a process has the log open
    %020d-%010d.checkpoint                           snapshots (``kraftwire.snapshot``)

The three offset checkpoints use Kafka's offset-checkpoint text (``0``, count, ``<topic> <partition> <offset>``).

Recovery on open (``loader.py``): after a clean shutdown, segments are trusted (index files loaded if sane, else rebuilt from
headers). After a crash, every segment from the recovery point on is validated with the codec's validate-only path
(framing + CRC-32C) plus contiguous offsets and non-decreasing epochs; the file is cut (and fsynced) after the last
valid batch and later segments are deleted, so no byte that failed validation is ever served. The epoch cache is
the checkpoint cut at the recovered end plus the epochs of recovered batches.

Durability: ``flush()`` fsyncs the ``.log`` files written since the last flush, and the directory when files were
created; small files are replaced atomically (tmp, fsync, rename, fsync dir). Any ``OSError`` on the write path
stops the log for good (fail-stop): later writes raise ``LogIOError``, no clean-shutdown marker is written, and a
restart recovers from disk.

Threads: ``flush()`` may run in a worker thread while the event loop appends (it fsyncs what was written when it
started); every other mutation must be serialised by the caller.
"""

from __future__ import annotations

import bisect
import errno
import fcntl
import os
import struct
import time
import uuid
from typing import Callable

from kraftwire.config import Config
from kraftwire.errors import LogIOError
from kraftwire.ids import SnapshotId
from kraftwire.log.api import RawSnapshotReader, RawSnapshotWriter
from kraftwire.log.base import BaseLog
from kraftwire.log.checkpoint import (
    LeaderEpochCheckpointFile,
    OffsetCheckpointFile,
    fsync_dir,
    write_atomic,
)
from kraftwire.log.epoch_cache import LeaderEpochCache
from kraftwire.log.loader import (
    CLEAN_SHUTDOWN,
    HIGH_WATERMARK_CHECKPOINT,
    LOCK_FILE,
    LOG_START_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    load,
)
from kraftwire.log.partition_rules import SegmentInfo
from kraftwire.log.segment import LogSegment
from kraftwire.records import MAX_BATCH_SIZE, BatchInfo
from kraftwire.records import api as layout
from kraftwire.snapshot.paths import deleted_path, snapshot_path
from kraftwire.snapshot.reader import FileRawSnapshotReader
from kraftwire.snapshot.writer import FileRawSnapshotWriter

__all__ = ["SegmentedLog", "partition_dir", "live_name", "CLEAN_SHUTDOWN", "FUTURE_SUFFIX", "LOCK_FILE"]

_I64 = struct.Struct(">q")

_GiB = 1 << 30
_WEEK_MS = 7 * 24 * 3600 * 1000


def partition_dir(config: Config) -> str:
    """``<metadata.log.dir or first of log.dirs>/<kraftwire.metadata.log.topic>-0``."""
    return config.metadata_partition_dir()


FUTURE_SUFFIX = "-future"


def live_name(name: str) -> str:
    """A partition directory's name without the ``.<hex>-future`` of a future replica's (a log-dir move's copy):
    ``orders-3.<32 hex>-future`` -> ``orders-3``; other names unchanged."""
    if name.endswith(FUTURE_SUFFIX):
        stem, dot, _ = name.rpartition(".")
        if dot:
            return stem
    return name


def _topic_of(directory: str) -> str:
    name = live_name(os.path.basename(os.path.normpath(directory)))
    topic, sep, partition = name.rpartition("-")
    return topic if sep and partition.isdigit() else name


class SegmentedLog(BaseLog):
    """``SegmentedLog(directory, *, topic_id=None, segment_bytes=1 GiB, segment_ms=7 days,
    index_interval_bytes=4096, retention_bytes=100 MiB, retention_ms=7 days, max_batch_size=8 MiB,
    clock_ms=None, high_watermark_checkpoint_interval_ms=5000)``.

    Opens (creating if needed) the partition directory, takes its lock and recovers. ``clock_ms`` (a callable
    returning wall-clock milliseconds; default ``time.time``) drives time-based rolling, retention and the lazy
    high-watermark checkpoint. ``topic_id`` is written to ``partition.metadata`` when the log is created
    (default: Kafka's metadata topic id) and must match it afterwards.
    """

    #: A Raft log starts past 0 only at a snapshot (checked at open); a topic partition's start moves by retention.
    snapshots_cover_start = True

    def __init__(
        self,
        directory: str,
        *,
        topic_id: uuid.UUID | None = None,
        segment_bytes: int = _GiB,
        segment_ms: int = _WEEK_MS,
        index_interval_bytes: int = 4096,
        retention_bytes: int = 100 * 1024 * 1024,
        retention_ms: int = _WEEK_MS,
        max_batch_size: int = MAX_BATCH_SIZE,
        clock_ms: Callable[[], int] | None = None,
        high_watermark_checkpoint_interval_ms: int = 5000,
    ) -> None:
        if not 0 < segment_bytes <= 2**31 - 1:
            raise ValueError(f"segment_bytes {segment_bytes} must be in [1, 2^31 - 1] (index positions are int32)")
        if index_interval_bytes < 0:
            raise ValueError(f"index_interval_bytes {index_interval_bytes} must be >= 0")
        self.directory = os.path.abspath(directory)
        self.topic = _topic_of(self.directory)
        self.segment_bytes = segment_bytes
        self.segment_ms = segment_ms
        self.index_interval_bytes = index_interval_bytes
        self.retention_bytes = retention_bytes
        self.retention_ms = retention_ms
        self.max_batch_size = max_batch_size
        self._clock = clock_ms or (lambda: int(time.time() * 1000))
        self._hw_interval = high_watermark_checkpoint_interval_ms
        self._failed = None
        self._closed = False
        self._inject = False
        self._dir_dirty = False
        self._segments: list[LogSegment] = []
        self._bases: list[int] = []
        self._snapshots: dict[SnapshotId, int] = {}
        self._cache = LeaderEpochCache()
        self._lock_fd = -1
        #: What the last open found: "clean", "recovered" (no truncation needed) or a truncation reason.
        self.recovery_report: list[str] = []
        try:
            self._open(topic_id)
        except BaseException:
            self._release()
            raise

    @classmethod
    def from_config(cls, config: Config, *, topic_id: uuid.UUID | None = None,
                    clock_ms: Callable[[], int] | None = None) -> "SegmentedLog":
        """Open the node's Raft log where its config says (``partition_dir(config)``) with its log settings."""
        return cls(
            partition_dir(config),
            topic_id=topic_id,
            segment_bytes=config.metadata_log_segment_bytes,
            segment_ms=config.metadata_log_segment_ms,
            index_interval_bytes=config.log_index_interval_bytes,
            retention_bytes=config.metadata_max_retention_bytes,
            retention_ms=config.metadata_max_retention_ms,
            clock_ms=clock_ms,
        )

    def __repr__(self) -> str:
        return (f"SegmentedLog({self.directory!r}, start={self._start}, end={self._end}, "
                f"flushed={self._flushed}, hwm={self._hwm}, segments={self._bases})")

    # ------------------------------------------------------------------------------------------------ paths

    def _path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    def _offset_file(self, name: str) -> OffsetCheckpointFile:
        return OffsetCheckpointFile(self._path(name), self.topic, 0)

    # ------------------------------------------------------------------------------------------------ opening

    def _open(self, topic_id: uuid.UUID | None) -> None:
        load(self, topic_id)

    # ------------------------------------------------------------------------------------------------ segments

    def _new_segment(self, base: int) -> LogSegment:
        seg = LogSegment(self.directory, base, index_interval_bytes=self.index_interval_bytes,
                         max_batch_size=self.max_batch_size, create=True, created_ms=self._clock())
        self._segments.append(seg)
        self._bases.append(base)
        self._dir_dirty = True
        return seg

    def _drop_segments_from(self, i: int) -> None:
        for seg in self._segments[i:]:
            seg.delete_files()
        del self._segments[i:]
        del self._bases[i:]
        self._dir_dirty = True

    def _segment_index(self, offset: int) -> int:
        return max(0, bisect.bisect_right(self._bases, offset) - 1)

    def size_in_bytes(self) -> int:
        """Bytes of all segment files (retention compares this plus the snapshots against its limit)."""
        return sum(s.size for s in self._segments)

    def segment_base_offsets(self) -> list[int]:
        return list(self._bases)

    def segment_infos(self) -> list:
        """(base offset, size, largest timestamp) per segment for retention; a segment without timestamps stands
        in with its creation time (Kafka uses the file's modification time)."""
        return [SegmentInfo(seg.base_offset, seg.size, seg.max_timestamp if seg.max_timestamp >= 0 else seg.created_ms)
                for seg in self._segments]

    def _roll_empty_segment(self) -> None:
        try:
            if self._segments[-1].size > 0:
                self._roll(self._end)
        except OSError as exc:
            raise self._fail(exc, "rolling a segment") from exc

    # ------------------------------------------------------------------------------------------------ failure

    def _fail(self, exc: BaseException, action: str) -> LogIOError:
        if self._failed is None:
            self._failed = exc
        return LogIOError(f"I/O error while {action} in {self.directory}: {exc}")

    def _set_failed(self, exc: BaseException) -> None:
        if self._failed is None:
            self._failed = exc

    def inject_io_error(self) -> None:
        """Testing hook: the next write-path system call fails with EIO (handled like a real one)."""
        self._inject = True

    def _maybe_inject(self) -> None:
        if self._inject:
            self._inject = False
            raise OSError(errno.EIO, "injected I/O error")

    # ------------------------------------------------------------------------------------------------ hooks

    def _append_storage(self, data: bytes, infos: list[BatchInfo]) -> None:
        try:
            self._maybe_inject()
            active = self._segments[-1]
            stamps = [_I64.unpack_from(data, i.position + layout.MAX_TIMESTAMP_POS)[0] for i in infos]
            if active.size > 0:
                roll = active.size + len(data) > self.segment_bytes or not active.fits(infos[-1].last_offset)
                if not roll and self.segment_ms >= 0:
                    # Kafka's rule: time waited = the new batch's timestamp - the segment's first batch timestamp
                    # (wall clock since creation when the batches carry no timestamps).
                    newest = max(stamps)
                    born = active.first_timestamp
                    if born is not None and born >= 0 and newest >= 0:
                        roll = newest - born >= self.segment_ms
                    else:
                        roll = self._clock() - active.created_ms >= self.segment_ms
                if roll:
                    active = self._roll(infos[0].base_offset)
            active.append(data, infos, stamps)
        except OSError as exc:
            raise self._fail(exc, "appending") from exc
        except LogIOError as exc:  # a checkpoint written while rolling
            self._set_failed(exc)
            raise

    def _roll(self, base: int) -> LogSegment:
        old = self._segments[-1]
        old.on_become_inactive()
        old.flush()
        old.write_indexes(fsync=True)
        seg = self._new_segment(base)
        # The checkpoint's own directory fsync also makes the new segment's directory entry durable.
        self._offset_file(RECOVERY_POINT_CHECKPOINT).write(base)
        self._dir_dirty = False
        return seg

    def _flush_storage(self) -> None:
        try:
            self._maybe_inject()
            dir_dirty, self._dir_dirty = self._dir_dirty, False
            for seg in list(self._segments):
                if seg.flushed_size < seg.size:
                    seg.flush()
            if dir_dirty:
                fsync_dir(self.directory)
        except OSError as exc:
            raise self._fail(exc, "flushing") from exc
        self._maybe_checkpoint_high_watermark()

    def _maybe_checkpoint_high_watermark(self, force: bool = False) -> None:
        if self._hwm == self._hw_written:
            return
        now = self._clock()
        if force or now - self._hw_written_ms >= self._hw_interval:
            try:
                self._offset_file(HIGH_WATERMARK_CHECKPOINT).write(self._hwm)
            except LogIOError as exc:
                self._set_failed(exc)
                raise
            self._hw_written = self._hwm
            self._hw_written_ms = now

    def checkpoint_high_watermark(self) -> None:
        """Write ``high-watermark-checkpoint`` now (it is otherwise written lazily on flush and at close)."""
        self._check_writable()
        self._maybe_checkpoint_high_watermark(force=True)

    def _read_storage(self, offset: int, limit: int, max_bytes: int) -> tuple[bytes, int]:
        parts: list[bytes] = []
        first = offset
        budget = max_bytes
        for seg in self._segments[self._segment_index(offset):]:
            if offset >= seg.next_offset:
                continue
            data, base = seg.read(max(offset, seg.base_offset), limit, budget if parts else max_bytes)
            if not data:
                break
            if not parts:
                first = base
            elif len(data) > budget:
                break
            parts.append(data)
            budget -= len(data)
            if budget <= 0 or seg.next_offset >= limit:
                break
            offset = seg.next_offset
        if len(parts) == 1:
            return parts[0], first
        return b"".join(parts), first

    def bytes_between(self, offset: int, limit: int) -> int:
        """The file bytes from the batch holding ``offset`` up to where the first batch ending at or past ``limit``
        starts (over more than one segment when the range crosses one; a segment whose tail positions do not tell
        counts to its end): never less than a read bounded by ``limit`` returns. No file is read: positions come
        from the segments' in-memory tail and index (``LogSegment.locate``)."""
        offset = max(offset, self._start)
        if offset >= limit:
            return 0
        total = 0
        for seg in self._segments[self._segment_index(offset):]:
            if seg.base_offset >= limit:
                break
            if offset >= seg.next_offset:
                continue
            position = seg.locate(max(offset, seg.base_offset))[0] if offset > seg.base_offset else 0
            total += max(seg.stop_before(limit) - position, 0)
        return total

    def read_region(self, offset: int, max_bytes: int, limit: int, min_bytes: int):
        """The consumer Fetch fast path: a ``FileRegion`` of whole batches from the segment holding ``offset``
        (at most ``max_bytes``, at least ``min_bytes``), when that whole segment lies below ``limit`` (the high
        watermark) and nothing of it is only in memory; else None, and the caller reads."""
        if offset < self._start or offset >= limit or self._failed is not None:
            return None
        seg = self._segments[self._segment_index(offset)]
        if seg.next_offset > limit or offset >= seg.next_offset:
            return None
        return seg.region(max(offset, seg.base_offset), max_bytes, min_bytes)

    def timestamp_search_ranges(self, timestamp: int) -> list[tuple[int, int]]:
        """Kafka's lookup by timestamp: segments whose largest batch max timestamp is below ``timestamp`` are
        skipped; in the others the scan starts at the ``.timeindex`` entry (``LogSegment.timestamp_scan_start``).
        One range per such segment (Kafka stops at the first; a caller that skips control batches may need the
        next one)."""
        ranges = []
        for seg in self._segments:
            if seg.max_timestamp >= timestamp and seg.next_offset > seg.base_offset:
                lo = max(seg.timestamp_scan_start(timestamp), self._start)
                if lo < seg.next_offset:
                    ranges.append((lo, seg.next_offset))
        return ranges

    def timestamp_ranges(self) -> list[tuple[int, int, int]]:
        """``(largest batch max timestamp, from, to)`` per non-empty segment: no record in ``[from, to)`` has a
        larger timestamp (ListOffsets max-timestamp looks only where the largest can be)."""
        return [(seg.max_timestamp, max(seg.base_offset, self._start), seg.next_offset) for seg in self._segments
                if seg.next_offset > max(seg.base_offset, self._start)]

    def _batch_start_for(self, offset: int) -> int:
        return self._segments[self._segment_index(offset)].batch_start_for(offset)

    def _truncate_storage(self, offset: int) -> int:
        try:
            self._maybe_inject()
            i = self._segment_index(offset)
            if i + 1 < len(self._segments):
                self._drop_segments_from(i + 1)
                fsync_dir(self.directory)
                self._dir_dirty = False
            seg = self._segments[i]
            new_end = seg.truncate_to(offset)
            rp = self._offset_file(RECOVERY_POINT_CHECKPOINT)
            if (rp.read() or 0) > seg.base_offset:
                rp.write(seg.base_offset)
            return new_end
        except OSError as exc:
            raise self._fail(exc, "truncating") from exc
        except LogIOError as exc:
            self._set_failed(exc)
            raise

    def _reset_storage(self, offset: int) -> None:
        try:
            self._offset_file(LOG_START_CHECKPOINT).write(offset)
            self._drop_segments_from(0)
            self._new_segment(offset)
            self._offset_file(RECOVERY_POINT_CHECKPOINT).write(offset)
            self._dir_dirty = False
        except OSError as exc:
            raise self._fail(exc, "truncating fully") from exc
        except LogIOError as exc:
            self._set_failed(exc)
            raise

    def _delete_storage_before(self, offset: int) -> None:
        try:
            self._offset_file(LOG_START_CHECKPOINT).write(offset)
            # Whole segments only: a segment goes when the next one starts at or below the new log start.
            n = 0
            while n + 1 < len(self._segments) and self._segments[n + 1].base_offset <= offset:
                n += 1
            if n:
                for seg in self._segments[:n]:
                    seg.delete_files()
                del self._segments[:n]
                del self._bases[:n]
                fsync_dir(self.directory)
        except OSError as exc:
            raise self._fail(exc, "deleting old segments") from exc
        except LogIOError as exc:
            self._set_failed(exc)
            raise

    def _epoch_cache_changed(self) -> None:
        try:
            LeaderEpochCheckpointFile(self.directory).write(self._cache.entries())
        except LogIOError as exc:
            self._set_failed(exc)
            raise

    # ------------------------------------------------------------------------------------------------ snapshots

    def _new_snapshot_writer(self, snapshot_id: SnapshotId) -> RawSnapshotWriter:
        return FileRawSnapshotWriter(self.directory, snapshot_id, self._on_snapshot_frozen, self._set_failed)

    def _delete_snapshots(self, snapshot_ids: list[SnapshotId]) -> None:
        try:
            for sid in snapshot_ids:
                os.replace(snapshot_path(self.directory, sid), deleted_path(self.directory, sid))
            fsync_dir(self.directory)
            for sid in snapshot_ids:
                os.unlink(deleted_path(self.directory, sid))
        except OSError as exc:
            raise self._fail(exc, "deleting snapshots") from exc

    def read_snapshot(self, snapshot_id: SnapshotId) -> RawSnapshotReader | None:
        if snapshot_id not in self._snapshots:
            return None
        try:
            return FileRawSnapshotReader(snapshot_path(self.directory, snapshot_id), snapshot_id)
        except FileNotFoundError:
            return None

    def snapshot_timestamp(self, snapshot_id: SnapshotId) -> int | None:
        """The snapshot header's LastContainedLogTimestamp, or the file's mtime if the header cannot be read."""
        ts = super().snapshot_timestamp(snapshot_id)
        if ts is not None or snapshot_id not in self._snapshots:
            return ts
        try:
            return int(os.path.getmtime(snapshot_path(self.directory, snapshot_id)) * 1000)
        except OSError:
            return None

    def maybe_clean(self, now_ms: int | None = None) -> bool:
        """Apply ``retention_bytes`` / ``retention_ms`` (see ``BaseLog.maybe_clean``); ``now_ms`` defaults to the
        log's clock."""
        return super().maybe_clean(self._clock() if now_ms is None else now_ms)

    # ------------------------------------------------------------------------------------------------ closing

    def close(self) -> None:
        """Clean shutdown: flush, write indexes and checkpoints, then the clean-shutdown marker. After an I/O error
        no marker is written, so the next open recovers."""
        if self._closed:
            return
        try:
            if self._failed is None:
                for seg in self._segments:
                    if seg is self._segments[-1]:
                        seg.on_become_inactive()
                    if seg.indexes_dirty:
                        seg.write_indexes(fsync=True)
                    seg.flush()
                fsync_dir(self.directory)
                self._flushed = self._end
                self._maybe_checkpoint_high_watermark(force=True)
                self._offset_file(RECOVERY_POINT_CHECKPOINT).write(self._segments[-1].base_offset)
                write_atomic(self._path(CLEAN_SHUTDOWN), b"")
        except (OSError, LogIOError) as exc:
            self._set_failed(exc)
            raise LogIOError(f"I/O error while closing {self.directory}: {exc}") from exc
        finally:
            self._closed = True
            self._release()

    def _release(self) -> None:
        for seg in self._segments:
            seg.close()
        if self._lock_fd >= 0:
            try:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            finally:
                os.close(self._lock_fd)
                self._lock_fd = -1

    def _simulate_power_loss(self) -> None:
        """Testing hook: the worst case of a power loss — every batch at or above ``flushed_offset()`` is gone
        (even bytes a segment roll happened to fsync), as ``MemoryLog.crash`` models it — and the process's
        handles are dropped without a clean shutdown."""
        cut = self._flushed
        for seg in self._segments:
            if seg.fd < 0 or seg.next_offset <= cut:
                continue
            position = 0 if seg.base_offset >= cut else seg.locate(cut)[0]
            os.ftruncate(seg.fd, position)
        self._closed = True
        self._release()
