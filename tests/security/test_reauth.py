"""KIP-368 re-authentication (``connections.max.reauth.ms``) without a node process: the exchange's rules (session
lifetime, same mechanism, same principal, one start a second), the listener settings (Kafka's per listener and
mechanism keys), the SASL gate on fake connections with a fake clock (an expired session closes on an ordinary
request but not on a re-authentication; answers keep their request's turn), and kraftwire's own clients
(``KafkaConnection`` and the quorum's ``Peers``) re-authenticating on one socket against a gate on real sockets."""

from __future__ import annotations

import asyncio
import logging
import uuid

import pytest

from harness.wire import answered_ids
from kraftwire import error_codes as ec
from kraftwire.config import parse_properties
from kraftwire.errors import ConfigError
from kraftwire.protocol import messages as w
from kraftwire.protocol.framing import encode_request
from kraftwire.security.sasl import plain
from kraftwire.security.sasl.client import SaslLogin, reauthenticate_after_ms
from kraftwire.security.sasl.exchange import (AUTHENTICATE, BAD_MECHANISM, DONE, FAILED, SaslExchange,
                                              bad_mechanism_message, failure_message)
from kraftwire.security.sasl.mechanism import Step
from kraftwire.security.sasl.settings import SaslSettings, sasl_settings
from kraftwire.server.edge.connection import InboundConnection
from kraftwire.server.edge.dispatcher import Dispatcher
from kraftwire.server.edge.dispatcher import AUTHENTICATE_AFTER_LOGIN
from kraftwire.server.edge.sasl import FAILED_AUTHENTICATION_DELAY_S, SaslDispatcher

USERS = {"alice": "alice-secret", "bob": "bob-secret"}
ALICE, BOB = b"\x00alice\x00alice-secret", b"\x00bob\x00bob-secret"
MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"


class TwoSteps:
    """A stand-in for SCRAM: the login completes on the second message."""

    def __init__(self) -> None:
        self.seen = 0

    def evaluate(self, token: bytes) -> Step:
        self.seen += 1
        return Step(b"step-%d" % self.seen, "User:alice" if self.seen == 2 else None, None)


def _exchange(reauth_ms: int = 3000, **more) -> SaslExchange:
    mechanisms = {"PLAIN": lambda: plain.PlainServer(USERS), "TWO-STEP": TwoSteps, **more}
    return SaslExchange(mechanisms, {name: reauth_ms for name in mechanisms})


def _logged_in(reauth_ms: int = 3000, now: float = 0.0) -> SaslExchange:
    ex = _exchange(reauth_ms)
    ex.handshake("PLAIN")
    assert ex.authenticate(ALICE, now).error == ec.NONE
    return ex


# ----------------------------------------------------------------------------------------------- the exchange
def test_a_completed_login_carries_the_session_lifetime_and_the_session_ends_then():
    ex = _exchange(3000)
    ex.handshake("PLAIN")
    answer = ex.authenticate(ALICE, 1000.0)
    assert (answer.error, answer.session_lifetime_ms) == (ec.NONE, 3000) and ex.session_expires_at == 4000.0
    assert not ex.expired(4000.0) and ex.expired(4000.5)
    assert ex.client_supports_reauthentication


def test_without_the_key_a_session_never_ends_and_cannot_be_renewed():
    for configured in (0, -5):
        ex = _logged_in(configured)
        assert ex.session_expires_at is None and not ex.expired(10**12) and not ex.may_reauthenticate(10**12)


def test_only_the_step_that_completes_the_login_carries_the_lifetime():
    ex = _exchange(3000)
    ex.handshake("TWO-STEP")
    assert ex.authenticate(b"first", 0.0).session_lifetime_ms == 0 and ex.state == AUTHENTICATE
    assert ex.authenticate(b"final", 10.0).session_lifetime_ms == 3000 and ex.session_expires_at == 3010.0


