"""The share-group admin decisions of the group coordinator shard (``coordinator.group.share_admin``):
AlterShareGroupOffsets, DeleteShareGroupOffsets, DeleteGroups of share groups and DescribeShareGroupOffsets' answer,
mirroring Kafka's ``GroupMetadataManagerTest`` / ``GroupCoordinatorShardTest`` / ``GroupCoordinatorServiceTest``
share cases (names in each docstring)."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group import share as sg
from kraftwire.coordinator.group.model import Result
from kraftwire.coordinator.group.share_admin import NO_OFFSETS_TO_DELETE, offsets_from_summaries
from kraftwire.ids import ZERO_UUID
from kraftwire.protocol import messages as w

from tests.coordinator.test_share_group import BAR, FOO, GID, IMAGE, NOW, beat, joined, shard

A = w.AlterShareGroupOffsetsRequest
BY_ID = {tid: (name, count) for name, (tid, count) in IMAGE.items()}.get


def emptied(s):
    """A share group whose one member left: every subscribed partition initialized, no members."""
    g = joined(s)
    beat(s, "m1", sg.LEAVE_EPOCH)
    assert not g.members
    return g


def replayed(result: Result) -> dict:
    """The share groups replaying ``result``'s records rebuilds (what a reloading shard reads of them)."""
    groups: dict = {}
    for k, v in result.records:
        sg.replay(groups, cr.decode(k, v))
    return groups


def alter(s, topics, now=NOW):
    return s.share_alter_offsets(GID, [A.AlterShareGroupOffsetsRequestTopic(topic_name=name, partitions=[
        A.AlterShareGroupOffsetsRequestPartition(partition_index=p, start_offset=o) for p, o in parts])
        for name, parts in topics], IMAGE.get, now)


# ------------------------------------------------------------------------------------------------ alter
def test_share_group_alter_offsets_creates_unknown_group_and_refuses_other_types():
    """GroupMetadataManagerTest.testAlterShareGroupOffsets... (Kafka 4.4's ``getOrMaybeCreateShareGroup(id, true)``):
    an unknown group id becomes an Empty share group once its state-partition record is written (none is written,
    and no group made, when no partition is known); a consumer group's id is GROUP_ID_NOT_FOUND "Group <id> is not
    a share group.", nothing written."""
    s = shard()
    result, answer, init = alter(s, [("nope", [(0, 5)])])
    assert (answer.error_code, result.records, init, s.share_groups) == (0, [], None, {})
    result, answer, init = alter(s, [("foo", [(0, 5)])])
    assert answer.error_code == 0 and init.start_offsets == {FOO: {0: 5}}
    assert replayed(result)[GID].initializing[FOO].partitions == {0}
    assert s.list_groups(None, {"share"}) == [(GID, "share", "Empty", "share")]
    s2 = shard()
    s2.consumer_groups[GID] = object()
    result, answer, _ = alter(s2, [("foo", [(0, 5)])])
    assert (answer.error_code, answer.error_message, result.records) == (
        ec.GROUP_ID_NOT_FOUND, f"Group {GID} is not a share group.", [])


def test_share_group_alter_offsets_non_empty_group():
    """ShareGroup.validateOffsetsAlterable: a group with a member is NON_EMPTY_GROUP."""
    s = shard()
    joined(s)
    result, answer, init = alter(s, [("foo", [(0, 5)])])
    assert (answer.error_code, answer.error_message, result.records, init) == (
        ec.NON_EMPTY_GROUP, ec.default_message(ec.NON_EMPTY_GROUP), [], None)


def test_share_group_alter_offsets_initializes_at_the_given_offsets():
    """GroupMetadataManagerTest.testAlterShareGroupOffsets...: each known partition NONE, one beyond the topic's
    partitions UNKNOWN_TOPIC_OR_PARTITION; the known ones are initializing (the record) and the share coordinator
    is asked to initialize them at the given start offsets and the group epoch."""
    s = shard()
    g = emptied(s)
    result, answer, init = alter(s, [("foo", [(0, 5), (9, 1)]), ("bar", [(2, 0)])])
    assert answer.error_code == 0
    rows = [(t.topic_name, t.topic_id, [(p.partition_index, p.error_code, p.error_message) for p in t.partitions])
            for t in answer.responses]
    unknown = ec.default_message(ec.UNKNOWN_TOPIC_OR_PARTITION)
    assert rows == [("foo", FOO, [(0, 0, None), (9, ec.UNKNOWN_TOPIC_OR_PARTITION, unknown)]),
                    ("bar", BAR, [(2, 0, None)])]
    assert g.initializing[FOO].partitions == {0} and g.initializing[BAR].partitions == {2}
    assert [cr.decode(k, v).record_type for k, v in result.records] == [sg.STATE_PARTITIONS]
    body = init.body()
    asked = {(t.topic_id, p.partition): (p.start_offset, p.state_epoch) for t in body.topics for p in t.partitions}
    assert asked == {(FOO, 0): (5, g.epoch), (BAR, 2): (0, g.epoch)}
    s.share_initialized(GID, init.topics)
    assert not g.initializing and g.initialized[FOO].partitions == set(range(6))


