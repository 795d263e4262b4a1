"""KIP-848's consumer groups (``group.protocol=consumer``): the server-side assignment and each member's
reconciliation, pure.

**The epochs.** A group has a *group epoch* (bumped whenever a member joins, leaves, changes its subscription, or the
subscribed topics change), a *target assignment* computed by the server-side assignor (``uniform``, the default, or
``range``) at an *assignment epoch*, and each member a *member epoch*: the target epoch it has reconciled to.

**Reconciliation** (Kafka's ``CurrentAssignmentBuilder``): a member behind the target keeps what it owns that is
still its target; what it must give up is *pending revocation* and it stays in its epoch (UNREVOKED_PARTITIONS)
until a heartbeat no longer lists them; then it moves to the target epoch and gets the rest of its target, except
partitions another member still holds (UNRELEASED_PARTITIONS), which it gets once released.

**Fencing.** A heartbeat with an epoch above the member's, or below it unless it is the previous epoch and the owned
partitions are still the member's (a lost response), is FENCED_MEMBER_EPOCH: the member drops its partitions and
joins again with epoch 0. Members silent past ``group.consumer.session.timeout.ms``, or holding revoked partitions
past their rebalance timeout, are removed.

**Subscriptions** are topic names or a regular expression (``SubscribedTopicRegex``, matched against the whole
name, internal topics excluded), resolved against the metadata image on every heartbeat: a change in what it
matches bumps the group epoch as a new subscription does.

**Records** (Kafka's ``__consumer_offsets`` types 3-8): member metadata, group epoch and subscribed-topic metadata,
the target assignment (per member, then its epoch) and each member's current assignment; a member's removal writes
tombstones for its three keys. ``replay`` rebuilds a group from them.
"""

from __future__ import annotations

from typing import Any, Callable

from kraftwire.coordinator import records as cr
from kraftwire.protocol import messages as w

STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS = 0, 1, 2
EMPTY, ASSIGNING, RECONCILING, GROUP_STABLE = "Empty", "Assigning", "Reconciling", "Stable"
ASSIGNORS = ("uniform", "range")
LEAVE_EPOCH, STATIC_LEAVE_EPOCH = -1, -2

#: topic name -> (topic id, partition count) as the metadata image says, or None for a topic it does not hold
TopicLookup = Callable[[str], "tuple[Any, int] | None"]  # (topic id, partition count)
Assignment = dict  # topic id -> set of partitions


def _copy(a: Assignment) -> Assignment:
    return {t: set(ps) for t, ps in a.items() if ps}


def _minus(a: Assignment, b: Assignment) -> Assignment:
    return {t: ps - b.get(t, set()) for t, ps in a.items() if ps - b.get(t, set())}


def _intersect(a: Assignment, b: Assignment) -> Assignment:
    return {t: ps & b.get(t, set()) for t, ps in a.items() if ps & b.get(t, set())}


def assignment_to_wire(a: Assignment, cls) -> list:
    """An assignment as the wire's topic-partitions list (``cls``), topics in id order, empty ones left out."""
    return [cls(topic_id=t, partitions=sorted(ps)) for t, ps in sorted(a.items(), key=lambda x: str(x[0])) if ps]


def assignment_from_wire(items) -> Assignment:
    """A topic-partitions list from the wire as an assignment (None: empty)."""
    out: Assignment = {}
    for tp in items or ():
        out.setdefault(tp.topic_id, set()).update(tp.partitions)
    return out


