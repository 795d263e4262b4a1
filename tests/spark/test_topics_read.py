"""Reading topics with Spark's Kafka-connector options and schema (``kraftwire.spark.topics``), against a real KRaft
node (a ``broker,controller`` process) filled by confluent-kafka: batch reads equal what was produced, offsets by
JSON and by timestamp, assign and subscribePattern, minPartitions, a checkpointed streaming query across a restart
and a new partition, failOnDataLoss after delete-records, read_committed, and TLS and SASL/PLAIN listeners. The
option errors are checked without Spark."""

from __future__ import annotations

import glob
import json
import os

import pytest

from kraftwire.spark import topics as tp
from kraftwire.spark.topics import OffsetRange, OptionError, parse_options, rate_limit, split_ranges

JAAS_SERVER = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
               'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
JAAS_CLIENT = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" '
               'password="alice-secret";')
PROPS = ("listener.security.protocol.map=CONTROLLER:PLAINTEXT,BROKER:PLAINTEXT,SASL:SASL_PLAINTEXT,TLS:SSL\n"
         "sasl.enabled.mechanisms=PLAIN\n"
         f"listener.name.sasl.plain.sasl.jaas.config={JAAS_SERVER}\n"
         "transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n"
         "transaction.state.log.num.partitions=2\noffsets.topic.replication.factor=1\n"
         "offsets.topic.num.partitions=2\ngroup.initial.rebalance.delay.ms=0\n")
TS0 = 1_700_000_000_000
BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "t"}


# ------------------------------------------------------------------------------------------------ options (no Spark)

@pytest.mark.parametrize("options, streaming, message", [
    ({"subscribe": "t"}, False, "kafka.bootstrap.servers must be given"),
    ({"kafka.bootstrap.servers": "h:1"}, False, "one of the options assign, subscribe, subscribePattern must be given"),
    ({**BASE, "assign": '{"t":[0]}'}, False, "only one of the options .* \\(got assign, subscribe\\)"),
    ({**BASE, "subscribe": " , "}, False, "no topics to subscribe to: option subscribe"),
    ({"kafka.bootstrap.servers": "h:1", "subscribePattern": "("}, False,
     "option subscribePattern '\\(' is not a valid"),
    ({"kafka.bootstrap.servers": "h:1", "assign": "[1]"}, False, "option assign must be JSON"),
    ({"kafka.bootstrap.servers": "h:1", "assign": '{"t":["0"]}'}, False, "option assign: topic 't' needs a list"),
    ({"kafka.bootstrap.servers": "h:1", "assign": "{}"}, False, "no topic-partitions to assign"),
    ({"kafka.bootstrap.servers": "h:1", "assign": '{"t":[0]}', "startingOffsets": '{"u":{"0":1}}'}, False,
     "option startingOffsets names u-0, which option assign does not"),
    ({**BASE, "startingOffsets": "latest"}, False, "startingOffsets can't be latest for batch"),
    ({**BASE, "startingOffsets": '{"t":{"0":-1}}'}, False, "startingOffsets for t-0 can't be latest"),
    ({**BASE, "endingOffsets": "earliest"}, False, "endingOffsets can't be earliest for batch"),
    ({**BASE, "endingOffsets": '{"t":{"0":-2}}'}, False, "endingOffsets for t-0 can't be earliest"),
    ({**BASE, "endingOffsets": '{"t":{"0":-3}}'}, False, "option endingOffsets: t-0: an offset is >= 0"),
    ({**BASE, "startingOffsets": '{"t":{"0":"x"}}'}, False, "option startingOffsets: 't' partition '0': 'x'"),
    ({**BASE, "endingOffsets": "latest"}, True, "endingOffsets .* not valid in streaming"),
    ({**BASE, "startingOffsetsByTimestamp": '{"t":{"0":-5}}'}, False, "startingOffsetsByTimestamp: t-0: a timestamp"),
    ({**BASE, "startingTimestamp": "soon"}, False, "option startingTimestamp"),
    ({**BASE, "startingOffsetsByTimestampStrategy": "skip"}, False, "startingOffsetsByTimestampStrategy must be"),
    ({**BASE, "minPartitions": "0"}, False, "'0' for option minPartitions: a positive integer"),
    ({**BASE, "maxOffsetsPerTrigger": "many"}, True, "option maxOffsetsPerTrigger: a positive integer"),
    ({**BASE, "failOnDataLoss": "maybe"}, False, "option failOnDataLoss must be true or false"),
    ({**BASE, "includeHeaders": "yes"}, False, "option includeHeaders must be true or false"),
    ({**BASE, "kafka.auto.offset.reset": "earliest"}, False, "kafka.auto.offset.reset is not supported: .*startingOff"),
    ({**BASE, "kafka.enable.auto.commit": "true"}, False, "kafka.enable.auto.commit is not supported"),
    ({**BASE, "kafka.isolation.level": "serializable"}, False, "kafka.isolation.level must be read_uncommitted or"),
    ({**BASE, "kafka.fetch.max.bytes": "-1"}, False, "option kafka.fetch.max.bytes: a positive integer"),
    ({**BASE, "kafka.bootstrap.servers": "nohostport"}, False, "kafka.bootstrap.servers: 'nohostport' is not HOST"),
    ({**BASE, "kafka.security.protocol": "TLS"}, False, "option kafka.security.protocol: one of PLAINTEXT, SSL"),
    ({**BASE, "kafka.security.protocol": "SASL_PLAINTEXT"}, False, "option kafka.sasl.mechanism: kraftwire logs in with PLAIN"),
    ({**BASE, "kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.mechanism": "PLAIN"}, False,
     "option kafka.sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule required"),
    ({**BASE, "kafka.security.protocol": "SSL", "kafka.ssl.truststore.location": "/nonexistent.pem"}, False,
     "option kafka.ssl.truststore.location"),
    ({**BASE, "kafka.security.protocol": "SSL", "kafka.ssl.truststore.type": "JKS"}, False,
     "option kafka.ssl.truststore.type: kraftwire reads PEM"),
])
def test_option_errors_name_the_option(options, streaming, message):
    with pytest.raises(OptionError, match=message):
        parse_options(options, streaming=streaming)


