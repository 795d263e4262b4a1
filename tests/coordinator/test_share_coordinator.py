"""The share coordinator shard (``kraftwire.coordinator.share``), mirroring Kafka's ``ShareCoordinatorShardTest`` and
``PersisterStateBatchCombinerTest`` (the test names in each docstring). The shard's records go through ``replay``
like a runtime would fold them once written, so every check sees state that came from the log."""

from __future__ import annotations

import uuid

import pytest

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.share.batches import StateBatch, combine
from kraftwire.coordinator.share.shard import (
    NEGATIVE_LEADER_EPOCH, NEGATIVE_PARTITION_ID, NEGATIVE_STATE_EPOCH, READ_UNINITIALIZED, SHARE_SNAPSHOT,
    SHARE_UPDATE, WRITE_UNINITIALIZED, ShareCoordinatorConfig, ShareShard, coordinator_key, parse_coordinator_key)
from kraftwire.coordinator.partitioning import partition_for
from kraftwire.protocol import messages as w

TOPIC = uuid.UUID(int=0x1234_5678_9ABC_DEF0_1234_5678_9ABC_DEF0)
OTHER = uuid.UUID(int=7)
GROUP = "group1"
NOW = 1_000_000


def shard(per_snapshot: int = 500, cold_ms: int = 300_000) -> ShareShard:
    return ShareShard(0, ShareCoordinatorConfig(snapshot_update_records_per_snapshot=per_snapshot,
                                                cold_partition_snapshot_interval_ms=cold_ms),
                      partitions_of=lambda t: 3 if t == TOPIC else None)


def apply(s: ShareShard, result) -> None:
    """Fold a result's records, as the runtime does once they are written."""
    for key, value in result.records:
        s.replay(key, value)


def types(result) -> list[tuple[int, bool]]:
    """(record type, is tombstone) of each record of a result."""
    out = []
    for key, value in result.records:
        rec = cr.decode(key, value, cr.SHARE_STATE_RECORDS)
        out.append((rec.record_type, value is None))
    return out


def answer(result):
    assert len(result.replies) == 1
    return result.replies[0].body


def part_of(body):
    return body.results[0].partitions[0]


def init(s, partition=0, state_epoch=0, start=0, now=NOW, topic=TOPIC):
    P = w.InitializeShareGroupStateRequest.PartitionData
    r = s.initialize(GROUP, topic, P(partition=partition, state_epoch=state_epoch, start_offset=start), "t", now)
    apply(s, r)
    return r


def write(s, partition=0, leader_epoch=0, state_epoch=0, start=0, batches=(), now=NOW, dcc=-1):
    P = w.WriteShareGroupStateRequest.PartitionData
    B = w.WriteShareGroupStateRequest.StateBatch
    p = P(partition=partition, leader_epoch=leader_epoch, state_epoch=state_epoch, start_offset=start,
          delivery_complete_count=dcc,
          state_batches=[B(first_offset=a, last_offset=b, delivery_state=st, delivery_count=c)
                         for a, b, st, c in batches])
    r = s.write(GROUP, TOPIC, p, "t", now)
    apply(s, r)
    return r


def read(s, partition=0, leader_epoch=0, topic=TOPIC):
    r = s.read(GROUP, topic, w.ReadShareGroupStateRequest.PartitionData(partition=partition,
                                                                        leader_epoch=leader_epoch), "t", NOW)
    apply(s, r)
    return r


KEY = (GROUP, TOPIC, 0)


