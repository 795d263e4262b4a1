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
from typing import Generic, Protocol, TypeVar

from kraftwire.ids import NO_ID

T = TypeVar("T")


class RecordSerde(Protocol[T]):
    def serialize(self, record: T) -> bytes: ...

    def deserialize(self, data: bytes) -> T: ...


class BytesSerde:
    """The identity serde (records are bytes)."""

    def serialize(self, record: bytes) -> bytes:
        return bytes(record)

    def deserialize(self, data: bytes) -> bytes:
        return bytes(data)


@dataclass(frozen=True, slots=True)
class LeaderAndEpoch:
    leader_id: int
    epoch: int

    def is_leader(self, node_id: int) -> bool:
        return self.leader_id == node_id and node_id != NO_ID


@dataclass(frozen=True, slots=True)
class Batch(Generic[T]):
    base_offset: int
    last_offset: int
    epoch: int
    append_timestamp: int
    size_in_bytes: int
    records: tuple[T, ...]
    is_control: bool = False


class Listener(Protocol[T]):
    def handle_commit(self, batches: list[Batch[T]]) -> None: ...

    def handle_load_snapshot(self, reader: object) -> None: ...

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None: ...


class ListenerContext:
    """Where one listener is: the next offset it needs and the last leader it was told about."""

    def __init__(self, listener: Listener, next_offset: int = 0) -> None:
        self.listener = listener
        self.next_offset = next_offset
        self.last_leader: LeaderAndEpoch | None = None
