"""A broker's partition health counts, as Kafka's ``ReplicaManager`` gauges report them
(``kafka.server:type=ReplicaManager``), from its hosted partitions' replica states. Pure.

Kafka's rules (``Partition.isUnderReplicated`` / ``isUnderMinIsr`` / ``isAtMinIsr``, ``ReplicaManager``'s gauges):

* PartitionCount: every partition the broker hosts, online or not; LeaderCount: those it leads (online);
* OfflineReplicaCount: hosted partitions whose log directory failed;
* UnderReplicatedPartitions: led partitions whose committed ISR is smaller than the replica set;
* UnderMinIsrPartitionCount / AtMinIsrPartitionCount: led partitions whose committed ISR is below / exactly at the
  effective minimum ISR, ``min(min.insync.replicas, replication factor)``.

The ISR counted is the committed one (a pending expansion does not count yet, a pending shrink still does), as
Kafka's ``partitionState.isr``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from kraftwire import error_codes as ec
from kraftwire.replica.partition import LEADER

#: partition errors of a client fetch that Kafka's FailedFetchRequestsPerSec leaves out (the client is only sent
#: elsewhere, or the broker's disk failed: ``ReplicaManager.readFromLog``); every other error counts
NOT_FAILED_FETCH = frozenset((ec.NONE, ec.UNKNOWN_TOPIC_OR_PARTITION, ec.NOT_LEADER_OR_FOLLOWER,
                              ec.UNKNOWN_LEADER_EPOCH, ec.FENCED_LEADER_EPOCH, ec.REPLICA_NOT_AVAILABLE,
                              ec.KAFKA_STORAGE_ERROR, ec.INCONSISTENT_TOPIC_ID))

#: partition errors of a Produce that Kafka's FailedProduceRequestsPerSec leaves out (``ReplicaManager
#: .appendToLocalLog``: the client is sent elsewhere, the batch is too large or corrupt, the disk failed, or the topic
#: is internal); every other refusal (invalid records, sequence errors, NOT_ENOUGH_REPLICAS…) counts
NOT_FAILED_PRODUCE = frozenset((ec.NONE, ec.UNKNOWN_TOPIC_OR_PARTITION, ec.NOT_LEADER_OR_FOLLOWER,
                                ec.MESSAGE_TOO_LARGE, ec.RECORD_LIST_TOO_LARGE, ec.CORRUPT_MESSAGE,
                                ec.KAFKA_STORAGE_ERROR, ec.INVALID_TOPIC_EXCEPTION))


@dataclass(frozen=True, slots=True)
class ReplicaHealth:
    partitions: int = 0
    leaders: int = 0
    offline: int = 0
    under_replicated: int = 0
    under_min_isr: int = 0
    at_min_isr: int = 0


def replica_health(hosted: Iterable[tuple[object, int, bool]]) -> ReplicaHealth:
    """The counts over ``hosted``: (``ReplicaState``, min.insync.replicas, failed) of each hosted partition."""
    partitions = leaders = offline = under = under_min = at_min = 0
    for state, min_isr, failed in hosted:
        partitions += 1
        if failed:
            offline += 1
            continue
        if state.role != LEADER:
            continue
        leaders += 1
        isr, factor = len(state.isr), len(state.replicas)
        under += isr < factor
        effective = min(min_isr, factor)
        under_min += isr < effective
        at_min += isr == effective
    return ReplicaHealth(partitions, leaders, offline, under, under_min, at_min)
