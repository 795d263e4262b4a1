"""``RaftNode``: the pure, deterministic KRaft state machine (KIP-595 + KIP-996 pre-vote).

Drive it with ``handle(event, now_ms)`` and ``poll(now_ms)``; each returns a ``Ready`` (see ``ready.py`` for the order
in which the driver must execute it). The node reads the log only through ``LogView`` and assumes the driver executed
every earlier ``Ready`` in full before calling it again, so the log it sees is always up to date with its own
decisions (durability is reported separately, by ``LogFlushed``). Client calls (``schedule_append``,
``append_batch``, ``resign``, ``register``) change in-memory state only; their effects come out in the next Ready.

One RPC per module under ``handlers/``; this module owns state changes, timers, request bookkeeping and the leader's
write path.
"""

from __future__ import annotations

from collections import Counter

from kraftwire.errors import CorruptRecordError, NotLeaderError, RaftFatalError, RecordTooLargeError  # noqa: F401
from kraftwire.ids import NO_ID, ReplicaKey
from kraftwire.log.api import LogView
from kraftwire.raft import messages as m
from kraftwire.raft.accumulator import BatchAccumulator
from kraftwire.raft.config import RaftConfig
from kraftwire.raft.control_records import leader_change_batch
from kraftwire.raft.election import ElectionState
from kraftwire.raft.events import LogFlushed, Received, RequestFailed, SnapshotStored
from kraftwire.raft.handlers import RESPONSE_OF, dispatch
from kraftwire.raft.handlers.begin_quorum_epoch import send_begin_quorum_epoch
from kraftwire.raft.handlers.end_quorum_epoch import send_end_quorum_epoch
from kraftwire.raft.handlers.fetch import answer_fetch, maybe_send_fetch
from kraftwire.raft.handlers.reconfig import answer_pending, maybe_complete, maybe_send_update
from kraftwire.raft.handlers.vote import send_vote_requests
from kraftwire.raft.leader import NEVER, LeaderState
from kraftwire.raft.membership import Membership
from kraftwire.raft.listener import BytesSerde, LeaderAndEpoch, Listener, ListenerHub, RecordSerde, serializer_of
from kraftwire.raft.observer import ObserverTarget
from kraftwire.raft.purgatory import FetchPurgatory
from kraftwire.raft.quorum_state import QuorumState, Rng
from kraftwire.raft.requests import Outstanding, OutstandingRequests
from kraftwire.raft.ready import AppendAsLeader, InitializeLeaderEpoch, Ready, ReadyBuilder, TruncateTo
from kraftwire.raft.states import CandidateState, FollowerState, ProspectiveState, ResignedState, UnattachedState
from kraftwire.raft.snapshots import Snapshots
from kraftwire.raft.voter_set import BEFORE_LOG, VoterSet
from kraftwire.records import BatchInfo, control, validate_batches


