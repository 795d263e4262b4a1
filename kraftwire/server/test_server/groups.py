"""The test server's group coordinator: the same pure shard as a KRaft broker's (``kraftwire.coordinator.group``),
with the Raft log as its partition.

* **Where.** The Raft leader coordinates every group (FindCoordinator names it); one shard holds them all.
* **State.** The shard's records — Kafka's ``__consumer_offsets`` keys and values — travel in kraftwire control
  records (``KRAFTWIRE_GROUP_RECORD``) of the Raft log, so consumers of the log's topic never see them. Every replica
  folds them in its log scan (``state.LogState``) and keeps them in its snapshots, so a new leader has them.
* **Leadership.** A new leader serves once it has committed in its own epoch (COORDINATOR_LOAD_IN_PROGRESS until
  then): its fold then holds everything the old leader committed, and the coordinator runtime
  (``kraftwire.coordinator.runtime``) hosts the shard, live. A node that stops leading resigns: what waits is
  answered NOT_COORDINATOR and its shard follows the log again.
* **Writes** go through the runtime to ``RaftLogPartition``: a result's records in one control batch appended
  through the core; the replies leave once it is committed, NOT_COORDINATOR when the leadership went first (what
  group clients expect), and a failed write makes the shard follow the log again before it serves anew.

Time comes from the wall clock (Kafka's coordinator timestamps its records with it); member ids from uuid4.
"""

from __future__ import annotations

import logging
import uuid

from kraftwire import error_codes as ec
from kraftwire.coordinator.group.consumer import error_heartbeat as consumer_error
from kraftwire.coordinator.group.consumer import refused_description
from kraftwire.coordinator.group.hosting import GroupKind
from kraftwire.coordinator.group.shard import (
    TOPIC_IDS_SINCE,
    GroupConfig,
    Result,
    error_response,
    fetch_requests,
    offset_fetch_response,
)
from kraftwire.coordinator.runtime import Appended, CoordinatorRuntime, Hosted
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.records.control import KRAFTWIRE_GROUP_RECORD, control_record_key, encode_control_value
from kraftwire.server.test_server import context as c
from kraftwire.server.runtime.clocks import wall_ms as _now_ms

log = logging.getLogger("kraftwire.broker.groups")

TICK_S = 0.1
TRANSACTIONS_MESSAGE = "transactions need the transaction coordinator, which the raft test server does not run"


#: the one partition the test server's groups live in (its Raft log)
PARTITION = 0


class RaftLogPartition:
    """``PartitionWriter`` over the test server's Raft log, led in ``epoch``: a result's records go in one kraftwire
    control batch (``KRAFTWIRE_GROUP_RECORD``). Every replica folds the log in its scan, so a coordinator has
    nothing to read when it starts: the partition reads as empty."""

    def __init__(self, ctx: c.BrokerContext) -> None:
        self.ctx = ctx
        self.epoch = ctx.epoch()

    def leading(self) -> bool:
        return self.ctx.is_leader() and self.ctx.epoch() == self.epoch

    def append(self, records: list, now_ms: int, producer=None, guard=None) -> Appended:
        builder = RecordBatchBuilder(is_control=True)
        for key, value in records:
            builder.append(control_record_key(KRAFTWIRE_GROUP_RECORD), encode_control_value(
                KRAFTWIRE_GROUP_RECORD, w.KraftwireGroupRecord(key=key, value=value)))
        raw = builder.build()
        try:
            first, last = self.ctx.driver.call(lambda raft, now: raft.append_batch(raw, now))
        except Exception:  # NotLeaderError and friends: the runtime only needs to know it did not work
            return Appended(c.NOT_LEADER_OR_FOLLOWER)
        return Appended(ec.NONE, first, last + 1)

    def when_committed(self, end: int, done) -> None:
        self.ctx.wait_for(end, self.epoch, done)

    def high_watermark(self) -> int:
        return self.ctx.log.high_watermark()

    def start_offset(self) -> int:
        return 0

    def end_offset(self) -> int:
        return 0

    def read(self, position: int) -> list:
        return []


