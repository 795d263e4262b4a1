"""A node whose id is not in controller.quorum.voters is an observer: it replicates the log without voting, and the
quorum reports it under CurrentObservers."""

from __future__ import annotations

import os

from harness import processes


def test_observer_replicates_without_voting(make_cluster):
    cluster = make_cluster(2, observers=1, extra_args=["--throughput", "1000"])
    cluster.start_all()
    first = cluster.wait_for_leader()
    assert first.leader_id == 1 and [v.replica_id for v in first.current_voters] == [1]

    def observer_caught_up(p):
        obs = [o for o in p.observers if o.replica_id == 2]
        return p.high_watermark > 500 and obs and obs[0].log_end_offset >= p.high_watermark

    part = cluster.wait_for(observer_caught_up, "the observer catches up")
    status = processes.kw("metadata-quorum", "--bootstrap-server", f"localhost:{cluster.nodes[2].port}", "describe",
                    "--status").stdout
    assert '"id": 2' in status.split("CurrentObservers:")[1]
    hw = part.high_watermark
    assert cluster.stop_all() == {1: 0, 2: 0}
    assert "is an observer" in cluster.nodes[2].stderr()
    logs = []
    for node in cluster.nodes.values():
        batches = processes.segment_batches(os.path.join(node.log_dir, "__raft_performance_test-0"))
        logs.append([(b["base_offset"], b["crc"]) for b in batches if b["last_offset"] < hw])
    assert logs[0] == logs[1] and logs[0]
