"""Replication between brokers, in-process on real sockets and files: one controller and three brokers. A topic with
three replicas is copied by the followers' replica fetchers; acks=-1 is answered once every ISR member has the
batch; a follower that stops fetching leaves the ISR after ``replica.lag.time.max.ms`` (AlterPartition from the
leader) and comes back once caught up; min.insync.replicas refuses acks=-1 while the ISR is too small; after the
leader stops, the new leader holds every acknowledged record."""

from __future__ import annotations

import asyncio
import socket

from kraftwire import error_codes as ec
from kraftwire.config import parse_properties
from kraftwire.log.checkpoint import parse_offset_checkpoint
from kraftwire.log.meta_properties import MetaProperties, write_meta_properties
from kraftwire.metadata.bootstrap import BOOTSTRAP_FILE, bootstrap_records, encode_bootstrap_file
from kraftwire.metadata.version import BY_NAME
from kraftwire.protocol import messages as w
from kraftwire.records import read_batches
from kraftwire.server.node.app import Node
from kraftwire.server.edge.client import KafkaConnection
from kraftwire.server.runtime.replicas import _now_ms
from kraftwire.server.node.settings import NodeSettings
from tests.server.test_partitions import _batch, _produce

CLUSTER = "Uc70e1ZARn6UM4iJHeByUw"
CT = w.CreateTopicsRequest
LAG_MS = 1000


def _sock():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    return s


class Cluster:
    """``broker_props(b)``: more properties for broker ``b``."""

    def __init__(self, tmp_path, brokers=(1, 2, 3), broker_props=lambda b: "") -> None:
        self.tmp = tmp_path
        self.broker_props = broker_props
        self.csock = _sock()
        self.cport = self.csock.getsockname()[1]
        self.bsocks = {b: _sock() for b in brokers}
        self.nodes: dict[int, Node] = {}
        cdir = tmp_path / "c0"
        cdir.mkdir()
        write_meta_properties(str(cdir), MetaProperties(cluster_id=CLUSTER, node_id=100))
        (cdir / BOOTSTRAP_FILE).write_bytes(encode_bootstrap_file(bootstrap_records(BY_NAME["3.9-IV0"]), timestamp=0))
        for b in brokers:
            d = tmp_path / f"b{b}"
            d.mkdir()
            write_meta_properties(str(d), MetaProperties(cluster_id=CLUSTER, node_id=b))

    def _common(self) -> str:
        return (f"controller.listener.names=CONTROLLER\ncontroller.quorum.voters=100@127.0.0.1:{self.cport}\n"
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
                f"controller.quorum.election.timeout.ms=200\nbroker.heartbeat.interval.ms=100\n"
                f"broker.session.timeout.ms=3000\nreplica.lag.time.max.ms={LAG_MS}\n"
                "auto.leader.rebalance.enable=false\n")

    async def start(self) -> None:
        c = NodeSettings.from_properties(parse_properties(
            f"process.roles=controller\nnode.id=100\nlisteners=CONTROLLER://127.0.0.1:{self.cport}\n"
            f"log.dirs={self.tmp / 'c0'}\n" + self._common()))
        self.controller = Node(c, listen_sockets={"CONTROLLER": self.csock.dup()})
        await self.controller.start()
        for b in self.bsocks:
            await self.start_broker(b)
        for _ in range(500):
            brokers = self.controller.metadata.image.brokers
            if all(b in brokers and not brokers[b].fenced for b in self.bsocks):
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"brokers not unfenced: {self.controller.metadata.image.brokers}")

    async def start_broker(self, b: int) -> Node:
        port = self.bsocks[b].getsockname()[1]
        s = NodeSettings.from_properties(parse_properties(
            f"process.roles=broker\nnode.id={b}\nlisteners=PLAINTEXT://127.0.0.1:{port}\n"
            f"log.dirs={self.tmp / f'b{b}'}\n" + self._common() + self.broker_props(b)))
        node = self.nodes[b] = Node(s, listen_sockets={"PLAINTEXT": self.bsocks[b].dup()})
        await node.start()
        return node

    def port(self, b: int) -> int:
        return self.bsocks[b].getsockname()[1]

    async def create_topic(self, name: str, configs: dict[str, str] | None = None, *, partitions: int = 1,
                           replication_factor: int = 3) -> None:
        """CreateTopics through broker 1, which must succeed; waits until every broker hosts its partition 0."""
        conn = await KafkaConnection.open("127.0.0.1", self.port(min(self.bsocks)))
        try:
            created = await conn.request(CT(topics=[CT.CreatableTopic(
                name=name, num_partitions=partitions, replication_factor=replication_factor, assignments=[],
                configs=[CT.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()])],
                timeout_ms=5000, validate_only=False), 7)
            assert created.topics[0].error_code == ec.NONE, created
        finally:
            await conn.close()
        await _until("hosted", lambda: all(n.replicas.get(name, 0) is not None for n in self.nodes.values()))

    async def produce_to_leader(self, topic: str, values: list[bytes], **kwargs):
        """Once every broker hosts partition 0 of ``topic``: one batch of ``values`` to it through its leader
        (``_produce``'s keywords); the partition's answer."""
        await _until("hosted", lambda: all(n.replicas.get(topic, 0) is not None for n in self.nodes.values()))
        conn = await KafkaConnection.open("127.0.0.1", self.port(self.partition(topic, 0).leader))
        try:
            r = await conn.request(_produce(topic, {0: _batch(values)}, **kwargs), 9)
            return r.responses[0].partition_responses[0]
        finally:
            await conn.close()

    async def stop(self) -> None:
        for node in list(self.nodes.values()):
            await node.shutdown()
        await self.controller.shutdown()

    def partition(self, topic: str, index: int):
        return self.controller.metadata.image.topic(topic).partitions[index]



