"""Brokers replicate over the inter-broker listener, with its security: ``inter.broker.listener.name`` naming a
SASL_SSL listener makes the replica fetchers dial the leaders' SASL_SSL endpoint, verify its certificate and log in
with ``sasl.mechanism.inter.broker.protocol=PLAIN``, while clients use a PLAINTEXT listener. In-process on real
sockets, TLS and files: one controller and three brokers. Then Kafka's configuration rules for the two keys."""

from __future__ import annotations

import asyncio
import logging
import ssl

import pytest

from harness.certs import CA
from kraftwire import error_codes as ec
from kraftwire.config import parse_properties
from kraftwire.errors import ConfigError
from kraftwire.server.node.app import Node
from kraftwire.server.edge.client import KafkaConnection
from kraftwire.server.node.settings import NodeSettings
from tests.server.test_replication import Cluster, _sock, _until

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" '
        'password="broker-secret" user_broker="broker-secret";')


class InternalCluster(Cluster):
    """One controller and three brokers that replicate over their listener ``INTERNAL`` (``protocol``, configured by
    ``internal_props``) while clients use PLAINTEXT; each broker logs in to the others as ``login``
    (mechanism, user)."""

    def __init__(self, tmp_path, protocol: str, internal_props: str, login: tuple[str, str]) -> None:
        super().__init__(tmp_path)
        self.protocol, self.internal_props, self.login = protocol, internal_props, login
        self.internal = {b: _sock() for b in self.bsocks}

    def _common(self) -> str:
        return super()._common().replace(
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            f"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,INTERNAL:{self.protocol}")

    async def start_broker(self, b: int) -> Node:
        port, internal = self.bsocks[b].getsockname()[1], self.internal[b].getsockname()[1]
        s = NodeSettings.from_properties(parse_properties(
            f"process.roles=broker\nnode.id={b}\n"
            f"listeners=PLAINTEXT://127.0.0.1:{port},INTERNAL://localhost:{internal}\n"
            f"log.dirs={self.tmp / f'b{b}'}\n" + self._common()
            + "inter.broker.listener.name=INTERNAL\n" + self.internal_props))
        assert s.inter_broker_listener == "INTERNAL"
        assert (s.inter_broker_sasl.mechanism, s.inter_broker_sasl.username) == self.login
        assert not s.unknown_keys and "inter.broker.listener.name" not in s.ignored_keys
        node = self.nodes[b] = Node(s, listen_sockets={"PLAINTEXT": self.bsocks[b].dup(),
                                                       "INTERNAL": self.internal[b].dup()})
        await node.start()
        return node


def secure_cluster(tmp_path) -> InternalCluster:
    """SASL_SSL with PLAIN, the brokers' certificates from one CA."""
    ca = CA(str(tmp_path / "ca"))
    cert = ca.issue("broker")
    return InternalCluster(tmp_path, "SASL_SSL", "sasl.mechanism.inter.broker.protocol=PLAIN\n"
                           "listener.name.internal.sasl.enabled.mechanisms=PLAIN\n"
                           f"listener.name.internal.plain.sasl.jaas.config={JAAS}\n"
                           "listener.name.internal.ssl.keystore.type=PEM\n"
                           f"listener.name.internal.ssl.keystore.location={cert.bundle_path}\n"
                           "listener.name.internal.ssl.truststore.type=PEM\n"
                           f"listener.name.internal.ssl.truststore.location={ca.path}\n", ("PLAIN", "broker"))


def test_followers_replicate_over_a_sasl_ssl_inter_broker_listener(tmp_path):
    cluster = secure_cluster(tmp_path)

    async def main():
        await cluster.start()
        try:
            await cluster.create_topic("secure", {"min.insync.replicas": "3"})
            leader = cluster.partition("secure", 0).leader
            # min.insync.replicas=3: acks=-1 is answered only once both followers fetched over INTERNAL
            answer = await cluster.produce_to_leader("secure", [b"over", b"tls"], timeout_ms=20_000)
            assert answer.error_code == ec.NONE, answer
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


SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
SCRAM_LOGIN = f'{SCRAM_MODULE} required username="admin" password="admin-secret";'
SCRAM_LISTENER = ("listeners=SECURE://:9092\nlistener.security.protocol.map=SECURE:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT\n"
                  "inter.broker.listener.name=SECURE\n")


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "SCRAM-SHA-256", "scram-sha-256"])
def test_brokers_log_in_to_each_other_with_scram(mechanism):
    """KIP-900's KRaft setup: the login comes from the listener's JAAS entry of the mechanism (ScramLoginModule), and
    the credential it names is checked against the metadata log's (``storage format --add-scram``)."""
    key = f"listener.name.secure.{mechanism.lower()}.sasl.jaas.config"
    s = _settings(SCRAM_LISTENER + f"sasl.mechanism.inter.broker.protocol={mechanism}\n"
                  f"listener.name.secure.sasl.enabled.mechanisms=PLAIN,{mechanism}\n"
                  f"listener.name.secure.plain.sasl.jaas.config={JAAS}\n{key}={SCRAM_LOGIN}\n")
    login = s.inter_broker_sasl
    assert (login.mechanism, login.username, login.password) == (mechanism.upper(), "admin", "admin-secret")
    assert "admin-secret" not in repr(login)
    assert key not in s.ignored_keys and "sasl.mechanism.inter.broker.protocol" not in s.ignored_keys


@pytest.mark.parametrize("extra, key, value", [
    # the inter-broker mechanism must be one the listener serves (Kafka's rule, with its words)
    ("sasl.mechanism.inter.broker.protocol=SCRAM-SHA-256\nsasl.enabled.mechanisms=SCRAM-SHA-512\n"
     f"listener.name.secure.scram-sha-512.sasl.jaas.config={SCRAM_LOGIN}\n",
     "sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-256"),
    ("sasl.mechanism.inter.broker.protocol=OAUTHBEARER\nsasl.enabled.mechanisms=SCRAM-SHA-512\n",
     "sasl.mechanism.inter.broker.protocol", "OAUTHBEARER"),
    # no login entry for the mechanism
    ("sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512\nsasl.enabled.mechanisms=SCRAM-SHA-512\n",
     "listener.name.secure.scram-sha-512.sasl.jaas.config", "(missing)"),
    # Kafka's server side ignores a sasl.jaas.config without the mechanism in its key: named, not silently unused
    ("sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512\nsasl.enabled.mechanisms=SCRAM-SHA-512\n"
     f"sasl.jaas.config={SCRAM_LOGIN}\n", "sasl.jaas.config", "(hidden: it holds passwords)"),
    ("sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512\nsasl.enabled.mechanisms=SCRAM-SHA-512\n"
     f"listener.name.secure.sasl.jaas.config={SCRAM_LOGIN}\n", "listener.name.secure.sasl.jaas.config",
     "(hidden: it holds passwords)"),
    # PLAIN's login module under the SCRAM key; a SCRAM entry without the login
    ("sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512\nsasl.enabled.mechanisms=SCRAM-SHA-512\n"
     "listener.name.secure.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
     'required username="admin" password="admin-secret";\n',
     "listener.name.secure.scram-sha-512.sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule"),
    ("sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512\nsasl.enabled.mechanisms=SCRAM-SHA-512\n"
     f"listener.name.secure.scram-sha-512.sasl.jaas.config={SCRAM_MODULE} required username=\"admin\";\n",
     "listener.name.secure.scram-sha-512.sasl.jaas.config", "(hidden: it holds passwords)"),
])
def test_scram_inter_broker_refusals_name_the_key_and_value(extra, key, value):
    with pytest.raises(ConfigError) as err:
        _settings(SCRAM_LISTENER + extra)
    assert (err.value.key, err.value.value) == (key, value)
    assert "admin-secret" not in str(err.value)