def test_a_v0_client_is_not_told_but_its_session_ends_all_the_same():
    ex = _exchange(3000)
    ex.handshake("PLAIN")
    answer = ex.authenticate(ALICE, 0.0, version=0)
    assert answer.session_lifetime_ms == 3000  # the v0 answer has no field for it: the encoder leaves it out
    assert ex.expired(3001.0) and not ex.client_supports_reauthentication


def test_a_re_authentication_with_the_same_principal_starts_a_new_session():
    ex = _logged_in(3000)
    assert ex.may_reauthenticate(2600.0)
    assert ex.reauthenticate("PLAIN", 2600.0) == (ec.NONE, ["PLAIN", "TWO-STEP"])
    assert ex.state == AUTHENTICATE and ex.reauthenticating and not ex.authenticated
    answer = ex.authenticate(b"alice\x00alice\x00alice-secret", 2610.0)  # another spelling, the same principal
    assert (answer.error, answer.session_lifetime_ms) == (ec.NONE, 3000)
    assert ex.state == DONE and ex.principal == "User:alice" and ex.session_expires_at == 5610.0
    assert ex.reauthentications == 1 and not ex.reauthenticating


def test_a_re_authentication_may_start_after_the_session_expired_but_not_twice_a_second():
    ex = _logged_in(3000)
    assert ex.expired(9000.0) and ex.may_reauthenticate(9000.0)
    ex.reauthenticate("PLAIN", 9000.0)
    ex.authenticate(ALICE, 9001.0)
    assert not ex.may_reauthenticate(9999.0) and ex.may_reauthenticate(10000.0)  # one start per second


def test_changing_the_principal_is_refused_with_kafkas_message():
    ex = _logged_in(3000)
    ex.reauthenticate("PLAIN", 2000.0)
    answer = ex.authenticate(BOB, 2001.0)
    assert answer.error == ec.SASL_AUTHENTICATION_FAILED and answer.answered
    assert answer.message == "Cannot change principals during re-authentication from User.alice: User.bob"
    assert ex.state == FAILED and ex.principal == "User:alice"


def test_changing_the_mechanism_is_refused_with_no_answer():
    ex = _logged_in(3000)
    assert ex.reauthenticate("TWO-STEP", 2000.0).error == ec.NONE and ex.state == BAD_MECHANISM  # Kafka answers it
    answer = ex.authenticate(b"first", 2001.0)
    assert answer.error == ec.SASL_AUTHENTICATION_FAILED and not answer.answered and ex.state == FAILED
    assert answer.message == bad_mechanism_message("TWO-STEP", "PLAIN") == (
        "SASL mechanism 'TWO-STEP' requested by client is not supported for re-authentication of mechanism 'PLAIN'")


#: what Kafka's PlainSaslServer tells a client whose password is wrong, on a login and a re-authentication alike
PLAIN_INVALID = "Authentication failed: Invalid username or password"


class _Refusing:
    """A mechanism whose every message fails with no message for the client (as SCRAM's failures)."""

    def evaluate(self, token: bytes) -> Step:
        return Step(b"", None, "refused")


def test_an_unknown_mechanism_or_a_wrong_password_fails_the_re_authentication():
    ex = _logged_in(3000)
    assert ex.reauthenticate("GSSAPI", 2000.0).error == ec.UNSUPPORTED_SASL_MECHANISM and ex.state == FAILED
    ex = _logged_in(3000)
    ex.reauthenticate("PLAIN", 2000.0)
    answer = ex.authenticate(b"\x00alice\x00wrong", 2001.0)  # PLAIN's own message, as on a first login
    assert (answer.error, answer.message) == (ec.SASL_AUTHENTICATION_FAILED, PLAIN_INVALID) and ex.state == FAILED
    ex = _logged_in(3000)
    ex.mechanisms["PLAIN"] = lambda: _Refusing()  # a mechanism failing without a message of its own (SCRAM's)
    ex.reauthenticate("PLAIN", 2000.0)
    answer = ex.authenticate(b"token", 2001.0)
    assert (answer.error, answer.message) == (ec.SASL_AUTHENTICATION_FAILED, failure_message("PLAIN", True))
    assert "during re-authentication" in answer.message and ex.state == FAILED


