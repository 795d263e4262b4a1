"""What a broker answers from its metadata image (Kafka's KRaftMetadataCache), pure.

``metadata_response(image, listener, request, version, controller_id=...)`` is the Metadata answer a client gets on
``listener``:

* brokers: the unfenced brokers that have that listener, at their endpoint of that name (with their rack);
* topics: every topic when the request names none (null; an empty list at v0), else the ones named, each once: by
  name, or from v12 by id — when any id is given, only the ids (Kafka's KafkaApis). ``__cluster_metadata`` is never
  one of them. An unknown name is UNKNOWN_TOPIC_OR_PARTITION (an illegal one INVALID_TOPIC_EXCEPTION), an unknown id
  UNKNOWN_TOPIC_ID. Kafka refuses the whole request (``_refusal``) when v10/v11 names a topic by id, or v12 names
  one by neither name nor id; then every topic named gets the error and nothing else is answered. Unknown names
  that may be auto-created (the
  request allows it, the broker's ``auto.create.topics.enable`` does, the name is legal) are returned in
  ``to_create``: the broker asks the controller for them and the client retries, as a KRaft broker does;
* per partition: the leader at its endpoint when it is alive on the listener; otherwise leader -1 with
  LEADER_NOT_AVAILABLE (unregistered leader, or leader -1) or LISTENER_NOT_FOUND (registered but fenced or without
  the listener; from v6 — before, LEADER_NOT_AVAILABLE). Offline replicas are the ones unregistered, fenced or
  without the listener. At v0 only live replicas are listed and a missing one is REPLICA_NOT_AVAILABLE;
* ``controller_id`` is chosen by the caller (Kafka's brokers answer a random alive broker).

``describe_cluster_brokers(image, listener)`` lists the same brokers for DescribeCluster;
``describe_cluster_refusal(endpoint_type, on_controller_listener)`` is its answer to an endpoint type it does not
serve there.
"""

from __future__ import annotations

from typing import NamedTuple

from kraftwire.error_codes import (
    INVALID_REQUEST,
    INVALID_TOPIC_EXCEPTION,
    LEADER_NOT_AVAILABLE,
    LISTENER_NOT_FOUND,
    MISMATCHED_ENDPOINT_TYPE,
    NONE,
    REPLICA_NOT_AVAILABLE,
    TOPIC_AUTHORIZATION_FAILED,
    UNKNOWN_TOPIC_ID,
    UNKNOWN_SERVER_ERROR,
    UNKNOWN_TOPIC_OR_PARTITION,
    UNSUPPORTED_ENDPOINT_TYPE,
)
from kraftwire.ids import ZERO_UUID
from kraftwire.java_order import (hashmap_capacity, hashmap_order, scala_hash_order, scala_mutable_order,
                                  scala_set_order, string_hash)
from kraftwire.metadata.controller.topics import METADATA_TOPIC, name_error
from kraftwire.metadata.image import BrokerRegistration, MetadataImage
from kraftwire.protocol import messages as m

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
BROKER_ENDPOINTS, CONTROLLER_ENDPOINTS = 1, 2  # DescribeCluster v1's EndpointType
NO_AUTHORIZED_OPERATIONS = -(2**31)


class MetadataAnswer(NamedTuple):
    response: object
    #: unknown topic names to ask the controller to create (auto-creation)
    to_create: tuple[str, ...]


def _endpoint(b: BrokerRegistration | None, listener: str):
    if b is None or b.fenced:
        return None
    return next((e for e in b.listeners if e.name == listener), None)


def broker_endpoint(image: MetadataImage, broker_id: int, listener: str):
    """The endpoint of an unfenced broker on ``listener`` (``host``, ``port``), or None."""
    return _endpoint(image.brokers.get(broker_id), listener)


def alive_brokers(image: MetadataImage, listener: str) -> list[tuple[BrokerRegistration, object]]:
    out = []
    for bid in sorted(image.brokers):
        b = image.brokers[bid]
        ep = _endpoint(b, listener)
        if ep is not None:
            out.append((b, ep))
    return out


