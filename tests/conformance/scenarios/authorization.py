"""What a client's principal may not do, on the "sasl-acl" pair (StandardAuthorizer, allow.everyone.if.no.acl.found
false): each API refused per topic (TOPIC_AUTHORIZATION_FAILED), per group (GROUP_AUTHORIZATION_FAILED), per
transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) or on the cluster (CLUSTER_AUTHORIZATION_FAILED) when the
ordinary user alice asks with no ACL, or with some ACLs but not the one the request needs; Metadata's auto-creation
refused without CREATE; the authorized operations (KIP-430) Metadata, DescribeCluster, DescribeGroups and
DescribeTopicPartitions report; ListGroups and ListTransactions listing only what the principal may DESCRIBE.

The super user sets up (topics, a group, a transactional producer); the refused requests go as alice (bob where a
cluster-wide ACL is granted). Every scenario that grants ends by deleting its users' ACLs and waiting until the node
no longer has them, so each one starts from no ACL at all."""

from __future__ import annotations

from conformance.acl_steps import ALICE, BOB, CLUSTER, USER_ALICE, USER_BOB, as_user, binding, grant, revoke
from conformance.data_steps import (A, G, add_offsets, add_partitions, commit, coordinated, end_txn, fetch,
                                    fetch_topic, find_coordinator, heartbeat, init_producer_id, join, leave, marker,
                                    member, offset_fetch, produce, records, sync, transactional, txn_offset_commit)
from conformance.runner import Step, each_version, no_error, versions
from conformance.steps import create, created, topic

from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op, PatternType as Pat, ResourceType as Res

B, T, PREFIX = "{ns}.b", "{ns}.t", "{ns}."
MD = w.MetadataRequest


def alice(*steps: Step) -> list[Step]:
    return as_user(ALICE, *steps)


def topic_acl(op: int, name: str = A, **options):
    return binding(Res.TOPIC, name, op, **options)


def group_acl(op: int, name: str = G, **options):
    return binding(Res.GROUP, name, op, **options)


def txn_acl(op: int, name: str = T, **options):
    return binding(Res.TRANSACTIONAL_ID, name, op, **options)


def metadata(version: int, *names: str, auto_create: bool = False, topic_ops: bool = False,
             cluster_ops: bool = False, until=None, scope: bool = False) -> Step:
    return Step(MD(topics=[MD.MetadataRequestTopic(name=n) for n in names] if names else None,
                   allow_auto_topic_creation=auto_create, include_cluster_authorized_operations=cluster_ops,
                   include_topic_authorized_operations=topic_ops), version, until=until, scope=scope)


def configs(request_cls, resource_type: int, name: str, *entries, incremental: bool = False):
    R = request_cls
    return R(resources=[R.AlterConfigsResource(resource_type=resource_type, resource_name=name, configs=[
        R.AlterableConfig(name=k, value=v, **({"config_operation": 0} if incremental else {})) for k, v in entries])],
        validate_only=False)


TOPIC_TYPE, BROKER_TYPE, GROUP_TYPE = 2, 4, 32
DC, AC, IAC = w.DescribeConfigsRequest, w.AlterConfigsRequest, w.IncrementalAlterConfigsRequest
DR, DP, DTP = w.DeleteRecordsRequest, w.DescribeProducersRequest, w.DescribeTopicPartitionsRequest
CP, DT, EL = w.CreatePartitionsRequest, w.DeleteTopicsRequest, w.ElectLeadersRequest
OD = w.OffsetDeleteRequest
LO = w.ListOffsetsRequest


def _list_offsets(*names: str) -> Step:
    return Step(LO(replica_id=-1, isolation_level=0, topics=[LO.ListOffsetsTopic(name=n, partitions=[
        LO.ListOffsetsPartition(partition_index=0, timestamp=-1)]) for n in names]), 9)


def _describe_topic_partitions(*names: str) -> Step:
    return Step(DTP(topics=[DTP.TopicRequest(name=n) for n in names], response_partition_limit=100, cursor=None), 0)


