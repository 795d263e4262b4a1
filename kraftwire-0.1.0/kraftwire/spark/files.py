"""Finding what to read under a PATH and cutting it into byte ranges (no Spark, no pyarrow: plain file reads).

PATH forms (comma-separated, each may be a glob): a log dir (a broker's or controller's ``log.dirs`` entry: it holds
``<topic>-<partition>/`` partition dirs, ``__cluster_metadata-0`` among them), a partition dir (it holds
``%020d.log`` segments), a single ``.log`` segment, or a ``.checkpoint`` snapshot. Every file carries its partition
dir's topic and partition (the dir name split at its *last* dash: ``orders.v1-eu-3`` is topic ``orders.v1-eu``,
partition 3); a :class:`Selection` skips whole partition dirs before anything in them is read.

High watermarks (the ``committed`` column, the audit's bound): a partition dir with its own
``high-watermark-checkpoint`` is a Raft log (``__cluster_metadata-0``); any other partition's comes from its log
dir's ``replication-offset-checkpoint`` (Kafka's per-log-dir file, ``topic partition offset`` lines).

A *range* is ``[start, end)`` bytes of one file starting and ending on batch boundaries. Ranges come from
the segment's sparse ``.index`` (entries map a batch's last offset to the batch's position, Kafka's rule): a
large segment is split at index positions, and an offset bound skips the index-covered prefix/suffix. Index
entries are trusted only after the batch header at the position agrees with them (one 61-byte read each), so a
stale index (a live node's active segment after a truncation) never makes a range start mid-batch; the
``.timeindex`` is trusted only when it is not older than its ``.log`` file. Without a usable index a segment is one
range (no header scan at planning time).
"""

from __future__ import annotations

import bisect
import glob
import os
import re
import struct
from dataclasses import dataclass
from typing import Optional

from kraftwire.log.checkpoint import OffsetCheckpointFile, parse_offset_checkpoint, read_file_or_none
from kraftwire.log.loader import HIGH_WATERMARK_CHECKPOINT
from kraftwire.log.meta_properties import MetaPropertiesError, read_meta_properties
from kraftwire.log.partition_log import REPLICATION_OFFSET_CHECKPOINT, parse_partition_dir
from kraftwire.log.segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, parse_index, parse_time_index
from kraftwire.records import api as layout
from kraftwire.snapshot.paths import SnapshotFileKind, parse_snapshot_path

__all__ = ["LogFile", "FileRange", "Bounds", "Selection", "resolve", "plan", "partition_info", "topic_partition"]

_SEGMENT_NAME = re.compile(r"^(\d{20})\.log$")
_BASE_LENGTH = struct.Struct(">qi")
_I32 = struct.Struct(">i")


@dataclass(frozen=True)
class Bounds:
    """Inclusive offset/timestamp bounds from options and pushed filters (None = unbounded)."""

    offset_lo: Optional[int] = None
    offset_hi: Optional[int] = None  # inclusive
    ts_lo: Optional[int] = None
    ts_hi: Optional[int] = None  # inclusive

    def empty(self) -> bool:
        return ((self.offset_lo is not None and self.offset_hi is not None and self.offset_lo > self.offset_hi)
                or (self.ts_lo is not None and self.ts_hi is not None and self.ts_lo > self.ts_hi))


@dataclass(frozen=True)
class LogFile:
    """One file to read: a segment (``base`` = its base offset, ``next_base`` = the next segment's) or a snapshot."""

    path: str
    kind: str  # "segment" | "snapshot"
    size: int
    node: Optional[int]
    high_watermark: Optional[int]
    base: int = 0
    next_base: Optional[int] = None
    topic: Optional[str] = None  # from the partition dir's name (None: not a ``<topic>-<partition>`` name)
    partition: Optional[int] = None


