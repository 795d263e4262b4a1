"""One connection's SASL exchange (SaslHandshake v1, then SaslAuthenticate), as Kafka's SaslServerAuthenticator.

States: ``handshake`` (only ApiVersions and SaslHandshake are accepted) -> ``authenticate`` (SaslAuthenticate
carries the mechanism's tokens) -> ``done`` (the connection has a principal and may send anything) or ``failed``
(the answer has been sent; the connection closes after Kafka's short delay). Any other request before ``done``
closes the connection. Pure: the edge decodes requests and encodes the answers this returns.
"""

from __future__ import annotations

from typing import Callable, Mapping, NamedTuple

from kraftwire.error_codes import ILLEGAL_SASL_STATE, NONE, SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM
from kraftwire.security.sasl.mechanism import MechanismServer

#: mechanism name -> a new server side for one login
Mechanism = Callable[[], MechanismServer]

HANDSHAKE, AUTHENTICATE, DONE, FAILED = "handshake", "authenticate", "done", "failed"


def failure_message(mechanism: str) -> str:
    return f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"


class HandshakeAnswer(NamedTuple):
    error: int
    mechanisms: list[str]


class AuthenticateAnswer(NamedTuple):
    error: int
    message: str | None
    auth_bytes: bytes
    reason: str  # for the node's log


class SaslExchange:
    def __init__(self, mechanisms: Mapping[str, Mechanism]) -> None:
        self.mechanisms = dict(mechanisms)
        self.state = HANDSHAKE
        self.mechanism: str | None = None
        self.principal: str | None = None
        self._server: MechanismServer | None = None

    @property
    def authenticated(self) -> bool:
        return self.state == DONE

    def handshake(self, mechanism: str) -> HandshakeAnswer:
        enabled = sorted(self.mechanisms)
        if self.state != HANDSHAKE:
            self.state = FAILED
            return HandshakeAnswer(ILLEGAL_SASL_STATE, enabled)
        if mechanism not in self.mechanisms:
            self.state = FAILED
            return HandshakeAnswer(UNSUPPORTED_SASL_MECHANISM, enabled)
        self.mechanism = mechanism
        self._server = self.mechanisms[mechanism]()
        self.state = AUTHENTICATE
        return HandshakeAnswer(NONE, enabled)

    def authenticate(self, token: bytes) -> AuthenticateAnswer:
        if self.state != AUTHENTICATE or self.mechanism is None or self._server is None:
            self.state = FAILED
            return AuthenticateAnswer(ILLEGAL_SASL_STATE, "SaslAuthenticate before a successful SaslHandshake", b"",
                                      "SaslAuthenticate out of order")
        step = self._server.evaluate(token)
        if step.failure is not None:
            self.state = FAILED
            return AuthenticateAnswer(SASL_AUTHENTICATION_FAILED, failure_message(self.mechanism), b"", step.failure)
        if step.principal is not None:
            self.principal = step.principal
            self.state = DONE
        return AuthenticateAnswer(NONE, None, step.reply, "")
