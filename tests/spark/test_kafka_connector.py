"""Spark's own Kafka connector (``spark-sql-kafka-0-10``, ``format("kafka")``; its jars are on the shared session's
``spark.jars``, see ``conftest.py``) against a kraftwire node, side by side with ``kraftwire.spark``
(``format("kraftwire")``, which takes the connector's options and gives its rows):

* batch reads give the same rows from both sources: every column (headers too, null for a record without any),
  subscribePattern, assign with offsets by JSON, and read_committed over a topic with an aborted transaction;
* a batch write through the connector (key, value, partition, headers) reads back as written, from both sources;
* a streaming query (connector source, a transformation, connector sink; trigger availableNow) run twice on one
  checkpoint writes each input record once, and the connector's and kraftwire's streaming sources give the same
  rows.
"""

from __future__ import annotations

import pytest

from harness import roles

PROPS = ("transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n"
         "transaction.state.log.num.partitions=2\noffsets.topic.replication.factor=1\n"
         "offsets.topic.num.partitions=2\ngroup.initial.rebalance.delay.ms=0\n")
TS0 = 1_700_000_000_000
COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers")


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    base = tmp_path_factory.mktemp("kafka-connector")
    cluster = roles.RolesCluster(str(base), controllers=1, brokers=0, combined=True, kraft=True, extra_props=PROPS)
    try:
        cluster.start_all()
        port = cluster.nodes[1].port_of("BROKER")
        roles.wait_until(lambda: roles.broker_ids(port) == [1], "broker 1 registered", cluster)
        cluster.bootstrap = f"127.0.0.1:{port}"
        _create(cluster.bootstrap, {"orders": 3, "payments": 2, "written": 3, "events": 2, "events-out": 2})
        yield cluster
    finally:
        cluster.close()


def _create(bootstrap: str, topics: dict[str, int]) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(t, n, 1) for t, n in topics.items()]).values():
        f.result(30)


def _produce(bootstrap: str, topic: str, records) -> None:
    """records: (partition, key, value, headers, timestamp or None)."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
    for part, key, value, headers, ts in records:
        p.produce(topic, key=key, value=value, partition=part, headers=headers, **({} if ts is None else
                                                                                  {"timestamp": ts}))
    assert p.flush(30) == 0


def _read(spark, fmt: str, node, **options):
    reader = spark.read.format(fmt).option("kafka.bootstrap.servers", node.bootstrap)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def _rows(df) -> list:
    """Every row as a tuple of plain values (bytes, headers as (key, bytes) pairs), sorted."""
    def plain(v):
        if isinstance(v, (bytes, bytearray)):
            return bytes(v)
        if isinstance(v, list):
            return tuple((h["key"], None if h["value"] is None else bytes(h["value"])) for h in v)
        return v

    rows = [tuple(plain(r[c]) for c in df.columns) for r in df.collect()]
    return sorted(rows, key=lambda row: tuple((v is not None, v) for v in row))  # a null key sorts first


def _same(spark, node, **options) -> list:
    """The rows of a batch read through the connector, checked equal (schema and rows) to kraftwire's."""
    kafka, kraftwire = _read(spark, "kafka", node, **options), _read(spark, "kraftwire", node, **options)
    assert kafka.schema == kraftwire.schema, (kafka.schema.simpleString(), kraftwire.schema.simpleString())
    rows = _rows(kafka)
    assert rows == _rows(kraftwire), options
    return rows


