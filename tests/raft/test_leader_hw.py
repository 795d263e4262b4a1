"""Leader high-watermark maths: majority of flushed end offsets, own-epoch rule, never decreasing."""

from __future__ import annotations

from hypothesis import given, strategies as st

from kraftwire.ids import NO_ID
from kraftwire.raft.leader import LeaderState, majority_end_offset


def leader(voters=(1, 2, 3), start=5, local=1) -> LeaderState:
    return LeaderState(epoch=2, local_id=local, voters=frozenset(voters), epoch_start_offset=start,
                       granting_voters=frozenset(voters), now_ms=0, fetch_timeout_ms=1000)


def test_majority_end_offset_examples():
    assert majority_end_offset([10, 3, 7]) == 7
    assert majority_end_offset([10, 3, 7, 9]) == 7
    assert majority_end_offset([4]) == 4
    assert majority_end_offset([9, 9, 1, 1, 1]) == 1


def test_hw_waits_for_a_record_of_its_own_epoch():
    s = leader(start=5)
    s.update_local_end_offset(5, 0)
    assert not s.update_replica_end_offset(2, 5, 0, 5)
    assert s.high_watermark is None  # offset 5 is the epoch start: nothing of epoch 2 committed yet
    s.update_local_end_offset(6, 0)
    assert s.update_replica_end_offset(2, 6, 0, 6) and s.high_watermark == 6


def test_no_state_for_anonymous_observer_and_observers_do_not_count():
    s = leader()
    assert not s.update_replica_end_offset(NO_ID, 100, 0, 100)
    assert NO_ID not in s.observer_states
    s.update_local_end_offset(100, 0)
    assert not s.update_replica_end_offset(42, 100, 0, 100)
    assert s.high_watermark is None and 42 in s.observer_states


@given(
    n=st.integers(1, 5),
    updates=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 50)), max_size=60),
)
def test_hw_is_monotonic_above_epoch_start_and_held_by_a_majority(n, updates):
    voters = list(range(1, n + 1))
    s = leader(voters=voters, start=5)
    previous = None
    for who, offset in updates:
        voter = voters[who % n]
        if voter == 1:
            rose = s.update_local_end_offset(offset, 0)
        else:
            rose = s.update_replica_end_offset(voter, offset, 0, 50)
        hw = s.high_watermark
        assert rose == (hw is not None and hw != previous)
        if hw is not None:
            assert hw > 5
            assert previous is None or hw >= previous
            if rose:  # when it rises, a majority holds it
                held = sum(1 for st_ in s.voter_states.values() if st_.end_offset >= hw)
                assert held >= n // 2 + 1
            previous = hw


@given(st.lists(st.integers(0, 100), min_size=1, max_size=7))
def test_majority_offset_is_reached_by_a_majority(offsets):
    hw = majority_end_offset(offsets)
    assert sum(1 for o in offsets if o >= hw) >= len(offsets) // 2 + 1
    assert sum(1 for o in offsets if o > hw) < len(offsets) // 2 + 1


def test_check_quorum_expires_without_majority_fetches_and_resets_with_them():
    s = leader(voters=(1, 2, 3))
    assert s.check_quorum_timeout_ms == 1500
    assert not s.check_quorum_expired(1499) and s.check_quorum_expired(1500)
    s.update_replica_end_offset(2, 0, 1400, 0)
    assert not s.check_quorum_expired(2899) and s.check_quorum_expired(2900)


def test_single_voter_never_fails_check_quorum():
    s = leader(voters=(1,))
    assert not s.check_quorum_expired(10**12)


def test_successors_are_ordered_by_end_offset():
    s = leader(voters=(1, 2, 3, 4))
    s.update_replica_end_offset(2, 7, 0, 9)
    s.update_replica_end_offset(3, 9, 0, 9)
    s.update_replica_end_offset(4, 7, 0, 9)
    assert [v for _, v in s.end_offsets_for_successors()] == [3, 2, 4]


# ------------------------------------------------------------------------------------------------ Kafka's leader rules
def _leader(now_ms=0, voters=(1, 2, 3)):
    from kraftwire.raft.leader import LeaderState

    return LeaderState(epoch=1, local_id=1, voters=frozenset(voters), epoch_start_offset=0,
                       granting_voters=frozenset(voters), now_ms=now_ms, fetch_timeout_ms=2000)


def test_last_caught_up_time_follows_kafkas_rule():
    """Caught up now (fetch offset >= the leader's end), or caught up to the leader's end as of the previous fetch:
    then the time of that previous fetch, so a follower always one batch behind does not look caught up now."""
    leader = _leader()
    leader.update_replica_end_offset(2, 0, 1000, leader_end_offset=10)
    assert leader.replica(2).last_caught_up_ms == -1
    leader.update_replica_end_offset(2, 10, 1500, leader_end_offset=20)  # reached the end seen at 1000
    assert leader.replica(2).last_caught_up_ms == 1000
    leader.update_replica_end_offset(2, 15, 1800, leader_end_offset=30)  # short of the end seen at 1500
    assert leader.replica(2).last_caught_up_ms == 1000
    leader.update_replica_end_offset(2, 30, 2100, leader_end_offset=30)
    assert leader.replica(2).last_caught_up_ms == 2100 and leader.replica(2).last_fetch_ms == 2100


def test_a_fetch_snapshot_from_a_voter_counts_for_check_quorum():
    leader = _leader()
    deadline = leader.check_quorum_deadline_ms
    leader.record_fetch_snapshot(9, 2000)  # an observer: no contact for check-quorum
    assert leader.check_quorum_deadline_ms == deadline
    leader.record_fetch_snapshot(2, 2000)
    assert leader.check_quorum_deadline_ms == 2000 + leader.check_quorum_timeout_ms


def test_observers_unseen_for_five_minutes_are_forgotten():
    from kraftwire.raft.leader import OBSERVER_SESSION_TIMEOUT_MS

    leader = _leader()
    leader.update_replica_end_offset(7, 0, 1000, leader_end_offset=0)
    leader.update_replica_end_offset(8, 0, 2000, leader_end_offset=0)
    assert set(leader.observers(1000 + OBSERVER_SESSION_TIMEOUT_MS - 1)) == {7, 8}
    assert set(leader.observers(1000 + OBSERVER_SESSION_TIMEOUT_MS)) == {8}
