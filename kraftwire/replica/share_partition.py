"""The share-partition state a partition leader keeps for one share group (KIP-932, Kafka's ``SharePartition``).

Pure and deterministic: no I/O, no clock — every call that can start or end a lock takes ``now_ms``. The runtime
reads the log, hands the offsets it read to :meth:`SharePartition.acquire`, and writes each :class:`ShareWrite` a
call returns to the share coordinator (as a ``ShareUpdate`` record) *before* it answers the acknowledgement, so the
state survives a leader change.

**Model.** The share-partition start offset (SPSO) is the first offset not yet finished; every offset from it up
to :attr:`SharePartition.fetched_end` (exclusive) is *in flight* and has a state — AVAILABLE, ACQUIRED (by one
member, until its lock's deadline), ACKNOWLEDGED or ARCHIVED — and a delivery count. Offsets at and above
``fetched_end`` have never been handed out. Kafka keeps the same facts per batch with per-offset refinements; one
entry per offset keeps the rules plain, and the in-flight window is bounded by ``share.partition.max.record.locks``.

**Rules (Kafka's ``InFlightState.tryUpdateState`` and ``RecordState.validateTransition``).** Only an AVAILABLE
record can be acquired, and acquiring raises its delivery count. An ACQUIRED record goes back to AVAILABLE on a
RELEASE, a lock expiry or its member leaving — or to ARCHIVED instead once its delivery count has reached
``share.delivery.count.limit`` — and to ACKNOWLEDGED on an ACCEPT, to ARCHIVED on a REJECT or a GAP. ACKNOWLEDGED
and ARCHIVED are final. The SPSO moves past every finished record at its front.

**The dead-letter queue (KIP-1191, share.version 2).** When the group names a DLQ topic
(``errors.deadletterqueue.topic.name``; :attr:`ShareConfig.dlq_enabled`), a REJECT and a delivery-count limit
reached on a release or an expiry go to ARCHIVING instead of ARCHIVED, with the cause Kafka's DLQ record carries.
ARCHIVING is written (state 3) and holds the SPSO back. Once that write is durable the runtime takes the
ARCHIVING runs (:meth:`SharePartition.dead_letters`), writes them to the DLQ topic, and — whether that write
worked or not, as Kafka's ``initiateDLQAndArchive`` — archives them (:meth:`SharePartition.archive_dead_letters`),
a second write. A new leader finds ARCHIVING records in the durable state and sends them again (at least once).

**What is durable.** The acquired state is transient and never written (KIP-932: an acquired record is recorded
as available with the delivery count it had before); every other change is written. So after a leader change the
new leader starts from the last write: records that were acquired are AVAILABLE again and are redelivered with
their *written* delivery count raised by one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kraftwire import error_codes as ec

__all__ = [
    "ACCEPT", "ACKNOWLEDGED", "ACQUIRED", "ARCHIVED", "ARCHIVING", "AVAILABLE", "CLIENT_REJECT",
    "DELIVERY_COUNT_EXCEEDED", "GAP", "REJECT", "RELEASE", "RENEW",
    "AcquiredRecords", "AckBatch", "DeadLetter", "ShareConfig", "SharePartition", "ShareState", "ShareStateBatch",
    "ShareWrite",
    "check_ack_batches", "initial_start_offset", "persister_error",
]

# RecordState ids (org.apache.kafka.server.share.fetch.RecordState; ARCHIVING is the dead-letter path's state
# between a record's end and its DLQ write). All but ACQUIRED are written.
AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVING, ARCHIVED = 0, 1, 2, 3, 4
FINISHED = (ACKNOWLEDGED, ARCHIVED)

#: why a record went to the dead-letter queue: the ``__dlq.errors.message`` header Kafka 4.4 writes
#: (``ShareGroupDLQManager.CLIENT_REJECT`` / ``DELIVERY_COUNT_EXCEEDED``)
CLIENT_REJECT = "Offset rejected by client."
DELIVERY_COUNT_EXCEEDED = "Offset delivery count exceeded the threshold."

# AcknowledgeType ids as ShareAcknowledge and ShareFetch carry them (GAP marks an offset the log no longer has;
# RENEW, Kafka 4.4's KIP-1222, extends the lock and changes no state).
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4
_ACK_STATE = {GAP: ARCHIVED, ACCEPT: ACKNOWLEDGED, RELEASE: AVAILABLE, REJECT: ARCHIVED}


#: what a failed WriteShareGroupState means for the acknowledgement that made it (Kafka 4.4's
#: ``SharePartition.fetchPersisterError``): the coordinator's own errors COORDINATOR_NOT_AVAILABLE, a fenced epoch
#: NOT_LEADER_OR_FOLLOWER, the group or partition unknown as such, anything else UNKNOWN_SERVER_ERROR
_PERSISTER_ERRORS = {
    ec.NOT_COORDINATOR: ec.COORDINATOR_NOT_AVAILABLE, ec.COORDINATOR_NOT_AVAILABLE: ec.COORDINATOR_NOT_AVAILABLE,
    ec.COORDINATOR_LOAD_IN_PROGRESS: ec.COORDINATOR_NOT_AVAILABLE, ec.GROUP_ID_NOT_FOUND: ec.GROUP_ID_NOT_FOUND,
    ec.UNKNOWN_TOPIC_OR_PARTITION: ec.UNKNOWN_TOPIC_OR_PARTITION, ec.FENCED_LEADER_EPOCH: ec.NOT_LEADER_OR_FOLLOWER,
    ec.FENCED_STATE_EPOCH: ec.NOT_LEADER_OR_FOLLOWER,
}


def persister_error(code: int) -> int:
    """The acknowledgement's error for the share coordinator's answer ``code`` to its write (NONE stays NONE)."""
    return ec.NONE if code == ec.NONE else _PERSISTER_ERRORS.get(code, ec.UNKNOWN_SERVER_ERROR)


def check_ack_batches(batches: list["AckBatch"], *, max_type: int = RENEW, renew_ack: bool = True) -> int:
    """The checks of Kafka's ``KafkaApis.validateAcknowledgementBatches``, each INVALID_REQUEST: a batch's first
    offset after its last, a batch starting before the previous one's last offset (one starting at it passes: the
    offset is then acknowledged twice, which :meth:`SharePartition.acknowledge` judges), a number of types that is neither one nor
    one per offset, a type outside 0..``max_type`` (RENEW from ShareFetch/ShareAcknowledge v2 on, REJECT before), or
    a RENEW in a request whose ``IsRenewAck`` is not set (``renew_ack``). A request with IsRenewAck may mix RENEW
    with the other types."""
    previous_last = -1
    for b in batches:
        span = b.last_offset - b.first_offset + 1
        types = b.acknowledge_types
        if span < 1 or b.first_offset < previous_last or len(types) not in (1, span) or \
                any(t < 0 or t > max_type for t in types) or (RENEW in types and not renew_ack):
            return ec.INVALID_REQUEST
        previous_last = b.last_offset
    return ec.NONE


@dataclass(frozen=True)
class ShareConfig:
    """The group configs that steer a share-partition, with Kafka's keys' defaults."""

    record_lock_duration_ms: int = 30_000  # share.record.lock.duration.ms
    delivery_count_limit: int = 5  # share.delivery.count.limit
    max_record_locks: int = 2000  # share.partition.max.record.locks
    auto_offset_reset: str = "latest"  # share.auto.offset.reset
    renew_enabled: bool = True  # share.renew.acknowledge.enable
    read_committed: bool = False  # share.isolation.level is read_committed (default read_uncommitted)
    #: share.version 2 or above and the group names a DLQ topic (Kafka's ``SharePartition.isDLQEnabledForGroup``)
    dlq_enabled: bool = False


def initial_start_offset(policy: str, log_start_offset: int, log_end_offset: int,
                         offset_for_duration: int | None = None) -> int:
    """Where a share-partition with no durable state starts: ``share.auto.offset.reset`` is ``latest`` (the log end),
    ``earliest`` (the log start) or ``by_duration:…``, for which the runtime looks up the offset of the timestamp
    now minus the duration (``offset_for_duration``; None when no record is that recent, which starts at the end)."""
    if policy == "earliest":
        return log_start_offset
    if policy == "latest":
        return log_end_offset
    if policy.startswith("by_duration:"):
        return log_end_offset if offset_for_duration is None else max(offset_for_duration, log_start_offset)
    raise ValueError(f"unknown share.auto.offset.reset {policy!r}")


@dataclass(frozen=True)
class ShareStateBatch:
    """One ``StateBatch`` of ``ShareSnapshotValue``/``ShareUpdateValue``: a run of offsets with one state and count."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


