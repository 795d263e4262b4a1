"""Share groups end to end on real nodes (KIP-932): kraftwire brokers formatted at the defaults (share.version 2,
as Kafka 4.4's) and Kafka 4.4's Java ``KafkaShareConsumer`` — two share consumers of one group read one topic through ShareFetch
and acknowledge every record explicitly (``tests/kafka/ShareConsumers.java``): some REJECT, some RELEASE on their
first delivery, some RENEW their lock (KIP-1222) before they ACCEPT. Every record ends accepted or rejected, none is held by two consumers at once, and the delivery
counts are Kafka's: 1 for a record accepted or rejected at once, 2 for a released one when it comes back, the same
after a renewal. Then ``share.isolation.level`` (``tests/kafka/ShareTxn.java``): a transactional producer aborts one
transaction and commits another, and a read_committed share group sees the committed records alone, a
read_uncommitted one both. Then the dead-letter queue (KIP-1191): a group naming a DLQ topic that does not exist yet
has its rejected records written to it, the topic created on the way."""

from __future__ import annotations

import asyncio
from collections import defaultdict

from harness import roles
from harness.kafka import run_java

from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once
from server.test_kraft_node import _create

RECORDS = 30
PROPS = ("offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\n"
         "share.coordinator.state.topic.replication.factor=1\nshare.coordinator.state.topic.min.isr=1\n"
         "share.coordinator.state.topic.num.partitions=1\n"
         "transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n"
         "transaction.state.log.num.partitions=1\n"
         "errors.deadletterqueue.auto.create.topics.enable=true\n")
TXN_RECORDS = 6


def expected(v: int) -> list[tuple[int, str]]:
    """The deliveries of value ``v``: (delivery count, acknowledgement), in order."""
    if v % 7 == 3:
        return [(1, "REJECT")]
    out = [(1, "RELEASE")] if v % 5 == 1 else []
    count = len(out) + 1
    if v % 11 == 4:  # renewed, handed back by the client with the same delivery count, then accepted
        out.append((count, "RENEW"))
    return out + [(count, "ACCEPT")]


def test_share_partitions_on_two_brokers_with_one_share_coordinator(tmp_path):
    """Two brokers: the topic's two partitions are led one on each, ``__share_group_state`` (one partition) on one
    of them — so one share-partition leader reads and writes its state through the other broker's share
    coordinator, and the group coordinator may initialize through a remote one too. Two Java share consumers of one
    group read the topic (one run serves both cases: a single node would show nothing more); every record ends as
    ``expected`` says, delivered to one of the two, and the group is described."""
    cluster = roles.RolesCluster(str(tmp_path), controllers=1, brokers=2, kraft=True, extra_props=PROPS)
    try:
        for node in cluster.nodes.values():
            node.start()
        cluster.wait_for_leader()
        ports = [n.port_of("BROKER") for n in cluster.brokers]
        roles.wait_until(lambda: all(roles.broker_ids(p) == [2, 3] for p in ports), "two brokers", cluster)
        created = asyncio.run(request_once("127.0.0.1", ports[0], _create("q", partitions=2),
                                           7, timeout=15.0))
        assert created.topics[0].error_code == 0
        leaders = roles.wait_until(lambda: _leaders(ports[0], "q"), "both partitions of q led", cluster)
        assert sorted(leaders) == [2, 3], leaders
        out = run_java("ShareConsumers.java", ",".join(f"localhost:{p}" for p in ports), "q", "sg",
                       str(RECORDS), "25000", timeout=90)
        deliveries = defaultdict(list)
        for line in out.splitlines():
            if line.startswith("DELIVERY "):
                _tag, consumer, value, count, ack = line.split()
                deliveries[int(value)].append((int(count), ack.upper(), int(consumer)))
        assert out.splitlines()[-1] == f"DONE {RECORDS}", out + cluster.diagnostics()
        for v in range(RECORDS):
            assert [(c, a) for c, a, _who in deliveries[v]] == expected(v), (v, deliveries[v])
        assert {who for ds in deliveries.values() for _c, _a, who in ds} <= {0, 1}
        for ds in deliveries.values():  # a renewed record stays with the consumer that renewed it
            assert all(ds[i + 1][2] == who for i, (_c, ack, who) in enumerate(ds) if ack == "RENEW"), ds
        for node in cluster.nodes.values():
            assert "Traceback" not in node.stderr(), node.stderr()[-3000:]
        described = [asyncio.run(request_once("127.0.0.1", port, w.ShareGroupDescribeRequest(
            group_ids=["sg"], include_authorized_operations=False), 1, timeout=15.0)).groups[0] for port in ports]
        assert sorted(g.error_code for g in described) == [0, 16]  # NOT_COORDINATOR on the broker not hosting it
        _isolation_levels(cluster, ports)
        _dead_letters(cluster, ports)
    finally:
        cluster.close()


