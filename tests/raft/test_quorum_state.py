"""QuorumState: the transition table, startup rules and what gets persisted."""

from __future__ import annotations

import random

import pytest

from kraftwire.ids import NO_ID, ReplicaKey
from kraftwire.raft.config import Mutations, RaftConfig
from kraftwire.raft.election import ElectionState, IllegalTransitionError
from kraftwire.raft.quorum_state import QuorumState
from kraftwire.raft.leader import LeaderState
from kraftwire.raft.states import CandidateState, FollowerState, ResignedState, UnattachedState

VOTERS = frozenset({1, 2, 3})


def make(node_id=1, stored=None, log_epoch=0, **kw) -> QuorumState:
    q = QuorumState(RaftConfig(node_id=node_id, voters=VOTERS, **kw), random.Random(0))
    q.initialize(stored, log_epoch, 0)
    return q


def test_fresh_node_is_unattached_in_epoch_zero_and_persists_nothing():
    q = make()
    assert q.name == "Unattached" and q.epoch == 0
    assert q.take_pending_persist() is None


def test_election_timeout_is_in_t_to_2t():
    q = make(election_timeout_ms=100)
    deadlines = {q.random_election_deadline(1000) for _ in range(300)}
    assert min(deadlines) >= 1100 and max(deadlines) < 1200 and len(deadlines) > 50


def test_binary_exponential_backoff_is_capped():
    q = make(election_backoff_max_ms=1000)
    assert q.binary_exponential_backoff_ms(0) == 0
    assert all(0 <= q.binary_exponential_backoff_ms(r) <= 1000 for r in range(1, 30))
    assert max(q.binary_exponential_backoff_ms(8) for _ in range(200)) > 100


@pytest.mark.parametrize(
    "stored, expected",
    [
        (ElectionState(5, 1, ReplicaKey(1)), "Resigned"),  # recorded leader: never leader again in epoch 5
        (ElectionState(5, NO_ID, ReplicaKey(1)), "Candidate"),  # voted for itself
        (ElectionState(5, NO_ID, ReplicaKey(2)), "Voted"),
        (ElectionState(5, 2, None), "Follower"),
        (ElectionState(5), "Unattached"),
    ],
)
def test_startup_rules(stored, expected):
    q = make(stored=stored)
    assert q.name == expected and q.epoch == 5
    assert q.take_pending_persist() is None  # nothing new to persist


def test_log_epoch_above_stored_epoch_wins_and_is_persisted():
    q = make(stored=ElectionState(2, 1, ReplicaKey(1)), log_epoch=4)
    assert q.name == "Unattached" and q.epoch == 4
    assert q.take_pending_persist() == ElectionState(4)


def test_restart_as_leader_mutation_is_off_by_default_and_planted_when_on():
    assert make(stored=ElectionState(3, 1, ReplicaKey(1))).name == "Resigned"
    q = make(stored=ElectionState(3, 1, ReplicaKey(1)), mutations=Mutations(restart_as_leader=True))
    assert isinstance(q.state, LeaderState)


def test_voted_node_keeps_its_vote_across_restart():
    q = make(node_id=2)
    q.to_voted(1, ReplicaKey(3), 0)
    persisted = q.take_pending_persist()
    assert persisted == ElectionState(1, NO_ID, ReplicaKey(3))
    again = make(node_id=2, stored=persisted)
    with pytest.raises(IllegalTransitionError):
        again.to_voted(1, ReplicaKey(1), 0)  # no second vote in epoch 1, even after a restart


def test_durable_transitions_persist_and_memory_ones_do_not():
    q = make()
    q.to_prospective(0)
    assert q.take_pending_persist() is None
    q.to_candidate(0)
    assert q.take_pending_persist() == ElectionState(1, NO_ID, ReplicaKey(1))
    q.state.tally.record(2, True)
    q.to_leader(0, epoch_start_offset=0)
    assert q.take_pending_persist() == ElectionState(1, 1, ReplicaKey(1))
    q.to_resigned(0, (2, 3))
    assert q.take_pending_persist() is None and isinstance(q.state, ResignedState)


def test_candidate_without_majority_cannot_lead():
    q = make()
    q.to_candidate(0)
    with pytest.raises(IllegalTransitionError):
        q.to_leader(0, 0)


@pytest.mark.parametrize("method, args", [("to_unattached", (0,)), ("to_follower", (0, 2))])
def test_no_move_to_a_lower_epoch(method, args):
    q = make(stored=ElectionState(1))
    with pytest.raises(IllegalTransitionError):
        getattr(q, method)(*args, 0)


def test_leader_never_follows_another_leader_in_its_epoch():
    q = make()
    q.to_candidate(0)
    q.state.tally.record(2, True)
    q.to_leader(0, 0)
    with pytest.raises(IllegalTransitionError):
        q.to_follower(1, 2, 0)
    q.to_follower(2, 2, 0)
    assert isinstance(q.state, FollowerState)


def test_follower_cannot_switch_leader_within_an_epoch():
    q = make()
    q.to_follower(3, 2, 0)
    with pytest.raises(IllegalTransitionError):
        q.to_follower(3, 3, 0)


def test_observers_never_vote_or_campaign():
    q = make(node_id=9)
    assert not q.is_voter
    for call in (lambda: q.to_candidate(0), lambda: q.to_prospective(0), lambda: q.to_voted(1, ReplicaKey(2), 0)):
        with pytest.raises(IllegalTransitionError):
            call()
    q.to_follower(1, 2, 0)
    assert q.name == "Follower"


def test_resigned_leader_that_loses_prevote_keeps_its_self_vote():
    q = make()
    q.to_candidate(0)
    q.state.tally.record(2, True)
    q.to_leader(0, 0)
    q.to_resigned(0, ())
    q.to_prospective(0)
    q.to_unattached_same_epoch(0)
    assert isinstance(q.state, UnattachedState) and q.state.voted_key == ReplicaKey(1)


def test_candidate_retries_count_up():
    q = make()
    q.to_candidate(0)
    q.to_candidate(0)
    assert isinstance(q.state, CandidateState) and q.state.retries == 2 and q.epoch == 2
