"""A broker's Metadata and DescribeCluster answers from the image (``metadata.answers``), as Kafka's
KRaftMetadataCache gives them: per listener, unfenced brokers only, leader errors by version, offline replicas,
topic ids, ``__cluster_metadata`` hidden, auto-creation requests."""

from __future__ import annotations

import uuid

import pytest

from kraftwire import error_codes as ec
from kraftwire.ids import ZERO_UUID
from kraftwire.java_order import scala_hash_order, string_hash
from kraftwire.metadata.answers import (describe_cluster_brokers, describe_cluster_refusal, metadata_response,
                                       named_topics_order)
from kraftwire.metadata.image import replay_all
from kraftwire.metadata.version import DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m

T1, T2, META = uuid.UUID(int=11), uuid.UUID(int=12), uuid.UUID(int=1)
MR = m.MetadataRequest


def image():
    return replay_all(image_records())


def image_records():
    R = m.RegisterBrokerRecord

    def broker(bid, fenced=False, listeners=("PLAINTEXT", "SECURE")):
        return R(broker_id=bid, incarnation_id=uuid.UUID(int=bid), broker_epoch=bid, fenced=fenced, rack=f"r{bid}",
                 features=[], end_points=[R.BrokerEndpoint(name=n, host=f"h{bid}", port=9000 + 10 * bid + i,
                                                           security_protocol=0) for i, n in enumerate(listeners)])

    P = m.PartitionRecord
    return [
        m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level),
        broker(1), broker(2), broker(3, fenced=True), broker(4, listeners=("PLAINTEXT",)),
        m.TopicRecord(name="t", topic_id=T1),
        P(partition_id=0, topic_id=T1, replicas=[1, 2, 3], isr=[1, 2], leader=1, leader_epoch=5),
        P(partition_id=1, topic_id=T1, replicas=[3, 1], isr=[3], leader=-1, leader_epoch=2),
        P(partition_id=2, topic_id=T1, replicas=[4, 1], isr=[4, 1], leader=4, leader_epoch=0),
        m.TopicRecord(name="__consumer_offsets", topic_id=T2),
        P(partition_id=0, topic_id=T2, replicas=[2], isr=[2], leader=2),
        m.TopicRecord(name="__cluster_metadata", topic_id=META),
    ]


def ask(topics, version=12, listener="SECURE", auto=False, allow=True):
    req = MR(topics=topics, allow_auto_topic_creation=allow)
    return metadata_response(image(), listener, req, version, controller_id=2, cluster_id="c", auto_create=auto)


def test_brokers_are_the_unfenced_ones_with_the_listener_at_that_endpoint():
    body = ask(None).response
    assert [(b.node_id, b.host, b.port, b.rack) for b in body.brokers] == [(1, "h1", 9011, "r1"),
                                                                         (2, "h2", 9021, "r2")]
    assert [b.node_id for b in ask(None, listener="PLAINTEXT").response.brokers] == [1, 2, 4]
    assert [b.broker_id for b in describe_cluster_brokers(image(), "PLAINTEXT")] == [1, 2, 4]
    assert body.controller_id == 2 and body.cluster_id == "c"


def test_describe_cluster_v2_lists_fenced_brokers_when_asked():
    """KIP-1073 (DescribeCluster v2): IncludeFencedBrokers adds the fenced brokers, each flagged IsFenced; without it
    only the unfenced ones are listed, as Kafka's KafkaApis.handleDescribeCluster filters its cache's nodes."""
    unfenced = describe_cluster_brokers(image(), "PLAINTEXT")
    every = describe_cluster_brokers(image(), "PLAINTEXT", include_fenced=True)
    assert [(b.broker_id, b.is_fenced) for b in unfenced] == [(1, False), (2, False), (4, False)]
    assert [(b.broker_id, b.is_fenced) for b in every] == [(1, False), (2, False), (3, True), (4, False)]


def test_all_topics_hide_the_metadata_topic_and_flag_internal_ones():
    topics = ask(None).response.topics
    assert sorted((t.name, t.is_internal, t.topic_id) for t in topics) == [("__consumer_offsets", True, T2),
                                                                          ("t", False, T1)]
    assert [t.name for t in ask([], version=0).response.topics] == [t.name for t in topics]  # v0: [] is all


def test_all_topics_in_kafkas_order():
    """Kafka 4.4 lists every topic in the order of the Scala mutable HashSet its KafkaApis partitions the image's
    names into (checked against the JVM by tests/test_java_order_jvm.py); the conformance run saw Metadata-v0's two
    topics b, a and Metadata-v1's a, b."""
    records = list(image_records())
    for i, name in enumerate(["Metadata-v0-all-topics.a", "Metadata-v0-all-topics.b", "Metadata-v1-all-topics.a",
                              "Metadata-v1-all-topics.b"] + [f"other{n}" for n in range(30)]):
        records.append(m.TopicRecord(name=name, topic_id=uuid.UUID(int=100 + i)))
    req = MR(topics=None, allow_auto_topic_creation=False)
    names = [t.name for t in metadata_response(replay_all(records), "SECURE", req, 12, controller_id=2,
                                               cluster_id="c").response.topics]
    assert [n for n in names if n.startswith("Metadata-v0")] == ["Metadata-v0-all-topics.b", "Metadata-v0-all-topics.a"]
    assert [n for n in names if n.startswith("Metadata-v1")] == ["Metadata-v1-all-topics.a", "Metadata-v1-all-topics.b"]


