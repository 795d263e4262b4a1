"""The classic group protocol of one ``__consumer_offsets`` partition: Kafka's group coordinator as a pure state
machine.

**Shape.** Every request method takes the decoded request body, the request's version, an opaque ``token`` (the
edge's handle for the answer) and ``now_ms``; ``tick(now_ms)`` runs the timers. Each returns a ``Result``: the
records to append to the partition (key, value) and the replies to send **once those records are committed** (at
once when there are none). Replies of requests that wait (a JoinGroup until the rebalance completes, a follower's
SyncGroup until the leader's) come out of the call that completes them. New member ids come from the ``new_id``
function given at construction (the edge passes uuid4, the simulation a counter); nothing reads a clock.

**State and the log.** What must survive a failover is in Kafka's records: ``OffsetCommit`` (offsets and their
tombstones) and ``GroupMetadata`` (generation, protocol, leader, members with their subscriptions and assignments,
and the time the group entered its state). ``replay(key, value, offset)`` folds them while a shard loads, and for
the records the shard itself wrote (offset records only: the live group already holds what its metadata records
say). ``advance(high_watermark)`` moves the committed view, which OffsetFetch, DescribeGroups and ListGroups read: a
commit is visible once it is committed, never before, as Kafka reads at the last committed offset.

**When the edge cannot write** (the partition lost its leadership, too few in-sync replicas), the shard must be
dropped and loaded again from the log: its memory already holds the change the records would have made, as
Kafka's coordinator reverts to its last committed snapshot.

The rules (states, checks, error codes and their order) follow Kafka's classic group coordinator; the places where
a rule is Kafka's but surprising carry a comment.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from kraftwire import error_codes as ec
from kraftwire import re2j
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group import consumer as cg
from kraftwire.kafka_configs import BrokerConfigs
from kraftwire.metadata import group_configs
from kraftwire.protocol import messages as w

#: ConsumerGroupDescribe v1's MemberType of a member speaking the consumer protocol (0 is a classic member's)
CONSUMER_MEMBER = 1
EMPTY, PREPARING, COMPLETING, STABLE, DEAD = "Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"
STATES = (EMPTY, PREPARING, COMPLETING, STABLE, DEAD)
#: DescribeGroups: authorized operations were not asked for (Kafka's sentinel)
NO_AUTHORIZED_OPERATIONS = -2147483648


@dataclass(frozen=True)
class GroupConfig:
    """The broker keys of the classic group coordinator, with Kafka's defaults."""

    min_session_timeout_ms: int = 6000  # group.min.session.timeout.ms
    max_session_timeout_ms: int = 1_800_000  # group.max.session.timeout.ms
    initial_rebalance_delay_ms: int = 3000  # group.initial.rebalance.delay.ms
    max_size: int = 2**31 - 1  # group.max.size
    offsets_retention_ms: int = 10080 * 60_000  # offsets.retention.minutes
    offsets_retention_check_interval_ms: int = 600_000  # offsets.retention.check.interval.ms
    offset_metadata_max_bytes: int = 4096  # offset.metadata.max.bytes
    consumer_session_timeout_ms: int = 45_000  # group.consumer.session.timeout.ms
    consumer_heartbeat_interval_ms: int = 5000  # group.consumer.heartbeat.interval.ms
    #: the bounds of a consumer group's own session timeout and heartbeat interval (group configs, KIP-848)
    consumer_min_session_timeout_ms: int = 45_000  # group.consumer.min.session.timeout.ms
    consumer_max_session_timeout_ms: int = 60_000  # group.consumer.max.session.timeout.ms
    consumer_min_heartbeat_interval_ms: int = 5000  # group.consumer.min.heartbeat.interval.ms
    consumer_max_heartbeat_interval_ms: int = 15_000  # group.consumer.max.heartbeat.interval.ms
    consumer_max_size: int = 2**31 - 1  # group.consumer.max.size: the most members a consumer group may have

    def broker_value(self, name: str) -> str | None:
        """The broker keys a group's configs resolve through (``metadata.group_configs``)."""
        value = {"group.consumer.session.timeout.ms": self.consumer_session_timeout_ms,
                 "group.consumer.heartbeat.interval.ms": self.consumer_heartbeat_interval_ms,
                 "group.consumer.min.session.timeout.ms": self.consumer_min_session_timeout_ms,
                 "group.consumer.max.session.timeout.ms": self.consumer_max_session_timeout_ms,
                 "group.consumer.min.heartbeat.interval.ms": self.consumer_min_heartbeat_interval_ms,
                 "group.consumer.max.heartbeat.interval.ms": self.consumer_max_heartbeat_interval_ms}.get(name)
        return None if value is None else str(value)

    @classmethod
    def from_config(cls, c) -> "GroupConfig":
        """The settings a node's ``kraftwire.config.Config`` holds."""
        broker = BrokerConfigs(static=getattr(c, "raw", None) or {})

        def bound(name: str) -> int:
            return int(broker.value(name) or 0)

        return cls(min_session_timeout_ms=c.group_min_session_timeout_ms,
                   max_session_timeout_ms=c.group_max_session_timeout_ms,
                   initial_rebalance_delay_ms=c.group_initial_rebalance_delay_ms, max_size=c.group_max_size,
                   offsets_retention_ms=c.offsets_retention_minutes * 60_000,
                   offsets_retention_check_interval_ms=c.offsets_retention_check_interval_ms,
                   offset_metadata_max_bytes=c.offset_metadata_max_bytes,
                   consumer_session_timeout_ms=c.group_consumer_session_timeout_ms,
                   consumer_heartbeat_interval_ms=c.group_consumer_heartbeat_interval_ms,
                   consumer_min_session_timeout_ms=bound("group.consumer.min.session.timeout.ms"),
                   consumer_max_session_timeout_ms=bound("group.consumer.max.session.timeout.ms"),
                   consumer_min_heartbeat_interval_ms=bound("group.consumer.min.heartbeat.interval.ms"),
                   consumer_max_heartbeat_interval_ms=bound("group.consumer.max.heartbeat.interval.ms"),
                   consumer_max_size=bound("group.consumer.max.size"))


class Reply(NamedTuple):
    """An answer for the edge to send: ``api`` names the request (``error_response`` builds its refusal)."""

    token: Any
    api: str
    body: Any


class Result:
    """What a call produced: records to append, then replies to send once they are committed."""

    __slots__ = ("records", "replies")

    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []
        self.replies: list[Reply] = []

    def reply(self, token, api: str, body) -> None:
        self.replies.append(Reply(token, api, body))

    def __repr__(self) -> str:
        return f"Result({len(self.records)} records, {len(self.replies)} replies)"


class Waiting(NamedTuple):
    token: Any
    version: int


class OffsetEntry(NamedTuple):
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = -1


class Member:
    __slots__ = ("member_id", "instance_id", "client_id", "client_host", "session_ms", "rebalance_ms",
                 "protocol_type", "protocols", "assignment", "join", "sync", "deadline_ms")

    def __init__(self, member_id: str, instance_id: str | None, client_id: str, client_host: str) -> None:
        self.member_id, self.instance_id = member_id, instance_id
        self.client_id, self.client_host = client_id, client_host
        self.session_ms = self.rebalance_ms = 0
        self.protocol_type = ""
        self.protocols: list[tuple[str, bytes]] = []
        self.assignment = b""
        self.join: Waiting | None = None
        self.sync: Waiting | None = None
        self.deadline_ms = 0

    def metadata_for(self, protocol: str | None) -> bytes:
        return next((m for n, m in self.protocols if n == protocol), b"")