def _batches(entries: list[tuple[int, int, int]]) -> list[ShareStateBatch]:
    """Runs of consecutive ``(offset, state, count)`` entries (sorted by offset) with the same state and count."""
    out: list[ShareStateBatch] = []
    for offset, state, count in entries:
        last = out[-1] if out else None
        if last and last.last_offset + 1 == offset and (last.delivery_state, last.delivery_count) == (state, count):
            out[-1] = ShareStateBatch(last.first_offset, offset, state, count)
        else:
            out.append(ShareStateBatch(offset, offset, state, count))
    return out


@dataclass(frozen=True)
class ShareWrite:
    """What one state change must make durable before it is answered: the fields of a ``ShareUpdateValue`` — the
    new start offset, the changed records' state batches, and ``DeliveryCompleteCount`` (KIP-1226: the in-flight
    records already finished, which with the start and end offsets gives the share-partition's lag)."""

    leader_epoch: int
    start_offset: int
    delivery_complete_count: int
    state_batches: tuple[ShareStateBatch, ...]
    #: the offsets an acknowledgement changed, pending until :meth:`SharePartition.complete` (not written)
    pending: tuple[int, ...] = field(default=(), compare=False)


@dataclass
class ShareState:
    """The durable state of one share-partition, as the share coordinator folds it: the fields of a
    ``ShareSnapshotValue`` (``start_offset`` -1 until the share-partition is initialized)."""

    state_epoch: int = 0
    leader_epoch: int = -1
    start_offset: int = -1
    delivery_complete_count: int = -1
    snapshot_epoch: int = 0
    state_batches: tuple[ShareStateBatch, ...] = ()

    def apply(self, write: ShareWrite) -> "ShareState":
        """The state after ``write`` (a ``ShareUpdate``): its batches replace the offsets they cover, and offsets below
        the new start offset are dropped."""
        per_offset = {o: (b.delivery_state, b.delivery_count)
                      for b in self.state_batches for o in range(b.first_offset, b.last_offset + 1)}
        for b in write.state_batches:
            for o in range(b.first_offset, b.last_offset + 1):
                per_offset[o] = (b.delivery_state, b.delivery_count)
        start = write.start_offset
        kept = sorted((o, s, c) for o, (s, c) in per_offset.items() if o >= start)
        return ShareState(self.state_epoch, write.leader_epoch, start, write.delivery_complete_count,
                          self.snapshot_epoch, tuple(_batches(kept)))


