"""Replication throttles (``replica.replication_quota``): which replicas a topic's throttled-replicas value names,
Kafka's SimpleRate, and the leader's decision (Kafka's ReplicationQuotaManagerTest and ReplicaManager's
shouldLeaderThrottle)."""

from __future__ import annotations

from kraftwire.replica import replication_quota as rq


def test_throttled_partitions_parse_kafkas_lists():
    """TopicConfigHandler.parseThrottledPartitions: ``*`` throttles all, else the partitions listed for this broker."""
    assert rq.throttled_partitions("*", 1) == rq.ALL
    assert rq.throttled_partitions("0:1,1:2,2:1", 1) == {0, 2}
    assert rq.throttled_partitions(" 0:2 , 3:2", 2) == {0, 3}
    assert rq.throttled_partitions("", 1) == frozenset() and rq.throttled_partitions(None, 1) == frozenset()
    assert rq.throttled_partitions("x:1,4:1", 1) == {4}
    assert rq.is_throttled(rq.ALL, 7) and rq.is_throttled(frozenset({1}), 1) and not rq.is_throttled(frozenset(), 1)


def test_should_throttle_only_while_exceeded():
    """ReplicationQuotaManagerTest.shouldThrottleOnlyDefinedReplicas/shouldExceedQuotaThenReturnBackBelowBoundAsTime
    Passes: 100 B/s; the rate is over it until enough time passes (SimpleRate: the span is at least one window)."""
    quota = rq.ReplicationQuota(samples=10, window_s=1)
    now = 1_000_000
    assert not quota.exceeded(100, now)
    quota.record(99, now)
    assert not quota.exceeded(100, now)  # 99 bytes over one window
    quota.record(2, now)
    assert quota.exceeded(100, now)  # 101 bytes over one window
    assert quota.exceeded(100, now + 1000)  # 101 over 1 s
    assert not quota.exceeded(100, now + 1010)  # 101 over 1.01 s
    assert not quota.exceeded(None, now)
    assert quota.total_bytes == 101


def test_simple_rate_window_is_at_least_one_window():
    rate = rq.SimpleRate(11, 1000)
    assert rate.window_size_ms(0) == 1000
    rate.record(10, 0)
    assert rate.window_size_ms(500) == 1000 and rate.window_size_ms(4000) == 4000


def test_holds_back_out_of_sync_throttled_replicas_over_the_bound():
    assert rq.holds_back(in_sync=False, throttled=True, exceeded=True)
    assert not rq.holds_back(in_sync=True, throttled=True, exceeded=True)
    assert not rq.holds_back(in_sync=False, throttled=False, exceeded=True)
    assert not rq.holds_back(in_sync=False, throttled=True, exceeded=False)


def test_parse_rate():
    assert rq.parse_rate("1024") == 1024 and rq.parse_rate(None) is None and rq.parse_rate("x") is None
