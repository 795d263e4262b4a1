"""SASL/PLAIN (RFC 4616) on the server side, as Kafka's PlainSaslServer does it.

The client sends one message, ``authzid NUL username NUL password`` (UTF-8). It fails when it does not have exactly
those three parts, when the username or the password is empty, when the authorization id is neither empty nor the
username, and when the password is not the one the JAAS options list as ``user_<username>="<password>"``. Passwords
are compared in constant time. On success the principal is ``User:<username>`` and the reply is empty.
"""

from __future__ import annotations

import hmac
from typing import Mapping, NamedTuple

from kraftwire.security.sasl.mechanism import Step

MECHANISM = "PLAIN"
USER_PREFIX = "user_"


class Outcome(NamedTuple):
    principal: str | None  # "User:<name>" on success
    reason: str  # why it failed (for the node's log only; the client hears Kafka's generic message)


def users_from_options(options: Mapping[str, str]) -> dict[str, str]:
    """``user_<name>="<password>"`` JAAS options -> {name: password}."""
    return {k[len(USER_PREFIX):]: v for k, v in options.items() if k.startswith(USER_PREFIX) and len(k) > len(USER_PREFIX)}


def authenticate(token: bytes, users: Mapping[str, str]) -> Outcome:
    try:
        parts = bytes(token).decode("utf-8").split("\x00")
    except UnicodeDecodeError:
        return Outcome(None, "the PLAIN message is not UTF-8")
    if len(parts) != 3:
        return Outcome(None, "the PLAIN message is not authzid NUL username NUL password")
    authzid, username, password = parts
    if not username or not password:
        return Outcome(None, "an empty username or password")
    if authzid and authzid != username:
        return Outcome(None, f"authorization id {authzid!r} is not the username")
    expected = users.get(username)
    # compare against something even for an unknown user, so the time taken does not say which part was wrong
    ok = hmac.compare_digest(password.encode(), (expected if expected is not None else "\x00" + password).encode())
    if expected is None or not ok:
        return Outcome(None, f"invalid credentials for user {username!r}")
    return Outcome(f"User:{username}", "")


class PlainServer:
    """PLAIN as a one-step SASL server (``evaluate`` answers the one message)."""

    def __init__(self, users: Mapping[str, str]) -> None:
        self.users = users

    def evaluate(self, token: bytes) -> Step:
        outcome = authenticate(token, self.users)
        return Step(b"", outcome.principal, outcome.reason if outcome.principal is None else None)
