"""The log interface: what the pure Raft core may read, and what the driver may write.

Two implementations share this contract (one contract test suite runs against both):

* ``kraftwire.log.memory.MemoryLog`` — for the deterministic simulation; a simulated crash
  drops everything after the flushed offset.
* ``kraftwire.log.segmented.SegmentedLog`` — Kafka's on-disk format (``%020d.log`` segments
  with ``.index``/``.timeindex``, ``leader-epoch-checkpoint``, snapshots ``%020d-%010d.checkpoint``).

Offsets follow Kafka: ``start_offset`` is the first offset still readable (the log start,
which equals the latest snapshot's end offset after the prefix was deleted); ``end_offset``
is the log end offset (LEO), i.e. one past the last record; ``flushed_offset`` is the end
offset of the durable prefix (only durable records count towards votes and the high
watermark). Records travel as RecordBatch v2 bytes; reads return whole batches.

The core never calls a mutating method; the driver does, in the order a ``Ready`` lists
them, and reports durability back to the core as an event.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterator, Protocol, runtime_checkable

from kraftwire.ids import OffsetAndEpoch, SnapshotId
from kraftwire.records.api import BatchInfo


class Isolation(enum.Enum):
    """How far a read may go: to the log end (replication) or to the high watermark (consumers)."""

    UNCOMMITTED = "uncommitted"
    COMMITTED = "committed"


class ValidationKind(enum.Enum):
    VALID = "valid"
    DIVERGING = "diverging"
    SNAPSHOT = "snapshot"


@dataclass(frozen=True, slots=True)
class ValidOffsetAndEpoch:
    """Result of checking a follower's (fetch offset, last fetched epoch) against this log.

    * VALID: the follower's log matches ours up to the fetch offset; ``offset_and_epoch`` echoes it.
    * DIVERGING: the follower must truncate to ``offset_and_epoch`` (our end offset for its epoch).
    * SNAPSHOT: the follower must fetch the snapshot ``offset_and_epoch`` (end offset, epoch).
    """

    kind: ValidationKind
    offset_and_epoch: OffsetAndEpoch

    @classmethod
    def valid(cls, offset_and_epoch: OffsetAndEpoch) -> "ValidOffsetAndEpoch":
        return cls(ValidationKind.VALID, offset_and_epoch)

    @classmethod
    def diverging(cls, offset_and_epoch: OffsetAndEpoch) -> "ValidOffsetAndEpoch":
        return cls(ValidationKind.DIVERGING, offset_and_epoch)

    @classmethod
    def snapshot(cls, offset_and_epoch: OffsetAndEpoch) -> "ValidOffsetAndEpoch":
        return cls(ValidationKind.SNAPSHOT, offset_and_epoch)


@dataclass(frozen=True, slots=True)
class LogFetchInfo:
    """Whole RecordBatch v2 batches starting at ``start_offset`` (bytes; never mutated later)."""

    records: bytes | memoryview
    start_offset: int


@dataclass(frozen=True, slots=True)
class LogAppendInfo:
    """Offsets an append covered (inclusive). ``last_offset < first_offset`` never happens."""

    first_offset: int
    last_offset: int


@runtime_checkable
class RawSnapshotReader(Protocol):
    """A frozen snapshot: concatenated v2 batches, header control batch first, footer last."""

    @property
    def snapshot_id(self) -> SnapshotId: ...

    def size_in_bytes(self) -> int: ...

    def slice(self, position: int, max_bytes: int) -> bytes:
        """Bytes [position, position + max_bytes) (FetchSnapshot chunks; may split a batch)."""
        ...

    def records(self) -> bytes:
        """The whole snapshot's bytes."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class RawSnapshotWriter(Protocol):
    """A snapshot being written; invisible to readers until ``freeze`` (write, fsync, rename)."""

    @property
    def snapshot_id(self) -> SnapshotId: ...

    def size_in_bytes(self) -> int: ...

    def append(self, data: bytes | memoryview) -> None:
        """Append raw bytes (whole batches when producing; arbitrary chunks when downloading)."""
        ...

    def freeze(self) -> None:
        """Make the snapshot durable and visible. Appending after freeze is an error."""
        ...

    def close(self) -> None:
        """Abandon an unfrozen snapshot (its temporary file is removed)."""
        ...


