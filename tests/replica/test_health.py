"""ReplicaManager's partition-health gauges from the hosted replica states (``replica.health``), after Kafka's
``ReplicaManagerTest``/``PartitionTest`` cases for isUnderReplicated, isUnderMinIsr and isAtMinIsr."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.metadata.image import PartitionRegistration
from kraftwire.replica.health import NOT_FAILED_FETCH, NOT_FAILED_PRODUCE, ReplicaHealth, replica_health
from kraftwire.replica.partition import ReplicaState

ME = 1


def _state(leader: int, replicas, isr, partition: int = 0) -> ReplicaState:
    state = ReplicaState(ME, "t", partition)
    state.apply(PartitionRegistration(replicas=tuple(replicas), directories=(), isr=tuple(isr), removing_replicas=(),
                                      adding_replicas=(), leader=leader, leader_recovery_state=0, leader_epoch=1,
                                      partition_epoch=1), log_end=0)
    return state


def test_a_full_isr_is_neither_under_replicated_nor_at_a_lower_min_isr():
    assert replica_health([(_state(ME, [1, 2, 3], [1, 2, 3]), 2, False)]) == ReplicaHealth(
        partitions=1, leaders=1, offline=0, under_replicated=0, under_min_isr=0, at_min_isr=0)


def test_a_shrunk_isr_counts_under_replicated_and_at_or_under_min_isr():
    hosted = [(_state(ME, [1, 2, 3], [1, 2], 0), 2, False),  # under-replicated, at min ISR
              (_state(ME, [1, 2, 3], [1], 1), 2, False),  # under-replicated, under min ISR
              (_state(ME, [1, 2, 3], [1, 2, 3], 2), 3, False)]  # at min ISR (3 of 3)
    assert replica_health(hosted) == ReplicaHealth(partitions=3, leaders=3, offline=0, under_replicated=2,
                                                   under_min_isr=1, at_min_isr=2)


def test_only_the_leader_counts_a_partition_and_a_failed_one_is_offline():
    hosted = [(_state(2, [1, 2, 3], [2], 0), 2, False),  # a follower: the leader reports it
              (_state(ME, [1, 2, 3], [1], 1), 2, True)]  # on a failed log directory
    assert replica_health(hosted) == ReplicaHealth(partitions=2, leaders=0, offline=1, under_replicated=0,
                                                   under_min_isr=0, at_min_isr=0)


def test_the_effective_min_isr_is_capped_by_the_replication_factor():
    # min.insync.replicas=3 on a single replica: Kafka's effective minimum is 1, so the partition is at it, not under
    assert replica_health([(_state(ME, [1], [1]), 3, False)]) == ReplicaHealth(
        partitions=1, leaders=1, offline=0, under_replicated=0, under_min_isr=0, at_min_isr=1)


def test_failed_request_rules_follow_kafkas_exclusions():
    assert ec.NOT_LEADER_OR_FOLLOWER in NOT_FAILED_FETCH and ec.OFFSET_OUT_OF_RANGE not in NOT_FAILED_FETCH
    assert ec.NOT_LEADER_OR_FOLLOWER in NOT_FAILED_PRODUCE and ec.NOT_ENOUGH_REPLICAS not in NOT_FAILED_PRODUCE
    assert ec.INVALID_RECORD not in NOT_FAILED_PRODUCE


def _registration(isr, partition_epoch: int) -> PartitionRegistration:
    return PartitionRegistration(replicas=(1, 2, 3), directories=(), isr=tuple(isr), removing_replicas=(),
                                 adding_replicas=(), leader=ME, leader_recovery_state=0, leader_epoch=1,
                                 partition_epoch=partition_epoch)


def _expanding() -> tuple[ReplicaState, object]:
    state = _state(ME, [1, 2, 3], [1, 2])
    state.high_watermark = 0
    state.followers[3].end_offset = 0
    pending = state.propose_expansion(3, eligible=True)
    assert pending is not None and pending.expand
    return state, pending


def test_an_accepted_expansion_is_settled_once_whether_the_answer_or_the_image_comes_first():
    # IsrExpandsPerSec counts each accepted change once (``ReplicaCore._count_isr_change`` takes it)
    state, pending = _expanding()
    state.isr_answered(pending, ec.NONE, leader_epoch=1, partition_epoch=2, isr=(1, 2, 3))
    assert state.take_settled() is pending and state.take_settled() is None
    state.apply(_registration([1, 2, 3], 2), log_end=0)  # the image after the answer: nothing new
    assert state.take_settled() is None

    state, pending = _expanding()
    state.apply(_registration([1, 2, 3], 2), log_end=0)  # the image first
    assert state.take_settled() is pending
    state.isr_answered(pending, ec.NONE, leader_epoch=1, partition_epoch=2, isr=(1, 2, 3))  # then the answer
    assert state.take_settled() is None


def test_a_refused_or_different_change_settles_nothing():
    state, pending = _expanding()
    state.isr_answered(pending, ec.INELIGIBLE_REPLICA)
    assert state.take_settled() is None
    state, pending = _expanding()
    state.apply(_registration([1], 2), log_end=0)  # the controller shrank it instead
    assert state.take_settled() is None