@dataclass(frozen=True)
class AcquiredRecords:
    """One ``AcquiredRecords`` entry of a ShareFetch answer."""

    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass(frozen=True)
class AckBatch:
    """One ``AcknowledgementBatches`` entry: one type for every offset, or one per offset from first to last."""

    first_offset: int
    last_offset: int
    acknowledge_types: tuple[int, ...]


@dataclass(frozen=True)
class DeadLetter:
    """A run of ARCHIVING offsets to write to the group's DLQ topic (Kafka's ``ShareGroupDLQRecordParameter``)."""

    first_offset: int
    last_offset: int
    delivery_count: int
    cause: str


@dataclass
class _InFlight:
    state: int
    delivery_count: int
    member_id: str = ""
    deadline_ms: int = 0  # when an ACQUIRED record's lock expires
    #: an ARCHIVING record's cause (:data:`CLIENT_REJECT`, :data:`DELIVERY_COUNT_EXCEEDED`), and whether its DLQ
    #: write was handed to the runtime
    dlq_cause: str | None = None
    dlq_started: bool = False
    #: while an acknowledgement's write is on its way: the (member, lock deadline) it held before, to go back to
    #: if the write fails (Kafka's ``InFlightState.startStateTransition`` / ``completeStateTransition``)
    rollback: tuple[str, int] | None = None


