"""``kraftwire quickstart`` runs a 3-node quorum as processes, prints the workload lines and a summary, writes the
JSON shape of the test server, tells the user where to point kcat, and shuts everything down cleanly."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import kraftwire


def test_quickstart_three_nodes(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(kraftwire.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out_json = tmp_path / "summary.json"
    proc = subprocess.run([sys.executable, "-m", "kraftwire", "quickstart", "--nodes", "3", "--duration", "8",
                           "--throughput", "2000", "--json", str(out_json), "--dir", str(tmp_path / "qs"),
                           "--set", "kraftwire.quorum.high.watermark.linger.ms=0"],
                          capture_output=True, text=True, env=env, timeout=120)
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(out_json.read_text())
    assert set(summary) >= {"records_per_sec", "mb_per_sec", "commit_latency_ms"}
    assert set(summary["commit_latency_ms"]) == {"p50", "p75", "p99", "p999"}
    assert summary["records"] > 0 and summary["records_per_sec"] > 0
    assert "LeaderId:" in proc.stdout
    assert "bytes.committed.rate" in proc.stdout and "commit.latency" in proc.stdout
    assert "summary:" in proc.stdout and "exit codes [0, 0, 0]" in proc.stdout
    assert "bootstrap servers: 127.0.0.1:" in proc.stdout and "__raft_performance_test" in proc.stdout
    for i in (1, 2, 3):
        assert (tmp_path / "qs" / f"kraft-logs-{i}" / "meta.properties").exists()
        # --set added the property to every node's file
        assert "kraftwire.quorum.high.watermark.linger.ms=0\n" in (tmp_path / "qs" / f"node-{i}.properties").read_text()


def test_quickstart_refuses_a_set_without_a_value(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(kraftwire.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-m", "kraftwire", "quickstart", "--set", "linger"], capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 1 and "--set takes KEY=VALUE, not 'linger'" in proc.stderr
