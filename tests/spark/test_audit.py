"""The replica audit on local[2] Spark: healthy replicas pass, committed divergence and flipped bytes fail,
divergence above the high watermark is an uncommitted tail."""

from __future__ import annotations

import glob
import os
import shutil

from kraftwire.cli import main
from kraftwire.log.checkpoint import format_offset_checkpoint
from kraftwire.spark.audit import audit

from harness.spark_logs import write_node_log


def test_healthy_replicas_pass(spark, node_logs):
    roots = [n["root"] for n in node_logs["nodes"].values()]
    report = audit(spark, roots)
    assert report.ok, report.render()
    assert report.divergent_offsets == 0 and not report.tails
    assert [r.status for r in report.replicas] == ["ok", "ok", "ok"]
    assert {r.node for r in report.replicas} == {1, 2, 3}


def test_divergence_below_high_watermark_fails(spark, tmp_path, node_logs):
    good = node_logs["nodes"]
    bad = write_node_log(str(tmp_path / "node-3"), 3, diverge_from=30)
    report = audit(spark, [good[1]["root"], good[2]["root"], bad["root"]])
    assert not report.ok
    assert any("below the committed watermark" in v for v in report.violations), report.render()
    assert report.first_divergence is not None and report.first_divergence < bad["hw"]
    assert next(r for r in report.replicas if r.node == 3).status == "VIOLATION"


def test_uncommitted_tail_is_reported_not_failed(spark, tmp_path):
    # Same history up to data batch 50; node 3 then took other records in a later epoch (a deposed leader's
    # appends); every checkpointed HW is below that.
    hw = 200
    a = write_node_log(str(tmp_path / "a"), 1, high_watermark=hw)
    b = write_node_log(str(tmp_path / "b"), 2, high_watermark=hw)
    c = write_node_log(str(tmp_path / "c"), 3, high_watermark=hw, diverge_from=50, diverge_epoch=3)
    values_a = {x[0]: x[4] for x in a["expected"]}
    assert min(x[0] for x in c["expected"] if values_a[x[0]] != x[4]) >= hw
    report = audit(spark, [a["root"], b["root"], c["root"]])
    assert report.ok, report.render()
    assert report.first_divergence >= hw and report.tails
    assert {r.node for r in report.replicas if r.status == "tail"} == {1, 2, 3}  # nobody holds them committed
    # The same records in the same epoch as the others' cannot come from two leaders: a violation above the HWs too
    d = write_node_log(str(tmp_path / "d"), 4, high_watermark=hw, diverge_from=50)
    report = audit(spark, [a["root"], d["root"]])
    assert not report.ok and "within one leader epoch" in report.violations[0], report.render()


def test_stale_replica_below_another_replicas_watermark_is_a_tail(spark, tmp_path):
    # Topic partitions (HWs in replication-offset-checkpoint). Broker 3 was the leader in epoch 2 and appended data
    # batches 50.. that never committed (its own HW is 150); brokers 1 and 2 went on in epoch 3 and committed their
    # own records to the end. Broker 3 keeps its stale appends until it restarts: a tail, not a violation.
    tp = "orders.v1-eu-3"
    good = [write_node_log(str(tmp_path / f"b{n}"), n, topic_dir=tp, diverge_from=50, diverge_epoch=3, salt=b"Y")
            for n in (1, 2)]
    stale = write_node_log(str(tmp_path / "b3"), 3, topic_dir=tp, high_watermark=150, diverge_from=50,
                           diverge_epoch=2)
    end = good[0]["hw"]
    report = audit(spark, [good[0]["root"], good[1]["root"], stale["root"]])
    assert report.ok, report.render()
    p = report.partition("orders.v1-eu", 3)
    assert [r.high_watermark for r in p.replicas] == [end, end, 150]
    assert [r.status for r in p.replicas] == ["ok", "ok", "tail"] and 150 < p.first_divergence < end
    # had broker 3 checkpointed a HW above them, its records would contradict committed ones: a violation
    with open(os.path.join(stale["root"], "replication-offset-checkpoint"), "w") as f:
        f.write(format_offset_checkpoint({("orders.v1-eu", 3): end}))
    report = audit(spark, [good[0]["root"], good[1]["root"], stale["root"]])
    assert not report.ok and "below the committed watermark" in report.violations[0], report.render()
    assert report.first_divergence == p.first_divergence