# ---------------------------------------------------------------------------------------------------- topics
TOPICS = {
    "Metadata": {
        "no-acl": lambda v: [*created(A), *alice(metadata(v, A, "{ns}.missing", topic_ops=v >= 8))],
        "describe-only": lambda v: [*created(A, B), *grant(topic_acl(Op.DESCRIBE)),
                                    *alice(metadata(v, A, B, topic_ops=v >= 8), metadata(v, scope=True)),
                                    *revoke(USER_ALICE)],
        "auto-create-without-create": lambda v: [*grant(topic_acl(Op.DESCRIBE, PREFIX, pattern=Pat.PREFIXED)),
                                                 *alice(metadata(v, "{ns}.new", auto_create=True)),
                                                 *revoke(USER_ALICE)] if v >= 4 else None,
        "auto-create-allowed": lambda v: [*grant(topic_acl(Op.CREATE, PREFIX, pattern=Pat.PREFIXED),
                                                 topic_acl(Op.DESCRIBE, PREFIX, pattern=Pat.PREFIXED)),
                                          *alice(metadata(v, "{ns}.new", auto_create=True, until=no_error)),
                                          *revoke(USER_ALICE)] if v >= 4 else None,
        "acl-operations": lambda v: [*created(A), *grant(topic_acl(Op.READ), topic_acl(Op.DESCRIBE),
                                                                topic_acl(Op.ALTER, PREFIX, pattern=Pat.PREFIXED)),
                                            *alice(metadata(v, A, topic_ops=True, cluster_ops=v <= 10)),
                                            *revoke(USER_ALICE)] if v >= 8 else None,
    },
    "Produce": {"no-acl": lambda v: [*created(A), *alice(produce(v, (A, 0, records()))),
                                     *grant(topic_acl(Op.DESCRIBE)), *alice(produce(v, (A, 0, records()))),
                                     *revoke(USER_ALICE)],
                # a transactional produce is checked against the transactional id before any topic
                "transactional-no-acl": lambda v: [*created(A), *grant(topic_acl(Op.WRITE)), *alice(produce(
                    v, (A, 0, records(producer_id=0, producer_epoch=0, base_sequence=0, transactional=True)),
                    transactional_id=T)), *revoke(USER_ALICE)]},
    "OffsetForLeaderEpoch": {"no-acl": lambda v: [*created(A), *alice(Step(w.OffsetForLeaderEpochRequest(
        replica_id=-1, topics=[w.OffsetForLeaderEpochRequest.OffsetForLeaderTopic(topic=A, partitions=[
            w.OffsetForLeaderEpochRequest.OffsetForLeaderPartition(partition=0, current_leader_epoch=-1,
                                                                   leader_epoch=0)])]), v))]},
    "Fetch": {"no-acl": lambda v: [*created(A), *alice(fetch(v, fetch_topic(v, A, (0, 0))))]},
    "ListOffsets": {"no-acl": lambda v: [*created(A), *alice(_list_offsets(A, "{ns}.missing"))]},
    "CreateTopics": {"no-acl": lambda v: [*alice(create(v, topic(A), topic(B))), *grant(
        binding(Res.TOPIC, A, Op.CREATE)), *alice(create(v, topic(A), topic(B))), *revoke(USER_ALICE)]},
    "DeleteTopics": {"no-acl": lambda v: [*created(A), *alice(Step(DT(topics=[DT.DeleteTopicState(name=A)],
                                                                     topic_names=[A], timeout_ms=10000), v)),
                                          *grant(topic_acl(Op.DESCRIBE)),
                                          *alice(Step(DT(topics=[DT.DeleteTopicState(name=A)], topic_names=[A],
                                                         timeout_ms=10000), v)), *revoke(USER_ALICE)]},
    "CreatePartitions": {"no-acl": lambda v: [*created(A), *alice(Step(CP(topics=[
        CP.CreatePartitionsTopic(name=A, count=2, assignments=None)], timeout_ms=10000, validate_only=False), v))]},
    "DescribeConfigs": {"no-acl": lambda v: [*created(A), *alice(Step(DC(resources=[
        DC.DescribeConfigsResource(resource_type=TOPIC_TYPE, resource_name=A, configuration_keys=["cleanup.policy"]),
        DC.DescribeConfigsResource(resource_type=BROKER_TYPE, resource_name="1", configuration_keys=["num.io.threads"])
    ], include_synonyms=False, include_documentation=False), v))]},
    "AlterConfigs": {"no-acl": lambda v: [*created(A), *alice(
        Step(configs(AC, TOPIC_TYPE, A, ("retention.ms", "1000")), v),
        Step(configs(AC, BROKER_TYPE, "", ("log.cleaner.threads", "2")), v))]},
    "IncrementalAlterConfigs": {"no-acl": lambda v: [*created(A), *alice(
        Step(configs(IAC, TOPIC_TYPE, A, ("retention.ms", "1000"), incremental=True), v),
        Step(configs(IAC, BROKER_TYPE, "1", ("log.cleaner.threads", "2"), incremental=True), v),
        Step(configs(IAC, GROUP_TYPE, G, ("consumer.session.timeout.ms", "50000"), incremental=True), v))]},
    "DeleteRecords": {"no-acl": lambda v: [*created(A), *alice(Step(DR(topics=[DR.DeleteRecordsTopic(
        name=A, partitions=[DR.DeleteRecordsPartition(partition_index=0, offset=0)])], timeout_ms=10000), v))]},
    "DescribeProducers": {"no-acl": lambda v: [*created(A), *alice(Step(DP(topics=[
        DP.TopicRequest(name=A, partition_indexes=[0])]), v))]},
    "DescribeTopicPartitions": {
        "no-acl": lambda v: [*created(A), *alice(_describe_topic_partitions(A, "{ns}.missing"))],
        "acl-operations": lambda v: [*created(A, B), *grant(topic_acl(Op.DESCRIBE), topic_acl(Op.WRITE)),
                                            *alice(_describe_topic_partitions(A, B)), *revoke(USER_ALICE)]},
}