def test_share_group_alter_offsets_unknown_topic_in_the_coordinator():
    """A topic the image lost between the edge's check and the coordinator's: its partitions
    UNKNOWN_TOPIC_OR_PARTITION with the zero topic id, nothing to initialize."""
    s = shard()
    emptied(s)
    _, answer, init = alter(s, [("gone", [(0, 1)])])
    t = answer.responses[0]
    assert (t.topic_id, t.partitions[0].error_code, init) == (ZERO_UUID, ec.UNKNOWN_TOPIC_OR_PARTITION, None)


# ------------------------------------------------------------------------------------------------ delete offsets
def test_share_group_delete_offsets_moves_initialized_to_deleting():
    """GroupMetadataManagerTest.testSharePartitionsEligibleForOffsetDeletion...: the requested topic's initialized
    partitions are to be deleted and move to deleting; an unknown topic is UNKNOWN_TOPIC_OR_PARTITION with its
    default message, a known one with nothing initialized "There is no offset information to delete."; once the
    share coordinator deleted the state the topic leaves deleting (completeDeleteShareGroupOffsets)."""
    s = shard()
    g = joined(s, topics=("foo",))
    beat(s, "m1", sg.LEAVE_EPOCH)
    result, decided = s.share_delete_offsets(GID, ["foo", "bar", "nope"], IMAGE.get)
    assert decided.error is None
    assert decided.delete == {FOO: list(range(6))}
    assert [(t.topic_name, t.error_code, t.error_message) for t in decided.refused] == [
        ("bar", ec.UNKNOWN_TOPIC_OR_PARTITION, NO_OFFSETS_TO_DELETE),
        ("nope", ec.UNKNOWN_TOPIC_OR_PARTITION, ec.default_message(ec.UNKNOWN_TOPIC_OR_PARTITION))]
    assert FOO not in g.initialized and g.deleting == {FOO: "foo"}
    assert [cr.decode(k, v).record_type for k, v in result.records] == [sg.STATE_PARTITIONS]
    # asked again while deleting: every partition of the topic, again
    _, again = s.share_delete_offsets(GID, ["foo"], IMAGE.get)
    assert again.delete == {FOO: list(range(6))} and again.refused == []
    result, answers = s.share_offsets_deleted(GID, {FOO: "foo"})
    assert g.deleting == {} and [(t.topic_name, t.topic_id, t.error_code) for t in answers] == [("foo", FOO, 0)]
    assert replayed(result)[GID].deleting == {}
    # the record is still there, with no topics: a topic asked again is answered "no offset information"
    _, again = s.share_delete_offsets(GID, ["foo"], IMAGE.get)
    assert [(t.topic_name, t.error_message) for t in again.refused] == [("foo", NO_OFFSETS_TO_DELETE)]


def test_share_group_delete_offsets_refusals():
    """initiateDeleteShareGroupOffsets: GROUP_ID_NOT_FOUND for no share group, NON_EMPTY_GROUP with a member; a
    group without state-partition metadata answers no topic at all (Kafka returns before looking at them)."""
    s = shard()
    _, decided = s.share_delete_offsets(GID, ["foo"], IMAGE.get)
    assert decided.error == (ec.GROUP_ID_NOT_FOUND, f"Group {GID} not found.")
    joined(s)
    _, decided = s.share_delete_offsets(GID, ["foo"], IMAGE.get)
    assert decided.error == (ec.NON_EMPTY_GROUP, ec.default_message(ec.NON_EMPTY_GROUP))
    s2 = shard()
    beat(s2, "m1", 0, ["nothere"])
    beat(s2, "m1", sg.LEAVE_EPOCH)
    result, decided = s2.share_delete_offsets(GID, ["foo"], IMAGE.get)
    assert decided == (None, [], {}) and result.records == []


