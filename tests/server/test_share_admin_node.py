"""The share-group admin APIs on a real node (KIP-932, issue 43), driven over the wire with no Kafka client: a share
member reads a topic's records and accepts them, then DescribeShareGroupOffsets, AlterShareGroupOffsets,
DeleteShareGroupOffsets and DeleteGroups act on the share coordinator's state — checked through
ReadShareGroupStateSummary itself: an alteration is the share-partition's new start offset, a deletion of the offsets
or of the group leaves no state behind (start offset -1)."""

from __future__ import annotations

import asyncio
import time

from harness import processes, roles

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.server.edge.client import KafkaConnection, request_once
from server.test_kraft_node import _create
from server.test_share_fetch_node import PROPS

GROUP, TOPIC, MEMBER = "ag", "aq", "admin-member-1"
DO, AO, DLO = w.DescribeShareGroupOffsetsRequest, w.AlterShareGroupOffsetsRequest, w.DeleteShareGroupOffsetsRequest
SF = w.ShareFetchRequest


def _ask(port: int, body, version: int):
    return asyncio.run(request_once("127.0.0.1", port, body, version, timeout=15.0))


def _offsets(port: int, group: str = GROUP) -> list[tuple]:
    """(topic, partition, start offset, lag, error) of every initialized share-partition of the group."""
    answer = _ask(port, DO(groups=[DO.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=None)]), 1)
    g = answer.groups[0]
    assert g.error_code == 0, g
    return [(t.topic_name, p.partition_index, p.start_offset, p.lag, p.error_code) for t in g.topics
            for p in t.partitions]


def _alter(port: int, group: str, start: int):
    return _ask(port, AO(group_id=group, topics=[AO.AlterShareGroupOffsetsRequestTopic(
        topic_name=TOPIC, partitions=[AO.AlterShareGroupOffsetsRequestPartition(partition_index=0,
                                                                                start_offset=start)])]), 0)


def _summary(port: int, topic_id) -> int:
    """The share coordinator's start offset of partition 0 for the group (-1: no state)."""
    S = w.ReadShareGroupStateSummaryRequest
    answer = _ask(port, S(group_id=GROUP, topics=[S.ReadStateSummaryData(topic_id=topic_id, partitions=[
        S.PartitionData(partition=0, leader_epoch=0)])]), 1)
    part = answer.results[0].partitions[0]
    assert part.error_code == 0, part
    return part.start_offset


def _heartbeat(port: int, epoch: int):
    """A heartbeat of the member; epoch 0 joins with the subscription, -1 leaves; the full subscription is sent
    each time so the answer carries the assignment."""
    return _ask(port, w.ShareGroupHeartbeatRequest(group_id=GROUP, member_id=MEMBER, member_epoch=epoch,
                                                   rack_id=None, subscribed_topic_names=[TOPIC] if epoch >= 0
                                                   else None), 1)


async def _read_and_accept(port: int, topic_id) -> list[int]:
    """A share session that reads the records and accepts them all; the acquired offsets."""
    conn = await KafkaConnection.open("127.0.0.1", port, timeout=15.0)
    try:
        def fetch(epoch: int, acks=()):
            return SF(group_id=GROUP, member_id=MEMBER, share_session_epoch=epoch, max_wait_ms=2000, min_bytes=1,
                      max_bytes=1 << 20, max_records=100, batch_size=100, topics=[SF.FetchTopic(
                          topic_id=topic_id, partitions=[SF.FetchPartition(partition_index=0, acknowledgement_batches=[
                              SF.AcknowledgementBatch(first_offset=f, last_offset=last, acknowledge_types=[1])
                              for f, last in acks])])], forgotten_topics_data=[])
        got = await conn.request(fetch(0), 1, timeout=15.0)
        ranges = [(r.first_offset, r.last_offset) for t in got.responses for p in t.partitions
                  for r in p.acquired_records]
        acked = await conn.request(fetch(1, ranges), 1, timeout=15.0)
        assert acked.error_code == 0 and all(p.acknowledge_error_code == 0 for t in acked.responses
                                             for p in t.partitions), acked
        await conn.request(fetch(-1), 1, timeout=15.0)
        return [o for f, last in ranges for o in range(f, last + 1)]
    finally:
        await conn.close()


