"""Kafka Connect against kraftwire: a standalone worker (``ConnectStandalone``) runs the file source connector (lines
of a file into topic ``lines``) and the file sink connector (topic ``lines`` into another file) on one combined
kraftwire node. The sink's file ends up equal to the source's, and the topic holds each line once, in order.

The worker is then stopped (SIGTERM) and started again while more lines are appended: the source resumes from the
position it saved in its offsets file, the sink from the offsets its consumer group committed to kraftwire, so the
sink's file again equals the source's — nothing lost, nothing written twice.
"""

from __future__ import annotations

import os
import time

from harness import roles
from harness.kafka import connect_libs, start_java, stop_java

PROPS = "offsets.topic.replication.factor=1\noffsets.topic.num.partitions=2\ngroup.initial.rebalance.delay.ms=0\n"
#: slf4j-simple: timestamps, and less of Connect's chatter
LOG_FLAGS = ("-Dorg.slf4j.simpleLogger.showDateTime=true", "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
             "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.common.config.AbstractConfig=warn")
#: ASCII only: the file source saves its position in characters but skips that many bytes when it resumes
FIRST = [f"line {i:04d}: {'x' * (i % 17)}" for i in range(400)]
MORE = [f"later {i:03d}" for i in range(150)]


def _read(path: str) -> list[str]:
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def _topic_values(bootstrap: str, topic: str, want: int) -> list[str]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "connect-test-reader", "enable.auto.commit": False})
    got: list[str] = []
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        roles.wait_until(lambda: got.extend(m.value().decode() for m in c.consume(500, 0.5) if m.error() is None)
                         or len(got) >= want, f"{want} records in {topic}")
    finally:
        c.close()
    return got


def test_file_source_to_topic_to_file_sink_across_a_worker_restart(tmp_path):
    from confluent_kafka.admin import AdminClient, NewTopic

    (tmp_path / "cluster").mkdir()
    cluster = roles.RolesCluster(str(tmp_path / "cluster"), controllers=1, brokers=0, combined=True, kraft=True,
                                 extra_props=PROPS)
    source, sink = str(tmp_path / "source.txt"), str(tmp_path / "sink.txt")
    worker = None
    try:
        cluster.start_all()
        port = cluster.nodes[1].port_of("BROKER")
        bootstrap = f"127.0.0.1:{port}"
        roles.wait_until(lambda: roles.broker_ids(port) == [1], "broker 1 registered", cluster)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic("lines", 1, 1)])["lines"].result(30)

        config = tmp_path / "worker.properties"
        config.write_text(
            f"bootstrap.servers={bootstrap}\nlisteners=http://127.0.0.1:0\n"
            "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
            "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
            f"offset.storage.file.filename={tmp_path / 'connect.offsets'}\noffset.flush.interval.ms=500\n"
            "consumer.metadata.max.age.ms=2000\nplugin.discovery=service_load\n")
        (tmp_path / "source.properties").write_text(
            "name=file-source\nconnector.class=org.apache.kafka.connect.file.FileStreamSourceConnector\n"
            f"tasks.max=1\nfile={source}\ntopic=lines\n")
        (tmp_path / "sink.properties").write_text(
            "name=file-sink\nconnector.class=org.apache.kafka.connect.file.FileStreamSinkConnector\n"
            f"tasks.max=1\nfile={sink}\ntopics=lines\nconsumer.override.auto.offset.reset=earliest\n")
        with open(source, "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in FIRST))

        logs = []

        def start() -> None:
            nonlocal worker
            logs.append(str(tmp_path / f"connect.{len(logs) + 1}.log"))
            worker = start_java("org.apache.kafka.connect.cli.ConnectStandalone", str(config),
                                str(tmp_path / "source.properties"), str(tmp_path / "sink.properties"), log=logs[-1], libs=connect_libs(),
                                jvm_args=LOG_FLAGS)

        def sink_has(n: int) -> bool:
            assert worker.poll() is None, f"the Connect worker exited {worker.returncode}:\n{_tail(logs[-1])}"
            return len(_read(sink)) >= n

        start()
        roles.wait_until(lambda: sink_has(len(FIRST)), "the sink file written", cluster, timeout=120)
        assert _read(sink) == FIRST
        assert _topic_values(bootstrap, "lines", len(FIRST)) == FIRST

        assert stop_java(worker) in (0, 143), _tail(logs[-1])  # 143: the JVM's exit on SIGTERM, hooks run
        with open(source, "a", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in MORE))
        start()
        roles.wait_until(lambda: sink_has(len(FIRST) + len(MORE)), "the appended lines in the sink file", cluster,
                         timeout=120)
        # whatever arrives late (a line read twice, a record consumed twice) shows up within a few flushes
        roles.wait_until(lambda: os.path.getmtime(sink) < time.time() - 2, "the sink file settled", timeout=30)
        assert _read(sink) == FIRST + MORE
        assert _topic_values(bootstrap, "lines", len(FIRST) + len(MORE)) == FIRST + MORE
    finally:
        if worker is not None:
            stop_java(worker)
        cluster.close()


def _tail(path: str, n: int = 6000) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()[-n:]
