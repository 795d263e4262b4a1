"""The pure replica state of one partition on one broker: roles from registrations, fencing by leader epoch, the
acks and min.insync.replicas rules, and the high watermark (min over the ISR and the followers waiting to join it,
held while the ISR is too small, never going back)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kraftwire import error_codes as ec
from kraftwire.replica.partition import FOLLOWER, LEADER, OFFLINE, ReplicaState


LAG_MS = 10_000


def reg(leader=1, replicas=(1,), isr=None, leader_epoch=0, partition_epoch=0):
    return SimpleNamespace(leader=leader, replicas=replicas, isr=replicas if isr is None else isr,
                           leader_epoch=leader_epoch, partition_epoch=partition_epoch)


def broker(epoch=1, fenced=False, in_controlled_shutdown=False):
    """An image's broker registration, as ``may_join_isr`` reads it."""
    return SimpleNamespace(epoch=epoch, fenced=fenced, in_controlled_shutdown=in_controlled_shutdown)


def _hw(s, log_end, min_isr, now_ms=0, brokers=None):
    """``advance_high_watermark`` with brokers 1-5 registered and unfenced (epoch 1) unless ``brokers`` says."""
    brokers = {b: broker() for b in range(1, 6)} if brokers is None else brokers
    return s.advance_high_watermark(log_end, min_isr, now_ms=now_ms, lag_ms=LAG_MS, brokers=brokers)


def test_roles_follow_the_registration_and_a_new_epoch_starts_at_the_log_end():
    s = ReplicaState(1, "t", 0)
    assert s.role == OFFLINE and s.epoch_error(-1) == ec.NOT_LEADER_OR_FOLLOWER
    change = s.apply(reg(leader=1, replicas=(1, 2)), log_end=7)
    assert (change.role, change.new_leader_epoch, s.epoch_start_offset) == (LEADER, True, 7)
    assert s.apply(reg(leader=1, replicas=(1, 2)), log_end=9) is None  # the same epochs: nothing changed
    change = s.apply(reg(leader=1, replicas=(1, 2), isr=(1,), partition_epoch=1), log_end=9)
    assert (change.role, change.new_leader_epoch, s.epoch_start_offset, s.isr) == (LEADER, False, 7, (1,))
    change = s.apply(reg(leader=2, replicas=(1, 2), leader_epoch=1, partition_epoch=2), log_end=9)
    assert (change.role, s.epoch_start_offset, s.leader) == (FOLLOWER, -1, 2)
    assert s.apply(reg(leader=1, replicas=(1, 2), leader_epoch=0, partition_epoch=1), log_end=9) is None  # older
    change = s.apply(reg(leader=3, replicas=(2, 3), leader_epoch=2, partition_epoch=3), log_end=9)
    assert change.role == OFFLINE


def test_requests_are_fenced_by_leader_epoch():
    s = ReplicaState(1, "t", 0)
    s.apply(reg(leader_epoch=5, partition_epoch=5), log_end=0)
    assert [s.epoch_error(e) for e in (-1, 5, 4, 6)] == [
        ec.NONE, ec.NONE, ec.FENCED_LEADER_EPOCH, ec.UNKNOWN_LEADER_EPOCH]


def test_the_debugging_consumer_may_read_a_follower_fenced_by_the_same_epochs():
    """Kafka's debugging consumer (replica id -2, kafka-replica-verification) is not held to the leader
    (``FetchParams.fetchOnlyLeader``): a follower answers it, its epoch checked as the leader's is."""
    s = ReplicaState(1, "t", 0)
    s.apply(reg(leader=2, replicas=(1, 2), leader_epoch=5, partition_epoch=5), log_end=0)
    assert s.role == FOLLOWER and s.epoch_error(-1) == ec.NOT_LEADER_OR_FOLLOWER
    assert [s.epoch_error(e, leader_only=False) for e in (-1, 5, 4, 6)] == [
        ec.NONE, ec.NONE, ec.FENCED_LEADER_EPOCH, ec.UNKNOWN_LEADER_EPOCH]


