"""DescribeProducers (api key 61) on a KRaft broker, in-process on real sockets and files: Kafka's per-topic errors
(an illegal name INVALID_TOPIC_EXCEPTION with the reason, a topic the image lacks UNKNOWN_TOPIC_OR_PARTITION, READ
on the topic or TOPIC_AUTHORIZATION_FAILED), a partition index the topic lacks UNKNOWN_TOPIC_OR_PARTITION, and each
producer of a partition's table: epoch, last sequence, last timestamp, the coordinator epoch of its last marker and
the start of its open transaction; `kafka-transactions.sh abort` without ALTER or CLUSTER_ACTION on the cluster gets Kafka's
cluster authorization message. (NOT_LEADER_OR_FOLLOWER for a partition without a replica on the broker, and the
answer of a follower, are in ``tests/tools/test_transactions_tool.py`` on three brokers.)"""

from __future__ import annotations

import asyncio
import sys

from harness import processes
from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import ResourceType
from server.test_acls_enforced import _acl, _create as _create_one, _login
from server.test_kraft_node import Combined, _create
from server.test_txn_acls import _node as _sasl_node
from server.test_txn_partitions import _marker_errors, _pids

#: a partition the principal may not read: Kafka's default message for the code (the conformance run,
#: DescribeProducers-v0-no-acl)
DENIED = "Topic authorization failed."

P = w.ProduceRequest
D = w.DescribeProducersRequest
M = w.WriteTxnMarkersRequest


def _ask(*topics):
    """topics: (name, [partition indexes])."""
    return D(topics=[D.TopicRequest(name=n, partition_indexes=ix) for n, ix in topics])


def _batch(values, *, pid, epoch=0, seq=0, transactional=False, ts=1_700_000_000_000) -> bytes:
    b = RecordBatchBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=transactional)
    for i, v in enumerate(values):
        b.append(b"k", v, timestamp=ts + i)
    return b.build()


def _produce(topic: str, index: int, records: bytes, tid: str | None = None):
    return P(transactional_id=tid, acks=-1, timeout_ms=5000, topic_data=[P.TopicProduceData(
        name=topic, partition_data=[P.PartitionProduceData(index=index, records=records)])])


def _table(resp) -> dict:
    """(topic, partition) -> (error, message, [(pid, epoch, last seq, last ts, coordinator epoch, txn start)])."""
    return {(t.name, p.partition_index): (p.error_code, p.error_message,
                                          [(s.producer_id, s.producer_epoch, s.last_sequence, s.last_timestamp,
                                            s.coordinator_epoch, s.current_txn_start_offset)
                                           for s in p.active_producers])
            for t in resp.topics for p in t.partitions}


