"""A topic partition's log on a broker: the segment format and crash recovery of ``SegmentedLog``, with Kafka's
offset checkpoints kept once per log directory instead of once per partition.

Layout (kafka-replication-facts.md §4)::

    <log dir>/recovery-point-offset-checkpoint     every partition's recovery point  (``topic partition offset``)
    <log dir>/log-start-offset-checkpoint          every partition's log start
    <log dir>/replication-offset-checkpoint        every partition's high watermark (a lower bound)
    <log dir>/<topic>-<partition>/                 segments, indexes, leader-epoch-checkpoint, partition.metadata

The root files are written by ``LogDirCheckpoints.write`` on the replica manager's beat and at shutdown, as Kafka's
LogManager does (every 60 s and 5 s, at close): a partition only updates its entry in memory. That is safe in the
direction a crash can take it: an older recovery point means more of the log is validated at the next open, an
older log start means segments already below it are dropped again, an older high watermark is a lower bound.

Durability is Kafka's too: appends reach the page cache and are not fsynced (a segment is fsynced when it rolls
and at close). A process kill keeps everything appended; a power loss can lose the unflushed tail, which the
replicas in the ISR hold (with one replica, nothing does: Kafka's caveat).
"""

from __future__ import annotations

import os

from kraftwire.log.cleaner import CLEANER_OFFSET_CHECKPOINT
from kraftwire.log.checkpoint import format_offset_checkpoint, parse_offset_checkpoint, read_file_or_none, write_atomic
from kraftwire.log.loader import HIGH_WATERMARK_CHECKPOINT, LOG_START_CHECKPOINT, RECOVERY_POINT_CHECKPOINT
from kraftwire.log.partition_rules import PartitionLogRules, parse_producer_snapshot_name, producer_snapshot_name
from kraftwire.log.segmented import FUTURE_SUFFIX, SegmentedLog, live_name

__all__ = ["LogDirCheckpoints", "PartitionLog", "parse_future_dir", "parse_partition_dir", "REPLICATION_OFFSET_CHECKPOINT"]

REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
#: the Raft log's per-directory file names -> Kafka's log-dir root files
_ROOT_FILE = {
    RECOVERY_POINT_CHECKPOINT: RECOVERY_POINT_CHECKPOINT,
    LOG_START_CHECKPOINT: LOG_START_CHECKPOINT,
    HIGH_WATERMARK_CHECKPOINT: REPLICATION_OFFSET_CHECKPOINT,
    CLEANER_OFFSET_CHECKPOINT: CLEANER_OFFSET_CHECKPOINT,  # where the last clean of each compacted partition ended
}


def parse_partition_dir(name: str) -> tuple[str, int] | None:
    """``orders-3`` -> ("orders", 3); None for a name that is not a live partition directory (``-delete``,
    ``-future``, ``-stray`` suffixes, files)."""
    topic, sep, partition = name.rpartition("-")
    if not sep or not topic or not partition.isdigit() or "." in partition:
        return None
    return topic, int(partition)


def parse_future_dir(name: str) -> tuple[str, int] | None:
    """``orders-3.<32 hex>-future`` -> ("orders", 3): a future replica's directory (a log-dir move under way);
    None for any other name."""
    if not name.endswith(FUTURE_SUFFIX) or live_name(name) == name:
        return None
    return parse_partition_dir(live_name(name))


