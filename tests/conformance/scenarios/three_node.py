"""The "three-node" pair: three combined nodes per side, each a voter and a broker. CreateTopics with replication
factor 3 and explicit assignments, and the assignments Kafka refuses (a broker that does not exist, a broker named
twice, partitions of different sizes, a gap in the partition numbers, a replication factor above the broker count);
Metadata and DescribeTopicPartitions listing three brokers, leaders and ISRs; DescribeCluster; ElectLeaders
(ELECTION_NOT_NEEDED, an unknown partition, PREFERRED_LEADER_NOT_AVAILABLE while the preferred replica's broker is
down, then the preferred leader back); DescribeLogDirs of one broker's share; and a broker stopped and started again
(``NodeChange``): the ISRs shrinking and growing back as Metadata shows them on both sides, and acks=all answered
NOT_ENOUGH_REPLICAS where min.insync.replicas=3 while min.insync.replicas=2 still takes writes; the stopped broker
in the eligible leader replicas (KIP-966) DescribeTopicPartitions shows while it is away; and a consumer's Fetch sent
to a follower (KIP-392: refused below v11, served from v11).

Topics are placed by explicit assignments wherever an answer names replicas: Kafka's placement starts at a random
broker, so a topic placed by the controller lists other replicas on each side."""

from __future__ import annotations

from dataclasses import replace

from conformance.data_steps import fetch, fetch_topic, marker, records
from conformance.data_steps import produce as produce_records
from conformance.runner import NodeChange, Scenario, Step, each_version, error_codes, no_error, versions
from conformance.steps import create, metadata, topic

from kraftwire.protocol import messages as w

A, B = "{ns}.a", "{ns}.b"
CONFIG = "three-node"
#: the nodes of each side
NODES = (1, 2, 3)
#: each partition led by another broker (the first of its replicas)
SPREAD = [(0, [1, 2, 3]), (1, [2, 3, 1]), (2, [3, 1, 2])]


def placed(name: str, *assignments, configs=()) -> list[Step]:
    """Set-up: ``name`` created with ``assignments`` and every partition led with all its replicas in sync, as the
    node asked shows it and then (a ``probe``, compared nowhere) as every node does: a broker applies the metadata a
    moment after the others, and until then answers for the partition UNKNOWN_TOPIC_OR_PARTITION where it will
    answer NOT_LEADER_OR_FOLLOWER."""
    in_sync_here = in_sync(name, len(assignments[0][1]))
    return [create(7, topic(name, -1, -1, assignments=assignments, configs=configs)),
            metadata(name, until=in_sync_here),
            *(replace(metadata(name, until=in_sync_here), node=node, probe=True) for node in NODES)]


def in_sync(name_suffix: str, size: int):
    """``until`` for Metadata: the topic's partitions are led and have ``size`` replicas in sync."""
    suffix = name_suffix.replace("{ns}", "")

    def check(answer) -> bool:
        found = [t for t in answer.topics if t.name is not None and t.name.endswith(suffix)]
        return bool(found) and all(t.error_code == 0 and t.partitions and all(
            p.error_code == 0 and p.leader_id >= 0 and len(p.isr_nodes) == size for p in t.partitions)
            for t in found)
    return check


def without(broker: int, also):
    """``until`` for Metadata: ``broker`` is no longer listed (fenced) and ``also`` holds."""
    return lambda answer: broker not in [b.node_id for b in answer.brokers] and also(answer)


def led_by(name_suffix: str, partition: int, *leaders: int):
    suffix = name_suffix.replace("{ns}", "")

    def check(answer) -> bool:
        return any(t.name is not None and t.name.endswith(suffix) and any(
            p.partition_index == partition and p.leader_id in leaders for p in t.partitions) for t in answer.topics)
    return check


def _every_replica(answer) -> bool:
    """``until`` for DescribeLogDirs of node 1: its log directory holds a replica of each of the three partitions
    (a follower's replica may be listed a moment after the ISRs name it)."""
    return sum(len(t.partitions) for r in answer.results for t in r.topics) == 3


def elect(version: int, election: int, *parts: tuple[str, list[int]]) -> Step:
    EL = w.ElectLeadersRequest
    return Step(EL(election_type=election, topic_partitions=[EL.TopicPartitions(topic=n, partitions=list(ps))
                                                             for n, ps in parts], timeout_ms=10000), version)


def describe_partitions(*names: str, until=None) -> Step:
    DTP = w.DescribeTopicPartitionsRequest
    return Step(DTP(topics=[DTP.TopicRequest(name=n) for n in names], response_partition_limit=100, cursor=None), 0,
                until=until)


