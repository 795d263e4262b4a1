"""One connection's SASL exchange (SaslHandshake v1, then SaslAuthenticate), as Kafka's SaslServerAuthenticator,
with KIP-368 re-authentication.

States: ``handshake`` (only ApiVersions and SaslHandshake are accepted) -> ``authenticate`` (SaslAuthenticate
carries the mechanism's tokens) -> ``done`` (the connection has a principal and may send anything) or ``failed``
(the answer has been sent; the connection closes after Kafka's short delay). Any other request before ``done``
closes the connection. Pure: the edge decodes requests, encodes the answers this returns and passes the time in
(milliseconds on any monotonic clock).

Sessions (``connections.max.reauth.ms`` of the mechanism, ``max_reauth_ms``): when it is > 0, a completed
authentication starts a session of that many milliseconds — the SaslAuthenticate answer carries it as
``session_lifetime_ms`` (v1+; a v0 client is not told, but its session ends all the same, as in Kafka) — and
``expired(now)`` says when it is over. Kafka also caps the lifetime by the credential's own (an OAuth token's);
PLAIN and SCRAM credentials have none. When it is 0 or less there is no session limit and no re-authentication.

Re-authentication (``reauthenticate``): a ``done`` exchange with a session may take a new SaslHandshake, at most one
per second (Kafka's minimum interval between re-authentication starts; ``may_reauthenticate``), even after its
session expired. The mechanism must be the one of the first login: another enabled mechanism is answered NONE
(Kafka answers the handshake before it compares) and the next SaslAuthenticate then fails with Kafka's message and no
answer (``AuthenticateAnswer.answered`` is False); a mechanism that is not enabled fails the handshake. The new login
must end with the same principal, else SASL_AUTHENTICATION_FAILED "Cannot change principals during
re-authentication from User.<a>: User.<b>". A wrong credential fails with the "during re-authentication" message.
Success starts a new session; every failure leaves the exchange ``failed``.
"""

from __future__ import annotations

from typing import Callable, Mapping, NamedTuple

from kraftwire.error_codes import ILLEGAL_SASL_STATE, NONE, SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM
from kraftwire.security.sasl.mechanism import MechanismServer

#: mechanism name -> a new server side for one login
Mechanism = Callable[[], MechanismServer]

HANDSHAKE, AUTHENTICATE, DONE, FAILED = "handshake", "authenticate", "done", "failed"
#: a re-authentication asked for another mechanism than the first login's: its next SaslAuthenticate fails
BAD_MECHANISM = "bad-mechanism"
#: Kafka's KafkaChannel: a re-authentication may not start within a second of the previous one's start
MIN_REAUTH_INTERVAL_MS = 1000


def failure_message(mechanism: str, reauthentication: bool = False) -> str:
    what = "re-authentication" if reauthentication else "authentication"
    return f"Authentication failed during {what} due to invalid credentials with SASL mechanism {mechanism}"


def _kafka_principal_text(principal: str) -> str:
    """``User:alice`` as Kafka's re-authentication message writes a principal: ``User.alice``."""
    kind, _, name = principal.partition(":")
    return f"{kind}.{name}"


def principal_change_message(previous: str, new: str) -> str:
    return (f"Cannot change principals during re-authentication from {_kafka_principal_text(previous)}: "
            f"{_kafka_principal_text(new)}")


def bad_mechanism_message(requested: str, previous: str) -> str:
    return (f"SASL mechanism '{requested}' requested by client is not supported for re-authentication of mechanism "
            f"'{previous}'")


class HandshakeAnswer(NamedTuple):
    error: int
    mechanisms: list[str]


class AuthenticateAnswer(NamedTuple):
    error: int
    message: str | None  # as the answer carries it: "" on success, as Kafka leaves it
    auth_bytes: bytes
    reason: str  # for the node's log
    #: the session the completed login starts (0: none, or the login is not complete yet)
    session_lifetime_ms: int = 0
    #: False when Kafka sends no SaslAuthenticate answer at all (a re-authentication with another mechanism, a
    #: SaslAuthenticate before the handshake)
    answered: bool = True