@pytest.mark.parametrize("min_isr, rf, isr, acks, expected", [
    (1, 1, (1,), -1, ec.NONE),
    (2, 1, (1,), -1, ec.NONE),  # the effective minimum is min(min.insync.replicas, replication factor)
    (2, 3, (1,), -1, ec.NOT_ENOUGH_REPLICAS),
    (2, 3, (1,), 1, ec.NONE),  # only acks=-1 asks for the minimum
    (2, 3, (1, 3), -1, ec.NONE),
    (1, 1, (1,), 2, ec.INVALID_REQUIRED_ACKS),
])
def test_acks_and_min_insync_replicas(min_isr, rf, isr, acks, expected):
    s = ReplicaState(1, "t", 0)
    s.apply(reg(replicas=tuple(range(1, rf + 1)), isr=isr), log_end=0)
    error, message = s.produce_error(acks, min_isr)
    assert error == expected
    assert (message is not None) == (error == ec.NOT_ENOUGH_REPLICAS or error == ec.INVALID_REQUIRED_ACKS)


def test_an_append_whose_isr_shrank_below_the_minimum_is_not_enough_replicas_after_append():
    s = ReplicaState(1, "t", 0)
    s.apply(reg(replicas=(1, 2, 3), isr=(1, 2)), log_end=0)
    assert s.ack_error(2) == ec.NONE
    s.apply(reg(replicas=(1, 2, 3), isr=(1,), partition_epoch=1), log_end=0)
    assert s.ack_error(2) == ec.NOT_ENOUGH_REPLICAS_AFTER_APPEND


def test_high_watermark_is_the_minimum_over_the_isr_held_below_min_isr_and_monotonic():
    s = ReplicaState(1, "t", 0)
    s.apply(reg(replicas=(1,)), log_end=0)
    assert _hw(s, 5, 1) and s.high_watermark == 5
    assert not _hw(s, 5, 1)

    s = ReplicaState(1, "t", 0)
    s.apply(reg(replicas=(1, 2, 3), isr=(1, 2)), log_end=0)
    s.follower_fetched(2, 3, 1, now_ms=0, leader_end=10)
    assert _hw(s, 10, 1) and s.high_watermark == 3  # a lagging ISR member holds it back
    s.follower_fetched(3, 1, 1, now_ms=0, leader_end=10)  # not in the ISR: does not count
    s.follower_fetched(2, 10, 1, now_ms=0, leader_end=10)
    assert _hw(s, 10, 1) and s.high_watermark == 10
    s.follower_fetched(2, 4, 1, now_ms=0, leader_end=10)  # never goes back
    assert not _hw(s, 10, 1) and s.high_watermark == 10

    s = ReplicaState(1, "t", 0)
    s.apply(reg(replicas=(1, 2, 3), isr=(1,)), log_end=0)
    assert not _hw(s, 10, 2) and s.high_watermark == 0  # ISR below min.insync.replicas
    follower = ReplicaState(2, "t", 0)
    follower.apply(reg(replicas=(1, 2)), log_end=0)
    assert not _hw(follower, 10, 1)  # only a leader computes it


def _leader(replicas=(1, 2, 3), isr=None, log_end=0):
    s = ReplicaState(1, "t", 0)
    s.apply(reg(replicas=replicas, isr=isr), log_end=log_end)
    return s


def test_caught_up_time_follows_kafkas_rule():
    s = _leader()
    s.follower_fetched(2, 10, 7, now_ms=100, leader_end=10)  # at the leader's end: caught up now
    assert s.followers[2].caught_up_ms == 100 and s.followers[2].broker_epoch == 7
    s.follower_fetched(2, 10, 7, now_ms=200, leader_end=15)  # reached the end the leader had at its last fetch
    assert s.followers[2].caught_up_ms == 100  # ... which was at 100
    s.follower_fetched(2, 15, 7, now_ms=300, leader_end=20)
    assert s.followers[2].caught_up_ms == 200
    s.follower_fetched(2, 16, 7, now_ms=400, leader_end=30)  # behind what the leader had: unchanged
    assert s.followers[2].caught_up_ms == 200 and s.followers[2].end_offset == 16


