"""The simulation must actually exercise the rules it claims to check: every coverage counter is above zero over a
small mixed run (the full per-property counters are printed in the 'raft simulation coverage' summary)."""

from __future__ import annotations

from collections import Counter

import pytest

from kraftwire.testing.properties import PROPERTIES

pytestmark = pytest.mark.sim

REQUIRED = (
    "elections", "prevote_rejections", "truncations", "check_quorum_resignations", "snapshot_installs",
    "purgatory_completions", "epoch_filter_drops", "fetch_rejected", "stale_responses",
)


def test_coverage_counters_are_all_above_zero():
    total: Counter = Counter()
    for name in ("leader_partitioned", "chaos", "snapshots", "leader_failover"):
        for seed in range(10):
            total.update(PROPERTIES[name](seed).node_counters())
    print(" ".join(f"{k}={total[k]}" for k in REQUIRED))
    assert all(total[k] > 0 for k in REQUIRED), {k: total[k] for k in REQUIRED}


RECONFIG_REQUIRED = (
    "voters_added", "voters_removed", "resigned_after_removal", "voter_change_timeouts", "admin_already_applied",
    "admin_not_leader", "admin_timed_out", "wipes", "stalled_without_wiped_voter", "hard_kills", "partitions",
)


def test_reconfiguration_coverage_counters_are_all_above_zero():
    """The KIP-853 properties change the voter set through the leader's own removal, timed-out changes, answers
    lost and retried, refusals while a change is pending, and a wiped voter whose fetches must not count."""
    total: Counter = Counter()
    for name in ("grow_and_shrink", "replace_wiped_voter"):
        for seed in range(8):
            total.update(PROPERTIES[name](seed).node_counters())
    print(" ".join(f"{k}={total[k]}" for k in RECONFIG_REQUIRED))
    assert all(total[k] > 0 for k in RECONFIG_REQUIRED), {k: total[k] for k in RECONFIG_REQUIRED}


def test_moved_voter_coverage_counters_are_all_above_zero():
    """The moved voter is dialed at its old address (refused) until the voter set names the new one, and catches up
    from its former leader's refusals (issue #35 item 13)."""
    total: Counter = Counter()
    for seed in range(5):
        total.update(PROPERTIES["voter_moves_while_leaderless"](seed).node_counters())
    keys = ("moves", "stale_endpoint", "fetch_answered_by_former_leader", "appended_from_former_leader")
    assert all(total[k] > 0 for k in keys), {k: total[k] for k in keys}