# ----------------------------------------------------------------------------------------------- settings
JAAS_KEY = "listener.name.sasl_plaintext.plain.sasl.jaas.config"
BASE = {"sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256", JAAS_KEY: f'{MODULE} required user_alice="alice-secret";'}


@pytest.mark.parametrize("extra, plain_ms, scram_ms", [
    ({}, 0, 0),  # Kafka's default: off
    ({"connections.max.reauth.ms": "3000"}, 3000, 3000),
    ({"connections.max.reauth.ms": "3000", "listener.name.sasl_plaintext.connections.max.reauth.ms": "2000"},
     2000, 2000),
    ({"connections.max.reauth.ms": "3000", "listener.name.sasl_plaintext.connections.max.reauth.ms": "2000",
      "listener.name.sasl_plaintext.plain.connections.max.reauth.ms": "1000"}, 1000, 2000),
    ({"listener.name.other.plain.connections.max.reauth.ms": "1000"}, 0, 0),  # another listener's
    ({"plain.connections.max.reauth.ms": "1000"}, 0, 0),  # Kafka has no mechanism prefix without a listener
])
def test_the_lifetime_is_resolved_per_listener_and_mechanism_as_kafka_does(extra, plain_ms, scram_ms):
    s = sasl_settings({**BASE, **extra}, "SASL_PLAINTEXT")
    assert s.max_reauth_ms == {"PLAIN": plain_ms, "SCRAM-SHA-256": scram_ms}


def test_a_bad_lifetime_names_its_key():
    key = "listener.name.sasl_plaintext.plain.connections.max.reauth.ms"
    with pytest.raises(ConfigError) as info:
        sasl_settings({**BASE, key: "an hour"}, "SASL_PLAINTEXT")
    assert info.value.key == key


def test_the_node_reads_the_keys_and_does_not_report_them_as_ignored():
    from kraftwire.server.node.settings import NodeSettings

    props = parse_properties(
        "process.roles=broker,controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:9093\n"
        "listeners=SASL_PLAINTEXT://:9092,CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\n"
        "listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT\n"
        "log.dirs=/tmp/reauth-settings\nsasl.enabled.mechanisms=PLAIN\n"
        f"{JAAS_KEY}={MODULE} required user_alice=\"alice-secret\";\n"
        "connections.max.reauth.ms=60000\nlistener.name.sasl_plaintext.plain.connections.max.reauth.ms=3000\n")
    s = NodeSettings.from_properties(props)
    assert s.sasl_of("SASL_PLAINTEXT").max_reauth_ms == {"PLAIN": 3000}
    assert s.config.connections_max_reauth_ms == 60000
    assert not [k for k in s.ignored_keys + s.unknown_keys if "reauth" in k]


# ----------------------------------------------------------------------------------------------- the gate
class Clock:
    def __init__(self) -> None:
        self.ms = 0.0

    def __call__(self) -> float:
        return self.ms


class FakeConn:
    """What the gate needs of a connection; answers are kept as (body, version, correlation id)."""

    def __init__(self) -> None:
        self.peer = "10.0.0.7:5555"
        self.principal = "User:ANONYMOUS"
        self.closed = False
        self.answers: list = []

    def send_response(self, body, version, correlation_id) -> None:
        self.answers.append((body, version, correlation_id))

    def send_chunks(self, chunks, correlation_id=None) -> None:
        self.answers.append(("chunks", None, correlation_id))

    def close(self) -> None:
        self.closed = True

    def last(self):
        return self.answers[-1][0]


