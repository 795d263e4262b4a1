"""Quorum benchmark: three real node processes on this machine, fsync on, 256-byte records.

    python benchmarks/quorum_bench.py [--duration 20] [--json out.json]

Rows:
* committed records/s with ``--throughput -1`` for K = 1 and K = 100 records per append (``kraftwire quickstart --raft``);
* commit latency p50/p99 at 20,000 records/s (Kafka's test server rate; append.linger.ms = 25 as Kafka);
* failover after SIGKILL of the leader: time until another node is leader, and until it commits again.

Figures depend on the machine (2 shared cores here); they are reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time




def _env() -> dict:
    from kraftwire.tools.local_cluster import kraftwire_env

    return kraftwire_env()


def quickstart(duration: float, throughput: int, k: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "summary.json")
        subprocess.run([sys.executable, "-m", "kraftwire", "quickstart", "--raft", "--duration", str(duration),
                        "--throughput", str(throughput), "--records-per-append", str(k), "--json", out],
                       check=True, env=_env(), stdout=subprocess.DEVNULL, timeout=duration + 120)
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def _leader(port: int):
    from kraftwire.tools.metadata_quorum import fetch_quorum

    try:
        quorum, _ = asyncio.run(fetch_quorum("127.0.0.1", port, timeout=1.0))
    except Exception:  # noqa: BLE001
        return None
    part = quorum.topics[0].partitions[0]
    return part if part.error_code == 0 and part.leader_id >= 0 else None


def failover(rounds: int = 3) -> list[dict]:
    from kraftwire.config import load_config
    from kraftwire.ids import random_kafka_uuid, uuid_to_base64
    from kraftwire.tools.storage import format_storage

    results = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            socks = []
            for _ in range(3):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", 0))
                s.listen(128)
                s.set_inheritable(True)
                socks.append(s)
            ports = [s.getsockname()[1] for s in socks]
            voters = ",".join(f"{i}@127.0.0.1:{p}" for i, p in enumerate(ports, 1))
            cid = uuid_to_base64(random_kafka_uuid())
            procs = {}
            for i, s in enumerate(socks, 1):
                path = os.path.join(tmp, f"n{i}.properties")
                with open(path, "w") as f:
                    f.write(f"node.id={i}\nlisteners=PLAINTEXT://127.0.0.1:{ports[i - 1]}\n"
                            f"controller.listener.names=PLAINTEXT\ncontroller.quorum.voters={voters}\n"
                            f"log.dirs={tmp}/logs-{i}\n")
                format_storage(load_config(path), cid)
                procs[i] = subprocess.Popen(
                    [sys.executable, "-m", "kraftwire", "test-server", "--config", path, "--throughput", "2000",
                     "--listener-fd", f"PLAINTEXT={s.fileno()}"], pass_fds=(s.fileno(),), env=_env(),
                    stdout=subprocess.DEVNULL, stderr=open(os.path.join(os.environ.get("KW_BENCH_LOGS", tmp), f"node-{i}.log"), "ab"))
            try:
                deadline = time.monotonic() + 30
                part = None
                while time.monotonic() < deadline and (part is None or part.high_watermark < 500):
                    part = _leader(ports[0])
                    time.sleep(0.1)
                assert part is not None, "no leader"
                old, hw = part.leader_id, part.high_watermark
                killed = time.monotonic()
                procs[old].send_signal(signal.SIGKILL)
                procs[old].wait()
                probe = ports[(old % 3)]  # a survivor
                elected = committed = None
                while time.monotonic() < killed + 30:
                    p = _leader(probe)
                    if p is not None and p.leader_id != old:
                        elected = elected or time.monotonic() - killed
                        if p.high_watermark > hw + 100:
                            committed = time.monotonic() - killed
                            break
                    time.sleep(0.02)
                results.append({"elected_s": round(elected or -1, 2), "committing_s": round(committed or -1, 2)})
            finally:
                for p in procs.values():
                    if p.poll() is None:
                        p.send_signal(signal.SIGTERM)
                for p in procs.values():
                    try:
                        p.wait(20)
                    except subprocess.TimeoutExpired:
                        p.kill()
                for s in socks:
                    s.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    results = {
        "unthrottled_k1": quickstart(args.duration, -1, 1),
        "unthrottled_k100": quickstart(args.duration, -1, 100),
        "rate_20000_k1": quickstart(args.duration, 20000, 1),
        "failover_after_sigkill": failover(),
    }
    print("| scenario | committed records/s | p50 ms | p99 ms |")
    print("| --- | ---: | ---: | ---: |")
    for name in ("unthrottled_k1", "unthrottled_k100", "rate_20000_k1"):
        r = results[name]
        print(f"| {name} | {r['records_per_sec']:.0f} | {r['commit_latency_ms']['p50']:.1f} | "
              f"{r['commit_latency_ms']['p99']:.1f} |")
    for i, r in enumerate(results["failover_after_sigkill"], 1):
        print(f"failover {i}: new leader after {r['elected_s']} s, committing after {r['committing_s']} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
