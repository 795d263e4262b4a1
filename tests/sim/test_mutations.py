"""Mutation tests: each planted bug (a ``Mutations`` switch, off by default) must make the simulation fail within
the CI seeds. A simulation that cannot catch these would be checking nothing."""

from __future__ import annotations

import pytest

from kraftwire.raft.config import Mutations
from kraftwire.testing.properties import PROPERTIES
from kraftwire.testing.sim import SimulationFailure

pytestmark = pytest.mark.sim

# mutation -> (properties that may catch it, what the failure must mention)
CASES = {
    "reply_vote_before_persist": (["elect_initial_leader"], "durable-before-send"),
    "hw_before_truncate": (["leader_partitioned"], "committed-data"),
    "fetch_past_flush": (["elect_initial_leader"], "durable-before-send"),
    "restart_as_leader": (["back_to_back_failures", "leader_failover"], "leader-restart"),
    "count_unflushed_toward_hw": (["elect_initial_leader", "leader_failover"], "majority-hw"),
    # the follower's epoch filter is off; the sim's racy-read fault adds a later-epoch batch to Fetch answers
    "epoch_filter_off": (["chaos"], "epoch-filter"),
    "grant_two_votes": (["chaos", "elect_initial_leader"], "no-double-vote"),
    "replicate_past_flush": (["elect_initial_leader"], "durable-before-send"),
    "snapshot_off_boundary": (["snapshots"], "snapshot-on-batch-boundary"),
    # KIP-853: the admin sometimes asks for two changes at once, and retries through leader changes
    "concurrent_voter_changes": (["grow_and_shrink"], "one-voter-change"),
    "majority_on_old_set": (["grow_and_shrink", "replace_wiped_voter"], "majority-of-voter-set"),
}


def test_every_mutation_switch_has_a_case():
    assert set(Mutations.__slots__) == set(CASES)
    assert not Mutations().any()


@pytest.mark.parametrize("mutation", sorted(CASES))
def test_simulation_catches_the_planted_bug(mutation, seeds):
    properties, expected = CASES[mutation]
    mutations = Mutations(**{mutation: True})
    for name in properties:
        for seed in range(seeds):
            try:
                PROPERTIES[name](seed, mutations)
            except SimulationFailure as exc:
                assert expected in str(exc), str(exc)
                assert f"--mutation {mutation}" in exc.replay
                return
    pytest.fail(f"no seed of {properties} caught mutation {mutation}")