class ConsumerMember:
    __slots__ = ("member_id", "instance_id", "rack_id", "client_id", "client_host", "subscribed", "regex", "matched",
                 "rebalance_timeout_ms", "assignor", "epoch", "previous_epoch", "state", "assigned", "revoking",
                 "deadline_ms", "revocation_deadline_ms")

    def __init__(self, member_id: str) -> None:
        self.member_id = member_id
        self.instance_id: str | None = None
        self.rack_id: str | None = None
        self.client_id = ""
        self.client_host = ""
        self.subscribed: list[str] = []
        self.regex: str | None = None
        self.matched: set[str] = set()  # the topics the regex matched when last resolved against the image
        self.rebalance_timeout_ms = 300_000
        self.assignor: str | None = None
        self.epoch = 0
        self.previous_epoch = -1
        self.state = STABLE
        self.assigned: Assignment = {}
        self.revoking: Assignment = {}
        self.deadline_ms = 0
        self.revocation_deadline_ms = 0

    def topics(self) -> set[str]:
        """What the member subscribes to: its topic names and what its regex matches."""
        return set(self.subscribed) | self.matched

    def metadata_value(self):
        return w.ConsumerGroupMemberMetadataValue(
            instance_id=self.instance_id, rack_id=self.rack_id, client_id=self.client_id, client_host=self.client_host,
            subscribed_topic_names=list(self.subscribed), subscribed_topic_regex=self.regex,
            rebalance_timeout_ms=self.rebalance_timeout_ms, server_assignor=self.assignor)

    def assignment_value(self):
        V = w.ConsumerGroupCurrentMemberAssignmentValue
        return V(member_epoch=self.epoch, previous_member_epoch=self.previous_epoch, state=self.state,
                 assigned_partitions=assignment_to_wire(self.assigned, V.TopicPartitions),
                 partitions_pending_revocation=assignment_to_wire(self.revoking, V.TopicPartitions))


class ConsumerGroup:
    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ConsumerMember] = {}
        self.target: dict[str, Assignment] = {}
        self.topics: dict[str, tuple[Any, int]] = {}  # the subscribed topics' metadata at the last bump

    # ------------------------------------------------------------------------------------------------ views
    def state(self) -> str:
        if not self.members:
            return EMPTY
        if self.assignment_epoch != self.epoch:
            return ASSIGNING
        if any((m.epoch != self.assignment_epoch or m.state != STABLE) and m.epoch != STATIC_LEAVE_EPOCH
               for m in self.members.values()):
            return RECONCILING
        return GROUP_STABLE

    def subscribed_topic_names(self) -> set[str]:
        return {t for m in self.members.values() for t in m.topics()}

    def owner_of(self, topic_id, partition: int, but: str) -> bool:
        """Whether a member other than ``but`` holds the partition (assigned or pending revocation)."""
        for m in self.members.values():
            if m.member_id != but and (partition in m.assigned.get(topic_id, ()) or
                                       partition in m.revoking.get(topic_id, ())):
                return True
        return False

    def assignor_name(self) -> str:
        named = [m.assignor for m in self.members.values() if m.assignor]
        return named[0] if named else ASSIGNORS[0]


# ==================================================================================================== assignors
def assign(group: ConsumerGroup, topics: dict[str, tuple[Any, int]]) -> dict[str, Assignment]:
    """The target assignment of every member by the group's assignor."""
    members = sorted(group.members.values(), key=lambda m: m.member_id)
    if group.assignor_name() == "range":
        return _range(members, topics)
    return _uniform(members, topics, group.target)


def _range(members, topics) -> dict[str, Assignment]:
    out: dict[str, Assignment] = {m.member_id: {} for m in members}
    for name, (tid, count) in sorted(topics.items()):
        subs = [m for m in members if name in m.topics()]
        if not subs:
            continue
        per, extra = divmod(count, len(subs))
        start = 0
        for i, m in enumerate(subs):
            n = per + (1 if i < extra else 0)
            if n:
                out[m.member_id].setdefault(tid, set()).update(range(start, start + n))
            start += n
    return out


