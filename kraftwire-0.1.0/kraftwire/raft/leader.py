"""Leader bookkeeping: replica end offsets, the high watermark, check-quorum and BeginQuorumEpoch acknowledgements.

High watermark rule (Kafka's ``LeaderState.maybeUpdateHighWatermark``): sort the voters' *durable* end offsets in
descending order and take the one at index ``len(voters) // 2`` — the largest offset a majority has flushed. It counts
only once it is above ``epoch_start_offset`` (a record of the leader's own epoch, its LeaderChange batch, is committed),
and the high watermark never decreases. The leader's own entry is its flushed offset, a follower's is the offset of
its latest valid Fetch (followers flush before fetching further).
"""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.ids import NO_ID
from kraftwire.raft.election import ElectionState
from kraftwire.ids import ReplicaKey

#: LeaderState.CHECK_QUORUM_TIMEOUT_FACTOR: resign if a majority has not fetched within 1.5 x fetch timeout.
CHECK_QUORUM_TIMEOUT_FACTOR = 1.5
#: LeaderState.OBSERVER_SESSION_TIMEOUT_MS: an observer that has not fetched for 5 minutes is forgotten
OBSERVER_SESSION_TIMEOUT_MS = 300_000
NEVER = 2**62


@dataclass(slots=True)
class ReplicaState:
    replica_id: int
    end_offset: int = -1  # -1: unknown (no valid fetch yet in this epoch)
    last_fetch_ms: int = -1
    last_caught_up_ms: int = -1
    sent_high_watermark: int = -1  # the high watermark last sent to this replica
    #: the leader's end offset when this replica last fetched (Kafka's lastFetchLeaderLogEndOffset)
    leader_end_at_last_fetch: int = -1
    #: the directory id the replica last fetched with (KIP-853), or the voter set's for a voter
    directory_id: object = None



