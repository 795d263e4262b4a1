"""``kraftwire quickstart --raft``: a local N-node quorum running the test-server workload (Kafka's TestRaftServer:
commits to the Raft log itself, no brokers).

It formats temporary log directories, binds every node's listening socket itself *before* writing the voter list
(the sockets are handed to the nodes, so no port can be taken in between), starts the nodes as separate processes
(``kraftwire test-server``), forwards their records/s / ``bytes.committed.rate`` / ``commit.latency`` lines (the
leader's; at least one line every 5 s), and after ``--duration`` stops them with SIGTERM (graceful), prints a summary
and writes ``--json`` in the test server's shape.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import time

from kraftwire.tools.local_cluster import kraftwire_env

REPORT_INTERVAL_S = 5.0


def node_properties(node_id: int, port: int, voters: str, log_dir: str) -> str:
    return (f"node.id={node_id}\n"
            f"listeners=PLAINTEXT://127.0.0.1:{port}\n"
            "controller.listener.names=PLAINTEXT\n"
            f"controller.quorum.voters={voters}\n"
            f"log.dirs={log_dir}\n")


def run(args: argparse.Namespace) -> int:
    args.nodes = 3 if args.nodes is None else args.nodes
    args.duration = 30.0 if args.duration is None else args.duration
    args.throughput = 20000 if args.throughput is None else args.throughput
    args.record_size = 256 if args.record_size is None else args.record_size
    if args.nodes < 1:
        print("kraftwire quickstart: --nodes must be >= 1", file=sys.stderr)
        return 1
    bad = next((item for item in args.set if "=" not in item or not item.partition("=")[0].strip()), None)
    if bad is not None:
        print(f"kraftwire quickstart: --set takes KEY=VALUE, not {bad!r}", file=sys.stderr)
        return 1
    return asyncio.run(_main(args))


async def _main(args: argparse.Namespace) -> int:
    from kraftwire.config import load_config
    from kraftwire.ids import random_kafka_uuid, uuid_to_base64
    from kraftwire.tools.storage import format_storage

    base = args.dir or tempfile.mkdtemp(prefix="kraftwire-quickstart-")
    os.makedirs(base, exist_ok=True)
    sockets = []
    for _ in range(args.nodes):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        s.listen(128)
        s.set_inheritable(True)
        sockets.append(s)
    ports = [s.getsockname()[1] for s in sockets]
    voters = ",".join(f"{i + 1}@127.0.0.1:{p}" for i, p in enumerate(ports))
    cluster_id = uuid_to_base64(random_kafka_uuid())
    configs = []
    for i, port in enumerate(ports, start=1):
        path = os.path.join(base, f"node-{i}.properties")
        with open(path, "w", encoding="utf-8") as f:
            f.write(node_properties(i, port, voters, os.path.join(base, f"kraft-logs-{i}")))
            f.write("".join(f"{item}\n" for item in args.set))
        format_storage(load_config(path).validate(), cluster_id)
        configs.append(path)
    print(f"kraftwire quickstart: {args.nodes} node(s), cluster {cluster_id}, data in {base}", flush=True)
    print(f"voters: {voters}", flush=True)
    env = kraftwire_env()
    procs = []
    for i, (path, s) in enumerate(zip(configs, sockets), start=1):
        cmd = [sys.executable, "-m", "kraftwire", "test-server", "--config", path,
               "--listener-fd", f"PLAINTEXT={s.fileno()}", "--throughput", str(args.throughput),
               "--record-size", str(args.record_size), "--records-per-append", str(args.records_per_append),
               "--json", os.path.join(base, f"node-{i}.json"), "--report-interval", str(REPORT_INTERVAL_S)]
        log_file = open(os.path.join(base, f"node-{i}.log"), "wb")
        proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE, stderr=log_file,
                                                    pass_fds=(s.fileno(),), env=env)
        log_file.close()
        procs.append(proc)
    for s in sockets:
        s.close()
    started = time.monotonic()
    last_line = [time.monotonic()]
    readers = [asyncio.get_running_loop().create_task(_forward(i, p, last_line)) for i, p in enumerate(procs, 1)]
    status_task = asyncio.get_running_loop().create_task(_print_status(ports))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        while time.monotonic() - started < args.duration and not stop.is_set():
            if any(p.returncode is not None for p in procs):
                print("kraftwire quickstart: a node exited early; see its log in " + base, file=sys.stderr)
                break
            try:
                await asyncio.wait_for(stop.wait(), 1.0)
            except asyncio.TimeoutError:
                pass
            if time.monotonic() - last_line[0] >= REPORT_INTERVAL_S + 0.5:
                print("records/s: 0.0 (no leader is committing yet)", flush=True)
                last_line[0] = time.monotonic()
    finally:
        status_task.cancel()
        for p in procs:
            if p.returncode is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                await asyncio.wait_for(p.wait(), 20)
            except asyncio.TimeoutError:
                p.kill()
                await p.wait()
        for r in readers:
            try:
                await asyncio.wait_for(r, 5)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
    elapsed = time.monotonic() - started
    summary = merge_summaries([os.path.join(base, f"node-{i}.json") for i in range(1, args.nodes + 1)])
    codes = [p.returncode for p in procs]
    summary["nodes"] = args.nodes
    summary["duration_s"] = round(elapsed, 1)
    lat = summary["commit_latency_ms"]
    print(f"summary: {summary['records_per_sec']:.1f} records/s committed ({summary['mb_per_sec']:.3f} MB/s), "
          f"commit latency p50 {lat['p50']:.1f} ms p75 {lat['p75']:.1f} ms p99 {lat['p99']:.1f} ms "
          f"p99.9 {lat['p999']:.1f} ms over {elapsed:.1f} s; exit codes {codes}", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
    if not (args.keep or args.dir) and all(c == 0 for c in codes):
        shutil.rmtree(base, ignore_errors=True)
    else:  # the nodes have stopped: what is left to look at is their logs
        print(f"kept {base}; the nodes have stopped. Their log: kraftwire dump-log --files "
              f"{base}/kraft-logs-1/__raft_performance_test-0/00000000000000000000.log", flush=True)
    return 0 if all(c == 0 for c in codes) else 1


async def _forward(node_id: int, proc, last_line) -> None:
    assert proc.stdout is not None
    while True:
        line = await proc.stdout.readline()
        if not line:
            return
        text = line.decode(errors="replace").rstrip()
        if text.startswith("records/s:") and not text.startswith("records/s: 0.0,"):
            print(f"[node {node_id}] {text}", flush=True)
            last_line[0] = time.monotonic()


async def _print_status(ports) -> None:
    from kraftwire.tools.metadata_quorum import fetch_quorum, status_lines

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        await asyncio.sleep(1.0)
        try:
            quorum, cluster = await fetch_quorum("127.0.0.1", ports[0], timeout=2)
        except Exception:  # noqa: BLE001 - best effort: the nodes may still be starting
            continue
        part = quorum.topics[0].partitions[0]
        if part.error_code == 0 and part.leader_id >= 0:
            print("\n".join(status_lines(quorum, cluster)), flush=True)
            return


def merge_summaries(paths: list[str]) -> dict:
    """Records and bytes of all nodes (each counts only the epochs it led) over the time from the first commit any of
    them saw to the last node's end; latency percentiles are those of the node that committed the most."""
    best, records, size, first, end = None, 0, 0, None, None
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        records += data.get("records", 0)
        size += data.get("bytes", 0)
        if data.get("first_commit_unix") is not None:
            first = data["first_commit_unix"] if first is None else min(first, data["first_commit_unix"])
            end = data["end_unix"] if end is None else max(end, data["end_unix"])
        if best is None or data.get("records", 0) > best.get("records", 0):
            best = data
    seconds = max((end - first) if first is not None else 0.0, 1e-9)
    latency = (best or {}).get("commit_latency_ms") or {"p50": 0.0, "p75": 0.0, "p99": 0.0, "p999": 0.0}
    return {"records_per_sec": round(records / seconds, 1), "mb_per_sec": round(size / seconds / 1e6, 3),
            "commit_latency_ms": latency, "records": records, "seconds": round(seconds if first else 0.0, 3)}