class Group:
    def __init__(self, group_id: str, now_ms: int) -> None:
        self.group_id = group_id
        self.state = EMPTY
        self.state_ms = now_ms  # when the group entered its state (offset expiry counts from Empty)
        self.generation = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader: str | None = None
        self.members: dict[str, Member] = {}
        self.pending: dict[str, int] = {}  # member ids handed out by MEMBER_ID_REQUIRED -> their deadline
        self.static: dict[str, str] = {}  # group.instance.id -> the member id holding it (KIP-345)
        self.rebalance_deadline_ms = 0  # PreparingRebalance: complete the join then at the latest
        self.delay_left_ms = 0  # the initial rebalance delay still available to extend by
        self.delayed = False  # the join waits out group.initial.rebalance.delay.ms (no early completion)
        self.sync_deadline_ms = 0  # CompletingRebalance: members that have not synced by then are removed

    def set_state(self, state: str, now_ms: int) -> None:
        if state != self.state:
            self.state, self.state_ms = state, now_ms

    def fenced(self, member_id: str, instance_id: str | None) -> bool:
        """A request naming a static member whose instance id another member id holds now."""
        if instance_id is None:
            return False
        holder = self.static.get(instance_id)
        return holder is not None and holder != member_id

    def protocols_supported(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        """Kafka's ``supportsProtocols``: an empty group takes any non-empty protocol list; otherwise the type must
        match and the member must share a protocol with every current member."""
        if not protocol_type or not protocols:
            return False
        if not self.members:
            return True
        if protocol_type != self.protocol_type:
            return False
        names = {n for n, _ in protocols}
        return all(names & {n for n, _ in m.protocols} for m in self.members.values())

    def subscribed_topics(self) -> set[str] | None:
        """The topics the consumer-protocol members subscribe to; None when unknown (a member's subscription
        cannot be read, or the group is not a consumer group)."""
        if self.protocol_type != "consumer" or not self.protocol_name:
            return None
        topics: set[str] = set()
        for m in self.members.values():
            sub = subscription_topics(m.metadata_for(self.protocol_name))
            if sub is None:
                return None
            topics |= sub
        return topics


def subscription_topics(metadata: bytes) -> set[str] | None:
    """The topics of a consumer-protocol subscription (int16 version, int32 count, int16-length topic names)."""
    try:
        if len(metadata) < 6:
            return None
        count = int.from_bytes(metadata[2:6], "big", signed=True)
        pos, topics = 6, set()
        for _ in range(count):
            if pos + 2 > len(metadata):
                return None
            length = int.from_bytes(metadata[pos:pos + 2], "big", signed=True)
            pos += 2
            if length < 0 or pos + length > len(metadata):
                return None
            topics.add(bytes(metadata[pos:pos + length]).decode("utf-8"))
            pos += length
        return topics
    except (UnicodeDecodeError, ValueError):
        return None


def error_response(api: str, version: int, code: int):
    """The refusal of a group request with ``code`` (what the edge answers when the records could not be written)."""
    if api == "JoinGroup":
        return w.JoinGroupResponse(error_code=code, generation_id=-1, protocol_name=None if version >= 7 else "",
                                   leader="", member_id="", members=[])
    if api == "SyncGroup":
        return w.SyncGroupResponse(error_code=code, assignment=b"")
    if api == "Heartbeat":
        return w.HeartbeatResponse(error_code=code)
    if api == "LeaveGroup":
        return w.LeaveGroupResponse(error_code=code, members=[])
    raise ValueError(f"no single-code refusal for {api}")


def refusal(reply: Reply, version: int, code: int):
    """What to answer instead of ``reply`` when its records could not be written: the partitions of an
    OffsetCommit or OffsetDelete that had no error of their own get ``code``, the other APIs their refusal."""
    if reply.api in ("OffsetCommit", "OffsetDelete", "TxnOffsetCommit"):
        for t in reply.body.topics:
            for part in t.partitions:
                if part.error_code == 0:
                    part.error_code = code
        return reply.body
    if reply.api == "ConsumerGroupHeartbeat":
        return cg.error_heartbeat(code)
    if reply.api in ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup"):
        return error_response(reply.api, version, code)
    return reply.body


def offset_fetch_response(version: int, groups: list) -> object:
    """The OffsetFetch answer for ``groups``: [(group id, error, [(topic, [(partition, entry or None)])])] — one
    group before v8 (per-partition errors before v2), a list of groups from v8. A partition may come as (partition,
    None, error) for an error of its own (UNSTABLE_OFFSET_COMMIT)."""
    R = w.OffsetFetchResponse

    def perr(item, default: int = 0) -> int:
        return item[2] if len(item) > 2 else default

    def value(e):
        return (-1, -1, "") if e is None else (e.offset, e.leader_epoch, e.metadata or "")

    if version >= 8:  # a group's own error stands alone, without its topics (NOT_COORDINATOR too, as Kafka answers)
        return R(throttle_time_ms=0, groups=[R.OffsetFetchResponseGroup(group_id=gid, error_code=err, topics=[
        ] if err else [
            R.OffsetFetchResponseTopics(name=name, partitions=[R.OffsetFetchResponsePartitions(
                partition_index=i, committed_offset=value(e)[0], committed_leader_epoch=value(e)[1],
                metadata=value(e)[2], error_code=perr(item)) for item in parts for i, e in [item[:2]]])
                for name, parts in topics]) for gid, err, topics in groups])
    _gid, err, topics = groups[0]
    if err and version >= 2:
        return R(throttle_time_ms=0, error_code=err, topics=[])
    return R(throttle_time_ms=0, error_code=0, topics=[R.OffsetFetchResponseTopic(name=name, partitions=[
        R.OffsetFetchResponsePartition(partition_index=i, committed_offset=value(e)[0],
                                       committed_leader_epoch=value(e)[1], metadata=value(e)[2],
                                       error_code=err or perr(item)) for item in parts for i, e in [item[:2]]])
        for name, parts in topics])


def refused_first(order: list[tuple[str, list[int]]], refused) -> list[tuple[str, list[int]]]:
    """The topics and partitions of an OffsetCommit answer in Kafka's order: its response builder takes the
    partitions refused before the coordinator is asked (``refused``: an unauthorized topic, an unknown partition)
    first, each topic where its first refused partition puts it, then the coordinator's; ``order`` is the request's
    [(topic, [partition, ...])]."""
    def refused_in(name, idx):
        return [i for i in idx if (name, i) in refused]

    first = [(n, refused_in(n, idx) + [i for i in idx if (n, i) not in refused]) for n, idx in order
             if refused_in(n, idx)]
    return first + [(n, idx) for n, idx in order if not refused_in(n, idx)]


def fetch_requests(body, version: int) -> list:
    """[(group id, member id, member epoch, [(topic, [partition])] or None)] an OffsetFetch asks for."""
    if version >= 8:
        return [(g.group_id, g.member_id if version >= 9 else None, g.member_epoch if version >= 9 else -1,
                 None if g.topics is None else [(t.name, list(t.partition_indexes)) for t in g.topics])
                for g in body.groups]
    return [(body.group_id, None, -1,
             None if body.topics is None else [(t.name, list(t.partition_indexes)) for t in body.topics])]


class GroupShard:
    """The groups of one ``__consumer_offsets`` partition and their committed offsets."""

    def __init__(self, partition: int, config: GroupConfig | None = None,
                 new_id: Callable[[], str] | None = None,
                 group_configs: Callable[[str], Any] | None = None) -> None:
        self.partition = partition
        self.config = config or GroupConfig()
        #: a group's own configs (KIP-848; the metadata image's ConfigRecords of resource type GROUP)
        self.group_configs = group_configs or (lambda group_id: {})
        self._new_id = new_id or _counter()
        self.groups: dict[str, Group] = {}
        #: KIP-848 consumer groups (``group.protocol=consumer``), by group id
        self.consumer_groups: dict[str, cg.ConsumerGroup] = {}
        #: every offset the log holds (committed or not): group -> (topic, partition) -> entry
        self.offsets: dict[str, dict[tuple[str, int], OffsetEntry]] = {}
        #: the committed view, read by OffsetFetch and the admin APIs
        self.committed: dict[str, dict[tuple[str, int], OffsetEntry]] = {}
        self._pending: deque = deque()  # (log offset, group, key or None, entry or None) not yet committed
        self.high_watermark = 0
        self.live = False  # False while loading: GroupMetadata records rebuild the groups
        #: the last GroupMetadata value of each group in the log (None: its tombstone), live or not: what ``unload``
        #: rebuilds the groups from when this shard goes back to following the log
        self.metadata_values: dict[str, bytes | None] = {}
        #: the consumer groups' records as the log holds them (key -> (type, value)), for the same purpose
        self.consumer_log: dict[bytes, tuple[int, bytes]] = {}
        self._next_expiry_ms: int | None = None
        #: TxnOffsetCommit offsets waiting for their transaction's marker (Kafka's pending transactional offsets):
        #: producer id -> group -> (topic, partition) -> entry; a COMMIT marker makes them the group's offsets, an
        #: ABORT drops them
        self.txn_offsets: dict[int, dict[str, dict[tuple[str, int], OffsetEntry]]] = {}

    # ================================================================================================ the log
    def replay(self, key: bytes, value: bytes | None, offset: int) -> None:
        """Fold one record of the partition at log ``offset``."""
        rec = cr.decode(key, value)
        if rec.record_type in (0, 1):
            k = rec.key
            v = rec.value
            entry = None if v is None else OffsetEntry(v.offset, v.leader_epoch if rec.value_version >= 3 else -1,
                                                        v.metadata, v.commit_timestamp,
                                                        v.expire_timestamp if rec.value_version == 1 else -1)
            self._set_offset(self.offsets, k.group, (k.topic, k.partition), entry)
            self._pending.append((offset, k.group, (k.topic, k.partition), entry))
        elif rec.record_type == 2:
            self.metadata_values[rec.key.group] = None if value is None else bytes(value)
            if self.live:
                return  # a record this shard wrote: the live group already holds it
            self._load_group(rec.key.group, rec.value)
        elif 3 <= rec.record_type <= 8:
            if value is None:
                self.consumer_log.pop(bytes(key), None)
            else:
                self.consumer_log[bytes(key)] = (rec.record_type, bytes(value))
            if not self.live:  # a live shard already holds what it wrote
                cg.replay(self.consumer_groups, rec)
        # share groups (types 9-15, KIP-932) are not served: a partition holding them still loads
        self.advance(self.high_watermark)

    def replay_txn(self, producer_id: int, key: bytes, value: bytes | None, offset: int) -> None:
        """Fold one record of a transactional batch (a TxnOffsetCommit's): its offset waits for the marker."""
        rec = cr.decode(key, value)
        if rec.record_type not in (0, 1) or value is None:
            self.replay(key, value, offset)
            return
        k, v = rec.key, rec.value
        entry = OffsetEntry(v.offset, v.leader_epoch if rec.value_version >= 3 else -1, v.metadata,
                            v.commit_timestamp, v.expire_timestamp if rec.value_version == 1 else -1)
        self.txn_offsets.setdefault(producer_id, {}).setdefault(k.group, {})[(k.topic, k.partition)] = entry

    def complete_txn(self, producer_id: int, commit: bool, offset: int) -> None:
        """The transaction marker of ``producer_id`` at log ``offset``: its pending offsets become the groups'
        (committed once the high watermark passes the marker) on COMMIT, and are dropped on ABORT."""
        pending = self.txn_offsets.pop(producer_id, None)
        if not pending or not commit:
            return
        for group, entries in pending.items():
            for tp, entry in entries.items():
                self._set_offset(self.offsets, group, tp, entry)
                self._pending.append((offset, group, tp, entry))
        self.advance(self.high_watermark)

    def pending_txn_offset(self, group_id: str, tp: tuple[str, int]) -> bool:
        """Does a transaction still hold an offset of the group's partition (OffsetFetch's require_stable)?"""
        return any(tp in groups.get(group_id, ()) for groups in self.txn_offsets.values())

    @staticmethod
    def _set_offset(table: dict, group: str, tp: tuple[str, int], entry: OffsetEntry | None) -> None:
        if entry is None:
            held = table.get(group)
            if held is not None:
                held.pop(tp, None)
                if not held:
                    del table[group]
        else:
            table.setdefault(group, {})[tp] = entry

    def _load_group(self, group_id: str, value) -> None:
        if value is None:
            self.groups.pop(group_id, None)
            return
        g = Group(group_id, value.current_state_timestamp if value.current_state_timestamp >= 0 else 0)
        g.generation = value.generation
        g.protocol_type = value.protocol_type or None
        g.protocol_name = value.protocol
        g.leader = value.leader
        for mm in value.members:
            m = Member(mm.member_id, mm.group_instance_id, mm.client_id, mm.client_host)
            m.session_ms = mm.session_timeout
            m.rebalance_ms = mm.rebalance_timeout if mm.rebalance_timeout >= 0 else mm.session_timeout
            m.protocol_type = g.protocol_type or ""
            m.protocols = [(g.protocol_name or "", bytes(mm.subscription))]
            m.assignment = bytes(mm.assignment)
            g.members[m.member_id] = m
            if m.instance_id is not None:
                g.static[m.instance_id] = m.member_id
        g.state = STABLE if g.members else EMPTY
        self.groups[group_id] = g

    def advance(self, high_watermark: int) -> None:
        """The partition's high watermark moved: records below it are committed."""
        self.high_watermark = max(self.high_watermark, high_watermark)
        pending = self._pending
        while pending and pending[0][0] < self.high_watermark:
            _offset, group, tp, entry = pending.popleft()
            self._set_offset(self.committed, group, tp, entry)

    def consumer_session_ms(self, group_id: str) -> int:
        """A consumer group's session timeout: its own ``consumer.session.timeout.ms``, else the broker's, within the
        broker's bounds (Kafka's GroupConfig evaluation)."""
        return group_configs.effective_ms(group_configs.SESSION, self.group_configs(group_id), self.config.broker_value)

    def consumer_heartbeat_ms(self, group_id: str) -> int:
        """A consumer group's heartbeat interval, as ``consumer_session_ms`` resolves it."""
        return group_configs.effective_ms(group_configs.HEARTBEAT, self.group_configs(group_id),
                                          self.config.broker_value)

    def _consumer_deadlines(self, now_ms: int) -> None:
        for g in self.consumer_groups.values():
            session_ms = self.consumer_session_ms(g.group_id)
            for m in g.members.values():
                m.deadline_ms = now_ms + session_ms
                m.revocation_deadline_ms = now_ms + m.rebalance_timeout_ms

    def loaded(self, now_ms: int) -> None:
        """The load reached the log end: serve. Members loaded from the log get a full session from now, as
        Kafka reschedules their heartbeats, so consumers carry on across a coordinator move without a rebalance."""
        self.live = True
        for g in self.groups.values():
            for m in g.members.values():
                m.deadline_ms = now_ms + m.session_ms
        self._consumer_deadlines(now_ms)
        self._next_expiry_ms = now_ms + self.config.offsets_retention_check_interval_ms

    def unload(self) -> list[Reply]:
        """This broker stops coordinating the partition: the refusals (NOT_COORDINATOR) of the requests still
        waiting in a rebalance; the clients then find the new coordinator."""
        out = []
        for g in self.groups.values():
            for m in g.members.values():
                if m.join is not None:
                    out.append(Reply(m.join.token, "JoinGroup",
                                     error_response("JoinGroup", m.join.version, ec.NOT_COORDINATOR)))
                if m.sync is not None:
                    out.append(Reply(m.sync.token, "SyncGroup",
                                     error_response("SyncGroup", m.sync.version, ec.NOT_COORDINATOR)))
                m.join = m.sync = None
        self.live = False
        self._next_expiry_ms = None
        self.groups = {}  # back to what the log says (the live groups held more)
        for group_id, value in self.metadata_values.items():
            if value is not None:
                self._load_group(group_id, cr.decode(cr.group_metadata_key(group_id), value).value)
        self.consumer_groups = {}
        for key, (_type, value) in sorted(self.consumer_log.items(), key=lambda kv: kv[1][0]):
            cg.replay(self.consumer_groups, cr.decode(key, value))
        return out

    # ================================================================================================ helpers
    def _group_record(self, g: Group, result: Result, now_ms: int) -> None:
        """Write the group's metadata as it stands (members with their subscriptions and assignments)."""
        V = w.GroupMetadataValue
        value = V(protocol_type=g.protocol_type or "", generation=g.generation, protocol=g.protocol_name,
                  leader=g.leader, current_state_timestamp=g.state_ms if g.state_ms else now_ms, members=[
                      V.MemberMetadata(member_id=m.member_id, group_instance_id=m.instance_id,
                                       client_id=m.client_id, client_host=m.client_host,
                                       rebalance_timeout=m.rebalance_ms, session_timeout=m.session_ms,
                                       subscription=m.metadata_for(g.protocol_name), assignment=m.assignment)
                      for m in g.members.values()])
        result.records.append((cr.group_metadata_key(g.group_id), cr.group_metadata_value(value)))

    def _group_tombstones(self, group_id: str, result: Result) -> None:
        for topic, part in sorted(self.offsets.get(group_id, {})):
            result.records.append((cr.offset_commit_key(group_id, topic, part), None))
        result.records.append((cr.group_metadata_key(group_id), None))

    def group_ids(self) -> list[str]:
        """Groups that exist: in memory (members, or an Empty group that wrote metadata) or with committed offsets."""
        return sorted(set(self.groups) | set(self.committed) | set(self.consumer_groups))

    def _get_or_create(self, group_id: str, now_ms: int) -> Group:
        g = self.groups.get(group_id)
        if g is None:
            g = self.groups[group_id] = Group(group_id, now_ms)
        return g

    # ================================================================================================ JoinGroup
    def join_group(self, body, version: int, token, now_ms: int, client_id: str, client_host: str) -> Result:
        result = Result()
        R = w.JoinGroupResponse

        def fail(code: int, member_id: str | None = None) -> Result:
            """A refusal; Kafka's carries the member id the request named (or the one just given)."""
            result.reply(token, "JoinGroup", R(error_code=code, generation_id=-1,
                                                protocol_name=None if version >= 7 else "", leader="",
                                                member_id=body.member_id if member_id is None else member_id,
                                                members=[]))
            return result

        cfg = self.config
        if not body.group_id:
            return fail(ec.INVALID_GROUP_ID)
        if not cfg.min_session_timeout_ms <= body.session_timeout_ms <= cfg.max_session_timeout_ms:
            return fail(ec.INVALID_SESSION_TIMEOUT)
        member_id = body.member_id
        instance_id = body.group_instance_id if version >= 5 else None
        g = self.groups.get(body.group_id)
        if g is None and member_id:
            return fail(ec.UNKNOWN_MEMBER_ID)  # a known member id needs a known group
        if g is None:
            g = self._get_or_create(body.group_id, now_ms)
        if g.state == DEAD:
            return fail(ec.COORDINATOR_NOT_AVAILABLE)
        protocols = [(p.name, bytes(p.metadata)) for p in body.protocols]
        new = not member_id or (member_id in g.pending and member_id not in g.members)
        if new and len(g.members) >= cfg.max_size:
            return fail(ec.GROUP_MAX_SIZE_REACHED)
        if not g.protocols_supported(body.protocol_type, protocols):  # the rejoining member's own old ones count
            return fail(ec.INCONSISTENT_GROUP_PROTOCOL)
        rebalance_ms = body.rebalance_timeout_ms if version >= 1 else body.session_timeout_ms

        if not member_id and instance_id is not None:
            # a static member (re)joins: no MEMBER_ID_REQUIRED round; a known instance id replaces its old member
            member_id = f"{instance_id}-{self._new_id()}"
            old_id = g.static.get(instance_id)
            old = g.members.get(old_id) if old_id is not None else None
            g.static[instance_id] = member_id
            if old is not None:
                done = self._replace_static(g, old, member_id, body, protocols, rebalance_ms, version, token,
                                            now_ms, result)
                if done:
                    return result
                m = g.members[member_id]
                self._refresh(m, body, protocols, rebalance_ms, now_ms)
                m.join = Waiting(token, version)
                self._prepare(g, now_ms, result)
                return result
        elif not member_id:
            member_id = f"{client_id}-{self._new_id()}"
            if version >= 4:
                g.pending[member_id] = now_ms + body.session_timeout_ms
                return fail(ec.MEMBER_ID_REQUIRED, member_id)
        elif g.fenced(member_id, instance_id):
            return fail(ec.FENCED_INSTANCE_ID, member_id)
        elif member_id not in g.members and member_id not in g.pending:
            return fail(ec.UNKNOWN_MEMBER_ID, member_id)

        g.pending.pop(member_id, None)
        m = g.members.get(member_id)
        if m is None:
            m = g.members[member_id] = Member(member_id, instance_id, client_id, client_host)
            if instance_id is not None:
                g.static[instance_id] = member_id
            if len(g.members) == 1:
                g.protocol_type = body.protocol_type
            unchanged = False
        else:
            unchanged = m.protocols == protocols
        if m.join is not None:  # a duplicate join: the older request is superseded
            self._answer_join(g, m, result, error=ec.UNKNOWN_MEMBER_ID)
        self._refresh(m, body, protocols, rebalance_ms, now_ms)
        m.join = Waiting(token, version)
        if g.state == PREPARING:
            self._joined_while_preparing(g, now_ms, result)
        elif unchanged and m.member_id != g.leader and g.state in (STABLE, COMPLETING):
            # Kafka: a follower rejoining with the same protocols gets the current generation, no rebalance
            self._answer_join(g, m, result, error=0)
        else:
            self._prepare(g, now_ms, result)
        return result

    @staticmethod
    def _refresh(m: Member, body, protocols, rebalance_ms: int, now_ms: int) -> None:
        m.session_ms = body.session_timeout_ms
        m.rebalance_ms = rebalance_ms
        m.protocol_type = body.protocol_type
        m.protocols = protocols
        m.deadline_ms = now_ms + m.session_ms

    def _replace_static(self, g: Group, old: Member, member_id: str, body, protocols, rebalance_ms: int,
                        version: int, token, now_ms: int, result: Result) -> bool:
        """A static member came back: its old member id is fenced and the new one takes its place and assignment.
        In a Stable group a member with unchanged protocols gets the current generation without a rebalance
        (KIP-345). The leader asking at JoinGroup v9+ gets the members and SkipAssignment (KIP-814: it keeps the
        assignment it made); below v9, where it cannot be told to skip, Kafka 4.4 names its old member id as the
        leader, so it takes itself for a follower and syncs the assignment it had (the conformance scenario
        JoinGroup-v5-static-member-replaced). True when answered that way."""
        self._answer_join(g, old, result, error=ec.FENCED_INSTANCE_ID)
        self._answer_sync(g, old, result, ec.FENCED_INSTANCE_ID)
        del g.members[old.member_id]
        unchanged = old.protocols == protocols and old.protocol_type == body.protocol_type
        was_leader = g.leader == old.member_id
        old_id, old.member_id = old.member_id, member_id
        g.members[member_id] = old
        if was_leader:
            g.leader = member_id
        if g.state != STABLE or not unchanged:
            return False
        self._refresh(old, body, protocols, rebalance_ms, now_ms)
        old.join = Waiting(token, version)
        self._answer_join(g, old, result, error=0, skip_assignment=was_leader and version >= 9,
                          shown_leader=old_id if was_leader and version < 9 else None)
        self._group_record(g, result, now_ms)  # the new member id must survive a failover
        return True

    def _prepare(self, g: Group, now_ms: int, result: Result) -> None:
        """Start a rebalance (or keep the one going)."""
        if g.state == COMPLETING:
            for m in g.members.values():
                m.assignment = b""
                self._answer_sync(g, m, result, ec.REBALANCE_IN_PROGRESS)
        if g.state != PREPARING:
            timeout = max((m.rebalance_ms for m in g.members.values()), default=0)
            if g.state == EMPTY and self.config.initial_rebalance_delay_ms > 0:
                # Kafka's InitialDelayedJoin: wait for more members, each new one extending the wait
                delay = min(self.config.initial_rebalance_delay_ms, timeout)
                g.delayed, g.delay_left_ms = True, timeout - delay
                g.rebalance_deadline_ms = now_ms + delay
            else:
                g.delayed = False
                g.rebalance_deadline_ms = now_ms + timeout
            g.set_state(PREPARING, now_ms)
        self._maybe_complete_join(g, now_ms, result)

    def _joined_while_preparing(self, g: Group, now_ms: int, result: Result) -> None:
        if g.delayed and g.delay_left_ms > 0:
            extend = min(self.config.initial_rebalance_delay_ms, g.delay_left_ms)
            g.delay_left_ms -= extend
            g.rebalance_deadline_ms = max(g.rebalance_deadline_ms, now_ms + extend)
        self._maybe_complete_join(g, now_ms, result)

    def _maybe_complete_join(self, g: Group, now_ms: int, result: Result) -> None:
        if g.state != PREPARING or g.delayed:
            return
        if all(m.join is not None for m in g.members.values()) and not g.pending:
            self._complete_join(g, now_ms, result)

    def _complete_join(self, g: Group, now_ms: int, result: Result) -> None:
        for m in [m for m in g.members.values() if m.join is None]:
            self._remove(g, m, result)
        g.pending.clear()
        g.generation += 1
        g.delayed = False
        if not g.members:
            g.protocol_name = g.leader = None
            g.set_state(EMPTY, now_ms)
            self._group_record(g, result, now_ms)
            return
        members = list(g.members.values())
        if g.leader not in g.members:
            g.leader = members[0].member_id
        leader = g.members[g.leader]
        common = set.intersection(*({n for n, _ in m.protocols} for m in members))
        # Kafka lets every member vote for its most preferred common protocol; the leader's order breaks ties
        votes: dict[str, int] = {}
        for m in members:
            choice = next(n for n, _ in m.protocols if n in common)
            votes[choice] = votes.get(choice, 0) + 1
        best = max(votes.values())
        g.protocol_name = next(n for n, _ in leader.protocols if votes.get(n) == best)
        g.protocol_type = leader.protocol_type
        g.set_state(COMPLETING, now_ms)
        g.sync_deadline_ms = now_ms + max(m.rebalance_ms for m in members)
        for m in members:  # each keeps its assignment until the leader's sync replaces it (DescribeGroups shows it)
            m.deadline_ms = now_ms + m.session_ms
            self._answer_join(g, m, result, error=0)

    def _answer_join(self, g: Group, m: Member, result: Result, *, error: int, skip_assignment: bool = False,
                     shown_leader: str | None = None) -> None:
        """Answer ``m``'s JoinGroup; ``shown_leader`` names another leader than the group's (``_replace_static``)."""
        waiting, m.join = m.join, None
        if waiting is None:
            return
        R = w.JoinGroupResponse
        version = waiting.version
        if error:
            body = R(error_code=error, generation_id=-1, protocol_name=None if version >= 7 else "", leader="",
                     member_id=m.member_id if error == ec.MEMBER_ID_REQUIRED else "", members=[])
        else:
            leader = shown_leader or g.leader or ""
            members = []
            if m.member_id == leader:
                members = [R.JoinGroupResponseMember(member_id=x.member_id, group_instance_id=x.instance_id,
                                                     metadata=x.metadata_for(g.protocol_name))
                           for x in g.members.values()]
            body = R(error_code=0, generation_id=g.generation, protocol_type=g.protocol_type,
                     protocol_name=g.protocol_name, leader=leader, member_id=m.member_id, members=members,
                     skip_assignment=skip_assignment)
        result.reply(waiting.token, "JoinGroup", body)

    def _answer_sync(self, g: Group, m: Member, result: Result, error: int) -> None:
        waiting, m.sync = m.sync, None
        if waiting is None:
            return
        result.reply(waiting.token, "SyncGroup", w.SyncGroupResponse(
            error_code=error, protocol_type=g.protocol_type, protocol_name=g.protocol_name,
            assignment=b"" if error else m.assignment))

    def _remove(self, g: Group, m: Member, result: Result) -> None:
        g.members.pop(m.member_id, None)
        if m.instance_id is not None and g.static.get(m.instance_id) == m.member_id:
            del g.static[m.instance_id]
        self._answer_join(g, m, result, error=ec.UNKNOWN_MEMBER_ID)
        self._answer_sync(g, m, result, ec.UNKNOWN_MEMBER_ID)
        if g.leader == m.member_id:
            g.leader = None

    def _member_left(self, g: Group, now_ms: int, result: Result) -> None:
        """After members left or expired: rebalance what remains (an emptied group completes at once)."""
        if g.state in (STABLE, COMPLETING):
            self._prepare(g, now_ms, result)
        elif g.state == PREPARING:
            self._maybe_complete_join(g, now_ms, result)

    # ================================================================================================ SyncGroup
    def sync_group(self, body, version: int, token, now_ms: int) -> Result:
        result = Result()

        def fail(code: int) -> Result:
            result.reply(token, "SyncGroup", w.SyncGroupResponse(error_code=code, assignment=b""))
            return result

        if version >= 5 and (body.protocol_type is None or body.protocol_name is None):
            return fail(ec.INCONSISTENT_GROUP_PROTOCOL)  # Kafka's areMandatoryProtocolTypeAndNamePresent
        if not body.group_id:
            return fail(ec.INVALID_GROUP_ID)
        g = self.groups.get(body.group_id)
        if g is None:
            return fail(ec.UNKNOWN_MEMBER_ID)
        if g.state == DEAD:
            return fail(ec.COORDINATOR_NOT_AVAILABLE)
        if g.fenced(body.member_id, body.group_instance_id if version >= 3 else None):
            return fail(ec.FENCED_INSTANCE_ID)
        m = g.members.get(body.member_id)
        if m is None:
            return fail(ec.UNKNOWN_MEMBER_ID)
        if version >= 5 and ((body.protocol_type is not None and body.protocol_type != g.protocol_type)
                             or (body.protocol_name is not None and body.protocol_name != g.protocol_name)):
            return fail(ec.INCONSISTENT_GROUP_PROTOCOL)
        if body.generation_id != g.generation:
            return fail(ec.ILLEGAL_GENERATION)
        if g.state == EMPTY:
            return fail(ec.UNKNOWN_MEMBER_ID)
        if g.state == PREPARING:
            return fail(ec.REBALANCE_IN_PROGRESS)
        m.deadline_ms = now_ms + m.session_ms
        if g.state == STABLE:
            result.reply(token, "SyncGroup", w.SyncGroupResponse(error_code=0, protocol_type=g.protocol_type,
                                                                  protocol_name=g.protocol_name,
                                                                  assignment=m.assignment))
            return result
        m.sync = Waiting(token, version)
        if m.member_id == g.leader:
            given = {a.member_id: bytes(a.assignment) for a in body.assignments}
            for x in g.members.values():
                x.assignment = given.get(x.member_id, b"")
            g.set_state(STABLE, now_ms)
            self._group_record(g, result, now_ms)  # the replies wait for it to commit
            for x in g.members.values():
                self._answer_sync(g, x, result, 0)
        return result

    # ================================================================================================ Heartbeat
    def heartbeat(self, body, version: int, token, now_ms: int) -> Result:
        result = Result()
        result.reply(token, "Heartbeat", w.HeartbeatResponse(error_code=self._heartbeat_error(body, version,
                                                                                              now_ms)))
        return result

    def _heartbeat_error(self, body, version: int, now_ms: int) -> int:
        if not body.group_id:
            return ec.INVALID_GROUP_ID
        g = self.groups.get(body.group_id)
        if g is None:
            return ec.UNKNOWN_MEMBER_ID
        if g.state == DEAD:
            return ec.COORDINATOR_NOT_AVAILABLE
        if g.fenced(body.member_id, body.group_instance_id if version >= 3 else None):
            return ec.FENCED_INSTANCE_ID
        m = g.members.get(body.member_id)
        if m is None:
            return ec.UNKNOWN_MEMBER_ID
        if body.generation_id != g.generation:
            return ec.ILLEGAL_GENERATION
        m.deadline_ms = now_ms + m.session_ms
        return ec.REBALANCE_IN_PROGRESS if g.state == PREPARING else 0

    # ================================================================================================ LeaveGroup
    def leave_group(self, body, version: int, token, now_ms: int) -> Result:
        result = Result()
        R = w.LeaveGroupResponse
        who = ([(x.member_id, x.group_instance_id) for x in body.members] if version >= 3
               else [(body.member_id, None)])
        g = self.groups.get(body.group_id)
        if not body.group_id or g is None:
            # Kafka: an empty group id is INVALID_GROUP_ID; from v3 an unknown group answers each member instead
            error = ec.INVALID_GROUP_ID if not body.group_id else ec.UNKNOWN_MEMBER_ID
            if version >= 3 and body.group_id:
                result.reply(token, "LeaveGroup", R(error_code=0, members=[
                    R.MemberResponse(member_id=m, group_instance_id=i, error_code=error) for m, i in who]))
            else:
                result.reply(token, "LeaveGroup", R(error_code=error, members=[]))
            return result
        answers = []
        left = False
        for member_id, instance_id in who:
            error = 0
            if instance_id is not None:
                holder = g.static.get(instance_id)
                if holder is None:
                    error = ec.UNKNOWN_MEMBER_ID
                elif member_id and holder != member_id:
                    error = ec.FENCED_INSTANCE_ID
                else:
                    member_id = holder
            m = g.members.get(member_id) if not error else None
            if not error and m is None:
                if member_id in g.pending:
                    del g.pending[member_id]
                else:
                    error = ec.UNKNOWN_MEMBER_ID
            answers.append(R.MemberResponse(member_id=member_id, group_instance_id=instance_id, error_code=error))
            if m is not None:
                self._remove(g, m, result)
                left = True
        if left or g.state == PREPARING:
            self._member_left(g, now_ms, result)
        top = 0 if version >= 3 else answers[0].error_code
        result.reply(token, "LeaveGroup", R(error_code=top, members=answers if version >= 3 else []))
        return result

    # ================================================================================================ KIP-848
    def _consumer_group_full(self, group: cg.ConsumerGroup, member_id: str, instance_id: str | None) -> bool:
        """Kafka's ``throwIfConsumerGroupIsFull``: a consumer group holding ``group.consumer.max.size`` members
        takes no other member; a member already in it (by member id) or a static member coming back (by instance
        id) keeps its place."""
        if instance_id is not None and any(m.instance_id == instance_id for m in group.members.values()):
            return False
        return len(group.members) >= self.config.consumer_max_size and member_id not in group.members

    def consumer_heartbeat(self, body, version: int, token, now_ms: int, client_id: str, client_host: str,
                           topics: cg.TopicLookup, all_topics=lambda: ()) -> Result:
        """ConsumerGroupHeartbeat: join, reconcile, leave (see ``consumer``); ``topics`` looks a subscribed topic
        up in the metadata image, ``all_topics()`` names every topic a regex may match (internal ones left out)."""
        result = Result()
        api = "ConsumerGroupHeartbeat"

        def fail(code: int, message: str | None = None) -> Result:
            result.reply(token, api, cg.error_heartbeat(code, message))
            return result

        gid, epoch = body.group_id, body.member_epoch
        if not gid:
            return fail(ec.INVALID_REQUEST, "GroupId can't be empty.")
        if body.instance_id == "":
            return fail(ec.INVALID_REQUEST, "InstanceId can't be empty.")
        if body.rack_id == "":
            return fail(ec.INVALID_REQUEST, "RackId can't be empty.")
        regex = body.subscribed_topic_regex if version >= 1 else None
        if regex == "":
            regex = None  # librdkafka sends an empty regex with a subscription by names
        if epoch > 0 or epoch == cg.LEAVE_EPOCH:
            if not body.member_id:
                return fail(ec.INVALID_REQUEST, "MemberId can't be empty.")
        elif epoch == 0:
            if version >= 1 and not body.member_id:  # from v1 (KIP-1082) a joining member makes its own id
                return fail(ec.INVALID_REQUEST, "MemberId can't be empty.")
            if body.rebalance_timeout_ms == -1:
                return fail(ec.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
            if body.topic_partitions:
                return fail(ec.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining.")
            if body.subscribed_topic_names is None and (version < 1 or body.subscribed_topic_regex is None):
                return fail(ec.INVALID_REQUEST, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null "
                                                "when (re-)joining.")
        elif epoch == cg.STATIC_LEAVE_EPOCH:
            if not body.member_id:
                return fail(ec.INVALID_REQUEST, "MemberId can't be empty.")
            if body.instance_id is None:
                return fail(ec.INVALID_REQUEST, "InstanceId can't be null.")
        else:
            return fail(ec.INVALID_REQUEST, "MemberEpoch is invalid.")
        if body.server_assignor is not None and body.server_assignor not in cg.ASSIGNORS:
            return fail(ec.UNSUPPORTED_ASSIGNOR, f"ServerAssignor {body.server_assignor} is not supported. "
                                                 f"Supported assignors: {', '.join(cg.ASSIGNORS)}.")
        classic = self.groups.get(gid)
        if classic is not None and (classic.members or classic.state != EMPTY):
            return fail(ec.GROUP_ID_NOT_FOUND, f"Group {gid} is not a consumer group.")
        group = self.consumer_groups.get(gid)
        if group is None and epoch != 0:
            return fail(ec.GROUP_ID_NOT_FOUND, f"Consumer group {gid} not found.")
        owned = None if body.topic_partitions is None else cg._from_wire(body.topic_partitions)
        if epoch not in (cg.LEAVE_EPOCH, cg.STATIC_LEAVE_EPOCH):
            if group is not None and self._consumer_group_full(group, body.member_id, body.instance_id):
                return fail(ec.GROUP_MAX_SIZE_REACHED, f"The consumer group has reached its maximum capacity of "
                                                       f"{self.config.consumer_max_size} members.")
            refused = self._member_refusal(group, body, epoch, owned) or _regex_refusal(regex)
            if refused is not None:
                return fail(*refused)
        created = group is None
        if group is None:
            if classic is not None:  # an empty classic group becomes a consumer group (its offsets stay)
                result.records.append((cr.group_metadata_key(gid), None))
                del self.groups[gid]
                self.metadata_values[gid] = None
            group = self.consumer_groups[gid] = cg.ConsumerGroup(gid)

        if epoch in (cg.LEAVE_EPOCH, cg.STATIC_LEAVE_EPOCH):
            if body.member_id not in group.members:
                return fail(ec.UNKNOWN_MEMBER_ID, f"Member {body.member_id} is not a member of group {gid}.")
            leaving = group.members[body.member_id]
            if epoch == cg.STATIC_LEAVE_EPOCH and leaving.instance_id is not None:
                # KIP-848's static leave: the member keeps its place and partitions for its session, so the same
                # instance restarting takes them back without a rebalance
                leaving.epoch, leaving.previous_epoch = cg.STATIC_LEAVE_EPOCH, leaving.epoch
                result.records.extend(cg.current_records(gid, leaving))
            else:
                self._remove_consumer(group, body.member_id, result)
            result.reply(token, api, w.ConsumerGroupHeartbeatResponse(
                throttle_time_ms=0, error_code=0, member_id=body.member_id, member_epoch=epoch,
                heartbeat_interval_ms=0, assignment=None))
            return result

        bump = False
        if epoch == 0:
            member_id = body.member_id or self._new_id()
            m = group.members.get(member_id)
            holder = _static_holder(group, body.instance_id, member_id)
            if holder is not None:  # the static member came back: the new member id takes its place
                m = cg.ConsumerMember(member_id)
                for attr in ("instance_id", "rack_id", "subscribed", "regex", "matched", "rebalance_timeout_ms",
                             "assignor", "state", "assigned", "revoking"):
                    setattr(m, attr, getattr(holder, attr))
                m.epoch, m.previous_epoch = holder.previous_epoch, -1
                del group.members[holder.member_id]
                group.members[member_id] = m
                target = group.target.pop(holder.member_id, None)
                result.records.extend(cg.removal_records(gid, holder.member_id))
                result.records.extend(cg.member_records(gid, m))
                if target is not None:
                    group.target[member_id] = target
                    result.records.extend(cg.target_records(group, [member_id]))
                result.records.extend(cg.current_records(gid, m))
                owned = None
            elif m is None:  # a bump follows from what it subscribes to, not from its arrival
                m = group.members[member_id] = cg.ConsumerMember(member_id)
            else:  # a member joining again starts over (it gave up its partitions)
                m.epoch, m.previous_epoch, m.state, m.assigned, m.revoking = 0, -1, cg.STABLE, {}, {}
            if holder is None:
                owned = {}
        else:
            m = group.members[body.member_id]  # _member_refusal found it
        before_meta = (m.instance_id, m.rack_id, m.client_id, m.client_host, list(m.subscribed), m.regex,
                       m.rebalance_timeout_ms, m.assignor)
        if body.instance_id is not None:
            m.instance_id = body.instance_id
        if body.rack_id is not None:
            m.rack_id = body.rack_id
        if body.rebalance_timeout_ms != -1:
            m.rebalance_timeout_ms = body.rebalance_timeout_ms
        if body.subscribed_topic_names is not None:
            if sorted(body.subscribed_topic_names) != sorted(m.subscribed):
                bump = True
            m.subscribed = sorted(set(body.subscribed_topic_names))
        if body.server_assignor is not None:
            m.assignor = body.server_assignor
        if version >= 1 and body.subscribed_topic_regex is not None:
            m.regex = regex
        m.client_id, m.client_host = client_id, client_host
        after_meta = (m.instance_id, m.rack_id, m.client_id, m.client_host, list(m.subscribed), m.regex,
                      m.rebalance_timeout_ms, m.assignor)
        resolved: dict[str, set[str]] = {}  # each regex of the group resolved once against the image as it is now
        names = None
        for member in group.members.values():
            if member.regex is not None and member.regex not in resolved:
                names = list(all_topics()) if names is None else names
                resolved[member.regex] = _resolve(member.regex, names)
            matched = resolved.get(member.regex, set()) if member.regex is not None else set()
            if matched != member.matched:
                member.matched = matched
                bump = True  # what a member subscribes to changed
        if after_meta != before_meta or epoch == 0:
            result.records.extend(cg.member_records(gid, m))
        metadata = {}
        for name in sorted(group.subscribed_topic_names()):
            found = topics(name)
            if found is not None:
                metadata[name] = found
        # Kafka 4.4 moves a new group off epoch 0 on its own, then bumps for the first member's subscription as for
        # any change: a group first joined with topics to subscribe to is at epoch 2, one joined with none at 1
        bumps = int(created) + int(bump or metadata != group.topics)
        if bumps:
            group.epoch += bumps
            group.topics = metadata
            result.records.extend(cg.epoch_records(group))
        self._retarget(group, result)
        before = (m.epoch, m.state, cg._copy(m.assigned), cg._copy(m.revoking))
        cg.reconcile(group, m, owned)
        if (m.epoch, m.state, m.assigned, m.revoking) != before:
            result.records.extend(cg.current_records(gid, m))
            if m.state == cg.UNREVOKED_PARTITIONS and before[1] != cg.UNREVOKED_PARTITIONS:
                m.revocation_deadline_ms = now_ms + m.rebalance_timeout_ms
        m.deadline_ms = now_ms + self.consumer_session_ms(gid)
        full = epoch == 0 or m.assigned != before[2] or (owned is not None and owned != m.assigned)
        R = w.ConsumerGroupHeartbeatResponse
        result.reply(token, api, R(
            throttle_time_ms=0, error_code=0, member_id=m.member_id, member_epoch=m.epoch,
            heartbeat_interval_ms=self.consumer_heartbeat_ms(gid),
            assignment=R.Assignment(topic_partitions=cg._wire(m.assigned, R.TopicPartitions)) if full else None))
        return result

    @staticmethod
    def _member_refusal(group: cg.ConsumerGroup | None, body, epoch: int, owned) -> tuple[int, str] | None:
        """Why a joining or heartbeating member is refused before anything about it changes: at epoch 0 another
        live member holding its static instance id, later an unknown member or a fenced epoch. Kafka's group
        coordinator makes these checks before it looks at the member's regex."""
        gid = body.group_id
        if epoch == 0:
            holder = None if group is None else _static_holder(group, body.instance_id, body.member_id)
            if holder is not None and holder.epoch != cg.STATIC_LEAVE_EPOCH:  # Kafka 4.4's words
                return ec.UNRELEASED_INSTANCE_ID, (f"Static member {body.member_id} with instance id "
                                                   f"{body.instance_id} cannot join the group because the instance "
                                                   f"id is owned by {holder.member_id} member.")
            return None
        m = group.members.get(body.member_id)
        if m is None:
            return ec.UNKNOWN_MEMBER_ID, f"Member {body.member_id} is not a member of group {gid}."
        if epoch > m.epoch:
            return ec.FENCED_MEMBER_EPOCH, _fenced_message("greater", epoch, m.epoch)
        if epoch < m.epoch and not (epoch == m.previous_epoch and owned is not None
                                    and all(ps <= m.assigned.get(t, set()) for t, ps in owned.items())):
            return ec.FENCED_MEMBER_EPOCH, _fenced_message("smaller", epoch, m.epoch)
        return None

    def _retarget(self, group: cg.ConsumerGroup, result: Result) -> None:
        if group.epoch <= group.assignment_epoch:
            return
        new = cg.assign(group, group.topics)
        changed = [mid for mid in sorted(group.members) if new.get(mid, {}) != group.target.get(mid, {})]
        group.target = new
        group.assignment_epoch = group.epoch
        result.records.extend(cg.target_records(group, changed))

    def _remove_consumer(self, group: cg.ConsumerGroup, member_id: str, result: Result) -> None:
        group.members.pop(member_id, None)
        group.target.pop(member_id, None)
        result.records.extend(cg.removal_records(group.group_id, member_id))
        group.epoch += 1
        result.records.extend(cg.epoch_records(group))
        self._retarget(group, result)

    def consumer_describe(self, group_id: str, topic_names: dict):
        """ConsumerGroupDescribe of one group (``topic_names``: topic id -> name). v1's MemberType (KIP-1099) is
        CONSUMER_MEMBER for every member: kraftwire's consumer groups hold no classic members."""
        R = w.ConsumerGroupDescribeResponse
        if not group_id:  # Kafka's coordinator service refuses an empty id before any shard (no message)
            return cg.refused_description(group_id, ec.INVALID_GROUP_ID)
        g = self.consumer_groups.get(group_id)
        if g is None:  # Kafka sets the id, the error and its message only: the state is "", the epochs 0
            return R.DescribedGroup(error_code=ec.GROUP_ID_NOT_FOUND, error_message=f"Group {group_id} not found.",
                                    group_id=group_id, authorized_operations=NO_AUTHORIZED_OPERATIONS)

        def parts(a):
            return R.Assignment(topic_partitions=[
                R.TopicPartitions(topic_id=t, topic_name=topic_names.get(t, ""), partitions=sorted(ps))
                for t, ps in sorted(a.items(), key=lambda x: str(x[0]))])

        return R.DescribedGroup(error_code=0, group_id=group_id, group_state=g.state(), group_epoch=g.epoch,
                                assignment_epoch=g.assignment_epoch, assignor_name=g.assignor_name(), members=[
                                    R.Member(member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                                             member_epoch=m.epoch, client_id=m.client_id, client_host=m.client_host,
                                             subscribed_topic_names=list(m.subscribed),
                                             # Kafka's member holds "" for no regex, and describes it so
                                             subscribed_topic_regex=m.regex if m.regex is not None else "",
                                             assignment=parts(m.assigned),
                                             target_assignment=parts(g.target.get(m.member_id, {})),
                                             member_type=CONSUMER_MEMBER)
                                    for m in g.members.values()], authorized_operations=NO_AUTHORIZED_OPERATIONS)

    def _consumer_tick(self, now_ms: int, result: Result) -> None:
        for g in list(self.consumer_groups.values()):
            for m in list(g.members.values()):
                expired = now_ms >= m.deadline_ms
                stuck = m.state == cg.UNREVOKED_PARTITIONS and now_ms >= m.revocation_deadline_ms
                if expired or stuck:
                    self._remove_consumer(g, m.member_id, result)

    # ================================================================================================ offsets
    def offset_commit(self, body, version: int, token, now_ms: int) -> Result:
        """OffsetCommit for topics the edge checked: ``body.topics`` lists only partitions to write; the edge merges
        the answers with its own refusals (unknown topics)."""
        result = Result()
        R = w.OffsetCommitResponse
        answer = [R.OffsetCommitResponseTopic(name=t.name, partitions=[
            R.OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=0)
            for p in t.partitions]) for t in body.topics]

        def fail(code: int) -> Result:
            for t in answer:
                for p in t.partitions:
                    p.error_code = code
            result.reply(token, "OffsetCommit", R(throttle_time_ms=0, topics=answer))
            return result

        generation = body.generation_id_or_member_epoch if version >= 1 else -1
        member_id = body.member_id if version >= 1 else ""
        instance_id = body.group_instance_id if version >= 7 else None
        consumer_group = self.consumer_groups.get(body.group_id)
        g = self.groups.get(body.group_id)
        if consumer_group is not None:
            if generation < 0 and not member_id:
                if consumer_group.members:  # an admin's commit needs an empty group
                    return fail(ec.UNKNOWN_MEMBER_ID)
            else:
                cm = consumer_group.members.get(member_id)
                if cm is None:
                    return fail(ec.UNKNOWN_MEMBER_ID)
                if version < 9:
                    return fail(ec.UNSUPPORTED_VERSION)  # a consumer-protocol member commits with v9+
                if generation != cm.epoch:
                    return fail(ec.STALE_MEMBER_EPOCH)
        elif g is None:
            if generation >= 0:
                # Kafka 4.x: GROUP_ID_NOT_FOUND from v9 (it works for both protocols), ILLEGAL_GENERATION before
                return fail(ec.GROUP_ID_NOT_FOUND if version >= 9 else ec.ILLEGAL_GENERATION)
            g = self._get_or_create(body.group_id, now_ms)  # a "simple" group: offsets without membership
        else:
            code = _classic_commit_error(g, member_id, instance_id, generation)
            if code:
                return fail(code)
            if g.state in (STABLE, PREPARING):  # the commit keeps the member's session (Kafka's rule)
                m = g.members[member_id]
                m.deadline_ms = now_ms + m.session_ms
        expire = -1  # none: the group's retention applies
        if version in (2, 3, 4) and body.retention_time_ms != -1:  # Kafka: any RetentionTimeMs but -1 is one
            expire = (now_ms + body.retention_time_ms + 2**63) % 2**64 - 2**63  # a Java long: wraps, never fails
        for t, rt in zip(body.topics, answer):
            for p, rp in zip(t.partitions, rt.partitions):
                metadata = p.committed_metadata or ""
                if len(metadata.encode("utf-8")) > self.config.offset_metadata_max_bytes:
                    rp.error_code = ec.OFFSET_METADATA_TOO_LARGE
                    continue
                epoch = p.committed_leader_epoch if version >= 6 else -1
                result.records.append((cr.offset_commit_key(body.group_id, t.name, p.partition_index),
                                       cr.offset_commit_value(p.committed_offset, epoch, metadata, now_ms, expire)))
        result.reply(token, "OffsetCommit", R(throttle_time_ms=0, topics=answer))
        return result

    def txn_offset_commit(self, body, version: int, token, now_ms: int) -> Result:
        """TxnOffsetCommit for partitions the edge checked: the records are the OffsetCommit ones; the edge appends
        them as a transactional batch of the producer, and they stay pending until its marker (``complete_txn``).
        A v3+ request naming a member is checked against the group as Kafka checks it (unknown member, stale
        generation, fenced static instance)."""
        result = Result()
        R = w.TxnOffsetCommitResponse
        answer = [R.TxnOffsetCommitResponseTopic(name=t.name, partitions=[
            R.TxnOffsetCommitResponsePartition(partition_index=p.partition_index, error_code=0)
            for p in t.partitions]) for t in body.topics]

        def fail(code: int) -> Result:
            for t in answer:
                for p in t.partitions:
                    p.error_code = code
            result.reply(token, "TxnOffsetCommit", R(throttle_time_ms=0, topics=answer))
            return result

        if not body.group_id:
            return fail(ec.INVALID_GROUP_ID)
        generation = body.generation_id_or_member_epoch if version >= 3 else -1
        member_id = body.member_id if version >= 3 else ""
        instance_id = body.group_instance_id if version >= 3 else None
        consumer_group = self.consumer_groups.get(body.group_id)
        g = self.groups.get(body.group_id)
        if consumer_group is not None and member_id:
            cm = consumer_group.members.get(member_id)
            if cm is None:
                return fail(ec.UNKNOWN_MEMBER_ID)
            if generation >= 0 and generation != cm.epoch:
                return fail(ec.ILLEGAL_GENERATION)
        elif g is not None and g.state == DEAD:
            return fail(ec.COORDINATOR_NOT_AVAILABLE)
        elif g is not None and (member_id or generation >= 0):
            if g.fenced(member_id, instance_id):
                return fail(ec.FENCED_INSTANCE_ID)
            if member_id and member_id not in g.members:
                return fail(ec.UNKNOWN_MEMBER_ID)
            if generation >= 0 and generation != g.generation:
                return fail(ec.ILLEGAL_GENERATION)
        elif g is None and consumer_group is None:
            self._get_or_create(body.group_id, now_ms)  # Kafka creates the (simple) group for the offsets
        for t, rt in zip(body.topics, answer):
            for p, rp in zip(t.partitions, rt.partitions):
                metadata = p.committed_metadata or ""
                if len(metadata.encode("utf-8")) > self.config.offset_metadata_max_bytes:
                    rp.error_code = ec.OFFSET_METADATA_TOO_LARGE
                    continue
                epoch = p.committed_leader_epoch if version >= 2 else -1
                result.records.append((cr.offset_commit_key(body.group_id, t.name, p.partition_index),
                                       cr.offset_commit_value(p.committed_offset, epoch, metadata, now_ms, -1)))
        result.reply(token, "TxnOffsetCommit", R(throttle_time_ms=0, topics=answer))
        return result

    def fetch_error(self, group_id: str, member_id: str | None, member_epoch: int) -> int:
        """OffsetFetch v9 from a consumer-protocol member: its epoch must be current (STALE_MEMBER_EPOCH)."""
        group = self.consumer_groups.get(group_id)
        if group is None or not member_id:
            return 0
        m = group.members.get(member_id)
        if m is None:
            return ec.UNKNOWN_MEMBER_ID
        return ec.STALE_MEMBER_EPOCH if member_epoch != m.epoch else 0

    def committed_offsets(self, group_id: str, topics: list[tuple[str, list[int]]] | None
                          ) -> list[tuple[str, list[tuple[int, OffsetEntry | None]]]]:
        """OffsetFetch: the committed offsets asked for (``topics`` None: every partition the group has one for)."""
        held = self.committed.get(group_id, {})
        if topics is None:
            wanted: dict[str, list[int]] = {}
            for topic, part in held:
                wanted.setdefault(topic, []).append(part)
            topics = [(t, sorted(ps)) for t, ps in sorted(wanted.items())]
        return [(t, [(p, held.get((t, p))) for p in parts]) for t, parts in topics]

    # ================================================================================================ admin
    def state_of(self, group_id: str) -> tuple[str, str]:
        if group_id in self.consumer_groups:
            return self.consumer_groups[group_id].state(), "consumer"
        g = self.groups.get(group_id)
        if g is None:
            return EMPTY, ""
        return g.state, g.protocol_type or ""

    def list_groups(self, states: set[str] | None, types: set[str] | None) -> list[tuple[str, str, str]]:
        """(group id, protocol type, state) of every group, filtered by state and type (case-insensitive)."""
        out = []
        for group_id in self.group_ids():
            state, protocol_type = self.state_of(group_id)
            kind = "consumer" if group_id in self.consumer_groups else "classic"
            if states and state.lower() not in states:
                continue
            if types and kind not in types:
                continue
            out.append((group_id, protocol_type, state, kind))
        return out

    def describe_group(self, group_id: str, version: int):
        """DescribeGroups for one group. A group that does not exist (or is Dead) is described as Dead with no
        error before v6, and from v6 on (KIP-1043) as GROUP_ID_NOT_FOUND "Group <id> not found.", as Kafka 4.4
        answers; a KIP-848 consumer group is not a classic group and answers GROUP_ID_NOT_FOUND at every version."""
        R = w.DescribeGroupsResponse
        if group_id in self.consumer_groups:  # Kafka: DescribeGroups is for classic groups
            return R.DescribedGroup(error_code=ec.GROUP_ID_NOT_FOUND, group_id=group_id, group_state="Dead",
                                    protocol_type="", protocol_data="", members=[],
                                    authorized_operations=NO_AUTHORIZED_OPERATIONS)
        g = self.groups.get(group_id)
        if g is None and group_id not in self.committed or g is not None and g.state == DEAD:
            missing = version >= 6
            return R.DescribedGroup(error_code=ec.GROUP_ID_NOT_FOUND if missing else ec.NONE,
                                    error_message=f"Group {group_id} not found." if missing else None,
                                    group_id=group_id, group_state=DEAD, protocol_type="", protocol_data="",
                                    members=[], authorized_operations=NO_AUTHORIZED_OPERATIONS)
        state, protocol_type = self.state_of(group_id)
        stable = g is not None and g.state == STABLE
        # Kafka's describeNoMetadata outside Stable: no metadata, the assignment the member holds
        members = [R.DescribedGroupMember(member_id=m.member_id, group_instance_id=m.instance_id,
                                          client_id=m.client_id, client_host=m.client_host,
                                          member_metadata=m.metadata_for(g.protocol_name) if stable else b"",
                                          member_assignment=m.assignment)
                   for m in (g.members.values() if g is not None else ())]
        return R.DescribedGroup(error_code=0, group_id=group_id, group_state=state, protocol_type=protocol_type,
                                protocol_data=(g.protocol_name or "") if stable else "", members=members,
                                authorized_operations=NO_AUTHORIZED_OPERATIONS)

    def delete_group(self, group_id: str, result: Result) -> int:
        """DeleteGroups for one group: its error code; tombstones for its offsets and metadata go to ``result``."""
        consumer_group = self.consumer_groups.get(group_id)
        if consumer_group is not None:
            if consumer_group.members:
                return ec.NON_EMPTY_GROUP
            for topic, part in sorted(self.offsets.get(group_id, {})):
                result.records.append((cr.offset_commit_key(group_id, topic, part), None))
            result.records.extend(cg.group_tombstones(consumer_group))
            del self.consumer_groups[group_id]
            return 0
        g = self.groups.get(group_id)
        if g is not None and g.state == DEAD:
            return ec.GROUP_ID_NOT_FOUND
        if g is not None and g.members:
            return ec.NON_EMPTY_GROUP
        if g is None and group_id not in self.committed and group_id not in self.offsets:
            return ec.GROUP_ID_NOT_FOUND
        self._group_tombstones(group_id, result)
        self.groups.pop(group_id, None)
        return 0

    def offset_delete(self, body, known: list[tuple[str, int]], token, unreadable: frozenset[str] = frozenset()
                      ) -> Result:
        """OffsetDelete: tombstones for the group's offsets of ``known`` partitions (the ones the metadata holds and
        the principal may READ; the partitions of an ``unreadable`` topic are TOPIC_AUTHORIZATION_FAILED, the others
        UNKNOWN_TOPIC_OR_PARTITION, as Kafka's KafkaApis checks the ACLs before the metadata), the answer after
        them."""
        R = w.OffsetDeleteResponse
        result = Result()
        error, per = self.delete_offsets(body.group_id, known, result) if body.group_id else (ec.INVALID_GROUP_ID, {})
        if error:
            result.reply(token, "OffsetDelete", R(error_code=error, throttle_time_ms=0, topics=[]))
            return result
        result.reply(token, "OffsetDelete", R(error_code=0, throttle_time_ms=0, topics=[
            R.OffsetDeleteResponseTopic(name=t.name, partitions=[R.OffsetDeleteResponsePartition(
                partition_index=p.partition_index,
                error_code=per.get((t.name, p.partition_index), ec.TOPIC_AUTHORIZATION_FAILED
                                   if t.name in unreadable else ec.UNKNOWN_TOPIC_OR_PARTITION))
                for p in t.partitions]) for t in body.topics]))
        return result

    def delete_offsets(self, group_id: str, partitions: list[tuple[str, int]], result: Result
                       ) -> tuple[int, dict[tuple[str, int], int]]:
        """OffsetDelete: (group error, per-partition errors); tombstones go to ``result``."""
        g = self.groups.get(group_id)
        consumer_group = self.consumer_groups.get(group_id)
        if g is None and consumer_group is None and group_id not in self.committed:
            return ec.GROUP_ID_NOT_FOUND, {}
        subscribed: set[str] | None = set()
        if consumer_group is not None:
            subscribed = consumer_group.subscribed_topic_names()
        if g is not None and g.members:
            if g.protocol_type != "consumer":
                return ec.NON_EMPTY_GROUP, {}
            subscribed = g.subscribed_topics()
        held = self.offsets.get(group_id, {})
        errors = {}
        for tp in partitions:
            if subscribed is None or tp[0] in subscribed:
                errors[tp] = ec.GROUP_SUBSCRIBED_TO_TOPIC
                continue
            errors[tp] = 0
            if tp in held:
                result.records.append((cr.offset_commit_key(group_id, *tp), None))
        return 0, errors

    # ================================================================================================ timers
    def tick(self, now_ms: int) -> Result:
        """Complete rebalances whose time came, expire members and offsets."""
        result = Result()
        if not self.live:
            return result
        for g in list(self.groups.values()):
            for member_id, deadline in list(g.pending.items()):
                if now_ms >= deadline:
                    del g.pending[member_id]
            if g.state == PREPARING:
                if now_ms >= g.rebalance_deadline_ms:
                    self._complete_join(g, now_ms, result)
                else:
                    # Kafka's heartbeat expiry runs in every state: a member that has not rejoined goes when its
                    # session ends, and the join completes once the rest have joined (an emptied group at once)
                    for m in [m for m in g.members.values()
                              if m.join is None and m.sync is None and now_ms >= m.deadline_ms]:
                        self._remove(g, m, result)
                    self._maybe_complete_join(g, now_ms, result)
                continue
            if g.state == COMPLETING and now_ms >= g.sync_deadline_ms:
                # Kafka: members that did not sync in time are removed (all of them while the leader has not)
                for m in [m for m in g.members.values() if m.sync is None]:
                    self._remove(g, m, result)
                self._member_left(g, now_ms, result)
                continue
            expired = [m for m in g.members.values()
                       if m.join is None and m.sync is None and now_ms >= m.deadline_ms]
            for m in expired:
                self._remove(g, m, result)
            if expired:
                self._member_left(g, now_ms, result)
        self._consumer_tick(now_ms, result)
        if self._next_expiry_ms is not None and now_ms >= self._next_expiry_ms:
            self._next_expiry_ms = now_ms + self.config.offsets_retention_check_interval_ms
            self._expire_offsets(now_ms, result)
        return result

    def _expire_offsets(self, now_ms: int, result: Result) -> None:
        """Kafka's offset expiration: explicit expiry times, else ``offsets.retention.ms`` counted from when an Empty
        group became empty (from the commit for groups without membership); a group with members keeps the offsets of
        the topics it subscribes to. An Empty group left without offsets is deleted."""
        retention = self.config.offsets_retention_ms
        for group_id in sorted(self.offsets):
            g = self.groups.get(group_id)
            if g is not None and g.state not in (EMPTY, STABLE):
                continue
            subscribed = g.subscribed_topics() if g is not None and g.members else set()
            if g is not None and g.members and (g.protocol_type != "consumer" or subscribed is None):
                continue  # Kafka keeps every offset of a live non-consumer group or one it cannot read
            consumer_group = self.consumer_groups.get(group_id)
            if consumer_group is not None:  # a KIP-848 group keeps what its members subscribe to; the rest by age
                subscribed = consumer_group.subscribed_topic_names()
            expired = []
            for tp, e in self.offsets[group_id].items():
                if e.expire_timestamp != -1:
                    gone = now_ms >= e.expire_timestamp
                elif g is not None and g.state == EMPTY and g.protocol_type:
                    gone = now_ms - g.state_ms >= retention
                else:
                    gone = now_ms - e.commit_timestamp >= retention
                if gone and tp[0] not in subscribed:
                    expired.append(tp)
            for tp in sorted(expired):
                result.records.append((cr.offset_commit_key(group_id, *tp), None))
            if expired and len(expired) == len(self.offsets[group_id]) and consumer_group is None and (g is None or (
                    g.state == EMPTY and not g.members)):
                result.records.append((cr.group_metadata_key(group_id), None))
                self.groups.pop(group_id, None)

    def next_deadline_ms(self) -> int | None:
        """The earliest time ``tick`` has something to do (the edge's timer)."""
        times = []
        for g in self.groups.values():
            if g.state == PREPARING:
                times.append(g.rebalance_deadline_ms)
            elif g.state == COMPLETING:
                times.append(g.sync_deadline_ms)
            if g.state != COMPLETING:
                times.extend(m.deadline_ms for m in g.members.values() if m.join is None and m.sync is None)
            times.extend(g.pending.values())
        for cgroup in self.consumer_groups.values():
            times.extend(m.deadline_ms for m in cgroup.members.values())
        if self._next_expiry_ms is not None:
            times.append(self._next_expiry_ms)
        return min(times) if times else None


def _classic_commit_error(g: Group, member_id: str, instance_id: str | None, generation: int) -> int:
    """Why a (non-transactional) OffsetCommit into classic group ``g`` is refused, 0 if it is not; in the order of
    Kafka 4.x's group coordinator (``ClassicGroup.validateOffsetCommit``): Dead; an empty group takes a commit without
    a generation; a commit naming a member (or a generation, or an instance) needs the static instance held by that
    member, the member and its generation; one naming none needs an empty group; only then a group completing its
    rebalance answers REBALANCE_IN_PROGRESS (the member is current, it just has not synced)."""
    if g.state == DEAD:
        return ec.COORDINATOR_NOT_AVAILABLE
    if generation < 0 and g.state == EMPTY:
        return 0
    if generation >= 0 or member_id or instance_id is not None:
        if instance_id is not None:
            holder = g.static.get(instance_id)
            if holder is None:
                return ec.UNKNOWN_MEMBER_ID
            if holder != member_id:
                return ec.FENCED_INSTANCE_ID
        if member_id not in g.members:
            return ec.UNKNOWN_MEMBER_ID
        if generation != g.generation:
            return ec.ILLEGAL_GENERATION
    else:
        return ec.UNKNOWN_MEMBER_ID  # no member named, and the group has members
    return ec.REBALANCE_IN_PROGRESS if g.state == COMPLETING else 0


def _static_holder(group: cg.ConsumerGroup, instance_id: str | None, member_id: str):
    """The member other than ``member_id`` that holds static ``instance_id`` in ``group``, or None."""
    if instance_id is None:
        return None
    return next((x for x in group.members.values() if x.instance_id == instance_id and x.member_id != member_id), None)


def _fenced_message(which: str, received: int, known: int) -> str:
    """Kafka's words for a heartbeat at an epoch the member is not at (and not the one before it, the answer lost)."""
    return (f"The consumer group member has a {which} member epoch ({received}) than the one known by the group "
            f"coordinator ({known}). The member must abandon all its partitions and rejoin.")


def _regex_refusal(regex: str | None) -> tuple[int, str] | None:
    """Kafka's answer to a SubscribedTopicRegex RE2/J refuses (its words around RE2/J's description), or None."""
    if regex is None:
        return None
    try:
        re2j.compile(regex)
    except re2j.PatternError as exc:
        return ec.INVALID_REGULAR_EXPRESSION, (f"SubscribedTopicRegex `{regex}` is not a valid regular expression: "
                                               f"{exc.description}.")
    return None


def _resolve(regex: str, names) -> set[str]:
    """The topics among ``names`` that ``regex`` matches whole (RE2: linear in each name, so a client's pattern
    cannot hold the coordinator). A regex RE2/J refuses, which only a log written before they were refused can
    hold, matches nothing, as Kafka resolves one it cannot compile to no topics."""
    try:
        pattern = re2j.compile(regex)
    except re2j.PatternError:
        return set()
    return {n for n in names if pattern.fullmatch(n)}


def _counter() -> Callable[[], str]:
    n = [0]

    def next_id() -> str:
        n[0] += 1
        return f"{n[0]:08d}"

    return next_id
