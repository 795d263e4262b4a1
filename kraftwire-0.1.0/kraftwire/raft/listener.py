"""The typed client surface (Kafka's ``RaftClient<T>`` listener side).

A ``RecordSerde`` turns application records into bytes and back. Listeners receive, in offset order and never twice:
``handle_commit(batches)`` for committed batches (control batches arrive with no records, so offsets stay
contiguous), ``handle_load_snapshot(reader)`` when they must start from a snapshot, and
``handle_leader_change(leader_and_epoch)`` on every leader/epoch change. A listener registered late is told the
current leader at once. The leader notifies its own listeners only once its first record of the epoch is committed,
so a state machine never writes before it has seen everything committed before its epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generic, Protocol, Sequence, TypeVar

from kraftwire.ids import NO_ID, SnapshotId
from kraftwire.log.api import Isolation, LogView
from kraftwire.records import read_batches

T = TypeVar("T")


class RecordSerde(Protocol[T]):
    def serialize(self, record: T) -> bytes: ...

    def deserialize(self, data: bytes) -> T: ...


def serializer_of(serde: RecordSerde) -> "Callable[[Sequence], list[bytes]]":
    """What turns one append's records into values: the serde's ``serialize_all`` when it has one (an append may
    hold thousands of records; one call per record was a tenth of a leader's time), else ``serialize`` each."""
    many = getattr(serde, "serialize_all", None)
    if many is not None:
        return many
    one = serde.serialize
    return lambda records: [one(r) for r in records]


class BytesSerde:
    """The identity serde (records are bytes)."""

    def serialize(self, record: bytes) -> bytes:
        return bytes(record)

    def serialize_all(self, records) -> list[bytes]:
        records = list(records)
        if set(map(type, records)) <= _BYTES:  # immutable already: nothing to convert (4x cheaper than bytes())
            return records
        return list(map(bytes, records))

    def deserialize(self, data: bytes) -> bytes:
        return bytes(data)


_BYTES = frozenset((bytes,))


@dataclass(frozen=True, slots=True)
class LeaderAndEpoch:
    leader_id: int
    epoch: int

    def is_leader(self, node_id: int) -> bool:
        return self.leader_id == node_id and node_id != NO_ID


class Batch(Generic[T]):
    """A committed batch as a listener sees it. ``records`` are decoded through the serde on first use only: most
    listeners need the offsets and counts alone, and decoding every record into objects was the largest single cost
    of a committed batch. ``source`` is the codec's batch (header fields, records), for a listener that folds
    batches itself: the hub's one read serves it too. ``None`` for a batch made from records alone."""

    __slots__ = ("base_offset", "last_offset", "epoch", "append_timestamp", "size_in_bytes", "is_control",
                 "record_count", "source", "_records", "_serde")

    def __init__(self, base_offset: int, last_offset: int, epoch: int, append_timestamp: int, size_in_bytes: int,
                 records: tuple[T, ...] | None = None, is_control: bool = False, *, source=None,
                 serde: "RecordSerde[T] | None" = None) -> None:
        self.base_offset = base_offset
        self.last_offset = last_offset
        self.epoch = epoch
        self.append_timestamp = append_timestamp
        self.size_in_bytes = size_in_bytes
        self.is_control = is_control
        if records is None and (is_control or source is None):
            records = ()
        self._records = records
        self.source = source
        self._serde = serde
        self.record_count = len(records) if records is not None else source.record_count

    @property
    def records(self) -> tuple[T, ...]:
        records = self._records
        if records is None:
            deserialize = self._serde.deserialize
            records = self._records = tuple(deserialize(r.value) for r in self.source)
        return records

    def __repr__(self) -> str:
        return (f"Batch({self.base_offset}..{self.last_offset}, epoch={self.epoch}, "
                f"{'control' if self.is_control else f'{self.record_count} records'})")


class Listener(Protocol[T]):
    def handle_commit(self, batches: list[Batch[T]]) -> None: ...

    def handle_load_snapshot(self, reader: "SnapshotReader[T]") -> None: ...

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None: ...


class SnapshotSource(Protocol[T]):
    """A listener that can produce snapshots implements this too: the records of its state image, exactly as of
    everything it has been given so far (its position is always a batch boundary at or below the HW)."""

    def snapshot_records(self) -> list[T]: ...


@dataclass(frozen=True, slots=True)
class SnapshotReader(Generic[T]):
    """What ``handle_load_snapshot`` receives: the snapshot id and its data records (control records left out)."""

    snapshot_id: SnapshotId
    records: tuple[T, ...]
    last_contained_timestamp: int = -1


class ListenerContext:
    """Where one listener is: the next offset it needs and the last leader it was told about."""

    def __init__(self, listener: Listener, next_offset: int = 0) -> None:
        self.listener = listener
        self.next_offset = next_offset
        self.delivered_bytes = 0
        self.last_epoch = 0  # epoch of the last batch delivered (names a snapshot taken at next_offset)
        self.last_leader: LeaderAndEpoch | None = None


class ListenerHub:
    """Delivers committed batches, snapshots and leader changes to every registered listener, in order, once."""

    def __init__(self, log: LogView, serde: RecordSerde, max_bytes: int) -> None:
        self.log = log
        self.serde = serde
        self.max_bytes = max_bytes
        self.contexts: list[ListenerContext] = []

    def register(self, listener: Listener, current: LeaderAndEpoch | None) -> None:
        ctx = ListenerContext(listener, 0)
        self.contexts.append(ctx)
        self._notify(ctx, current)

    def notify_leader(self, current: LeaderAndEpoch | None) -> None:
        for ctx in self.contexts:
            self._notify(ctx, current)

    @staticmethod
    def _notify(ctx: ListenerContext, current: LeaderAndEpoch | None) -> None:
        if current is not None and current != ctx.last_leader:
            ctx.last_leader = current
            ctx.listener.handle_leader_change(current)

    def deliver(self, *, may_load_snapshot: bool = True) -> None:
        """Hand every listener what was committed since its last call (a snapshot first, if it is behind the log
        start). One read of the log serves every listener at the same position (usually all of them). The leader
        never loads a snapshot (``may_load_snapshot=False``)."""
        log = self.log
        hw = log.high_watermark()
        contexts = self.contexts
        for ctx in contexts:
            if ctx.next_offset < log.start_offset():
                if not may_load_snapshot:
                    raise AssertionError("a leader never loads a snapshot")
                self._load_snapshot(ctx)
        while True:
            behind = [ctx for ctx in contexts if ctx.next_offset < hw]
            if not behind:
                return
            offset = min(ctx.next_offset for ctx in behind)
            batches = self._read(offset, hw)
            if not batches:
                return
            for ctx in behind:
                # Every position is a batch boundary, so a listener ahead of the read takes a suffix of it.
                mine = batches if ctx.next_offset == offset else [b for b in batches if b.base_offset >= ctx.next_offset]
                if mine:
                    ctx.next_offset = mine[-1].last_offset + 1
                    ctx.last_epoch = mine[-1].epoch
                    ctx.delivered_bytes += sum(b.size_in_bytes for b in mine)
                    ctx.listener.handle_commit(mine)

    def _read(self, offset: int, hw: int) -> list[Batch]:
        info = self.log.read(offset, self.max_bytes, Isolation.COMMITTED)
        batches = []
        serde = self.serde
        for rb in read_batches(info.records, validate=False):
            if rb.last_offset < offset:
                continue
            if rb.base_offset >= hw:
                break
            batches.append(Batch(rb.base_offset, rb.last_offset, rb.partition_leader_epoch, rb.max_timestamp,
                                 rb.size_in_bytes, None, rb.is_control, source=rb, serde=serde))
        return batches

    def _load_snapshot(self, ctx: ListenerContext) -> None:
        snapshot_id = self.log.latest_snapshot_id()
        if snapshot_id is None:
            return
        raw = self.log.read_snapshot(snapshot_id)
        records = []
        for rb in read_batches(raw.records(), validate=True):
            if not rb.is_control:
                records.extend(self.serde.deserialize(r.value) for r in rb)
        ctx.listener.handle_load_snapshot(SnapshotReader(snapshot_id, tuple(records)))
        ctx.next_offset = snapshot_id.end_offset
        ctx.last_epoch = snapshot_id.epoch
