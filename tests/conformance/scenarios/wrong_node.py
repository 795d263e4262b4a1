"""Requests for a partition sent to a broker that holds no replica of it, on the "three-node" pair: Produce,
ListOffsets, Fetch, OffsetForLeaderEpoch, DeleteRecords and WriteTxnMarkers for a partition whose only replica is
broker 1, asked of broker 2 (NOT_LEADER_OR_FOLLOWER, nothing written or deleted; broker 1's answer after shows it;
WriteTxnMarkers is UNKNOWN_TOPIC_OR_PARTITION, as Kafka looks a marker's partition up among the broker's own logs).
The mistake a client with stale metadata makes; run at the newest version both serve (the answer does not change
with it). Mirrors Kafka's ProduceRequestTest.testProduceToNonReplica and
FetchRequestTest.testFetchRequestToNonReplica."""

from __future__ import annotations

import dataclasses

from conformance.data_steps import PRODUCE_VERSION, fetch, fetch_topic, marker, produce, records
from conformance.runner import Scenario, Step, versions
from conformance.scenarios.offset_for_leader_epoch import end_offsets
from conformance.scenarios.partition_admin import delete
from conformance.scenarios.three_node import CONFIG, placed

from kraftwire.protocol import messages as w

A = "{ns}.a"
LO = w.ListOffsetsRequest
#: the broker holding the partition's only replica, and the one asked
OWNER, OTHER = 1, 2


def on(node: int, step: Step) -> Step:
    return dataclasses.replace(step, node=node)


def list_latest(v) -> Step:
    return Step(LO(replica_id=-1, isolation_level=0, timeout_ms=10000, topics=[LO.ListOffsetsTopic(
        name=A, partitions=[LO.ListOffsetsPartition(partition_index=0, timestamp=-1)])]), v)


def _owned_by_one():
    """Topic A, its one partition on broker 1 only, holding three records."""
    return [*placed(A, (0, [OWNER])), on(OWNER, produce(PRODUCE_VERSION, (A, 0, records(3))))]


CASES = {
    "Produce": lambda v: [on(OTHER, produce(v, (A, 0, records(2)))), on(OWNER, list_latest(7))],
    "ListOffsets": lambda v: [on(OTHER, list_latest(v))],
    "Fetch": lambda v: [on(OTHER, fetch(v, fetch_topic(v, A, (0, 0))))],
    "OffsetForLeaderEpoch": lambda v: [on(OTHER, end_offsets(v, (0, -1, 0), name=A))],
    "DeleteRecords": lambda v: [on(OTHER, delete(v, (A, 0, 1))), on(OWNER, list_latest(7))],
    "WriteTxnMarkers": lambda v: [on(OTHER, marker((A, [0]), producer_id=7000, epoch=0, version=v)),
                                  on(OWNER, list_latest(7))],
}

SCENARIOS = [Scenario(api, versions(api)[-1], "no-replica-on-this-broker", [*_owned_by_one(), *make(versions(api)[-1])], CONFIG)
             for api, make in CASES.items()]
