"""The election state a node persists, and the legal moves between Raft states.

``QuorumState`` is the only place that changes a node's state. Every *durable* move records the new
``ElectionState`` in ``pending_persist``; the node puts it in ``Ready.persist``, which the driver writes (fsync)
before it executes anything else of that Ready, so no message caused by the move can leave before it is durable.

Transition table (``e`` = current epoch; "same" = same epoch; D = durable, M = memory only)::

    to \\ from      Unattached  Voted  Prospective  Candidate  Leader  Follower  Resigned   when
    Unattached(e')  e'>e D      e'>e D  e'>e D       e'>e D     e'>e D  e'>e D    e'>e D     higher epoch seen, leader unknown
                    -           -       same M       -          -       -         same M     lost pre-vote / resigned timeout
    Voted(e',c)     e'>=e D     e'>e D  e'>=e D      e'>e D     e'>e D  e'>e D    e'>e D     grants a vote (c != self)
    Prospective     same M      same M  -            same M     -       same M    same M     election/fetch timeout, backoff
    Candidate(e+1)  D           D       D            D          -       D         D          won pre-vote (or pre-vote off)
    Leader          -           -       -            same D     -       -         -          majority granted
    Follower(e',l)  e'>=e D     e'>=e D e'>=e D      e'>=e D    e'>e D  e'>e D    e'>e D     BeginQuorumEpoch / Fetch answer
    Resigned        -           -       -            -          same M  -         -          resign(), shutdown, check-quorum

Observers (no id, or an id outside the voters) only move between Unattached and Follower — and, with kraft.version 1,
Voted: Kafka's replicas grant votes whatever voter set they hold, since theirs may be older than the candidate's. A
voter the voter set drops while it is Prospective, Candidate or Resigned returns to Unattached in the same epoch.

Startup (``initialize``), from the stored ElectionState and the log's last epoch:
  stored epoch < log epoch -> Unattached(log epoch) (D); recorded leader is self -> Resigned (never Leader again in
  that epoch); voted for self -> Candidate (same epoch, no new vote); voted for another -> Voted; leader known ->
  Follower; otherwise Unattached.

Vote granting, in the receiver's own epoch: Leader, Candidate, Resigned and Follower never grant; Unattached and
Prospective grant only the candidate they already voted for, or, if they voted for nobody and know no leader, a
candidate whose (last epoch, last offset) is at least their own. A vote is never granted twice in an epoch.
"""

from __future__ import annotations



from typing import Protocol

from kraftwire.ids import NO_ID, ReplicaKey
from kraftwire.raft.config import RaftConfig
from kraftwire.raft.election import ElectionState, IllegalTransitionError
from kraftwire.raft.leader import LeaderState
from kraftwire.raft.states import (
    CandidateState,
    FollowerState,
    ProspectiveState,
    ResignedState,
    UnattachedState,
)
from kraftwire.raft.tally import VoteTally

__all__ = ["ElectionState", "IllegalTransitionError", "QuorumState", "Rng", "State"]

State = UnattachedState | ProspectiveState | CandidateState | LeaderState | FollowerState | ResignedState

#: KafkaRaftClient.RETRY_BACKOFF_BASE_MS
ELECTION_BACKOFF_BASE_MS = 100


class Rng(Protocol):
    """The randomness the core needs (``random.Random`` satisfies it); injected, so runs are reproducible."""

    def randrange(self, start: int, stop: int) -> int: ...