def test_describe_producers_answers_and_errors(tmp_path):
    c = Combined(tmp_path, extra="transaction.partition.verification.enable=false\n")

    async def scenario(node, conn):
        assert (await conn.request(_create("t", partitions=2), 7)).topics[0].error_code == ec.NONE
        for _ in range(250):
            if node.replicas.get("t", 0) is not None and node.replicas.get("t", 0).state.role == "leader":
                break
            await asyncio.sleep(0.02)
        idem, txn = await _pids(conn, 2)
        for records, tid in ((_batch([b"a", b"b"], pid=idem), None),
                             (_batch([b"c"], pid=idem, seq=2, ts=1_700_000_000_100), None),
                             (_batch([b"x", b"y", b"z"], pid=txn, transactional=True, ts=1_700_000_000_500),
                              "app")):
            r = await conn.request(_produce("t", 0, records, tid), 9)
            assert r.responses[0].partition_responses[0].error_code == ec.NONE
        resp = await conn.request(_ask(("t", [0, 1, 7]), ("nope", [0]), ("bad/name", [0, 1]), ("..", [0]),
                                       ("__cluster_metadata", [0])), 0)
        got = _table(resp)
        assert got[("t", 0)] == (ec.NONE, None, [
            (idem, 0, 2, 1_700_000_000_100, -1, -1),
            (txn, 0, 2, 1_700_000_000_502, -1, 3)])
        assert got[("t", 1)] == (ec.NONE, None, [])
        assert got[("t", 7)] == (ec.UNKNOWN_TOPIC_OR_PARTITION, None, [])
        # an unknown topic carries Kafka's default message, an unknown partition none (the conformance run, #36)
        assert got[("nope", 0)] == (ec.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.",
                                    [])
        reason = ("Topic name is invalid: 'bad/name' contains one or more characters other than ASCII "
                  "alphanumerics, '.', '_' and '-'")
        assert got[("bad/name", 0)] == got[("bad/name", 1)] == (ec.INVALID_TOPIC_EXCEPTION, reason, [])
        assert got[("..", 0)] == (ec.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: '..' is not allowed", [])
        assert got[("__cluster_metadata", 0)][0] == ec.UNKNOWN_TOPIC_OR_PARTITION
        assert [t.name for t in resp.topics] == ["t", "nope", "bad/name", "..", "__cluster_metadata"]

        # an ABORT marker from coordinator epoch 4 closes the transaction and is the producer's latest
        r = await conn.request(M(markers=[M.WritableTxnMarker(
            producer_id=txn, producer_epoch=0, transaction_result=False, coordinator_epoch=4,
            topics=[M.WritableTxnMarkerTopic(name="t", partition_indexes=[0])])]), 1)
        assert _marker_errors(r) == [[(0, ec.NONE)]]
        after = _table(await conn.request(_ask(("t", [0])), 0))[("t", 0)]
        [(pid, epoch, seq, ts, coordinator, start)] = [s for s in after[2] if s[0] == txn]
        assert (pid, epoch, seq, coordinator, start) == (txn, 0, 2, 4, -1)
        assert ts > 1_700_000_000_502  # the marker's own timestamp (the broker's clock)

    c.run(scenario)


def test_describe_producers_needs_read_on_the_topic(tmp_path):
    node, port = _sasl_node(tmp_path)

    async def main():
        await node.start()
        try:
            admin = await _login(port, "admin")
            for _ in range(200):
                r = await admin.request(_create_one("t"), 5)
                if r.topics[0].error_code in (0, ec.TOPIC_ALREADY_EXISTS):
                    break
                await asyncio.sleep(0.05)
            r = await admin.request(w.CreateAclsRequest(creations=[
                _acl(ResourceType.TOPIC, "t", "User:alice", Op.READ),
                _acl(ResourceType.TOPIC, "t", "User:bob", Op.WRITE)]), 3)
            assert [x.error_code for x in r.results] == [0, 0]
            alice, bob = await _login(port, "alice"), await _login(port, "bob")
            got = None
            for _ in range(200):  # the ACLs reach the image, the partition is hosted
                got = _table(await alice.request(_ask(("t", [0])), 0))[("t", 0)]
                if got[0] == ec.NONE:
                    break
                await asyncio.sleep(0.05)
            assert got == (ec.NONE, None, [])
            # WRITE (which implies DESCRIBE) is not READ; an unknown topic is refused the same way, before existence
            denied = _table(await bob.request(_ask(("t", [0, 1]), ("nope", [0])), 0))
            assert denied == {("t", 0): (ec.TOPIC_AUTHORIZATION_FAILED, DENIED, []),
                              ("t", 1): (ec.TOPIC_AUTHORIZATION_FAILED, DENIED, []),
                              ("nope", 0): (ec.TOPIC_AUTHORIZATION_FAILED, DENIED, [])}
            assert _table(await admin.request(_ask(("nope", [0])), 0))[("nope", 0)][0] == ec.UNKNOWN_TOPIC_OR_PARTITION
            # kafka-transactions.sh abort as alice: WriteTxnMarkers needs ALTER or CLUSTER_ACTION on the cluster
            props = tmp_path / "alice.properties"
            props.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache."
                             "kafka.common.security.plain.PlainLoginModule required username=\"alice\" "
                             "password=\"alice-secret\";\n")
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "kraftwire", "transactions", "--bootstrap-server", f"127.0.0.1:{port}",
                "--command-config", str(props), "abort", "--topic", "t", "--partition", "0", "--producer-id", "5",
                "--producer-epoch", "0", "--coordinator-epoch", "3", stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=processes.kraftwire_env())
            out, err = await asyncio.wait_for(proc.communicate(), 60)
            spec = "AbortTransactionSpec(topicPartition=t-0, producerId=5, producerEpoch=0, coordinatorEpoch=3)"
            assert (proc.returncode, out) == (1, b"")
            assert err.decode().strip() == (f"Failed to abort transaction {spec}: WriteTxnMarkers request with {spec} "
                                            "failed due to cluster authorization error. Enable debug logging for "
                                            "additional detail.")
            for c in (admin, alice, bob):
                await c.close()
        finally:
            await node.shutdown()

    asyncio.run(main())
