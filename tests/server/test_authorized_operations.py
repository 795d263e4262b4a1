"""KIP-430's authorized operations, in-process on real sockets: when a client asks (Metadata v8+, DescribeCluster,
DescribeGroups v3+, ConsumerGroupDescribe; DescribeTopicPartitions always), the answer holds the bit field of the
operations the principal may do on the resource, among those its type supports; without an authorizer, every
supported one. The numbers are the ones a Kafka 4.4 broker without an authorizer answers (cluster 8096, topic
3576, group 3400). Mirrors Kafka's DescribeAuthorizedOperationsTest and the authorized-operations checks of
AuthorizerIntegrationTest (testDescribeGroupApiWithGroupDescribe..., testMetadataClusterAuthorizedOperations...)."""

from __future__ import annotations

import asyncio
import uuid

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import ResourceType
from server.test_acls_enforced import _acl, _acls, _hosted, run_as_admin_and_alice
from server.test_acls_enforced import _until as _until_true
from server.test_kraft_node import Combined, _create
from server.test_replication import _until

NONE_SET = -(2**31)
CLUSTER_ALL, TOPIC_ALL, GROUP_ALL = 8096, 3576, 3400
M = w.MetadataRequest
D = w.DescribeTopicPartitionsRequest


def _bits(*ops) -> int:
    return sum(1 << int(o) for o in ops)


async def _coordinator(conn, group: str) -> None:
    F = w.FindCoordinatorRequest
    for _ in range(200):
        found = await conn.request(F(key_type=0, coordinator_keys=[group]), 4)
        if found.coordinators[0].error_code == 0:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("no group coordinator")


async def _answers(conn, topic: str, group: str) -> dict:
    """Every authorized-operations field a client can ask for, by a short name. DescribeGroups describes
    ``classic`` (no such group: Dead, no error, as Kafka), ConsumerGroupDescribe the KIP-848 ``group``."""
    out = {}
    r = await conn.request(w.DescribeClusterRequest(include_cluster_authorized_operations=True), 1)
    out["describe_cluster"] = r.cluster_authorized_operations
    r = await conn.request(w.DescribeClusterRequest(include_cluster_authorized_operations=False), 1)
    out["describe_cluster_unasked"] = r.cluster_authorized_operations
    r = await conn.request(M(topics=[M.MetadataRequestTopic(name=topic), M.MetadataRequestTopic(name="missing")],
                             allow_auto_topic_creation=False, include_cluster_authorized_operations=True,
                             include_topic_authorized_operations=True), 10)
    out["metadata_cluster"] = r.cluster_authorized_operations
    out["metadata_topics"] = {t.name: (t.error_code, t.topic_authorized_operations) for t in r.topics}
    r = await conn.request(M(topics=[M.MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False,
                             include_topic_authorized_operations=False), 12)
    out["metadata_unasked"] = r.topics[0].topic_authorized_operations
    r = await conn.request(D(topics=[D.TopicRequest(name=topic)], response_partition_limit=100), 0)
    out["describe_topic_partitions"] = r.topics[0].topic_authorized_operations
    classic = f"{group}-classic"
    r = await conn.request(w.DescribeGroupsRequest(groups=[classic], include_authorized_operations=True), 5)
    out["describe_groups"] = (r.groups[0].error_code, r.groups[0].authorized_operations)
    r = await conn.request(w.DescribeGroupsRequest(groups=[classic], include_authorized_operations=False), 5)
    out["describe_groups_unasked"] = r.groups[0].authorized_operations
    r = await conn.request(w.ConsumerGroupDescribeRequest(group_ids=[group], include_authorized_operations=True), 0)
    out["consumer_group_describe"] = (r.groups[0].error_code, r.groups[0].authorized_operations)
    return out


async def _join(conn, group: str, topic: str) -> None:
    H = w.ConsumerGroupHeartbeatRequest
    r = await conn.request(H(group_id=group, member_id=str(uuid.uuid4()), member_epoch=0, rebalance_timeout_ms=5000,
                             subscribed_topic_names=[topic], topic_partitions=[]), 0)
    assert r.error_code == 0, r


def test_without_an_authorizer_every_supported_operation_is_authorized(tmp_path):
    async def scenario(node, conn):
        assert (await conn.request(_create("t", 1), 7)).topics[0].error_code == ec.NONE
        await _until("hosted", lambda: node.replicas.get("t", 0) is not None)
        await _coordinator(conn, "g")
        await _join(conn, "g", "t")
        got = await _answers(conn, "t", "g")
        assert got == {
            "describe_cluster": CLUSTER_ALL, "describe_cluster_unasked": NONE_SET,
            "metadata_cluster": CLUSTER_ALL,
            "metadata_topics": {"t": (0, TOPIC_ALL), "missing": (ec.UNKNOWN_TOPIC_OR_PARTITION, TOPIC_ALL)},
            "metadata_unasked": NONE_SET, "describe_topic_partitions": TOPIC_ALL,
            "describe_groups": (0, GROUP_ALL), "describe_groups_unasked": NONE_SET,
            "consumer_group_describe": (0, GROUP_ALL)}

    Combined(tmp_path, extra="offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\n").run(scenario)


def test_with_acls_only_the_allowed_operations_are_set(tmp_path):
    async def scenario(node, admin, alice):
        assert (await admin.request(_create("orders"), 5)).topics[0].error_code == 0
        await _until_true(lambda: _hosted(node, "orders"))
        C = w.CreateAclsRequest
        r = await admin.request(C(creations=[
            _acl(ResourceType.TOPIC, "orders", "User:alice", Op.DESCRIBE),
            _acl(ResourceType.TOPIC, "missing", "User:alice", Op.WRITE),
            _acl(ResourceType.GROUP, "g", "User:alice", Op.READ),
            _acl(ResourceType.GROUP, "g-classic", "User:alice", Op.READ),
        ]), 3)
        assert all(x.error_code == 0 for x in r.results), r
        await _until_true(lambda: _acls(node, 4))
        await _coordinator(admin, "g")
        await _join(admin, "g", "orders")
        alices = await _answers(alice, "orders", "g")
        admins = await _answers(admin, "orders", "g")
        # alice may not DESCRIBE the cluster: 0, as Kafka answers; READ on the group and WRITE on a topic imply
        # DESCRIBE; the super user may do everything
        assert alices["describe_cluster"] == 0 and alices["metadata_cluster"] == 0
        assert alices["metadata_topics"] == {"orders": (0, _bits(Op.DESCRIBE)),
                                             "missing": (ec.UNKNOWN_TOPIC_OR_PARTITION, _bits(Op.WRITE, Op.DESCRIBE))}
        assert alices["describe_topic_partitions"] == _bits(Op.DESCRIBE)
        assert alices["describe_groups"] == (0, _bits(Op.READ, Op.DESCRIBE))
        assert alices["consumer_group_describe"] == (0, _bits(Op.READ, Op.DESCRIBE))
        assert alices["describe_groups_unasked"] == alices["metadata_unasked"] == NONE_SET
        assert admins["describe_cluster"] == admins["metadata_cluster"] == CLUSTER_ALL
        assert admins["metadata_topics"]["orders"] == (0, TOPIC_ALL)
        assert admins["describe_groups"] == admins["consumer_group_describe"] == (0, GROUP_ALL)

    run_as_admin_and_alice(tmp_path, scenario)
