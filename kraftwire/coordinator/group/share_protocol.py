"""KIP-932's share-group requests (ShareGroupHeartbeat, ShareGroupDescribe), the share-partition initialization
they start, and the session timer: a part of ``GroupShard``; the model and records live in ``share``.

**A heartbeat** (Kafka's ``GroupMetadataManager.shareGroupHeartbeat``): the member joins with epoch 0 and its
subscription, heartbeats with its epoch, leaves with -1. A change of its subscription, of the subscribed topics'
metadata, or partitions newly initialized for the group bump the group epoch; a bumped epoch recomputes the target
assignment (``share_assignor``) — unless the last one was computed less than the assignment interval ago
(``share.assignment.interval.ms`` of the group, else ``group.share.assignment.interval.ms``; KIP-1263), when the
group keeps its last target until a later heartbeat; the member then moves straight to the target (nothing to revoke
in a share group). A new group starts at epoch 1 (Kafka 4.4's), so its first member joins at epoch 2.
The answer carries the assignment when the member joined, sent its full subscription, or its assignment changed.
A member silent for its session (``share.session.timeout.ms`` of the group, else ``group.share.session.timeout.ms``)
is fenced: tombstones of its keys and a group-epoch bump, as when it leaves.

**Initialization.** A heartbeat may return, beside its result, an ``InitializeRequest``: the subscribed partitions
whose share state the share coordinator does not hold yet for the group (state epoch = the group epoch, start offset
-1: the share-partition leader decides it from ``share.auto.offset.reset``), recorded as *initializing*. The edge
sends it (InitializeShareGroupState to the share coordinator) and reports back: ``share_initialized`` moves the
partitions to *initialized*, ``share_uninitialized`` forgets them (asked again at the next heartbeat); an
initializing topic asked longer than ``group.share.initialize.retry.interval.ms`` ago is asked again.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kraftwire import error_codes as ec
from kraftwire.coordinator.group import share as sg
from kraftwire.coordinator.group.model import EMPTY, NO_AUTHORIZED_OPERATIONS, Result
from kraftwire.coordinator.group.share_assignor import NAME as ASSIGNOR, assign
from kraftwire.metadata import group_configs
from kraftwire.protocol import messages as w

API = "ShareGroupHeartbeat"
#: the longest member id Kafka's broker accepts in a ShareGroupHeartbeat (a UUID's text)
MAX_MEMBER_ID_LENGTH = 36


class InitializeRequest(NamedTuple):
    """InitializeShareGroupState the edge owes the share coordinator after a heartbeat or an
    AlterShareGroupOffsets: the group, the state epoch and, per topic id, the partitions; ``start_offsets`` (topic id
    -> partition -> offset) the altered ones' start offsets, the others -1 (the share-partition leader decides it
    from ``share.auto.offset.reset``)."""

    group_id: str
    state_epoch: int
    topics: dict  # topic id -> sorted partitions
    start_offsets: dict = {}

    def body(self) -> w.InitializeShareGroupStateRequest:
        R = w.InitializeShareGroupStateRequest
        return R(group_id=self.group_id, topics=[
            R.InitializeStateData(topic_id=t, partitions=[
                R.PartitionData(partition=p, state_epoch=self.state_epoch,
                                start_offset=self.start_offsets.get(t, {}).get(p, -1)) for p in ps])
            for t, ps in sorted(self.topics.items(), key=lambda x: str(x[0]))])


def member_id_valid(member_id: str) -> bool:
    """Kafka's broker refuses a member id that is empty or longer than a UUID's text before the coordinator sees it
    (``KafkaApis.isMemberIdValid``; after the group ACL check, before the topic ones): INVALID_REQUEST, the code
    alone (the heartbeat's error response carries no message)."""
    return 0 < len(member_id) <= MAX_MEMBER_ID_LENGTH


def _blank(value: str | None) -> bool:
    return value is not None and not value.strip()


class ShareProtocol:
    """ShareGroupHeartbeat and ShareGroupDescribe over ``self.share_groups`` (a ``GroupShard`` mixin)."""

    def share_session_ms(self, group_id: str) -> int:
        return group_configs.effective_ms("share.session.timeout.ms", self.group_configs(group_id),
                                          self.config.broker_value)

    def share_heartbeat_ms(self, group_id: str) -> int:
        return group_configs.effective_ms("share.heartbeat.interval.ms", self.group_configs(group_id),
                                          self.config.broker_value)

    def share_assignment_interval_ms(self, group_id: str) -> int:
        return group_configs.effective_ms("share.assignment.interval.ms", self.group_configs(group_id),
                                          self.config.broker_value)

    def _share_deadlines(self, now_ms: int) -> None:
        for g in self.share_groups.values():
            session_ms = self.share_session_ms(g.group_id)
            for m in g.members.values():
                m.deadline_ms = now_ms + session_ms

    def _not_share(self, group_id: str) -> bool:
        """A group of another type holds the id (Kafka does not convert between share and other groups)."""
        classic = self.groups.get(group_id)
        return group_id in self.consumer_groups or (classic is not None and (classic.members or
                                                                              classic.state != EMPTY))

    # ================================================================================================ heartbeat
    def share_heartbeat(self, body, token, now_ms: int, client_id: str, client_host: str,
                        topics: sg.TopicLookup) -> tuple[Result, InitializeRequest | None]:
        """ShareGroupHeartbeat (the edge checked ``share.version``, the ACLs and ``member_id_valid``);
        ``topics`` looks a topic name up in the metadata image."""
        result = Result()

        def fail(code: int, message: str | None = None):
            result.reply(token, API, sg.error_heartbeat(code, message))
            return result, None

        gid, mid, epoch = body.group_id, body.member_id, body.member_epoch
        # Kafka's coordinator service checks these before any shard
        if _blank(mid):
            return fail(ec.INVALID_REQUEST, "MemberId can't be empty.")
        if _blank(gid):
            return fail(ec.INVALID_REQUEST, "GroupId can't be empty.")
        if _blank(body.rack_id):
            return fail(ec.INVALID_REQUEST, "RackId can't be empty.")
        if epoch == 0 and not body.subscribed_topic_names:
            return fail(ec.INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")
        if epoch < sg.LEAVE_EPOCH:
            return fail(ec.INVALID_REQUEST, "MemberEpoch is invalid.")
        group = self.share_groups.get(gid)
        if group is None and self._not_share(gid):
            return fail(ec.GROUP_ID_NOT_FOUND, f"Group {gid} is not a share group.")
        if epoch == sg.LEAVE_EPOCH:
            if group is None:
                return fail(ec.GROUP_ID_NOT_FOUND, f"Group {gid} not found.")
            if mid not in group.members:
                return fail(ec.UNKNOWN_MEMBER_ID, f"Member {mid} is not a member of group {gid}.")
            self._fence_share_member(group, mid, result)
            result.reply(token, API, w.ShareGroupHeartbeatResponse(member_id=mid, member_epoch=sg.LEAVE_EPOCH))
            return result, None
        if group is None and epoch != 0:
            return fail(ec.GROUP_ID_NOT_FOUND, f"Share group {gid} not found.")
        if group is not None and len(group.members) >= self.config.share_max_size and mid not in group.members:
            return fail(ec.GROUP_MAX_SIZE_REACHED, f"The share group has reached its maximum capacity of "
                                                   f"{self.config.share_max_size} members.")
        member = None if group is None else group.members.get(mid)
        if member is None and epoch != 0:
            return fail(ec.UNKNOWN_MEMBER_ID, f"Member {mid} is not a member of group {gid}.")
        if member is not None:
            refused = _epoch_refusal(member, epoch)
            if refused is not None:
                return fail(ec.FENCED_MEMBER_EPOCH, refused)
        if group is None:
            group = self.share_groups[gid] = sg.ShareGroup(gid)
        joining = member is None
        old = member or sg.ShareMember(mid)
        m = _updated(old, body, client_id, client_host)
        changed_subscription = False
        if joining or _metadata(m) != _metadata(old):
            result.records.extend(sg.member_records(gid, m))
            changed_subscription = joining or m.subscribed != old.subscribed
        group.members[mid] = m
        # newly initialized partitions bump the epoch only once the target has caught up with it (a deferred
        # target, see may_assign, takes them in when it is computed)
        bump = changed_subscription or (group.assignment_epoch >= group.epoch and
                                        self._initialized_pending(group, topics))
        subscribed = group.topics = _resolve(group.subscribed_topic_names(), topics)
        new_hash = sg.metadata_hash(subscribed)
        if new_hash != group.metadata_hash:
            bump = True
        if bump:
            group.epoch += 1
            group.metadata_hash = new_hash
            result.records.extend(sg.epoch_records(group))
        if group.epoch > group.assignment_epoch and may_assign(
                group.assignment_timestamp, self.share_assignment_interval_ms(gid), now_ms):
            self._share_retarget(group, subscribed, topics, now_ms, result)
        target = group.target.get(mid, {})
        previous = dict(m.assigned)
        if m.epoch != group.assignment_epoch or changed_subscription:
            if m.epoch != group.assignment_epoch:
                m.previous_epoch, m.epoch = m.epoch, group.assignment_epoch
            m.assigned = _filtered(target, m.subscribed, topics)
            if (m.epoch, m.previous_epoch, m.assigned) != (old.epoch, old.previous_epoch, old.assigned):
                result.records.extend(sg.current_records(gid, m))
        m.deadline_ms = now_ms + self.share_session_ms(gid)
        response = w.ShareGroupHeartbeatResponse(member_id=mid, member_epoch=m.epoch,
                                                 heartbeat_interval_ms=self.share_heartbeat_ms(gid))
        if epoch == 0 or body.subscribed_topic_names is not None or m.assigned != previous:
            A = w.ShareGroupHeartbeatResponse
            response.assignment = A.Assignment(topic_partitions=sg.assignment_to_wire(m.assigned, A.TopicPartitions))
        result.reply(token, API, response)
        return result, self._maybe_initialize(group, subscribed, now_ms, result)

    def _share_retarget(self, group: sg.ShareGroup, subscribed: dict, topics: sg.TopicLookup, now_ms: int,
                        result: Result) -> None:
        """A new target assignment at the group epoch over the initialized partitions of the subscribed topics;
        records for the members whose target changed, then the assignment epoch."""
        assignable = {}
        for tid, info in group.initialized.items():
            known = next((v for v in subscribed.values() if v[0] == tid), None)
            if known is not None:
                assignable[tid] = {p for p in info.partitions if p < known[1]}
        subscriptions = {mid: {subscribed[t][0] for t in m.subscribed if t in subscribed}
                         for mid, m in group.members.items()}
        new = assign(subscriptions, assignable, group.target)
        changed = sorted(mid for mid in group.members if new.get(mid, {}) != group.target.get(mid, {}))
        group.target = {mid: a for mid, a in new.items() if a}
        group.assignment_epoch = group.epoch
        group.assignment_timestamp = now_ms
        result.records.extend(sg.target_records(group, changed))

    def _initialized_pending(self, group: sg.ShareGroup, topics: sg.TopicLookup) -> bool:
        """Kafka's ``initializedAssignmentPending``: a subscribed topic has initialized partitions the target does
        not cover exactly (they were initialized since the last assignment)."""
        names = group.subscribed_topic_names()
        if not group.members or not group.initialized or not names:
            return False
        assigned: dict = {}
        for a in group.target.values():
            for t, ps in a.items():
                assigned.setdefault(t, set()).update(ps)
        return any(info.name in names and assigned.get(tid) != info.partitions
                   for tid, info in group.initialized.items())

    def _maybe_initialize(self, group: sg.ShareGroup, subscribed: dict, now_ms: int,
                          result: Result) -> InitializeRequest | None:
        """The subscribed partitions neither initialized nor initializing recently: recorded as initializing and
        returned for the edge to ask the share coordinator (Kafka's ``maybeCreateInitializeShareGroupStateRequest``)."""
        if not subscribed:
            return None
        retry_ms = max(self.config.share_initialize_retry_interval_ms, self.config.offsets_commit_timeout_ms)
        held: dict[Any, set[int]] = {t: set(i.partitions) for t, i in group.initialized.items()}
        for t, i in group.initializing.items():
            if now_ms - i.timestamp < retry_ms:
                held.setdefault(t, set()).update(i.partitions)
        change: dict[Any, sg.InitTopic] = {}
        for name in sorted(subscribed):
            tid, count = subscribed[name]
            have = held.get(tid, set())
            if len(have) < count:
                change[tid] = sg.InitTopic(name, set(range(count)) - have, now_ms)
        if not change:
            return None
        for tid, info in change.items():
            held_info = group.initializing.get(tid)
            parts = info.partitions | (held_info.partitions if held_info is not None else set())
            group.initializing[tid] = sg.InitTopic(info.name, parts, now_ms)
            group.deleting.pop(tid, None)
        result.records.extend(sg.state_partition_records(group))
        return InitializeRequest(group.group_id, group.epoch, {t: sorted(i.partitions) for t, i in change.items()})

    def share_initialized(self, group_id: str, done: dict) -> Result:
        """The share coordinator initialized ``done`` (topic id -> partitions) for the group: they become
        initialized (assignable at the next heartbeat's epoch bump)."""
        result = Result()
        group = self.share_groups.get(group_id)
        if group is None or not done:
            return result
        for tid, parts in done.items():
            asked = group.initializing.get(tid)
            name = asked.name if asked is not None else group.initialized.get(tid, sg.InitTopic("UNKNOWN", set())).name
            held = group.initialized.get(tid)
            group.initialized[tid] = sg.InitTopic(name, set(parts) | (held.partitions if held else set()))
            if asked is not None:
                asked.partitions -= set(parts)
                if not asked.partitions:
                    del group.initializing[tid]
        result.records.extend(sg.state_partition_records(group))
        return result

    def share_uninitialized(self, group_id: str, failed: dict) -> Result:
        """The share coordinator could not initialize ``failed``: they leave the initializing set."""
        result = Result()
        group = self.share_groups.get(group_id)
        if group is None or not group.initializing or not failed:
            return result
        for tid, parts in failed.items():
            asked = group.initializing.get(tid)
            if asked is not None:
                asked.partitions -= set(parts)
                if not asked.partitions:
                    del group.initializing[tid]
        result.records.extend(sg.state_partition_records(group))
        return result

    def _fence_share_member(self, group: sg.ShareGroup, member_id: str, result: Result) -> None:
        """The member leaves (or its session ended): tombstones of its keys and the group epoch bumped with the
        metadata of what the others subscribe to (as the group last resolved it: a change in the image since then
        bumps the epoch again at the next heartbeat)."""
        group.members.pop(member_id, None)
        group.target.pop(member_id, None)
        result.records.extend(sg.removal_records(group.group_id, member_id))
        group.epoch += 1
        names = group.subscribed_topic_names()
        group.topics = {n: v for n, v in group.topics.items() if n in names}
        group.metadata_hash = sg.metadata_hash(group.topics)
        result.records.extend(sg.epoch_records(group))

    def _share_tick(self, now_ms: int, result: Result) -> None:
        for g in list(self.share_groups.values()):
            for m in [m for m in g.members.values() if now_ms >= m.deadline_ms]:
                self._fence_share_member(g, m.member_id, result)

    # ================================================================================================ describe
    def share_describe(self, group_id: str, topic_names: dict):
        """ShareGroupDescribe of one group (``topic_names``: topic id -> name, for the assignment)."""
        R = w.ShareGroupDescribeResponse
        g = self.share_groups.get(group_id)
        if g is None:
            message = (f"Group {group_id} is not a share group." if self._not_share(group_id)
                       else f"Group {group_id} not found.")
            return R.DescribedGroup(error_code=ec.GROUP_ID_NOT_FOUND, error_message=message, group_id=group_id,
                                    authorized_operations=NO_AUTHORIZED_OPERATIONS)
        return R.DescribedGroup(
            error_code=0, group_id=group_id, group_state=g.state(), group_epoch=g.epoch,
            assignment_epoch=g.assignment_epoch, assignor_name=ASSIGNOR, authorized_operations=NO_AUTHORIZED_OPERATIONS,
            members=[R.Member(member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.epoch, client_id=m.client_id,
                              client_host=m.client_host, subscribed_topic_names=list(m.subscribed),
                              assignment=R.Assignment(topic_partitions=[
                                  R.TopicPartitions(topic_id=t, topic_name=topic_names.get(t, ""),
                                                    partitions=sorted(ps))
                                  for t, ps in sorted(m.assigned.items(), key=lambda x: str(x[0])) if ps]))
                     for m in g.members.values()])


def may_assign(last_ms: int, interval_ms: int, now_ms: int) -> bool:
    """Whether a new target assignment may be computed now (Kafka's ``canComputeNextTargetAssignment``): none was
    yet, there is no interval, or the interval since the last one has passed."""
    return last_ms == 0 or interval_ms == 0 or now_ms >= last_ms + interval_ms


def _epoch_refusal(member: sg.ShareMember, epoch: int) -> str | None:
    """Kafka's ``throwIfShareGroupMemberEpochIsInvalid``: an epoch above the member's, or below it and not its
    previous one (the answer that bumped it may have been lost)."""
    if epoch > member.epoch:
        return (f"The share group member has a greater member epoch ({epoch}) than the one known by the group "
                f"coordinator ({member.epoch}). The member must abandon all its partitions and rejoin.")
    if epoch < member.epoch and epoch != member.previous_epoch:
        return (f"The share group member has a smaller member epoch ({epoch}) than the one known by the group "
                f"coordinator ({member.epoch}), and it does not match the previous member epoch "
                f"({member.previous_epoch}). The member must abandon all its partitions and rejoin.")
    return None


def _updated(old: sg.ShareMember, body, client_id: str, client_host: str) -> sg.ShareMember:
    """The member as the heartbeat leaves it (a null rack or subscription keeps the held one)."""
    m = sg.ShareMember(old.member_id)
    m.epoch, m.previous_epoch, m.assigned = old.epoch, old.previous_epoch, dict(old.assigned)
    m.rack_id = body.rack_id if body.rack_id is not None else old.rack_id
    m.subscribed = list(body.subscribed_topic_names) if body.subscribed_topic_names is not None else list(
        old.subscribed)
    m.client_id, m.client_host = client_id, client_host
    return m


def _metadata(m: sg.ShareMember) -> tuple:
    return (m.rack_id, m.client_id, m.client_host, sorted(m.subscribed))


def _resolve(names, topics: sg.TopicLookup) -> dict[str, tuple[Any, int]]:
    """The subscribed topics the metadata image holds: name -> (topic id, partition count)."""
    out = {}
    for name in names:
        found = topics(name)
        if found is not None:
            out[name] = found
    return out


def _filtered(target: dict, subscribed: list[str], topics: sg.TopicLookup) -> dict:
    """The target's partitions of the topics the member subscribes to (Kafka's ``filterAssignedPartitions``)."""
    ids = {found[0] for name in subscribed if (found := topics(name)) is not None}
    return {t: set(ps) for t, ps in target.items() if t in ids and ps}
