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
from typing import Any, Callable

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group import consumer as cg
from kraftwire.coordinator.group import share as sg
from kraftwire.coordinator.group.admin import GroupAdmin
from kraftwire.coordinator.group.share_admin import ShareAdmin
from kraftwire.coordinator.group.classic import ClassicProtocol
from kraftwire.coordinator.group.consumer_protocol import ConsumerProtocol
from kraftwire.coordinator.group.model import (
    COMPLETING, CONSUMER_MEMBER, DEAD, EMPTY, NO_AUTHORIZED_OPERATIONS, PREPARING, STABLE, STATES, Group, GroupConfig,
    Member, OffsetEntry, Reply, Result, Waiting, error_response, refusal, subscription_topics)
from kraftwire.coordinator.group.offsets import (TOPIC_IDS_SINCE, TXN_TOPIC_IDS_SINCE, Offsets, fetch_requests,
                                                 offset_fetch_response, refused_first)
from kraftwire.coordinator.group.share_protocol import ShareProtocol

#: the shard's public surface: the edge and the tests import these from here
__all__ = ["COMPLETING", "CONSUMER_MEMBER", "DEAD", "EMPTY", "NO_AUTHORIZED_OPERATIONS", "PREPARING", "STABLE",
           "STATES", "Group", "GroupConfig", "GroupShard", "Member", "OffsetEntry", "Reply", "Result", "Waiting",
           "error_response", "fetch_requests", "offset_fetch_response", "refusal", "refused_first", "TOPIC_IDS_SINCE",
           "TXN_TOPIC_IDS_SINCE",
           "subscription_topics"]


class GroupShard(ClassicProtocol, ConsumerProtocol, ShareProtocol, ShareAdmin, Offsets, GroupAdmin):
    """The groups of one ``__consumer_offsets`` partition and their committed offsets: the log's replay, loading and
    unloading, and the timers here; the requests in the parts it is made of (``classic``, ``consumer_protocol``,
    ``share_protocol``, ``offsets``, ``admin``)."""

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
        #: KIP-932 share groups, by group id, and their records as the log holds them (as ``consumer_log``)
        self.share_groups: dict[str, sg.ShareGroup] = {}
        self.share_log: dict[bytes, tuple[int, bytes]] = {}
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
        elif rec.record_type in sg.SHARE_RECORD_TYPES:
            if value is None:
                self.share_log.pop(bytes(key), None)
            else:
                self.share_log[bytes(key)] = (rec.record_type, bytes(value))
            if not self.live:  # a live shard already holds what it wrote
                sg.replay(self.share_groups, rec)
        # type 9 (ShareGroupPartitionMetadata, removed before share groups were released) is skipped
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

    def loaded(self, now_ms: int) -> None:
        """The load reached the log end: serve. Members loaded from the log get a full session from now, as
        Kafka reschedules their heartbeats, so consumers carry on across a coordinator move without a rebalance."""
        self.live = True
        for g in self.groups.values():
            for m in g.members.values():
                m.deadline_ms = now_ms + m.session_ms
        self._consumer_deadlines(now_ms)
        self._share_deadlines(now_ms)
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
        self.share_groups = {}
        for key, (_type, value) in sorted(self.share_log.items(), key=lambda kv: _SHARE_REBUILD_ORDER[kv[1][0]]):
            sg.replay(self.share_groups, cr.decode(key, value))
        return out


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
        self._share_tick(now_ms, result)
        if self._next_expiry_ms is not None and now_ms >= self._next_expiry_ms:
            self._next_expiry_ms = now_ms + self.config.offsets_retention_check_interval_ms
            self._expire_offsets(now_ms, result)
        return result

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
        for sgroup in self.share_groups.values():
            times.extend(m.deadline_ms for m in sgroup.members.values())
        if self._next_expiry_ms is not None:
            times.append(self._next_expiry_ms)
        return min(times) if times else None

#: the order a share group is rebuilt from its records in: the group epoch first (it creates the group), a member's
#: metadata before its current assignment (which needs the member)
_SHARE_REBUILD_ORDER = {sg.GROUP_METADATA: 0, sg.MEMBER_METADATA: 1, sg.CURRENT_ASSIGNMENT: 2, sg.TARGET_METADATA: 3,
                        sg.TARGET_MEMBER: 4, sg.STATE_PARTITIONS: 5}


def _counter() -> Callable[[], str]:
    n = [0]

    def next_id() -> str:
        n[0] += 1
        return f"{n[0]:08d}"

    return next_id
