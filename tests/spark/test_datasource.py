"""The kraftwire data source: exact read-back, partitioning, pushdown (fewer bytes), snapshots, options, corruption."""

from __future__ import annotations

import glob
import json
import os
import pickle
import shutil

from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual, In, IsNotNull, LessThan, Not
from pyspark.sql.pandas.types import to_arrow_schema

from kraftwire.ids import SnapshotId
from kraftwire.records import (
    CONTROL_SNAPSHOT_FOOTER,
    CONTROL_SNAPSHOT_HEADER,
    RecordBatchBuilder,
    control_key,
)
from kraftwire.snapshot.writer import FileRawSnapshotWriter
from kraftwire.spark.datasource import KraftwireReader, spark_schema
from kraftwire.spark.files import Bounds, plan, resolve
from kraftwire.spark.scan import RowFilter, arrow_schema, scan

from harness.spark_logs import T0, write_node_log


def _row_tuple(r):
    headers = [(h["key"], h["value"]) for h in r["headers"]] if r["headers"] is not None else None
    return (r["offset"], r["partition_leader_epoch"], r["timestamp"], r["key"], r["value"], headers,
            r["is_control"], r["control_type"])


def _expected(info):
    return [(o, e, ts, k, v, list(h), c, ct) for o, e, ts, k, v, h, c, ct in info["expected"]]


def _stats(d):
    return [json.load(open(p)) for p in glob.glob(os.path.join(d, "*.json"))]


def test_schema_is_what_spark_expects_from_arrow():
    assert to_arrow_schema(spark_schema(), timezone="UTC").equals(arrow_schema()[1])


def test_reads_back_exactly_one_partition_per_segment(spark, node_logs):
    info = node_logs["nodes"][1]
    segments = sorted(glob.glob(os.path.join(info["dir"], "*.log")))
    assert len(segments) >= 3
    df = spark.read.format("kraftwire").load(info["root"])
    assert df.rdd.getNumPartitions() == len(segments)
    rows = sorted(df.collect(), key=lambda r: r["offset"])
    assert [_row_tuple(r) for r in rows] == _expected(info)
    assert {r["node"] for r in rows} == {1}
    assert all(r["batch_crc_valid"] and r["committed"] and r["error"] is None for r in rows)
    assert not any(r["is_snapshot"] for r in rows)
    control = [r for r in rows if r["is_control"]]
    assert len(control) == 2 and all(r["control_type"] == 2 for r in control)
    # batch_base_offset: a record's batch; paths name the segment that holds it
    assert all(r["batch_base_offset"] <= r["offset"] for r in rows)
    assert {r["path"] for r in rows} == set(segments)


def test_path_forms_partition_dir_segment_list_and_glob(spark, node_logs):
    nodes = node_logs["nodes"]
    seg = sorted(glob.glob(os.path.join(nodes[2]["dir"], "*.log")))[1]
    pd = nodes[1]["dir"]
    total = len(nodes[1]["expected"])
    def r():
        return spark.read.format("kraftwire")

    assert r().load(pd).count() == total
    one = r().load(seg).select("offset").collect()
    base = int(os.path.basename(seg)[:20])
    assert one and min(x["offset"] for x in one) == base
    both = r().load(f"{nodes[1]['root']},{nodes[2]['root']}")
    everything = r().load(os.path.join(node_logs["parent"], "node-*"))
    counts = {row["node"]: row["count"] for row in everything.groupBy("node").count().collect()}
    assert counts == {1: total, 2: total, 3: total}
    assert both.rdd.getNumPartitions() * 3 == everything.rdd.getNumPartitions() * 2


