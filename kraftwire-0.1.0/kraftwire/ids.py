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


#: the uuid type, for the pure layers' annotations (they never make ids: those are passed in)
UUID = uuid.UUID
ZERO_UUID = uuid.UUID(int=0)
#: Kafka's fixed topic id of ``__cluster_metadata`` (Uuid.METADATA_TOPIC_ID = (0, 1)).
METADATA_TOPIC_ID = uuid.UUID(int=1)
#: The topic id Kafka's TestRaftServer uses for ``__raft_performance_test`` ((0, 2)).
PERFORMANCE_TEST_TOPIC_ID = uuid.UUID(int=2)


# --- Kafka's textual UUID form (appended by the log/storage work) ---------------------------------------------------
# Kafka prints a Uuid as the URL-safe base64 of its 16 bytes (most significant first) without padding: 22 characters.


def uuid_to_base64(value: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString``: 22-character URL-safe base64, no padding."""
    import base64

    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def uuid_from_base64(text: str) -> uuid.UUID:
    """Inverse of ``uuid_to_base64``; raises ``ValueError`` unless ``text`` is 22 base64url characters."""
    import base64
    import binascii

    if len(text) != 22 or any(c not in _B64URL for c in text):
        raise ValueError(f"not a 22-character base64url uuid: {text!r}")
    try:
        raw = base64.urlsafe_b64decode(text + "==")
    except (binascii.Error, ValueError):
        raise ValueError(f"not a 22-character base64url uuid: {text!r}") from None
    return uuid.UUID(bytes=raw)


_B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def random_kafka_uuid() -> uuid.UUID:
    """Kafka's ``Uuid.randomUuid``: a random v4 UUID that is not a reserved id (zero, one) and whose textual form
    does not start with ``-`` (so it cannot be mistaken for a command-line flag)."""
    while True:
        value = uuid.uuid4()
        if value not in (ZERO_UUID, METADATA_TOPIC_ID) and not uuid_to_base64(value).startswith("-"):
            return value


def replica_key_text(replica_id: int, directory_id: uuid.UUID | None) -> str:
    """Kafka's ``ReplicaKey.toString()``: the directory id is an ``Optional<Uuid>`` (base64 inside)."""
    directory = "Optional.empty" if directory_id in (None, ZERO_UUID) else f"Optional[{uuid_to_base64(directory_id)}]"
    return f"ReplicaKey(id={replica_id}, directoryId={directory})"
