"""SASL/PLAIN on a client listener (SASL_PLAINTEXT), with real clients: confluent-kafka (librdkafka) produces with
acks=all and kafka-python reads it back, both logging in with PLAIN; a wrong password and a request before logging in
are refused as Kafka refuses them, and the node keeps serving. The quorum's own listener stays PLAINTEXT."""

from __future__ import annotations

import asyncio
import time

import pytest

pytestmark = pytest.mark.interop

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" '
        'user_admin="admin-secret" user_alice="alice-secret";')


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    from harness import roles

    props = ("listener.security.protocol.map=CONTROLLER:PLAINTEXT,BROKER:SASL_PLAINTEXT\n"
             "sasl.enabled.mechanisms=PLAIN\n"
             f"listener.name.broker.plain.sasl.jaas.config={JAAS}\n")
    cluster = roles.RolesCluster(str(tmp_path_factory.mktemp("sasl")), controllers=1, brokers=0, combined=True,
                                 extra_props=props)
    try:
        cluster.start_all()
        cluster.wait_for_leader()
        yield cluster.nodes[1]
    finally:
        cluster.close()


def _conf(port: int, password: str = "alice-secret") -> dict:
    return {"bootstrap.servers": f"localhost:{port}", "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanisms": "PLAIN", "sasl.username": "alice", "sasl.password": password}


def _produce(port: int, values) -> None:
    from confluent_kafka import Producer

    errors = []
    p = Producer({**_conf(port), "acks": "all", "linger.ms": 5, "message.timeout.ms": 60000})
    for v in values:
        p.produce("roles", v, on_delivery=lambda err, msg: errors.append(err) if err else None)
    assert p.flush(90) == 0, "records still in flight after 90 s"
    assert errors == []


def _read(port: int, n: int) -> list[bytes]:
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=[f"localhost:{port}"], security_protocol="SASL_PLAINTEXT",
                      sasl_mechanism="PLAIN", sasl_plain_username="alice", sasl_plain_password="alice-secret",
                      enable_auto_commit=False, auto_offset_reset="earliest", consumer_timeout_ms=2000)
    try:
        tp = TopicPartition("roles", 0)
        c.assign([tp])
        c.seek_to_beginning(tp)
        got, deadline = [], time.monotonic() + 60
        while len(got) < n and time.monotonic() < deadline:
            for batch in c.poll(timeout_ms=500).values():
                got += [r.value for r in batch if r.value and r.value.startswith(b"sasl-")]
        return got
    finally:
        c.close()


def _session(port: int, steps):
    """Run ``steps(conn)`` on one raw connection to the SASL listener."""
    from kraftwire.server.edge.client import KafkaConnection

    async def main():
        conn = await KafkaConnection.open("127.0.0.1", port, timeout=5, client_id="sasl-test")
        try:
            return await steps(conn)
        finally:
            await conn.close()

    return asyncio.run(main())


def test_clients_log_in_with_plain_and_produce_and_consume(node):
    port = node.port_of("BROKER")
    values = [b"sasl-%d" % i for i in range(300)]
    _produce(port, values)
    assert _read(port, len(values)) == values
    assert "User:alice authenticated with SASL PLAIN" in node.stderr()


