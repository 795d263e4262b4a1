"""Share groups (KIP-932) in the group coordinator shard: ShareGroupHeartbeat, ShareGroupDescribe, the simple
assignor, the share-partition initialization, the session timer and the records, mirroring Kafka's
``GroupMetadataManagerTest`` share cases, ``SimpleAssignorTest`` and ``ShareGroupTest`` (names in each docstring)."""

from __future__ import annotations

import uuid

import pytest

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group import share as sg
from kraftwire.coordinator.group.shard import GroupConfig, GroupShard
from kraftwire.coordinator.group.share_assignor import assign
from kraftwire.coordinator.group.share_protocol import member_id_valid
from kraftwire.protocol import messages as w

FOO, BAR = uuid.UUID(int=0xF00), uuid.UUID(int=0xBA5)
IMAGE = {"foo": (FOO, 6), "bar": (BAR, 3)}
GID = "fooup"
NOW = 10_000
H = w.ShareGroupHeartbeatRequest


#: the shard's settings unless a test names its own: Kafka's defaults but no assignment interval (every bumped epoch
#: computes the target at once; test_share_group_assignment_interval covers the interval)
AT_ONCE = GroupConfig(share_assignment_interval_ms=0)


def shard(config: GroupConfig | None = None, group_configs=None) -> GroupShard:
    s = GroupShard(0, config or AT_ONCE, group_configs=group_configs)
    s.loaded(0)
    return s


def beat(s, member="m1", epoch=0, topics=None, now=NOW, image=IMAGE, group=GID, rack=None):
    """One heartbeat: (response body, records' types, the initialize request)."""
    result, init = s.share_heartbeat(H(group_id=group, member_id=member, member_epoch=epoch, rack_id=rack,
                                       subscribed_topic_names=topics), "tok", now, "client", "/127.0.0.1",
                                      image.get)
    assert len(result.replies) == 1
    types = [cr.decode(k, v).record_type for k, v in result.records]
    return result.replies[0].body, types, init, result


def joined(s, members=("m1",), topics=("foo", "bar"), initialize=True):
    """Members joined and (by default) every subscribed partition initialized, then heartbeated to the target."""
    init = None
    for m in members:
        _, _, i, _ = beat(s, m, 0, list(topics))
        init = i or init
        if i is not None and initialize:
            s.share_initialized(GID, i.topics)
    for m in members:
        g = s.share_groups[GID]
        beat(s, m, g.members[m].epoch)
    return s.share_groups[GID]


def assigned(body) -> dict:
    return {tp.topic_id: set(tp.partitions) for tp in body.assignment.topic_partitions}


# ------------------------------------------------------------------------------------------------ validation
@pytest.mark.parametrize("fields,message", [
    ({"member_id": " "}, "MemberId can't be empty."),
    ({"group_id": ""}, "GroupId can't be empty."),
    ({"rack_id": ""}, "RackId can't be empty."),
    ({"subscribed_topic_names": None}, "SubscribedTopicNames must be set in first request."),
    ({"subscribed_topic_names": []}, "SubscribedTopicNames must be set in first request."),
    ({"member_epoch": -2}, "MemberEpoch is invalid."),
])
def test_share_group_heartbeat_request_validation(fields, message):
    """GroupCoordinatorServiceTest.testShareGroupHeartbeatRequestValidation: the service's checks, before a shard."""
    s = shard()
    req = dict(group_id=GID, member_id="m1", member_epoch=0, rack_id=None, subscribed_topic_names=["foo"])
    req.update(fields)
    result, init = s.share_heartbeat(H(**req), "tok", NOW, "c", "/h", IMAGE.get)
    body = result.replies[0].body
    assert (body.error_code, body.error_message, result.records, init) == (ec.INVALID_REQUEST, message, [], None)
    assert s.share_groups == {}


def test_member_id_refused_by_the_broker():
    """KafkaApisTest's share heartbeat with an invalid member id: empty or longer than a UUID's 36 characters."""
    assert not member_id_valid("") and not member_id_valid("x" * 37)
    assert member_id_valid(str(uuid.uuid4())) and member_id_valid("m")