def _frame(body, version: int, cid: int) -> bytes:
    return b"".join(bytes(c) for c in encode_request(body, version, cid))[4:]  # the dispatcher gets it unprefixed


def _gate(reauth_ms: int = 3000, mechanisms=("PLAIN",)):
    base = Dispatcher()
    base.serve("Heartbeat", lambda req, conn: conn.send_response(w.HeartbeatResponse(error_code=0), req.version,
                                                                 req.header.correlation_id))
    settings = SaslSettings("SASL_PLAINTEXT", tuple(mechanisms), dict(USERS), {m: reauth_ms for m in mechanisms})
    clock = Clock()
    return SaslDispatcher(base, settings, {}, clock_ms=clock), clock


HEARTBEAT = w.HeartbeatRequest(group_id="g", generation_id=1, member_id="m")


def _login(gate, conn, token: bytes = ALICE, cid: int = 1, version: int = 2, mechanism: str = "PLAIN"):
    gate.dispatch(_frame(w.SaslHandshakeRequest(mechanism=mechanism), 1, cid), conn)
    gate.dispatch(_frame(w.SaslAuthenticateRequest(auth_bytes=token), version, cid + 1), conn)
    return conn.last()


def test_the_gate_answers_the_lifetime_and_renews_the_session(caplog):
    caplog.set_level(logging.INFO, "kraftwire.sasl")
    gate, clock = _gate(3000)
    conn = FakeConn()
    answer = _login(gate, conn)
    assert (answer.error_code, answer.session_lifetime_ms) == (0, 3000) and conn.principal == "User:alice"
    clock.ms = 2600
    answer = _login(gate, conn, cid=3)
    assert (answer.error_code, answer.session_lifetime_ms) == (0, 3000) and not conn.closed
    clock.ms = 5000  # past the first session's end, inside the second's
    gate.dispatch(_frame(HEARTBEAT, 4, 5), conn)
    assert isinstance(conn.last(), w.HeartbeatResponse) and not conn.closed
    assert "User:alice authenticated with SASL PLAIN from 10.0.0.7:5555" in caplog.text
    assert "User:alice re-authenticated with SASL PLAIN from 10.0.0.7:5555" in caplog.text


def test_an_expired_session_closes_on_an_ordinary_request(caplog):
    caplog.set_level(logging.INFO, "kraftwire.sasl")
    gate, clock = _gate(3000)
    conn = FakeConn()
    _login(gate, conn)
    clock.ms = 3000
    gate.dispatch(_frame(HEARTBEAT, 4, 3), conn)
    assert not conn.closed  # the last millisecond of the session
    clock.ms = 3001
    gate.dispatch(_frame(HEARTBEAT, 4, 4), conn)
    assert conn.closed and len(conn.answers) == 3
    assert "closing connection from 10.0.0.7:5555 (User:alice)" in caplog.text and "expired" in caplog.text


@pytest.mark.parametrize("version", [0, 1, 2])
def test_an_expired_session_may_still_re_authenticate(version):
    gate, clock = _gate(3000)
    conn = FakeConn()
    _login(gate, conn, version=version)
    clock.ms = 60_000
    answer = _login(gate, conn, cid=3, version=version)
    assert answer.error_code == 0 and not conn.closed
    gate.dispatch(_frame(HEARTBEAT, 4, 5), conn)
    assert isinstance(conn.last(), w.HeartbeatResponse) and not conn.closed


def test_a_v0_login_is_cut_off_when_its_session_ends():
    gate, clock = _gate(3000)
    conn = FakeConn()
    _login(gate, conn, version=0)
    clock.ms = 3500
    gate.dispatch(_frame(HEARTBEAT, 4, 3), conn)
    assert conn.closed