def test_option_defaults_follow_the_connector():
    batch = parse_options({"KAFKA.BOOTSTRAP.SERVERS": "h:1", "SubscribePattern": "a.*"}, streaming=False)
    assert (batch.strategy, batch.pattern, batch.starting.kind, batch.ending.kind) == (
        "subscribepattern", "a.*", "earliest", "latest")
    assert (batch.fail_on_data_loss, batch.include_headers, batch.isolation, batch.min_partitions) == (
        True, False, 0, None)  # read_uncommitted: the consumer's default, which the connector keeps
    stream = parse_options({**BASE, "kafka.isolation.level": "read_committed", "kafka.client.id": "me",
                            "startingOffsets": '{"t":{"1":-2,"0":5}}', "maxOffsetsPerTrigger": "10"}, streaming=True)
    assert (stream.isolation, stream.client_id, stream.max_offsets_per_trigger) == (1, "me", 10)
    assert stream.starting.as_dict() == {("t", 0): 5, ("t", 1): -2}
    assert parse_options(BASE, streaming=True).starting.kind == "latest"
    assert parse_options({**BASE, "startingTimestamp": "5", "startingOffsets": "earliest"},
                         streaming=False).starting.ts == 5  # the timestamp form wins
    assert [f.name for f in tp.topic_schema_for({"includeHeaders": "true"}).fields] == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]
    assert tp.topic_schema().simpleString() == ("struct<key:binary,value:binary,topic:string,partition:int,"
                                               "offset:bigint,timestamp:timestamp,timestampType:int>")


def test_split_ranges_and_rate_limit():
    ranges = [OffsetRange("t", 0, 0, 900), OffsetRange("t", 1, 5, 105), OffsetRange("t", 2, 7, 7)]
    assert split_ranges(ranges, None) == ranges[:2]  # empty ranges are dropped
    got = split_ranges(ranges, 10)
    assert len(got) >= 10
    for p, lo, hi in ((0, 0, 900), (1, 5, 105)):
        parts = [r for r in got if r.partition == p]
        assert parts[0].start == lo and parts[-1].end == hi and all(a.end == b.start for a, b in zip(parts, parts[1:]))
    assert [r.size for r in got if r.partition == 0] == [100] * 9
    assert split_ranges([OffsetRange("t", 0, 0, 3)], 10) == [OffsetRange("t", 0, i, i + 1) for i in range(3)]
    start = {("t", 0): 0, ("t", 1): 100}
    assert rate_limit(start, {("t", 0): 300, ("t", 1): 200}, 1000) == {("t", 0): 300, ("t", 1): 200}
    assert rate_limit(start, {("t", 0): 300, ("t", 1): 200}, 40) == {("t", 0): 30, ("t", 1): 110}
    assert rate_limit(start, {("t", 0): 1000, ("t", 1): 101}, 10) == {("t", 0): 9, ("t", 1): 101}  # < 1 rounds up


