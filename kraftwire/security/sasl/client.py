"""The client side of a SASL login, for the connections a node opens to the controller listener (quorum peers, a
broker's controller link): SaslHandshake v1 with the mechanism, then one SaslAuthenticate with the token. PLAIN only:
Kafka's controllers cannot log in to each other with SCRAM, whose credentials live in the log they replicate."""

from __future__ import annotations

from dataclasses import dataclass, field

from kraftwire.security.sasl import plain


@dataclass(frozen=True)
class SaslLogin:
    mechanism: str
    username: str
    password: str = field(repr=False)

    def token(self) -> bytes:
        if self.mechanism != plain.MECHANISM:
            raise ValueError(f"kraftwire logs in to other nodes with PLAIN, not {self.mechanism}")
        return b"\x00" + self.username.encode() + b"\x00" + self.password.encode()