def test_share_group_unknown_group_id():
    """testShareGroupUnknownGroupId."""
    body, types, init, _ = beat(shard(), epoch=100)
    assert (body.error_code, body.error_message) == (ec.GROUP_ID_NOT_FOUND, f"Share group {GID} not found.")
    assert types == [] and init is None


def test_share_group_unknown_member_id_joins():
    """testShareGroupUnknownMemberIdJoins: an unknown member with a non-zero epoch."""
    s = shard()
    joined(s)
    body, types, _, _ = beat(s, "m2", 1)
    assert (body.error_code, body.error_message) == (ec.UNKNOWN_MEMBER_ID, f"Member m2 is not a member of group {GID}.")
    assert types == []


# ------------------------------------------------------------------------------------------------ joining
def test_share_group_member_joins_empty_group_with_assignments():
    """testShareGroupMemberJoinsEmptyGroupWithAssignments / testShareGroupHeartbeatInitializeOnPartitionUpdate:
    the join writes the member, the group epoch, the target (empty: nothing is initialized yet), the member's
    assignment and the initializing partitions, and asks the share coordinator to initialize every subscribed
    partition at the group epoch; once they are initialized, the next heartbeat bumps the epoch and assigns them.
    A new group starts at epoch 1 (Kafka 4.4's ModernGroup), so the first member joins at epoch 2."""
    s = shard()
    assert sg.ShareGroup(GID).epoch == sg.NEW_GROUP_EPOCH == 1
    body, types, init, _ = beat(s, topics=["foo", "bar"])
    assert (body.error_code, body.member_id, body.member_epoch, body.heartbeat_interval_ms) == (0, "m1", 2, 5000)
    assert assigned(body) == {}
    assert types == [sg.MEMBER_METADATA, sg.GROUP_METADATA, sg.TARGET_METADATA, sg.CURRENT_ASSIGNMENT,
                     sg.STATE_PARTITIONS]
    assert init.group_id == GID and init.state_epoch == 2
    assert init.topics == {FOO: [0, 1, 2, 3, 4, 5], BAR: [0, 1, 2]}
    req = init.body()
    assert all(p.start_offset == -1 and p.state_epoch == 2 for t in req.topics for p in t.partitions)
    g = s.share_groups[GID]
    assert {t: sorted(i.partitions) for t, i in g.initializing.items()} == init.topics
    s.share_initialized(GID, init.topics)
    assert g.initializing == {} and sorted(g.initialized[FOO].partitions) == [0, 1, 2, 3, 4, 5]
    body, types, init, _ = beat(s, epoch=2)
    assert body.member_epoch == 3 and init is None
    assert assigned(body) == {FOO: set(range(6)), BAR: {0, 1, 2}}
    assert types == [sg.GROUP_METADATA, sg.TARGET_MEMBER, sg.TARGET_METADATA, sg.CURRENT_ASSIGNMENT]


def test_share_group_heartbeat_without_change_answers_no_assignment():
    """A heartbeat that changes nothing writes nothing and carries no assignment (only a join, a full request or a
    changed assignment does)."""
    s = shard()
    g = joined(s)
    body, types, init, _ = beat(s, epoch=g.members["m1"].epoch)
    assert (body.error_code, body.assignment, types, init) == (0, None, [], None)


def test_share_group_member_epoch_fencing():
    """throwIfShareGroupMemberEpochIsInvalid: a greater epoch, or a smaller one that is not the previous, is fenced
    with Kafka's words; the previous epoch (a lost answer) is accepted."""
    s = shard()
    g = joined(s)
    m = g.members["m1"]
    body, types, _, _ = beat(s, epoch=m.epoch + 1)
    assert body.error_code == ec.FENCED_MEMBER_EPOCH and types == []
    assert body.error_message == (f"The share group member has a greater member epoch ({m.epoch + 1}) than the one "
                                  f"known by the group coordinator ({m.epoch}). The member must abandon all its "
                                  f"partitions and rejoin.")
    body, _, _, _ = beat(s, epoch=m.previous_epoch)
    assert body.error_code == 0 and body.member_epoch == m.epoch
    body, _, _, _ = beat(s, epoch=0, topics=["foo"])
    assert body.error_code == ec.FENCED_MEMBER_EPOCH
    assert "does not match the previous member epoch" in body.error_message