def test_without_sessions_sasl_requests_after_the_login_get_kafkas_refusal_and_the_connection_stays():
    gate, clock = _gate(0)
    conn = FakeConn()
    assert _login(gate, conn).session_lifetime_ms == 0
    clock.ms = 10**9
    gate.dispatch(_frame(w.SaslHandshakeRequest(mechanism="PLAIN"), 1, 3), conn)
    assert conn.last().error_code == ec.ILLEGAL_SASL_STATE and conn.last().mechanisms == []
    gate.dispatch(_frame(w.SaslAuthenticateRequest(auth_bytes=ALICE), 2, 4), conn)
    assert (conn.last().error_code, conn.last().error_message) == (ec.ILLEGAL_SASL_STATE, AUTHENTICATE_AFTER_LOGIN)
    gate.dispatch(_frame(HEARTBEAT, 4, 5), conn)
    assert isinstance(conn.last(), w.HeartbeatResponse) and not conn.closed


def test_a_second_re_authentication_within_a_second_is_an_ordinary_request():
    gate, clock = _gate(3000)
    conn = FakeConn()
    _login(gate, conn)
    clock.ms = 100
    _login(gate, conn, cid=3)
    clock.ms = 600
    gate.dispatch(_frame(w.SaslHandshakeRequest(mechanism="PLAIN"), 1, 5), conn)
    assert conn.last().error_code == ec.ILLEGAL_SASL_STATE and not conn.closed
    clock.ms = 1100
    assert _login(gate, conn, cid=6).error_code == 0


def test_a_request_between_the_re_authentication_steps_closes_the_connection():
    gate, clock = _gate(3000)
    conn = FakeConn()
    _login(gate, conn)
    clock.ms = 2000
    gate.dispatch(_frame(w.SaslHandshakeRequest(mechanism="PLAIN"), 1, 3), conn)
    gate.dispatch(_frame(HEARTBEAT, 4, 4), conn)
    assert conn.closed


def _closes_after_the_delay(steps, late=None) -> FakeConn:
    """Run ``steps``; the connection closes the failed-authentication delay later, after sending ``late`` answers
    (KIP-306: a failed login is answered only then)."""
    async def main():
        conn = FakeConn()
        steps(conn)
        assert not conn.closed
        await asyncio.sleep(FAILED_AUTHENTICATION_DELAY_S + 0.05)
        assert conn.closed
        if late is not None:
            late(conn.last())
        return conn

    return asyncio.run(main())


def test_a_principal_change_is_refused_and_closes_as_a_failed_login(caplog):
    caplog.set_level(logging.INFO, "kraftwire.sasl")
    gate, clock = _gate(3000)

    def steps(conn):
        _login(gate, conn)
        clock.ms = 2000
        answer = _login(gate, conn, token=BOB, cid=3)
        assert isinstance(answer, w.SaslHandshakeResponse)  # the failure is not answered yet

    def late(answer):
        assert answer.error_code == ec.SASL_AUTHENTICATION_FAILED
        assert answer.error_message == "Cannot change principals during re-authentication from User.alice: User.bob"

    conn = _closes_after_the_delay(steps, late)
    assert conn.principal == "User:alice"
    assert "failed SASL PLAIN re-authentication of User:alice from 10.0.0.7:5555" in caplog.text


def test_a_mechanism_change_is_refused_and_its_authenticate_gets_no_answer():
    gate, clock = _gate(3000, mechanisms=("PLAIN", "SCRAM-SHA-256"))

    def steps(conn):
        _login(gate, conn)
        clock.ms = 2000
        gate.dispatch(_frame(w.SaslHandshakeRequest(mechanism="SCRAM-SHA-256"), 1, 3), conn)
        assert conn.last().error_code == 0  # Kafka answers the handshake, then fails the next request
        gate.dispatch(_frame(w.SaslAuthenticateRequest(auth_bytes=b"n,,n=alice,r=abc"), 2, 4), conn)
        assert [cid for _, _, cid in conn.answers] == [1, 2, 3]

    _closes_after_the_delay(steps)


