"""The API versions of issue #40, kraftwire beside Apache Kafka 4.4: both advertise the same ranges for the APIs whose
versions were raised (or whose versions Kafka 4.0 removed), and the same requests at the new versions get the same
answers from both (values that name the node — hosts, ports, cluster ids, directories — aside).

Both run at metadata.version 3.9 (KafkaNode's default; the kraftwire node is formatted at it too)."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from harness import processes
from harness.kafka import KafkaNode, until_broker_answers

from kraftwire.protocol import messages as w
from kraftwire.protocol import served
from kraftwire.server.edge.client import request_once

RF1 = ("offsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n"
       "transaction.state.log.min.isr=1\n")
#: the APIs whose ranges issues #40 and #43 (share groups) moved: each advertised as Kafka 4.4 advertises it at
#: metadata.version 3.9 (WriteTxnMarkers: from v1, its lowest since Kafka 4.0, to KIP-1228's v2)
ALIGNED = ("ListOffsets", "Metadata", "LeaveGroup", "DescribeGroups", "DeleteGroups",
           "DescribeLogDirs", "DescribeCluster", "ListTransactions", "CreateTopics", "DeleteTopics",
           "DescribeConfigs", "CreateAcls", "DescribeAcls", "DeleteAcls", "OffsetForLeaderEpoch",
           "ConsumerGroupDescribe", "JoinGroup", "ApiVersions", "AddRaftVoter", "OffsetCommit", "OffsetFetch",
           "UpdateFeatures", "TxnOffsetCommit", "Produce", "SaslHandshake", "SaslAuthenticate", "FindCoordinator",
           "ShareGroupHeartbeat", "ShareGroupDescribe", "InitializeShareGroupState", "ReadShareGroupState",
           "WriteShareGroupState", "DeleteShareGroupState", "ReadShareGroupStateSummary", "ShareFetch",
           "ShareAcknowledge", "WriteTxnMarkers", "DescribeShareGroupOffsets", "AlterShareGroupOffsets",
           "DeleteShareGroupOffsets")


def _ask(port: int, body, version: int):
    return asyncio.run(request_once("127.0.0.1", port, body, version, timeout=15.0))


def _ready(port: int) -> None:
    """A topic "t" exists and both coordinators answer (bounded: 90 s)."""
    CT = w.CreateTopicsRequest
    created = _ask(port, CT(topics=[CT.CreatableTopic(name="t", num_partitions=1, replication_factor=1,
                                                      assignments=[], configs=[])],
                            timeout_ms=15000, validate_only=False), 7)
    assert created.topics[0].error_code == 0, created.topics[0].error_message
    deadline = time.monotonic() + 90
    while True:
        codes = [c.error_code for key_type, key in ((0, "g"), (1, "tx"))
                 for c in _ask(port, w.FindCoordinatorRequest(key_type=key_type, coordinator_keys=[key]), 4)
                 .coordinators]
        if codes == [0, 0]:
            return
        assert time.monotonic() < deadline, f"coordinators not available: {codes}"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    """(Kafka's port, kraftwire's port), both ready."""
    with KafkaNode(tmp_path_factory.mktemp("kafka"), RF1) as kafka, \
            processes.CombinedNode(tmp_path_factory.mktemp("kraftwire"), RF1, ("--release-version", "3.9")) as ours:
        for port in (kafka.port, ours.port):
            until_broker_answers(port)
            _ready(port)
        yield kafka.port, ours.port


def _both(ports, body, version: int) -> tuple[dict, dict]:
    return tuple(_ask(port, body, version).to_dict() for port in ports)


def test_the_raised_and_removed_ranges_are_advertised_as_kafka_does(ports):
    AV = w.ApiVersionsRequest(client_software_name="kraftwire-tests", client_software_version="1")
    theirs, ours = ({a.api_key: (a.min_version, a.max_version) for a in _ask(port, AV, 3).api_keys}
                    for port in ports)
    for name in ALIGNED:
        key = served.key(name)
        assert ours[key] == theirs[key], name


def test_describe_cluster_v2(ports):
    for include in (True, False):
        body = w.DescribeClusterRequest(include_cluster_authorized_operations=False, endpoint_type=1,
                                        include_fenced_brokers=include)
        theirs, ours = _both(ports, body, 2)
        for answer in (theirs, ours):
            answer.pop("cluster_id")
            answer["brokers"] = [(b["broker_id"], b["is_fenced"], b["rack"]) for b in answer["brokers"]]
        assert ours == theirs


@pytest.mark.parametrize("version", [5, 6])
def test_describe_groups_of_an_unknown_group(ports, version):
    """KIP-1043: v6 answers GROUP_ID_NOT_FOUND "Group <id> not found.", v5 a Dead group without an error."""
    theirs, ours = _both(ports, w.DescribeGroupsRequest(groups=["nog"], include_authorized_operations=False),
                         version)
    assert ours == theirs


def test_delete_groups_v3_of_an_unknown_group(ports):
    theirs, ours = _both(ports, w.DeleteGroupsRequest(groups_names=["nog"]), 3)
    assert ours == theirs


@pytest.mark.parametrize("key_type, key", [(0, "g"), (1, "tx")])
def test_find_coordinator_v5(ports, key_type, key):
    theirs, ours = _both(ports, w.FindCoordinatorRequest(key_type=key_type, coordinator_keys=[key]), 5)
    for answer in (theirs, ours):
        for c in answer["coordinators"]:
            c.pop("host"), c.pop("port")
    assert ours == theirs


@pytest.mark.parametrize("pattern", ["t.*", "([", "(a)\\1", "", None])
def test_list_transactions_v2_patterns(ports, pattern):
    body = w.ListTransactionsRequest(state_filters=[], producer_id_filters=[], duration_filter=-1,
                                     transactional_id_pattern=pattern)
    theirs, ours = _both(ports, body, 2)
    assert ours == theirs


@pytest.mark.parametrize("version, timestamp", [(11, t) for t in (-1, -2, -3, -4, -5, -6)] + [(10, -6), (9, -5)])
def test_list_offsets_special_timestamps(ports, version, timestamp):
    L = w.ListOffsetsRequest
    body = L(replica_id=-1, isolation_level=0, timeout_ms=1000, topics=[L.ListOffsetsTopic(name="t", partitions=[
        L.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=timestamp)])])
    theirs, ours = _both(ports, body, version)
    assert ours == theirs


def test_metadata_v13(ports):
    body = w.MetadataRequest(topics=[w.MetadataRequest.MetadataRequestTopic(name="t", topic_id=uuid.UUID(int=0))],
                             allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    theirs, ours = _both(ports, body, 13)
    for answer in (theirs, ours):
        answer.pop("cluster_id"), answer.pop("brokers")
        for t in answer["topics"]:
            t.pop("topic_id")
    assert ours == theirs


def test_describe_log_dirs_v5(ports):
    theirs, ours = _both(ports, w.DescribeLogDirsRequest(topics=[
        w.DescribeLogDirsRequest.DescribableLogDirTopic(topic="t", partitions=[0])]), 5)
    for answer in (theirs, ours):
        for r in answer["results"]:
            r.pop("log_dir"), r.pop("total_bytes"), r.pop("usable_bytes")
    assert ours == theirs


def test_join_group_v8_and_leave_group_v5_with_reasons(ports):
    J, LG = w.JoinGroupRequest, w.LeaveGroupRequest
    join = J(group_id="jg", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="", group_instance_id=None,
             protocol_type="consumer", protocols=[J.JoinGroupRequestProtocol(name="range", metadata=b"")],
             reason="starting")
    theirs, ours = _both(ports, join, 8)
    for answer in (theirs, ours):
        assert answer.pop("member_id").startswith("kraftwire-admin-")
    assert ours == theirs
    leave = LG(group_id="jg", members=[LG.MemberIdentity(member_id="nosuch", group_instance_id=None, reason="bye")])
    theirs, ours = _both(ports, leave, 5)
    assert ours == theirs


def test_join_group_v9_a_restarted_static_leader_skips_the_assignment(ports):
    """KIP-814: the static leader of a Stable group rejoining with a new member id and the same protocols keeps its
    place and generation, and is told to skip the assignment."""
    J, S = w.JoinGroupRequest, w.SyncGroupRequest

    def join():
        return J(group_id="static", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
                 group_instance_id="i1", protocol_type="consumer",
                 protocols=[J.JoinGroupRequestProtocol(name="range", metadata=b"m")], reason=None)

    answers = []
    for port in ports:
        first = _ask(port, join(), 9)
        synced = _ask(port, S(group_id="static", generation_id=first.generation_id, member_id=first.member_id,
                              group_instance_id="i1", protocol_type="consumer", protocol_name="range",
                              assignments=[S.SyncGroupRequestAssignment(member_id=first.member_id,
                                                                        assignment=b"all")]), 5)
        again = _ask(port, join(), 9)
        answers.append((first.error_code, synced.error_code, again.error_code, again.skip_assignment,
                        again.generation_id - first.generation_id, again.leader == again.member_id != first.member_id,
                        [m.group_instance_id for m in again.members], again.protocol_name))
    theirs, ours = answers
    assert ours == theirs
    assert theirs[3] is True  # the case is the one KIP-814 is about


@pytest.mark.parametrize("target", ["neither", "this-node", "another-cluster", "another-node", "cluster-only",
                                    "node-only"])
def test_api_versions_v5_checks_whom_the_client_means(ports, target):
    """KIP-1242: both answer alike whether the client names this node (both are node 1), another cluster or node
    (REBOOTSTRAP_REQUIRED), or only one of the two (INVALID_REQUEST)."""
    answers = []
    for port in ports:
        cluster_id = _ask(port, w.MetadataRequest(topics=[], allow_auto_topic_creation=False), 12).cluster_id
        other = ("y" if cluster_id.startswith("x") else "x") + cluster_id[1:]  # never the node's own (a random id)
        named = {"neither": (None, -1), "this-node": (cluster_id, 1), "another-cluster": (other, 1),
                 "another-node": (cluster_id, 2), "cluster-only": (cluster_id, -1), "node-only": (None, 1)}[target]
        answer = _ask(port, w.ApiVersionsRequest(client_software_name="kraftwire-tests", client_software_version="1",
                                                 cluster_id=named[0], node_id=named[1]), 5)
        answers.append((answer.error_code, bool(answer.api_keys), answer.throttle_time_ms))
    expected = {"neither": 0, "this-node": 0, "cluster-only": 42, "node-only": 42}.get(target, 129)
    assert answers[0] == answers[1] == (expected, expected == 0, 0)


def _own_id(answer, topic_id):
    """``answer`` (a ``to_dict``) with this node's id of topic "t" written as "t": the two nodes' ids differ."""
    if isinstance(answer, dict):
        return {k: _own_id(v, topic_id) for k, v in answer.items()}
    if isinstance(answer, list):
        return [_own_id(v, topic_id) for v in answer]
    return "t" if answer == topic_id else answer


def test_offset_commit_and_fetch_v10_name_topics_by_id(ports):
    """KIP-848's topic ids: an id the metadata does not know is UNKNOWN_TOPIC_ID per partition (a commit's before
    the others, a fetch's after them), an unknown partition of a known topic UNKNOWN_TOPIC_OR_PARTITION in a commit
    and no offset in a fetch; the answers name topics by id, a fetch of every topic too."""
    OC, OF = w.OffsetCommitRequest, w.OffsetFetchRequest
    unknown = uuid.UUID(int=12345)
    answers = []
    for port in ports:
        md = _ask(port, w.MetadataRequest(topics=[w.MetadataRequest.MetadataRequestTopic(name="t")],
                                          allow_auto_topic_creation=False), 12)
        tid = md.topics[0].topic_id
        commit = _ask(port, OC(group_id="g", generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
                               topics=[OC.OffsetCommitRequestTopic(topic_id=tid, partitions=[
                                   OC.OffsetCommitRequestPartition(partition_index=0, committed_offset=7,
                                                                   committed_leader_epoch=-1, committed_metadata="m"),
                                   OC.OffsetCommitRequestPartition(partition_index=5, committed_offset=1,
                                                                   committed_leader_epoch=-1, committed_metadata="")]),
                                   OC.OffsetCommitRequestTopic(topic_id=unknown, partitions=[
                                       OC.OffsetCommitRequestPartition(partition_index=0, committed_offset=3,
                                                                       committed_leader_epoch=-1,
                                                                       committed_metadata="")])]), 10)
        fetched = [_ask(port, OF(groups=[OF.OffsetFetchRequestGroup(group_id="g", member_id=None, member_epoch=-1,
                                                                    topics=topics)], require_stable=False), 10)
                   for topics in ([OF.OffsetFetchRequestTopics(topic_id=unknown, partition_indexes=[0]),
                                   OF.OffsetFetchRequestTopics(topic_id=tid, partition_indexes=[0, 1])], None)]
        answers.append(_own_id([commit.to_dict(), *(f.to_dict() for f in fetched)], tid))
    assert answers[0] == answers[1]
    assert [p["error_code"] for t in answers[0][0]["topics"] for p in t["partitions"]] == [3, 0, 100]


@pytest.mark.parametrize("level", [1, 99])
def test_update_features_v2_answers_without_per_feature_results(ports, level):
    """UpdateFeatures v2: a taken update (validate only) and a refused one, answered at the top level alone."""
    U = w.UpdateFeaturesRequest
    body = U(timeout_ms=10000, validate_only=True, feature_updates=[
        U.FeatureUpdateKey(feature="group.version", max_version_level=level, upgrade_type=1)])
    theirs, ours = _both(ports, body, 2)
    assert theirs == ours and theirs["error_code"] == (0 if level == 1 else 95)


def _until_no_retriable(port: int, body, version: int, retriable=(7, 14, 15, 16, 51)):
    """``body`` asked until its answer's error is not one a client retries (bounded: 60 s)."""
    deadline = time.monotonic() + 60
    while True:
        answer = _ask(port, body, version)
        if answer.error_code not in retriable or time.monotonic() > deadline:
            return answer
        time.sleep(0.5)