def _produced(port: int, records: bytes) -> bool:
    P = w.ProduceRequest
    answer = _ask(port, P(transactional_id=None, acks=-1, timeout_ms=10000, topic_data=[P.TopicProduceData(
        name=TOPIC, partition_data=[P.PartitionProduceData(index=0, records=records)])]), 9)
    return answer.responses[0].partition_responses[0].error_code == 0


def _assigned(answer):
    """The heartbeat's answer once it assigns a partition (the share-partition initialized), else None."""
    ok = answer.error_code == 0 and answer.assignment is not None and answer.assignment.topic_partitions
    return answer if ok else None


def test_share_group_offsets_altered_deleted_and_group_deleted(tmp_path):
    with processes.CombinedNode(tmp_path, PROPS, format_args=("--feature", "share.version=1")) as node:
        port = node.port
        roles.wait_until(lambda: roles.broker_ids(port) == [1], "the kraftwire node online")
        assert _ask(port, _create(TOPIC, partitions=1), 7).topics[0].error_code == 0
        IAC = w.IncrementalAlterConfigsRequest
        _ask(port, IAC(resources=[IAC.AlterConfigsResource(resource_type=32, resource_name=GROUP, configs=[
            IAC.AlterableConfig(name="share.auto.offset.reset", config_operation=0, value="earliest")])],
            validate_only=False), 1)
        b = RecordBatchBuilder(base_offset=0)
        for i in range(4):
            b.append(b"k", b"v%d" % i)
        records = b.build()
        roles.wait_until(lambda: _produced(port, records), "records produced")
        FC = w.FindCoordinatorRequest  # the first ask creates __consumer_offsets
        roles.wait_until(lambda: _ask(port, FC(key_type=0, coordinator_keys=[GROUP]), 4).coordinators[0]
                         .error_code == 0, "the group coordinator")
        epoch = [_heartbeat(port, 0).member_epoch]

        def beat():
            answer = _heartbeat(port, epoch[0])
            epoch[0] = answer.member_epoch if answer.error_code == 0 else epoch[0]
            return _assigned(answer)

        joined = roles.wait_until(beat, "the member assigned the topic's initialized share-partition")
        topic_id = joined.assignment.topic_partitions[0].topic_id
        assert asyncio.run(_read_and_accept(port, topic_id)) == [0, 1, 2, 3]
        # as Kafka 4.4's SharePartition: the write that made the acknowledgements durable carries the start offset
        # as it was (0); the start moves in memory once the write succeeded and is persisted by the next write
        assert _offsets(port) == [(TOPIC, 0, 0, 0, 0)]
        assert _summary(port, topic_id) == 0
        # a member in the group: nothing may change
        refused = _alter(port, GROUP, 1)
        assert (refused.error_code, refused.error_message) == (ec.NON_EMPTY_GROUP, "The group is not empty.")
        deleted = _ask(port, w.DeleteGroupsRequest(groups_names=[GROUP]), 2)
        assert deleted.results[0].error_code == ec.NON_EMPTY_GROUP
        assert _heartbeat(port, -1).member_epoch == -1
        altered = _alter(port, GROUP, 1)
        assert altered.error_code == 0 and [p.error_code for t in altered.responses for p in t.partitions] == [0]
        assert _summary(port, topic_id) == 1
        assert roles.wait_until(lambda: _offsets(port) == [(TOPIC, 0, 1, 3, 0)] or None, "the alteration described")
        gone = _ask(port, DLO(group_id=GROUP, topics=[DLO.DeleteShareGroupOffsetsRequestTopic(topic_name=TOPIC)]), 0)
        assert gone.error_code == 0 and [(t.topic_name, t.error_code) for t in gone.responses] == [(TOPIC, 0)]
        assert _offsets(port) == [] and _summary(port, topic_id) == -1
        assert _alter(port, GROUP, 2).error_code == 0 and _summary(port, topic_id) == 2
        deleted = _ask(port, w.DeleteGroupsRequest(groups_names=[GROUP]), 2)
        assert deleted.results[0].error_code == 0
        assert _summary(port, topic_id) == -1
        listed = _ask(port, w.ListGroupsRequest(states_filter=[], types_filter=["share"]), 5)
        assert [g.group_id for g in listed.groups] == []
        missing = _ask(port, DLO(group_id=GROUP, topics=[DLO.DeleteShareGroupOffsetsRequestTopic(topic_name=TOPIC)]),
                       0)
        assert (missing.error_code, missing.error_message) == (ec.GROUP_ID_NOT_FOUND, f"Group {GROUP} not found.")
        _first_fetch_of_a_new_group(port)
        time.sleep(0.2)
        assert "Traceback" not in node.stderr()


