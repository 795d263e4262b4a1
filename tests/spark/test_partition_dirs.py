"""The path reader over every partition dir of brokers' log dirs: ``topic``/``partition`` from the dir names (split at
the last dash), ``committed`` from each log dir's ``replication-offset-checkpoint`` (the Raft log keeps its own
``high-watermark-checkpoint``), topic selection by option and by pushed filters that skip whole dirs."""

from __future__ import annotations

import glob
import json
import os
import shutil

import pytest
from pyspark.sql.datasource import EqualTo, GreaterThan, In, IsNotNull

from kraftwire.spark.datasource import KraftwireReader
from kraftwire.spark.files import Selection, resolve

from harness.spark_logs import write_node_log

# (topic dir, high watermark); topics with dashes and dots, a partition number above 9
PARTITIONS = {"orders.v1-eu-0": 40, "orders.v1-eu-1": 55, "a-b-c-10": 12, "__cluster_metadata-0": 30}


@pytest.fixture(scope="module")
def brokers(tmp_path_factory):
    """Two brokers' log dirs holding the same partitions (small logs: 8 data batches of 5 records each)."""
    parent = tmp_path_factory.mktemp("brokers")
    out = {}
    for node in (1, 2):
        root = str(parent / f"broker-{node}")
        written = {}
        for d, hw in PARTITIONS.items():
            written[d] = write_node_log(root, node, batches=8, high_watermark=hw, topic_dir=d)
        # Kafka's leftovers of a deleted partition and a moving one: not live partition dirs, never read
        for junk in ("orders.v1-eu-2.0123456789abcdef0123456789abcdef-delete", "a-b-c-10.abcdef-future"):
            shutil.copytree(written["a-b-c-10"]["dir"], os.path.join(root, junk))
        out[node] = {"root": root, "parts": written}
    return {"parent": str(parent), "brokers": out}


def _stats(d):
    return [json.load(open(p)) for p in glob.glob(os.path.join(d, "*.json"))]


def test_topic_partition_columns_and_committed_from_the_log_dir(spark, brokers):
    b1 = brokers["brokers"][1]
    assert not os.path.exists(os.path.join(b1["parts"]["orders.v1-eu-0"]["dir"], "high-watermark-checkpoint"))
    rows = spark.read.format("kraftwire").load(b1["root"]).select(
        "node", "topic", "partition", "offset", "committed", "path").collect()
    per = {}
    for r in rows:
        per.setdefault((r["topic"], r["partition"]), []).append(r)
    assert set(per) == {("orders.v1-eu", 0), ("orders.v1-eu", 1), ("a-b-c", 10), ("__cluster_metadata", 0)}
    for d, hw in PARTITIONS.items():
        topic, _, part = d.rpartition("-")
        got = per[(topic, int(part))]
        assert sorted(r["offset"] for r in got) == [e[0] for e in b1["parts"][d]["expected"]]
        assert all(r["committed"] == (r["offset"] < hw) for r in got), d
        assert all(os.path.basename(os.path.dirname(r["path"])) == d and r["node"] == 1 for r in got)
    # several log dirs through a glob: every broker's partitions, nothing from -delete/-future dirs
    both = spark.read.format("kraftwire").load(os.path.join(brokers["parent"], "broker-*"))
    counts = {(r["node"], r["topic"], r["partition"]): r["count"] for r in both.groupBy("node", "topic", "partition").count().collect()}
    assert len(counts) == 8 and set(counts.values()) == {len(b1["parts"]["a-b-c-10"]["expected"])}


def test_topic_options_and_pushdown_skip_whole_dirs(spark, brokers, tmp_path):
    root = brokers["brokers"][1]["root"]
    n = len(brokers["brokers"][1]["parts"]["a-b-c-10"]["expected"])
    segments = {d: len(glob.glob(os.path.join(root, d, "*.log"))) for d in PARTITIONS}

    def r():
        return spark.read.format("kraftwire")

    def got(df):  # one job per query: (topic, partition) -> rows
        out = {}
        for x in df.select("topic", "partition").collect():
            out[(x["topic"], x["partition"])] = out.get((x["topic"], x["partition"]), 0) + 1
        return out

    picked = r().option("topics", "orders.v1-eu, a-b-c").load(root)
    assert got(picked) == {("orders.v1-eu", 0): n, ("orders.v1-eu", 1): n, ("a-b-c", 10): n}
    assert picked.rdd.getNumPartitions() == segments["orders.v1-eu-0"] + segments["orders.v1-eu-1"] + segments["a-b-c-10"]
    pattern = r().option("topicPattern", r"orders\..*").load(root)
    assert set(got(pattern)) == {("orders.v1-eu", 0), ("orders.v1-eu", 1)}
    assert not got(r().option("topicPattern", "orders").load(root))  # the whole name must match

    # pushed topic/partition filters: only those dirs are planned and read, results exact
    stats = str(tmp_path / "stats")
    one = r().option("statsDir", stats).load(root).where("topic = 'orders.v1-eu' AND partition = 1")
    assert one.rdd.getNumPartitions() == segments["orders.v1-eu-1"]
    assert got(one) == {("orders.v1-eu", 1): n}
    assert {os.path.basename(os.path.dirname(s["path"])) for s in _stats(stats)} == {"orders.v1-eu-1"}
    inlist = r().load(root).where("topic IN ('a-b-c', '__cluster_metadata') AND partition IN (0, 10)")
    assert inlist.rdd.getNumPartitions() == segments["a-b-c-10"] + segments["__cluster_metadata-0"]
    assert got(inlist) == {("a-b-c", 10): n, ("__cluster_metadata", 0): n}
    # filters the source does not take are still applied (by Spark)
    like = r().load(root).where("topic LIKE 'orders%' AND partition > 0")
    assert got(like) == {("orders.v1-eu", 1): n}
    assert not got(r().load(root).where("topic = 'nope'"))


def test_pushed_selection_unit(brokers):
    r = KraftwireReader({"path": brokers["brokers"][1]["root"], "topics": "orders.v1-eu,a-b-c"})
    fs = [EqualTo(("topic",), "orders.v1-eu"), In(("partition",), (1, 10)), GreaterThan(("partition",), 0),
          IsNotNull(("record_type",)), EqualTo(("offset",), 3)]
    assert not r.decode_metadata
    left = list(r.pushFilters(fs))
    assert left == [fs[2], fs[3]]  # range on partition: Spark's; record_* filters turn decoding on, Spark applies them
    assert r.decode_metadata
    assert r.select == Selection(topics=frozenset({"orders.v1-eu"}), partitions=frozenset({1, 10}))
    files = resolve(r.path, False, r.select)
    assert {os.path.basename(os.path.dirname(f.path)) for f in files} == {"orders.v1-eu-1"}
    assert {(f.topic, f.partition) for f in files} == {("orders.v1-eu", 1)}
    with pytest.raises(ValueError, match="topicPattern"):
        KraftwireReader({"path": "/x", "topicPattern": "(unclosed"})
