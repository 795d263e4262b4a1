"""Share groups (KIP-932) on a KRaft broker: the asyncio edge around the share coordinator
(``kraftwire.coordinator.share``) and the group coordinator's share groups (``coordinator.group.share_protocol``).

* **The share coordinator** hosts the ``__share_group_state`` partitions this broker leads on the one coordinator
  runtime (``BrokerRuntime`` with ``ShareKind``). A share-state request (WriteShareGroupState, ReadShareGroupState,
  InitializeShareGroupState, DeleteShareGroupState, ReadShareGroupStateSummary: the share-partition leaders' and the
  group coordinator's, CLUSTER_ACTION on the cluster) is split into its keys; each key is one operation on the
  partition its coordinator key hashes to (NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS for one not served
  here); the answer is sent once every key is answered, the written ones once committed.
* **ShareGroupHeartbeat / ShareGroupDescribe** go to the group's ``__consumer_offsets`` shard (``group_apis``), once
  ``share.version`` is 1 or above (UNSUPPORTED_VERSION below, as Kafka answers), READ / DESCRIBE on the group is
  allowed (GROUP_AUTHORIZATION_FAILED), a heartbeat's subscribed topics may each be described
  (TOPIC_AUTHORIZATION_FAILED, Kafka 4.4 seen answering so) and the member id is valid (INVALID_REQUEST); those
  refusals carry the code alone, as Kafka's. A heartbeat's share-partition initialization is asked of the share coordinator once its
  records are committed; the answer moves the partitions to initialized (or forgets them) in the group.

* **ShareFetch / ShareAcknowledge** on the share-partitions this broker leads: ``share_fetch_apis``.

* **FindCoordinator** v6 share keys (``group:topicId:partition``) name the leader of the key's
  ``__share_group_state`` partition; the first one while the topic does not exist has it created
  (``share.coordinator.state.topic.*``), COORDINATOR_NOT_AVAILABLE meanwhile.
"""

from __future__ import annotations

import asyncio
import functools
import logging

from kraftwire import error_codes as ec
from kraftwire.coordinator.group.share import error_heartbeat
from kraftwire.coordinator.group.share_protocol import member_id_valid
from kraftwire.coordinator.share.hosting import SHARE_STATE_TOPIC, ShareKind, join, key_refusal, split
from kraftwire.coordinator.share.shard import ShareCoordinatorConfig, parse_coordinator_key
from kraftwire.kafka_configs import BrokerConfigs
from kraftwire.metadata.features import share_groups_enabled
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.server.apis.share_admin_apis import ShareAdminApis
from kraftwire.server.apis.share_fetch_apis import ShareFetchApis
from kraftwire.server.runtime.clocks import wall_ms as _now_ms
from kraftwire.server.runtime.coordinator_log import coordinator_of, create_internal_topic
from kraftwire.server.runtime.coordinator_runtime import BrokerRuntime

log = logging.getLogger("kraftwire.share")

#: the share-state APIs, each with its request's per-topic class
_REQUEST_TOPICS = {"WriteShareGroupState": "WriteStateData", "ReadShareGroupState": "ReadStateData",
                   "InitializeShareGroupState": "InitializeStateData", "DeleteShareGroupState": "DeleteStateData",
                   "ReadShareGroupStateSummary": "ReadStateSummaryData"}
STATE_APIS = tuple(_REQUEST_TOPICS)


