"""The pure classic group coordinator of one ``__consumer_offsets`` partition: rules, records and loading."""

from __future__ import annotations

import pytest

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group.shard import (
    COMPLETING,
    EMPTY,
    PREPARING,
    STABLE,
    GroupConfig,
    GroupShard,
    error_response,
)
from kraftwire.protocol import messages as w

SUB = b"\x00\x00\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x00"  # consumer subscription v0 to topic "t"


class Log:
    """The partition the shard writes to: records at offsets, a high watermark the test moves."""

    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []

    def write(self, shard: GroupShard, result, *, commit: bool = True):
        for key, value in result.records:
            shard.replay(key, value, len(self.records))
            self.records.append((key, value))
        if commit:
            shard.advance(len(self.records))
        return result

    def load(self, config=None, now_ms: int = 0) -> GroupShard:
        shard = GroupShard(0, config or CFG)
        for offset, (key, value) in enumerate(self.records):
            shard.replay(key, value, offset)
        shard.advance(len(self.records))
        shard.loaded(now_ms)
        return shard


CFG = GroupConfig(initial_rebalance_delay_ms=0)


def join(shard, member_id="", *, group="g", version=5, session=10_000, rebalance=20_000, instance=None,
         protocols=(("range", SUB),), token="j", now=0, protocol_type="consumer"):
    body = w.JoinGroupRequest(group_id=group, session_timeout_ms=session, rebalance_timeout_ms=rebalance,
                              member_id=member_id, group_instance_id=instance, protocol_type=protocol_type,
                              protocols=[w.JoinGroupRequest.JoinGroupRequestProtocol(name=n, metadata=m)
                                         for n, m in protocols])
    return shard.join_group(body, version, token, now, "client", "/127.0.0.1")


def sync(shard, member_id, generation, assignments=(), *, token="s", now=0, instance=None):
    S = w.SyncGroupRequest
    body = S(group_id="g", generation_id=generation, member_id=member_id, group_instance_id=instance,
             assignments=[S.SyncGroupRequestAssignment(member_id=m, assignment=a) for m, a in assignments])
    return shard.sync_group(body, 3, token, now)


def heartbeat(shard, member_id, generation, *, now=0, instance=None):
    body = w.HeartbeatRequest(group_id="g", generation_id=generation, member_id=member_id,
                              group_instance_id=instance)
    return shard.heartbeat(body, 3, "h", now).replies[0].body.error_code


def commit(shard, member_id, generation, offsets, *, version=8, now=0, group="g", metadata=""):
    C = w.OffsetCommitRequest
    body = C(group_id=group, generation_id_or_member_epoch=generation, member_id=member_id, topics=[
        C.OffsetCommitRequestTopic(name=t, partitions=[C.OffsetCommitRequestPartition(
            partition_index=p, committed_offset=o, committed_leader_epoch=3, committed_metadata=metadata)])
        for (t, p), o in offsets.items()])
    return shard.offset_commit(body, version, "c", now)


def codes(result) -> set[int]:
    return {p.error_code for t in result.replies[0].body.topics for p in t.partitions}


def by_token(result):
    return {r.token: r.body for r in result.replies}


def stable_pair(log: Log):
    """Two members, joined and synced: (shard, leader id, follower id, generation)."""
    shard = GroupShard(0, CFG)
    shard.loaded(0)
    a = join(shard, token="a").replies[0].body.member_id  # MEMBER_ID_REQUIRED
    b = join(shard, token="b").replies[0].body.member_id
    assert join(shard, a, token="a").replies == []  # waits for b (the join is not complete)
    r = join(shard, b, token="b")
    answers = by_token(r)
    assert answers["a"].error_code == answers["b"].error_code == 0
    leader = answers["a"].leader
    follower = b if leader == a else a
    gen = answers["a"].generation_id
    assert len(answers["a" if leader == a else "b"].members) == 2
    assert sync(shard, follower, gen, token="fs").replies == []  # waits for the leader
    r = log.write(shard, sync(shard, leader, gen, [(leader, b"L"), (follower, b"F")], token="ls"))
    assert [cr.decode(k, v).record_type for k, v in r.records] == [2]
    answers = by_token(r)
    assert answers["fs"].assignment == b"F" and answers["ls"].assignment == b"L"
    assert shard.groups["g"].state == STABLE
    return shard, leader, follower, gen


