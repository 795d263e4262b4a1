"""ACL checks at the edge of a KRaft node: ``authorizer.class.name`` turns them on.

The decisions are ``kraftwire.security.authorizer``'s (pure; Kafka's StandardAuthorizer rules) over the ACLs in this
node's metadata image, rebuilt whenever the image holds a different ACL mapping. This module only says *who* asks
(the connection's principal and its IP address) and *what* each API needs, as Kafka's KafkaApis and ControllerApis
do (the table in ``kafka-security-facts.md`` §5):

* ``gate`` runs in the dispatcher before any handler, for the APIs that need one operation on the cluster — the
  quorum's and the brokers' own requests (CLUSTER_ACTION), DescribeQuorum/DescribeAcls/DescribeLogDirs/
  DescribeUserScramCredentials (DESCRIBE), ElectLeaders/UpdateFeatures/UnregisterBroker/UnregisterController/
  Create-/DeleteAcls/AlterUserScramCredentials/Add-/RemoveRaftVoter (ALTER), AlterClientQuotas (ALTER_CONFIGS), DescribeClientQuotas
  (DESCRIBE_CONFIGS). A refused request is answered with the API's error
  response carrying CLUSTER_AUTHORIZATION_FAILED and reaches no handler, so nothing changes. A Fetch needs
  CLUSTER_ACTION on a controller listener, whoever sends it (it is the quorum's: Kafka's ControllerApis, refused
  with its error response), and from a replica elsewhere (Kafka's KafkaApis: TOPIC_AUTHORIZATION_FAILED in every
  partition).
* Handlers check per topic, group or transactional id (``allows``) where Kafka answers per item: Produce, Fetch,
  ListOffsets, Metadata (unauthorized topics are left out of an all-topics answer), the group APIs, CreateTopics and
  the other topic APIs of the controller.
* A request a broker forwards to the active controller (KIP-590) was checked on that broker; the controller accepts it
  when the forwarding connection's principal may CLUSTER_ACTION the cluster, as Kafka's Envelope requires, and checks
  it like a client's request otherwise.

Until a node has caught up with the metadata log once (a node that just started: a leader known, and its image at
that leader's high watermark), only super users are allowed, whatever ``allow.everyone.if.no.acl.found`` says: the
node fails closed rather than deciding on ACLs it has not read yet. Kafka starts its listeners only then (the
authorizer's initial load); kraftwire's listeners are up sooner and refuse meanwhile.
"""

from __future__ import annotations

import logging

from kraftwire.error_codes import CLUSTER_AUTHORIZATION_FAILED, NONE, TOPIC_AUTHORIZATION_FAILED, default_message
from kraftwire.metadata.controller.refusals import refusal
from kraftwire.protocol import served
from kraftwire.protocol import messages as w
from kraftwire.protocol.messages import APIS
from kraftwire.security.authorizer import (
    CLUSTER_NAME,
    AclOperation,
    Authorizer,
    ResourceType,
    authorized_operations,
    parse_super_users,
)

log = logging.getLogger("kraftwire.access")