def test_partition_leaders_offline_replicas_and_errors_by_version():
    (t,) = ask([MR.MetadataRequestTopic(name="t")]).response.topics
    p0, p1, p2 = t.partitions
    assert (p0.error_code, p0.leader_id, p0.leader_epoch, p0.replica_nodes, p0.isr_nodes, p0.offline_replicas) == \
        (ec.NONE, 1, 5, [1, 2, 3], [1, 2], [3])
    assert (p1.error_code, p1.leader_id, p1.offline_replicas) == (ec.LEADER_NOT_AVAILABLE, -1, [3])
    # broker 4 leads but has no SECURE listener: LISTENER_NOT_FOUND from v6, LEADER_NOT_AVAILABLE before
    assert (p2.error_code, p2.leader_id, p2.offline_replicas) == (ec.LISTENER_NOT_FOUND, -1, [4])
    old = ask([MR.MetadataRequestTopic(name="t")], version=5).response.topics[0].partitions[2]
    assert old.error_code == ec.LEADER_NOT_AVAILABLE
    v0 = ask([MR.MetadataRequestTopic(name="t")], version=0, listener="PLAINTEXT").response.topics[0].partitions[0]
    assert v0.error_code == ec.REPLICA_NOT_AVAILABLE and v0.replica_nodes == [1, 2] and v0.isr_nodes == [1, 2]


@pytest.mark.parametrize("topic, version, code", [
    (MR.MetadataRequestTopic(name="nope"), 12, ec.UNKNOWN_TOPIC_OR_PARTITION),
    (MR.MetadataRequestTopic(name="bad name"), 12, ec.INVALID_TOPIC_EXCEPTION),
    (MR.MetadataRequestTopic(name="__cluster_metadata"), 12, ec.UNKNOWN_TOPIC_OR_PARTITION),
    (MR.MetadataRequestTopic(name=None, topic_id=uuid.UUID(int=99)), 12, ec.UNKNOWN_TOPIC_ID),
    (MR.MetadataRequestTopic(name=None, topic_id=META), 12, ec.UNKNOWN_TOPIC_ID),
])
def test_unknown_topics(topic, version, code):
    (t,) = ask([topic], version=version).response.topics
    assert t.error_code == code and t.partitions == []


def test_topics_by_id_and_auto_creation():
    (t,) = ask([MR.MetadataRequestTopic(name=None, topic_id=T1)]).response.topics
    assert t.name == "t" and t.error_code == ec.NONE and len(t.partitions) == 3
    wanted = [MR.MetadataRequestTopic(name=n) for n in ("new", "bad name", "t", "__cluster_metadata")]
    answer = ask(wanted, auto=True)
    assert answer.to_create == ("new",)
    codes = {x.name: x.error_code for x in answer.response.topics}
    assert codes == {"new": ec.UNKNOWN_TOPIC_OR_PARTITION, "bad name": ec.INVALID_TOPIC_EXCEPTION, "t": ec.NONE,
                     "__cluster_metadata": ec.UNKNOWN_TOPIC_OR_PARTITION}
    assert answer.response.topics[0].name == "t"  # Kafka answers the existing topics first
    assert ask(wanted, auto=True, allow=False).to_create == ()  # the client said no
    assert ask(wanted, auto=False).to_create == ()  # auto.create.topics.enable=false


def _named(names, known):
    R = m.MetadataResponse
    return [R.MetadataResponseTopic(error_code=ec.NONE if n in known else ec.UNKNOWN_TOPIC_OR_PARTITION, name=n,
                                    topic_id=uuid.UUID(int=1 + i) if n in known else ZERO_UUID, partitions=[])
            for i, n in enumerate(names)]


def test_named_topics_in_kafka_order():
    """Kafka 4.4 answered the conformance scenarios' topics so (its KafkaApis: a Scala set of the names, the known
    ones first, the unknown ones in a java.util.HashSet's order; java_order's models are checked against the JVM
    by tests/test_java_order_jvm.py)."""
    ns = "Metadata-v4-known-and-unknown"
    got = named_topics_order(_named([f"{ns}.b", f"{ns}.a"], {f"{ns}.a"}))
    assert [t.name for t in got] == [f"{ns}.a", f"{ns}.b"]
    ns = "Metadata-v0-known-and-auto-created"
    got = named_topics_order(_named([f"{ns}.b", f"{ns}.a"], {f"{ns}.a"}))
    assert [t.name for t in got] == [f"{ns}.a", f"{ns}.b"]
    # up to four names keep the request's order among the known ones; from five a CHAMP trie's order
    assert [t.name for t in named_topics_order(_named(list("dcba"), set("abcd")))] == list("dcba")
    assert [t.name for t in named_topics_order(_named(list("edcba"), set("abcde")))] == scala_hash_order(
        list("edcba"), string_hash)


