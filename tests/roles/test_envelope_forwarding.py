"""A broker forwards admin requests to a separate controller inside an Envelope (KIP-590), as Kafka's broker does
(``ForwardingManager``; ``KafkaApisTest``'s forwarding cases, ``ControllerApisTest.testEnvelope*``): the controller
authorizes the client's own principal — taken from its SASL login on the broker's listener, serialized as Kafka's
``DefaultKafkaPrincipalBuilder`` does — while the broker logs in to the controller's SASL listener as a super user
(the CLUSTER_ACTION the controller asks of an Envelope's sender), and charges the client's controller mutation
quota (KIP-599), which the controller alone keeps."""

from __future__ import annotations

import asyncio

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import AclPermissionType as Perm
from kraftwire.security.authorizer import PatternType, ResourceType
from kraftwire.security.sasl.client import SaslLogin
from kraftwire.server.edge.client import KafkaConnection

from harness.roles import RolesCluster, wait_until

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
PROPS = ("listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT,BROKER:SASL_PLAINTEXT\n"
         "inter.broker.listener.name=BROKER\nsasl.enabled.mechanisms=PLAIN\nsasl.mechanism.controller.protocol=PLAIN\n"
         "sasl.mechanism.inter.broker.protocol=PLAIN\n"
         f"listener.name.controller.plain.sasl.jaas.config={JAAS}\nlistener.name.broker.plain.sasl.jaas.config={JAAS}\n"
         "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\nsuper.users=User:admin\n"
         "offsets.topic.replication.factor=1\n")
CT = w.CreateTopicsRequest


def _create(name: str, partitions: int = 1):
    return CT(topics=[CT.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1, assignments=[],
                                        configs=[])], timeout_ms=10000, validate_only=False)


def _alter_retention(topic: str):
    A = w.IncrementalAlterConfigsRequest
    return A(resources=[A.AlterConfigsResource(resource_type=ResourceType.TOPIC, resource_name=topic, configs=[
        A.AlterableConfig(name="retention.ms", config_operation=0, value="60000")])], validate_only=False)


def _grant(principal: str, operation: int):
    C = w.CreateAclsRequest
    return C(creations=[C.AclCreation(resource_type=ResourceType.TOPIC, resource_name="t-", host="*",
                                      resource_pattern_type=PatternType.PREFIXED, principal=principal,
                                      operation=operation, permission_type=Perm.ALLOW)])


def _mutation_quota(user: str, rate: float):
    Q = w.AlterClientQuotasRequest
    return Q(entries=[Q.EntryData(entity=[Q.EntityData(entity_type="user", entity_name=user)], ops=[
        Q.OpData(key="controller_mutation_rate", value=rate, remove=False)])], validate_only=False)


def _registered(port: int) -> bool:
    async def ask():
        conn = await KafkaConnection.open("127.0.0.1", port, sasl=SaslLogin("PLAIN", "admin", "admin-secret"))
        try:
            return (await conn.request(w.MetadataRequest(topics=None), 1)).brokers
        finally:
            await conn.close()
    try:
        return bool(asyncio.run(ask()))
    except Exception:  # noqa: BLE001 - the broker may be starting
        return False


def test_a_broker_forwards_admin_requests_in_an_envelope_authorized_and_charged_as_the_client(tmp_path):
    cluster = RolesCluster(str(tmp_path), controllers=1, brokers=1, kraft=True, extra_props=PROPS)
    try:
        cluster.start_all()
        broker = cluster.brokers[0]
        wait_until(lambda: _registered(broker.port), "the broker registered", cluster)

        async def scenario():
            login = {u: SaslLogin("PLAIN", u, f"{u}-secret") for u in ("admin", "alice")}
            admin = await KafkaConnection.open("127.0.0.1", broker.port, sasl=login["admin"])
            alice = await KafkaConnection.open("127.0.0.1", broker.port, sasl=login["alice"])
            try:
                # no ACL for alice: the controller refuses her, with Kafka's ControllerApis message
                refused = (await alice.request(_create("t-a"), 7)).topics[0]
                assert (refused.error_code, refused.error_message) == (ec.TOPIC_AUTHORIZATION_FAILED,
                                                                       "Authorization failed.")
                # the super user's CreateAcls is decided by the controller as admin's, then alice may create
                made = await admin.request(_grant("User:alice", Op.CREATE), 3)
                assert [r.error_code for r in made.results] == [ec.NONE]
                created = (await alice.request(_create("t-a"), 7)).topics[0]
                # created as alice's: she may not DESCRIBE_CONFIGS it, so its configs are hidden (Kafka's answer)
                assert (created.error_code, created.topic_config_error_code) == (
                    ec.NONE, ec.TOPIC_AUTHORIZATION_FAILED), created
                # CREATE is not ALTER_CONFIGS: alice's IncrementalAlterConfigs is refused, admin's goes through
                denied = (await alice.request(_alter_retention("t-a"), 1)).responses[0]
                assert denied.error_code == ec.TOPIC_AUTHORIZATION_FAILED, denied
                altered = (await admin.request(_alter_retention("t-a"), 1)).responses[0]
                assert altered.error_code == ec.NONE, altered
                # KIP-599: alice's controller_mutation_rate, kept by the controller: her first CreateTopics takes
                # the quota below zero, the next one is refused THROTTLING_QUOTA_EXCEEDED with a throttle time
                quota = await admin.request(_mutation_quota("alice", 1.0), 1)
                assert [e.error_code for e in quota.entries] == [ec.NONE]
                first = (await alice.request(_create("t-b", 15), 7)).topics[0]
                assert first.error_code == ec.NONE, first
                throttled = await alice.request(_create("t-c", 15), 7)
                assert throttled.topics[0].error_code == ec.THROTTLING_QUOTA_EXCEEDED, throttled
                assert throttled.throttle_time_ms > 0
                # admin's own quota is untouched: the controller charged alice, not the broker that forwarded
                assert (await admin.request(_create("t-d", 15), 7)).topics[0].error_code == ec.NONE
            finally:
                await admin.close()
                await alice.close()

        asyncio.run(scenario())
    finally:
        cluster.close()