def test_pushed_offset_filter_reads_fewer_bytes(spark, node_logs, tmp_path):
    info = node_logs["nodes"][1]
    full_dir, part_dir = str(tmp_path / "full"), str(tmp_path / "part")
    def base():
        return spark.read.format("kraftwire")

    full = base().option("statsDir", full_dir).load(info["root"])
    assert full.count() == len(info["expected"])
    df = base().option("statsDir", part_dir).load(info["root"]).where("offset >= 200 AND offset < 211")
    got = sorted(r["offset"] for r in df.select("offset").collect())
    assert got == list(range(200, 211))
    assert df.rdd.getNumPartitions() == 1
    read_full = sum(s["bytes_read"] for s in _stats(full_dir))
    read_part = sum(s["bytes_read"] for s in _stats(part_dir))
    assert read_full == sum(os.path.getsize(p) for p in glob.glob(os.path.join(info["dir"], "*.log")))
    assert 0 < read_part < read_full / 5
    # IN and timestamp bounds, not-control: results exact (Spark does not re-check filters we took)
    picked = base().load(info["root"]).where("offset IN (3, 150, 299) AND NOT is_control")
    assert sorted(r["offset"] for r in picked.select("offset").collect()) == [3, 150, 299]
    cut = T0 + 1000 * 40
    late = base().load(info["root"]).where(f"timestamp >= {cut}").select("offset").collect()
    assert sorted(r["offset"] for r in late) == sorted(o for o, _, ts, *_ in info["expected"] if ts >= cut)


def test_push_filters_unit():
    r = KraftwireReader({"path": "/nowhere"})
    fs = [GreaterThanOrEqual(("offset",), 10), LessThan(("offset",), 20), In(("offset",), (12, 25)),
          IsNotNull(("offset",)), EqualTo(("key",), b"x"), Not(EqualTo(("is_control",), True)),
          GreaterThanOrEqual(("timestamp",), 5)]
    left = list(r.pushFilters(fs))
    assert left == [fs[3], fs[4]]
    rf = r.filter
    assert (rf.bounds.offset_lo, rf.bounds.offset_hi, rf.offsets_in, rf.is_control, rf.bounds.ts_lo) == (
        12, 19, frozenset({12, 25}), False, 5)
    assert pickle.loads(pickle.dumps(r)).filter == rf


def test_options_and_committed(spark, tmp_path):
    info = write_node_log(str(tmp_path / "n7"), 7, batches=20, high_watermark=50)
    def r():  # a DataFrameReader keeps its options: a fresh one per read
        return spark.read.format("kraftwire")

    rows = r().load(info["root"]).select("offset", "committed").collect()
    assert all(x["committed"] == (x["offset"] < 50) for x in rows)
    assert r().option("committedOnly", "true").load(info["root"]).count() == 50
    no_ctl = r().option("includeControl", "false").load(info["root"])
    assert no_ctl.count() == len(info["expected"]) - 2
    ranged = r().option("startingOffset", 30).option("endingOffset", 40).load(info["root"]).select("offset").collect()
    assert sorted(x["offset"] for x in ranged) == list(range(30, 40))


def test_large_segment_split_on_index(tmp_path):
    info = write_node_log(str(tmp_path / "big"), 4, batches=200, segment_bytes=1 << 20)
    files = resolve(info["root"])
    assert len(files) == 1
    ranges = plan(files, Bounds(), 4096)
    assert len(ranges) > 3
    assert all(a.end == b.start for a, b in zip(ranges, ranges[1:]))
    got = [o for rg in ranges for b in scan(rg, RowFilter()) for o in b.column("offset").to_pylist()]
    assert got == [e[0] for e in info["expected"]]
    p = pickle.loads(pickle.dumps(ranges[1]))
    assert p == ranges[1]


