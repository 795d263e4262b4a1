"""A follower's decisions on a leader's fetch answer (Kafka's ``AbstractFetcherThread``; facts in
kafka-replication-facts.md §2). Pure: the replica fetcher (``kraftwire.server.runtime.fetcher``) asks and executes.

* **Divergence.** The leader answers a fetch whose last fetched epoch it does not share with DivergingEpoch (the
  leader's end offset for that epoch, or for the largest epoch below it). A follower that knows that epoch truncates
  to the smaller of the leader's end and its own end for the epoch; one that does not, to its own end of the
  largest epoch below it (the next fetch checks again); one without any epoch, to the leader's end. Never past its
  own log end. Unlike a Raft follower, an ISR member may truncate below its high watermark (after an unclean
  election the new leader's log is the truth).
* **Out of range.** The leader's end offset below the follower's: truncate to it. The leader's log start above the
  follower's end: the follower's log restarts at the leader's log start. Otherwise fetch again from the follower's
  end.
* **High watermark.** A follower's is the leader's, capped at its own end offset.
* **Log start.** A follower's moves up to the leader's (retention, DeleteRecords) on every answer, DivergingEpoch
  included, capped at its log end (``PartitionLogRules.follow_log_start``).
"""

from __future__ import annotations

from typing import Callable

__all__ = ["truncation_offset", "out_of_range", "follower_high_watermark", "TRUNCATE", "RESTART", "FETCH"]

TRUNCATE, RESTART, FETCH = "truncate", "restart", "fetch"


def truncation_offset(epoch: int, leader_end: int, local_epoch_end: Callable[[int], tuple[int, int]],
                      log_end: int) -> int:
    """Where to truncate after DivergingEpoch(``epoch``, ``leader_end``); ``local_epoch_end(e)`` is this log's
    (epoch found, end offset) lookup, (-1, -1) when it knows no epochs."""
    found_epoch, found_end = local_epoch_end(epoch)
    if found_epoch < 0 or found_end < 0:
        return min(leader_end, log_end)
    if found_epoch == epoch:
        return min(leader_end, found_end, log_end)
    return min(found_end, log_end)


def out_of_range(leader_end: int, leader_start: int, log_end: int) -> tuple[str, int]:
    """What an OFFSET_OUT_OF_RANGE answer asks of the follower: (TRUNCATE, offset), (RESTART, offset) or
    (FETCH, log end)."""
    if leader_end < log_end:
        return TRUNCATE, leader_end
    if leader_start > log_end:
        return RESTART, leader_start
    return FETCH, log_end


def follower_high_watermark(leader_hw: int, log_end: int) -> int:
    return max(0, min(leader_hw, log_end))
