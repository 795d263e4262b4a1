"""Partition reassignment throughput with and without a replication throttle, on a four-broker kraftwire cluster of
real processes (three combined nodes and one broker, as ``tests/kafka_software/test_reassignment.py`` runs it).

    python benchmarks/reassign_bench.py [--partitions 3] [--mb-per-partition 8] [--throttle-mb 2] [--json out.json]

Two topics are placed on brokers 1-3 and filled alike (1 KiB records, acks=all) before anything moves. Each is then
moved to brokers 2-4 by ``kraftwire reassign-partitions --execute`` — the first unthrottled, the second with
``--throttle`` — so broker 4 copies every partition from its leader; the move is timed from the execute until
``--verify`` reports every partition completed (polled every 100 ms). Reported per mode: the bytes broker 4 had to
copy, the time, the copy rate, and for the throttled move the rate against the throttle (Kafka's replication quota
measures over an 11-second window, so a short move overshoots its bound by up to one fetch's worth, as Kafka's
does). Figures depend on the machine (2 shared cores here); they are reported, never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("KRAFTWIRE_ROOT") or Path(__file__).resolve().parents[1])
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

RECORD = 1024


def _reassign(*args: str) -> str:
    from kraftwire import cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["reassign-partitions", *args])
    if code != 0:
        raise SystemExit(f"reassign-partitions {' '.join(args)} failed ({code}):\n{out.getvalue()}")
    return out.getvalue()


def _fill(bootstrap: str, topic: str, partitions: int, per_partition: int) -> int:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20,
                         "queue.buffering.max.kbytes": 65536})
    failed: list[str] = []
    value = b"r" * RECORD
    count = per_partition // RECORD
    for n in range(count * partitions):
        while True:
            try:
                producer.produce(topic, value=value, partition=n % partitions,
                                 on_delivery=lambda err, _msg: err and failed.append(str(err)))
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
    if producer.flush(120) or failed:
        raise SystemExit(f"filling {topic} failed: {failed[:3]}")
    return count * partitions * RECORD


def _move(boot: str, plan: Path, throttle: int | None, timeout_s: float = 600.0) -> float:
    args = ["--bootstrap-server", boot, "--reassignment-json-file", str(plan)]
    started = time.monotonic()
    _reassign("--execute", *args, *(("--throttle", str(throttle)) if throttle else ()))
    while time.monotonic() - started < timeout_s:
        if "still in progress" not in _reassign("--verify", *args):
            return time.monotonic() - started
        time.sleep(0.1)
    raise SystemExit(f"the move of {plan.name} did not complete in {timeout_s:.0f} s")


def run(partitions: int, mb_per_partition: float, throttle_mb: float) -> dict:
    from harness import roles

    from kraftwire import cli

    props = ("inter.broker.listener.name=BROKER\nauto.leader.rebalance.enable=false\n"
             "offsets.topic.num.partitions=1\ntransaction.state.log.num.partitions=1\n")
    figures: dict = {"partitions": partitions, "mb_per_partition": mb_per_partition, "throttle_mb": throttle_mb,
                     "modes": []}
    with tempfile.TemporaryDirectory(prefix="reassign-bench-") as base:
        cluster = roles.RolesCluster(base, controllers=3, brokers=1, combined=True, kraft=True, extra_props=props)
        try:
            cluster.start_all()
            boot = ",".join(f"localhost:{cluster.nodes[i].port_of('BROKER')}" for i in (1, 2, 3))
            roles.wait_until(lambda: roles.broker_ids(cluster.nodes[1].port_of("CONTROLLER")) == [1, 2, 3, 4],
                             "four brokers registered", cluster)
            per_partition = int(mb_per_partition * 1024 * 1024)
            throttle = int(throttle_mb * 1024 * 1024)
            for mode, limit in (("unthrottled", None), ("throttled", throttle)):
                topic = f"moved-{mode}"
                layout = ",".join(":".join(str(1 + (p + r) % 3) for r in range(3)) for p in range(partitions))
                with contextlib.redirect_stdout(io.StringIO()):
                    if cli.main(["topics", "--bootstrap-server", boot, "--create", "--topic", topic,
                                 "--replica-assignment", layout]) != 0:
                        raise SystemExit(f"creating {topic} failed")
                copied = _fill(boot, topic, partitions, per_partition)
                plan = Path(base) / f"{mode}.json"
                plan.write_text(json.dumps({"version": 1, "partitions": [
                    {"topic": topic, "partition": p, "replicas": [2 + (p + r) % 3 for r in range(3)]}
                    for p in range(partitions)]}))
                seconds = _move(boot, plan, limit)
                row = {"mode": mode, "bytes": copied, "seconds": round(seconds, 2),
                       "mb_per_s": round(copied / seconds / 1024 / 1024, 2)}
                if limit:
                    row["rate_over_throttle"] = round(copied / seconds / limit, 2)
                figures["modes"].append(row)
        finally:
            cluster.close()
    return figures


def render(figures: dict) -> str:
    lines = [f"reassignment of {figures['partitions']} partitions x {figures['mb_per_partition']} MB "
             f"(brokers 1-3 -> 2-4; broker 4 copies every partition), throttle {figures['throttle_mb']} MB/s",
             "", "| move | MB copied | seconds | MB/s | rate / throttle |", "|---|---:|---:|---:|---:|"]
    for row in figures["modes"]:
        lines.append(f"| {row['mode']} | {row['bytes'] / 1024 / 1024:.1f} | {row['seconds']} | {row['mb_per_s']} | "
                     f"{row.get('rate_over_throttle', '')} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--mb-per-partition", type=float, default=8.0)
    parser.add_argument("--throttle-mb", type=float, default=2.0)
    parser.add_argument("--json")
    args = parser.parse_args()
    figures = run(args.partitions, args.mb_per_partition, args.throttle_mb)
    print(render(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
