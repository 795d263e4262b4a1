"""OffsetCommit checks of a classic group in the order of Kafka 4.x's group coordinator (``ClassicGroup`` /
``OffsetMetadataManager.validateOffsetCommit``): the group must exist (GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION
before) unless the commit carries no generation; then a Dead group, the static instance, the member and its
generation are checked before a group completing its rebalance answers REBALANCE_IN_PROGRESS."""

from __future__ import annotations

import pytest

from coordinator.test_group_shard import CFG, codes, commit, join, sync
from kraftwire import error_codes as ec
from kraftwire.coordinator.group.shard import COMPLETING, DEAD, STABLE, GroupShard
from kraftwire.protocol import messages as w


def completing(*, instance=None):
    """A group whose only member joined (generation 1) and has not synced: (shard, member id, generation)."""
    shard = GroupShard(0, CFG)
    shard.loaded(0)
    body = join(shard, version=5, instance=instance).replies[0].body
    if not instance:  # MEMBER_ID_REQUIRED first
        body = join(shard, body.member_id, version=5).replies[0].body
    assert body.error_code == 0 and shard.groups["g"].state == COMPLETING
    return shard, body.member_id, body.generation_id


def commit_as(shard, member_id, generation, instance, *, version=8):
    C = w.OffsetCommitRequest
    body = C(group_id="g", generation_id_or_member_epoch=generation, member_id=member_id, group_instance_id=instance,
             topics=[C.OffsetCommitRequestTopic(name="t", partitions=[C.OffsetCommitRequestPartition(
                 partition_index=0, committed_offset=100, committed_metadata="")])])
    return shard.offset_commit(body, version, "c", 0)


@pytest.mark.parametrize("version", range(2, 11))
def test_offset_commit_with_unknown_group(version):
    """Mirrors Kafka's OffsetMetadataManagerTest testOffsetCommitWithUnknownGroup: a commit with a generation into a
    group the coordinator does not know is GROUP_ID_NOT_FOUND from v9 (for both protocols), ILLEGAL_GENERATION
    before; without a generation it creates a simple group (testSimpleGroupOffsetCommit)."""
    shard = GroupShard(0, CFG)
    shard.loaded(0)
    r = commit(shard, "member", 10, {("bar", 0): 100}, version=version, group="foo")
    assert codes(r) == {ec.GROUP_ID_NOT_FOUND if version >= 9 else ec.ILLEGAL_GENERATION} and r.records == []
    assert "foo" not in shard.groups
    r = commit(shard, "", -1, {("bar", 0): 100}, version=version, group="foo")
    assert codes(r) == {0} and len(r.records) == 1


def test_illegal_generation_comes_before_rebalance_in_progress():
    """Mirrors Kafka's OffsetMetadataManagerTest testGenericGroupOffsetCommitWithIllegalGeneration: the member is
    known, its generation is not the group's, and the group is completing its rebalance: ILLEGAL_GENERATION."""
    shard, member, gen = completing()
    assert codes(commit(shard, member, gen + 9, {("t", 0): 1})) == {ec.ILLEGAL_GENERATION}


def test_unknown_member_comes_before_rebalance_in_progress():
    """Mirrors Kafka's OffsetMetadataManagerTest testGenericGroupOffsetCommitWithUnknownMemberId and
    testGenericGroupOffsetCommitWithoutMemberIdAndGeneration: an unknown member, or a commit without member id and
    generation into a group with members, is UNKNOWN_MEMBER_ID also while the group completes its rebalance."""
    shard, member, gen = completing()
    assert codes(commit(shard, "member", gen, {("t", 0): 1})) == {ec.UNKNOWN_MEMBER_ID}
    assert codes(commit(shard, "", -1, {("t", 0): 1})) == {ec.UNKNOWN_MEMBER_ID}


def test_a_valid_member_of_a_completing_group_gets_rebalance_in_progress():
    """Mirrors Kafka's OffsetMetadataManagerTest testGenericGroupOffsetCommitWhileInCompletingRebalanceState."""
    shard, member, gen = completing()
    assert codes(commit(shard, member, gen, {("t", 0): 1})) == {ec.REBALANCE_IN_PROGRESS}


def test_static_instance_checks_come_first():
    """Mirrors Kafka's OffsetMetadataManagerTest testGenericGroupOffsetCommitWithUnknownInstanceId and
    testGenericGroupOffsetCommitWithFencedInstanceId: an instance id the group does not hold is UNKNOWN_MEMBER_ID
    (also for a known member without one); one held by another member id is FENCED_INSTANCE_ID; both before the
    generation and the group's state are looked at."""
    shard, member, gen = completing()
    assert codes(commit_as(shard, member, gen + 9, "instanceid")) == {ec.UNKNOWN_MEMBER_ID}
    shard, member, gen = completing(instance="new-instance-id")
    assert codes(commit_as(shard, member, gen + 9, "old-instance-id")) == {ec.UNKNOWN_MEMBER_ID}
    assert codes(commit_as(shard, "other", gen + 9, "new-instance-id")) == {ec.FENCED_INSTANCE_ID}
    assert codes(commit_as(shard, member, gen + 9, "new-instance-id")) == {ec.ILLEGAL_GENERATION}
    assert codes(commit_as(shard, member, gen, "new-instance-id")) == {ec.REBALANCE_IN_PROGRESS}


def test_dead_group_and_stable_group_commits():
    """Mirrors Kafka's OffsetMetadataManagerTest testGenericGroupOffsetCommitWithDeadGroup and
    testGenericGroupOffsetCommitMaintainsSession: a Dead group is COORDINATOR_NOT_AVAILABLE; a commit of the
    current member in a Stable group is written and keeps its session."""
    shard, member, gen = completing()
    sync(shard, member, gen, [(member, b"a")])
    assert shard.groups["g"].state == STABLE
    deadline = shard.groups["g"].members[member].deadline_ms
    r = commit(shard, member, gen, {("t", 0): 1}, now=5_000)
    assert codes(r) == {0} and len(r.records) == 1
    assert shard.groups["g"].members[member].deadline_ms == deadline + 5_000
    shard.groups["g"].state = DEAD
    assert codes(commit(shard, member, gen, {("t", 0): 1})) == {ec.COORDINATOR_NOT_AVAILABLE}