def test_two_members_join_sync_and_the_metadata_record_holds_them():
    log = Log()
    shard, leader, follower, gen = stable_pair(log)
    rec = cr.decode(*log.records[-1])
    assert rec.value.generation == gen and rec.value.leader == leader and rec.value.protocol == "range"
    assert {m.member_id: bytes(m.assignment) for m in rec.value.members} == {leader: b"L", follower: b"F"}
    assert all(bytes(m.subscription) == SUB for m in rec.value.members)
    assert heartbeat(shard, follower, gen) == 0
    assert heartbeat(shard, follower, gen + 1) == ec.ILLEGAL_GENERATION
    assert heartbeat(shard, "nobody", gen) == ec.UNKNOWN_MEMBER_ID


def test_join_refusals():
    shard = GroupShard(0, CFG)
    shard.loaded(0)
    assert join(shard, group="").replies[0].body.error_code == ec.INVALID_GROUP_ID
    assert join(shard, session=10).replies[0].body.error_code == ec.INVALID_SESSION_TIMEOUT
    assert join(shard, session=1_800_001).replies[0].body.error_code == ec.INVALID_SESSION_TIMEOUT
    assert join(shard, "ghost").replies[0].body.error_code == ec.UNKNOWN_MEMBER_ID
    assert join(shard, protocols=()).replies[0].body.error_code == ec.INCONSISTENT_GROUP_PROTOCOL
    first = join(shard, version=3)  # before v4 a member id is handed out with the join itself
    assert first.replies[0].body.error_code == 0 and shard.groups["g"].state == COMPLETING
    other = join(shard, version=3, protocol_type="connect", token="x")
    assert other.replies[0].body.error_code == ec.INCONSISTENT_GROUP_PROTOCOL
    other = join(shard, version=3, protocols=(("roundrobin", SUB),), token="x")
    assert other.replies[0].body.error_code == ec.INCONSISTENT_GROUP_PROTOCOL
    v7 = join(shard, group="", version=7).replies[0].body
    assert v7.protocol_name is None


def test_group_max_size():
    shard = GroupShard(0, GroupConfig(initial_rebalance_delay_ms=0, max_size=1))
    shard.loaded(0)
    assert join(shard, version=3).replies[0].body.error_code == 0
    assert join(shard, version=3, token="2").replies[0].body.error_code == ec.GROUP_MAX_SIZE_REACHED


def test_offsets_are_visible_once_committed_and_survive_a_load():
    log = Log()
    shard, leader, follower, gen = stable_pair(log)
    r = log.write(shard, commit(shard, leader, gen, {("t", 0): 42, ("t", 1): 7}), commit=False)
    assert codes(r) == {0} and len(r.records) == 2
    assert shard.committed_offsets("g", [("t", [0])]) == [("t", [(0, None)])]  # not committed yet
    shard.advance(len(log.records))
    [(topic, [(part, entry)])] = shard.committed_offsets("g", [("t", [0])])
    assert (topic, part, entry.offset, entry.leader_epoch) == ("t", 0, 42, 3)
    assert [t for t, _ in shard.committed_offsets("g", None)] == ["t"]
    loaded = log.load(now_ms=5)
    assert loaded.committed == shard.committed
    g = loaded.groups["g"]
    assert g.state == STABLE and g.generation == gen and set(g.members) == {leader, follower}
    # the consumers carry on with the new coordinator: heartbeats and commits at their generation work
    assert heartbeat(loaded, follower, gen, now=6) == 0
    assert codes(commit(loaded, follower, gen, {("t", 0): 50}, now=6)) == {0}


