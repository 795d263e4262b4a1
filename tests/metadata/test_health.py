"""KafkaController's cluster counts from the image (``metadata.health``), after Kafka's
``ControllerMetricsChangesTest``: offline partitions, preferred-replica imbalance, fenced and active brokers."""

from __future__ import annotations

from kraftwire.ids import UUID
from kraftwire.metadata.health import ClusterHealth, cluster_health
from kraftwire.metadata.image import MetadataDelta, MetadataImage
from kraftwire.protocol import messages as m

T1, T2 = UUID(int=11), UUID(int=12)


def _image() -> MetadataImage:
    d = MetadataDelta(MetadataImage())
    for b, fenced in ((1, False), (2, False), (3, True)):
        d.replay(m.RegisterBrokerRecord(broker_id=b, is_migrating_zk_broker=False, incarnation_id=UUID(int=100 + b),
                                        broker_epoch=b, end_points=[], features=[], rack=None, fenced=fenced,
                                        in_controlled_shutdown=False, log_dirs=[]))
    d.replay(m.TopicRecord(name="a", topic_id=T1))
    d.replay(m.TopicRecord(name="b", topic_id=T2))
    for tid, index, replicas, leader in ((T1, 0, [1, 2], 1),  # preferred leader
                                         (T1, 1, [1, 2], 2),  # not the preferred leader
                                         (T2, 0, [3, 1], -1)):  # offline (and so not preferred either)
        d.replay(m.PartitionRecord(partition_id=index, topic_id=tid, replicas=replicas,
                                   isr=[leader] if leader >= 0 else [], removing_replicas=[], adding_replicas=[],
                                   leader=leader, leader_recovery_state=0, leader_epoch=0, partition_epoch=0,
                                   directories=[]))
    return d.apply(10)


def test_counts_from_the_image():
    assert cluster_health(_image()) == ClusterHealth(topics=2, partitions=3, offline_partitions=1,
                                                     preferred_replica_imbalance=2, active_brokers=2,
                                                     fenced_brokers=1)


def test_an_empty_image_counts_nothing():
    assert cluster_health(MetadataImage()) == ClusterHealth()