#: APIs that need one operation on the cluster, checked before the handler (KafkaApis / ControllerApis)
CLUSTER_OPERATION = {
    "Vote": AclOperation.CLUSTER_ACTION, "BeginQuorumEpoch": AclOperation.CLUSTER_ACTION,
    "EndQuorumEpoch": AclOperation.CLUSTER_ACTION, "FetchSnapshot": AclOperation.CLUSTER_ACTION,
    "BrokerRegistration": AclOperation.CLUSTER_ACTION, "BrokerHeartbeat": AclOperation.CLUSTER_ACTION,
    "ControllerRegistration": AclOperation.CLUSTER_ACTION, "AlterPartition": AclOperation.CLUSTER_ACTION,
    "AllocateProducerIds": AclOperation.CLUSTER_ACTION,
    "AssignReplicasToDirs": AclOperation.CLUSTER_ACTION, "UpdateRaftVoter": AclOperation.CLUSTER_ACTION,
    "DescribeQuorum": AclOperation.DESCRIBE, "DescribeAcls": AclOperation.DESCRIBE,
    "DescribeLogDirs": AclOperation.DESCRIBE, "DescribeUserScramCredentials": AclOperation.DESCRIBE,
    "ElectLeaders": AclOperation.ALTER, "UpdateFeatures": AclOperation.ALTER, "UnregisterBroker": AclOperation.ALTER,
    "UnregisterController": AclOperation.ALTER,
    "CreateAcls": AclOperation.ALTER, "DeleteAcls": AclOperation.ALTER,
    "AlterUserScramCredentials": AclOperation.ALTER,
    "AlterClientQuotas": AclOperation.ALTER_CONFIGS, "DescribeClientQuotas": AclOperation.DESCRIBE_CONFIGS,
    "AlterPartitionReassignments": AclOperation.ALTER, "ListPartitionReassignments": AclOperation.DESCRIBE,
    "AddRaftVoter": AclOperation.ALTER, "RemoveRaftVoter": AclOperation.ALTER,
}
_GATED = {served.key(name): (name, op) for name, op in CLUSTER_OPERATION.items()}
_FETCH = served.key("Fetch")


def host_of(peer: str) -> str:
    """The IP address in a connection's ``peer`` (``"127.0.0.1:53211"``, ``"::1:53211"``)."""
    return peer.rsplit(":", 1)[0] if ":" in peer else peer


class Access:
    """The node's ACL checks: ``allows(conn, resource_type, name, operation)`` over the image's current ACLs."""

    def __init__(self, image_source, super_users: frozenset[str], allow_everyone_if_no_acl_found: bool,
                 caught_up=None, controller_listeners: frozenset[str] = frozenset()) -> None:
        self._image = image_source  # () -> MetadataImage
        self.controller_listeners = controller_listeners  # where every Fetch is the quorum's
        self.super_users = super_users
        self.allow_everyone = allow_everyone_if_no_acl_found
        self._caught_up = caught_up  # () -> bool: has this node read its metadata log up to the leader's end?
        self._ready = caught_up is None
        self._authorizer: Authorizer | None = None
        self._only_super_users = Authorizer({}, super_users, False)

    @classmethod
    def from_config(cls, config, image_source, caught_up=None) -> "Access | None":
        """None when ``authorizer.class.name`` is empty (no checks); the settings validated its value."""
        if not config.authorizer_class_name:
            return None
        return cls(image_source, parse_super_users(config.super_users), config.allow_everyone_if_no_acl_found,
                   caught_up, frozenset(config.controller_listener_names))

    @property
    def ready(self) -> bool:
        """Caught up once with the metadata log (then for good: later lag is the ordinary kind)."""
        if not self._ready and self._caught_up():
            self._ready = True
            log.info("ACLs loaded from the metadata log (%d ACLs); requests are now checked against them",
                     len(self._image().acls))
        return self._ready

    @property
    def authorizer(self) -> Authorizer:
        if not self.ready:
            return self._only_super_users
        acls = self._image().acls
        a = self._authorizer
        if a is None or a.acls is not acls:
            a = self._authorizer = Authorizer(acls, self.super_users, self.allow_everyone)
        return a

    def allows(self, conn, resource_type: int, name: str, operation: int, *, log_denied: bool = True) -> bool:
        ok = self.authorizer.authorize(conn.principal, host_of(conn.peer), resource_type, name, operation)
        if not ok and log_denied:
            log.info("denied %s on %s %r to %s from %s", AclOperation(operation).name,
                     ResourceType(resource_type).name, name, conn.principal, conn.peer)
        return ok

    def allows_cluster(self, conn, operation: int, *, log_denied: bool = True) -> bool:
        return self.allows(conn, ResourceType.CLUSTER, CLUSTER_NAME, operation, log_denied=log_denied)

    def allows_any(self, conn, resource_type: int, operation: int) -> bool:
        """May the principal ``operation`` some resource of this type (Kafka's authorizeByResourceType)?"""
        return self.authorizer.authorize_by_resource_type(conn.principal, host_of(conn.peer), resource_type,
                                                          operation)

    def topic(self, conn, name: str, operation: int, *, log_denied: bool = True) -> bool:
        return self.allows(conn, ResourceType.TOPIC, name, operation, log_denied=log_denied)

    def group(self, conn, group_id: str, operation: int) -> bool:
        return self.allows(conn, ResourceType.GROUP, group_id, operation)

    def operations(self, conn, resource_type: int, name: str) -> int:
        """KIP-430: the bit field of the operations the connection's principal may do on the resource."""
        return authorized_operations(self.authorizer, conn.principal, host_of(conn.peer), resource_type, name)

    # ------------------------------------------------------------------------------------------------ the gate
    def gate(self, request, conn) -> bool:
        """Before the handler: False when the request was refused here (and answered)."""
        key = request.api.key
        if key == _FETCH:
            return self._gate_fetch(request, conn)
        entry = _GATED.get(key)
        if entry is None:
            return True
        name, operation = entry
        if self.allows_cluster(conn, operation):
            return True
        conn.send_response(refusal_of(name, request.body, request.version, CLUSTER_AUTHORIZATION_FAILED),
                           request.version, request.header.correlation_id)
        return False

    def _gate_fetch(self, request, conn) -> bool:
        quorum = getattr(conn, "listener", None) in self.controller_listeners
        if not quorum and _replica_of(request) < 0:
            return True  # a consumer's: per topic, in the handler
        if self.allows_cluster(conn, AclOperation.CLUSTER_ACTION):
            return True
        refusal = (fetch_refusal(request.body, request.version, CLUSTER_AUTHORIZATION_FAILED) if quorum
                   else fetch_refusal(request.body, request.version, NONE, TOPIC_AUTHORIZATION_FAILED))
        conn.send_response(refusal, request.version, request.header.correlation_id)
        return False


