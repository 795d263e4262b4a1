"""The share coordinator on a real node (KIP-932): FindCoordinator's share key creates ``__share_group_state``, and
InitializeShareGroupState, WriteShareGroupState, ReadShareGroupState and ReadShareGroupStateSummary are served from
it; the state (and the leader epoch a read recorded, which fences an older leader's write) survives a restart of
the node, read back from the partition's ShareSnapshot/ShareUpdate records; deleting the topic removes its state."""

from __future__ import annotations

import asyncio
import time

from harness import processes, roles

from kraftwire import error_codes as ec
from kraftwire.coordinator.share.shard import coordinator_key
from kraftwire.errors import LogIOError
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once
from server.test_kraft_node import _create

PROPS = ("offsets.topic.replication.factor=1\nshare.coordinator.state.topic.replication.factor=1\n"
         "share.coordinator.state.topic.min.isr=1\nshare.coordinator.state.topic.num.partitions=2\n"
         "share.coordinator.snapshot.update.records.per.snapshot=2\n")
IS, WS, RS, SS = (w.InitializeShareGroupStateRequest, w.WriteShareGroupStateRequest, w.ReadShareGroupStateRequest,
                  w.ReadShareGroupStateSummaryRequest)


def ask(port: int, body, version: int):
    return asyncio.run(request_once("127.0.0.1", port, body, version, timeout=15.0))


def until(port: int, body, version: int, ok, what: str, seconds: float = 60):
    """Send ``body`` until ``ok(answer)`` (bounded)."""
    deadline = time.monotonic() + seconds
    while True:
        answer = ask(port, body, version)
        if ok(answer):
            return answer
        assert time.monotonic() < deadline, f"{what}: {answer}"
        time.sleep(0.3)


def part(answer):
    return answer.results[0].partitions[0]


def read(port, topic_id, leader_epoch):
    return ask(port, RS(group_id="g", topics=[RS.ReadStateData(topic_id=topic_id, partitions=[
        RS.PartitionData(partition=0, leader_epoch=leader_epoch)])]), 0)


def write(port, topic_id, leader_epoch, start, batches):
    return ask(port, WS(group_id="g", topics=[WS.WriteStateData(topic_id=topic_id, partitions=[
        WS.PartitionData(partition=0, state_epoch=0, leader_epoch=leader_epoch, start_offset=start,
                         delivery_complete_count=-1,
                         state_batches=[WS.StateBatch(first_offset=a, last_offset=b, delivery_state=s, delivery_count=c)
                                        for a, b, s, c in batches])])]), 1)