# ---------------------------------------------------------------------------------------------------- groups
GROUPS = {
    "FindCoordinator": {"no-acl": lambda v: alice(find_coordinator(v, G))},
    "JoinGroup": {"no-acl": lambda v: alice(join(v))},
    "SyncGroup": {"no-acl": lambda v: alice(sync(v, member_id="{ns}-m", generation=1))},
    "Heartbeat": {"no-acl": lambda v: alice(heartbeat(v, member_id="{ns}-m", generation=1))},
    "LeaveGroup": {"no-acl": lambda v: alice(leave(v, G, "{ns}-m"))},
    "OffsetCommit": {
        "no-acl": lambda v: [*created(A), *alice(commit(v, (A, 0, 1)))],
        "group-but-not-topic": lambda v: [*created(A, B), *grant(group_acl(Op.READ), topic_acl(Op.READ)),
                                          *alice(commit(v, (A, 0, 1), (B, 0, 1))), *revoke(USER_ALICE)]},
    "OffsetFetch": {
        "no-acl": lambda v: [*created(A), *alice(offset_fetch(v, (A, [0])))],
        "group-but-not-topic": lambda v: [*created(A, B), commit(8, (A, 0, 1), (B, 0, 2)),
                                          *grant(group_acl(Op.DESCRIBE), topic_acl(Op.DESCRIBE)),
                                          *alice(offset_fetch(v, (A, [0]), (B, [0])), offset_fetch(v, None)),
                                          *revoke(USER_ALICE)]},
    "OffsetDelete": {"no-acl": lambda v: [*created(A), commit(8, (A, 0, 1)), *alice(Step(OD(group_id=G, topics=[
        OD.OffsetDeleteRequestTopic(name=A, partitions=[OD.OffsetDeleteRequestPartition(partition_index=0)])]), v)),
        *grant(group_acl(Op.DELETE)), *alice(Step(OD(group_id=G, topics=[OD.OffsetDeleteRequestTopic(
            name=A, partitions=[OD.OffsetDeleteRequestPartition(partition_index=0)])]), v)), *revoke(USER_ALICE)]},
    "DescribeGroups": {
        "no-acl": lambda v: [*member(), *alice(Step(w.DescribeGroupsRequest(
            groups=[G, "{ns}.other"], include_authorized_operations=True), v))],
        "acl-operations": lambda v: [*member(), *grant(group_acl(Op.DESCRIBE), group_acl(Op.READ)),
                                            *alice(Step(w.DescribeGroupsRequest(
                                                groups=[G], include_authorized_operations=True), v)),
                                            *revoke(USER_ALICE)]},
    "DeleteGroups": {"no-acl": lambda v: [*member(), *alice(Step(w.DeleteGroupsRequest(groups_names=[G]), v))]},
    "ConsumerGroupHeartbeat": {"no-acl": lambda v: [*created(A), *alice(Step(w.ConsumerGroupHeartbeatRequest(
        group_id=G, member_id="{ns}-m", member_epoch=0, rebalance_timeout_ms=3000, subscribed_topic_names=[A],
        topic_partitions=[]), v))]},
    "ConsumerGroupDescribe": {"no-acl": lambda v: alice(Step(w.ConsumerGroupDescribeRequest(
        group_ids=[G], include_authorized_operations=True), v))},
    "ListGroups": {"describe-filter": lambda v: [*member(), *member("{ns}.h"), *grant(group_acl(Op.DESCRIBE)),
                                                 *alice(Step(w.ListGroupsRequest(states_filter=[], types_filter=[]),
                                                             v, scope=True)),
                                                 *revoke(USER_ALICE)]},
}

