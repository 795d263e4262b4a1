"""OffsetForLeaderEpoch at every version both serve, as a consumer asks it (replica id -1, after a leader change,
to find where its epoch's log ends): the current epoch, an epoch the leader has not reached (UNKNOWN_LEADER_EPOCH
for the current epoch; the end of the log for the asked one), unknown topics and partitions
(UNKNOWN_TOPIC_OR_PARTITION). Mirrors Kafka's OffsetsForLeaderEpochRequestTest."""

from __future__ import annotations

from conformance.data_steps import A
from conformance.runner import Step, each_version
from conformance.steps import batch, created, produce

from kraftwire.protocol import messages as w

OE = w.OffsetForLeaderEpochRequest


def end_offsets(v, *asks, name: str = A) -> Step:
    """``asks`` as (partition, current leader epoch, leader epoch)."""
    return Step(OE(replica_id=-1, topics=[OE.OffsetForLeaderTopic(topic=name, partitions=[
        OE.OffsetForLeaderPartition(partition=p, current_leader_epoch=current, leader_epoch=epoch)
        for p, current, epoch in asks])]), v)


def _written(*requests):
    """Topic A (two partitions, three records in partition 0), then one OffsetForLeaderEpoch per entry."""
    return lambda v: [*created(A, partitions=2), produce(A, 0, batch(3)), *(end_offsets(v, *asks) for asks in requests)]


CASES = {
    "current-epoch": _written(((0, 0, 0), (1, 0, 0)), ((0, -1, 0),)),
    "future-epoch": _written(((0, -1, 3),)),
    "unknown-current-epoch": _written(((0, 4, 0),)),
    "unknown-partition": _written(((5, -1, 0), (-1, -1, 0))),
    "unknown-topic": lambda v: [end_offsets(v, (0, -1, 0))],
}

SCENARIOS = each_version("OffsetForLeaderEpoch", CASES)