# ------------------------------------------------------------------------------------------------ a real node

@pytest.fixture(scope="module")
def node(tmp_path_factory):
    from harness import roles
    from harness.certs import CA

    base = tmp_path_factory.mktemp("topics-read")
    ca = CA(str(base / "ca"))
    tls = (f"listener.name.tls.ssl.keystore.type=PEM\n"
           f"listener.name.tls.ssl.keystore.location={ca.issue('node').bundle_path}\n")
    (base / "cluster").mkdir()
    cluster = roles.RolesCluster(str(base / "cluster"), controllers=1, brokers=0, combined=True, kraft=True,
                                 extra_listeners=("SASL", "TLS"), extra_props=PROPS + tls)
    try:
        cluster.start_all()
        proc = cluster.nodes[1]
        roles.wait_until(lambda: roles.broker_ids(proc.port_of("BROKER")) == [1], "broker 1 registered", cluster)
        proc.ca_path = ca.path
        yield proc
    finally:
        cluster.close()


def _bootstrap(node) -> str:
    return f"127.0.0.1:{node.port_of('BROKER')}"


def _admin(node):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": _bootstrap(node)})


def _create(node, name: str, partitions: int) -> None:
    from confluent_kafka.admin import NewTopic

    admin = _admin(node)
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(20)
    _wait_partitions(node, name, partitions)


def _wait_partitions(node, name: str, n: int) -> None:
    from harness import roles

    admin = _admin(node)

    def ready() -> bool:
        t = admin.list_topics(name, timeout=5).topics.get(name)
        return t is not None and t.error is None and len(t.partitions) == n and all(
            p.leader == 1 for p in t.partitions.values())

    roles.wait_until(ready, f"{name} with {n} led partitions")


def _produce(node, topic: str, records, **conf) -> list:
    """records: (partition, key, value, headers, timestamp); returns (partition, offset, key, value, headers, ts)."""
    from confluent_kafka import Producer

    done, errors = [], []

    def delivered(err, msg) -> None:
        if err is not None:
            errors.append(err)
        else:
            done.append((msg.partition(), msg.offset(), msg.key(), msg.value(), sent[msg.value()],
                         msg.timestamp()[1]))

    sent = {value: headers for _, _, value, headers, _ in records}
    p = Producer({"bootstrap.servers": _bootstrap(node), "linger.ms": 5, "acks": "all", **conf})
    for part, key, value, headers, ts in records:
        extra = {} if ts is None else {"timestamp": ts}
        p.produce(topic, key=key, value=value, partition=part, headers=headers, on_delivery=delivered, **extra)
    assert p.flush(30) == 0 and not errors, errors[:3]
    return sorted(done)


def _read(spark, node, **options):
    reader = spark.read.format("kraftwire").option("kafka.bootstrap.servers", _bootstrap(node))
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def _rows(df, headers: bool = False) -> list:
    cols = ["partition", "offset", "key", "value"] + (["headers"] if headers else []) + ["unix_millis(timestamp) AS ts"]
    out = []
    for r in df.selectExpr(*cols).collect():
        h = None if not headers or r["headers"] is None else [
            (x["key"], None if x["value"] is None else bytes(x["value"])) for x in r["headers"]]
        row = (r["partition"], r["offset"], None if r["key"] is None else bytes(r["key"]), bytes(r["value"]))
        out.append(row + ((h,) if headers else ()) + (r["ts"],))
    return sorted(out)


@pytest.fixture(scope="module")
def orders(node):
    """Topic ``orders``: 3 partitions, 300 records with keys, headers (one record without any, one null key) and
    timestamps TS0 + i."""
    _create(node, "orders", 3)
    recs = [(i % 3, None if i == 7 else f"k{i}".encode(), f"v{i:04d}".encode(),
             [] if i == 5 else [("n", str(i).encode()), ("z", None if i % 2 else b"")], TS0 + i) for i in range(300)]
    return _produce(node, "orders", recs)