# ------------------------------------------------------------------------------------------------ the combiner
@pytest.mark.parametrize("held,written,start,expected", [
    # generatorCornerCases
    ([(100, 130, 0, 1)], [], 120, [(120, 130, 0, 1)]),
    ([], [(100, 130, 0, 1)], 120, [(120, 130, 0, 1)]),
    ([], [], 120, []),
    # generatorSameState
    ([(100, 110, 0, 1)], [(100, 110, 0, 1)], -1, [(100, 110, 0, 1)]),
    ([(100, 110, 0, 1)], [(100, 105, 0, 1)], -1, [(100, 110, 0, 1)]),
    ([(100, 110, 0, 1)], [(100, 115, 0, 1)], -1, [(100, 115, 0, 1)]),
    ([(100, 110, 0, 1)], [(105, 108, 0, 1)], -1, [(100, 110, 0, 1)]),
    ([(100, 110, 0, 1)], [(105, 110, 0, 1)], -1, [(100, 110, 0, 1)]),
    ([(100, 110, 0, 1)], [(105, 115, 0, 1)], -1, [(100, 115, 0, 1)]),
    ([(100, 110, 0, 1)], [(111, 115, 0, 1)], -1, [(100, 115, 0, 1)]),
    # generatorComplex
    ([(100, 110, 0, 1), (121, 130, 0, 1)], [(111, 119, 2, 2), (116, 123, 2, 2)], -1,
     [(100, 110, 0, 1), (111, 123, 2, 2), (124, 130, 0, 1)]),
    ([(100, 110, 0, 1)], [(101, 105, 1, 2), (101, 115, 2, 2), (101, 120, 3, 2)], -1,
     [(100, 100, 0, 1), (101, 120, 3, 2)]),
    ([(100, 110, 0, 1), (121, 130, 0, 1)], [(111, 119, 2, 2), (116, 123, 2, 2)], 120,
     [(120, 123, 2, 2), (124, 130, 0, 1)]),
    ([(111, 120, 0, 1)], [(111, 113, 0, 2), (114, 114, 2, 1), (115, 119, 0, 2)], -1,
     [(111, 113, 0, 2), (114, 114, 2, 1), (115, 119, 0, 2), (120, 120, 0, 1)]),
])
def test_combine_state_batches(held, written, start, expected):
    """PersisterStateBatchCombinerTest: corner cases, same state, complex (Kafka's inputs; in the first complex case
    the held 121-130 batch keeps its tail 124-130 beyond the higher batch, as in the pruned third case)."""
    result = combine([StateBatch(*b) for b in held], [StateBatch(*b) for b in written], start)
    assert [tuple(b) for b in result] == expected


def test_combine_higher_delivery_information_wins_overlap():
    """PersisterStateBatchCombinerTest (different states): where batches overlap, the greater delivery count (then
    state) keeps the shared offsets, whichever side it came from."""
    assert [tuple(b) for b in combine([StateBatch(100, 110, 2, 3)], [StateBatch(105, 115, 0, 1)], -1)] == \
        [(100, 110, 2, 3), (111, 115, 0, 1)]
    assert [tuple(b) for b in combine([StateBatch(100, 110, 0, 1)], [StateBatch(105, 108, 2, 2)], -1)] == \
        [(100, 104, 0, 1), (105, 108, 2, 2), (109, 110, 0, 1)]


# ------------------------------------------------------------------------------------------------ the key
def test_coordinator_key_is_group_topic_partition():
    """SharePartitionKey.asCoordinatorKey: ``group:topicIdBase64:partition``; the state partition is Kafka's hash of
    it, like any coordinator key."""
    key = coordinator_key("g", TOPIC, 4)
    assert key == "g:EjRWeJq83vASNFZ4mrze8A:4"
    assert partition_for(key, 50) == partition_for("g:EjRWeJq83vASNFZ4mrze8A:4", 50)


@pytest.mark.parametrize("key,parsed", [
    ("g:EjRWeJq83vASNFZ4mrze8A:4", ("g", TOPIC, 4)),
    ("g:EjRWeJq83vASNFZ4mrze8A:-1", ("g", TOPIC, -1)),  # Kafka finds a coordinator for it (the conformance run)
    (":EjRWeJq83vASNFZ4mrze8A:0", ("", TOPIC, 0)),
    ("g:not-a-uuid:0", None), ("g:EjRWeJq83vASNFZ4mrze8A", None), ("g:EjRWeJq83vASNFZ4mrze8A:x", None),
    ("g:EjRWeJq83vASNFZ4mrze8A:0:1", None), ("g:EjRWeJq83vASNFZ4mrze8A:99999999999", None),
])
def test_parse_coordinator_key(key, parsed):
    """SharePartitionKeyTest: FindCoordinator v6's share key read back (INVALID_REQUEST where Kafka cannot)."""
    assert parse_coordinator_key(key) == parsed