# ---------------------------------------------------------------------------------------------- DescribeTopicPartitions
DTP = m.DescribeTopicPartitionsRequest


def describe(names=(), limit=2000, cursor=None, cap=2000, may_describe=None):
    from kraftwire.metadata.answers import describe_topic_partitions

    req = DTP(topics=[DTP.TopicRequest(name=n) for n in names], response_partition_limit=limit,
              cursor=None if cursor is None else DTP.Cursor(topic_name=cursor[0], partition_index=cursor[1]))
    return describe_topic_partitions(image(), "SECURE", req, partition_limit=cap, may_describe=may_describe)


def _rows(body):
    return [(t.name, t.error_code, [p.partition_index for p in t.partitions]) for t in body.topics]


def test_describe_topic_partitions_answers_every_topic_sorted_with_leaders_offline_replicas_and_elr():
    body = describe()
    assert _rows(body) == [("__consumer_offsets", 0, [0]), ("t", 0, [0, 1, 2])] and body.next_cursor is None
    t = body.topics[1]
    assert t.topic_id == T1 and not t.is_internal and body.topics[0].is_internal
    p0, p1, p2 = t.partitions
    assert (p0.leader_id, p0.leader_epoch, p0.replica_nodes, p0.isr_nodes, p0.offline_replicas) == (
        1, 5, [1, 2, 3], [1, 2], [3])  # broker 3 is fenced
    assert (p0.eligible_leader_replicas, p0.last_known_elr, p0.error_code) == ([], [], 0)
    assert p1.leader_id == -1  # no leader
    assert p2.leader_id == -1 and p2.offline_replicas == [4]  # broker 4 has no SECURE listener


def test_describe_topic_partitions_pages_with_a_cursor_as_kafka_does():
    first = describe(["t", "__consumer_offsets"], limit=2)
    assert _rows(first) == [("__consumer_offsets", 0, [0]), ("t", 0, [0])]
    assert (first.next_cursor.topic_name, first.next_cursor.partition_index) == ("t", 1)
    second = describe(["t", "__consumer_offsets"], limit=2, cursor=("t", 1))
    assert _rows(second) == [("t", 0, [1, 2])] and second.next_cursor is None
    # the limit filled exactly at a topic's end: the next topic starts the next page
    exact = describe(limit=1)
    assert _rows(exact) == [("__consumer_offsets", 0, [0])]
    assert (exact.next_cursor.topic_name, exact.next_cursor.partition_index) == ("t", 0)
    assert _rows(describe(limit=5, cap=1)) == _rows(exact)  # max.request.partition.size.limit caps it
    assert _rows(describe(limit=0)) == _rows(exact)  # at least one partition


def test_describe_topic_partitions_errors_and_refusals():
    from kraftwire.metadata.answers import InvalidDescribeRequest

    body = describe(["nope", "bad/name", "__cluster_metadata"])
    assert _rows(body) == [("__cluster_metadata", ec.UNKNOWN_TOPIC_OR_PARTITION, []),
                           ("bad/name", ec.INVALID_TOPIC_EXCEPTION, []), ("nope", ec.UNKNOWN_TOPIC_OR_PARTITION, [])]
    with pytest.raises(InvalidDescribeRequest, match="should contain the cursor topic"):
        describe(["t"], cursor=("other", 0))
    with pytest.raises(InvalidDescribeRequest, match="cursor partition must be valid"):
        describe(["t"], cursor=("t", -1))
    hidden = describe(["t", "__consumer_offsets"], may_describe=lambda n: n != "t")
    assert _rows(hidden) == [("__consumer_offsets", 0, [0]), ("t", ec.TOPIC_AUTHORIZATION_FAILED, [])]
    assert hidden.topics[1].topic_id == uuid.UUID(int=0)
    assert _rows(describe(may_describe=lambda n: n != "t")) == [("__consumer_offsets", 0, [0])]


def test_describe_cluster_endpoint_types_a_listener_does_not_serve():
    """KIP-919 as Kafka 4.4's broker listener answered (tests/conformance, DescribeCluster scenarios): the
    controllers asked of a client listener, or an unknown type, get the error alone (the response's defaults)."""
    assert describe_cluster_refusal(1, False) is None and describe_cluster_refusal(2, True) is None
    assert describe_cluster_refusal(1, True) is None  # a single-listener node serves clients on it
    mismatched = describe_cluster_refusal(2, False)
    assert (mismatched.error_code, mismatched.error_message) == (
        ec.MISMATCHED_ENDPOINT_TYPE,
        "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER")
    unknown = describe_cluster_refusal(3, True)
    assert (unknown.error_code, unknown.error_message) == (ec.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 3")
    assert (unknown.cluster_id, unknown.controller_id, unknown.brokers, unknown.endpoint_type) == ("", -1, [], 1)