class QuorumState:
    """Holds the node's current state and enforces the transition table above."""

    def __init__(self, config: RaftConfig, rng: Rng) -> None:
        self.config = config
        self.rng = rng
        self.local_id = config.node_id
        self.is_voter = config.is_voter
        #: the ids of the voter set in force (KIP-853: it may change; ``set_voters``)
        self.voters: frozenset[int] = frozenset(config.voters)
        #: kraft.version 1: any replica with an id grants votes, as Kafka's do (the voter set a replica holds may
        #: be behind the candidate's); with static voters only voters vote
        self.observers_vote = config.kraft_version >= 1
        self.state: State = UnattachedState(0, 0)
        self.pending_persist: ElectionState | None = None
        #: the epoch this node led (in memory; a node that restarts as its epoch's recorded leader led it too)
        self.led_epoch = -1

    # --- reading -----------------------------------------------------------------------------------------------------
    @property
    def epoch(self) -> int:
        return self.state.epoch

    @property
    def name(self) -> str:
        return self.state.name

    @property
    def election(self) -> ElectionState:
        return self.state.election

    @property
    def leader_id(self) -> int:
        if isinstance(self.state, (LeaderState, FollowerState)):
            return self.state.leader_id if isinstance(self.state, FollowerState) else self.local_id
        return NO_ID

    def is_leader(self) -> bool:
        return isinstance(self.state, LeaderState)

    def led_this_epoch(self) -> bool:
        """Not leading, but this node was the leader of its current epoch (it resigned: check-quorum, shutdown, a
        restart). No other node can lead this epoch, and its log has not changed since it led (only a leader of the
        epoch could have made it truncate or install a snapshot), so its log is still that leader's log."""
        return self.led_epoch == self.epoch and not self.is_leader()

    # --- timers ------------------------------------------------------------------------------------------------------
    def random_election_deadline(self, now_ms: int) -> int:
        """A deadline in [T, 2T) from now, T = election.timeout.ms."""
        t = self.config.election_timeout_ms
        return now_ms + self.rng.randrange(t, 2 * t)

    def binary_exponential_backoff_ms(self, retries: int) -> int:
        """min(base * rand(0 .. 2^retries - 1), backoff max); 0 before the first retry."""
        if retries <= 0:
            return 0
        base = min(ELECTION_BACKOFF_BASE_MS, self.config.election_backoff_max_ms)
        return min(base * self.rng.randrange(0, 2 << min(20, retries - 1)), self.config.election_backoff_max_ms)

    def strict_exponential_backoff_ms(self, position: int) -> int:
        """EndQuorumEpoch successor position -> delay before it may start an election (0 for the first)."""
        if position <= 0:
            return 0
        base = min(ELECTION_BACKOFF_BASE_MS, self.config.election_backoff_max_ms)
        return min(base << min(20, position - 1), self.config.election_backoff_max_ms)

    # --- startup -----------------------------------------------------------------------------------------------------
    def initialize(self, stored: ElectionState | None, log_last_epoch: int, now_ms: int) -> None:
        stored = stored or ElectionState(0)
        deadline = self.random_election_deadline(now_ms)
        me = self.local_id
        if stored.epoch < log_last_epoch:
            self._set(UnattachedState(log_last_epoch, deadline), durable=True)
        elif self.is_voter and stored.leader_id == me:
            if self.config.mutations.restart_as_leader:  # planted bug: a leader restarting into its old epoch
                self.state = LeaderState(
                    epoch=stored.epoch, local_id=me, voters=self.voters, epoch_start_offset=0,
                    granting_voters=frozenset({me}), now_ms=now_ms, fetch_timeout_ms=self.config.fetch_timeout_ms,
                )
            else:
                self.state = ResignedState(stored.epoch, me, deadline, (), set())
            self.led_epoch = stored.epoch
        elif self.is_voter and stored.voted_key is not None and stored.voted_key.id == me and not stored.has_leader():
            self.state = CandidateState(stored.epoch, me, deadline, VoteTally(self.voters, me))
        elif stored.has_leader() and stored.leader_id != me:
            self.state = FollowerState(
                stored.epoch, stored.leader_id, now_ms + self.config.fetch_timeout_ms, stored.voted_key
            )
        else:
            self.state = UnattachedState(stored.epoch, deadline, stored.voted_key if self.is_voter else None)

    # --- transitions -------------------------------------------------------------------------------------------------
    def _set(self, state: State, *, durable: bool) -> None:
        self.state = state
        if durable:
            self.pending_persist = state.election

    def _illegal(self, target: str, why: str) -> IllegalTransitionError:
        return IllegalTransitionError(self.name, target, why)

    def set_voters(self, voters: frozenset[int], is_voter: bool) -> None:
        self.voters = frozenset(voters)
        self.is_voter = is_voter

    def to_unattached(self, epoch: int, now_ms: int, *, deadline_ms: int | None = None) -> None:
        """Higher epoch seen, leader unknown (durable). ``deadline_ms`` keeps a running election timer: a voter only
        restarts its timer when it grants a vote, so a candidate it rejects cannot keep postponing its election."""
        if epoch <= self.epoch:
            raise self._illegal("Unattached", f"epoch {epoch} is not above {self.epoch}")
        deadline = self.random_election_deadline(now_ms) if deadline_ms is None else deadline_ms
        self._set(UnattachedState(epoch, deadline), durable=True)

    def running_timer_ms(self) -> int | None:
        """The deadline at which this voter would start an election on its own, if a timer is running."""
        state = self.state
        if isinstance(state, CandidateState) and state.backoff_until_ms is not None:
            return state.backoff_until_ms
        for attr in ("election_deadline_ms", "fetch_deadline_ms"):
            value = getattr(state, attr, None)
            if value is not None:
                return value
        return None

    def to_unattached_same_epoch(self, now_ms: int) -> None:
        """A lost pre-vote or a resigned leader's timeout: no new epoch, and the vote already cast is kept (also a
        prospective, candidate or resigned leader that is no longer a voter, KIP-853)."""
        state = self.state
        if not isinstance(state, (ProspectiveState, ResignedState, CandidateState)):
            raise self._illegal("Unattached", "same-epoch move only from Prospective, Candidate or Resigned")
        voted = state.voted_key if isinstance(state, ProspectiveState) else ReplicaKey(self.local_id)
        if isinstance(state, ProspectiveState) and state.leader_id == self.local_id:
            voted = ReplicaKey(self.local_id)
        self._set(UnattachedState(state.epoch, self.random_election_deadline(now_ms), voted), durable=False)

    def to_voted(self, epoch: int, candidate: ReplicaKey, now_ms: int) -> None:
        if not self.is_voter and not (self.observers_vote and self.local_id >= 0):
            raise self._illegal("Voted", "observers do not vote")
        if candidate.id == self.local_id:
            raise self._illegal("Voted", "cannot vote for itself this way")
        if epoch < self.epoch:
            raise self._illegal("Voted", f"epoch {epoch} is below {self.epoch}")
        if epoch == self.epoch:
            state = self.state
            ok = isinstance(state, (UnattachedState, ProspectiveState)) and state.voted_key is None
            if isinstance(state, ProspectiveState) and state.leader_id != NO_ID:
                ok = False
            if not ok and not self.config.mutations.grant_two_votes:
                raise self._illegal("Voted", "already voted or leader known in this epoch")
        self._set(UnattachedState(epoch, self.random_election_deadline(now_ms), candidate), durable=True)

    def to_prospective(self, now_ms: int) -> None:
        state = self.state
        if not self.is_voter or isinstance(state, (LeaderState, ProspectiveState)):
            raise self._illegal("Prospective", "only a voter that is not leader or prospective")
        leader_id = state.leader_id if isinstance(state, FollowerState) else NO_ID
        voted = getattr(state, "voted_key", None)
        if isinstance(state, (CandidateState, ResignedState)):
            voted = ReplicaKey(self.local_id)
        if isinstance(state, ResignedState):
            leader_id = self.local_id
        self._set(
            ProspectiveState(
                state.epoch,
                self.random_election_deadline(now_ms),
                VoteTally(self.voters, self.local_id),
                leader_id=leader_id,
                voted_key=voted,
                retries=getattr(state, "retries", 0),
            ),
            durable=False,
        )

    def to_candidate(self, now_ms: int) -> None:
        state = self.state
        if not self.is_voter or isinstance(state, LeaderState):
            raise self._illegal("Candidate", "observers and leaders cannot become candidates")
        retries = state.retries + 1 if isinstance(state, (CandidateState, ProspectiveState)) else 1
        self._set(
            CandidateState(
                state.epoch + 1,
                self.local_id,
                self.random_election_deadline(now_ms),
                VoteTally(self.voters, self.local_id),
                retries=retries,
            ),
            durable=True,
        )

    def to_leader(self, now_ms: int, epoch_start_offset: int) -> LeaderState:
        state = self.state
        if not isinstance(state, CandidateState) or not state.tally.won():
            raise self._illegal("Leader", "only a candidate holding a majority of votes")
        leader = LeaderState(
            epoch=state.epoch,
            local_id=self.local_id,
            voters=self.voters,
            epoch_start_offset=epoch_start_offset,
            granting_voters=frozenset(state.tally.granted),
            now_ms=now_ms,
            fetch_timeout_ms=self.config.fetch_timeout_ms,
        )
        self._set(leader, durable=True)
        self.led_epoch = leader.epoch
        return leader

    def to_follower(self, epoch: int, leader_id: int, now_ms: int) -> None:
        if leader_id == self.local_id or leader_id == NO_ID:
            raise self._illegal("Follower", f"bad leader {leader_id}")
        state = self.state
        if epoch < self.epoch:
            raise self._illegal("Follower", f"epoch {epoch} is below {self.epoch}")
        if epoch == self.epoch:
            if isinstance(state, (LeaderState, ResignedState)):
                raise self._illegal("Follower", "a leader never follows another leader in its own epoch")
            if isinstance(state, FollowerState):
                if state.leader_id != leader_id:
                    raise self._illegal("Follower", f"two leaders in epoch {epoch}: {state.leader_id} and {leader_id}")
                return
        voted = state.election.voted_key if epoch == self.epoch else None
        self._set(FollowerState(epoch, leader_id, now_ms + self.config.fetch_timeout_ms, voted), durable=True)

    def to_resigned(self, now_ms: int, preferred_successors: tuple[int, ...]) -> None:
        state = self.state
        if not isinstance(state, LeaderState):
            raise self._illegal("Resigned", "only a leader resigns")
        self._set(
            ResignedState(
                state.epoch,
                self.local_id,
                self.random_election_deadline(now_ms),
                preferred_successors,
                set(self.voters) - {self.local_id},
            ),
            durable=False,
        )

    def take_pending_persist(self) -> ElectionState | None:
        pending, self.pending_persist = self.pending_persist, None
        return pending