def test_share_group_new_member_is_rejected_with_maximum_members_is_reached():
    """testShareGroupNewMemberIsRejectedWithMaximumMembersIsReached: a full group takes no new member; its members
    still heartbeat."""
    s = shard(GroupConfig(share_max_size=1))
    g = joined(s)
    body, types, _, _ = beat(s, "m2", 0, ["foo"])
    assert (body.error_code, body.error_message) == (
        ec.GROUP_MAX_SIZE_REACHED, "The share group has reached its maximum capacity of 1 members.")
    assert types == []
    assert beat(s, "m1", g.members["m1"].epoch)[0].error_code == 0


def test_share_group_partitions_are_shared_and_every_member_gets_some():
    """More members than partitions (SimpleAssignor's arithmetic): 4 members on 3 partitions share each partition
    ceil(4 / 3) = 2 ways, and the 6 assignments split 2, 1, 2, 1 over the members."""
    s = shard()
    g = joined(s, members=("a", "b", "c", "d"), topics=("bar",))
    for m in "abcd":
        beat(s, m, g.members[m].epoch)
    counts = {m: sum(len(ps) for ps in g.members[m].assigned.values()) for m in "abcd"}
    assert [counts[m] for m in "abcd"] == [2, 1, 2, 1]
    sharers = {p: sum(p in g.members[m].assigned.get(BAR, ()) for m in "abcd") for p in range(3)}
    assert sorted(sharers.values()) == [2, 2, 2]
    assert all(m.epoch == g.epoch for m in g.members.values())


def test_share_group_subscription_change_and_topic_change_bump_epoch():
    """A member's new subscription bumps the group epoch and filters its assignment; a subscribed topic's new
    partition count (the metadata hash) bumps it too and asks to initialize the new partitions."""
    s = shard()
    g = joined(s)
    epoch = g.epoch
    body, types, _, _ = beat(s, epoch=g.members["m1"].epoch, topics=["bar"])
    assert g.epoch == epoch + 1 and assigned(body) == {BAR: {0, 1, 2}}
    grown = {"bar": (BAR, 4)}
    body, types, init, _ = beat(s, epoch=g.members["m1"].epoch, image=grown)
    assert g.epoch == epoch + 2 and sg.GROUP_METADATA in types
    assert init.topics == {BAR: [3]}


# ------------------------------------------------------------------------------------------------ leaving
def test_share_group_leaving_member_bumps_group_epoch():
    """testShareGroupLeavingMemberBumpsGroupEpoch: tombstones of the member's current assignment, target and
    metadata, then the bumped group epoch; the answer echoes the member with epoch -1."""
    s = shard()
    g = joined(s, members=("m1", "m2"))
    epoch = g.epoch
    body, types, init, result = beat(s, "m2", -1)
    assert (body.error_code, body.member_id, body.member_epoch) == (0, "m2", -1)
    assert types == [sg.CURRENT_ASSIGNMENT, sg.TARGET_MEMBER, sg.MEMBER_METADATA, sg.GROUP_METADATA]
    assert [v is None for _, v in result.records] == [True, True, True, False]
    assert g.epoch == epoch + 1 and "m2" not in g.members and init is None
    body, _, _, _ = beat(s, "m2", -1)
    assert (body.error_code, body.error_message) == (ec.UNKNOWN_MEMBER_ID, f"Member m2 is not a member of group {GID}.")
    body, _, _, _ = beat(s, "m1", -1, group="nope")
    assert (body.error_code, body.error_message) == (ec.GROUP_ID_NOT_FOUND, "Group nope not found.")