class ShareApis:
    def __init__(self, node, metadata, replicas, groups, kraft) -> None:
        self.node, self.md, self.groups, self.kraft, self.replicas = node, metadata, groups, kraft, replicas
        self._creating = False
        raw = getattr(node.settings.config, "raw", None) or {}
        self.config = ShareCoordinatorConfig.from_properties(BrokerConfigs(static=raw).value)
        self.runtime = BrokerRuntime(ShareKind(lambda: self.config, self._partitions_of), self._send, replicas,
                                     metadata, self.config.write_timeout_ms)
        self.runtime.on_hosting = self._start_timer
        metadata.on_image.append(self._image)
        self._ticker: asyncio.Task | None = None
        self.fetching: ShareFetchApis | None = None
        self.admin: ShareAdminApis | None = None

    def register(self) -> None:
        d = self.node.dispatcher
        d.serve("ShareGroupHeartbeat", self.heartbeat)
        d.serve("ShareGroupDescribe", self.describe)
        for api in STATE_APIS:
            d.serve(api, functools.partial(self.state_request, api))
        self.fetching = ShareFetchApis(self)
        self.fetching.register()
        self.admin = ShareAdminApis(self)
        self.admin.register()

    def close(self) -> None:
        if self.fetching is not None:
            self.fetching.close()
        if self.admin is not None:
            self.admin.close()
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        self.runtime.close()

    # ================================================================================================ timers
    def _start_timer(self) -> None:
        if self.runtime.hosted and self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._snapshot_loop())

    async def _snapshot_loop(self) -> None:
        """Every ``share.coordinator.cold.partition.snapshot.interval.ms``, a fresh snapshot of each share-partition
        not snapshotted for that long (Kafka's cold-partition snapshots), so old records can be cleaned away."""
        while True:
            await asyncio.sleep(self.config.cold_partition_snapshot_interval_ms / 1000)
            now = _now_ms()
            for hosted in self.runtime.active():
                self.runtime.write(hosted.partition, hosted.shard.snapshot_cold(now), now)

    def _image(self, image) -> None:
        """A topic deleted from the image: the tombstones of its share-partitions' state (Kafka's
        ``onTopicsDeleted``)."""
        ids = {t.id for t in image.topics.values()}
        now = _now_ms()
        for hosted in self.runtime.active():
            gone = {key[1] for key in hosted.shard.states} - ids
            if gone:
                self.runtime.write(hosted.partition, hosted.shard.topics_deleted(gone), now)

    def _partitions_of(self, topic_id):
        for topic in self.md.image.topics.values():
            if topic.id == topic_id:
                return len(topic.partitions)
        return None

    def _state_partitions(self) -> int:
        topic = self.md.image.topic(SHARE_STATE_TOPIC)
        return len(topic.partitions) if topic is not None else self.config.state_topic_num_partitions

    @staticmethod
    def _send(reply, body) -> None:
        reply.token(body)  # a key's answer goes to what joins the request's answers

    def coordinator(self, key: str, listener: str, conn):
        """FindCoordinator's (error, message, node id, host, port) for a share key (v6): CLUSTER_ACTION on the
        cluster, a key Kafka can read (``group:topicId:partition``, else INVALID_REQUEST), then the leader of its
        ``__share_group_state`` partition; while the topic does not exist, the first such request asks the
        controller to create it and the answer is COORDINATOR_NOT_AVAILABLE, as Kafka's."""
        none = (-1, "", -1)
        access = self.node.authorizer
        if access is not None and not access.allows_cluster(conn, Op.CLUSTER_ACTION):
            return (ec.CLUSTER_AUTHORIZATION_FAILED, None, *none)
        if parse_coordinator_key(key) is None:
            return (ec.INVALID_REQUEST, "", *none)
        found = coordinator_of(self.md.image, SHARE_STATE_TOPIC, key, listener)
        if found is None:
            self._create_topic()
            return (ec.COORDINATOR_NOT_AVAILABLE, None, *none)
        return found

    def _create_topic(self) -> None:
        """``__share_group_state`` with Kafka's settings (``ShareCoordinatorService.shareGroupStateTopicConfigs``):
        deleted, never compacted, kept forever (retention.ms -1), compression as produced."""
        if self._creating:
            return
        self._creating = True
        c = self.config

        def done() -> None:
            self._creating = False

        create_internal_topic(self.kraft, SHARE_STATE_TOPIC, c.state_topic_num_partitions,
                              c.state_topic_replication_factor,
                              [("cleanup.policy", "delete"), ("compression.type", "producer"),
                               ("segment.bytes", str(c.state_topic_segment_bytes)),
                               ("min.insync.replicas", str(c.state_topic_min_isr)), ("retention.ms", "-1")], done)

    # ================================================================================================ share state
    def state_request(self, api: str, request, conn) -> None:
        body, version, cid = request.body, request.version, request.header.correlation_id
        access = self.node.authorizer
        allowed = access is None or access.allows_cluster(conn, Op.CLUSTER_ACTION)
        self.serve_state(api, body, version, allowed, lambda answer: conn.send_response(answer, version, cid))

    def serve_state(self, api: str, body, version: int, allowed: bool, send) -> None:
        """Serve a share-state request on this broker's share coordinator, ``send`` its answer once every key is
        answered (a key whose state partition is not led here is answered NOT_COORDINATOR): the RPCs of a client
        and those of this broker's own share-partitions (``share_fetch_apis``)."""
        ops = split(body, self._state_partitions())
        if ops is None:
            send(_empty(api))
            return
        answers: list = [None] * len(ops)
        left = [len(ops)]

        def answered(i: int, answer) -> None:
            answers[i] = answer
            left[0] -= 1
            if left[0] == 0:
                send(join(api, answers))

        now = _now_ms()
        for i, op in enumerate(ops):
            done = functools.partial(answered, i)
            if not allowed:
                done(key_refusal(api, op, ec.CLUSTER_AUTHORIZATION_FAILED,
                                 ec.default_message(ec.CLUSTER_AUTHORIZATION_FAILED)))
                continue
            hosted, code = self.runtime.route(op.state_partition)
            if hosted is None:
                done(key_refusal(api, op, code))
                continue
            shard, gid = hosted.shard, body.group_id
            if api == "ReadShareGroupStateSummary":
                done(shard.read_summary(gid, op.topic_id, op.data, version))
                continue
            if api == "WriteShareGroupState":
                result = shard.write(gid, op.topic_id, op.data, done, now)
            elif api == "ReadShareGroupState":
                result = shard.read(gid, op.topic_id, op.data, done, now)
            elif api == "InitializeShareGroupState":
                result = shard.initialize(gid, op.topic_id, op.data, done, now)
            else:
                result = shard.delete(gid, op.topic_id, op.data, done)
            self.runtime.write(op.state_partition, result, now)

    # ================================================================================================ share groups
    def heartbeat(self, request, conn) -> None:
        body, version = request.body, request.version
        token = (conn, version, request.header.correlation_id, request.header.client_id)
        if not share_groups_enabled(self.md.image.features):
            self.groups._reply(token, error_heartbeat(ec.UNSUPPORTED_VERSION))
            return
        if not self.groups._may(conn, 0, body.group_id, Op.READ):
            self.groups._reply(token, error_heartbeat(ec.GROUP_AUTHORIZATION_FAILED))
            return
        access = self.node.authorizer
        if access is not None and not all(access.topic(conn, name, Op.DESCRIBE)
                                          for name in body.subscribed_topic_names or ()):
            self.groups._reply(token, error_heartbeat(ec.TOPIC_AUTHORIZATION_FAILED))
            return
        if not member_id_valid(body.member_id):
            self.groups._reply(token, error_heartbeat(ec.INVALID_REQUEST))
            return
        p, shard = self.groups._route(body.group_id)
        if shard is None:
            self.groups._reply(token, error_heartbeat(self.groups.route_error))
            return
        image = self.md.image

        def lookup(name: str):
            topic = image.topic(name)
            return None if topic is None else (topic.id, len(topic.partitions))

        result, init = shard.share_heartbeat(body, token, _now_ms(), request.header.client_id or "",
                                             "/" + conn.peer.rsplit(":", 1)[0], lookup)
        on_done = None if init is None else (lambda error: error or self._initialize(p, init))
        self.groups._write(p, result, on_done)

    def _initialize(self, group_partition: int, init) -> None:
        """Ask the share coordinators of ``init``'s partitions (this broker's or another's, ``share_fetch_apis``) to
        initialize them, then tell the group which were (and which were not) initialized."""
        if self.md.image.topic(SHARE_STATE_TOPIC) is None:
            self._create_topic()  # as Kafka's persister finds the share coordinator: the first use creates it
        asyncio.get_running_loop().create_task(self._initialize_keys(group_partition, init))

    async def _initialize_keys(self, group_partition: int, init) -> None:
        answer = await self.state_all("InitializeShareGroupState", 0, init.body())
        done_parts: dict = {}
        failed: dict = {}
        for topic in answer.results:
            for part in topic.partitions:
                (failed if part.error_code else done_parts).setdefault(topic.topic_id, []).append(part.partition)
        if answer.results:
            self._initialized(group_partition, init.group_id, done_parts, failed)

    async def state_all(self, api: str, version: int, body):
        """A share-state request of the group coordinator, its keys each sent to their share coordinator (this
        broker's or another's, ``share_fetch_apis.state_call``) and their answers joined into one."""
        ops = split(body, self._state_partitions())
        if ops is None:
            return _empty(api)
        R = type(body)
        topic_cls = getattr(R, _REQUEST_TOPICS[api])
        answers = await asyncio.gather(*(self.fetching.state_call(api, version, R(
            group_id=body.group_id, topics=[topic_cls(topic_id=op.topic_id, partitions=[op.data])])) for op in ops))
        return join(api, list(answers))

    def _initialized(self, group_partition: int, group_id: str, done: dict, failed: dict) -> None:
        hosted, _code = self.groups.runtime.route(group_partition)
        if hosted is None:
            return  # the group moved: its new coordinator asks again
        if done:
            self.groups._write(group_partition, hosted.shard.share_initialized(group_id, done))
        if failed:
            log.info("share group %s: %d partitions not initialized here, asked again later", group_id,
                     sum(len(ps) for ps in failed.values()))
            self.groups._write(group_partition, hosted.shard.share_uninitialized(group_id, failed))

    def describe(self, request, conn) -> None:
        R = w.ShareGroupDescribeResponse
        enabled = share_groups_enabled(self.md.image.features)
        names = {t.id: t.name for t in self.md.image.topics.values()}
        out = []
        for gid in request.body.group_ids:
            if not enabled:
                out.append(R.DescribedGroup(group_id=gid, error_code=ec.UNSUPPORTED_VERSION))
                continue
            _p, shard = self.groups._route(gid)
            if not self.groups._may(conn, 0, gid, Op.DESCRIBE):
                out.append(R.DescribedGroup(group_id=gid, error_code=ec.GROUP_AUTHORIZATION_FAILED))
            elif shard is None:
                out.append(R.DescribedGroup(group_id=gid, error_code=self.groups.route_error))
            else:
                out.append(shard.share_describe(gid, names))
        if enabled and request.body.include_authorized_operations:
            self.groups._fill_operations(conn, out)
        conn.send_response(R(throttle_time_ms=0, groups=out), request.version, request.header.correlation_id)


def _empty(api: str):
    """Kafka's answer to a share-state request with no topics, no partitions or no group id: no results."""
    return getattr(w, api + "Response")(results=[])