def test_a_wrong_password_is_refused_with_kafkas_error_and_the_connection_closes(node):
    from kraftwire.protocol import messages as w

    port = node.port_of("BROKER")

    async def steps(conn):
        versions = await conn.request(w.ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
        keys = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
        assert keys[17] == (0, 1) and keys[36] == (0, 2)  # SaslHandshake, SaslAuthenticate on this listener
        hs = await conn.request(w.SaslHandshakeRequest(mechanism="PLAIN"), 1)
        assert hs.error_code == 0 and hs.mechanisms == ["PLAIN"]
        auth = await conn.request(w.SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00wrong"), 2)
        assert auth.error_code == 58  # SASL_AUTHENTICATION_FAILED
        # Kafka's PlainSaslServer tells the client why (SaslAuthenticate-v*-plain-wrong-password in the conformance run)
        assert auth.error_message == "Authentication failed: Invalid username or password"
        with pytest.raises(Exception):
            await conn.request(w.MetadataRequest(topics=None), 1, timeout=3)  # the node closed the connection

    _session(port, steps)
    assert "failed SASL PLAIN authentication from 127.0.0.1" in node.stderr()
    assert "wrong" not in node.stderr()  # the password is never logged


def test_an_unknown_mechanism_and_a_request_before_logging_in_are_refused(node):
    from kraftwire.protocol import messages as w

    port = node.port_of("BROKER")

    async def mechanism(conn):
        hs = await conn.request(w.SaslHandshakeRequest(mechanism="SCRAM-SHA-512"), 1)
        assert hs.error_code == 33 and hs.mechanisms == ["PLAIN"]  # UNSUPPORTED_SASL_MECHANISM

    async def too_early(conn):
        with pytest.raises(Exception):
            await conn.request(w.MetadataRequest(topics=None), 1, timeout=3)

    _session(port, mechanism)
    _session(port, too_early)
    assert "before SASL authentication" in node.stderr()
    # and the node still serves a client that logs in properly
    _produce(port, [b"sasl-after-refusals"])


@pytest.fixture(scope="module")
def tls_node(tmp_path_factory):
    from harness import roles
    from harness.certs import CA

    base = tmp_path_factory.mktemp("sasl-ssl")
    ca = CA(str(base / "ca"))
    cert = ca.issue("node")
    # a PLAINTEXT listener first and the SASL_SSL one second: a client bootstrapping from the second must be sent
    # back to it (Metadata answers with the endpoint of the listener the request came in on), not to the first
    props = ("listener.security.protocol.map=CONTROLLER:PLAINTEXT,BROKER:PLAINTEXT,SECURE:SASL_SSL\n"
             "listener.name.secure.sasl.enabled.mechanisms=PLAIN\n"
             f"listener.name.secure.plain.sasl.jaas.config={JAAS}\n"
             f"listener.name.secure.ssl.keystore.type=PEM\nlistener.name.secure.ssl.keystore.location={cert.bundle_path}\n")
    cluster = roles.RolesCluster(str(base), controllers=1, brokers=0, combined=True, extra_props=props,
                                 extra_listeners=("SECURE",))
    try:
        cluster.start_all()
        cluster.wait_for_leader()
        yield cluster.nodes[1], ca
    finally:
        cluster.close()


def test_sasl_ssl_encrypts_and_logs_in(tls_node):
    from confluent_kafka import Consumer, Producer, TopicPartition

    node, ca = tls_node
    conf = {"bootstrap.servers": f"localhost:{node.port_of('SECURE')}", "security.protocol": "SASL_SSL",
            "ssl.ca.location": ca.path, "sasl.mechanisms": "PLAIN", "sasl.username": "admin",
            "sasl.password": "admin-secret"}
    errors = []
    p = Producer({**conf, "acks": "all", "message.timeout.ms": 60000})
    for i in range(50):
        p.produce("roles", b"sasl-ssl-%d" % i, on_delivery=lambda err, msg: errors.append(err) if err else None)
    assert p.flush(90) == 0 and errors == []
    c = Consumer({**conf, "group.id": "sasl-ssl", "enable.auto.commit": False})
    try:
        c.assign([TopicPartition("roles", 0, 0)])
        got, deadline = [], time.monotonic() + 60
        while len(got) < 50 and time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is not None and msg.error() is None and msg.value().startswith(b"sasl-ssl-"):
                got.append(msg.value())
    finally:
        c.close()
    assert got == [b"sasl-ssl-%d" % i for i in range(50)]
    assert "User:admin authenticated with SASL PLAIN" in node.stderr()


def test_a_storm_of_malformed_logins_leaves_the_node_serving(node):
    """Seeded fuzz, bounded in count and time: random SaslAuthenticate tokens after a good handshake, random bytes
    as whole frames, truncated SASL requests; every connection is answered or closed, and a proper login still
    produces afterwards."""
    import random
    import socket
    import struct

    from kraftwire.protocol import messages as w
    from kraftwire.protocol.framing import encode_request

    port = node.port_of("BROKER")
    rng = random.Random(20261125)
    deadline = time.monotonic() + 30

    def frame(body, version, cid=1):
        return b"".join(bytes(c) for c in encode_request(body, version, cid, client_id="fuzz"))

    def exchange(payload: bytes) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
            s.sendall(payload)
            try:
                while s.recv(65536):
                    pass
            except (socket.timeout, ConnectionResetError):
                pass

    handshake = frame(w.SaslHandshakeRequest(mechanism="PLAIN"), 1)
    for i in range(120):
        if time.monotonic() > deadline:
            break
        kind = i % 3
        if kind == 0:
            token = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))
            exchange(handshake + frame(w.SaslAuthenticateRequest(auth_bytes=token), 2, cid=2))
        elif kind == 1:
            junk = bytes(rng.randrange(256) for _ in range(rng.randrange(8, 80)))
            exchange(struct.pack(">i", len(junk)) + junk)
        else:
            good = frame(w.SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00alice-secret"), 2, cid=2)
            cut = rng.randrange(5, len(good))
            # a SaslAuthenticate cut short, in a frame whose size prefix matches what is left
            exchange(handshake + struct.pack(">i", cut - 4) + good[4:cut])
    assert node.running
    _produce(port, [b"sasl-after-fuzz"])


def test_metadata_names_the_listener_the_request_came_in_on(tls_node):
    from kraftwire.protocol import messages as w
    from kraftwire.security.sasl.client import SaslLogin
    from kraftwire.server.edge.client import request_once
    import ssl

    node, ca = tls_node

    def brokers(port, **kw):
        resp = asyncio.run(request_once("localhost", port, w.MetadataRequest(topics=[]), 9, **kw))
        return [(b.node_id, b.port) for b in resp.brokers]

    login = SaslLogin("PLAIN", "alice", "alice-secret")
    assert brokers(node.port_of("SECURE"), ssl_context=ssl.create_default_context(cafile=ca.path),
                   sasl=login) == \
        [(1, node.port_of("SECURE"))]
    assert brokers(node.port_of("BROKER")) == [(1, node.port_of("BROKER"))]


def _raw_login(port: int, token: bytes) -> tuple[bytes | None, bytes]:
    """SaslHandshake v0, then ``token`` raw (size-prefixed, no Kafka header), as pre-KIP-152 clients log in: (the
    raw answer or None when the node closed the connection, what an ApiVersions v0 afterwards gets back)."""
    import socket
    import struct

    from kraftwire.protocol import framing
    from kraftwire.protocol import messages as w

    def frame(body, version, cid):
        return b"".join(bytes(c) for c in framing.encode_request(body, version, cid, client_id="raw"))

    def read(s) -> bytes | None:
        head = b""
        while len(head) < 4:
            chunk = s.recv(4 - len(head))
            if not chunk:
                return None
            head += chunk
        size = struct.unpack(">i", head)[0]
        data = b""
        while len(data) < size:
            chunk = s.recv(size - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(frame(w.SaslHandshakeRequest(mechanism="PLAIN"), 0, 1))
        hs = read(s)
        assert hs is not None and struct.unpack_from(">ih", hs, 0) == (1, 0)  # correlation id 1, no error
        s.sendall(struct.pack(">i", len(token)) + token)
        answer = read(s)
        if answer is None:
            return None, b""
        s.sendall(frame(w.ApiVersionsRequest(), 0, 2))
        return answer, read(s) or b""


def test_the_legacy_raw_token_flow_after_a_v0_handshake(node):
    port = node.port_of("BROKER")
    answer, after = _raw_login(port, b"\x00alice\x00alice-secret")
    assert answer == b""  # PLAIN's empty reply, as a bare size-prefixed token
    assert after[:4] == b"\x00\x00\x00\x02" and after[4:6] == b"\x00\x00"  # then Kafka requests: ApiVersions answers
    assert _raw_login(port, b"\x00alice\x00wrong") == (None, b"")  # a bad token: closed without an answer
    assert "failed SASL PLAIN authentication (raw tokens)" in node.stderr()
    _produce(port, [b"sasl-after-raw"])
