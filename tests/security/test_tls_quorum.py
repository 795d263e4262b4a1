"""A 3-node quorum whose only listener is SSL with mutual TLS (ssl.client.auth=required): the nodes elect and
replicate over TLS, real clients (confluent-kafka, kafka-python) produce with acks=all and read back over TLS, and
every refusal — plaintext to the TLS port, no client certificate, a certificate from another CA, an expired one —
is a closed handshake that leaves the quorum serving. Certificates are made here."""

from __future__ import annotations

import random
import socket
import ssl
import struct
import time

import pytest

from harness.certs import CA

pytestmark = pytest.mark.interop

TOPIC = "secure"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    base = tmp_path_factory.mktemp("pki")
    ca = CA(str(base / "ca"))
    other = CA(str(base / "other"), "another-ca")
    return {"ca": ca, "node": ca.issue("node"), "client": ca.issue("client", ou="ServiceUsers"),
            "expired": ca.issue("old-client", expired=True), "stranger": other.issue("stranger")}


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, pki):
    from harness import processes

    props = (f"listener.security.protocol.map=PLAINTEXT:SSL\nkraftwire.metadata.log.topic={TOPIC}\n"
             f"ssl.keystore.type=PEM\nssl.keystore.location={pki['node'].bundle_path}\n"
             f"ssl.truststore.type=PEM\nssl.truststore.location={pki['ca'].path}\nssl.client.auth=required\n")
    cluster = processes.Cluster(str(tmp_path_factory.mktemp("tls")), 3, **processes.SERVE_ONLY,
                                extra_props=props)
    try:
        cluster.start_all()
        yield cluster
    finally:
        cluster.close()


def _bootstrap(cluster) -> str:
    return ",".join(f"localhost:{n.port}" for n in cluster.nodes.values())


def _confluent_conf(cluster, pki, cert="client") -> dict:
    conf = {"bootstrap.servers": _bootstrap(cluster), "security.protocol": "SSL",
            "ssl.ca.location": pki["ca"].path, "ssl.endpoint.identification.algorithm": "https"}
    if cert:
        conf.update({"ssl.certificate.location": pki[cert].cert_path, "ssl.key.location": pki[cert].key_path})
    return conf


def _produce_confluent(cluster, pki, values) -> None:
    from confluent_kafka import Producer

    errors = []
    p = Producer({**_confluent_conf(cluster, pki), "acks": "all", "linger.ms": 5, "message.timeout.ms": 60000})
    for v in values:
        p.produce(TOPIC, v, on_delivery=lambda err, msg: errors.append(err) if err else None)
    assert p.flush(90) == 0, "records still in flight after 90 s"
    assert errors == []


def _read_kafka_python(cluster, pki, tag: bytes, n: int) -> list[bytes]:
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=_bootstrap(cluster).split(","), security_protocol="SSL",
                      ssl_cafile=pki["ca"].path, ssl_certfile=pki["client"].cert_path,
                      ssl_keyfile=pki["client"].key_path, enable_auto_commit=False, auto_offset_reset="earliest",
                      consumer_timeout_ms=2000)
    try:
        tp = TopicPartition(TOPIC, 0)
        c.assign([tp])
        c.seek_to_beginning(tp)
        got, deadline = [], time.monotonic() + 60
        while len(got) < n and time.monotonic() < deadline:
            for batch in c.poll(timeout_ms=1000).values():
                got.extend(r.value for r in batch if r.value is not None and r.value.startswith(tag))
        return got
    finally:
        c.close()


def _handshake(port: int, pki, cert: str | None) -> None:
    """A TLS handshake (and one ApiVersions round trip) as a client presenting ``cert``; raises when refused."""
    ctx = ssl.create_default_context(cafile=pki["ca"].path)
    if cert:
        ctx.load_cert_chain(pki[cert].cert_path, pki[cert].key_path)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            s.sendall(_api_versions_frame())
            head = s.recv(4)
            if len(head) < 4:
                raise ConnectionError("closed by the server")


def _api_versions_frame() -> bytes:
    client_id = b"tls-test"
    body = struct.pack(">hhih", 18, 0, 7, len(client_id)) + client_id
    return struct.pack(">i", len(body)) + body


def test_quorum_replicates_and_clients_produce_and_consume_over_mutual_tls(quorum, pki):
    values = [b"tls-%05d" % i for i in range(2000)]
    _produce_confluent(quorum, pki, values)
    assert _read_kafka_python(quorum, pki, b"tls-", len(values)) == values
    for node in quorum.nodes.values():  # each node serves its one listener over TLS and reached its peers
        log = node.stderr()
        assert f"listening on PLAINTEXT://127.0.0.1:{node.port} (SSL)" in log, log[-2000:]
        assert "connected to node" in log, log[-2000:]


@pytest.mark.parametrize("who", [None, "stranger", "expired"])
def test_refused_clients_never_get_an_answer_and_the_quorum_keeps_serving(quorum, pki, who):
    port = next(iter(quorum.nodes.values())).port
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        _handshake(port, pki, who)
    _produce_confluent(quorum, pki, [b"after-%s" % str(who).encode()])
    _handshake(port, pki, "client")


def test_plaintext_to_the_tls_port_is_closed_and_the_quorum_keeps_serving(quorum, pki):
    port = next(iter(quorum.nodes.values())).port
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(_api_versions_frame())
        s.settimeout(10)
        try:
            answer = s.recv(4096)
        except ConnectionResetError:
            answer = b""
    assert not answer.startswith(b"\x00\x00"), "a Kafka response over plaintext on a TLS listener"
    _produce_confluent(quorum, pki, [b"after-plaintext"])
    _handshake(port, pki, "client")


def _client_hello(pki) -> bytes:
    """The first flight of a real TLS handshake (a ClientHello record), taken from ``ssl`` through memory BIOs."""
    ctx = ssl.create_default_context(cafile=pki["ca"].path)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


def test_a_fuzz_of_malformed_tls_handshakes_leaves_the_quorum_serving(quorum, pki):
    """Seeded, bounded in count and time: truncated, bit-flipped and random ClientHellos, and garbage after a good
    one, each on its own connection; every one is dropped by the node, which keeps serving TLS clients."""
    rng = random.Random(2121)
    hello = _client_hello(pki)
    port = next(iter(quorum.nodes.values())).port
    deadline = time.monotonic() + 30
    for i in range(60):
        assert time.monotonic() < deadline, f"case {i}: the node is slow to drop malformed handshakes"
        kind = i % 4
        if kind == 0:
            data = hello[:rng.randrange(1, len(hello))]
        elif kind == 1:
            flipped = bytearray(hello)
            for _ in range(rng.randrange(1, 8)):
                flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
            data = bytes(flipped)
        elif kind == 2:
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 600)))
        else:
            data = hello + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)  # a truncated hello then ends instead of waiting for more
            s.settimeout(2)
            try:
                answer = s.recv(4096)
            except (ConnectionResetError, TimeoutError, socket.timeout):
                answer = b""
        assert not answer.startswith(b"\x00\x00"), f"case {i}: a Kafka response to a malformed handshake"
    _handshake(port, pki, "client")
    _produce_confluent(quorum, pki, [b"after-tls-fuzz"])
