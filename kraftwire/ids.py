"""Tiny immutable value types shared by every layer."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

#: Kafka's reserved "no id" value for node and replica ids.
NO_ID = -1


@dataclass(frozen=True, slots=True)
class OffsetAndEpoch:
    """A log position with the epoch that wrote it.

    Deliberately unordered: comparing "how up to date is a log" orders by epoch first, then
    offset (``is_at_least``), which is not the field order. Use the explicit method.
    """

    offset: int
    epoch: int

    def is_at_least(self, other: "OffsetAndEpoch") -> bool:
        """True iff self is at least as up to date as *other* (epoch first, then offset)."""
        return (self.epoch, self.offset) >= (other.epoch, other.offset)


@dataclass(frozen=True, slots=True, order=True)
class SnapshotId:
    """A snapshot's identity: its exclusive end offset and the epoch of the last record it contains.

    Ordered by (end_offset, epoch), as Kafka orders snapshot ids.
    """

    end_offset: int
    epoch: int

    def __str__(self) -> str:
        return f"{self.end_offset:020d}-{self.epoch:010d}"


@dataclass(frozen=True, slots=True)
class ReplicaKey:
    """A replica's identity: node id plus (KIP-853) its log directory id, when known."""

    id: int
    directory_id: uuid.UUID | None = None

    def matches(self, other: "ReplicaKey") -> bool:
        """Same id, and same directory id when both sides know theirs."""
        if self.id != other.id:
            return False
        if self.directory_id is None or other.directory_id is None:
            return True
        return self.directory_id == other.directory_id


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A named listener endpoint (``NAME://host:port``)."""

    name: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.name}://{host}:{self.port}"


ZERO_UUID = uuid.UUID(int=0)
#: Kafka's fixed topic id of ``__cluster_metadata`` (Uuid.METADATA_TOPIC_ID = (0, 1)).
METADATA_TOPIC_ID = uuid.UUID(int=1)
#: The topic id Kafka's TestRaftServer uses for ``__raft_performance_test`` ((0, 2)).
PERFORMANCE_TEST_TOPIC_ID = uuid.UUID(int=2)