def test_expansion_needs_the_high_watermark_and_the_epoch_start_and_counts_at_once():
    s = _leader(isr=(1, 2), log_end=5)  # this leader epoch starts at 5
    s.follower_fetched(2, 8, 1, now_ms=0, leader_end=8)
    assert _hw(s, 8, 1) and s.high_watermark == 8
    s.follower_fetched(3, 4, 1, now_ms=0, leader_end=8)
    assert s.propose_expansion(3, eligible=True) is None  # below the high watermark (and the epoch start)
    s.follower_fetched(3, 8, 1, now_ms=0, leader_end=8)
    assert s.propose_expansion(3, eligible=False) is None  # fenced, shutting down or another broker epoch
    pending = s.propose_expansion(3, eligible=True)
    assert pending.isr == (1, 2, 3) and s.maximal_isr() == (1, 2, 3)
    assert s.propose_expansion(3, eligible=True) is None  # one change at a time
    s.follower_fetched(2, 12, 1, now_ms=0, leader_end=12)
    assert _hw(s, 12, 1) is False  # 3 counts already: it is at 8
    s.follower_fetched(3, 12, 1, now_ms=0, leader_end=12)
    assert _hw(s, 12, 1) and s.high_watermark == 12
    assert not s.isr_answered(pending, ec.NONE, leader_epoch=0, partition_epoch=1, isr=(1, 2, 3))
    assert s.isr == (1, 2, 3) and s.partition_epoch == 1 and s.pending is None


def test_shrink_removes_only_members_not_caught_up_within_the_lag_and_keeps_counting_them_until_answered():
    s = ReplicaState(1, "t", 0)
    s.apply(reg(replicas=(1, 2, 3)), log_end=0, now_ms=1000)  # a new leader counts its ISR caught up now
    s.follower_fetched(2, 10, 1, now_ms=1500, leader_end=10)
    s.follower_fetched(3, 4, 1, now_ms=1500, leader_end=10)
    assert s.propose_shrink(now_ms=1900, lag_ms=1000, leader_end=10) is None  # 3 is behind, not for long yet
    s.follower_fetched(3, 4, 1, now_ms=2000, leader_end=10)
    pending = s.propose_shrink(now_ms=2001, lag_ms=1000, leader_end=10)
    assert pending is not None and pending.isr == (1, 2) and not pending.expand
    assert s.maximal_isr() == (1, 2, 3)  # a pending shrink still counts the old ISR
    assert s.isr_answered(pending, ec.NOT_CONTROLLER)  # any other error: send it again
    assert s.pending is not None
    assert not s.isr_answered(pending, ec.INELIGIBLE_REPLICA) and s.pending is None  # reverted
    quiet = _leader()
    quiet.follower_fetched(2, 10, 1, now_ms=0, leader_end=10)
    quiet.follower_fetched(3, 10, 1, now_ms=0, leader_end=10)
    assert quiet.propose_shrink(now_ms=10**9, lag_ms=1000, leader_end=10) is None  # at the end: in sync


def test_an_answer_for_an_older_epoch_or_a_stale_partition_epoch_changes_nothing():
    s = _leader()
    s.follower_fetched(3, 0, 1, now_ms=0, leader_end=5)
    pending = s.propose_shrink(now_ms=10**6, lag_ms=1, leader_end=5)
    s.isr_answered(pending, ec.NONE, leader_epoch=3, partition_epoch=9, isr=(1,))
    assert s.isr == (1, 2, 3) and s.pending is pending  # another leader epoch: settled by the image only
    assert s.alter_to_send() is None  # and not sent again
    s.apply(reg(leader=1, replicas=(1, 2, 3), isr=(1, 2), leader_epoch=1, partition_epoch=9), log_end=5)
    pending = s.propose_shrink(now_ms=10**6, lag_ms=1, leader_end=5)
    assert pending is not None and not s.isr_answered(pending, ec.FENCED_LEADER_EPOCH)  # pending until the image


