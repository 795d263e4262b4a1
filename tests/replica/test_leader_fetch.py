"""A leader's checks of a follower's Fetch (``kraftwire.replica.leader_fetch``), in the order the Fetch handler and
the partition simulation both answer them: fencing and membership before the log, then the fetch position. Mirrors
Kafka's ``PartitionTest.testFetchFromUnrecognizedFollower``, ``testFenceFollowerFetchWithStaleBrokerEpoch`` and
``testLastFetchedOffsetValidation``."""

from __future__ import annotations

from types import SimpleNamespace

from kraftwire import error_codes as ec
from kraftwire.log.epoch_cache import LeaderEpochCache
from kraftwire.replica.leader_fetch import check_replica_fetch
from kraftwire.replica.partition import ReplicaState, check_fetch_position

#: the leader's log: epoch 0 covers [0, 5), epoch 2 [5, 10) and is current; log start 2
EPOCHS = {0: 5, 2: 10}


def epoch_end(epoch: int) -> tuple[int, int]:
    """The leader log's ``leader_epoch_end``: the largest epoch at or below ``epoch`` and where it ends."""
    known = [e for e in EPOCHS if e <= epoch]
    return (max(known), EPOCHS[max(known)]) if known else (-1, -1)


def leader(replicas=(1, 2), leader_epoch=2) -> ReplicaState:
    s = ReplicaState(1, "t", 0)
    s.apply(SimpleNamespace(leader=1, replicas=replicas, isr=replicas, leader_epoch=leader_epoch,
                            partition_epoch=leader_epoch), log_end=5)
    return s


def check(state, *, replica=2, current_leader_epoch=2, broker_epoch=-1, registration=SimpleNamespace(epoch=7),
          fetch_offset=10, last_fetched_epoch=2):
    return check_replica_fetch(state, replica=replica, current_leader_epoch=current_leader_epoch,
                               broker_epoch=broker_epoch, registration=registration, fetch_offset=fetch_offset,
                               last_fetched_epoch=last_fetched_epoch, log_start=2, log_end=10, epoch_end=epoch_end)


def test_a_fetch_at_the_leaders_end_in_its_epoch_is_accepted():
    verdict = check(leader())
    assert verdict.accepted and (verdict.error, verdict.diverging, verdict.fenced) == (ec.NONE, None, False)


def test_fencing_comes_before_the_log_and_only_not_leader_or_follower_says_where_the_leader_is():
    stale, newer = check(leader(), current_leader_epoch=1), check(leader(), current_leader_epoch=3)
    assert (stale.error, stale.fenced, stale.leader_hint) == (ec.FENCED_LEADER_EPOCH, True, False)
    assert (newer.error, newer.fenced, newer.leader_hint) == (ec.UNKNOWN_LEADER_EPOCH, True, False)
    # a fenced fetch is refused whatever its position: the log is not looked at
    refused = check(leader(), current_leader_epoch=1, fetch_offset=99, last_fetched_epoch=9)
    assert (refused.error, refused.diverging) == (ec.FENCED_LEADER_EPOCH, None)
    follower = ReplicaState(1, "t", 0)
    follower.apply(SimpleNamespace(leader=2, replicas=(1, 2), isr=(1, 2), leader_epoch=2, partition_epoch=2),
                   log_end=5)
    verdict = check(follower)
    assert (verdict.error, verdict.fenced, verdict.leader_hint) == (ec.NOT_LEADER_OR_FOLLOWER, True, True)


def test_a_broker_that_is_not_a_replica_is_refused():  # PartitionTest.testFetchFromUnrecognizedFollower
    assert check(leader(), replica=3).error == ec.UNKNOWN_LEADER_EPOCH  # it sent an epoch: our image may be old
    verdict = check(leader(), replica=3, current_leader_epoch=-1)
    assert (verdict.error, verdict.leader_hint) == (ec.NOT_LEADER_OR_FOLLOWER, True)


def test_an_older_incarnation_of_a_replica_is_refused():  # PartitionTest.testFenceFollowerFetchWithStaleBrokerEpoch
    assert check(leader(), broker_epoch=6).error == ec.NOT_LEADER_OR_FOLLOWER
    assert check(leader(), broker_epoch=7).accepted
    assert check(leader(), broker_epoch=6, registration=None).accepted  # unregistered: nothing to compare


def test_the_position_is_checked_against_the_log():  # PartitionTest.testLastFetchedOffsetValidation
    diverged = check(leader(), fetch_offset=7, last_fetched_epoch=1)  # epoch 1 is unknown here: epoch 0 ends at 5
    assert (diverged.error, diverged.diverging, diverged.fenced, diverged.accepted) == (ec.NONE, (0, 5), False,
                                                                                        False)
    assert check(leader(), fetch_offset=6, last_fetched_epoch=0).diverging == (0, 5)  # past the end of its epoch
    assert check(leader(), fetch_offset=5, last_fetched_epoch=0).accepted
    for offset, last_epoch in ((1, 0), (11, -1), (1, -1)):  # below the log start, past the log end
        verdict = check(leader(), fetch_offset=offset, last_fetched_epoch=last_epoch)
        assert (verdict.error, verdict.fenced, verdict.accepted) == (ec.OFFSET_OUT_OF_RANGE, False, False)


def test_a_stale_tail_wholly_below_the_log_start_is_not_seen():
    """Kafka's blind spot, kept (partition simulation seed 130; ``LeaderEpochFileCacheTest.
    shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch`` after ``truncateFromStart``; Kafka 4.4's own cache in
    tests/kafka/test_epoch_cache_oracle.py): the follower's last epoch 0 ended at 67 on the leader. While the
    leader's cache holds epoch 0, a fetch at 90 in epoch 0 diverges at 67; once retention moved the log start to 90,
    the cache answers an epoch older than all it holds with the log start, and the same fetch is accepted."""
    cache = LeaderEpochCache([(0, 0), (1, 67)])

    def position(fetch_offset, log_start):
        return check_fetch_position(fetch_offset, 0, log_start, 109, lambda epoch: cache.end_offset_for(epoch, 109))

    assert position(90, 38) == (ec.NONE, (0, 67))
    cache.truncate_from_start(90)
    assert position(90, 90) == (ec.NONE, None)
    # from the log start on nothing is missed: a stale tail past it diverges at the log start
    assert position(95, 90) == (ec.NONE, (0, 90))