def test_the_enabled_mechanisms_refusal_says_kafkas_rule():
    with pytest.raises(ConfigError) as err:
        _settings(SCRAM_LISTENER + "sasl.mechanism.inter.broker.protocol=PLAIN\n"
                  "listener.name.secure.sasl.enabled.mechanisms=SCRAM-SHA-512\n")
    assert "sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms when SASL is used for " \
           "inter-broker communication" in str(err.value)
    assert "listener.name.secure.sasl.enabled.mechanisms=SCRAM-SHA-512" in str(err.value)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "SCRAM-SHA-256"])
def test_the_controller_listener_refuses_scram(mechanism):
    """The nodes reach the quorum with PLAIN (or mutual TLS): SCRAM credentials are in the log the quorum replicates.
    Kafka accepts the setting, and then several controllers never elect (every Vote fails authentication); kraftwire
    refuses it at start."""
    props = ("process.roles=controller\nnode.id=1\ncontroller.listener.names=CONTROLLER\n"
             "controller.quorum.voters=1@localhost:9093\nlog.dirs=/tmp/x\nlisteners=CONTROLLER://:9093\n"
             "listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT\n"
             f"sasl.enabled.mechanisms=PLAIN,{mechanism}\nsasl.mechanism.controller.protocol={mechanism}\n"
             f"listener.name.controller.plain.sasl.jaas.config={JAAS}\n"
             f"listener.name.controller.{mechanism.lower()}.sasl.jaas.config={SCRAM_LOGIN}\n")
    with pytest.raises(ConfigError) as err:
        NodeSettings.from_properties(parse_properties(props))
    assert (err.value.key, err.value.value) == ("sasl.mechanism.controller.protocol", mechanism)
    assert "SCRAM credentials live in the metadata log" in str(err.value)
    assert "admin-secret" not in str(err.value)


def test_refused_scram_logins_are_tried_again_until_the_leaders_image_holds_the_credential(tmp_path, caplog):
    """The order Kafka's KRaft brokers live with: SCRAM is checked against the serving broker's metadata image, so a
    follower's login is refused while that image lacks the credential (at start, before the bootstrap records are
    replayed; here, until it is added). The refusal is retriable: the replica fetchers keep trying after their
    backoff, and replicate once AlterUserScramCredentials has reached the leader's image."""
    from kraftwire.tools.configs import scram_request

    caplog.set_level(logging.INFO, logger="kraftwire.fetcher")
    # SCRAM-SHA-512 over SASL_PLAINTEXT; formatted without any credential: no image holds one until it is added
    cluster = InternalCluster(tmp_path, "SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512\n"
                              "listener.name.internal.sasl.enabled.mechanisms=SCRAM-SHA-512\n"
                              f"listener.name.internal.scram-sha-512.sasl.jaas.config={SCRAM_LOGIN}\n",
                              ("SCRAM-SHA-512", "admin"))

    async def main():
        await cluster.start()
        try:
            await cluster.create_topic("late")
            leader = cluster.partition("late", 0).leader
            followers = [b for b in (1, 2, 3) if b != leader]
            answer = await cluster.produce_to_leader("late", [b"after", b"login"], acks=1)
            assert answer.error_code == ec.NONE, answer
            await _until("a refused login", lambda: "SASL login as admin refused" in caplog.text)
            assert all(cluster.nodes[b].replicas.get("late", 0).log.end_offset() == 0 for b in followers)

            conn = await KafkaConnection.open("127.0.0.1", cluster.port(1))
            try:
                answer = await conn.request(scram_request("admin", {"SCRAM-SHA-512": "password=admin-secret"}, []), 0)
                assert [(x.user, x.error_code) for x in answer.results] == [("admin", ec.NONE)]
            finally:
                await conn.close()
            await _until("the followers caught up", lambda: all(
                cluster.nodes[b].replicas.get("late", 0).log.end_offset() == 2 for b in followers))
            await _until("the ISR full again", lambda: sorted(cluster.partition("late", 0).isr) == [1, 2, 3])
        finally:
            await cluster.stop()

    asyncio.run(main())
