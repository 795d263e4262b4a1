"""MirrorMaker 2 against kraftwire: ``org.apache.kafka.connect.mirror.MirrorMaker`` (dedicated mode) replicates
cluster A into cluster B, two one-node kraftwire clusters, with short intervals:

* topic ``orders`` (2 partitions, records with keys, headers and timestamps) becomes ``A.orders`` on B with the same
  records in the same partitions and order;
* the committed offsets of consumer group ``billing`` on A are translated through MirrorMaker's offset syncs and
  checkpoints and written to the same group on B (``sync.group.offsets.enabled``), so a consumer moving from A to B
  goes on where it stopped;
* a topic config set on A — at creation and while MirrorMaker runs — shows on ``A.orders`` on B.
"""

from __future__ import annotations

import os

from harness import roles
from harness.kafka import connect_libs, start_java, stop_java

PROPS = "offsets.topic.replication.factor=1\noffsets.topic.num.partitions=2\ngroup.initial.rebalance.delay.ms=0\n"
#: slf4j-simple: timestamps, and less of Connect's chatter
LOG_FLAGS = ("-Dorg.slf4j.simpleLogger.showDateTime=true", "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
             "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.common.config.AbstractConfig=warn")
N = 200
TS0 = 1_700_000_000_000
#: the offsets group billing commits on A: the ends of the partitions, where MirrorMaker's last offset syncs are, so
#: the translation is exact (elsewhere it goes back to the offset sync before the group's offset, by design)
COMMITTED = {0: N // 2, 1: N // 2}


def _cluster(base) -> roles.RolesCluster:
    os.makedirs(base)
    cluster = roles.RolesCluster(str(base), controllers=1, brokers=0, combined=True, kraft=True, extra_props=PROPS)
    cluster.start_all()
    port = cluster.nodes[1].port_of("BROKER")
    roles.wait_until(lambda: roles.broker_ids(port) == [1], "broker 1 registered", cluster)
    cluster.bootstrap = f"127.0.0.1:{port}"
    return cluster


def _records(bootstrap: str, topic: str, want: int) -> list[tuple]:
    """(partition, offset, key, value, headers, timestamp) of every record of ``topic``'s two partitions."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "mm2-test-reader", "enable.auto.commit": False})
    got: list[tuple] = []
    try:
        c.assign([TopicPartition(topic, p, 0) for p in (0, 1)])
        roles.wait_until(lambda: got.extend((m.partition(), m.offset(), m.key(), m.value(), m.headers(),
                                             m.timestamp()[1]) for m in c.consume(500, 0.5) if m.error() is None)
                         or len(got) >= want, f"{want} records of {topic}")
    finally:
        c.close()
    return sorted(got)


def _topic_config(admin, topic: str, name: str) -> str | None:
    from confluent_kafka.admin import ConfigResource

    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    try:
        entry = admin.describe_configs([res])[res].result(10).get(name)
    except Exception:  # noqa: BLE001 - the topic may not be there yet
        return None
    return None if entry is None else entry.value


def _group_offsets(admin, group: str, topic: str) -> dict[int, int]:
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    request = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in (0, 1)])
    try:
        answer = admin.list_consumer_group_offsets([request])[group].result(10)
    except Exception:  # noqa: BLE001 - the group may not exist on the target yet
        return {}
    return {tp.partition: tp.offset for tp in answer.topic_partitions if tp.offset >= 0}


def test_mirror_maker_replicates_records_group_offsets_and_topic_configs(tmp_path):
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

    a = b = mm2 = None
    log = str(tmp_path / "mm2.log")
    try:
        a, b = _cluster(tmp_path / "a"), _cluster(tmp_path / "b")
        admin_a = AdminClient({"bootstrap.servers": a.bootstrap})
        admin_b = AdminClient({"bootstrap.servers": b.bootstrap})
        admin_a.create_topics([NewTopic("orders", 2, 1, config={"retention.ms": "86400000"})])["orders"].result(30)
        p = Producer({"bootstrap.servers": a.bootstrap, "linger.ms": 5, "acks": "all"})
        for i in range(N):
            p.produce("orders", key=f"k{i}".encode(), value=f"order-{i:04d}".encode(), partition=i % 2,
                      headers=[("n", str(i).encode())], timestamp=TS0 + i)
        assert p.flush(30) == 0
        source = _records(a.bootstrap, "orders", N)
        consumer = Consumer({"bootstrap.servers": a.bootstrap, "group.id": "billing", "enable.auto.commit": False})
        consumer.commit(offsets=[TopicPartition("orders", p, o) for p, o in COMMITTED.items()], asynchronous=False)
        consumer.close()

        config = tmp_path / "mm2.properties"
        config.write_text(
            f"clusters=A,B\nA.bootstrap.servers={a.bootstrap}\nB.bootstrap.servers={b.bootstrap}\n"
            "A->B.enabled=true\nA->B.topics=orders\nA->B.groups=billing\nB->A.enabled=false\n"
            "replication.factor=1\ncheckpoints.topic.replication.factor=1\nheartbeats.topic.replication.factor=1\n"
            "offset-syncs.topic.replication.factor=1\noffset.storage.replication.factor=1\n"
            "status.storage.replication.factor=1\nconfig.storage.replication.factor=1\n"
            "sync.group.offsets.enabled=true\nsync.group.offsets.interval.seconds=1\n"
            "emit.checkpoints.interval.seconds=1\nemit.heartbeats.interval.seconds=1\n"
            "refresh.topics.interval.seconds=1\nrefresh.groups.interval.seconds=1\n"
            "sync.topic.configs.enabled=true\nsync.topic.configs.interval.seconds=1\n"
            "offset.lag.max=0\noffset.flush.interval.ms=500\nplugin.discovery=service_load\n")
        mm2 = start_java("org.apache.kafka.connect.mirror.MirrorMaker", str(config), log=log, libs=connect_libs(),
                         jvm_args=LOG_FLAGS)

        def alive() -> None:
            assert mm2.poll() is None, f"MirrorMaker exited {mm2.returncode}:\n{_tail(log)}"

        # the records: same partitions, offsets, keys, values, headers and timestamps
        roles.wait_until(lambda: alive() or "A.orders" in admin_b.list_topics(timeout=5).topics, "A.orders on B",
                         timeout=120)
        assert _records(b.bootstrap, "A.orders", N) == source

        # the group's offsets, translated
        roles.wait_until(lambda: alive() or _group_offsets(admin_b, "billing", "A.orders") == COMMITTED,
                         "billing's offsets translated on B", timeout=90)

        # topic configs: the one set at creation, then one changed while MirrorMaker runs
        roles.wait_until(lambda: alive() or _topic_config(admin_b, "A.orders", "retention.ms") == "86400000",
                         "A.orders created with orders' retention.ms", timeout=30)
        res = ConfigResource(ConfigResource.Type.TOPIC, "orders", incremental_configs=[
            ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)])
        admin_a.incremental_alter_configs([res])[res].result(10)
        roles.wait_until(lambda: alive() or _topic_config(admin_b, "A.orders", "retention.ms") == "3600000",
                         "retention.ms synced to A.orders", timeout=60)
    finally:
        if mm2 is not None:
            stop_java(mm2)
        for cluster in (a, b):
            if cluster is not None:
                cluster.close()


def _tail(path: str, n: int = 6000) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()[-n:]
