"""Opening a ``SegmentedLog``: lock, clean-up, segment loading and crash recovery, epoch cache and snapshots
(Kafka's LogLoader, in our words). A friend module of ``segmented.py``: it sets up the log's private state.

After a clean shutdown (the ``clean-shutdown`` marker) segments are trusted: index files are loaded if sane, else
rebuilt from the batch headers. After a crash, segments from the recovery point on are validated (framing, CRC-32C,
contiguous offsets, non-decreasing epochs), cut after the last valid batch, and later segments are dropped. The
epoch cache is the checkpoint plus the epochs recovery saw, cut to [log start, end]. Partial (``.part``) and
``.deleted`` snapshots, ``.tmp`` files and orphan indexes are removed; snapshots below the log start are deleted.
Everything kept is fsynced before the log is used, then the log is truncated to the latest snapshot if that lies
beyond it (as KafkaMetadataLog does at open).
"""

from __future__ import annotations

import fcntl
import os
import re
import uuid

from kraftwire.errors import LogError, LogLockedError
from kraftwire.ids import METADATA_TOPIC_ID
from kraftwire.log.checkpoint import LeaderEpochCheckpointFile, PartitionMetadataFile, fsync_dir
from kraftwire.log.epoch_cache import CheckpointFormatError, LeaderEpochCache
from kraftwire.log.segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, LogSegment
from kraftwire.snapshot.paths import SnapshotFileKind, parse_snapshot_path

__all__ = [
    "load",
    "CLEAN_SHUTDOWN",
    "LOCK_FILE",
    "HIGH_WATERMARK_CHECKPOINT",
    "LOG_START_CHECKPOINT",
    "RECOVERY_POINT_CHECKPOINT",
]

CLEAN_SHUTDOWN = "clean-shutdown"
LOCK_FILE = ".lock"
HIGH_WATERMARK_CHECKPOINT = "high-watermark-checkpoint"
LOG_START_CHECKPOINT = "log-start-offset-checkpoint"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"

_SEGMENT_NAME = re.compile(r"^(\d{20})\.log$")
_STRAY_SUFFIXES = (".deleted", ".cleaned", ".swap", ".tmp")