@dataclass
class SharePartition:
    """One share group's view of one partition on its leader."""

    config: ShareConfig
    leader_epoch: int
    start_offset: int
    fetched_end: int = -1  # first offset never handed out; -1 means start_offset
    records: dict[int, _InFlight] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.fetched_end < self.start_offset:
            self.fetched_end = self.start_offset

    @classmethod
    def initialize(cls, config: ShareConfig, durable: ShareState, *, leader_epoch: int, log_start_offset: int,
                   log_end_offset: int, offset_for_duration: int | None = None) -> "SharePartition":
        """The state a new leader starts from (Kafka's ``maybeInitialize``): the durable state when there is one —
        its written records, everything else between them AVAILABLE and never delivered — or else a start offset
        chosen by ``share.auto.offset.reset``."""
        if durable.start_offset < 0:
            start = initial_start_offset(config.auto_offset_reset, log_start_offset, log_end_offset,
                                         offset_for_duration)
            return cls(config, leader_epoch, start)
        part = cls(config, leader_epoch, durable.start_offset)
        for b in durable.state_batches:
            # an ARCHIVING record's DLQ write starts again (Kafka's ``maybeResumeDlqArchiving``): its cause is told
            # apart by the delivery count alone
            cause = None if b.delivery_state != ARCHIVING else (
                DELIVERY_COUNT_EXCEEDED if b.delivery_count >= config.delivery_count_limit else CLIENT_REJECT)
            for o in range(max(b.first_offset, part.start_offset), b.last_offset + 1):
                part.records[o] = _InFlight(b.delivery_state, b.delivery_count, dlq_cause=cause)
        if part.records:
            part.fetched_end = max(part.records) + 1
            for o in range(part.start_offset, part.fetched_end):
                part.records.setdefault(o, _InFlight(AVAILABLE, 0))
        part._advance_start()
        return part

    # -- reading ---------------------------------------------------------------------------------------------

    def state_of(self, offset: int) -> tuple[int, int, str] | None:
        """``(state, delivery count, member)`` of an in-flight offset, None outside the in-flight window."""
        r = self.records.get(offset)
        return None if r is None else (r.state, r.delivery_count, r.member_id)

    def next_fetch_offset(self) -> int:
        """The first offset a fetch could acquire: the lowest AVAILABLE in-flight record, else the window's end."""
        return min((o for o, r in self.records.items() if r.state == AVAILABLE and r.rollback is None),
                   default=self.fetched_end)

    def can_acquire(self) -> bool:
        """Kafka's ``canAcquireRecords``: records inside the window are available again, or the window holds fewer
        than ``share.partition.max.record.locks`` records."""
        return self.next_fetch_offset() != self.fetched_end or \
            self.fetched_end - self.start_offset < self.config.max_record_locks

    def delivery_complete_count(self) -> int:
        return sum(1 for r in self.records.values() if r.state in FINISHED)

    def next_lock_deadline(self) -> int | None:
        """When the earliest lock expires (the runtime's timer), None when nothing is acquired."""
        return min((r.deadline_ms for r in self.records.values() if r.state == ACQUIRED), default=None)

    # -- changes ---------------------------------------------------------------------------------------------

    def acquire(self, member_id: str, first_offset: int, last_offset: int, max_records: int,
                now_ms: int) -> list[AcquiredRecords]:
        """Acquire for ``member_id`` the records the log read returned, ``first_offset``..``last_offset``: the
        AVAILABLE ones already in flight, then new ones past the window while it holds fewer than
        ``share.partition.max.record.locks``; at most ``max_records`` in all. Each gets a lock until
        ``now_ms + share.record.lock.duration.ms`` and its delivery count raised. Nothing is written. The read
        starts at or before the window's end (the runtime reads from :meth:`next_fetch_offset`)."""
        if first_offset > self.fetched_end:
            raise ValueError(f"a read from {first_offset} skips offsets from {self.fetched_end}: "
                             "the runtime reads from next_fetch_offset()")
        deadline = now_ms + self.config.record_lock_duration_ms
        taken: list[tuple[int, int]] = []
        offset = max(first_offset, self.start_offset)
        while offset <= last_offset and len(taken) < max_records:
            r = self.records.get(offset)
            if r is None:
                if self.fetched_end - self.start_offset >= self.config.max_record_locks:
                    break
                r = self.records[offset] = _InFlight(AVAILABLE, 0)
                self.fetched_end = offset + 1
            if r.state == AVAILABLE and r.rollback is None:
                r.state, r.member_id, r.deadline_ms = ACQUIRED, member_id, deadline
                r.delivery_count += 1
                taken.append((offset, r.delivery_count))
            offset += 1
        out: list[AcquiredRecords] = []
        for o, count in taken:
            if out and out[-1].last_offset + 1 == o and out[-1].delivery_count == count:
                out[-1] = AcquiredRecords(out[-1].first_offset, o, count)
            else:
                out.append(AcquiredRecords(o, o, count))
        return out

    def acknowledge(self, member_id: str, batches: list[AckBatch],
                    now_ms: int) -> tuple[int, str | None, ShareWrite | None]:
        """Apply one member's acknowledgements, all or nothing: ``(error code, message, write)``, the write None
        when nothing but locks changed. RENEW keeps a record ACQUIRED, by the same member with the same delivery
        count, with a new lock from ``now_ms`` (KIP-1222; Kafka's ``SharePartition`` cancels the lock's timer and
        schedules a new one) — INVALID_RECORD_STATE when the group's ``share.renew.acknowledge.enable`` is false.
        Offsets below the start offset are already finished and skipped when the batch reaches the start offset
        (Kafka acknowledges from the start offset when it moved inside a batch), while a batch wholly below it is
        not found. A malformed request (:func:`check_ack_batches`) or offsets past the window is
        INVALID_REQUEST; a batch not found, or an offset not ACQUIRED or acquired by another member, is
        INVALID_RECORD_STATE."""
        error = check_ack_batches(batches)
        if error != ec.NONE:
            return error, None, None
        changes: dict[int, int] = {}  # offset: its type, the last one given (a RENEW may be followed by another)
        for batch in batches:
            types = batch.acknowledge_types
            if batch.first_offset >= self.fetched_end:
                return (ec.INVALID_REQUEST,
                        "Batch record not found. The first offset in request is past acquired records.", None)
            if batch.last_offset >= self.fetched_end:
                return (ec.INVALID_REQUEST,
                        "Batch record not found. The last offset in request is past acquired records.", None)
            if batch.last_offset < self.start_offset:
                return (ec.INVALID_RECORD_STATE,
                        "Batch record not found. The request batch offsets are not found in the cache.", None)
            for i, offset in enumerate(range(batch.first_offset, batch.last_offset + 1)):
                if offset < self.start_offset:
                    continue
                r = self.records[offset]
                if r.state != ACQUIRED or changes.get(offset, RENEW) != RENEW:
                    return (ec.INVALID_RECORD_STATE,
                            "The batch cannot be acknowledged. The subset batch is not in the acquired state.", None)
                if r.member_id != member_id:
                    return ec.INVALID_RECORD_STATE, "Member is not the owner of offset", None
                ack = types[0] if len(types) == 1 else types[i]
                if ack == RENEW and not self.config.renew_enabled:
                    return ec.INVALID_RECORD_STATE, "Renewing acquisition locks is not enabled for the group.", None
                changes[offset] = ack
        finished = []
        for offset, ack in changes.items():
            r = self.records[offset]
            if ack == RENEW:
                r.deadline_ms = now_ms + self.config.record_lock_duration_ms
            else:
                r.rollback = (r.member_id, r.deadline_ms)
                if ack == REJECT and self.config.dlq_enabled:
                    self._finish_acquisition(r, ARCHIVING, CLIENT_REJECT)
                else:
                    self._finish_acquisition(r, _ACK_STATE[ack])
                finished.append(offset)
        if not finished:
            return ec.NONE, None, None
        write = self._write(finished, pending=True)
        return ec.NONE, None, write

    def complete(self, write: ShareWrite, durable: bool, now_ms: int) -> ShareWrite | None:
        """An acknowledgement's write came back (Kafka's ``rollbackOrProcessStateUpdates``). Durable: its changes
        stand and the start offset moves past what they finished. Failed: each record goes back to the member that
        held it — or, when its lock expired meanwhile, is released as an expiry releases it (AVAILABLE, ARCHIVED at
        the delivery-count limit; ``InFlightState.completeStateTransition``), which returns the write to make."""
        expired = []
        for offset in write.pending:
            r = self.records.get(offset)
            if r is None or r.rollback is None:
                continue
            member, deadline = r.rollback
            r.rollback = None
            if durable:
                continue
            r.state, r.member_id, r.deadline_ms, r.dlq_cause = ACQUIRED, member, deadline, None
            if deadline <= now_ms:
                # Kafka's completeStateTransition(false) on an expired lock: ARCHIVED at the limit, not ARCHIVING
                self._finish_acquisition(r, AVAILABLE, dlq=False)
                expired.append(offset)
        if expired:
            return self._write(expired)
        self._advance_start()
        return None

    def archive(self, offsets) -> ShareWrite | None:
        """Archive the ACQUIRED records among ``offsets`` — those of aborted transactions a ``read_committed``
        share-partition just acquired (Kafka's ``filterAbortedTransactionalAcquiredRecords``): never delivered nor
        redelivered, their delivery count kept. Written like any other change; the start offset moves past them
        when they are at its front."""
        archived = sorted(o for o in set(offsets) if (r := self.records.get(o)) is not None and r.state == ACQUIRED)
        for offset in archived:
            self._finish_acquisition(self.records[offset], ARCHIVED)
        return self._write(archived) if archived else None

    def release_member(self, member_id: str) -> ShareWrite | None:
        """A member left (or its share session closed): every record it holds goes back (Kafka's
        ``releaseAcquiredRecords``)."""
        return self._release(lambda r: r.member_id == member_id)

    def expire_locks(self, now_ms: int) -> ShareWrite | None:
        """Every lock whose deadline has come releases its record (Kafka's acquisition lock timeout task)."""
        return self._release(lambda r: r.deadline_ms <= now_ms)

    def _release(self, which) -> ShareWrite | None:
        offsets = sorted(o for o, r in self.records.items() if r.state == ACQUIRED and which(r))
        for offset in offsets:
            self._finish_acquisition(self.records[offset], AVAILABLE)
        return self._write(offsets) if offsets else None

    def _finish_acquisition(self, r: _InFlight, state: int, cause: str | None = None, *, dlq: bool = True) -> None:
        """End an acquisition in ``state``; going back to AVAILABLE at the delivery-count limit archives instead —
        through the dead-letter queue (ARCHIVING) when the group has one and ``dlq``."""
        if state == AVAILABLE and r.delivery_count >= self.config.delivery_count_limit:
            dead_letter = dlq and self.config.dlq_enabled
            state, cause = (ARCHIVING, DELIVERY_COUNT_EXCEEDED) if dead_letter else (ARCHIVED, None)
        r.state, r.member_id, r.deadline_ms, r.dlq_cause = state, "", 0, cause

    # -- the dead-letter queue -------------------------------------------------------------------------------

    def dead_letters(self) -> list[DeadLetter]:
        """The ARCHIVING records whose DLQ write has not been handed out yet and whose change is durable (no
        acknowledgement write pending), as runs of one delivery count and cause; they are marked handed out."""
        out: list[DeadLetter] = []
        for o in sorted(o for o, r in self.records.items()
                        if r.state == ARCHIVING and not r.dlq_started and r.rollback is None):
            r = self.records[o]
            r.dlq_started = True
            cause, last = r.dlq_cause or CLIENT_REJECT, out[-1] if out else None
            if last and last.last_offset + 1 == o and (last.delivery_count, last.cause) == (r.delivery_count, cause):
                out[-1] = DeadLetter(last.first_offset, o, r.delivery_count, cause)
            else:
                out.append(DeadLetter(o, o, r.delivery_count, cause))
        return out

    def archive_dead_letters(self, letter: DeadLetter) -> ShareWrite | None:
        """A DLQ write ended (written or not: Kafka archives regardless): the run's records still ARCHIVING become
        ARCHIVED. The write carries the start offset as it stood before (Kafka writes, then moves the start)."""
        offsets = [o for o in range(letter.first_offset, letter.last_offset + 1)
                   if (r := self.records.get(o)) is not None and r.state == ARCHIVING]
        for o in offsets:
            r = self.records[o]
            r.state, r.dlq_cause, r.dlq_started = ARCHIVED, None, False
        if not offsets:
            return None
        write = replace(self._write(offsets, pending=True), pending=())
        self._advance_start()
        return write

    def _advance_start(self) -> None:
        """The start offset moves past the finished records at its front — not past one whose acknowledgement's
        write is still on its way."""
        while self.start_offset < self.fetched_end and self.records[self.start_offset].state in FINISHED and \
                self.records[self.start_offset].rollback is None:
            del self.records[self.start_offset]
            self.start_offset += 1

    def _write(self, changed: list[int], pending: bool = False) -> ShareWrite:
        """The write of ``changed``, with the start offset as it stands once the start moved past what is finished
        for good. ``pending`` (an acknowledgement, Kafka's ``writeShareGroupState`` before
        ``maybeUpdateCachedStateAndOffsets``): the start offset moves only when :meth:`complete` says the write is
        durable, so this write carries the records it finished and the next one the start offset past them."""
        if not pending:
            self._advance_start()
        entries = sorted((o, self.records[o].state, self.records[o].delivery_count) for o in set(changed)
                         if o >= self.start_offset)
        return ShareWrite(self.leader_epoch, self.start_offset, self.delivery_complete_count(),
                          tuple(_batches(entries)), tuple(sorted(set(changed))) if pending else ())

    def snapshot(self, state_epoch: int, snapshot_epoch: int) -> ShareState:
        """The whole durable view of this state (a ``ShareSnapshotValue``): acquired records written AVAILABLE with
        the delivery count they had before this acquisition."""
        entries = []
        for o in sorted(self.records):
            r = self.records[o]
            entries.append((o, AVAILABLE, r.delivery_count - 1) if r.state == ACQUIRED
                           else (o, r.state, r.delivery_count))
        return ShareState(state_epoch, self.leader_epoch, self.start_offset, self.delivery_complete_count(),
                          snapshot_epoch, tuple(_batches(entries)))