# ------------------------------------------------------------------------------------------------ initialize
def test_initialize_state_success():
    """testInitializeStateSuccess: a snapshot at the start offset and state epoch, leader epoch 0, no batches."""
    s = shard()
    r = init(s, state_epoch=1, start=10)
    assert types(r) == [(SHARE_SNAPSHOT, False)]
    assert part_of(answer(r)).error_code == 0
    st = s.states[KEY]
    assert (st.snapshot_epoch, st.state_epoch, st.leader_epoch, st.start_offset, st.batches) == (0, 1, 0, 10, ())
    assert (st.create_timestamp, st.write_timestamp, st.delivery_complete_count) == (NOW, NOW, 0)
    init(s, state_epoch=2, start=-1)
    assert (s.states[KEY].snapshot_epoch, s.states[KEY].delivery_complete_count) == (1, -1)


@pytest.mark.parametrize("partition,state_epoch,message", [(-1, 0, NEGATIVE_PARTITION_ID),
                                                           (0, -1, NEGATIVE_STATE_EPOCH)])
def test_initialize_state_invalid_request_data(partition, state_epoch, message):
    """testInitializeStateInvalidRequestData."""
    s = shard()
    r = init(s, partition=partition, state_epoch=state_epoch)
    assert r.records == []
    p = part_of(answer(r))
    assert (p.error_code, p.error_message) == (ec.INVALID_REQUEST, message)


def test_initialize_fenced_state_epoch_and_unknown_topic():
    """testInitializeTopicIdNonExistentInMetadataImage / testInitializePartitionIdNonExistentInMetadataImage, and an
    initialize from an older state epoch is FENCED_STATE_EPOCH."""
    s = shard()
    init(s, state_epoch=3)
    p = part_of(answer(init(s, state_epoch=2)))
    assert (p.error_code, p.error_message) == (ec.FENCED_STATE_EPOCH, ec.default_message(ec.FENCED_STATE_EPOCH))
    for partition, topic in ((0, OTHER), (3, TOPIC)):
        r = init(s, partition=partition, topic=topic)
        assert r.records == []
        assert part_of(answer(r)).error_code == ec.UNKNOWN_TOPIC_OR_PARTITION


# ------------------------------------------------------------------------------------------------ write
def test_write_fails_on_uninitialized_partition():
    """testWriteFailsOnUninitializedPartition."""
    s = shard()
    r = write(s)
    assert r.records == []
    p = part_of(answer(r))
    assert (p.error_code, p.error_message) == (ec.INVALID_REQUEST, WRITE_UNINITIALIZED)


def test_write_state_success():
    """testWriteStateSuccess: after the initializing snapshot, a write is a ShareUpdate folded into the state."""
    s = shard()
    init(s)
    r = write(s, start=0, batches=[(0, 10, 1, 1)])
    assert types(r) == [(SHARE_UPDATE, False)]
    assert part_of(answer(r)).error_code == 0
    assert s.states[KEY].batches == (StateBatch(0, 10, 1, 1),)


