"""The pure replica state of one partition on one broker: roles from registrations, fencing by leader epoch, the
acks and min.insync.replicas rules, and the high watermark (min over the ISR, held while the ISR is too small,
never going back)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kraftwire import error_codes as ec
from kraftwire.replica.partition import FOLLOWER, LEADER, OFFLINE, ReplicaState


def reg(leader=1, replicas=(1,), isr=None, leader_epoch=0, partition_epoch=0):
    return SimpleNamespace(leader=leader, replicas=replicas, isr=replicas if isr is None else isr,
                           leader_epoch=leader_epoch, partition_epoch=partition_epoch)


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
    assert s.advance_high_watermark(5, 1) and s.high_watermark == 5
    assert not s.advance_high_watermark(5, 1)

    s = ReplicaState(1, "t", 0)
    s.apply(reg(replicas=(1, 2, 3), isr=(1, 2)), log_end=0)
    s.follower_ends[2] = 3
    assert s.advance_high_watermark(10, 1) and s.high_watermark == 3  # a lagging ISR member holds it back
    s.follower_ends[3] = 1  # not in the ISR: does not count
    s.follower_ends[2] = 10
    assert s.advance_high_watermark(10, 1) and s.high_watermark == 10
    s.follower_ends[2] = 4  # never goes back
    assert not s.advance_high_watermark(10, 1) and s.high_watermark == 10

    s = ReplicaState(1, "t", 0)
    s.apply(reg(replicas=(1, 2, 3), isr=(1,)), log_end=0)
    assert not s.advance_high_watermark(10, 2) and s.high_watermark == 0  # ISR below min.insync.replicas
    follower = ReplicaState(2, "t", 0)
    follower.apply(reg(replicas=(1, 2)), log_end=0)
    assert not follower.advance_high_watermark(10, 1)  # only a leader computes it
