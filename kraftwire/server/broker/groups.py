"""FindCoordinator and the classic consumer-group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
OffsetCommit, OffsetFetch), coordinated by the Raft leader.

Membership lives in the leader's memory (as in Kafka, members rejoin a new coordinator). What must survive a
failover is in the log, as kraftwire control records (consumers skip control batches, so they never see them):

* ``KRAFTWIRE_GROUP_OFFSET`` (0x7000): one committed offset; an OffsetCommit is answered once its batch is
  committed (high watermark past it);
* ``KRAFTWIRE_GROUP_GENERATION`` (0x7001): each completed rebalance, so a new coordinator continues the generation
  numbers instead of reusing them.

Every replica rebuilds the committed offsets and the last generations from those records (``scan.py``), so a new
leader answers OffsetFetch with what the old one committed. OffsetFetch serves committed offsets only: a commit
the leader has appended but not committed yet is read through to the value it replaced, and a new leader answers
COORDINATOR_LOAD_IN_PROGRESS until it has committed in its epoch (before that it may not know the last commits).

Rebalance (Kafka's GroupCoordinator, simplified): a join moves the group to PreparingRebalance; it completes when
every known member has rejoined or the largest rebalance timeout passes (members that did not rejoin are dropped);
the generation is bumped, the leader member gets the member list and sends the assignments in SyncGroup. Members
that stop heartbeating for their session timeout are removed and the group rebalances. Join v4+ first answers
MEMBER_ID_REQUIRED with a fresh member id. Static membership (KIP-345, group.instance.id): a static member joins
without that round; when one comes back (a restart) its new member id takes the old one's place and assignment, a
Stable group does not rebalance for a follower with unchanged protocols, and the old member id is fenced
(FENCED_INSTANCE_ID on Join, Sync, Heartbeat, OffsetCommit, LeaveGroup). A static member leaves by instance id or
at its session timeout.
"""

from __future__ import annotations

import logging
import time
import uuid

from kraftwire.error_codes import (
    COORDINATOR_LOAD_IN_PROGRESS,
    FENCED_INSTANCE_ID,
    ILLEGAL_GENERATION,
    INCONSISTENT_GROUP_PROTOCOL,
    INVALID_GROUP_ID,
    INVALID_SESSION_TIMEOUT,
    MEMBER_ID_REQUIRED,
    NOT_COORDINATOR,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
)
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.records.control import (
    KRAFTWIRE_GROUP_GENERATION,
    KRAFTWIRE_GROUP_OFFSET,
    control_record_key,
    encode_control_value,
)
from kraftwire.server.broker import context as c

log = logging.getLogger("kraftwire.broker.groups")


MIN_SESSION_TIMEOUT_MS = 1000
MAX_SESSION_TIMEOUT_MS = 1_800_000
TICK_S = 0.25

EMPTY, PREPARING, COMPLETING, STABLE = "Empty", "PreparingRebalance", "CompletingRebalance", "Stable"


class Member:
    __slots__ = ("member_id", "instance_id", "client_id", "client_host", "session_ms", "rebalance_ms",
                 "protocol_type", "protocols", "assignment", "join", "sync", "seen")

    def __init__(self, member_id, instance_id, client_id, client_host) -> None:
        self.member_id, self.instance_id = member_id, instance_id
        self.client_id, self.client_host = client_id, client_host
        self.session_ms = self.rebalance_ms = 0
        self.protocol_type = ""
        self.protocols: list[tuple[str, bytes]] = []
        self.assignment = b""
        self.join = None  # (conn, version, correlation id) of a pending JoinGroup
        self.sync = None  # (conn, version, correlation id) of a pending SyncGroup
        self.seen = time.monotonic()


class Group:
    def __init__(self, group_id: str, generation: int) -> None:
        self.group_id = group_id
        self.state = EMPTY
        self.generation = generation
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader: str | None = None
        self.members: dict[str, Member] = {}
        self.pending_ids: set[str] = set()
        self.rebalance_deadline = 0.0
        #: static membership (KIP-345): group.instance.id -> the member id that holds it now
        self.static: dict[str, str] = {}

    def fenced(self, member_id: str, instance_id: str | None) -> int:
        """Kafka's check of a request naming a static member: FENCED_INSTANCE_ID when the instance id is held by
        another member id now (a newer incarnation of that consumer joined), else 0."""
        if instance_id is None:
            return 0
        holder = self.static.get(instance_id)
        return FENCED_INSTANCE_ID if holder is not None and holder != member_id else 0