def test_offset_commit_refusals():
    log = Log()
    shard, leader, follower, gen = stable_pair(log)
    assert codes(commit(shard, leader, gen + 1, {("t", 0): 1})) == {ec.ILLEGAL_GENERATION}
    assert codes(commit(shard, "ghost", gen, {("t", 0): 1})) == {ec.UNKNOWN_MEMBER_ID}
    assert codes(commit(shard, "", -1, {("t", 0): 1})) == {ec.UNKNOWN_MEMBER_ID}  # simple commit, live group
    assert codes(commit(shard, "", 3, {("t", 0): 1}, group="new")) == {ec.ILLEGAL_GENERATION}
    assert codes(commit(shard, leader, gen, {("t", 0): 1}, metadata="x" * 4097)) == {ec.OFFSET_METADATA_TOO_LARGE}
    simple = commit(shard, "", -1, {("t", 0): 1}, group="simple")
    assert codes(simple) == {0} and len(simple.records) == 1
    # a member rejoins: CompletingRebalance refuses commits, PreparingRebalance takes them (Kafka's rules)
    join(shard, leader, protocols=(("range", SUB + b"x"),))
    assert shard.groups["g"].state == PREPARING
    assert codes(commit(shard, follower, gen, {("t", 0): 2})) == {0}
    r = join(shard, follower, token="f")
    assert shard.groups["g"].state == COMPLETING
    assert codes(commit(shard, follower, gen + 1, {("t", 0): 3})) == {ec.REBALANCE_IN_PROGRESS}
    assert r.replies


def test_heartbeat_during_a_rebalance_and_a_rejoining_follower_keeps_the_generation():
    log = Log()
    shard, leader, follower, gen = stable_pair(log)
    r = join(shard, follower, token="again")  # unchanged protocols, a follower: answered at once, no rebalance
    assert by_token(r)["again"].generation_id == gen and shard.groups["g"].state == STABLE
    join(shard, leader, token="l2")  # the leader rejoining starts a rebalance
    assert shard.groups["g"].state == PREPARING
    assert heartbeat(shard, follower, gen) == ec.REBALANCE_IN_PROGRESS
    assert sync(shard, follower, gen).replies[0].body.error_code == ec.REBALANCE_IN_PROGRESS


def test_session_expiry_rebalances_and_an_emptied_group_records_when():
    log = Log()
    shard, leader, follower, gen = stable_pair(log)
    assert heartbeat(shard, leader, gen, now=9_000) == 0
    r = log.write(shard, shard.tick(10_001))  # the follower's session (10 s from 0) is over
    assert follower not in shard.groups["g"].members and shard.groups["g"].state == PREPARING
    r = join(shard, leader, token="l", now=10_002)
    assert by_token(r)["l"].generation_id == gen + 1 and by_token(r)["l"].members[0].member_id == leader
    log.write(shard, sync(shard, leader, gen + 1, [(leader, b"all")], now=10_003))
    r = log.write(shard, shard.tick(40_000))  # the leader expires too: the group is Empty
    g = shard.groups["g"]
    assert g.state == EMPTY and g.generation == gen + 2
    rec = cr.decode(*r.records[-1])
    assert rec.value.members == [] and rec.value.current_state_timestamp == 40_000
    assert log.load().groups["g"].state == EMPTY


def test_leave_group_versions():
    log = Log()
    shard, leader, follower, gen = stable_pair(log)
    L = w.LeaveGroupRequest
    r = shard.leave_group(L(group_id="g", member_id="ghost"), 1, "x", 0)
    assert r.replies[-1].body.error_code == ec.UNKNOWN_MEMBER_ID
    r = shard.leave_group(L(group_id="g", members=[L.MemberIdentity(member_id=follower),
                                                    L.MemberIdentity(member_id="ghost")]), 3, "x", 0)
    body = r.replies[-1].body
    assert body.error_code == 0 and [m.error_code for m in body.members] == [0, ec.UNKNOWN_MEMBER_ID]
    assert shard.groups["g"].state == PREPARING


def test_initial_rebalance_delay_waits_and_extends():
    shard = GroupShard(0, GroupConfig(initial_rebalance_delay_ms=3000))
    shard.loaded(0)
    assert join(shard, version=3, token="a", now=0).replies == []  # the first join of an empty group waits
    assert shard.tick(2999).replies == []
    assert join(shard, version=3, token="b", now=1000).replies == []  # extends by min(3000, what is left)
    assert shard.tick(3500).replies == []
    r = shard.tick(4000)
    assert {x.token for x in r.replies} == {"a", "b"}
    assert all(x.body.error_code == 0 for x in r.replies)