def metadata_response(image: MetadataImage, listener: str, request, version: int, *, controller_id: int,
                      cluster_id: str, auto_create: bool = False, may_describe=None,
                      may_create=None, topic_operations=None, cluster_operations=None) -> MetadataAnswer:
    """``may_describe(name)`` / ``may_create(name)`` (ACLs; None: allowed): a topic the client may not describe is
    left out of an all-topics answer and answered TOPIC_AUTHORIZATION_FAILED when named, whether it exists or not; a
    missing topic it may describe but not create is answered TOPIC_AUTHORIZATION_FAILED instead of being created,
    as Kafka's KafkaApis answers. KIP-430 (v8+): ``topic_operations(name)`` fills the authorized operations of every
    topic answered but the refused ones and unknown ids when the client asks; ``cluster_operations()`` the cluster's
    (v8 to v10 only, as Kafka)."""
    R = m.MetadataResponse
    requested = request.topics
    if requested is not None and version == 0 and not requested:
        requested = None
    refused = None if requested is None else refused_metadata(requested, version)
    if refused is not None:
        return MetadataAnswer(refused, ())
    brokers = [R.MetadataResponseBroker(node_id=b.id, host=ep.host, port=ep.port, rack=b.rack)
               for b, ep in alive_brokers(image, listener)]
    topics, to_create = [], []
    if requested is None:  # Kafka's order: the describable topics in a Scala mutable HashSet
        names = [name for name in image.topic_ids if name != METADATA_TOPIC]
        for name in scala_mutable_order([n for n in names if may_describe is None or may_describe(n)], string_hash):
            topics.append(_topic(image, name, listener, version))
    else:
        allow = auto_create and (version < 4 or request.allow_auto_topic_creation)
        wanted = wanted_topics(requested, version)
        for name, topic_id in wanted:
            if name is None:
                found = image.topics.get(topic_id)
                if found is None or found.name == METADATA_TOPIC:
                    topics.append(R.MetadataResponseTopic(error_code=UNKNOWN_TOPIC_ID, name=None, topic_id=topic_id,
                                                          is_internal=False, partitions=[],
                                                          topic_authorized_operations=NO_AUTHORIZED_OPERATIONS))
                    continue
                name = found.name
            if may_describe is not None and not may_describe(name):
                topics.append(R.MetadataResponseTopic(error_code=TOPIC_AUTHORIZATION_FAILED, name=name,
                                                      topic_id=ZERO_UUID, is_internal=name in INTERNAL_TOPICS,
                                                      partitions=[],
                                                      topic_authorized_operations=NO_AUTHORIZED_OPERATIONS))
                continue
            if name != METADATA_TOPIC and name in image.topic_ids:
                topics.append(_topic(image, name, listener, version))
                continue
            code = UNKNOWN_TOPIC_OR_PARTITION
            if name_error(name):
                code = INVALID_TOPIC_EXCEPTION
            elif allow and name != METADATA_TOPIC:
                if may_create is not None and not may_create(name):
                    code = TOPIC_AUTHORIZATION_FAILED
                else:
                    to_create.append(name)
            topics.append(R.MetadataResponseTopic(error_code=code, name=name, topic_id=ZERO_UUID,
                                                  is_internal=name in INTERNAL_TOPICS, partitions=[],
                                                  topic_authorized_operations=NO_AUTHORIZED_OPERATIONS))
        if all(name is not None for name, _ in wanted):
            topics = named_topics_order(topics)
    cluster_ops = NO_AUTHORIZED_OPERATIONS
    if version >= 8:
        if version <= 10 and request.include_cluster_authorized_operations and cluster_operations is not None:
            cluster_ops = cluster_operations()
        if request.include_topic_authorized_operations and topic_operations is not None:
            for t in topics:
                if t.error_code not in (TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_ID):
                    t.topic_authorized_operations = topic_operations(t.name)
    body = R(throttle_time_ms=0, brokers=brokers, cluster_id=cluster_id, controller_id=controller_id, topics=topics,
             cluster_authorized_operations=cluster_ops)
    return MetadataAnswer(body, tuple(to_create))