def operations_of(access: Access | None, conn, resource_type: int, name: str) -> int:
    """KIP-430's authorized operations of ``conn`` on a resource; every supported one when ACLs are off."""
    if access is None:
        return authorized_operations(None, "", "", resource_type, name)
    return access.operations(conn, resource_type, name)


def _replica_of(request) -> int:
    body = request.body
    if request.version >= 15:
        return body.replica_state.replica_id
    return body.replica_id


def fetch_refusal(body, version: int, code: int, partition_code: int | None = None):
    """A refused Fetch as Kafka answers it: ``code`` at the top; ``partition_code`` (default: ``code``) in every
    partition asked for — which a quorum's refusal (Kafka's FetchRequest error response) leaves out from v13, where
    the top-level code is enough, while a follower's refusal (KafkaApis) has NONE at the top and each partition
    TOPIC_AUTHORIZATION_FAILED."""
    R = w.FetchResponse
    per_partition = partition_code is not None or version < 13
    return R(throttle_time_ms=0, error_code=code, session_id=body.session_id if partition_code is None else 0,
             responses=[R.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id, partitions=[
                 R.PartitionData(partition_index=p.partition, error_code=code if partition_code is None else
                                 partition_code, high_watermark=-1, last_stable_offset=-1, log_start_offset=-1,
                                 aborted_transactions=[], preferred_read_replica=-1, records=b"")
                 for p in t.partitions]) for t in body.topics] if per_partition else [])


def refusal_of(api: str, body, version: int, code: int):
    """The error answer of *api* to *body*: the controller's refusal builders where Kafka answers per item, else the
    response with its top-level error code set."""
    try:
        response = refusal(api, body, version, code)
    except KeyError:
        response = APIS[served.key(api)].response()
    if hasattr(response, "error_code"):  # ElectLeaders, UpdateFeatures: the whole answer names it too, as Kafka's
        response.error_code = code
    if api in DEFAULT_TEXT_REFUSALS:
        response.error_message = default_message(code)
    return response


#: APIs whose refusal carries the code's default text (Kafka's ``getErrorResponse`` sets ``error.message()``; seen for
#: DescribeQuorum by the conformance run's DescribeQuorum-v2-no-acl)
DEFAULT_TEXT_REFUSALS = frozenset({"DescribeQuorum"})