@dataclass(frozen=True)
class Selection:
    """Which partition dirs to read (options ``topics``/``topicPattern`` and pushed ``topic``/``partition``
    filters); None everywhere = all. Exact: a dir is read iff its topic and partition pass every part."""

    topics: Optional[frozenset] = None
    pattern: Optional[str] = None  # a regex the whole topic name must match (as Kafka's pattern subscription)
    partitions: Optional[frozenset] = None

    def all(self) -> bool:
        return self.topics is None and self.pattern is None and self.partitions is None

    def empty(self) -> bool:
        return (self.topics is not None and not self.topics) or (self.partitions is not None and not self.partitions)

    def wants(self, topic: Optional[str], partition: Optional[int]) -> bool:
        if self.all():
            return True
        if topic is None:
            return False  # a dir with no topic name can satisfy no topic/partition condition
        if self.topics is not None and topic not in self.topics:
            return False
        if self.partitions is not None and partition not in self.partitions:
            return False
        return self.pattern is None or re.fullmatch(self.pattern, topic) is not None


@dataclass(frozen=True)
class FileRange:
    """Bytes ``[start, end)`` of ``file``; picklable (the InputPartition carries one)."""

    file: LogFile
    start: int
    end: int


def topic_partition(partition_dir: str) -> tuple[Optional[str], Optional[int]]:
    """(topic, partition) from a partition dir's name, split at the last dash; (None, None) for other names."""
    parsed = parse_partition_dir(os.path.basename(os.path.normpath(partition_dir)))
    return (None, None) if parsed is None else parsed


def _root_checkpoint(log_dir: str, cache: Optional[dict]) -> dict:
    """The ``replication-offset-checkpoint`` entries of ``log_dir`` ({} when absent or unreadable), read once per
    ``cache``."""
    if cache is not None and log_dir in cache:
        return cache[log_dir]
    text = read_file_or_none(os.path.join(log_dir, REPLICATION_OFFSET_CHECKPOINT))
    try:
        entries = parse_offset_checkpoint(text) if text is not None else {}
    except ValueError:
        entries = {}
    if cache is not None:
        cache[log_dir] = entries
    return entries


def partition_info(partition_dir: str, cache: Optional[dict] = None) -> tuple[Optional[int], Optional[int]]:
    """(node id from the parent's ``meta.properties`` or the dir's own, checkpointed high watermark) — None if absent.

    The high watermark: the dir's own ``high-watermark-checkpoint`` (a Raft log, as ``__cluster_metadata-0``), else
    the log dir's ``replication-offset-checkpoint`` entry for the dir's topic partition (Kafka's layout)."""
    node = None
    for d in (os.path.dirname(partition_dir), partition_dir):
        try:
            meta = read_meta_properties(d)
        except (MetaPropertiesError, OSError, ValueError):
            meta = None
        if meta is not None:
            node = meta.node_id
            break
    name = os.path.basename(partition_dir)
    topic, sep, part = name.rpartition("-")
    if not (sep and part.isdigit()):
        topic, part = name, "0"
    own = os.path.join(partition_dir, HIGH_WATERMARK_CHECKPOINT)
    if os.path.exists(own):
        return node, OffsetCheckpointFile(own, topic, int(part)).read()
    return node, _root_checkpoint(os.path.dirname(partition_dir), cache).get((topic, int(part)))


def _segments_in(partition_dir: str) -> list[tuple[int, str]]:
    out = []
    for name in os.listdir(partition_dir):
        m = _SEGMENT_NAME.match(name)
        if m:
            out.append((int(m.group(1)), os.path.join(partition_dir, name)))
    return sorted(out)


def _snapshots_in(partition_dir: str) -> list[str]:
    out = []
    for name in sorted(os.listdir(partition_dir)):
        parsed = parse_snapshot_path(name)
        if parsed is not None and parsed.kind is SnapshotFileKind.FROZEN:
            out.append(os.path.join(partition_dir, name))
    return out


