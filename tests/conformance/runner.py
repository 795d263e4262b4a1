"""Differential conformance: the same Kafka requests to Apache Kafka and to kraftwire, the answers compared field by
field (issue #36, "Kafka as the oracle").

How a run works
===============
``tests/conformance/test_conformance.py`` collects every :class:`Scenario` of the modules in
``tests/conformance/scenarios/`` (each module's ``SCENARIOS`` list) and runs each as its own test,
``test_conformance[<api>-v<version>-<name>]``. A scenario names a configuration (:mod:`conformance.pair`); the
session starts one Kafka node and one kraftwire node per configuration, from the same ``server.properties`` keys,
and every scenario of that configuration talks to that pair. Each step's request goes to both nodes at once (one
``request_once`` per side, same version); both answers are decoded with ``kraftwire.protocol.messages`` and
compared. At the session's end the results go to ``$KRAFTWIRE_CONFORMANCE_OUT`` (default ``build/conformance/``):
``results.json`` and ``TABLE.md``, the per-API conformance table (``python -m tests.conformance.table`` prints it).

Writing a scenario
==================
A scenario is data: an API, a version, a name (letters, digits, ``-``) and a list of steps. A step is a request
body and the version to send it at, optionally with ``until`` (a predicate on one side's answer: the request is
repeated, on each side separately, until it holds or 15 s pass, for answers that settle eventually, like Metadata
after CreateTopics), ``scope`` (keep only this scenario's own topics, groups and transactional ids in the answer's
top-level lists, for requests that list the whole cluster) and ``timeout`` (seconds to wait for an answer instead
of 30, for a request that gets none: Produce with acks=0 — both sides' "no answer" then compare equal, and a node
that closes the connection instead, as Kafka does when such a produce fails, shows)::

    from conformance.runner import Scenario, Step, no_error
    from kraftwire.protocol import messages as w

    CT = w.CreateTopicsRequest
    SCENARIOS = [
        Scenario("CreateTopics", 7, "one-topic", [
            Step(CT(topics=[CT.CreatableTopic(name="{ns}.a", num_partitions=1, replication_factor=1)],
                    timeout_ms=10000), 7),
            Step(w.MetadataRequest(topics=[w.MetadataRequest.MetadataRequestTopic(name="{ns}.a")]), 12,
                 until=no_error),
        ]),
    ]

Add a module under ``scenarios/`` with a ``SCENARIOS`` list and it is collected; nothing else to register.
``conformance.steps`` has the usual set-up steps (``created(*names)``: CreateTopics v7 then Metadata until both
brokers lead every partition; ``produce(name, partition, batch(n))``; ``metadata(*names)``) and ``until`` predicates
(``no_error``, ``led``, ``partition_counts``). An ``until`` that never holds on one side costs its 15 s before the
answers are compared: wait for what both nodes will reach (for a refused change, look without waiting).

* **Requests answered later.** A step with ``background=True`` is sent and the scenario goes on without its answer
  (a JoinGroup that waits for the group's other members to rejoin): its answers are compared when a later request
  needs them (a :class:`Learned` naming its path) or at the scenario's end. A step that needs the background
  request to have *arrived* waits for its effect with ``until`` (DescribeGroups until the group rebalances).

* **Logins and connections.** On a configuration with SASL logins (``"sasl-acl"``) every request goes on a
  connection of its own logged in as the configuration's first login (its super user); ``Step(..., login="alice")``
  logs in as another of its logins, ``login=None`` not at all. Steps naming the same ``connection`` share one
  connection per side for the scenario (a SaslHandshake, then SaslAuthenticate, then a request on that connection);
  once a side closed it, every later step on it gets that side's :class:`conformance.pair.Failure`.
* **Waits.** ``Step(..., until=..., probe=True)`` repeats its request on each side until ``until`` holds and
  compares nothing: a wait for what a node shows to no request of the scenario (Kafka's group coordinator taking in
  a new topic a moment after its broker lists it), made with requests of the scenario's own namespace.
* **Nodes.** On a configuration of several nodes (``"three-node"``) a request goes to the lowest-numbered node that
  runs, or to ``Step(..., node=2)``, or to ``Step(..., node=NotCoordinator("{ns}.g"))``: on each side a running
  node that is not that side's coordinator of the group (or, ``key_type=1``, the transactional id), which each side
  elected on its own (for NOT_COORDINATOR); a :class:`NodeChange` step kills node ``i`` of both sides (``"stop"``) or starts
  it again (``"start"``), and a later step with ``until`` waits for what follows (ISRs shrinking).
* **Namespaces.** Every ``str`` in a request has ``{ns}`` replaced by the scenario's namespace (its id), so each
  scenario has its own topics, group ids, transactional ids on the shared nodes: write ``"{ns}.a"``. Ids hold only
  letters, digits and ``-``, so ``.`` after ``{ns}`` cannot collide with another scenario's names.
* **Side-specific values in requests.** A topic's id differs between the nodes: put ``TopicId("{ns}.a")`` where a
  request wants a uuid, and each side gets its own id of that topic, learned from its earlier answers (any answer
  struct carrying a topic name and a topic id). Values a node picks itself and a client sends back (member ids,
  producer ids and epochs) are :class:`Learned`: ``Learned("member_id")`` is the ``member_id`` of the newest answer
  this side gave that carries one, ``Learned("member_id", at="JoinGroup#2")`` that of a given step's answer (its
  path, as differences name it). A request field built from such values (a record batch carrying a producer id) is
  :class:`Built`: ``Built(make, producer_id=Learned("producer_id"))`` calls ``make`` per side.
* **Versions.** :func:`versions` is the intersection of what kraftwire serves and what Kafka 4.4 serves
  (:data:`KAFKA_SERVED`, checked against the live node by ``test_kafka_serves_the_recorded_versions``);
  :func:`each_version` turns ``{case name: function(version) -> steps or None}`` into one scenario per version and
  case (``None``: the case does not apply at that version).
* **Configurations.** ``Scenario(..., config="name")`` picks a :data:`conformance.pair.CONFIGURATIONS` entry; add
  one there (a name and ``server.properties`` keys) for a differently configured pair. Its pair starts when the
  first scenario that names it runs, and serves every later one.
* **Shared nodes.** Scenarios run in file order on the same nodes: a scenario that changes something the cluster
  shares (broker configs) undoes it before it ends, and a request that lists the whole cluster is ``scope``-d.

How answers are compared (normalisation by a mapping)
=====================================================
Every declared field of the answer at the version is compared, recursively; nothing is skipped. Values that
legitimately differ between two nodes are not ignored but *mapped*: a per-scenario bijection per kind pairs Kafka's
value with kraftwire's the first time they meet at the same place, and every later occurrence must respect the
pairing (Kafka's topic id A must always face kraftwire's B, and B nothing else).

* mapped kinds: every ``uuid`` field (topic ids, directory ids, ...) and the fields in :data:`FIELD_KINDS`
  (``cluster_id``, ``host``, ``port``, ``member_id``, ``producer_id``, ``session_id``). The pair's machine values
  (hosts, ports, log directories, cluster ids) are paired before the first step. Sentinels (null, ``""``, negative
  numbers, the zero uuid, a fetch session id 0) are never mapped: they must be equal;
* times (:func:`field_kind`: ``*timestamp*``, ``*_time_ms``), durations (``throttle_time_ms``), positions in a
  node's own metadata log (``finalized_features_epoch``) and a file system's free space (``usable_bytes``, read when
  each node answers) must agree on being a sentinel (negative, then equal) or a value;
* strings (error messages, config values) are compared exactly, after each side's mapped values in them
  (a uuid in Kafka's base64 form, a host, a port, a directory) are replaced by the pair's shared token, except
  numbers that are each node's clock reading (:func:`same_but_clocks`: a timestamp's valid bounds in Produce's
  record errors); the address a node saw the client at (``client_host``) is compared as it is; a config key's
  ``documentation`` is prose each side writes in its own words: only whether there is one is compared;
* arrays of structs with a key (:data:`KEY_ATTRS`: names, partition indexes, api keys, group ids, member ids, ...)
  unique on both sides are matched by key; their order is compared too (``<path>.<order>``). A key holding a
  mapped value (a member id) matches through the mapping, and the elements whose values are not paired yet are
  paired by position among themselves (two new members listed in each node's own order). Other arrays are
  compared by position. The order is not compared for the arrays of :data:`ORDER_CARRIES_NOTHING` only: those
  whose order in Kafka is a hash order of values each node picks at random (member ids, topic ids, the JVM's
  identity hash codes) or is shuffled on purpose — their elements are still matched and compared one by one;
* a cluster's controller (Metadata's and DescribeCluster's ``controller_id``) on a configuration of several
  brokers: each side must name an alive broker its own answer lists (or both the same sentinel), not the same one
  (:func:`named_controller`: Kafka's broker picks one at random);
* unknown tagged fields are compared (``<path>.<unknown tags>``): one side sending a tag the other lacks shows;
* ``records`` fields (Produce, Fetch) are decoded and compared batch by batch (``<path>[batch 0].base_offset``,
  ``...[batch 0][record 2].value``): every header field but the CRC and the length, which follow from the others,
  with the producer id mapped and timestamps compared as times; then each record's offset, timestamp, key, value
  and headers; a partial batch at the end (a fetch cut at its size limit) by its length;
* a request without a decodable answer (closed connection, nothing within 30 s) is a :class:`conformance.pair.Failure`
  compared like an answer, and a traceback in kraftwire's log during the scenario is a difference at
  ``<kraftwire log>``.

Allow-listing
=============
A difference fails the test with its path (``<Api>[#n].field[key].field``, keys with the namespace shown as
``{ns}``), Kafka's value and kraftwire's, unless an entry in ``tests/conformance/allowed.py`` covers it: a scenario-id
pattern, a path pattern (``*`` is the only wildcard) and the reason. Each entry says why the difference is accepted
(a Kafka bug, an API or version kraftwire does not serve, a fix on another branch); the table lists the allowed
differences with their reasons, and entries no run used.
"""