class RaftGroupKind(GroupKind):
    """The group kind on the test server: the shard is the log scan's fold (``state.LogState``), kept by every
    replica, so electing takes that shard caught up to the log end instead of loading a fresh one, and a write is
    folded by the scan."""

    def __init__(self, config: GroupConfig, scan, ctx: c.BrokerContext) -> None:
        super().__init__(config, lambda: str(uuid.uuid4()))
        self.scan = scan
        self.ctx = ctx

    @property
    def topic(self) -> str:
        """The Raft log's topic (known once the node has opened its log)."""
        return self.ctx.topic_name

    def new_shard(self, partition: int):
        self.scan.catch_up()
        shard = self.scan.state.groups
        shard.config, shard._new_id = self.config, self.new_id
        return shard

    def loaded(self, hosted: Hosted, now_ms: int) -> None:
        hosted.shard.loaded(now_ms)
        log.info("coordinating %d groups in leader epoch %d", len(hosted.shard.group_ids()), hosted.epoch)

    def appended(self, hosted: Hosted, records: list, base_offset: int, producer) -> None:
        self.scan.catch_up()  # the shard's offsets view holds the new records at once


class Coordinator:
    def __init__(self, ctx: c.BrokerContext, scan) -> None:
        self.ctx = ctx
        self.scan = scan
        self.kind = RaftGroupKind(GroupConfig.from_config(ctx.node.settings.config), scan, ctx)
        self.runtime = CoordinatorRuntime(self.kind, self._send, self._load_now)
        self._tick = None
        ctx.watchers.append(self._check_leadership)

    # ---------------------------------------------------------------------------------------------------- leadership
    @property
    def shard(self):
        return self.scan.state.groups

    def status(self) -> int:
        """0 when this node serves its groups now (the runtime hosts them from the first call that may); else the
        error to answer."""
        ctx = self.ctx
        if not ctx.is_leader():
            self.runtime.resign(PARTITION)
            return ec.NOT_COORDINATOR
        hosted = self.runtime.hosted.get(PARTITION)
        if hosted is None or hosted.epoch != ctx.epoch() or hosted.shard is not self.shard:
            self.runtime.resign(PARTITION)
            if ctx.epoch_start_offset() > ctx.log.high_watermark():
                return ec.COORDINATOR_LOAD_IN_PROGRESS
            self.runtime.elect(PARTITION, RaftLogPartition(ctx))
        else:
            self.scan.catch_up()
        if self._tick is None:
            self._tick = ctx.loop().call_later(TICK_S, self._on_tick)
        return 0

    def _load_now(self, hosted: Hosted) -> None:
        """Nothing to read (the scan folded the log): the load ends at its first step."""
        self.runtime.load_chunk(hosted, _now_ms())

    def _check_leadership(self) -> None:
        hosted = self.runtime.hosted.get(PARTITION)
        if hosted is not None and not hosted.writer.leading():
            self.runtime.resign(PARTITION)

    def _on_tick(self) -> None:
        self._tick = None
        if self.ctx.driver is None or self.ctx.driver.stopped or self.status():
            return
        self._write(self.shard.tick(_now_ms()))

    # ---------------------------------------------------------------------------------------------------- writes
    @staticmethod
    def _send(reply, body) -> None:
        conn, version, cid, _client = reply.token
        conn.send_response(body, version, cid)

    def _write(self, result: Result, on_done=None) -> None:
        self.runtime.write(PARTITION, result, _now_ms(), on_done)

    # ---------------------------------------------------------------------------------------------------- handlers
    def find_coordinator(self, request, conn) -> None:
        ctx = self.ctx
        R = w.FindCoordinatorResponse
        version, body = request.version, request.body
        leader = ctx.voter(ctx.leader_id())
        key_type = body.key_type if version >= 1 else 0

        def answer():
            if key_type == 1:
                return ec.COORDINATOR_NOT_AVAILABLE, TRANSACTIONS_MESSAGE, -1, "", -1
            if key_type != 0:
                return ec.INVALID_REQUEST, f"unknown coordinator key type {key_type}", -1, "", -1
            if leader is None:
                return ec.COORDINATOR_NOT_AVAILABLE, "no Raft leader", -1, "", -1
            return 0, None, leader.node_id, leader.host, leader.port

        if version >= 4:
            coords = []
            for key in body.coordinator_keys:
                err, msg, nid, host, port = answer()
                coords.append(R.Coordinator(key=key, node_id=nid, host=host, port=port, error_code=err,
                                            error_message=msg or ""))
            resp = R(throttle_time_ms=0, coordinators=coords)
        else:
            err, msg, nid, host, port = answer()
            resp = R(throttle_time_ms=0, error_code=err, error_message=msg, node_id=nid, host=host, port=port)
        conn.send_response(resp, version, request.header.correlation_id)

    def group_call(self, api: str, call):
        def handler(request, conn) -> None:
            token = (conn, request.version, request.header.correlation_id, request.header.client_id)
            status = self.status()
            if status:
                conn.send_response(error_response(api, request.version, status), request.version,
                                   request.header.correlation_id)
                return
            self._write(call(self.shard, request.body, request.version, token, _now_ms(), conn))
        return handler

    def offset_commit(self, request, conn) -> None:
        body, version = request.body, request.version
        token = (conn, version, request.header.correlation_id, request.header.client_id)
        R = w.OffsetCommitResponse
        status = self.status()
        order = [(t.name, [p.partition_index for p in t.partitions]) for t in body.topics]
        topic = self.ctx.topic_name
        refused = {(name, i): ec.UNKNOWN_TOPIC_OR_PARTITION for name, idx in order for i in idx
                   if name != topic or i != 0}

        def merged(codes):
            return R(throttle_time_ms=0, topics=[R.OffsetCommitResponseTopic(name=name, partitions=[
                R.OffsetCommitResponsePartition(partition_index=i, error_code=codes.get((name, i), 0))
                for i in idx]) for name, idx in order])

        if status:
            conn.send_response(merged({(n, i): status for n, idx in order for i in idx}), version,
                               request.header.correlation_id)
            return
        original = body.topics
        kept = []
        for t in body.topics:
            parts = [p for p in t.partitions if (t.name, p.partition_index) not in refused]
            if parts:
                kept.append(type(t)(name=t.name, partitions=parts))
        body.topics = kept
        try:
            result = self.shard.offset_commit(body, version, token, _now_ms())
        finally:
            body.topics = original
        reply = result.replies[-1]
        codes = dict(refused)
        for t in reply.body.topics:
            for part in t.partitions:
                codes[(t.name, part.partition_index)] = part.error_code
        result.replies[-1] = reply._replace(body=merged(codes))
        self._write(result)

    def offset_fetch(self, request, conn) -> None:
        status = self.status()
        out = []
        for gid, member_id, member_epoch, asked in fetch_requests(request.body, request.version):
            if status:
                out.append((gid, status, [(n, [(i, None) for i in idx]) for n, idx in (asked or [])]))
                continue
            err = self.shard.fetch_error(gid, member_id, member_epoch)
            out.append((gid, err, [] if err else self.shard.committed_offsets(gid, asked)))
        conn.send_response(offset_fetch_response(request.version, out), request.version,
                           request.header.correlation_id)

    def consumer_heartbeat(self, request, conn) -> None:
        token = (conn, request.version, request.header.correlation_id, request.header.client_id)
        status = self.status()
        if status:
            conn.send_response(consumer_error(status), request.version, request.header.correlation_id)
            return
        name, topic_id = self.ctx.topic_name, self.ctx.topic_id

        def lookup(topic: str):
            return (topic_id, 1) if topic == name else None

        self._write(self.shard.consumer_heartbeat(request.body, request.version, token, _now_ms(),
                                                  request.header.client_id or "",
                                                  "/" + conn.peer.rsplit(":", 1)[0], lookup, lambda: [name]))

    def consumer_group_describe(self, request, conn) -> None:
        R = w.ConsumerGroupDescribeResponse
        status = self.status()
        names = {self.ctx.topic_id: self.ctx.topic_name}
        out = [refused_description(gid, status) if status else self.shard.consumer_describe(gid, names)
               for gid in request.body.group_ids]
        conn.send_response(R(throttle_time_ms=0, groups=out), request.version, request.header.correlation_id)

    # ---------------------------------------------------------------------------------------------------- admin
    def list_groups(self, request, conn) -> None:
        R = w.ListGroupsResponse
        version, cid = request.version, request.header.correlation_id
        status = self.status()
        if status == ec.NOT_COORDINATOR:  # Kafka: a broker lists the groups it coordinates, here none
            conn.send_response(R(throttle_time_ms=0, error_code=0, groups=[]), version, cid)
            return
        if status:
            conn.send_response(R(throttle_time_ms=0, error_code=status, groups=[]), version, cid)
            return
        body = request.body
        states = {s.lower() for s in (body.states_filter or [])} if version >= 4 else None
        types = {s.lower() for s in (body.types_filter or [])} if version >= 5 else None
        groups = [R.ListedGroup(group_id=g, protocol_type=t, group_state=s, group_type=kind)
                  for g, t, s, kind in self.shard.list_groups(states, types)]
        conn.send_response(R(throttle_time_ms=0, error_code=0, groups=groups), version, cid)

    def describe_groups(self, request, conn) -> None:
        R = w.DescribeGroupsResponse
        status = self.status()
        out = []
        for group_id in request.body.groups:
            if status:
                out.append(R.DescribedGroup(error_code=status, group_id=group_id, group_state="", protocol_type="",
                                            protocol_data="", members=[]))
            else:
                out.append(self.shard.describe_group(group_id, request.version))
        conn.send_response(R(throttle_time_ms=0, groups=out), request.version, request.header.correlation_id)

    def delete_groups(self, request, conn) -> None:
        R = w.DeleteGroupsResponse
        version, cid = request.version, request.header.correlation_id
        status = self.status()
        res = Result()
        results = []
        for group_id in request.body.groups_names:
            code = status or self.shard.delete_group(group_id, res)
            results.append(R.DeletableGroupResult(group_id=group_id, error_code=code))

        def done(error: int) -> None:
            for r in results:
                if error and r.error_code == 0:
                    r.error_code = error
            conn.send_response(R(throttle_time_ms=0, results=results), version, cid)

        self._write(res, done)

    def offset_delete(self, request, conn) -> None:
        R = w.OffsetDeleteResponse
        body = request.body
        token = (conn, request.version, request.header.correlation_id, request.header.client_id)
        status = self.status()
        if status:
            conn.send_response(R(error_code=status, throttle_time_ms=0, topics=[]), request.version,
                               request.header.correlation_id)
            return
        topic = self.ctx.topic_name
        known = [(t.name, p.partition_index) for t in body.topics for p in t.partitions
                 if t.name == topic and p.partition_index == 0]
        self._write(self.shard.offset_delete(body, known, token))


