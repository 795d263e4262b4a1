"""Retention and DeleteRecords on brokers, in-process on real sockets and files: one controller and three brokers.
``retention.bytes`` deletes a replicated partition's oldest segments on the leader and the followers (their files
go); DeleteRecords (confluent-kafka's ``AdminClient.delete_records``, and the raw request for the refusals) moves the
leader's log start, the followers follow it on their next fetch, ListOffsets and Fetch see it, and it survives a
restart (log-start-offset-checkpoint)."""

from __future__ import annotations

import asyncio
import json
import os
import time

from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import KafkaConnection
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
                # the refusals: past the high watermark, negative, a compacted topic, a follower (no low watermark
                # with an error, as Kafka answers; the conformance run, #36)
                p = await _delete(conn, "logs", end + 1)
                assert (p.error_code, p.low_watermark) == (ec.OFFSET_OUT_OF_RANGE, -1)
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


def _tool(*argv: str) -> tuple[int, str, str]:
    """A kraftwire command run on another thread (the brokers run on this thread's loop)."""
    import contextlib
    import io

    from kraftwire import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_log_dirs_and_delete_records_tools_answer_as_kafkas(tmp_path):
    cluster = RetentionCluster(tmp_path)

    async def main():
        await cluster.start()
        try:
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(1))
            try:
                await _create(conn, "events", {})
            finally:
                await conn.close()
            leader = cluster.partition("events", 0).leader
            await _until("hosted", lambda: all(cluster.nodes[b].replicas.get("events", 0) is not None
                                               for b in (1, 2, 3)))
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(leader))
            try:
                r = await conn.request(_produce("events", {0: _batch([b"a", b"b", b"c", b"d"],
                                                                     ts=int(time.time() * 1000))}), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.NONE
            finally:
                await conn.close()
            hps = {b: cluster.nodes[b].replicas.get("events", 0) for b in (1, 2, 3)}
            await _until("replicated", lambda: all(hp.log.high_watermark() == 4 for hp in hps.values()))
            bootstrap = f"127.0.0.1:{cluster.port(1)}"

            code, out, _ = await asyncio.to_thread(_tool, "log-dirs", "--bootstrap-server", bootstrap, "--describe",
                                                   "--topic-list", "events")
            assert code == 0
            lines = out.splitlines()
            assert lines[:2] == ["Querying brokers for log directories information",
                                 "Received log directory information from brokers 1,2,3"]
            described = json.loads(lines[2])
            assert lines[2].startswith('{"brokers":[{"broker":1,"logDirs":[{"partitions":[{"partition":"events-0"')
            assert described["version"] == 1 and [b["broker"] for b in described["brokers"]] == [1, 2, 3]
            for b in described["brokers"]:
                (d,) = b["logDirs"]
                assert d["error"] is None and d["logDir"] == str(tmp_path / f"b{b['broker']}")
                assert d["partitions"] == [{"partition": "events-0", "size": hps[b["broker"]].log.size_in_bytes(),
                                            "offsetLag": 0, "isFuture": False}]
            code, _, err = await asyncio.to_thread(_tool, "log-dirs", "--bootstrap-server", bootstrap, "--describe",
                                                   "--broker-list", "1,7")
            assert code == 1 and "The given brokers do not exist from --broker-list: 7. Current existent brokers: " \
                                 "1,2,3" in err

            spec = tmp_path / "offsets.json"
            spec.write_text(json.dumps({"partitions": [{"topic": "events", "partition": 0, "offset": 3},
                                                       {"topic": "events", "partition": 5, "offset": 1}],
                                        "version": 1}))
            code, out, _ = await asyncio.to_thread(_tool, "delete-records", "--bootstrap-server", bootstrap,
                                                   "--offset-json-file", str(spec))
            assert code == 0
            assert out.splitlines()[:2] == ["Executing records delete operation", "Records delete operation completed:"]
            assert sorted(out.splitlines()[2:]) == [
                "partition: events-0\tlow_watermark: 3",
                "partition: events-5\terror: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This "
                "server does not host this topic-partition."]
            assert hps[leader].log.start_offset() == 3
            spec.write_text(json.dumps({"partitions": [{"topic": "events", "partition": 0, "offset": 9}]}))
            code, out, _ = await asyncio.to_thread(_tool, "delete-records", "--bootstrap-server", bootstrap,
                                                   "--offset-json-file", str(spec))
            assert code == 0 and out.splitlines()[2] == (
                "partition: events-0\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested "
                "offset is not within the range of offsets maintained by the server.")
            spec.write_text('{"partitions": [{"topic": "events", "partition": 0, "offset": 1}, '
                            '{"topic": "events", "partition": 0, "offset": 2}], "version": 1}')
            code, _, err = await asyncio.to_thread(_tool, "delete-records", "--bootstrap-server", bootstrap,
                                                   "--offset-json-file", str(spec))
            assert code == 1 and "Offset json file contains duplicate topic partitions: events-0" in err
        finally:
            await cluster.stop()

    asyncio.run(main())
