"""A leader's checks of a follower broker's Fetch of one partition it hosts (Kafka's ``Partition.fetchRecords`` for a
follower; facts in kafka-replication-facts.md §1–§2). Pure: the Fetch handler (``server/apis/fetch_apis.py``) and
the partition simulation (``kraftwire.testing.partition_broker``) ask here and answer as told, so the order of the
checks is written once and the simulation tests the one the broker runs.

The checks, in order:

* **Fencing and membership** (``ReplicaState.replica_fetch_error``): the request's current leader epoch against
  this leader's, then whether the fetching broker is a replica and of its registered broker epoch. A fetch refused
  here is answered before the log is looked at: no offsets, and (Fetch v16+, KIP-951) where the leader is when the
  error is NOT_LEADER_OR_FOLLOWER.
* **Position** (``check_fetch_position``): the follower's fetch offset and last fetched epoch against this log —
  OFFSET_OUT_OF_RANGE or a DivergingEpoch, answered with the log's high watermark and start so the follower can
  truncate or restart.
* Otherwise the fetch counts as the follower's progress (``partition_runtime.leader_saw_fetch``) and records from
  the fetch offset may be read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kraftwire.error_codes import NONE, NOT_LEADER_OR_FOLLOWER
from kraftwire.replica.partition import ReplicaState, check_fetch_position

__all__ = ["ReplicaFetchCheck", "check_replica_fetch"]


@dataclass(frozen=True, slots=True)
class ReplicaFetchCheck:
    """The verdict on one partition of a follower's Fetch: ``error`` and ``diverging`` ((epoch, end offset) to
    answer as DivergingEpoch, or None) to answer; ``fenced``: refused before the log was looked at."""

    error: int = NONE
    diverging: tuple[int, int] | None = None
    fenced: bool = False

    @property
    def accepted(self) -> bool:
        """The fetch is the follower's progress and may be served records."""
        return self.error == NONE and self.diverging is None

    @property
    def leader_hint(self) -> bool:
        """The answer says where the leader is (Fetch v16+): refused as NOT_LEADER_OR_FOLLOWER by the fencing
        check."""
        return self.fenced and self.error == NOT_LEADER_OR_FOLLOWER


def check_replica_fetch(state: ReplicaState, *, replica: int, current_leader_epoch: int, broker_epoch: int,
                        registration, fetch_offset: int, last_fetched_epoch: int, log_start: int, log_end: int,
                        epoch_end: Callable[[int], tuple[int, int]]) -> ReplicaFetchCheck:
    """Check follower ``replica``'s fetch (``broker_epoch`` -1: not sent; ``registration``: its image
    ``BrokerRegistration``, None when unregistered) at ``fetch_offset`` / ``last_fetched_epoch`` against this
    leader's state and log (``log_start``, ``log_end``; ``epoch_end``: the log's ``leader_epoch_end``)."""
    error = state.replica_fetch_error(current_leader_epoch, replica, broker_epoch,
                                      None if registration is None else registration.epoch)
    if error:
        return ReplicaFetchCheck(error, None, fenced=True)
    error, diverging = check_fetch_position(fetch_offset, last_fetched_epoch, log_start, log_end, epoch_end)
    return ReplicaFetchCheck(error, diverging)
