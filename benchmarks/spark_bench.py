"""Rows/s reading a Raft log dir: Spark local[1] and local[2] through the kraftwire source, and a single-process
Python loop over the same ranges with the same codec (reference).

    python benchmarks/spark_bench.py [--size-mib 1024] [--dir /tmp/kraftwire-spark-bench] [--masters local[1],local[2]]

The log dir is written once through a real SegmentedLog (256 MiB segments, 4 KiB index interval; batches of 100
records with 100-byte values and 8-byte keys) and reused. Each Spark run is its own process (a session per master);
the timed queries are ``df.count()`` (default options, then ``includePath=false``), each the fastest of
three runs, after one warm-up query (the session start is not timed). Prints one table.

Then, unless ``--no-topics``, the issue-22 goals against a real cluster (one controller, three brokers, processes),
each ratio from the same run at ``--topics-master`` (local[2]):

* the sink: ``df.write.format("kraftwire")`` of ``--topics-records`` rows (8-byte keys, 100-byte values) into a
  6-partition RF-3 topic, against confluent-kafka's own producer into another (acks=all, idempotent) — goal >= 50 %;
* the wire read of that topic (``kafka.bootstrap.servers``, ``subscribe``) against the file read of the same
  partitions from one broker's log dir — goal >= 50 %;
* streaming produce-to-output latency: 2,000 records/s through a query (500 ms trigger) from one topic into another
  via the sink, measured by a consumer of the output — goal p99 <= 4 trigger intervals.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
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


# ------------------------------------------------------------------------------------------ topics (issue 22)

VALUE_100 = b"v" * 100


def _cluster(base: str):
    """A real cluster: one controller and three brokers (processes), as the issue's RF-3 goals want."""
    sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
    from harness import processes
    from harness.roles import RolesCluster

    cluster = RolesCluster(base, controllers=1, brokers=3, kraft=True,
                           extra_props="offsets.topic.replication.factor=3\ntransaction.state.log.replication.factor=3\n"
                                       "transaction.state.log.min.isr=2\n")
    for node in cluster.nodes.values():
        node.start()
    bootstrap = ",".join(f"localhost:{b.port_of('BROKER')}" for b in cluster.brokers)

    def create(topic: str, partitions: int) -> None:
        deadline = time.monotonic() + 60
        while True:
            out = processes.kw("topics", "--create", "--topic", topic, "--partitions", str(partitions),
                               "--replication-factor", "3", "--config", "min.insync.replicas=2",
                               "--bootstrap-server", bootstrap.split(",")[0], check=False)
            if "Created topic" in out.stdout:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"topic {topic} not created: {out.stdout} {out.stderr}")
            time.sleep(0.3)

    return cluster, bootstrap, create