# ------------------------------------------------------------------------------------------------ transactions
PRODUCER = {"producer_id": 0, "epoch": 0}
TRANSACTIONS = {
    "FindCoordinator": {"transactional-no-acl": lambda v: alice(find_coordinator(v, T, key_type=1))},
    "InitProducerId": {
        "transactional-no-acl": lambda v: alice(init_producer_id(v, T)),
        "idempotent-no-acl": lambda v: [*created(A), *alice(init_producer_id(v)),
                                        *grant(topic_acl(Op.WRITE)), *alice(init_producer_id(v)),
                                        *revoke(USER_ALICE)]},
    "AddPartitionsToTxn": {"no-acl": lambda v: [*created(A), *alice(add_partitions(v, (A, [0]), **PRODUCER)),
                                                *grant(txn_acl(Op.WRITE)),
                                                *alice(add_partitions(v, (A, [0]), **PRODUCER)),
                                                *revoke(USER_ALICE)]},
    "AddOffsetsToTxn": {"no-acl": lambda v: alice(add_offsets(v, **PRODUCER)),
                        "txn-but-not-group": lambda v: [*grant(txn_acl(Op.WRITE)), *alice(add_offsets(v, **PRODUCER)),
                                                        *revoke(USER_ALICE)]},
    "EndTxn": {"no-acl": lambda v: alice(end_txn(v, **PRODUCER))},
    "TxnOffsetCommit": {"no-acl": lambda v: [*created(A), *alice(txn_offset_commit(v, (A, 0, 1), **PRODUCER))],
                        "txn-but-not-group": lambda v: [*created(A), *grant(txn_acl(Op.WRITE)),
                                                        *alice(txn_offset_commit(v, (A, 0, 1), **PRODUCER)),
                                                        *revoke(USER_ALICE)]},
    "DescribeTransactions": {"no-acl": lambda v: [*transactional(), *alice(Step(
        w.DescribeTransactionsRequest(transactional_ids=[T, "{ns}.other"]), v))]},
    "ListTransactions": {"describe-filter": lambda v: [*transactional(), *transactional("{ns}.u"),
                                                       *grant(txn_acl(Op.DESCRIBE)),
                                                       *alice(Step(w.ListTransactionsRequest(
                                                           state_filters=[], producer_id_filters=[],
                                                           duration_filter=-1), v, scope=True)),
                                                       *revoke(USER_ALICE)]},
}