def named_topics_order(topics: list) -> list:
    """The answer to topics named by name in Kafka 4.4's order (KafkaApis ``handleTopicMetadataRequest``): the names
    go into a Scala ``Set`` (``java_order.scala_set_order``: request order up to four, a CHAMP trie's above); those
    the principal may describe (and create, when they would be) are kept in a subset of it (a ``Set1``..``Set4``
    keeps its order, a trie's subset is a trie); the existing topics are answered in that order, then the missing
    ones in the order of a ``java.util.HashSet`` copied from that subset (sized for all of it, at least 16
    buckets); the refused topics follow (kraftwire keeps their request order)."""
    names = scala_set_order([t.name for t in topics], string_hash)
    refused = {t.name for t in topics if t.error_code == TOPIC_AUTHORIZATION_FAILED}
    allowed = [name for name in names if name not in refused]
    if len(names) > 4:
        allowed = scala_hash_order(allowed, string_hash)
    by_name = {t.name: t for t in topics}
    existing = [name for name in allowed if by_name[name].topic_id != ZERO_UUID]
    missing = hashmap_order([name for name in allowed if by_name[name].topic_id == ZERO_UUID], string_hash,
                            max(16, hashmap_capacity(len(allowed), copied=True)))
    return [by_name[name] for name in existing + missing] + [t for t in topics if t.name in refused]


def refused_metadata(requested, version: int):
    """Kafka's answer to a Metadata request naming ``requested`` that its broker refuses as a whole, or None: every
    topic named gets the error (a null name answered as ""), and there are no brokers, no cluster id, controller -1.
    Before v12 a topic may be named by name only (INVALID_REQUEST; Kafka's message, not sent, is "Topic name can not
    be null for version …" or "Topic IDs are not supported in requests for version …"); from v12 a topic named by
    neither, with none named by id, fails Kafka's broker on the null name: UNKNOWN_SERVER_ERROR, as Kafka 4.4
    answers."""
    code = None
    if version >= 10:  # before, neither a null name nor an id can be sent
        by_id = any(t.topic_id not in (None, ZERO_UUID) for t in requested)
        if version < 12 and (by_id or any(t.name is None for t in requested)):
            code = INVALID_REQUEST
        elif version >= 12 and not by_id and any(t.name is None for t in requested):
            code = UNKNOWN_SERVER_ERROR
    if code is None:
        return None
    R = m.MetadataResponse
    return R(throttle_time_ms=0, brokers=[], cluster_id=None, controller_id=-1, topics=[
        R.MetadataResponseTopic(error_code=code, name="" if t.name is None else t.name, topic_id=t.topic_id,
                                is_internal=False, partitions=[], topic_authorized_operations=NO_AUTHORIZED_OPERATIONS)
        for t in requested], cluster_authorized_operations=NO_AUTHORIZED_OPERATIONS)


def wanted_topics(requested, version: int) -> list[tuple[str | None, object]]:
    """(name, None) or (None, id) for each topic a Metadata request names, once each, in the order named: from v12,
    when any topic is named by id, the ids alone (Kafka then leaves the names out)."""
    if version >= 12:
        ids = dict.fromkeys(t.topic_id for t in requested if t.topic_id not in (None, ZERO_UUID))
        if ids:
            return [(None, topic_id) for topic_id in ids]
    return [(name, None) for name in dict.fromkeys(t.name for t in requested)]


