"""``Ready``: everything one step of the core asks the driver to do, in the order it must be done.

THE CONTRACT (the driver executes the fields strictly in this order, then calls the core again):

1. ``persist``          — write the election state (quorum-state: tmp, fsync, rename) *before anything below*.
                           A vote is granted, a candidacy announced or a leadership begun only once this is durable.
2. ``log_ops``          — truncate / initialize the leader epoch / append, in list order (``TruncateTo`` always before
                           any append that follows it, and before the new high watermark of step 6 is applied).
3. ``flush``            — make the log durable; when it completes, report ``LogFlushed(flushed_offset)`` to the core.
                           Only flushed offsets count toward votes and the high watermark.
4. ``send``             — messages that may leave now (their prerequisites are already durable or need none).
5. ``send_after_flush`` — messages that may leave only after the flush of step 3 completed (a follower's next Fetch;
                           vote requests whose last offset includes freshly appended data). Drop them on a crash.
6. ``high_watermark``   — the new high watermark to record in the log (never lower than before).
7. ``snapshot_ops``     — snapshot actions (create a snapshot from listener bytes, store a downloaded chunk, advance
                           the log start after a snapshot).
8. ``next_wakeup_ms``   — call ``poll`` again no later than this (timers: election, fetch, linger, check-quorum).

``number`` increases by one per Ready of a node, so a transcript can name steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kraftwire.ids import SnapshotId
from kraftwire.raft.messages import Message
from kraftwire.raft.election import ElectionState


@dataclass(frozen=True, slots=True)
class TruncateTo:
    offset: int


@dataclass(frozen=True, slots=True)
class InitializeLeaderEpoch:
    epoch: int


@dataclass(frozen=True, slots=True)
class AppendAsLeader:
    """``batches``: the codec's full validation of exactly ``records`` (the core validated a produced batch, or its
    accumulator built it), so the log does not validate them again; ``None`` lets the log validate."""

    records: bytes | memoryview
    epoch: int
    batches: tuple | None = None


@dataclass(frozen=True, slots=True)
class AppendAsFollower:
    """``batches``: the codec's full validation of exactly ``records`` (the epoch filter ran it), so the log does
    not validate them again; ``None`` lets the log validate."""

    records: bytes | memoryview
    epoch: int
    batches: tuple | None = None


@dataclass(frozen=True, slots=True)
class TruncateToLatestSnapshot:
    pass


LogOp = TruncateTo | InitializeLeaderEpoch | AppendAsLeader | AppendAsFollower | TruncateToLatestSnapshot


@dataclass(frozen=True, slots=True)
class CreateSnapshot:
    """Write a locally produced snapshot: ``data`` is the full snapshot bytes (header batch .. footer batch)."""

    snapshot_id: SnapshotId
    data: bytes


@dataclass(frozen=True, slots=True)
class StoreSnapshot:
    """Write a snapshot downloaded from the leader (all chunks, in order) and freeze it."""

    snapshot_id: SnapshotId
    data: bytes


@dataclass(frozen=True, slots=True)
class DeleteBeforeSnapshot:
    """Advance the log start to the snapshot's end offset (only after that snapshot is durable)."""

    snapshot_id: SnapshotId


SnapshotOp = CreateSnapshot | StoreSnapshot | DeleteBeforeSnapshot


@dataclass(frozen=True, slots=True)
class Ready:
    number: int
    persist: ElectionState | None = None
    log_ops: tuple[LogOp, ...] = ()
    flush: bool = False
    send: tuple[Message, ...] = ()
    send_after_flush: tuple[Message, ...] = ()
    high_watermark: int | None = None
    snapshot_ops: tuple[SnapshotOp, ...] = ()
    next_wakeup_ms: int = 0

    def is_empty(self) -> bool:
        return not (
            self.persist
            or self.log_ops
            or self.flush
            or self.send
            or self.send_after_flush
            or self.high_watermark is not None
            or self.snapshot_ops
        )


@dataclass(slots=True)
class ReadyBuilder:
    """Collects one step's effects; ``build`` freezes them into a ``Ready``."""

    persist: ElectionState | None = None
    log_ops: list[LogOp] = field(default_factory=list)
    flush: bool = False
    send: list[Message] = field(default_factory=list)
    send_after_flush: list[Message] = field(default_factory=list)
    high_watermark: int | None = None
    snapshot_ops: list[SnapshotOp] = field(default_factory=list)

    def empty(self) -> bool:
        """Nothing collected yet (no client call left effects for the next step)."""
        return not (self.persist is not None or self.log_ops or self.flush or self.send or self.send_after_flush
                    or self.high_watermark is not None or self.snapshot_ops)

    def build(self, number: int, next_wakeup_ms: int) -> Ready:
        return Ready(
            number=number,
            persist=self.persist,
            log_ops=tuple(self.log_ops),
            flush=self.flush,
            send=tuple(self.send),
            send_after_flush=tuple(self.send_after_flush),
            high_watermark=self.high_watermark,
            snapshot_ops=tuple(self.snapshot_ops),
            next_wakeup_ms=next_wakeup_ms,
        )
