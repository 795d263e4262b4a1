"""Consumer-group lag, as a group coordinator can compute it from the offsets its shards hold: for every committed
offset of a group, how far the partition's end (its high watermark, what a read_committed-agnostic consumer can
reach) is past it. Not one of Kafka's broker metrics (Kafka leaves lag to client-side tools such as
``kafka-consumer-groups --describe``); the endpoint exposes it under kraftwire's own name. Pure."""

from __future__ import annotations

from typing import Callable, Iterable, Mapping


def group_lags(shards_offsets: Iterable[Mapping[str, Mapping[tuple[str, int], object]]],
               end_of: Callable[[str, int], int | None]) -> list[tuple[str, str, int, int]]:
    """[(group, topic, partition, lag)] sorted, for each committed offset whose partition end ``end_of(topic,
    partition)`` is known (None: not known here — left out). A lag is never negative (a commit past the end, e.g.
    just after a truncation, reads 0)."""
    out = []
    for offsets in shards_offsets:
        for group, committed in offsets.items():
            for (topic, partition), entry in committed.items():
                end = end_of(topic, partition)
                if end is not None:
                    out.append((group, topic, partition, max(0, end - entry.offset)))
    out.sort()
    return out