def test_batch_reads_give_the_same_rows(spark, node):
    from confluent_kafka import Producer

    _produce(node.bootstrap, "orders", [
        (i % 3, None if i == 7 else f"k{i}".encode(), f"v{i:04d}".encode(),
         [] if i % 5 == 0 else [("n", str(i).encode()), ("z", None if i % 2 else b"")], TS0 + i) for i in range(300)])
    rows = _same(spark, node, subscribePattern="ord.*", includeHeaders="true")
    assert len(rows) == 300 and sum(r[7] is None for r in rows) == 60  # no headers: null in both
    some = _same(spark, node, assign='{"orders":[0,2]}', startingOffsets='{"orders":{"0":10,"2":-2}}',
                 endingOffsets='{"orders":{"0":20,"2":5}}')
    assert sorted((r[3], r[4]) for r in some) == [(0, o) for o in range(10, 20)] + [(2, o) for o in range(5)]

    # read_committed: an aborted transaction between committed ones, markers in the log
    p = Producer({"bootstrap.servers": node.bootstrap, "transactional.id": "connector-read", "linger.ms": 5})
    p.init_transactions(30)
    for values, commit in (([b"ok-1", b"ok-2"], True), ([b"no-1", b"no-2", b"no-3"], False), ([b"ok-3"], True)):
        p.begin_transaction()
        for i, v in enumerate(values):
            p.produce("payments", value=v, partition=i % 2)
        p.flush(30)
        (p.commit_transaction if commit else p.abort_transaction)(30)
    _produce(node.bootstrap, "payments", [(1, None, b"plain", [], None)])
    committed = _same(spark, node, subscribe="payments", **{"kafka.isolation.level": "read_committed"})
    assert sorted(r[1] for r in committed) == [b"ok-1", b"ok-2", b"ok-3", b"plain"]


def test_batch_write_through_the_connector_reads_back(spark, node):
    rows = [(f"k{i}".encode(), f"w{i:03d}".encode(), i % 3, [("i", str(i).encode())]) for i in range(90)]
    df = spark.createDataFrame(rows, "key binary, value binary, partition int, headers array<struct<key:string,"
                                     "value:binary>>")
    (df.write.format("kafka").option("kafka.bootstrap.servers", node.bootstrap).option("topic", "written")
     .option("includeHeaders", "true").save())
    got = _same(spark, node, subscribe="written", includeHeaders="true")
    assert sorted((r[0], r[1], r[3], r[7]) for r in got) == sorted(
        (k, v, p, tuple(h)) for k, v, p, h in rows)
    assert sorted(r[4] for r in got if r[3] == 0) == list(range(30))  # each record once, offsets from 0


def test_streaming_read_and_write_through_the_connector(spark, node, tmp_path):
    def produce(start: int, n: int) -> None:
        _produce(node.bootstrap, "events", [(i % 2, None, f"e{i:03d}".encode(), [], None)
                                            for i in range(start, start + n)])

    def run() -> int:
        q = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", node.bootstrap)
             .option("subscribe", "events").option("startingOffsets", "earliest").load()
             .selectExpr("CAST(partition AS STRING) AS key", "upper(CAST(value AS STRING)) AS value")
             .writeStream.format("kafka").option("kafka.bootstrap.servers", node.bootstrap)
             .option("topic", "events-out").option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(availableNow=True).start())
        assert q.awaitTermination(120), "the streaming query did not finish"
        assert q.exception() is None, q.exception()
        return sum(p["numInputRows"] for p in q.recentProgress)

    produce(0, 100)
    assert run() == 100
    produce(100, 50)
    assert run() == 50  # the checkpoint's offsets: only what is new
    out = _rows(_read(spark, "kraftwire", node, subscribe="events-out"))
    assert sorted(r[1] for r in out) == [f"E{i:03d}".encode() for i in range(150)]

    # the two streaming sources, into memory tables
    def stream(fmt: str) -> list:
        name = f"events_{fmt}"
        q = (spark.readStream.format(fmt).option("kafka.bootstrap.servers", node.bootstrap)
             .option("subscribe", "events").option("startingOffsets", "earliest").load()
             .writeStream.format("memory").queryName(name).trigger(availableNow=True).start())
        assert q.awaitTermination(120) and q.exception() is None, q.exception()
        return _rows(spark.table(name))

    kafka = stream("kafka")
    assert len(kafka) == 150 and kafka == stream("kraftwire")
