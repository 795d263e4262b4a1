"""The admin side of the groups: ListGroups, DescribeGroups, DeleteGroups and OffsetDelete: a part of
``GroupShard``."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group import consumer as cg
from kraftwire.coordinator.group import share as sg
from kraftwire.coordinator.group.model import DEAD, EMPTY, NO_AUTHORIZED_OPERATIONS, STABLE, Result
from kraftwire.protocol import messages as w


class GroupAdmin:
    """Listing, describing and deleting groups and their offsets (a ``GroupShard`` mixin)."""

    def group_ids(self) -> list[str]:
        """Groups that exist: in memory (members, or an Empty group that wrote metadata) or with committed offsets."""
        return sorted(set(self.groups) | set(self.committed) | set(self.consumer_groups) | set(self.share_groups))

    def state_of(self, group_id: str) -> tuple[str, str]:
        if group_id in self.consumer_groups:
            return self.consumer_groups[group_id].state(), "consumer"
        if group_id in self.share_groups:
            return self.share_groups[group_id].state(), "share"
        g = self.groups.get(group_id)
        if g is None:
            return EMPTY, ""
        return g.state, g.protocol_type or ""

    def list_groups(self, states: set[str] | None, types: set[str] | None) -> list[tuple[str, str, str]]:
        """(group id, protocol type, state) of every group, filtered by state and type (case-insensitive)."""
        out = []
        for group_id in self.group_ids():
            state, protocol_type = self.state_of(group_id)
            kind = ("consumer" if group_id in self.consumer_groups else
                    "share" if group_id in self.share_groups else "classic")
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
        share_group = self.share_groups.get(group_id)
        if share_group is not None:  # its share state was deleted first (``ShareAdmin.share_group_deletion``)
            if share_group.members:
                return ec.NON_EMPTY_GROUP
            result.records.extend(sg.group_tombstones(share_group))
            del self.share_groups[group_id]
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
