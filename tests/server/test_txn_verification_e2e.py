"""KIP-890 part 1 end to end (in-process node, real sockets and files): the partition leader asks the transaction
coordinator (AddPartitionsToTxn v5 VerifyOnly over the inter-broker listener) before a producer's first
transactional write to a partition, so a write to a partition never added to the transaction — or arriving after
the transaction was aborted — is refused with Kafka's error and nothing is appended; the coordinator answers the
batched v4+ form; confluent-kafka's transactional flow works with verification on; with
``transaction.partition.verification.enable=false`` the late write opens a transaction nobody will end (the
hanging transaction the check exists for)."""

from __future__ import annotations

import asyncio
import time

from confluent_kafka import Consumer, Producer, TopicPartition

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.protocol.served import key as api_key
from kraftwire.server.edge.client import KafkaConnection
from server.test_kraft_node import Combined, _create, _online
from server.test_partitions import _hosted
from server.test_replication import _until
from server.test_txn_coordinator import PROPS, _add, _codes, _coordinator, _init, _states
from server.test_txn_partitions import _txn_batch

P = w.ProduceRequest
A = w.AddPartitionsToTxnRequest
TOPIC = "v"


def _produce(records: bytes, partition: int, tid: str = "tv"):
    return P(transactional_id=tid, acks=-1, timeout_ms=5000, topic_data=[P.TopicProduceData(
        name=TOPIC, partition_data=[P.PartitionProduceData(index=partition, records=records)])])


def _answer(resp):
    pr = resp.responses[0].partition_responses[0]
    return pr.error_code, pr.error_message


async def _setup(c, node, conn):
    await _online(node)
    assert (await conn.request(_create(TOPIC, partitions=2), 7)).topics[0].error_code == ec.NONE
    await _hosted(node, TOPIC, 2)
    await _coordinator(conn, "tv")
    init = await _init(conn, "tv")
    assert init.error_code == ec.NONE
    return init.producer_id, init.producer_epoch


def _transactional_round(port: int) -> list[bytes]:
    """confluent-kafka: one committed transaction over both partitions, then a read_committed read of it."""
    p = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "transactional.id": "ck", "linger.ms": 5})
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(10):
        p.produce(TOPIC, value=f"c{i}".encode(), partition=i % 2)
    p.commit_transaction(30)
    c = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "r", "isolation.level": "read_committed",
                  "enable.auto.commit": False})
    got = []
    try:
        c.assign([TopicPartition(TOPIC, i, 0) for i in range(2)])
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and len([v for v in got if v.startswith(b"c")]) < 10:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got.append(m.value())
        return got
    finally:
        c.close()