from __future__ import annotations

import asyncio
import base64
import re
import time
import uuid as _uuid
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Sequence

from conformance.pair import CONFIGURATIONS, CONFIGURED, KAFKA, KRAFTWIRE, SIDES, Failure, Sessions

from kraftwire.errors import CorruptRecordError
from kraftwire.protocol import messages as w
from kraftwire.protocol.served import SERVED
from kraftwire.records import read_batches

#: what Apache Kafka 4.4.0 serves (ApiVersions at metadata.version 4.4-IV2), for the APIs kraftwire declares;
#: scenarios are generated at collection, before any node starts, so the table is data — and the live node is
#: checked against it
KAFKA_SERVED: dict[str, tuple[int, int]] = {
    "Produce": (0, 13), "Fetch": (4, 18), "ListOffsets": (1, 11), "Metadata": (0, 13), "OffsetCommit": (2, 10),
    "OffsetFetch": (1, 10), "FindCoordinator": (0, 6), "JoinGroup": (0, 9), "Heartbeat": (0, 4),
    "LeaveGroup": (0, 5), "SyncGroup": (0, 5), "DescribeGroups": (0, 6), "ListGroups": (0, 5),
    "SaslHandshake": (0, 1), "ApiVersions": (0, 5), "CreateTopics": (2, 7), "DeleteTopics": (1, 6),
    "DeleteRecords": (0, 2), "InitProducerId": (0, 5), "OffsetForLeaderEpoch": (2, 4), "AddPartitionsToTxn": (0, 5),
    "AddOffsetsToTxn": (0, 4), "EndTxn": (0, 5), "WriteTxnMarkers": (1, 2), "TxnOffsetCommit": (0, 6),
    "DescribeAcls": (1, 3), "CreateAcls": (1, 3), "DeleteAcls": (1, 3), "DescribeConfigs": (1, 4),
    "AlterConfigs": (0, 2), "DescribeLogDirs": (1, 5), "SaslAuthenticate": (0, 2), "CreatePartitions": (0, 3),
    "DeleteGroups": (0, 3), "ElectLeaders": (0, 2), "IncrementalAlterConfigs": (0, 1), "OffsetDelete": (0, 0),
    "DescribeUserScramCredentials": (0, 0), "AlterUserScramCredentials": (0, 0), "DescribeQuorum": (0, 2),
    "UpdateFeatures": (0, 2), "DescribeCluster": (0, 2), "DescribeProducers": (0, 0), "UnregisterBroker": (0, 0),
    "UnregisterController": (0, 0), "DescribeTransactions": (0, 0), "ListTransactions": (0, 2), "ConsumerGroupHeartbeat": (0, 1),
    "ConsumerGroupDescribe": (0, 1), "DescribeTopicPartitions": (0, 0),
    "AlterPartitionReassignments": (0, 1), "ListPartitionReassignments": (0, 0),
    "DescribeClientQuotas": (0, 1), "AlterClientQuotas": (0, 1), "AlterReplicaLogDirs": (1, 2),
}

