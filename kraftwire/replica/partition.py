"""One broker's replica of one topic partition: its role from the metadata image, and the rules a leader applies to
produce, fetch and the high watermark. Pure: the replica manager (``kraftwire.server.runtime.replicas``) feeds it the
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
* **Followers' progress.** Each follower fetch reports the follower's end offset; its last caught-up time becomes
  the fetch time when it fetched from the leader's end offset, the previous fetch time when it fetched from the end
  the leader had then, and otherwise stays.
* **ISR.** A follower outside the ISR whose end offset reached the high watermark and this leader epoch's start
  offset is proposed for expansion; members not caught up within ``replica.lag.time.max.ms`` are proposed for
  removal. One AlterPartition is in flight at a time; while an expansion is pending the *maximal* ISR (ISR plus the
  new member) already counts for the high watermark and acks, while a shrink is pending the old ISR still does.
  The answer to the pending proposal (only that one) commits the new ISR and partition epoch, reverts on
  OPERATION_NOT_ATTEMPTED / INELIGIBLE_REPLICA, and otherwise waits for the metadata image to move.
* **High watermark.** The minimum of the leader's end offset, each maximal-ISR member's, and the end offset of each
  follower outside the ISR that is *waiting to join it*: caught up (at the leader's end, or caught up within
  ``replica.lag.time.max.ms``) and eligible (``may_join_isr``: registered, unfenced, not shutting down, of the broker
  epoch it fetched with). Without the last term a follower that keeps pace under steady writes reports, at each
  fetch, an end just below a high watermark the ISR has already moved past, never reaches it, and never rejoins: the
  partition stays under-replicated for good (Kafka's ``maybeIncrementLeaderHW``). A follower that stops fetching
  stops holding it back once its caught-up time is ``replica.lag.time.max.ms`` old. Never advancing while the ISR
  is below the effective minimum, and never going back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from kraftwire.error_codes import (
    FENCED_LEADER_EPOCH,
    INELIGIBLE_REPLICA,
    INVALID_REQUEST,
    INVALID_REQUIRED_ACKS,
    INVALID_UPDATE_VERSION,
    NEW_LEADER_ELECTED,
    NONE,
    NOT_ENOUGH_REPLICAS,
    NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
    OPERATION_NOT_ATTEMPTED,
    UNKNOWN_LEADER_EPOCH,
    UNKNOWN_TOPIC_ID,
    UNKNOWN_TOPIC_OR_PARTITION,
)

__all__ = ["LEADER", "FOLLOWER", "OFFLINE", "NEVER_MS", "Follower", "LeaderChange", "PendingIsr", "ReplicaState",
           "check_fetch_position", "may_join_isr"]

LEADER, FOLLOWER, OFFLINE = "leader", "follower", "offline"

#: a time before any clock the caller passes in (which may start at 0, as the simulations' do): a follower that
#: never caught up, or never fetched, in this leader epoch (Kafka's 0 on a wall clock)
NEVER_MS = -(1 << 62)


@dataclass(frozen=True, slots=True)
class LeaderChange:
    """What applying a registration changed: the new role, and whether a new leader epoch began on this broker."""

    role: str
    new_leader_epoch: bool


class ReplicaState:
    """``ReplicaState(broker_id, topic, partition)``: nothing applied yet (role OFFLINE, epochs -1)."""

    __slots__ = ("broker_id", "topic", "partition", "role", "leader", "leader_epoch", "partition_epoch", "replicas",
                 "isr", "epoch_start_offset", "high_watermark", "followers", "pending", "in_flight", "settled")

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
        #: what the leader knows of each follower (reset when this broker starts leading an epoch)
        self.followers: dict[int, Follower] = {}
        #: an ISR change proposed to the controller and not yet answered or seen in the image
        self.pending: PendingIsr | None = None
        self.in_flight = False
        #: the last proposal the controller accepted — by its answer, or by an image holding exactly its ISR that came
        #: first — until the caller takes it (``take_settled``: the IsrShrinks/IsrExpands meters)
        self.settled: PendingIsr | None = None

    def __repr__(self) -> str:
        return (f"ReplicaState({self.topic}-{self.partition} {self.role} leader={self.leader} "
                f"epoch={self.leader_epoch}/{self.partition_epoch} isr={list(self.isr)} hw={self.high_watermark})")

    # ------------------------------------------------------------------------------------------------ the image
    def apply(self, registration, log_end: int, now_ms: int = 0) -> LeaderChange | None:
        """Apply the image's registration (``replicas``, ``isr``, ``leader``, ``leader_epoch``,
        ``partition_epoch``); ``log_end`` is the local log end offset. None when nothing changed (or it is older).
        A new leader counts its ISR members as caught up at ``now_ms``, the others never."""
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
            if self.pending is not None and not new_epoch and set(self.isr) == set(self.pending.isr):
                self.settled = self.pending  # the image brought the change before the controller's answer did
            self.pending, self.in_flight = None, False  # the image moved: whatever was proposed is settled
            if became:
                self.epoch_start_offset = log_end
                self.followers = {b: Follower(b, now_ms if b in self.isr else NEVER_MS) for b in self.replicas
                                  if b != self.broker_id}
            else:  # the same epoch: keep what is known of the replicas still assigned, forget the others
                self.followers = {b: f for b, f in self.followers.items() if b in self.replicas}
                for b in self.replicas:
                    if b != self.broker_id and b not in self.followers:
                        self.followers[b] = Follower(b, now_ms if b in self.isr else NEVER_MS)
            return LeaderChange(LEADER, became)
        self.role = FOLLOWER if self.broker_id in self.replicas else OFFLINE
        self.epoch_start_offset = -1
        self.followers = {}
        self.pending, self.in_flight = None, False
        return LeaderChange(self.role, new_epoch)

    # ------------------------------------------------------------------------------------------------ requests
    def epoch_error(self, current_leader_epoch: int, *, leader_only: bool = True) -> int:
        """The error for a request to the leader carrying ``current_leader_epoch`` (-1: the client sent none);
        ``leader_only=False`` (Kafka's debugging consumer, which may read any replica): a follower answers too,
        its epoch checked the same way."""
        if leader_only and self.role != LEADER:
            return NOT_LEADER_OR_FOLLOWER
        if current_leader_epoch < 0 or current_leader_epoch == self.leader_epoch:
            return NONE
        return FENCED_LEADER_EPOCH if current_leader_epoch < self.leader_epoch else UNKNOWN_LEADER_EPOCH

    def replica_fetch_error(self, current_leader_epoch: int, replica: int, broker_epoch: int,
                            registered_epoch: int | None) -> int:
        """The error for follower ``replica``'s fetch (``broker_epoch`` -1: not sent; ``registered_epoch``: that
        broker's epoch in the image, None when unregistered): the epoch check, then a fetch from a broker that is not
        a replica, or from an older incarnation of one, gets NOT_LEADER_OR_FOLLOWER (UNKNOWN_LEADER_EPOCH when it
        sent an epoch: the replica set may be newer than this broker's image)."""
        error = self.epoch_error(current_leader_epoch)
        if error:
            return error
        if replica not in self.replicas:
            return UNKNOWN_LEADER_EPOCH if current_leader_epoch >= 0 else NOT_LEADER_OR_FOLLOWER
        if broker_epoch >= 0 and registered_epoch is not None and broker_epoch < registered_epoch:
            return NOT_LEADER_OR_FOLLOWER
        return NONE

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

    # ------------------------------------------------------------------------------------------------ followers
    def maximal_isr(self) -> tuple[int, ...]:
        """The ISR the high watermark and acks count: with an expansion pending, the ISR plus the new members."""
        if self.pending is not None and self.pending.expand:
            return self.pending.isr
        return self.isr

    def follower_fetched(self, replica: int, fetch_offset: int, broker_epoch: int, now_ms: int,
                         leader_end: int, log_start: int = -1) -> None:
        """A follower fetched from ``fetch_offset`` (its end offset; ``log_start``: its log start, as its fetch
        says) while the leader's end was ``leader_end``."""
        f = self.followers.get(replica)
        if f is None:
            return
        if fetch_offset >= leader_end:
            f.caught_up_ms = max(f.caught_up_ms, now_ms)
        elif fetch_offset >= f.last_fetch_leader_end:
            f.caught_up_ms = max(f.caught_up_ms, f.last_fetch_ms)
        f.end_offset = fetch_offset
        f.start_offset = log_start
        f.last_fetch_ms = now_ms
        f.last_fetch_leader_end = leader_end
        f.broker_epoch = broker_epoch

    def propose_expansion(self, replica: int, eligible: bool) -> PendingIsr | None:
        """After ``replica``'s fetch: the ISR with it added when it may join (``eligible``: registered, unfenced, not
        shutting down, of the broker epoch it fetched with), else None."""
        f = self.followers.get(replica)
        if (self.role != LEADER or self.pending is not None or f is None or replica in self.isr or not eligible
                or f.end_offset < self.high_watermark or f.end_offset < self.epoch_start_offset):
            return None
        self.pending = PendingIsr(tuple(self.isr) + (replica,), True)
        return self.pending

    def propose_shrink(self, now_ms: int, lag_ms: int, leader_end: int) -> PendingIsr | None:
        """The ISR without the members that have not caught up within ``lag_ms``, or None."""
        if self.role != LEADER or self.pending is not None:
            return None
        out = set()
        for b in self.isr:
            f = self.followers.get(b)
            if b == self.broker_id or f is None:
                continue
            if not f.caught_up(leader_end, now_ms, lag_ms):
                out.add(b)
        if not out:
            return None
        self.pending = PendingIsr(tuple(b for b in self.isr if b not in out), False)
        return self.pending

    def take_settled(self) -> PendingIsr | None:
        """The proposal accepted since the last call (None: none), once."""
        settled, self.settled = self.settled, None
        return settled

    def isr_answered(self, proposal: PendingIsr, error: int, *, leader_epoch: int = -1, partition_epoch: int = -1,
                     isr: tuple[int, ...] = ()) -> bool:
        """The controller's answer to ``proposal``; True when it should be sent again. An answer to a proposal
        that is no longer the pending one (the image settled it, and another went out since) changes nothing: taken
        for the newer one it would drop a pending expansion whose member the controller may already have added —
        the high watermark would then move without it (found by the partition simulation; Kafka's leader compares
        the proposed state too)."""
        if proposal is not self.pending:
            return False
        self.in_flight = False
        if self.pending is None:
            return False
        if error == NONE:
            if leader_epoch != self.leader_epoch:
                # the change took a new leader epoch (it completed a reassignment that removed replicas): the
                # state comes with the image; until then the proposal stays pending, so that a member it added
                # keeps holding the high watermark back (Kafka's handleAlterPartitionUpdate ignores such an answer);
                # it is not sent again (it would only be fenced)
                self.in_flight = True
                return False
            if partition_epoch > self.partition_epoch:
                self.isr, self.partition_epoch = tuple(isr), partition_epoch
            self.pending, self.settled = None, proposal
            return False
        if error in (OPERATION_NOT_ATTEMPTED, INELIGIBLE_REPLICA):
            self.pending = None
            return False
        if error in (UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION,
                     INVALID_REQUEST, NEW_LEADER_ELECTED):
            return False  # stays pending until the image moves
        return True

    def alter_to_send(self) -> PendingIsr | None:
        """The pending ISR change to send the controller now (then in flight), or None: none pending, or one
        already on its way (one AlterPartition at a time)."""
        if self.pending is None or self.in_flight:
            return None
        self.in_flight = True
        return self.pending

    def alter_lost(self, proposal: PendingIsr) -> None:
        """The AlterPartition carrying ``proposal`` or its answer was lost: it may be sent again."""
        if self.pending is proposal:
            self.in_flight = False

    # ------------------------------------------------------------------------------------------------ watermark
    def log_high_watermark(self, high_watermark: int) -> None:
        """The high watermark the log holds, when the log moved it itself: a follower's taken from the leader, a
        log (re)started or its start moved past it. A leader's moves only by ``advance_high_watermark``."""
        self.high_watermark = high_watermark

    def advance_high_watermark(self, log_end: int, min_insync_replicas: int, *, now_ms: int, lag_ms: int,
                               brokers: Mapping[int, object]) -> bool:
        """Recompute the leader's high watermark from ``log_end`` and the followers' end offsets at ``now_ms``;
        True if it moved. ``lag_ms`` is ``replica.lag.time.max.ms``; ``brokers`` the image's broker registrations
        (who may join the ISR): a follower outside the ISR that is caught up and eligible holds it back too."""
        if self.role != LEADER or len(self.isr) < self.min_isr(min_insync_replicas):
            return False
        hw = log_end
        maximal = self.maximal_isr()
        for broker in maximal:
            if broker != self.broker_id:
                f = self.followers.get(broker)
                hw = min(hw, f.end_offset if f is not None else 0)
        for broker, f in self.followers.items():
            if (f.end_offset < hw and broker not in maximal and f.caught_up(log_end, now_ms, lag_ms)
                    and may_join_isr(brokers.get(broker), f.broker_epoch)):
                hw = f.end_offset  # waiting to join the ISR: let it reach the high watermark
        if hw > self.high_watermark:
            self.high_watermark = hw
            return True
        return False


def may_join_isr(registration, broker_epoch: int) -> bool:
    """Whether a follower whose image ``registration`` (a ``BrokerRegistration``, None when unregistered) is this
    may be proposed for the ISR: registered, unfenced, not shutting down, and fetching with its current broker
    epoch (-1: it sent none) — Kafka's ``isReplicaIsrEligible``."""
    return (registration is not None and not registration.fenced and not registration.in_controlled_shutdown
            and broker_epoch in (-1, registration.epoch))


def check_fetch_position(fetch_offset: int, last_fetched_epoch: int, log_start: int, log_end: int,
                         epoch_end: Callable[[int], tuple[int, int]]) -> tuple[int, tuple[int, int] | None]:
    """A leader's check of a follower's fetch position: (error, diverging) where ``diverging`` is the
    (epoch, end offset) to answer as DivergingEpoch. ``epoch_end`` is the leader log's ``leader_epoch_end``.

    With a last fetched epoch: one this leader cannot place (or a fetch below the log start) is OFFSET_OUT_OF_RANGE;
    when the leader's epoch found is older than it, or ends before the fetch offset, the follower diverged. Without
    one, or after that: an offset outside [log start, log end] is OFFSET_OUT_OF_RANGE."""
    if last_fetched_epoch >= 0:
        epoch, end = epoch_end(last_fetched_epoch)
        if epoch < 0 or fetch_offset < log_start:
            return OFFSET_OUT_OF_RANGE, None
        if epoch < last_fetched_epoch or end < fetch_offset:
            return NONE, (epoch, end)
    if fetch_offset < log_start or fetch_offset > log_end:
        return OFFSET_OUT_OF_RANGE, None
    return NONE, None


class Follower:
    """What a leader knows of one follower (Kafka's ``Replica`` state)."""

    __slots__ = ("broker_id", "end_offset", "start_offset", "caught_up_ms", "last_fetch_ms", "last_fetch_leader_end",
                 "broker_epoch")

    def __init__(self, broker_id: int, caught_up_ms: int = NEVER_MS) -> None:
        self.broker_id = broker_id
        self.end_offset = 0
        #: the follower's log start as its last fetch said (-1: unknown; KIP-392's choice of a replica to read)
        self.start_offset = -1
        self.caught_up_ms = caught_up_ms
        self.last_fetch_ms = NEVER_MS
        self.last_fetch_leader_end = 0
        self.broker_epoch = -1

    def __repr__(self) -> str:
        return f"Follower({self.broker_id} end={self.end_offset} caught_up={self.caught_up_ms})"

    def caught_up(self, leader_end: int, now_ms: int, lag_ms: int) -> bool:
        """At the leader's end, or caught up within ``lag_ms`` (Kafka's ``isCaughtUp``): an ISR member that is not
        leaves the ISR; a follower outside it that is holds the high watermark back until it can join."""
        return self.end_offset == leader_end or now_ms - self.caught_up_ms <= lag_ms


@dataclass(frozen=True, slots=True)
class PendingIsr:
    """An ISR proposed to the controller: ``expand`` adds a member (it counts at once), else members leave."""

    isr: tuple[int, ...]
    expand: bool
