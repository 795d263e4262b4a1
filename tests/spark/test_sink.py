"""``df.write.format("kraftwire")`` into topics of a real kraftwire KRaft node (one ``server-start`` process,
broker+controller, so replication factor 1), read back with confluent-kafka (read_committed): the connector's sink
schema (key/value/topic/partition/headers/timestamp, topic column or option), its schema and option refusals, and a
task that cannot deliver failing the job in bounded time (:mod:`kraftwire.spark.sink`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness import processes

#: the transaction and offsets topics need one replica here (one broker)
NODE_PROPS = ("transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n"
              "transaction.state.log.num.partitions=3\noffsets.topic.replication.factor=1\n"
              "offsets.topic.num.partitions=3\ngroup.initial.rebalance.delay.ms=0\n")


class Node:
    """One broker+controller ``server-start`` process on pre-bound listeners (output in ``base/node.out``)."""

    def __init__(self, base: str) -> None:
        self.spec = processes.CombinedNode(base, NODE_PROPS)
        self.base = str(base)
        self.bootstrap = f"127.0.0.1:{self.spec.port}"
        self.out = os.path.join(self.base, "node.out")
        self.proc = None

    def start(self) -> None:
        s = self.spec
        with open(self.out, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "kraftwire", "server-start", "--config", s.config,
                 "--listener-fd", f"PLAINTEXT={s.broker.fileno()}",
                 "--listener-fd", f"CONTROLLER={s.controller.fileno()}"],
                stdout=out, stderr=subprocess.STDOUT, pass_fds=(s.broker.fileno(), s.controller.fileno()),
                env=processes.kraftwire_env())

    def create_topics(self, topics: dict[str, int], timeout: float = 60.0) -> None:
        """Create ``{name: partitions}`` (retried while the node comes up; bounded)."""
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        deadline = time.monotonic() + timeout
        todo = dict(topics)
        while todo:
            futures = admin.create_topics([NewTopic(t, n, 1) for t, n in todo.items()], request_timeout=5)
            for name, fut in futures.items():
                try:
                    fut.result()
                    todo.pop(name)
                except Exception as e:  # noqa: BLE001 - not up yet, or already there
                    if e.args and isinstance(e.args[0], KafkaError) and \
                            e.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS:
                        todo.pop(name)
            if todo and time.monotonic() > deadline:
                raise AssertionError(f"topics {sorted(todo)} not created in {timeout} s\n{self.log()}")
            if todo:
                assert self.proc.poll() is None, f"the node exited\n{self.log()}"
                time.sleep(0.3)

    def log(self) -> str:
        with open(self.out, "rb") as f:
            return f.read()[-4000:].decode(errors="replace")

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        self.spec.broker.close()
        self.spec.controller.close()


def read_topic(bootstrap: str, topic: str, partitions: int, timeout: float = 30.0) -> list:
    """Every committed record of ``topic``, read to the end of each partition (read_committed):
    (partition, key, value, headers, timestamp)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}-{time.monotonic_ns()}",
                  "isolation.level": "read_committed", "enable.auto.commit": False,
                  "enable.partition.eof": True, "auto.offset.reset": "earliest"})
    got, at_end = [], set()
    try:
        c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        deadline = time.monotonic() + timeout
        while len(at_end) < partitions:
            assert time.monotonic() < deadline, f"{topic}: only partitions {sorted(at_end)} read to the end"
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    at_end.add(m.partition())
                    continue
                raise AssertionError(f"{topic}: {m.error()}")
            at_end.discard(m.partition())
            got.append((m.partition(), m.key(), m.value(), m.headers(), m.timestamp()[1]))
        return got
    finally:
        c.close()


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    n = Node(str(tmp_path_factory.mktemp("sink-node")))
    n.start()
    try:
        n.create_topics({"s1": 3, "s2": 2, "s3": 2, "s4": 2, "s5": 3})
        yield n
    finally:
        n.close()


HEADERS = "array<struct<key:string,value:binary>>"


def test_batch_write_with_every_column_reads_back_exactly(spark, node):
    rows = [(f"k{i}", f"v{i}".encode(), "s1" if i % 3 else "s2", i % 2,
             [("h", f"x{i}".encode()), ("n", None)] if i % 4 else None, 1_700_000_000_000 + i)
            for i in range(60)]
    df = spark.createDataFrame(rows, f"key string, value binary, topic string, partition int, headers {HEADERS}, "
                                     "ms long").selectExpr("key", "value", "topic", "partition", "headers",
                                                           "timestamp_millis(ms) as timestamp")
    df.write.format("kraftwire").mode("append").option("kafka.bootstrap.servers", node.bootstrap).save()

    for topic, parts in (("s1", 3), ("s2", 2)):
        want = sorted((p, k.encode(), v, None if h is None else [(hk, hv) for hk, hv in h], ms)
                      for k, v, t, p, h, ms in rows if t == topic)
        got = sorted(read_topic(node.bootstrap, topic, parts), key=lambda r: (r[0], r[1]))
        assert got == sorted(want, key=lambda r: (r[0], r[1]))


