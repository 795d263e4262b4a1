"""AlterPartitionReassignments and ListPartitionReassignments on the "three-node" pair (KIP-455, KIP-860): a
reordering that completes at once, a move of a one-replica partition to another broker, the refusals (an unknown
topic, partition or broker, a broker named twice, an empty target, a cancel with nothing moving, KIP-860's
replication factor change with AllowReplicationFactorChange false), and a move to a stopped broker, which stays in
progress — listed, cancelled, started again and completed once the broker is back."""

from __future__ import annotations

from conformance.runner import NodeChange, Scenario, Step, each_version
from conformance.scenarios.three_node import CONFIG, in_sync, placed, without
from conformance.steps import metadata

from kraftwire.protocol import messages as w

A = "{ns}.a"
AR, LR = w.AlterPartitionReassignmentsRequest, w.ListPartitionReassignmentsRequest


def reassign(version: int, *parts, allow_rf_change: bool = True) -> Step:
    """AlterPartitionReassignments of ``parts``: (topic, partition, replicas or None to cancel)."""
    by_topic: dict[str, list] = {}
    for name, index, replicas in parts:
        by_topic.setdefault(name, []).append(AR.ReassignablePartition(partition_index=index, replicas=replicas))
    return Step(AR(timeout_ms=10000, allow_replication_factor_change=allow_rf_change, topics=[
        AR.ReassignableTopic(name=n, partitions=ps) for n, ps in by_topic.items()]), version)


def listed(*topics, everything: bool = False) -> Step:
    """ListPartitionReassignments of ``topics`` — (topic, [partition, ...]) — or of every topic (``everything``,
    scoped to the scenario's own)."""
    request = LR(timeout_ms=10000, topics=None if everything else [
        LR.ListPartitionReassignmentsTopics(name=n, partition_indexes=list(ps)) for n, ps in topics])
    return Step(request, 0, scope=everything)


def replicas_are(*replicas: int, partition: int = 0):
    """``until`` for Metadata: ``partition`` of the scenario's topic has these replicas, led, all in sync."""
    def check(answer) -> bool:
        return any(t.name is not None and t.name.endswith(".a") and any(
            p.partition_index == partition and p.replica_nodes == list(replicas) and p.leader_id in replicas
            and sorted(p.isr_nodes) == sorted(replicas) for p in t.partitions) for t in answer.topics)
    return check


ALTER = {
    "reorder": lambda v: [*placed(A, (0, [1, 2, 3])), reassign(v, (A, 0, [3, 2, 1])),
                          metadata(A, until=replicas_are(3, 2, 1)), listed((A, [0]))],
    "move-one-replica": lambda v: [*placed(A, (0, [1])), reassign(v, (A, 0, [2])),
                                   metadata(A, until=replicas_are(2)), listed((A, [0]))],
    "refused": lambda v: [*placed(A, (0, [1, 2])),
                          reassign(v, (A, 0, [1, 2, 4]), (A, 0, [1, 1]), (A, 0, []), (A, 3, [1]),
                                   ("{ns}.missing", 0, [1]), (A, 0, None)),
                          metadata(A)],
    "replication-factor-change": lambda v: [*placed(A, (0, [1, 2]), (1, [2, 3])),
                                            reassign(v, (A, 0, [1, 2, 3]), (A, 1, [3, 2]), allow_rf_change=False),
                                            # the reorder of partition 1 done on each side (a count in sync is
                                            # reached before it)
                                            metadata(A, until=replicas_are(3, 2, partition=1)),
                                            listed((A, [0, 1]))] if v >= 1 else None,
}

LIST = {
    "nothing-moving": lambda v: [*placed(A, (0, [1, 2])), listed((A, [0, 5]), ("{ns}.missing", [0])),
                                 listed(everything=True)],
}

# a broker stopped and started again: the costly scenario, at the newest version of each
STOPPED = [
    ("ListPartitionReassignments", 0, "move-to-a-stopped-broker", [
        *placed(A, (0, [1, 2])),
        NodeChange("stop", 3),
        metadata(A, until=without(3, in_sync(A, 2))),
        reassign(1, (A, 0, [1, 3])),  # broker 3 is registered (fenced): accepted, and cannot catch up
        listed((A, [0])),
        listed(everything=True),
        reassign(1, (A, 0, None)),  # cancelled: back to [1, 2]
        listed((A, [0])),
        metadata(A, until=replicas_are(1, 2)),
        reassign(1, (A, 0, [1, 3])),
        NodeChange("start", 3),
        metadata(A, until=replicas_are(1, 3)),  # broker 3 caught up: the move completed
        listed((A, [0])),
    ]),
]

SCENARIOS = [
    *each_version("AlterPartitionReassignments", ALTER, config=CONFIG),
    *each_version("ListPartitionReassignments", LIST, config=CONFIG),
    *(Scenario(api, version, name, steps, CONFIG) for api, version, name, steps in STOPPED),
]
