"""In-memory ``ReplicatedLog`` for the deterministic simulation. Pure: no files, no clock, no randomness.

It keeps whole RecordBatch v2 batches as immutable ``bytes`` and models durability honestly:

* ``flush()`` marks everything appended so far durable (``flushed_offset``).
* ``crash()`` simulates a hard kill and restart: every batch at or above the flushed offset is lost, epoch-cache
  entries starting there go too, the high watermark falls back to the log start, an unfrozen snapshot writer
  is abandoned, and (as at every open) the log is truncated to the latest snapshot if that lies beyond it. Truncations, snapshot freezes and log-start moves are durable when they return (the file log
  fsyncs them), so a crash keeps them.
* ``inject_io_error()`` makes the next write fail with ``LogIOError``, after which the log refuses all writes
  (fail-stop), as the file log does after an ``OSError``.
"""

from __future__ import annotations

import bisect
import uuid

from kraftwire.errors import LogError, LogIOError
from kraftwire.ids import METADATA_TOPIC_ID, SnapshotId
from kraftwire.log.api import RawSnapshotReader, RawSnapshotWriter
from kraftwire.log.base import BaseLog
from kraftwire.log.epoch_cache import LeaderEpochCache
from kraftwire.log.partition_rules import PartitionLogRules, SegmentInfo
from kraftwire.records import MAX_BATCH_SIZE, BatchInfo
from kraftwire.records.api import MAX_TIMESTAMP_POS

__all__ = ["MemoryLog", "MemoryPartitionLog", "MemorySnapshotReader", "MemorySnapshotWriter"]


class MemorySnapshotReader:
    """A frozen in-memory snapshot."""

    def __init__(self, snapshot_id: SnapshotId, data: bytes) -> None:
        self._id = snapshot_id
        self._data = data

    @property
    def snapshot_id(self) -> SnapshotId:
        return self._id

    def size_in_bytes(self) -> int:
        return len(self._data)

    def slice(self, position: int, max_bytes: int) -> bytes:
        if position < 0 or position > len(self._data):
            raise ValueError(f"position {position} is outside the snapshot (size {len(self._data)})")
        return self._data[position : position + max_bytes]

    def records(self) -> bytes:
        return self._data

    def close(self) -> None:
        pass


class MemorySnapshotWriter:
    """Collects bytes; ``freeze`` hands them to the log, which then lists the snapshot."""

    def __init__(self, log: "MemoryLog", snapshot_id: SnapshotId) -> None:
        self._log = log
        self._id = snapshot_id
        self._buf = bytearray()
        self._frozen = False
        self._closed = False
        self._generation = log._generation

    @property
    def snapshot_id(self) -> SnapshotId:
        return self._id

    def size_in_bytes(self) -> int:
        return len(self._buf)

    def append(self, data: bytes | memoryview) -> None:
        if self._frozen or self._closed:
            raise LogError(f"snapshot {self._id} is {'frozen' if self._frozen else 'closed'}; cannot append")
        self._log._maybe_fail()
        self._buf += data

    def freeze(self) -> None:
        if self._frozen:
            raise LogError(f"snapshot {self._id} is already frozen")
        if self._closed:
            raise LogError(f"snapshot {self._id} was closed before it was frozen")
        if self._generation != self._log._generation:
            raise LogError(f"snapshot {self._id} was abandoned by a crash")
        self._log._maybe_fail()
        self._frozen = True
        self._log._freeze_snapshot(self._id, bytes(self._buf))

    def close(self) -> None:
        self._closed = True


class _Batch:
    __slots__ = ("base_offset", "last_offset", "epoch", "data")

    def __init__(self, base_offset: int, last_offset: int, epoch: int, data: bytes) -> None:
        self.base_offset = base_offset
        self.last_offset = last_offset
        self.epoch = epoch
        self.data = data


