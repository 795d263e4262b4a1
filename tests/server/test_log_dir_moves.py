"""AlterReplicaLogDirs end to end, in-process (mirrors Kafka's ``AlterReplicaLogDirsRequestTest`` and the log-dir
cases of ``ReplicaManagerTest``): two brokers with two log directories each; a partition under acks=all produce is
moved to the other directory of its leader, the controller told its new directory (KIP-858), nothing lost, the old
directory emptied; the answers for an unknown directory, an unknown partition and a partition created later; the
future replica shown by DescribeLogDirs while a throttle holds it back; a restart finds the partition where it went."""

from __future__ import annotations

import asyncio
import os

from kraftwire import error_codes as ec
from kraftwire.metadata.controller.topics import replica_dir
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import KafkaConnection
from tests.server.test_dir_failure import TwoDirCluster
from tests.server.test_replication import _until

A = w.AlterReplicaLogDirsRequest


def _alter(moves: dict[str, list[tuple[str, int]]]):
    return A(dirs=[A.AlterReplicaLogDir(path=path, topics=[
        A.AlterReplicaLogDirTopic(name=t, partitions=[p for tt, p in parts if tt == t])
        for t in dict.fromkeys(t for t, _ in parts)]) for path, parts in moves.items()])


def _answers(r) -> dict:
    return {(t.topic_name, p.partition_index): p.error_code for t in r.results for p in t.partitions}


async def _request(cluster, b, body, version):
    conn = await KafkaConnection.open("127.0.0.1", cluster.port(b))
    try:
        return await conn.request(body, version)
    finally:
        await conn.close()


def test_a_partition_moves_live_to_another_log_dir_and_stays_there_after_a_restart(tmp_path):
    cluster = TwoDirCluster(tmp_path)

    async def main():
        await cluster.start()
        try:
            await cluster.create_topic("mv", replication_factor=2)
            leader = cluster.partition("mv", 0).leader
            node = cluster.nodes[leader]
            hp = node.replicas.get("mv", 0)
            source = hp.root
            target = next(d for d in cluster.dirs[leader] if d != source)
            acked = 0
            for i in range(20):
                r = await cluster.produce_to_leader("mv", [b"v%d-%d" % (i, j) for j in range(50)])
                assert r.error_code == ec.NONE
                acked += 50
            # Kafka's answers: an unknown path, an unknown partition (remembered all the same), the move itself
            r = await _request(cluster, leader, _alter({"/no/such/dir": [("mv", 0)], target: [("mv", 0), ("nope", 0)]}), 2)
            assert _answers(r) == {("mv", 0): ec.NONE, ("nope", 0): ec.UNKNOWN_TOPIC_OR_PARTITION}
            r = await _request(cluster, leader, _alter({"relative": [("mv", 0)]}), 1)
            assert _answers(r) == {("mv", 0): ec.LOG_DIR_NOT_FOUND}
            # produce while it moves: acks=all answers keep coming, nothing is lost
            for i in range(10):
                r = await cluster.produce_to_leader("mv", [b"during-%d" % i])
                assert r.error_code == ec.NONE
                acked += 1
            await _until("moved", lambda: node.replicas.get("mv", 0).root == target and not node.replicas.moves)
            tid = cluster.controller.metadata.image.topic("mv").id
            await _until("the controller records the new directory", lambda: replica_dir(
                cluster.controller.metadata.image.topics[tid].partitions[0], leader) == cluster.dirs[leader][target])
            await _until("old directory emptied", lambda: not [n for n in os.listdir(source) if n.startswith("mv-0")])
            assert os.path.isdir(os.path.join(target, "mv-0"))
            r = await cluster.produce_to_leader("mv", [b"after"])
            assert r.error_code == ec.NONE
            acked += 1
            assert node.replicas.get("mv", 0).log.end_offset() == acked
            # a move to where it already is: nothing to do
            r = await _request(cluster, leader, _alter({target: [("mv", 0)]}), 2)
            assert _answers(r) == {("mv", 0): ec.NONE} and not node.replicas.moves
            d = await _request(cluster, leader, w.DescribeLogDirsRequest(topics=None), 4)
            where = {(t.name, p.partition_index, p.is_future_key): res.log_dir for res in d.results for t in res.topics
                     for p in t.partitions}
            assert where == {("mv", 0, False): target}
            # restart: found where it went
            await node.shutdown()
            node = await cluster.start_broker(leader)
            await _until("hosted again", lambda: node.replicas.get("mv", 0) is not None)
            assert node.replicas.get("mv", 0).root == target
            assert node.replicas.get("mv", 0).log.end_offset() == acked
        finally:
            await cluster.stop()

    asyncio.run(main())


