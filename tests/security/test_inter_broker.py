"""Brokers replicate over the inter-broker listener, with its security: ``inter.broker.listener.name`` naming a
SASL_SSL listener makes the replica fetchers dial the leaders' SASL_SSL endpoint, verify its certificate and log in
with ``sasl.mechanism.inter.broker.protocol=PLAIN``, while clients use a PLAINTEXT listener. In-process on real
sockets, TLS and files: one controller and three brokers. Then Kafka's configuration rules for the two keys."""

from __future__ import annotations

import asyncio
import ssl

import pytest

from harness.certs import CA
from kraftwire import error_codes as ec
from kraftwire.config import parse_properties
from kraftwire.errors import ConfigError
from kraftwire.server.app import Node
from kraftwire.server.client import KafkaConnection
from kraftwire.server.settings import NodeSettings
from tests.server.test_partitions import _batch, _produce
from tests.server.test_replication import CT, Cluster, _sock, _until

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" '
        'password="broker-secret" user_broker="broker-secret";')


class SecureCluster(Cluster):
    def __init__(self, tmp_path) -> None:
        super().__init__(tmp_path)
        ca = CA(str(tmp_path / "ca"))
        self.cert = ca.issue("broker")
        self.ca = ca
        self.internal = {b: _sock() for b in self.bsocks}

    def _common(self) -> str:
        return super()._common().replace(
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,INTERNAL:SASL_SSL")

    async def start_broker(self, b: int) -> Node:
        port, internal = self.bsocks[b].getsockname()[1], self.internal[b].getsockname()[1]
        s = NodeSettings.from_properties(parse_properties(
            f"process.roles=broker\nnode.id={b}\n"
            f"listeners=PLAINTEXT://127.0.0.1:{port},INTERNAL://localhost:{internal}\n"
            f"log.dirs={self.tmp / f'b{b}'}\n" + self._common()
            + "inter.broker.listener.name=INTERNAL\nsasl.mechanism.inter.broker.protocol=PLAIN\n"
            "listener.name.internal.sasl.enabled.mechanisms=PLAIN\n"
            f"listener.name.internal.plain.sasl.jaas.config={JAAS}\n"
            f"listener.name.internal.ssl.keystore.type=PEM\n"
            f"listener.name.internal.ssl.keystore.location={self.cert.bundle_path}\n"
            f"listener.name.internal.ssl.truststore.type=PEM\n"
            f"listener.name.internal.ssl.truststore.location={self.ca.path}\n"))
        assert s.inter_broker_listener == "INTERNAL" and s.inter_broker_sasl.username == "broker"
        assert not s.unknown_keys and "inter.broker.listener.name" not in s.ignored_keys
        node = self.nodes[b] = Node(s, listen_sockets={"PLAINTEXT": self.bsocks[b].dup(),
                                                       "INTERNAL": self.internal[b].dup()})
        await node.start()
        return node


def test_followers_replicate_over_a_sasl_ssl_inter_broker_listener(tmp_path):
    cluster = SecureCluster(tmp_path)

    async def main():
        await cluster.start()
        try:
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(1))
            try:
                created = await conn.request(CT(topics=[CT.CreatableTopic(
                    name="secure", num_partitions=1, replication_factor=3, assignments=[],
                    configs=[CT.CreatableTopicConfig(name="min.insync.replicas", value="3")])],
                    timeout_ms=5000, validate_only=False), 7)
                assert created.topics[0].error_code == ec.NONE
            finally:
                await conn.close()
            leader = cluster.partition("secure", 0).leader
            await _until("hosted", lambda: all(cluster.nodes[b].replicas.get("secure", 0) is not None
                                               for b in (1, 2, 3)))
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(leader))
            try:
                # min.insync.replicas=3: acks=-1 is answered only once both followers fetched over INTERNAL
                r = await conn.request(_produce("secure", {0: _batch([b"over", b"tls"])}, timeout_ms=20_000), 9)
                assert r.responses[0].partition_responses[0].error_code == ec.NONE, r
            finally:
                await conn.close()
            for b in (1, 2, 3):
                if b == leader:
                    continue
                fetchers = cluster.nodes[b].replicas.fetchers
                assert fetchers.leader_endpoint(leader) == ("localhost", cluster.internal[leader].getsockname()[1])
                conn = fetchers.fetchers[leader].conn
                assert conn is not None and isinstance(conn._writer.get_extra_info("ssl_object"), ssl.SSLObject)
                assert cluster.nodes[b].replicas.get("secure", 0).log.end_offset() == 2
        finally:
            await cluster.stop()

    asyncio.run(main())


BASE = ("process.roles=broker\nnode.id=4\ncontroller.listener.names=CONTROLLER\n"
        "controller.quorum.voters=1@localhost:9093\nlog.dirs=/tmp/x\n")


def _settings(extra: str) -> NodeSettings:
    return NodeSettings.from_properties(parse_properties(BASE + extra))


def test_the_inter_broker_listener_follows_kafkas_rules(tmp_path):
    cert = CA(str(tmp_path / "ca")).issue("broker")
    two = ("listeners=CLIENT://:9092,REPL://:9094\n"
           "listener.security.protocol.map=CLIENT:SSL,REPL:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
           f"listener.name.client.ssl.keystore.type=PEM\nlistener.name.client.ssl.keystore.location={cert.bundle_path}\n")
    assert _settings(two).inter_broker_listener == "REPL"  # the first PLAINTEXT listener by default
    assert _settings(two + "inter.broker.listener.name=CLIENT\n").inter_broker_listener == "CLIENT"
    assert _settings(two + "security.inter.broker.protocol=SSL\n").inter_broker_listener == "CLIENT"
    for extra, key, value in (
            ("inter.broker.listener.name=NOPE\n", "inter.broker.listener.name", "NOPE"),
            ("inter.broker.listener.name=CONTROLLER\n", "inter.broker.listener.name", "CONTROLLER"),
            ("inter.broker.listener.name=REPL\nsecurity.inter.broker.protocol=PLAINTEXT\n",
             "security.inter.broker.protocol", "PLAINTEXT"),
            ("security.inter.broker.protocol=SASL_SSL\n", "security.inter.broker.protocol", "SASL_SSL")):
        with pytest.raises(ConfigError) as err:
            _settings(two + extra)
        assert (err.value.key, err.value.value) == (key, value), extra
    sasl = ("listeners=SECURE://:9092\nlistener.security.protocol.map=SECURE:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT\n"
            "listener.name.secure.sasl.enabled.mechanisms=PLAIN\n"
            f"listener.name.secure.plain.sasl.jaas.config={JAAS}\n")
    lenient = _settings(sasl)  # Kafka refuses this; kraftwire warns (one broker never dials it)
    assert lenient.inter_broker_listener == "SECURE" and lenient.inter_broker_sasl is None
    assert any("without a login" in w for w in lenient.warnings)
    login = _settings(sasl + "inter.broker.listener.name=SECURE\nsasl.mechanism.inter.broker.protocol=PLAIN\n")
    assert (login.inter_broker_sasl.username, login.inter_broker_sasl.password) == ("broker", "broker-secret")
    with pytest.raises(ConfigError) as err:
        _settings(sasl + "inter.broker.listener.name=SECURE\n")  # Kafka's default mechanism GSSAPI
    assert err.value.key == "sasl.mechanism.inter.broker.protocol"