def test_an_expansion_answered_in_a_new_leader_epoch_keeps_its_member_counted():
    """An expansion that completes a reassignment is answered with a new leader epoch (replicas left): until the
    image brings it, the new member still holds the high watermark back, as Kafka's leader ignores such an answer
    (found by the partition simulation with reassignments: the ISR committed with the member while the high
    watermark had moved past it)."""
    s = _leader(isr=(1, 2), log_end=5)
    s.follower_fetched(2, 8, 1, now_ms=0, leader_end=8)
    s.follower_fetched(3, 8, 1, now_ms=0, leader_end=8)
    assert _hw(s, 8, 1)
    pending = s.propose_expansion(3, eligible=True)
    s.alter_to_send()
    assert not s.isr_answered(pending, ec.NONE, leader_epoch=1, partition_epoch=2, isr=(1, 2, 3))
    s.follower_fetched(2, 12, 1, now_ms=0, leader_end=12)
    assert _hw(s, 12, 1) is False and s.maximal_isr() == (1, 2, 3)  # 3 is at 8: it still counts


def test_an_answer_to_an_earlier_proposal_leaves_the_pending_expansion_counted():
    # A proposal settled by the image while its answer is still out; a new expansion goes out; the old answer
    # arrives. Taken for the new one it would drop member 3 from the maximal ISR although the controller may have
    # added it already, and the high watermark would move past 3's log (the partition simulation found this).
    s = _leader()
    s.follower_fetched(2, 5, 1, now_ms=0, leader_end=5)
    s.follower_fetched(3, 0, 1, now_ms=0, leader_end=5)
    first = s.propose_shrink(now_ms=10**6, lag_ms=1, leader_end=5)
    assert first.isr == (1, 2)
    s.apply(reg(replicas=(1, 2, 3), isr=(1, 2), leader_epoch=0, partition_epoch=1), log_end=5, now_ms=10**6)
    assert s.pending is None and s.isr == (1, 2)
    s.follower_fetched(3, 5, 1, now_ms=10**6, leader_end=5)
    second = s.propose_expansion(3, eligible=True)
    assert second.isr == (1, 2, 3)
    assert not s.isr_answered(first, ec.NONE, leader_epoch=0, partition_epoch=1, isr=(1, 2))
    assert s.pending is second
    assert s.maximal_isr() == (1, 2, 3)
    assert not s.isr_answered(second, ec.NONE, leader_epoch=0, partition_epoch=2, isr=(1, 2, 3))
    assert s.isr == (1, 2, 3) and s.pending is None


# ------------------------------------------------------------------------------------------------ waiting to join
# Kafka's leader counts, besides the (maximal) ISR, every follower outside it that is caught up and eligible to join
# (Partition.maybeIncrementLeaderHW / shouldWaitForReplicaToJoinIsr); PartitionTest names in the test names.


@pytest.mark.parametrize("broker_state", ["fenced", "shutdown", "unfenced"])
def test_high_watermark_increases_with_fenced_or_shutdown_follower(broker_state):
    # Kafka: PartitionTest.testHighWatermarkIncreasesWithFencedOrShutdownFollower
    s = ReplicaState(1, "t", 0)
    s.apply(reg(replicas=(1, 2), leader_epoch=5, partition_epoch=1), log_end=10, now_ms=1000)
    brokers = {1: broker(), 2: broker()}
    s.follower_fetched(2, 10, 1, now_ms=1000, leader_end=10)  # the follower catches up to the log end
    assert s.followers[2].caught_up_ms == 1000
    assert _hw(s, 10, 1, now_ms=1000, brokers=brokers) and s.high_watermark == 10
    if broker_state == "fenced":
        brokers[2] = broker(fenced=True)
    elif broker_state == "shutdown":
        brokers[2] = broker(in_controlled_shutdown=True)
    # the controller shrinks the ISR (same leader epoch) and the leader appends 10 more
    change = s.apply(reg(replicas=(1, 2), isr=(1,), leader_epoch=5, partition_epoch=2), log_end=20, now_ms=1000)
    assert change.new_leader_epoch is False and s.isr == (1,) and s.maximal_isr() == (1,)
    assert s.propose_shrink(now_ms=1000, lag_ms=LAG_MS, leader_end=20) is None
    _hw(s, 20, 1, now_ms=1000, brokers=brokers)
    # unfenced, the caught-up follower outside the ISR is waited for; fenced or shutting down it is not
    assert s.high_watermark == (10 if broker_state == "unfenced" else 20)


