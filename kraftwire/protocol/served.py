"""Which Kafka APIs kraftwire serves, and at which versions: the one table the handlers register from.

Api keys are never written as numbers outside :mod:`kraftwire.protocol`: a handler names its API
(``dispatcher.serve("Produce", handler)``) and the key comes from the declared messages. The version range here is
what kraftwire answers, which may be narrower than what the schemas declare (a newer JoinGroup, for instance, adds
semantics kraftwire does not implement yet); ``tests/protocol/test_served.py`` checks that every range lies inside
the declared one. ApiVersions advertises exactly the registered ranges.

A few ranges have a lower bound for a reason worth keeping next to it:

* ``Fetch`` from 4 for consumers (record batches v2 need magic 2); a Raft replica's Fetch needs topic ids (13+),
  see ``RAFT_FETCH_MIN_VERSION``.
* ``ListOffsets`` from 1 (v0's offset arrays are not served).
* ``OffsetCommit`` from 2 and ``OffsetFetch`` from 1 (the ZooKeeper-era v0 forms).
* The versions Kafka 4.0 removed (KIP-896) are not served, as Kafka 4.4 answers them; only Produce v0-2 stay
  advertised (refused per partition), as Kafka keeps them listed for librdkafka (KAFKA-18659).

Every range reaches Kafka 4.4's newest (what its broker advertises at metadata.version 3.9);
``tests/kafka/test_api_levels_oracle.py`` checks the raised ranges against a Kafka 4.4 node.

KIP-890 part 2's versions — Produce v12 and TxnOffsetCommit v5 (the leader adds the partition to the transaction),
EndTxn v5 (the epoch bumped at every end, the producer id and epoch answered) — are advertised whatever
transaction.version the cluster finalized, as Kafka 4.4 advertises them (checked against a Kafka node formatted at
transaction.version 0 and 2): a client decides from the finalized level in ApiVersions whether it speaks them.
"""

from __future__ import annotations

from kraftwire.protocol.messages import api