async def _until(what: str, check, timeout_s: float = 15.0):
    for _ in range(int(timeout_s / 0.02)):
        value = check()
        if value:
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _values(lg) -> list[bytes]:
    data = lg.read(lg.start_offset(), 1 << 24).records if lg.end_offset() > lg.start_offset() else b""
    return [r.value for b in read_batches(bytes(data)) for r in b]


def test_followers_replicate_and_the_isr_shrinks_and_expands(tmp_path):
    cluster = Cluster(tmp_path)

    async def main():
        await cluster.start()
        try:
            await cluster.create_topic("orders", {"min.insync.replicas": "2"})
            reg = cluster.partition("orders", 0)
            leader = reg.leader
            followers = [b for b in reg.replicas if b != leader]
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(leader))
            try:
                for i in range(5):
                    r = await conn.request(_produce("orders", {0: _batch([f"v{i}".encode()])}), 9)
                    assert r.responses[0].partition_responses[0].error_code == ec.NONE, r
                # acks=-1 answered: every ISR member holds the records below the high watermark
                hps = {b: cluster.nodes[b].replicas.get("orders", 0) for b in (1, 2, 3)}
                assert hps[leader].log.high_watermark() == 5
                for b in followers:
                    assert _values(hps[b].log)[:5] == [f"v{i}".encode() for i in range(5)]
                # the followers learn the high watermark on their next fetch
                await _until("follower high watermarks", lambda: all(hps[b].log.high_watermark() == 5
                                                                     for b in followers))
                # and checkpoint it in their log dir while running, as Kafka's followers do
                for b in followers:
                    cluster.nodes[b].replicas.beat(retain=False)
                    hws = parse_offset_checkpoint((tmp_path / f"b{b}" / "replication-offset-checkpoint").read_text())
                    assert hws.get(("orders", 0)) == 5, (b, hws)

                # a follower that stops fetching leaves the ISR after replica.lag.time.max.ms
                slow = followers[0]
                await cluster.nodes[slow].replicas.fetchers.close()
                r = await conn.request(_produce("orders", {0: _batch([b"while slow"])}, timeout_ms=10_000), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.NONE
                await _until("ISR shrink", lambda: slow not in cluster.partition("orders", 0).isr, LAG_MS / 1000 + 10)
                assert len(cluster.partition("orders", 0).isr) == 2
                # it comes back once it fetches again and has caught up
                fetchers = cluster.nodes[slow].replicas.fetchers
                fetchers.closed = False
                fetchers.follow(hps[slow])
                await _until("ISR expansion", lambda: slow in cluster.partition("orders", 0).isr)
                assert _values(hps[slow].log) == _values(hps[leader].log)

                # min.insync.replicas=2: with both followers gone, acks=-1 is refused before the append
                for b in followers:
                    await cluster.nodes[b].replicas.fetchers.close()
                # (a follower at the leader's end is in sync however long it is quiet: they fall behind first)
                r = await conn.request(_produce("orders", {0: _batch([b"acks=1 while both stop"])}, acks=1), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.NONE
                await _until("ISR of one", lambda: cluster.partition("orders", 0).isr == (leader,),
                             LAG_MS / 1000 + 10)
                await _until("leader sees it", lambda: hps[leader].state.isr == (leader,))
                end = hps[leader].log.end_offset()
                r = await conn.request(_produce("orders", {0: _batch([b"refused"])}), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.NOT_ENOUGH_REPLICAS
                assert hps[leader].log.end_offset() == end
                r = await conn.request(_produce("orders", {0: _batch([b"acks=1 is fine"])}, acks=1), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.NONE
                for b in followers:
                    cluster.nodes[b].replicas.fetchers.closed = False
                    cluster.nodes[b].replicas.fetchers.follow(hps[b])
                await _until("full ISR", lambda: len(cluster.partition("orders", 0).isr) == 3)
                acknowledged = _values(hps[leader].log)
            finally:
                await conn.close()

            # the leader stops (controlled shutdown): a follower from the ISR leads, holding everything acknowledged
            await cluster.nodes[leader].shutdown()
            del cluster.nodes[leader]
            new = await _until("new leader", lambda: (cluster.partition("orders", 0).leader
                                                      if cluster.partition("orders", 0).leader in followers
                                                      else None))
            hp = cluster.nodes[new].replicas.get("orders", 0)
            await _until("leading", lambda: hp.state.role == "leader")
            assert _values(hp.log) == acknowledged
        finally:
            await cluster.stop()

    asyncio.run(main())


def test_a_caught_up_follower_outside_the_isr_holds_the_high_watermark_until_the_lag_passes(tmp_path):
    """Kafka's leader also waits for a follower outside the ISR that is caught up and eligible: the replica manager
    gives the rule the image's broker registrations and the fetch times, and its beat releases the high watermark
    once such a follower has been silent for replica.lag.time.max.ms, with nothing else to move it."""
    cluster = Cluster(tmp_path)

    async def main():
        await cluster.start()
        try:
            await cluster.create_topic("quiet")
            reg = cluster.partition("quiet", 0)
            leader, (follower, other) = reg.leader, [b for b in reg.replicas if b != reg.leader]
            hp = cluster.nodes[leader].replicas.get("quiet", 0)
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(leader))
            try:
                for b in (follower, other):  # both followers stop; they fall behind and leave the ISR
                    await cluster.nodes[b].replicas.fetchers.close()
                r = await conn.request(_produce("quiet", {0: _batch([b"one"])}, acks=1), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.NONE
                await _until("ISR of one", lambda: hp.state.isr == (leader,), LAG_MS / 1000 + 10)
                end = hp.log.end_offset()
                assert hp.log.high_watermark() == end
                # the follower's last fetch caught it up to the end; then it goes silent, outside the ISR
                epoch = cluster.nodes[leader].metadata.image.brokers[follower].epoch
                hp.state.follower_fetched(follower, end, epoch, _now_ms(), end)
                r = await conn.request(_produce("quiet", {0: _batch([b"two"])}, acks=1), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.NONE
                assert hp.log.end_offset() == end + 1 and hp.log.high_watermark() == end  # it is waited for
                await _until("released", lambda: hp.log.high_watermark() == end + 1, LAG_MS / 1000 + 5)
            finally:
                await conn.close()
        finally:
            await cluster.stop()

    asyncio.run(main())
