"""The persisted election state, and the error a forbidden state change raises."""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.errors import KraftwireError
from kraftwire.ids import NO_ID, ReplicaKey


@dataclass(frozen=True, slots=True)
class ElectionState:
    """What ``quorum-state`` holds: the epoch, the leader if known, and whom this node voted for in that epoch."""

    epoch: int
    leader_id: int = NO_ID
    voted_key: ReplicaKey | None = None

    def has_leader(self) -> bool:
        return self.leader_id != NO_ID

    def has_voted(self) -> bool:
        return self.voted_key is not None

    def __str__(self) -> str:
        voted = self.voted_key.id if self.voted_key else NO_ID
        return f"epoch={self.epoch} leader={self.leader_id} voted={voted}"



class IllegalTransitionError(KraftwireError):
    """A state change the transition table forbids. Always a bug in the core."""

    def __init__(self, source: str, target: str, why: str) -> None:
        super().__init__(f"illegal transition {source} -> {target}: {why}")
        self.source = source
        self.target = target
