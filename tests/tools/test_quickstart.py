"""``kraftwire quickstart``: a local KRaft cluster of ``server-start`` processes with a produce/consume workload
through a replicated topic (its lines, its JSON summary, a clean stop that removes its directory; ``--keep`` leaves
the cluster running and says how to use and stop it), and ``--raft``, the Raft test-server workload on a quorum."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

from harness import processes


def _quickstart(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "kraftwire", "quickstart", *args], capture_output=True, text=True,
                          env=processes.kraftwire_env(), timeout=timeout)
    print(proc.stdout)
    return proc


def test_quickstart_runs_three_combined_nodes_and_a_workload_then_cleans_up(tmp_path):
    out_json = tmp_path / "summary.json"
    env = {**processes.kraftwire_env(), "TMPDIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "kraftwire", "quickstart", "--duration", "4", "--throughput", "1000",
                           "--json", str(out_json)], capture_output=True, text=True, env=env, timeout=180)
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("kraftwire quickstart: 3 combined (broker+controller) nodes, cluster ")
    assert re.match(r"nodes up after [\d.]+ s: 1 \(broker,controller\), 2 \(broker,controller\), "
                    r"3 \(broker,controller\); bootstrap servers 127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$",
                    lines[1]), lines[1]
    assert "PartitionCount: 3\tReplicationFactor: 3\t" in proc.stdout
    assert len(re.findall(r"\tIsr: \d,\d,\d\t", proc.stdout)) == 3
    summary = json.loads(out_json.read_text())
    assert summary["produced"] > 0 and summary["consumed"] == summary["produced"] and summary["lag"] == 0
    assert summary["failed"] == 0 and summary["replication_factor"] == 3 and summary["nodes"] == 3
    assert set(summary["latency_ms"]) == {"p50", "p95", "p99", "p999"}
    total = next(line for line in lines if "ms 99.9th." in line)  # kafka-producer-perf-test.sh's closing line
    assert total.startswith(f"{summary['produced']} records sent, "), total
    assert (f"consumer group quickstart-group: consumed {summary['produced']} of {summary['produced']} records, "
            "committed; lag 0") in lines
    table = [line.split() for line in lines if line.startswith("quickstart-group quickstart-events ")]
    assert sorted(row[2] for row in table) == ["0", "1", "2"] and all(row[5] == "0" for row in table), table
    assert sum(int(row[3]) for row in table) == summary["produced"]
    assert lines[-1].startswith("nodes stopped (exit codes [0, 0, 0]) after ")
    assert not [p for p in os.listdir(tmp_path) if p.startswith("kraftwire-quickstart-")]  # its directory is gone


def test_quickstart_keep_leaves_controllers_and_brokers_running(tmp_path):
    proc = _quickstart("--controllers", "1", "--brokers", "2", "--duration", "2", "--throughput", "500", "--dir",
                       str(tmp_path / "qs"), "--keep")
    pids = []
    try:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "1 controllers and 2 brokers" in proc.stdout.splitlines()[0]
        assert "1 (controller), 2 (broker), 3 (broker)" in proc.stdout
        assert "PartitionCount: 3\tReplicationFactor: 2\t" in proc.stdout
        stop = next(line for line in proc.stdout.splitlines() if line.startswith("Stop it: kill "))
        pids = [int(p) for p in stop.removeprefix("Stop it: kill ").split(" && ")[0].split()]
        assert len(pids) == 3
        bootstrap = re.search(r"Bootstrap servers: (\S+)", proc.stdout).group(1)
        # the printed commands work against the cluster left running
        listed = processes.kw("topics", "--bootstrap-server", bootstrap, "--list").stdout
        assert listed.split() == ["__consumer_offsets", "quickstart-events"]
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while pids and time.monotonic() < deadline:
            pids = [pid for pid in pids if _alive(pid)]
            time.sleep(0.2)
    assert pids == []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie (its parent, the quickstart, has exited) has stopped
        return f.read().split()[2] != "Z"


def test_quickstart_raft_runs_the_test_server_workload(tmp_path):
    out_json = tmp_path / "summary.json"
    proc = _quickstart("--raft", "--nodes", "3", "--duration", "15", "--throughput", "2000", "--json", str(out_json),
                       "--dir", str(tmp_path / "qs"), "--set", "kraftwire.quorum.high.watermark.linger.ms=0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(out_json.read_text())
    assert set(summary) >= {"records_per_sec", "mb_per_sec", "commit_latency_ms"}
    assert set(summary["commit_latency_ms"]) == {"p50", "p75", "p99", "p999"}
    assert summary["records"] > 0 and summary["records_per_sec"] > 0
    assert "LeaderId:" in proc.stdout
    assert "bytes.committed.rate" in proc.stdout and "commit.latency" in proc.stdout
    assert "summary:" in proc.stdout and "exit codes [0, 0, 0]" in proc.stdout
    for i in (1, 2, 3):
        assert (tmp_path / "qs" / f"kraft-logs-{i}" / "meta.properties").exists()
        # --set added the property to every node's file
        assert "kraftwire.quorum.high.watermark.linger.ms=0\n" in (tmp_path / "qs" / f"node-{i}.properties").read_text()


def test_quickstart_refuses_what_does_not_fit_together():
    for args, message in [
        (["--set", "linger"], "--set takes KEY=VALUE, not 'linger'"),
        (["--raft", "--brokers", "2"], "--raft runs a quorum of --nodes voters; --combined, --controllers and --brokers "
                                    "shape a cluster"),
        (["--nodes", "3"], "--nodes and --records-per-append belong to --raft; shape a cluster with --combined N "
                          "or --controllers M --brokers N"),
        (["--combined", "3", "--brokers", "2"], "give --combined N, or --controllers M --brokers N, not both"),
        (["--controllers", "0"], "a cluster needs at least one controller and one broker"),
    ]:
        proc = _quickstart(*args, timeout=60)
        assert (proc.returncode, proc.stderr) == (1, f"kraftwire quickstart: {message}\n"), (args, proc.stderr)