#: versions Kafka advertises but refuses: Produce from 0 for librdkafka's sake (KAFKA-18659), served from 3
KAFKA_SERVES_FROM: dict[str, int] = {"Produce": 3}

#: answer fields whose values name one node and are mapped (see the module docstring), by snake_case name
FIELD_KINDS: dict[str, str] = {
    "cluster_id": "cluster", "host": "host", "port": "port", "member_id": "member", "producer_id": "producer",
    "session_id": "session", "throttle_time_ms": "duration",
    # the offset of the node's metadata image: each controller's log advances on its own (Kafka's NoOpRecords)
    "finalized_features_epoch": "position",
    # the address a node saw the client connect from: the same client for both, so compared as it is (not with the
    # nodes' own hosts replaced: this machine's 127.0.0.1 is one node's listener host and not the other's)
    "client_host": "verbatim",
    # DescribeConfigs' documentation of a key: each side's own prose (kraftwire does not copy Kafka's), so only
    # whether there is any is compared
    "documentation": "prose",
    # the free space of the file system holding a log directory (DescribeLogDirs v4): read at each answer's moment
    "usable_bytes": "space",
    # a SASL token: SCRAM's server messages carry each node's random nonce, its salt and its signature
    "auth_bytes": "sasl",
}
#: fields of one struct whose name FIELD_KINDS gives another meaning: an ACL's host is what the binding says (an
#: address or ``*``), not a node's host
STRUCT_FIELD_KINDS: dict[tuple[str, str], str] = {
    ("AclDescription", "host"): "verbatim", ("DeleteAclsMatchingAcl", "host"): "verbatim"}
#: kinds compared through the per-scenario bijection
MAPPED = frozenset({"uuid", "cluster", "host", "port", "member", "producer", "session", "path"})
#: kinds whose non-negative values each node picks from its own clock or log: they agree unless a sentinel differs
UNORDERED = frozenset({"time", "duration", "position", "space"})
#: fields that identify an element of an array of structs, in the order they make up its key
KEY_ATTRS = ("resource_type", "resource_name", "name", "topic_name", "topic", "partition_index", "partition",
             "index", "api_key", "node_id", "broker_id", "group_id", "transactional_id", "member_id", "producer_id",
             "user")
#: arrays whose order is not compared (their elements are), each with why: the pattern is the array's path with
#: ``*`` for any step number (``#2``) or key, matched whole
ORDER_CARRIES_NOTHING = {
    "DescribeGroups*.groups[*].members": "a classic group's members in the order of a HashMap of their member ids, "
                                         "which each node picks at random (GroupMetadata.allMemberMetadata)",
    "JoinGroup*.members": "the leader's member list, in the order of the same HashMap of random member ids",
    "DeleteTopics*.responses": "Kafka shuffles the results on purpose (ControllerApis.deleteTopics: "
                               "Collections.shuffle, so positions tell nothing about topics a client may not see)",
    "Produce*.responses[*].partition_responses": "Kafka lists a topic's partitions in the order of a map keyed by "
                                                 "TopicIdPartition, whose hash is the topic id's, picked at random",
    "DescribeLogDirs*.results[*].topics": "Kafka groups its logs (LogManager.allLogs, a HashSet of UnifiedLog, "
                                          "which has no hashCode of its own) by topic into Scala hash sets: the "
                                          "order follows the JVM's identity hash codes, which vary between runs",
    "DescribeLogDirs*.results[*].topics[*].partitions": "as DescribeLogDirs' topics: identity hash codes of Kafka's "
                                                        "log objects",
    "DescribeAcls*.resources": "Kafka groups the bindings it lists by resource pattern in a HashMap "
                               "(DescribeAclsResponse.aclsResources); ResourcePattern's hash combines its enums' "
                               "(ResourceType, PatternType), which are the JVM's identity hash codes: they follow the "
                               "history of the thread that first asks, so they vary between runs of a broker",
    "DescribeAcls*.resources[*].acls": "a resource's entries in the order of a HashSet of AccessControlEntry, whose "
                                       "hash combines its enums' identity hash codes (AclOperation, "
                                       "AclPermissionType): as DescribeAcls' resources",
    "DeleteAcls*.filter_results[*].matching_acls": "Kafka's StandardAuthorizer collects a filter's matching "
                                                   "bindings from hash maps keyed by StandardAcl and ResourcePattern, "
                                                   "whose hashes combine enums' identity hash codes: as "
                                                   "DescribeAcls' resources",
}
_ORDER_CARRIES_NOTHING = re.compile("|".join(
    "".join("[^\\]]*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", pattern))
    for pattern in ORDER_CARRIES_NOTHING))
#: structs identified by other fields than KEY_ATTRS: an ACL entry is its principal, host, operation and permission
#: (and its resource pattern, where the entry names it)
ACL_ENTRY = ("principal", "host", "operation", "permission_type")
STRUCT_KEYS = {"AclDescription": ACL_ENTRY,
               "DeleteAclsMatchingAcl": ("resource_type", "resource_name", "pattern_type", *ACL_ENTRY)}
#: a record batch's header fields compared, with their kinds (the CRC and the length follow from the rest)
BATCH_FIELDS = (("base_offset", None), ("partition_leader_epoch", None), ("magic", None), ("attributes", None),
                ("last_offset_delta", None), ("base_timestamp", "time"), ("max_timestamp", "time"),
                ("producer_id", "producer"), ("producer_epoch", None), ("base_sequence", None),
                ("record_count", None))
RECORD_FIELDS = (("offset", None), ("timestamp", "time"), ("key", None), ("value", None), ("headers", None))
#: how long a step with ``until`` repeats its request on one side before its last answer is compared
UNTIL_S = 15.0
ZERO_UUID = _uuid.UUID(int=0)
NAME_PATTERN = re.compile(r"[A-Za-z0-9-]+")


def versions(api: str) -> range:
    """The versions both sides serve of ``api`` (kraftwire's advertised range ∩ Kafka 4.4's)."""
    ours, theirs = SERVED[api], KAFKA_SERVED[api]
    return range(max(ours[0], theirs[0], KAFKA_SERVES_FROM.get(api, 0)), min(ours[1], theirs[1]) + 1)


# ---------------------------------------------------------------------------------------------------- scenarios
@dataclass(frozen=True)
class TopicId:
    """In a request: the topic id each side gave topic ``name`` (``{ns}`` allowed), learned from its answers."""

    name: str