def test_topic_option_overrides_the_column_and_keys_place_like_kafka(spark, node):
    """The ``topic`` option wins over a ``topic`` column; string values; no partition column: a keyed record goes
    where murmur2 puts it (Kafka's Java producer: the same key always in the same partition)."""
    df = spark.createDataFrame([(f"key-{i % 5}", f"val-{i}", "not-a-topic") for i in range(40)],
                               "key string, value string, topic string").repartition(2)
    (df.write.format("kraftwire").mode("append").option("kafka.bootstrap.servers", node.bootstrap)
     .option("topic", "s3").option("kafka.linger.ms", "1").save())
    got = read_topic(node.bootstrap, "s3", 2)
    assert sorted(v for _, _, v, _, _ in got) == sorted(f"val-{i}".encode() for i in range(40))
    where = {}
    for p, k, v, _, _ in got:
        where.setdefault(k, set()).add(p)
        assert int(v.split(b"-")[1]) % 5 == int(k.split(b"-")[1])
    assert len(where) == 5 and all(len(ps) == 1 for ps in where.values())


def _refused(spark, df, options: dict, mode: str = "append") -> str:
    w = df.write.format("kraftwire").mode(mode)
    for k, v in options.items():
        w = w.option(k, v)
    with pytest.raises(Exception) as info:
        w.save()
    return str(info.value)


def test_schema_and_option_errors_use_the_connectors_words(spark, node):
    bs = {"kafka.bootstrap.servers": node.bootstrap}
    only_key = spark.createDataFrame([("k",)], "key string")
    assert "Required attribute 'value' not found" in _refused(spark, only_key, {**bs, "topic": "s3"})
    int_value = spark.createDataFrame([(1,)], "value int")
    assert "value attribute unsupported type int. value must be a(n) string or binary" in \
        _refused(spark, int_value, {**bs, "topic": "s3"})
    no_topic = spark.createDataFrame([("v",)], "value string")
    assert "topic option required when no 'topic' attribute is present" in _refused(spark, no_topic, bs)
    bad_part = spark.createDataFrame([("v", 1)], "value string, partition long")
    assert "partition attribute unsupported type bigint. partition must be a(n) int" in \
        _refused(spark, bad_part, {**bs, "topic": "s3"})
    bad_headers = spark.createDataFrame([("v", ["a"])], "value string, headers array<string>")
    assert f"headers attribute unsupported type array<string>. headers must be a(n) {HEADERS}" in \
        _refused(spark, bad_headers, {**bs, "topic": "s3"})
    assert "Kafka option 'key.serializer' is not supported as keys are serialized with ByteArraySerializer." in \
        _refused(spark, no_topic, {**bs, "topic": "s3", "kafka.key.serializer": "x"})
    assert "Kafka option 'value.serializer' is not supported" in \
        _refused(spark, no_topic, {**bs, "topic": "s3", "kafka.value.serializer": "x"})
    assert "Option 'kafka.bootstrap.servers' must be specified" in _refused(spark, no_topic, {"topic": "s3"})
    assert "exactlyOnce applies to writeStream" in \
        _refused(spark, no_topic, {**bs, "topic": "s3", "exactlyOnce": "true"})
    assert "Save mode Overwrite not allowed for Kafka" in _refused(spark, no_topic, {**bs, "topic": "s3"},
                                                                    mode="overwrite")
    assert "No such configuration property" in \
        _refused(spark, no_topic, {**bs, "topic": "s3", "kafka.no.such.setting": "1"})
    # a null topic in the data fails the task with the connector's message
    null_topic = spark.createDataFrame([("v", None)], "value string, topic string")
    assert "null topic present in the data. Use the topic option for setting a default topic." in \
        _refused(spark, null_topic, bs)


def test_undeliverable_records_fail_the_job(spark):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    df = spark.createDataFrame([(f"v{i}",) for i in range(10)], "value string")
    msg = _refused(spark, df, {"kafka.bootstrap.servers": f"127.0.0.1:{port}", "topic": "s3",
                               "kafka.message.timeout.ms": "1500"})
    assert "records were not delivered" in msg and "Message timed out" in msg, msg


def test_stream_write_at_least_once_copies_a_topic(spark, node, tmp_path):
    """``writeStream`` without exactlyOnce (the connector's at-least-once sink): topic s5, read over the wire, copied
    into s4 with Trigger.AvailableNow."""
    p = Producer({"bootstrap.servers": node.bootstrap})
    for i in range(30):
        p.produce("s5", key=f"k{i}".encode(), value=f"v{i}".encode(), partition=i % 3,
                  headers=[("i", str(i).encode())])
    assert p.flush(30) == 0
    q = (spark.readStream.format("kraftwire").option("kafka.bootstrap.servers", node.bootstrap)
         .option("subscribe", "s5").option("startingOffsets", "earliest").option("includeHeaders", "true").load()
         .selectExpr("key", "value", "headers", "partition % 2 as partition")
         .writeStream.format("kraftwire").option("kafka.bootstrap.servers", node.bootstrap).option("topic", "s4")
         .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())
    q.awaitTermination(120)
    assert not q.isActive and q.exception() is None
    got = sorted((p, k, v, h) for p, k, v, h, _ in read_topic(node.bootstrap, "s4", 2))
    assert got == sorted((i % 3 % 2, f"k{i}".encode(), f"v{i}".encode(), [("i", str(i).encode())])
                         for i in range(30))
