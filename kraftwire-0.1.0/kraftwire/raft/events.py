"""Inputs to ``RaftNode.handle``: what the driver tells the core. Time is not an event: every call carries ``now_ms``."""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.raft.messages import Message


@dataclass(frozen=True, slots=True)
class Received:
    """A request or response arrived from the network (already decoded into a core message)."""

    message: Message


@dataclass(frozen=True, slots=True)
class LogFlushed:
    """The driver finished a flush: everything below ``offset`` is durable. Only now does it count toward votes and
    the high watermark, and only now are the messages a ``Ready`` gated on durability sent (by the driver)."""

    offset: int


@dataclass(frozen=True, slots=True)
class RequestFailed:
    """The driver could not deliver a request (connection refused, timed out): the core may retry after backoff."""

    destination: int
    correlation_id: int


@dataclass(frozen=True, slots=True)
class SnapshotStored:
    """The driver froze a snapshot the core asked for (created locally or downloaded with FetchSnapshot)."""

    end_offset: int
    epoch: int


Event = Received | LogFlushed | RequestFailed | SnapshotStored