def test_batch_read_equals_what_was_produced(spark, node, orders):
    df = _read(spark, node, subscribe="orders", includeHeaders="true")
    assert df.schema.simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,timestamp:timestamp,"
        "timestampType:int,headers:array<struct<key:string,value:binary>>>")
    assert df.rdd.getNumPartitions() == 3  # one per topic-partition
    assert [ts for *_, ts in orders] == [TS0 + int(v[1:]) for _, _, _, v, _, _ in orders]  # CreateTime as given
    got = _rows(df, headers=True)
    assert [g[:4] + (g[5],) for g in got] == [w[:4] + (w[5],) for w in orders]
    assert [g[4] for g in got] == [w[4] or None for w in orders]  # no headers: null, as the connector has it
    assert {(r["topic"], r["timestampType"]) for r in df.select("topic", "timestampType").collect()} == {("orders", 0)}
    # without includeHeaders: the connector's seven columns
    plain = _read(spark, node, subscribe="orders")
    assert plain.columns == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    assert plain.count() == 300


def test_offsets_assign_pattern_timestamps_and_min_partitions(spark, node, orders):
    df = _read(spark, node, subscribe="orders", startingOffsets='{"orders":{"0":10,"1":-2,"2":95}}',
               endingOffsets='{"orders":{"0":20,"1":3,"2":-1}}')
    got = [(p, o) for p, o, *_ in _rows(df)]
    assert got == [(0, o) for o in range(10, 20)] + [(1, o) for o in range(3)] + [(2, o) for o in range(95, 100)]
    df = _read(spark, node, assign='{"orders":[2]}', endingOffsets='{"orders":{"2":4}}')
    assert [(p, o, v) for p, o, _, v, _ in _rows(df)] == [(2, o, f"v{3 * o + 2:04d}".encode()) for o in range(4)]
    _create(node, "orders-archive", 1)
    _produce(node, "orders-archive", [(0, None, b"old", [], TS0)])
    df = _read(spark, node, subscribePattern="orders.*")
    assert sorted(r["topic"] for r in df.select("topic").distinct().collect()) == ["orders", "orders-archive"]
    assert df.count() == 301
    assert _read(spark, node, subscribePattern="rders").count() == 0  # the whole name must match
    # by timestamp: the first offset whose timestamp is at or after the one asked for (ListOffsets)
    df = _read(spark, node, subscribe="orders", startingOffsetsByTimestamp=json.dumps(
        {"orders": {"0": TS0 + 150, "1": TS0 + 298, "2": TS0}}))
    assert df.groupBy("partition").count().orderBy("partition").collect() == [(0, 50), (1, 1), (2, 100)]
    with pytest.raises(Exception, match="startingTimestamp: no record at or after the timestamp in orders-0, "
                                        "orders-1, orders-2"):
        _read(spark, node, subscribe="orders", startingTimestamp=str(TS0 + 10_000)).count()
    assert _read(spark, node, subscribe="orders", startingTimestamp=str(TS0 + 10_000),
                 startingOffsetsByTimestampStrategy="latest").count() == 0
    # an ending timestamp: up to (not including) the first record at or after it; past the last record: the end
    assert _read(spark, node, subscribe="orders", endingTimestamp=str(TS0 + 150)).count() == 150
    assert _read(spark, node, subscribe="orders", endingOffsetsByTimestamp=json.dumps(
        {"orders": {"0": TS0 + 3, "1": TS0 + 10_000, "2": TS0}})).count() == 1 + 100
    with pytest.raises(Exception, match="must name every partition read"):
        _read(spark, node, subscribe="orders", startingOffsets='{"orders":{"0":1}}').count()
    # minPartitions: ranges split; the rows are the same
    split = _read(spark, node, subscribe="orders", minPartitions="7")
    assert split.rdd.getNumPartitions() >= 7
    assert _rows(split) == _rows(_read(spark, node, subscribe="orders"))
    plan = tp.plan_read({"kafka.bootstrap.servers": _bootstrap(node), "subscribe": "orders", "minPartitions": "7"})
    assert plan.rows == 300 and len(plan.ranges) == split.rdd.getNumPartitions()