@pytest.mark.parametrize("version", [5, 6])
def test_txn_offset_commit_v6_names_topics_by_id(ports, version):
    """KIP-1319: TxnOffsetCommit v6 by topic id (v5 by name), in a transaction its AddOffsetsToTxn opened
    (transaction.version 0 at metadata.version 3.9): an unknown id UNKNOWN_TOPIC_ID (an unknown name
    UNKNOWN_TOPIC_OR_PARTITION), an unknown partition UNKNOWN_TOPIC_OR_PARTITION, the refused partitions first, the
    answer by id, as Kafka answers it; the transaction is aborted after."""
    TC = w.TxnOffsetCommitRequest
    unknown = uuid.UUID(int=54321)
    answers = []
    for port in ports:
        md = _ask(port, w.MetadataRequest(topics=[w.MetadataRequest.MetadataRequestTopic(name="t")],
                                          allow_auto_topic_creation=False), 12)
        tid = md.topics[0].topic_id
        init = _until_no_retriable(port, w.InitProducerIdRequest(transactional_id="tx", transaction_timeout_ms=60000,
                                                                 producer_id=-1, producer_epoch=-1), 5)
        assert init.error_code == 0, init
        pid, epoch = init.producer_id, init.producer_epoch
        added = _until_no_retriable(port, w.AddOffsetsToTxnRequest(transactional_id="tx", producer_id=pid,
                                                                   producer_epoch=epoch, group_id="g6"), 4)
        assert added.error_code == 0, added
        by_id = version >= 6
        commit = _ask(port, TC(transactional_id="tx", group_id="g6", producer_id=pid, producer_epoch=epoch, topics=[
            TC.TxnOffsetCommitRequestTopic(name="" if by_id else "t", topic_id=tid, partitions=[
                TC.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=5, committed_metadata="m"),
                TC.TxnOffsetCommitRequestPartition(partition_index=5, committed_offset=1, committed_metadata="")]),
            TC.TxnOffsetCommitRequestTopic(name="" if by_id else "missing", topic_id=unknown, partitions=[
                TC.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=3, committed_metadata="")])]),
            version)
        ended = _until_no_retriable(port, w.EndTxnRequest(transactional_id="tx", producer_id=pid, producer_epoch=epoch,
                                                          committed=False), 4)
        assert ended.error_code == 0, ended
        answers.append(_own_id(commit.to_dict(), tid))
    assert answers[0] == answers[1]
    assert [p["error_code"] for t in answers[0]["topics"] for p in t["partitions"]] == [3, 0, 100 if by_id else 3]


