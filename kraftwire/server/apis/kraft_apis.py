"""What a KRaft node (``kraftwire server-start``) answers clients, from its metadata image; thin handlers only.

* Metadata and DescribeCluster: ``kraftwire.metadata.answers`` on this node's image, for the listener the request
  came in on; DescribeConfigs: ``kraftwire.metadata.describe_configs`` (topic and broker configs, dynamic over
  static). The ControllerId a client is given is a random alive broker, as Kafka's KRaft brokers answer: the
  controller APIs reach the active controller from any node (below). Unknown topics a Metadata request may
  auto-create (``auto.create.topics.enable``, the request allowing it) are asked of the controller with
  ``num.partitions`` and ``default.replication.factor``, and the client is told UNKNOWN_TOPIC_OR_PARTITION until
  they exist.
* The controller's APIs (CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders, IncrementalAlterConfigs,
  AlterConfigs, UpdateFeatures, UnregisterBroker, UnregisterController, and from brokers BrokerRegistration,
  BrokerHeartbeat, AlterPartition, AllocateProducerIds): decided by this node when it is the active controller.
  Otherwise a client's request Kafka forwards goes to the Raft leader's controller listener inside an Envelope
  (KIP-590, ``metadata.forwarding``: the controller authorizes and charges the client, whose principal and address
  the Envelope carries), and the answer is relayed; a NOT_CONTROLLER Envelope sends it again to the new leader, and
  none by the deadline answers REQUEST_TIMED_OUT. A broker's own requests go to the leader as they are.
* A broker's topic partitions are ``partition_apis``' (Produce, Fetch, ListOffsets, OffsetForLeaderEpoch,
  InitProducerId), registered over the answers here. A controller-only node hosts none: there a Produce, Fetch or
  ListOffsets gets NOT_LEADER_OR_FOLLOWER for a topic the image holds and UNKNOWN_TOPIC_OR_PARTITION otherwise (the
  metadata log itself is internal). FindCoordinator on a controller-only node answers
  COORDINATOR_NOT_AVAILABLE; on a broker the group coordinator (``group_apis``) answers it.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import random

from kraftwire.config import METADATA_TOPIC
from kraftwire.error_codes import (
    CLUSTER_AUTHORIZATION_FAILED,
    COORDINATOR_NOT_AVAILABLE,
    GROUP_AUTHORIZATION_FAILED,
    INVALID_REQUEST,
    NOT_CONTROLLER,
    NOT_LEADER_OR_FOLLOWER,
    SECURITY_DISABLED,
    TOPIC_AUTHORIZATION_FAILED,
    UNKNOWN_TOPIC_ID,
    UNKNOWN_SERVER_ERROR,
    UNKNOWN_TOPIC_OR_PARTITION,
    default_message,
)
from kraftwire.errors import KraftwireError, ProtocolError
from kraftwire.ids import NO_ID, ZERO_UUID
from kraftwire.java_order import hashmap_order, string_hash
from kraftwire.metadata import answers
from kraftwire.metadata import broker_loggers as bl
from kraftwire.metadata import forwarding as fw
from kraftwire.metadata.broker_backoff import registration_wait_ms
from kraftwire.metadata.controller.acls import describe_acls
from kraftwire.metadata.controller.client_quotas import describe_client_quotas
from kraftwire.metadata.controller.refusals import acl_message, refusal
from kraftwire.metadata.controller.scram import describe_credentials
from kraftwire.metadata.controller.topics import hide_configs, refused_before_acls
from kraftwire.metadata.describe_configs import describe_configs
from kraftwire.protocol import messages as w
from kraftwire.protocol import served
from kraftwire.protocol.api_versions import Features
from kraftwire.raft.dynamic_voters import KRAFT_VERSION_RANGE
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import CLUSTER_NAME, ResourceType
from kraftwire.server.apis.broker_configs import logger_levels, set_logger_levels, static_broker_entries
from kraftwire.server.edge.access import host_of, operations_of
from kraftwire.replica.quotas import STRICT_SINCE
from kraftwire.server.edge.envelope import FORWARDABLE, was_forwarded
from kraftwire.server.runtime.metadata_node import supported_features

log = logging.getLogger("kraftwire.kraft")

#: the APIs the active controller decides, as the node serves them to clients and brokers
CONTROLLER_APIS = ("CreateTopics", "DeleteTopics", "CreatePartitions", "ElectLeaders", "IncrementalAlterConfigs",
                   "AlterConfigs", "UpdateFeatures", "UnregisterBroker", "BrokerRegistration", "BrokerHeartbeat",
                   "AlterPartition", "AllocateProducerIds", "AssignReplicasToDirs", "CreateAcls", "DeleteAcls",
                   "AlterUserScramCredentials", "AlterPartitionReassignments", "ListPartitionReassignments",
                   "ControllerRegistration", "AlterClientQuotas", "UnregisterController")
COORDINATOR_MESSAGE = "this node is a controller only: the brokers coordinate groups"
#: controller APIs whose ACLs are checked per item: (the request's item list, the response's result list); the APIs
#: that need one operation on the cluster are refused before any handler (``access.gate``)
_PER_ITEM = {"CreateTopics": ("topics", "topics"), "CreatePartitions": ("topics", "results"),
             "DeleteTopics": ("topics", "responses"), "IncrementalAlterConfigs": ("resources", "responses"),
             "AlterConfigs": ("resources", "responses")}
_TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC
_GROUP_RESOURCE = 32  # ConfigResource.Type.GROUP (KIP-848's group configs)
KRAFT_VERSION_FEATURE = "kraft.version"
HOLD_POLL_S = 0.05
ENVELOPE_VERSION = 0
#: the pause before a forwarded request goes again to a new (or newly elected) controller
_RETRY_BACKOFF_S = 0.05
#: the least time a forwarded request is given to be answered, however short the quorum's request timeout
FORWARD_DEADLINE_MIN_S = 5.0


class KraftApis:
    def __init__(self, node, metadata) -> None:
        self.node = node
        self.md = metadata
        self.rng = random.Random()
        self._creating: set[str] = set()

    def register(self) -> None:
        d = self.node.dispatcher
        d.serve("Metadata", self._after_registration(self.metadata))
        d.serve("DescribeCluster", self._after_registration(self.describe_cluster))
        d.serve("DescribeTopicPartitions", self.describe_topic_partitions)
        for api in CONTROLLER_APIS:
            d.serve(api, self._controller_handler(api))
        d.serve("Produce", self.produce)
        d.serve("ListOffsets", self.list_offsets)
        d.serve("FindCoordinator", self.find_coordinator)
        d.serve("DescribeConfigs", self.describe_configs)
        d.serve("DescribeAcls", self.describe_acls)
        d.serve("DescribeUserScramCredentials", self.describe_scram)
        d.serve("DescribeClientQuotas", self.describe_client_quotas)
        self.node.broker_fetch = (served.versions("Fetch")[0], self.fetch)
        d.features_source = self.features

    def _after_registration(self, fn):
        """``fn``, answered by a broker only once its image holds its own registration. Kafka's broker processes no
        request before it has caught up with the metadata log and registered; a restarted kraftwire broker listens at
        once, and its image until then is the cluster as it was when it stopped (at first no brokers at all), which a
        client would believe: librdkafka drops every broker it knew, its group coordinator included. The request
        waits (in order with the connection's others) as long as the registration may take with the resend backoff
        (``broker_backoff.registration_wait_ms``), then is answered from the image as it is."""
        hold_s = registration_wait_ms(self.node.settings.broker_session_timeout_ms) / 1000

        def handler(request, conn, since=None) -> None:
            replicas = self.node.replicas
            if (replicas is not None and not getattr(conn, "closed", False)
                    and not replicas.registered_in(self.md.image)):
                loop = asyncio.get_running_loop()
                since = loop.time() if since is None else since
                if loop.time() - since < hold_s:
                    loop.call_later(HOLD_POLL_S, handler, request, conn, since)
                    return
            fn(request, conn)

        return handler

    def features(self):
        """ApiVersions' features: what this build supports; the image's finalized levels at its offset. As Kafka's
        KRaft nodes, they include ``kraft.version``: supported 0..1 (a leader adding this node as a voter reads that
        range, KIP-853), finalized at the Raft log's level when it is above 0."""
        image = self.md.image
        finalized = dict(image.features)
        raft = self.node.raft
        if raft is not None and raft.membership.kraft_version > 0:
            finalized[KRAFT_VERSION_FEATURE] = raft.membership.kraft_version
        return Features({**supported_features(), KRAFT_VERSION_FEATURE: KRAFT_VERSION_RANGE}, finalized,
                        image.offset)

    # ------------------------------------------------------------------------------------------------ cluster view
    def listener_of(self, conn) -> str:
        listener = getattr(conn, "listener", None)
        s = self.node.settings
        if listener is None or listener in s.controller_listener_names:
            # an admin client bootstrapping from a controller listener: the brokers' first listeners
            brokers = self.md.image.brokers
            for bid in sorted(brokers):
                if brokers[bid].listeners and not brokers[bid].fenced:
                    return brokers[bid].listeners[0].name
            return listener or ""
        return listener

    def _controller_id(self, listener: str) -> int:
        alive = [b.id for b, _ in answers.alive_brokers(self.md.image, listener)]
        if alive:
            return self.rng.choice(alive)
        raft = self.node.raft
        return raft.quorum.leader_id if raft is not None else NO_ID

    def metadata(self, request, conn) -> None:
        listener = self.listener_of(conn)
        config = self.node.settings.config
        may_describe = may_create = None
        access = self.node.authorizer
        if access is not None:
            # an all-topics answer leaves out what the client may not see, without a log line per topic
            may_describe = lambda name: access.topic(conn, name, Op.DESCRIBE,  # noqa: E731
                                                     log_denied=request.body.topics is not None)
            may_create = lambda name: (access.allows_cluster(conn, Op.CREATE)  # noqa: E731
                                       or access.topic(conn, name, Op.CREATE))
        answer = answers.metadata_response(self.md.image, listener, request.body, request.version,
                                           controller_id=self._controller_id(listener),
                                           cluster_id=self.node.cluster_id,
                                           auto_create=config.auto_create_topics_enable,
                                           may_describe=may_describe, may_create=may_create,
                                           topic_operations=self._topic_operations(conn),
                                           cluster_operations=lambda: self._cluster_operations(conn))
        conn.send_response(answer.response, request.version, request.header.correlation_id)
        wanted = [name for name in answer.to_create if name not in self._creating]
        if wanted:
            self._auto_create(wanted)

    def _auto_create(self, names: list[str]) -> None:
        config = self.node.settings.config
        CT = w.CreateTopicsRequest
        body = CT(topics=[CT.CreatableTopic(name=n, num_partitions=config.num_partitions,
                                            replication_factor=config.default_replication_factor, assignments=[],
                                            configs=[]) for n in names],
                  timeout_ms=30_000, validate_only=False)
        self._creating.update(names)

        def done(response) -> None:
            self._creating.difference_update(names)
            for t in response.topics:
                if t.error_code not in (0, 36):  # TOPIC_ALREADY_EXISTS: someone else was first
                    log.info("auto-creating topic %s: error %d (%s)", t.name, t.error_code, t.error_message)

        self.call("CreateTopics", body, 5, done)

    def describe_topic_partitions(self, request, conn) -> None:
        access = self.node.authorizer
        may_describe = None
        if access is not None:
            may_describe = lambda name: access.topic(conn, name, Op.DESCRIBE,  # noqa: E731
                                                     log_denied=bool(request.body.topics))
        limit = self.node.settings.config.max_request_partition_size_limit
        try:
            body = answers.describe_topic_partitions(
                self.md.image, self.listener_of(conn), request.body, partition_limit=limit, may_describe=may_describe,
                topic_operations=self._topic_operations(conn))
        except answers.InvalidDescribeRequest as exc:  # Kafka's error answer: every named topic with the error
            log.info("DescribeTopicPartitions from %s: %s", conn.peer, exc)
            R = w.DescribeTopicPartitionsResponse
            body = R(throttle_time_ms=0, topics=[R.DescribeTopicPartitionsResponseTopic(
                error_code=INVALID_REQUEST, name=t.name, topic_id=ZERO_UUID, is_internal=False, partitions=[])
                for t in request.body.topics], next_cursor=None)
        conn.send_response(body, request.version, request.header.correlation_id)

    def describe_cluster(self, request, conn) -> None:
        R = w.DescribeClusterResponse
        listener = self.listener_of(conn)
        endpoint_type = getattr(request.body, "endpoint_type", 1)
        refused = answers.describe_cluster_refusal(
            endpoint_type, getattr(conn, "listener", None) in (None, *self.node.settings.controller_listener_names))
        if refused is not None:
            conn.send_response(refused, request.version, request.header.correlation_id)
            return
        if endpoint_type == 2:  # KIP-919: the registered controllers, for --bootstrap-controller
            raft = self.node.raft
            asked_on = getattr(conn, "listener", None) or self.node.settings.controller_listener
            brokers = answers.describe_cluster_controllers(self.md.image, asked_on)
            controller = raft.quorum.leader_id if raft is not None else NO_ID
        else:
            brokers = answers.describe_cluster_brokers(self.md.image, listener,
                                                       include_fenced=request.body.include_fenced_brokers)
            controller = self._controller_id(listener)
        body = R(error_code=0, cluster_id=self.node.cluster_id, endpoint_type=endpoint_type, controller_id=controller,
                 brokers=brokers)
        if request.body.include_cluster_authorized_operations:
            body.cluster_authorized_operations = self._cluster_operations(conn)
        conn.send_response(body, request.version, request.header.correlation_id)

    def _topic_operations(self, conn):
        """KIP-430 for topics: name -> the bit field of what the connection's principal may do on it."""
        access = self.node.authorizer
        return lambda name: operations_of(access, conn, ResourceType.TOPIC, name)

    def _cluster_operations(self, conn) -> int:
        """KIP-430 for the cluster: 0 to a principal that may not DESCRIBE it, as Kafka answers."""
        access = self.node.authorizer
        if access is not None and not access.allows_cluster(conn, Op.DESCRIBE, log_denied=False):
            return 0
        return operations_of(access, conn, ResourceType.CLUSTER, CLUSTER_NAME)

    def describe_configs(self, request, conn) -> None:
        s = self.node.settings
        body = describe_configs(self.md.image, request.body, request.version, node_id=s.node_id,
                                static=static_broker_entries(s.config), props=s.config.raw, loggers=logger_levels())
        access = self.node.authorizer
        if access is not None:
            for r in body.results:
                if r.resource_type == _TOPIC_RESOURCE:
                    ok, code = access.topic(conn, r.resource_name, Op.DESCRIBE_CONFIGS), TOPIC_AUTHORIZATION_FAILED
                elif r.resource_type == _GROUP_RESOURCE:
                    ok = access.group(conn, r.resource_name, Op.DESCRIBE_CONFIGS)
                    code = GROUP_AUTHORIZATION_FAILED
                else:
                    ok, code = access.allows_cluster(conn, Op.DESCRIBE_CONFIGS), CLUSTER_AUTHORIZATION_FAILED
                if not ok:
                    r.error_code, r.error_message, r.configs = code, default_message(code), []
        conn.send_response(body, request.version, request.header.correlation_id)

    def describe_acls(self, request, conn) -> None:
        body = describe_acls(self.md.image, request.body, request.version, enabled=self.node.authorizer is not None)
        conn.send_response(body, request.version, request.header.correlation_id)

    def describe_scram(self, request, conn) -> None:
        body = describe_credentials(self.md.image, request.body)
        conn.send_response(body, request.version, request.header.correlation_id)

    def describe_client_quotas(self, request, conn) -> None:
        body = describe_client_quotas(self.md.image, request.body)
        conn.send_response(body, request.version, request.header.correlation_id)

    # ------------------------------------------------------------------------------------------------ controller
    def _controller_handler(self, api: str):
        def handler(request, conn) -> None:
            version, cid = request.version, request.header.correlation_id
            forwarded = was_forwarded(request, conn)  # never forwarded twice
            body, denied = request.body, None
            access = self.node.authorizer
            send = conn.send_response
            if api == "IncrementalAlterConfigs" and not forwarded:
                body, send = self._broker_local_configs(body, conn, version, cid)
                if body is None:  # every resource decided here
                    return
            enveloping = request.api.key in FORWARDABLE and not forwarded
            if enveloping and not self.md.active:  # Kafka's broker: the controller authorizes the client
                asyncio.get_running_loop().create_task(self._forward_enveloped(api, request, body, conn, send))
                return
            if access is None and api in ("CreateAcls", "DeleteAcls"):  # no authorizer: ACLs mean nothing here
                send(refusal(api, body, version, SECURITY_DISABLED, "No Authorizer is configured."), version, cid)
                return
            checked = access is not None
            if checked and api in _PER_ITEM:
                body, denied = self._authorize_items(api, body, version, conn, access)
            if body is None:  # every item refused: the controller is not asked
                send(denied, version, cid)
                return

            def answer(response) -> None:
                if api == "CreateTopics" and checked:
                    for t in response.topics:
                        if not access.topic(conn, t.name, Op.DESCRIBE_CONFIGS, log_denied=False):
                            hide_configs(t)
                if denied is not None:
                    getattr(response, _PER_ITEM[api][1]).extend(getattr(denied, _PER_ITEM[api][1]))
                send(response, version, cid)

            quota = None
            if api in STRICT_SINCE and self.md.active and (not forwarded or getattr(conn, "enveloped", False)):
                quota = self.node.quotas.mutation_quota(request, conn)
            self.call(api, body, version, answer, forward=not (forwarded or enveloping), quota=quota)
        return handler

    async def _forward_enveloped(self, api: str, request, body, conn, send) -> None:
        """``body`` (the client's request, or what the broker left of it) sent to the active controller inside an
        Envelope with the client's principal and address, as Kafka's ``ForwardingManager`` does; the Envelope's answer
        relayed to the client (``forwarding.unwrap``). A controller that is gone or no longer active is replaced by
        the new one until the deadline, which answers REQUEST_TIMED_OUT."""
        version, cid = request.version, request.header.correlation_id
        try:
            envelope = fw.envelope(request.header, body, version, conn.principal, host_of(conn.peer),
                                   getattr(conn, "token_authenticated", False))
        except (ProtocolError, ValueError) as exc:  # a body that does not encode again, a peer without an address
            log.warning("cannot forward %s from %s: %s", api, conn.peer, exc)
            send(refusal(api, body, version, UNKNOWN_SERVER_ERROR), version, cid)
            return
        timeout = max(self.node.settings.config.controller_quorum_request_timeout_ms / 1000, FORWARD_DEADLINE_MIN_S)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        outcome = None
        while outcome is None and loop.time() < deadline:
            voter = self._leader_voter()
            if voter is None:  # no known leader yet: wait for the election
                await asyncio.sleep(_RETRY_BACKOFF_S)
                continue
            try:
                answer = await self.node.forward(voter, envelope, ENVELOPE_VERSION,
                                                 timeout_s=max(deadline - loop.time(), 0.01))
            except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
                log.info("could not forward %s to controller %d: %s", api, voter.node_id, exc)
                await asyncio.sleep(_RETRY_BACKOFF_S)
                continue
            outcome = fw.unwrap(answer, api, body, version)
            if outcome.action == fw.RETRY:
                outcome = None
                await asyncio.sleep(_RETRY_BACKOFF_S)
        if outcome is None:
            send(fw.timed_out(api, body, version), version, cid)
        elif outcome.action == fw.CLOSE:
            log.info("closing the connection from %s: the controller refused %s's version %d", conn.peer, api, version)
            conn.close()
        else:
            send(outcome.response, version, cid)

    def _leader_voter(self):
        """The Raft leader's controller endpoint when another node leads, else None."""
        raft = self.node.raft
        leader = raft.quorum.leader_id if raft is not None else NO_ID
        return self.node.settings.voter(leader) if leader not in (NO_ID, self.node.settings.node_id) else None

    def _broker_local_configs(self, body, conn, version: int, cid: int):
        """IncrementalAlterConfigs' resources this broker decides itself (``broker_loggers.preprocess``: its loggers,
        another broker's name), as Kafka's receiving broker does: (the body of the others, for the controller, or
        None when none is left and the answer went; the sender that merges both answers in request order)."""
        resources = list(body.resources)
        local = bl.preprocess(resources, self.node.settings.node_id, logger_levels())
        access = self.node.authorizer
        R = w.IncrementalAlterConfigsResponse
        mine = {}
        for i, (code, message) in local.items():
            r = resources[i]
            if (r.resource_type == bl.BROKER_LOGGER and access is not None
                    and not access.allows_cluster(conn, Op.ALTER_CONFIGS)):
                code, message = CLUSTER_AUTHORIZATION_FAILED, default_message(CLUSTER_AUTHORIZATION_FAILED)
            elif r.resource_type == bl.BROKER_LOGGER and code == 0 and not body.validate_only:
                set_logger_levels(bl.level_changes(r.configs))
            mine[i] = R.AlterConfigsResourceResponse(error_code=code, error_message=message,
                                                      resource_type=r.resource_type, resource_name=r.resource_name)

        def send(response, version: int, cid: int) -> None:
            theirs = {(x.resource_type, x.resource_name): x for x in response.responses}
            response.responses = [mine[i] if i in mine else theirs[(r.resource_type, r.resource_name)]
                                  for i, r in enumerate(resources) if i in mine
                                  or (r.resource_type, r.resource_name) in theirs]
            conn.send_response(response, version, cid)

        if not mine:
            return body, conn.send_response
        rest = copy.copy(body)
        rest.resources = [r for i, r in enumerate(resources) if i not in mine]
        if not rest.resources:
            send(R(throttle_time_ms=0, responses=[]), version, cid)
            return None, send
        return rest, send

    def _authorize_items(self, api: str, body, version: int, conn, access):
        """Split a topic or config request by ACLs: (the body of the allowed items or None when there are none,
        the refusal of the others or None), as Kafka's ControllerApis answers each item."""
        items_attr = _PER_ITEM[api][0] if not (api == "DeleteTopics" and version < 6) else "topic_names"
        allowed, refused = [], []  # refused: (item, code)
        image = self.md.image
        items = getattr(body, items_attr)
        for item, malformed in zip(items, refused_before_acls(api, items)):
            if malformed:  # the controller answers it INVALID_REQUEST, as Kafka does whatever the ACLs say
                allowed.append(item)
                continue
            if api == "CreateTopics":
                ok = access.allows_cluster(conn, Op.CREATE) or access.topic(conn, item.name, Op.CREATE)
                code = TOPIC_AUTHORIZATION_FAILED
            elif api == "CreatePartitions":
                ok, code = access.topic(conn, item.name, Op.ALTER), TOPIC_AUTHORIZATION_FAILED
            elif api == "DeleteTopics":
                name = item if isinstance(item, str) else item.name
                if name is None:
                    found = image.topics.get(item.topic_id)
                    if found is None or not access.topic(conn, found.name, Op.DESCRIBE):
                        refused.append((item, UNKNOWN_TOPIC_ID))  # as for an id nobody has (Kafka's ControllerApis)
                        continue
                    name = found.name
                ok, code = access.topic(conn, name, Op.DELETE), TOPIC_AUTHORIZATION_FAILED
                if not ok and not isinstance(item, str) and item.name is None:
                    item = copy.copy(item)  # refused by id, answered with the name it has (Kafka's answer)
                    item.name = name
            else:  # (Incremental)AlterConfigs: a topic's or the cluster's (broker, logger) configs
                if item.resource_type == _TOPIC_RESOURCE:
                    ok = access.topic(conn, item.resource_name, Op.ALTER_CONFIGS)
                    code = TOPIC_AUTHORIZATION_FAILED
                elif item.resource_type == _GROUP_RESOURCE:
                    ok = access.group(conn, item.resource_name, Op.ALTER_CONFIGS)
                    code = GROUP_AUTHORIZATION_FAILED
                else:
                    ok, code = access.allows_cluster(conn, Op.ALTER_CONFIGS), CLUSTER_AUTHORIZATION_FAILED
            (allowed.append(item) if ok else refused.append((item, code)))
        if not refused:
            return body, None
        if api == "CreateTopics":  # Kafka's ControllerApis appends them walking a HashSet of the request's names
            order = {name: i for i, name in enumerate(hashmap_order(dict.fromkeys(t.name for t in items), string_hash))}
            refused.sort(key=lambda refusal: order[refusal[0].name])
        denied = None
        for item, code in refused:
            one = copy.copy(body)
            setattr(one, items_attr, [item])
            part = refusal(api, one, version, code, acl_message(api, code))
            if denied is None:
                denied = part
            else:
                getattr(denied, _PER_ITEM[api][1]).extend(getattr(part, _PER_ITEM[api][1]))
        if not allowed:
            return None, denied
        rest = copy.copy(body)
        setattr(rest, items_attr, allowed)
        return rest, denied

    def call(self, api: str, body, version: int, answer, *, forward: bool = True, quota=None) -> None:
        """Decide on this node when it is the active controller, else forward to the Raft leader. ``quota``: the
        controller mutation quota of the client asking (KIP-599; only the active controller charges one)."""
        if self.md.active:
            self.md.submit(api, body, version, answer, self.node.dispatcher.arrival_ns or None, quota)
            return
        voter = self._leader_voter()
        if voter is None or not forward:
            answer(refusal(api, body, version, NOT_CONTROLLER))
            return
        asyncio.get_running_loop().create_task(self._forward(api, body, version, answer, voter))

    async def _forward(self, api: str, body, version: int, answer, voter) -> None:
        timeout = max(self.node.settings.config.controller_quorum_request_timeout_ms / 1000, 5.0)
        try:
            response = await self.node.forward(voter, body, version, timeout_s=timeout)
        except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
            log.info("could not forward %s to controller %d: %s", api, voter.node_id, exc)
            response = refusal(api, body, version, NOT_CONTROLLER)
        answer(response)

    # ------------------------------------------------------------------------------------------------ partitions
    def _partition_error(self, name: str | None) -> int:
        if name is None or name == METADATA_TOPIC or name not in self.md.image.topic_ids:
            return UNKNOWN_TOPIC_OR_PARTITION
        return NOT_LEADER_OR_FOLLOWER

    def produce(self, request, conn) -> None:
        body, version = request.body, request.version
        R = w.ProduceResponse
        topics = []
        image = self.md.image
        for t in body.topic_data:
            if version >= 13:  # by id (KIP-516)
                found = image.topics.get(t.topic_id)
                code = UNKNOWN_TOPIC_ID if found is None else self._partition_error(found.name)
            else:
                code = self._partition_error(t.name)
            topics.append(R.TopicProduceResponse(name=t.name, topic_id=t.topic_id, partition_responses=[
                R.PartitionProduceResponse(index=p.index, error_code=code, base_offset=-1, log_append_time_ms=-1,
                                           log_start_offset=-1) for p in t.partition_data]))
        if body.acks == 0:
            return
        conn.send_response(R(responses=topics, throttle_time_ms=0), version, request.header.correlation_id)

    def fetch(self, request, conn) -> None:
        body, version = request.body, request.version
        R = w.FetchResponse
        image = self.md.image
        topics = []
        for t in body.topics:
            if version >= 13:
                found = image.topics.get(t.topic_id)
                code = UNKNOWN_TOPIC_ID if found is None else self._partition_error(found.name)
            else:
                code = self._partition_error(t.topic)
            topics.append(R.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id, partitions=[
                R.PartitionData(partition_index=p.partition, error_code=code, high_watermark=-1,
                                last_stable_offset=-1, log_start_offset=-1, aborted_transactions=None,
                                preferred_read_replica=-1, records=b"") for p in t.partitions]))
        conn.send_response(R(throttle_time_ms=0, error_code=0, session_id=0, responses=topics), version,
                           request.header.correlation_id)

    def list_offsets(self, request, conn) -> None:
        R = w.ListOffsetsResponse
        topics = []
        for t in request.body.topics:
            code = self._partition_error(t.name)
            topics.append(R.ListOffsetsTopicResponse(name=t.name, partitions=[
                R.ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=code, timestamp=-1,
                                               offset=-1, leader_epoch=-1) for p in t.partitions]))
        conn.send_response(R(throttle_time_ms=0, topics=topics), request.version, request.header.correlation_id)

    def find_coordinator(self, request, conn) -> None:
        R = w.FindCoordinatorResponse
        version, body = request.version, request.body
        if version >= 4:
            resp = R(throttle_time_ms=0, coordinators=[
                R.Coordinator(key=key, node_id=-1, host="", port=-1, error_code=COORDINATOR_NOT_AVAILABLE,
                              error_message=COORDINATOR_MESSAGE) for key in body.coordinator_keys])
        else:
            resp = R(throttle_time_ms=0, error_code=COORDINATOR_NOT_AVAILABLE, error_message=COORDINATOR_MESSAGE,
                     node_id=-1, host="", port=-1)
        conn.send_response(resp, version, request.header.correlation_id)
