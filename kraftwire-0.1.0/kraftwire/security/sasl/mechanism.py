"""What every SASL mechanism's server side returns for a client message."""

from __future__ import annotations

from typing import NamedTuple, Protocol


class Step(NamedTuple):
    reply: bytes  # what the server sends back (empty on failure)
    principal: str | None  # set when the login succeeded
    failure: str | None  # set when it failed (for the node's log)
    #: what the client is told when it failed: the mechanism's own message where Kafka's sends it (a
    #: SaslAuthenticationException's), else None for Kafka's generic "invalid credentials" message
    told: str | None = None


class MechanismServer(Protocol):
    def evaluate(self, token: bytes) -> Step: ...
