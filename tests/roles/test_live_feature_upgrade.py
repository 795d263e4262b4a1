"""A cluster formatted at ``3.9-IV0`` upgrades live to kraftwire's newest levels while clients keep working (issue
#40), with real processes: one controller and three brokers (2, 3, 4).

Throughout: an idempotent acks=all producer (confluent-kafka), a consumer group reading what it writes, and a classic
transactional producer (librdkafka: EndTxn v4) started before the upgrade, committing small transactions. Meanwhile,
``kraftwire features upgrade``, one step at a time in the order Kafka's dependency rules allow (each printing what
Kafka's ``kafka-features.sh`` prints, ``<feature> was upgraded to <level>.``):

0. ``eligible.leader.replicas.version=1`` first is refused whole with Kafka 4.4's words: it depends on
   metadata.version 4.0-IV1 (transaction.version and group.version depend on nothing, in Kafka as here);
1. ``--metadata`` to ``version.MAXIMUM`` (by name: whatever kraftwire's newest level is);
2. ``transaction.version=2``: a transaction started afterwards on the wire is a KIP-890 part 2
   one — Produce v12 adds the partition on the leader, EndTxn v5 answers the bumped epoch;
3. ``group.version=1``: a KIP-848 consumer (``group.protocol=consumer``) joins and reads;
4. ``eligible.leader.replicas.version=1``: a broker restarted cleanly afterwards joins the ELR of
   a partition whose ISR it leaves below min.insync.replicas (DescribeTopicPartitions shows it), and leaves it again
   when it is back in sync.

Finally every acknowledged record is in the log exactly once, the group saw every one, the classic transactions are
read committed exactly once, and ``features describe`` shows the finalized levels.

Mirrors Kafka's ``FeatureCommandTest`` (``testUpgradeMetadataVersionWithKraft``, ``testHandleUpgrade``: the upgrade
and its output), ``QuorumControllerTest.testUpgradeFromPreProductionVersion`` and ``FeatureControlManagerTest``
(``testCanUpgradeToHigherVersion``: a live metadata.version upgrade, dependencies checked per step), ``ElrTest``-style
ELR membership after a clean shutdown, and the system tests ``kraft_upgrade_test.py`` (``TestKRaftUpgrade``: the
metadata.version upgraded under a produce-consume-validate workload, nothing lost) and
``transactions_upgrade_test.py`` (transactions copied exactly once across the upgrade). One shared cluster, bounded
loops.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import io
import threading
import time

from harness import roles
from kraftwire import cli, error_codes as ec
from kraftwire.metadata import version as mv
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.server.edge.client import KafkaConnection, request_once

LIVE, TXN, PROBE = "live", "txns", "probe"
PARTITIONS = 3
#: the coordinators' topics at 3 partitions, not 50: the cluster is ready sooner
SMALL_INTERNAL_TOPICS = "offsets.topic.num.partitions=3\ntransaction.state.log.num.partitions=3\n"
MAX_RECORDS = 20_000  # the producer's bound: it stops at the end of the scenario long before this


class Workload:
    """The clients that run through the whole upgrade, each on its own thread until ``stop``."""

    def __init__(self, bootstrap: str) -> None:
        from confluent_kafka import Consumer, Producer

        self.stopping = threading.Event()
        self.acked: list[bytes] = []
        self.failed: list = []
        self.consumed: list[bytes] = []
        self.committed_txns: list[list[bytes]] = []
        self.txn_errors: list = []
        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                                  "linger.ms": 5, "message.timeout.ms": 60000})
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "live-readers",
                                  "auto.offset.reset": "earliest", "session.timeout.ms": 10000})
        self.consumer.subscribe([LIVE])
        self.txn = Producer({"bootstrap.servers": bootstrap, "transactional.id": "classic-before", "linger.ms": 5,
                             "transaction.timeout.ms": 60000})
        self.txn.init_transactions(30)
        self.threads = [threading.Thread(target=f, daemon=True) for f in (self._produce, self._consume, self._txns)]
        for t in self.threads:
            t.start()

    def _delivered(self, err, msg) -> None:
        if err is not None:
            self.failed.append(err)
        else:
            self.acked.append(msg.value())

    def _produce(self) -> None:
        for i in range(MAX_RECORDS):
            if self.stopping.is_set():
                break
            self.producer.produce(LIVE, key=b"k%d" % (i % 31), value=b"v%06d" % i, on_delivery=self._delivered)
            self.producer.poll(0.005)
        self.producer.flush(60)

    def _consume(self) -> None:
        while not self.stopping.is_set():
            msg = self.consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                self.consumed.append(msg.value())

    def _txns(self) -> None:
        for n in range(MAX_RECORDS):
            if self.stopping.is_set():
                break
            values = [b"t%04d-%d" % (n, i) for i in range(4)]
            try:
                self.txn.begin_transaction()
                for i, v in enumerate(values):
                    self.txn.produce(TXN, value=v, partition=i % PARTITIONS)
                self.txn.commit_transaction(30)
            except Exception as exc:  # noqa: BLE001 - asserted empty at the end, with the error
                self.txn_errors.append(exc)
                return
            self.committed_txns.append(values)
            time.sleep(0.1)

    def stop(self) -> None:
        """Stop producing and committing; then let the group read up to everything acknowledged (bounded)."""
        self.stopping.set()
        for t in (self.threads[0], self.threads[2]):
            t.join(90)
        wanted = set(self.acked)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not wanted <= set(self.consumed):
            msg = self.consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                self.consumed.append(msg.value())
        self.threads[1].join(10)
        self.consumer.close()


def features(port: int, *args: str) -> tuple[int, str, str]:
    """``kraftwire features --bootstrap-server ... ARGS``: its exit code, standard output and standard error (the
    command's own entry point, run in this process: a new interpreter per step would cost seconds each)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["features", "--bootstrap-server", f"127.0.0.1:{port}", *args])
    return code, out.getvalue(), err.getvalue()


def upgraded(port: int, *args: str) -> str:
    """A ``features upgrade ARGS`` that must succeed: what it printed."""
    code, out, err = features(port, "upgrade", *args)
    assert (code, err) == (0, ""), (code, out, err)
    return out


def finalized(port: int) -> dict[str, int]:
    versions = asyncio.run(request_once("127.0.0.1", port, w.ApiVersionsRequest(
        client_software_name="t", client_software_version="1"), 3, timeout=5.0))
    return {f.name: f.max_version_level for f in versions.finalized_features or ()}


def read_all(bootstrap: str, topic: str, *, committed: bool = False) -> list[bytes]:
    """Every record of ``topic`` from the start up to each partition's end (read_committed: the last stable offset)."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False,
                  "isolation.level": "read_committed" if committed else "read_uncommitted"})
    try:
        ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(PARTITIONS)}
        c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        got, position = [], dict.fromkeys(ends, 0)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(position[p] < ends[p] for p in ends):
            msg = c.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
                position[msg.partition()] = msg.offset() + 1
            elif msg is None and committed:  # the markers after the last records are never delivered
                position = {p: max(position[p], c.position([TopicPartition(topic, p)])[0].offset) for p in ends}
        return got
    finally:
        c.close()


def partition(port: int, topic: str, index: int = 0):
    DTP = w.DescribeTopicPartitionsRequest
    try:
        answer = asyncio.run(request_once("127.0.0.1", port, DTP(topics=[DTP.TopicRequest(name=topic)],
                                                                  response_partition_limit=50, cursor=None), 0,
                                          timeout=3.0))
    except Exception:  # noqa: BLE001 - the broker may be restarting
        return None
    (t,) = answer.topics
    return None if t.error_code != ec.NONE or len(t.partitions) <= index else t.partitions[index]


async def tv2_transaction(ports: dict[int, int], leader: int) -> tuple:
    """A KIP-890 part 2 transaction on the wire: InitProducerId, a transactional Produce v12 to ``TXN``'s partition 0
    on its leader (no AddPartitionsToTxn: the leader adds it), EndTxn v5 (commit). (EndTxn's error, its producer id
    and epoch, the InitProducerId's producer id and epoch)."""
    F, I, P, E = (w.FindCoordinatorRequest, w.InitProducerIdRequest, w.ProduceRequest, w.EndTxnRequest)
    any_port = next(iter(ports.values()))
    for _ in range(100):
        found = (await request_once("127.0.0.1", any_port, F(key_type=1, coordinator_keys=["tv2-after"]), 4,
                                    timeout=5.0)).coordinators[0]
        if found.error_code == ec.NONE:
            break
        await asyncio.sleep(0.1)
    coordinator = await KafkaConnection.open("127.0.0.1", found.port)
    to_leader = await KafkaConnection.open("127.0.0.1", ports[leader])
    try:
        for _ in range(100):
            init = await coordinator.request(I(transactional_id="tv2-after", transaction_timeout_ms=30000,
                                               producer_id=-1, producer_epoch=-1), 5)
            if init.error_code != ec.COORDINATOR_LOAD_IN_PROGRESS:
                break
            await asyncio.sleep(0.1)
        assert init.error_code == ec.NONE, ec.name_of(init.error_code)
        batch = RecordBatchBuilder(is_transactional=True, producer_id=init.producer_id,
                                   producer_epoch=init.producer_epoch, base_sequence=0)
        batch.append(None, b"tv2-record", timestamp=int(time.time() * 1000))
        produced = await to_leader.request(P(transactional_id="tv2-after", acks=-1, timeout_ms=10000, topic_data=[
            P.TopicProduceData(name=TXN, partition_data=[P.PartitionProduceData(index=0, records=batch.build())])]),
            12)
        code = produced.responses[0].partition_responses[0].error_code
        assert code == ec.NONE, ec.name_of(code)
        end = await coordinator.request(E(transactional_id="tv2-after", producer_id=init.producer_id,
                                          producer_epoch=init.producer_epoch, committed=True), 5)
        return end.error_code, end.producer_id, end.producer_epoch, init.producer_id, init.producer_epoch
    finally:
        await coordinator.close()
        await to_leader.close()


def consumer_protocol_reads(bootstrap: str, count: int) -> int:
    """A KIP-848 consumer (ConsumerGroupHeartbeat) of ``LIVE``: how many records it read, up to ``count``."""
    from confluent_kafka import Consumer

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "kip848-readers", "group.protocol": "consumer",
                  "auto.offset.reset": "earliest"})
    seen = 0
    try:
        c.subscribe([LIVE])
        for _ in range(150):
            if seen >= count:
                break
            msg = c.poll(0.1)
            if msg is not None and msg.error() is None:
                seen += 1
    finally:
        c.close()
    return seen