def test_a_wrong_password_on_re_authentication_closes_as_a_failed_login():
    gate, clock = _gate(3000)

    def steps(conn):
        _login(gate, conn)
        clock.ms = 2000
        _login(gate, conn, token=b"\x00alice\x00nope", cid=3)

    def late(answer):
        assert (answer.error_code, answer.error_message) == (ec.SASL_AUTHENTICATION_FAILED, PLAIN_INVALID)

    _closes_after_the_delay(steps, late)


class Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.out = bytearray()
        self.closed = False

    def write(self, data) -> None:
        self.out += bytes(data)

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 1) if name == "peername" else default

    def get_write_buffer_size(self) -> int:
        return 0

    def close(self) -> None:
        self.closed = True


def test_a_re_authentication_behind_a_parked_request_is_answered_in_its_turn():
    """A client may re-authenticate with requests in flight (librdkafka does): their answers leave first."""
    async def main():
        gate, clock = _gate(3000)
        parked = []
        gate.base.serve("OffsetCommit", lambda req, conn: parked.append((req, conn)))
        conn = InboundConnection(gate, 1 << 20)
        t = Transport()
        conn.connection_made(t)
        prefixed = lambda body, v, cid: b"".join(bytes(c) for c in encode_request(body, v, cid))  # noqa: E731
        conn.data_received(prefixed(w.SaslHandshakeRequest(mechanism="PLAIN"), 1, 1)
                           + prefixed(w.SaslAuthenticateRequest(auth_bytes=ALICE), 2, 2))
        clock.ms = 2500
        commit = w.OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=-1, member_id="", topics=[])
        conn.data_received(prefixed(commit, 8, 3) + prefixed(w.SaslHandshakeRequest(mechanism="PLAIN"), 1, 4))
        assert answered_ids(bytes(t.out)) == [1, 2]  # the handshake's answer waits for the commit's
        req, _ = parked.pop()
        conn.send_response(w.OffsetCommitResponse(topics=[]), req.version, req.header.correlation_id)
        conn.data_received(prefixed(w.SaslAuthenticateRequest(auth_bytes=ALICE), 2, 5) + prefixed(HEARTBEAT, 4, 6))
        assert answered_ids(bytes(t.out)) == [1, 2, 3, 4, 5, 6] and not t.closed
        assert conn.sasl.reauthentications == 1

    asyncio.run(main())


# ----------------------------------------------------------------------------------------------- kraftwire's clients
def test_clients_re_authenticate_between_85_and_95_percent_of_the_lifetime():
    assert reauthenticate_after_ms(0, 0.5) is None
    assert reauthenticate_after_ms(10_000, 0.0) == pytest.approx(8500)
    assert reauthenticate_after_ms(10_000, 0.999999) == pytest.approx(9500, abs=0.1)


LIFETIME_MS = 1300  # re-authentications every ~1.1-1.2 s: above Kafka's one-a-second minimum


async def _serve(base) -> tuple[asyncio.AbstractServer, int, list]:
    settings = SaslSettings("SASL_PLAINTEXT", ("PLAIN",), {"node": "node-secret"}, {"PLAIN": LIFETIME_MS})
    gate = SaslDispatcher(base, settings, {})
    conns: list = []

    def factory():
        conn = InboundConnection(gate, 1 << 20)
        conns.append(conn)
        return conn

    server = await asyncio.get_running_loop().create_server(factory, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], conns


def test_kafka_connection_re_authenticates_on_the_same_socket():
    from kraftwire.server.edge.client import KafkaConnection

    async def main():
        server, port, conns = await _serve(Dispatcher())
        try:
            conn = await KafkaConnection.open("127.0.0.1", port, timeout=5, sasl=SaslLogin("PLAIN", "node",
                                                                                           "node-secret"))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 3.5
            answers = 0
            while loop.time() < deadline:
                answer = await conn.request(w.ApiVersionsRequest(client_software_name="t",
                                                                 client_software_version="1"), 3, timeout=5)
                assert answer.error_code == 0
                answers += 1
                await asyncio.sleep(0.1)
            await conn.close()
            assert answers >= 20 and conn.reauthentications >= 2
            assert len(conns) == 1 and conns[0].sasl.reauthentications == conn.reauthentications
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(main())


