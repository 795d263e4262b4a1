"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802 / RFC 7677) as Kafka's ScramSaslServer runs them, and the credential
arithmetic Kafka's ScramFormatter does.

Messages (UTF-8):

* client-first ``n,,n=<saslname>,r=<client nonce>[,<ext>=<value>...]`` (gs2 flag ``n`` only; an ``a=<authzid>`` must
  be the user; ``=3D``/``=2C`` escape ``=`` and ``,`` in the name);
* server-first ``r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>`` (the server nonce is 130 random
  bits written in base 36, as Kafka's);
* client-final ``c=<base64 gs2 header>,r=<nonce>,p=<base64 ClientProof>``;
* server-final ``v=<base64 ServerSignature>``.

SaltedPassword = PBKDF2-HMAC(password, salt, i); ClientKey = HMAC(SaltedPassword, "Client Key"); StoredKey =
H(ClientKey); ServerKey = HMAC(SaltedPassword, "Server Key"). The server checks H(ClientProof XOR ClientSignature)
== StoredKey in constant time. Iterations are 4096..16384 (a stored credential outside fails the login). An unknown
user, a bad proof, a wrong nonce or a malformed message all fail with the same answer to the client; the reason is
for the node's log. The server nonce source is passed in, so the exchange is deterministic under test.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Callable, Mapping, NamedTuple

from kraftwire.security.sasl.mechanism import Step

MECHANISMS = {"SCRAM-SHA-256": ("sha256", 1), "SCRAM-SHA-512": ("sha512", 2)}  # name -> (hash, Kafka's byte)
BY_TYPE = {code: name for name, (_, code) in MECHANISMS.items()}
MIN_ITERATIONS, MAX_ITERATIONS = 4096, 16384


class Credential(NamedTuple):
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


# ---------------------------------------------------------------------------------------------------- arithmetic
def _hmac(hash_name: str, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hash_name).digest()


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac(MECHANISMS[mechanism][0], password.encode(), salt, iterations)


def credential_from_salted(mechanism: str, salted: bytes, salt: bytes, iterations: int) -> Credential:
    h = MECHANISMS[mechanism][0]
    client_key = _hmac(h, salted, b"Client Key")
    return Credential(salt, hashlib.new(h, client_key).digest(), _hmac(h, salted, b"Server Key"), iterations)


def credential(mechanism: str, password: str, salt: bytes, iterations: int) -> Credential:
    return credential_from_salted(mechanism, salted_password(mechanism, password, salt, iterations), salt, iterations)


def server_nonce(random_bits: int) -> str:
    """130 random bits in base 36, as Kafka's ScramFormatter.secureRandomString."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while random_bits:
        random_bits, r = divmod(random_bits, 36)
        out = digits[r] + out
    return out or "0"


def _unescape_name(text: str) -> str | None:
    out, i = [], 0
    while i < len(text):
        if text[i] == "=":
            code = text[i:i + 3]
            if code == "=3D":
                out.append("=")
            elif code == "=2C":
                out.append(",")
            else:
                return None
            i += 3
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


# ---------------------------------------------------------------------------------------------------- the server
class ScramServer:
    """One login. ``credentials(user)`` gives the stored credential of ``user`` for this mechanism, or None."""

    def __init__(self, mechanism: str, credentials: Callable[[str], Credential | None],
                 new_nonce: Callable[[], str]) -> None:
        self.mechanism = mechanism
        self.hash = MECHANISMS[mechanism][0]
        self.credentials = credentials
        self.new_nonce = new_nonce  # the server's part of the nonce (``server_nonce`` of 130 random bits)
        self._first: tuple | None = None  # (gs2 header, client-first-bare, server-first, nonce, user, credential)

    def evaluate(self, token: bytes) -> Step:
        try:
            text = bytes(token).decode("utf-8")
        except UnicodeDecodeError:
            return Step(b"", None, "a SCRAM message is not UTF-8")
        return self._client_first(text) if self._first is None else self._client_final(text)

    def _client_first(self, text: str) -> Step:
        parts = text.split(",")
        if len(parts) < 4 or parts[0] != "n" or (parts[1] and not parts[1].startswith("a=")):
            return Step(b"", None, "the client-first message is not 'n,[a=<authzid>],n=<user>,r=<nonce>'")
        name, nonce = parts[2], parts[3]
        if not name.startswith("n=") or not nonce.startswith("r=") or len(nonce) < 3:
            return Step(b"", None, "the client-first message lacks n= or r=")
        user = _unescape_name(name[2:])
        if not user:
            return Step(b"", None, "the user name is empty or badly escaped")
        if parts[1] and _unescape_name(parts[1][2:]) != user:
            return Step(b"", None, "the authorization id is not the user")
        for ext in parts[4:]:
            if "=" not in ext or ext.startswith("tokenauth="):
                return Step(b"", None, "an extension kraftwire does not accept (delegation tokens are not supported)")
        cred = self.credentials(user)
        if cred is None:
            return Step(b"", None, f"no {self.mechanism} credential for user {user!r}")
        if not MIN_ITERATIONS <= cred.iterations <= MAX_ITERATIONS:
            return Step(b"", None, f"the stored credential of {user!r} has {cred.iterations} iterations")
        full_nonce = nonce[2:] + self.new_nonce()
        server_first = f"r={full_nonce},s={base64.b64encode(cred.salt).decode()},i={cred.iterations}"
        gs2 = ",".join(parts[:2]) + ","
        self._first = (gs2, ",".join(parts[2:]), server_first, full_nonce, user, cred)
        return Step(server_first.encode(), None, None)

    def _client_final(self, text: str) -> Step:
        gs2, first_bare, server_first, nonce, user, cred = self._first
        head, sep, proof = text.rpartition(",p=")
        fields = head.split(",") if sep else []
        if len(fields) < 2 or not fields[0].startswith("c=") or not fields[1].startswith("r="):
            return Step(b"", None, "the client-final message is not 'c=...,r=...,p=...'")
        try:
            binding = base64.b64decode(fields[0][2:], validate=True)
            client_proof = base64.b64decode(proof, validate=True)
        except ValueError:
            return Step(b"", None, "bad base64 in the client-final message")
        if binding != gs2.encode():
            return Step(b"", None, "the channel binding does not repeat the gs2 header")
        if not fields[1][2:].endswith(nonce):
            # Kafka's ScramSaslServer takes a nonce that ends with the server's (librdkafka 2.0 sends the client
            # nonce once more in front); the proof below is over the message as sent, so nothing is weakened
            return Step(b"", None, "the nonce is not the server's")
        auth_message = f"{first_bare},{server_first},{head}".encode()
        signature = _hmac(self.hash, cred.stored_key, auth_message)
        if len(client_proof) != len(signature):
            return Step(b"", None, "the client proof has the wrong length")
        client_key = bytes(a ^ b for a, b in zip(client_proof, signature))
        if not hmac.compare_digest(hashlib.new(self.hash, client_key).digest(), cred.stored_key):
            return Step(b"", None, f"invalid credentials for user {user!r}")
        server_signature = _hmac(self.hash, cred.server_key, auth_message)
        return Step(b"v=" + base64.b64encode(server_signature), f"User:{user}", None)


def lookup(store: Mapping[tuple[str, int], Credential], mechanism: str) -> Callable[[str], Credential | None]:
    """A credential source over ``{(user, mechanism byte): Credential}``."""
    code = MECHANISMS[mechanism][1]
    return lambda user: store.get((user, code))


# ---------------------------------------------------------------------------------------------------- --add-scram
class ScramArgError(ValueError):
    pass


_ARG_KEYS = ("name", "password", "salt", "saltedpassword", "iterations")


def parse_add_scram(text: str, random_salt: Callable[[], bytes]) -> tuple[str, str, Credential]:
    """``kafka-storage format --add-scram`` syntax: ``SCRAM-SHA-256=[name=alice,password=alice-secret]``, or
    ``SCRAM-SHA-512=[name=alice,iterations=8192,salt="N3E=",saltedpassword="YCE="]`` (salt and salted password in
    base64). Values may be double-quoted; iterations default to 4096 and must lie in [4096, 16384]. Returns
    (mechanism, user name, credential)."""
    mechanism, sep, rest = text.partition("=")
    mechanism = mechanism.strip().upper()
    if not sep or mechanism not in MECHANISMS:
        raise ScramArgError(f"{text!r}: expected SCRAM-SHA-256=[...] or SCRAM-SHA-512=[...]")
    rest = rest.strip()
    if not (rest.startswith("[") and rest.endswith("]")):
        raise ScramArgError(f"{text!r}: the settings go in square brackets: {mechanism}=[name=...,password=...]")
    values: dict[str, str] = {}
    for item in _split_items(rest[1:-1]):
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if not eq or key not in _ARG_KEYS:
            raise ScramArgError(f"{text!r}: unknown setting {item!r} (known: {', '.join(_ARG_KEYS)})")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        values[key] = value
    name = values.get("name")
    if not name:
        raise ScramArgError(f"{text!r}: name=... is required")
    try:
        iterations = int(values.get("iterations", MIN_ITERATIONS))
    except ValueError:
        raise ScramArgError(f"{text!r}: iterations must be a number") from None
    if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
        raise ScramArgError(f"{text!r}: iterations must lie in [{MIN_ITERATIONS}, {MAX_ITERATIONS}]")
    try:
        salt = base64.b64decode(values["salt"], validate=True) if "salt" in values else random_salt()
        if "saltedpassword" in values:
            if "salt" not in values or "password" in values:
                raise ScramArgError(f"{text!r}: saltedpassword needs salt and excludes password")
            cred = credential_from_salted(mechanism, base64.b64decode(values["saltedpassword"], validate=True), salt,
                                          iterations)
        elif "password" in values:
            cred = credential(mechanism, values["password"], salt, iterations)
        else:
            raise ScramArgError(f"{text!r}: password=... (or salt and saltedpassword) is required")
    except (ValueError, TypeError) as exc:
        if isinstance(exc, ScramArgError):
            raise
        raise ScramArgError(f"{text!r}: salt and saltedpassword are base64") from None
    return mechanism, name, cred


def _split_items(text: str) -> list[str]:
    items, cur, quoted = [], [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur or items:
        items.append("".join(cur))
    return [i for i in items if i.strip()]


# ---------------------------------------------------------------------------------------------------- the client
class ScramClient:
    """The client side of one login (admin tools with ``--command-config``): ``first()``, then ``final(server_first)``,
    then ``verify(server_final)``; ``ValueError`` when the server's messages are wrong."""

    def __init__(self, mechanism: str, username: str, password: str, client_nonce: str) -> None:
        self.mechanism = mechanism
        self.hash = MECHANISMS[mechanism][0]
        self.username = username
        self.password = password
        self.nonce = client_nonce
        self._first_bare = "n=" + username.replace("=", "=3D").replace(",", "=2C") + ",r=" + client_nonce
        self._expected_final: bytes | None = None

    def first(self) -> bytes:
        return ("n,," + self._first_bare).encode()

    def final(self, server_first: bytes) -> bytes:
        text = bytes(server_first).decode("utf-8")
        fields = dict(f.split("=", 1) for f in text.split(",") if "=" in f)
        nonce, salt, iterations = fields.get("r", ""), fields.get("s"), fields.get("i", "")
        if not nonce.startswith(self.nonce) or len(nonce) == len(self.nonce) or salt is None or not iterations.isdigit():
            raise ValueError("the server-first message is not r=<our nonce + theirs>,s=<salt>,i=<iterations>")
        if not MIN_ITERATIONS <= int(iterations) <= MAX_ITERATIONS:
            raise ValueError(f"the server asks for {iterations} iterations")
        salted = salted_password(self.mechanism, self.password, base64.b64decode(salt), int(iterations))
        client_key = _hmac(self.hash, salted, b"Client Key")
        stored = hashlib.new(self.hash, client_key).digest()
        without_proof = f"c=biws,r={nonce}"
        auth = f"{self._first_bare},{text},{without_proof}".encode()
        proof = bytes(a ^ b for a, b in zip(client_key, _hmac(self.hash, stored, auth)))
        server_key = _hmac(self.hash, salted, b"Server Key")
        self._expected_final = b"v=" + base64.b64encode(_hmac(self.hash, server_key, auth))
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> None:
        if self._expected_final is None or not hmac.compare_digest(bytes(server_final), self._expected_final):
            raise ValueError("the server's signature is wrong: it does not know our credential")
