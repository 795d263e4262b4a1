"""KIP-858 end to end, in-process: two brokers with two log directories each (every directory with its
``directory.id``) register them all, tell the controller where they placed each replica (AssignReplicasToDirs), and
when an I/O error takes one directory offline the broker reports it in its heartbeat: the controller moves the
leadership of the partitions placed there to the other replica, clients produce to it, and the broker keeps
leading what lives in its healthy directory."""

from __future__ import annotations

import asyncio
import uuid

from kraftwire import error_codes as ec
from kraftwire.config import parse_properties
from kraftwire.log.meta_properties import MetaProperties, write_meta_properties
from kraftwire.metadata.controller.topics import replica_dir
from kraftwire.server.node.app import Node
from kraftwire.server.edge.client import KafkaConnection
from kraftwire.server.node.settings import NodeSettings
from tests.server.test_partitions import _batch, _produce
from tests.server.test_replication import CLUSTER, CT, Cluster, _until


class TwoDirCluster(Cluster):
    def __init__(self, tmp_path) -> None:
        super().__init__(tmp_path, brokers=(1, 2))
        self.dirs = {}
        for b in (1, 2):
            pair = (tmp_path / f"b{b}", tmp_path / f"b{b}-second")
            pair[1].mkdir()
            ids = (uuid.UUID(int=10 * b + 1), uuid.UUID(int=10 * b + 2))
            for d, i in zip(pair, ids):
                write_meta_properties(str(d), MetaProperties(cluster_id=CLUSTER, node_id=b, directory_id=i,
                                                             version=1))
            self.dirs[b] = dict(zip((str(p) for p in pair), ids))

    async def start_broker(self, b: int) -> Node:
        port = self.bsocks[b].getsockname()[1]
        s = NodeSettings.from_properties(parse_properties(
            f"process.roles=broker\nnode.id={b}\nlisteners=PLAINTEXT://127.0.0.1:{port}\n"
            f"log.dirs={','.join(self.dirs[b])}\n" + self._common()))
        node = self.nodes[b] = Node(s, listen_sockets={"PLAINTEXT": self.bsocks[b].dup()})
        await node.start()
        node.replicas.on_all_offline = lambda what, exc: None  # this test never takes both down
        return node


def test_an_offline_directory_is_reported_and_its_partitions_move(tmp_path):
    cluster = TwoDirCluster(tmp_path)

    async def main():
        await cluster.start()
        try:
            image = lambda: cluster.controller.metadata.image  # noqa: E731
            assert {b: set(image().brokers[b].log_dirs) for b in (1, 2)} == {
                b: set(cluster.dirs[b].values()) for b in (1, 2)}
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(1))
            try:
                created = await conn.request(CT(topics=[CT.CreatableTopic(
                    name="jbod", num_partitions=4, replication_factor=2, assignments=[], configs=[])],
                    timeout_ms=5000, validate_only=False), 7)
                assert created.topics[0].error_code == ec.NONE
            finally:
                await conn.close()
            tid = image().topic("jbod").id

            def placed() -> bool:  # every replica's directory recorded by the controller
                t = image().topic("jbod")
                return all(replica_dir(p, b) in cluster.dirs[b].values() for p in t.partitions.values()
                           for b in (1, 2))

            await _until("replicas placed (AssignReplicasToDirs)", placed)
            for b in (1, 2):
                for index in range(4):
                    hp = cluster.nodes[b].replicas.get("jbod", index)
                    assert replica_dir(image().topics[tid].partitions[index], b) == cluster.dirs[b][hp.root]
            await _until("full ISRs", lambda: all(len(p.isr) == 2 for p in image().topic("jbod").partitions.values()))
            led_by_1 = [i for i, p in image().topic("jbod").partitions.items() if p.leader == 1]
            assert led_by_1
            victim = cluster.nodes[1].replicas.get("jbod", led_by_1[0])
            failed_root = victim.root
            in_failed = {i for i in range(4) if cluster.nodes[1].replicas.get("jbod", i).root == failed_root}
            victim.log.inject_io_error()
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(1))
            try:
                r = await conn.request(_produce("jbod", {led_by_1[0]: _batch([b"x"])}), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.KAFKA_STORAGE_ERROR
            finally:
                await conn.close()
            # the heartbeat reports it; the controller moves those partitions and drops the directory
            failed_id = cluster.dirs[1][failed_root]
            await _until("directory reported offline", lambda: failed_id not in image().brokers[1].log_dirs)
            parts = image().topic("jbod").partitions
            for i in in_failed:
                assert parts[i].leader == 2 and parts[i].isr == (2,), (i, parts[i])
            for i in set(range(4)) - in_failed:
                assert 1 in parts[i].isr, (i, parts[i])  # the healthy directory's partitions keep broker 1
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(2))
            try:
                await _until("broker 2 leads the moved partitions", lambda: all(
                    cluster.nodes[2].replicas.get("jbod", i).state.role == "leader" for i in in_failed))
                r = await conn.request(_produce("jbod", {i: _batch([b"moved"]) for i in in_failed}), 9)
                assert all(p.error_code == ec.NONE for p in r.responses[0].partition_responses), r
            finally:
                await conn.close()
            assert not image().brokers[1].fenced  # the broker itself stays in the cluster
        finally:
            await cluster.stop()

    asyncio.run(main())