def test_session_timeout_expiration_for_share_member():
    """testSessionTimeoutExpirationForShareMember: a member silent for group.share.session.timeout.ms is fenced
    by the timer, as if it left."""
    s = shard(GroupConfig(share_session_timeout_ms=45_000))
    g = joined(s, members=("m1", "m2"))
    beat(s, "m1", g.members["m1"].epoch, now=NOW + 40_000)
    assert s.next_deadline_ms() == NOW + 45_000  # m2's session
    result = s.tick(NOW + 45_000)
    types = [cr.decode(k, v).record_type for k, v in result.records]
    assert types == [sg.CURRENT_ASSIGNMENT, sg.TARGET_MEMBER, sg.MEMBER_METADATA, sg.GROUP_METADATA]
    assert list(g.members) == ["m1"]


def test_share_group_dynamic_configs():
    """testShareGroupDynamicConfigs: the group's share.session.timeout.ms and share.heartbeat.interval.ms win,
    clamped into the broker's bounds."""
    configs = {GID: {"share.heartbeat.interval.ms": "7000", "share.session.timeout.ms": "50000"}}
    s = shard(group_configs=lambda gid: configs.get(gid, {}))
    body, _, _, _ = beat(s, topics=["foo"])
    assert body.heartbeat_interval_ms == 7000
    assert s.share_groups[GID].members["m1"].deadline_ms == NOW + 50_000
    configs[GID]["share.heartbeat.interval.ms"] = "999999"
    assert beat(s, epoch=2)[0].heartbeat_interval_ms == 15_000  # group.share.max.heartbeat.interval.ms


def test_share_group_assignment_interval():
    """KIP-1263 (GroupMetadataManager.canComputeNextTargetAssignment), as Kafka 4.4 answers it: a bumped epoch
    computes a new target only once group.share.assignment.interval.ms (1000 by default; the group's
    share.assignment.interval.ms within the broker's bounds) has passed since the last one — meanwhile a joining
    member gets the last target's epoch and nothing; a later heartbeat computes it. An interval of 0 never waits."""
    s = shard(GroupConfig())
    _, _, init, _ = beat(s, topics=["foo"])
    g = s.share_groups[GID]
    assert (g.epoch, g.assignment_epoch, g.assignment_timestamp) == (2, 2, NOW)
    s.share_initialized(GID, init.topics)
    body, _, _, _ = beat(s, epoch=2, now=NOW + 999)
    assert (body.member_epoch, body.assignment, g.epoch, g.assignment_epoch) == (2, None, 3, 2)
    body, _, _, _ = beat(s, epoch=2, now=NOW + 1000)
    assert (body.member_epoch, assigned(body), g.assignment_timestamp) == (3, {FOO: set(range(6))}, NOW + 1000)
    body, types, _, _ = beat(s, "m2", 0, ["foo"], now=NOW + 1999)
    assert (body.member_epoch, assigned(body), g.epoch, g.assignment_epoch) == (3, {}, 4, 3)
    assert sg.TARGET_METADATA not in types
    body, types, _, _ = beat(s, "m2", 3, now=NOW + 2000)
    assert (body.member_epoch, g.assignment_epoch, g.assignment_timestamp) == (4, 4, NOW + 2000)
    assert assigned(body) and sg.TARGET_METADATA in types
    # the timestamp goes into the target assignment metadata record and comes back on replay
    replayed: dict = {}
    for key, value in sg.target_records(g, []):
        sg.replay(replayed, cr.decode(key, value))
    assert (replayed[GID].assignment_epoch, replayed[GID].assignment_timestamp) == (4, NOW + 2000)
    configs = {GID: {"share.assignment.interval.ms": "0"}}
    s = shard(GroupConfig(), group_configs=lambda gid: configs.get(gid, {}))
    joined(s, members=("m1",), topics=("foo",))
    body, _, _, _ = beat(s, "m2", 0, ["foo"])
    assert body.member_epoch == s.share_groups[GID].assignment_epoch == 4