def test_tls_and_sasl_plain_listeners(spark, node, orders):
    tls = (spark.read.format("kraftwire").option("kafka.bootstrap.servers", f"localhost:{node.port_of('TLS')}")
           .option("kafka.security.protocol", "SSL").option("kafka.ssl.truststore.type", "PEM")
           .option("kafka.ssl.truststore.location", node.ca_path).option("subscribe", "orders").load())
    assert tls.count() == 300
    untrusted = (spark.read.format("kraftwire").option("kafka.bootstrap.servers", f"localhost:{node.port_of('TLS')}")
                 .option("kafka.security.protocol", "SSL").option("subscribe", "orders").load())
    with pytest.raises(Exception, match="CERTIFICATE_VERIFY_FAILED"):
        untrusted.count()  # the system's trust store does not know the test CA
    df = (spark.read.format("kraftwire").option("kafka.bootstrap.servers", f"127.0.0.1:{node.port_of('SASL')}")
          .option("kafka.security.protocol", "SASL_PLAINTEXT").option("kafka.sasl.mechanism", "PLAIN")
          .option("kafka.sasl.jaas.config", JAAS_CLIENT).option("subscribe", "orders").load())
    assert df.count() == 300
    bad = (spark.read.format("kraftwire").option("kafka.bootstrap.servers", f"127.0.0.1:{node.port_of('SASL')}")
           .option("kafka.security.protocol", "SASL_PLAINTEXT").option("kafka.sasl.mechanism", "PLAIN")
           .option("kafka.sasl.jaas.config", JAAS_CLIENT.replace("alice-secret", "wrong"))
           .option("subscribe", "orders").load())
    with pytest.raises(Exception, match="SASL login as alice refused"):  # refused, not a timeout
        bad.count()


def _delete_records(node, tmp_path, topic: str, partition: int, offset: int) -> None:
    from harness import processes

    spec = tmp_path / "delete.json"
    spec.write_text(json.dumps({"partitions": [{"topic": topic, "partition": partition, "offset": offset}],
                                "version": 1}))
    out = processes.kw("delete-records", "--bootstrap-server", _bootstrap(node), "--offset-json-file", str(spec))
    assert f"partition: {topic}-{partition}\tlow_watermark: {offset}" in out.stdout, out.stdout


def test_fail_on_data_loss_after_delete_records(spark, node, tmp_path):
    _create(node, "trimmed", 2)
    _produce(node, "trimmed", [(i % 2, None, f"r{i}".encode(), [], TS0 + i) for i in range(40)])
    _delete_records(node, tmp_path, "trimmed", 0, 15)
    assert _read(spark, node, subscribe="trimmed").count() == 25  # earliest is the new log start
    asked = '{"trimmed":{"0":0,"1":0}}'
    with pytest.raises(Exception, match="cannot fetch offset 0 of trimmed-0: the log starts at 15.*failOnDataLoss"):
        _read(spark, node, subscribe="trimmed", startingOffsets=asked).count()
    df = _read(spark, node, subscribe="trimmed", startingOffsets=asked, failOnDataLoss="false")
    assert [(p, o) for p, o, *_ in _rows(df)] == [(0, o) for o in range(15, 20)] + [(1, o) for o in range(20)]


def test_read_committed_skips_an_aborted_transaction(spark, node):
    from confluent_kafka import Producer

    _create(node, "payments", 2)
    _produce(node, "payments", [(0, None, b"plain-0", [], None)])
    p = Producer({"bootstrap.servers": _bootstrap(node), "transactional.id": "spark-read-test", "linger.ms": 5})
    p.init_transactions(30)
    for values, commit in (([b"ok-1", b"ok-2"], True), ([b"no-1", b"no-2", b"no-3"], False), ([b"ok-3"], True)):
        p.begin_transaction()
        for i, v in enumerate(values):
            p.produce("payments", value=v, partition=i % 2)
        p.flush(30)
        (p.commit_transaction if commit else p.abort_transaction)(30)
    _produce(node, "payments", [(1, None, b"plain-1", [], None)])

    def values(**opts):
        return sorted(bytes(r["value"]) for r in _read(spark, node, subscribe="payments", **opts).collect())

    committed = [b"ok-1", b"ok-2", b"ok-3", b"plain-0", b"plain-1"]
    assert values(**{"kafka.isolation.level": "read_committed"}) == committed
    # the consumer's default (read_uncommitted), which the connector keeps: aborted records too; markers never
    assert values() == sorted(committed + [b"no-1", b"no-2", b"no-3"])
    assert values(**{"kafka.isolation.level": "read_committed", "minPartitions": "6"}) == committed


