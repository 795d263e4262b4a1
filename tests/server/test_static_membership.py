"""Static membership (KIP-345) in the coordinator, request by request: a static member joins without the
MEMBER_ID_REQUIRED round; a restarted follower takes its old place in a Stable group without a rebalance; a
restarted leader causes one; the replaced member id is fenced on every API; a static member leaves by instance id.
(The end-to-end check with librdkafka is in tests/interop/test_group_admin.py.)"""

from __future__ import annotations

from types import SimpleNamespace

from kraftwire.log.memory import MemoryLog
from kraftwire.protocol import messages as w
from kraftwire.error_codes import FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID
from kraftwire.server.broker.groups import STABLE, Coordinator
from kraftwire.server.broker.scan import LogScan


class Conn:
    def __init__(self) -> None:
        self.answers = []
        self.peer = "127.0.0.1:5555"
        self.closed = False

    def send_response(self, body, version, cid) -> None:
        self.answers.append(body)


def coordinator() -> Coordinator:
    lg = MemoryLog()
    ctx = SimpleNamespace(log=lg, watchers=[], topic_name="t", is_leader=lambda: True, epoch=lambda: 1,
                          epoch_start_offset=lambda: 0, loop=lambda: SimpleNamespace(call_later=lambda *a: None),
                          append_and_commit=lambda batch, callback: callback(0))
    return Coordinator(ctx, LogScan(ctx))


def req(body, version):
    return SimpleNamespace(body=body, version=version, header=SimpleNamespace(correlation_id=1, client_id="c"))


def join(co, instance, member_id="", metadata=b"m"):
    conn = Conn()
    R = w.JoinGroupRequest
    co.join_group(req(R(group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id=member_id,
                        group_instance_id=instance, protocol_type="consumer",
                        protocols=[R.JoinGroupRequestProtocol(name="range", metadata=metadata)]), 7), conn)
    return conn


def sync(co, member_id, generation, instance, assignments=()):
    conn = Conn()
    R = w.SyncGroupRequest
    co.sync_group(req(R(group_id="g", generation_id=generation, member_id=member_id, group_instance_id=instance,
                        protocol_type="consumer", protocol_name="range",
                        assignments=[R.SyncGroupRequestAssignment(member_id=m, assignment=a) for m, a in assignments]),
                      5), conn)
    return conn


def heartbeat(co, member_id, generation, instance):
    conn = Conn()
    co.heartbeat(req(w.HeartbeatRequest(group_id="g", generation_id=generation, member_id=member_id,
                                        group_instance_id=instance), 4), conn)
    return conn.answers[0].error_code


def test_static_members_rejoin_fenced_and_leave_by_instance_id():
    co = coordinator()
    a = join(co, "a").answers[0]
    assert a.error_code == 0 and a.member_id.startswith("a-") and a.leader == a.member_id  # no MEMBER_ID_REQUIRED
    generation = a.generation_id
    assert sync(co, a.member_id, generation, "a", [(a.member_id, b"all")]).answers[0].assignment == b"all"
    b_conn = join(co, "b")  # a second static member: a rebalance the leader joins again
    a2 = join(co, "a", a.member_id).answers[0]
    b = b_conn.answers[0]
    generation = a2.generation_id
    assert b.error_code == 0 and generation == b.generation_id and a2.leader == a.member_id
    sync_b = sync(co, b.member_id, generation, "b")
    sync(co, a.member_id, generation, "a", [(a.member_id, b"pa"), (b.member_id, b"pb")])
    group = co.groups["g"]
    assert group.state == STABLE and sync_b.answers[0].assignment == b"pb"

    # b restarts (a new member id, same instance id): its place back, same generation, no rebalance
    b_again = join(co, "b").answers[0]
    assert b_again.error_code == 0 and b_again.member_id != b.member_id
    assert b_again.generation_id == generation and b_again.members == [] and group.state == STABLE
    assert sync(co, b_again.member_id, generation, "b").answers[0].assignment == b"pb"
    # the old incarnation is fenced everywhere; without its instance id it is simply unknown
    assert heartbeat(co, b.member_id, generation, "b") == FENCED_INSTANCE_ID
    assert heartbeat(co, b.member_id, generation, None) == UNKNOWN_MEMBER_ID
    assert sync(co, b.member_id, generation, "b").answers[0].error_code == FENCED_INSTANCE_ID
    assert join(co, "b", b.member_id).answers[0].error_code == FENCED_INSTANCE_ID
    commit = Conn()
    R = w.OffsetCommitRequest
    co.offset_commit(req(R(group_id="g", generation_id_or_member_epoch=generation, member_id=b.member_id,
                           group_instance_id="b", topics=[R.OffsetCommitRequestTopic(name="t", partitions=[
                               R.OffsetCommitRequestPartition(partition_index=0, committed_offset=5)])]), 8), commit)
    assert commit.answers[0].topics[0].partitions[0].error_code == FENCED_INSTANCE_ID
    assert heartbeat(co, b_again.member_id, generation, "b") == 0

    # the leader restarting is a rebalance (it must assign again)
    a_again = join(co, "a")
    assert a_again.answers == [] and group.state != STABLE  # waits for b to rejoin
    L = w.LeaveGroupRequest
    leave = Conn()
    co.leave_group(req(L(group_id="g", members=[L.MemberIdentity(member_id="", group_instance_id="b")]), 3), leave)
    [gone] = leave.answers[0].members
    assert gone.error_code == 0 and gone.member_id == b_again.member_id and gone.group_instance_id == "b"
    assert "b" not in group.static and list(group.static) == ["a"]