def test_static_member_restart_takes_the_old_place_without_a_rebalance():
    log = Log()
    shard = GroupShard(0, GroupConfig(initial_rebalance_delay_ms=3000))
    shard.loaded(0)
    a = join(shard, version=5, instance="i-a", token="a").replies
    assert a == []  # static members skip MEMBER_ID_REQUIRED and wait in the (delayed) rebalance
    assert join(shard, version=5, instance="i-b", token="b").replies == []
    answers = by_token(shard.tick(6000))
    gen, leader = answers["a"].generation_id, answers["a"].leader
    follower = answers["b"].member_id if leader == answers["a"].member_id else answers["a"].member_id
    fol_inst = "i-b" if follower == answers["b"].member_id else "i-a"
    sync(shard, follower, gen, token="fs", instance=fol_inst)
    log.write(shard, sync(shard, leader, gen, [(follower, b"F"), (leader, b"L")], token="ls"))
    r = log.write(shard, join(shard, version=5, instance=fol_inst, token="again"))
    new_id = by_token(r)["again"].member_id
    assert new_id != follower and by_token(r)["again"].generation_id == gen
    assert shard.groups["g"].state == STABLE
    assert heartbeat(shard, follower, gen, instance=fol_inst) == ec.FENCED_INSTANCE_ID
    assert sync(shard, new_id, gen, instance=fol_inst).replies[0].body.assignment == b"F"
    assert new_id in log.load().groups["g"].members  # written, so a new coordinator knows the new id


def test_offset_expiry_for_an_empty_group_and_its_tombstones():
    cfg = GroupConfig(initial_rebalance_delay_ms=0, offsets_retention_ms=60_000,
                      offsets_retention_check_interval_ms=1000)
    log = Log()
    shard = GroupShard(0, cfg)
    shard.loaded(0)
    log.write(shard, commit(shard, "", -1, {("t", 0): 5}, now=0))
    r = log.write(shard, shard.tick(59_000))
    assert r.records == []
    r = log.write(shard, shard.tick(61_000))
    kinds = [(cr.decode(k, v).record_type, v is None) for k, v in r.records]
    assert kinds == [(1, True), (2, True)]
    assert shard.group_ids() == [] and log.load(cfg).group_ids() == []


def test_stable_consumer_group_keeps_offsets_of_subscribed_topics():
    cfg = GroupConfig(initial_rebalance_delay_ms=0, offsets_retention_ms=1, offsets_retention_check_interval_ms=1)
    log = Log()
    shard = GroupShard(0, cfg)
    shard.loaded(0)
    m = join(shard, version=3).replies[0].body
    log.write(shard, sync(shard, m.member_id, m.generation_id, [(m.member_id, b"x")]))
    log.write(shard, commit(shard, m.member_id, m.generation_id, {("t", 0): 1, ("other", 0): 2}))
    r = log.write(shard, shard.tick(5000 - 1))
    assert [cr.decode(k, v).key.topic for k, v in r.records] == ["other"]  # "t" is subscribed


def test_delete_groups_and_offsets():
    log = Log()
    shard, leader, follower, gen = stable_pair(log)
    from kraftwire.coordinator.group.shard import Result

    res = Result()
    assert shard.delete_group("g", res) == ec.NON_EMPTY_GROUP
    assert shard.delete_group("nope", res) == ec.GROUP_ID_NOT_FOUND
    log.write(shard, commit(shard, "", -1, {("t", 0): 1, ("u", 0): 2}, group="s"))
    err, per = shard.delete_offsets("g", [("t", 0), ("x", 0)], res)
    assert err == 0 and per == {("t", 0): ec.GROUP_SUBSCRIBED_TO_TOPIC, ("x", 0): 0}
    res = Result()
    err, per = shard.delete_offsets("s", [("t", 0)], res)
    assert (err, per) == (0, {("t", 0): 0}) and len(res.records) == 1
    log.write(shard, res)
    res = Result()
    assert shard.delete_group("s", res) == 0
    log.write(shard, res)
    assert "s" not in shard.group_ids() and "s" not in log.load().group_ids()