def test_subsequent_write_state_snapshot_epoch_updates_successfully():
    """testSubsequentWriteStateSnapshotEpochUpdatesSuccessfully: with one update per snapshot, the writes go
    update, update, snapshot (Kafka's count starts at 0 on the first update), and the snapshot carries everything
    with the next snapshot epoch."""
    s = shard(per_snapshot=1)
    init(s)
    assert types(write(s, batches=[(0, 10, 1, 1)])) == [(SHARE_UPDATE, False)]
    assert types(write(s, batches=[(11, 20, 1, 1)])) == [(SHARE_UPDATE, False)]
    r = write(s, start=5, batches=[(21, 30, 2, 1)], now=NOW + 5)
    assert types(r) == [(SHARE_SNAPSHOT, False)]
    st = s.states[KEY]
    assert st.snapshot_epoch == 1
    assert st.batches == (StateBatch(5, 20, 1, 1), StateBatch(21, 30, 2, 1))
    assert (st.create_timestamp, st.write_timestamp) == (NOW + 5, NOW + 5)
    assert types(write(s, batches=[(31, 31, 2, 1)])) == [(SHARE_UPDATE, False)]


@pytest.mark.parametrize("kw,message", [({"partition": -1}, NEGATIVE_PARTITION_ID),
                                        ({"leader_epoch": -1}, NEGATIVE_LEADER_EPOCH),
                                        ({"state_epoch": -1}, NEGATIVE_STATE_EPOCH)])
def test_write_state_invalid_request_data(kw, message):
    """testWriteStateInvalidRequestData (4.4 also refuses negative epochs)."""
    s = shard()
    init(s)
    r = write(s, **kw)
    assert r.records == []
    p = part_of(answer(r))
    assert (p.error_code, p.error_message) == (ec.INVALID_REQUEST, message)


def test_write_state_fenced_leader_and_state_epoch():
    """testWriteStateFencedLeaderEpochError / testWriteStateFencedStateEpochError: a read records the reader's
    leader epoch; a write from an older leader, or from an older state epoch, is fenced and writes nothing."""
    s = shard()
    init(s, state_epoch=1)
    read(s, leader_epoch=5)
    r = write(s, leader_epoch=4, state_epoch=1)
    assert r.records == []
    p = part_of(answer(r))
    assert (p.error_code, p.error_message) == (ec.FENCED_LEADER_EPOCH, ec.default_message(ec.FENCED_LEADER_EPOCH))
    r = write(s, leader_epoch=5, state_epoch=0)
    assert part_of(answer(r)).error_code == ec.FENCED_STATE_EPOCH
    assert part_of(answer(write(s, leader_epoch=6, state_epoch=1))).error_code == 0
    # a write's leader epoch is not recorded: the epoch stays the reader's
    assert s.leader_epochs[KEY] == 5 and s.states[KEY].leader_epoch == 5


def test_write_unknown_topic_or_partition():
    """testWriteNullMetadataImage's neighbour: a partition past the topic's partition count."""
    s = shard()
    init(s)
    s.partitions_of = lambda t: None
    assert part_of(answer(write(s))).error_code == ec.UNKNOWN_TOPIC_OR_PARTITION


def test_write_start_offset_never_moves_back_and_delivery_complete_count():
    """generateShareStateRecord (4.4): the start offset is the higher of the held and the written one; the
    completed-delivery count is the written one, the higher of both at the same start, the held one when the write
    is behind."""
    s = shard()
    init(s, start=10)
    write(s, start=20, dcc=3)
    assert (s.states[KEY].start_offset, s.states[KEY].delivery_complete_count) == (20, 3)
    write(s, start=20, dcc=1)
    assert s.states[KEY].delivery_complete_count == 3
    write(s, start=15, dcc=9)
    assert (s.states[KEY].start_offset, s.states[KEY].delivery_complete_count) == (20, 3)


def test_non_sequential_batch_updates():
    """testNonSequentialBatchUpdates: updates arriving in any offset order combine into one non-overlapping
    list, the later delivery information winning the offsets it covers."""
    s = shard()
    init(s)
    write(s, start=0, batches=[(0, 99, 0, 1)])
    write(s, start=0, batches=[(50, 59, 2, 1)])
    write(s, start=0, batches=[(10, 19, 2, 1), (90, 120, 0, 2)])
    assert s.states[KEY].batches == (StateBatch(0, 9, 0, 1), StateBatch(10, 19, 2, 1), StateBatch(20, 49, 0, 1),
                                     StateBatch(50, 59, 2, 1), StateBatch(60, 89, 0, 1), StateBatch(90, 120, 0, 2))