class RaftNode:
    def __init__(
        self,
        config: RaftConfig,
        log: LogView,
        stored: ElectionState | None,
        rng: Rng,
        now_ms: int,
        *,
        serde: RecordSerde | None = None,
    ) -> None:
        self.config = config.validate()
        self.log = log
        self.rng = rng
        self.serde = serde or BytesSerde()
        self._serialize = serializer_of(self.serde)
        self.local_id = config.node_id
        self.counters: Counter[str] = Counter()
        #: KIP-853: kraft.version, the voter set in force at each offset, the leader's pending voter change
        self.membership = Membership(config, log)
        self._membership_seen = self.membership.version
        self._rebuild_membership = False
        self.quorum = QuorumState(config, rng)
        self.quorum.set_voters(self.membership.voters().ids, self.membership.acts_as_voter(log.high_watermark()))
        self.quorum.initialize(stored, log.last_fetched_epoch(), now_ms)
        self._now = now_ms
        #: the handlers' step interface: the Ready being built by this ``handle``/``poll`` (log, snapshot, persist
        #: and message operations in the order ``ready.py`` defines)
        self.step = ReadyBuilder()
        self._ready_number = 0
        self.requests = OutstandingRequests(rng.randrange(1, 1 << 30), RESPONSE_OF)
        #: destination -> when a request to it may be retried (after a failure)
        self.retry_after: dict[int, int] = {}
        #: the local log's durable end, as the host last reported it (``LogFlushed``)
        self.flushed_offset = log.flushed_offset()
        self._hw = log.high_watermark()
        self.purgatory = FetchPurgatory()
        self._accumulator: BatchAccumulator | None = None
        self._wake_now = False
        #: a follower's next Fetch is not sent before this time
        self.fetch_retry_ms = 0
        self._deferred_persist: ElectionState | None = None
        #: Mutations.reply_vote_before_persist only: the next vote's persist waits for the following Ready
        self.defer_vote_persist = False
        self._deferred_truncate: int | None = None
        self.listeners = ListenerHub(log, self.serde, config.max_fetch_bytes)
        self.snapshots = Snapshots(self)
        self.observer = ObserverTarget(self._others(self.quorum.voters), rng)
        self._on_enter(now_ms)

    # ================================================================================================================
    # public surface
    # ================================================================================================================
    @property
    def epoch(self) -> int:
        return self.quorum.epoch

    @property
    def state_name(self) -> str:
        return self.quorum.name

    @property
    def state(self):
        return self.quorum.state

    @property
    def high_watermark(self) -> int:
        return self._hw

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return LeaderAndEpoch(self.quorum.leader_id, self.quorum.epoch)

    def is_leader(self) -> bool:
        return self.quorum.is_leader()

    def leader_endpoints(self) -> tuple[int, tuple] | None:
        """(leader id, endpoints) when this node follows a leader that said where it listens (BeginQuorumEpoch):
        the host reaches that leader there rather than where its voter set entry says, which may be stale (the
        leader moved and its UpdateRaftVoter has not committed yet). None otherwise."""
        state = self.quorum.state
        if isinstance(state, FollowerState) and state.leader_endpoints:
            return state.leader_id, state.leader_endpoints
        return None

    def handle(self, event, now_ms: int) -> Ready:
        self._begin(now_ms)
        if isinstance(event, Received):
            self._on_message(event.message, now_ms)
        elif isinstance(event, LogFlushed):
            self.flushed_offset = max(self.flushed_offset, min(event.offset, self.log.end_offset()))
        elif isinstance(event, RequestFailed):
            out = self.requests.pop(event.correlation_id)
            if out is not None:
                self.retry_after[out.dest] = now_ms + self.config.retry_backoff_ms
                if out.kind is m.FetchRequest:
                    self.fetch_retry_ms = now_ms + self.config.retry_backoff_ms
        elif isinstance(event, SnapshotStored):
            pass  # the core reads the log's snapshot list at the start of every step; the event only wakes it
        else:
            raise TypeError(f"unknown event {event!r}")
        return self._finish(now_ms)

    def poll(self, now_ms: int) -> Ready:
        self._begin(now_ms)
        return self._finish(now_ms)

    def on_flushed(self, offset: int, now_ms: int) -> Ready | None:
        """The log is durable up to ``offset`` (``LogFlushed``). A follower whose next Fetch is already out (it left
        when this flush completed) only records it: no step could follow from it — its high watermark comes from the
        leader, its timers are armed, and the leader has not answered yet. Anything else takes a step (a leader's
        own end offset counts toward the high watermark and answers parked fetches)."""
        if (isinstance(self.quorum.state, FollowerState) and self.requests.has(m.FetchRequest)
                and self.step.empty()):
            self.flushed_offset = max(self.flushed_offset, min(offset, self.log.end_offset()))
            return None
        return self.handle(LogFlushed(offset), now_ms)

    def deliver_committed(self) -> None:
        """Hand the listeners what the log's high watermark covers now, between steps: the executor applies a new
        high watermark only after the core returned its Ready, and a whole step just to deliver it would cost the
        write path a second pass through the core (``_finish``). Produces no Ready effects; a leader first tells its
        listeners of its leadership, in the order ``_finish`` keeps."""
        leading = self.quorum.is_leader()
        if leading:
            state = self.quorum.state
            if state.high_watermark is not None and state.high_watermark > state.epoch_start_offset:
                self._notify_all_leaders()
        self.listeners.deliver(may_load_snapshot=not leading)

    def register(self, listener: Listener) -> None:
        """Add a listener; it is told the current leader at once (if one is known) and then every commit."""
        self.listeners.register(listener, self._current_leader_for_listeners())

    def schedule_append(self, records: list, now_ms: int) -> int:
        """Queue ``records`` as one atomic batch (linger ``append.linger.ms``); returns the last record's offset.

        Raises ``NotLeaderError`` unless this node is the leader, ``RecordTooLargeError`` (changing nothing) if the
        records cannot fit in one batch."""
        acc = self._require_accumulator()
        values = self._serialize(records)
        return acc.append(values, now_ms)

    def append_batch(self, raw_batch: bytes, now_ms: int) -> tuple[int, int]:
        """Append a client-produced batch (Produce): validated, re-based and stamped by the log, no linger.
        Returns (first offset, last offset). Raises ``CorruptRecordError``, ``RecordTooLargeError``,
        ``NotLeaderError``."""
        acc = self._require_accumulator()
        if len(raw_batch) > self.config.max_batch_size_bytes:
            raise RecordTooLargeError(len(raw_batch), self.config.max_batch_size_bytes)
        result = validate_batches(raw_batch)
        if result.valid_bytes != len(raw_batch) or result.batch_count == 0:
            raise CorruptRecordError("incomplete batch", result.valid_bytes)
        count = sum(b.last_offset - b.base_offset + 1 for b in result.batches)
        acc.flush_open()
        self._append_leader_batches(acc.drain_built(now_ms))
        first = acc.next_offset
        acc.skip(count)
        self.step.log_ops.append(AppendAsLeader(bytes(raw_batch), self.epoch, tuple(result.batches)))
        self.step.flush = True
        return first, first + count - 1

    def next_append_offset(self) -> int:
        """The offset the next append as leader gets (what the active controller's records are decided against: a
        broker's epoch is the offset of its registration record). Raises ``NotLeaderError``."""
        return self._require_accumulator().next_offset

    def resign(self, now_ms: int) -> None:
        """Graceful resignation (shutdown): a leader fences itself and tells the voters (EndQuorumEpoch)."""
        if self.quorum.is_leader():
            self._resign(now_ms)

    # ================================================================================================================
    # step skeleton
    # ================================================================================================================
    def _begin(self, now_ms: int) -> None:
        self._now = now_ms
        log = self.log
        # truncation takes durability with it; a log restarted at a snapshot is durable up to its start
        self.flushed_offset = max(min(self.flushed_offset, log.end_offset()), log.start_offset())
        self._hw = max(self._hw, log.high_watermark())
        if self._rebuild_membership:  # the log restarted at an installed snapshot: its voter set is the base
            self._rebuild_membership = False
            self.membership.rebuild(log)
        self.snapshots.maybe_install()
        if self._deferred_truncate is not None:  # Mutations.hw_before_truncate
            self.truncate(self._deferred_truncate)
            self._deferred_truncate = None

    def _finish(self, now_ms: int) -> Ready:
        if self.membership.version != self._membership_seen or (
                self.membership.dynamic and self.quorum.is_voter != self.membership.acts_as_voter(self._hw)):
            self._voters_changed(now_ms)
        self._tick(now_ms)
        state = self.quorum.state
        if isinstance(state, LeaderState):
            self._leader_work(state, now_ms)
            if self.membership.version != self._membership_seen:  # the leader's epoch-start records
                self._voters_changed(now_ms)
        elif isinstance(state, ResignedState):
            self._send_end_quorum_epoch(state, now_ms)
        elif isinstance(state, FollowerState) or not self.quorum.is_voter:
            if isinstance(state, FollowerState):
                maybe_send_update(self, state, now_ms)
            self._maybe_send_fetch(now_ms)
        elif isinstance(state, (ProspectiveState, CandidateState)):
            self._send_vote_requests(now_ms)
        self.listeners.deliver(may_load_snapshot=not self.quorum.is_leader())
        self.snapshots.maybe_advance_log_start()
        self.snapshots.maybe_create(now_ms)
        persist = self.quorum.take_pending_persist()
        if self.defer_vote_persist:  # Mutations.reply_vote_before_persist: the grant leaves, its record waits
            self.defer_vote_persist = False
            persist, self._deferred_persist = self._deferred_persist, persist
        elif self._deferred_persist is not None:
            persist = persist or self._deferred_persist
            self._deferred_persist = None
        if persist is not None:
            self.step.persist = persist
        self._ready_number += 1
        ready = self.step.build(self._ready_number, self._next_wakeup(now_ms))
        #: the handlers' step interface: the Ready being built by this ``handle``/``poll`` (log, snapshot, persist
        #: and message operations in the order ``ready.py`` defines)
        self.step = ReadyBuilder()
        return ready

    def _next_wakeup(self, now_ms: int) -> int:
        if self._wake_now:
            self._wake_now = False
            return now_ms
        state = self.quorum.state
        times = [now_ms + self.config.fetch_timeout_ms]
        if isinstance(state, CandidateState) and state.backoff_until_ms is not None:
            times.append(state.backoff_until_ms)
        else:
            for attr in ("election_deadline_ms", "fetch_deadline_ms", "check_quorum_deadline_ms"):
                value = getattr(state, attr, None)
                if value is not None:
                    times.append(value)
        if isinstance(state, FollowerState) and state.update_voter_at_ms > now_ms:
            times.append(state.update_voter_at_ms)
        times.extend(self.requests.deadlines())
        times.extend(self.purgatory.deadlines())
        times.extend(t for t in self.retry_after.values() if t > now_ms)
        if self.fetch_retry_ms > now_ms:
            times.append(self.fetch_retry_ms)
        if self._accumulator is not None:
            deadline = self._accumulator.next_deadline_ms()
            if deadline is not None:
                times.append(deadline)
        if self.membership.pending is not None:
            times.append(self.membership.pending.deadline_ms)
        # every timer due now was handled by _tick: the next one is at least a millisecond away
        return max(now_ms + 1, min(t for t in times if t < NEVER))

    # ================================================================================================================
    # requests out
    # ================================================================================================================
    def next_correlation_id(self) -> int:
        return self.requests.next_correlation_id()

    def send_request(self, make, dest: int, now_ms: int, *, after_flush: bool = False, timeout_ms: int | None = None):
        """Build a request with a fresh correlation id (``make(correlation_id)``), remember it, queue it."""
        cid = self.next_correlation_id()
        request = make(cid)
        deadline = now_ms + (timeout_ms if timeout_ms is not None else self.config.request_timeout_ms)
        self.requests.add(cid, type(request), dest, self.epoch, deadline)
        (self.step.send_after_flush if after_flush else self.step.send).append(request)
        return request

    def reply(self, response: m.Message) -> None:
        self.step.send.append(response)

    def has_outstanding(self, kind: type, dest: int | None = None) -> bool:
        return self.requests.has(kind, dest)

    def _expire_outstanding(self, now_ms: int) -> None:
        for out in self.requests.expire(now_ms):
            self.counters["request_timeouts"] += 1
            if out.kind is m.FetchRequest and not self.quorum.is_voter:
                # try another voter than the one that did not answer (and than a leader that went quiet)
                state = self.quorum.state
                quiet = state.leader_id if isinstance(state, FollowerState) and self.observer.target is not None \
                    else None
                self.observer.pick(unresponsive=(out.dest, quiet))

    def match_response(self, response: m.Response) -> Outstanding | None:
        """The outstanding request this response answers, or None (unknown correlation id, wrong peer or type,
        or the local epoch changed since the request was sent): such responses are ignored."""
        out, current = self.requests.match(response, self.epoch)
        if not current:
            self.counters["stale_responses"] += 1
            return None
        return out

    # ================================================================================================================
    # messages in
    # ================================================================================================================
    def _on_message(self, message: m.Message, now_ms: int) -> None:
        dispatch(self, message, now_ms)

    def observe_epoch(self, epoch: int, leader_id: int, now_ms: int) -> bool:
        """A message showed a higher epoch (or a leader in ours): move there. Returns True if the state changed."""
        if epoch > self.epoch or (
            epoch == self.epoch
            and leader_id not in (NO_ID, self.local_id)
            and isinstance(self.quorum.state, (UnattachedState, ProspectiveState, CandidateState))
            and self.quorum.election.leader_id != leader_id  # a prospective already knows (and left) that leader
        ):
            if leader_id not in (NO_ID, self.local_id):
                self.become_follower(epoch, leader_id, now_ms)
            elif epoch > self.epoch:
                self.become_unattached(epoch, now_ms)
            else:
                return False
            return True
        return False

    # ================================================================================================================
    # transitions (every one goes through here so leaving and entering effects are never forgotten)
    # ================================================================================================================
    def _on_leave(self) -> None:
        state = self.quorum.state
        if isinstance(state, (LeaderState, ResignedState)) or self.purgatory:
            self._complete_parked(m.NOT_LEADER_OR_FOLLOWER)
        answer_pending(self, m.NOT_LEADER_OR_FOLLOWER)
        self._accumulator = None
        self.requests.clear()
        self.retry_after.clear()
        self.observer.target = None

    def _on_enter(self, now_ms: int) -> None:
        state = self.quorum.state
        if isinstance(state, (ProspectiveState, CandidateState)):
            self.counters["prevote_rounds" if isinstance(state, ProspectiveState) else "elections"] += 1
            self._maybe_win_election(now_ms)  # a single voter wins at once
        self._notify_all_leaders()

    def become_unattached(self, epoch: int, now_ms: int, *, keep_timer: bool = False) -> None:
        deadline = self.quorum.running_timer_ms() if keep_timer else None
        self._on_leave()
        self.quorum.to_unattached(epoch, now_ms, deadline_ms=deadline)
        self._on_enter(now_ms)

    def become_voted(self, epoch: int, candidate: ReplicaKey, now_ms: int) -> None:
        if epoch != self.epoch:
            self._on_leave()
        self.quorum.to_voted(epoch, candidate, now_ms)
        self._on_enter(now_ms)

    def become_follower(self, epoch: int, leader_id: int, now_ms: int) -> None:
        state = self.quorum.state
        if isinstance(state, FollowerState) and state.epoch == epoch and state.leader_id == leader_id:
            return
        self._on_leave()
        self.quorum.to_follower(epoch, leader_id, now_ms)
        self._on_enter(now_ms)

    def start_election(self, now_ms: int) -> None:
        self._on_leave()
        if self.config.pre_vote:
            self.quorum.to_prospective(now_ms)
        else:
            self.quorum.to_candidate(now_ms)
        self._on_enter(now_ms)

    def become_candidate(self, now_ms: int) -> None:
        self._on_leave()
        self.quorum.to_candidate(now_ms)
        self._on_enter(now_ms)

    def _maybe_win_election(self, now_ms: int) -> None:
        state = self.quorum.state
        if isinstance(state, ProspectiveState) and state.tally.won():
            self.become_candidate(now_ms)
        elif isinstance(state, CandidateState) and state.tally.won():
            self._become_leader(now_ms)

    def _become_leader(self, now_ms: int) -> None:
        self._on_leave()
        start = self.log.end_offset()
        leader = self.quorum.to_leader(now_ms, start)
        self.counters["leaders_elected"] += 1
        self.step.log_ops.append(InitializeLeaderEpoch(leader.epoch))
        membership = self.membership
        leader.set_voters(membership.voters(), now_ms)
        batch = leader_change_batch(
            self.local_id, self.quorum.voters, leader.granting_voters, epoch=leader.epoch, base_offset=start,
            timestamp=now_ms,
        )
        next_offset = start + 1
        if membership.dynamic and membership.kraft_version >= 1 and (
                membership.history.last_offset() == BEFORE_LOG or membership.needs_update()):
            # Kafka's start-of-epoch records: the voter set has never been written to the log (it came from the
            # bootstrap checkpoint), so it goes in with the LeaderChange, and replicas learn it by fetching; or the
            # leader's own entry is stale (it restarted with other endpoints)
            voters = membership.voters()
            voters = voters.update(membership.local_node()) if membership.needs_update() else voters
            batch = control.control_batch([
                (control.LEADER_CHANGE, control.leader_change_message(
                    self.local_id, sorted(self.quorum.voters | {self.local_id}), sorted(leader.granting_voters))),
                (control.KRAFT_VERSION, control.kraft_version_record(membership.kraft_version)),
                (control.KRAFT_VOTERS, voters.to_record()),
            ], epoch=leader.epoch, base_offset=start, timestamp=now_ms)
            membership.append(start + 2, voters)
            next_offset = start + 3
        self.step.log_ops.append(AppendAsLeader(batch, leader.epoch))
        self.step.flush = True
        self._accumulator = BatchAccumulator(
            epoch=leader.epoch, next_offset=next_offset, linger_ms=self.config.append_linger_ms,
            max_batch_size=self.config.max_batch_size_bytes,
        )
        leader.update_local_end_offset(self.flushed_offset, now_ms)
        self._on_enter(now_ms)

    def _resign(self, now_ms: int) -> None:
        leader = self.quorum.state
        assert isinstance(leader, LeaderState)
        successors = tuple(v for _, v in leader.end_offsets_for_successors())
        self._complete_parked(m.NOT_LEADER_OR_FOLLOWER)  # as Kafka's transitionToResigned
        self._on_leave()
        self.quorum.to_resigned(now_ms, successors)
        self._on_enter(now_ms)

    # ================================================================================================================
    # timers
    # ================================================================================================================
    def _tick(self, now_ms: int) -> None:
        self._expire_outstanding(now_ms)
        state = self.quorum.state
        if not self.quorum.is_voter and isinstance(state, ResignedState):
            if now_ms >= state.election_deadline_ms:  # removed from the voters: wait for the new leader as observer
                self._on_leave()
                self.quorum.to_unattached_same_epoch(now_ms)
                self._on_enter(now_ms)
            return
        if not self.quorum.is_voter:
            if isinstance(state, FollowerState) and now_ms >= state.fetch_deadline_ms:
                state.fetch_deadline_ms = now_ms + self.config.fetch_timeout_ms
                # the leader went quiet: ask another voter who leads now, at once (a Fetch still waiting on the
                # quiet one is given up: a dead node's port may hang rather than refuse; a late answer is stale)
                self.observer.pick(unresponsive=(state.leader_id, self.observer.target))
                self.requests.drop(lambda o: o.kind is not m.FetchRequest)
            return
        if isinstance(state, UnattachedState):
            if now_ms >= state.election_deadline_ms:
                self.start_election(now_ms)
        elif isinstance(state, FollowerState):
            if now_ms >= state.fetch_deadline_ms:
                self.counters["fetch_timeouts"] += 1
                self.start_election(now_ms)
        elif isinstance(state, ProspectiveState):
            if now_ms >= state.election_deadline_ms:
                self._lose_prevote(state, now_ms)
        elif isinstance(state, CandidateState):
            if state.backoff_until_ms is not None:
                if now_ms >= state.backoff_until_ms:
                    self.start_election(now_ms)
            elif now_ms >= state.election_deadline_ms:
                self.start_backoff(state, now_ms)
        elif isinstance(state, LeaderState):
            if state.check_quorum_expired(now_ms):
                self.counters["check_quorum_resignations"] += 1
                self._resign(now_ms)
        elif isinstance(state, ResignedState):
            if now_ms >= state.election_deadline_ms:
                self.start_election(now_ms)

    def start_backoff(self, state: CandidateState, now_ms: int) -> None:
        state.backoff_until_ms = now_ms + self.quorum.binary_exponential_backoff_ms(state.retries)

    def note_rival_candidate(self, now_ms: int) -> None:
        """A split vote: another candidate asked for our vote in our own epoch (and was refused: we voted for
        ourselves). Typical after a leader died: the surviving voters' fetch timeouts expire together, both pass
        the pre-vote and run in the same epoch, and each then waits out a whole election timeout (1-2 s with
        Kafka's defaults) before the next round — unless a still silent voter settles it, which it may do at once.

        So the candidate keeps counting votes, but moves its election deadline to a random point within the first
        half of the election timeout. The rivals draw independently, so one usually starts the next round (pre-vote,
        then vote) well before the other and wins it. Timing only: safety never depends on when a candidate gives up.
        """
        state = self.quorum.state
        if not isinstance(state, CandidateState) or state.backoff_until_ms is not None or state.rival_seen:
            return
        state.rival_seen = True
        self.counters["split_votes"] += 1
        deadline = now_ms + self.quorum.rng.randrange(0, self.config.election_timeout_ms // 2 + 1)
        state.election_deadline_ms = min(state.election_deadline_ms, deadline)

    def _lose_prevote(self, state: ProspectiveState, now_ms: int) -> None:
        self.counters["prevote_lost"] += 1
        self._on_leave()
        if state.leader_id not in (NO_ID, self.local_id):
            self.quorum.to_follower(state.epoch, state.leader_id, now_ms)
        else:
            self.quorum.to_unattached_same_epoch(now_ms)
        self._on_enter(now_ms)

    def lose_prevote(self, now_ms: int) -> None:
        state = self.quorum.state
        assert isinstance(state, ProspectiveState)
        self._lose_prevote(state, now_ms)

    # ================================================================================================================
    # elections
    # ================================================================================================================
    def _send_vote_requests(self, now_ms: int) -> None:
        send_vote_requests(self, now_ms)

    def maybe_win_election(self, now_ms: int) -> None:
        self._maybe_win_election(now_ms)

    # ================================================================================================================
    # follower side
    # ================================================================================================================
    def _maybe_send_fetch(self, now_ms: int) -> None:
        maybe_send_fetch(self, now_ms)

    def set_fetch_retry(self, at_ms: int) -> None:
        self.fetch_retry_ms = at_ms

    def emit_high_watermark(self, offset: int) -> None:
        """Record a new high watermark (never lower than the current one)."""
        if offset > self._hw:
            self._hw = offset
            self.step.high_watermark = offset

    def wake_now(self) -> None:
        self._wake_now = True

    def truncate(self, offset: int) -> None:
        self.step.log_ops.append(TruncateTo(offset))
        self.flushed_offset = min(self.flushed_offset, offset)
        self.membership.truncate(offset)

    def appended_as_follower(self, records, batches) -> None:
        """Fetched batches go into the log with this Ready: their voter records are in force from now."""
        if self.membership.dynamic:
            self.membership.scan(records, batches)

    def rebuild_membership_after_install(self) -> None:
        self._rebuild_membership = True

    def defer_truncate(self, offset: int) -> None:
        self._deferred_truncate = offset
        self._wake_now = True

    # ================================================================================================================
    # leader side
    # ================================================================================================================
    def _require_accumulator(self) -> BatchAccumulator:
        if not self.quorum.is_leader() or self._accumulator is None:
            raise NotLeaderError(f"node {self.local_id} is {self.state_name} in epoch {self.epoch}")
        return self._accumulator

    def _append_leader_batches(self, built: list[tuple[bytes, BatchInfo]]) -> None:
        for data, info in built:
            self.step.log_ops.append(AppendAsLeader(data, self.epoch, (info,)))
            self.step.flush = True

    def replication_limit(self) -> int:
        """The leader never replicates past its own flushed offset."""
        if self.config.mutations.replicate_past_flush:
            return self.log.end_offset()
        return min(self.flushed_offset, self.log.end_offset())

    def append_voters(self, voters: VoterSet, now_ms: int) -> int:
        """Append a VotersRecord as leader (after whatever is lingering); the set is in force at once. Returns its
        offset."""
        acc = self._require_accumulator()
        acc.flush_open()
        self._append_leader_batches(acc.drain_built(now_ms))
        offset = acc.next_offset
        batch = control.control_batch([(control.KRAFT_VOTERS, voters.to_record())], epoch=self.epoch,
                                      base_offset=offset, timestamp=now_ms)
        acc.skip(1)
        self.step.log_ops.append(AppendAsLeader(batch, self.epoch))
        self.step.flush = True
        self.membership.append(offset, voters)
        return offset

    def _others(self, voter_ids) -> frozenset[int]:
        """The voters an observer may fetch from: not itself (KIP-853: a node whose disk was wiped observes under
        the id of a voter it no longer is), unless it is the only one named."""
        return frozenset(voter_ids) - {self.local_id} or frozenset(voter_ids)

    def _voters_changed(self, now_ms: int) -> None:
        """The voter set in force moved (a VotersRecord appended or truncated away, a snapshot installed)."""
        self._membership_seen = self.membership.version
        voters = self.membership.voters()
        self.quorum.set_voters(voters.ids, self.membership.acts_as_voter(self._hw))
        self.observer.voters = sorted(self._others(voters.ids))
        self.counters["voter_set_changes"] += 1
        state = self.quorum.state
        if isinstance(state, LeaderState) and not self.config.mutations.majority_on_old_set:  # (a planted bug)
            if state.set_voters(voters, now_ms):
                self.emit_high_watermark(state.high_watermark)
        elif not self.quorum.is_voter and isinstance(state, (ProspectiveState, CandidateState)):
            self._on_leave()  # no longer a voter: an observer does not run for election
            self.quorum.to_unattached_same_epoch(now_ms)
            self._on_enter(now_ms)

    def _leader_work(self, leader: LeaderState, now_ms: int) -> None:
        local_end = self.log.end_offset() if self.config.mutations.count_unflushed_toward_hw else self.flushed_offset
        if leader.update_local_end_offset(local_end, now_ms):
            self.emit_high_watermark(leader.high_watermark)
        if maybe_complete(self, leader, now_ms):
            self.counters["resigned_after_removal"] += 1
            self._resign(now_ms)
            return
        if self._accumulator is not None:
            self._append_leader_batches(self._accumulator.drain_built(now_ms))
        send_begin_quorum_epoch(self, leader, now_ms)
        self.complete_ready_parked(now_ms)
        if self.quorum.is_leader() and leader.high_watermark is not None and leader.high_watermark > leader.epoch_start_offset:
            self._notify_all_leaders()

    def park_fetch(self, request: m.FetchRequest, now_ms: int, high_watermark: int | None) -> None:
        """Hold an empty answer until new durable data, MaxWaitMs, resignation, or a high watermark other than
        ``high_watermark`` (the one the replica knows) once that news is ``high_watermark_linger_ms`` old. One
        parked fetch per replica id (a newer one replaces the older)."""
        self.purgatory.park(request, now_ms, high_watermark)

    def complete_ready_parked(self, now_ms: int) -> None:
        leader = self.quorum.state
        if not isinstance(leader, LeaderState) or not self.purgatory:
            return
        for request in self.purgatory.take_due(now_ms, self.replication_limit(), leader.high_watermark,
                                               self.config.high_watermark_linger_ms):
            self.counters["purgatory_completions"] += 1
            answer_fetch(self, request, now_ms, allow_park=False)

    def _complete_parked(self, error: int) -> None:
        for req in self.purgatory.take_all():
            self.counters["purgatory_completions"] += 1
            self.reply(
                m.FetchResponse(
                    self.local_id, req.src, req.correlation_id, error, self.quorum.leader_id, self.epoch,
                    high_watermark=self._hw,
                )
            )

    def _send_end_quorum_epoch(self, state: ResignedState, now_ms: int) -> None:
        send_end_quorum_epoch(self, state, now_ms)

    # ================================================================================================================
    # listeners
    # ================================================================================================================
    def _current_leader_for_listeners(self) -> LeaderAndEpoch | None:
        """Followers tell listeners at once; a leader only once its first record of the epoch is committed."""
        state = self.quorum.state
        if isinstance(state, LeaderState):
            committed = state.high_watermark is not None and state.high_watermark > state.epoch_start_offset
            return LeaderAndEpoch(self.local_id, state.epoch) if committed else None
        return LeaderAndEpoch(self.quorum.leader_id, self.epoch)

    def _notify_all_leaders(self) -> None:
        self.listeners.notify_leader(self._current_leader_for_listeners())

