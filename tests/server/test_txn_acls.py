"""The transaction coordinator's ACL checks (Kafka's KafkaApis): FindCoordinator(key type 1) and DescribeTransactions
need DESCRIBE on the TRANSACTIONAL_ID, InitProducerId/AddPartitionsToTxn/AddOffsetsToTxn/EndTxn WRITE on it
(TRANSACTIONAL_ID_AUTHORIZATION_FAILED), AddPartitionsToTxn WRITE on each topic (TOPIC_AUTHORIZATION_FAILED, the
other partitions OPERATION_NOT_ATTEMPTED), AddOffsetsToTxn READ on the group; ListTransactions shows only the ids
the principal may describe. In-process, SASL/PLAIN principals, StandardAuthorizer rules."""

from __future__ import annotations

import asyncio

from kraftwire import error_codes as ec
from kraftwire.config import parse_properties
from kraftwire.log.meta_properties import MetaProperties, write_meta_properties
from kraftwire.metadata.bootstrap import BOOTSTRAP_FILE, bootstrap_records, encode_bootstrap_file
from kraftwire.metadata.version import DEFAULT
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import ResourceType
from kraftwire.server.node.app import Node
from kraftwire.server.node.settings import NodeSettings
from server.test_acls_enforced import CLUSTER, JAAS, _acl, _create, _login, _sock
from server.test_txn_coordinator import F, I, _add, _codes


def _node(tmp_path) -> tuple[Node, int]:
    logs = tmp_path / "logs"
    logs.mkdir()
    write_meta_properties(str(logs), MetaProperties(cluster_id=CLUSTER, node_id=1))
    (logs / BOOTSTRAP_FILE).write_bytes(encode_bootstrap_file(bootstrap_records(DEFAULT), timestamp=0))
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
        "super.users=User:admin\n"
        "transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n"
        "transaction.state.log.num.partitions=1\n"))
    return Node(settings, listen_sockets={"CONTROLLER": csock, "CLIENT": ssock}), sport


def test_transactional_id_acls(tmp_path):
    node, port = _node(tmp_path)

    async def main():
        await node.start()
        try:
            admin = await _login(port, "admin")
            for _ in range(200):
                r = await admin.request(_create("t"), 5)
                if r.topics[0].error_code in (0, ec.TOPIC_ALREADY_EXISTS):
                    break
                await asyncio.sleep(0.05)
            assert (await admin.request(_create("secret"), 5)).topics[0].error_code == 0
            r = await admin.request(w.CreateAclsRequest(creations=[
                _acl(ResourceType.TRANSACTIONAL_ID, "tx-a", "User:alice", Op.WRITE),
                _acl(ResourceType.TOPIC, "t", "User:alice", Op.WRITE)]), 3)
            assert [x.error_code for x in r.results] == [0, 0]
            alice, bob = await _login(port, "alice"), await _login(port, "bob")
            found = None
            for _ in range(300):  # the ACLs reach the image, the topic is created, its partition loads
                found = (await alice.request(F(key_type=1, coordinator_keys=["tx-a"]), 4)).coordinators[0]
                if found.error_code == ec.NONE:
                    break
                await asyncio.sleep(0.05)
            assert found.error_code == ec.NONE  # WRITE implies DESCRIBE
            denied = (await bob.request(F(key_type=1, coordinator_keys=["tx-a"]), 4)).coordinators[0]
            assert denied.error_code == ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            refused = await bob.request(I(transactional_id="tx-a", transaction_timeout_ms=60000, producer_id=-1,
                                          producer_epoch=-1), 4)
            assert refused.error_code == ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            init = None
            for _ in range(200):
                init = await alice.request(I(transactional_id="tx-a", transaction_timeout_ms=60000, producer_id=-1,
                                             producer_epoch=-1), 4)
                if init.error_code not in (ec.COORDINATOR_LOAD_IN_PROGRESS, ec.NOT_COORDINATOR):
                    break
                await asyncio.sleep(0.05)
            assert init.error_code == ec.NONE
            pid = init.producer_id
            mixed = await alice.request(_add("tx-a", pid, 0, [("t", 0), ("secret", 0)]), 3)
            assert _codes(mixed) == {("t", 0): ec.OPERATION_NOT_ATTEMPTED,
                                     ("secret", 0): ec.TOPIC_AUTHORIZATION_FAILED}
            ok = await alice.request(_add("tx-a", pid, 0, [("t", 0)]), 3)
            assert _codes(ok) == {("t", 0): 0}
            bob_add = await bob.request(_add("tx-a", pid, 0, [("t", 0)]), 3)
            assert set(_codes(bob_add).values()) == {ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
            group = await alice.request(w.AddOffsetsToTxnRequest(transactional_id="tx-a", producer_id=pid,
                                                                 producer_epoch=0, group_id="g"), 3)
            assert group.error_code == ec.GROUP_AUTHORIZATION_FAILED
            end = await bob.request(w.EndTxnRequest(transactional_id="tx-a", producer_id=pid, producer_epoch=0,
                                                    committed=False), 3)
            assert end.error_code == ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            L = w.ListTransactionsRequest(state_filters=[], producer_id_filters=[], duration_filter=-1)
            assert [s.transactional_id for s in (await alice.request(L, 1)).transaction_states] == ["tx-a"]
            assert (await bob.request(L, 1)).transaction_states == []
            described = await bob.request(w.DescribeTransactionsRequest(transactional_ids=["tx-a"]), 0)
            assert described.transaction_states[0].error_code == ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            for c in (admin, alice, bob):
                await c.close()
        finally:
            await node.shutdown()

    asyncio.run(main())