# ------------------------------------------------------------------------------------------------ read
def test_read_fails_on_uninitialized_partition():
    """testReadFailsOnUninitializedPartition."""
    p = part_of(answer(read(shard())))
    assert (p.error_code, p.error_message) == (ec.INVALID_REQUEST, READ_UNINITIALIZED)


def test_read_state_success():
    """testReadStateSuccess: the state epoch, start offset and batches."""
    s = shard()
    init(s, state_epoch=2, start=5)
    write(s, state_epoch=2, start=5, batches=[(5, 9, 1, 1)])
    p = part_of(answer(read(s)))
    assert (p.error_code, p.state_epoch, p.start_offset) == (0, 2, 5)
    assert [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in p.state_batches] == \
        [(5, 9, 1, 1)]


def test_read_state_leader_epoch_update():
    """testReadStateLeaderEpochUpdateSuccess / testReadStateLeaderEpochUpdateNoUpdate: a read from a new leader
    epoch writes that epoch (a ShareUpdate of no batches); one from the recorded epoch writes nothing."""
    s = shard()
    init(s)
    r = read(s, leader_epoch=2)
    assert types(r) == [(SHARE_UPDATE, False)]
    assert s.leader_epochs[KEY] == 2 and s.states[KEY].leader_epoch == 2
    assert read(s, leader_epoch=2).records == []


@pytest.mark.parametrize("kw,code,message", [
    ({"partition": -1}, ec.INVALID_REQUEST, NEGATIVE_PARTITION_ID),
    ({"leader_epoch": -1}, ec.INVALID_REQUEST, NEGATIVE_LEADER_EPOCH),
    ({"topic": OTHER}, ec.INVALID_REQUEST, READ_UNINITIALIZED)])
def test_read_state_invalid_request_data(kw, code, message):
    """testReadStateInvalidRequestData."""
    s = shard()
    init(s)
    p = part_of(answer(read(s, **kw)))
    assert (p.error_code, p.error_message) == (code, message)


def test_read_state_fenced_leader_epoch_error():
    """testReadStateFencedLeaderEpochError."""
    s = shard()
    init(s)
    read(s, leader_epoch=3)
    r = read(s, leader_epoch=2)
    assert r.records == []
    assert part_of(answer(r)).error_code == ec.FENCED_LEADER_EPOCH


def test_read_state_summary():
    """testReadStateSummarySuccess / testReadStateSummaryInvalidRequestData: start offset and epochs; a key never
    initialized reads as start offset -1."""
    s = shard()
    P = w.ReadShareGroupStateSummaryRequest.PartitionData
    p = s.read_summary(GROUP, TOPIC, P(partition=0, leader_epoch=0), 1).results[0].partitions[0]
    assert (p.error_code, p.start_offset, p.leader_epoch, p.state_epoch, p.delivery_complete_count) == (0, -1, 0, 0,
                                                                                                        -1)
    init(s, state_epoch=4, start=7)
    p = s.read_summary(GROUP, TOPIC, P(partition=0, leader_epoch=0), 1).results[0].partitions[0]
    assert (p.start_offset, p.state_epoch, p.delivery_complete_count) == (7, 4, 0)
    p = s.read_summary(GROUP, TOPIC, P(partition=-1, leader_epoch=0), 1).results[0].partitions[0]
    assert (p.error_code, p.error_message) == (ec.INVALID_REQUEST, NEGATIVE_PARTITION_ID)
    p = s.read_summary(GROUP, OTHER, P(partition=0, leader_epoch=0), 1).results[0].partitions[0]
    assert p.error_code == ec.UNKNOWN_TOPIC_OR_PARTITION


