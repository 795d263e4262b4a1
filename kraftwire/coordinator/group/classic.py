"""The classic group protocol's requests (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) and the rebalance they drive:
a part of ``GroupShard`` (see ``shard`` for the shape every request method shares). The rules, states and error
codes follow Kafka's classic group coordinator."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group.model import (COMPLETING, DEAD, EMPTY, PREPARING, STABLE, Group, Member, Result,
                                               Waiting)
from kraftwire.protocol import messages as w


class ClassicProtocol:
    """JoinGroup, SyncGroup, Heartbeat and LeaveGroup over ``self.groups`` (a ``GroupShard`` mixin)."""

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
