"""ACLs enforced by a KRaft node (``authorizer.class.name=...StandardAuthorizer``), in-process on real sockets and
files, with principals from SASL/PLAIN logins: every refusal gets Kafka's error code and changes nothing — an
unauthorized produce appends nothing, a consume reads nothing, a group join creates no group, a topic creation
creates no topic, a Vote from a principal without CLUSTER_ACTION moves no epoch — and Metadata leaves out the topics
a principal may not describe. Then ACLs created through the node (CreateAcls, by the super user) let the same
requests through, and deleting them takes the access away again."""

from __future__ import annotations

import asyncio
import socket

from kraftwire import error_codes as ec
from kraftwire.config import parse_properties
from kraftwire.ids import ZERO_UUID
from kraftwire.log.meta_properties import MetaProperties, write_meta_properties
from kraftwire.metadata.bootstrap import BOOTSTRAP_FILE, bootstrap_records, encode_bootstrap_file
from kraftwire.metadata.version import DEFAULT
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import AclPermissionType as Perm
from kraftwire.security.authorizer import PatternType, ResourceType
from kraftwire.security.sasl.client import SaslLogin
from kraftwire.server.node.app import Node
from kraftwire.server.edge.client import KafkaConnection
from kraftwire.server.node.settings import NodeSettings

CLUSTER = "Uc70e1ZARn6UM4iJHeByUw"
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";')


def _sock():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    return s