# ------------------------------------------------------------------------------------------------ initialization
def test_share_group_heartbeat_persister_request_with_initializing():
    """testShareGroupHeartbeatPersisterRequestWithInitializing: partitions being initialized are not asked again
    until group.share.initialize.retry.interval.ms (at least offsets.commit.timeout.ms) has passed."""
    s = shard(GroupConfig(share_initialize_retry_interval_ms=30_000))
    _, _, init, _ = beat(s, topics=["bar"])
    assert init.topics == {BAR: [0, 1, 2]}
    assert beat(s, epoch=2, now=NOW + 29_999)[2] is None
    _, types, again, _ = beat(s, epoch=2, now=NOW + 30_000)
    assert again.topics == {BAR: [0, 1, 2]} and types == [sg.STATE_PARTITIONS]


def test_share_group_initialize_success_partial_and_failure():
    """testShareGroupInitializeSuccess / testShareGroupInitializeEmptyMap / uninitializeShareGroupState: answered
    partitions move to initialized, others stay initializing; a failure forgets them; an empty map writes nothing."""
    s = shard()
    _, _, init, _ = beat(s, topics=["bar"])
    g = s.share_groups[GID]
    assert s.share_initialized(GID, {}).records == []
    s.share_initialized(GID, {BAR: [0]})
    assert sorted(g.initialized[BAR].partitions) == [0] and sorted(g.initializing[BAR].partitions) == [1, 2]
    assert g.initialized[BAR].name == "bar"
    s.share_uninitialized(GID, {BAR: [1, 2]})
    assert g.initializing == {}
    _, _, again, _ = beat(s, epoch=g.members["m1"].epoch)
    assert again.topics == {BAR: [1, 2]}


# ------------------------------------------------------------------------------------------------ describe, types
def test_share_group_describe_no_errors_and_unknown():
    """testShareGroupDescribeNoErrors / testShareGroupDescribeRequest: the group's state, epochs, the simple
    assignor and each member with its assignment (topic names from the image); an unknown group is
    GROUP_ID_NOT_FOUND."""
    s = shard()
    g = joined(s)
    d = s.share_describe(GID, {FOO: "foo", BAR: "bar"})
    assert (d.error_code, d.group_state, d.group_epoch, d.assignment_epoch, d.assignor_name) == (
        0, "Stable", g.epoch, g.assignment_epoch, "simple")
    (m,) = d.members
    assert (m.member_id, m.member_epoch, m.client_id, m.client_host, m.subscribed_topic_names) == (
        "m1", g.epoch, "client", "/127.0.0.1", ["foo", "bar"])
    assert {(t.topic_name, tuple(t.partitions)) for t in m.assignment.topic_partitions} == {
        ("foo", (0, 1, 2, 3, 4, 5)), ("bar", (0, 1, 2))}
    d = s.share_describe("other", {})
    assert (d.error_code, d.error_message) == (ec.GROUP_ID_NOT_FOUND, "Group other not found.")


def test_share_group_states():
    """testShareGroupStates (ShareGroupTest): Empty without members, Stable with."""
    s = shard()
    g = joined(s)
    assert g.state() == "Stable"
    beat(s, "m1", -1)
    assert g.state() == "Empty"
    assert s.list_groups(None, {"share"}) == [(GID, "share", "Empty", "share")]


def _consumer_beat(s, gid):
    C = w.ConsumerGroupHeartbeatRequest
    result = s.consumer_heartbeat(C(group_id=gid, member_id="c1", member_epoch=0, rebalance_timeout_ms=5000,
                                    subscribed_topic_names=["foo"], topic_partitions=[]), 1, "tok", NOW, "c", "/h",
                                  IMAGE.get)
    return result.replies[0].body


def test_share_and_consumer_groups_do_not_mix():
    """testConsumerGroupHeartbeatOnShareGroup / testShareGroupHeartbeatOnConsumerGroup /
    testConsumerGroupDescribeOnShareGroup / testShareGroupDescribeOnConsumerGroup."""
    s = shard()
    joined(s)
    body = _consumer_beat(s, GID)
    assert (body.error_code, body.error_message) == (ec.GROUP_ID_NOT_FOUND, f"Group {GID} is not a consumer group.")
    d = s.consumer_describe(GID, {})
    assert (d.error_code, d.error_message) == (ec.GROUP_ID_NOT_FOUND, f"Group {GID} is not a consumer group.")
    assert _consumer_beat(s, "cg").error_code == 0
    body, _, _, _ = beat(s, group="cg", topics=["foo"])
    assert (body.error_code, body.error_message) == (ec.GROUP_ID_NOT_FOUND, "Group cg is not a share group.")
    d = s.share_describe("cg", {})
    assert (d.error_code, d.error_message) == (ec.GROUP_ID_NOT_FOUND, "Group cg is not a share group.")


