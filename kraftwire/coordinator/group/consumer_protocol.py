"""The KIP-848 consumer group protocol's requests (ConsumerGroupHeartbeat, ConsumerGroupDescribe) and its timers: a
part of ``GroupShard``; the group's model and reconciliation live in ``consumer``."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire import re2j
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group import consumer as cg
from kraftwire.coordinator.group.model import CONSUMER_MEMBER, EMPTY, NO_AUTHORIZED_OPERATIONS, Result
from kraftwire.metadata import group_configs
from kraftwire.protocol import messages as w


class ConsumerProtocol:
    """ConsumerGroupHeartbeat and ConsumerGroupDescribe over ``self.consumer_groups`` (a ``GroupShard`` mixin)."""

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
        if classic is not None and (classic.members or classic.state != EMPTY) or gid in self.share_groups:
            return fail(ec.GROUP_ID_NOT_FOUND, f"Group {gid} is not a consumer group.")
        group = self.consumer_groups.get(gid)
        if group is None and epoch != 0:
            return fail(ec.GROUP_ID_NOT_FOUND, f"Consumer group {gid} not found.")
        owned = None if body.topic_partitions is None else cg.assignment_from_wire(body.topic_partitions)
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
            assignment=R.Assignment(topic_partitions=cg.assignment_to_wire(m.assigned, R.TopicPartitions)) if full else None))
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
            message = (f"Group {group_id} is not a consumer group." if group_id in self.share_groups
                       else f"Group {group_id} not found.")
            return R.DescribedGroup(error_code=ec.GROUP_ID_NOT_FOUND, error_message=message,
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