def _uniform(members, topics, previous: dict[str, Assignment]) -> dict[str, Assignment]:
    """Balanced and sticky: every partition to one subscribed member, each member within one partition of its
    fair share, keeping a partition with its previous owner where the balance allows."""
    out: dict[str, Assignment] = {m.member_id: {} for m in members}
    if not members:
        return out
    eligible: dict[tuple, list[str]] = {}
    for name, (tid, count) in sorted(topics.items()):
        subs = [m.member_id for m in members if name in m.topics()]
        for p in range(count):
            if subs:
                eligible[(tid, p)] = subs
    total = len(eligible)
    quota = {m.member_id: total // len(members) for m in members}
    for m in members[: total % len(members)]:
        quota[m.member_id] += 1
    load = {m.member_id: 0 for m in members}
    unassigned = []
    for (tid, p), subs in eligible.items():
        keeper = next((mid for mid in subs if p in previous.get(mid, {}).get(tid, set())), None)
        if keeper is not None and load[keeper] < quota[keeper]:
            out[keeper].setdefault(tid, set()).add(p)
            load[keeper] += 1
        else:
            unassigned.append((tid, p))
    for tid, p in unassigned:
        subs = eligible[(tid, p)]
        mid = min(subs, key=lambda x: (load[x] - quota[x], load[x], x))
        out[mid].setdefault(tid, set()).add(p)
        load[mid] += 1
    return out


# ==================================================================================================== reconciliation
def reconcile(group: ConsumerGroup, m: ConsumerMember, owned: Assignment | None) -> None:
    """Move ``m`` toward its target (Kafka's CurrentAssignmentBuilder); ``owned``: what the heartbeat says the
    member owns (None: it did not say)."""
    target_epoch = group.assignment_epoch
    target = group.target.get(m.member_id, {})

    def owns_any(revoking: Assignment) -> bool:
        if owned is None:
            return True
        return any(owned.get(t, set()) & ps for t, ps in revoking.items())

    if m.state == STABLE:
        if m.epoch == target_epoch:
            return
        _next(group, m, m.epoch, target, target_epoch, owns_any)
    elif m.state == UNREVOKED_PARTITIONS:
        if owns_any(m.revoking):
            return
        _next(group, m, m.epoch + 1, target, target_epoch, owns_any)
    else:
        _next(group, m, m.epoch, target, target_epoch, owns_any)


def _next(group, m, epoch: int, target: Assignment, target_epoch: int, owns_any) -> None:
    kept = _intersect(m.assigned, target)
    revoking = _minus(m.assigned, kept)
    pending = _minus(target, kept)
    unreleased = False
    for tid in list(pending):
        free = {p for p in pending[tid] if not group.owner_of(tid, p, m.member_id)}
        if free != pending[tid]:
            unreleased = True
        if free:
            pending[tid] = free
        else:
            del pending[tid]
    if revoking and owns_any(revoking):
        _set_epoch(m, epoch)
        m.state, m.assigned, m.revoking = UNREVOKED_PARTITIONS, kept, revoking
        return
    for tid, ps in pending.items():
        kept.setdefault(tid, set()).update(ps)
    _set_epoch(m, target_epoch)
    m.state = UNRELEASED_PARTITIONS if unreleased else STABLE
    m.assigned, m.revoking = kept, {}


def _set_epoch(m: ConsumerMember, epoch: int) -> None:
    if epoch != m.epoch:
        m.previous_epoch, m.epoch = m.epoch, epoch


# ==================================================================================================== records
def member_records(group_id: str, m: ConsumerMember) -> list[tuple[bytes, bytes | None]]:
    return [(cr.encode_key(w.ConsumerGroupMemberMetadataKey(group_id=group_id, member_id=m.member_id), 5),
             cr.encode_value(m.metadata_value(), 0))]


def epoch_records(group: ConsumerGroup) -> list[tuple[bytes, bytes | None]]:
    P = w.ConsumerGroupPartitionMetadataValue
    topics = [P.TopicMetadata(topic_id=tid, topic_name=name, num_partitions=n, partition_metadata=[])
              for name, (tid, n) in sorted(group.topics.items())]
    return [
        (cr.encode_key(w.ConsumerGroupPartitionMetadataKey(group_id=group.group_id), 4),
         cr.encode_value(P(topics=topics), 0)),
        (cr.encode_key(w.ConsumerGroupMetadataKey(group_id=group.group_id), 3),
         cr.encode_value(w.ConsumerGroupMetadataValue(epoch=group.epoch), 0)),
    ]


def target_records(group: ConsumerGroup, changed: list[str]) -> list[tuple[bytes, bytes | None]]:
    V = w.ConsumerGroupTargetAssignmentMemberValue
    out = [(cr.encode_key(w.ConsumerGroupTargetAssignmentMemberKey(group_id=group.group_id, member_id=mid), 7),
            cr.encode_value(V(topic_partitions=assignment_to_wire(group.target.get(mid, {}), V.TopicPartition)), 0))
           for mid in changed]
    out.append((cr.encode_key(w.ConsumerGroupTargetAssignmentMetadataKey(group_id=group.group_id), 6),
                cr.encode_value(w.ConsumerGroupTargetAssignmentMetadataValue(assignment_epoch=group.assignment_epoch),
                                0)))
    return out


def current_records(group_id: str, m: ConsumerMember) -> list[tuple[bytes, bytes | None]]:
    return [(cr.encode_key(w.ConsumerGroupCurrentMemberAssignmentKey(group_id=group_id, member_id=m.member_id), 8),
             cr.encode_value(m.assignment_value(), 0))]


def removal_records(group_id: str, member_id: str) -> list[tuple[bytes, bytes | None]]:
    """Tombstones of a member's keys (Kafka writes the current assignment, the target, then the metadata)."""
    return [
        (cr.encode_key(w.ConsumerGroupCurrentMemberAssignmentKey(group_id=group_id, member_id=member_id), 8), None),
        (cr.encode_key(w.ConsumerGroupTargetAssignmentMemberKey(group_id=group_id, member_id=member_id), 7), None),
        (cr.encode_key(w.ConsumerGroupMemberMetadataKey(group_id=group_id, member_id=member_id), 5), None),
    ]


def group_tombstones(group: ConsumerGroup) -> list[tuple[bytes, bytes | None]]:
    out = []
    for mid in sorted(group.members):
        out.extend(removal_records(group.group_id, mid))
    gid = group.group_id
    out += [(cr.encode_key(w.ConsumerGroupTargetAssignmentMetadataKey(group_id=gid), 6), None),
            (cr.encode_key(w.ConsumerGroupPartitionMetadataKey(group_id=gid), 4), None),
            (cr.encode_key(w.ConsumerGroupMetadataKey(group_id=gid), 3), None)]
    return out


def replay(groups: dict[str, ConsumerGroup], rec) -> None:
    """Fold one consumer-group record (types 3-8) into ``groups``."""
    key, value = rec.key, rec.value
    gid = key.group_id
    g = groups.get(gid)
    if rec.record_type == 3:
        if value is None:
            groups.pop(gid, None)
            return
        g = g or groups.setdefault(gid, ConsumerGroup(gid))
        g.epoch = value.epoch
        return
    if g is None:
        if value is None:
            return
        g = groups.setdefault(gid, ConsumerGroup(gid))
    if rec.record_type == 4:
        g.topics = {} if value is None else {t.topic_name: (t.topic_id, t.num_partitions) for t in value.topics}
    elif rec.record_type == 5:
        if value is None:
            g.members.pop(key.member_id, None)
            return
        m = g.members.get(key.member_id) or g.members.setdefault(key.member_id, ConsumerMember(key.member_id))
        m.instance_id, m.rack_id = value.instance_id, value.rack_id
        m.client_id, m.client_host = value.client_id, value.client_host
        m.subscribed, m.regex = list(value.subscribed_topic_names), value.subscribed_topic_regex
        m.rebalance_timeout_ms, m.assignor = value.rebalance_timeout_ms, value.server_assignor
    elif rec.record_type == 6:
        g.assignment_epoch = 0 if value is None else value.assignment_epoch
    elif rec.record_type == 7:
        if value is None:
            g.target.pop(key.member_id, None)
        else:
            g.target[key.member_id] = assignment_from_wire(value.topic_partitions)
    elif rec.record_type == 8:
        m = g.members.get(key.member_id)
        if value is None or m is None:
            return
        m.epoch, m.previous_epoch, m.state = value.member_epoch, value.previous_member_epoch, value.state
        m.assigned = assignment_from_wire(value.assigned_partitions)
        m.revoking = assignment_from_wire(value.partitions_pending_revocation)


def refused_description(group_id: str, code: int):
    """ConsumerGroupDescribe's entry for a group refused before a coordinator described it (not authorized, not
    coordinated here, the protocol off): as Kafka's ``getErrorDescribedGroupList``, the id and the error only, every
    other field its default (state "", epochs 0, no message)."""
    return w.ConsumerGroupDescribeResponse.DescribedGroup(group_id=group_id, error_code=code)


def error_heartbeat(code: int, message: str | None = None):
    """A refused heartbeat as Kafka answers one: the error, and the response's defaults (member epoch 0)."""
    return w.ConsumerGroupHeartbeatResponse(throttle_time_ms=0, error_code=code, error_message=message,
                                            member_id=None, member_epoch=0, heartbeat_interval_ms=0, assignment=None)
