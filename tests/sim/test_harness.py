"""The harness itself: a cluster that never commits fails liveness, each invariant can fail, replay works."""

from __future__ import annotations

import pytest

from kraftwire.ids import NO_ID, ReplicaKey
from kraftwire.raft import messages as m
from kraftwire.raft.election import ElectionState
from kraftwire.testing.invariants import InvariantViolation, Invariants
from kraftwire.testing.replay import main as replay
from kraftwire.testing.sim import Cluster, NetworkFaults, SimulationFailure


def test_a_cluster_that_never_commits_fails_liveness():
    cluster = Cluster(3, voters=3, faults=NetworkFaults(drop_rate=1.0), replay="replay-me")
    cluster.start_workload()
    with pytest.raises(SimulationFailure, match="liveness") as info:
        cluster.run_until(lambda: cluster.committed_offset() >= 10, 3000, "commits")
    assert "replay: replay-me" in str(info.value)


def test_single_leader_invariant():
    inv = Invariants(frozenset({1, 2, 3}))
    inv.on_persist(1, ElectionState(2, 1, ReplicaKey(1)))
    with pytest.raises(InvariantViolation, match="single-leader"):
        inv.on_persist(2, ElectionState(2, 2, ReplicaKey(2)))


def test_double_vote_and_monotonic_epoch_invariants():
    inv = Invariants(frozenset({1, 2, 3}))
    inv.on_persist(3, ElectionState(4, NO_ID, ReplicaKey(1)))
    with pytest.raises(InvariantViolation, match="no-double-vote"):
        inv.on_send(m.VoteResponse(3, 2, 1, m.NONE, NO_ID, 4, vote_granted=True), ElectionState(4, NO_ID,
                    ReplicaKey(2)), 0)
    with pytest.raises(InvariantViolation, match="monotonic-epoch"):
        inv.on_persist(3, ElectionState(3))


def test_vote_granted_before_persisting_is_caught():
    inv = Invariants(frozenset({1, 2, 3}))
    with pytest.raises(InvariantViolation, match="durable-before-send"):
        inv.on_send(m.VoteResponse(3, 2, 1, m.NONE, NO_ID, 4, vote_granted=True), ElectionState(3), 0)


def test_fetch_past_flush_is_caught():
    inv = Invariants(frozenset({1, 2, 3}))
    req = m.FetchRequest(2, 1, 1, "c", replica_id=2, replica_epoch=-1, current_leader_epoch=1, fetch_offset=5,
                         last_fetched_epoch=1, max_wait_ms=0, max_bytes=100)
    inv.on_send(req, None, 5)
    with pytest.raises(InvariantViolation, match="durable-before-send"):
        inv.on_send(req, None, 4)


def test_leader_hw_must_not_go_back_and_leader_must_not_restart_into_its_epoch():
    inv = Invariants(frozenset({1, 2, 3}))
    inv.on_leader(1, 2, 1, 10)
    with pytest.raises(InvariantViolation, match="monotonic-hw"):
        inv.on_leader(1, 2, 1, 9)
    with pytest.raises(InvariantViolation, match="monotonic-hw"):
        inv.on_leader(2, 3, 1, 8)
    with pytest.raises(InvariantViolation, match="leader-restart"):
        inv.on_leader(1, 2, 2, 10)


def test_replay_command(capsys):
    assert replay(["elect_initial_leader", "--seed", "3"]) == 0
    assert replay(["elect_initial_leader", "--seed", "0", "--mutation", "fetch_past_flush"]) == 1
    assert "durable-before-send" in capsys.readouterr().out


def _voters_log(*sets, flush=True):
    """A leader's log (epoch 1): one data batch, then a VotersRecord batch per voter set in ``sets``."""
    from kraftwire.log.memory import MemoryLog
    from kraftwire.records import RecordBatchBuilder
    from kraftwire.records.control import voters_batch

    log = MemoryLog()
    log.initialize_leader_epoch(1)
    builder = RecordBatchBuilder(base_offset=0, partition_leader_epoch=1)
    builder.append(None, b"v0", timestamp=0)
    log.append_as_leader(builder.build(), 1)
    for voters in sets:
        # a fixed timestamp: two logs built from the same sets hold the same bytes, whenever each is built
        log.append_as_leader(voters_batch(voters.to_record(), epoch=1, base_offset=log.end_offset(), timestamp=0), 1)
    if flush:
        log.flush()
    return log


def _keys(*ids):
    import uuid

    from kraftwire.raft.voter_set import VoterNode, VoterSet

    return VoterSet.of(VoterNode(ReplicaKey(i, uuid.UUID(int=i))) for i in ids)


def test_two_uncommitted_voter_changes_in_a_leader_log_are_caught():
    inv = Invariants(frozenset({1}))
    inv.enable_dynamic(_keys(1))
    inv.check_leader_voters(1, 1, _voters_log(_keys(1, 2)), None, lambda key: None)  # one pending change: fine
    with pytest.raises(InvariantViolation, match="one-voter-change"):
        inv.check_leader_voters(1, 1, _voters_log(_keys(1, 2), _keys(1, 2, 3)), None, lambda key: None)


def test_a_high_watermark_not_held_by_a_majority_of_the_set_in_force_is_caught():
    """{1, 2} is in force in the leader's log: node 1 alone holding the new high watermark is not a majority."""
    inv = Invariants(frozenset({1}))
    inv.enable_dynamic(_keys(1))
    leader_log = _voters_log(_keys(1, 2))
    other_disk = _voters_log(_keys(1, 2))
    disks = {ReplicaKey(1, _keys(1).nodes[0].key.directory_id): leader_log}
    with pytest.raises(InvariantViolation, match="majority-of-voter-set"):
        inv.check_leader_voters(1, 1, leader_log, 2, lambda key: disks.get(key))
    disks[_keys(2).nodes[0].key] = other_disk  # voter 2's own disk holds it too: a majority
    inv.check_leader_voters(1, 2, leader_log, 2, lambda key: disks.get(key))