def test_quorum_peers_re_authenticate_with_raft_requests_in_flight():
    from kraftwire.ids import ReplicaKey
    from kraftwire.raft import messages as m
    from kraftwire.server.edge import wire
    from kraftwire.server.edge.peers import Peers
    from kraftwire.server.node.settings import Voter

    topic = wire.Topic("reauth", uuid.uuid4())

    def vote(req, conn):
        """Answer every other Vote at once and hold the others 300 ms (as a leader parks a Fetch): requests are in
        flight when re-authentications begin, and the handshake's answer waits behind theirs."""
        core = wire.request_to_core(req.api.key, req.version, req.body, 2, req.header.correlation_id, topic)
        body = wire.response_to_wire(m.VoteResponse(2, core.src, core.correlation_id, 0, -1, 1, True), topic)
        answer = lambda: conn.send_response(body, req.version, req.header.correlation_id)  # noqa: E731
        if core.candidate_epoch % 2:
            asyncio.get_running_loop().call_later(0.3, answer)
        else:
            answer()

    async def main():
        base = Dispatcher()
        base.serve("Vote", vote)
        server, port, conns = await _serve(base)
        delivered, failed = [], []
        peers = Peers(1, [Voter(2, "127.0.0.1", port)], topic, directory_id=None, request_timeout_ms=2000,
                      deliver=delivered.append, on_failed=lambda node, cid: failed.append(cid),
                      sasl=SaslLogin("PLAIN", "node", "node-secret"))
        peer, in_flight = peers._peers[2], []
        begin = peer._begin_login

        def spy(*, reauthentication):
            if reauthentication:
                in_flight.append(len(peer.out))  # requests awaiting their answers as the re-login begins
            begin(reauthentication=reauthentication)

        peer._begin_login = spy
        try:
            loop = asyncio.get_running_loop()
            deadline, sent = loop.time() + 3.5, 0
            while loop.time() < deadline:
                sent += 1
                peers.send(m.VoteRequest(1, 2, sent, "cluster", candidate_epoch=sent, candidate_key=ReplicaKey(1),
                                         voter_id=2, last_offset_epoch=0, last_offset=0))
                await asyncio.sleep(0.05)
            for _ in range(100):
                if len(delivered) + len(failed) >= sent - 1:
                    break
                await asyncio.sleep(0.05)
            assert failed == [] and len(delivered) >= sent - 1 >= 40
            assert peer.reauthentications >= 2 and len(in_flight) == peer.reauthentications and max(in_flight) >= 1
            assert len(conns) == 1 and conns[0].sasl.reauthentications == peer.reauthentications
        finally:
            peers.close()
            server.close()
            await server.wait_closed()

    asyncio.run(main())


def test_a_sasl_authenticate_before_the_handshake_closes_the_connection_unanswered():
    """Kafka's SaslServerAuthenticator takes only ApiVersions and SaslHandshake first; a SaslAuthenticate then is an
    IllegalSaslStateException: the connection closes and nothing is answered (checked against Kafka 4.4; found by
    the fuzzer, tests/fuzz, which kraftwire answered ILLEGAL_SASL_STATE)."""
    for first in ([], [(w.ApiVersionsRequest(client_software_name="k", client_software_version="1"), 3)]):
        gate, _ = _gate()
        conn = FakeConn()
        for body, version in first:
            gate.dispatch(_frame(body, version, 1), conn)
        gate.dispatch(_frame(w.SaslAuthenticateRequest(auth_bytes=ALICE), 2, 2), conn)
        assert conn.closed and len(conn.answers) == len(first) and conn.sasl.principal is None
