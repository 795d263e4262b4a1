"""Vote counting for Prospective (pre-votes) and Candidate (votes). Votes are counted by voter id, once each."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class VoteTally:
    """Granted/rejected/unrecorded voters of one election round. The local voter grants itself at creation."""

    voters: frozenset[int]
    local_id: int
    granted: set[int] = field(default_factory=set)
    rejected: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.local_id in self.voters:
            self.granted.add(self.local_id)

    @property
    def majority(self) -> int:
        return len(self.voters) // 2 + 1

    def record(self, voter_id: int, granted: bool) -> bool:
        """Record a voter's answer; returns False (and changes nothing) if it was not a voter or already answered."""
        if voter_id not in self.voters or voter_id in self.granted or voter_id in self.rejected:
            return False
        (self.granted if granted else self.rejected).add(voter_id)
        return True

    def unrecorded(self) -> set[int]:
        return set(self.voters) - self.granted - self.rejected

    def won(self) -> bool:
        return len(self.granted) >= self.majority

    def lost(self) -> bool:
        """No majority is possible any more."""
        return len(self.voters) - len(self.rejected) < self.majority
