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


#: api keys Kafka 4.4 advertises on its broker listener and kraftwire does not serve, grouped by why
NOT_SERVED = {
    "delegation tokens are not implemented": {38: "CreateDelegationToken", 39: "RenewDelegationToken",
                                              40: "ExpireDelegationToken", 41: "DescribeDelegationToken"},
    "client-metrics resources (KIP-714) are not implemented": {74: "ListConfigResources"},
    "streams groups (KIP-1071) are not implemented": {88: "StreamsGroupHeartbeat", 89: "StreamsGroupDescribe",
                                                      93: "StreamsGroupTopologyDescriptionUpdate"},
}


def _names(apis: dict[int, str]) -> str:
    return ", ".join(f"{name} ({key})" for key, name in apis.items())


#: features whose newest levels Kafka 4.4 supports and kraftwire refuses (kraftwire.metadata.features.REFUSED)
FEATURES = ("streams.version",)

ALLOWED: list[Allowance] = [
    # ---- Kafka's own failures: kraftwire keeps the meaningful answer
    Allowance("DescribeTopicPartitions-v0-invalid-name", "DescribeTopicPartitions.topics*",
              "Kafka 4.4 fails an illegal name with UNKNOWN_SERVER_ERROR and no authorized operations (an exception "
              "escapes its metadata cache); kraftwire answers INVALID_TOPIC_EXCEPTION, as Metadata does"),
    *(Allowance("ApiVersions-v*-ranges", f"ApiVersions.supported_features[{name}].max_version",
                "kraftwire supports this feature's levels it has the semantics of only (streams groups), "
                "refusing the others by name") for name in FEATURES),
    *(Allowance("ApiVersions-v*-ranges", f"ApiVersions.api_keys[{key}]", f"not served: {why} — {_names(apis)}")
      for why, apis in NOT_SERVED.items() for key in apis),
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
#: a fetch from Kafka stops at a segment's end
SEGMENT_ROLL = ("a transaction marker carries the coordinator's clock, years after the records' fixed timestamps, so "
                "Kafka rolls a new segment for it (segment.ms counts from a segment's first timestamp) and its fetch "
                "reads one segment (LocalLog.read): the records without the marker; kraftwire's log reads continue "
                "into the next segment (the log contract it shares with the Raft log) — not fixed: a contract change")

DATA_AND_COORDINATORS: list[Allowance] = [
    Allowance("ShareFetch-v1-acquire-and-acknowledge", "ShareFetch#5.responses[0].partitions[0].error_message",
              "the same code (UNKNOWN_SERVER_ERROR) for a share-partition whose state the share coordinator refuses "
              "to read (never initialized): Kafka 4.4 answers it without a message when the refusal comes while "
              "its delayed fetch waits (three runs of three), and with the share coordinator's message 'Read "
              "operation on uninitialized share partition not allowed.' when its MaxWaitMs 0 fetch did not wait "
              "(earlier runs); kraftwire answers the message either way — the path that drops it is not found"),
    Allowance("ShareAcknowledge-v2-renew", "ShareAcknowledge#7.responses[0].partitions[0].error_message",
              "the same refusal (INVALID_RECORD_STATE) worded per batch: Kafka 4.4 keeps a share-partition's states "
              "per acquired batch until an acknowledgement covers part of one, and words a refusal in a batch it "
              "split 'The offset cannot be acknowledged. The offset is not acquired.'; kraftwire keeps them per "
              "offset and words every such refusal as Kafka does for a whole batch"),
    Allowance("ListGroups-v*", "ListGroups.groups.<order>",
              "Kafka lists the groups in the iteration order of its coordinator's timeline hash table (one per "
              "__consumer_offsets partition), whose size and history depend on every group the node held (other "
              "scenarios' too); kraftwire lists them in group id order. (The hash orders kraftwire can compute it "
              "reproduces: kraftwire.java_order; orders of values picked at random are not compared: "
              "runner.ORDER_CARRIES_NOTHING)"),
    Allowance("Fetch-v*-read-committed-aborted-transaction", "Fetch.responses[*].partitions[0].records.<batches>",
              SEGMENT_ROLL),
    *(Allowance(f"EndTxn-v*-{case}", "Fetch.responses[{ns}.a].partitions[0].records.<batches>", SEGMENT_ROLL)
      for case in ("commit", "abort", "commit-with-offsets")),
    Allowance("Produce-v11-null-records", "Produce",
              "Kafka 4.4 never answers a Produce whose records are null (its handler fails on them and the request "
              "is left unanswered); kraftwire refuses the partition (CORRUPT_MESSAGE)"),
]
ALLOWED.extend(DATA_AND_COORDINATORS)
_COMPILED.extend((_regex(a.scenario), _regex(a.path), a) for a in DATA_AND_COORDINATORS)


# ======================================================================================================================
# The "sasl-acl" configuration's scenarios (SASL logins, StandardAuthorizer; branch confsasl)
# ======================================================================================================================
#: Kafka's message when a request needs an operation on the cluster the principal lacks
CLUSTER_REQUEST_TEXT = ("Kafka's CLUSTER_AUTHORIZATION_FAILED message is the Java text of the controller's internal request "
                        "object ('Request Request(processor=2, connectionId=<controller socket's addresses>, "
                        "session=org.apache.kafka.network.Session@<identity hash>, listenerName=..., buffer=java.nio."
                        "HeapByteBuffer[pos=.. lim=.. cap=..], envelope=Optional[Request(...)]) is not "
                        "authorized.'): a JVM identity hash, another connection's ports and the forwarded envelope's "
                        "buffer state — nothing a client can parse or another node can give; kraftwire sends no message "
                        "(clients then show the error code's default text)")

SASL_ACL: list[Allowance] = [
    # ApiVersions before logging in: the same answer as on a PLAINTEXT listener, with the same differences
    *(Allowance("SaslAuthenticate-v*-api-versions-before-login", a.path, a.reason)
      for a in ALLOWED if a.scenario == "ApiVersions-v*-ranges"),
    *(Allowance(f"{api}-v*-not-super-user", path, CLUSTER_REQUEST_TEXT)
      for api, path in (("CreateAcls", "CreateAcls.results[*].error_message"),
                        ("DescribeAcls", "DescribeAcls.error_message"),
                        ("DeleteAcls", "DeleteAcls.filter_results[*].error_message"),
                        ("AlterUserScramCredentials", "AlterUserScramCredentials.results[*].error_message"))),
    Allowance("ElectLeaders-v*-no-acl", "ElectLeaders.replica_election_results[*].partition_result[*].error_message",
              CLUSTER_REQUEST_TEXT),
    Allowance("UpdateFeatures-v*-no-acl", "UpdateFeatures.error_message", CLUSTER_REQUEST_TEXT),
    *(Allowance(f"{api}-v*-no-acl", path, CLUSTER_REQUEST_TEXT)
      for api, path in (("AlterPartitionReassignments", "AlterPartitionReassignments.error_message"),
                        ("AlterPartitionReassignments",
                         "AlterPartitionReassignments.responses[*].partitions[*].error_message"),
                        ("ListPartitionReassignments", "ListPartitionReassignments.error_message"))),
]
ALLOWED.extend(SASL_ACL)
_COMPILED.extend((_regex(a.scenario), _regex(a.path), a) for a in SASL_ACL)


# ======================================================================================================================
# The "three-node" configuration's scenarios (three combined nodes per side; branch confsasl)
# ======================================================================================================================
OWN_QUORUM = ("each side's quorum elects its own leader and each metadata log has its own length (kraftwire writes "
              "other records, and NoOpRecords at its own pace): the leader, its epoch and the offsets are each "
              "node's own")

THREE_NODE: list[Allowance] = [
    *(Allowance("DescribeQuorum-v*-three-brokers", f"DescribeQuorum.topics[__cluster_metadata].partitions[0].{field}",
                OWN_QUORUM)
      for field in ("leader_id", "leader_epoch", "high_watermark", "current_voters[*].log_end_offset",
                    "observers[*].log_end_offset")),
]
ALLOWED.extend(THREE_NODE)
_COMPILED.extend((_regex(a.scenario), _regex(a.path), a) for a in THREE_NODE)
