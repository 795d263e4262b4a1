"""One log segment in Kafka's on-disk format: ``%020d.log`` + sparse ``.index`` + ``.timeindex``.

* ``.log``: concatenated RecordBatch v2 batches; the file name is the base offset of the first batch.
* ``.index``: 8-byte entries ``(int32 offset - base, int32 file position)``, big-endian, sparse: while appending
  (and when rebuilding), a batch gets an entry when more than ``index_interval_bytes`` were written since the
  last entry; the entry maps the batch's *last* offset to the batch's *position* (Kafka's rule).
* ``.timeindex``: 12-byte entries ``(int64 timestamp, int32 offset - base)``: the largest batch max-timestamp
  seen so far and the last offset of its batch, added with each index entry when the timestamp grew, and once
  more when the segment stops being active.

Both indexes live in memory while the segment is active and are written to disk (then fsynced) when the segment
is rolled or the log closes cleanly; after a crash they are rebuilt from the validated ``.log``, so a flush only
fsyncs the ``.log`` file. Reads use ``os.pread`` and return fresh ``bytes`` (no mmap can change under a reader),
except for the latest ``RECENT_BYTES`` appended, which the active segment keeps as the immutable buffers they were
appended from: a leader reads every append back for each follower's Fetch, for its listeners and for the broker
scan, and serving those from memory (a view, or one join) saves a system call and a copy each time.
"""

from __future__ import annotations

import bisect
import os
import struct
from array import array

from kraftwire.records import MAX_BATCH_SIZE, BatchInfo, validate_batches
from kraftwire.records import api as layout

__all__ = [
    "INDEX_ENTRY",
    "TIME_INDEX_ENTRY",
    "LOG_SUFFIX",
    "INDEX_SUFFIX",
    "TIME_INDEX_SUFFIX",
    "segment_filename",
    "parse_index",
    "parse_time_index",
    "LogSegment",
    "RecoveryResult",
]

#: ``.index`` entry: relative offset, position.
INDEX_ENTRY = struct.Struct(">ii")
#: ``.timeindex`` entry: timestamp, relative offset.
TIME_INDEX_ENTRY = struct.Struct(">qi")

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
#: a topic partition segment's aborted transactions (``kraftwire.replica.transactions``; written by the replica
#: manager, removed with the segment)
TXN_INDEX_SUFFIX = ".txnindex"


def parse_index(data: bytes, base: int, size: int) -> tuple[list[int], list[int], bool]:
    """Read a ``.index`` file's bytes: ``(last offsets, positions, complete)``.

    The entries kept are the leading run that makes sense for a ``.log`` of ``size`` bytes whose base offset is
    ``base``: relative offsets >= 0 and positions in ``[0, size)``, both strictly increasing. ``complete`` is False
    when anything was left out (a bad entry and what follows it, or a partial trailing entry) - a segment rebuilds
    such an index; an offline reader uses the prefix (Kafka preallocates an active segment's index with zeros).
    """
    usable = len(data) - len(data) % INDEX_ENTRY.size
    offsets: list[int] = []
    positions: list[int] = []
    prev_rel = prev_pos = -1
    for rel, pos in INDEX_ENTRY.iter_unpack(memoryview(data)[:usable]):
        if rel <= prev_rel or pos <= prev_pos or pos >= size:
            return offsets, positions, False
        offsets.append(base + rel)
        positions.append(pos)
        prev_rel, prev_pos = rel, pos
    return offsets, positions, usable == len(data)


def parse_time_index(data: bytes, base: int) -> tuple[list[tuple[int, int]], bool]:
    """Read a ``.timeindex`` file's bytes: ``([(max timestamp so far, last offset)], complete)``: the leading run
    with relative offsets >= 0 and non-decreasing, timestamps strictly increasing (``complete`` as in
    :func:`parse_index`)."""
    usable = len(data) - len(data) % TIME_INDEX_ENTRY.size
    out: list[tuple[int, int]] = []
    for ts, rel in TIME_INDEX_ENTRY.iter_unpack(memoryview(data)[:usable]):
        if rel < 0 or (out and (ts <= out[-1][0] or base + rel < out[-1][1])):
            return out, False
        out.append((ts, base + rel))
    return out, usable == len(data)