@dataclass(frozen=True)
class Learned:
    """In a request: a value this side picked itself and told in an earlier answer (a member id, a producer id):
    field ``attr`` of the newest answer carrying a value that is not a sentinel, or of the answer at path ``at``
    (``"JoinGroup#2"``). Before any answer told it: ``default``, or the request field's own default."""

    attr: str
    at: str | None = None
    default: Any = None


class Built:
    """In a request: ``make(**arguments)`` called for each side with its arguments resolved (``{ns}``,
    :class:`TopicId`, :class:`Learned`), for a value made of side-specific parts, like a record batch whose header
    carries the producer id each node gave."""

    def __init__(self, make: Callable[..., Any], **arguments) -> None:
        self.make = make
        self.arguments = arguments

    def __repr__(self) -> str:
        return f"Built({self.make.__name__}, {', '.join(f'{k}={v!r}' for k, v in self.arguments.items())})"


@dataclass(frozen=True)
class NotCoordinator:
    """As a step's ``node``: on each side, the lowest-numbered running node that is not the coordinator of ``key``
    (``{ns}`` allowed; ``key_type`` 0 a group, 1 a transactional id). Each side is asked with FindCoordinator
    (repeated while the coordinator loads) before the step is sent, and nothing of that ask is compared: the
    coordinators of the two sides are each side's own election."""

    key: str
    key_type: int = 0


@dataclass(frozen=True)
class Step:
    """One request sent to both sides at ``version``; ``until(answer)`` makes it repeat until true (bounded),
    ``scope`` drops other scenarios' topics, groups and transactional ids from the answer's top-level lists,
    ``timeout`` bounds the wait for an answer (a request that gets none), ``background`` sends the request
    without waiting for its answer, ``login`` names the SASL login it is sent with, ``connection`` the
    connection it shares with other steps and ``node`` the node it goes to (see the module docstring)."""

    request: Any
    version: int
    until: Callable[[Any], bool] | None = None
    scope: bool = False
    timeout: float | None = None
    background: bool = False
    login: str | None = CONFIGURED
    connection: str | None = None
    node: int | NotCoordinator | None = None
    #: the API version the request's header names when it is not ``version`` (the body's): a version neither side
    #: knows, for ApiVersions' UNSUPPORTED_VERSION (on a connection of its own)
    header_version: int | None = None
    #: a wait, not a comparison: the request is repeated on each side until ``until`` holds, and its answers are
    #: neither compared nor learned from (for state a node shows to no request of the scenario: Kafka's group
    #: coordinator taking in a topic a moment after its broker does)
    probe: bool = False


@dataclass(frozen=True)
class NodeChange:
    """A step of a several-node configuration that kills node ``node`` of both sides (``stop``) or starts it again
    (``start``, which returns once every running node of both lists it as a broker); nothing is compared. A stopped
    node is asked nothing until it starts again."""

    action: str
    node: int

    def __post_init__(self) -> None:
        if self.action not in ("stop", "start"):
            raise ValueError(f"a node is stopped or started, not {self.action!r}")


@dataclass(frozen=True)
class Scenario:
    api: str
    version: int
    name: str
    steps: Sequence[Step] = field(repr=False)
    config: str = "single"

    def __post_init__(self) -> None:
        if not NAME_PATTERN.fullmatch(self.name):
            raise ValueError(f"scenario name {self.name!r}: only letters, digits and '-'")
        w.api(self.api)  # an unknown API name fails at collection

    @property
    def id(self) -> str:
        return f"{self.api}-v{self.version}-{self.name}"

    @property
    def namespace(self) -> str:
        return self.id


def each_version(api: str, cases: dict[str, Callable[[int], Sequence[Step] | None]], *, config: str = "single",
                 at: Sequence[int] | None = None) -> list[Scenario]:
    """One scenario per version of ``api`` (:func:`versions`, or ``at``) and per case; a case returning None does
    not apply at that version."""
    out = []
    for version in (at if at is not None else versions(api)):
        for name, make in cases.items():
            steps = make(version)
            if steps is not None:
                out.append(Scenario(api, version, name, list(steps), config))
    return out


def error_codes(answer) -> list[int]:
    """Every ``error_code`` in an answer, depth first."""
    found = []

    def walk(value):
        if isinstance(value, w.Base):
            for f in value._info.fields:
                item = getattr(value, f.attr)
                if f.attr == "error_code":
                    found.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(answer)
    return found


def no_error(answer) -> bool:
    """``until`` predicate: every error code in the answer is 0 (e.g. Metadata once a new topic has its leader)."""
    return not any(error_codes(answer))


# -------------------------------------------------------------------------------------------------- requests
def instantiate(value, ns: str, topic_ids: dict[str, _uuid.UUID], learned: dict | None = None):
    """A copy of a request for one side: ``{ns}`` replaced in strings, :class:`TopicId` resolved to the side's id
    (the zero uuid when the side never named that topic: an earlier step's difference then explains it),
    :class:`Learned` to the value the side told (``learned``, see :func:`learn_values`), :class:`Built` made."""
    if isinstance(value, TopicId):
        return topic_ids.get(value.name.replace("{ns}", ns), ZERO_UUID)
    if isinstance(value, Learned):
        return (learned or {}).get((value.at, value.attr), value.default)
    if isinstance(value, Built):
        return value.make(**{k: instantiate(v, ns, topic_ids, learned) for k, v in value.arguments.items()})
    if isinstance(value, str):
        return value.replace("{ns}", ns)
    if isinstance(value, list):
        return [instantiate(item, ns, topic_ids, learned) for item in value]
    if isinstance(value, w.Base):
        fields = {}
        for f in value._info.fields:
            item = getattr(value, f.attr)
            fields[f.attr] = instantiate(item, ns, topic_ids, learned)
            if isinstance(item, Learned) and fields[f.attr] is None:  # nothing told yet: the field's default
                fields[f.attr] = f.default
        copy = type(value)(**fields)
        copy._unknown_tags = value._unknown_tags
        return copy
    return value


def learn_values(answer, path: str, into: dict) -> None:
    """Record, for :class:`Learned`, the first value that is not a sentinel of every field of an answer (depth
    first, in declared order: a top-level ``member_id`` before the members' list), under ``(path, attr)`` and as
    the newest ``(None, attr)``."""
    found: dict[str, Any] = {}

    def walk(value):
        if isinstance(value, w.Base):
            for f in value._info.fields:
                item = getattr(value, f.attr)
                if isinstance(item, (w.Base, list)):
                    walk(item)
                elif f.attr not in found and not is_sentinel(item, field_kind(f.attr, f.type, value)):
                    found[f.attr] = item
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(answer)
    for attr, value in found.items():
        into[(path, attr)] = into[(None, attr)] = value


