"""A KRaft node (what ``server-start`` runs) in-process on real sockets and files: its log holds Kafka's metadata
records only; the active controller bootstraps the log, registers and unfences its broker, creates topics (directly
or auto-created by a Metadata request) and answers after commit; clients get Kafka's codes for the internal
metadata topic; a restart rebuilds the same image from the log. Its partitions: ``test_partitions.py``."""

from __future__ import annotations

import asyncio
import socket

from kraftwire import error_codes as ec
from kraftwire.config import parse_properties
from kraftwire.log.meta_properties import MetaProperties, write_meta_properties
from kraftwire.metadata import records as serde
from kraftwire.metadata.bootstrap import BOOTSTRAP_FILE, bootstrap_records, encode_bootstrap_file
from kraftwire.metadata.version import BY_NAME
from kraftwire.protocol import messages as w
from kraftwire.records import read_batches
from kraftwire.server.node.app import Node
from kraftwire.server.edge.client import KafkaConnection
from kraftwire.server.node.settings import NodeSettings

CLUSTER = "Uc70e1ZARn6UM4iJHeByUw"
CT = w.CreateTopicsRequest


def _sock():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    return s


class Combined:
    """One ``broker,controller`` node with a CONTROLLER and a PLAINTEXT listener; restartable on the same ports."""

    def __init__(self, tmp_path, extra: str = "") -> None:
        self.logs = tmp_path / "logs"
        self.logs.mkdir(parents=True)
        write_meta_properties(str(self.logs), MetaProperties(cluster_id=CLUSTER, node_id=1))
        # 3.8-IV0 with group.version 1 (the KIP-848 consumer protocol; Kafka 4.4 takes it at any level)
        (self.logs / BOOTSTRAP_FILE).write_bytes(
            encode_bootstrap_file(bootstrap_records(BY_NAME["3.8-IV0"], {"group.version": 1}), timestamp=0))
        self.csock, self.bsock = _sock(), _sock()
        self.cport, self.bport = self.csock.getsockname()[1], self.bsock.getsockname()[1]
        self.extra = extra

    def node(self) -> Node:
        settings = NodeSettings.from_properties(parse_properties(
            f"process.roles=broker,controller\nnode.id=1\n"
            f"listeners=CONTROLLER://127.0.0.1:{self.cport},PLAINTEXT://127.0.0.1:{self.bport}\n"
            f"controller.listener.names=CONTROLLER\ncontroller.quorum.voters=1@127.0.0.1:{self.cport}\n"
            f"log.dirs={self.logs}\ncontroller.quorum.election.timeout.ms=100\nbroker.heartbeat.interval.ms=100\n"
            + self.extra))
        return Node(settings, listen_sockets={"CONTROLLER": self.csock.dup(), "PLAINTEXT": self.bsock.dup()})

    def batches(self):
        data = b"".join(p.read_bytes() for p in sorted((self.logs / "__cluster_metadata-0").glob("*.log")))
        return list(read_batches(data))

    def run(self, scenario, *, online: bool = True) -> None:
        """``await scenario(node, conn)`` against this node, started (and registered and unfenced, with
        ``online``), over one client connection to its PLAINTEXT listener; the connection is closed and the node
        shut down however the scenario ends."""

        async def main():
            node = self.node()
            await node.start()
            try:
                if online:
                    await _online(node)
                conn = await KafkaConnection.open("127.0.0.1", self.bport)
                try:
                    await scenario(node, conn)
                finally:
                    await conn.close()
            finally:
                await node.shutdown()

        asyncio.run(main())


async def _online(node: Node, timeout_s: float = 10.0) -> None:
    for _ in range(int(timeout_s / 0.02)):
        b = node.metadata.image.brokers.get(1)
        if b is not None and not b.fenced:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"broker 1 not unfenced: {node.metadata.image.brokers}")


def _create(name: str, partitions: int = 3, rf: int = 1, validate_only: bool = False):
    return CT(topics=[CT.CreatableTopic(name=name, num_partitions=partitions, replication_factor=rf, assignments=[],
                                        configs=[])], timeout_ms=5000, validate_only=validate_only)


