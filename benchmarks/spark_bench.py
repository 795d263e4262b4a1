"""Rows/s reading a Raft log dir: Spark local[1] and local[2] through the kraftwire source, and a single-process
Python loop over the same ranges with the same codec (reference).

    python benchmarks/spark_bench.py [--size-mib 1024] [--dir /tmp/kraftwire-spark-bench] [--masters local[1],local[2]]

The log dir is written once through a real SegmentedLog (256 MiB segments, 4 KiB index interval; batches of 100
records with 100-byte values and 8-byte keys) and reused. Each Spark run is its own process (a session per master);
the timed queries are ``df.count()`` (default options, then ``includePath=false``), each the fastest of
three runs, after one warm-up query (the session start is not timed). Prints one table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

REPEATS = 3


def build(directory: str, size_mib: int) -> dict:
    from kraftwire.log.meta_properties import MetaProperties, write_meta_properties
    from kraftwire.log.segmented import SegmentedLog
    from kraftwire.records import RecordBatchBuilder

    marker = os.path.join(directory, "bench.json")
    if os.path.exists(marker):
        with open(marker) as f:
            meta = json.load(f)
        if meta["size_mib"] == size_mib:
            return meta
    import shutil

    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    write_meta_properties(directory, MetaProperties(cluster_id="b" * 22, node_id=1))
    log = SegmentedLog(os.path.join(directory, "__cluster_metadata-0"), segment_bytes=256 << 20)
    values = [bytes([65 + i % 26]) * 100 for i in range(100)]
    keys = [f"key{i:05d}".encode() for i in range(100)]
    target = size_mib << 20
    written = records = 0
    ts = 1_700_000_000_000
    while written < target:
        b = RecordBatchBuilder()
        b.append_many(values, keys=keys, timestamp=ts)
        data = b.build()
        log.append_as_leader(data, 1)
        written += len(data)
        records += len(values)
        ts += 1
    log.flush()
    log.update_high_watermark(log.end_offset())
    log.close()
    meta = {"size_mib": size_mib, "bytes": written, "records": records}
    with open(marker, "w") as f:
        json.dump(meta, f)
    return meta


def python_loop(directory: str) -> tuple[int, float, float]:
    """(rows, seconds for scan() with all columns, seconds for the bare columnar decode)."""
    from kraftwire.records import decode_raw_columns
    from kraftwire.spark.files import Bounds, plan, resolve
    from kraftwire.spark.scan import RowFilter, scan

    ranges = plan(resolve(directory), Bounds(), 64 << 20)
    t = time.perf_counter()
    rows = sum(b.num_rows for r in ranges for b in scan(r, RowFilter()))
    full = time.perf_counter() - t
    t = time.perf_counter()
    n = 0
    for r in ranges:
        with open(r.file.path, "rb") as f:
            f.seek(r.start)
            left = r.end - r.start
            carry = b""
            while left > 0:
                chunk = carry + f.read(min(8 << 20, left))
                left -= len(chunk) - len(carry)
                from kraftwire.records import whole_batches_size

                w = whole_batches_size(chunk)
                n += decode_raw_columns(memoryview(chunk)[:w]).num_rows
                carry = chunk[w:]
    bare = time.perf_counter() - t
    assert n == rows
    return rows, full, bare


def spark_run(directory: str, master: str) -> dict:
    from kraftwire.spark import session

    spark = session(master, "kraftwire-bench", {"spark.driver.memory": "2g", "spark.sql.shuffle.partitions": "2"})
    df = spark.read.format("kraftwire").load(directory)
    spark.read.format("kraftwire").load(directory).where("offset < 1000").count()  # warm-up (workers, codec)

    def best(frame, repeats: int) -> tuple[int, float]:
        """(rows, fastest of ``repeats`` runs): the machine is shared, the minimum is the least disturbed run."""
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            n = frame.count()
            times.append(time.perf_counter() - t)
        return n, min(times)

    rows, seconds = best(df, REPEATS)
    lean = spark.read.format("kraftwire").option("includePath", "false").load(directory)
    lean_rows, lean_seconds = best(lean, REPEATS)
    assert lean_rows == rows
    parts = df.rdd.getNumPartitions()
    spark.stop()
    return {"master": master, "rows": rows, "seconds": seconds, "lean_seconds": lean_seconds, "partitions": parts}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--dir", default="/tmp/kraftwire-spark-bench")
    ap.add_argument("--masters", default="local[1],local[2]")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(spark_run(args.dir, args.child)))
        return
    meta = build(args.dir, args.size_mib)
    runs = [python_loop(args.dir) for _ in range(REPEATS)]
    rows = runs[0][0]
    full, bare = min(r[1] for r in runs), min(r[2] for r in runs)
    table = [("python loop: scan() (all columns)", rows, full), ("python loop: decode_raw_columns only", rows, bare)]
    results = {}
    for master in args.masters.split(","):
        out = subprocess.run([sys.executable, __file__, "--dir", args.dir, "--size-mib", str(args.size_mib),
                              "--child", master], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        results[master] = r
        table.append((f"spark {master} df.count() ({r['partitions']} partitions)", r["rows"], r["seconds"]))
        table.append((f"spark {master} same, includePath=false", r["rows"], r["lean_seconds"]))
    print(f"log dir: {args.dir}: {meta['bytes'] / 2**20:.0f} MiB, {meta['records']:,} records, cpus={os.cpu_count()}")
    print(f"{'reader':48} {'rows':>12} {'seconds':>8} {'rows/s':>12} {'MiB/s':>8}")
    for name, n, s in table:
        print(f"{name:48} {n:>12,} {s:>8.2f} {n / s:>12,.0f} {meta['bytes'] / 2**20 / s:>8.0f}")
    if "local[1]" in results and "local[2]" in results:
        one, two = results["local[1]"], results["local[2]"]
        print(f"local[1] -> local[2] speed-up: {one['seconds'] / two['seconds']:.2f}x "
              f"(includePath=false: {one['lean_seconds'] / two['lean_seconds']:.2f}x)")


if __name__ == "__main__":
    main()