def learn_topic_ids(answer, into: dict[str, _uuid.UUID]) -> None:
    """Record every (topic name, topic id) pair an answer carries."""
    if isinstance(answer, w.Base):
        attrs = {f.attr for f in answer._info.fields}
        name = next((getattr(answer, a) for a in ("name", "topic_name", "topic") if a in attrs), None)
        topic_id = getattr(answer, "topic_id", None) if "topic_id" in attrs else None
        if isinstance(name, str) and isinstance(topic_id, _uuid.UUID) and topic_id != ZERO_UUID:
            into[name] = topic_id
        for a in attrs:
            learn_topic_ids(getattr(answer, a), into)
    elif isinstance(answer, list):
        for item in answer:
            learn_topic_ids(item, into)


def _element_name(item):
    if isinstance(item, w.Base):
        for attr in ("name", "topic_name", "resource_name", "group_id", "transactional_id", "user"):
            if hasattr(item, attr) and isinstance(getattr(item, attr), str):
                return getattr(item, attr)
    return None


def scoped(answer, ns: str):
    """``answer`` with the top-level lists' elements (topics, groups, transactional ids) named outside namespace
    ``ns`` left out (requests that list the whole cluster, which other scenarios share)."""
    if not isinstance(answer, w.Base):
        return answer
    copy = type(answer)(**{f.attr: getattr(answer, f.attr) for f in answer._info.fields})
    for f in answer._info.fields:
        items = getattr(copy, f.attr)
        if isinstance(items, list):
            setattr(copy, f.attr, [item for item in items
                                   if _element_name(item) is None or _element_name(item).startswith(ns + ".")])
    return copy


# ------------------------------------------------------------------------------------------------- comparison
class Difference(NamedTuple):
    path: str
    kafka: str
    kraftwire: str


def field_kind(attr: str, type_: str, struct: w.Base | None = None) -> str | None:
    """How field ``attr`` (of protocol type ``type_``, in ``struct`` when known) is compared."""
    if type_ in ("uuid", "records"):
        return type_
    if struct is not None and (type(struct).__name__, attr) in STRUCT_FIELD_KINDS:
        return STRUCT_FIELD_KINDS[type(struct).__name__, attr]
    if attr in FIELD_KINDS:
        return FIELD_KINDS[attr]
    if "timestamp" in attr or attr.endswith("_time_ms"):
        return "time"
    return None


def kafka_uuid_text(value: _uuid.UUID) -> str:
    """Kafka's ``Uuid.toString()``: url-safe base64 of the 16 bytes, unpadded."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def is_sentinel(value, kind: str | None = None) -> bool:
    """Null, empty, the zero uuid, a negative number — and a fetch session id 0 ("no session")."""
    return (value is None or value == "" or value == ZERO_UUID
            or (isinstance(value, int) and not isinstance(value, bool) and value < 0)
            or (kind == "session" and value == 0))


#: a number in a text that may be a clock reading: epoch milliseconds (from 2001), or such a time minus a duration
CLOCK_MAGNITUDE = 10 ** 12
#: how far apart two nodes' clock readings in the same text may be
CLOCK_SKEW_MS = 60_000
_NUMBER = re.compile(r"-?\d+")


def same_but_clocks(kafka: str, ours: str) -> bool:
    """Two texts equal but for numbers that are each node's clock reading (both of a clock's magnitude and within
    :data:`CLOCK_SKEW_MS`): Kafka's bounds of a valid timestamp, ``now - message.timestamp.before.max.ms``."""
    a, b = _NUMBER.split(kafka), _NUMBER.split(ours)
    if a != b:
        return False
    return all(x == y or (min(abs(x), abs(y)) >= CLOCK_MAGNITUDE and abs(x - y) <= CLOCK_SKEW_MS)
               for x, y in zip(map(int, _NUMBER.findall(kafka)), map(int, _NUMBER.findall(ours))))


class Mapping:
    """Per-kind bijections between Kafka's values and kraftwire's, each pair with a token (``<uuid#2>``)."""

    def __init__(self) -> None:
        self.pairs: dict[str, dict] = {}  # kind -> {kafka value: kraftwire value}
        self.back: dict[str, dict] = {}  # kind -> {kraftwire value: kafka value}
        self.tokens: dict[tuple[str, Any], str] = {}  # (kind, kafka value) -> token
        self._patterns: dict[str, tuple] = {}  # side -> (tokens when built, regex, {form: token})

    def bind(self, kind: str, kafka, ours) -> None:
        """Pair two values unless either is paired already (a conflict shows when the answers are checked)."""
        forward, back = self.pairs.setdefault(kind, {}), self.back.setdefault(kind, {})
        if kafka in forward or ours in back:
            return
        forward[kafka], back[ours] = ours, kafka
        self.tokens[(kind, kafka)] = f"<{kind}#{len(forward)}>"

    def consistent(self, kind: str, kafka, ours) -> bool:
        return self.pairs.get(kind, {}).get(kafka, _MISSING) == ours

    def describe(self, kind: str, side: str, value) -> str:
        """A value with what it is paired with, for a difference report."""
        partner = (self.pairs if side == KAFKA else self.back).get(kind, {}).get(value, _MISSING)
        return f"{value!s} ({'unpaired' if partner is _MISSING else f'paired with {partner!r}'})"

    def substitute(self, text: str, side: str) -> str:
        """``text`` with ``side``'s mapped values replaced by their tokens (a uuid in its canonical and its Kafka
        base64 form; longest first, whole words only)."""
        size = len(self.tokens)
        cached = self._patterns.get(side)
        if cached is None or cached[0] != size:
            spots = {}
            for kind, forward in self.pairs.items():
                for kafka, ours in forward.items():
                    value = kafka if side == KAFKA else ours
                    forms = [str(value)] + ([kafka_uuid_text(value)] if isinstance(value, _uuid.UUID) else [])
                    spots.update((form, self.tokens[(kind, kafka)]) for form in forms if form)
            alternatives = "|".join(re.escape(form) for form in sorted(spots, key=len, reverse=True))
            cached = (size, re.compile(rf"(?<![\w.])(?:{alternatives})(?![\w])") if spots else None, spots)
            self._patterns[side] = cached
        _, pattern, spots = cached
        return text if pattern is None else pattern.sub(lambda match: spots[match.group(0)], text)


_MISSING = object()
_UNPAIRED = "<unpaired>"


