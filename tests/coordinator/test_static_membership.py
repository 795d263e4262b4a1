"""Static membership (KIP-345) in the group coordinator, request by request: a static member joins without the
MEMBER_ID_REQUIRED round; a restarted follower takes its old place in a Stable group without a rebalance; a
restarted leader causes one; the replaced member id is fenced on every API; a static member leaves by instance id.
(The end-to-end check with librdkafka is in tests/interop/test_group_admin.py.)"""

from __future__ import annotations

from kraftwire.coordinator.group.shard import STABLE, GroupConfig, GroupShard
from kraftwire.error_codes import FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID
from kraftwire.protocol import messages as w


def join(shard, instance, member_id="", metadata=b"m", version=7):
    R = w.JoinGroupRequest
    return shard.join_group(R(group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id=member_id,
                              group_instance_id=instance, protocol_type="consumer",
                              protocols=[R.JoinGroupRequestProtocol(name="range", metadata=metadata)]), version,
                            f"join-{instance}-{member_id}", 0, "c", "/127.0.0.1").replies


def sync(shard, member_id, generation, instance, assignments=()):
    R = w.SyncGroupRequest
    return shard.sync_group(R(group_id="g", generation_id=generation, member_id=member_id, group_instance_id=instance,
                              protocol_type="consumer", protocol_name="range", assignments=[
                                  R.SyncGroupRequestAssignment(member_id=m, assignment=a) for m, a in assignments]),
                            5, f"sync-{member_id}", 0).replies


def heartbeat(shard, member_id, generation, instance):
    return shard.heartbeat(w.HeartbeatRequest(group_id="g", generation_id=generation, member_id=member_id,
                                              group_instance_id=instance), 4, "hb", 0).replies[0].body.error_code


def by_token(replies):
    return {r.token: r.body for r in replies}


def test_static_members_rejoin_fenced_and_leave_by_instance_id():
    shard = GroupShard(0, GroupConfig(initial_rebalance_delay_ms=0))
    shard.loaded(0)
    [a] = [r.body for r in join(shard, "a")]
    assert a.error_code == 0 and a.member_id.startswith("a-") and a.leader == a.member_id  # no MEMBER_ID_REQUIRED
    generation = a.generation_id
    assert sync(shard, a.member_id, generation, "a", [(a.member_id, b"all")])[0].body.assignment == b"all"
    assert join(shard, "b") == []  # a second static member: a rebalance the leader joins again
    answers = by_token(join(shard, "a", a.member_id))
    a2 = answers[f"join-a-{a.member_id}"]
    b = next(body for token, body in answers.items() if token.startswith("join-b"))
    generation = a2.generation_id
    assert b.error_code == 0 and generation == b.generation_id and a2.leader == a.member_id
    assert sync(shard, b.member_id, generation, "b") == []  # waits for the leader
    replies = by_token(sync(shard, a.member_id, generation, "a", [(a.member_id, b"pa"), (b.member_id, b"pb")]))
    group = shard.groups["g"]
    assert group.state == STABLE and replies[f"sync-{b.member_id}"].assignment == b"pb"

    # b restarts (a new member id, same instance id): its place back, same generation, no rebalance
    [b_again] = [r.body for r in join(shard, "b")]
    assert b_again.error_code == 0 and b_again.member_id != b.member_id
    assert b_again.generation_id == generation and b_again.members == [] and group.state == STABLE
    assert sync(shard, b_again.member_id, generation, "b")[0].body.assignment == b"pb"
    # the old incarnation is fenced everywhere; without its instance id it is simply unknown
    assert heartbeat(shard, b.member_id, generation, "b") == FENCED_INSTANCE_ID
    assert heartbeat(shard, b.member_id, generation, None) == UNKNOWN_MEMBER_ID
    assert sync(shard, b.member_id, generation, "b")[0].body.error_code == FENCED_INSTANCE_ID
    assert join(shard, "b", b.member_id)[0].body.error_code == FENCED_INSTANCE_ID
    R = w.OffsetCommitRequest
    commit = shard.offset_commit(R(group_id="g", generation_id_or_member_epoch=generation, member_id=b.member_id,
                                   group_instance_id="b", topics=[R.OffsetCommitRequestTopic(name="t", partitions=[
                                       R.OffsetCommitRequestPartition(partition_index=0, committed_offset=5)])]), 8,
                                 "c", 0)
    assert commit.replies[0].body.topics[0].partitions[0].error_code == FENCED_INSTANCE_ID and not commit.records
    assert heartbeat(shard, b_again.member_id, generation, "b") == 0

    # the leader restarting below JoinGroup v9: no rebalance; Kafka 4.4 names its old member id as the leader, so it
    # syncs as a follower and keeps the assignment it made (the conformance scenario JoinGroup-v5-static-member-
    # replaced; v9's SkipAssignment below)
    [a_again] = [r.body for r in join(shard, "a")]
    assert (a_again.error_code, a_again.generation_id, a_again.leader, a_again.members) == (0, generation,
                                                                                           a.member_id, [])
    assert group.state == STABLE and group.leader == a_again.member_id != a.member_id
    assert sync(shard, a_again.member_id, generation, "a")[0].body.assignment == b"pa"
    L = w.LeaveGroupRequest
    leave = shard.leave_group(L(group_id="g", members=[L.MemberIdentity(member_id="", group_instance_id="b")]), 3,
                              "leave", 0)
    [gone] = leave.replies[-1].body.members
    assert gone.error_code == 0 and gone.member_id == b_again.member_id and gone.group_instance_id == "b"
    assert "b" not in group.static and list(group.static) == ["a"]


def test_a_restarted_static_leader_keeps_its_assignment_from_join_group_v9():
    """KIP-814 (JoinGroup v9): a static leader rejoining a Stable group with unchanged protocols takes its place
    without a rebalance, gets the members and SkipAssignment (it keeps its assignment, so it need not assign again);
    with changed protocols it is a rebalance as before, as Kafka's updateStaticMemberThenRebalanceOrCompleteJoin."""
    shard = GroupShard(0, GroupConfig(initial_rebalance_delay_ms=0))
    shard.loaded(0)
    [a] = [r.body for r in join(shard, "a", version=9)]
    generation = a.generation_id
    sync(shard, a.member_id, generation, "a", [(a.member_id, b"all")])
    group = shard.groups["g"]
    [a_again] = [r.body for r in join(shard, "a", version=9)]
    assert (a_again.error_code, a_again.generation_id, a_again.skip_assignment) == (0, generation, True)
    assert a_again.leader == a_again.member_id != a.member_id and group.state == STABLE
    assert [(x.member_id, x.group_instance_id) for x in a_again.members] == [(a_again.member_id, "a")]
    assert sync(shard, a_again.member_id, generation, "a")[0].body.assignment == b"all"
    assert heartbeat(shard, a.member_id, generation, "a") == FENCED_INSTANCE_ID
    assert join(shard, "a", metadata=b"changed", version=9)[0].body.skip_assignment is False
    assert group.generation == generation + 1  # new protocols: a rebalance, the leader assigns again