class LogDirCheckpoints:
    """The offset checkpoint files at one log directory's root (recovery point, log start, high watermark and the
    cleaner's), read once and written as a whole."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.values: dict[str, dict[tuple[str, int], int]] = {}
        self._dirty: set[str] = set()
        for name in _ROOT_FILE.values():
            text = read_file_or_none(os.path.join(root, name))
            try:
                self.values[name] = parse_offset_checkpoint(text) if text is not None else {}
            except ValueError:
                self.values[name] = {}  # unreadable: as if absent (the logs recover from their segments)

    def get(self, name: str, key: tuple[str, int]) -> int | None:
        return self.values[name].get(key)

    def set(self, name: str, key: tuple[str, int], offset: int) -> None:
        table = self.values[name]
        if table.get(key) != offset:
            table[key] = offset
            self._dirty.add(name)

    def forget(self, key: tuple[str, int]) -> None:
        """A deleted partition leaves every file."""
        for name, table in self.values.items():
            if table.pop(key, None) is not None:
                self._dirty.add(name)

    def write(self) -> None:
        """Rewrite the files that changed (tmp, fsync, rename). Raises ``LogIOError`` on an I/O error."""
        dirty, self._dirty = self._dirty, set()
        try:
            for name in sorted(dirty):
                write_atomic(os.path.join(self.root, name), format_offset_checkpoint(self.values[name]))
        except BaseException:
            self._dirty |= dirty
            raise


class _Entry:
    """One partition's line in one root file, shaped like ``OffsetCheckpointFile`` for the shared log code."""

    __slots__ = ("checkpoints", "name", "key")

    def __init__(self, checkpoints: LogDirCheckpoints, name: str, key: tuple[str, int]) -> None:
        self.checkpoints, self.name, self.key = checkpoints, name, key

    def read(self) -> int | None:
        return self.checkpoints.get(self.name, self.key)

    def write(self, offset: int, *, fsync: bool = True) -> None:
        self.checkpoints.set(self.name, self.key, offset)


class PartitionLog(PartitionLogRules, SegmentedLog):
    """``PartitionLog(directory, checkpoints, *, topic_id, **segmented_log_options)``: the log of the partition
    directory ``<root>/<topic>-<partition>`` whose root files are ``checkpoints`` (the partition rules:
    ``PartitionLogRules``)."""

    def __init__(self, directory: str, checkpoints: LogDirCheckpoints, **options) -> None:
        parsed = parse_partition_dir(live_name(os.path.basename(os.path.normpath(directory))))
        if parsed is None:
            raise ValueError(f"{directory} is not named <topic>-<partition> (or a future replica's name)")
        self.partition = parsed[1]
        self.checkpoints = checkpoints
        super().__init__(directory, **options)

    def _open(self, topic_id) -> None:
        super()._open(topic_id)
        self._offset_file(LOG_START_CHECKPOINT).write(self._start)  # every hosted partition has its line
        self._drop_producer_snapshots(above=self._end)  # recovery may have cut the log below one

    #: called with the new segment's base offset after a roll (the replica manager writes a producer snapshot there,
    #: as Kafka does at every roll, so a crash replays at most one segment's batch headers)
    on_roll = None

    def _roll(self, base: int):
        seg = super()._roll(base)
        if self.on_roll is not None:
            self.on_roll(base)
        return seg

    # ------------------------------------------------------------------------------------------------ producer state
    def producer_snapshots(self) -> list[int]:
        """Offsets of the ``<offset>.snapshot`` producer state files in the directory, ascending."""
        offsets = [parse_producer_snapshot_name(name) for name in os.listdir(self.directory)]
        return sorted(o for o in offsets if o is not None)

    def _drop_producer_snapshots(self, *, above: int) -> None:
        """A snapshot past the log end holds producer state of batches the log no longer has: delete it (Kafka's
        ``truncateAndReload``)."""
        for offset in self.producer_snapshots():
            if offset > above:
                try:
                    os.unlink(os.path.join(self.directory, producer_snapshot_name(offset)))
                except FileNotFoundError:
                    pass

    def truncate_to(self, offset: int) -> None:
        super().truncate_to(offset)
        self._drop_producer_snapshots(above=self._end)

    def restart_at(self, offset: int) -> None:
        super().restart_at(offset)
        self._drop_producer_snapshots(above=-1)  # none of the old history is left

    def _offset_file(self, name: str) -> _Entry:
        return _Entry(self.checkpoints, _ROOT_FILE[name], (self.topic, self.partition))