def test_describe_and_list():
    log = Log()
    shard, leader, follower, gen = stable_pair(log)
    d = shard.describe_group("g", 6)
    assert d.error_code == ec.NONE and d.group_state == STABLE and d.protocol_data == "range" and len(d.members) == 2
    assert {bytes(m.member_assignment) for m in d.members} == {b"L", b"F"}
    # an unknown group: Dead without an error before v6, GROUP_ID_NOT_FOUND from v6 (KIP-1043), as Kafka 4.4 answers
    old, new = shard.describe_group("none", 5), shard.describe_group("none", 6)
    assert (old.error_code, old.error_message, old.group_state) == (ec.NONE, None, "Dead")
    assert (new.error_code, new.error_message, new.group_state) == (ec.GROUP_ID_NOT_FOUND, "Group none not found.",
                                                                    "Dead")
    assert shard.list_groups(None, None) == [("g", "consumer", STABLE, "classic")]
    assert shard.list_groups({"empty"}, None) == []


def test_refusal_bodies_for_a_failed_write():
    assert error_response("JoinGroup", 7, ec.NOT_COORDINATOR).protocol_name is None
    assert error_response("SyncGroup", 3, ec.NOT_COORDINATOR).error_code == ec.NOT_COORDINATOR
    with pytest.raises(ValueError):
        error_response("OffsetFetch", 3, ec.NOT_COORDINATOR)


def test_session_timeout_during_rebalance():
    """Kafka's GroupCoordinatorTest.testSessionTimeoutDuringRebalance: a member that does not rejoin a rebalance is
    removed when its session ends, and the rebalance completes with the others (it used to wait for the rebalance
    timeout); members that all stop heartbeating leave the group Empty, each at its own deadline (librdkafka's 0081
    deletes three static groups one session after their members closed)."""
    log = Log()
    shard, leader, follower, gen = stable_pair(log)
    join(shard, leader, token="l2", now=1_000)  # the leader rejoins: PreparingRebalance, the follower does not
    assert shard.groups["g"].state == PREPARING and shard.groups["g"].rebalance_deadline_ms > 10_001
    assert shard.next_deadline_ms() == 10_000  # the follower's session (10 s from its sync at 0)
    r = log.write(shard, shard.tick(10_001))
    answers = by_token(r)
    assert follower not in shard.groups["g"].members and answers["l2"].generation_id == gen + 1
    assert [m.member_id for m in answers["l2"].members] == [leader]

    log2 = Log()
    shard, leader, follower, gen = stable_pair(log2)
    assert heartbeat(shard, leader, gen, now=5_000) == 0  # the leader's session now ends at 15 s
    log2.write(shard, shard.tick(10_001))  # the follower expires: the group prepares a rebalance
    assert shard.groups["g"].state == PREPARING and shard.next_deadline_ms() == 15_000
    log2.write(shard, shard.tick(15_001))  # the leader, not rejoined, expires too: nothing is left
    assert shard.groups["g"].state == EMPTY and not shard.groups["g"].members


def test_an_offset_commit_retention_time_is_a_java_long_sum():
    """OffsetCommit v2-v4's RetentionTimeMs: any value but -1 sets the offset's expiry to now + retention as Java's long
    arithmetic computes it — so the largest retention wraps to a past time and the offset expires at the next check,
    where kraftwire's int64 record field could not hold the sum and the node logged a traceback (found by the fuzzer,
    tests/fuzz); -2 expires it too; -1 leaves it to offsets.retention.minutes (Kafka's OffsetMetadataManager)."""
    cfg = GroupConfig(initial_rebalance_delay_ms=0, offsets_retention_ms=60_000,
                      offsets_retention_check_interval_ms=1000)
    for retention, expires in ((2**63 - 1, (1000 + 2**63 - 1) - 2**64), (-2, 998), (-1, None)):
        log = Log()
        shard = GroupShard(0, cfg)
        shard.loaded(0)
        written = log.write(shard, shard.offset_commit(_with_retention(retention), 2, "c", 1000))
        assert codes(written) == {0}
        [value] = [cr.decode(k, v).value for k, v in written.records]
        assert value.expire_timestamp == (-1 if expires is None else expires)
        gone = [cr.decode(k, v).record_type for k, v in log.write(shard, shard.tick(2000)).records]
        assert (gone == [1, 2]) == (expires is not None), (retention, gone)


def _with_retention(retention: int):
    C = w.OffsetCommitRequest
    return C(group_id="g", generation_id_or_member_epoch=-1, member_id="", retention_time_ms=retention, topics=[
        C.OffsetCommitRequestTopic(name="t", partitions=[C.OffsetCommitRequestPartition(
            partition_index=0, committed_offset=5, committed_metadata="")])])