class SaslExchange:
    def __init__(self, mechanisms: Mapping[str, Mechanism], max_reauth_ms: Mapping[str, int] | None = None) -> None:
        self.mechanisms = dict(mechanisms)
        #: ``connections.max.reauth.ms`` of each mechanism (missing or <= 0: no session limit)
        self.max_reauth_ms = dict(max_reauth_ms or {})
        self.state = HANDSHAKE
        self.mechanism: str | None = None
        self.principal: str | None = None
        self._server: MechanismServer | None = None
        #: when the current session ends (same clock as the ``now`` passed in); None: it never does
        self.session_expires_at: float | None = None
        #: a re-authentication is under way (handshake answered, login not complete)
        self.reauthenticating = False
        self.reauthentications = 0  # completed ones
        self._last_reauth_start: float | None = None
        self._bad_mechanism = ""
        #: the client sent a SaslAuthenticate v1+ (Kafka's "connected client supports re-authentication")
        self.client_supports_reauthentication = False

    @property
    def authenticated(self) -> bool:
        return self.state == DONE

    # ---------------------------------------------------------------------------------------------------- first login
    def handshake(self, mechanism: str) -> HandshakeAnswer:
        enabled = sorted(self.mechanisms)
        if self.state != HANDSHAKE:  # Kafka answers a second handshake without the mechanisms
            self.state = FAILED
            return HandshakeAnswer(ILLEGAL_SASL_STATE, [])
        if mechanism not in self.mechanisms:
            self.state = FAILED
            return HandshakeAnswer(UNSUPPORTED_SASL_MECHANISM, enabled)
        self.mechanism = mechanism
        self._server = self.mechanisms[mechanism]()
        self.state = AUTHENTICATE
        return HandshakeAnswer(NONE, enabled)

    def authenticate(self, token: bytes, now: float = 0.0, version: int = 1) -> AuthenticateAnswer:
        """One SaslAuthenticate (``version`` of the request) at time ``now`` (ms)."""
        if self.state == BAD_MECHANISM:
            self.state = FAILED
            return AuthenticateAnswer(SASL_AUTHENTICATION_FAILED, self._bad_mechanism, b"", self._bad_mechanism,
                                      answered=False)
        if self.state != AUTHENTICATE or self.mechanism is None or self._server is None:
            self.state = FAILED
            # Kafka closes the connection without an answer (IllegalSaslStateException)
            return AuthenticateAnswer(ILLEGAL_SASL_STATE, None, b"", "SaslAuthenticate before a successful handshake",
                                      answered=False)
        if version > 0:
            self.client_supports_reauthentication = True
        step = self._server.evaluate(token)
        if step.failure is not None:
            self.state = FAILED
            told = step.told or failure_message(self.mechanism, self.reauthenticating)
            return AuthenticateAnswer(SASL_AUTHENTICATION_FAILED, told, b"", step.failure)
        if step.principal is None:  # Kafka leaves the message at its default, empty
            return AuthenticateAnswer(NONE, "", step.reply, "")
        if self.reauthenticating and step.principal != self.principal:
            self.state = FAILED
            message = principal_change_message(self.principal or "", step.principal)
            return AuthenticateAnswer(SASL_AUTHENTICATION_FAILED, message, b"", message)
        if self.reauthenticating:
            self.reauthentications += 1
        self.reauthenticating = False
        self.principal = step.principal
        self.state = DONE
        self._server = None
        lifetime = self.session_lifetime_ms()
        self.session_expires_at = now + lifetime if lifetime > 0 else None
        return AuthenticateAnswer(NONE, "", step.reply, "", lifetime)

    # ---------------------------------------------------------------------------------------------------- sessions
    def session_lifetime_ms(self) -> int:
        """The lifetime of a session of this exchange's mechanism: ``connections.max.reauth.ms`` if > 0, else 0."""
        configured = self.max_reauth_ms.get(self.mechanism or "", 0)
        return configured if configured > 0 else 0

    def expired(self, now: float) -> bool:
        """The session of an authenticated connection is over: only a re-authentication may use it now."""
        return self.session_expires_at is not None and now > self.session_expires_at

    def may_reauthenticate(self, now: float) -> bool:
        """A SaslHandshake now would start a re-authentication (else it is an ordinary, refused request): the
        connection is authenticated, has a session, and did not start a re-authentication within the last second."""
        return (self.state == DONE and self.session_expires_at is not None
                and (self._last_reauth_start is None or now - self._last_reauth_start >= MIN_REAUTH_INTERVAL_MS))

    def reauthenticate(self, mechanism: str, now: float) -> HandshakeAnswer:
        """The SaslHandshake that starts a re-authentication (``may_reauthenticate(now)`` must hold)."""
        enabled = sorted(self.mechanisms)
        if not self.may_reauthenticate(now):
            self.state = FAILED
            return HandshakeAnswer(ILLEGAL_SASL_STATE, enabled)
        self._last_reauth_start = now
        self.reauthenticating = True
        if mechanism not in self.mechanisms:
            self.state = FAILED
            return HandshakeAnswer(UNSUPPORTED_SASL_MECHANISM, enabled)
        if mechanism != self.mechanism:
            self._bad_mechanism = bad_mechanism_message(mechanism, self.mechanism or "")
            self.state = BAD_MECHANISM
            return HandshakeAnswer(NONE, enabled)
        self._server = self.mechanisms[mechanism]()
        self.state = AUTHENTICATE
        return HandshakeAnswer(NONE, enabled)