def test_the_leader_verifies_with_the_coordinator(tmp_path):
    c = Combined(tmp_path, extra=PROPS)

    async def main():
        node = c.node()
        await node.start()
        try:
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                pid, epoch = await _setup(c, node, conn)
                versions = await conn.request(w.ApiVersionsRequest(client_software_name="t",
                                                                   client_software_version="1"), 3)
                k = api_key("AddPartitionsToTxn")
                assert [(a.min_version, a.max_version) for a in versions.api_keys if a.api_key == k] == [(0, 5)]
                added = await conn.request(_add("tv", pid, epoch, [(TOPIC, 0)]), 3)
                assert _codes(added) == {(TOPIC, 0): ec.NONE}
                p0, p1 = node.replicas.get(TOPIC, 0), node.replicas.get(TOPIC, 1)

                # a partition never added to the transaction: refused, nothing appended (v11 knows
                # TRANSACTION_ABORTABLE; older Produce versions get INVALID_TXN_STATE)
                r = await conn.request(_produce(_txn_batch([b"x"], pid=pid, epoch=epoch), 1), 11)
                assert _answer(r)[0] == ec.TRANSACTION_ABORTABLE
                r = await conn.request(_produce(_txn_batch([b"x"], pid=pid, epoch=epoch), 1), 10)
                assert _answer(r) == (ec.INVALID_TXN_STATE, "Partition was not added to the transaction")
                assert p1.log.end_offset() == 0 and p1.txn_state().ongoing == {}
                assert node.replicas.verifier.failures == 2

                # the added partition: verified once, then the open transaction needs no more asking
                r = await conn.request(_produce(_txn_batch([b"a0", b"a1"], pid=pid, epoch=epoch), 0), 11)
                assert _answer(r)[0] == ec.NONE and node.replicas.verifier.verified == 1
                r = await conn.request(_produce(_txn_batch([b"a2"], pid=pid, epoch=epoch, seq=2), 0), 11)
                assert _answer(r)[0] == ec.NONE and node.replicas.verifier.verified == 1
                assert p0.log.end_offset() == 3 and p0.txn_state().ongoing == {pid: 0}
                assert not p0.verifications.entries  # the append ended its verification

                # the coordinator's batched v4+ form, as a broker sends it (no authorizer here: allowed)
                verify = A(transactions=[
                    A.AddPartitionsToTxnTransaction(transactional_id="tv", producer_id=pid, producer_epoch=epoch,
                                                    verify_only=True, topics=[A.AddPartitionsToTxnTopic(
                                                        name=TOPIC, partitions=[0, 1])]),
                    A.AddPartitionsToTxnTransaction(transactional_id="nobody", producer_id=pid,
                                                    producer_epoch=epoch, verify_only=True,
                                                    topics=[A.AddPartitionsToTxnTopic(name=TOPIC, partitions=[0])]),
                    A.AddPartitionsToTxnTransaction(transactional_id="tv", producer_id=pid, producer_epoch=epoch,
                                                    verify_only=True, topics=[
                                                        A.AddPartitionsToTxnTopic(name=TOPIC, partitions=[0]),
                                                        A.AddPartitionsToTxnTopic(name="gone", partitions=[0])])])
                for version in (4, 5):
                    resp = await conn.request(verify, version)
                    assert resp.error_code == ec.NONE
                    got = [(t.transactional_id, {(tr.name, p.partition_index): p.partition_error_code
                                                 for tr in t.topic_results for p in tr.results_by_partition})
                           for t in resp.results_by_transaction]
                    assert got == [("tv", {(TOPIC, 0): ec.NONE, (TOPIC, 1): ec.TRANSACTION_ABORTABLE}),
                                   ("nobody", {(TOPIC, 0): ec.INVALID_PRODUCER_ID_MAPPING}),
                                   ("tv", {(TOPIC, 0): ec.OPERATION_NOT_ATTEMPTED,
                                           ("gone", 0): ec.UNKNOWN_TOPIC_OR_PARTITION})]
                assert _states(node, "tv")[-1][3] == [(TOPIC, 0)]  # verifying added nothing

                # the abort completes (its marker on v-0); a late write of the aborted transaction must not open a
                # new one there: refused, and the last stable offset is free
                ended = await conn.request(w.EndTxnRequest(transactional_id="tv", producer_id=pid,
                                                           producer_epoch=epoch, committed=False), 3)
                assert ended.error_code == ec.NONE
                await _until("CompleteAbort", lambda: _states(node, "tv")[-1][0] == 5)
                end = p0.log.end_offset()
                r = await conn.request(_produce(_txn_batch([b"late"], pid=pid, epoch=epoch, seq=3), 0), 11)
                assert _answer(r)[0] == ec.TRANSACTION_ABORTABLE
                assert p0.log.end_offset() == end and p0.txn_state().ongoing == {}
                assert p0.last_stable_offset() == p0.log.high_watermark() == end

                # a request mixing two producers' transactional batches is refused whole (Kafka's
                # InvalidPidMappingException)
                mixed = P(transactional_id="tv", acks=-1, timeout_ms=5000, topic_data=[P.TopicProduceData(
                    name=TOPIC, partition_data=[
                        P.PartitionProduceData(index=0, records=_txn_batch([b"m"], pid=pid, epoch=epoch, seq=3)),
                        P.PartitionProduceData(index=1, records=_txn_batch([b"m"], pid=pid + 1))])])
                r = await conn.request(mixed, 11)
                assert [p.error_code for p in r.responses[0].partition_responses] == [
                    ec.INVALID_PRODUCER_ID_MAPPING] * 2

                # the race the guard closes, on the real replica manager and log: a verification begins, a marker
                # of the producer lands before the verified append — the append is refused, only the marker is there
                rm = node.replicas
                guard = rm.start_verification(p1, pid, 0, epoch)
                assert guard is not None and p1.verifications.guard(pid) is guard
                assert rm.append_marker(p1, pid, epoch, 0, False).error == ec.NONE
                assert p1.verifications.guard(pid) is None
                late = rm.append(p1, _txn_batch([b"y"], pid=pid, epoch=epoch), -1, verify=True, guard=guard)
                assert (late.error, late.message) == (ec.INVALID_TXN_STATE,
                                                      "Record was not part of an ongoing transaction")
                assert p1.log.end_offset() == 1 and p1.txn_state().ongoing == {}
                fresh = rm.start_verification(p1, pid, 0, epoch)  # a new verification, a new guard
                assert fresh is not guard
                ok = rm.append(p1, _txn_batch([b"y"], pid=pid, epoch=epoch), -1, verify=True, guard=fresh)
                assert ok.error == ec.NONE and p1.txn_state().ongoing == {pid: 1}
                assert rm.append_marker(p1, pid, epoch, 0, False).error == ec.NONE  # closed again
            finally:
                await conn.close()

            # confluent-kafka's transactional producer, verified by the leader, reads back committed
            before = node.replicas.verifier.verified
            got = await asyncio.to_thread(_transactional_round, c.bport)
            assert sorted(v for v in got if v.startswith(b"c")) == sorted(f"c{i}".encode() for i in range(10))
            assert b"late" not in got and b"x" not in got
            assert node.replicas.verifier.verified >= before + 2  # both partitions' first writes were asked
        finally:
            await node.shutdown()

    asyncio.run(main())