# ------------------------------------------------------------------------------------------------ DeleteGroups
def test_share_group_delete_groups_deletes_state_then_group():
    """GroupCoordinatorShardTest.testSharePartitionDeleteRequests / GroupMetadataManagerTest
    .testShareGroupBuildPartitionDeleteRequest...: an empty share group's initialized and initializing partitions
    move to deleting and are the state to delete; then DeleteGroups deletes the group (its tombstones)."""
    s = shard()
    g = joined(s)
    beat(s, "m1", sg.LEAVE_EPOCH)
    g.initializing[BAR] = sg.InitTopic("bar", {0}, NOW)  # asked again, not answered yet
    result, code, delete = s.share_group_deletion(GID, BY_ID)
    assert code == 0 and delete == {FOO: list(range(6)), BAR: [0, 1, 2]}
    assert (g.initialized, g.initializing, g.deleting) == ({}, {}, {FOO: "foo", BAR: "bar"})
    assert [cr.decode(k, v).record_type for k, v in result.records] == [sg.STATE_PARTITIONS]
    tombs = Result()
    assert s.delete_group(GID, tombs) == 0
    assert GID not in s.share_groups
    assert {cr.decode(k, v).record_type for k, v in tombs.records} == {sg.TARGET_METADATA, sg.STATE_PARTITIONS,
                                                                       sg.GROUP_METADATA}
    assert all(v is None for _k, v in tombs.records)
    assert s.list_groups(None, {"share"}) == []


def test_share_group_delete_groups_refusals_and_other_groups():
    """sharePartitionDeleteRequests: a non-empty share group NON_EMPTY_GROUP (and DeleteGroups refuses it too); a
    group that is not a share group is left to the usual deletion; a deleting topic the image no longer holds is
    dropped."""
    s = shard()
    joined(s)
    assert s.share_group_deletion(GID, BY_ID)[1] == ec.NON_EMPTY_GROUP
    assert s.delete_group(GID, Result()) == ec.NON_EMPTY_GROUP
    other, code, delete = s.share_group_deletion("other", BY_ID)
    assert (other.records, code, delete) == ([], 0, {})
    g = s.share_groups[GID]
    beat(s, "m1", sg.LEAVE_EPOCH)
    g.initialized = {}
    g.deleting = {FOO: "foo", ZERO_UUID: "gone"}
    _, code, delete = s.share_group_deletion(GID, BY_ID)
    assert code == 0 and delete == {FOO: list(range(6))} and g.deleting == {FOO: "foo"}


def test_share_group_list_groups_has_the_share_type():
    """ListGroups v5 with the share type: a share group listed as type "share", protocol type "share"."""
    s = shard()
    joined(s)
    assert s.list_groups(None, {"share"}) == [(GID, "share", "Stable", "share")]
    assert s.list_groups(None, {"consumer"}) == []


# ------------------------------------------------------------------------------------------------ describe
def test_share_group_initialized_partitions():
    """GroupMetadataManagerTest.testInitializedShareGroupPartitions: the initialized ones only (none for no
    group)."""
    s = shard()
    assert s.share_initialized_partitions(GID) == {}
    g = joined(s)
    g.initializing[BAR] = sg.InitTopic("bar", {0}, NOW)
    del g.initialized[BAR]
    assert s.share_initialized_partitions(GID) == {FOO: set(range(6))}


def test_describe_share_group_offsets_lag():
    """GroupCoordinatorServiceTest.testDescribeShareGroupOffsetsWithLag...: lag = latest offset - start offset -
    delivery-complete count; a partition never initialized, or whose summary failed, reads start -1 / epoch 0 /
    lag -1 with no error; one whose latest offset could not be had carries that error."""
    S = w.ReadShareGroupStateSummaryResponse
    results = [S.ReadStateSummaryResult(topic_id=FOO, partitions=[
        S.PartitionResult(partition=0, start_offset=10, leader_epoch=3, state_epoch=1, delivery_complete_count=4),
        S.PartitionResult(partition=1, start_offset=-1, leader_epoch=0, state_epoch=0, delivery_complete_count=-1),
        S.PartitionResult(partition=2, error_code=ec.COORDINATOR_NOT_AVAILABLE, start_offset=7, leader_epoch=2,
                          state_epoch=0),
        S.PartitionResult(partition=3, start_offset=0, leader_epoch=1, state_epoch=1, delivery_complete_count=0)])]
    latest = {(FOO, 0): 25, (FOO, 3): (ec.NOT_LEADER_OR_FOLLOWER, "x")}
    [topic] = offsets_from_summaries(results, {FOO: "foo"}, latest)
    assert (topic.topic_name, topic.topic_id) == ("foo", FOO)
    assert [(p.partition_index, p.start_offset, p.leader_epoch, p.lag, p.error_code) for p in topic.partitions] == [
        (0, 10, 3, 11, 0), (1, -1, 0, -1, 0), (2, -1, 0, -1, 0), (3, 0, 0, -1, ec.NOT_LEADER_OR_FOLLOWER)]
