"""The replication throttles ``kraftwire reassign-partitions --execute --throttle B/s`` sets, as Kafka's
ReassignPartitionsCommand computes them (pure).

Each moving partition's *sources* (its replicas now; for a partition already moving, its replicas less those being
added) and *destinations* (the new replicas that are not sources) give, per topic, the leader throttled replicas
(``partition:source`` of every source) and the follower throttled replicas (``partition:destination``), each a
comma-separated list sorted as strings (Kafka's TreeSet); every broker that is a source or a destination gets
``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate`` set to the throttle. The brokers
and topics then throttle only those replicas (``kraftwire.replica.replication_quota``); ``--verify`` clears it all
once the moves are done.
"""

from __future__ import annotations

from typing import Mapping

#: Kafka's words, printed before the throttles are set
VERIFY_PERIODICALLY = ("Warning: You must run --verify periodically, until the reassignment completes, to ensure the "
                       "throttle is removed.")

Moves = dict[str, dict[int, tuple[frozenset[int], frozenset[int]]]]


def move_map(ongoing: Mapping[tuple[str, int], object], proposed: Mapping[tuple[str, int], list[int]],
             current: Mapping[tuple[str, int], list[int]]) -> Moves:
    """Kafka's calculateProposedMoveMap: {topic: {partition: (sources, destinations)}} of the reassignments in
    progress (``ongoing``: ListPartitionReassignments' partitions) and the proposed ones."""
    moves: Moves = {}
    for (topic, partition), r in ongoing.items():
        adding = set(r.adding_replicas)
        moves.setdefault(topic, {})[partition] = (frozenset(set(r.replicas) - adding), frozenset(adding))
    for (topic, partition), replicas in proposed.items():
        parts = moves.setdefault(topic, {})
        if partition in parts:
            sources = parts[partition][0]
        elif (topic, partition) in current:
            sources = frozenset(current[(topic, partition)])
        else:
            raise ValueError(f"Trying to reassign a topic partition {topic}-{partition} with 0 replicas")
        parts[partition] = (sources, frozenset(replicas) - sources)
    return moves


def leader_throttles(moves: Moves) -> dict[str, str]:
    return {topic: ",".join(sorted(f"{p}:{b}" for p, (sources, _) in parts.items() for b in sources))
            for topic, parts in moves.items()}


def follower_throttles(moves: Moves) -> dict[str, str]:
    return {topic: ",".join(sorted(f"{p}:{b}" for p, (sources, dests) in parts.items() for b in dests
                                   if b not in sources))
            for topic, parts in moves.items()}


def reassigning_brokers(moves: Moves) -> list[int]:
    return sorted({b for parts in moves.values() for sources, dests in parts.values() for b in sources | dests})
