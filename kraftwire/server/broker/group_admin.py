"""Group administration: ListGroups, DescribeGroups, DeleteGroups and OffsetDelete (what ``kafka-consumer-groups.sh``,
kafka-python's ``KafkaAdminClient`` and librdkafka's ``AdminClient`` send), served by the coordinator (the Raft
leader) from the same state the group protocol uses.

* A group exists while it has members or committed offsets. Listing and describing read the members from the
  coordinator's memory and the offsets from the committed log (``LogScan.committed_offsets``); a node that does not
  coordinate lists no groups and answers NOT_COORDINATOR elsewhere, and a new leader answers
  COORDINATOR_LOAD_IN_PROGRESS until it has committed in its epoch, as for OffsetFetch.
* Deleting writes offset tombstones (``KRAFTWIRE_GROUP_OFFSET`` records with offset -1) and answers once they are
  committed, so a deletion survives failover exactly as a commit does. As in Kafka: a group with members cannot be
  deleted (NON_EMPTY_GROUP), an unknown one answers GROUP_ID_NOT_FOUND, and OffsetDelete refuses the partitions of a
  topic a member of a consumer group subscribes to (GROUP_SUBSCRIBED_TO_TOPIC).
* Describe fills the protocol, member metadata and assignments only for a Stable group (Kafka's rule); other states
  list their members without them. An unknown group is described as ``Dead`` with no error (versions up to 5).
"""

from __future__ import annotations

import logging
import struct
import time

from kraftwire.error_codes import (
    COORDINATOR_LOAD_IN_PROGRESS,
    GROUP_ID_NOT_FOUND,
    GROUP_SUBSCRIBED_TO_TOPIC,
    NON_EMPTY_GROUP,
    NOT_COORDINATOR,
)
from kraftwire.protocol import messages as w
from kraftwire.records.control import KRAFTWIRE_GROUP_OFFSET
from kraftwire.server.broker import context as c
from kraftwire.server.broker.groups import EMPTY, STABLE, Coordinator

log = logging.getLogger("kraftwire.broker.groups")

DEAD = "Dead"
#: DescribeGroups: authorized operations were not asked for (Kafka's sentinel)
NO_AUTHORIZED_OPERATIONS = -2147483648


def subscribed_topics(metadata: bytes) -> set[str] | None:
    """The topics of a consumer-protocol subscription (version, [topic]...); None if it cannot be read."""
    try:
        _version, count = struct.unpack_from(">hi", metadata, 0)
        pos, topics = 6, set()
        for _ in range(count):
            (length,) = struct.unpack_from(">h", metadata, pos)
            pos += 2
            if length < 0 or pos + length > len(metadata):
                return None
            topics.add(bytes(metadata[pos:pos + length]).decode("utf-8"))
            pos += length
        return topics
    except (struct.error, UnicodeDecodeError):
        return None


