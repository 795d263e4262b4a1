"""KIP-932's share groups in the group coordinator: the model, its records and their replay, pure.

**Membership** is KIP-848's without revocation: a share group has a *group epoch* (bumped when a member joins,
leaves or changes its subscription, or the subscribed topics change in the metadata image), a *target assignment*
from the ``simple`` assignor (``share_assignor``) at an *assignment epoch*, and each member a *member epoch*. Since
a partition may be consumed by several members at once, nothing is revoked: a member behind the target moves to
it at once (Kafka's ``ShareGroupAssignmentBuilder``), its assignment filtered to the topics it subscribes to.

**Share-partition state.** A partition can be assigned only once the share coordinator holds its state for the
group (InitializeShareGroupState). The group's *state-partition metadata* records which subscribed partitions are
*initializing* (asked of the share coordinator, with the time of asking) and *initialized* (answered); an
initializing topic older than ``group.share.initialize.retry.interval.ms`` is asked again.

**Records** (Kafka's ``__consumer_offsets`` types 10-15): member metadata (10), the group epoch and metadata hash
(11), the target assignment metadata (12) and per member (13), each member's current assignment (14), and the
state-partition metadata (15). A member's removal writes tombstones for its current assignment, target and metadata
and bumps the group epoch. ``replay`` rebuilds the groups from them.

**The metadata hash** stands for the subscribed topics' ids and partition counts: the group epoch moves when it
changes. Kafka hashes each topic with Murmur3 (racks included); kraftwire's hash is a BLAKE2b of the same facts, so
the field is kraftwire's value (a group loaded from Kafka's records recomputes it at its first heartbeat, one extra
epoch bump).
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable

from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group.consumer import assignment_from_wire, assignment_to_wire
from kraftwire.coordinator.group.share_assignor import Assignment
from kraftwire.protocol import messages as w

MEMBER_METADATA, GROUP_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT, STATE_PARTITIONS = (
    10, 11, 12, 13, 14, 15)
SHARE_RECORD_TYPES = frozenset((MEMBER_METADATA, GROUP_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT,
                                STATE_PARTITIONS))
EMPTY, STABLE = "Empty", "Stable"
LEAVE_EPOCH = -1
STABLE_MEMBER = 0  # MemberState.STABLE: a share member is always reconciled

#: topic name -> (topic id, partition count) as the metadata image says, or None for a topic it does not hold
TopicLookup = Callable[[str], "tuple[Any, int] | None"]


class ShareMember:
    __slots__ = ("member_id", "rack_id", "client_id", "client_host", "subscribed", "epoch", "previous_epoch",
                 "assigned", "deadline_ms")

    def __init__(self, member_id: str) -> None:
        self.member_id = member_id
        self.rack_id: str | None = None
        self.client_id = ""
        self.client_host = ""
        self.subscribed: list[str] = []
        self.epoch = 0
        self.previous_epoch = 0
        self.assigned: Assignment = {}
        self.deadline_ms = 0

    def metadata_value(self):
        return w.ShareGroupMemberMetadataValue(rack_id=self.rack_id, client_id=self.client_id,
                                               client_host=self.client_host,
                                               subscribed_topic_names=list(self.subscribed))

    def assignment_value(self):
        V = w.ShareGroupCurrentMemberAssignmentValue
        return V(member_epoch=self.epoch, previous_member_epoch=self.previous_epoch, state=STABLE_MEMBER,
                 assigned_partitions=assignment_to_wire(self.assigned, V.TopicPartitions))


class InitTopic:
    """A topic of the state-partition metadata: its name, partitions, and when they were asked to initialize."""

    __slots__ = ("name", "partitions", "timestamp")

    def __init__(self, name: str, partitions: set[int], timestamp: int = -1) -> None:
        self.name, self.partitions, self.timestamp = name, set(partitions), timestamp

    def __eq__(self, other) -> bool:
        return isinstance(other, InitTopic) and (self.name, self.partitions) == (other.name, other.partitions)

    def __repr__(self) -> str:
        return f"InitTopic({self.name!r}, {sorted(self.partitions)}, {self.timestamp})"


#: a new group's epoch: Kafka 4.4's ModernGroup starts every group at 1, so a first member joins at epoch 2
NEW_GROUP_EPOCH = 1


class ShareGroup:
    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.epoch = NEW_GROUP_EPOCH
        self.metadata_hash = 0
        self.assignment_epoch = 0
        #: when the target assignment was last computed (ms; 0: never), for the assignment interval (KIP-1263)
        self.assignment_timestamp = 0
        self.members: dict[str, ShareMember] = {}
        self.target: dict[str, Assignment] = {}
        #: the state-partition metadata: topic id -> InitTopic
        self.initializing: dict[Any, InitTopic] = {}
        self.initialized: dict[Any, InitTopic] = {}
        self.deleting: dict[Any, str] = {}  # topic id -> name
        #: the group has a state-partition metadata record (written or replayed, not a tombstone), even one with no
        #: topics left in it: Kafka answers DeleteShareGroupOffsets per topic only then
        self.state_recorded = False
        #: the subscribed topics as the last heartbeat resolved them: name -> (topic id, partition count)
        self.topics: dict[str, tuple[Any, int]] = {}

    def state(self) -> str:
        return STABLE if self.members else EMPTY

    def subscribed_topic_names(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed}


def metadata_hash(topics: dict[str, tuple[Any, int]]) -> int:
    """A signed 64-bit hash of the subscribed topics' names, ids and partition counts (0 for none, as Kafka's)."""
    if not topics:
        return 0
    h = hashlib.blake2b(digest_size=8)
    for name in sorted(topics):
        topic_id, count = topics[name]
        h.update(f"{name}\0{topic_id}\0{count}\0".encode())
    return int.from_bytes(h.digest(), "big", signed=True)


# ==================================================================================================== records
def _key(cls, record_type: int, **fields) -> bytes:
    return cr.encode_key(cls(**fields), record_type)


def member_records(group_id: str, m: ShareMember) -> list[tuple[bytes, bytes | None]]:
    return [(_key(w.ShareGroupMemberMetadataKey, MEMBER_METADATA, group_id=group_id, member_id=m.member_id),
             cr.encode_value(m.metadata_value(), 0))]


def epoch_records(group: ShareGroup) -> list[tuple[bytes, bytes | None]]:
    return [(_key(w.ShareGroupMetadataKey, GROUP_METADATA, group_id=group.group_id),
             cr.encode_value(w.ShareGroupMetadataValue(epoch=group.epoch, metadata_hash=group.metadata_hash), 0))]


def target_records(group: ShareGroup, changed: list[str]) -> list[tuple[bytes, bytes | None]]:
    V = w.ShareGroupTargetAssignmentMemberValue
    out = [(_key(w.ShareGroupTargetAssignmentMemberKey, TARGET_MEMBER, group_id=group.group_id, member_id=mid),
            cr.encode_value(V(topic_partitions=assignment_to_wire(group.target.get(mid, {}), V.TopicPartition)), 0))
           for mid in changed]
    out.append((_key(w.ShareGroupTargetAssignmentMetadataKey, TARGET_METADATA, group_id=group.group_id),
                cr.encode_value(w.ShareGroupTargetAssignmentMetadataValue(
                    assignment_epoch=group.assignment_epoch, assignment_timestamp=group.assignment_timestamp), 0)))
    return out


def current_records(group_id: str, m: ShareMember) -> list[tuple[bytes, bytes | None]]:
    return [(_key(w.ShareGroupCurrentMemberAssignmentKey, CURRENT_ASSIGNMENT, group_id=group_id,
                  member_id=m.member_id), cr.encode_value(m.assignment_value(), 0))]


def removal_records(group_id: str, member_id: str) -> list[tuple[bytes, bytes | None]]:
    """Tombstones of a member's keys, in Kafka's order: current assignment, target, metadata."""
    return [(_key(w.ShareGroupCurrentMemberAssignmentKey, CURRENT_ASSIGNMENT, group_id=group_id, member_id=member_id),
             None),
            (_key(w.ShareGroupTargetAssignmentMemberKey, TARGET_MEMBER, group_id=group_id, member_id=member_id), None),
            (_key(w.ShareGroupMemberMetadataKey, MEMBER_METADATA, group_id=group_id, member_id=member_id), None)]


def state_partition_records(group: ShareGroup) -> list[tuple[bytes, bytes | None]]:
    V = w.ShareGroupStatePartitionMetadataValue
    group.state_recorded = True

    def infos(table: dict) -> list:
        return [V.TopicPartitionsInfo(topic_id=t, topic_name=i.name, partitions=sorted(i.partitions))
                for t, i in sorted(table.items(), key=lambda x: str(x[0]))]

    value = V(initializing_topics=infos(group.initializing), initialized_topics=infos(group.initialized),
              deleting_topics=[V.TopicInfo(topic_id=t, topic_name=n)
                               for t, n in sorted(group.deleting.items(), key=lambda x: str(x[0]))])
    return [(_key(w.ShareGroupStatePartitionMetadataKey, STATE_PARTITIONS, group_id=group.group_id),
             cr.encode_value(value, 0))]


def group_tombstones(group: ShareGroup) -> list[tuple[bytes, bytes | None]]:
    """What deleting an (empty) share group writes: its target, state-partition and group metadata tombstones."""
    gid = group.group_id
    out = []
    for mid in sorted(group.members):
        out.extend(removal_records(gid, mid))
    return out + [(_key(w.ShareGroupTargetAssignmentMetadataKey, TARGET_METADATA, group_id=gid), None),
                  (_key(w.ShareGroupStatePartitionMetadataKey, STATE_PARTITIONS, group_id=gid), None),
                  (_key(w.ShareGroupMetadataKey, GROUP_METADATA, group_id=gid), None)]


def replay(groups: dict[str, ShareGroup], rec, timestamp: int = -1) -> None:
    """Fold one share-group record (types 10-15) into ``groups``; initializing topics read from the log count as
    asked at ``timestamp`` (the record's own time is not in it; -1 asks again at the first heartbeat)."""
    key, value = rec.key, rec.value
    gid = key.group_id
    g = groups.get(gid)
    if rec.record_type == GROUP_METADATA:
        if value is None:
            groups.pop(gid, None)
            return
        g = g or groups.setdefault(gid, ShareGroup(gid))
        g.epoch, g.metadata_hash = value.epoch, value.metadata_hash
        return
    if g is None:
        if value is None:
            return
        g = groups.setdefault(gid, ShareGroup(gid))
    if rec.record_type == MEMBER_METADATA:
        if value is None:
            g.members.pop(key.member_id, None)
            return
        m = g.members.get(key.member_id) or g.members.setdefault(key.member_id, ShareMember(key.member_id))
        m.rack_id, m.client_id, m.client_host = value.rack_id, value.client_id, value.client_host
        m.subscribed = list(value.subscribed_topic_names)
    elif rec.record_type == TARGET_METADATA:
        g.assignment_epoch = 0 if value is None else value.assignment_epoch
        g.assignment_timestamp = 0 if value is None else value.assignment_timestamp
    elif rec.record_type == TARGET_MEMBER:
        if value is None:
            g.target.pop(key.member_id, None)
        else:
            g.target[key.member_id] = assignment_from_wire(value.topic_partitions)
    elif rec.record_type == CURRENT_ASSIGNMENT:
        m = g.members.get(key.member_id)
        if value is None or m is None:
            return
        m.epoch, m.previous_epoch = value.member_epoch, value.previous_member_epoch
        m.assigned = assignment_from_wire(value.assigned_partitions)
    elif rec.record_type == STATE_PARTITIONS:
        g.state_recorded = value is not None
        if value is None:
            g.initializing, g.initialized, g.deleting = {}, {}, {}
            return
        g.initializing = {t.topic_id: InitTopic(t.topic_name, set(t.partitions), timestamp)
                          for t in value.initializing_topics}
        g.initialized = {t.topic_id: InitTopic(t.topic_name, set(t.partitions)) for t in value.initialized_topics}
        g.deleting = {t.topic_id: t.topic_name for t in value.deleting_topics}


def error_heartbeat(code: int, message: str | None = None):
    """A refused ShareGroupHeartbeat as Kafka answers one: the error and its message, the rest the defaults."""
    return w.ShareGroupHeartbeatResponse(throttle_time_ms=0, error_code=code, error_message=message, member_id=None,
                                         member_epoch=0, heartbeat_interval_ms=0, assignment=None)