def test_a_3_9_cluster_upgrades_live_to_the_newest_levels_with_nothing_lost(make_roles_cluster):
    from confluent_kafka.admin import AdminClient, NewTopic

    cluster = make_roles_cluster(controllers=1, brokers=3, kraft=True,
                                 format_args=("--release-version", "3.9-IV0"), extra_props=SMALL_INTERNAL_TOPICS)
    for node in cluster.nodes.values():
        node.start()
    cluster.wait_for_leader()
    ports = {n.node_id: n.port_of("BROKER") for n in cluster.brokers}
    bootstrap = ",".join(f"127.0.0.1:{p}" for p in ports.values())
    port = ports[2]
    roles.wait_until(lambda: all(roles.broker_ids(p) == [2, 3, 4] for p in ports.values()),
                     "three brokers in every broker's image", cluster)
    assert finalized(port)[mv.FEATURE_NAME] == mv.BY_NAME["3.9-IV0"].level
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(LIVE, PARTITIONS, 3), NewTopic(TXN, PARTITIONS, 3),
                                  NewTopic(PROBE, 1, 3, config={"min.insync.replicas": "3"})]).values():
        f.result(30)
    roles.wait_until(lambda: all((p := partition(port, t, i)) is not None and len(p.isr_nodes) == 3
                                 for t in (LIVE, TXN, PROBE) for i in range(PARTITIONS if t != PROBE else 1)),
                     "every replica in sync", cluster)

    load = Workload(bootstrap)
    try:
        roles.wait_until(lambda: len(load.acked) > 100 and load.committed_txns, "the workload running", cluster)

        # 0. ELR depends on metadata.version 4.0-IV1: refused at 3.9-IV0, nothing changed
        assert features(port, "upgrade", "--feature", "eligible.leader.replicas.version=1") == (
            1, "Could not upgrade eligible.leader.replicas.version to 1. The update failed for all features since the "
               "following feature had an error: Invalid update version 1 for feature "
               "eligible.leader.replicas.version. eligible.leader.replicas.version could not be set to 1 because it "
               f"depends on metadata.version level {mv.BY_NAME['4.0-IV1'].level}\n",
            "1 out of 1 operation(s) failed.\n")
        assert finalized(port).get("eligible.leader.replicas.version", 0) == 0

        # 1. metadata.version, by the name of kraftwire's newest level
        assert upgraded(port, "--metadata", mv.MAXIMUM.name) == (
            " `metadata` flag is deprecated and may be removed in a future release.\n"
            f"{mv.FEATURE_NAME} was upgraded to {mv.MAXIMUM.level}.\n")
        roles.wait_until(lambda: all(finalized(p).get(mv.FEATURE_NAME) == mv.MAXIMUM.level for p in ports.values()),
                         "every broker at the new metadata.version", cluster)

        # 2. transaction.version 2: a transaction begun now is a KIP-890 part 2 one
        assert upgraded(port, "--feature", "transaction.version=2") == \
            "transaction.version was upgraded to 2.\n"
        roles.wait_until(lambda: all(finalized(p).get("transaction.version") == 2 for p in ports.values()),
                         "every broker at transaction.version 2", cluster)
        leader = partition(port, TXN).leader_id
        code, pid, epoch, init_pid, init_epoch = asyncio.run(tv2_transaction(ports, leader))
        assert (code, pid, epoch) == (ec.NONE, init_pid, init_epoch + 1)  # EndTxn v5: the epoch bumped at the end

        # 3. group.version 1: the consumer group protocol of KIP-848
        assert upgraded(port, "--feature", "group.version=1") == "group.version was upgraded to 1.\n"
        roles.wait_until(lambda: all(finalized(p).get("group.version") == 1 for p in ports.values()),
                         "every broker at group.version 1", cluster)
        assert consumer_protocol_reads(bootstrap, 50) == 50

        # 4. eligible leader replicas, then a clean broker restart: it joins the ELR of the partition it leaves
        assert upgraded(port, "--feature", "eligible.leader.replicas.version=1") == \
            "eligible.leader.replicas.version was upgraded to 1.\n"
        probe = partition(port, PROBE)
        restarted = next(b for b in (4, 3, 2) if b != probe.leader_id)
        asking = ports[next(b for b in ports if b != restarted)]
        assert cluster.nodes[restarted].terminate() == 0
        down = roles.wait_until(lambda: (p := partition(asking, PROBE)) is not None and restarted not in p.isr_nodes
                                and p, "the stopped broker out of the ISR", cluster)
        assert list(down.eligible_leader_replicas) == [restarted]
        cluster.nodes[restarted].start()
        back = roles.wait_until(lambda: (p := partition(asking, PROBE)) is not None and len(p.isr_nodes) == 3 and p,
                                "the restarted broker back in the ISR", cluster)
        assert list(back.eligible_leader_replicas) == []
        roles.wait_until(lambda: all((p := partition(asking, LIVE, i)) is not None and len(p.isr_nodes) == 3
                                     for i in range(PARTITIONS)), "the workload's partitions in sync", cluster)
        so_far = len(load.committed_txns)
        roles.wait_until(lambda: len(load.committed_txns) >= so_far + 2 or load.txn_errors,
                         "the classic transactions going on after the restart", cluster)
    finally:
        load.stop()

    assert not load.failed and not load.txn_errors, (load.failed[:3], load.txn_errors)
    acked = collections.Counter(load.acked)
    assert max(acked.values()) == 1 and len(acked) > 100
    in_log = collections.Counter(read_all(bootstrap, LIVE))
    assert in_log == acked  # every acknowledged record exactly once, and nothing else
    assert set(acked) <= set(load.consumed)  # the group read them all (at least once: a rebalance may repeat)
    committed = read_all(bootstrap, TXN, committed=True)
    expected = [v for values in load.committed_txns for v in values] + [b"tv2-record"]
    assert collections.Counter(committed) == collections.Counter(expected)

    code, described, _ = features(port, "describe")
    assert code == 0
    levels = {line.split()[1]: line.split("FinalizedVersionLevel:")[1].split()[0] for line in described.splitlines()}
    assert levels[mv.FEATURE_NAME] == mv.MAXIMUM.name
    assert (levels["transaction.version"], levels["group.version"], levels["eligible.leader.replicas.version"]) == \
        ("2", "1", "1")