def _unpaired(key: tuple) -> bool:
    return any(isinstance(part, tuple) and part[:1] == (_UNPAIRED,) for part in key)


def _short(value, limit: int = 300) -> str:
    if isinstance(value, w.Base):
        value = value.to_dict()
    if isinstance(value, memoryview):
        value = bytes(value)
    text = value if isinstance(value, str) and not isinstance(value, bool) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _key_attrs(item: w.Base, fields: dict) -> list[str]:
    """The fields making up an array element's key (:data:`STRUCT_KEYS`, else :data:`KEY_ATTRS`), in order."""
    return [a for a in STRUCT_KEYS.get(type(item).__name__, KEY_ATTRS) if a in fields]


def named_controller(answer) -> str:
    """Whether a Metadata or DescribeCluster answer's ``controller_id`` names one of the alive brokers the answer
    lists (``"alive broker"``) or not (``"absent"``).

    On a cluster of several brokers the two sides' controller ids are not compared for equality: a KRaft broker of
    Kafka names a random alive broker in each answer (KafkaApis: ``metadataCache.getRandomAliveBrokerId``; clients
    cannot reach the quorum's leader), kraftwire the quorum's leader. Each side must still name an alive broker of
    its own cluster — or both the same sentinel, which :meth:`Comparison.controller` checks."""
    alive = {broker.node_id if hasattr(broker, "node_id") else broker.broker_id for broker in answer.brokers}
    return "alive broker" if answer.controller_id in alive else "absent"


class Comparison:
    """One step's two answers, walked twice: once to pair mapped values, once to report differences."""

    def __init__(self, mapping: Mapping, ns: str, version: int, *, picked_controller: bool = False) -> None:
        self.mapping = mapping
        self.ns = ns
        self.version = version
        #: each side names a controller of its own choosing (a cluster of several brokers: :func:`named_controller`)
        self.picked_controller = picked_controller
        self.learning = True
        self.out: list[Difference] = []

    def run(self, root: str, kafka, ours) -> list[Difference]:
        for learning in (True, False):
            self.learning = learning
            self.out = []
            self.walk(root, kafka, ours, None)
        return self.out

    def differ(self, path: str, kafka: str, ours: str) -> None:
        if not self.learning:
            self.out.append(Difference(path, kafka, ours))

    def walk(self, path: str, kafka, ours, kind: str | None) -> None:
        if isinstance(kafka, memoryview):
            kafka = bytes(kafka)
        if isinstance(ours, memoryview):
            ours = bytes(ours)
        if type(kafka) is not type(ours):
            self.differ(path, _short(kafka), _short(ours))
        elif isinstance(kafka, w.Base):
            for f in kafka._info.fields:
                if f.attr == "controller_id" and self.picked_controller and f.present(self.version):
                    self.controller(f"{path}.controller_id", kafka, ours)
                elif f.present(self.version):
                    self.walk(f"{path}.{f.attr}", getattr(kafka, f.attr), getattr(ours, f.attr),
                              field_kind(f.attr, f.type, kafka))
            if (kafka._unknown_tags or {}) != (ours._unknown_tags or {}):
                self.differ(f"{path}.<unknown tags>", _short(kafka._unknown_tags), _short(ours._unknown_tags))
        elif isinstance(kafka, list):
            self.walk_list(path, kafka, ours, kind)
        else:
            self.leaf(path, kafka, ours, kind)

    def controller(self, path: str, kafka, ours) -> None:
        """A cluster answer's controller id where each node picks one (:func:`named_controller`): both name a broker
        their own answer lists as alive, or both the same sentinel."""
        if self.learning:
            return
        theirs, mine = named_controller(kafka), named_controller(ours)
        if theirs != mine or (theirs == "absent" and kafka.controller_id != ours.controller_id):
            self.differ(path, f"{kafka.controller_id} ({theirs})", f"{ours.controller_id} ({mine})")

    def key(self, item, side: str) -> tuple | None:
        """An array element's key: its :data:`KEY_ATTRS` values; on kraftwire's side a mapped value (a member id)
        stands as the Kafka value it is paired with, so the same member matches; one not paired yet is marked
        (``(_UNPAIRED, value)``) on either side."""
        if not isinstance(item, w.Base):
            return None
        fields = {f.attr: f for f in item._info.fields if f.present(self.version)}
        parts = []
        for attr in _key_attrs(item, fields):
            value = getattr(item, attr)
            kind = field_kind(attr, fields[attr].type, item)
            if kind in MAPPED and not is_sentinel(value, kind):
                table = self.mapping.pairs if side == KAFKA else self.mapping.back
                if value not in table.get(kind, {}):
                    value = (_UNPAIRED, value)
                elif side == KRAFTWIRE:
                    value = table[kind][value]
            parts.append(value)
        return tuple(parts) if parts else None

    def render_key(self, key: tuple, item) -> str:
        """A key as paths show it: the namespace as ``{ns}``, a paired mapped value as its token."""
        fields = {f.attr: f for f in item._info.fields if f.present(self.version)}
        shown = []
        for attr, part in zip(_key_attrs(item, fields), key):
            if isinstance(part, tuple) and part[:1] == (_UNPAIRED,):
                part = part[1]
            kind = field_kind(attr, fields[attr].type, item)
            shown.append(self.mapping.tokens.get((kind, part), str(part).replace(self.ns, "{ns}"))
                         if kind in MAPPED else str(part).replace(self.ns, "{ns}"))
        return ",".join(shown)

    def walk_list(self, path: str, kafka: list, ours: list, kind: str | None) -> None:
        keys = {KAFKA: [self.key(item, KAFKA) for item in kafka],
                KRAFTWIRE: [self.key(item, KRAFTWIRE) for item in ours]}
        keyed = all(None not in ks and len(set(ks)) == len(ks) for ks in keys.values()) and (kafka or ours)
        if not keyed:
            if len(kafka) != len(ours):
                self.differ(f"{path}.<length>", f"{len(kafka)}: {_short(kafka)}", f"{len(ours)}: {_short(ours)}")
            for i, (a, b) in enumerate(zip(kafka, ours)):
                self.walk(f"{path}[{i}]", a, b, kind)
            return
        theirs = dict(zip(keys[KAFKA], kafka))
        mine = dict(zip(keys[KRAFTWIRE], ours))
        partner = {k: k for k in mine if k in theirs}  # kraftwire's key -> the Kafka key it matches
        # elements keyed by values each node picks (member ids) and not paired yet: by position among themselves
        partner.update(zip([k for k in keys[KRAFTWIRE] if k not in theirs and _unpaired(k)],
                           [k for k in keys[KAFKA] if k not in mine and _unpaired(k)]))
        matched = set(partner.values())
        for k, item in theirs.items():
            sub = f"{path}[{self.render_key(k, item)}]"
            if k not in matched:
                self.differ(sub, _short(item), "<absent>")
        for k, item in mine.items():
            if k in partner:
                self.walk(f"{path}[{self.render_key(partner[k], theirs[partner[k]])}]", theirs[partner[k]], item,
                          kind)
            else:
                self.differ(f"{path}[{self.render_key(k, item)}]", "<absent>", _short(item))
        order = ([self.render_key(k, theirs[k]) for k in keys[KAFKA] if k in matched],
                 [self.render_key(partner[k], theirs[partner[k]]) for k in keys[KRAFTWIRE] if k in partner])
        if order[0] != order[1] and not _ORDER_CARRIES_NOTHING.fullmatch(path):
            self.differ(f"{path}.<order>", ", ".join(order[0]), ", ".join(order[1]))

    def leaf(self, path: str, kafka, ours, kind: str | None) -> None:
        if kind == "records" and isinstance(kafka, bytes) and isinstance(ours, bytes):
            self.records(path, kafka, ours)
        elif kind == "sasl" and isinstance(kafka, bytes) and isinstance(ours, bytes):
            if sasl_shape(kafka) != sasl_shape(ours):
                self.differ(path, _short(kafka), _short(ours))
        elif kind in MAPPED and not (is_sentinel(kafka, kind) or is_sentinel(ours, kind)):
            if self.learning:
                self.mapping.bind(kind, kafka, ours)
            elif not self.mapping.consistent(kind, kafka, ours):
                self.differ(path, self.mapping.describe(kind, KAFKA, kafka),
                            self.mapping.describe(kind, KRAFTWIRE, ours))
        elif kind in UNORDERED and isinstance(kafka, int) and isinstance(ours, int):
            if kafka != ours and (kafka < 0 or ours < 0):  # two times (or durations) agree; a sentinel must match
                self.differ(path, str(kafka), str(ours))
        elif kind == "prose":
            if not self.learning and (kafka is None) != (ours is None):
                self.differ(path, _short(kafka), _short(ours))
        elif isinstance(kafka, str) and isinstance(ours, str):
            if not self.learning and kind == "verbatim":
                if kafka != ours:
                    self.differ(path, kafka, ours)
            elif not self.learning:
                a, b = self.mapping.substitute(kafka, KAFKA), self.mapping.substitute(ours, KRAFTWIRE)
                if a != b and not same_but_clocks(a, b):
                    self.differ(path, a, b)
        elif kafka != ours:
            self.differ(path, _short(kafka), _short(ours))


    def records(self, path: str, kafka: bytes, ours: bytes) -> None:
        """Two ``records`` fields, batch by batch and record by record (see the module docstring)."""
        decoded = {side: decode_batches(data) for side, data in ((KAFKA, kafka), (KRAFTWIRE, ours))}
        if any(isinstance(d, str) for d in decoded.values()):
            if decoded[KAFKA] != decoded[KRAFTWIRE]:
                self.differ(path, _short(decoded[KAFKA]), _short(decoded[KRAFTWIRE]))
            return
        (theirs, their_tail), (mine, my_tail) = decoded[KAFKA], decoded[KRAFTWIRE]
        if len(theirs) != len(mine):
            self.differ(f"{path}.<batches>", str(len(theirs)), str(len(mine)))
        for i, (a, b) in enumerate(zip(theirs, mine)):
            for attr, kind in BATCH_FIELDS:
                self.leaf(f"{path}[batch {i}].{attr}", a[attr], b[attr], kind)
            if len(a["records"]) != len(b["records"]):
                self.differ(f"{path}[batch {i}].<records>", str(len(a["records"])), str(len(b["records"])))
            for j, (x, y) in enumerate(zip(a["records"], b["records"])):
                for attr, kind in RECORD_FIELDS:
                    self.leaf(f"{path}[batch {i}][record {j}].{attr}", getattr(x, attr), getattr(y, attr), kind)
        if their_tail != my_tail:
            self.differ(f"{path}.<partial batch bytes>", str(their_tail), str(my_tail))