def register(ctx: c.BrokerContext, dispatcher, scan, attached) -> Coordinator:
    co = Coordinator(ctx, scan)
    d = dispatcher
    d.serve("FindCoordinator", attached(co.find_coordinator))
    d.serve("JoinGroup", attached(co.group_call("JoinGroup", lambda s, b, v, t, n, conn: s.join_group(
        b, v, t, n, t[3] or "", "/" + conn.peer.rsplit(":", 1)[0]))))
    d.serve("SyncGroup", attached(co.group_call("SyncGroup", lambda s, b, v, t, n, conn: s.sync_group(b, v, t, n))))
    d.serve("Heartbeat", attached(co.group_call("Heartbeat", lambda s, b, v, t, n, conn: s.heartbeat(b, v, t, n))))
    d.serve("LeaveGroup", attached(co.group_call("LeaveGroup",
                                                 lambda s, b, v, t, n, conn: s.leave_group(b, v, t, n))))
    # the test server's one topic has no id a client could name: its offset APIs stop below v10 (topic ids)
    d.serve("OffsetCommit", attached(co.offset_commit), max_version=TOPIC_IDS_SINCE - 1)
    d.serve("OffsetFetch", attached(co.offset_fetch), max_version=TOPIC_IDS_SINCE - 1)
    d.serve("ListGroups", attached(co.list_groups))
    d.serve("DescribeGroups", attached(co.describe_groups))
    d.serve("DeleteGroups", attached(co.delete_groups))
    d.serve("OffsetDelete", attached(co.offset_delete))
    d.serve("ConsumerGroupHeartbeat", attached(co.consumer_heartbeat))
    d.serve("ConsumerGroupDescribe", attached(co.consumer_group_describe))
    return co
