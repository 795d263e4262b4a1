"""Client benchmark: real Kafka clients against a 3-node kraftwire test-server quorum (the Raft log served as a
topic) on this machine (fsync on).

    python benchmarks/client_bench.py [--records 200000] [--latency-records 2000] [--json out.json]

Per client: produce throughput (records/s and MB/s, 100-byte values, acks=all, the client's own batching) and
acks=all latency at concurrency 1 (one record, wait for its acknowledgement, next record: p50/p99) and the leader
process's CPU time per such write (user + system, from /proc). Figures depend on
the machine (2 shared cores here: the clients compete with the three nodes); they are reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


# The shared test helpers (tests/harness) beside these benchmarks; kraftwire itself is whichever one is installed.
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from harness import processes  # noqa: E402

TOPIC = "clients"
VALUE = b"x" * 100




def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (``/proc/PID/stat`` fields 14 and 15)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(samples: list[float], p: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(p * len(s)))]


# ---------------------------------------------------------------------------------------------------- throughput
def confluent_throughput(bootstrap: str, n: int) -> float:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "batch.size": 1_000_000,
                  "queue.buffering.max.messages": 1_000_000})
    start = time.perf_counter()
    for i in range(n):
        while True:
            try:
                p.produce(TOPIC, VALUE)
                break
            except BufferError:
                p.poll(0.005)
        if i % 10000 == 0:
            p.poll(0)
    assert p.flush(120) == 0
    return time.perf_counter() - start


def kafka_python_throughput(bootstrap: str, n: int) -> float:
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=bootstrap.split(","), acks="all", linger_ms=5, batch_size=256 * 1024)
    start = time.perf_counter()
    for _ in range(n):
        p.send(TOPIC, VALUE)
    p.flush(300)
    elapsed = time.perf_counter() - start
    p.close(10)
    return elapsed


def aiokafka_throughput(bootstrap: str, n: int) -> float:
    from aiokafka import AIOKafkaProducer

    async def run():
        p = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, max_batch_size=256 * 1024)
        await p.start()
        try:
            start = time.perf_counter()
            futs = [await p.send(TOPIC, VALUE) for _ in range(n)]
            await asyncio.gather(*futs)
            return time.perf_counter() - start
        finally:
            await p.stop()

    return asyncio.run(run())


def kcat_throughput(bootstrap: str, n: int) -> float:
    with tempfile.NamedTemporaryFile(delete=False) as f:
        f.write((VALUE[:-1] + b"\n") * n)  # 99 bytes + newline delimiter = 100-byte values minus the newline
        path = f.name
    try:
        start = time.perf_counter()
        subprocess.run(["kcat", "-b", bootstrap, "-P", "-t", TOPIC, "-X", "acks=all", "-X", "linger.ms=5", "-l", path],
                       check=True, timeout=600)
        return time.perf_counter() - start
    finally:
        os.unlink(path)


# ---------------------------------------------------------------------------------------------------- latency
def confluent_latency(bootstrap: str, n: int) -> list[float]:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    p.produce(TOPIC, VALUE)
    p.flush(30)
    out = []
    for _ in range(n):
        t = time.perf_counter()
        p.produce(TOPIC, VALUE)
        p.flush(30)
        out.append((time.perf_counter() - t) * 1000)
    return out


def kafka_python_latency(bootstrap: str, n: int) -> list[float]:
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=bootstrap.split(","), acks="all", linger_ms=0)
    p.send(TOPIC, VALUE).get(30)
    out = []
    for _ in range(n):
        t = time.perf_counter()
        p.send(TOPIC, VALUE).get(30)
        out.append((time.perf_counter() - t) * 1000)
    p.close(10)
    return out


def aiokafka_latency(bootstrap: str, n: int) -> list[float]:
    from aiokafka import AIOKafkaProducer

    async def run():
        p = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0)
        await p.start()
        try:
            await p.send_and_wait(TOPIC, VALUE)
            out = []
            for _ in range(n):
                t = time.perf_counter()
                await p.send_and_wait(TOPIC, VALUE)
                out.append((time.perf_counter() - t) * 1000)
            return out
        finally:
            await p.stop()

    return asyncio.run(run())


THROUGHPUT = {"confluent-kafka": confluent_throughput, "kafka-python": kafka_python_throughput,
              "aiokafka": aiokafka_throughput, "kcat": kcat_throughput}
LATENCY = {"confluent-kafka": confluent_latency, "kafka-python": kafka_python_latency, "aiokafka": aiokafka_latency}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--latency-records", type=int, default=2000)
    ap.add_argument("--clients", default=",".join(THROUGHPUT))
    ap.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                    help="one more property for every node (e.g. kraftwire.quorum.high.watermark.linger.ms=0)")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as base:
        cluster = processes.Cluster(base, 3, command=processes.SERVE_ONLY["command"],
                                    extra_args=processes.SERVE_ONLY["extra_args"],
                                    extra_props=f"kraftwire.metadata.log.topic={TOPIC}\n"
                                    + "".join(f"{item}\n" for item in args.set))
        try:
            cluster.start_all()
            cluster.wait_for_leader()
            bootstrap = ",".join(f"127.0.0.1:{n.port}" for n in cluster.nodes.values())
            for name in args.clients.split(","):
                n = args.records if name != "kafka-python" else min(args.records, 100_000)
                elapsed = THROUGHPUT[name](bootstrap, n)
                row = {"client": name, "records": n, "records_per_s": n / elapsed,
                       "mb_per_s": n * len(VALUE) / elapsed / 1e6}
                if name in LATENCY:
                    leader = cluster.nodes[cluster.wait_for_leader().leader_id]
                    cpu_before = cpu_seconds(leader.proc.pid)
                    lat = LATENCY[name](bootstrap, args.latency_records)
                    cpu_us = (cpu_seconds(leader.proc.pid) - cpu_before) / len(lat) * 1e6
                    row.update(p50_ms=statistics.median(lat), p99_ms=pct(lat, 0.99), leader_cpu_us_per_write=cpu_us)
                rows.append(row)
                print(f"{name:16s} {row['records_per_s']:>10,.0f} records/s {row['mb_per_s']:7.2f} MB/s"
                      + (f"   acks=all c=1: p50 {row['p50_ms']:.2f} ms  p99 {row['p99_ms']:.2f} ms"
                         f"  leader CPU {row['leader_cpu_us_per_write']:.0f} us/write"
                         if "p50_ms" in row else ""), flush=True)
        finally:
            cluster.close()
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
