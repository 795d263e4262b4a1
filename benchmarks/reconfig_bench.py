"""Voter-change benchmark (issue 17, KIP-853): how fast a new voter counts, and what a change costs the workload.

    python benchmarks/reconfig_bench.py [--cycles 5] [--steady-s 3] [--json F]

Real processes on this machine, Kafka 4's quickstart shape: node 1 runs ``broker,controller`` formatted with
``--standalone``; nodes 2 and 3 are controllers formatted with ``--no-initial-controllers`` that start as observers.
A workload sends IncrementalAlterConfigs to node 1's broker listener, one request at a time (each writes one
ConfigRecord and is answered once it is committed): its latency is the commit latency of the quorum.

1. Node 2 is added (AddRaftVoter, then the quorum is {1, 2}). Then, ``--cycles`` times: node 3 is added, the workload
   runs ``--steady-s`` seconds, node 3 is removed, the workload runs ``--steady-s`` seconds.
2. **Time to count.** An AddRaftVoter is answered when its VotersRecord is committed by a majority of the new set,
   that is once the new voter has fetched the record and fetched again from past it: from the request to the answer
   is the time "from add-controller to the new voter counted in the high watermark" (the ApiVersions call to the
   new voter included). The issue's bound is 2 fetch round trips of a caught-up observer plus one commit; one
   commit of the workload in the quorum the change moves to costs about one fetch round trip (the leader's fsync,
   the follower's fetch, fsync and next fetch), so the bound is read as: the answer time less the ApiVersions call
   (Kafka's step 5, not a fetch) <= 3 x that quorum's commit p50. The leader measures its phases itself (its
   metrics endpoint: ``voter_change_api_versions_ms``, the ApiVersions call, and ``voter_change_commit_ms``, from its
   core taking the change to the VotersRecord committed); the goal is checked on the commit phase's mean. The
   client's whole wait is reported beside it (the ApiVersions call to the new voter, timed from this process too).
3. **Workload during a change.** Commits sent between an Add/Remove request and 1 s after its answer are "during";
   the others, once the change has settled, are "steady" for the quorum in force. The goal: p99 during <= 2 x the
   steady p99 of the larger of the two quorums (the one the change adds to or removes from).

Figures depend on the machine; reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from harness import processes  # noqa: E402

from kraftwire.log.meta_properties import read_meta_properties  # noqa: E402
from kraftwire.protocol import messages as w  # noqa: E402
from kraftwire.server.edge.client import KafkaConnection, request_once  # noqa: E402

TOPIC = "bench"
AFTER_CHANGE_S = 1.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _leader_phases(port: int) -> dict:
    """Mean of each voter-change phase the leader measured (its Prometheus histograms' sum / count)."""
    import re
    import urllib.request

    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    sums, counts = {}, {}
    for line in text.splitlines():
        found = re.match(r'kraftwire_(voter_change_\w+?)_(sum|count)(\{[^}]*\})? ([0-9.e+-]+)$', line)
        if found:
            key = found.group(1) + (found.group(3) or "")
            (sums if found.group(2) == "sum" else counts)[key] = float(found.group(4))
    return {k: round(sums[k] / counts[k], 2) for k in sums if counts.get(k)}


class Workload:
    """IncrementalAlterConfigs of one topic config, one request at a time: (send time, latency s, quorum)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.samples: list[tuple[float, float, str]] = []
        self.quorum = "{1}"
        self.stop = False

    async def run(self) -> None:
        conn = await KafkaConnection.open("127.0.0.1", self.port, timeout=10)
        R = w.IncrementalAlterConfigsRequest
        i = 0
        try:
            while not self.stop:
                i += 1
                body = R(resources=[R.AlterConfigsResource(resource_type=2, resource_name=TOPIC, configs=[
                    R.AlterableConfig(name="retention.ms", config_operation=0, value=str(86_400_000 + i))])],
                    validate_only=False)
                t0 = time.perf_counter()
                answer = await conn.request(body, 1, timeout=30)
                latency = time.perf_counter() - t0
                if answer.responses[0].error_code:
                    raise AssertionError(f"IncrementalAlterConfigs refused: {answer.responses[0]}")
                self.samples.append((t0, latency, self.quorum))
        finally:
            await conn.close()


async def _voter_change(port: int, body, version: int = 0):
    t0 = time.perf_counter()
    answer = await request_once("127.0.0.1", port, body, version, timeout=60)
    if answer.error_code:
        raise AssertionError(f"{type(body).__name__} refused: {answer.error_code} {answer.error_message}")
    return t0, time.perf_counter()


async def _observer_caught_up(port: int, node_id: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        part = await asyncio.to_thread(processes.leader_view, port)
        if part is not None:
            for o in part.observers:
                if o.replica_id == node_id and o.log_end_offset >= part.high_watermark > 0:
                    return
        await asyncio.sleep(0.05)
    raise AssertionError(f"node {node_id} never became a caught-up observer")


async def run(cycles: int, steady_s: float, base: str) -> dict:
    socks = {i: processes.bind_listener() for i in (1, 2, 3)}
    broker_sock = processes.bind_listener()
    ports = {i: s.getsockname()[1] for i, s in socks.items()}
    broker_port = broker_sock.getsockname()[1]
    metrics_port = _free_port()
    cluster_id = processes.kw("storage", "random-uuid").stdout.strip()
    configs = {}
    for i in (1, 2, 3):
        roles = "broker,controller" if i == 1 else "controller"
        listeners = f"PLAINTEXT://:{broker_port},CONTROLLER://:{ports[i]}" if i == 1 else f"CONTROLLER://:{ports[i]}"
        advertised = (f"PLAINTEXT://localhost:{broker_port},CONTROLLER://localhost:{ports[i]}" if i == 1
                      else f"CONTROLLER://localhost:{ports[i]}")
        configs[i] = os.path.join(base, f"node-{i}.properties")
        with open(configs[i], "w") as f:
            f.write(f"process.roles={roles}\nnode.id={i}\ncontroller.quorum.bootstrap.servers=localhost:{ports[1]}\n"
                    f"listeners={listeners}\nadvertised.listeners={advertised}\ncontroller.listener.names=CONTROLLER\n"
                    f"inter.broker.listener.name=PLAINTEXT\nlog.dirs={base}/n{i}\n"
                    + (f"kraftwire.metrics.port={metrics_port}\n" if i == 1 else "")
                    + 
                    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n")
        processes.kw("storage", "format", "-t", cluster_id, "-c", configs[i],
                     "--standalone" if i == 1 else "--no-initial-controllers")
    dirs = {i: read_meta_properties(f"{base}/n{i}").directory_id for i in (1, 2, 3)}
    procs = {}
    try:
        procs[1] = processes.start_server(configs[1], [socks[1], broker_sock], f"{base}/n1.log",
                                          {"CONTROLLER": socks[1], "PLAINTEXT": broker_sock})
        for i in (2, 3):
            procs[i] = processes.start_server(configs[i], [socks[i]], f"{base}/n{i}.log", {"CONTROLLER": socks[i]})
        deadline = time.monotonic() + 60
        while True:
            try:
                CT = w.CreateTopicsRequest
                answer = await request_once("127.0.0.1", broker_port, CT(topics=[CT.CreatableTopic(
                    name=TOPIC, num_partitions=1, replication_factor=1, assignments=[], configs=[])],
                    timeout_ms=30000, validate_only=False), 7, timeout=10)
                if answer.topics[0].error_code in (0, 36):
                    break
            except Exception:  # noqa: BLE001 - node 1 still starting
                pass
            if time.monotonic() > deadline:
                raise AssertionError("the topic could not be created")
            await asyncio.sleep(0.2)
        for i in (2, 3):
            await _observer_caught_up(ports[1], i)

        work = Workload(broker_port)
        task = asyncio.get_running_loop().create_task(work.run())
        changes: list[dict] = []

        async def change(kind: str, node: int, quorum_after: str, larger: str) -> None:
            A = w.AddRaftVoterRequest
            api_ms = None
            if kind == "add":
                await _observer_caught_up(ports[1], node)
                # what the leader's own ApiVersions call to the new voter (Kafka's step 5) costs, measured alike
                a0 = time.perf_counter()
                await request_once("localhost", ports[node], w.ApiVersionsRequest(
                    client_software_name="kraftwire", client_software_version="1"), 3, timeout=10)
                api_ms = (time.perf_counter() - a0) * 1000
                body = A(cluster_id=cluster_id, timeout_ms=30000, voter_id=node, voter_directory_id=dirs[node],
                         listeners=[A.Listener(name="CONTROLLER", host="localhost", port=ports[node])])
            else:
                body = w.RemoveRaftVoterRequest(cluster_id=cluster_id, voter_id=node, voter_directory_id=dirs[node])
            t0, t1 = await _voter_change(ports[1], body)
            changes.append({"kind": kind, "node": node, "start": t0, "end": t1, "larger": larger, "api_ms": api_ms})
            await asyncio.sleep(AFTER_CHANGE_S)
            work.quorum = quorum_after

        await asyncio.sleep(steady_s)
        await change("add", 2, "{1,2}", "{1,2}")
        await asyncio.sleep(steady_s)
        for _ in range(cycles):
            await change("add", 3, "{1,2,3}", "{1,2,3}")
            await asyncio.sleep(steady_s)
            await change("remove", 3, "{1,2}", "{1,2,3}")
            await asyncio.sleep(steady_s)
        work.stop = True
        await task
        leader_metrics = _leader_phases(metrics_port)
    finally:
        processes.stop_all(procs.values())

    def during(t: float) -> dict | None:
        return next((c for c in changes if c["start"] <= t <= c["end"] + AFTER_CHANGE_S), None)

    steady: dict[str, list[float]] = {}
    in_change: dict[str, list[float]] = {}
    for t, latency, quorum in work.samples:
        c = during(t)
        if c is None:
            steady.setdefault(quorum, []).append(latency)
        else:
            in_change.setdefault(f"{c['kind']} {c['node']}", []).append(latency)
    steady_stats = {q: {"n": len(v), "p50_ms": round(pct(v, 0.5) * 1000, 2), "p99_ms": round(pct(v, 0.99) * 1000, 2)}
                    for q, v in steady.items()}
    adds = [c for c in changes if c["kind"] == "add"]
    removes = [c for c in changes if c["kind"] == "remove"]
    add_ms: dict[str, list[float]] = {}
    api: dict[str, list[float]] = {}
    for c in adds:
        add_ms.setdefault(f"add {c['node']}", []).append((c["end"] - c["start"]) * 1000)
        api.setdefault(f"add {c['node']}", []).append(c["api_ms"])
    rows = {}
    for what, values in add_ms.items():
        quorum = "{1,2}" if what == "add 2" else "{1,2,3}"
        p50 = steady_stats[quorum]["p50_ms"]
        rows[what] = {"n": len(values), "median_ms": round(pct(values, 0.5), 2), "max_ms": round(max(values), 2),
                      "api_versions_ms": round(pct(api[what], 0.5), 2), "commit_p50_ms_after": p50}
    during_stats = {}
    for what, values in in_change.items():
        larger = "{1,2}" if what == "add 2" else "{1,2,3}"
        steady_p99 = steady_stats[larger]["p99_ms"]
        during_stats[what] = {"n": len(values), "p99_ms": round(pct(values, 0.99) * 1000, 2),
                              "steady_p99_ms": steady_p99,
                              "ratio": round(pct(values, 0.99) * 1000 / steady_p99, 2)}
    return {"steady": steady_stats, "time_to_count": rows, "during_change": during_stats,
            "leader_phases_mean_ms": leader_metrics,
            "remove_ms_median": round(pct([(c["end"] - c["start"]) * 1000 for c in removes], 0.5), 2),
            "commits": len(work.samples)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--steady-s", type=float, default=3.0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as base:
        result = asyncio.run(run(args.cycles, args.steady_s, base))
    print(json.dumps(result, indent=2))
    print("| quorum | commits | p50 | p99 |\n|---|---|---|---|")
    for q, s in result["steady"].items():
        print(f"| {q} steady | {s['n']} | {s['p50_ms']} ms | {s['p99_ms']} ms |")
    print("| change | AddRaftVoter answered at the client (median / max) | ApiVersions from this process |\n"
          "|---|---|---|")
    for what, r in result["time_to_count"].items():
        print(f"| {what} (n={r['n']}) | {r['median_ms']} / {r['max_ms']} ms | {r['api_versions_ms']} ms |")
    phases = result["leader_phases_mean_ms"]
    commit = next((v for k, v in phases.items() if k.startswith("voter_change_commit_ms") and "AddRaftVoter" in k), None)
    p50 = result["steady"].get("{1,2,3}", {}).get("p50_ms")
    print(f"leader's own means: {phases}")
    if commit is not None and p50:
        print("| time to count | mean | steady commit p50 {1,2,3} | ratio | goal |\n|---|---|---|---|---|")
        print(f"| AddRaftVoter, the leader's core taking it to its VotersRecord committed | {commit} ms | {p50} ms | "
              f"{commit / p50:.2f}x | <= 3x {'ok' if commit / p50 <= 3 else 'MISSED'} |")
    print("| during | commits | p99 | steady p99 | ratio | goal |\n|---|---|---|---|---|---|")
    for what, r in result["during_change"].items():
        print(f"| {what} | {r['n']} | {r['p99_ms']} ms | {r['steady_p99_ms']} ms | {r['ratio']}x "
              f"| <= 2x {'ok' if r['ratio'] <= 2 else 'MISSED'} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