# Batch header fields the segment reads, derived from the codec's one layout table.
_BASE_AND_LENGTH = struct.Struct(">qi")  # BaseOffset, Length at BASE_OFFSET_POS
assert layout.LENGTH_POS == layout.BASE_OFFSET_POS + 8
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_HEADER_PREFIX = layout.LAST_OFFSET_DELTA_POS + 4  # bytes needed to know a batch's offsets
_INT32_MAX = 2**31 - 1

#: Bytes read at a time when validating or scanning a segment.
SCAN_CHUNK = 16 * 1024 * 1024
#: Bytes read at a time when scanning forward from an index entry to an offset.
LOCATE_CHUNK = 64 * 1024
#: The positions of at least this many of the latest batches are kept in memory (reads are mostly near the end).
TAIL_BATCHES = 1024
#: The active segment serves reads of at least this many of its latest bytes from the appended buffers: enough for
#: a leader's listeners to read commits from memory with the test-server workload's 50,000 records (12.8 MB of
#: 256-byte records) in flight.
RECENT_BYTES = 16 * 1024 * 1024


def segment_filename(base_offset: int, suffix: str = LOG_SUFFIX) -> str:
    return f"{base_offset:020d}{suffix}"


class RecoveryResult:
    """What validating a segment found: ``valid_bytes`` of good batches, the ``infos`` of those batches
    (only when asked), ``reason`` (None when the whole file was valid), and the epochs seen."""

    __slots__ = ("valid_bytes", "reason", "epochs", "truncated_bytes")

    def __init__(self) -> None:
        self.valid_bytes = 0
        self.reason: str | None = None
        self.epochs: list[tuple[int, int]] = []  # (epoch, base offset) of every batch whose epoch changed
        self.truncated_bytes = 0


