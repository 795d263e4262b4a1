"""The controller mutation quota (KIP-599) in the controller's topic decisions (``metadata.controller.topics`` with
``replica.quotas.MutationQuota``), mirrored from Kafka's ControllerMutationQuotaTest: a principal with
``controller_mutation_rate`` 2 over 10 one-second samples (a 20-token burst) creating, deleting or growing two topics
of 30 partitions. A strict request (CreateTopics v6+, DeleteTopics v5+, CreatePartitions v3+) gets one through and
the other refused THROTTLING_QUOTA_EXCEEDED with Kafka's message and 5 s to wait (-10 tokens at 2/s); a permissive
one gets both through and 20 s to wait (-40 tokens); no quota, no throttle."""

from __future__ import annotations

import random
import uuid

from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.metadata.controller.topics import ReplicationControl
from kraftwire.metadata.image import replay_all
from kraftwire.metadata.version import DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m
from kraftwire.replica import quotas as q

CT, DT, CP = m.CreateTopicsRequest, m.DeleteTopicsRequest, m.CreatePartitionsRequest
THROTTLED = (ec.THROTTLING_QUOTA_EXCEEDED, "The throttling quota has been exceeded.")
NOW = 5_000_000


def _cluster():
    return replay_all([m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level),
                       m.RegisterBrokerRecord(broker_id=1, incarnation_id=uuid.UUID(int=1), broker_epoch=10,
                                              end_points=[], features=[], rack=None, fenced=False,
                                              in_controlled_shutdown=False, log_dirs=[uuid.UUID(int=1001)])])


def _control() -> ReplicationControl:
    n = iter(range(100, 10_000))
    return ReplicationControl(rng=random.Random(7), new_topic_id=lambda: uuid.UUID(int=next(n)))


def _quota(api: str, version: int, manager=None):
    manager = manager or q.ControllerMutationQuotaManager(samples=10, window_s=1)
    quotas = {(("user", "throttled"),): {q.CONTROLLER_MUTATION_RATE: 2.0}}
    return manager.quota(quotas, "throttled", "client", api, version, NOW)


def _create(rc, img, partitions: int, quota, version: int):
    return rc.create_topics(img, CT(topics=[CT.CreatableTopic(name=name, num_partitions=partitions,
                                                              replication_factor=1, assignments=[], configs=[])
                                            for name in ("topic-1", "topic-2")],
                                    timeout_ms=30000, validate_only=False), version, quota)


def _errors(results) -> list[tuple[int, str | None]]:
    return sorted((r.error_code, r.error_message) for r in results)


def test_strict_create_topics_request():
    result = _create(_control(), _cluster(), 30, _quota("CreateTopics", 6), 6)
    assert _errors(result.response.topics) == [(ec.NONE, None), THROTTLED]
    assert result.response.throttle_time_ms == 5000
    assert sum(type(r.message).__name__ == "PartitionRecord" for r in result.records) == 30


def test_permissive_create_topics_request():
    result = _create(_control(), _cluster(), 30, _quota("CreateTopics", 5), 5)
    assert _errors(result.response.topics) == [(ec.NONE, None)] * 2
    assert result.response.throttle_time_ms == 20000


def test_unbounded_create_topics_request():
    result = _create(_control(), _cluster(), 30, None, 6)
    assert _errors(result.response.topics) == [(ec.NONE, None)] * 2 and result.response.throttle_time_ms == 0


def _two_topics(rc, partitions: int):
    return replay(_cluster(), _create(rc, _cluster(), partitions, None, 7).records)


def test_strict_delete_topics_request():
    rc = _control()
    img = _two_topics(rc, 30)
    result = rc.delete_topics(img, DT(topics=[DT.DeleteTopicState(name=n, topic_id=uuid.UUID(int=0))
                                              for n in ("topic-1", "topic-2")], timeout_ms=30000), 6,
                              _quota("DeleteTopics", 5))
    assert _errors(result.response.responses) == [(ec.NONE, None), THROTTLED]
    assert result.response.throttle_time_ms == 5000 and len(result.records) == 1


def test_permissive_delete_topics_request():
    rc = _control()
    img = _two_topics(rc, 30)
    result = rc.delete_topics(img, DT(topic_names=["topic-1", "topic-2"], timeout_ms=30000), 4,
                              _quota("DeleteTopics", 4))
    assert [r.error_code for r in result.response.responses] == [ec.NONE, ec.NONE]
    assert result.response.throttle_time_ms == 20000 and len(result.records) == 2


def _grow(rc, img, quota):
    return rc.create_partitions(img, CP(topics=[CP.CreatePartitionsTopic(name=n, count=31, assignments=None)
                                                for n in ("topic-1", "topic-2")], timeout_ms=30000,
                                        validate_only=False), quota)


def test_strict_create_partitions_request():
    """TopicsWithOnePartition grown to 31: 30 partitions each."""
    rc = _control()
    result = _grow(rc, _two_topics(rc, 1), _quota("CreatePartitions", 3))
    assert _errors(result.response.results) == [(ec.NONE, None), THROTTLED]
    assert result.response.throttle_time_ms == 5000 and len(result.records) == 30


def test_permissive_create_partitions_request():
    rc = _control()
    result = _grow(rc, _two_topics(rc, 1), _quota("CreatePartitions", 2))
    assert _errors(result.response.results) == [(ec.NONE, None)] * 2
    assert result.response.throttle_time_ms == 20000 and len(result.records) == 60


def test_the_rejected_topic_passes_once_the_throttle_time_has_passed():
    """testStrictCreateTopicsRequest's retry: after the 5 s the bucket is back at zero and the topic goes through,
    without a throttle time."""
    rc, manager = _control(), q.ControllerMutationQuotaManager(samples=10, window_s=1)
    img = _cluster()
    first = _create(rc, img, 30, _quota("CreateTopics", 6, manager), 6)
    refused = [t.name for t in first.response.topics if t.error_code == ec.THROTTLING_QUOTA_EXCEEDED]
    img = replay(img, first.records)
    quotas = {(("user", "throttled"),): {q.CONTROLLER_MUTATION_RATE: 2.0}}
    retry = manager.quota(quotas, "throttled", "client", "CreateTopics", 6, NOW + 5000)
    again = rc.create_topics(img, CT(topics=[CT.CreatableTopic(name=refused[0], num_partitions=30,
                                                               replication_factor=1, assignments=[], configs=[])],
                                     timeout_ms=30000, validate_only=False), 6, retry)
    assert [(t.name, t.error_code) for t in again.response.topics] == [(refused[0], ec.NONE)]
    assert again.response.throttle_time_ms == 0