def test_controller_writes_kafka_metadata_and_clients_see_it(tmp_path):
    c = Combined(tmp_path)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            assert node.metadata.active
            assert node.metadata.image.metadata_version.name == "3.8-IV0"  # from bootstrap.checkpoint
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                created = await conn.request(_create("quickstart-events"), 7)
                [t] = created.topics
                assert (t.error_code, t.num_partitions, t.replication_factor) == (ec.NONE, 3, 1)
                assert t.topic_id == node.metadata.image.topic_ids["quickstart-events"]  # committed before answering
                again = await conn.request(_create("quickstart-events"), 7)
                assert again.topics[0].error_code == ec.TOPIC_ALREADY_EXISTS
                md = await conn.request(w.MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)
                assert [(b.node_id, b.port) for b in md.brokers] == [(1, c.bport)] and md.controller_id == 1
                [topic] = md.topics
                assert topic.name == "quickstart-events" and topic.topic_id == t.topic_id
                assert [(p.partition_index, p.leader_id, p.replica_nodes, p.isr_nodes) for p in topic.partitions] \
                    == [(i, 1, [1], [1]) for i in range(3)]
                # auto-creation: the first answer says unknown, the controller creates it with num.partitions
                M = w.MetadataRequest
                want = M(topics=[M.MetadataRequestTopic(name="auto-made")], allow_auto_topic_creation=True)
                first = await conn.request(want, 12)
                assert first.topics[0].error_code == ec.UNKNOWN_TOPIC_OR_PARTITION
                for _ in range(100):
                    later = await conn.request(want, 12)
                    if later.topics[0].error_code == ec.NONE:
                        break
                    await asyncio.sleep(0.02)
                assert later.topics[0].error_code == ec.NONE and len(later.topics[0].partitions) == 1
                # the metadata log is internal; a hosted partition refuses a request without records
                P = w.ProduceRequest
                produce = await conn.request(P(acks=-1, timeout_ms=1000, topic_data=[
                    P.TopicProduceData(name=n, partition_data=[P.PartitionProduceData(index=0, records=None)])
                    for n in ("__cluster_metadata", "quickstart-events", "nope")]), 9)
                # Kafka answers the partitions it tried to append to first, then those its metadata lacks
                assert [(r.name, r.partition_responses[0].error_code) for r in produce.responses] == [
                    ("quickstart-events", ec.CORRUPT_MESSAGE), ("__cluster_metadata", ec.UNKNOWN_TOPIC_OR_PARTITION),
                    ("nope", ec.UNKNOWN_TOPIC_OR_PARTITION)]
                F = w.FindCoordinatorRequest
                found = await conn.request(F(key_type=0, coordinator_keys=["g"]), 4)
                assert found.coordinators[0].error_code == ec.COORDINATOR_NOT_AVAILABLE
                DC = w.DescribeConfigsRequest
                configs = await conn.request(DC(resources=[DC.DescribeConfigsResource(
                    resource_type=2, resource_name="quickstart-events", configuration_keys=["cleanup.policy"])]), 4)
                assert [(c.name, c.value) for c in configs.results[0].configs] == [("cleanup.policy", "delete")]
                versions = await conn.request(w.ApiVersionsRequest(client_software_name="t",
                                                                   client_software_version="1"), 4)
                # kraft.version as Kafka's KRaft nodes advertise it (from ApiVersions v4, KAFKA-17492) (a leader adding a voter reads the range);
                # finalized only in a KIP-853 quorum (this one is static: kraft.version 0)
                # in Kafka's order (a HashMap of the names)
                assert [(f.name, f.min_version, f.max_version) for f in versions.supported_features] == [
                    ("group.version", 0, 1), ("kraft.version", 0, 1), ("metadata.version", 7, 33),
                    ("share.version", 0, 2), ("streams.version", 0, 0), ("transaction.version", 0, 2),
                    ("eligible.leader.replicas.version", 0, 1)]
                assert sorted((f.name, f.max_version_level) for f in versions.finalized_features) == [
                    ("group.version", 1), ("metadata.version", BY_NAME["3.8-IV0"].level)]
                assert versions.finalized_features_epoch >= 0
                cluster = await conn.request(w.DescribeClusterRequest(), 1)
                assert [(b.broker_id, b.port) for b in cluster.brokers] == [(1, c.bport)]
                deleted = await conn.request(w.DeleteTopicsRequest(topic_names=["auto-made"], timeout_ms=5000), 5)
                assert deleted.responses[0].error_code == ec.NONE and "auto-made" not in node.metadata.image.topic_ids
            finally:
                await conn.close()
            return node.metadata.image
        finally:
            await node.shutdown()

    image = asyncio.run(main())
    # only Kafka's metadata records in the log (Raft's own control records aside), every one readable by the serde
    batches = c.batches()
    kinds = {type(serde.decode(r.value).message).__name__ for b in batches if not b.is_control for r in b}
    assert {"FeatureLevelRecord", "RegisterBrokerRecord", "TopicRecord", "PartitionRecord", "RemoveTopicRecord",
            "BrokerRegistrationChangeRecord"} <= kinds
    assert all(int.from_bytes(bytes(r.key[2:4]), "big") < 0x7000 for b in batches if b.is_control for r in b)

    async def restart():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            again = node.metadata.image
            assert again.topic_ids == image.topic_ids
            assert {n: len(again.topic(n).partitions) for n in again.topic_ids} == {"quickstart-events": 3}
        finally:
            await node.shutdown()

    asyncio.run(restart())


