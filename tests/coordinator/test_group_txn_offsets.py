"""TxnOffsetCommit in the pure group shard: the offsets a transaction commits wait for its marker (per producer
id), become the group's on COMMIT (visible once the high watermark passes the marker) and are dropped on ABORT."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.coordinator.group.shard import GroupShard
from kraftwire.protocol import messages as w

T = w.TxnOffsetCommitRequest


def _request(group: str, offsets: dict, *, member: str = "", generation: int = -1):
    topics: dict[str, list] = {}
    for (topic, p), off in offsets.items():
        topics.setdefault(topic, []).append(T.TxnOffsetCommitRequestPartition(
            partition_index=p, committed_offset=off, committed_leader_epoch=-1, committed_metadata=""))
    return T(transactional_id="tx", group_id=group, producer_id=7, producer_epoch=0,
             generation_id_or_member_epoch=generation, member_id=member, group_instance_id=None,
             topics=[T.TxnOffsetCommitRequestTopic(name=n, partitions=ps) for n, ps in topics.items()])


def _write(shard: GroupShard, result, pid: int, base: int) -> int:
    for i, (key, value) in enumerate(result.records):
        shard.replay_txn(pid, key, value, base + i)
    return base + len(result.records)


def _fetched(shard: GroupShard, group: str):
    return {(t, p): (e.offset if e else None) for t, parts in shard.committed_offsets(group, None) for p, e in parts}


def test_offsets_wait_for_the_commit_marker():
    shard = GroupShard(0)
    shard.loaded(0)
    result = shard.txn_offset_commit(_request("g", {("t", 0): 5, ("t", 1): 7}), 3, "tok", 1000)
    assert [p.error_code for t in result.replies[0].body.topics for p in t.partitions] == [0, 0]
    end = _write(shard, result, 7, 0)
    shard.advance(end)
    assert _fetched(shard, "g") == {}  # pending: not visible yet
    assert shard.pending_txn_offset("g", ("t", 0)) and not shard.pending_txn_offset("g", ("t", 2))
    shard.complete_txn(7, True, end)  # the COMMIT marker at offset ``end``
    assert _fetched(shard, "g") == {}  # the marker is not committed yet
    shard.advance(end + 1)
    assert _fetched(shard, "g") == {("t", 0): 5, ("t", 1): 7}
    assert not shard.txn_offsets


def test_an_aborted_transaction_leaves_the_offsets_alone():
    shard = GroupShard(0)
    shard.loaded(0)
    shard.txn_offsets.clear()
    end = _write(shard, shard.txn_offset_commit(_request("g", {("t", 0): 5}), 3, "tok", 1000), 7, 0)
    other = _write(shard, shard.txn_offset_commit(_request("g", {("t", 1): 9}), 3, "tok", 1000), 8, end)
    shard.complete_txn(7, False, other)
    shard.complete_txn(8, True, other + 1)
    shard.advance(other + 2)
    assert _fetched(shard, "g") == {("t", 1): 9}
    shard.complete_txn(99, True, other + 3)  # a marker of a producer with no offsets here: nothing
    assert _fetched(shard, "g") == {("t", 1): 9}


def test_a_member_naming_a_stale_generation_is_refused():
    shard = GroupShard(0)
    shard.loaded(0)
    shard.txn_offset_commit(_request("g", {("t", 0): 1}), 3, "tok", 0)  # creates the simple group
    result = shard.txn_offset_commit(_request("g", {("t", 0): 1}, member="m", generation=3), 3, "tok", 0)
    assert [p.error_code for t in result.replies[0].body.topics for p in t.partitions] == [ec.UNKNOWN_MEMBER_ID]
    assert not result.records
    assert [p.error_code for t in shard.txn_offset_commit(_request("", {("t", 0): 1}), 3, "tok", 0)
            .replies[0].body.topics for p in t.partitions] == [ec.INVALID_GROUP_ID]


def test_offset_fetch_answers_a_pending_partition_unstable():
    from kraftwire.coordinator.group.shard import OffsetEntry, offset_fetch_response

    e = OffsetEntry(4, -1, "", 0, -1)
    groups = [("g", 0, [("t", [(0, None, ec.UNSTABLE_OFFSET_COMMIT), (1, e)])])]
    v8 = offset_fetch_response(8, groups)
    assert [(p.partition_index, p.committed_offset, p.error_code) for p in v8.groups[0].topics[0].partitions] == [
        (0, -1, ec.UNSTABLE_OFFSET_COMMIT), (1, 4, 0)]
    v7 = offset_fetch_response(7, groups)
    assert [(p.partition_index, p.committed_offset, p.error_code) for p in v7.topics[0].partitions] == [
        (0, -1, ec.UNSTABLE_OFFSET_COMMIT), (1, 4, 0)]