class LogSegment:
    """A segment's files and in-memory indexes. Not thread-safe by itself; ``SegmentedLog`` serialises writers."""

    def __init__(self, directory: str, base_offset: int, *, index_interval_bytes: int = 4096,
                 max_batch_size: int = MAX_BATCH_SIZE, create: bool = False, created_ms: int = 0) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.max_batch_size = max_batch_size
        self.path = os.path.join(directory, segment_filename(base_offset))
        self.index_path = os.path.join(directory, segment_filename(base_offset, INDEX_SUFFIX))
        self.time_index_path = os.path.join(directory, segment_filename(base_offset, TIME_INDEX_SUFFIX))
        flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
        self.fd = os.open(self.path, flags, 0o644)
        self.size = 0 if create else os.fstat(self.fd).st_size
        self.flushed_size = self.size
        self.next_offset = base_offset
        # Creation time for time-based rolling when batches carry no timestamps (an existing file: its mtime).
        self.created_ms = created_ms if create else int(os.fstat(self.fd).st_mtime * 1000)
        self.first_timestamp: int | None = None
        self.last_epoch = -1
        # Sparse offset index: absolute last offsets and positions, both increasing.
        self.index_offsets = array("q")
        self.index_positions = array("q")
        # Time index: (timestamp, absolute offset) entries with increasing timestamps.
        self.time_entries: list[tuple[int, int]] = []
        self.bytes_since_index = 0
        self.max_timestamp = -1
        self.offset_of_max_timestamp = -1
        self.indexes_dirty = create
        # Every batch tracked lately (base, last offset, position), in order: the fetches, listeners and scans that
        # read just-written data find it without scanning headers forward from the sparse index.
        self._tail_bases = array("q")
        self._tail_lasts = array("q")
        self._tail_positions = array("q")
        # The latest appends as the immutable buffers they came in, with their file positions: the bytes of
        # [_recent_positions[0], size) without a read (empty when they are not all there).
        self._recent: list = []
        self._recent_positions = array("q")
        self._recent_bytes = 0

    # ------------------------------------------------------------------------------------------------ writing

    def _track(self, base: int, last: int, epoch: int, position: int, size: int, max_ts: int) -> None:
        """Index bookkeeping for one batch appended (or recovered) at ``position``."""
        if max_ts > self.max_timestamp:
            self.max_timestamp = max_ts
            self.offset_of_max_timestamp = last
        if self.first_timestamp is None:
            self.first_timestamp = max_ts
        if self.bytes_since_index > self.index_interval_bytes:
            self.index_offsets.append(last)
            self.index_positions.append(position)
            self._maybe_time_entry()
            self.bytes_since_index = 0
        self.bytes_since_index += size
        self.next_offset = last + 1
        self.last_epoch = epoch
        if len(self._tail_lasts) >= 2 * TAIL_BATCHES:
            del self._tail_bases[:TAIL_BATCHES], self._tail_lasts[:TAIL_BATCHES], self._tail_positions[:TAIL_BATCHES]
        self._tail_bases.append(base)
        self._tail_lasts.append(last)
        self._tail_positions.append(position)

    def _maybe_time_entry(self) -> None:
        if self.max_timestamp >= 0 and (not self.time_entries or self.max_timestamp > self.time_entries[-1][0]):
            self.time_entries.append((self.max_timestamp, self.offset_of_max_timestamp))

    def append(self, data: bytes, infos: list[BatchInfo], max_timestamps: list[int]) -> None:
        """Write whole, validated batches at the end of the file (``os.pwrite``; may raise ``OSError``)."""
        position = self.size
        view = memoryview(data)
        written = 0
        while written < len(view):
            written += os.pwrite(self.fd, view[written:], position + written)
        for info, ts in zip(infos, max_timestamps):
            self._track(info.base_offset, info.last_offset, info.partition_leader_epoch,
                        position + info.position, info.size, ts)
        self.size = position + len(data)
        self.indexes_dirty = True
        self._remember(data, position)

    def _remember(self, data, position: int) -> None:
        """Keep ``data`` (written at ``position``) for reads, if nobody can change it: bytes, or a view of bytes."""
        if isinstance(data, memoryview):
            if not isinstance(data.obj, bytes):
                return self._forget()
        elif not isinstance(data, bytes):
            return self._forget()
        self._recent.append(data)
        self._recent_positions.append(position)
        self._recent_bytes += len(data)
        while self._recent_bytes - len(self._recent[0]) >= RECENT_BYTES:
            self._recent_bytes -= len(self._recent.pop(0))
            del self._recent_positions[0]

    def _forget(self) -> None:
        self._recent = []
        self._recent_positions = array("q")
        self._recent_bytes = 0

    def _recent_slice(self, position: int, length: int):
        """The bytes [position, position + length) from the remembered appends (a view when one buffer holds them,
        else one join), or None when they are not all remembered."""
        positions = self._recent_positions
        if not positions or position < positions[0] or position + length > self.size:
            return None
        i = bisect.bisect_right(positions, position) - 1
        start = position - positions[i]
        first = self._recent[i]
        if start + length <= len(first):
            return memoryview(first)[start:start + length]
        parts = [memoryview(first)[start:]]
        need = length - len(parts[0])
        for data in self._recent[i + 1:]:
            if need <= len(data):
                parts.append(memoryview(data)[:need])
                break
            parts.append(data)
            need -= len(data)
        return b"".join(parts)

    def fits(self, offset: int) -> bool:
        """Whether ``offset`` can be stored relative to this segment's base in an int32."""
        return offset - self.base_offset <= _INT32_MAX

    def flush(self) -> None:
        if self.flushed_size < self.size:
            size = self.size
            os.fsync(self.fd)
            self.flushed_size = max(self.flushed_size, size)

    def on_become_inactive(self) -> None:
        """Kafka appends the final max timestamp to the time index when a segment stops being active."""
        self._maybe_time_entry()
        self.indexes_dirty = True
        self._forget()

    def write_indexes(self, *, fsync: bool = True) -> None:
        """Write both index files from memory (exact size, no preallocation)."""
        index = b"".join(
            INDEX_ENTRY.pack(o - self.base_offset, p) for o, p in zip(self.index_offsets, self.index_positions)
        )
        time_index = b"".join(TIME_INDEX_ENTRY.pack(ts, o - self.base_offset) for ts, o in self.time_entries)
        for path, data in ((self.index_path, index), (self.time_index_path, time_index)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                if fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)
        self.indexes_dirty = False

    def truncate_to(self, offset: int) -> int:
        """Drop batches whose last offset is ≥ ``offset``; fsync; return the new next offset."""
        position, _ = self.locate(offset)
        if position >= self.size:
            return self.next_offset
        self._forget()
        os.ftruncate(self.fd, position)
        os.fsync(self.fd)
        self.size = self.flushed_size = position
        self.rebuild_from_headers()
        return self.next_offset

    def rebuild_from_headers(self) -> None:
        """Recompute the indexes and bookkeeping from the (trusted) batch headers of the whole file."""
        self._reset_tracking()
        for base, last, epoch, pos, size, ts in self.scan_headers(0, self.size):
            self._track(base, last, epoch, pos, size, ts)
        self.indexes_dirty = True

    def close(self) -> None:
        self._forget()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def delete_files(self) -> None:
        """Rename to ``.deleted`` then unlink (the caller fsyncs the directory)."""
        self.close()
        txn_index = os.path.join(os.path.dirname(self.path), segment_filename(self.base_offset, TXN_INDEX_SUFFIX))
        for path in (self.path, self.index_path, self.time_index_path, txn_index):
            try:
                os.replace(path, path + ".deleted")
                os.unlink(path + ".deleted")
            except FileNotFoundError:
                pass

    # ------------------------------------------------------------------------------------------------ reading

    def scan_headers(self, start: int, end: int, chunk_size: int = SCAN_CHUNK):
        """Yield (base, last, epoch, position, size, max timestamp) of the batches in [start, end), reading headers
        only (trusted bytes: no CRC). Stops at a header that does not fit before ``end``."""
        pos = start
        while pos < end:
            chunk = os.pread(self.fd, min(chunk_size, end - pos), pos)
            n = len(chunk)
            i = 0
            while i + layout.RECORD_BATCH_OVERHEAD <= n:
                base, length = _BASE_AND_LENGTH.unpack_from(chunk, i + layout.BASE_OFFSET_POS)
                size = length + layout.LOG_OVERHEAD
                if size < layout.RECORD_BATCH_OVERHEAD or pos + i + size > end:
                    return
                last = base + _I32.unpack_from(chunk, i + layout.LAST_OFFSET_DELTA_POS)[0]
                epoch = _I32.unpack_from(chunk, i + layout.PARTITION_LEADER_EPOCH_POS)[0]
                ts = _I64.unpack_from(chunk, i + layout.MAX_TIMESTAMP_POS)[0]
                yield base, last, epoch, pos + i, size, ts
                i += size
            if i == 0:
                return
            pos += i

    def locate(self, offset: int) -> tuple[int, int]:
        """(position, base offset) of the first batch whose last offset is ≥ ``offset``; (size, next) if none."""
        if offset >= self.next_offset:
            return self.size, self.next_offset
        lasts = self._tail_lasts
        if lasts and offset > lasts[0]:  # among the latest batches: consecutive, so no scan is needed
            j = bisect.bisect_left(lasts, offset)
            return self._tail_positions[j], self._tail_bases[j]
        i = bisect.bisect_right(self.index_offsets, offset - 1) - 1
        # index entries map a batch's last offset to its position; start from the last entry whose batch ends
        # before ``offset`` (or the file start) and scan forward.
        start = self.index_positions[i] if i >= 0 else 0
        for base, last, _epoch, pos, _size, _ts in self.scan_headers(start, self.size, LOCATE_CHUNK):
            if last >= offset:
                return pos, base
        return self.size, self.next_offset

    def read(self, offset: int, limit: int, max_bytes: int) -> tuple[bytes | memoryview, int]:
        """Whole batches from the one holding ``offset`` while last offset < ``limit``, ≤ ``max_bytes`` (at least
        one batch). Returns (bytes or a read-only view of them, base offset of the first batch) or (b"", offset).
        One ``pread`` normally."""
        position, _ = self.locate(offset)
        available = self.stop_before(limit) - position
        if available < layout.RECORD_BATCH_OVERHEAD:
            return b"", offset
        want = min(max(max_bytes, layout.RECORD_BATCH_OVERHEAD), available)
        buf = self._recent_slice(position, want)
        if buf is None:
            buf = os.pread(self.fd, want, position)
        base, length = _BASE_AND_LENGTH.unpack_from(buf, 0)
        size = length + layout.LOG_OVERHEAD
        if base + _I32.unpack_from(buf, layout.LAST_OFFSET_DELTA_POS)[0] >= limit:
            return b"", offset
        if size > len(buf):  # the first batch is larger than max_bytes: return it whole anyway
            buf = self._recent_slice(position, size)
            if buf is None:
                buf = os.pread(self.fd, size, position)
        first = base
        end = size
        while end + layout.RECORD_BATCH_OVERHEAD <= len(buf):
            base, length = _BASE_AND_LENGTH.unpack_from(buf, end)
            size = length + layout.LOG_OVERHEAD
            if end + size > len(buf) or base + _I32.unpack_from(buf, end + layout.LAST_OFFSET_DELTA_POS)[0] >= limit:
                break
            end += size
        return (buf if end == len(buf) else memoryview(buf)[:end]), first  # a view: no second copy

    def region(self, offset: int, max_bytes: int, min_bytes: int):
        """Whole batches from the one holding ``offset`` as a ``FileRegion`` of at most ``max_bytes`` and at least
        ``min_bytes``, without reading them: the region ends at the last ``.index`` entry (each is a batch start) or
        the file end that fits. None when no such end fits (the caller reads instead). The caller makes sure every
        batch of the segment is below its read limit."""
        from kraftwire.log.region import FileRegion

        position, base = self.locate(offset)
        if position >= self.size:
            return None
        end = position + max_bytes
        if self.size <= end:
            stop = self.size
        else:
            i = bisect.bisect_right(self.index_positions, end) - 1
            stop = self.index_positions[i] if i >= 0 else position
        if stop - position < max(min_bytes, layout.RECORD_BATCH_OVERHEAD):
            return None
        return FileRegion(self.fd, position, stop - position, base)

    def stop_before(self, limit: int) -> int:
        """A file position no read bounded by ``limit`` needs to pass: where the first batch whose last offset is at
        or above ``limit`` starts, when the latest batches' positions tell (a committed read then leaves the
        uncommitted tail alone); else the file size."""
        lasts = self._tail_lasts
        if limit >= self.next_offset or not lasts or limit <= lasts[0]:
            return self.size
        return self._tail_positions[bisect.bisect_left(lasts, limit)]

    def timestamp_scan_start(self, timestamp: int) -> int:
        """The offset from which a search for the first record with timestamp ≥ ``timestamp`` in this segment may
        start (Kafka's ``TimeIndex.lookup``): the offset of the largest ``.timeindex`` entry whose timestamp is
        ≤ ``timestamp``, else the segment's base offset. Sound because an entry (T, o) is the largest batch max
        timestamp of the segment up to the batch holding ``o``, first reached in that batch: every earlier batch
        holds only timestamps below T ≤ ``timestamp``."""
        times = self.time_entries
        above = bisect.bisect_right(times, timestamp, key=lambda entry: entry[0])  # first entry above the target
        return times[above - 1][1] if above else self.base_offset

    def batch_start_for(self, offset: int) -> int:
        _, base = self.locate(offset)
        return base

    # ------------------------------------------------------------------------------------------------ loading

    def load_trusted(self, *, use_index_files: bool) -> None:
        """Set up after a clean shutdown: load the index files if they are sane (else rebuild them from the
        headers), then scan headers after the last index entry for the next offset. No CRC checks: these bytes
        were validated before they were written."""
        if not (use_index_files and self._load_index_files()):
            self.rebuild_from_headers()
            return
        start = self.index_positions[-1] if len(self.index_positions) else 0
        for base, last, epoch, pos, size, ts in self.scan_headers(start, self.size):
            if ts > self.max_timestamp:
                self.max_timestamp, self.offset_of_max_timestamp = ts, last
            self.bytes_since_index = size if pos == start else self.bytes_since_index + size
            self.next_offset = last + 1
            self.last_epoch = epoch
        for _b, _l, _e, _p, _s, ts in self.scan_headers(0, self.size, layout.RECORD_BATCH_OVERHEAD):
            self.first_timestamp = ts
            break

    def _reset_tracking(self) -> None:
        self.index_offsets = array("q")
        self.index_positions = array("q")
        self._tail_bases = array("q")
        self._tail_lasts = array("q")
        self._tail_positions = array("q")
        self.time_entries = []
        self.bytes_since_index = 0
        self.max_timestamp = -1
        self.offset_of_max_timestamp = -1
        self.next_offset = self.base_offset
        self.first_timestamp = None
        self.last_epoch = -1

    def _load_index_files(self) -> bool:
        try:
            with open(self.index_path, "rb") as f:
                index = f.read()
            with open(self.time_index_path, "rb") as f:
                time_index = f.read()
        except OSError:
            return False
        offsets, positions, index_complete = parse_index(index, self.base_offset, self.size)
        times, times_complete = parse_time_index(time_index, self.base_offset)
        if not (index_complete and times_complete):
            return False
        self.index_offsets, self.index_positions, self.time_entries = array("q", offsets), array("q", positions), times
        if times:
            self.max_timestamp, self.offset_of_max_timestamp = times[-1]
        if len(offsets):
            self.next_offset = offsets[-1] + 1
        self.indexes_dirty = False
        return True

    def recover(self, expected_base: int, prev_epoch: int, *, allow_gaps: bool = False) -> RecoveryResult:
        """Validate the whole file (framing + CRC-32C through the codec's validate-only path, contiguous offsets,
        non-decreasing epochs), rebuild the indexes, and cut the file after the last valid batch (fsynced)."""
        self._reset_tracking()
        result = RecoveryResult()
        pos = 0
        expected = expected_base
        epoch_seen = prev_epoch
        file_size = self.size
        while pos < file_size:
            chunk = os.pread(self.fd, min(SCAN_CHUNK, file_size - pos), pos)
            checked = validate_batches(chunk, self.max_batch_size, check_records=False, stop_at_corruption=True)
            stop = None
            for info in checked.batches:
                if info.base_offset != expected and not (allow_gaps and info.base_offset > expected):
                    stop = f"batch at byte {pos + info.position} has base offset {info.base_offset}, expected {expected}"
                    break
                if info.partition_leader_epoch < max(epoch_seen, 0):
                    stop = (f"batch at byte {pos + info.position} has epoch {info.partition_leader_epoch} below "
                            f"the previous epoch {epoch_seen}")
                    break
                if info.last_offset - self.base_offset > _INT32_MAX:
                    stop = f"batch at byte {pos + info.position} overflows the segment's relative offsets"
                    break
                ts = _I64.unpack_from(chunk, info.position + layout.MAX_TIMESTAMP_POS)[0]
                if info.partition_leader_epoch != epoch_seen:
                    result.epochs.append((info.partition_leader_epoch, info.base_offset))
                    epoch_seen = info.partition_leader_epoch
                self._track(info.base_offset, info.last_offset, info.partition_leader_epoch,
                            pos + info.position, info.size, ts)
                expected = info.last_offset + 1
                result.valid_bytes = pos + info.position + info.size
            if stop is not None:
                result.reason = stop
                break
            if checked.error is not None:
                result.reason = f"corrupt batch at byte {pos + checked.error.position}: {checked.error.reason}"
                break
            chunk_end = pos + len(chunk)
            pos += checked.valid_bytes
            if checked.valid_bytes == 0 or (checked.incomplete and chunk_end >= file_size):
                result.reason = f"incomplete batch at byte {pos}"
                break
        if result.valid_bytes < file_size:
            result.truncated_bytes = file_size - result.valid_bytes
            if result.reason is None:
                result.reason = f"incomplete batch at byte {result.valid_bytes}"
            os.ftruncate(self.fd, result.valid_bytes)
            os.fsync(self.fd)
        self.size = self.flushed_size = result.valid_bytes
        self.indexes_dirty = True
        return result
