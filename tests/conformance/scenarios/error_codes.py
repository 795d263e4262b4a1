"""Error codes a client can cause that the per-API scenario files did not provoke (issue #36's coverage; the table's
"not provoked" section): each case sets up just what the refusal needs and asks once, at the newest version both
serve (or the version the code belongs to). The KIP-848 cases run on the "coordinators" pair (group.version 1),
the others on "single"."""

from __future__ import annotations

from conformance.data_steps import (
    A, G, JOIN_VERSION, PRODUCE_VERSION, add_offsets, commit, find_coordinator, join, joined, marker, produce,
    records, topic_with, transactional)
from conformance.steps import created
from conformance.runner import ZERO_UUID, Learned, Scenario, Step, TopicId, versions
from conformance.scenarios.consumer_groups import ready
from conformance.scenarios.three_node import CONFIG as THREE_NODE, placed
from conformance.scenarios.wrong_node import on

from kraftwire.protocol import messages as w

CH, CD = w.ConsumerGroupHeartbeatRequest, w.ConsumerGroupDescribeRequest
OC, OF, TC = w.OffsetCommitRequest, w.OffsetFetchRequest, w.TxnOffsetCommitRequest
MEMBER_ID = "{ns}-member-one"
#: the member epoch the KIP-848 join gave (each side's own answer, though both give the same)
EPOCH = Learned("member_epoch", at="ConsumerGroupHeartbeat")
CONSUMER = "coordinators"


def newest(api: str) -> int:
    return versions(api)[-1]


def mark(*parts, **kw) -> Step:
    """A marker at the newest WriteTxnMarkers version both serve (transaction version 0: the older-epoch rule)."""
    return marker(*parts, version=newest("WriteTxnMarkers"), **kw)


def cg_join(*, group: str = G, member_id: str = MEMBER_ID, instance_id=None, assignor=None,
            topics=(A,)) -> Step:
    """A KIP-848 member joining (epoch 0) at the newest ConsumerGroupHeartbeat version."""
    return Step(CH(group_id=group, member_id=member_id, member_epoch=0, instance_id=instance_id,
                   rebalance_timeout_ms=3000, subscribed_topic_names=list(topics), server_assignor=assignor,
                   topic_partitions=[]), newest("ConsumerGroupHeartbeat"))


def consumer_member() -> list[Step]:
    """Topic A and one KIP-848 member in group G (its coordinator found first)."""
    return [find_coordinator(3, G), *ready(A), cg_join()]


def commit_as(member_id, epoch) -> Step:
    """OffsetCommit v9 (the KIP-848 one) of A-0 by member ``member_id`` in ``epoch``."""
    return Step(OC(group_id=G, generation_id_or_member_epoch=epoch, member_id=member_id, topics=[
        OC.OffsetCommitRequestTopic(name=A, partitions=[OC.OffsetCommitRequestPartition(
            partition_index=0, committed_offset=1, committed_metadata="")])]), 9)


def fetch_as(member_id, epoch) -> Step:
    """OffsetFetch v9 of A-0 for member ``member_id`` in ``epoch`` (KIP-848's check of who asks)."""
    return Step(OF(groups=[OF.OffsetFetchRequestGroup(group_id=G, member_id=member_id, member_epoch=epoch, topics=[
        OF.OffsetFetchRequestTopics(name=A, partition_indexes=[0])])], require_stable=False), 9)


def txn_commit(*, metadata: str = "m", instance_id=None, member_id: str = "", generation: int = -1) -> Step:
    """TxnOffsetCommit of A-0 by the scenario's transactional producer, at the newest version."""
    version = newest("TxnOffsetCommit")
    by_id = version >= 6  # topics by id (KIP-1319)
    return Step(TC(transactional_id="{ns}.t", group_id=G, producer_id=Learned("producer_id"),
                   producer_epoch=Learned("producer_epoch"), generation_id_or_member_epoch=generation,
                   member_id=member_id, group_instance_id=instance_id, topics=[TC.TxnOffsetCommitRequestTopic(
                       name="" if by_id else A, topic_id=TopicId(A) if by_id else ZERO_UUID,
                       partitions=[TC.TxnOffsetCommitRequestPartition(
                           partition_index=0, committed_offset=1, committed_metadata=metadata)])]),
                version)


