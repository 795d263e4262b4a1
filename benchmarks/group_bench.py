"""Consumer-group benchmarks (#19), each a ratio against a baseline measured in the same run.

    python benchmarks/group_bench.py rebalance [--members 10] [--partitions 60] [--heartbeat-ms 1000]
    python benchmarks/group_bench.py cleaner [--records 400000] [--keys 20000]
    python benchmarks/group_bench.py all [--json out.json]

* **rebalance**: one broker process (``group.initial.rebalance.delay.ms=0``); ``--members`` confluent-kafka
  consumers subscribe to a ``--partitions`` topic at once. Measured: the time from the last member's subscribe until
  every member holds its final assignment (the members' assignments cover the topic exactly once), in heartbeat
  intervals (the goal: at most 5).
* **cleaner**: a compacted partition log of ``--records`` 100-byte records over ``--keys`` keys in 1 MiB segments.
  Measured: records per second of one cleaner pass (offset map, rewrite, swap) against reading the same segments
  and decoding every record with the codec (the goal: at least 25 %).

Figures depend on the machine (2 shared cores here); they are reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


# ---------------------------------------------------------------------------------------------------- rebalance
def rebalance_bench(members: int, partitions: int, heartbeat_ms: int) -> dict:
    from harness import processes

    base = Path(tempfile.mkdtemp(prefix="kraftwire-groups-"))
    try:
        with processes.CombinedNode(base, "offsets.topic.replication.factor=1\n"
                                          "group.initial.rebalance.delay.ms=0\n") as node:
            took = _rebalance(f"127.0.0.1:{node.port}", members, partitions, heartbeat_ms)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return {"members": members, "partitions": partitions, "heartbeat_interval_ms": heartbeat_ms,
            "seconds_after_last_join": round(took, 3), "heartbeat_intervals": round(took / (heartbeat_ms / 1000), 2),
            "goal_heartbeat_intervals": 5}


def _rebalance(server: str, members: int, partitions: int, heartbeat_ms: int) -> float:
    """Seconds from the last member's subscribe until the group settled (each partition owned once, stable for
    three heartbeats)."""
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": server})
    deadline = time.monotonic() + 60
    while True:
        futures = admin.create_topics([NewTopic("wide", partitions, 1)])
        try:
            futures["wide"].result(10)
            break
        except Exception as exc:
            if "already exists" in str(exc):
                break  # an earlier attempt that timed out on our side created it
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    # warm the coordinator (creates __consumer_offsets) with a throwaway member
    warm = Consumer({"bootstrap.servers": server, "group.id": "warm"})
    warm.subscribe(["wide"])
    t0 = time.monotonic()
    while not warm.assignment() and time.monotonic() - t0 < 60:
        warm.poll(0.1)
    warm.close()

    assigned: dict[int, frozenset] = {}
    lock = threading.Lock()
    stop = threading.Event()
    subscribed = []

    def member(i: int) -> None:
        c = Consumer({"bootstrap.servers": server, "group.id": "bench", "session.timeout.ms": 10 * heartbeat_ms,
                      "heartbeat.interval.ms": heartbeat_ms, "auto.offset.reset": "earliest"})
        c.subscribe(["wide"])
        with lock:
            subscribed.append(time.monotonic())
        while not stop.is_set():
            c.poll(0.05)
            parts = frozenset(tp.partition for tp in c.assignment())
            with lock:
                assigned[i] = parts
        c.close()

    threads = [threading.Thread(target=member, args=(i,), daemon=True) for i in range(members)]
    for t in threads:
        t.start()
    settled_at = last_join = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with lock:
            parts = [assigned.get(i, frozenset()) for i in range(members)]
            last_join = max(subscribed) if len(subscribed) == members else None
        everything = [p for ps in parts for p in ps]
        done = last_join is not None and all(parts) and sorted(everything) == list(range(partitions))
        if done and settled_at is None:
            settled_at = time.monotonic()
        elif not done:
            settled_at = None
        if settled_at is not None and time.monotonic() - settled_at > 3 * heartbeat_ms / 1000:
            break  # stable for three heartbeats: no further rebalance came
        time.sleep(0.01)
    stop.set()
    for t in threads:
        t.join(30)
    if settled_at is None:
        raise RuntimeError("the group did not settle")
    return settled_at - last_join


# ---------------------------------------------------------------------------------------------------- cleaner
def cleaner_bench(records: int, keys: int) -> dict:
    import random
    import uuid

    from kraftwire.log import cleaner
    from kraftwire.log.partition_log import LogDirCheckpoints, PartitionLog
    from kraftwire.records import RecordBatchBuilder, read_batches

    base = Path(tempfile.mkdtemp(prefix="kraftwire-clean-"))
    rng = random.Random(7)
    try:
        lg = PartitionLog(str(base / "c-0"), LogDirCheckpoints(str(base)), topic_id=uuid.UUID(int=1),
                          segment_bytes=1 << 20, high_watermark_checkpoint_interval_ms=0)
        value = os.urandom(100)
        written = 0
        while written < records:
            b = RecordBatchBuilder()
            for _ in range(min(100, records - written)):
                b.append(f"key-{rng.randrange(keys)}".encode(), value, timestamp=1_700_000_000_000)
                written += 1
            lg.append_as_leader(b.build(), 1)
        b = RecordBatchBuilder()
        b.append(b"last", value)
        lg.append_as_leader(b.build(), 1)
        lg.update_high_watermark(lg.end_offset())
        lg.flush()
        segs = list(lg._segments[:-1])
        size = sum(s.size for s in segs)

        def read_and_decode() -> float:
            start = time.perf_counter()
            n = 0
            for seg in segs:
                data = os.pread(seg.fd, seg.size, 0)
                for batch in read_batches(data):
                    for _rec in batch:
                        n += 1
            return time.perf_counter() - start

        read_s = min(read_and_decode() for _ in range(3))
        cleanable = len(segs)
        start = time.perf_counter()
        stats = cleaner.clean(lg, 1_800_000_000_000, force=True)
        clean_s = time.perf_counter() - start
        lg.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return {"records": stats.records_read, "segments": cleanable, "mib": round(size / (1 << 20), 1),
            "kept": stats.records_kept, "clean_records_s": round(stats.records_read / clean_s),
            "read_decode_records_s": round(stats.records_read / read_s),
            "ratio": round(read_s / clean_s, 3), "goal_ratio": 0.25}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("which", choices=["rebalance", "cleaner", "all"])
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=60)
    parser.add_argument("--heartbeat-ms", type=int, default=1000)
    parser.add_argument("--records", type=int, default=400_000)
    parser.add_argument("--keys", type=int, default=20_000)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    out = {}
    if args.which in ("rebalance", "all"):
        out["rebalance"] = rebalance_bench(args.members, args.partitions, args.heartbeat_ms)
        print(json.dumps({"rebalance": out["rebalance"]}), flush=True)
    if args.which in ("cleaner", "all"):
        out["cleaner"] = cleaner_bench(args.records, args.keys)
        print(json.dumps({"cleaner": out["cleaner"]}), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