def _node(tmp_path, extra: str = "", features: dict[str, int] | None = None) -> tuple[Node, int, int]:
    """``features``: the finalized feature levels at bootstrap (None: the default level's)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    write_meta_properties(str(logs), MetaProperties(cluster_id=CLUSTER, node_id=1))
    (logs / BOOTSTRAP_FILE).write_bytes(encode_bootstrap_file(bootstrap_records(DEFAULT, features), timestamp=0))
    csock, ssock = _sock(), _sock()
    cport, sport = csock.getsockname()[1], ssock.getsockname()[1]
    settings = NodeSettings.from_properties(parse_properties(
        f"process.roles=broker,controller\nnode.id=1\n"
        f"listeners=CONTROLLER://127.0.0.1:{cport},CLIENT://127.0.0.1:{sport}\n"
        "listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT,CLIENT:SASL_PLAINTEXT\n"
        "inter.broker.listener.name=CLIENT\n"
        f"controller.listener.names=CONTROLLER\ncontroller.quorum.voters=1@127.0.0.1:{cport}\n"
        f"log.dirs={logs}\ncontroller.quorum.election.timeout.ms=100\nbroker.heartbeat.interval.ms=100\n"
        "sasl.enabled.mechanisms=PLAIN\nsasl.mechanism.controller.protocol=PLAIN\n"
        "sasl.mechanism.inter.broker.protocol=PLAIN\n"
        f"listener.name.controller.plain.sasl.jaas.config={JAAS}\n"
        f"listener.name.client.plain.sasl.jaas.config={JAAS}\n"
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"
        # the node's own links (broker to controller, replication) log in as admin
        "super.users=User:admin\n"
        "offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\n" + extra))
    node = Node(settings, listen_sockets={"CONTROLLER": csock, "CLIENT": ssock})
    return node, cport, sport


async def _login(port: int, user: str) -> KafkaConnection:
    return await KafkaConnection.open("127.0.0.1", port, sasl=SaslLogin("PLAIN", user, f"{user}-secret"))


async def _until(check, timeout_s: float = 10.0):
    for _ in range(int(timeout_s / 0.05)):
        got = await check()
        if got:
            return got
        await asyncio.sleep(0.05)
    raise AssertionError("condition not reached")


def _acl(rtype: int, name: str, principal: str, op: int, pattern: int = PatternType.LITERAL):
    C = w.CreateAclsRequest
    return C.AclCreation(resource_type=rtype, resource_name=name, resource_pattern_type=pattern, principal=principal,
                         host="*", operation=op, permission_type=Perm.ALLOW)


def _produce(topic: str, value: bytes):
    P = w.ProduceRequest
    b = RecordBatchBuilder(base_offset=0)
    b.append(None, value)
    return P(transactional_id=None, acks=-1, timeout_ms=5000, topic_data=[P.TopicProduceData(name=topic, partition_data=[
        P.PartitionProduceData(index=0, records=b.build())])])


def _fetch(topic: str):
    F = w.FetchRequest
    return F(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0, session_id=0,
             session_epoch=-1, topics=[F.FetchTopic(topic=topic, partitions=[F.FetchPartition(
                 partition=0, current_leader_epoch=-1, fetch_offset=0, log_start_offset=-1,
                 partition_max_bytes=1 << 20)])], forgotten_topics_data=[], rack_id="")


def _create(name: str):
    CT = w.CreateTopicsRequest
    return CT(topics=[CT.CreatableTopic(name=name, num_partitions=1, replication_factor=1, assignments=[],
                                        configs=[])], timeout_ms=5000, validate_only=False)


def _join(group: str):
    J = w.JoinGroupRequest
    return J(group_id=group, session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
             group_instance_id=None, protocol_type="consumer",
             protocols=[J.JoinGroupRequestProtocol(name="range", metadata=b"")])


def test_refusals_change_nothing_and_acls_grant_access(tmp_path):
    node, cport, sport = _node(tmp_path)

    async def main():
        await node.start()
        try:
            await _until(lambda: _ready(node))
            admin, alice, bob = await _login(sport, "admin"), await _login(sport, "alice"), await _login(sport, "bob")
            # the super user creates two topics; alice may not create one
            for name in ("orders", "secret"):
                r = await admin.request(_create(name), 5)
                assert r.topics[0].error_code == 0, r
            r = await alice.request(_create("alices"), 5)
            assert r.topics[0].error_code == ec.TOPIC_AUTHORIZATION_FAILED
            assert "alices" not in node.metadata.image.topic_ids
            await _until(lambda: _hosted(node, "orders"))

            # nobody but the super user sees a topic without ACLs; a named one answers TOPIC_AUTHORIZATION_FAILED
            m = await alice.request(w.MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)
            assert [t.name for t in m.topics] == []
            m = await alice.request(w.MetadataRequest(topics=[w.MetadataRequest.MetadataRequestTopic(
                name="orders", topic_id=ZERO_UUID)], allow_auto_topic_creation=True), 12)
            assert m.topics[0].error_code == ec.TOPIC_AUTHORIZATION_FAILED and m.topics[0].partitions == []

            # produce, fetch and join refused; nothing appended, no group
            r = await alice.request(_produce("orders", b"nope"), 9)
            assert r.responses[0].partition_responses[0].error_code == ec.TOPIC_AUTHORIZATION_FAILED
            assert node.replicas.get("orders", 0).log.end_offset() == 0
            r = await bob.request(_fetch("orders"), 12)
            assert r.responses[0].partitions[0].error_code == ec.TOPIC_AUTHORIZATION_FAILED
            assert r.responses[0].partitions[0].records in (b"", None)
            r = await bob.request(_join("readers"), 7)
            assert r.error_code == ec.GROUP_AUTHORIZATION_FAILED

            # a Vote from a principal without CLUSTER_ACTION: refused, the epoch does not move
            epoch = node.raft.quorum.epoch
            V = w.VoteRequest
            vote = V(cluster_id=CLUSTER, voter_id=1, topics=[V.TopicData(topic_name="__cluster_metadata", partitions=[
                V.PartitionData(partition_index=0, replica_epoch=epoch + 5, replica_id=2,
                                replica_directory_id=ZERO_UUID, voter_directory_id=ZERO_UUID,
                                last_offset_epoch=epoch + 5, last_offset=1 << 40)])])
            voter = await _login(cport, "alice")  # Vote is served on the controller listener
            r = await voter.request(vote, 1)
            await voter.close()
            assert r.error_code == ec.CLUSTER_AUTHORIZATION_FAILED
            assert node.raft.quorum.epoch == epoch
            # CreateAcls needs ALTER on the cluster
            r = await alice.request(w.CreateAclsRequest(creations=[
                _acl(ResourceType.TOPIC, "orders", "User:alice", Op.WRITE)]), 3)
            assert r.results[0].error_code == ec.CLUSTER_AUTHORIZATION_FAILED
            assert not node.metadata.image.acls

            # the super user grants: alice writes orders; bob reads orders (prefixed) in group readers
            r = await admin.request(w.CreateAclsRequest(creations=[
                _acl(ResourceType.TOPIC, "orders", "User:alice", Op.WRITE),
                _acl(ResourceType.TOPIC, "ord", "User:bob", Op.READ, PatternType.PREFIXED),
                _acl(ResourceType.GROUP, "readers", "User:bob", Op.READ)]), 3)
            assert [x.error_code for x in r.results] == [0, 0, 0]
            await _until(lambda: _acls(node, 3))
            r = await alice.request(_produce("orders", b"yes"), 9)
            assert r.responses[0].partition_responses[0].error_code == 0
            m = await alice.request(w.MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)
            assert [t.name for t in m.topics] == ["orders"]  # WRITE implies DESCRIBE; "secret" stays hidden
            r = await bob.request(_fetch("orders"), 12)
            assert r.responses[0].partitions[0].error_code == 0 and r.responses[0].partitions[0].records
            FC = w.FindCoordinatorRequest

            async def coordinator():
                r = await bob.request(FC(key="readers", key_type=0, coordinator_keys=["readers"]), 4)
                return r.coordinators[0].error_code == 0
            await _until(coordinator, 20)
            r = await bob.request(_join("readers"), 7)
            assert r.error_code == ec.MEMBER_ID_REQUIRED  # the group's first step: bob may join now
            r = await bob.request(FC(key="others", key_type=0, coordinator_keys=["others"]), 4)
            assert r.coordinators[0].error_code == ec.GROUP_AUTHORIZATION_FAILED
            r = await bob.request(_fetch("secret"), 12)
            assert r.responses[0].partitions[0].error_code == ec.TOPIC_AUTHORIZATION_FAILED

            # deleting alice's ACL takes the write away again
            D = w.DeleteAclsRequest
            r = await admin.request(D(filters=[D.DeleteAclsFilter(
                resource_type_filter=ResourceType.TOPIC, resource_name_filter="orders",
                pattern_type_filter=PatternType.LITERAL, principal_filter="User:alice", host_filter=None,
                operation=Op.ANY, permission_type=Perm.ANY)]), 3)
            assert r.filter_results[0].error_code == 0 and len(r.filter_results[0].matching_acls) == 1
            await _until(lambda: _acls(node, 2))
            end = node.replicas.get("orders", 0).log.end_offset()
            r = await alice.request(_produce("orders", b"again"), 9)
            assert r.responses[0].partition_responses[0].error_code == ec.TOPIC_AUTHORIZATION_FAILED
            assert node.replicas.get("orders", 0).log.end_offset() == end
            for c in (admin, alice, bob):
                await c.close()
        finally:
            await node.shutdown()

    asyncio.run(main())


def run_as_admin_and_alice(tmp_path, scenario, extra: str = "", features: dict[str, int] | None = None) -> None:
    """``await scenario(node, admin, alice)`` on an ACL-enforcing node (``extra`` properties, ``features`` at
    bootstrap), once it is ready, over a SASL login of the super user and one of alice; the connections are closed and
    the node shut down however the scenario ends."""
    node, _cport, sport = _node(tmp_path, extra, features)

    async def main():
        await node.start()
        try:
            await _until(lambda: _ready(node))
            admin, alice = await _login(sport, "admin"), await _login(sport, "alice")
            try:
                await scenario(node, admin, alice)
            finally:
                await admin.close()
                await alice.close()
        finally:
            await node.shutdown()

    asyncio.run(main())


async def _ready(node) -> bool:
    b = node.metadata.image.brokers.get(1)
    return b is not None and not b.fenced and node.metadata.active


async def _hosted(node, topic: str) -> bool:
    hp = node.replicas.get(topic, 0)
    return hp is not None and hp.state.role == "leader" if hp is not None else False


async def _acls(node, n: int) -> bool:
    return len(node.metadata.image.acls) == n


def test_a_topic_named_twice_is_invalid_before_it_is_unauthorized(tmp_path):
    """Kafka's ControllerApis answers a topic a CreateTopics or DeleteTopics names twice INVALID_REQUEST ("Duplicate
    topic name.") before it looks at ACLs; a principal without them got TOPIC_AUTHORIZATION_FAILED instead (found by
    the fuzzer, tests/fuzz). Nothing is created or deleted either way."""

    async def scenario(node, admin, alice):
        assert (await admin.request(_create("kept"), 5)).topics[0].error_code == 0
        twice = _create("twin")
        twice.topics *= 2
        r = await alice.request(twice, 5)
        assert {t.name: t.error_code for t in r.topics} == {"twin": ec.INVALID_REQUEST}, r
        D = w.DeleteTopicsRequest
        for version, body in ((5, D(topic_names=["kept", "kept"], timeout_ms=5000)),
                              (6, D(topics=[D.DeleteTopicState(name="kept")] * 2, timeout_ms=5000))):
            r = await alice.request(body, version)
            assert {t.name: t.error_code for t in r.responses} == {"kept": ec.INVALID_REQUEST}, r
        assert "twin" not in node.metadata.image.topic_ids and "kept" in node.metadata.image.topic_ids

    run_as_admin_and_alice(tmp_path, scenario)


def test_a_topic_named_by_id_is_deleted_only_with_delete_on_it(tmp_path):
    """Kafka's ControllerApis.deleteTopics: an id whose topic the principal may not DESCRIBE is UNKNOWN_TOPIC_ID, one
    it may describe but not DELETE is TOPIC_AUTHORIZATION_FAILED; neither is deleted. The fuzzer (tests/fuzz) found
    a principal without ACLs deleting a topic by its id: the id went on to the controller, which deleted it."""
    D = w.DeleteTopicsRequest

    async def scenario(node, admin, alice):
        assert (await admin.request(_create("kept"), 5)).topics[0].error_code == 0
        await _until(lambda: _hosted(node, "kept"))
        topic_id = node.metadata.image.topic_ids["kept"]
        by_id = D(topics=[D.DeleteTopicState(name=None, topic_id=topic_id)], timeout_ms=5000)
        r = await alice.request(by_id, 6)
        assert [(t.name, t.topic_id, t.error_code) for t in r.responses] == [(None, topic_id, ec.UNKNOWN_TOPIC_ID)]
        r = await admin.request(w.CreateAclsRequest(creations=[
            _acl(ResourceType.TOPIC, "kept", "User:alice", Op.DESCRIBE)]), 3)
        assert r.results[0].error_code == 0
        await _until(lambda: _acls(node, 1))
        r = await alice.request(by_id, 6)
        assert [(t.name, t.error_code) for t in r.responses] == [("kept", ec.TOPIC_AUTHORIZATION_FAILED)]
        assert node.metadata.image.topic_ids.get("kept") == topic_id

    run_as_admin_and_alice(tmp_path, scenario)
