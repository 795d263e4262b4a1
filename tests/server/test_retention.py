"""Retention and DeleteRecords on brokers, in-process on real sockets and files: one controller and three brokers.
``retention.bytes`` deletes a replicated partition's oldest segments on the leader and the followers (their files
go); DeleteRecords (confluent-kafka's ``AdminClient.delete_records``, and the raw request for the refusals) moves the
leader's log start, the followers follow it on their next fetch, ListOffsets and Fetch see it, and it survives a
restart (log-start-offset-checkpoint)."""

from __future__ import annotations

import asyncio
import os
import time

from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.server.client import KafkaConnection
from tests.server.test_partitions import _batch, _fetch, _produce
from tests.server.test_replication import CT, Cluster, _until

D = w.DeleteRecordsRequest
L = w.ListOffsetsRequest
SEGMENT = 1024 * 1024  # the smallest segment.bytes Kafka allows


class RetentionCluster(Cluster):
    def _common(self) -> str:
        return super()._common() + "log.retention.check.interval.ms=200\n"


async def _create(conn, name: str, configs: dict[str, str]) -> None:
    created = await conn.request(CT(topics=[CT.CreatableTopic(
        name=name, num_partitions=1, replication_factor=3, assignments=[],
        configs=[CT.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()])],
        timeout_ms=5000, validate_only=False), 7)
    assert created.topics[0].error_code == ec.NONE, created


async def _earliest(conn, name: str) -> tuple[int, int]:
    got = await conn.request(L(replica_id=-1, isolation_level=0, topics=[L.ListOffsetsTopic(name=name, partitions=[
        L.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=-2)])]), 8)
    p = got.topics[0].partitions[0]
    return p.error_code, p.offset


async def _delete(conn, name: str, offset: int):
    got = await conn.request(D(topics=[D.DeleteRecordsTopic(name=name, partitions=[
        D.DeleteRecordsPartition(partition_index=0, offset=offset)])], timeout_ms=5000), 2)
    return got.topics[0].partitions[0]


def _segments(hp) -> list[str]:
    return sorted(f for f in os.listdir(hp.log.directory) if f.endswith(".log"))


def test_retention_bytes_and_delete_records_move_every_replicas_log_start(tmp_path):
    cluster = RetentionCluster(tmp_path)

    async def main():
        await cluster.start()
        try:
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(1))
            try:
                await _create(conn, "logs", {"segment.bytes": str(SEGMENT), "retention.bytes": str(2 * SEGMENT)})
                await _create(conn, "table", {"cleanup.policy": "compact"})
            finally:
                await conn.close()
            leader = cluster.partition("logs", 0).leader
            await _until("hosted", lambda: all(cluster.nodes[b].replicas.get("logs", 0) is not None
                                               and cluster.nodes[b].replicas.get("table", 0) is not None
                                               for b in (1, 2, 3)))
            hps = {b: cluster.nodes[b].replicas.get("logs", 0) for b in (1, 2, 3)}
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(leader))
            try:
                value = b"x" * 100_000
                now = int(time.time() * 1000)  # older records would go by retention.ms (the broker's 7 days)
                for i in range(50):  # about 5 MB: five segments of 1 MiB
                    r = await conn.request(_produce("logs", {0: _batch([value], ts=now + i)}), 9)
                    assert r.responses[0].partition_responses[0].error_code == ec.NONE, r
                end = hps[leader].log.end_offset()
                assert end == 50
                # retention.bytes: every replica deletes its oldest whole segments below its high watermark
                await _until("retention on every replica", lambda: all(
                    hp.log.start_offset() > 0 and hp.log.size_in_bytes() <= 3 * SEGMENT for hp in hps.values()),
                    20)
                for hp in hps.values():
                    assert len(_segments(hp)) <= 3
                    assert hp.log.segment_base_offsets()[0] == hp.log.start_offset()
                    assert hp.log.end_offset() == end
                start = hps[leader].log.start_offset()
                assert await _earliest(conn, "logs") == (ec.NONE, start)
                topic_id = cluster.controller.metadata.image.topic("logs").id
                gone = await conn.request(_fetch(topic_id, {0: 0}), 13)
                assert gone.responses[0].partitions[0].error_code == ec.OFFSET_OUT_OF_RANGE

                # DeleteRecords from a real client: the log start moves to the offset, inside a segment
                target = start + 3
                admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{cluster.port(leader)}"})
                futures = admin.delete_records([TopicPartition("logs", 0, target)], request_timeout=10)
                future = list(futures.values())[0]
                result = await asyncio.to_thread(future.result, 15)  # the brokers run on this thread's loop
                assert result.low_watermark == target
                assert hps[leader].log.start_offset() == target
                await _until("followers follow the log start",
                             lambda: all(hp.log.start_offset() == target for hp in hps.values()))
                assert await _earliest(conn, "logs") == (ec.NONE, target)
                # the refusals: past the high watermark, negative, a compacted topic, a follower
                p = await _delete(conn, "logs", end + 1)
                assert (p.error_code, p.low_watermark) == (ec.OFFSET_OUT_OF_RANGE, target)
                p = await _delete(conn, "logs", -5)
                assert p.error_code == ec.OFFSET_OUT_OF_RANGE
                if cluster.partition("table", 0).leader == leader:
                    p = await _delete(conn, "table", 0)
                    assert p.error_code == ec.POLICY_VIOLATION
                # -1 means the high watermark: everything goes, the log end stays
                p = await _delete(conn, "logs", -1)
                assert (p.error_code, p.low_watermark) == (ec.NONE, end)
            finally:
                await conn.close()
            follower = next(b for b in (1, 2, 3) if b != leader)
            fconn = await KafkaConnection.open("127.0.0.1", cluster.port(follower))
            try:
                p = await _delete(fconn, "logs", -1)
                assert p.error_code == ec.NOT_LEADER_OR_FOLLOWER
            finally:
                await fconn.close()
            await _until("followers emptied", lambda: all(hp.log.start_offset() == end for hp in hps.values()))

            # the log start survives a restart of the broker (log-start-offset-checkpoint)
            await cluster.nodes[follower].shutdown()
            node = await cluster.start_broker(follower)
            hp = await _until("hosted again", lambda: node.replicas.get("logs", 0))
            assert (hp.log.start_offset(), hp.log.end_offset()) == (end, end)
        finally:
            await cluster.stop()

    asyncio.run(main())
