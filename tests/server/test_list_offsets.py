"""ListOffsets on a leader: what it answers before and after its first commit in its epoch."""

from __future__ import annotations

from types import SimpleNamespace

from kraftwire import error_codes as ec
from kraftwire.log.memory import MemoryLog
from kraftwire.records import RecordBatchBuilder
from kraftwire.server.test_server.fetch import ListOffsets

BASE_TS = 1_700_000_000_000


def _data_batch(base: int, stamps) -> bytes:
    b = RecordBatchBuilder(base_offset=base, partition_leader_epoch=1)
    for ts in stamps:
        b.append(None, b"v", timestamp=ts)
    return b.build()


def test_a_new_leader_answers_offset_not_available_until_it_commits_in_its_epoch():
    """As Kafka (PartitionTest.testMonotonicOffsetsAfterLeaderChange): until a new leader's high watermark reaches
    its epoch start, ListOffsets latest and a lookup by timestamp finding nothing below the high watermark answer
    OFFSET_NOT_AVAILABLE (LEADER_NOT_AVAILABLE before v5; clients retry); earliest, and a lookup finding a record
    below the high watermark, are answered."""
    from kraftwire.protocol import messages as w
    from kraftwire.server.test_server import context as c

    lg = MemoryLog()
    lg.append_as_leader(_data_batch(0, [BASE_TS]), 1)
    lg.append_as_leader(_data_batch(0, [BASE_TS + 1]), 1)
    lg.flush()
    lg.update_high_watermark(1)  # as a follower it knew offset 0 committed; the old leader had committed 0..1
    answers = []
    ctx = SimpleNamespace(log=lg, topic_name="t", is_leader=lambda: True, epoch=lambda: 2,
                          epoch_start_offset=lambda: 2)
    conn = SimpleNamespace(send_response=lambda body, version, cid: answers.append(body))
    R = w.ListOffsetsRequest

    def ask(ts, version=5):
        req = R(replica_id=-1, topics=[R.ListOffsetsTopic(name="t", partitions=[
            R.ListOffsetsPartition(partition_index=0, timestamp=ts)])])
        ListOffsets(ctx).handle(SimpleNamespace(body=req, version=version, header=SimpleNamespace(correlation_id=1)),
                                conn)
        return answers[-1].topics[0].partitions[0]

    assert ask(-1).error_code == c.OFFSET_NOT_AVAILABLE
    assert ask(-1, version=4).error_code == ec.LEADER_NOT_AVAILABLE
    assert ask(BASE_TS + 1).error_code == c.OFFSET_NOT_AVAILABLE  # found at offset 1, not below the high watermark
    found = ask(BASE_TS)
    assert (found.error_code, found.offset, found.timestamp) == (c.NONE, 0, BASE_TS)
    earliest = ask(-2)
    assert earliest.error_code == c.NONE and earliest.offset == 0
    assert earliest.leader_epoch == 1  # as Kafka: the epoch of the log start's batch, not the leader's current one
    lg.update_high_watermark(2)  # the leader committed its epoch's first record
    latest = ask(-1)
    assert latest.error_code == c.NONE and latest.offset == 2 and latest.leader_epoch == 2
    newest = ask(-3)  # max timestamp: the record and its batch's epoch
    assert (newest.offset, newest.timestamp, newest.leader_epoch) == (1, BASE_TS + 1, 1)


def test_a_lagging_new_leader_answers_its_followers_list_offsets(tmp_path):
    """Mirrors Kafka's PartitionTest.testMonotonicOffsetsAfterLeaderChange through the broker's ListOffsets: a
    partition leader whose high watermark is below its epoch start refuses clients (OFFSET_NOT_AVAILABLE) but
    answers a follower broker's latest with its log end, so a follower recovering from OFFSET_OUT_OF_RANGE does
    not stall; a client's lookup by timestamp below the high watermark is answered, one past it refused."""
    from kraftwire.protocol import messages as w
    from kraftwire.replica.partition import ReplicaState
    from kraftwire.server.apis.partition_apis import PartitionApis

    lg = MemoryLog()
    lg.append_as_leader(_data_batch(0, [BASE_TS, BASE_TS + 1]), 1)
    lg.append_as_leader(_data_batch(0, [BASE_TS + 2, BASE_TS + 3, BASE_TS + 4]), 1)
    lg.flush()
    lg.update_high_watermark(2)
    state = ReplicaState(1, "t", 0)
    state.apply(SimpleNamespace(replicas=[1, 2], isr=[1, 2], leader=1, leader_epoch=3, partition_epoch=3),
                lg.end_offset())
    assert state.epoch_start_offset == 5
    hp = SimpleNamespace(log=lg, state=state, failed=False, topic="t", index=0, last_stable_offset=lambda: 2)
    apis = PartitionApis.__new__(PartitionApis)
    apis.replicas = SimpleNamespace(get=lambda name, index: hp)
    R = w.ListOffsetsResponse

    def ask(ts, replica, version=7):
        pr = R.ListOffsetsPartitionResponse(partition_index=0, error_code=0, timestamp=-1, offset=-1,
                                            leader_epoch=-1)
        p = w.ListOffsetsRequest.ListOffsetsPartition(partition_index=0, timestamp=ts, current_leader_epoch=3)
        apis._list_one("t", p, pr, version, replica, 0)
        return pr

    follower = ask(-1, 2)
    assert (follower.error_code, follower.offset, follower.leader_epoch) == (ec.NONE, 5, 3)
    assert ask(-1, -1).error_code == ec.OFFSET_NOT_AVAILABLE
    assert ask(-1, -1, version=4).error_code == ec.LEADER_NOT_AVAILABLE
    below = ask(BASE_TS + 1, -1)
    assert (below.error_code, below.offset, below.timestamp) == (ec.NONE, 1, BASE_TS + 1)
    assert ask(BASE_TS + 3, -1).error_code == ec.OFFSET_NOT_AVAILABLE
    assert (ask(-2, 2).error_code, ask(-2, -1).offset) == (ec.NONE, 0)
    lg.update_high_watermark(5)  # the leader committed its epoch's start: clients are answered
    assert (ask(-1, -1).error_code, ask(-1, -1).offset) == (ec.NONE, 5)
