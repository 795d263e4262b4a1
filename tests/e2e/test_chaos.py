"""Seeded rounds of SIGKILL / SIGTERM of leaders and followers under the workload: after every round another leader
(or the same) makes progress, and at the end the three logs are identical up to the high watermark and no node
crashed, fail-stopped or saw a committed-offset mismatch. Recovery times are printed, not asserted."""

from __future__ import annotations

import os
import random
import time

from harness import processes

ROUNDS = 6


def test_kill_and_terminate_rounds(make_cluster):
    rng = random.Random(6)
    cluster = make_cluster(3, extra_args=["--throughput", "2000"])
    cluster.start_all()
    cluster.wait_for_leader()
    for round_no in range(ROUNDS):
        part = cluster.wait_for(lambda p: True, "a view")
        victim = cluster.nodes[rng.choice([part.leader_id, rng.randint(1, 3)])]
        how = rng.choice(["SIGKILL", "SIGTERM"])
        started = time.monotonic()
        if how == "SIGKILL":
            victim.kill()
        else:
            assert victim.terminate() == 0
        exclude = {victim.node_id} if victim.node_id == part.leader_id else set()
        now = cluster.wait_for_leader(exclude=exclude, min_epoch=part.leader_epoch)
        cluster.wait_for(lambda p: p.high_watermark > part.high_watermark + 100, "progress after the fault")
        print(f"round {round_no}: {how} node {victim.node_id} (leader {part.leader_id}, epoch {part.leader_epoch}) "
              f"-> leader {now.leader_id} epoch {now.leader_epoch}, committing after "
              f"{time.monotonic() - started:.2f} s")
        victim.start()
    final = cluster.wait_for(lambda p: all(r.log_end_offset >= p.high_watermark for r in p.current_voters)
                             and len(p.current_voters) == 3, "all voters caught up")
    hw = final.high_watermark
    assert cluster.stop_all() == {1: 0, 2: 0, 3: 0}
    logs = {}
    for node in cluster.nodes.values():
        batches = processes.segment_batches(os.path.join(node.log_dir, "__raft_performance_test-0"))
        logs[node.node_id] = [(b["base_offset"], b["last_offset"], b["crc"]) for b in batches if b["last_offset"] < hw]
        err = node.stderr()
        for bad in ("Traceback", "FATAL", "WorkloadError"):
            assert bad not in err, f"node {node.node_id}: {bad}\n{err[-3000:]}"
    assert logs[1] and logs[1] == logs[2] == logs[3]
    print(f"{ROUNDS} rounds: logs identical up to {hw} ({len(logs[1])} batches)")
