"""When a parked Fetch may be answered (Kafka's ``DelayedFetch.tryComplete``), decided without building its answer.

A Fetch that found fewer than MinBytes waits. Each time one of its partitions moves (an append, a high watermark or
last stable offset move) Kafka does not re-read the partitions: it checks, per partition, how many bytes now lie
between the fetch offset and the offset the fetcher may read up to, from the log's positions. This module is that
check; the purgatory (``server/purgatory.py``) asks it and builds the answer once, when it says yes (or MaxWaitMs
passes).

Per partition watched (each had no error when the fetch was parked), the fetch is ready when:

* **The partition changed hands** (Kafka's cases A/B): it is no longer hosted, its log failed, or its leader epoch
  or role is not the one the fetch was parked under — the answer now carries an error.
* **The fetch offset left the log** (case C, truncation or a moved log start): it is below the log start or past
  the log end — OFFSET_OUT_OF_RANGE.
* **Enough bytes accumulated** (case D): summed over the partitions, the bytes between each fetch offset and its
  bound (the high watermark for a consumer at READ_UNCOMMITTED, the last stable offset at READ_COMMITTED, the log
  end for a follower) reach MinBytes (at least 1).

Kafka caps each partition's bytes by its PartitionMaxBytes; here they are not capped, because an answer may carry
a first batch larger than that cap and must never wait when its answer would be sent: the rule says "ready" at
least whenever the answer built would count as ready, and the purgatory keeps the fetch parked when the built answer
says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

__all__ = ["LOG_END", "HIGH_WATERMARK", "LAST_STABLE_OFFSET", "Watched", "PartitionNow", "fetch_ready"]

#: the offset a fetcher may read up to: a follower the log end, a consumer the high watermark or last stable offset
LOG_END, HIGH_WATERMARK, LAST_STABLE_OFFSET = "log_end", "high_watermark", "last_stable_offset"


@dataclass(frozen=True, slots=True)
class Watched:
    """One partition of a parked Fetch: its ``key`` (topic, index), the ``fetch_offset``, the ``bound`` it reads up
    to, and the ``leader_epoch`` and ``role`` it was read under."""

    key: tuple
    fetch_offset: int
    bound: str
    leader_epoch: int
    role: str


@dataclass(frozen=True, slots=True)
class PartitionNow:
    """A watched partition as it is now: its leader epoch and role, whether its log ``failed``, the log start and
    end, the offset the watched fetch may read up to (``upper``), and ``bytes_between(offset, upper)``: at least
    the bytes a read there could return."""

    leader_epoch: int
    role: str
    failed: bool
    log_start: int
    log_end: int
    upper: int
    bytes_between: Callable[[int, int], int]


def fetch_ready(watched: Iterable[tuple[Watched, PartitionNow | None]], min_bytes: int) -> bool:
    """Whether a parked fetch may be answered now: each watched partition with its state now (None: no longer
    hosted), and the fetch's MinBytes."""
    need = max(min_bytes, 1)
    total = 0
    for w, now in watched:
        if now is None or now.failed or now.leader_epoch != w.leader_epoch or now.role != w.role:
            return True
        if w.fetch_offset < now.log_start or w.fetch_offset > now.log_end:
            return True
        if now.upper > w.fetch_offset:
            total += now.bytes_between(w.fetch_offset, now.upper)
            if total >= need:
                return True
    return False