def majority_end_offset(end_offsets: list[int]) -> int:
    """The largest offset that a majority of the given voter end offsets reach (index n//2 after a descending sort)."""
    ordered = sorted(end_offsets, reverse=True)
    return ordered[len(ordered) // 2]


class LeaderState:
    name = "Leader"

    def __init__(
        self,
        *,
        epoch: int,
        local_id: int,
        voters: frozenset[int],
        epoch_start_offset: int,
        granting_voters: frozenset[int],
        now_ms: int,
        fetch_timeout_ms: int,
    ) -> None:
        self.epoch = epoch
        self.local_id = local_id
        self.voters = voters
        #: directory id of each voter the voter set knows one for (KIP-853): a fetch with another one is an observer's
        self.voter_directories: dict[int, object] = {}
        self.epoch_start_offset = epoch_start_offset
        self.granting_voters = granting_voters
        self.high_watermark: int | None = None
        self.voter_states = {v: ReplicaState(v) for v in sorted(voters)}
        self.observer_states: dict[int, ReplicaState] = {}
        self.unacknowledged: set[int] = set(voters) - {local_id}
        self.begin_quorum_resend_ms = 0  # send BeginQuorumEpoch right away
        self.check_quorum_timeout_ms = int(fetch_timeout_ms * CHECK_QUORUM_TIMEOUT_FACTOR)
        self._fetched_since_reset: set[int] = set()
        self.check_quorum_deadline_ms = NEVER if len(voters) // 2 + 1 <= 1 else now_ms + self.check_quorum_timeout_ms

    @property
    def election(self) -> ElectionState:
        return ElectionState(self.epoch, self.local_id, ReplicaKey(self.local_id))

    # --- end offsets and the high watermark ------------------------------------------------------------------------
    def update_local_end_offset(self, end_offset: int, now_ms: int) -> bool:
        """The leader's own durable end offset moved. Returns True if the high watermark advanced."""
        state = self.voter_states.get(self.local_id)
        if state is None:  # a leader outside the voter set (not possible with static voters)
            return False
        state.end_offset = max(state.end_offset, end_offset)
        state.last_fetch_ms = state.last_caught_up_ms = now_ms
        return self._maybe_advance_high_watermark()

    def is_voter_key(self, replica_id: int, directory_id=None) -> bool:
        """The replica is one of the voters: its id, and its directory id when the voter set knows the voter's."""
        if replica_id not in self.voter_states:
            return False
        known = self.voter_directories.get(replica_id)
        return known is None or known == directory_id

    def update_replica_end_offset(self, replica_id: int, end_offset: int, now_ms: int, leader_end_offset: int,
                                  directory_id=None) -> bool:
        """A replica fetched from ``end_offset`` (so it holds everything below durably). No state for id -1."""
        if replica_id == NO_ID:
            return False
        is_voter = self.is_voter_key(replica_id, directory_id)
        if is_voter:
            state = self.voter_states[replica_id]
        else:
            state = self.observer_states.setdefault(replica_id, ReplicaState(replica_id))
            if state.directory_id != directory_id:  # another disk under this id: what it had fetched is not its
                state = self.observer_states[replica_id] = ReplicaState(replica_id, directory_id=directory_id)
        state.end_offset = end_offset  # may go down: a replica that lost its disk must be able to recover
        # Caught up (Kafka's rule): to the leader's end now, or to the leader's end as of the previous fetch - then
        # it was caught up at that fetch's time, not now; so the lag a slow follower shows is not understated
        if end_offset >= leader_end_offset:
            state.last_caught_up_ms = max(state.last_caught_up_ms, now_ms)
        elif state.leader_end_at_last_fetch > 0 and end_offset >= state.leader_end_at_last_fetch:
            state.last_caught_up_ms = max(state.last_caught_up_ms, state.last_fetch_ms)
        state.leader_end_at_last_fetch = leader_end_offset
        state.last_fetch_ms = max(state.last_fetch_ms, now_ms)
        if is_voter:
            self.unacknowledged.discard(replica_id)
            self._record_voter_contact(replica_id, now_ms)
            return self._maybe_advance_high_watermark()
        return False

    def _maybe_advance_high_watermark(self) -> bool:
        candidate = majority_end_offset([s.end_offset for s in self.voter_states.values()])
        if candidate <= self.epoch_start_offset:
            return False
        if self.high_watermark is not None and candidate <= self.high_watermark:
            return False
        self.high_watermark = candidate
        return True

    # --- KIP-853 membership ------------------------------------------------------------------------------------------
    def set_voters(self, voter_set, now_ms: int) -> bool:
        """The voter set changed (a VotersRecord was appended): voters keep their state, an observer that becomes a
        voter brings its own (when its directory id is the voter's), a voter that leaves becomes an observer. The
        high watermark is recomputed on the new set (it never goes down). Returns True if it advanced."""
        old = self.voter_states
        new: dict[int, ReplicaState] = {}
        directories: dict[int, object] = {}
        for node in voter_set.nodes:
            vid, directory = node.id, node.key.directory_id
            if directory is not None:
                directories[vid] = directory
            state = old.get(vid)
            if state is None or (directory is not None and state.directory_id not in (None, directory)):
                observer = self.observer_states.get(vid)
                if observer is not None and (directory is None or observer.directory_id == directory):
                    state = self.observer_states.pop(vid)
                else:
                    state = ReplicaState(vid)
                if vid != self.local_id:
                    self.unacknowledged.add(vid)  # it learns of this leader by BeginQuorumEpoch
            if directory is not None:
                state.directory_id = directory
            new[vid] = state
        for vid, state in old.items():
            if vid not in new:
                self.observer_states.setdefault(vid, state)
                self.unacknowledged.discard(vid)
        self.voter_states = new
        self.voter_directories = directories
        self.voters = frozenset(new)
        self._fetched_since_reset &= self.voters
        if len(self.voters) // 2 + 1 <= 1 and self.local_id in self.voters:
            self.check_quorum_deadline_ms = NEVER
        elif self.check_quorum_deadline_ms == NEVER:
            self.check_quorum_deadline_ms = now_ms + self.check_quorum_timeout_ms
        return self._maybe_advance_high_watermark()

    def is_caught_up(self, replica_id: int, directory_id, now_ms: int) -> bool:
        """Kafka's rule for a new voter: an observer with that directory id that has been caught up at least once and
        fetched within the last hour."""
        state = self.observer_states.get(replica_id)
        return (state is not None and state.directory_id == directory_id and state.last_caught_up_ms > 0
                and state.last_fetch_ms > 0 and state.last_fetch_ms > now_ms - 3_600_000)

    def replica(self, replica_id: int) -> ReplicaState | None:
        return self.voter_states.get(replica_id) or self.observer_states.get(replica_id)

    def observers(self, now_ms: int) -> dict[int, ReplicaState]:
        """The observers that fetched within ``OBSERVER_SESSION_TIMEOUT_MS``; older ones are forgotten."""
        for rid in [r for r, st in self.observer_states.items() if now_ms - st.last_fetch_ms >= OBSERVER_SESSION_TIMEOUT_MS]:
            del self.observer_states[rid]
        return self.observer_states

    # --- check-quorum ----------------------------------------------------------------------------------------------
    def record_fetch_snapshot(self, replica_id: int, now_ms: int) -> None:
        """A FetchSnapshot from a voter is contact too (Kafka's updateCheckQuorumForFollowingVoter)."""
        if replica_id in self.voter_states:
            self._record_voter_contact(replica_id, now_ms)

    def _record_voter_contact(self, voter_id: int, now_ms: int) -> None:
        self._fetched_since_reset.add(voter_id)
        me = {self.local_id} & self.voters  # a leader removing itself does not count towards its own quorum
        if len(self._fetched_since_reset | me) >= len(self.voters) // 2 + 1:
            self._fetched_since_reset.clear()
            self.check_quorum_deadline_ms = now_ms + self.check_quorum_timeout_ms

    def check_quorum_expired(self, now_ms: int) -> bool:
        return now_ms >= self.check_quorum_deadline_ms

    # --- BeginQuorumEpoch acknowledgements ---------------------------------------------------------------------------
    def acknowledge(self, voter_id: int) -> None:
        self.unacknowledged.discard(voter_id)

    def end_offsets_for_successors(self) -> list[tuple[int, int]]:
        """(end offset, voter id) of the other voters, best successor first (largest end offset, then lowest id)."""
        others = [(s.end_offset, s.replica_id) for s in self.voter_states.values() if s.replica_id != self.local_id]
        return sorted(others, key=lambda t: (-t[0], t[1]))
