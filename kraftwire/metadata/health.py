"""The cluster counts a controller reports (``kafka.controller:type=KafkaController``), from the metadata image, as
Kafka's ``ControllerMetadataMetrics`` derives them from each published image. Pure.

* GlobalTopicCount / GlobalPartitionCount: topics and partitions in the image;
* OfflinePartitionsCount: partitions without a leader;
* PreferredReplicaImbalanceCount: partitions whose leader is not their first replica (an offline one counts too);
* ActiveBrokerCount / FencedBrokerCount: registered brokers unfenced / fenced (one in controlled shutdown is still
  active until it is fenced).
"""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.metadata.image import NO_LEADER, MetadataImage


@dataclass(frozen=True, slots=True)
class ClusterHealth:
    topics: int = 0
    partitions: int = 0
    offline_partitions: int = 0
    preferred_replica_imbalance: int = 0
    active_brokers: int = 0
    fenced_brokers: int = 0


def cluster_health(image: MetadataImage) -> ClusterHealth:
    partitions = offline = imbalance = 0
    for topic in image.topics.values():
        for p in topic.partitions.values():
            partitions += 1
            offline += p.leader == NO_LEADER
            imbalance += p.leader != (p.replicas[0] if p.replicas else NO_LEADER)
    fenced = sum(1 for b in image.brokers.values() if b.fenced)
    return ClusterHealth(len(image.topics), partitions, offline, imbalance, len(image.brokers) - fenced, fenced)