def _topic(image: MetadataImage, name: str, listener: str, version: int):
    R = m.MetadataResponse
    t = image.topic(name)
    partitions = []
    for index in sorted(t.partitions):
        p = t.partitions[index]
        offline = [r for r in p.replicas if _endpoint(image.brokers.get(r), listener) is None]
        replicas, isr = list(p.replicas), list(p.isr)
        leader = _endpoint(image.brokers.get(p.leader), listener) if p.leader >= 0 else None
        if leader is None:
            registered = p.leader >= 0 and p.leader in image.brokers
            code = LISTENER_NOT_FOUND if registered and version >= 6 else LEADER_NOT_AVAILABLE
            leader_id = -1
        else:
            code, leader_id = NONE, p.leader
            if version == 0:  # v0 lists live replicas only and flags the missing ones
                live = [r for r in replicas if r not in offline]
                live_isr = [r for r in isr if r not in offline]
                if len(live) < len(replicas) or len(live_isr) < len(isr):
                    code = REPLICA_NOT_AVAILABLE
                replicas, isr = live, live_isr
        partitions.append(R.MetadataResponsePartition(error_code=code, partition_index=index, leader_id=leader_id,
                                                      leader_epoch=p.leader_epoch, replica_nodes=replicas,
                                                      isr_nodes=isr, offline_replicas=offline))
    return R.MetadataResponseTopic(error_code=NONE, name=name, topic_id=t.id, is_internal=name in INTERNAL_TOPICS,
                                   partitions=partitions, topic_authorized_operations=NO_AUTHORIZED_OPERATIONS)


def describe_cluster_brokers(image: MetadataImage, listener: str, *, include_fenced: bool = False) -> list:
    """DescribeCluster's brokers on ``listener``: the unfenced ones, and with ``include_fenced`` (v2's
    IncludeFencedBrokers, KIP-1073) the fenced ones too, flagged IsFenced, as Kafka's broker lists its cache's nodes."""
    B = m.DescribeClusterResponse.DescribeClusterBroker
    out = []
    for bid in sorted(image.brokers):
        b = image.brokers[bid]
        ep = next((e for e in b.listeners if e.name == listener), None)
        if ep is not None and (include_fenced or not b.fenced):
            out.append(B(broker_id=b.id, host=ep.host, port=ep.port, rack=b.rack, is_fenced=b.fenced))
    return out


def describe_cluster_controllers(image: MetadataImage, listener: str | None) -> list:
    """DescribeCluster's controllers (endpoint type 2, KIP-919): every registered controller with an endpoint on the
    listener the request came in on, in id order, from their ControllerRegistrations in the image."""
    B = m.DescribeClusterResponse.DescribeClusterBroker
    out = []
    for c in (image.controllers[i] for i in sorted(image.controllers)):
        ep = next((e for e in c.listeners if e.name == listener), None)
        if ep is not None:
            out.append(B(broker_id=c.id, host=ep.host, port=ep.port, rack=None))
    return out


def describe_cluster_refusal(endpoint_type: int, on_controller_listener: bool):
    """The whole DescribeCluster answer when the asked endpoint type is not served on this listener, or None: a type
    other than brokers (1) and controllers (2) is UNSUPPORTED_ENDPOINT_TYPE, the controllers asked of a client
    listener MISMATCHED_ENDPOINT_TYPE (KIP-919; Kafka 4.4's words), each with no brokers, no cluster id and
    controller -1. A controller listener answers both types: a kraftwire node whose only listener is its
    controller listener serves clients there."""
    if endpoint_type not in (BROKER_ENDPOINTS, CONTROLLER_ENDPOINTS):
        code, message = UNSUPPORTED_ENDPOINT_TYPE, f"Unsupported endpoint type {endpoint_type}"
    elif endpoint_type == CONTROLLER_ENDPOINTS and not on_controller_listener:
        code, message = (MISMATCHED_ENDPOINT_TYPE,
                         "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type "
                         "CONTROLLER")
    else:
        return None
    return m.DescribeClusterResponse(throttle_time_ms=0, error_code=code, error_message=message, cluster_id="",
                                     brokers=[])


class InvalidDescribeRequest(ValueError):
    """A DescribeTopicPartitions request Kafka refuses as a whole (INVALID_REQUEST)."""


def _java_order(name: str) -> bytes:
    return name.encode("utf-16-be", "surrogatepass")  # Java's String.compareTo: UTF-16 code units


