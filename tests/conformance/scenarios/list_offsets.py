"""ListOffsets at every version both serve, over a partition holding three records (produced identically to both)
and an empty one: earliest, latest, max timestamp (v7+), earliest local (v8+), by timestamp, read_committed,
leader epochs (v4+), unknown topics and partitions, duplicates."""

from __future__ import annotations

from conformance.runner import Step, each_version
from conformance.steps import batch, created, produce

from kraftwire.protocol import messages as w

LO = w.ListOffsetsRequest
A = "{ns}.a"
EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -2, -1, -3, -4, -5
T0 = 1_700_000_000_000


def offsets(version: int, *asks, isolation: int = 0, name: str = A) -> Step:
    """``asks`` as (partition, timestamp) or (partition, timestamp, current leader epoch); a partition asked twice
    in one request is a scenario of its own (Kafka refuses it)."""
    return Step(LO(replica_id=-1, isolation_level=isolation, timeout_ms=10000, topics=[LO.ListOffsetsTopic(
        name=name, partitions=[LO.ListOffsetsPartition(partition_index=a[0], timestamp=a[1],
                                                       current_leader_epoch=a[2] if len(a) > 2 else -1)
                               for a in asks])]), version)


def _with_records(*requests, isolation: int = 0, name: str = A, since: int = 1):
    """Topic A (two partitions, three records in partition 0), then one ListOffsets per entry of ``requests`` (each
    a tuple of asks)."""
    return lambda v: [*created(A, partitions=2), produce(A, 0, batch(3, timestamp=T0)),
                      *(offsets(v, *asks, isolation=isolation, name=name) for asks in requests)] \
        if v >= since else None


CASES = {
    "earliest-and-latest": _with_records(((0, EARLIEST), (1, EARLIEST)), ((0, LATEST), (1, LATEST))),
    "max-timestamp": _with_records(((0, MAX_TIMESTAMP), (1, MAX_TIMESTAMP)), since=7),
    "earliest-local": _with_records(((0, EARLIEST_LOCAL), (1, EARLIEST_LOCAL)), since=8),
    "latest-tiered": _with_records(((0, LATEST_TIERED),), since=9),
    "by-timestamp": _with_records(((0, T0 + 1), (1, T0)), ((0, T0),), ((0, T0 + 100),)),
    "read-committed": _with_records(((0, LATEST),), ((0, EARLIEST),), isolation=1, since=2),
    "unknown-isolation": _with_records(((0, LATEST),), isolation=5, since=2),
    "current-leader-epoch": _with_records(((0, LATEST, 0), (1, EARLIEST, 0)), since=4),
    "future-leader-epoch": _with_records(((0, LATEST, 5),), since=4),
    "unknown-partition": _with_records(((7, LATEST), (-1, LATEST))),
    "duplicate-partition": _with_records(((0, LATEST), (0, EARLIEST), (1, LATEST))),
    "bad-timestamp": _with_records(((0, -7),)),
    "unknown-topic": lambda v: [offsets(v, (0, LATEST))],
    "invalid-name": lambda v: [offsets(v, (0, LATEST), name="{ns}/a")],
}

SCENARIOS = each_version("ListOffsets", CASES)