# ------------------------------------------------------------------------------------------------ the log
def test_on_loaded_with_share_group_and_unload():
    """testOnLoadedWithShareGroup / testOnLoadedSessionTimeoutExpirationForShareMember /
    testShareGroupRecordsNoExceptionOnReplay: a shard loaded from the records another wrote holds the same
    groups, members get a full session from the load, and an unloaded shard goes back to what the log says."""
    s = shard()
    log = []
    for m in ("m1", "m2"):
        log += beat(s, m, 0, ["foo", "bar"])[3].records
    init = s.share_groups[GID].initializing
    log += s.share_initialized(GID, {t: sorted(i.partitions) for t, i in init.items()}).records
    for m in ("m1", "m2"):
        log += beat(s, m, s.share_groups[GID].members[m].epoch)[3].records
    log += beat(s, "m2", -1)[3].records
    loaded = GroupShard(0)
    for i, (k, v) in enumerate(log):
        loaded.replay(k, v, i)
        s.replay(k, v, i)  # the runtime folds a live shard's own writes too (it keeps them for an unload)
    loaded.loaded(50_000)
    a, b = s.share_groups[GID], loaded.share_groups[GID]
    assert (b.epoch, b.metadata_hash, b.assignment_epoch, b.target) == (a.epoch, a.metadata_hash,
                                                                        a.assignment_epoch, a.target)
    assert {m: (x.epoch, x.previous_epoch, x.assigned, x.subscribed) for m, x in b.members.items()} == \
        {m: (x.epoch, x.previous_epoch, x.assigned, x.subscribed) for m, x in a.members.items()}
    assert b.initialized == a.initialized and b.initializing == a.initializing
    assert b.members["m1"].deadline_ms == 50_000 + 45_000
    s.unload()
    assert set(s.share_groups[GID].members) == {"m1"} and s.share_groups[GID].epoch == a.epoch


# ------------------------------------------------------------------------------------------------ the assignor
def test_simple_assignor_empty_members_and_no_subscription():
    """SimpleAssignorTest.testAssignWithEmptyMembers / testAssignWithNoSubscribedTopic."""
    assert assign({}, {FOO: {0}}, {}) == {}
    assert assign({"a": set()}, {FOO: {0}}, {}) == {"a": {}}


def test_simple_assignor_homogeneous_two_members_two_topics():
    """SimpleAssignorTest.testAssignWithTwoMembersAndTwoTopicsHomogeneous: every partition once, split evenly."""
    out = assign({"a": {FOO, BAR}, "b": {FOO, BAR}}, {FOO: {0, 1, 2}, BAR: {0, 1, 2}}, {})
    all_parts = [(t, p) for m in out.values() for t, ps in m.items() for p in ps]
    assert sorted(all_parts, key=str) == sorted([(t, p) for t in (FOO, BAR) for p in range(3)], key=str)
    assert sorted(len([1 for ps in m.values() for _ in ps]) for m in out.values()) == [3, 3]


def test_simple_assignor_more_members_than_partitions_shares():
    """SimpleAssignorTest (members outnumber partitions): sharing = ceil(M / P), each member one or more."""
    members = {m: {FOO} for m in "abcde"}
    out = assign(members, {FOO: {0, 1}}, {})
    assert all(out[m].get(FOO) for m in members)
    assert sorted(sum(p in out[m][FOO] for m in members) for p in (0, 1)) == [3, 3]