def test_streaming_with_checkpoint_picks_up_new_records_and_partitions(spark, node, tmp_path):
    from confluent_kafka.admin import NewPartitions

    _create(node, "events", 2)
    first = _produce(node, "events", [(i % 2, None, f"a{i:03d}".encode(), [], None) for i in range(120)])
    out, ck = str(tmp_path / "out"), str(tmp_path / "ck")

    def run_once(fail_on_data_loss: str = "true") -> list:
        q = (spark.readStream.format("kraftwire").option("kafka.bootstrap.servers", _bootstrap(node))
             .option("subscribe", "events").option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", 50)
             .option("failOnDataLoss", fail_on_data_loss)
             .load().selectExpr("topic", "partition", "offset", "value")
             .writeStream.format("parquet").option("path", out).option("checkpointLocation", ck).start())
        try:
            q.processAllAvailable()
            return [p["numInputRows"] for p in q.recentProgress]
        finally:
            q.stop()

    sizes = run_once()
    assert sum(sizes) == 120 and max(sizes) <= 50  # maxOffsetsPerTrigger: several micro-batches
    admin = _admin(node)
    admin.create_partitions([NewPartitions("events", 3)])["events"].result(20)
    _wait_partitions(node, "events", 3)
    second = _produce(node, "events", [(i % 3, None, f"b{i:03d}".encode(), [], None) for i in range(90)])
    assert sum(1 for r in second if r[0] == 2) == 30
    sizes = run_once()
    assert sum(sizes) == 90
    got = spark.read.parquet(out).collect()
    keys = [(r["topic"], r["partition"], r["offset"]) for r in got]
    assert len(keys) == len(set(keys)) == 210  # nothing repeated, nothing lost
    assert sorted((r["partition"], r["offset"], bytes(r["value"])) for r in got) == sorted(
        (p, o, v) for p, o, _, v, _, _ in first + second)
    # the checkpoint holds the connector's offset JSON: {"topic": {"partition": next offset}}
    last = max(glob.glob(os.path.join(ck, "offsets", "[0-9]*")), key=lambda f: int(os.path.basename(f)))
    with open(last) as fh:
        offsets = json.loads(fh.read().splitlines()[-1])
    assert offsets == {"events": {"0": 90, "1": 90, "2": 30}}
    # a restart with nothing new reads nothing
    assert sum(run_once()) == 0
    # records deleted before the query read them: an error naming failOnDataLoss; with it false, the rest is read
    _produce(node, "events", [(0, None, f"c{i}".encode(), [], None) for i in range(10)])  # offsets 90..99
    _delete_records(node, tmp_path, "events", 0, 95)
    with pytest.raises(Exception, match="cannot fetch offset 90 of events-0: the log starts at 95.*failOnDataLoss"):
        run_once()
    assert sum(run_once("false")) == 5
    got = spark.read.parquet(out).where("partition = 0 AND offset >= 90").collect()
    assert sorted((r["offset"], bytes(r["value"])) for r in got) == [(o, f"c{o - 90}".encode()) for o in range(95, 100)]


def test_client_asks_metadata_again_when_the_leader_is_unreachable(node, orders):
    import socket

    opt = parse_options({"kafka.bootstrap.servers": _bootstrap(node), "assign": '{"orders":[1]}'}, streaming=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # bound, never listening: connections are refused
        with tp.TopicClient(opt) as client:
            client.refresh(["orders"])
            client.brokers[99] = ("127.0.0.1", dead)
            client.leaders[("orders", 1)] = 99  # a stale leader, as after a leadership move
            rows = [b for b in tp.read_range(opt, OffsetRange("orders", 1, 10, 20), client)]
            assert client.leaders[("orders", 1)] == 1
    assert [o for b in rows for o in b.column("offset").to_pylist()] == list(range(10, 20))
    gone = parse_options({"kafka.bootstrap.servers": _bootstrap(node), "assign": '{"no-such-topic":[0]}'},
                         streaming=False)
    with pytest.raises(RuntimeError, match="topic no-such-topic does not exist"):  # said, not a timeout
        tp.plan_batch(gone)