#: the attributes of a SCRAM server message that each node picks (RFC 5802): the nonce's server part, the salt, the
#: server signature
SCRAM_PICKED = ("r", "s", "v")


def sasl_shape(token: bytes) -> bytes:
    """A SASL token with what a node picks itself left out: a SCRAM server message (``r=...,s=...,i=...``,
    ``v=...``, ``e=...``) keeps its attribute names, the iteration count and an error (130 random bits written in
    base 36 have no fixed length, so the nonce is left out whole). Other tokens (PLAIN's empty answer) are compared
    as they are."""
    parts = [part.partition(b"=") for part in token.split(b",")]
    if not token or any(not sep or len(name) != 1 for name, sep, _ in parts):
        return token
    return b",".join(name + b"=" + (b"<picked>" if name.decode() in SCRAM_PICKED else value)
                     for name, _, value in parts)


def decode_batches(data: bytes) -> tuple[list[dict], int] | str:
    """The batches of a ``records`` field (each its header fields and ``records``) and the length of a trailing
    partial batch; or why they do not decode."""
    try:
        reader = read_batches(data)
        batches = [{**{attr: getattr(batch, attr) for attr, _ in BATCH_FIELDS}, "records": batch.records()}
                   for batch in reader]
    except CorruptRecordError as exc:
        return f"<undecodable records: {exc}>"
    return batches, len(data) - reader.valid_bytes


# ----------------------------------------------------------------------------------------------------- running
class Exchange(NamedTuple):
    """One step as run: the request as sent (Kafka's copy) and both answers."""

    path: str
    request: Any
    answers: dict


def carried_error_codes(answer) -> set[int]:
    """Every error code an answer carries, top-level or in any nested struct (a partition's, a member's): the
    ``error_code`` fields and those named ``*_error_code`` (AddPartitionsToTxn's ``partition_error_code``)."""
    codes: set[int] = set()

    def walk(value):
        if isinstance(value, w.Base):
            for f in value._info.fields:
                item = getattr(value, f.attr)
                if (f.attr == "error_code" or f.attr.endswith("_error_code")) and isinstance(item, int):
                    codes.add(item)
                elif isinstance(item, (w.Base, list)):
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(answer)
    return codes