@pytest.mark.parametrize("version", [12, 13])
def test_produce_v13_names_topics_by_id(ports, version):
    """KIP-516: Produce v13 by topic id (v12 by name): an unknown id UNKNOWN_TOPIC_ID (an unknown name
    UNKNOWN_TOPIC_OR_PARTITION) with the partitions the metadata does not know, after those appended; the answer by
    id, as Kafka answers it."""
    from conformance.data_steps import records

    P = w.ProduceRequest
    unknown = uuid.UUID(int=999)
    answers = []
    for port in ports:
        md = _ask(port, w.MetadataRequest(topics=[w.MetadataRequest.MetadataRequestTopic(name="t")],
                                          allow_auto_topic_creation=False), 12)
        tid = md.topics[0].topic_id
        by_id = version >= 13
        answer = _ask(port, P(acks=1, timeout_ms=5000, transactional_id=None, topic_data=[
            P.TopicProduceData(name="" if by_id else "missing", topic_id=unknown, partition_data=[
                P.PartitionProduceData(index=0, records=records())]),
            P.TopicProduceData(name="" if by_id else "t", topic_id=tid, partition_data=[
                P.PartitionProduceData(index=5, records=records()),
                P.PartitionProduceData(index=0, records=records())])]), version)
        for t in answer.responses:  # the base offset depends on what earlier tests wrote
            for p in t.partition_responses:
                p.base_offset = min(p.base_offset, 0)
        answers.append(_own_id(answer.to_dict(), tid))
    assert answers[0] == answers[1]
    assert [p["error_code"] for t in answers[0]["responses"] for p in t["partition_responses"]] == [
        0, 3, 100 if version >= 13 else 3]


@pytest.mark.parametrize("version", [0, 1, 2])
def test_sasl_requests_on_a_plaintext_listener(ports, version):
    """SaslHandshake and SaslAuthenticate are served on a PLAINTEXT listener too: ILLEGAL_SASL_STATE (and Kafka's
    message for SaslAuthenticate), the connection left open."""
    if version <= 1:
        theirs, ours = _both(ports, w.SaslHandshakeRequest(mechanism="PLAIN"), version)
        assert theirs == ours and theirs["error_code"] == 34
    theirs, ours = _both(ports, w.SaslAuthenticateRequest(auth_bytes=b"\0a\0b"), version)
    assert theirs == ours and theirs["error_code"] == 34
