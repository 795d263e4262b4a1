"""A 3-node quorum in the README's shape, as real processes running the test-server workload: it elects a leader,
replicates, survives SIGKILL of the leader, the killed node rejoins, a graceful SIGTERM of a leader hands over
quickly (EndQuorumEpoch), and at the end every log holds the same batches up to the leader's high watermark.
Timings (election, failover) are printed, not asserted."""

from __future__ import annotations

import os
import time

from harness import processes


WORKLOAD = ["--throughput", "2000", "--records-per-append", "1"]


def _replica(part, node_id):
    for r in list(part.current_voters) + list(part.observers):
        if r.replica_id == node_id:
            return r
    return None


def _all_caught_up(part, hw_floor: int) -> bool:
    return part.high_watermark >= hw_floor and all(r.log_end_offset >= part.high_watermark
                                                   for r in part.current_voters)


def test_three_node_quorum_failover_rejoin_and_identical_logs(make_cluster):
    cluster = make_cluster(3, extra_args=WORKLOAD)
    t0 = time.monotonic()
    cluster.start_all()
    first = cluster.wait_for_leader()
    print(f"\nfirst election: leader {first.leader_id} epoch {first.leader_epoch} after "
          f"{time.monotonic() - t0:.2f} s (process start included)")
    part = cluster.wait_for(lambda p: p.high_watermark > 1000, "1000 committed offsets")
    assert len(part.current_voters) == 3

    # --- SIGKILL the leader -------------------------------------------------------------------------------------
    old = cluster.nodes[first.leader_id]
    hw_at_kill = part.high_watermark
    killed_at = time.monotonic()
    old.kill()
    second = cluster.wait_for_leader(exclude={old.node_id}, min_epoch=first.leader_epoch + 1)
    elected = time.monotonic() - killed_at
    cluster.wait_for(lambda p: p.leader_id == second.leader_id and p.high_watermark > hw_at_kill + 200,
                     "commits by the new leader")
    committing = time.monotonic() - killed_at
    print(f"failover after SIGKILL of leader {old.node_id}: new leader {second.leader_id} (epoch "
          f"{second.leader_epoch}) elected after {elected:.2f} s, committing again after {committing:.2f} s")
    assert second.leader_epoch > first.leader_epoch

    # --- the killed node recovers and rejoins ----------------------------------------------------------------------
    old.start()
    rejoin_from = time.monotonic()
    target = cluster.wait_for(lambda p: True, "a view").high_watermark
    cluster.wait_for(lambda p: _replica(p, old.node_id) is not None
                     and _replica(p, old.node_id).log_end_offset >= target, f"node {old.node_id} catches up")
    print(f"node {old.node_id} rejoined and caught up to {target} in {time.monotonic() - rejoin_from:.2f} s")

    # --- graceful SIGTERM of the current leader: resigns with EndQuorumEpoch, quick election -------------------
    view = cluster.wait_for(lambda p: True, "a view")
    leader = cluster.nodes[view.leader_id]
    stopped_at = time.monotonic()
    assert leader.terminate() == 0
    third = cluster.wait_for_leader(exclude={leader.node_id}, min_epoch=view.leader_epoch + 1)
    print(f"graceful handover: leader {leader.node_id} stopped with SIGTERM, leader {third.leader_id} (epoch "
          f"{third.leader_epoch}) elected {time.monotonic() - stopped_at:.2f} s after the signal")
    assert "resigns leadership" in leader.stderr()
    assert "EndQuorumEpoch" in leader.stderr()
    leader.start()

    # --- every log identical up to the leader's high watermark --------------------------------------------------
    final = cluster.wait_for(lambda p: _all_caught_up(p, view.high_watermark + 100)
                             and len(p.current_voters) == 3, "all three voters caught up")
    hw = final.high_watermark
    codes = cluster.stop_all()
    assert codes == {1: 0, 2: 0, 3: 0}, codes
    logs = {}
    for node in cluster.nodes.values():
        batches = processes.segment_batches(os.path.join(node.log_dir, "__raft_performance_test-0"))
        assert batches, f"node {node.node_id} has an empty log"
        assert all(b["crc_valid"] for b in batches)
        assert batches[-1]["last_offset"] + 1 >= hw, f"node {node.node_id} log end below the high watermark {hw}"
        expected = 0
        for b in batches:  # contiguous
            assert b["base_offset"] == expected, (node.node_id, b)
            expected = b["last_offset"] + 1
        logs[node.node_id] = [(b["base_offset"], b["last_offset"], b["partition_leader_epoch"], b["crc"])
                              for b in batches if b["last_offset"] < hw]
    assert logs[1] == logs[2] == logs[3]
    epochs = sorted({b[2] for b in logs[1]})
    assert len(epochs) >= 3, epochs
    for node in cluster.nodes.values():
        assert "WorkloadError" not in node.stderr() and "error" not in node.stdout().lower()
    print(f"logs identical on all three nodes up to high watermark {hw} ({len(logs[1])} batches, epochs {epochs})")
    assert time.monotonic() - t0 < 10 * processes.ELECTION_TIMEOUT_S