#: Kafka's offset.metadata.max.bytes is 4096: one byte more is refused
TOO_LONG = "x" * 4097
#: a producer id no InitProducerId gave: a broker takes an idempotent batch of any id, and markers of any
PRODUCER = 7000
CASES: list[tuple[str, str, str, list]] = [
    # ---- KIP-848 (group.version 1)
    ("ConsumerGroupHeartbeat", CONSUMER, "empty-group-id", [find_coordinator(3, G), cg_join(group="")]),
    ("ConsumerGroupHeartbeat", CONSUMER, "unsupported-assignor", [*created(A), cg_join(assignor="{ns}-none")]),
    ("ConsumerGroupHeartbeat", CONSUMER, "unreleased-instance-id", [
        find_coordinator(3, G), *ready(A), cg_join(instance_id="{ns}-i"),
        cg_join(member_id="{ns}-member-two", instance_id="{ns}-i")]),
    # group.consumer.max.size=1 on the "sasl-acl" pair: a second member is refused (one that joins is not compared
    # here: Kafka 4.4 assigns at most once a group.consumer.assignment.interval.ms, kraftwire at once)
    ("ConsumerGroupHeartbeat", "sasl-acl", "group-full", [
        find_coordinator(3, G), *ready(A), cg_join(), cg_join(member_id="{ns}-member-two")]),
    ("ConsumerGroupDescribe", CONSUMER, "empty-group-id", [
        find_coordinator(3, G), Step(CD(group_ids=[""], include_authorized_operations=False),
                                     newest("ConsumerGroupDescribe"))]),
    ("OffsetCommit", CONSUMER, "stale-member-epoch", [*consumer_member(), commit_as(MEMBER_ID, 9)]),
    ("OffsetCommit", CONSUMER, "unknown-consumer-member", [*consumer_member(), commit_as("{ns}-nobody", EPOCH)]),
    ("OffsetFetch", CONSUMER, "stale-member-epoch", [*consumer_member(), commit_as(MEMBER_ID, EPOCH),
                                                     fetch_as(MEMBER_ID, 9)]),
    ("OffsetFetch", CONSUMER, "unknown-consumer-member", [*consumer_member(), fetch_as("{ns}-nobody", EPOCH)]),
    # ---- classic groups
    ("OffsetCommit", CONSUMER, "completing-rebalance", [
        find_coordinator(3, G), *created(A), *joined(JOIN_VERSION),
        commit(newest("OffsetCommit"), (A, 0, 1), generation=Learned("generation_id"),
               member_id=Learned("member_id"))]),
    ("OffsetDelete", CONSUMER, "non-consumer-group", [
        find_coordinator(3, G), *created(A), commit(8, (A, 0, 1)), *joined(JOIN_VERSION, protocol_type="connect"),
        Step(w.OffsetDeleteRequest(group_id=G, topics=[w.OffsetDeleteRequest.OffsetDeleteRequestTopic(
            name=A, partitions=[w.OffsetDeleteRequest.OffsetDeleteRequestPartition(partition_index=0)])]), 0)]),
    # (a commit of partitions the topic does not have: each refused, UNKNOWN_TOPIC_OR_PARTITION; a commit above
    # __consumer_offsets' batch limit is UNKNOWN_SERVER_ERROR in Kafka 4.4, never INVALID_COMMIT_OFFSET_SIZE)
    ("OffsetCommit", CONSUMER, "partitions-beyond-the-topic", [
        find_coordinator(3, G), *created(A),
        Step(OC(group_id=G, generation_id_or_member_epoch=-1, member_id="", topics=[OC.OffsetCommitRequestTopic(
            name=A, partitions=[OC.OffsetCommitRequestPartition(
                partition_index=p, committed_offset=1, committed_metadata="m") for p in range(3)])]), 8)]),
    # ---- transactional offsets
    ("TxnOffsetCommit", CONSUMER, "metadata-too-large", [
        find_coordinator(3, G), *created(A), *transactional(), add_offsets(3), txn_commit(metadata=TOO_LONG)]),
    ("TxnOffsetCommit", CONSUMER, "fenced-instance-id", [
        find_coordinator(3, G), *created(A), join(JOIN_VERSION, instance_id="{ns}-i"), *transactional(),
        add_offsets(3), txn_commit(instance_id="{ns}-i", member_id="{ns}-impostor",
                                   generation=Learned("generation_id", at="JoinGroup"))]),
    # ---- topics
    ("DeleteTopics", "no-auto-create", "deletion-disabled", [*created(A), Step(w.DeleteTopicsRequest(
        topics=[w.DeleteTopicsRequest.DeleteTopicState(name=A)], topic_names=[A], timeout_ms=10000),
        newest("DeleteTopics"))]),
    ("DeleteTopics", "single", "invalid-names", [Step(w.DeleteTopicsRequest(
        topics=[w.DeleteTopicsRequest.DeleteTopicState(name=n) for n in ("", "{ns}.bad name", ".")],
        topic_names=[], timeout_ms=10000), newest("DeleteTopics"))]),
    # ---- transaction markers, as a client may send them (WriteTxnMarkers is served on the client listener; the
    # refusals needing an authorizer, another broker or a shrunk ISR are in authorization.py, wrong_node.py and
    # three_node.py)
    ("WriteTxnMarkers", "single", "unknown-topic", [mark(("{ns}.none", [0]), producer_id=PRODUCER, epoch=0)]),
    # asked of a follower (broker 2 of replicas [1, 2]); one holding no replica is in wrong_node.py
    ("WriteTxnMarkers", THREE_NODE, "follower", [*placed(A, (0, [1, 2])), on(2, mark((A, [0]), producer_id=PRODUCER,
                                                                                      epoch=0))]),
    # a marker's batch (some 80 bytes) is held to the topic's max.message.bytes as any other
    ("WriteTxnMarkers", "single", "above-max-message-bytes", [
        *topic_with(A, ("max.message.bytes", "10")), mark((A, [0]), producer_id=PRODUCER, epoch=0)]),
    # an idempotent producer at epoch 3 in the log: a marker of its epoch 2 is stale
    ("WriteTxnMarkers", "single", "epoch-below-the-producers", [
        *topic_with(A), produce(PRODUCE_VERSION, (A, 0, records(producer_id=PRODUCER, producer_epoch=3,
                                                               base_sequence=0))),
        mark((A, [0]), producer_id=PRODUCER, epoch=2)]),
    # ---- data (Kafka 4.4 answers zstd records to a Fetch before v10 as they are: NONE, not
    # UNSUPPORTED_COMPRESSION_TYPE)
    # (by name, v12: no answer of the scenario tells the id of __consumer_offsets, which v13 would need)
    ("Produce", CONSUMER, "internal-topic", [
        find_coordinator(3, G), produce(12, ("__consumer_offsets", 0, records()))]),
    ("Produce", "single", "batch-above-segment", [
        *topic_with(A, ("segment.bytes", "1048576"), ("max.message.bytes", "4000000")),
        produce(newest("Produce"), (A, 0, records(3, value_size=500_000)))]),
    ("Fetch", "single", "zstd-before-v10", [
        *topic_with(A), produce(newest("Produce"), (A, 0, records(3, compression="zstd"))),
        Step(w.FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
                            session_id=0, session_epoch=-1, topics=[w.FetchRequest.FetchTopic(
                                topic=A, partitions=[w.FetchRequest.FetchPartition(
                                    partition=0, fetch_offset=0, current_leader_epoch=-1,
                                    partition_max_bytes=1 << 20)])],
                            forgotten_topics_data=[], rack_id=""), 9)]),
]


#: the version a scenario is listed under: the version of its last request
VERSION = {("Fetch", "zstd-before-v10"): 9, ("OffsetDelete", "non-consumer-group"): 0,
           ("OffsetCommit", "stale-member-epoch"): 9, ("OffsetCommit", "unknown-consumer-member"): 9,
           ("OffsetCommit", "partitions-beyond-the-topic"): 8, ("Produce", "internal-topic"): 12,
           ("OffsetFetch", "stale-member-epoch"): 9, ("OffsetFetch", "unknown-consumer-member"): 9}

SCENARIOS = [Scenario(api, VERSION.get((api, name), newest(api)), name, steps, config)
             for api, config, name, steps in CASES]