def test_a_throttled_move_shows_its_future_replica_and_a_later_partition_goes_where_asked(tmp_path):
    cluster = TwoDirCluster(tmp_path)
    common = cluster._common
    cluster._common = lambda: common() + "replica.alter.log.dirs.io.max.bytes.per.second=1\n"

    async def main():
        await cluster.start()
        try:
            await cluster.create_topic("slow", replication_factor=2)
            b = cluster.partition("slow", 0).leader
            node = cluster.nodes[b]
            source = node.replicas.get("slow", 0).root
            target = next(d for d in cluster.dirs[b] if d != source)
            for i in range(12):  # more than one copy step reads (1 MiB)
                assert (await cluster.produce_to_leader("slow", [b"x" * 100_000])).error_code == ec.NONE
            r = await _request(cluster, b, _alter({target: [("slow", 0)]}), 2)
            assert _answers(r) == {("slow", 0): ec.NONE}
            # the first read overshoots the 1 B/s bound (as Kafka's first fetch of a window does); then it waits
            await _until("one copy step", lambda: node.replicas.moves["slow", 0].log.end_offset() > 0)
            await asyncio.sleep(0.2)
            move = node.replicas.moves["slow", 0]
            assert 0 < move.log.end_offset() < 12
            d = await _request(cluster, b, w.DescribeLogDirsRequest(topics=None), 4)
            seen = {(res.log_dir, p.is_future_key): (p.offset_lag, p.partition_size) for res in d.results
                    for t in res.topics if t.name == "slow" for p in t.partitions}
            assert seen == {(source, False): (0, node.replicas.get("slow", 0).log.size_in_bytes()),
                            (target, True): (12 - move.log.end_offset(), move.log.size_in_bytes())}
            future_dirs = [n for n in os.listdir(target) if n.startswith("slow-0.") and n.endswith("-future")]
            assert len(future_dirs) == 1
            # records deleted from the current log are deleted from the future replica too
            DR = w.DeleteRecordsRequest
            r = await _request(cluster, b, DR(topics=[DR.DeleteRecordsTopic(name="slow", partitions=[
                DR.DeleteRecordsPartition(partition_index=0, offset=3)])], timeout_ms=5000), 2)
            assert r.topics[0].partitions[0].error_code == ec.NONE
            await _until("future log start follows", lambda: move.log.start_offset() == 3)
            # moved back to where it is: the future replica is dropped
            r = await _request(cluster, b, _alter({source: [("slow", 0)]}), 2)
            assert _answers(r) == {("slow", 0): ec.NONE} and not node.replicas.moves
            await _until("future removed", lambda: not [n for n in os.listdir(target) if n.startswith("slow-0")])
            # a partition not created yet: UNKNOWN_TOPIC_OR_PARTITION, and created in the directory asked
            r = await _request(cluster, b, _alter({target: [("later", 0)]}), 2)
            assert _answers(r) == {("later", 0): ec.UNKNOWN_TOPIC_OR_PARTITION}
            assert node.replicas._preferred == {("later", 0): target}
        finally:
            await cluster.stop()

    asyncio.run(main())


def test_a_broker_stopped_mid_move_resumes_it_and_one_stopped_between_the_renames_promotes_the_future(tmp_path):
    """Kafka's restart rules for future logs: a future directory is resumed (the copy goes on) unless the image
    already assigns the replica to its directory, when it is promoted (``LogManager.recoverAbandonedFutureLogs``),
    the stale current directory removed."""
    cluster = TwoDirCluster(tmp_path)
    common = cluster._common
    throttle = ["replica.alter.log.dirs.io.max.bytes.per.second=1\n"]
    cluster._common = lambda: common() + throttle[0]

    async def main():
        await cluster.start()
        try:
            await cluster.create_topic("rs", replication_factor=2)
            b = cluster.partition("rs", 0).leader
            node = cluster.nodes[b]
            source = node.replicas.get("rs", 0).root
            target = next(d for d in cluster.dirs[b] if d != source)
            for _ in range(12):
                assert (await cluster.produce_to_leader("rs", [b"r" * 100_000])).error_code == ec.NONE
            r = await _request(cluster, b, _alter({target: [("rs", 0)]}), 2)
            assert _answers(r) == {("rs", 0): ec.NONE}
            await _until("one copy step", lambda: node.replicas.moves["rs", 0].log.end_offset() > 0)
            await node.shutdown()
            futures = [n for n in os.listdir(target) if n.startswith("rs-0.") and n.endswith("-future")]
            assert len(futures) == 1
            throttle[0] = ""
            node = await cluster.start_broker(b)
            await _until("resumed and moved", lambda: node.replicas.get("rs", 0) is not None
                         and node.replicas.get("rs", 0).root == target and not node.replicas.moves)
            assert node.replicas.get("rs", 0).log.end_offset() == 12
            tid = cluster.controller.metadata.image.topic("rs").id
            await _until("assigned to the new directory", lambda: replica_dir(
                cluster.controller.metadata.image.topics[tid].partitions[0], b) == cluster.dirs[b][target])
            await _until("old directory emptied", lambda: not [n for n in os.listdir(source) if n.startswith("rs-0")])
            # a stop between the swap's renames: only the future directory, the image naming its directory
            await node.shutdown()
            os.rename(os.path.join(target, "rs-0"), os.path.join(target, "rs-0." + "ab" * 16 + "-future"))
            node = await cluster.start_broker(b)
            await _until("promoted", lambda: node.replicas.get("rs", 0) is not None)
            hp = node.replicas.get("rs", 0)
            assert hp.root == target and hp.log.end_offset() == 12 and not node.replicas.moves
            assert sorted(n for n in os.listdir(target) if n.startswith("rs-0")) == ["rs-0"]
        finally:
            await cluster.stop()

    asyncio.run(main())