class MemoryLog(BaseLog):
    """``ReplicatedLog`` held in memory. ``MemoryLog(topic_id=METADATA_TOPIC_ID, *, max_batch_size=8 MiB,
    retention_bytes=-1, retention_ms=-1)`` (retention off unless set; ``maybe_clean(now_ms)`` applies it)."""

    def __init__(self, topic_id: uuid.UUID = METADATA_TOPIC_ID, *, max_batch_size: int = MAX_BATCH_SIZE,
                 retention_bytes: int = -1, retention_ms: int = -1) -> None:
        self.topic_id = topic_id
        self.max_batch_size = max_batch_size
        self.retention_bytes = retention_bytes
        self.retention_ms = retention_ms
        self._batches: list[_Batch] = []
        self._last_offsets: list[int] = []  # parallel to _batches, for bisect
        self._snapshot_data: dict[SnapshotId, bytes] = {}
        self._snapshots: dict[SnapshotId, int] = {}
        self._cache = LeaderEpochCache()
        self._start = self._end = self._flushed = self._hwm = 0
        self._failed = None
        self._closed = False
        self._fail_next = False
        self._generation = 0

    def __repr__(self) -> str:
        return (
            f"MemoryLog(start={self._start}, end={self._end}, flushed={self._flushed}, hwm={self._hwm}, "
            f"epochs={[(e.epoch, e.start_offset) for e in self._cache.entries()]}, snapshots={sorted(self._snapshots)})"
        )

    # ------------------------------------------------------------------------------------------------ faults

    def crash(self) -> None:
        """Simulate a hard kill + restart: unflushed batches (and epochs starting there) are lost."""
        keep = bisect.bisect_left([b.base_offset for b in self._batches], self._flushed)
        del self._batches[keep:]
        del self._last_offsets[keep:]
        self._end = self._flushed
        self._cache.truncate_from_end(self._end)
        self._hwm = self._start
        self._generation += 1
        self._failed = None
        self._fail_next = False
        self._closed = False
        # As the file log does when it opens (and KafkaMetadataLog): a snapshot beyond the log replaces the log.
        self.truncate_to_latest_snapshot()

    def inject_io_error(self) -> None:
        """The next write (append, flush, truncate, snapshot write) fails with ``LogIOError``; then fail-stop."""
        self._fail_next = True

    def _maybe_fail(self) -> None:
        if self._fail_next:
            self._fail_next = False
            self._failed = OSError(5, "injected I/O error")
            raise LogIOError(f"injected I/O error: {self._failed}")

    def _check_writable(self) -> None:
        super()._check_writable()
        self._maybe_fail()

    def batches(self) -> list[tuple[int, int, int, bytes]]:
        """(base offset, last offset, epoch, bytes) of every batch, for tests and invariants."""
        return [(b.base_offset, b.last_offset, b.epoch, b.data) for b in self._batches]

    def close(self) -> None:
        self._closed = True

    def size_in_bytes(self) -> int:
        return sum(len(b.data) for b in self._batches)

    # ------------------------------------------------------------------------------------------------ hooks

    def _append_storage(self, data: bytes | memoryview, infos: list[BatchInfo]) -> None:
        if not isinstance(data, bytes):
            data = bytes(data)  # kept as the batch itself: it must not change under us
        if len(infos) == 1:
            i = infos[0]
            self._batches.append(_Batch(i.base_offset, i.last_offset, i.partition_leader_epoch, data))
            self._last_offsets.append(i.last_offset)
            return
        for i in infos:
            chunk = data[i.position : i.position + i.size]
            self._batches.append(_Batch(i.base_offset, i.last_offset, i.partition_leader_epoch, chunk))
            self._last_offsets.append(i.last_offset)

    def _index_of(self, offset: int) -> int:
        """Index of the first batch whose last offset is ≥ ``offset``."""
        return bisect.bisect_left(self._last_offsets, offset)

    def _read_storage(self, offset: int, limit: int, max_bytes: int) -> tuple[bytes, int]:
        i = self._index_of(offset)
        out: list[bytes] = []
        size = 0
        first = offset
        while i < len(self._batches):
            b = self._batches[i]
            if b.last_offset >= limit:
                break
            if out and size + len(b.data) > max_bytes:
                break
            if not out:
                first = b.base_offset
            out.append(b.data)
            size += len(b.data)
            i += 1
        return b"".join(out), first

    def _batch_start_for(self, offset: int) -> int:
        i = self._index_of(offset)
        return self._batches[i].base_offset if i < len(self._batches) else offset

    def _truncate_storage(self, offset: int) -> int:
        i = self._index_of(offset)
        del self._batches[i:]
        del self._last_offsets[i:]
        return self._batches[-1].last_offset + 1 if self._batches else self._start

    def _reset_storage(self, offset: int) -> None:
        self._batches.clear()
        self._last_offsets.clear()

    def _delete_storage_before(self, offset: int) -> None:
        i = self._index_of(offset)
        del self._batches[:i]
        del self._last_offsets[:i]

    def _flush_storage(self) -> None:
        pass

    def _epoch_cache_changed(self) -> None:
        pass

    # ------------------------------------------------------------------------------------------------ snapshots

    def _new_snapshot_writer(self, snapshot_id: SnapshotId) -> RawSnapshotWriter:
        return MemorySnapshotWriter(self, snapshot_id)

    def _freeze_snapshot(self, snapshot_id: SnapshotId, data: bytes) -> None:
        if snapshot_id not in self._snapshots:
            self._snapshot_data[snapshot_id] = data
            self._on_snapshot_frozen(snapshot_id, len(data))

    def _delete_snapshots(self, snapshot_ids: list[SnapshotId]) -> None:
        for s in snapshot_ids:
            self._snapshot_data.pop(s, None)

    def read_snapshot(self, snapshot_id: SnapshotId) -> RawSnapshotReader | None:
        data = self._snapshot_data.get(snapshot_id)
        return None if data is None else MemorySnapshotReader(snapshot_id, data)


class MemoryPartitionLog(PartitionLogRules, MemoryLog):
    """A topic partition's log in memory, for the partition simulation: ``MemoryLog`` with the partition rules
    (each batch counts as a segment for retention)."""

    def segment_infos(self) -> list:
        return [SegmentInfo(b.base_offset, len(b.data), int.from_bytes(b.data[MAX_TIMESTAMP_POS:MAX_TIMESTAMP_POS + 8], 'big', signed=True))
                for b in self._batches]

    def _roll_empty_segment(self) -> None:
        pass  # batches are the segments here