def _partition_files(partition_dir: str, include_snapshots: bool, cache: Optional[dict] = None) -> list[LogFile]:
    node, hw = partition_info(partition_dir, cache)
    topic, part = topic_partition(partition_dir)
    segs = _segments_in(partition_dir)
    files = []
    for i, (base, path) in enumerate(segs):
        nxt = segs[i + 1][0] if i + 1 < len(segs) else None
        files.append(LogFile(path, "segment", os.path.getsize(path), node, hw, base, nxt, topic, part))
    if include_snapshots:
        files.extend(_snapshot_file(p, node, hw, topic, part) for p in _snapshots_in(partition_dir))
    return files


def _snapshot_file(path: str, node, hw, topic=None, partition=None) -> LogFile:
    return LogFile(path, "snapshot", os.path.getsize(path), node, hw, 0, None, topic, partition)


def _is_partition_dir(d: str) -> bool:
    return any(_SEGMENT_NAME.match(n) for n in os.listdir(d))


def _expand(path: str, include_snapshots: bool, select: Selection, cache: dict) -> list[LogFile]:
    path = os.path.abspath(os.path.expanduser(path))
    if os.path.isfile(path):
        d = os.path.dirname(path)
        name = os.path.basename(path)
        if not select.wants(*topic_partition(d)):
            return []
        if _SEGMENT_NAME.match(name):
            # A single segment: its successor (if any) bounds its offsets.
            return [f for f in _partition_files(d, False, cache) if f.path == path]
        if parse_snapshot_path(name) is not None:
            node, hw = partition_info(d, cache)
            return [_snapshot_file(path, node, hw, *topic_partition(d))]
        raise ValueError(f"kraftwire: {path} is neither a segment (%020d.log) nor a snapshot (.checkpoint)")
    if not os.path.isdir(path):
        raise FileNotFoundError(f"kraftwire: no such file or directory: {path}")
    if _is_partition_dir(path) or _snapshots_in(path):
        if not select.wants(*topic_partition(path)):
            return []
        return _partition_files(path, include_snapshots or not _is_partition_dir(path), cache)
    files: list[LogFile] = []
    found = False
    for name in sorted(os.listdir(path)):
        sub = os.path.join(path, name)
        # ``<topic>-<n>`` only: Kafka's ``-delete``/``-future``/``-stray`` dirs are no live partition
        if parse_partition_dir(name) is None or not os.path.isdir(sub) or not _is_partition_dir(sub):
            continue
        found = True
        if select.wants(*parse_partition_dir(name)):
            files.extend(_partition_files(sub, include_snapshots, cache))
    if not found:
        raise FileNotFoundError(f"kraftwire: no log segments under {path} (expected <topic>-<partition>/%020d.log)")
    return files


def resolve(paths: str, include_snapshots: bool = False, select: Optional[Selection] = None) -> list[LogFile]:
    """Every file PATH names (in the partition dirs ``select`` wants), each once, in a stable order."""
    select = select if select is not None else Selection()
    if select.empty():
        return []
    cache: dict = {}
    seen: set[str] = set()
    out: list[LogFile] = []
    for item in (p.strip() for p in paths.split(",")):
        if not item:
            continue
        matches = sorted(glob.glob(os.path.expanduser(item))) if glob.has_magic(item) else [item]
        if not matches:
            raise FileNotFoundError(f"kraftwire: {item} matches nothing")
        for m in matches:
            for f in _expand(m, include_snapshots, select, cache):
                if f.path not in seen:
                    seen.add(f.path)
                    out.append(f)
    return out


# ------------------------------------------------------------------------------------------------ indexes


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def read_index(segment_path: str, base: int, size: int) -> tuple[list[int], list[int]]:
    """(last offsets, positions) of the ``.index`` entries: the usable prefix (``log.segment.parse_index``; a Kafka
    index may be preallocated with zero entries at its tail). An entry at position 0 says nothing a reader does not
    know (a file is always read from its start) and may be a preallocated zero, so it is left out."""
    offsets, positions, _complete = parse_index(_read(segment_path[: -len(LOG_SUFFIX)] + INDEX_SUFFIX), base, size)
    if positions and positions[0] == 0:
        return offsets[1:], positions[1:]
    return offsets, positions