def test_share_state_is_served_and_survives_a_restart(tmp_path):
    node = processes.CombinedNode(tmp_path, PROPS)
    node.__enter__()
    try:
        roles.wait_until(lambda: roles.broker_ids(node.port) == [1], "the kraftwire node online")
        assert ask(node.port, _create("t", partitions=1), 7).topics[0].error_code == 0
        meta = until(node.port, w.MetadataRequest(topics=[w.MetadataRequest.MetadataRequestTopic(name="t")]), 12,
                     lambda a: a.topics[0].error_code == 0, "topic t")
        topic_id = meta.topics[0].topic_id
        key = coordinator_key("g", topic_id, 0)
        found = until(node.port, w.FindCoordinatorRequest(key_type=2, coordinator_keys=[key]), 6,
                      lambda a: a.coordinators[0].error_code == 0, "the share coordinator")
        assert found.coordinators[0].node_id == 1
        init = IS(group_id="g", topics=[IS.InitializeStateData(topic_id=topic_id, partitions=[
            IS.PartitionData(partition=0, state_epoch=0, start_offset=0)])])
        until(node.port, init, 0, lambda a: part(a).error_code == 0, "initialized")
        # three writes (ShareUpdates), then a read from a newer leader epoch, which records that epoch in a
        # ShareSnapshot (two updates per snapshot): the restart replays both kinds
        for batches in ([(0, 9, 2, 1)], [(10, 19, 0, 1)], [(5, 12, 4, 2)]):
            assert part(write(node.port, topic_id, 0, 0, batches)).error_code == 0
        got = part(read(node.port, topic_id, 3))
        expected = [(0, 4, 2, 1), (5, 12, 4, 2), (13, 19, 0, 1)]
        assert (got.error_code, got.start_offset, got.state_epoch) == (0, 0, 0)
        assert [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in got.state_batches] \
            == expected
        node.proc.terminate()
        node.proc.wait(30)
        node.__enter__()  # the same listeners, the same log directory
        roles.wait_until(lambda: roles.broker_ids(node.port) == [1], "the node online again")
        again = until(node.port, RS(group_id="g", topics=[RS.ReadStateData(topic_id=topic_id, partitions=[
            RS.PartitionData(partition=0, leader_epoch=3)])]), 0, lambda a: part(a).error_code == 0,
            "the share state loaded")
        assert [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                for b in part(again).state_batches] == expected
        fenced = part(write(node.port, topic_id, 2, 0, []))
        assert fenced.error_code == ec.FENCED_LEADER_EPOCH
        summary = part(ask(node.port, SS(group_id="g", topics=[SS.ReadStateSummaryData(topic_id=topic_id, partitions=[
            SS.PartitionData(partition=0, leader_epoch=3)])]), 1))
        assert (summary.error_code, summary.start_offset, summary.leader_epoch) == (0, 0, 3)
        # the topic deleted: its share-partitions' state goes too (tombstones), a read finds nothing initialized
        assert ask(node.port, w.DeleteTopicsRequest(topic_names=["t"], timeout_ms=5000), 5).responses[0].error_code \
            == 0
        gone = until(node.port, RS(group_id="g", topics=[RS.ReadStateData(topic_id=topic_id, partitions=[
            RS.PartitionData(partition=0, leader_epoch=3)])]), 0, lambda a: part(a).error_code != 0, "state removed")
        assert (part(gone).error_code, part(gone).error_message) == (
            ec.INVALID_REQUEST, "Read operation on uninitialized share partition not allowed.")
    finally:
        node.__exit__(None, None, None)
    assert "Traceback" not in node.stderr()


