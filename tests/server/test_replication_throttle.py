"""The leader's replication throttle at the edge (``FetchApis._held_back`` / ``_record_replication`` over
``replica.replication_quota``): which follower reads are held back, from the broker's dynamic rate and the topic's
throttled replicas, and which answer bytes are recorded. The node is faked down to what these read: its image's
configs, its broker configs, its id and a partition's ISR."""

from __future__ import annotations

from types import SimpleNamespace

from kraftwire.kafka_configs import BrokerConfigs
from kraftwire.protocol import messages as w
from kraftwire.replica.replication_quota import ReplicationQuota
from kraftwire.server.apis.fetch_apis import FetchApis

R = w.FetchResponse


def _apis(rate: str | None, replicas: str | None) -> FetchApis:
    apis = FetchApis()
    broker = {} if rate is None else {"leader.replication.throttled.rate": rate}
    topic = {} if replicas is None else {"leader.replication.throttled.replicas": replicas}
    apis.md = SimpleNamespace(image=SimpleNamespace(configs={(2, "t"): topic}, topics={}))
    apis.replicas = SimpleNamespace(broker_configs=lambda: BrokerConfigs(static={}, cluster={}, broker=broker))
    apis.node = SimpleNamespace(settings=SimpleNamespace(node_id=1))
    apis.replication = ReplicationQuota()
    return apis


def _hosted(partition: int, isr=(1,)):
    return SimpleNamespace(topic="t", index=partition, state=SimpleNamespace(isr=isr))


def _answer(*parts: tuple[int, int]):
    return R(throttle_time_ms=0, error_code=0, session_id=0, responses=[R.FetchableTopicResponse(
        topic="t", partitions=[R.PartitionData(partition_index=i, records=b"x" * n) for i, n in parts])])


def test_a_follower_out_of_the_isr_is_held_back_once_over_the_rate():
    apis = _apis("1000", "0:1,1:2")
    assert not apis._held_back(_hosted(0), 2)  # nothing recorded yet
    apis._record_replication(_answer((0, 100_000), (1, 5000)))  # partition 1 is not throttled on broker 1
    assert apis.replication.total_bytes == 100_000
    assert apis._held_back(_hosted(0), 2)  # 100 kB within a few seconds: over 1000 B/s
    assert not apis._held_back(_hosted(0, isr=(1, 2)), 2)  # a follower in the ISR is never held back
    assert not apis._held_back(_hosted(1), 2)  # partition 1's replica here is not throttled


def test_no_rate_or_no_throttled_replicas_nothing_held():
    for rate, replicas in ((None, "*"), ("1", None), ("1", "")):
        apis = _apis(rate, replicas)
        apis.replication.record(10**9, 0)
        assert not apis._held_back(_hosted(0), 2), (rate, replicas)


def test_all_replicas_throttled_with_a_star():
    apis = _apis("10", "*")
    apis._record_replication(_answer((3, 100)))
    assert apis.replication.total_bytes == 100 and apis._held_back(_hosted(3), 2)


def _fetchers(rate: str | None, replicas: str | None):
    from kraftwire.server.runtime.fetcher import ReplicaFetchers

    broker = {} if rate is None else {"follower.replication.throttled.rate": rate}
    topic = {} if replicas is None else {"follower.replication.throttled.replicas": replicas}
    node = SimpleNamespace(settings=SimpleNamespace(node_id=2, inter_broker_ssl_context=lambda: None),
                           metadata=SimpleNamespace(image=SimpleNamespace(configs={(2, "t"): topic})))
    manager = SimpleNamespace(broker_configs=lambda: BrokerConfigs(static={}, cluster={}, broker=broker))
    return ReplicaFetchers(manager, node)


def test_a_follower_leaves_out_its_throttled_partitions_once_over_the_rate():
    """The follower side (shouldFollowerThrottle): broker 2's replica of partition 0 is throttled at 1000 B/s."""
    fetchers = _fetchers("1000", "0:2,1:3")
    assert not fetchers.held_back(_hosted(0))
    fetchers.received(_hosted(1), 10**6)  # partition 1's replica here is not throttled: not recorded
    assert fetchers.replication.total_bytes == 0 and not fetchers.held_back(_hosted(0))
    fetchers.received(_hosted(0), 100_000)
    assert fetchers.replication.total_bytes == 100_000
    assert fetchers.held_back(_hosted(0))  # out of the ISR (1,) and over the rate
    assert not fetchers.held_back(_hosted(0, isr=(1, 2)))  # in the ISR: fetched anyway
    assert not _fetchers(None, "*").held_back(_hosted(0))
