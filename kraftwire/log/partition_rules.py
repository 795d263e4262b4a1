"""What a topic partition's log does differently from the Raft log, shared by the file log
(``kraftwire.log.partition_log.PartitionLog``) and its in-memory twin (``kraftwire.log.memory.MemoryPartitionLog``)
so the seeded partition simulation runs the same rules as a broker.

* **No snapshots.** The log start is where the oldest kept segment begins (retention, DeleteRecords), not a
  snapshot's end.
* **``leader_epoch_end(epoch)``** is Kafka's ``endOffsetFor`` (OffsetForLeaderEpoch, DivergingEpoch);
  **``latest_epoch()``** is -1 for an empty cache (the Raft log's ``last_fetched_epoch`` says 0).
* **Truncation below the high watermark** is allowed: after an unclean election the new leader's log is the truth,
  and the high watermark comes down with the log.
* **``restart_at(offset)``** drops the whole log and continues it at ``offset`` (a follower behind the leader's log
  start).
"""

from __future__ import annotations

__all__ = ["PartitionLogRules"]


class PartitionLogRules:
    """Mixed in before a ``BaseLog`` subclass."""

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

    def truncate_to(self, offset: int) -> None:
        self._check_writable()
        if self._start <= offset < self._hwm:
            self._hwm = offset
        super().truncate_to(offset)

    def restart_at(self, offset: int) -> None:
        self._check_writable()
        self.truncations += 1
        self._reset_storage(offset)
        self._start = self._end = self._flushed = self._hwm = offset
        self._cache.clear()
        self._epoch_cache_changed()