def read_time_index(segment_path: str, base: int) -> list[tuple[int, int]]:
    """(max timestamp so far, absolute offset) entries, only when the ``.timeindex`` is not older than the ``.log``."""
    ti = segment_path[: -len(LOG_SUFFIX)] + TIME_INDEX_SUFFIX
    try:
        if os.path.getmtime(ti) < os.path.getmtime(segment_path):
            return []
    except OSError:
        return []
    return parse_time_index(_read(ti), base)[0]


def batch_header(fd: int, position: int) -> Optional[tuple[int, int, int]]:
    """(base offset, last offset, size) of the batch at ``position``, or None if no sane header is there."""
    head = os.pread(fd, layout.LAST_OFFSET_DELTA_POS + 4, position)
    if len(head) < layout.LAST_OFFSET_DELTA_POS + 4 or head[layout.MAGIC_POS] != layout.MAGIC:
        return None
    base, length = _BASE_LENGTH.unpack_from(head, layout.BASE_OFFSET_POS)
    if length < layout.MIN_BATCH_LENGTH:
        return None
    last = base + _I32.unpack_from(head, layout.LAST_OFFSET_DELTA_POS)[0]
    return base, last, length + layout.LOG_OVERHEAD


# ------------------------------------------------------------------------------------------------ planning


def plan_file(f: LogFile, bounds: Bounds, max_bytes: int) -> list[FileRange]:
    """The ranges of one file worth reading under ``bounds``, each at most ~``max_bytes`` when an index allows."""
    if f.size == 0:
        return []
    if f.kind != "segment":
        return [FileRange(f, 0, f.size)]
    lo, hi = bounds.offset_lo, bounds.offset_hi
    if hi is not None and f.base > hi:
        return []
    if lo is not None and f.next_base is not None and f.next_base <= lo:
        return []
    offsets, positions = read_index(f.path, f.base, f.size)
    if bounds.ts_lo is not None:
        # Entry (t, o): every record at or below offset o has a timestamp <= t (t is a running maximum).
        for ts, off in read_time_index(f.path, f.base):
            if ts < bounds.ts_lo:
                lo = off + 1 if lo is None else max(lo, off + 1)
            else:
                break
        if lo is not None and f.next_base is not None and f.next_base <= lo:
            return []
    fd = os.open(f.path, os.O_RDONLY)
    try:
        def agrees(j: int) -> Optional[tuple[int, int, int]]:
            h = batch_header(fd, positions[j])
            return h if h is not None and h[1] == offsets[j] else None

        start, end = 0, f.size
        first_entry, last_entry = 0, len(offsets)  # entries usable as split points: [first_entry, last_entry)
        if lo is not None and offsets:
            j = bisect.bisect_left(offsets, lo) - 1  # last entry whose batch ends below lo
            if j >= 0:
                h = agrees(j)
                if h is None:
                    return [FileRange(f, 0, f.size)]  # stale index: read it all
                start = positions[j] + h[2]
                first_entry = j + 1
        if hi is not None and offsets:
            j = bisect.bisect_left(offsets, hi)  # first entry whose batch reaches hi
            if j + 1 < len(offsets):
                if agrees(j + 1) is None:
                    return [FileRange(f, 0, f.size)]  # stale index: read it all
                end = positions[j + 1]  # the batch there starts after offsets[j] >= hi
                last_entry = j + 1
        if start >= end:
            return []
        cuts = [start]
        for j in range(first_entry, last_entry):
            p = positions[j]
            if p - cuts[-1] >= max_bytes and end - p >= max_bytes // 4 and agrees(j) is not None:
                cuts.append(p)
        cuts.append(end)
        return [FileRange(f, a, b) for a, b in zip(cuts, cuts[1:])]
    finally:
        os.close(fd)


def plan(files: list[LogFile], bounds: Bounds, max_bytes: int) -> list[FileRange]:
    if bounds.empty():
        return []
    out: list[FileRange] = []
    for f in files:
        out.extend(plan_file(f, bounds, max_bytes))
    return out
