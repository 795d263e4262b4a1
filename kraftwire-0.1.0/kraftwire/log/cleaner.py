"""Log compaction (``cleanup.policy=compact``): Kafka's log cleaner for one partition log.

**What is cleaned.** Only whole segments that are not the active one, that lie below the high watermark, and whose
newest record is older than ``min.compaction.lag.ms``. The *dirty* part starts at the partition's line in the log
directory's ``cleaner-offset-checkpoint`` (where the last clean ended; the log start before any); a pass runs when
the dirty bytes are at least ``min.cleanable.dirty.ratio`` of the cleanable bytes, as Kafka chooses.

**How.** The dirty segments' keys go into an offset map (key -> its last offset there), bounded by
``log.cleaner.dedupe.buffer.size`` at Kafka's 24 bytes per entry and 0.9 load factor: when the next segment's keys
would not fit, the pass ends before that segment. Then every cleanable segment up to the end of the mapped part
is rewritten keeping a record unless

* a later record has its key (the map holds a larger offset), or
* it has no key (a compacted topic refuses those on produce; older ones cannot be kept by key), or
* it is a tombstone (null value) whose batch carries a delete horizon that has passed (``now >= horizon``), or
* its batch belongs to an aborted transaction (the partition's ``.txnindex`` entries, given to ``job``): such records
  are not in the offset map either, so an aborted write never hides the committed value of its key.

**Tombstones** (Kafka's KIP-534). The first pass that keeps a tombstone in a batch without a delete horizon stamps
one, ``now + delete.retention.ms``, into the rewritten batch (the RecordBatch v2 Attributes bit 6; BaseTimestamp
becomes the horizon, the records keep their timestamps); the batch's other records and its horizon go on as they
are on later passes, and the tombstone itself goes on the first pass at or after the horizon. So a consumer that
reads from the start within ``delete.retention.ms`` of the clean that first kept a tombstone sees the deletion,
however old the tombstone's own timestamp is. A horizon only passes while passes run: like Kafka's, a log that
gets no new dirty data keeps its tombstones.

Offsets never change: the retained records of a batch become batches of consecutive offsets (a gap between them
where records went), with the batch's compression, timestamps, epoch and producer fields (base sequence moved with
the first record kept). Control batches (transaction markers) are kept whole — Kafka stamps a horizon on a marker
once its transaction's records are gone and removes it after that horizon; kraftwire keeps them, which costs a batch
per transaction and keeps the ``.txnindex`` true — and so is a producer's last batch, so its idempotence state
survives (its tombstones too, until a later batch of the producer lets a pass stamp them).
A segment left empty disappears, except the first.

**Off the loop and crash-safe.** ``job`` (the event loop: which segments, each with a duplicate descriptor),
``plan`` and ``prepare`` (a worker thread: the offset map, then ``<base>.log.cleaned`` files, fsynced, consecutive
segments grouped into one file up to ``segment.bytes``) and ``commit`` (the event loop: each file becomes a swap
file naming the segments it replaces, they are deleted, the swap becomes the first one's ``.log``; the segment is
reopened with its indexes rebuilt in memory, their files written at the next clean shutdown). A crash before the
swap leaves the old segments (the ``.cleaned`` file is a stray the next open deletes); a crash during it leaves a
swap file the next open completes (``loader``).
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left, bisect_right
from typing import NamedTuple

from kraftwire.log.checkpoint import fsync_dir
from kraftwire.log.segment import LogSegment, segment_filename
from kraftwire.records import RecordBatchBuilder, decode_raw_columns, index_keys, read_batches, whole_batches_size
from kraftwire.records.api import BASE_OFFSET_POS, PRODUCER_ID_POS

CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
#: Kafka's SkimpyOffsetMap: a 16-byte hash and an 8-byte offset per entry, filled to 90 %
BYTES_PER_ENTRY = 24
LOAD_FACTOR = 0.9
READ_CHUNK = 1 << 20
_I64_MAX = 2**63 - 1


class CleanerConfig(NamedTuple):
    delete_retention_ms: int = 86_400_000  # delete.retention.ms
    min_compaction_lag_ms: int = 0  # min.compaction.lag.ms
    min_cleanable_dirty_ratio: float = 0.5  # min.cleanable.dirty.ratio
    dedupe_buffer_size: int = 134_217_728  # log.cleaner.dedupe.buffer.size

    @property
    def map_capacity(self) -> int:
        return max(1, int(self.dedupe_buffer_size // BYTES_PER_ENTRY * LOAD_FACTOR))


class CleanPlan(NamedTuple):
    segments: list  # the SegmentViews to rewrite, oldest first
    first_dirty: int
    end: int  # the first offset not cleaned (the next pass's first dirty offset)
    offset_map: dict  # key -> its last offset in [first_dirty, end)
    last_batches: dict  # producer id -> base offset of its last batch in the log


class CleanStats(NamedTuple):
    segments: int
    bytes_before: int
    bytes_after: int
    records_read: int
    records_kept: int
    end: int


class SegmentView(NamedTuple):
    """A segment as the job saw it: its own descriptor (a duplicate: retention may close the segment's meanwhile),
    its base and its size then."""

    segment: LogSegment
    fd: int
    base_offset: int
    next_offset: int
    size: int


class CleanJob(NamedTuple):
    directory: str
    max_batch_size: int
    segment_bytes: int
    first_dirty: int
    cleanable: list  # SegmentViews the pass may rewrite
    others: list  # SegmentViews of the rest (read for producers' last batches)
    aborted: "AbortedRanges | None" = None  # the partition's aborted transactions: their data batches go

    def close(self) -> None:
        for v in self.cleanable + self.others:
            try:
                os.close(v.fd)
            except OSError:
                pass


class AbortedRanges:
    """The offset ranges of a partition's aborted transactions by producer (from its ``.txnindex`` entries, Kafka's
    ``AbortedTxn``: producer id, first offset, marker offset): a transactional data batch of that producer inside
    one of its ranges belongs to an aborted transaction."""

    def __init__(self, entries) -> None:
        self._by_producer: dict[int, list[tuple[int, int]]] = {}
        for e in entries:
            self._by_producer.setdefault(e.producer_id, []).append((e.first_offset, e.last_offset))
        for ranges in self._by_producer.values():
            ranges.sort()
        self._spans = sorted(r for ranges in self._by_producer.values() for r in ranges)

    def __bool__(self) -> bool:
        return bool(self._spans)

    def holds(self, batch) -> bool:
        """Whether ``batch`` is a data batch of an aborted transaction."""
        if not batch.is_transactional or batch.is_control:
            return False
        ranges = self._by_producer.get(batch.producer_id)
        if not ranges:
            return False
        i = bisect_right(ranges, (batch.base_offset, 2**63 - 1)) - 1
        return i >= 0 and ranges[i][0] <= batch.base_offset <= ranges[i][1]

    def overlap(self, base: int, end: int) -> bool:
        """Whether some aborted transaction spans offsets in ``[base, end)``."""
        return any(first < end and last >= base for first, last in self._spans)


def first_dirty_offset(log) -> int:
    checkpointed = log._offset_file(CLEANER_OFFSET_CHECKPOINT).read()
    return max(log.start_offset(), checkpointed if checkpointed is not None else 0)


def cleanable_segments(log, now_ms: int, config: CleanerConfig) -> list[LogSegment]:
    """The segments a pass may rewrite: not the active one, wholly below the high watermark and below the first
    offset of an open transaction (``log.first_unstable_offset``, set by the replica manager: Kafka never cleans
    at or past the last stable offset), and (with ``min.compaction.lag.ms``) none after one holding a record newer
    than the lag."""
    out = []
    hw = log.high_watermark()
    unstable = getattr(log, "first_unstable_offset", None)
    if unstable is not None:
        hw = min(hw, unstable)
    for seg in log._segments[:-1]:
        if seg.next_offset > hw:
            break
        if config.min_compaction_lag_ms > 0 and seg.max_timestamp > now_ms - config.min_compaction_lag_ms:
            break
        out.append(seg)
    return out


def dirty_ratio(log, now_ms: int, config: CleanerConfig) -> float:
    """Dirty bytes over cleanable bytes (Kafka's ``cleanableRatio``)."""
    segs = cleanable_segments(log, now_ms, config)
    first = first_dirty_offset(log)
    dirty = sum(s.size for s in segs if s.next_offset > first)
    total = sum(s.size for s in segs)
    return dirty / total if total else 0.0


def job(log, now_ms: int, config: CleanerConfig, *, force: bool = False, aborted=()) -> CleanJob | None:
    """What a pass may clean, on the thread that owns the log (cheap: sizes only), or None when nothing is dirty
    or the dirty ratio is below ``min.cleanable.dirty.ratio`` (unless ``force``). ``aborted``: the partition's
    aborted transactions (``AbortedTxn`` entries), whose data batches the pass removes, as Kafka's cleaner does."""
    segs = cleanable_segments(log, now_ms, config)
    first = first_dirty_offset(log)
    dirty = [s for s in segs if s.next_offset > first]
    if not dirty:
        return None
    if not force and sum(s.size for s in dirty) < config.min_cleanable_dirty_ratio * sum(s.size for s in segs):
        return None
    chosen = set(id(s) for s in segs)

    def view(seg: LogSegment) -> SegmentView:
        return SegmentView(seg, os.dup(seg.fd), seg.base_offset, seg.next_offset, seg.size)

    return CleanJob(log.directory, log.max_batch_size, log.segment_bytes, first, [view(s) for s in segs],
                    [view(s) for s in log._segments if id(s) not in chosen], AbortedRanges(aborted))


def _chunks(fd: int, size: int, max_batch_size: int):
    """Whole-batch chunks of a segment file of about ``READ_CHUNK`` bytes."""
    pos = 0
    while pos < size:
        chunk = os.pread(fd, min(READ_CHUNK, size - pos), pos)
        whole = whole_batches_size(chunk, max(max_batch_size, len(chunk)))
        if whole == 0:  # one batch larger than the chunk
            whole = int.from_bytes(os.pread(fd, 12, pos)[8:12], "big") + 12
            chunk = os.pread(fd, whole, pos)
        yield chunk[:whole] if whole < len(chunk) else chunk
        pos += whole


def plan(j: CleanJob, config: CleanerConfig) -> CleanPlan:
    """Build the offset map of the dirty segments (as many whole segments as it holds) and find each producer's
    last batch. Off the event loop."""
    first = j.first_dirty
    offset_map: dict[bytes, int] = {}
    capacity = config.map_capacity
    end = first
    for v in j.cleanable:
        if v.next_offset <= first:
            continue
        # at most one new key per offset: when that fits, the keys go straight into the map
        room = len(offset_map) + (v.next_offset - max(v.base_offset, first)) <= capacity
        keys: dict[bytes, int] = offset_map if room else {}
        aborted = j.aborted if j.aborted and j.aborted.overlap(v.base_offset, v.next_offset) else None
        for chunk in _chunks(v.fd, v.size, j.max_batch_size):
            limit = max(j.max_batch_size, len(chunk))
            if aborted is None:
                index_keys(chunk, keys, limit)
                continue
            # an aborted transaction's records never shadow a key: they are not in the map (and go in the rewrite)
            for batch in read_batches(chunk, validate=False, max_batch_size=limit):
                if not aborted.holds(batch):
                    index_keys(batch.buffer, keys, limit)
        if not room:
            if offset_map and len(offset_map) + len(keys.keys() - offset_map.keys()) > capacity:
                break  # the map is full: this segment waits for the next pass
            offset_map.update(keys)
        end = v.next_offset
    last_batches: dict[int, int] = {}
    for v in sorted(j.cleanable + j.others, key=lambda x: x.base_offset):
        for base, pid in _producer_headers(v):
            last_batches[pid] = base
    rewrite = [v for v in j.cleanable if v.base_offset < end]
    return CleanPlan(rewrite, first, end, offset_map, last_batches)


def _producer_headers(v: "SegmentView"):
    """(base offset, producer id) of a segment's batches from idempotent producers, from the headers alone, read
    through the view's own descriptor."""
    pos = 0
    while pos < v.size:
        chunk = os.pread(v.fd, min(READ_CHUNK, v.size - pos), pos)
        i = 0
        while i + PRODUCER_ID_POS + 8 <= len(chunk):
            size = int.from_bytes(chunk[i + 8:i + 12], "big") + 12
            if i + size > len(chunk) and i > 0:
                break
            base = int.from_bytes(chunk[i + BASE_OFFSET_POS:i + BASE_OFFSET_POS + 8], "big", signed=True)
            pid = int.from_bytes(chunk[i + PRODUCER_ID_POS:i + PRODUCER_ID_POS + 8], "big", signed=True)
            if pid >= 0:
                yield base, pid
            i += size
        if i == 0:
            return
        pos += i


def _retain(rec, p: CleanPlan) -> bool:
    """Whether a record of the already-clean part keeps its place by key (tombstones are decided by the batch's
    delete horizon, in ``_cleaned``)."""
    if rec.key is None:
        return False
    latest = p.offset_map.get(rec.key)
    return latest is None or latest <= rec.offset


def _rebuilt(batch, kept: list, delete_horizon_ms: int | None) -> list[bytes]:
    """Batches of consecutive offsets holding ``kept`` (records of ``batch``), with the batch's attributes and
    ``delete_horizon_ms`` (each of them: Kafka keeps a batch's horizon when it rewrites the batch)."""
    out = []
    run: list = []

    def flush() -> None:
        if not run:
            return
        first = run[0].offset
        seq = batch.base_sequence + (first - batch.base_offset) if batch.base_sequence >= 0 else -1
        b = RecordBatchBuilder(base_offset=first, partition_leader_epoch=batch.partition_leader_epoch,
                               compression=batch.compression, is_transactional=batch.is_transactional,
                               producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
                               base_sequence=seq, timestamp_type=batch.timestamp_type,
                               delete_horizon_ms=delete_horizon_ms)
        for r in run:
            b.append(r.key, r.value, r.headers, r.timestamp)
        out.append(b.build())
        run.clear()

    for rec in kept:
        if run and rec.offset != run[-1].offset + 1:
            flush()
        run.append(rec)
    flush()
    return out


class _Rec(NamedTuple):
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple


class _ChunkColumns:
    """A chunk's records as the codec's columns: the surviving records of a batch are picked by offset without a
    record object for each one that goes."""

    def __init__(self, chunk) -> None:
        rc = decode_raw_columns(chunk, validate=False)
        self.offsets = array("q")
        self.offsets.frombytes(rc.offset)
        self.timestamps = array("q")
        self.timestamps.frombytes(rc.timestamp)
        self.key_bounds = array("i")
        self.key_bounds.frombytes(rc.key_offsets)
        self.value_bounds = array("i")
        self.value_bounds.frombytes(rc.value_offsets)
        self.header_bounds = array("i")
        self.header_bounds.frombytes(rc.header_offsets)
        self.key_data, self.value_data = rc.key_data, rc.value_data
        self.key_valid = int.from_bytes(rc.key_validity, "little")
        self.value_valid = int.from_bytes(rc.value_validity, "little")

    def has_tombstone(self, base_offset: int, count: int) -> bool:
        """Whether one of the ``count`` records from ``base_offset`` (a whole batch of the chunk) has a null value."""
        first = self.offsets[0]
        contiguous = self.offsets[-1] - first == len(self.offsets) - 1
        i = base_offset - first if contiguous else bisect_left(self.offsets, base_offset)
        return bool((~self.value_valid >> i) & ((1 << count) - 1))

    def records(self, offsets) -> list[_Rec] | None:
        """The records at ``offsets`` (each present in the chunk), or None when one has headers."""
        out = []
        kb, vb, hb = self.key_bounds, self.value_bounds, self.header_bounds
        first = self.offsets[0]
        contiguous = self.offsets[-1] - first == len(self.offsets) - 1  # row = offset - first: no search
        for off in offsets:
            i = off - first if contiguous else bisect_left(self.offsets, off)
            if hb[i] != hb[i + 1]:
                return None
            key = self.key_data[kb[i]:kb[i + 1]] if (self.key_valid >> i) & 1 else None
            value = self.value_data[vb[i]:vb[i + 1]] if (self.value_valid >> i) & 1 else None
            out.append(_Rec(off, self.timestamps[i], key, value, ()))
        return out


class Prepared(NamedTuple):
    views: list  # the consecutive segments one cleaned file replaces
    path: str
    read: int
    kept: int


def _cleaned(j: CleanJob, p: CleanPlan, v: SegmentView, survivors, now_ms: int,
             config: CleanerConfig) -> tuple[bytes, int, int]:
    """One segment's surviving batches: (bytes, records read, records kept).

    A batch's tombstones stay while it has no delete horizon or ``now_ms`` is before it; a batch keeping a tombstone
    and having no horizon is rewritten with one, ``now_ms + delete.retention.ms`` (Kafka's ``MemoryRecords.filterTo``
    with the cleaner's ``shouldRetainRecord``)."""
    dirty = v.base_offset >= p.first_dirty
    stamp = min(now_ms + config.delete_retention_ms, _I64_MAX)
    read = kept_count = 0
    parts = []
    for chunk in _chunks(v.fd, v.size, j.max_batch_size):
        cols = None  # the chunk's columns, decoded once if a batch keeps some of its records
        for batch in read_batches(chunk, validate=False, max_batch_size=max(j.max_batch_size, len(chunk))):
            count = batch.record_count
            read += count
            if batch.is_control or (batch.producer_id >= 0
                                    and p.last_batches.get(batch.producer_id) == batch.base_offset):
                parts.append(bytes(batch.buffer))  # markers and a producer's last batch stay whole
                kept_count += count
                continue
            if j.aborted and j.aborted.holds(batch):
                continue  # a batch of an aborted transaction: no consumer may ever read it
            horizon = batch.delete_horizon_ms
            expired = horizon is not None and now_ms >= horizon  # its tombstones may go now
            if dirty:
                lo = bisect_left(survivors, batch.base_offset)
                hi = bisect_right(survivors, batch.last_offset)
                if lo == hi:
                    continue  # every record was superseded
                if hi - lo == count and not expired:
                    if horizon is None and cols is None:
                        cols = _ChunkColumns(chunk)
                    if horizon is not None or not cols.has_tombstone(batch.base_offset, count):
                        parts.append(bytes(batch.buffer))  # all kept, nothing to stamp
                        kept_count += count
                        continue
                if cols is None:
                    cols = _ChunkColumns(chunk)
                kept = cols.records(survivors[lo:hi])
                if kept is None:  # a record with headers: the codec's records then
                    alive = set(survivors[lo:hi])
                    kept = [r for r in batch if r.offset in alive]
            else:
                kept = [r for r in batch if _retain(r, p)]
            if expired:
                kept = [r for r in kept if r.value is not None]  # past the horizon: the tombstones go
            new_horizon = horizon
            if horizon is None and any(r.value is None for r in kept):
                new_horizon = stamp  # first pass keeping these tombstones: they stay until now + delete.retention.ms
            elif horizon is not None and horizon < 0:
                new_horizon = None  # a stray bit with a negative BaseTimestamp: no horizon (Kafka's builder drops it)
            kept_count += len(kept)
            if len(kept) == count and new_horizon == horizon:
                parts.append(bytes(batch.buffer))
            elif kept:
                parts.extend(_rebuilt(batch, kept, new_horizon))
    return b"".join(parts), read, kept_count


def prepare(j: CleanJob, p: CleanPlan, now_ms: int, config: CleanerConfig) -> list[Prepared]:
    """Write the cleaned files, fsynced, off the event loop: consecutive segments whose cleaned bytes fit in
    ``segment.bytes`` (and whose offsets fit the first one's int32 index) share one file, as Kafka groups them, so a
    compacted log does not keep a tiny segment per old one.

    In the dirty part a record survives exactly when its offset is its key's entry in the map, so a batch is
    decided from the sorted surviving offsets alone — dropped, or copied whole (after a look at its values'
    null flags when it has no delete horizon yet); only a batch keeping some of its records, holding tombstones
    past its horizon or getting one is rebuilt."""
    survivors = array("q", sorted(p.offset_map.values()))
    out: list[Prepared] = []
    group: list = []
    datas: list[bytes] = []
    size = read = kept = 0

    def flush() -> None:
        if not group:
            return
        path = os.path.join(j.directory, segment_filename(group[0].base_offset) + CLEANED_SUFFIX)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(b"".join(datas))
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        out.append(Prepared(list(group), path, read, kept))

    for v in p.segments:
        data, n_read, n_kept = _cleaned(j, p, v, survivors, now_ms, config)
        fits = group and size + len(data) <= j.segment_bytes and v.next_offset - group[0].base_offset <= 2**31 - 1
        if group and not fits:
            flush()
            group, datas, size, read, kept = [], [], 0, 0, 0
        group.append(v)
        datas.append(data)
        size += len(data)
        read += n_read
        kept += n_kept
    flush()
    return out


def discard(prepared: list[Prepared]) -> None:
    for item in prepared:
        try:
            os.unlink(item.path)
        except FileNotFoundError:
            pass


def commit(log, p: CleanPlan, prepared: list[Prepared]) -> CleanStats:
    """Swap the cleaned files in, on the thread that owns the log. For each file: it is renamed
    ``<base>.log.<end>.swap`` (the segments it replaces, by base offset), those segments are deleted, and the swap
    becomes ``<base>.log``; an open that finds a swap completes it (``loader``), so a crash at any point leaves
    either the old segments or the new one. A group whose segments the log no longer holds as they were (retention or
    DeleteRecords removed one meanwhile) keeps its old files; the checkpoint moves to ``p.end`` only when every group
    was swapped."""
    before = after = read = kept = swapped = 0
    complete = True
    for item in prepared:
        segs = [v.segment for v in item.views]
        first = next((k for k, s in enumerate(log._segments) if s is segs[0]), None)
        if (first is None or log._segments[first:first + len(segs)] != segs
                or first + len(segs) >= len(log._segments)
                or any(s.size != v.size for s, v in zip(segs, item.views))):
            os.unlink(item.path)
            complete = False
            continue
        base = segs[0].base_offset
        end = log._segments[first + len(segs)].base_offset
        swap = os.path.join(log.directory, f"{segment_filename(base)}.{end:020d}{SWAP_SUFFIX}")
        os.replace(item.path, swap)
        fsync_dir(log.directory)
        for seg in segs:
            seg.delete_files()
        os.replace(swap, segs[0].path)
        fsync_dir(log.directory)
        fresh = LogSegment(log.directory, base, index_interval_bytes=log.index_interval_bytes,
                           max_batch_size=log.max_batch_size)
        fresh.rebuild_from_headers()  # its index files are written at the next close; a crash first rebuilds them
        before += sum(v.size for v in item.views)
        after += fresh.size
        read += item.read
        kept += item.kept
        swapped += len(segs)
        if fresh.size == 0 and first > 0:
            fresh.delete_files()
            del log._segments[first:first + len(segs)]
            del log._bases[first:first + len(segs)]
        else:
            log._segments[first:first + len(segs)] = [fresh]
            log._bases[first:first + len(segs)] = [base]
    fsync_dir(log.directory)
    if complete:
        log._offset_file(CLEANER_OFFSET_CHECKPOINT).write(p.end)
    return CleanStats(swapped, before, after, read, kept, p.end)


def clean(log, now_ms: int, config: CleanerConfig | None = None, *, force: bool = False,
          aborted=()) -> CleanStats | None:
    """One whole pass on the calling thread (tests, tools); the broker runs ``plan`` and ``prepare`` off the loop
    between ``job`` and ``commit`` on it."""
    config = config or CleanerConfig()
    j = job(log, now_ms, config, force=force, aborted=aborted)
    if j is None:
        return None
    try:
        p = plan(j, config)
        return commit(log, p, prepare(j, p, now_ms, config))
    finally:
        j.close()


__all__ = ["AbortedRanges", "CLEANER_OFFSET_CHECKPOINT", "CleanJob", "CleanerConfig", "CleanPlan", "CleanStats", "clean", "commit",
           "dirty_ratio", "discard", "first_dirty_offset", "job", "plan", "prepare"]