def test_flipped_byte_fails_through_the_cli(spark, tmp_path, node_logs, capsys):
    copy = str(tmp_path / "node-2")
    shutil.copytree(node_logs["nodes"][2]["root"], copy)
    seg = sorted(glob.glob(os.path.join(copy, "__cluster_metadata-0", "*.log")))[1]
    with open(seg, "r+b") as f:
        f.seek(os.path.getsize(seg) - 3)
        b = f.read(1)
        f.seek(os.path.getsize(seg) - 3)
        f.write(bytes([b[0] ^ 0x01]))
    status = main(["audit", node_logs["nodes"][1]["root"], copy])
    out = capsys.readouterr().out
    assert status == 1
    assert "corrupt batch" in out and "audit: FAILED" in out and "VIOLATION" in out
    assert spark.range(1).count() == 1  # the CLI left the shared session running
    assert main(["audit", node_logs["nodes"][1]["root"], node_logs["nodes"][3]["root"]]) == 0
    assert "audit: PASSED" in capsys.readouterr().out


def test_missing_segment_is_a_gap(spark, tmp_path, node_logs):
    copy = str(tmp_path / "node-3")
    shutil.copytree(node_logs["nodes"][3]["root"], copy)
    middle = sorted(glob.glob(os.path.join(copy, "__cluster_metadata-0", "*.log")))[2]
    os.unlink(middle)
    report = audit(spark, [node_logs["nodes"][1]["root"], copy])
    assert not report.ok
    gap = int(os.path.basename(middle)[:20])
    assert any(f"gap starting at offset {gap}" in v for v in report.violations), report.render()
    assert next(r for r in report.replicas if r.node == 3).gaps > 0


def test_decreasing_epoch_fails(spark, tmp_path):
    from kraftwire.records import read_batches, set_base_offset_and_epoch

    info = write_node_log(str(tmp_path / "e"), 1, epochs=(1, 2, 3))
    last = sorted(glob.glob(os.path.join(info["dir"], "*.log")))[-1]
    data = bytearray(open(last, "rb").read())
    first = next(iter(read_batches(bytes(data))))
    assert first.partition_leader_epoch == 3
    # The epoch is outside the CRC: stamp epoch 1 on the last segment's first batch (CRC stays valid).
    set_base_offset_and_epoch(data, 0, first.base_offset, 1)
    open(last, "wb").write(bytes(data))
    report = audit(spark, [info["root"]])
    assert not report.ok and report.replicas[0].epoch_errors > 0, report.render()
    assert report.replicas[0].corrupt_batches == 0


def test_gaps_below_the_cleaner_checkpoint_are_compaction(spark, tmp_path):
    # A compacted partition: a range of offsets is gone below the log cleaner's checkpoint (Kafka's
    # cleaner-offset-checkpoint at the log dir's root), which is compaction, not a gap; above it, it is a gap.
    info = write_node_log(str(tmp_path / "b1"), 1, topic_dir="__consumer_offsets-7")
    middle = sorted(glob.glob(os.path.join(info["dir"], "*.log")))[2]
    os.unlink(middle)
    gap = int(os.path.basename(middle)[:20])
    report = audit(spark, [info["root"]])
    assert not report.ok and report.replicas[0].gaps > 0
    assert f"__consumer_offsets-7 on broker 1 ({info['dir']}): gap starting at offset {gap}" in report.violations[0]
    with open(os.path.join(info["root"], "cleaner-offset-checkpoint"), "w") as f:
        f.write(format_offset_checkpoint({("__consumer_offsets", 7): info["hw"] - 5}))
    report = audit(spark, [info["root"]])
    assert report.ok and report.replicas[0].gaps == 0, report.render()