def describe_topic_partitions(image: MetadataImage, listener: str, request, *, partition_limit: int = 2000,
                              may_describe=None, topic_operations=None):
    """DescribeTopicPartitions v0 (KIP-966), as Kafka's broker answers it from its image: the named topics (none named:
    every topic) from the cursor on, sorted by name, at most ``min(ResponsePartitionLimit,
    max.request.partition.size.limit)`` partitions (at least one), and a NextCursor where the answer stops early. A
    named topic that does not exist answers UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal
    name); one the client may not describe answers TOPIC_AUTHORIZATION_FAILED without its id, and is left out of an
    all-topics answer. Raises ``InvalidDescribeRequest`` for a cursor outside the named topics or a negative cursor
    partition, as Kafka does."""
    R = m.DescribeTopicPartitionsResponse
    every = not request.topics
    cursor = request.cursor
    start_name = cursor.topic_name if cursor is not None else ""
    start_key = _java_order(start_name)
    if every:
        names = {n for n in image.topic_ids if n != METADATA_TOPIC and _java_order(n) >= start_key}
    else:
        names = {t.name for t in request.topics if _java_order(t.name) >= start_key}
        if cursor is not None and cursor.topic_name not in names:
            raise InvalidDescribeRequest("DescribeTopicPartitionsRequest topic list should contain the cursor topic: "
                                         f"{cursor.topic_name}")
    if cursor is not None and cursor.partition_index < 0:
        raise InvalidDescribeRequest(f"DescribeTopicPartitionsRequest cursor partition must be valid: {cursor}")
    topics, refused = [], []
    remaining = max(min(partition_limit, request.response_partition_limit), 1)
    next_cursor = None
    for name in sorted(names, key=_java_order):
        if may_describe is not None and not may_describe(name):
            if not every:
                refused.append(R.DescribeTopicPartitionsResponseTopic(
                    error_code=TOPIC_AUTHORIZATION_FAILED, name=name, topic_id=ZERO_UUID, is_internal=False,
                    partitions=[]))
            continue
        if remaining == 0:  # the partitions before filled the answer: the next one starts with this topic
            next_cursor = R.Cursor(topic_name=name, partition_index=0)
            break
        t = image.topic(name) if name != METADATA_TOPIC else None
        if t is None:
            if not every:
                code = INVALID_TOPIC_EXCEPTION if name_error(name) else UNKNOWN_TOPIC_OR_PARTITION
                topics.append(R.DescribeTopicPartitionsResponseTopic(
                    error_code=code, name=name, topic_id=ZERO_UUID, is_internal=name in INTERNAL_TOPICS,
                    partitions=[]))
            continue
        first = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
        upper = min(len(t.partitions), first + remaining)
        parts = [_described_partition(image, t.partitions[i], i, listener)
                 for i in range(first, upper) if i in t.partitions]
        topics.append(R.DescribeTopicPartitionsResponseTopic(error_code=NONE, name=name, topic_id=t.id,
                                                             is_internal=name in INTERNAL_TOPICS, partitions=parts))
        if upper < len(t.partitions):
            next_cursor = R.Cursor(topic_name=name, partition_index=upper)
            break
        remaining -= len(parts)
    if topic_operations is not None:
        for t in topics:
            t.topic_authorized_operations = topic_operations(t.name)
    return R(throttle_time_ms=0, topics=topics + refused, next_cursor=next_cursor)


def _described_partition(image: MetadataImage, p, index: int, listener: str):
    P = m.DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponsePartition
    leader = _endpoint(image.brokers.get(p.leader), listener) if p.leader >= 0 else None
    offline = [r for r in p.replicas if _endpoint(image.brokers.get(r), listener) is None]
    return P(error_code=NONE, partition_index=index, leader_id=p.leader if leader is not None else -1,
             leader_epoch=p.leader_epoch, replica_nodes=list(p.replicas), isr_nodes=list(p.isr),
             eligible_leader_replicas=list(p.elr or ()), last_known_elr=list(p.last_known_elr or ()),
             offline_replicas=offline)
