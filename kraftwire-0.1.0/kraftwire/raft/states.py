"""The per-state data of a Raft node (the Leader's lives in ``leader.py``). Only ``QuorumState`` creates these."""

from __future__ import annotations

from dataclasses import dataclass, field

from kraftwire.ids import NO_ID, ReplicaKey
from kraftwire.raft.election import ElectionState
from kraftwire.raft.tally import VoteTally


@dataclass(slots=True)
class UnattachedState:
    """Knows the epoch but no leader. With ``voted_key`` set it is the "Voted" state."""

    epoch: int
    election_deadline_ms: int
    voted_key: ReplicaKey | None = None

    @property
    def name(self) -> str:
        return "Voted" if self.voted_key is not None else "Unattached"

    @property
    def election(self) -> ElectionState:
        return ElectionState(self.epoch, NO_ID, self.voted_key)


@dataclass(slots=True)
class ProspectiveState:
    """KIP-996 pre-vote: asks the voters whether they would vote for it in ``epoch + 1`` without changing its epoch.

    Keeps the election it came from (voted key, last known leader) so it never grants a second vote in its epoch."""

    epoch: int
    election_deadline_ms: int
    tally: VoteTally
    leader_id: int = NO_ID
    voted_key: ReplicaKey | None = None
    retries: int = 0
    name: str = "Prospective"

    @property
    def election(self) -> ElectionState:
        return ElectionState(self.epoch, self.leader_id, self.voted_key)


@dataclass(slots=True)
class CandidateState:
    epoch: int
    local_id: int
    election_deadline_ms: int
    tally: VoteTally
    retries: int = 1
    backoff_until_ms: int | None = None  # set once the election is lost or timed out
    rival_seen: bool = False  # another candidate asked for our vote in this epoch (a split vote)
    name: str = "Candidate"

    @property
    def election(self) -> ElectionState:
        return ElectionState(self.epoch, NO_ID, ReplicaKey(self.local_id))


@dataclass(slots=True)
class FollowerState:
    epoch: int
    leader_id: int
    fetch_deadline_ms: int
    voted_key: ReplicaKey | None = None
    high_watermark: int | None = None
    last_fetch_success_ms: int = -1
    leader_resigned: bool = False  # got EndQuorumEpoch: grant pre-votes, elect a successor soon
    #: KIP-853: when a voter next checks whether its entry in the voter set is stale (0: not yet armed)
    update_voter_at_ms: int = 0
    #: where the leader said it listens (BeginQuorumEpoch's LeaderEndpoints); () when it did not say: the voter
    #: set's entry then. Kafka's follower fetches from these: a leader that moved is reached before its entry is
    #: rewritten (KAFKA-16927)
    leader_endpoints: tuple = ()
    name: str = "Follower"

    @property
    def election(self) -> ElectionState:
        return ElectionState(self.epoch, self.leader_id, self.voted_key)


@dataclass(slots=True)
class ResignedState:
    """A leader that fenced itself: no writes, no votes in its epoch; tells the voters with EndQuorumEpoch."""

    epoch: int
    local_id: int
    election_deadline_ms: int
    preferred_successors: tuple[int, ...]
    unacknowledged: set[int] = field(default_factory=set)
    end_quorum_resend_ms: int = 0
    name: str = "Resigned"

    @property
    def election(self) -> ElectionState:
        return ElectionState(self.epoch, self.local_id, ReplicaKey(self.local_id))
