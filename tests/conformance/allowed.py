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
HASH_ORDER = ("Kafka answers in the iteration order of a hash set or map (unspecified, it varies between runs); "
              "kraftwire keeps the request's order (or sorts)")

#: api keys Kafka 4.4 advertises on its broker listener and kraftwire does not serve, grouped by why
NOT_SERVED = {
    "kraftwire advertises the SASL APIs on SASL listeners only (kraftwire.protocol.served); Kafka on every listener, "
    "answering ILLEGAL_SASL_STATE on a PLAINTEXT one": {17: "SaslHandshake", 36: "SaslAuthenticate"},
    "kraftwire has one log directory per broker (JBOD moves are not implemented)": {34: "AlterReplicaLogDirs"},
    "delegation tokens are not implemented": {38: "CreateDelegationToken", 39: "RenewDelegationToken",
                                              40: "ExpireDelegationToken", 41: "DescribeDelegationToken"},
    "partition reassignment is not implemented": {45: "AlterPartitionReassignments",
                                                  46: "ListPartitionReassignments"},
    "client quotas are not implemented": {48: "DescribeClientQuotas", 49: "AlterClientQuotas"},
    "client-metrics resources (KIP-714) are not implemented": {74: "ListConfigResources"},
    "share groups (KIP-932) are not implemented": {
        76: "ShareGroupHeartbeat", 77: "ShareGroupDescribe", 78: "ShareFetch", 79: "ShareAcknowledge",
        83: "InitializeShareGroupState", 84: "ReadShareGroupState", 85: "WriteShareGroupState",
        86: "DeleteShareGroupState", 87: "ReadShareGroupStateSummary", 90: "DescribeShareGroupOffsets",
        91: "AlterShareGroupOffsets", 92: "DeleteShareGroupOffsets"},
    "streams groups (KIP-1071) are not implemented": {88: "StreamsGroupHeartbeat", 89: "StreamsGroupDescribe",
                                                      93: "StreamsGroupTopologyDescriptionUpdate"},
    "controller registration changes are not implemented": {94: "UnregisterController"},
}
#: APIs whose newest versions (Kafka 4.4's) kraftwire does not serve yet: the answer's max_version is lower
OLDER_MAX = {0: "Produce", 8: "OffsetCommit", 9: "OffsetFetch", 10: "FindCoordinator", 18: "ApiVersions", 26: "EndTxn",
             27: "WriteTxnMarkers", 28: "TxnOffsetCommit", 57: "UpdateFeatures", 80: "AddRaftVoter"}


def _names(apis: dict[int, str]) -> str:
    return ", ".join(f"{name} ({key})" for key, name in apis.items())


#: features whose newest levels Kafka 4.4 supports and kraftwire refuses (kraftwire.metadata.features.REFUSED)
FEATURES = ("share.version", "streams.version", "transaction.version", "eligible.leader.replicas.version")

