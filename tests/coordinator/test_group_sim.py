"""The seeded group coordinator simulation (``kraftwire.testing.group_sim``): the pure shard, hosted by the real
coordinator runtime, across coordinator moves, with its invariants checked after every event and convergence
required once the faults stop.
``KRAFTWIRE_SIM_SEEDS`` seeds (default 100; ``--sim-seeds N``)."""

from __future__ import annotations

import os

import pytest

from kraftwire import error_codes as ec
from kraftwire.coordinator import runtime as rt
from kraftwire.coordinator.group import shard as gs
from kraftwire.testing import group_sim

SEEDS = int(os.environ.get("KRAFTWIRE_SIM_SEEDS", "100"))
EVENTS = 1500


@pytest.mark.parametrize("seed", range(SEEDS))
def test_group_simulation(seed):
    group_sim.GroupSim(seed, EVENTS).run()


def test_the_runs_reach_the_interesting_paths():
    totals: dict[str, int] = {}
    for seed in range(20):
        for k, v in group_sim.GroupSim(5000 + seed, EVENTS).run().items():
            totals[k] = totals.get(k, 0) + v
    for path in ("moves", "commits_acked", "commits_failed", "generations", "lost_replies", "stable_checks",
                 "reload_checks", "next_heartbeats", "next_revocations", "next_commits_acked", "next_lost_answers"):
        assert totals[path] > 20, (path, totals)
    assert totals["next_fenced"] > 0, totals
    for path in ("share_heartbeats", "share_initialized", "share_fenced", "share_lost_answers"):
        assert totals[path] > 10, (path, totals)
    assert totals["share_init_failed"] > 0, totals


def _first_failure(seeds=range(30)) -> str:
    for seed in seeds:
        try:
            group_sim.GroupSim(seed, 800).run()
        except group_sim.SimFailure as exc:
            return str(exc)
    raise AssertionError("the broken rule went unnoticed")


def test_a_committed_view_that_does_not_wait_for_the_high_watermark_is_caught(monkeypatch):
    real = gs.GroupShard.advance

    def advance(self, high_watermark):
        real(self, 1 << 62)

    monkeypatch.setattr(gs.GroupShard, "advance", advance)
    message = _first_failure()
    assert "is not the log below the high watermark" in message
    assert "replay: python -m kraftwire.testing.group_sim --seed" in message


def test_answering_a_commit_before_it_is_replicated_is_caught(monkeypatch):
    # the runtime's bug: a write's replies do not wait for the high watermark
    monkeypatch.setattr(rt.CoordinatorRuntime, "_await_commit", lambda self, h, end, done: done(ec.NONE))
    assert "was answered, the coordinator says" in _first_failure()


def test_a_load_that_stops_at_the_high_watermark_is_caught(monkeypatch):
    # the runtime's bug: the records above the high watermark are left out of a load
    monkeypatch.setattr(rt.CoordinatorRuntime, "_load_end", lambda self, h: h.writer.high_watermark())
    _first_failure()


def test_a_failed_write_answered_as_a_success_is_caught(monkeypatch):
    """The simulation drives the runtime the broker runs: a runtime that refuses a failed write's replies with no
    error (its mapping of the partition's error broken) has a commit answered that the next coordinator lost."""
    monkeypatch.setattr(rt, "write_error", lambda error: ec.NONE)
    assert "was answered, the coordinator says" in _first_failure()


def test_a_leader_assignment_applied_twice_is_caught(monkeypatch):
    real = gs.GroupShard.sync_group

    def sync(self, body, version, token, now_ms):
        g = self.groups.get(body.group_id)
        if g is not None and body.member_id == g.leader and body.assignments:
            body.assignments = [type(a)(member_id=a.member_id, assignment=body.assignments[0].assignment)
                                for a in body.assignments]
        return real(self, body, version, token, now_ms)

    monkeypatch.setattr(gs.GroupShard, "sync_group", sync)
    assert "assigned twice" in _first_failure()


def test_a_consumer_group_that_hands_out_unreleased_partitions_is_caught(monkeypatch):
    from kraftwire.coordinator.group import consumer as cgp

    monkeypatch.setattr(cgp.ConsumerGroup, "owner_of", lambda self, topic_id, partition, but: False)
    assert "held by" in _first_failure()


def test_a_replay_that_forgets_current_assignments_is_caught(monkeypatch):
    from kraftwire.coordinator.group import consumer as cgp

    real = cgp.replay

    def replay(groups, rec):
        if rec.record_type != 8:
            real(groups, rec)

    monkeypatch.setattr(cgp, "replay", replay)
    assert "consumer group loaded from the log differs" in _first_failure()


def test_a_share_group_assigning_uninitialized_partitions_is_caught(monkeypatch):
    """A share assignor handed every subscribed partition, whether the share coordinator initialized its state or
    not: a member could be sent to fetch from a share-partition that does not exist yet."""
    from kraftwire.coordinator.group import share_protocol

    real = share_protocol.assign

    def assign(subscriptions, assignable, current):
        return real(subscriptions, {group_sim.TOPIC_ID: set(range(group_sim.PARTITIONS))}, current)

    monkeypatch.setattr(share_protocol, "assign", assign)
    assert "is assigned uninitialized partitions" in _first_failure()


def test_a_share_group_replay_that_drops_member_assignments_is_caught(monkeypatch):
    """Loading forgets the members' current assignments (ShareGroupCurrentMemberAssignment records): a new
    coordinator would tell members other epochs than the old one did."""
    from kraftwire.coordinator.group import share as sgp

    real = sgp.replay

    def replay(groups, rec, timestamp=-1):
        if rec.record_type != sgp.CURRENT_ASSIGNMENT:
            real(groups, rec, timestamp)

    monkeypatch.setattr(sgp, "replay", replay)
    assert "the share group loaded from the log differs from the live one" in _first_failure()
