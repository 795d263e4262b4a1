"""KIP-848 consumer groups in the pure shard: joining, the server-side assignors, revocation before assignment,
fencing, leaving, session expiry, the records and their replay, and offset commits by member epoch."""

from __future__ import annotations

import uuid

from kraftwire import error_codes as ec
from kraftwire.config import Config
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group import consumer as cg
from kraftwire.coordinator.group.shard import GroupConfig, GroupShard
from kraftwire.protocol import codec
from kraftwire.protocol import messages as w

TID = uuid.UUID(int=42)
TOPICS = {"t": (TID, 6)}
H = w.ConsumerGroupHeartbeatRequest


def lookup(name):
    return TOPICS.get(name)


class Log:
    def __init__(self):
        self.records = []

    def write(self, shard, result):
        for key, value in result.records:
            shard.replay(key, value, len(self.records))
            self.records.append((key, value))
        shard.advance(len(self.records))
        return result


def hb(shard, log, member_id="", epoch=0, owned=None, now=0, topics=("t",), assignor=None, version=1,
       rebalance=60_000):
    body = H(group_id="g", member_id=member_id, member_epoch=epoch, instance_id=None, rack_id=None,
             rebalance_timeout_ms=rebalance if epoch == 0 else -1,
             subscribed_topic_names=list(topics) if epoch == 0 and topics is not None else None,
             subscribed_topic_regex=None,
             server_assignor=assignor,
             topic_partitions=None if owned is None else [H.TopicPartitions(topic_id=TID, partitions=sorted(owned))])
    result = log.write(shard, shard.consumer_heartbeat(body, version, "tok", now, "client", "/127.0.0.1", lookup))
    return result.replies[0].body


def parts(resp):
    if resp.assignment is None:
        return None
    return sorted(p for tp in resp.assignment.topic_partitions for p in tp.partitions)


def fresh():
    shard = GroupShard(0, GroupConfig(), new_id=iter(f"m{i}" for i in range(100)).__next__)
    shard.loaded(0)
    return shard, Log()


def test_a_member_joins_gets_everything_then_shares_after_a_revocation():
    shard, log = fresh()
    a = hb(shard, log, member_id="a")
    # Kafka 4.4 moves the new group off epoch 0, then bumps it for a's subscription: epoch 2
    assert (a.error_code, a.member_id, a.member_epoch, parts(a)) == (0, "a", 2, [0, 1, 2, 3, 4, 5])
    assert a.heartbeat_interval_ms == 5000
    b = hb(shard, log, member_id="b")  # a second member: epoch 3, its target waits for a to revoke
    assert (b.member_epoch, parts(b)) == (3, [])
    group = shard.consumer_groups["g"]
    assert group.epoch == 3 and group.state() == cg.RECONCILING
    a = hb(shard, log, "a", 2, owned=range(6))  # a is asked to keep only its new target (it stays in epoch 2)
    assert a.member_epoch == 2 and len(parts(a)) == 3
    kept = set(parts(a))
    assert group.members["a"].state == cg.UNREVOKED_PARTITIONS
    b = hb(shard, log, "b", 3, owned=[])
    assert parts(b) is None or parts(b) == []  # still held by a: unreleased
    a = hb(shard, log, "a", 2, owned=kept)  # revoked: a moves to epoch 3
    assert a.member_epoch == 3
    b = hb(shard, log, "b", 3, owned=[])
    assert set(parts(b)) == set(range(6)) - kept and group.members["b"].state == cg.STABLE
    assert group.state() == cg.GROUP_STABLE
    # what the records say is what the live shard holds
    again = GroupShard(0)
    for offset, (key, value) in enumerate(log.records):
        again.replay(key, value, offset)
    g2 = again.consumer_groups["g"]
    assert (g2.epoch, g2.assignment_epoch) == (group.epoch, group.assignment_epoch)
    assert {m: (x.epoch, x.state, x.assigned) for m, x in g2.members.items()} == {
        m: (x.epoch, x.state, x.assigned) for m, x in group.members.items()}
    assert g2.target == group.target and g2.topics == group.topics


def test_a_lost_response_is_forgiven_a_stale_epoch_is_fenced():
    shard, log = fresh()
    hb(shard, log, member_id="a")
    hb(shard, log, member_id="b")
    a = hb(shard, log, "a", 2, owned=range(6))
    kept = set(parts(a))
    a = hb(shard, log, "a", 2, owned=kept)
    assert a.member_epoch == 3
    # the answer was lost: the member heartbeats with its previous epoch and what it owns
    assert hb(shard, log, "a", 2, owned=kept).error_code == 0
    assert hb(shard, log, "a", 2, owned=range(6)).error_code == ec.FENCED_MEMBER_EPOCH
    assert hb(shard, log, "a", 7, owned=kept).error_code == ec.FENCED_MEMBER_EPOCH
    assert hb(shard, log, "nobody", 2, owned=[]).error_code == ec.UNKNOWN_MEMBER_ID


