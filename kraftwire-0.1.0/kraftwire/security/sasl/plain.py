"""SASL/PLAIN (RFC 4616) on the server side, as Kafka's PlainSaslServer does it.

The client sends one message, ``authzid NUL username NUL password`` (UTF-8; bytes that are not become U+FFFD, as
Java decodes them). It fails, in Kafka's order and with the message Kafka's PlainSaslServer tells the client, when
it does not have exactly those three parts (counting at most four, as Kafka does), when the username or the password
is empty, when the password is not the one the JAAS options list as ``user_<username>="<password>"`` (an unknown user
alike), and when the authorization id is neither empty nor the username. Passwords are compared in constant time. On
success the principal is ``User:<username>`` and the reply is empty.
"""

from __future__ import annotations

import hmac
from typing import Mapping, NamedTuple

from kraftwire.security.sasl.mechanism import Step

MECHANISM = "PLAIN"
USER_PREFIX = "user_"


class Outcome(NamedTuple):
    principal: str | None  # "User:<name>" on success
    reason: str  # why it failed, for the node's log
    message: str = ""  # why it failed, as Kafka tells the client


def _failed(reason: str, message: str) -> Outcome:
    return Outcome(None, reason, message)


def users_from_options(options: Mapping[str, str]) -> dict[str, str]:
    """``user_<name>="<password>"`` JAAS options -> {name: password}."""
    return {k[len(USER_PREFIX):]: v for k, v in options.items() if k.startswith(USER_PREFIX) and len(k) > len(USER_PREFIX)}


def authenticate(token: bytes, users: Mapping[str, str]) -> Outcome:
    parts = bytes(token).decode("utf-8", "replace").split("\x00")
    if len(parts) != 3:
        return _failed("the PLAIN message is not authzid NUL username NUL password",
                       f"Invalid SASL/PLAIN response: expected 3 tokens, got {min(len(parts), 4)}")
    authzid, username, password = parts
    if not username:
        return _failed("an empty username", "Authentication failed: username not specified")
    if not password:
        return _failed("an empty password", "Authentication failed: password not specified")
    expected = users.get(username)
    # compare against something even for an unknown user, so the time taken does not say which part was wrong
    ok = hmac.compare_digest(password.encode(), (expected if expected is not None else "\x00" + password).encode())
    if expected is None or not ok:
        return _failed(f"invalid credentials for user {username!r}",
                       "Authentication failed: Invalid username or password")
    if authzid and authzid != username:
        return _failed(f"authorization id {authzid!r} is not the username", "Authentication failed: Client "
                       "requested an authorization id that is different from username")
    return Outcome(f"User:{username}", "")


class PlainServer:
    """PLAIN as a one-step SASL server (``evaluate`` answers the one message)."""

    def __init__(self, users: Mapping[str, str]) -> None:
        self.users = users

    def evaluate(self, token: bytes) -> Step:
        outcome = authenticate(token, self.users)
        if outcome.principal is None:
            return Step(b"", None, outcome.reason, outcome.message)
        return Step(b"", outcome.principal, None)