ALLOWED: list[Allowance] = [
    # ---- the order of lists Kafka builds from hash sets and maps
    Allowance("*", "Metadata*.topics.<order>", HASH_ORDER + " (KafkaApis: named topics from a Scala set, the known "
              "ones before the unknown ones)"),
    Allowance("DeleteTopics-*", "DeleteTopics*.responses.<order>", HASH_ORDER + " (ControllerApis.deleteTopics)"),
    Allowance("CreatePartitions-*", "CreatePartitions*.results.<order>",
              HASH_ORDER + " (ControllerApis.createPartitions)"),
    Allowance("*", "DescribeConfigs*.results[*].configs.<order>", HASH_ORDER + " (a resource's configs)"),
    Allowance("ListOffsets-*", "ListOffsets*.topics[*].partitions.<order>", HASH_ORDER + " (partitions by topic)"),
    # ---- differences kraftwire keeps for now, each with why
    Allowance("DescribeConfigs-v*-broker-logger", "*", "kraftwire has no log4j loggers: a BROKER_LOGGER resource is "
              "INVALID_REQUEST (Kafka lists its loggers' levels)"),
    Allowance("IncrementalAlterConfigs-v*-broker-logger", "*", "kraftwire has no log4j loggers: a BROKER_LOGGER "
              "resource is INVALID_REQUEST (Kafka checks the logger exists)"),
    Allowance("DescribeConfigs-v*-topic-documentation", "DescribeConfigs.results[*].configs[*].documentation",
              "kraftwire carries no documentation for Kafka's topic keys (Kafka's prose is not copied)"),
    Allowance("DescribeConfigs-v*-broker-all", "DescribeConfigs.results[4,1].configs[kraftwire.*]",
              "kraftwire's own keys, described with the others"),
    *(Allowance("DescribeConfigs-v*-broker-all", f"DescribeConfigs.results[4,1].configs[{key}]",
                "kraftwire describes the StandardAuthorizer's keys it reads; Kafka describes KafkaConfig's keys only")
      for key in ("super.users", "allow.everyone.if.no.acl.found")),
    *(Allowance("DescribeConfigs-v*-broker-all", f"DescribeConfigs.results[4,1].configs[{key}]",
                "an internal key in Kafka's KafkaConfig (not described); kraftwire reads it and describes it")
      for key in ("metadata.log.segment.min.bytes", "producer.id.expiration.check.interval.ms")),
    Allowance("IncrementalAlterConfigs-v*-broker-other-id", "IncrementalAlterConfigs.responses[4,2].*",
              "Kafka's receiving broker refuses any broker id but its own before forwarding (INVALID_REQUEST "
              "'Unexpected broker id, expected 1, but received 2'); kraftwire's controller decides, refusing an id "
              "no broker registered (BROKER_ID_NOT_REGISTERED) — the edge does not split such requests yet"),
    # ---- Kafka's own failures: kraftwire keeps the meaningful answer
    Allowance("DescribeTopicPartitions-v0-invalid-name", "DescribeTopicPartitions.topics*",
              "Kafka 4.4 fails an illegal name with UNKNOWN_SERVER_ERROR and no authorized operations (an exception "
              "escapes its metadata cache); kraftwire answers INVALID_TOPIC_EXCEPTION, as Metadata does"),
    *(Allowance("ApiVersions-v*-ranges", f"ApiVersions.supported_features[{name}].max_version",
                "kraftwire supports this feature's levels it has the semantics of only (TV2: KIP-890 part 2; ELR: "
                "KIP-966; share and streams groups), refusing the others by name") for name in FEATURES),
    Allowance("ApiVersions-v*-ranges", "ApiVersions.supported_features[metadata.version].max_version",
              "kraftwire supports metadata.version up to 4.4-IV0 (level 31); Kafka 4.4 up to 4.4-IV2 (33): 4.4-IV1's "
              "CIDR ACL hosts (KIP-1276) and 4.4-IV2's controller unregistration (KIP-1312) are not implemented"),
    *(Allowance("ApiVersions-v*-ranges", f"ApiVersions.api_keys[{key}]", f"not served: {why} — {_names(apis)}")
      for why, apis in NOT_SERVED.items() for key in apis),
    *(Allowance("ApiVersions-v*-ranges", f"ApiVersions.api_keys[{key}].max_version",
                f"kraftwire does not serve Kafka 4.4's newest versions yet of {_names(OLDER_MAX)}")
      for key in OLDER_MAX),
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
    Allowance("Produce-v11-null-records", "Produce",
              "Kafka 4.4 never answers a Produce whose records are null (its handler fails on them and the request "
              "is left unanswered); kraftwire refuses the partition (CORRUPT_MESSAGE)"),
]
ALLOWED.extend(DATA_AND_COORDINATORS)
_COMPILED.extend((_regex(a.scenario), _regex(a.path), a) for a in DATA_AND_COORDINATORS)