def test_leaving_and_expiring_hand_the_partitions_over():
    shard, log = fresh()
    hb(shard, log, member_id="a")
    hb(shard, log, member_id="b", now=0)
    a = hb(shard, log, "a", 2, owned=range(6))
    hb(shard, log, "a", 2, owned=parts(a))
    left = hb(shard, log, "a", cg.LEAVE_EPOCH)
    assert (left.error_code, left.member_epoch) == (0, -1)
    b = hb(shard, log, "b", 3, owned=[], now=10)
    assert parts(b) == [0, 1, 2, 3, 4, 5]
    c = hb(shard, log, member_id="c", now=10)
    assert parts(c) == []
    result = shard.tick(10 + 45_001)  # b and c stop heartbeating: both expire
    log.write(shard, result)
    assert shard.consumer_groups["g"].members == {} and shard.consumer_groups["g"].state() == cg.EMPTY


def test_range_assignor_and_validation():
    shard, log = fresh()
    a = hb(shard, log, member_id="a", assignor="range")
    b = hb(shard, log, member_id="b", assignor="range")
    assert shard.consumer_groups["g"].target == {"a": {TID: {0, 1, 2}}, "b": {TID: {3, 4, 5}}}
    assert a.error_code == b.error_code == 0
    assert hb(shard, log, member_id="x", assignor="sticky").error_code == ec.UNSUPPORTED_ASSIGNOR
    # Kafka's GroupMetadataManagerTest.testConsumerHeartbeatRequestValidation: the refusals and their words
    refused = hb(shard, log, member_id="x", topics=None)
    assert (refused.error_code, refused.error_message) == (
        ec.INVALID_REQUEST, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
    refused = hb(shard, log, member_id="", epoch=3)
    assert (refused.error_code, refused.error_message) == (ec.INVALID_REQUEST, "MemberId can't be empty.")
    refused = hb(shard, log, member_id="")  # v1 (KIP-1082): the member names itself when it joins
    assert (refused.error_code, refused.error_message) == (ec.INVALID_REQUEST, "MemberId can't be empty.")
    refused = hb(shard, log, member_id="a", epoch=-3)
    assert (refused.error_code, refused.error_message) == (ec.INVALID_REQUEST, "MemberEpoch is invalid.")
    refused = hb(shard, log, member_id="a", epoch=-2)
    assert (refused.error_code, refused.error_message) == (ec.INVALID_REQUEST, "InstanceId can't be null.")
    refused = hb(shard, log, member_id="a", epoch=9)
    assert (refused.error_code, refused.error_message) == (ec.FENCED_MEMBER_EPOCH, (
        "The consumer group member has a greater member epoch (9) than the one known by the group coordinator (2). "
        "The member must abandon all its partitions and rejoin."))
    assert hb(shard, log, member_id="y", topics=()).error_code == 0  # an empty subscription joins with no topics
    generated = hb(shard, log, member_id="", version=0)  # v0: the coordinator names the member
    assert generated.error_code == 0 and generated.member_id.startswith("m")


def test_offset_commits_need_the_member_epoch():
    shard, log = fresh()
    a = hb(shard, log, member_id="a")
    C = w.OffsetCommitRequest

    def commit(epoch, version=9, member="a"):
        body = C(group_id="g", generation_id_or_member_epoch=epoch, member_id=member, topics=[
            C.OffsetCommitRequestTopic(name="t", partitions=[C.OffsetCommitRequestPartition(
                partition_index=0, committed_offset=5, committed_metadata="")])])
        r = shard.offset_commit(body, version, "c", 0)
        return r.replies[0].body.topics[0].partitions[0].error_code

    assert commit(a.member_epoch) == 0
    assert commit(a.member_epoch + 1) == ec.STALE_MEMBER_EPOCH
    assert commit(a.member_epoch, version=8) == ec.UNSUPPORTED_VERSION
    assert commit(-1, member="") == ec.UNKNOWN_MEMBER_ID  # an admin's commit waits for an empty group
    assert shard.fetch_error("g", "a", a.member_epoch + 1) == ec.STALE_MEMBER_EPOCH
    assert shard.list_groups(None, {"consumer"}) == [("g", "consumer", cg.GROUP_STABLE, "consumer")]
    assert shard.describe_group("g", 5).error_code == ec.GROUP_ID_NOT_FOUND  # DescribeGroups is for classic groups
    described = shard.consumer_describe("g", {TID: "t"})
    assert described.group_epoch == 2 and described.members[0].assignment.topic_partitions[0].topic_name == "t"
    assert described.members[0].member_type == 1  # v1 (KIP-1099): a consumer-protocol member
    answer = w.ConsumerGroupDescribeResponse(throttle_time_ms=0, groups=[described])
    assert codec.decode(w.ConsumerGroupDescribeResponse, codec.encode(answer, 1), 1).groups[0].members[0] \
        .member_type == 1


def test_a_classic_group_in_use_is_not_a_consumer_group():
    shard, log = fresh()
    J = w.JoinGroupRequest
    shard.join_group(J(group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
                       protocol_type="consumer", protocols=[J.JoinGroupRequestProtocol(name="range", metadata=b"")]),
                     3, "j", 0, "c", "/h")
    assert hb(shard, log, member_id="a").error_code == ec.GROUP_ID_NOT_FOUND


def test_consumer_records_are_kafkas_types():
    shard, log = fresh()
    hb(shard, log, member_id="a")
    types = [cr.decode(k, v).record_type for k, v in log.records]
    assert types == [5, 4, 3, 7, 6, 8]  # member, partition metadata, epoch, target member, target epoch, current


def test_a_consumer_group_keeps_the_offsets_of_the_topics_it_subscribes_to():
    shard = GroupShard(0, GroupConfig(offsets_retention_ms=1000, offsets_retention_check_interval_ms=1),
                       new_id=iter(f"m{i}" for i in range(10)).__next__)
    shard.loaded(0)
    log = Log()
    a = hb(shard, log, member_id="a")
    C = w.OffsetCommitRequest
    body = C(group_id="g", generation_id_or_member_epoch=a.member_epoch, member_id="a", topics=[
        C.OffsetCommitRequestTopic(name=n, partitions=[C.OffsetCommitRequestPartition(
            partition_index=0, committed_offset=5, committed_metadata="")]) for n in ("t", "old")])
    log.write(shard, shard.offset_commit(body, 9, "c", 0))
    hb(shard, log, "a", a.member_epoch, owned=range(6), now=40_000)
    expired = log.write(shard, shard.tick(40_001))
    assert [cr.decode(k, v).key.topic for k, v in expired.records if cr.decode(k, v).record_type == 1] == ["old"]
    assert "g" in shard.consumer_groups and set(t for t, _p in shard.offsets["g"]) == {"t"}


def test_a_regex_subscription_follows_the_topics_that_match():
    topics = {"orders-eu": (uuid.UUID(int=1), 2), "orders-us": (uuid.UUID(int=2), 2), "payments": (TID, 6)}
    shard, log = fresh()

    def beat(member_id, epoch=0, owned=None, regex="orders-.*", names=None, version=1):
        body = H(group_id="g", member_id=member_id, member_epoch=epoch, instance_id=None, rack_id=None,
                 rebalance_timeout_ms=60_000 if epoch == 0 else -1, subscribed_topic_names=None,
                 subscribed_topic_regex=regex if epoch == 0 else None, server_assignor=None,
                 topic_partitions=None if owned is None else [H.TopicPartitions(topic_id=t, partitions=sorted(ps))
                                                              for t, ps in owned.items()])
        r = shard.consumer_heartbeat(body, version, "t", 0, "c", "/h", topics.get, lambda: list(names or topics))
        return log.write(shard, r).replies[0].body

    a = beat("a")
    assert a.error_code == 0
    got = {tp.topic_id: set(tp.partitions) for tp in a.assignment.topic_partitions}
    assert got == {uuid.UUID(int=1): {0, 1}, uuid.UUID(int=2): {0, 1}}  # both orders topics, not payments
    topics["orders-ap"] = (uuid.UUID(int=3), 1)  # a new matching topic: the group epoch moves, a gets it too
    a2 = beat("a", a.member_epoch, owned=got)
    assert a2.member_epoch == a.member_epoch + 1
    assert uuid.UUID(int=3) in {tp.topic_id for tp in a2.assignment.topic_partitions}
    bad = beat("b", regex="orders-[")
    assert bad.error_code == ec.INVALID_REGULAR_EXPRESSION and "orders-[" in bad.error_message
    none = shard.consumer_heartbeat(H(group_id="g", member_id="c", member_epoch=0, rebalance_timeout_ms=1000,
                                      subscribed_topic_names=None, subscribed_topic_regex=None), 1, "t", 0, "c", "/h",
                                    topics.get, lambda: list(topics))
    assert none.replies[0].body.error_code == ec.INVALID_REQUEST


def test_a_static_member_restarts_into_its_place_without_a_rebalance():
    shard, log = fresh()

    def beat(member_id, epoch=0, owned=None, instance="i-1"):
        body = H(group_id="g", member_id=member_id, member_epoch=epoch, instance_id=instance, rack_id=None,
                 rebalance_timeout_ms=60_000 if epoch == 0 else -1, subscribed_topic_names=["t"] if epoch == 0 else None,
                 subscribed_topic_regex=None, server_assignor=None,
                 topic_partitions=None if owned is None else [H.TopicPartitions(topic_id=TID, partitions=sorted(owned))])
        return log.write(shard, shard.consumer_heartbeat(body, 1, "t", 0, "c", "/h", lookup)).replies[0].body

    a = beat("a")
    b = beat("b", instance="i-2")
    a = beat("a", a.member_epoch, owned=range(6))
    a = beat("a", a.member_epoch, owned=parts(a))
    b = beat("b", b.member_epoch, owned=[], instance="i-2")
    group = shard.consumer_groups["g"]
    epoch_before = group.epoch
    held = set(parts(b))
    assert held and beat("a2").error_code == ec.UNRELEASED_INSTANCE_ID  # i-1 is still a's
    left = beat("b", cg.STATIC_LEAVE_EPOCH, instance="i-2")
    assert left.error_code == 0 and left.member_epoch == cg.STATIC_LEAVE_EPOCH
    assert "b" in group.members and group.epoch == epoch_before  # its place and partitions are kept
    back = beat("b2", instance="i-2")  # the restarted instance, a new member id
    assert back.error_code == 0 and set(parts(back)) == held and group.epoch == epoch_before
    assert "b" not in group.members and group.members["b2"].instance_id == "i-2"
    assert beat("b", 2, owned=held, instance="i-2").error_code == ec.UNKNOWN_MEMBER_ID
    again = GroupShard(0)
    for offset, (key, value) in enumerate(log.records):
        again.replay(key, value, offset)
    assert set(again.consumer_groups["g"].members) == {"a", "b2"}
    assert again.consumer_groups["g"].members["b2"].assigned == group.members["b2"].assigned


def test_a_full_consumer_group_takes_no_other_member():
    """Kafka's GroupMetadataManager.throwIfConsumerGroupIsFull (group.consumer.max.size): a group holding that many
    members refuses a new one, GROUP_MAX_SIZE_REACHED with Kafka's message, and writes nothing; its members keep
    heartbeating, and a static member coming back under a new member id keeps its place (the conformance run's
    ConsumerGroupHeartbeat-v1-group-full)."""
    shard = GroupShard(0, GroupConfig(consumer_max_size=1), new_id=iter(f"m{i}" for i in range(100)).__next__)
    shard.loaded(0)
    log = Log()
    a = hb(shard, log, member_id="a")
    assert a.error_code == 0
    written = len(log.records)
    b = hb(shard, log, member_id="b")
    assert (b.error_code, b.error_message) == (ec.GROUP_MAX_SIZE_REACHED, "The consumer group has reached its "
                                                                          "maximum capacity of 1 members.")
    assert len(log.records) == written and set(shard.consumer_groups["g"].members) == {"a"}
    assert hb(shard, log, "a", a.member_epoch, owned=parts(a)).error_code == 0

    static = GroupShard(0, GroupConfig(consumer_max_size=1))
    static.loaded(0)

    def beat(member_id, epoch=0):
        body = H(group_id="g", member_id=member_id, member_epoch=epoch, instance_id="i-1", rack_id=None,
                 rebalance_timeout_ms=60_000 if epoch == 0 else -1,
                 subscribed_topic_names=["t"] if epoch == 0 else None, subscribed_topic_regex=None,
                 server_assignor=None, topic_partitions=None)
        return log.write(static, static.consumer_heartbeat(body, 1, "t", 0, "c", "/h", lookup)).replies[0].body

    assert beat("s").error_code == 0
    assert beat("s", cg.STATIC_LEAVE_EPOCH).error_code == 0
    assert beat("s2").error_code == 0 and set(static.consumer_groups["g"].members) == {"s2"}


def test_group_consumer_max_size_is_read_from_the_broker_configuration():
    assert GroupConfig.from_config(Config()).consumer_max_size == 2**31 - 1  # Kafka's default
    assert GroupConfig.from_config(Config.from_properties({"group.consumer.max.size": "3"})).consumer_max_size == 3
