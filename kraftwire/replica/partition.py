"""One broker's replica of one topic partition: its role from the metadata image, and the rules a leader applies to
produce, fetch and the high watermark. Pure: the replica manager (``kraftwire.server.replicas``) feeds it the
image's ``PartitionRegistration``\\ s and the log's offsets and executes what it answers.

Rules (Kafka's ``Partition``/``ReplicaManager``; facts in kafka-replication-facts.md §1, §3):

* **Role.** A registration naming this broker leader makes it leader; one listing it among the replicas makes it a
  follower; a registration with an older partition epoch than the one applied is ignored. A new leader epoch starts
  at the log end offset (``LeaderChange.epoch_start``): the caller records it in the log's epoch cache.
* **Fencing.** A request carrying a current leader epoch (-1: none) older than ours gets FENCED_LEADER_EPOCH, a newer
  one UNKNOWN_LEADER_EPOCH (this broker has not seen it yet); a broker that does not lead gets NOT_LEADER_OR_FOLLOWER.
* **acks.** Only -1, 0 and 1 (INVALID_REQUIRED_ACKS). With acks=-1 an ISR smaller than the effective minimum —
  ``min(min.insync.replicas, replication factor)`` — refuses the append with NOT_ENOUGH_REPLICAS; an append whose
  wait ends while it is too small is answered NOT_ENOUGH_REPLICAS_AFTER_APPEND.
* **High watermark.** The minimum of the leader's end offset and each ISR member's, never advancing while the ISR is
  below the effective minimum, and never going back. Until followers replicate (the next step of the partitions
  work) an ISR member other than the leader reports no end offset, so only a one-replica ISR advances.
"""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.error_codes import (
    FENCED_LEADER_EPOCH,
    INVALID_REQUIRED_ACKS,
    NONE,
    NOT_ENOUGH_REPLICAS,
    NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    NOT_LEADER_OR_FOLLOWER,
    UNKNOWN_LEADER_EPOCH,
)

__all__ = ["LEADER", "FOLLOWER", "OFFLINE", "LeaderChange", "ReplicaState"]

LEADER, FOLLOWER, OFFLINE = "leader", "follower", "offline"


@dataclass(frozen=True, slots=True)
class LeaderChange:
    """What applying a registration changed: the new role, and whether a new leader epoch began on this broker."""

    role: str
    new_leader_epoch: bool


class ReplicaState:
    """``ReplicaState(broker_id, topic, partition)``: nothing applied yet (role OFFLINE, epochs -1)."""

    __slots__ = ("broker_id", "topic", "partition", "role", "leader", "leader_epoch", "partition_epoch", "replicas",
                 "isr", "epoch_start_offset", "high_watermark", "follower_ends")

    def __init__(self, broker_id: int, topic: str, partition: int) -> None:
        self.broker_id = broker_id
        self.topic = topic
        self.partition = partition
        self.role = OFFLINE
        self.leader = -1
        self.leader_epoch = -1
        self.partition_epoch = -1
        self.replicas: tuple[int, ...] = ()
        self.isr: tuple[int, ...] = ()
        #: the log end offset when this broker's current leader epoch began (-1 when not leading)
        self.epoch_start_offset = -1
        self.high_watermark = 0
        #: the end offsets the followers reported (none yet: followers come with replica fetchers)
        self.follower_ends: dict[int, int] = {}

    def __repr__(self) -> str:
        return (f"ReplicaState({self.topic}-{self.partition} {self.role} leader={self.leader} "
                f"epoch={self.leader_epoch}/{self.partition_epoch} isr={list(self.isr)} hw={self.high_watermark})")

    # ------------------------------------------------------------------------------------------------ the image
    def apply(self, registration, log_end: int) -> LeaderChange | None:
        """Apply the image's registration (``replicas``, ``isr``, ``leader``, ``leader_epoch``,
        ``partition_epoch``); ``log_end`` is the local log end offset. None when nothing changed (or it is older)."""
        if registration.partition_epoch < self.partition_epoch:
            return None
        if (registration.partition_epoch == self.partition_epoch and registration.leader_epoch == self.leader_epoch
                and self.role != OFFLINE):
            return None
        new_epoch = registration.leader_epoch != self.leader_epoch
        self.replicas = tuple(registration.replicas)
        self.isr = tuple(registration.isr)
        self.leader = registration.leader
        self.leader_epoch = registration.leader_epoch
        self.partition_epoch = registration.partition_epoch
        if registration.leader == self.broker_id:
            became = self.role != LEADER or new_epoch
            self.role = LEADER
            if became:
                self.epoch_start_offset = log_end
                self.follower_ends = {}
            return LeaderChange(LEADER, became)
        self.role = FOLLOWER if self.broker_id in self.replicas else OFFLINE
        self.epoch_start_offset = -1
        self.follower_ends = {}
        return LeaderChange(self.role, False)

    # ------------------------------------------------------------------------------------------------ requests
    def epoch_error(self, current_leader_epoch: int) -> int:
        """The error for a request to the leader carrying ``current_leader_epoch`` (-1: the client sent none)."""
        if self.role != LEADER:
            return NOT_LEADER_OR_FOLLOWER
        if current_leader_epoch < 0 or current_leader_epoch == self.leader_epoch:
            return NONE
        return FENCED_LEADER_EPOCH if current_leader_epoch < self.leader_epoch else UNKNOWN_LEADER_EPOCH

    def min_isr(self, min_insync_replicas: int) -> int:
        """The effective minimum ISR size: ``min(min.insync.replicas, replication factor)``."""
        return max(1, min(min_insync_replicas, len(self.replicas) or 1))

    def produce_error(self, acks: int, min_insync_replicas: int) -> tuple[int, str | None]:
        """(error, message) before an append with ``acks``; (NONE, None) when it may go ahead."""
        if acks not in (-1, 0, 1):
            return INVALID_REQUIRED_ACKS, f"acks must be -1, 0 or 1, not {acks}"
        if self.role != LEADER:
            return NOT_LEADER_OR_FOLLOWER, None
        if acks == -1 and len(self.isr) < self.min_isr(min_insync_replicas):
            return NOT_ENOUGH_REPLICAS, (f"the in-sync replicas of {self.topic}-{self.partition} ({list(self.isr)}) "
                                         f"are fewer than min.insync.replicas ({self.min_isr(min_insync_replicas)})")
        return NONE, None

    def ack_error(self, min_insync_replicas: int) -> int:
        """When an acks=-1 append's wait ends: NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below the minimum."""
        return NOT_ENOUGH_REPLICAS_AFTER_APPEND if len(self.isr) < self.min_isr(min_insync_replicas) else NONE

    # ------------------------------------------------------------------------------------------------ watermark
    def advance_high_watermark(self, log_end: int, min_insync_replicas: int) -> bool:
        """Recompute the leader's high watermark from ``log_end`` and the followers' end offsets; True if it moved."""
        if self.role != LEADER or len(self.isr) < self.min_isr(min_insync_replicas):
            return False
        hw = log_end
        for broker in self.isr:
            if broker != self.broker_id:
                hw = min(hw, self.follower_ends.get(broker, 0))
        if hw > self.high_watermark:
            self.high_watermark = hw
            return True
        return False