class Coordinator:
    def __init__(self, ctx: c.BrokerContext, scan) -> None:
        self.ctx = ctx
        self.groups: dict[str, Group] = {}
        self.groups_epoch = -1
        #: committed offsets and last generations, rebuilt from the log by the scan (``state.py``)
        self.offsets = scan.state.offsets
        self.generations = scan.state.generations
        self._tick = None
        self.scan = scan
        ctx.watchers.append(self._check_leadership)

    # ---------------------------------------------------------------------------------------------------- log state
    def _append(self, records, callback) -> None:
        """Append kraftwire control records; ``callback(error)`` once committed (0), and NOT_COORDINATOR when this
        node stopped leading first (what group clients expect in place of NOT_LEADER_OR_FOLLOWER)."""
        builder = RecordBatchBuilder(is_control=True)
        for ctype, msg in records:
            builder.append(control_record_key(ctype), encode_control_value(ctype, msg))
        self.ctx.append_and_commit(builder.build(), lambda error: callback(
            NOT_COORDINATOR if error == c.NOT_LEADER_OR_FOLLOWER else error))

    # ---------------------------------------------------------------------------------------------------- leadership
    def coordinating(self) -> bool:
        ctx = self.ctx
        if not ctx.is_leader():
            return False
        if self.groups_epoch != ctx.epoch():
            self._drop_groups()
            self.groups_epoch = ctx.epoch()
        if self._tick is None:
            self._tick = ctx.loop().call_later(TICK_S, self._on_tick)
        return True

    def _check_leadership(self) -> None:
        if self.groups and (not self.ctx.is_leader() or self.groups_epoch != self.ctx.epoch()):
            self._drop_groups()

    def _drop_groups(self) -> None:
        for group in self.groups.values():
            for m in group.members.values():
                self._answer_join(m, error=NOT_COORDINATOR, group=group)
                self._answer_sync(m, NOT_COORDINATOR, group)
        self.groups.clear()

    def group(self, group_id: str) -> Group:
        g = self.groups.get(group_id)
        if g is None:
            self.scan.catch_up()
            g = self.groups[group_id] = Group(group_id, self.generations.get(group_id, 0))
        return g

    # ---------------------------------------------------------------------------------------------------- timers
    def _on_tick(self) -> None:
        self._tick = None
        if not self.ctx.is_leader() or self.ctx.driver.stopped:
            self._drop_groups()
            return
        now = time.monotonic()
        for group in list(self.groups.values()):
            if group.state == PREPARING:
                if now >= group.rebalance_deadline:
                    self._complete_join(group)
                continue
            expired = [m for m in group.members.values()
                       if m.join is None and now - m.seen > m.session_ms / 1000.0]
            for m in expired:
                log.info("group %s: member %s expired (no heartbeat for %d ms)", group.group_id, m.member_id,
                         m.session_ms)
                self._remove(group, m)
            if expired and group.state in (STABLE, COMPLETING):
                self._prepare(group)
        self._tick = self.ctx.loop().call_later(TICK_S, self._on_tick)

    # ---------------------------------------------------------------------------------------------------- rebalance
    def _remove(self, group: Group, m: Member) -> None:
        group.members.pop(m.member_id, None)
        if m.instance_id is not None and group.static.get(m.instance_id) == m.member_id:
            del group.static[m.instance_id]
        self._answer_join(m, error=UNKNOWN_MEMBER_ID, group=group)
        self._answer_sync(m, UNKNOWN_MEMBER_ID, group)
        if group.leader == m.member_id:
            group.leader = None
        if not group.members and group.state != PREPARING:
            group.state = EMPTY
            group.protocol_name = None

    def _prepare(self, group: Group) -> None:
        if group.state == COMPLETING:
            for m in group.members.values():
                self._answer_sync(m, REBALANCE_IN_PROGRESS, group)
        if group.state != PREPARING:
            group.state = PREPARING
            timeout = max((m.rebalance_ms for m in group.members.values()), default=0)
            group.rebalance_deadline = time.monotonic() + timeout / 1000.0
        self._maybe_complete_join(group)

    def _maybe_complete_join(self, group: Group) -> None:
        if group.state == PREPARING and group.members and all(m.join is not None for m in group.members.values()):
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        for m in [m for m in group.members.values() if m.join is None]:
            self._remove(group, m)
        group.generation += 1
        if not group.members:
            group.state, group.protocol_name, group.leader = EMPTY, None, None
            return
        members = list(group.members.values())
        if group.leader not in group.members:
            group.leader = members[0].member_id
        leader = group.members[group.leader]
        common = set.intersection(*(set(n for n, _ in m.protocols) for m in members))
        group.protocol_name = next((n for n, _ in leader.protocols if n in common), None)
        group.protocol_type = leader.protocol_type
        group.state = COMPLETING
        now = time.monotonic()
        for m in members:
            m.seen = now
            m.assignment = b""
            self._answer_join(m, error=0, group=group)
        gen = w.KraftwireGroupGenerationRecord
        record = gen(group_id=group.group_id, generation_id=group.generation, protocol_type=group.protocol_type,
                     protocol_name=group.protocol_name, leader=group.leader, members=[
                         gen.Member(member_id=m.member_id, group_instance_id=m.instance_id, client_id=m.client_id,
                                    client_host=m.client_host, rebalance_timeout_ms=m.rebalance_ms)
                         for m in members])
        self._append([(KRAFTWIRE_GROUP_GENERATION, record)], lambda error: None)
        log.info("group %s: generation %d, protocol %s, leader %s, %d members", group.group_id, group.generation,
                 group.protocol_name, group.leader, len(members))

    def _answer_join(self, m: Member, *, error: int, group: Group) -> None:
        if m.join is None:
            return
        conn, version, cid = m.join
        m.join = None
        R = w.JoinGroupResponse
        if error:
            body = R(error_code=error, generation_id=-1, protocol_name=None if version >= 7 else "", leader="",
                     member_id=m.member_id if error == MEMBER_ID_REQUIRED else "", members=[])
        else:
            chosen = group.protocol_name
            members = []
            if m.member_id == group.leader:
                members = [R.JoinGroupResponseMember(member_id=x.member_id, group_instance_id=x.instance_id,
                                                     metadata=dict(x.protocols).get(chosen, b""))
                           for x in group.members.values()]
            body = R(error_code=0, generation_id=group.generation, protocol_type=group.protocol_type,
                     protocol_name=chosen, leader=group.leader, member_id=m.member_id, members=members)
        conn.send_response(body, version, cid)

    def _answer_sync(self, m: Member, error: int, group: Group) -> None:
        if m.sync is None:
            return
        conn, version, cid = m.sync
        m.sync = None
        body = w.SyncGroupResponse(error_code=error, protocol_type=group.protocol_type,
                                   protocol_name=group.protocol_name, assignment=b"" if error else m.assignment)
        conn.send_response(body, version, cid)

    # ---------------------------------------------------------------------------------------------------- handlers
    def find_coordinator(self, request, conn) -> None:
        ctx = self.ctx
        R = w.FindCoordinatorResponse
        version, body = request.version, request.body
        leader = ctx.voter(ctx.leader_id())

        def answer(key_type):
            if key_type != 0:
                return c.COORDINATOR_NOT_AVAILABLE, "transactions are not supported by kraftwire", -1, "", -1
            if leader is None:
                return c.COORDINATOR_NOT_AVAILABLE, "no Raft leader", -1, "", -1
            return 0, None, leader.node_id, leader.host, leader.port

        if version >= 4:
            coords = []
            for key in body.coordinator_keys:
                err, msg, nid, host, port = answer(body.key_type)
                coords.append(R.Coordinator(key=key, node_id=nid, host=host, port=port, error_code=err,
                                            error_message=msg))
            resp = R(throttle_time_ms=0, coordinators=coords)
        else:
            err, msg, nid, host, port = answer(body.key_type if version >= 1 else 0)
            resp = R(throttle_time_ms=0, error_code=err, error_message=msg, node_id=nid, host=host, port=port)
        conn.send_response(resp, version, request.header.correlation_id)

    def join_group(self, request, conn) -> None:
        body, version, cid = request.body, request.version, request.header.correlation_id
        R = w.JoinGroupResponse

        def fail(error, member_id=""):
            conn.send_response(R(error_code=error, generation_id=-1, protocol_name=None if version >= 7 else "",
                                 leader="", member_id=member_id, members=[]), version, cid)

        if not self.coordinating():
            return fail(NOT_COORDINATOR)
        if not body.group_id:
            return fail(INVALID_GROUP_ID)
        if not MIN_SESSION_TIMEOUT_MS <= body.session_timeout_ms <= MAX_SESSION_TIMEOUT_MS:
            return fail(INVALID_SESSION_TIMEOUT)
        group = self.group(body.group_id)
        if group.members and group.protocol_type and body.protocol_type != group.protocol_type:
            return fail(INCONSISTENT_GROUP_PROTOCOL)
        member_id = body.member_id
        client_id = request.header.client_id or ""
        instance_id = getattr(body, "group_instance_id", None) if version >= 5 else None
        protocols = [(p.name, bytes(p.metadata)) for p in body.protocols]
        if not member_id and instance_id is not None:
            # A static member (re)joins: no MEMBER_ID_REQUIRED round; a known instance id takes over the old member
            member_id = f"{instance_id}-{uuid.uuid4()}"
            old_id = group.static.get(instance_id)
            old = group.members.get(old_id) if old_id is not None else None
            group.static[instance_id] = member_id
            if old is not None:
                if self._replace_static(group, old, member_id, body, protocols, conn, version, cid):
                    return
        elif not member_id:
            member_id = f"{client_id}-{uuid.uuid4()}"
            if version >= 4:
                group.pending_ids.add(member_id)
                return fail(MEMBER_ID_REQUIRED, member_id)
        elif group.fenced(member_id, instance_id):
            return fail(FENCED_INSTANCE_ID, member_id)
        elif member_id not in group.members and member_id not in group.pending_ids:
            return fail(UNKNOWN_MEMBER_ID, member_id)
        group.pending_ids.discard(member_id)
        m = group.members.get(member_id)
        if m is None:
            m = group.members[member_id] = Member(member_id, instance_id, client_id, conn.peer.rsplit(":", 1)[0])
        if m.join is not None:  # a duplicate join: the older request is superseded
            self._answer_join(m, error=UNKNOWN_MEMBER_ID, group=group)
        m.session_ms = body.session_timeout_ms
        m.rebalance_ms = body.rebalance_timeout_ms if version >= 1 else body.session_timeout_ms
        m.protocol_type = body.protocol_type
        m.protocols = protocols
        m.seen = time.monotonic()
        m.join = (conn, version, cid)
        if group.state == PREPARING:
            self._maybe_complete_join(group)
        else:
            self._prepare(group)

    def _replace_static(self, group: Group, old: Member, member_id: str, body, protocols, conn, version,
                        cid) -> bool:
        """A static member came back (a restart): its old member id is fenced and the new one takes its place, its
        assignment with it. In a Stable group a follower whose protocols did not change gets the current generation
        without a rebalance (KIP-345); True when answered that way."""
        self._answer_join(old, error=FENCED_INSTANCE_ID, group=group)
        self._answer_sync(old, FENCED_INSTANCE_ID, group)
        del group.members[old.member_id]
        log.info("group %s: static member %s rejoined as %s (was %s)", group.group_id, old.instance_id, member_id,
                 old.member_id)
        unchanged = old.protocols == protocols and old.protocol_type == body.protocol_type
        was_leader = group.leader == old.member_id
        old.member_id = member_id
        group.members[member_id] = old
        if was_leader:
            group.leader = member_id
        if group.state != STABLE or was_leader or not unchanged:
            return False  # the join goes on as any other (a rebalance follows)
        old.session_ms = body.session_timeout_ms
        old.rebalance_ms = body.rebalance_timeout_ms if version >= 1 else body.session_timeout_ms
        old.seen = time.monotonic()
        old.join = (conn, version, cid)
        self._answer_join(old, error=0, group=group)
        return True

    def sync_group(self, request, conn) -> None:
        body, version, cid = request.body, request.version, request.header.correlation_id
        R = w.SyncGroupResponse

        def fail(error):
            conn.send_response(R(error_code=error, assignment=b""), version, cid)

        if not self.coordinating():
            return fail(NOT_COORDINATOR)
        group = self.groups.get(body.group_id)
        if group is not None and group.fenced(body.member_id, getattr(body, "group_instance_id", None)):
            return fail(FENCED_INSTANCE_ID)
        m = group.members.get(body.member_id) if group else None
        if m is None:
            return fail(UNKNOWN_MEMBER_ID)
        if body.generation_id != group.generation:
            return fail(ILLEGAL_GENERATION)
        if group.state == PREPARING:
            return fail(REBALANCE_IN_PROGRESS)
        m.seen = time.monotonic()
        m.sync = (conn, version, cid)
        if group.state == COMPLETING and m.member_id == group.leader:
            given = {a.member_id: bytes(a.assignment) for a in body.assignments}
            for x in group.members.values():
                x.assignment = given.get(x.member_id, b"")
            group.state = STABLE
            for x in group.members.values():
                self._answer_sync(x, 0, group)
        elif group.state == STABLE:
            self._answer_sync(m, 0, group)

    def heartbeat(self, request, conn) -> None:
        body = request.body
        conn.send_response(w.HeartbeatResponse(error_code=self._heartbeat_error(body)), request.version,
                           request.header.correlation_id)

    def _heartbeat_error(self, body) -> int:
        if not self.coordinating():
            return NOT_COORDINATOR
        group = self.groups.get(body.group_id)
        if group is not None and group.fenced(body.member_id, getattr(body, "group_instance_id", None)):
            return FENCED_INSTANCE_ID
        m = group.members.get(body.member_id) if group else None
        if m is None:
            return UNKNOWN_MEMBER_ID
        if body.generation_id != group.generation:
            return ILLEGAL_GENERATION
        m.seen = time.monotonic()
        return REBALANCE_IN_PROGRESS if group.state == PREPARING else 0

    def leave_group(self, request, conn) -> None:
        body, version = request.body, request.version
        R = w.LeaveGroupResponse
        if not self.coordinating():
            conn.send_response(R(error_code=NOT_COORDINATOR), version, request.header.correlation_id)
            return
        group = self.groups.get(body.group_id)
        who = ([(x.member_id, x.group_instance_id) for x in body.members] if version >= 3
               else [(body.member_id, None)])
        results = []
        for member_id, instance_id in who:
            error = group.fenced(member_id, instance_id) if group is not None and member_id else 0
            if not member_id and instance_id is not None and group is not None:
                member_id = group.static.get(instance_id, "")  # leaving by instance id (KIP-345)
            m = group.members.get(member_id) if group and not error else None
            results.append(R.MemberResponse(member_id=member_id, group_instance_id=instance_id,
                                            error_code=error or (0 if m else UNKNOWN_MEMBER_ID)))
            if m is not None:
                log.info("group %s: member %s left", group.group_id, member_id)
                self._remove(group, m)
        if group is not None and group.members and group.state in (STABLE, COMPLETING, PREPARING):
            self._prepare(group)
        top = 0 if version >= 3 or not results else results[0].error_code
        conn.send_response(R(error_code=top, members=results), version, request.header.correlation_id)

    def offset_commit(self, request, conn) -> None:
        ctx = self.ctx
        body, version, cid = request.body, request.version, request.header.correlation_id
        R = w.OffsetCommitResponse
        responses = [R.OffsetCommitResponseTopic(name=t.name, partitions=[
            R.OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=0)
            for p in t.partitions]) for t in body.topics]

        def answer(error=None):
            for t in responses:
                for p in t.partitions:
                    if error is not None and p.error_code == 0:
                        p.error_code = error
            conn.send_response(R(throttle_time_ms=0, topics=responses), version, cid)

        if not self.coordinating():
            return answer(NOT_COORDINATOR)
        if not body.group_id:
            return answer(INVALID_GROUP_ID)
        generation = body.generation_id_or_member_epoch
        group = self.groups.get(body.group_id)
        if group is not None and group.fenced(body.member_id, getattr(body, "group_instance_id", None)):
            return answer(FENCED_INSTANCE_ID)
        if generation >= 0 or body.member_id:
            m = group.members.get(body.member_id) if group else None
            if m is None:
                return answer(UNKNOWN_MEMBER_ID)
            if generation != group.generation:
                return answer(ILLEGAL_GENERATION)
            if group.state == PREPARING:
                return answer(REBALANCE_IN_PROGRESS)
            m.seen = time.monotonic()
        elif group is not None and group.members:
            return answer(UNKNOWN_MEMBER_ID)  # a "simple" commit into a group with members
        records = []
        now_ms = int(time.time() * 1000)
        for t, rt in zip(body.topics, responses):
            for p, rp in zip(t.partitions, rt.partitions):
                if t.name != ctx.topic_name or p.partition_index != 0:
                    rp.error_code = c.UNKNOWN_TOPIC_OR_PARTITION
                    continue
                records.append((KRAFTWIRE_GROUP_OFFSET, w.KraftwireGroupOffsetRecord(
                    group_id=body.group_id, topic=t.name, partition=p.partition_index, offset=p.committed_offset,
                    leader_epoch=getattr(p, "committed_leader_epoch", -1), metadata=p.committed_metadata,
                    commit_timestamp=now_ms)))
        if not records:
            return answer()
        self._append(records, lambda error: answer(error or None))

    def offset_fetch(self, request, conn) -> None:
        ctx = self.ctx
        body, version, cid = request.body, request.version, request.header.correlation_id
        R = w.OffsetFetchResponse
        if not self.coordinating():
            error = NOT_COORDINATOR
        elif ctx.epoch_start_offset() > ctx.log.high_watermark():
            # A new leader learns what the old one committed only once it commits in its own epoch (as Kafka's
            # coordinator answers while it loads the offsets partition).
            error = COORDINATOR_LOAD_IN_PROGRESS
        else:
            error = 0
        if error and version >= 2:
            conn.send_response(R(error_code=error, topics=[]), version, cid)
            return
        group_id = body.group_id
        # Only what is committed: a commit this leader appended but has not committed may still be lost with its
        # leadership, and its OffsetCommit has not been answered yet either.
        committed = self.scan.committed_offsets(group_id) if error == 0 else {}
        if body.topics is None:
            wanted = {}
            for topic, part in committed:
                wanted.setdefault(topic, []).append(part)
            asked = sorted((topic, sorted(parts)) for topic, parts in wanted.items())
        else:
            asked = [(t.name, list(t.partition_indexes)) for t in body.topics]
        topics = []
        for name, parts in asked:
            out = []
            for part in parts:
                offset, epoch, meta = committed.get((name, part), (-1, -1, ""))
                perr = error or (c.UNKNOWN_TOPIC_OR_PARTITION if name != ctx.topic_name and version < 2 else 0)
                out.append(R.OffsetFetchResponsePartition(partition_index=part, committed_offset=offset,
                                                          committed_leader_epoch=epoch, metadata=meta or "",
                                                          error_code=perr))
            topics.append(R.OffsetFetchResponseTopic(name=name, partitions=out))
        conn.send_response(R(throttle_time_ms=0, error_code=0, topics=topics), version, cid)


def register(ctx: c.BrokerContext, dispatcher, scan, attached) -> Coordinator:
    co = Coordinator(ctx, scan)
    d = dispatcher
    d.serve("FindCoordinator", attached(co.find_coordinator))
    d.serve("JoinGroup", attached(co.join_group))
    d.serve("SyncGroup", attached(co.sync_group))
    d.serve("Heartbeat", attached(co.heartbeat))
    d.serve("LeaveGroup", attached(co.leave_group))
    d.serve("OffsetCommit", attached(co.offset_commit))
    d.serve("OffsetFetch", attached(co.offset_fetch))
    return co