class GroupAdmin:
    def __init__(self, co: Coordinator) -> None:
        self.co = co
        self.ctx = co.ctx

    # ---------------------------------------------------------------------------------------------------- state
    def _status(self) -> int:
        """0 when this node coordinates and knows every committed offset; else the error to answer."""
        if not self.co.coordinating():
            return NOT_COORDINATOR
        if self.ctx.epoch_start_offset() > self.ctx.log.high_watermark():
            return COORDINATOR_LOAD_IN_PROGRESS
        return 0

    def _group_ids(self) -> list[str]:
        """Groups with members and groups with committed offsets."""
        live = {g for g, group in self.co.groups.items() if group.members}
        return sorted(live | {g for g, _t, _p in self.co.scan.committed_offsets()})

    def _state_of(self, group_id: str) -> tuple[str, str]:
        """(state, protocol type) of a known group."""
        group = self.co.groups.get(group_id)
        if group is None:
            return EMPTY, ""
        return group.state, group.protocol_type or ""

    def _finish_after_commit(self, records, on_done) -> None:
        """Append tombstones (or nothing) and call ``on_done(error)`` once they are committed."""
        if not records:
            on_done(0)
            return
        self.co._append(records, on_done)

    @staticmethod
    def _tombstone(group_id: str, topic: str, partition: int):
        return (KRAFTWIRE_GROUP_OFFSET, w.KraftwireGroupOffsetRecord(
            group_id=group_id, topic=topic, partition=partition, offset=-1, leader_epoch=-1, metadata=None,
            commit_timestamp=int(time.time() * 1000)))

    def _offset_keys(self, group_id: str) -> list[tuple[str, int]]:
        """Every (topic, partition) the log holds an offset for, committed or not (a tombstone follows them all)."""
        state = self.co.scan.state
        keys = {(t, p) for g, t, p in state.offsets if g == group_id}
        keys |= {(t, p) for _o, (g, t, p), _prev in state.pending if g == group_id}
        return sorted(keys)

    # ---------------------------------------------------------------------------------------------------- ListGroups
    def list_groups(self, request, conn) -> None:
        R = w.ListGroupsResponse
        version, cid = request.version, request.header.correlation_id
        status = self._status()
        if status == NOT_COORDINATOR:  # Kafka: a broker lists the groups it coordinates, here none
            conn.send_response(R(throttle_time_ms=0, error_code=0, groups=[]), version, cid)
            return
        if status:
            conn.send_response(R(throttle_time_ms=0, error_code=status, groups=[]), version, cid)
            return
        wanted = {s.lower() for s in (getattr(request.body, "states_filter", None) or [])}
        groups = []
        for group_id in self._group_ids():
            state, protocol_type = self._state_of(group_id)
            if wanted and state.lower() not in wanted:
                continue
            groups.append(R.ListedGroup(group_id=group_id, protocol_type=protocol_type, group_state=state))
        conn.send_response(R(throttle_time_ms=0, error_code=0, groups=groups), version, cid)

    # ---------------------------------------------------------------------------------------------------- Describe
    def describe_groups(self, request, conn) -> None:
        R = w.DescribeGroupsResponse
        version, cid = request.version, request.header.correlation_id
        status = self._status()
        known = set(self._group_ids()) if not status else set()
        out = []
        for group_id in request.body.groups:
            if status or group_id not in known:  # an error, or a group that does not exist: Dead, no error
                out.append(R.DescribedGroup(error_code=status, group_id=group_id, group_state="" if status else DEAD,
                                            protocol_type="", protocol_data="", members=[],
                                            authorized_operations=NO_AUTHORIZED_OPERATIONS))
                continue
            group = self.co.groups.get(group_id)
            state, protocol_type = self._state_of(group_id)
            stable = group is not None and group.state == STABLE
            members = []
            for m in (group.members.values() if group is not None else ()):
                metadata = dict(m.protocols).get(group.protocol_name, b"") if stable else b""
                members.append(R.DescribedGroupMember(
                    member_id=m.member_id, group_instance_id=m.instance_id, client_id=m.client_id,
                    client_host=m.client_host, member_metadata=metadata,
                    member_assignment=m.assignment if stable else b""))
            out.append(R.DescribedGroup(error_code=0, group_id=group_id, group_state=state,
                                        protocol_type=protocol_type,
                                        protocol_data=(group.protocol_name or "") if stable else "",
                                        members=members, authorized_operations=NO_AUTHORIZED_OPERATIONS))
        conn.send_response(R(throttle_time_ms=0, groups=out), version, cid)

    # ---------------------------------------------------------------------------------------------------- Delete
    def delete_groups(self, request, conn) -> None:
        R = w.DeleteGroupsResponse
        version, cid = request.version, request.header.correlation_id
        status = self._status()
        known = set(self._group_ids()) if not status else set()
        results = []
        records = []
        for group_id in request.body.groups_names:
            result = R.DeletableGroupResult(group_id=group_id, error_code=status)
            results.append(result)
            if status:
                continue
            group = self.co.groups.get(group_id)
            if group is not None and group.members:
                result.error_code = NON_EMPTY_GROUP
                continue
            if group_id not in known:
                result.error_code = GROUP_ID_NOT_FOUND
                continue
            self.co.groups.pop(group_id, None)
            keys = self._offset_keys(group_id)
            records.extend(self._tombstone(group_id, t, p) for t, p in keys)
            log.info("group %s: deleted with its offsets for %d partitions", group_id, len(keys))

        def done(error: int) -> None:
            for r in results:
                if r.error_code == 0 and error:
                    r.error_code = error
            conn.send_response(R(throttle_time_ms=0, results=results), version, cid)

        self._finish_after_commit(records, done)

    # ---------------------------------------------------------------------------------------------------- OffsetDelete
    def offset_delete(self, request, conn) -> None:
        R = w.OffsetDeleteResponse
        version, cid = request.version, request.header.correlation_id
        body = request.body
        ctx = self.ctx

        def answer(error: int, topics=()) -> None:
            conn.send_response(R(error_code=error, throttle_time_ms=0, topics=list(topics)), version, cid)

        status = self._status()
        if status:
            return answer(status)
        group_id = body.group_id
        if group_id not in self._group_ids():
            return answer(GROUP_ID_NOT_FOUND)
        group = self.co.groups.get(group_id)
        subscribed: set[str] | None = set()
        if group is not None and group.members:
            if group.protocol_type != "consumer":
                return answer(NON_EMPTY_GROUP)
            for m in group.members.values():
                for _name, metadata in m.protocols:
                    topics = subscribed_topics(metadata)
                    if topics is None:
                        subscribed = None  # unreadable: treat every topic as subscribed
                        break
                    subscribed |= topics
                if subscribed is None:
                    break
        held = set(self._offset_keys(group_id))
        topics, records = [], []
        for t in body.topics:
            parts = []
            for p in t.partitions:
                error = 0
                if t.name != ctx.topic_name or p.partition_index != 0:
                    error = c.UNKNOWN_TOPIC_OR_PARTITION
                elif subscribed is None or t.name in subscribed:
                    error = GROUP_SUBSCRIBED_TO_TOPIC
                elif (t.name, p.partition_index) in held:
                    records.append(self._tombstone(group_id, t.name, p.partition_index))
                parts.append(R.OffsetDeleteResponsePartition(partition_index=p.partition_index, error_code=error))
            topics.append(R.OffsetDeleteResponseTopic(name=t.name, partitions=parts))

        def done(error: int) -> None:
            if error:
                for t in topics:
                    for p in t.partitions:
                        if p.error_code == 0:
                            p.error_code = error
            answer(0, topics)

        self._finish_after_commit(records, done)


def register(co: Coordinator, dispatcher, attached) -> GroupAdmin:
    admin = GroupAdmin(co)
    d = dispatcher
    d.serve("ListGroups", attached(admin.list_groups))
    d.serve("DescribeGroups", attached(admin.describe_groups))
    d.serve("DeleteGroups", attached(admin.delete_groups))
    d.serve("OffsetDelete", attached(admin.offset_delete))
    return admin
