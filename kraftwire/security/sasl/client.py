"""The client side of a SASL login: SaslHandshake v1 with the mechanism, then SaslAuthenticate with the tokens.

The connections a node opens to the controller listener (quorum peers, a broker's controller link) use PLAIN: Kafka's
controllers cannot log in to each other with SCRAM, whose credentials live in the log they replicate. The admin tools
(``--command-config``) may use SCRAM as well (``scram()`` gives the client side of one login)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kraftwire.security.sasl import plain, scram


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