def test_snapshots_hold_the_image_and_a_restart_loads_one(tmp_path):
    """Snapshots are the image as metadata records; once the log start has moved past the first segments, a
    restart loads the snapshot and then the log after it, to the same image."""
    c = Combined(tmp_path, "metadata.log.segment.min.bytes=2048\nmetadata.log.segment.bytes=2048\n"
                           "metadata.log.max.snapshot.interval.ms=100\nmetadata.max.retention.bytes=0\n")

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                for i in range(30):
                    created = await conn.request(_create(f"t{i:02d}", partitions=2), 7)
                    assert created.topics[0].error_code == ec.NONE
            finally:
                await conn.close()
            for _ in range(200):
                if node.log.start_offset() > 0:
                    break
                await asyncio.sleep(0.02)
            assert node.log.start_offset() > 0, "no snapshot moved the log start"
            return node.metadata.image
        finally:
            await node.shutdown()

    image = asyncio.run(main())
    snapshots = sorted((c.logs / "__cluster_metadata-0").glob("*.checkpoint"))
    assert snapshots

    async def restart():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            assert node.metadata.loaded_snapshot is not None and node.metadata.loaded_snapshot.end_offset > 0
            return node.metadata.image
        finally:
            await node.shutdown()

    again = asyncio.run(restart())
    assert again.topic_ids == image.topic_ids and len(again.topic_ids) == 30

    def replicas(img):
        return {t.name: {i: p.replicas for i, p in t.partitions.items()} for t in img.topics.values()}

    assert replicas(again) == replicas(image)


def test_controller_requests_on_a_node_that_is_not_the_controller_are_refused(tmp_path, monkeypatch):
    """A broker-only node with no reachable quorum answers a forwarded request REQUEST_TIMED_OUT once its forwarding
    deadline passes (Kafka's ``ForwardingManager`` on a timeout; the deadline is shortened here), never hangs:
    Metadata, held for the broker's registration, is answered from its (empty) image once the hold ends (twice the
    session timeout: 0.5 s here)."""
    from kraftwire.server.apis import kraft_apis

    monkeypatch.setattr(kraft_apis, "FORWARD_DEADLINE_MIN_S", 0.5)
    logs = tmp_path / "logs"
    logs.mkdir()
    write_meta_properties(str(logs), MetaProperties(cluster_id=CLUSTER, node_id=4))
    bsock, dead = _sock(), _sock()
    port, dead_port = bsock.getsockname()[1], dead.getsockname()[1]
    dead.close()
    settings = NodeSettings.from_properties(parse_properties(
        f"process.roles=broker\nnode.id=4\nlisteners=PLAINTEXT://127.0.0.1:{port}\n"
        "controller.listener.names=CONTROLLER\nlistener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
        f"controller.quorum.voters=1@127.0.0.1:{dead_port}\nlog.dirs={logs}\n"
        "broker.heartbeat.interval.ms=100\nbroker.session.timeout.ms=250\ncontroller.quorum.request.timeout.ms=500\n"))

    async def main():
        node = Node(settings, listen_sockets={"PLAINTEXT": bsock})
        await node.start()
        try:
            conn = await KafkaConnection.open("127.0.0.1", port)
            try:
                created = await conn.request(_create("t"), 5)
                assert created.topics[0].error_code == ec.REQUEST_TIMED_OUT
                md = await conn.request(w.MetadataRequest(topics=None, allow_auto_topic_creation=False), 9)
                assert md.brokers == [] and md.topics == []
            finally:
                await conn.close()
        finally:
            await node.shutdown()

    asyncio.run(main())


def test_a_log_written_by_an_earlier_kraftwire_is_refused_at_start(tmp_path):
    """Client data, or kraftwire's own control records, in __cluster_metadata: the KRaft node refuses to start and
    says why and what to do; nothing in the directory changes."""
    import pytest

    from kraftwire.log.segmented import SegmentedLog
    from kraftwire.records import RecordBatchBuilder
    from kraftwire.records.control import KRAFTWIRE_BROKER_STATE, control_record_key, encode_control_value
    from kraftwire.server.node.app import StartupError

    def written(builder):
        c = Combined(tmp_path / f"case{len(list(tmp_path.iterdir()))}")
        node = c.node()
        lg = SegmentedLog.from_config(node.settings.config)
        lg.append_as_leader(builder.build(), 1)
        lg.flush()
        lg.close()
        return c, node

    data = RecordBatchBuilder()
    data.append(None, b"hello from a producer")
    state = RecordBatchBuilder(is_control=True)
    state.append(control_record_key(KRAFTWIRE_BROKER_STATE), encode_control_value(
        KRAFTWIRE_BROKER_STATE, w.KraftwireBrokerStateRecord(broker_id=4, broker_epoch=3, state=2)))
    for builder, why in ((data, "not a Kafka metadata record"), (state, "a kraftwire control record (type 0x7003)")):
        c, node = written(builder)
        before = sorted((p.name, p.stat().st_size) for p in (c.logs / "__cluster_metadata-0").iterdir())
        with pytest.raises(StartupError) as refused:
            asyncio.run(node.start())
        text = str(refused.value)
        assert "is not a KRaft metadata log" in text and why in text and "offset 0" in text
        assert "kraftwire storage format" in text and "test-server" in text
        assert sorted((p.name, p.stat().st_size) for p in (c.logs / "__cluster_metadata-0").iterdir()) == before