def test_without_verification_a_late_write_hangs_the_partition(tmp_path):
    c = Combined(tmp_path, extra=PROPS + "transaction.partition.verification.enable=false\n")

    async def scenario(node, conn):
        pid, epoch = await _setup(c, node, conn)
        p1 = node.replicas.get(TOPIC, 1)
        # never added to any transaction, yet appended: the old behaviour
        r = await conn.request(_produce(_txn_batch([b"x"], pid=pid, epoch=epoch), 1), 11)
        assert _answer(r)[0] == ec.NONE
        assert p1.log.end_offset() == 1 and p1.txn_state().ongoing == {pid: 0}
        # the coordinator knows nothing of it: nothing will end it, and read_committed is stuck at 0
        assert _states(node, "tv")[-1][3] == []
        assert p1.last_stable_offset() == 0 < p1.log.high_watermark()
        assert node.replicas.verifier.verified == node.replicas.verifier.failures == 0

    c.run(scenario, online=False)


def test_with_acls_only_brokers_may_verify_and_the_leader_asks_as_one(tmp_path):
    """AddPartitionsToTxn v4+ needs CLUSTER_ACTION on the cluster (a client without it gets the top-level
    CLUSTER_AUTHORIZATION_FAILED); the leader's own verification goes over the SASL inter-broker listener as the
    broker's principal, so a client's transactional write is still verified."""
    from kraftwire.security.authorizer import AclOperation as Op
    from kraftwire.security.authorizer import ResourceType as RT
    from server.test_acls_enforced import _acl, run_as_admin_and_alice
    from server.test_acls_enforced import _until as _until_async

    async def scenario(node, admin, alice):
        assert (await admin.request(_create(TOPIC, partitions=2), 7)).topics[0].error_code == ec.NONE
        await _hosted(node, TOPIC, 2)
        r = await admin.request(w.CreateAclsRequest(creations=[
            _acl(RT.TOPIC, TOPIC, "User:alice", Op.WRITE),
            _acl(RT.TRANSACTIONAL_ID, "ta", "User:alice", Op.WRITE),
            _acl(RT.TRANSACTIONAL_ID, "ta", "User:alice", Op.DESCRIBE)]), 3)
        assert all(x.error_code == ec.NONE for x in r.results)

        async def acls_seen():
            return len(node.metadata.image.acls) >= 3

        await _until_async(acls_seen)
        await _coordinator(alice, "ta")
        init = await _init(alice, "ta")
        assert init.error_code == ec.NONE
        pid, epoch = init.producer_id, init.producer_epoch
        verify = A(transactions=[A.AddPartitionsToTxnTransaction(
            transactional_id="ta", producer_id=pid, producer_epoch=epoch, verify_only=True,
            topics=[A.AddPartitionsToTxnTopic(name=TOPIC, partitions=[0])])])
        denied = await alice.request(verify, 5)
        assert (denied.error_code, denied.results_by_transaction) == (ec.CLUSTER_AUTHORIZATION_FAILED, [])
        allowed = await admin.request(verify, 5)  # a super user, as the brokers log in
        assert allowed.error_code == ec.NONE
        assert allowed.results_by_transaction[0].topic_results[0].results_by_partition[0] \
            .partition_error_code == ec.TRANSACTION_ABORTABLE
        # an add without VerifyOnly needs transaction.version 2: the whole request is refused, as Kafka 4.4 answers
        # below it (the conformance scenarios AddPartitionsToTxn-v4/v5-add); nothing is added
        add = A(transactions=[A.AddPartitionsToTxnTransaction(
            transactional_id="ta", producer_id=pid, producer_epoch=epoch, verify_only=False,
            topics=[A.AddPartitionsToTxnTopic(name=TOPIC, partitions=[0])])])
        refused = await admin.request(add, 5)
        assert (refused.error_code, refused.results_by_transaction) == (ec.UNSUPPORTED_VERSION, [])
        add.transactions[0].producer_epoch = epoch + 1  # the coordinator's own refusals come first, per partition
        fenced = await admin.request(add, 5)
        assert fenced.error_code == ec.NONE
        assert fenced.results_by_transaction[0].topic_results[0].results_by_partition[0] \
            .partition_error_code == ec.PRODUCER_FENCED

        assert _codes(await alice.request(_add("ta", pid, epoch, [(TOPIC, 0)]), 3)) == {(TOPIC, 0): ec.NONE}
        r = await alice.request(_produce(_txn_batch([b"ok"], pid=pid, epoch=epoch), 0, "ta"), 9)
        assert _answer(r)[0] == ec.NONE
        r = await alice.request(_produce(_txn_batch([b"no"], pid=pid, epoch=epoch), 1, "ta"), 9)
        assert _answer(r)[0] == ec.INVALID_TXN_STATE
        assert node.replicas.get(TOPIC, 0).log.end_offset() == 1
        assert node.replicas.get(TOPIC, 1).log.end_offset() == 0
        assert (node.replicas.verifier.verified, node.replicas.verifier.failures) == (1, 1)

    # transaction.version 1: a broker's add without VerifyOnly is refused there (at 2 it adds, test_txn_v2_e2e)
    run_as_admin_and_alice(tmp_path, scenario, PROPS, features={"group.version": 1, "transaction.version": 1})