def test_snapshot_read(spark, tmp_path):
    info = write_node_log(str(tmp_path / "snap"), 5, batches=10)
    w = FileRawSnapshotWriter(info["dir"], SnapshotId(info["hw"], 2))
    b = RecordBatchBuilder(is_control=True)
    b.append(control_key(CONTROL_SNAPSHOT_HEADER), b"\x00\x00" + b"\x00" * 8 + b"\x00", timestamp=T0)
    w.append(b.build())
    b = RecordBatchBuilder(base_offset=1)
    for i in range(5):
        b.append(f"s{i}".encode(), f"state-{i}".encode(), timestamp=T0)
    w.append(b.build())
    b = RecordBatchBuilder(base_offset=6, is_control=True)
    b.append(control_key(CONTROL_SNAPSHOT_FOOTER), b"\x00\x00\x00", timestamp=T0)
    w.append(b.build())
    w.freeze()
    path = w.path
    rows = sorted(spark.read.format("kraftwire").load(path).collect(), key=lambda r: r["offset"])
    assert [r["offset"] for r in rows] == list(range(7))
    assert [r["control_type"] for r in rows if r["is_control"]] == [CONTROL_SNAPSHOT_HEADER, CONTROL_SNAPSHOT_FOOTER]
    assert [r["value"] for r in rows if not r["is_control"]] == [f"state-{i}".encode() for i in range(5)]
    assert all(r["is_snapshot"] and r["committed"] and r["node"] == 5 for r in rows)
    with_snap = spark.read.format("kraftwire").option("includeSnapshots", "true").load(info["root"])
    assert with_snap.count() == len(info["expected"]) + 7


def _flip(path: str, position: int) -> None:
    with open(path, "r+b") as f:
        f.seek(position)
        byte = f.read(1)
        f.seek(position)
        f.write(bytes([byte[0] ^ 0xFF]))


def test_corruption_is_flagged_not_fatal(tmp_path):
    info = write_node_log(str(tmp_path / "c"), 6, batches=20)
    seg = sorted(glob.glob(os.path.join(info["dir"], "*.log")))[0]
    size = os.path.getsize(seg)
    clean = [o for rg in plan(resolve(seg), Bounds(), 1 << 30) for b in scan(rg, RowFilter())
             for o in b.column("offset").to_pylist()]
    # a payload byte near the end of the file: that batch's rows decode with batch_crc_valid = false
    _flip(seg, size - 5)
    out = [b for rg in plan(resolve(seg), Bounds(), 1 << 30) for b in scan(rg, RowFilter())]
    rows = [r for b in out for r in b.to_pylist()]
    assert [r["offset"] for r in rows] == clean
    bad = [r for r in rows if not r["batch_crc_valid"]]
    assert bad and all("crc mismatch" in r["error"] for r in bad)
    assert all(r["error"] is None for r in rows if r["batch_crc_valid"])
    # a broken Length field: rows before it, then one marker row, the rest of the range unread
    dup = str(tmp_path / "c2")
    shutil.copytree(info["root"], dup)
    seg2 = sorted(glob.glob(os.path.join(dup, "__cluster_metadata-0", "*.log")))[0]
    second = [rg for rg in plan(resolve(seg2), Bounds(), 1 << 30)][0]
    first_batch = [b for b in scan(second, RowFilter())][0]
    pos = 8  # Length of the first batch
    _flip(seg2, pos)
    rows = [r for b in scan(second, RowFilter()) for r in b.to_pylist()]
    assert len(rows) == 1 and rows[0]["offset"] is None and "bad batch length" in rows[0]["error"]
    assert first_batch.num_rows > 1


def test_timestamp_lower_bound_skips_through_the_timeindex(tmp_path):
    info = write_node_log(str(tmp_path / "ts"), 8, batches=60)
    files = resolve(info["root"])
    everything = plan(files, Bounds(), 1 << 30)
    cut = T0 + 1000 * 50
    late = plan(files, Bounds(ts_lo=cut), 1 << 30)
    assert sum(r.end - r.start for r in late) < sum(r.end - r.start for r in everything) / 3
    rf = RowFilter(bounds=Bounds(ts_lo=cut))
    got = sorted(o for r in late for b in scan(r, rf) for o in b.column("offset").to_pylist())
    assert got == sorted(o for o, _, ts, *_ in info["expected"] if ts >= cut)
