"""Classic group rules the conformance run against Kafka 4.4 found (issue #36; scenarios in
``tests/conformance/scenarios``): the member id in JoinGroup's refusals, protocols checked against the rejoining
member's own, SyncGroup v5's mandatory protocol type and name, empty group ids, LeaveGroup v3+ of an unknown
group, and the assignment a member keeps through a rebalance."""

from __future__ import annotations

from coordinator.test_group_shard import CFG, SUB, join, sync

from kraftwire import error_codes as ec
from kraftwire.coordinator.group.shard import GroupShard
from kraftwire.protocol import messages as w


def _stable(shard, member_id_of=lambda r: r.replies[0].body.member_id):
    """One member joined (v3: no MEMBER_ID_REQUIRED round) and synced with an assignment; its member id."""
    member = member_id_of(join(shard, version=3))
    sync(shard, member, 1, [(member, b"assigned")])
    return member


def test_join_refusals_carry_the_member_id_asked_with():
    shard = GroupShard(0, CFG)
    body = join(shard, "nobody").replies[0].body
    assert (body.error_code, body.member_id) == (ec.UNKNOWN_MEMBER_ID, "nobody")
    body = join(shard, "nobody", session=1).replies[0].body
    assert (body.error_code, body.member_id) == (ec.INVALID_SESSION_TIMEOUT, "nobody")


def test_a_rejoining_member_must_share_a_protocol_with_its_own_old_ones():
    """Kafka's ``supportsProtocols`` counts every member, the one rejoining too."""
    shard = GroupShard(0, CFG)
    member = _stable(shard)
    body = join(shard, member, version=3, protocols=(("roundrobin", SUB),)).replies[0].body
    assert (body.error_code, body.member_id) == (ec.INCONSISTENT_GROUP_PROTOCOL, member)


def test_sync_v5_needs_the_protocol_type_and_name():
    shard = GroupShard(0, CFG)
    member = join(shard, version=3).replies[0].body.member_id
    S = w.SyncGroupRequest
    for protocol_type, protocol_name in ((None, "range"), ("consumer", None)):
        body = S(group_id="g", generation_id=1, member_id=member, protocol_type=protocol_type,
                 protocol_name=protocol_name, assignments=[])
        assert shard.sync_group(body, 5, "s", 0).replies[0].body.error_code == ec.INCONSISTENT_GROUP_PROTOCOL
    body = S(group_id="g", generation_id=1, member_id=member, assignments=[])
    assert shard.sync_group(body, 4, "s", 0).replies[0].body.error_code == 0  # before v5 they are optional


def test_an_empty_group_id_is_invalid_for_sync_heartbeat_leave_and_offset_delete_not_for_commits():
    shard = GroupShard(0, CFG)
    assert shard.sync_group(w.SyncGroupRequest(group_id="", generation_id=1, member_id="m", assignments=[]), 3,
                            "s", 0).replies[0].body.error_code == ec.INVALID_GROUP_ID
    assert shard.heartbeat(w.HeartbeatRequest(group_id="", generation_id=1, member_id="m"), 3, "h",
                           0).replies[0].body.error_code == ec.INVALID_GROUP_ID
    L = w.LeaveGroupRequest
    for version in (2, 4):
        answer = shard.leave_group(L(group_id="", member_id="m", members=[L.MemberIdentity(member_id="m")]),
                                   version, "l", 0).replies[0].body
        assert (answer.error_code, answer.members) == (ec.INVALID_GROUP_ID, [])
    D = w.OffsetDeleteRequest
    answer = shard.offset_delete(D(group_id="", topics=[]), [], "d").replies[0].body
    assert answer.error_code == ec.INVALID_GROUP_ID
    C = w.OffsetCommitRequest
    answer = shard.offset_commit(C(group_id="", generation_id_or_member_epoch=-1, member_id="", topics=[
        C.OffsetCommitRequestTopic(name="t", partitions=[C.OffsetCommitRequestPartition(
            partition_index=0, committed_offset=5)])]), 8, "c", 0).replies[0].body
    assert answer.topics[0].partitions[0].error_code == 0


def test_leaving_an_unknown_group_from_v3_refuses_each_member():
    shard = GroupShard(0, CFG)
    L = w.LeaveGroupRequest
    answer = shard.leave_group(L(group_id="g", members=[L.MemberIdentity(member_id="a"),
                                                        L.MemberIdentity(member_id="b")]), 3, "l", 0).replies[0].body
    assert answer.error_code == 0
    assert [(m.member_id, m.error_code) for m in answer.members] == [("a", ec.UNKNOWN_MEMBER_ID),
                                                                     ("b", ec.UNKNOWN_MEMBER_ID)]
    answer = shard.leave_group(L(group_id="g", member_id="a"), 2, "l", 0).replies[0].body
    assert answer.error_code == ec.UNKNOWN_MEMBER_ID


def test_a_member_keeps_its_assignment_through_a_rebalance_until_the_next_sync():
    """DescribeGroups outside Stable (Kafka's ``describeNoMetadata``): no metadata, the assignment held."""
    shard = GroupShard(0, CFG)
    member = _stable(shard)
    join(shard, version=3, token="second")  # a second member: the group rebalances
    described = shard.describe_group("g", 5)
    assert described.group_state == "PreparingRebalance"
    held = {m.member_id: (m.member_assignment, m.member_metadata) for m in described.members}
    assert held[member] == (b"assigned", b"")
    join(shard, member, version=3, token="rejoin")  # both joined: CompletingRebalance, the assignment still held
    described = shard.describe_group("g", 5)
    assert described.group_state == "CompletingRebalance"
    assert {m.member_id: m.member_assignment for m in described.members}[member] == b"assigned"