def _isolation_levels(cluster, ports) -> None:
    """librdkafka's 0177 case on the same cluster: records of an aborted transaction never reach a read_committed
    share group (they are archived on the share-partition, and the group goes on to the committed ones, each
    delivered once), while a read_uncommitted group gets them too. The partition is led by either broker, so its
    share-partitions write their state through either share coordinator as above."""
    created = asyncio.run(request_once("127.0.0.1", ports[0], _create("tx", partitions=1), 7, timeout=15.0))
    assert created.topics[0].error_code == 0
    roles.wait_until(lambda: _leaders(ports[0], "tx"), "tx led", cluster)
    out = run_java("ShareTxn.java", ",".join(f"localhost:{p}" for p in ports), "tx", "rc", "ru",
                   str(TXN_RECORDS), "40000", timeout=120)
    assert out.splitlines()[-1] == "DONE", out + cluster.diagnostics()
    seen = defaultdict(list)
    for line in out.splitlines():
        if line.startswith("VALUE "):
            _tag, group, value, count = line.split()
            seen[group].append((value, int(count)))
    committed = [(f"committed-{i}", 1) for i in range(TXN_RECORDS)]
    assert sorted(seen["rc"]) == committed, out
    assert sorted(seen["ru"]) == sorted([(f"aborted-{i}", 1) for i in range(TXN_RECORDS)] + committed), out
    for node in cluster.nodes.values():
        assert "Traceback" not in node.stderr(), node.stderr()[-3000:]


DLQ_RECORDS = 14


def _dead_letters(cluster, ports) -> None:
    """Group ``dg`` names ``dlq.dg`` as its DLQ topic and copies records there
    (``errors.deadletterqueue.copy.record.enable``); the brokers may create DLQ topics. The two Java share consumers
    reject values 3 and 10 (``expected``): each is written to ``dlq.dg`` — created by the share-partition leader with
    ``errors.deadletterqueue.group.enable=true`` and the default one partition — with its key and value and Kafka's
    ``__dlq.errors.*`` headers, and the group reads on to the end (the rejected records archived)."""
    created = asyncio.run(request_once("127.0.0.1", ports[0], _create("dq", partitions=2), 7, timeout=15.0))
    assert created.topics[0].error_code == 0
    roles.wait_until(lambda: _leaders(ports[0], "dq"), "dq led", cluster)
    IAC = w.IncrementalAlterConfigsRequest
    altered = asyncio.run(request_once("127.0.0.1", ports[0], IAC(resources=[IAC.AlterConfigsResource(
        resource_type=32, resource_name="dg", configs=[
            IAC.AlterableConfig(name="errors.deadletterqueue.topic.name", config_operation=0, value="dlq.dg"),
            IAC.AlterableConfig(name="errors.deadletterqueue.copy.record.enable", config_operation=0,
                                value="true")])], validate_only=False), 1, timeout=15.0))
    assert altered.responses[0].error_code == 0, altered
    out = run_java("ShareConsumers.java", ",".join(f"localhost:{p}" for p in ports), "dq", "dg",
                   str(DLQ_RECORDS), "25000", timeout=90)
    assert out.splitlines()[-1] == f"DONE {DLQ_RECORDS}", out + cluster.diagnostics()
    rejected = sorted(v for v in range(DLQ_RECORDS) if expected(v)[-1][1] == "REJECT")
    letters = roles.wait_until(lambda: _dlq_records(ports[0], "dlq.dg", len(rejected)), "the DLQ records",
                               cluster)
    assert sorted(int(value) for value, _headers in letters) == rejected, letters
    for value, headers in letters:
        v = int(value)
        assert headers == {
            "__dlq.errors.topic": b"dq", "__dlq.errors.partition": str(v % 2).encode(),
            "__dlq.errors.offset": str(v // 2).encode(), "__dlq.errors.group": b"dg",
            "__dlq.errors.delivery.count": b"1", "__dlq.errors.message": b"Offset rejected by client."}, letters
    DC = w.DescribeConfigsRequest  # the topic's own configs, as a Kafka 4.4 node creates its DLQ topic
    described = asyncio.run(request_once("127.0.0.1", ports[0], DC(resources=[DC.DescribeConfigsResource(
        resource_type=2, resource_name="dlq.dg", configuration_keys=None)]), 4, timeout=15.0))
    assert [(c.name, c.value) for c in described.results[0].configs if c.config_source == 1] == [
        ("errors.deadletterqueue.group.enable", "true"), ("message.timestamp.type", "CreateTime")]
    for node in cluster.nodes.values():
        assert "Traceback" not in node.stderr(), node.stderr()[-3000:]


def _dlq_records(port: int, topic: str, count: int):
    """``[(value, headers)]`` of ``topic``'s partition 0 once it holds ``count`` records, else None."""
    from kafka import KafkaConsumer, TopicPartition

    if _leaders(port, topic) is None:
        return None
    consumer = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{port}", group_id=None, auto_offset_reset="earliest",
                             consumer_timeout_ms=2000)
    try:
        consumer.assign([TopicPartition(topic, 0)])
        got = [(m.value, dict(m.headers)) for m in consumer]
    finally:
        consumer.close()
    return got if len(got) >= count else None


def _leaders(port: int, topic: str):
    """The leader of each partition of ``topic`` once every one has a leader, else None."""
    md = asyncio.run(request_once("127.0.0.1", port, w.MetadataRequest(
        topics=[w.MetadataRequest.MetadataRequestTopic(name=topic)]), 12, timeout=5.0))
    parts = md.topics[0].partitions if md.topics and md.topics[0].error_code == 0 else []
    return [p.leader_id for p in parts] if parts and all(p.leader_id >= 0 for p in parts) else None