def test_simple_assignor_heterogeneous():
    """SimpleAssignorTest.testAssignWithThreeMembersThreeTopicsHeterogeneous: each topic is shared among its own
    subscribers only."""
    out = assign({"a": {FOO}, "b": {FOO, BAR}, "c": {BAR}}, {FOO: {0, 1}, BAR: {0}}, {})
    assert set(out["a"]) == {FOO} and set(out["c"]) == {BAR}
    assert out["b"].get(BAR) == {0} and out["c"][BAR] == {0}
    assert out["a"][FOO] | out["b"].get(FOO, set()) == {0, 1}


def test_simple_assignor_sticky_and_drops_unassignable():
    """SimpleAssignorTest (reassignments keep what they can): a member keeps its partitions up to its count, loses
    partitions no longer assignable or of topics it left, and a newcomer takes the surplus."""
    current = {"a": {FOO: {0, 1, 2, 3}, BAR: {0}}}
    out = assign({"a": {FOO}, "b": {FOO}}, {FOO: {0, 1, 2, 3}}, current)
    assert out["a"][FOO] == {0, 1} and out["b"][FOO] == {2, 3} and BAR not in out["a"]
    out = assign({"a": {FOO}}, {FOO: {1, 2}}, current)
    assert out["a"] == {FOO: {1, 2}}


# ------------------------------------------------------------------------------------------------ broker configs
@pytest.mark.parametrize("fields,expected", [
    ({}, None),
    ({"share_min_heartbeat_interval_ms": 20_000},
     ("group.share.max.heartbeat.interval.ms", 15_000,
      "group.share.max.heartbeat.interval.ms must be greater than or equal to group.share.min.heartbeat.interval.ms")),
    ({"share_heartbeat_interval_ms": 16_000},
     ("group.share.heartbeat.interval.ms", 16_000,
      "group.share.heartbeat.interval.ms must be less than or equal to group.share.max.heartbeat.interval.ms")),
    ({"share_session_timeout_ms": 70_000},
     ("group.share.session.timeout.ms", 70_000,
      "group.share.session.timeout.ms must be less than or equal to group.share.max.session.timeout.ms")),
    ({"share_min_session_timeout_ms": 1000, "share_session_timeout_ms": 5000},
     ("group.share.heartbeat.interval.ms", 5000,
      "group.share.heartbeat.interval.ms must be less than group.share.session.timeout.ms")),
    ({"share_min_assignment_interval_ms": 20_000},
     ("group.share.max.assignment.interval.ms", 15_000,
      "group.share.max.assignment.interval.ms must be greater than or equal to group.share.min.assignment.interval.ms")),
    ({"share_min_assignment_interval_ms": 2000},
     ("group.share.assignment.interval.ms", 1000,
      "group.share.assignment.interval.ms must be greater than or equal to group.share.min.assignment.interval.ms")),
    ({"share_assignment_interval_ms": 16_000},
     ("group.share.assignment.interval.ms", 16_000,
      "group.share.assignment.interval.ms must be less than or equal to group.share.max.assignment.interval.ms")),
])
def test_share_broker_config_bounds(fields, expected):
    """GroupCoordinatorConfigTest (share group configs): Kafka's verifyShareGroupConfigs, checked in its order, each
    with its message (a broker so configured does not start); the assignment interval's bounds last."""
    assert GroupConfig(**fields).share_config_error() == expected


def test_share_partition_broker_configs_stop_the_broker():
    """A broker whose share-partition keys break ShareGroupConfig's checks does not start (Kafka's KafkaConfig
    throws): GroupConfig.from_config refuses it with Kafka's message; the assignment interval is read from the file."""
    from kraftwire.config import Config
    from kraftwire.errors import ConfigError

    with pytest.raises(ConfigError) as refused:
        GroupConfig.from_config(Config.from_properties({"group.share.record.lock.duration.ms": "60001"}))
    assert (refused.value.key, refused.value.value) == ("group.share.max.record.lock.duration.ms", 60000)
    assert refused.value.reason == ("group.share.max.record.lock.duration.ms must be greater than or equal to "
                                    "group.share.record.lock.duration.ms")
    config = GroupConfig.from_config(Config.from_properties({"group.share.assignment.interval.ms": "0"}))
    assert config.share_assignment_interval_ms == 0 and config.broker_value("group.share.assignment.interval.ms") == "0"