def _first_fetch_of_a_new_group(port: int) -> None:
    """librdkafka's 0179 case: a new group's first ShareFetch of two partitions, both with records, answers the
    share-partition whose load finished first — Kafka's delayed fetch is tried on each initialization's completion
    and completes with the first that has records — and the next fetch the other one."""
    group, topic, member = "fg", "fq", "first-member-1"
    assert _ask(port, _create(topic, partitions=2), 7).topics[0].error_code == 0
    IAC = w.IncrementalAlterConfigsRequest
    _ask(port, IAC(resources=[IAC.AlterConfigsResource(resource_type=32, resource_name=group, configs=[
        IAC.AlterableConfig(name="share.auto.offset.reset", config_operation=0, value="earliest")])],
        validate_only=False), 1)
    P = w.ProduceRequest
    for index in (0, 1):
        b = RecordBatchBuilder(base_offset=0)
        for i in range(3):
            b.append(b"k", b"p%d-%d" % (index, i))
        records = b.build()
        roles.wait_until(lambda: _ask(port, P(transactional_id=None, acks=-1, timeout_ms=10000, topic_data=[
            P.TopicProduceData(name=topic, partition_data=[P.PartitionProduceData(index=index, records=records)])]),
            9).responses[0].partition_responses[0].error_code == 0, f"{topic}-{index} produced")
    epoch = [0]

    def beat():
        answer = _ask(port, w.ShareGroupHeartbeatRequest(group_id=group, member_id=member, member_epoch=epoch[0],
                                                         rack_id=None, subscribed_topic_names=[topic]), 1)
        epoch[0] = answer.member_epoch if answer.error_code == 0 else epoch[0]
        ok = _assigned(answer) and len(answer.assignment.topic_partitions[0].partitions) == 2
        return answer if ok else None

    topic_id = roles.wait_until(beat, "both partitions assigned").assignment.topic_partitions[0].topic_id

    async def fetches():
        conn = await KafkaConnection.open("127.0.0.1", port, timeout=15.0)
        try:
            answers = []
            for session_epoch in (0, 1):
                got = await conn.request(SF(
                    group_id=group, member_id=member, share_session_epoch=session_epoch, max_wait_ms=5000,
                    min_bytes=1, max_bytes=1 << 20, max_records=100, batch_size=100, topics=[SF.FetchTopic(
                        topic_id=topic_id, partitions=[SF.FetchPartition(partition_index=i) for i in (0, 1)])],
                    forgotten_topics_data=[]), 1, timeout=15.0)
                answers.append(sorted(p.partition_index for t in got.responses for p in t.partitions
                                      if p.acquired_records))
            return answers
        finally:
            await conn.close()

    first, second = asyncio.run(fetches())
    assert len(first) == 1 and sorted(first + second) == [0, 1], (first, second)