def _producer_rate(bootstrap: str, topic: str, records: int) -> float:
    """confluent-kafka's own producer: acks=all, idempotent, 100-byte values, 8-byte keys (records/s)."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 5,
                  "batch.num.messages": 10000, "queue.buffering.max.messages": 1_000_000})
    failed = []
    t0 = time.perf_counter()
    for i in range(records):
        while True:
            try:
                p.produce(topic, VALUE_100, key=b"%08d" % i, on_delivery=lambda e, m: failed.append(e) if e else None)
                break
            except BufferError:
                p.poll(0.01)
    left = p.flush(120)
    seconds = time.perf_counter() - t0
    assert left == 0 and not failed, f"{left} undelivered, {failed[:3]}"
    return records / seconds


def _streaming_latency(spark, bootstrap: str, create, seconds: float, rate: int, trigger_ms: int) -> dict:
    """A producer writes ``rate`` records/s into ``lat-in`` with its send time in the value; a streaming query reads
    them (trigger ``trigger_ms``) and writes them unchanged into ``lat-out`` through the kraftwire sink; a consumer of
    ``lat-out`` takes receive time - send time. The first quarter is warm-up, not counted."""
    import threading

    from confluent_kafka import Consumer, Producer

    create("lat-in", 6)
    create("lat-out", 6)
    checkpoint = tempfile.mkdtemp(prefix="kraftwire-bench-ckpt-")
    query = (spark.readStream.format("kraftwire").option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", "lat-in").option("startingOffsets", "latest").load()
             .selectExpr("key", "value")
             .writeStream.format("kraftwire").option("kafka.bootstrap.servers", bootstrap).option("topic", "lat-out")
             .option("checkpointLocation", checkpoint).trigger(processingTime=f"{trigger_ms} milliseconds").start())
    latencies: list[float] = []
    stop = threading.Event()

    def consume() -> None:
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-latency", "auto.offset.reset": "earliest",
                      "enable.auto.commit": False})
        c.subscribe(["lat-out"])
        try:
            while not stop.is_set():
                for m in c.consume(1000, 0.2):
                    if m.error() is None:
                        latencies.append(time.time() - float(m.value()))
        finally:
            c.close()

    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    time.sleep(5)  # the query's first micro-batch and the consumer's assignment
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 1})
    t0 = time.monotonic()
    sent = 0
    while time.monotonic() - t0 < seconds:
        due = int((time.monotonic() - t0) * rate)
        while sent < due:
            p.produce("lat-in", repr(time.time()).encode())
            sent += 1
        p.poll(0)
        time.sleep(0.005)
    p.flush(30)
    deadline = time.monotonic() + 30
    while len(latencies) < sent and time.monotonic() < deadline:
        time.sleep(0.2)
    stop.set()
    reader.join(10)
    query.stop()
    counted = sorted(latencies[len(latencies) // 4:])

    def pct(q: float) -> float:
        return counted[min(len(counted) - 1, int(q * len(counted)))] * 1000 if counted else float("nan")

    return {"sent": sent, "received": len(latencies), "trigger_ms": trigger_ms, "p50_ms": pct(0.50),
            "p99_ms": pct(0.99), "max_ms": counted[-1] * 1000 if counted else float("nan")}


def topics_run(records: int, master: str, latency_seconds: float) -> dict:
    """The wire read, the sink and the streaming latency against a real RF-3 cluster, in one Spark session."""
    from kraftwire.spark import session

    base = tempfile.mkdtemp(prefix="kraftwire-spark-bench-")
    cluster, bootstrap, create = _cluster(base)
    try:
        for name in ("cfk", "sink"):
            create(name, 6)
        producer = max(_producer_rate(bootstrap, "cfk", records) for _ in range(2))
        spark = session(master, "kraftwire-bench", {"spark.driver.memory": "2g", "spark.sql.shuffle.partitions": "2"})
        rows = spark.range(records).selectExpr("format_string('%08d', id) AS key",
                                               f"repeat('v', {len(VALUE_100)}) AS value").cache()
        rows.count()
        writes = []
        for rnd in range(2):
            t = time.perf_counter()
            rows.write.format("kraftwire").option("kafka.bootstrap.servers", bootstrap).option("topic", "sink") \
                .mode("append").save()
            writes.append(records / (time.perf_counter() - t))
        written = 2 * records

        def read_wire():
            return (spark.read.format("kraftwire").option("kafka.bootstrap.servers", bootstrap)
                    .option("subscribe", "sink").load())

        read_wire().where("offset < 10").count()  # warm-up
        wire_n, wire_s = _best(read_wire, 3)
        assert wire_n == written, f"the wire read saw {wire_n} rows of {written}"
        broker_dir = os.path.join(base, f"kraft-logs-{cluster.brokers[0].node_id}")

        def read_files():
            return spark.read.format("kraftwire").option("topics", "sink").option("includePath", "false") \
                .load(broker_dir)

        file_n, file_s = _best(read_files, 3)
        assert file_n == written, f"the file read saw {file_n} rows of {written}"
        latency = _streaming_latency(spark, bootstrap, create, latency_seconds, 2000, 500)
        spark.stop()
    finally:
        cluster.close()
    return {"records": records, "producer_rps": producer, "sink_rps": max(writes), "sink_runs": writes,
            "wire_rows": wire_n, "wire_rps": wire_n / wire_s, "file_rps": file_n / file_s, "latency": latency,
            "master": master}


def _best(make, repeats: int) -> tuple[int, float]:
    times, n = [], 0
    for _ in range(repeats):
        t = time.perf_counter()
        n = make().count()
        times.append(time.perf_counter() - t)
    return n, min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--dir", default="/tmp/kraftwire-spark-bench")
    ap.add_argument("--masters", default="local[1],local[2]")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--no-topics", action="store_true", help="only the file-read part")
    ap.add_argument("--topics-only", action="store_true", help="only the topics part")
    ap.add_argument("--topics-records", type=int, default=1_000_000)
    ap.add_argument("--topics-master", default="local[2]")
    ap.add_argument("--latency-seconds", type=float, default=30.0)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(spark_run(args.dir, args.child)))
        return
    if not args.topics_only:
        files_part(args)
    if not args.no_topics:
        r = topics_run(args.topics_records, args.topics_master, args.latency_seconds)
        lat = r["latency"]
        print(f"\ntopics ({r['master']}, 1 controller + 3 brokers, RF 3, 6 partitions, {r['records']:,} records of "
              "100 B, one run)")
        print("| | rows/s | ratio | goal |\n|---|---|---|---|")
        print(f"| confluent-kafka producer (acks=all, idempotent) | {r['producer_rps']:,.0f} | | |")
        print(f"| Spark sink `df.write.format(\"kraftwire\")` | {r['sink_rps']:,.0f} | "
              f"{r['sink_rps'] / r['producer_rps'] * 100:.0f} % | >= 50 % |")
        print(f"| file read of the topic (one broker's log dir) | {r['file_rps']:,.0f} | | |")
        print(f"| wire read (`kafka.bootstrap.servers`, `subscribe`) | {r['wire_rps']:,.0f} | "
              f"{r['wire_rps'] / r['file_rps'] * 100:.0f} % | >= 50 % |")
        print(f"streaming produce-to-output latency, trigger {lat['trigger_ms']} ms: p50 {lat['p50_ms']:.0f} ms, "
              f"p99 {lat['p99_ms']:.0f} ms ({lat['p99_ms'] / lat['trigger_ms']:.1f} trigger intervals, goal <= 4), "
              f"max {lat['max_ms']:.0f} ms; {lat['received']:,} received of {lat['sent']:,} sent")
        print(json.dumps(r))


def files_part(args) -> None:
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