def load(log, topic_id: uuid.UUID | None) -> None:
    created = not os.path.isdir(log.directory)
    if created:
        os.makedirs(log.directory, exist_ok=True)
        fsync_dir(os.path.dirname(log.directory))
    log._lock_fd = os.open(log._path(LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(log._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(log._lock_fd)
        log._lock_fd = -1
        raise LogLockedError(f"{log.directory} is locked by another process (or another open log)") from None

    pm = PartitionMetadataFile(log.directory)
    existing = pm.read()
    if existing is None:
        pm.write(topic_id or METADATA_TOPIC_ID)
        log.topic_id = topic_id or METADATA_TOPIC_ID
    else:
        if topic_id is not None and topic_id != existing:
            raise LogError(f"{log.directory} holds topic id {existing}, not {topic_id}")
        log.topic_id = existing

    clean = os.path.exists(log._path(CLEAN_SHUTDOWN))
    if clean:
        os.unlink(log._path(CLEAN_SHUTDOWN))
        fsync_dir(log.directory)
    _remove_strays(log)

    start_cp = log._offset_file(LOG_START_CHECKPOINT).read() or 0
    recovery_point = log._offset_file(RECOVERY_POINT_CHECKPOINT).read() or 0
    bases = sorted(
        int(m.group(1)) for m in (_SEGMENT_NAME.match(n) for n in os.listdir(log.directory)) if m is not None
    )
    cache = _load_epoch_cache(log)
    recovered_epochs: list[tuple[int, int]] = []
    expected: int | None = None
    prev_epoch = -1
    trusted_below = recovery_point if not clean else float("inf")
    for i, base in enumerate(bases):
        seg = LogSegment(log.directory, base, index_interval_bytes=log.index_interval_bytes,
                         max_batch_size=log.max_batch_size)
        log._segments.append(seg)
        log._bases.append(base)
        gaps = log.allow_offset_gaps  # a compacted log's segment may end before the next one's base
        if expected is not None and (base < expected if gaps else base != expected):
            log.recovery_report.append(f"segment {base} does not follow the previous one (expected {expected})")
            log._drop_segments_from(i)
            break
        next_base = bases[i + 1] if i + 1 < len(bases) else None
        if clean or (next_base is not None and next_base <= trusted_below):
            seg.load_trusted(use_index_files=True)
            trusted_ok = next_base is None or (seg.next_offset <= next_base if gaps else seg.next_offset == next_base)
        else:
            trusted_ok = False
        if not trusted_ok:
            result = seg.recover(base, prev_epoch, allow_gaps=gaps)
            recovered_epochs.extend(result.epochs)
            if result.reason:
                log.recovery_report.append(f"{seg.path}: {result.reason}; cut {result.truncated_bytes} bytes")
        expected = seg.next_offset
        if seg.last_epoch >= 0:
            prev_epoch = seg.last_epoch
    if not log._segments:
        log._new_segment(start_cp)
    log._start = max(start_cp, log._segments[0].base_offset)
    log._end = log._segments[-1].next_offset
    if log._start > log._end:
        log._drop_segments_from(0)
        log._new_segment(log._start)
        log._end = log._start
    log.recovery_report.insert(0, "clean" if clean else "recovered")

    # Epoch cache: the checkpoint cut at the recovered end, plus what recovery saw.
    if cache is None:
        cache = _rebuild_epoch_cache(log)
    before = cache.entries()
    for epoch, offset in recovered_epochs:
        if epoch >= 0:
            cache.assign(epoch, offset)
    # After a crash an epoch starting at the end offset may belong to lost batches (the memory log drops it
    # too); after a clean shutdown it was durable (initialize_leader_epoch with no batch yet) and stays.
    cache.truncate_from_start(log._start)
    cache.truncate_from_end(log._end + 1 if clean else log._end)
    log._cache = cache
    # a new log's empty cache needs no file (an absent checkpoint reads as empty): a broker creating thousands of
    # partitions at once spends its time in these fsyncs
    if cache.entries() != before or (not created and not os.path.exists(log._path(LeaderEpochCheckpointFile.NAME))):
        LeaderEpochCheckpointFile(log.directory).write(cache.entries())

    _load_snapshots(log)
    if log.snapshots_cover_start and log._start > 0 and not any(s.end_offset >= log._start for s in log._snapshots):
        raise LogError(
            f"inconsistent snapshot state in {log.directory}: the log starts at {log._start} but no snapshot "
            "covers that offset"
        )

    # Everything kept is durable now: fsync what recovery looked at and checkpoint the recovery point.
    for seg in log._segments:
        if seg is not log._segments[-1] and seg.indexes_dirty:
            seg.on_become_inactive()
            seg.write_indexes(fsync=True)
        if not created:  # a new log's one segment is empty: the directory's fsync below is what makes it exist
            os.fsync(seg.fd)
        seg.flushed_size = seg.size
    fsync_dir(log.directory)
    if not created or log._segments[-1].base_offset:  # absent, the recovery point reads as 0
        log._offset_file(RECOVERY_POINT_CHECKPOINT).write(log._segments[-1].base_offset)
    log._flushed = log._end
    hw = log._offset_file(HIGH_WATERMARK_CHECKPOINT).read()
    log._hwm = max(log._start, min(hw if hw is not None else 0, log._end))
    log._hw_written = hw
    log._hw_written_ms = log._clock()
    log.truncate_to_latest_snapshot()

#: a cleaner's swap file: ``<base>.log.<end>.swap`` replaces every segment whose base lies in ``[base, end)``
_SWAP_NAME = re.compile(r"^(\d{20})\.log\.(\d{20})\.swap$")


def _complete_swaps(log) -> None:
    """A cleaner swap the process did not finish (``kraftwire.log.cleaner``): the swap file holds everything the
    segments it replaces still needed, so those go and it takes the first one's place."""
    for name in sorted(os.listdir(log.directory)):
        m = _SWAP_NAME.match(name)
        if m is None:
            continue
        base, end = int(m.group(1)), int(m.group(2))
        for other in os.listdir(log.directory):
            seg = _SEGMENT_NAME.match(other)
            if seg is not None and base <= int(seg.group(1)) < end:
                stem = other[: -len(LOG_SUFFIX)]
                for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX):
                    try:
                        os.unlink(log._path(stem + suffix))
                    except FileNotFoundError:
                        pass
        os.replace(log._path(name), log._path(f"{base:020d}{LOG_SUFFIX}"))
        fsync_dir(log.directory)


def _remove_strays(log) -> None:
    _complete_swaps(log)
    for name in os.listdir(log.directory):
        path = log._path(name)
        parsed = parse_snapshot_path(name)
        if parsed is not None and parsed.kind is not SnapshotFileKind.FROZEN:
            os.unlink(path)
        elif name.endswith(_STRAY_SUFFIXES):
            os.unlink(path)
        elif name.endswith((INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)):
            stem = name.rsplit(".", 1)[0]
            if not os.path.exists(log._path(stem + LOG_SUFFIX)):
                os.unlink(path)

def _load_epoch_cache(log) -> LeaderEpochCache | None:
    try:
        entries = LeaderEpochCheckpointFile(log.directory).read()
    except (CheckpointFormatError, ValueError):
        return None
    if not entries and not os.path.exists(log._path(LeaderEpochCheckpointFile.NAME)):
        return None
    return LeaderEpochCache(entries)

def _rebuild_epoch_cache(log) -> LeaderEpochCache:
    cache = LeaderEpochCache()
    for seg in log._segments:
        for base, _last, epoch, _pos, _size, _ts in seg.scan_headers(0, seg.size):
            if epoch >= 0:
                cache.assign(epoch, base)
    return cache

def _load_snapshots(log) -> None:
    for name in os.listdir(log.directory):
        parsed = parse_snapshot_path(name)
        if parsed is None or parsed.kind is not SnapshotFileKind.FROZEN:
            continue
        if parsed.snapshot_id.end_offset < log._start:
            os.unlink(parsed.path if os.path.isabs(parsed.path) else log._path(name))
            continue
        log._snapshots[parsed.snapshot_id] = os.path.getsize(log._path(name))