#: api name -> (lowest, highest) version kraftwire serves
SERVED: dict[str, tuple[int, int]] = {
    # client APIs
    "Produce": (0, 13),  # v13: topics by id (``replica.produce_answer.TOPIC_IDS_SINCE``)
    "Fetch": (4, 18),
    "ListOffsets": (1, 11),
    "Metadata": (0, 13),
    "OffsetCommit": (2, 10),  # v10: topics by id (``coordinator.group.offsets.TOPIC_IDS_SINCE``)
    "OffsetFetch": (1, 10),
    "FindCoordinator": (0, 6),
    "JoinGroup": (0, 9),
    "Heartbeat": (0, 4),
    "LeaveGroup": (0, 5),
    "SyncGroup": (0, 5),
    "DescribeGroups": (0, 6),
    "ListGroups": (0, 5),
    "ApiVersions": (0, 5),  # v5: KIP-1242's cluster and node check (``api_versions``)
    "InitProducerId": (0, 5),
    # inter-broker: a transaction coordinator's markers to partition leaders; v2 says the transaction's version
    # (KIP-1228), whose epoch rule the leader applies (``replica.producers``)
    "WriteTxnMarkers": (1, 2),
    # the transaction coordinator (KIP-98): AddPartitionsToTxn v0-3 from clients, v4-5 from partition leaders
    # verifying (KIP-890 part 1) or adding (part 2) the partition of a transactional write
    "AddPartitionsToTxn": (0, 5),
    "AddOffsetsToTxn": (0, 4),
    "EndTxn": (0, 5),
    "TxnOffsetCommit": (0, 6),  # v6: topics by id (``coordinator.group.offsets.TXN_TOPIC_IDS_SINCE``)
    "DescribeTransactions": (0, 0),
    "ListTransactions": (0, 2),
    "DescribeProducers": (0, 0),  # a partition replica's producer state (kafka-transactions.sh)
    "OffsetForLeaderEpoch": (2, 4),
    "DeleteRecords": (0, 2),
    "DescribeLogDirs": (1, 5),
    "AlterReplicaLogDirs": (1, 2),
    "DescribeConfigs": (1, 4),
    "DeleteGroups": (0, 3),
    "OffsetDelete": (0, 0),
    "DescribeCluster": (0, 2),
    "DescribeTopicPartitions": (0, 0),
    # KIP-848 consumer groups; librdkafka sends ConsumerGroupHeartbeat v1 only (client-side member ids, KIP-1082)
    "ConsumerGroupHeartbeat": (0, 1),
    "ConsumerGroupDescribe": (0, 1),
    # KIP-932 share groups (answered UNSUPPORTED_VERSION until share.version is finalized at 1, as Kafka) and the
    # share coordinator's state RPCs (from share-partition leaders and group coordinators)
    "ShareGroupHeartbeat": (1, 1),
    "ShareGroupDescribe": (1, 1),
    "ShareFetch": (1, 2),
    "ShareAcknowledge": (1, 2),
    "InitializeShareGroupState": (0, 0),
    "ReadShareGroupState": (0, 0),
    "WriteShareGroupState": (0, 1),
    "DeleteShareGroupState": (0, 0),
    "ReadShareGroupStateSummary": (0, 1),
    # the share-group offsets admin APIs (kafka-share-groups.sh), answered UNSUPPORTED_VERSION like the others
    "DescribeShareGroupOffsets": (0, 1),
    "AlterShareGroupOffsets": (0, 0),
    "DeleteShareGroupOffsets": (0, 0),
    # the controller's client-facing APIs (a KRaft node; a broker forwards them to the active controller)
    "CreateTopics": (2, 7),
    "DeleteTopics": (1, 6),
    "CreatePartitions": (0, 3),
    "ElectLeaders": (0, 2),
    "IncrementalAlterConfigs": (0, 1),
    "AlterConfigs": (0, 2),
    "UpdateFeatures": (0, 2),  # v2 only drops the per-feature results from the answer
    "UnregisterBroker": (0, 0),
    "UnregisterController": (0, 0),  # KIP-1312 (metadata.version 4.4-IV2)
    # partition reassignment (KIP-455; v1 adds KIP-860's AllowReplicationFactorChange)
    "AlterPartitionReassignments": (0, 1),
    "ListPartitionReassignments": (0, 0),
    # ACLs (a broker answers DescribeAcls from its image; Create/DeleteAcls go to the active controller) and SCRAM
    # credentials (Describe from the image, Alter through the controller)
    "CreateAcls": (1, 3),
    "DescribeAcls": (1, 3),
    "DeleteAcls": (1, 3),
    "DescribeUserScramCredentials": (0, 0),
    "AlterUserScramCredentials": (0, 0),
    # client quotas (KIP-546): Describe from the image, Alter through the controller
    "DescribeClientQuotas": (0, 1),
    "AlterClientQuotas": (0, 1),
    # SASL listeners only; after a SaslHandshake v0 the tokens travel raw (size-prefixed, no Kafka header)
    "SaslHandshake": (0, 1),
    "SaslAuthenticate": (0, 2),
    # the quorum's APIs
    "Vote": (0, 2),
    "BeginQuorumEpoch": (0, 1),
    "EndQuorumEpoch": (0, 1),
    "DescribeQuorum": (0, 2),
    "FetchSnapshot": (0, 1),
    # KIP-853 voter changes: the Raft leader decides, a broker or another controller forwards to it
    "AddRaftVoter": (0, 1),  # v1: AckWhenCommitted false answers at the append (``raft.handlers.reconfig``)
    "RemoveRaftVoter": (0, 0),
    "UpdateRaftVoter": (0, 0),  # a voter to the leader, on the controller listener
    # v4 (KAFKA-17011): features a broker supports from level 0 are listed; before v4 a Kafka broker leaves them out,
    # and a controller with such a feature finalized above 0 must refuse it (group.version, transaction.version...)
    "BrokerRegistration": (0, 4),
    "ControllerRegistration": (0, 0),  # KIP-919: each controller to the active one
    "Envelope": (0, 0),  # KIP-590: a Kafka broker's forwarded admin request, with the client's principal
    # v2 adds CordonedLogDirs (KIP-1066, Kafka 4.4): a Kafka 4.4 broker always sends it, so it cannot heartbeat at
    # v1. kraftwire's metadata versions stop below the level that records cordoned directories, where Kafka's
    # controller keeps no cordons either: the list is taken and not recorded
    "BrokerHeartbeat": (0, 2),
    "AlterPartition": (2, 3),
    "AllocateProducerIds": (0, 0),
    "AssignReplicasToDirs": (0, 0),
}

#: a Raft replica's Fetch names the topic by id (KIP-516), which Fetch has from version 13
RAFT_FETCH_MIN_VERSION = 13


def key(name: str) -> int:
    """The api key of *name* (``"Produce"`` -> 0), from the declared messages."""
    return api(name).key


def versions(name: str) -> tuple[int, int]:
    """The served version range of *name*; KeyError names an API kraftwire does not serve."""
    try:
        return SERVED[name]
    except KeyError:
        raise KeyError(f"kraftwire does not serve {name}") from None


def keys(*names: str) -> frozenset[int]:
    return frozenset(key(n) for n in names)
