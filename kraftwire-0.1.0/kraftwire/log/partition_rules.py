"""What a topic partition's log does differently from the Raft log, shared by the file log
(``kraftwire.log.partition_log.PartitionLog``) and its in-memory twin (``kraftwire.log.memory.MemoryPartitionLog``)
so the seeded partition simulation runs the same rules as a broker.

* **No snapshots.** The log start is where the oldest kept segment begins (retention, DeleteRecords), not a
  snapshot's end.
* **``leader_epoch_end(epoch)``** is Kafka's ``endOffsetFor`` (OffsetForLeaderEpoch, DivergingEpoch);
  **``latest_epoch()``** is -1 for an empty cache (the Raft log's ``last_fetched_epoch`` says 0).
* **Truncation below the high watermark** is allowed: after an unclean election the new leader's log is the truth,
  and the high watermark comes down with the log; below the log start the log restarts there.
* **``restart_at(offset)``** drops the whole log and continues it at ``offset`` (a follower behind the leader's log
  start).
* **A log start inside a batch.** DeleteRecords can put the leader's log start inside a batch, and the leader sends
  a fetch at that offset the whole batch. A follower whose log end lies inside the first batch it is sent (its
  empty log restarted there, or a different batch of its own reaching past the leader's log start) restarts its log
  at the batch's base offset (or truncates to it, when that is above its log start and a batch boundary of its own)
  before appending it. Kafka does
  the first (``Partition.appendRecordsToFollowerOrFutureReplica``) and fails the partition on the second; the
  partition simulation found that case, and the follower's records there are the ones the leader replaced (above
  the follower's high watermark), so dropping them is what truncation on divergence would do. The follower's log
  start moves back up with the leader's on its next fetch.
* **Retention and DeleteRecords.** ``segment_infos()`` describes the segments for ``kraftwire.replica.retention``;
  ``delete_oldest_segments(n)`` removes the first ``n`` (rolling a new empty segment first when that is all of
  them) and moves the log start to the first one left; ``increment_log_start(offset)`` moves the log start (never
  back, never past the high watermark) and removes the segments wholly below it; ``follow_log_start`` is a
  follower's.
"""

from __future__ import annotations

from typing import NamedTuple

from kraftwire.errors import LogError
from kraftwire.records.api import BASE_OFFSET_POS, LAST_OFFSET_DELTA_POS

__all__ = ["PartitionLogRules", "SegmentInfo", "PRODUCER_SNAPSHOT_SUFFIX", "producer_snapshot_name",
           "parse_producer_snapshot_name"]

#: a partition directory's producer state files (``kraftwire.replica.producer_snapshot``): ``<20-digit offset>.snapshot``
PRODUCER_SNAPSHOT_SUFFIX = ".snapshot"


def producer_snapshot_name(offset: int) -> str:
    return f"{offset:020d}{PRODUCER_SNAPSHOT_SUFFIX}"


def parse_producer_snapshot_name(name: str) -> int | None:
    stem = name[: -len(PRODUCER_SNAPSHOT_SUFFIX)] if name.endswith(PRODUCER_SNAPSHOT_SUFFIX) else ""
    return int(stem) if len(stem) == 20 and stem.isdigit() else None


class SegmentInfo(NamedTuple):
    """A segment as retention sees it."""

    base_offset: int
    size: int
    #: the largest record timestamp in it (-1 when none: the file's modification time stands in, as in Kafka)
    largest_timestamp: int


class PartitionLogRules:
    """Mixed in before a ``BaseLog`` subclass, which provides ``segment_infos()`` (a ``SegmentInfo`` per segment,
    oldest first) and ``_roll_empty_segment()`` (start a new empty segment at the log end)."""

    #: the cleaner removes superseded records, so batches may start past the previous batch's end (Kafka's
    #: compacted logs); recovery, loading and follower appends accept such gaps
    allow_offset_gaps = True

    snapshots_cover_start = False

    def latest_epoch(self) -> int:
        """The latest epoch of the epoch cache, -1 when it is empty: what a follower sends as its last fetched
        epoch (Kafka's ``log.latestEpoch``). It is known even with no batch of it yet — a broker that led an epoch
        without appending — so the leader's DivergingEpoch answer clears it before older batches arrive."""
        latest = self._cache.latest_epoch()
        return -1 if latest is None else latest

    def leader_epoch_end(self, epoch: int) -> tuple[int, int]:
        """(epoch found, end offset): the log end for the latest epoch, the next epoch's start otherwise, (-1, -1)
        when undefined."""
        return self._cache.end_offset_for(epoch, self._end)

    def append_as_follower(self, records, epoch: int, batches=None):
        end = self._end
        if len(records) > LAST_OFFSET_DELTA_POS + 4:
            base = int.from_bytes(records[BASE_OFFSET_POS:BASE_OFFSET_POS + 8], "big", signed=True)
            delta = int.from_bytes(records[LAST_OFFSET_DELTA_POS:LAST_OFFSET_DELTA_POS + 4], "big", signed=True)
            if 0 <= base < end <= base + delta:
                if base > self._start:
                    self.truncate_to(base)
                if self._end != base:  # at or below the log start, or inside a batch of ours
                    self.restart_at(base)
                batches = None
        return super().append_as_follower(records, epoch, batches)

    def truncate_to(self, offset: int) -> None:
        self._check_writable()
        if offset < self._start:  # below the log start: Kafka truncates fully and starts there
            self.restart_at(offset)
            return
        if offset < self._hwm:
            self._hwm = offset
        super().truncate_to(offset)

    def restart_at(self, offset: int) -> None:
        self._check_writable()
        self.truncations += 1
        self._reset_storage(offset)
        self._start = self._end = self._flushed = self._hwm = offset
        self._cache.clear()
        self._epoch_cache_changed()

    def delete_oldest_segments(self, count: int) -> int:
        """Remove the ``count`` oldest segments; returns the new log start offset."""
        self._check_writable()
        bases = [s.base_offset for s in self.segment_infos()]
        if count <= 0 or not bases:
            return self._start
        if count >= len(bases):
            self._roll_empty_segment()
            new_start = self._end
        else:
            new_start = bases[count]
        self._move_start(max(self._start, new_start))
        return self._start

    def increment_log_start(self, offset: int) -> bool:
        """Move the log start up to ``offset`` (DeleteRecords on the leader; a follower following its leader's log
        start). False when it is not above the current start; ``LogError`` past the high watermark."""
        self._check_writable()
        if offset <= self._start:
            return False
        if offset > self._hwm:
            raise LogError(f"log start offset {offset} would pass the high watermark {self._hwm}")
        self._move_start(offset)
        return True

    def follow_log_start(self, leader_start: int) -> bool:
        """A follower's log start follows its leader's, up to its own log end, and its high watermark comes up with
        it: what lies below the leader's log start is deleted in the partition, whatever this replica held there.
        (Kafka moves it only after a successful fetch and never past the follower's high watermark; a follower that
        truncated on DivergingEpoch could then keep records of its own below the leader's log start, which the
        leader's epoch cache no longer covers, and expose them if it led next — the partition simulation found it.)
        """
        self._check_writable()
        offset = min(leader_start, self._end)
        if offset <= self._start:
            return False
        self._hwm = max(self._hwm, offset)
        self._move_start(offset)
        return True

    def _move_start(self, offset: int) -> None:
        self._start = offset
        if self._cache.truncate_from_start(offset):
            self._epoch_cache_changed()
        self._delete_storage_before(offset)