def test_share_group_heartbeat_initializes_its_partitions_and_assigns_them(tmp_path, monkeypatch, caplog):
    """The share-group path behind ``share.version`` (this node is formatted at an older release, whose default is
    0, so the gate is opened by hand here): a member joins, its group asks this broker's share coordinator to initialize the
    subscribed partitions (state epoch: the group epoch, start offset -1), and a later heartbeat is assigned them;
    ShareGroupDescribe shows the member and its partitions. Then a storage error reading the partition's log
    answers its ShareFetch KAFKA_STORAGE_ERROR, as Fetch answers one, without a traceback, and the next fetch
    reads."""
    from kraftwire.server.apis import share_apis, share_fetch_apis
    from server.test_kraft_node import Combined
    from server.test_partitions import _batch, _produce

    monkeypatch.setattr(share_apis, "share_groups_enabled", lambda features: True)
    monkeypatch.setattr(share_fetch_apis, "share_groups_enabled", lambda features: True)
    node_props = ("offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\n"
                  "share.coordinator.state.topic.replication.factor=1\nshare.coordinator.state.topic.min.isr=1\n"
                  "share.coordinator.state.topic.num.partitions=1\n")
    SH = w.ShareGroupHeartbeatRequest

    async def until_ok(conn, body, version, ok, what):
        for _ in range(300):
            answer = await conn.request(body, version)
            if ok(answer):
                return answer
            await asyncio.sleep(0.05)
        raise AssertionError(f"{what}: {answer}")

    async def scenario(node, conn):
        assert (await conn.request(_create("t", partitions=2), 7)).topics[0].error_code == 0
        meta = await until_ok(conn, w.MetadataRequest(topics=[w.MetadataRequest.MetadataRequestTopic(name="t")]),
                              12, lambda a: a.topics[0].error_code == 0, "topic t")
        topic_id = meta.topics[0].topic_id
        for key_type, key in ((2, coordinator_key("g", topic_id, 0)), (0, "g")):
            await until_ok(conn, w.FindCoordinatorRequest(key_type=key_type, coordinator_keys=[key]), 6,
                           lambda a: a.coordinators[0].error_code == 0, f"coordinator of {key}")
        join = await until_ok(conn, SH(group_id="g", member_id="m-1", member_epoch=0, rack_id=None,
                                       subscribed_topic_names=["t"]), 1, lambda a: a.error_code == 0, "join")
        assert join.member_epoch == 2  # a new group starts at epoch 1, as Kafka 4.4's

        def assigned(a) -> bool:
            return a.error_code == 0 and a.assignment is not None and sorted(
                p for tp in a.assignment.topic_partitions for p in tp.partitions) == [0, 1]

        epoch = [join.member_epoch]

        async def beat():
            answer = await conn.request(SH(group_id="g", member_id="m-1", member_epoch=epoch[0], rack_id=None,
                                           subscribed_topic_names=None), 1)
            assert answer.error_code == 0, answer
            epoch[0] = answer.member_epoch
            return answer

        for _ in range(100):
            if assigned(await beat()):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the member was never assigned the initialized partitions")
        # the initialization bumped the group epoch once (its target computed once group.share.assignment.interval.ms
        # had passed since the join's)
        assert epoch[0] == 3
        state = part(await conn.request(RS(group_id="g", topics=[RS.ReadStateData(topic_id=topic_id, partitions=[
            RS.PartitionData(partition=1, leader_epoch=0)])]), 0))
        assert (state.error_code, state.start_offset, state.state_epoch) == (0, -1, 2)
        described = (await conn.request(w.ShareGroupDescribeRequest(group_ids=["g"],
                                                                    include_authorized_operations=False), 1)).groups[0]
        assert (described.error_code, described.group_state, described.group_epoch) == (0, "Stable", 3)
        assert [(m.member_id, m.member_epoch, [(tp.topic_name, sorted(tp.partitions))
                                               for tp in m.assignment.topic_partitions])
                for m in described.members] == [("m-1", 3, [("t", [0, 1])])]
        await storage_error(node, conn, topic_id)

    async def storage_error(node, conn, topic_id):
        SF = w.ShareFetchRequest

        def fetch(epoch: int):
            return SF(group_id="g", member_id="m-1", share_session_epoch=epoch, max_wait_ms=0, min_bytes=1,
                      max_bytes=1 << 20, max_records=10, batch_size=10, topics=[SF.FetchTopic(
                          topic_id=topic_id, partitions=[SF.FetchPartition(partition_index=0)])],
                      forgotten_topics_data=[])

        await until_ok(conn, fetch(0), 1, lambda a: a.error_code == 0, "a share session")  # loads the partition
        await until_ok(conn, _produce("t", {0: _batch([b"x"])}), 9,
                       lambda a: a.responses[0].partition_responses[0].error_code == 0, "a record")
        hp = node.replicas.get("t", 0)

        def failing_read(*_args, **_kwargs):
            raise LogIOError("injected I/O error reading the log")

        hp.log.read = failing_read
        failed = await conn.request(fetch(1), 1)
        assert [(p.error_code, p.acquired_records) for t in failed.responses for p in t.partitions] == [
            (ec.KAFKA_STORAGE_ERROR, [])]
        del hp.log.read
        read = await conn.request(fetch(2), 1)
        assert [[(r.first_offset, r.last_offset) for r in p.acquired_records] for t in read.responses
                for p in t.partitions] == [[(0, 0)]]

    Combined(tmp_path, node_props).run(scenario)
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
