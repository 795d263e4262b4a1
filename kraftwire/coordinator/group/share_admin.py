"""The admin side of share groups (KIP-932): AlterShareGroupOffsets, DeleteShareGroupOffsets, DescribeShareGroupOffsets
and the share part of DeleteGroups — the group coordinator's decisions, pure (a part of ``GroupShard``).

A share group's "offsets" are its share-partitions' start offsets, held by the share coordinator
(``__share_group_state``); the group coordinator only keeps, in the group's state-partition metadata, which
partitions are *initializing*, *initialized* and *deleting*. So each request is a decision here, a share-state
request the edge sends, and (for the two that change something) a second decision once the share coordinator
answered — Kafka's ``GroupCoordinatorService`` chains them the same way:

* **Alter** (group empty, else NON_EMPTY_GROUP; an unknown group id is created, as Kafka 4.4 does — an Empty
  share group once its record is written): the known partitions become *initializing* and an
  InitializeShareGroupState at the given start offsets is owed; its success moves them to *initialized*
  (``share_initialized``), as a heartbeat's initialization does.
* **Delete offsets** (group empty): the requested topics' initialized partitions move to *deleting* and a
  DeleteShareGroupState is owed; the topics whose state was deleted then leave *deleting*.
* **DeleteGroups**: an empty share group's initialized and initializing partitions (and any still *deleting* whose
  topic exists) move to *deleting*, their state is deleted, and only then is the group itself deleted
  (``GroupAdmin.delete_group``); a non-empty one is NON_EMPTY_GROUP and stays.
* **Describe** reads the share coordinator's summaries (``offsets_from_summaries`` turns them into the answer with
  Kafka's lag: the partition's latest offset - start offset - delivery-complete count).

A group of another type (and, but for Alter, none) is GROUP_ID_NOT_FOUND with Kafka's messages.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from kraftwire import error_codes as ec
from kraftwire.coordinator.group import share as sg
from kraftwire.coordinator.group.model import Result
from kraftwire.coordinator.group.share_protocol import InitializeRequest
from kraftwire.ids import ZERO_UUID
from kraftwire.protocol import messages as w

UNINITIALIZED_START_OFFSET = -1
UNINITIALIZED_LAG = -1
DEFAULT_LEADER_EPOCH = 0
NO_OFFSETS_TO_DELETE = "There is no offset information to delete."

#: topic id -> (name, partition count) as the metadata image says, or None
TopicById = Callable[[Any], "tuple[str, int] | None"]


class OffsetsDeletion(NamedTuple):
    """What DeleteShareGroupOffsets decided before the share coordinator is asked: a group-level refusal (code,
    message), or the topics refused here and the partitions whose state to delete (topic id -> partitions)."""

    error: tuple[int, str] | None
    refused: list
    delete: dict


def _default(code: int) -> str:
    return ec.default_message(code)


def _not_share(group_id: str) -> tuple[int, str]:
    return ec.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group."


class ShareAdmin:
    """Share-group offsets and deletion (a ``GroupShard`` mixin over ``self.share_groups``)."""

    def share_group_error(self, group_id: str) -> tuple[int, str] | None:
        """Kafka's ``shareGroup(groupId)``: GROUP_ID_NOT_FOUND when no group has the id ("not found") or one of
        another type has it ("is not a share group")."""
        if group_id in self.share_groups:
            return None
        if self._other_type(group_id):
            return _not_share(group_id)
        return ec.GROUP_ID_NOT_FOUND, f"Group {group_id} not found."

    def _other_type(self, group_id: str) -> bool:
        """A group of another type holds the id (a classic group with committed offsets alone counts: Kafka creates
        one for such a commit)."""
        return group_id not in self.share_groups and (
            group_id in self.consumer_groups or group_id in self.groups or group_id in self.committed)

    def _empty_share_group(self, group_id: str) -> tuple[int, str] | None:
        """The group is a share group without members (``validateEmptyGroup``), else the refusal."""
        error = self.share_group_error(group_id)
        if error is None and self.share_groups[group_id].members:
            return ec.NON_EMPTY_GROUP, _default(ec.NON_EMPTY_GROUP)
        return error

    def share_initialized_partitions(self, group_id: str) -> dict:
        """Topic id -> the partitions whose share state is initialized for the group (none for an unknown group):
        what DescribeShareGroupOffsets without topics describes."""
        g = self.share_groups.get(group_id)
        return {} if g is None else {t: set(i.partitions) for t, i in g.initialized.items()}

    # ================================================================================================ alter
    def share_alter_offsets(self, group_id: str, topics, lookup: sg.TopicLookup, now_ms: int
                            ) -> tuple[Result, w.AlterShareGroupOffsetsResponse, InitializeRequest | None]:
        """AlterShareGroupOffsets (the topics the edge let through: authorized, in the metadata): per partition
        NONE, or UNKNOWN_TOPIC_OR_PARTITION beyond the topic's partitions; the known ones recorded as initializing
        and returned as the InitializeShareGroupState at their start offsets, at the group epoch."""
        R = w.AlterShareGroupOffsetsResponse
        result = Result()
        group = self.share_groups.get(group_id) or sg.ShareGroup(group_id)  # Kafka 4.4 creates an unknown group
        error = None
        if self._other_type(group_id):
            error = _not_share(group_id)
        elif group.members:
            error = ec.NON_EMPTY_GROUP, _default(ec.NON_EMPTY_GROUP)
        if error is not None:
            return result, R(throttle_time_ms=0, error_code=error[0], error_message=error[1], responses=[]), None
        unknown = ec.UNKNOWN_TOPIC_OR_PARTITION
        out, offsets, initializing = [], {}, {}
        for topic in topics:
            found = lookup(topic.topic_name)
            if found is None:
                out.append(R.AlterShareGroupOffsetsResponseTopic(
                    topic_name=topic.topic_name, topic_id=ZERO_UUID, partitions=[
                        R.AlterShareGroupOffsetsResponsePartition(partition_index=p.partition_index, error_code=unknown,
                                                                   error_message=_default(unknown))
                        for p in topic.partitions]))
                continue
            tid, count = found
            parts = []
            for p in topic.partitions:
                if p.partition_index < count:
                    parts.append(R.AlterShareGroupOffsetsResponsePartition(partition_index=p.partition_index,
                                                                            error_code=0))
                    offsets.setdefault(tid, {})[p.partition_index] = p.start_offset
                else:
                    parts.append(R.AlterShareGroupOffsetsResponsePartition(
                        partition_index=p.partition_index, error_code=unknown, error_message=_default(unknown)))
            initializing[tid] = sg.InitTopic(topic.topic_name, {p.partition_index for p in topic.partitions
                                                                 if p.partition_index < count}, now_ms)
            out.append(R.AlterShareGroupOffsetsResponseTopic(topic_name=topic.topic_name, topic_id=tid,
                                                             partitions=parts))
        if initializing:
            self.share_groups[group_id] = group  # its record creates it on replay too (an Empty share group)
            for tid, info in initializing.items():
                held = group.initializing.get(tid)
                parts = info.partitions | (held.partitions if held else set())
                group.initializing[tid] = sg.InitTopic(info.name, parts, now_ms)
                group.deleting.pop(tid, None)
            result.records.extend(sg.state_partition_records(group))
        init = None
        if offsets:
            init = InitializeRequest(group_id, group.epoch, {t: sorted(ps) for t, ps in offsets.items()}, offsets)
        return result, R(throttle_time_ms=0, error_code=0, responses=out), init

    # ================================================================================================ delete offsets
    def share_delete_offsets(self, group_id: str, topic_names: list[str], lookup: sg.TopicLookup
                             ) -> tuple[Result, OffsetsDeletion]:
        """DeleteShareGroupOffsets' first step (``initiateDeleteShareGroupOffsets``): the requested topics' initialized
        partitions move to deleting (a topic already deleting is asked again, all its partitions); a topic not in
        the metadata, or with nothing initialized, is refused with UNKNOWN_TOPIC_OR_PARTITION. A group without
        state-partition metadata answers nothing per topic (as Kafka's)."""
        result = Result()
        error = self._empty_share_group(group_id)
        if error is not None:
            return result, OffsetsDeletion(error, [], {})
        group = self.share_groups[group_id]
        refused, delete = [], {}
        if not _has_state_metadata(group):
            return result, OffsetsDeletion(None, refused, delete)
        T = w.DeleteShareGroupOffsetsResponse.DeleteShareGroupOffsetsResponseTopic
        unknown = ec.UNKNOWN_TOPIC_OR_PARTITION
        for name in topic_names:
            found = lookup(name)
            if found is None:
                refused.append(T(topic_name=name, topic_id=ZERO_UUID, error_code=unknown,
                                 error_message=_default(unknown)))
                continue
            tid, count = found
            held = group.initialized.pop(tid, None)
            if held is not None:
                delete[tid] = sorted(held.partitions)
                group.deleting[tid] = name
            elif tid in group.deleting:
                delete[tid] = list(range(count))
            else:
                refused.append(T(topic_name=name, topic_id=ZERO_UUID, error_code=unknown,
                                 error_message=NO_OFFSETS_TO_DELETE))
        result.records.extend(sg.state_partition_records(group))
        return result, OffsetsDeletion(None, refused, delete)

    def share_offsets_deleted(self, group_id: str, deleted: dict) -> tuple[Result, list]:
        """DeleteShareGroupOffsets' last step: the topics (id -> name) whose state the share coordinator deleted
        leave deleting; their answers, NONE."""
        result = Result()
        group = self.share_groups.get(group_id)
        if group is None or not _has_state_metadata(group):
            return result, []
        for tid in deleted:
            group.deleting.pop(tid, None)
        result.records.extend(sg.state_partition_records(group))
        T = w.DeleteShareGroupOffsetsResponse.DeleteShareGroupOffsetsResponseTopic
        return result, [T(topic_name=name, topic_id=tid, error_code=0)
                        for tid, name in sorted(deleted.items(), key=lambda x: str(x[0]))]

    # ================================================================================================ delete group
    def share_group_deletion(self, group_id: str, by_id: TopicById) -> tuple[Result, int, dict]:
        """DeleteGroups' share step for one group (``sharePartitionDeleteRequests``): (records, error, the partitions
        whose state to delete: topic id -> partitions). Not a share group: nothing (the usual deletion decides);
        not empty: NON_EMPTY_GROUP. Its initialized and initializing partitions, and those of a topic still
        deleting that the image holds, all move to deleting."""
        result = Result()
        group = self.share_groups.get(group_id)
        if group is None:
            return result, 0, {}
        if group.members:
            return result, ec.NON_EMPTY_GROUP, {}
        if not _has_state_metadata(group):
            return result, 0, {}
        candidates: dict = {}
        names: dict = {}
        for table in (group.initialized, group.initializing):
            for tid, info in table.items():
                candidates.setdefault(tid, set()).update(info.partitions)
                names[tid] = info.name
        for tid in list(group.deleting):
            found = by_id(tid)
            if found is not None:
                candidates.setdefault(tid, set()).update(range(found[1]))
                names[tid] = found[0]
        group.initialized, group.initializing = {}, {}
        group.deleting = {tid: names[tid] for tid in candidates}
        result.records.extend(sg.state_partition_records(group))
        return result, 0, {tid: sorted(ps) for tid, ps in candidates.items()}


def _has_state_metadata(group: sg.ShareGroup) -> bool:
    return group.state_recorded


def offsets_from_summaries(results, names: dict, latest: dict) -> list:
    """DescribeShareGroupOffsets' topics from ReadShareGroupStateSummary's results (Kafka's
    ``computeShareGroupLagAndBuildResponse``): a partition the share coordinator could not read, or never
    initialized, reads as start offset -1 and lag -1 with no error (absence of data, as OffsetFetch); otherwise its
    lag is the partition's latest offset - start offset - delivery-complete count. ``latest``: (topic id,
    partition) -> the latest offset, or (error code, message) when it could not be had."""
    R = w.DescribeShareGroupOffsetsResponse
    out = []
    for topic in results:
        parts = []
        for p in topic.partitions:
            if not lag_wanted(p):
                ok = p.error_code == 0
                parts.append(R.DescribeShareGroupOffsetsResponsePartition(
                    partition_index=p.partition, start_offset=p.start_offset if ok else UNINITIALIZED_START_OFFSET,
                    leader_epoch=p.leader_epoch if ok else DEFAULT_LEADER_EPOCH, lag=UNINITIALIZED_LAG, error_code=0))
                continue
            end = latest.get((topic.topic_id, p.partition))
            if isinstance(end, tuple) or end is None:
                code, message = end if isinstance(end, tuple) else (ec.UNKNOWN_SERVER_ERROR, None)
                parts.append(R.DescribeShareGroupOffsetsResponsePartition(
                    partition_index=p.partition, start_offset=0, leader_epoch=0, lag=UNINITIALIZED_LAG,
                    error_code=code, error_message=message))
                continue
            parts.append(R.DescribeShareGroupOffsetsResponsePartition(
                partition_index=p.partition, start_offset=p.start_offset, leader_epoch=p.leader_epoch,
                lag=end - p.start_offset - p.delivery_complete_count, error_code=0))
        out.append(R.DescribeShareGroupOffsetsResponseTopic(topic_name=names.get(topic.topic_id, ""),
                                                            topic_id=topic.topic_id, partitions=parts))
    return out


def lag_wanted(p) -> bool:
    """Kafka's ``shouldComputeSharePartitionLag``: read without error, initialized, delivery-complete count known."""
    return p.error_code == 0 and p.start_offset != UNINITIALIZED_START_OFFSET and p.delivery_complete_count != -1
