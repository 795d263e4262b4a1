"""SCRAM-SHA-256/512 (RFC 5802/7677) on the server side, checked against the RFC's own example and against a client
written here from the RFC; ``storage format --add-scram``; and real clients (confluent-kafka with SCRAM-SHA-512,
kafka-python with SCRAM-SHA-256) logging in to a node whose credentials were added at format time."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

import pytest

from kraftwire.security.sasl import scram

# RFC 7677 section 3: user "user", password "pencil"
RFC_CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
RFC_SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
RFC_SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
RFC_CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                    b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
RFC_SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def _rfc_server(password="pencil"):
    cred = scram.credential("SCRAM-SHA-256", password, base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096)
    return scram.ScramServer("SCRAM-SHA-256", {"user": cred}.get, lambda: RFC_SERVER_NONCE)


def test_the_rfc_7677_example_byte_for_byte():
    server = _rfc_server()
    assert server.evaluate(RFC_CLIENT_FIRST) == (RFC_SERVER_FIRST, None, None, None)
    assert server.evaluate(RFC_CLIENT_FINAL) == (RFC_SERVER_FINAL, "User:user", None, None)


def test_a_wrong_password_fails_the_proof():
    server = _rfc_server(password="not-pencil")
    server.evaluate(RFC_CLIENT_FIRST)
    step = server.evaluate(RFC_CLIENT_FINAL)
    assert step.principal is None and step.reply == b"" and "invalid credentials" in step.failure


def _client(mechanism, user, password, server, cnonce="fyko+d2lbbFgONRv9qkxdawL"):
    """An RFC 5802 client, written from the RFC."""
    h = scram.MECHANISMS[mechanism][0]
    first_bare = f"n={user.replace('=', '=3D').replace(',', '=2C')},r={cnonce}"
    step = server.evaluate(("n,," + first_bare).encode())
    if step.failure:
        return step
    fields = dict(f.split("=", 1) for f in step.reply.decode().split(","))
    salted = hashlib.pbkdf2_hmac(h, password.encode(), base64.b64decode(fields["s"]), int(fields["i"]))
    client_key = hmac.new(salted, b"Client Key", h).digest()
    stored = hashlib.new(h, client_key).digest()
    without_proof = f"c=biws,r={fields['r']}"
    auth = f"{first_bare},{step.reply.decode()},{without_proof}".encode()
    proof = bytes(a ^ b for a, b in zip(client_key, hmac.new(stored, auth, h).digest()))
    final = server.evaluate(f"{without_proof},p={base64.b64encode(proof).decode()}".encode())
    if final.principal:
        server_key = hmac.new(salted, b"Server Key", h).digest()
        assert final.reply == b"v=" + base64.b64encode(hmac.new(server_key, auth, h).digest())
    return final


@pytest.mark.parametrize("mechanism", sorted(scram.MECHANISMS))
def test_a_client_from_the_rfc_logs_in_and_a_wrong_one_does_not(mechanism):
    store = {("al=ice,", scram.MECHANISMS[mechanism][1]): scram.credential(mechanism, "s3cret", b"salty", 8192)}
    source = scram.lookup(store, mechanism)
    new = lambda: scram.ScramServer(mechanism, source, lambda: scram.server_nonce(12345678901234567890))  # noqa: E731
    assert _client(mechanism, "al=ice,", "s3cret", new()).principal == "User:al=ice,"
    assert _client(mechanism, "al=ice,", "wrong", new()).principal is None
    assert "no SCRAM" in _client(mechanism, "bob", "s3cret", new()).failure


@pytest.mark.parametrize("first", [
    b"y,,n=user,r=abc", b"p=tls-unique,,n=user,r=abc", b"n,,n=,r=abc", b"n,,n=us=er,r=abc", b"n,,r=abc",
    b"n,a=other,n=user,r=abc", b"n,,n=user,r=abc,tokenauth=true", b"\xff",
])
def test_malformed_or_unsupported_client_first_messages_fail(first):
    step = _rfc_server().evaluate(first)
    assert step.failure and step.principal is None and step.reply == b""


def test_a_client_final_with_another_nonce_or_binding_fails():
    for final in (RFC_CLIENT_FINAL.replace(b"$k0", b"$k1"), RFC_CLIENT_FINAL.replace(b"c=biws", b"c=eSws"),
                  b"c=biws,p=abc", b"garbage"):
        server = _rfc_server()
        server.evaluate(RFC_CLIENT_FIRST)
        assert server.evaluate(final).failure


def test_stored_iterations_outside_kafkas_range_fail_the_login():
    cred = scram.credential("SCRAM-SHA-256", "pw", b"s", 1000)
    server = scram.ScramServer("SCRAM-SHA-256", {"u": cred}.get, lambda: "n")
    assert "iterations" in server.evaluate(b"n,,n=u,r=abc").failure


def test_add_scram_arguments_as_kafka_storage_takes_them():
    mech, user, cred = scram.parse_add_scram("SCRAM-SHA-256=[name=alice,password=alice-secret]", lambda: b"salt")
    assert (mech, user, cred.iterations, cred.salt) == ("SCRAM-SHA-256", "alice", 4096, b"salt")
    assert cred == scram.credential("SCRAM-SHA-256", "alice-secret", b"salt", 4096)
    mech, user, cred = scram.parse_add_scram(
        'SCRAM-SHA-512=[name=bob,iterations=8192,salt="N3E=",saltedpassword="YCE="]', lambda: b"unused")
    assert cred == scram.credential_from_salted("SCRAM-SHA-512", base64.b64decode("YCE="), base64.b64decode("N3E="),
                                                8192)
    for bad in ("SCRAM-SHA-1=[name=a,password=b]", "SCRAM-SHA-256=name=a", "SCRAM-SHA-256=[password=b]",
                "SCRAM-SHA-256=[name=a]", "SCRAM-SHA-256=[name=a,password=b,iterations=100]",
                "SCRAM-SHA-256=[name=a,colour=blue,password=b]", "SCRAM-SHA-256=[name=a,saltedpassword=YCE=]"):
        with pytest.raises(scram.ScramArgError):
            scram.parse_add_scram(bad, lambda: b"s")


def test_storage_format_writes_the_credentials_into_the_bootstrap(tmp_path):
    from harness import processes
    from kraftwire.metadata.bootstrap import decode_bootstrap_file, scram_credentials

    conf = tmp_path / "n.properties"
    conf.write_text(f"node.id=1\nprocess.roles=controller\ncontroller.quorum.voters=1@localhost:9093\n"
                    f"listeners=CONTROLLER://localhost:9093\ncontroller.listener.names=CONTROLLER\n"
                    f"log.dirs={tmp_path / 'logs'}\n")
    cid = processes.kw("storage", "random-uuid").stdout.strip()
    processes.kw("storage", "format", "-t", cid, "-c", str(conf), "--add-scram",
                 "SCRAM-SHA-512=[name=alice,password=alice-secret]", "-S",
                 'SCRAM-SHA-256=[name=bob,iterations=8192,salt="N3E=",saltedpassword="YCE="]')
    creds = scram_credentials(decode_bootstrap_file((tmp_path / "logs" / "bootstrap.checkpoint").read_bytes()))
    assert set(creds) == {("alice", 2), ("bob", 1)} and creds[("bob", 1)][3] == 8192
    salt, stored, server, iterations = creds[("alice", 2)]
    assert scram.credential("SCRAM-SHA-512", "alice-secret", salt, iterations) == (salt, stored, server, iterations)
    conf2 = tmp_path / "n2.properties"
    conf2.write_text(conf.read_text().replace("logs", "logs2"))
    old = processes.kw("storage", "format", "-t", cid, "-c", str(conf2), "-r", "3.4", "--add-scram",
                       "SCRAM-SHA-512=[name=alice,password=x]", check=False)
    assert old.returncode == 1 and "3.5-IV2" in old.stderr and not (tmp_path / "logs2").exists()
    bad = processes.kw("storage", "format", "-t", cid, "-c", str(conf), "--add-scram", "SCRAM-SHA-512=[name=a]",
                       check=False)
    assert bad.returncode == 1 and "password" in bad.stderr


@pytest.fixture(scope="module")
def scram_node(tmp_path_factory):
    from harness import roles

    props = ("listener.security.protocol.map=CONTROLLER:PLAINTEXT,BROKER:SASL_PLAINTEXT\n"
             "sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512\n"
             "listener.name.broker.scram-sha-512.sasl.jaas.config="
             "org.apache.kafka.common.security.scram.ScramLoginModule required;\n")
    cluster = roles.RolesCluster(str(tmp_path_factory.mktemp("scram")), controllers=1, brokers=0, combined=True,
                                 extra_props=props, format_args=(
                                     "--add-scram", "SCRAM-SHA-512=[name=alice,password=alice-secret]",
                                     "--add-scram", "SCRAM-SHA-256=[name=bob,password=bob-secret,iterations=8192]"))
    try:
        cluster.start_all()
        cluster.wait_for_leader()
        yield cluster.nodes[1]
    finally:
        cluster.close()


@pytest.mark.interop
def test_real_clients_log_in_with_scram(scram_node):
    from confluent_kafka import Producer
    from kafka import KafkaConsumer, TopicPartition

    port = scram_node.port_of("BROKER")
    errors = []
    p = Producer({"bootstrap.servers": f"localhost:{port}", "security.protocol": "SASL_PLAINTEXT",
                  "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": "alice-secret",
                  "acks": "all", "message.timeout.ms": 60000})
    for i in range(100):
        p.produce("roles", b"scram-%d" % i, on_delivery=lambda err, msg: errors.append(err) if err else None)
    assert p.flush(90) == 0 and errors == []
    c = KafkaConsumer(bootstrap_servers=[f"localhost:{port}"], security_protocol="SASL_PLAINTEXT",
                      sasl_mechanism="SCRAM-SHA-256", sasl_plain_username="bob", sasl_plain_password="bob-secret",
                      enable_auto_commit=False, consumer_timeout_ms=2000)
    try:
        tp = TopicPartition("roles", 0)
        c.assign([tp])
        c.seek_to_beginning(tp)
        got, deadline = [], time.monotonic() + 60
        while len(got) < 100 and time.monotonic() < deadline:
            for batch in c.poll(timeout_ms=500).values():
                got += [r.value for r in batch if r.value and r.value.startswith(b"scram-")]
    finally:
        c.close()
    assert got == [b"scram-%d" % i for i in range(100)]
    log = scram_node.stderr()
    assert "User:alice authenticated with SASL SCRAM-SHA-512" in log and "User:bob authenticated with SASL SCRAM-SHA-256" in log
    # a wrong password with librdkafka: refused, the node keeps serving
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": f"localhost:{port}", "security.protocol": "SASL_PLAINTEXT",
                         "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": "nope"})
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=5)
    assert "failed SASL SCRAM-SHA-512 authentication" in scram_node.stderr()


@pytest.mark.interop
def test_metadata_quorum_logs_in_with_scram(scram_node, tmp_path):
    from harness import processes

    conf = tmp_path / "admin.properties"
    conf.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                    "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                    'username="bob" password="bob-secret";\n')
    status = processes.kw("metadata-quorum", "--bootstrap-server", f"localhost:{scram_node.port_of('BROKER')}",
                          "--command-config", str(conf), "describe", "--status").stdout
    assert "LeaderId:" in status
    assert "User:bob authenticated with SASL SCRAM-SHA-256" in scram_node.stderr()