# ------------------------------------------------------------------------------------------------ delete
def test_delete_state_success():
    """testDeleteStateSuccess: a tombstone of the snapshot key, which removes every trace of the key."""
    s = shard()
    init(s)
    read(s, leader_epoch=3)
    r = s.delete(GROUP, TOPIC, w.DeleteShareGroupStateRequest.PartitionData(partition=0), "t")
    assert types(r) == [(SHARE_SNAPSHOT, True)]
    assert part_of(answer(r)).error_code == 0
    apply(s, r)
    assert KEY not in s.states and KEY not in s.leader_epochs and KEY not in s.state_epochs


def test_delete_state_uninitialized_and_invalid():
    """testDeleteStateUnintializedRecord / testDeleteStateInvalidRequestData /
    testDeleteTopicIdNonExistentInMetadataImage / testDeletePartitionIdNonExistentInMetadataImage."""
    s = shard()
    P = w.DeleteShareGroupStateRequest.PartitionData
    r = s.delete(GROUP, TOPIC, P(partition=0), "t")
    assert r.records == [] and part_of(answer(r)).error_code == 0
    p = part_of(answer(s.delete(GROUP, TOPIC, P(partition=-1), "t")))
    assert (p.error_code, p.error_message) == (ec.INVALID_REQUEST, NEGATIVE_PARTITION_ID)
    assert part_of(answer(s.delete(GROUP, OTHER, P(partition=0), "t"))).error_code == ec.UNKNOWN_TOPIC_OR_PARTITION
    assert part_of(answer(s.delete(GROUP, TOPIC, P(partition=3), "t"))).error_code == ec.UNKNOWN_TOPIC_OR_PARTITION


# ------------------------------------------------------------------------------------------------ replay
def test_replay_with_share_snapshot_then_reload_equals():
    """testReplayWithShareSnapshot, and a shard loaded from the records another wrote holds the same state."""
    s = shard(per_snapshot=2)
    log = []
    for r in (init(s, state_epoch=1), read(s, leader_epoch=1),
              write(s, leader_epoch=1, state_epoch=1, batches=[(0, 4, 2, 1)]),
              write(s, leader_epoch=1, state_epoch=1, start=3, batches=[(5, 9, 0, 2)]),
              write(s, leader_epoch=1, state_epoch=1, start=3, batches=[(10, 12, 4, 1)])):
        log.extend(r.records)
    reloaded = shard(per_snapshot=2)
    for key, value in log:
        reloaded.replay(key, value)
    assert reloaded.states == s.states and reloaded.leader_epochs == s.leader_epochs
    assert reloaded.update_counts == s.update_counts


# ------------------------------------------------------------------------------------------------ timers
def test_snapshot_cold_partitions():
    """testSnapshotColdPartitionsNoEligiblePartitions / ...PartialEligiblePartitions /
    ...DoesNotPerpetuallySnapshot: keys whose snapshot is older than the interval get a fresh one (write
    timestamp now); once every key's last snapshot is such a one, nothing more is written."""
    s = shard(cold_ms=100)
    init(s, partition=0, now=NOW)
    init(s, partition=1, now=NOW + 80)
    assert s.snapshot_cold(NOW + 50).records == []
    r = s.snapshot_cold(NOW + 100)
    assert types(r) == [(SHARE_SNAPSHOT, False)]
    apply(s, r)
    assert (s.states[KEY].snapshot_epoch, s.states[KEY].write_timestamp, s.states[KEY].create_timestamp) == \
        (1, NOW + 100, NOW)
    r = s.snapshot_cold(NOW + 180)
    apply(s, r)
    assert len(r.records) == 1
    assert s.snapshot_cold(NOW + 10_000).records == []


def test_on_topics_deleted():
    """testOnTopicsDeletedEmptyTopicIds / testOnTopicsDeletedTopicIds: tombstones for the deleted topics' keys."""
    s = shard()
    init(s, partition=0)
    init(s, partition=1)
    assert s.topics_deleted(set()).records == []
    assert s.topics_deleted({OTHER}).records == []
    r = s.topics_deleted({TOPIC})
    assert types(r) == [(SHARE_SNAPSHOT, True)] * 2
    apply(s, r)
    assert s.states == {}