def eligible(*elr: int):
    """``until`` for DescribeTopicPartitions: every partition's eligible leader replicas are ``elr``."""
    return lambda answer: all(t.error_code == 0 and t.partitions and all(
        sorted(p.eligible_leader_replicas or []) == list(elr) for p in t.partitions) for t in answer.topics)


CREATE = {
    "replication-factor-3": lambda v: [create(v, topic(A, 3, 3))],
    "assignments": lambda v: [create(v, topic(A, -1, -1, assignments=SPREAD)), metadata(A, until=in_sync(A, 3))],
    "unknown-broker": lambda v: [create(v, topic(A, -1, -1, assignments=[(0, [1, 2, 4])])), metadata(A)],
    "broker-twice": lambda v: [create(v, topic(A, -1, -1, assignments=[(0, [1, 1, 2])]))],
    "uneven-partitions": lambda v: [create(v, topic(A, -1, -1, assignments=[(0, [1, 2]), (1, [1, 2, 3])]))],
    "partition-gap": lambda v: [create(v, topic(A, -1, -1, assignments=[(0, [1]), (2, [2])]))],
    "factor-above-brokers": lambda v: [create(v, topic(A, 1, 4)), create(v, topic(B, 1, 3, configs=[
        ("min.insync.replicas", "4")]))],
    "assignment-with-factor": lambda v: [create(v, topic(A, -1, 3, assignments=[(0, [1, 2, 3])]))],
}

ELECT = {
    "preferred-not-needed": lambda v: [*placed(A, *SPREAD), elect(v, 0, (A, [0, 1, 2]))],
    "unclean-not-needed": lambda v: [*placed(A, *SPREAD), elect(v, 1, (A, [0]))],
    "unknown-partition": lambda v: [*placed(A, (0, [1, 2, 3])), elect(v, 0, (A, [0, 5]), ("{ns}.missing", [0]))],
}

# one broker stopped and started again: the costly scenarios, at the newest versions both serve only
BROKER_DOWN = [
    ("Produce", 9, "min-insync-with-a-broker-down", [
        *placed(A, (0, [1, 2, 3]), configs=[("min.insync.replicas", "2")]),
        *placed(B, (0, [1, 2, 3]), configs=[("min.insync.replicas", "3")]),
        NodeChange("stop", 3),
        metadata(A, B, until=without(3, in_sync("", 2))),  # node 3 fenced, the ISRs shrunk (in either order)
        produce_records(9, (A, 0, records())),
        produce_records(9, (B, 0, records())),
        marker((B, [0]), producer_id=7000, epoch=0),  # a marker's append needs min.insync.replicas as well
        describe_partitions(A, B),
        NodeChange("start", 3),
        metadata(A, B, until=in_sync("", 3)),  # and grow back once it caught up
        produce_records(9, (B, 0, records(first=3))),
    ]),
    # eligible leader replicas (KIP-966, on at 4.4-IV0): node 3 stopped leaves the ISR of a topic whose
    # min.insync.replicas is its replication factor, so it joins the ELR; back and caught up, the ISR is whole
    # again and the ELR empty
    ("DescribeTopicPartitions", 0, "elr-after-a-broker-stops", [
        *placed(B, (0, [1, 2, 3]), configs=[("min.insync.replicas", "3")]),
        NodeChange("stop", 3),
        metadata(B, until=without(3, in_sync(B, 2))),
        describe_partitions(B, until=eligible(3)),
        NodeChange("start", 3),
        metadata(B, until=in_sync(B, 3)),
        describe_partitions(B, until=eligible()),
    ]),
    ("ElectLeaders", 2, "preferred-leader-down", [
        *placed(A, (0, [3, 1, 2])),
        NodeChange("stop", 3),
        metadata(A, until=led_by(A, 0, 1, 2)),
        elect(2, 0, (A, [0])),
        NodeChange("start", 3),
        metadata(A, until=in_sync(A, 3)),
        elect(2, 0, (A, [0])),
        metadata(A, until=led_by(A, 0, 3)),
    ]),
]

OE, LO = w.OffsetForLeaderEpochRequest, w.ListOffsetsRequest


