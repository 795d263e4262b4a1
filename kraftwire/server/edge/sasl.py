"""The SASL gate of a SASL_PLAINTEXT or SASL_SSL listener: a dispatcher wrapper that runs each connection's SASL
exchange (``security.sasl.exchange``) before anything else reaches the node.

Before a connection has authenticated only ApiVersions, SaslHandshake and SaslAuthenticate are served; any other
request closes it, as Kafka's SaslServerAuthenticator does. After a SaslHandshake v0 (older clients; librdkafka 2.0
looks for it in ApiVersions) the tokens travel raw, size-prefixed bytes without a Kafka header both ways, and a failed
one closes the connection without an answer, as in Kafka's legacy flow. A failed authentication is answered with
Kafka's error and message, logged with the peer address (never which half of the credentials was wrong); the answer
is sent and the connection closed ``connection.failed.authentication.delay.ms`` (Kafka's default, 100 ms) later, as
KIP-306 delays them. On success the connection's principal is ``User:<name>``. ApiVersions on this listener lists the
SASL APIs as well.

Re-authentication (KIP-368), with ``connections.max.reauth.ms`` of the mechanism (``SaslSettings.max_reauth_ms``;
0, Kafka's default, turns all of this off):

* the SaslAuthenticate answer that completes a login carries ``session_lifetime_ms`` = that value (v1+; a v0
  client is not told, yet its session ends all the same, as in Kafka — it cannot re-authenticate and is cut off);
* an authenticated connection may send SaslHandshake + SaslAuthenticate again, with earlier requests still being
  answered (every answer leaves in its request's turn). Between that SaslHandshake and the completing
  SaslAuthenticate only SaslAuthenticate is accepted; anything else closes the connection. The mechanism must stay
  the same (another enabled one: the handshake is answered, the next SaslAuthenticate gets no answer and the
  connection closes, as Kafka does) and so must the principal (SASL_AUTHENTICATION_FAILED "Cannot change principals
  during re-authentication ..."). A failed re-authentication closes the connection after the same delay as a failed
  login; a successful one starts a new session and is logged ("re-authenticated");
* once a session has expired, the next request that does not start a re-authentication closes the connection,
  logged with the peer and the principal (Kafka's SocketServer; no timer per connection: the check is made when a
  request arrives, on ``time.monotonic()``);
* a re-authentication may start at most once a second (Kafka's KafkaChannel): a SaslHandshake sooner, or on a
  connection without a session, is an ordinary request and, as in Kafka's KafkaApis, is answered ILLEGAL_SASL_STATE
  (a SaslAuthenticate outside a re-authentication likewise, "SaslAuthenticate request received after successful
  authentication") — the connection stays open unless its session has expired.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import struct
import time
from typing import Callable, Mapping

from kraftwire.errors import KraftwireError, ProtocolError, UnsupportedVersionError
from kraftwire.protocol import framing, served
from kraftwire.protocol import messages as w
from kraftwire.protocol.api_versions import answer_frame
from kraftwire.security.sasl import plain, scram
from kraftwire.security.sasl.exchange import FAILED, HANDSHAKE, SaslExchange
from kraftwire.security.sasl.settings import SaslSettings
from kraftwire.server.edge.dispatcher import DispatcherView, sasl_state_refusal, take_turn

log = logging.getLogger("kraftwire.sasl")

API_VERSIONS = served.key("ApiVersions")
SASL_HANDSHAKE = served.key("SaslHandshake")
SASL_AUTHENTICATE = served.key("SaslAuthenticate")
FAILED_AUTHENTICATION_DELAY_S = 0.1


def mechanisms_for(settings: SaslSettings, scram_credentials: Mapping | Callable) -> dict:
    """Mechanism name -> a factory of its server side, for the mechanisms the listener enables.
    ``scram_credentials``: ``(user, mechanism byte) -> scram.Credential | None``, asked at each login (a KRaft
    node's current metadata image), or a mapping ``{(user, mechanism byte): scram.Credential}``."""
    out = {}
    for mech in settings.mechanisms:
        if mech == plain.MECHANISM:
            out[mech] = (lambda users: lambda: plain.PlainServer(users))(settings.plain_users)
        else:
            if callable(scram_credentials):
                source = (lambda get, code: lambda user: get(user, code))(scram_credentials, scram.MECHANISMS[mech][1])
            else:
                source = scram.lookup(scram_credentials, mech)
            out[mech] = (lambda m, src: lambda: scram.ScramServer(m, src, _nonce))(mech, source)
    return out


def _nonce() -> str:
    return scram.server_nonce(secrets.randbits(130))


def _monotonic_ms() -> float:
    return time.monotonic() * 1000.0


class SaslDispatcher(DispatcherView):
    def __init__(self, base, settings: SaslSettings, scram_credentials: Mapping | None = None, *,
                 clock_ms: Callable[[], float] = _monotonic_ms) -> None:
        super().__init__(base)
        self.settings = settings
        self._mechanisms = mechanisms_for(settings, scram_credentials or {})
        self._clock_ms = clock_ms  # monotonic milliseconds: sessions are measured on it

    def registered(self) -> dict:
        out = dict(self.base.registered())
        out[SASL_HANDSHAKE] = served.versions("SaslHandshake")
        out[SASL_AUTHENTICATE] = served.versions("SaslAuthenticate")
        return out

    def _exchange(self, conn) -> SaslExchange:
        exchange = getattr(conn, "sasl", None)
        if exchange is None:
            exchange = conn.sasl = SaslExchange(self._mechanisms, self.settings.max_reauth_ms)
        return exchange

    def dispatch(self, frame: bytes, conn) -> None:
        exchange = self._exchange(conn)
        if exchange.authenticated:
            self._authenticated(frame, conn, exchange)
            return
        if exchange.state == FAILED:
            return  # closing after the failed-authentication delay
        if getattr(conn, "sasl_raw", False):
            self._raw_token(frame, conn, exchange)
            return
        if len(frame) < 8:
            self._refuse(conn, "a frame too short for a request header")
            return
        (api_key,) = struct.unpack_from(">h", frame, 0)
        if exchange.reauthenticating:
            if api_key != SASL_AUTHENTICATE:
                self._refuse(conn, f"api key {api_key} during the SASL re-authentication of {exchange.principal}")
                return
        elif api_key == API_VERSIONS:
            (correlation_id,) = struct.unpack_from(">i", frame, 4)
            take_turn(conn, correlation_id)
            conn.send_chunks(answer_frame(frame, self.registered(), self.api_features(), self.api_identity()),
                             correlation_id)
            return
        if api_key != SASL_HANDSHAKE and (api_key != SASL_AUTHENTICATE or exchange.state == HANDSHAKE):
            # Kafka's IllegalSaslStateException: closed without an answer, a SaslAuthenticate before the handshake too
            self._refuse(conn, f"api key {api_key} before SASL authentication")
            return
        request = self._decode(frame, conn)
        if request is None:
            return
        if api_key == SASL_HANDSHAKE:
            self._handshake(request, conn, exchange, reauthentication=False)
        else:
            self._authenticate(request, conn, exchange)

    # ------------------------------------------------------------------------------------------- after the login
    def _authenticated(self, frame: bytes, conn, exchange: SaslExchange) -> None:
        """A request on an authenticated connection: a re-authentication's SaslHandshake, else (session still
        running) the node's business."""
        api_key = struct.unpack_from(">h", frame, 0)[0] if len(frame) >= 2 else None
        now = self._clock_ms()
        if api_key == SASL_HANDSHAKE and exchange.may_reauthenticate(now):
            request = self._decode(frame, conn)
            if request is not None:
                self._handshake(request, conn, exchange, reauthentication=True)
            return
        if exchange.expired(now):
            self.base.count_error("sasl")
            log.info("closing connection from %s (%s) on SASL listener %s: its session expired %.0f ms ago and it "
                     "sent api key %s without re-authenticating (connections.max.reauth.ms=%d)", conn.peer,
                     exchange.principal, self.settings.listener, now - exchange.session_expires_at, api_key,
                     exchange.session_lifetime_ms())
            conn.close()
            return
        if api_key in (SASL_HANDSHAKE, SASL_AUTHENTICATE):
            request = self._decode(frame, conn)
            if request is None:
                return
            cid = request.header.correlation_id
            take_turn(conn, cid)
            conn.send_response(sasl_state_refusal(api_key), request.version, cid)
            return
        self.base.dispatch(frame, conn)

    # ------------------------------------------------------------------------------------------- the exchange
    def _decode(self, frame: bytes, conn):
        """A SASL request decoded, or None when the connection was closed for it."""
        if len(frame) < 8:
            self._refuse(conn, "a frame too short for a request header")
            return None
        api_key, version = struct.unpack_from(">hh", frame, 0)
        lo, hi = served.versions("SaslHandshake" if api_key == SASL_HANDSHAKE else "SaslAuthenticate")
        if not lo <= version <= hi:
            self._refuse(conn, f"api key {api_key} version {version} is not served")
            return None
        try:
            return framing.decode_request(frame)
        except (UnsupportedVersionError, ProtocolError, KraftwireError, ValueError, struct.error) as exc:
            self._refuse(conn, f"a malformed SASL request: {exc}")
            return None

    def _handshake(self, request, conn, exchange: SaslExchange, *, reauthentication: bool) -> None:
        mechanism = request.body.mechanism
        if reauthentication:
            answer = exchange.reauthenticate(mechanism, self._clock_ms())
            log.debug("%s from %s begins a SASL %s re-authentication", exchange.principal, conn.peer, mechanism)
        else:
            answer = exchange.handshake(mechanism)
        cid = request.header.correlation_id
        take_turn(conn, cid)
        conn.send_response(w.SaslHandshakeResponse(error_code=answer.error, mechanisms=answer.mechanisms),
                           request.version, cid)
        if request.version == 0 and not answer.error and not reauthentication:
            conn.sasl_raw = True  # the tokens that follow come without Kafka's framing
        if answer.error:
            log.warning("closing connection from %s: SASL mechanism %r is not enabled on listener %s%s",
                        conn.peer, mechanism, self.settings.listener,
                        f" (re-authentication of {exchange.principal})" if reauthentication else "")
            self._close_soon(conn)

    def _authenticate(self, request, conn, exchange: SaslExchange) -> None:
        reauthentication = exchange.reauthenticating
        what = "re-authentication" if reauthentication else "authentication"
        answer = exchange.authenticate(bytes(request.body.auth_bytes), self._clock_ms(), request.version)
        cid = request.header.correlation_id
        if answer.answered:
            take_turn(conn, cid)
            response = w.SaslAuthenticateResponse(error_code=answer.error, error_message=answer.message,
                                                  auth_bytes=answer.auth_bytes,
                                                  session_lifetime_ms=answer.session_lifetime_ms)
            if answer.error:  # KIP-306: the failure is answered when the connection closes, the delay later
                self._answer_late(conn, response, request.version, cid)
                return self._failed(conn, exchange, what, reauthentication, answer)
            conn.send_response(response, request.version, cid)
        if answer.error:
            self.base.count_error("sasl")
            who = f" of {exchange.principal}" if reauthentication else ""
            log.warning("failed SASL %s %s%s from %s on listener %s", exchange.mechanism, what, who, conn.peer,
                        self.settings.listener)
            log.debug("SASL failure from %s: %s", conn.peer, answer.reason)
            self._close_soon(conn)
            return
        if not exchange.authenticated:
            return  # a mechanism with more than one step (SCRAM): more to come
        conn.principal = exchange.principal
        lifetime = f"; session lifetime {answer.session_lifetime_ms} ms" if answer.session_lifetime_ms else ""
        if reauthentication:
            log.info("%s re-authenticated with SASL %s from %s%s", exchange.principal, exchange.mechanism, conn.peer,
                     lifetime)
        else:
            log.info("%s authenticated with SASL %s from %s%s", exchange.principal, exchange.mechanism, conn.peer,
                     lifetime)

    def _raw_token(self, token: bytes, conn, exchange: SaslExchange) -> None:
        """A SASL token after a SaslHandshake v0: it and its answer travel as bare size-prefixed bytes, no Kafka
        header (Kafka's legacy flow). A failure closes the connection without an answer, as Kafka does."""
        answer = exchange.authenticate(token, self._clock_ms(), 0)
        if answer.error:
            self.base.count_error("sasl")
            log.warning("failed SASL %s authentication (raw tokens) from %s on listener %s", exchange.mechanism,
                        conn.peer, self.settings.listener)
            log.debug("SASL failure from %s: %s", conn.peer, answer.reason)
            self._close_soon(conn)
            return
        reply = bytes(answer.auth_bytes or b"")
        conn.send_chunks([struct.pack(">i", len(reply)), reply])
        if exchange.authenticated:
            conn.sasl_raw = False
            conn.principal = exchange.principal
            log.info("%s authenticated with SASL %s from %s", exchange.principal, exchange.mechanism, conn.peer)

    def _failed(self, conn, exchange: SaslExchange, what: str, reauthentication: bool, answer) -> None:
        self.base.count_error("sasl")
        who = f" of {exchange.principal}" if reauthentication else ""
        log.warning("failed SASL %s %s%s from %s on listener %s", exchange.mechanism, what, who, conn.peer,
                    self.settings.listener)
        log.debug("SASL failure from %s: %s", conn.peer, answer.reason)

    @staticmethod
    def _answer_late(conn, response, version: int, correlation_id: int) -> None:
        """Send the failure ``connection.failed.authentication.delay.ms`` later and close (Kafka's KIP-306: a client
        retrying bad credentials waits that long for each answer, which slows a storm of them)."""
        def answer() -> None:
            if not conn.closed:
                conn.send_response(response, version, correlation_id)
                conn.close()
        asyncio.get_running_loop().call_later(FAILED_AUTHENTICATION_DELAY_S, answer)

    # ------------------------------------------------------------------------------------------- helpers
    def _refuse(self, conn, why: str) -> None:
        self.base.count_error("sasl")
        log.warning("closing connection from %s on SASL listener %s: %s", conn.peer, self.settings.listener, why)
        conn.close()

    @staticmethod
    def _close_soon(conn) -> None:
        asyncio.get_running_loop().call_later(FAILED_AUTHENTICATION_DELAY_S, conn.close)