# ------------------------------------------------------------------------------------------------ on the runtime
def _runtime(entries=()):
    from kraftwire.coordinator.runtime import CoordinatorRuntime
    from kraftwire.coordinator.share.hosting import ShareKind
    from tests.coordinator.test_runtime import Writer

    sent = []
    kind = ShareKind(lambda: ShareCoordinatorConfig(), lambda t: 3 if t == TOPIC else None)
    rt = CoordinatorRuntime(kind, lambda reply, body: sent.append((reply.token, body)), lambda h: None)
    writer = Writer(entries)
    h = rt.elect(0, writer)
    while not rt.load_chunk(h, NOW):
        pass
    return rt, writer, sent


def test_share_kind_loads_writes_and_reloads_on_failed_write():
    """The share shard on the one coordinator runtime (CoordinatorRuntimeTest's testScheduleLoading /
    testScheduleWriteOp / testScheduleWriteOpWhenWriteFails with the share kind): a load replays the partition,
    a write's answer waits for its commit, and a write that fails answers NOT_COORDINATOR and reloads the shard
    from the log, dropping what it folded."""
    first = shard()
    records = init(first, state_epoch=1, start=4).records
    rt, writer, sent = _runtime(records)
    h, code = rt.route(0)
    assert code == 0 and h.shard.states[KEY].start_offset == 4
    P = w.WriteShareGroupStateRequest.PartitionData
    from kraftwire.coordinator.share.hosting import SHARE_STATE_TOPIC
    assert rt.kind.topic == SHARE_STATE_TOPIC
    rt.write(0, h.shard.write(GROUP, TOPIC, P(partition=0, leader_epoch=0, state_epoch=1, start_offset=8,
                                              state_batches=[]), "w1", NOW), NOW)
    assert sent == [] and h.shard.states[KEY].start_offset == 8
    writer.commit()
    assert [t for t, _ in sent] == ["w1"] and part_of(sent[0][1]).error_code == 0
    rt.write(0, h.shard.write(GROUP, TOPIC, P(partition=0, leader_epoch=0, state_epoch=1, start_offset=12,
                                              state_batches=[]), "w2", NOW), NOW)
    writer.entries.pop()  # the failed write never reached the log
    writer.commit(ec.NOT_LEADER_OR_FOLLOWER)
    token, body = sent[-1]
    assert token == "w2" and part_of(body).error_code == ec.NOT_COORDINATOR
    assert part_of(body).error_message.startswith("Unable to write share group state: ")
    h2 = rt.hosted[0]
    while not rt.load_chunk(h2, NOW):
        pass
    assert h2 is not h and h2.shard.states[KEY].start_offset == 8


def test_split_and_join_requests_by_key():
    """ShareCoordinatorService: a request's keys each go to their state partition; empty topics, partitions or
    group id are answered empty; answers join per topic."""
    from kraftwire.coordinator.share.hosting import join, split
    R = w.ReadShareGroupStateRequest
    body = R(group_id=GROUP, topics=[R.ReadStateData(topic_id=TOPIC, partitions=[
        R.PartitionData(partition=0, leader_epoch=0), R.PartitionData(partition=1, leader_epoch=0)])])
    ops = split(body, 50)
    assert [op.state_partition for op in ops] == [partition_for(coordinator_key(GROUP, TOPIC, p), 50) for p in (0, 1)]
    assert split(R(group_id="", topics=body.topics), 50) is None
    assert split(R(group_id="g", topics=[]), 50) is None
    assert split(R(group_id="g", topics=[R.ReadStateData(topic_id=TOPIC, partitions=[])]), 50) is None
    s = shard()
    init(s, partition=0)
    init(s, partition=1)
    joined = join("ReadShareGroupState", [answer(s.read(GROUP, TOPIC, op.data, "t", NOW)) for op in ops])
    assert [(r.topic_id, [(p.partition, p.error_code) for p in r.partitions]) for r in joined.results] == \
        [(TOPIC, [(0, 0), (1, 0)])]