@dataclass
class Outcome:
    scenario: Scenario
    exchanges: list[Exchange] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)

    def error_codes(self) -> dict[str, set[int]]:
        """Per API (of each step's request, not only the scenario's own), the error codes Kafka's answers carried:
        what the scenario provoked, for the table's coverage of :mod:`conformance.error_catalog`. Kafka's side,
        because it is the oracle: a code only kraftwire gives is a difference already."""
        by_api: dict[str, set[int]] = {}
        for exchange in self.exchanges:
            codes = carried_error_codes(exchange.answers[KAFKA])
            if codes:
                by_api.setdefault(exchange.path.split("#", 1)[0], set()).update(codes)
        return by_api


def seed_mapping(machine: dict[str, dict[str, list]]) -> Mapping:
    """A mapping holding the pair's machine values (hosts, ports, directories, cluster ids) paired in order."""
    mapping = Mapping()
    for kind, theirs in machine[KAFKA].items():
        for kafka, ours in zip(theirs, machine[KRAFTWIRE][kind]):
            mapping.bind(kind, kafka, ours)
    return mapping


async def _node(pair, side: str, node: int | NotCoordinator | None, ns: str) -> int | None:
    """The node a step goes to on ``side``: as it names it, or the node :class:`NotCoordinator` picks."""
    if not isinstance(node, NotCoordinator):
        return node
    key = node.key.replace("{ns}", ns)
    deadline = time.monotonic() + UNTIL_S
    while True:
        answer = await pair.ask(side, w.FindCoordinatorRequest(key=key, key_type=node.key_type), 3)
        if not isinstance(answer, Failure) and answer.error_code == 0:
            others = sorted(set(pair.nodes[side]) - pair.down - {answer.node_id})
            assert others, f"{side}: every running node coordinates {key!r}"
            return others[0]
        assert time.monotonic() < deadline, f"{side} named no coordinator of {key!r}: {answer}"
        await asyncio.sleep(0.2)


async def _ask_until(pair, sessions: Sessions, side: str, step: Step, request, node: int | None):
    timeout = {} if step.timeout is None else {"timeout": step.timeout}
    deadline = time.monotonic() + UNTIL_S
    while True:
        answer = await (pair.ask(side, request, step.version, login=step.login, node=node,
                                 header_version=step.header_version, **timeout)
                        if step.connection is None else
                        sessions.ask(side, step.connection, request, step.version, login=step.login,
                                     node=node, **timeout))
        if step.until is None or isinstance(answer, Failure) or step.until(answer) or time.monotonic() > deadline:
            return answer
        await asyncio.sleep(0.1)


def run_scenario(scenario: Scenario, pair) -> Outcome:
    """Run every step on both sides of ``pair``; the differences, before any allow-listing."""
    return asyncio.run(_run(scenario, pair))


async def _run(scenario: Scenario, pair) -> Outcome:
    ns = scenario.namespace
    mapping = seed_mapping(pair.machine)
    topic_ids: dict[str, dict] = {side: {} for side in SIDES}
    learned: dict[str, dict] = {side: {} for side in SIDES}
    outcome = Outcome(scenario)
    log_start = pair.log_size()
    seen: dict[str, int] = {}
    pending: dict[str, tuple[Step, dict, asyncio.Future]] = {}  # background steps not answered yet, by path
    sessions = Sessions(pair)
    several_brokers = CONFIGURATIONS[scenario.config].nodes > 1

    def record(path: str, step: Step, requests: dict, answers: dict) -> None:
        for side in SIDES:
            learn_topic_ids(answers[side], topic_ids[side])
            learn_values(answers[side], path, learned[side])
        if step.scope:
            answers = {side: scoped(answer, ns) for side, answer in answers.items()}
        outcome.exchanges.append(Exchange(path, requests[KAFKA], answers))
        comparison = Comparison(mapping, ns, step.version, picked_controller=several_brokers)
        outcome.differences.extend(comparison.run(path, answers[KAFKA], answers[KRAFTWIRE]))

    async def settle(path: str) -> None:
        step, requests, answering = pending.pop(path)
        record(path, step, requests, dict(zip(SIDES, await answering)))

    for step in scenario.steps:
        if isinstance(step, NodeChange):  # the requests sent before it are answered first
            for earlier in list(pending):
                await settle(earlier)
            await asyncio.to_thread(pair.stop_node if step.action == "stop" else pair.start_node, step.node)
            continue
        api = w.api(step.request.API_KEY).name
        seen[api] = seen.get(api, 0) + 1
        path = api if seen[api] == 1 else f"{api}#{seen[api]}"
        for earlier in _learned_from(step.request) & pending.keys():
            await settle(earlier)
        requests = {side: instantiate(step.request, ns, topic_ids[side], learned[side]) for side in SIDES}
        _pair_request_ids(mapping, step.request, requests)
        nodes = {side: await _node(pair, side, step.node, ns) for side in SIDES}
        answering = asyncio.gather(*(_ask_until(pair, sessions, side, step, requests[side], nodes[side])
                                     for side in SIDES))
        if step.probe:
            seen[api] -= 1  # not an exchange of the scenario: later steps keep their paths
            await answering
        elif step.background:
            pending[path] = (step, requests, answering)
        else:
            record(path, step, requests, dict(zip(SIDES, await answering)))
    for path in list(pending):
        await settle(path)
    await sessions.close()
    for problem in pair.problems_since(log_start):
        outcome.differences.append(Difference("<kraftwire log>", "", problem))
    return outcome


def _learned_from(template) -> set[str]:
    """The paths of the steps whose answers a request's :class:`Learned` values name."""
    if isinstance(template, Learned):
        return {template.at} if template.at is not None else set()
    if isinstance(template, Built):
        return set().union(*map(_learned_from, template.arguments.values()))
    if isinstance(template, list):
        return set().union(*map(_learned_from, template))
    if isinstance(template, w.Base):
        return set().union(*(_learned_from(getattr(template, f.attr)) for f in template._info.fields))
    return set()


def _pair_request_ids(mapping: Mapping, template, requests: dict) -> None:
    """Each :class:`TopicId` of the template resolved to two ids: they are the same topic, so they pair."""

    def walk(value, kafka, ours):
        if isinstance(value, TopicId):
            if not (is_sentinel(kafka) or is_sentinel(ours)):
                mapping.bind("uuid", kafka, ours)
        elif isinstance(value, list):
            for item, a, b in zip(value, kafka, ours):
                walk(item, a, b)
        elif isinstance(value, w.Base):
            for f in value._info.fields:
                walk(getattr(value, f.attr), getattr(kafka, f.attr), getattr(ours, f.attr))

    walk(template, requests[KAFKA], requests[KRAFTWIRE])