def stale_epoch_asks(node: int) -> list[Step]:
    """OffsetForLeaderEpoch, ListOffsets and Fetch of A-0 sent to ``node`` naming leader epoch 0 as the current one:
    FENCED_LEADER_EPOCH once the leadership moved on (a client's metadata older than the leader's). First a wait
    until ``node`` itself serves A-0 in epoch 1: Kafka's broker publishes new metadata to its cache a moment before
    its replica manager takes the leadership, and is NOT_LEADER_OR_FOLLOWER in between (seen in CI)."""
    return [
        Step(OE(replica_id=-1, topics=[OE.OffsetForLeaderTopic(topic=A, partitions=[OE.OffsetForLeaderPartition(
            partition=0, current_leader_epoch=1, leader_epoch=1)])]), versions("OffsetForLeaderEpoch")[-1],
             node=node, until=no_error, probe=True),
        Step(OE(replica_id=-1, topics=[OE.OffsetForLeaderTopic(topic=A, partitions=[OE.OffsetForLeaderPartition(
            partition=0, current_leader_epoch=0, leader_epoch=0)])]), versions("OffsetForLeaderEpoch")[-1],
             node=node),
        Step(LO(replica_id=-1, isolation_level=0, topics=[LO.ListOffsetsTopic(name=A, partitions=[
            LO.ListOffsetsPartition(partition_index=0, current_leader_epoch=0, timestamp=-1)])]),
             versions("ListOffsets")[-1], node=node),
        replace(fetch(12, fetch_topic(12, A, (0, 0), leader_epoch=0)), node=node),
    ]


BROKER_DOWN.append(
    # the leader of A-0 (node 3) stopped: node 1, next in the replicas' order, leads in epoch 1
    ("OffsetForLeaderEpoch", versions("OffsetForLeaderEpoch")[-1], "fenced-leader-epoch", [
        *placed(A, (0, [3, 1, 2])),
        NodeChange("stop", 3),
        metadata(A, until=led_by(A, 0, 1)),
        *stale_epoch_asks(1),
        NodeChange("start", 3),
        metadata(A, until=in_sync(A, 3)),
    ]))

LOOK = {
    "Metadata": lambda v: [*placed(A, *SPREAD), metadata(A, version=v)],
    "DescribeTopicPartitions": lambda v: [*placed(A, *SPREAD), describe_partitions(A)],
    "DescribeCluster": lambda v: [Step(w.DescribeClusterRequest(include_cluster_authorized_operations=True), v)],
    "DescribeLogDirs": lambda v: [*placed(A, *SPREAD), Step(w.DescribeLogDirsRequest(topics=[
        w.DescribeLogDirsRequest.DescribableLogDirTopic(topic=A, partitions=[0, 1, 2])]), v, until=_every_replica)],
    "DescribeQuorum": lambda v: [Step(w.DescribeQuorumRequest(topics=[w.DescribeQuorumRequest.TopicData(
        topic_name="__cluster_metadata", partitions=[w.DescribeQuorumRequest.PartitionData(partition_index=0)])]),
        v, until=lambda answer: not any(error_codes(answer)))],
}

QUORUM = {
    # a partition the metadata quorum does not have: UNKNOWN_TOPIC_OR_PARTITION from the controller
    "unknown-partition": lambda v: [Step(w.DescribeQuorumRequest(topics=[w.DescribeQuorumRequest.TopicData(
        topic_name="__cluster_metadata", partitions=[w.DescribeQuorumRequest.PartitionData(partition_index=1)]),
        w.DescribeQuorumRequest.TopicData(topic_name="{ns}.quorum", partitions=[
            w.DescribeQuorumRequest.PartitionData(partition_index=0)])]), v)],
}

def _replicated(answer) -> bool:
    """``until`` for a follower's Fetch of A-0: its high watermark reached the three records (or it refused)."""
    part = answer.responses[0].partitions[0] if answer.responses and answer.responses[0].partitions else None
    return part is not None and (part.error_code != 0 or part.high_watermark == 3)


#: KIP-392: a consumer's Fetch of A-0 (led by node 1) sent to follower node 2 — refused NOT_LEADER_OR_FOLLOWER below
#: v11, served up to the follower's high watermark from v11 (no replica.selector.class: no preferred replica)
FOLLOWER = {
    "from-a-follower": lambda v: [*placed(A, (0, [1, 2, 3])), produce_records(9, (A, 0, records())),
                                  replace(fetch(v, fetch_topic(v, A, (0, 0)), until=_replicated), node=2)],
}

SCENARIOS = [
    *each_version("Fetch", FOLLOWER, config=CONFIG, at=[10, 11, versions("Fetch")[-1]]),
    *each_version("DescribeQuorum", QUORUM, config=CONFIG, at=[versions("DescribeQuorum")[-1]]),
    *each_version("CreateTopics", CREATE, config=CONFIG, at=[7]),
    *each_version("ElectLeaders", ELECT, config=CONFIG, at=[2]),
    *(scenario for api, make in LOOK.items()
      for scenario in each_version(api, {"three-brokers": make}, config=CONFIG, at=[versions(api)[-1]])),
    *(Scenario(api, version, name, steps, CONFIG) for api, version, name, steps in BROKER_DOWN),
]
