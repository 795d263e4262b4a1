"""The client side of a SASL login: SaslHandshake v1 with the mechanism, then SaslAuthenticate with the tokens.

The connections a node opens to the controller listener (quorum peers, a broker's controller link) use PLAIN: Kafka's
controllers cannot log in to each other with SCRAM, whose credentials live in the log they replicate. A broker's
links to the other brokers (replica fetchers, transaction markers and verification) and the admin tools
(``--command-config``) may use SCRAM as well (``scram()`` gives the client side of one login).

KIP-368: when the server answers the login with a session lifetime, the client logs in again on the same connection
before it ends — as Kafka's SaslClientAuthenticator, at a random point between 85% and 95% of the lifetime
(``reauthenticate_after_ms``), which leaves room for the network and spreads many connections' re-authentications."""

from __future__ import annotations

from dataclasses import dataclass, field

from kraftwire.security.sasl import plain, scram


#: the share of the session lifetime after which a client re-authenticates: 85% plus up to 10% of jitter
REAUTH_AT, REAUTH_JITTER = 0.85, 0.10


def reauthenticate_after_ms(session_lifetime_ms: int, jitter: float) -> float | None:
    """How long after a completed login the client re-authenticates: None when the server gave no lifetime (0);
    else ``(0.85 + 0.10 * jitter)`` of it, ``jitter`` a random number in [0, 1)."""
    if session_lifetime_ms <= 0:
        return None
    return session_lifetime_ms * (REAUTH_AT + REAUTH_JITTER * min(max(jitter, 0.0), 1.0))


@dataclass(frozen=True)
class SaslLogin:
    mechanism: str
    username: str
    password: str = field(repr=False)

    def token(self) -> bytes:
        """PLAIN's one message."""
        if self.mechanism != plain.MECHANISM:
            raise ValueError(f"{self.mechanism} takes more than one message; use scram()")
        return b"\x00" + self.username.encode() + b"\x00" + self.password.encode()

    def scram(self, client_nonce: str) -> scram.ScramClient:
        return scram.ScramClient(self.mechanism, self.username, self.password, client_nonce)