def test_a_follower_keeping_pace_under_steady_writes_rejoins_the_isr():
    # Kafka's reason for the rule (the comment on Partition.maybeIncrementLeaderHW): follower 3, out of the ISR,
    # fetches from the end the leader had at its previous fetch, while ISR member 2 has fetched since. Counting
    # the ISR only, 3's end is always just below the high watermark, so 3 never may join.
    s = _leader(isr=(1, 2), log_end=0)
    end, now = 0, 0
    three = 0  # follower 3's log end
    for _ in range(20):
        now += 100
        end += 2  # a steady write
        _hw(s, end, 1, now_ms=now)
        s.follower_fetched(2, end, 1, now_ms=now, leader_end=end)  # 2 is at the end
        _hw(s, end, 1, now_ms=now)
        s.follower_fetched(3, three, 1, now_ms=now, leader_end=end)
        if s.propose_expansion(3, eligible=True) is not None:
            break
        _hw(s, end, 1, now_ms=now)
        three = end  # its fetch brought everything the leader had
    else:
        pytest.fail(f"follower 3 never caught up to the high watermark {s.high_watermark} (its end {three})")
    assert s.pending.isr == (1, 2, 3)


def test_a_follower_outside_the_isr_holds_the_high_watermark_only_while_caught_up_within_the_lag():
    s = _leader(isr=(1, 2), log_end=0)
    s.follower_fetched(2, 10, 1, now_ms=1000, leader_end=10)
    s.follower_fetched(3, 10, 1, now_ms=1000, leader_end=10)  # 3 caught up at 1000
    s.follower_fetched(2, 14, 1, now_ms=1100, leader_end=14)
    assert _hw(s, 14, 1, now_ms=1100) and s.high_watermark == 10  # 3 (at 10) is waited for
    assert not _hw(s, 14, 1, now_ms=1000 + LAG_MS)
    assert _hw(s, 14, 1, now_ms=1001 + LAG_MS) and s.high_watermark == 14  # 3 stopped fetching: no longer


def test_a_follower_that_was_never_caught_up_or_may_not_join_is_not_waited_for():
    s = _leader(isr=(1, 2), log_end=0)
    s.follower_fetched(2, 10, 1, now_ms=0, leader_end=10)
    s.follower_fetched(3, 4, 1, now_ms=0, leader_end=10)  # behind since this leader began: never caught up
    assert _hw(s, 10, 1, now_ms=0) and s.high_watermark == 10

    s = _leader(isr=(1, 2), log_end=0)
    s.follower_fetched(2, 10, 1, now_ms=0, leader_end=10)
    s.follower_fetched(3, 10, 1, now_ms=0, leader_end=10)
    s.follower_fetched(2, 14, 1, now_ms=0, leader_end=14)
    assert _hw(s, 14, 1, brokers={2: broker()}) and s.high_watermark == 14  # 3 unregistered
    s.high_watermark = 0
    assert _hw(s, 14, 1, brokers={2: broker(), 3: broker(epoch=2)}) and s.high_watermark == 14  # an older epoch
    s.high_watermark = 0
    assert _hw(s, 14, 1) and s.high_watermark == 10  # registered in the epoch it fetched with: waited for
    s.apply(reg(replicas=(1, 2), isr=(1, 2), partition_epoch=1), log_end=14)  # 3 leaves the assignment
    assert 3 not in s.followers
    assert _hw(s, 14, 1) and s.high_watermark == 14
