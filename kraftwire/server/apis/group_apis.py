"""The group coordinator on a KRaft broker: the asyncio edge around ``kraftwire.coordinator.group.GroupShard``.

* **Where a group lives.** Group ``g`` belongs to partition ``Utils.abs(g.hashCode()) % N`` of
  ``__consumer_offsets`` (``coordinator.partitioning``), and its coordinator is that partition's leader.
  FindCoordinator answers it; while the topic does not exist, the first FindCoordinator asks the controller to
  create it (``offsets.topic.num.partitions``, ``offsets.topic.replication.factor``, compacted) and the client is
  told COORDINATOR_NOT_AVAILABLE, as Kafka does, until the topic has a leader.
* **Hosting** is the coordinator runtime's (``coordinator.runtime`` with ``coordinator.group.hosting.GroupKind``, on
  this broker's ISR partitions: ``server.coordinator_runtime``).
* **Loading.** When the image makes this broker the leader of a partition (a new leader epoch), the partition is
  replayed from its log start into a fresh shard, which then serves its groups; when the broker stops leading it,
  the shard is dropped and its waiting joins and syncs are answered NOT_COORDINATOR.
* **Writing.** A shard's records go to the partition as one batch with acks=all, and the requests' replies leave
  once the high watermark passes the batch. A write that fails (leadership lost, too few in-sync replicas, the
  replicas too slow for ``offsets.commit.timeout.ms``) answers with Kafka's mapping (NOT_COORDINATOR or
  COORDINATOR_NOT_AVAILABLE) and reloads the shard from the log, which undoes what the shard had assumed.
* **Timers.** Every 100 ms each shard's ``tick`` completes rebalances, expires members and offsets.
* **Transactional offsets.** TxnOffsetCommit's records are appended as the producer's transactional batch (Kafka
  appends them with origin COORDINATOR; here with the sequence the partition expects next) and held per producer id
  in the shard; the COMMIT marker a transaction coordinator has the partition's leader append (WriteTxnMarkers) makes
  them the group's offsets, an ABORT drops them — found by looking at the batches below the high watermark whenever
  it moves while offsets are pending, and by the load. OffsetFetch v7+ with ``require_stable`` answers a partition
  with pending offsets UNSTABLE_OFFSET_COMMIT. FindCoordinator for a transactional id goes to ``txn_apis``.
* **Verified (KIP-890).** With ``transaction.partition.verification.enable`` (default true) a TxnOffsetCommit whose
  producer has no open transaction on the group's partition first asks the producer's transaction coordinator
  (``txn_verifier``, as a partition leader does for Produce) whether that partition is in the ongoing transaction
  (AddOffsetsToTxn put it there); a refusal is answered per partition (TRANSACTION_ABORTABLE for v4+, else
  INVALID_TXN_STATE; NETWORK_EXCEPTION as COORDINATOR_LOAD_IN_PROGRESS) and nothing is appended, so a late commit
  of an ended transaction leaves no offset pending forever. The append carries the verification's guard: a marker
  of the producer written between the answer and the append makes it INVALID_TXN_STATE.

The offset APIs (OffsetCommit, TxnOffsetCommit, OffsetFetch, OffsetDelete) are ``group_offset_apis.GroupOffsetApis``',
mixed into ``GroupApis``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from kraftwire import error_codes as ec
from kraftwire.coordinator.group.consumer import error_heartbeat as consumer_error
from kraftwire.coordinator.group.consumer import refused_description
from kraftwire.coordinator.group.hosting import GroupKind
from kraftwire.coordinator.group.shard import GroupConfig, GroupShard, Result, error_response
from kraftwire.coordinator.partitioning import GROUP_TOPIC, INTERNAL_TOPICS, partition_for
from kraftwire.java_order import hashmap_order, string_hash
from kraftwire.metadata.features import consumer_protocol_enabled
from kraftwire.metadata.group_configs import GROUP as GROUP_CONFIGS
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import ResourceType
from kraftwire.server.apis.group_offset_apis import GroupOffsetApis
from kraftwire.server.edge.access import operations_of
from kraftwire.server.runtime.clocks import wall_ms as _now_ms
from kraftwire.server.runtime.coordinator_log import coordinator_of, create_internal_topic
from kraftwire.server.runtime.coordinator_runtime import BrokerRuntime
from kraftwire.server.runtime.txn_verifier import offset_commit_error

log = logging.getLogger("kraftwire.groups")

TICK_S = 0.1
#: FindCoordinator's answer for a key the principal may not describe, by key type (group, transactional id)
_DENIED = {0: ec.GROUP_AUTHORIZATION_FAILED, 1: ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
TRANSACTIONS_MESSAGE = "transactions need the transaction coordinator, which this node does not run yet"


class GroupApis(GroupOffsetApis):
    def __init__(self, node, metadata, replicas, kraft) -> None:
        self.node = node
        self.md = metadata
        self.replicas = replicas
        self.kraft = kraft
        self.kind = GroupKind(GroupConfig.from_config(node.settings.config), lambda: str(uuid.uuid4()),
                              group_configs=lambda group_id: self.md.image.configs.get((GROUP_CONFIGS, group_id), {}),
                              offset_commit_error=offset_commit_error)
        self.runtime = BrokerRuntime(self.kind, self._send, replicas, metadata,
                                     node.settings.config.offsets_commit_timeout_ms)
        self.runtime.on_hosting = self._start_timers
        self.route_error = ec.NOT_COORDINATOR  # why the last ``_route`` found no shard
        self._creating = False
        self._ticker: asyncio.Task | None = None

    @property
    def config(self) -> GroupConfig:
        return self.kind.config

    @config.setter
    def config(self, config: GroupConfig) -> None:
        self.kind.config = config  # the shards loaded from now on take it

    @property
    def shards(self) -> dict:
        """The hosted ``__consumer_offsets`` partitions (``coordinator.runtime.Hosted``), by partition."""
        return self.runtime.hosted

    def register(self) -> None:
        d = self.node.dispatcher
        d.serve("FindCoordinator", self.find_coordinator)
        d.serve("JoinGroup", self._group_call(lambda s, b, v, t, n, conn: s.join_group(
            b, v, t, n, t[3] or "", "/" + conn.peer.rsplit(":", 1)[0]), "JoinGroup"))
        d.serve("SyncGroup", self._group_call(lambda s, b, v, t, n, conn: s.sync_group(b, v, t, n), "SyncGroup"))
        d.serve("Heartbeat", self._group_call(lambda s, b, v, t, n, conn: s.heartbeat(b, v, t, n), "Heartbeat"))
        d.serve("LeaveGroup", self._group_call(lambda s, b, v, t, n, conn: s.leave_group(b, v, t, n),
                                               "LeaveGroup"))
        d.serve("OffsetCommit", self.offset_commit)
        d.serve("TxnOffsetCommit", self.txn_offset_commit)
        d.serve("OffsetFetch", self.offset_fetch)
        d.serve("ListGroups", self.list_groups)
        d.serve("DescribeGroups", self.describe_groups)
        d.serve("DeleteGroups", self.delete_groups)
        d.serve("OffsetDelete", self.offset_delete)
        d.serve("ConsumerGroupHeartbeat", self.consumer_heartbeat)
        d.serve("ConsumerGroupDescribe", self.consumer_group_describe)

    def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        self.runtime.close()

    # ================================================================================================ routing
    def partitions(self) -> int:
        topic = self.md.image.topic(GROUP_TOPIC)
        return len(topic.partitions) if topic is not None else self.node.settings.config.offsets_topic_num_partitions

    def _route(self, group_id: str) -> tuple[int, GroupShard | None]:
        """(partition, shard) of a group; the shard is None when this broker does not serve it now, and
        ``route_error`` then says why: COORDINATOR_LOAD_IN_PROGRESS while its partition loads, else NOT_COORDINATOR."""
        p = partition_for(group_id, self.partitions())
        hosted, self.route_error = self.runtime.route(p)
        if hosted is None:
            return p, None
        self._catch_up(p, hosted.shard)
        return p, hosted.shard

    def _catch_up(self, p: int, shard: GroupShard) -> None:
        """Run the shard's timers that are already due before it serves a request: a request never sees a session
        that has ended as still alive (Kafka's exact timers; the loop here may wake late on a busy node)."""
        now = _now_ms()
        deadline = shard.next_deadline_ms()
        if deadline is not None and deadline <= now:
            self._write(p, shard.tick(now))

    # ================================================================================================ timers
    def _start_timers(self) -> None:
        if self.shards and self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick_loop())

    async def _tick_loop(self) -> None:
        while True:
            await asyncio.sleep(self._until_next_deadline_s())
            now = _now_ms()
            for p, loaded in list(self.shards.items()):
                if loaded.shard is not None and loaded.shard.live and self.shards.get(p) is loaded:
                    try:
                        self._write(p, loaded.shard.tick(now))
                    except Exception:  # a bug must not end the timers of every other group
                        log.exception("group coordinator tick of %s-%d failed", GROUP_TOPIC, p)

    def _until_next_deadline_s(self) -> float:
        """How long the timers may sleep: until the earliest deadline of any live shard (a session, a rebalance, an
        offset expiry), so a member expires when its session ends, as Kafka's timer expires it; at most TICK_S."""
        now = _now_ms()
        wait = TICK_S
        for loaded in self.shards.values():
            if loaded.shard is not None and loaded.shard.live:
                deadline = loaded.shard.next_deadline_ms()
                if deadline is not None:  # one overdue that tick leaves (a write in flight) is looked at again soon
                    wait = min(wait, (deadline - now) / 1000 + 0.001 if deadline > now else 0.01)
        return wait

    # ================================================================================================ writing
    @staticmethod
    def _send(reply, body) -> None:
        conn, version, cid, _client = reply.token
        conn.send_response(body, version, cid)

    def _reply(self, token, body) -> None:
        conn, version, cid, _client = token
        conn.send_response(body, version, cid)

    def _write(self, p: int, result: Result, on_done=None, producer: tuple[int, int] | None = None,
               guard=None) -> None:
        """Append ``result``'s records to the partition and send its replies once they are committed (the
        coordinator runtime); ``on_done(error)`` after that. ``producer``: (id, epoch) of a TxnOffsetCommit, whose
        records go as that producer's transactional batch, checked like a client's against the transaction
        verification (``guard``: that of its verification, KIP-890)."""
        self.runtime.write(p, result, _now_ms(), on_done, producer, guard)

    # ================================================================================================ FindCoordinator
    def find_coordinator(self, request, conn) -> None:
        R = w.FindCoordinatorResponse
        version, body = request.version, request.body
        listener = self.kraft.listener_of(conn)
        key_type = body.key_type if version >= 1 else 0
        keys = body.coordinator_keys if version >= 4 else [body.key]
        found = [self._coordinator(key, key_type, listener, version, conn)
                 if self._may(conn, key_type, key, Op.DESCRIBE) else (_DENIED[key_type], None, -1, "", -1) for key in keys]
        if version >= 4:  # a batched answer without a message carries "" (Kafka leaves the field's default)
            resp = R(throttle_time_ms=0, coordinators=[
                R.Coordinator(key=key, node_id=nid, host=host, port=port, error_code=err,
                              error_message=_coordinator_message(version, err, msg))
                for key, (err, msg, nid, host, port) in zip(keys, found)])
        else:
            err, msg, nid, host, port = found[0]
            resp = R(throttle_time_ms=0, error_code=err, error_message=_coordinator_message(version, err, msg),
                     node_id=nid, host=host, port=port)
        conn.send_response(resp, version, request.header.correlation_id)

    def _may(self, conn, key_type: int, key: str, operation: int) -> bool:
        """ACLs (when on) on a group (key type 0) or transactional id (1)."""
        access = self.node.authorizer
        if access is None or key_type not in _DENIED:
            return True
        kind = ResourceType.GROUP if key_type == 0 else ResourceType.TRANSACTIONAL_ID
        return access.allows(conn, kind, key, operation)

    def _coordinator(self, key: str, key_type: int, listener: str, version: int, conn):
        none = (-1, "", -1)
        if key_type == 1:
            txn = self.node.txn_apis
            if txn is None:
                return (ec.COORDINATOR_NOT_AVAILABLE, TRANSACTIONS_MESSAGE, *none)
            return txn.coordinator(key, listener)
        if key_type == 2:  # share keys (KIP-932): from v6; before, refused per key without a message, as Kafka
            if version >= 6 and self.node.share_apis is not None:
                return self.node.share_apis.coordinator(key, listener, conn)
            return (ec.INVALID_REQUEST, "", *none)
        if key_type != 0:
            return (ec.INVALID_REQUEST, None, *none)
        found = coordinator_of(self.md.image, GROUP_TOPIC, key, listener)
        if found is None:
            self._create_offsets_topic()
            return (ec.COORDINATOR_NOT_AVAILABLE, None, *none)
        return found

    def _create_offsets_topic(self) -> None:
        if self._creating:
            return
        self._creating = True
        c = self.node.settings.config

        def done() -> None:
            self._creating = False

        create_internal_topic(self.kraft, GROUP_TOPIC, c.offsets_topic_num_partitions,
                              c.offsets_topic_replication_factor,
                              [("cleanup.policy", "compact"), ("compression.type", "producer"),
                               ("segment.bytes", str(c.offsets_topic_segment_bytes))], done)

    # ================================================================================================ the group protocol
    def _group_call(self, call, api: str):
        def handler(request, conn) -> None:
            token = (conn, request.version, request.header.correlation_id, request.header.client_id)
            if not self._may(conn, 0, request.body.group_id, Op.READ):
                self._reply(token, error_response(api, request.version, ec.GROUP_AUTHORIZATION_FAILED))
                return
            p, shard = self._route(request.body.group_id)
            if shard is None:
                self._reply(token, error_response(api, request.version, self.route_error))
                return
            self._write(p, call(shard, request.body, request.version, token, _now_ms(), conn))
        return handler

    def consumer_heartbeat(self, request, conn) -> None:
        body, version = request.body, request.version
        token = (conn, version, request.header.correlation_id, request.header.client_id)
        if not consumer_protocol_enabled(self.md.image.features):
            self._reply(token, consumer_error(ec.UNSUPPORTED_VERSION))
            return
        if not self._may(conn, 0, body.group_id, Op.READ):
            self._reply(token, consumer_error(ec.GROUP_AUTHORIZATION_FAILED))
            return
        p, shard = self._route(body.group_id)
        if shard is None:
            self._reply(token, consumer_error(self.route_error))
            return
        image = self.md.image

        def lookup(name: str):
            topic = image.topic(name)
            return None if topic is None else (topic.id, len(topic.partitions))

        def names():
            return [n for n in image.topic_ids if n not in INTERNAL_TOPICS]

        self._write(p, shard.consumer_heartbeat(body, version, token, _now_ms(), request.header.client_id or "",
                                                "/" + conn.peer.rsplit(":", 1)[0], lookup, names))

    def consumer_group_describe(self, request, conn) -> None:
        R = w.ConsumerGroupDescribeResponse
        if not consumer_protocol_enabled(self.md.image.features):
            conn.send_response(R(throttle_time_ms=0, groups=[
                refused_description(gid, ec.UNSUPPORTED_VERSION) for gid in request.body.group_ids]),
                request.version, request.header.correlation_id)
            return
        names = {t.id: t.name for t in self.md.image.topics.values()}
        out = []
        for gid in request.body.group_ids:
            _p, shard = self._route(gid)
            if not self._may(conn, 0, gid, Op.DESCRIBE):
                out.append(refused_description(gid, ec.GROUP_AUTHORIZATION_FAILED))
            elif shard is None:
                out.append(refused_description(gid, self.route_error))
            else:
                out.append(shard.consumer_describe(gid, names))
        if request.body.include_authorized_operations:
            self._fill_operations(conn, out)
        conn.send_response(R(throttle_time_ms=0, groups=out), request.version, request.header.correlation_id)

    # ================================================================================================ admin
    def list_groups(self, request, conn) -> None:
        R = w.ListGroupsResponse
        body, version = request.body, request.version
        states = {s.lower() for s in (body.states_filter or [])} if version >= 4 else None
        types = {s.lower() for s in (body.types_filter or [])} if version >= 5 else None
        groups = []
        if any(loaded.loading for loaded in self.shards.values()):  # Kafka: not all groups are known yet
            conn.send_response(R(throttle_time_ms=0, error_code=ec.COORDINATOR_LOAD_IN_PROGRESS, groups=[]), version,
                               request.header.correlation_id)
            return
        access = self.node.authorizer
        # DESCRIBE on the cluster lists every group; otherwise only the groups the principal may describe
        every = access is None or access.allows_cluster(conn, Op.DESCRIBE, log_denied=False)
        for loaded in self.shards.values():
            if loaded.shard is None or not loaded.shard.live:
                continue
            for group_id, protocol_type, state, kind in loaded.shard.list_groups(states, types):
                if not every and not access.allows(conn, ResourceType.GROUP, group_id, Op.DESCRIBE,
                                                   log_denied=False):
                    continue
                groups.append(R.ListedGroup(group_id=group_id, protocol_type=protocol_type, group_state=state,
                                            group_type=kind))
        conn.send_response(R(throttle_time_ms=0, error_code=0, groups=sorted(groups, key=lambda g: g.group_id)),
                           version, request.header.correlation_id)

    def describe_groups(self, request, conn) -> None:
        R = w.DescribeGroupsResponse
        out = []
        for group_id in request.body.groups:
            _p, shard = self._route(group_id)
            if not self._may(conn, 0, group_id, Op.DESCRIBE):
                out.append(R.DescribedGroup(error_code=ec.GROUP_AUTHORIZATION_FAILED, group_id=group_id,
                                            group_state="", protocol_type="", protocol_data="", members=[]))
            elif shard is None:
                out.append(R.DescribedGroup(error_code=self.route_error, group_id=group_id, group_state="",
                                            protocol_type="", protocol_data="", members=[]))
            else:
                out.append(shard.describe_group(group_id, request.version))
        if request.version >= 3 and request.body.include_authorized_operations:
            self._fill_operations(conn, out)
        conn.send_response(R(throttle_time_ms=0, groups=out), request.version, request.header.correlation_id)

    def _fill_operations(self, conn, described: list) -> None:
        """KIP-430: each group described without error carries what the principal may do on it (Kafka's
        KafkaApis fills it after the coordinator answered)."""
        access = self.node.authorizer
        for g in described:
            if g.error_code == ec.NONE:
                g.authorized_operations = operations_of(access, conn, ResourceType.GROUP, g.group_id)

    def delete_groups(self, request, conn) -> None:
        """DeleteGroups; a share group's share state is deleted first (``share_admin_apis``), as Kafka chains it."""
        share = self.node.share_apis
        if share is not None and share.admin is not None:
            allowed = [g for g in request.body.groups_names if self._may(conn, 0, g, Op.DELETE)]
            if any(shard is not None and g in shard.share_groups for g, (_p, shard) in
                   ((g, self._route(g)) for g in allowed)):
                async def chained() -> None:
                    self._delete_groups(request, conn, await share.admin.delete_share_groups(allowed))
                share.admin.spawn(chained())
                return
        self._delete_groups(request, conn, {})

    def _delete_groups(self, request, conn, refused: dict[str, int]) -> None:
        R = w.DeleteGroupsResponse
        version, cid = request.version, request.header.correlation_id
        results = []
        writes: dict[int, tuple[Result, list]] = {}
        for group_id in request.body.groups_names:
            result = R.DeletableGroupResult(group_id=group_id, error_code=0)
            results.append(result)
            if not self._may(conn, 0, group_id, Op.DELETE):
                result.error_code = ec.GROUP_AUTHORIZATION_FAILED
                continue
            if group_id in refused:
                result.error_code = refused[group_id]
                continue
            p, shard = self._route(group_id)
            if shard is None:
                result.error_code = self.route_error
                continue
            res, rows = writes.setdefault(p, (Result(), []))
            result.error_code = shard.delete_group(group_id, res)
            if result.error_code == 0:
                rows.append(result)
                log.info("group %s: deleted", group_id)
        # Kafka collects the group ids in a HashSet: the answer lists them in its order (java_order)
        by_id: dict = {}
        for r in results:
            by_id.setdefault(r.group_id, r)
        results = [by_id[g] for g in hashmap_order(list(by_id), string_hash)]
        left = [len(writes)]

        def done(rows):
            def finish(error: int) -> None:
                for r in rows:
                    if error and r.error_code == 0:
                        r.error_code = error
                left[0] -= 1
                if left[0] == 0:
                    conn.send_response(R(throttle_time_ms=0, results=results), version, cid)
            return finish

        if not writes:
            conn.send_response(R(throttle_time_ms=0, results=results), version, cid)
            return
        for p, (res, rows) in writes.items():
            self._write(p, res, done(rows))


def _coordinator_message(version: int, error: int, message: str | None) -> str:
    """FindCoordinator's error message as Kafka 4.4 answers it (the conformance run, #36): below v4 an error's
    default message (``Errors.message()``, "NONE" for no error); from v4 none ("") per key, except for a request
    Kafka refuses as a whole (an unknown key type: INVALID_REQUEST's default message; a share key refused per key
    says "" instead). From v4 a refusal kraftwire explains itself (a node without a transaction coordinator) keeps
    its own words."""
    default = ec.JAVA_EXCEPTIONS.get(error, (None, message))[1]
    if (error == ec.INVALID_REQUEST and message is None) or (version < 4 and error):
        return default or ""
    if version < 4:
        return "NONE"
    return message or ""


def internal_topic_error(name: str | None) -> tuple[int, str] | None:
    """A client's Produce to an internal topic is refused, as Kafka refuses it to anyone but its admin client."""
    if name in INTERNAL_TOPICS:
        return ec.INVALID_TOPIC_EXCEPTION, f"Cannot append to internal topic {name}"
    return None
