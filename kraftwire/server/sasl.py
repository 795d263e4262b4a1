"""The SASL gate of a SASL_PLAINTEXT or SASL_SSL listener: a dispatcher wrapper that runs each connection's SASL
exchange (``security.sasl.exchange``) before anything else reaches the node.

Before a connection has authenticated only ApiVersions, SaslHandshake (v1) and SaslAuthenticate are served; any other
request closes it, as Kafka's SaslServerAuthenticator does. A failed authentication is answered with Kafka's error
and message, logged with the peer address (never which half of the credentials was wrong), and the connection is
closed ``connection.failed.authentication.delay.ms`` (Kafka's default, 100 ms) later. On success the connection's
principal is ``User:<name>``. ApiVersions on this listener lists the SASL APIs as well.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import struct
from typing import Mapping

from kraftwire.errors import KraftwireError, ProtocolError, UnsupportedVersionError
from kraftwire.protocol import framing, served
from kraftwire.protocol import messages as w
from kraftwire.protocol.api_versions import encode_api_versions_response
from kraftwire.security.sasl import plain, scram
from kraftwire.security.sasl.exchange import FAILED, SaslExchange
from kraftwire.security.sasl.settings import SaslSettings
from kraftwire.server.dispatcher import DispatcherView

log = logging.getLogger("kraftwire.sasl")

API_VERSIONS = served.key("ApiVersions")
SASL_HANDSHAKE = served.key("SaslHandshake")
SASL_AUTHENTICATE = served.key("SaslAuthenticate")
FAILED_AUTHENTICATION_DELAY_S = 0.1


def mechanisms_for(settings: SaslSettings, scram_credentials: Mapping) -> dict:
    """Mechanism name -> a factory of its server side, for the mechanisms the listener enables."""
    out = {}
    for mech in settings.mechanisms:
        if mech == plain.MECHANISM:
            out[mech] = (lambda users: lambda: plain.PlainServer(users))(settings.plain_users)
        else:
            source = scram.lookup(scram_credentials, mech)
            out[mech] = (lambda m, src: lambda: scram.ScramServer(m, src, _nonce))(mech, source)
    return out


def _nonce() -> str:
    return scram.server_nonce(secrets.randbits(130))


class SaslDispatcher(DispatcherView):
    def __init__(self, base, settings: SaslSettings, scram_credentials: Mapping | None = None) -> None:
        super().__init__(base)
        self.settings = settings
        self._mechanisms = mechanisms_for(settings, scram_credentials or {})

    def registered(self) -> dict:
        out = dict(self.base.registered())
        out[SASL_HANDSHAKE] = served.versions("SaslHandshake")
        out[SASL_AUTHENTICATE] = served.versions("SaslAuthenticate")
        return out

    def _exchange(self, conn) -> SaslExchange:
        exchange = getattr(conn, "sasl", None)
        if exchange is None:
            exchange = conn.sasl = SaslExchange(self._mechanisms)
        return exchange

    def dispatch(self, frame: bytes, conn) -> None:
        exchange = self._exchange(conn)
        if exchange.authenticated:
            if len(frame) >= 2 and struct.unpack_from(">h", frame, 0)[0] in (SASL_HANDSHAKE, SASL_AUTHENTICATE):
                self._refuse(conn, "a SASL request after authentication (re-authentication is not enabled)")
                return
            self.base.dispatch(frame, conn)
            return
        if exchange.state == FAILED:
            return  # closing after the failed-authentication delay
        if len(frame) < 8:
            self._refuse(conn, "a frame too short for a request header")
            return
        api_key, version, correlation_id = struct.unpack_from(">hhi", frame, 0)
        if api_key == API_VERSIONS:
            conn.send_chunks(encode_api_versions_response(self.registered(), version, correlation_id,
                                                              self.api_features()))
            return
        if api_key not in (SASL_HANDSHAKE, SASL_AUTHENTICATE):
            self._refuse(conn, f"api key {api_key} before SASL authentication")
            return
        lo, hi = served.versions("SaslHandshake" if api_key == SASL_HANDSHAKE else "SaslAuthenticate")
        if not lo <= version <= hi:
            self._refuse(conn, f"api key {api_key} version {version} is not served")
            return
        try:
            request = framing.decode_request(frame)
        except (UnsupportedVersionError, ProtocolError, KraftwireError, ValueError, struct.error) as exc:
            self._refuse(conn, f"a malformed SASL request: {exc}")
            return
        if api_key == SASL_HANDSHAKE:
            answer = exchange.handshake(request.body.mechanism)
            conn.send_response(w.SaslHandshakeResponse(error_code=answer.error, mechanisms=answer.mechanisms),
                               version, correlation_id)
            if answer.error:
                log.warning("closing connection from %s: SASL mechanism %r is not enabled on listener %s",
                            conn.peer, request.body.mechanism, self.settings.listener)
                self._close_soon(conn)
            return
        answer = exchange.authenticate(bytes(request.body.auth_bytes))
        conn.send_response(w.SaslAuthenticateResponse(error_code=answer.error, error_message=answer.message,
                                                      auth_bytes=answer.auth_bytes, session_lifetime_ms=0),
                           version, correlation_id)
        if answer.error:
            self.base.count_error("sasl")
            log.warning("failed SASL %s authentication from %s on listener %s", exchange.mechanism, conn.peer,
                        self.settings.listener)
            log.debug("SASL failure from %s: %s", conn.peer, answer.reason)
            self._close_soon(conn)
            return
        conn.principal = exchange.principal
        log.info("%s authenticated with SASL %s from %s", exchange.principal, exchange.mechanism, conn.peer)

    def _refuse(self, conn, why: str) -> None:
        self.base.count_error("sasl")
        log.warning("closing connection from %s on SASL listener %s: %s", conn.peer, self.settings.listener, why)
        conn.close()

    @staticmethod
    def _close_soon(conn) -> None:
        asyncio.get_running_loop().call_later(FAILED_AUTHENTICATION_DELAY_S, conn.close)