@runtime_checkable
class LogView(Protocol):
    """Read-only view of the replicated log: everything the pure Raft core may call."""

    def start_offset(self) -> int: ...

    def end_offset(self) -> int: ...

    def flushed_offset(self) -> int: ...

    def high_watermark(self) -> int: ...

    def last_fetched_epoch(self) -> int:
        """Epoch of the last batch in the log; the latest snapshot's epoch if the log past it is empty; 0 if none."""
        ...

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """Kafka's ``endOffsetForEpoch``: the end offset of the largest epoch ≤ ``epoch`` and that epoch.

        As KafkaMetadataLog answers: the latest epoch → (log end offset, epoch); an epoch below the first known
        one → (the first entry's start offset, ``epoch``), replaced by the earliest snapshot's
        (end offset, epoch) when that start offset is the snapshot's end offset; when the epoch cache has no answer
        (empty cache, ``epoch`` above every known epoch, or -1) → (log end offset, ``last_fetched_epoch()``).
        """
        ...

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> ValidOffsetAndEpoch: ...

    def read(self, offset: int, max_bytes: int, isolation: Isolation = Isolation.UNCOMMITTED, *,
             limit: int | None = None) -> LogFetchInfo:
        """Whole batches from the batch containing ``offset``, at most ``max_bytes`` but always at least one batch
        if any is readable, and only batches whose last offset is below ``limit`` (when given) and below the
        isolation's bound (the high watermark, or the log end). ``records`` may be a read-only view. Raises
        ``OffsetOutOfRangeError`` outside [start_offset, end_offset]."""
        ...

    def latest_snapshot_id(self) -> SnapshotId | None: ...

    def earliest_snapshot_id(self) -> SnapshotId | None: ...

    def read_snapshot(self, snapshot_id: SnapshotId) -> RawSnapshotReader | None: ...


@runtime_checkable
class ReplicatedLog(LogView, Protocol):
    """The writable log. Only the driver (and tools) call these, never the Raft core."""

    #: how many truncations removed batches so far (a reader folding the log notices a rewrite by it)
    truncations: int

    def append_as_leader(self, records: bytes | memoryview, epoch: int,
                         batches: list[BatchInfo] | None = None, *, in_place: bool = False) -> LogAppendInfo:
        """Append batches written by this leader: re-based to ``end_offset()``, partition leader epoch set to
        ``epoch``; the epoch cache learns ``epoch`` at the first offset if it is new. ``batches`` is what the
        codec's full validation of exactly ``records`` reported, when the caller ran it (else the log does).
        ``in_place``: ``records`` is a writable buffer handed over, re-based where it is rather than copied."""
        ...

    def append_as_follower(self, records: bytes | memoryview, epoch: int,
                           batches: list[BatchInfo] | None = None) -> LogAppendInfo:
        """Append already validated batches fetched from the leader (their base offset must equal ``end_offset()``).
        ``epoch`` is the follower's current epoch (KAFKA-18723): a batch above it is refused. ``batches`` is what
        the codec's full validation of exactly ``records`` reported, when the caller ran it (else the log does)."""
        ...

    def truncate_to(self, offset: int) -> None:
        """Drop every batch whose last offset is at or above ``offset`` (a batch is never split, so the new end
        offset may be below ``offset``); epoch-cache entries starting at or after the new end go too — also when no
        batch goes and ``offset`` equals the end (an epoch initialised there with no batch yet). Beyond the end it
        is a no-op. Below the high watermark it raises ``InvalidTruncationError``."""
        ...

    def truncate_to_end_offset(self, end: OffsetAndEpoch) -> int:
        """Kafka's ``truncateToEndOffset`` after a DIVERGING fetch answer ``end`` (the leader's end offset for our
        last fetched epoch): truncate to ``min(end.offset, end_offset())`` if our log knows ``end.epoch``, else to
        our own end offset for that epoch. Returns the new end offset. Added by the log work (additive)."""
        ...

    def truncate_to_latest_snapshot(self) -> bool:
        """If the latest snapshot lies beyond the log end (or diverges), drop the whole log and restart it at the
        snapshot's end offset. Returns whether anything was truncated."""
        ...

    def initialize_leader_epoch(self, epoch: int) -> None:
        """Record ``epoch`` as starting at the current end offset (called when this node becomes leader)."""
        ...

    def flush(self) -> int:
        """Make everything appended so far durable; returns the new ``flushed_offset()``."""
        ...

    def update_high_watermark(self, offset: int) -> None: ...

    def create_new_snapshot(self, snapshot_id: SnapshotId) -> RawSnapshotWriter | None:
        """A writer for a snapshot produced locally; ``None`` if that id already exists or ends below the log start
        (as Kafka). Raises ``InvalidSnapshotIdError`` if the id is above the high watermark, not VALID for
        ``validate_offset_and_epoch``, or not on a batch boundary."""
        ...

    def store_snapshot(self, snapshot_id: SnapshotId) -> RawSnapshotWriter:
        """A writer for a snapshot downloaded from the leader (FetchSnapshot). Raises ``InvalidSnapshotIdError``
        if that snapshot already exists."""
        ...

    def delete_before_snapshot(self, snapshot_id: SnapshotId) -> bool:
        """Advance the log start to ``snapshot_id.end_offset`` (deleting whole segments below it and older
        snapshots). Does nothing and returns False unless ``snapshot_id`` is a known snapshot above the current log
        start, at or below the latest snapshot and the high watermark."""
        ...

    def snapshot_ids(self) -> Iterator[SnapshotId]: ...

    def maybe_clean(self, now_ms: int) -> bool:
        """Kafka's ``maybeClean``: apply ``metadata.max.retention.bytes`` / ``.ms`` by advancing the log start to newer
        snapshots (whole segments below it and older snapshots go; the latest snapshot never). Returns whether
        anything was deleted. Added by the log work (additive); the driver calls it after a snapshot is frozen."""
        ...

    def close(self) -> None: ...