# ---------------------------------------------------------------------------------------------------- cluster
CLUSTER_APIS = {
    "ElectLeaders": {"no-acl": lambda v: [*created(A), *alice(Step(EL(election_type=0, topic_partitions=[
        EL.TopicPartitions(topic=A, partitions=[0])], timeout_ms=10000), v))]},
    # ALTER and DESCRIBE on the cluster, checked before anything else (ControllerApis)
    "AlterPartitionReassignments": {"no-acl": lambda v: [*created(A), *alice(Step(
        w.AlterPartitionReassignmentsRequest(timeout_ms=10000, allow_replication_factor_change=True, topics=[
            w.AlterPartitionReassignmentsRequest.ReassignableTopic(name=A, partitions=[
                w.AlterPartitionReassignmentsRequest.ReassignablePartition(partition_index=0, replicas=[1])])]), v))]},
    "ListPartitionReassignments": {"no-acl": lambda v: alice(Step(w.ListPartitionReassignmentsRequest(
        timeout_ms=10000, topics=[w.ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics(
            name=A, partition_indexes=[0])]), v))},
    "DescribeLogDirs": {"no-acl": lambda v: [*created(A), *alice(Step(w.DescribeLogDirsRequest(topics=[
        w.DescribeLogDirsRequest.DescribableLogDirTopic(topic=A, partitions=[0])]), v))]},
    # ALTER on the cluster, refused for every partition named (KafkaApis.handleAlterReplicaLogDirsRequest)
    "AlterReplicaLogDirs": {"no-acl": lambda v: [*created(A), *alice(Step(w.AlterReplicaLogDirsRequest(dirs=[
        w.AlterReplicaLogDirsRequest.AlterReplicaLogDir(path="/no/such/dir", topics=[
            w.AlterReplicaLogDirsRequest.AlterReplicaLogDirTopic(name=A, partitions=[0, 1])])]), v))]},
    "UpdateFeatures": {"no-acl": lambda v: alice(Step(w.UpdateFeaturesRequest(timeout_ms=10000, feature_updates=[
        w.UpdateFeaturesRequest.FeatureUpdateKey(feature="metadata.version", max_version_level=21,
                                                 allow_downgrade=False, upgrade_type=1)], validate_only=True), v))},
    # CLUSTER_ACTION on the cluster (a transaction coordinator's own request), refused for every partition
    "WriteTxnMarkers": {"no-acl": lambda v: [*created(A), *alice(marker((A, [0]), producer_id=7000, epoch=0,
                                                                         version=v))]},
    "DescribeQuorum": {"no-acl": lambda v: alice(Step(w.DescribeQuorumRequest(topics=[
        w.DescribeQuorumRequest.TopicData(topic_name="__cluster_metadata", partitions=[
            w.DescribeQuorumRequest.PartitionData(partition_index=0)])]), v))},
    "DescribeCluster": {"acl-operations": lambda v: [
        *as_user(BOB, Step(w.DescribeClusterRequest(include_cluster_authorized_operations=True), v)),
        *grant(binding(Res.CLUSTER, CLUSTER, Op.ALTER, principal=USER_BOB),
               binding(Res.CLUSTER, CLUSTER, Op.DESCRIBE_CONFIGS, principal=USER_BOB)),
        *as_user(BOB, Step(w.DescribeClusterRequest(include_cluster_authorized_operations=True), v)),
        *revoke(USER_BOB)]},
}


#: versions besides the newest: Metadata's per-request auto-creation (v4) and its cluster operations (v8-v10);
#: AddPartitionsToTxn's last client version (v3: v4 on is the brokers' batched verification, a cluster action)
ALSO = {"Metadata": [4, 10], "AddPartitionsToTxn": [3]}


def _at(api: str) -> list[int]:
    return [*ALSO.get(api, []), versions(api)[-1]]


SCENARIOS = [scenario for table in (TOPICS, GROUPS, TRANSACTIONS, CLUSTER_APIS) for api, cases in table.items()
             for scenario in each_version(api, coordinated(cases) if table is GROUPS else cases, config="sasl-acl",
                                          at=_at(api))]
