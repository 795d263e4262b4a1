"""An I/O error in the log directory stops the node at once (fail-stop, exit code 3, no clean-shutdown marker);
restarted without the fault it recovers from disk and commits again."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys

from harness import processes


def _limit_file_size():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))


def test_io_error_is_fail_stop_and_restart_recovers(make_cluster):
    cluster = make_cluster(1, extra_args=["--throughput", "20000"])
    node = cluster.nodes[1]
    proc = subprocess.run([sys.executable, "-m", "kraftwire", "test-server", "--config", node.config,
                           "--throughput", "20000", "--duration", "60",
                           "--listener-fd", f"PLAINTEXT={node.sock.fileno()}"], pass_fds=(node.sock.fileno(),),
                          preexec_fn=_limit_file_size,
                          capture_output=True, text=True, env=processes.kraftwire_env(), timeout=120)
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert "FATAL" in proc.stderr and "fail-stop" in proc.stderr and "File too large" in proc.stderr
    partition = os.path.join(node.log_dir, "__raft_performance_test-0")
    assert not os.path.exists(os.path.join(partition, "clean-shutdown"))
    before = processes.segment_batches(partition, check=False)  # torn tail: the write that failed
    node.start()
    part = cluster.wait_for_leader()
    cluster.wait_for(lambda p: p.high_watermark > (before[-1]["last_offset"] if before else 0) + 500,
                     "commits after recovery")
    assert part.leader_epoch >= 2
    assert cluster.stop_all() == {1: 0}
    after = processes.segment_batches(partition)
    committed_before = [b for b in before if b["last_offset"] < part.high_watermark]
    assert after[:len(committed_before)] == committed_before or not committed_before
