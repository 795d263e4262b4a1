"""The differences between Kafka 4.4 and kraftwire that the conformance run accepts, each with why.

An entry is (scenario id pattern, path pattern, reason); ``*`` is the only wildcard (``[``, ``]``, ``{ns}`` are
literal), and a pattern matches the whole id or path. A path names the step's API (``#2`` for its second request
of that API), then the field: ``CreateTopics.topics[{ns}.a].error_message``, ``Metadata.topics.<order>``,
``<kraftwire log>``. Keep entries narrow (a scenario family and one field), and say in the reason whether it is
Kafka's bug, a choice of kraftwire, or a fix waiting on another branch (then delete the entry when it lands: the
conformance table lists entries that no difference used).
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Allowance(NamedTuple):
    scenario: str
    path: str
    reason: str


#: reasons shared by several entries
BADINPUT = "fixed on branch badinput-a/b (#37 item {})"

#: api keys Kafka 4.4 advertises on its broker listener and kraftwire does not serve, with why
NOT_SERVED = {
    17: "SaslHandshake: kraftwire advertises the SASL APIs on SASL listeners only (kraftwire.protocol.served); "
        "Kafka on every listener, answering ILLEGAL_SASL_STATE on a PLAINTEXT one",
    34: "AlterReplicaLogDirs: kraftwire has one log directory per broker (JBOD moves not implemented)",
    36: "SaslAuthenticate: kraftwire advertises the SASL APIs on SASL listeners only (kraftwire.protocol.served)",
    38: "CreateDelegationToken: delegation tokens are not implemented",
    39: "RenewDelegationToken: delegation tokens are not implemented",
    40: "ExpireDelegationToken: delegation tokens are not implemented",
    41: "DescribeDelegationToken: delegation tokens are not implemented",
    45: "AlterPartitionReassignments: partition reassignment is not implemented",
    46: "ListPartitionReassignments: partition reassignment is not implemented",
    48: "DescribeClientQuotas: client quotas are not implemented",
    49: "AlterClientQuotas: client quotas are not implemented",
    74: "ListConfigResources: client-metrics resources (KIP-714) are not implemented",
    76: "ShareGroupHeartbeat: share groups (KIP-932) are not implemented",
    77: "ShareGroupDescribe: share groups (KIP-932) are not implemented",
    78: "ShareFetch: share groups (KIP-932) are not implemented",
    79: "ShareAcknowledge: share groups (KIP-932) are not implemented",
    83: "InitializeShareGroupState: share groups (KIP-932) are not implemented",
    84: "ReadShareGroupState: share groups (KIP-932) are not implemented",
    85: "WriteShareGroupState: share groups (KIP-932) are not implemented",
    86: "DeleteShareGroupState: share groups (KIP-932) are not implemented",
    87: "ReadShareGroupStateSummary: share groups (KIP-932) are not implemented",
    88: "StreamsGroupHeartbeat: streams groups (KIP-1071) are not implemented",
    89: "StreamsGroupDescribe: streams groups (KIP-1071) are not implemented",
    90: "DescribeShareGroupOffsets: share groups (KIP-932) are not implemented",
    91: "AlterShareGroupOffsets: share groups (KIP-932) are not implemented",
    92: "DeleteShareGroupOffsets: share groups (KIP-932) are not implemented",
    93: "StreamsGroupTopologyDescriptionUpdate: streams groups (KIP-1071) are not implemented",
    94: "UnregisterController: not implemented",
}
#: APIs whose newest versions (Kafka 4.4's) kraftwire does not serve yet: the answer's max_version is lower
OLDER_MAX = {0: "Produce", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
             10: "FindCoordinator", 11: "JoinGroup", 13: "LeaveGroup", 15: "DescribeGroups", 18: "ApiVersions",
             26: "EndTxn", 27: "WriteTxnMarkers", 28: "TxnOffsetCommit", 35: "DescribeLogDirs", 42: "DeleteGroups",
             57: "UpdateFeatures", 60: "DescribeCluster", 66: "ListTransactions", 69: "ConsumerGroupDescribe",
             80: "AddRaftVoter"}
#: APIs whose oldest versions Kafka 4.0 removed (KIP-896) and kraftwire still serves: the min_version is lower
REMOVED_IN_KAFKA_4 = {19: "CreateTopics", 20: "DeleteTopics", 23: "OffsetForLeaderEpoch", 27: "WriteTxnMarkers",
                      29: "DescribeAcls", 30: "CreateAcls", 31: "DeleteAcls", 32: "DescribeConfigs",
                      35: "DescribeLogDirs"}

#: features Kafka 4.4 supports and kraftwire does not (it implements metadata.version up to 3.9-IV0, and kraft.version)
FEATURES = ("group.version", "share.version", "streams.version", "transaction.version",
            "eligible.leader.replicas.version")

ALLOWED: list[Allowance] = [
    *(Allowance("ApiVersions-v*-ranges", f"ApiVersions.supported_features[{name}]",
                "kraftwire does not implement this feature (it supports metadata.version and kraft.version)")
      for name in FEATURES),
    Allowance("ApiVersions-v*-ranges", "ApiVersions.supported_features[metadata.version].max_version",
              "kraftwire supports metadata.version up to 3.9-IV0 (level 21); Kafka 4.4 up to its 4.x levels"),
    *(Allowance("ApiVersions-v*-ranges", f"ApiVersions.api_keys[{key}]", reason) for key, reason in NOT_SERVED.items()),
    *(Allowance("ApiVersions-v*-ranges", f"ApiVersions.api_keys[{key}].max_version",
                f"{name}: kraftwire does not serve Kafka 4.4's newest versions yet")
      for key, name in OLDER_MAX.items()),
    *(Allowance("ApiVersions-v*-ranges", f"ApiVersions.api_keys[{key}].min_version",
                f"{name}: Kafka 4.0 removed the versions below its KIP-896 baseline; kraftwire still serves them")
      for key, name in REMOVED_IN_KAFKA_4.items()),
]


def _regex(pattern: str) -> re.Pattern:
    return re.compile("".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", pattern)))


_COMPILED = [(_regex(a.scenario), _regex(a.path), a) for a in ALLOWED]


def allowance(scenario_id: str, path: str) -> Allowance | None:
    """The first entry covering this difference, or None."""
    for scenario, field, entry in _COMPILED:
        if scenario.fullmatch(scenario_id) and field.fullmatch(path):
            return entry
    return None


# ======================================================================================================================
# The data and coordinator APIs' scenarios (Produce, Fetch, groups, transactions, ...: branch conformance-data)
# ======================================================================================================================
#: Kafka answers in the iteration order of a hash map kraftwire cannot rebuild (its keys are random or the map holds
#: the whole node's state); clients match the elements by their keys
HASH_ORDER = "Kafka lists these in the iteration order of {}; kraftwire lists them in request order"
#: a fetch from Kafka stops at a segment's end
SEGMENT_ROLL = ("a transaction marker carries the coordinator's clock, years after the records' fixed timestamps, so "
                "Kafka rolls a new segment for it (segment.ms counts from a segment's first timestamp) and its fetch "
                "reads one segment (LocalLog.read): the records without the marker; kraftwire's log reads continue "
                "into the next segment (the log contract it shares with the Raft log) — not fixed: a contract change")

DATA_AND_COORDINATORS: list[Allowance] = [
    Allowance("Produce-v*-two-partitions", "Produce.responses[{ns}.a].partition_responses.<order>",
              HASH_ORDER.format("a hash map of topic ids (random) and partitions")),
    Allowance("Produce-v*-two-partitions", "ListOffsets.topics[{ns}.a].partitions.<order>",
              HASH_ORDER.format("a hash map of topic ids (random) and partitions")),
    Allowance("AddPartitionsToTxn-v*-unknown-partition", "AddPartitionsToTxn.results_by_*.<order>",
              HASH_ORDER.format("hash maps of its refusals (by topic, then partition; no order tried here "
                                "reproduced Kafka's for every name)")),
    Allowance("DescribeLogDirs-v*-topic", "DescribeLogDirs.results[0].topics[{ns}.a].partitions.<order>",
              HASH_ORDER.format("its log manager's map, which holds every partition of the node")),
    Allowance("ListGroups-v*", "ListGroups.groups.<order>",
              HASH_ORDER.format("its coordinator's timeline hash table, whose size depends on every group of the "
                                "node (other scenarios' too)").replace("request order", "group id order")),
    *(Allowance(f"*-v*-{case}", path, HASH_ORDER.format("a hash map of the member ids (random UUIDs)")
                .replace("request order", "join order"))
      for case in ("second-member", "during-rebalance")
      for path in ("DescribeGroups*.groups[{ns}.g].members.<order>", "JoinGroup#*.members.<order>")),
    Allowance("Fetch-v*-session-new-then-incremental", "Fetch.session_id",
              "kraftwire keeps no fetch sessions (KIP-227): it answers a full request with session id 0, as Kafka "
              "answers when its session cache is full (clients then keep sending full requests)"),
    Allowance("Fetch-v*-session-new-then-incremental", "Fetch#2.*",
              "kraftwire keeps no fetch sessions: the incremental request following Kafka's session id names no "
              "session of kraftwire's (FETCH_SESSION_ID_NOT_FOUND, as Kafka answers an unknown session)"),
    Allowance("Fetch-v*-read-committed-aborted-transaction", "Fetch.responses[*].partitions[0].records.<batches>",
              SEGMENT_ROLL),
    *(Allowance(f"EndTxn-v*-{case}", "Fetch.responses[{ns}.a].partitions[0].records.<batches>", SEGMENT_ROLL)
      for case in ("commit", "abort", "commit-with-offsets")),
    Allowance("JoinGroup-v*-static-member-replaced", "JoinGroup#2.*",
              "a static member that leads the group rejoins with unchanged protocols (a new member id): Kafka 4.4 "
              "answers the current generation without a rebalance, naming the old member id as leader (its KIP-814 "
              "path); kraftwire rebalances (generation 2) — not fixed: Kafka's leader id there is its own quirk"),
    *(Allowance(f"AddPartitionsToTxn-v{v}-add*", path,
                "a broker's AddPartitionsToTxn v4+ that adds (not verify_only) and passes every check: Kafka 4.4 "
                "refuses it (UNSUPPORTED_VERSION) below transaction.version 2 (KIP-890 part 2); kraftwire, which "
                "has no transaction.version feature, adds the partitions — not fixed")
      for v in (4, 5) for path in ("AddPartitionsToTxn*", "DescribeTransactions.*")),
    Allowance("ConsumerGroup*", "ConsumerGroup*",
              "Kafka 4.4 serves KIP-848's consumer group protocol from group.version 1, which needs metadata.version "
              "4.0: at this pair's 3.9 (the highest kraftwire formats) it answers UNSUPPORTED_VERSION; kraftwire has "
              "no group.version feature and serves the protocol at every level"),
    Allowance("Produce-v11-null-records", "Produce",
              "Kafka 4.4 never answers a Produce whose records are null (its handler fails on them and the request "
              "is left unanswered); kraftwire refuses the partition (CORRUPT_MESSAGE)"),
]
ALLOWED.extend(DATA_AND_COORDINATORS)
_COMPILED.extend((_regex(a.scenario), _regex(a.path), a) for a in DATA_AND_COORDINATORS)
