"""SaslHandshake, SaslAuthenticate, DescribeUserScramCredentials and AlterUserScramCredentials on the "sasl-acl"
pair, at every version both serve. The SASL exchanges run on one bare connection per scenario (``connection``,
no login of the runner's): an unknown or lower-case mechanism (UNSUPPORTED_SASL_MECHANISM with the enabled list),
PLAIN and SCRAM-SHA-256 logins that succeed, a wrong password, an unknown user, malformed tokens
(SASL_AUTHENTICATION_FAILED with the server's message), requests before or instead of the next expected step (the
connection closed), and a second login on an authenticated connection (KIP-368 re-authentication). The credential
scenarios name users of their own (``{ns}.u``): upserted, described, logged in with, deleted; refused input —
an unknown mechanism, iterations out of range, a user named twice, a missing credential, an empty name — and a
non-super user refused."""

from __future__ import annotations

import hashlib

from conformance.acl_steps import ALICE, as_user
from conformance.pair import SASL_USERS
from conformance.runner import Built, Learned, Step, each_version

from kraftwire.protocol import messages as w
from kraftwire.security.sasl.scram import ScramClient, salted_password

SCRAM = "SCRAM-SHA-256"
SCRAM_256 = 1  # Kafka's ScramMechanism byte
#: the client nonce of every SCRAM exchange here (fixed, so both nodes see the same client messages)
NONCE = "conformancenonce0123456789"
C = "sasl"  # the scenario's one connection
MD = w.MetadataRequest
USER = "{ns}.u"
SALT = b"conformance-salt"


def handshake(version: int, mechanism: str) -> Step:
    return Step(w.SaslHandshakeRequest(mechanism=mechanism), version, login=None, connection=C)


def authenticate(version: int, token) -> Step:
    return Step(w.SaslAuthenticateRequest(auth_bytes=token), version, login=None, connection=C)


def then_metadata() -> Step:
    """A request on the connection after the exchange: answered once logged in, else the connection is closed."""
    return Step(MD(topics=[]), 12, login=None, connection=C)


def plain(user: str, password: str) -> bytes:
    return b"\0" + user.encode() + b"\0" + password.encode()


def scram_first(user: str) -> bytes:
    return ScramClient(SCRAM, user, "", NONCE).first()


def _scram_final(server_first, user: str, password: str) -> bytes:
    """The client-final message answering a side's server-first message (empty when that side gave none)."""
    client = ScramClient(SCRAM, user, password, NONCE)
    client.first()
    try:
        return client.final(bytes(server_first or b""))
    except ValueError:
        return b""


def scram_final(user: str, password: str, at: str = "SaslAuthenticate") -> Built:
    return Built(_scram_final, server_first=Learned("auth_bytes", at=at), user=user, password=password)


def scram_login(v: int, user: str, password: str, first_at: str = "SaslAuthenticate") -> list[Step]:
    """SaslHandshake v1 and the two SaslAuthenticate messages of a SCRAM-SHA-256 login at version ``v``."""
    return [handshake(1, SCRAM), authenticate(v, scram_first(user)),
            authenticate(v, scram_final(user, password, first_at))]


ALICE_PASSWORD = SASL_USERS[ALICE]

HANDSHAKE = {
    "unknown-mechanism": lambda v: [handshake(v, "GSSAPI"), then_metadata()],
    "lower-case": lambda v: [handshake(v, "plain")],
    "empty-mechanism": lambda v: [handshake(v, "")],
    "plain": lambda v: [handshake(v, "PLAIN")],
    "scram": lambda v: [handshake(v, SCRAM)],
    "twice": lambda v: [handshake(1, "PLAIN"), handshake(v, "PLAIN")],
    "after-login": lambda v: [handshake(1, "PLAIN"), authenticate(2, plain(ALICE, ALICE_PASSWORD)),
                              handshake(v, "PLAIN"), then_metadata()],
}

AUTHENTICATE = {
    "plain": lambda v: [handshake(1, "PLAIN"), authenticate(v, plain(ALICE, ALICE_PASSWORD)), then_metadata()],
    "plain-wrong-password": lambda v: [handshake(1, "PLAIN"), authenticate(v, plain(ALICE, "wrong")),
                                       then_metadata()],
    "plain-unknown-user": lambda v: [handshake(1, "PLAIN"), authenticate(v, plain("{ns}-nobody", "x"))],
    "plain-malformed": lambda v: [handshake(1, "PLAIN"), authenticate(v, b"no separators")],
    "plain-authorization-id": lambda v: [handshake(1, "PLAIN"),
                                         authenticate(v, b"bob" + plain(ALICE, ALICE_PASSWORD))],
    "scram": lambda v: [*scram_login(v, ALICE, ALICE_PASSWORD), then_metadata()],
    "scram-wrong-password": lambda v: [*scram_login(v, ALICE, "wrong"), then_metadata()],
    "scram-unknown-user": lambda v: [handshake(1, SCRAM), authenticate(v, scram_first("{ns}-nobody"))],
    "scram-malformed-first": lambda v: [handshake(1, SCRAM), authenticate(v, b"n,,garbage")],
    "scram-wrong-nonce": lambda v: [handshake(1, SCRAM), authenticate(v, scram_first(ALICE)),
                                    authenticate(v, b"c=biws,r=" + NONCE.encode() + b"x,p=AAAA")],
    "before-handshake": lambda v: [authenticate(v, plain(ALICE, ALICE_PASSWORD))],
    "request-before-login": lambda v: [then_metadata()],
    "api-versions-before-login": lambda v: [
        Step(w.ApiVersionsRequest(client_software_name="conformance", client_software_version="1"), 3, login=None,
             connection=C), handshake(1, "PLAIN"), authenticate(v, plain(ALICE, ALICE_PASSWORD))],
    "reauthenticate": lambda v: [handshake(1, "PLAIN"), authenticate(v, plain(ALICE, ALICE_PASSWORD)),
                                 handshake(1, "PLAIN"), authenticate(v, plain(ALICE, ALICE_PASSWORD)),
                                 then_metadata()] if v >= 1 else None,
    "reauthenticate-as-another": lambda v: [handshake(1, "PLAIN"), authenticate(v, plain(ALICE, ALICE_PASSWORD)),
                                            handshake(1, "PLAIN"), authenticate(v, plain("bob", SASL_USERS["bob"])),
                                            then_metadata()] if v >= 1 else None,
}

# ------------------------------------------------------------------------------------------------- credentials
AU, DU = w.AlterUserScramCredentialsRequest, w.DescribeUserScramCredentialsRequest


def upsert(name: str = USER, password: str = "u-secret", *, mechanism: int = SCRAM_256, iterations: int = 4096,
           salt: bytes = SALT, salted: bytes | None = None) -> AU.ScramCredentialUpsertion:
    if salted is None:
        salted = salted_password(SCRAM, password, salt, max(iterations, 1)) if mechanism == SCRAM_256 else \
            hashlib.sha512(password.encode()).digest()
    return AU.ScramCredentialUpsertion(name=name, mechanism=mechanism, iterations=iterations, salt=salt,
                                       salted_password=salted)


def deletion(name: str = USER, mechanism: int = SCRAM_256) -> AU.ScramCredentialDeletion:
    return AU.ScramCredentialDeletion(name=name, mechanism=mechanism)


def alter(*changes) -> Step:
    return Step(AU(upsertions=[c for c in changes if isinstance(c, AU.ScramCredentialUpsertion)],
                   deletions=[c for c in changes if isinstance(c, AU.ScramCredentialDeletion)]), 0)


def describe(*names: str, until=None) -> Step:
    """DescribeUserScramCredentials of ``names`` (none: every user, scoped to this scenario's)."""
    return Step(DU(users=[DU.UserName(name=n) for n in names] if names else None), 0, until=until,
                scope=not names)


def _described(answer) -> bool:
    """``until``: every user asked has a credential (a broker learns a new one a moment after the controller)."""
    return not answer.error_code and all(r.error_code == 0 for r in answer.results)


def _gone(answer) -> bool:
    """``until``: no user asked has a credential any more (a broker forgets a deleted one a moment after the
    controller: Kafka's describe right after the deletion was seen to list it still)."""
    return not answer.error_code and all(r.error_code != 0 for r in answer.results)


ALTER = {
    "upsert-and-login": lambda v: [alter(upsert()), describe(USER, until=_described),
                                   *scram_login(2, USER, "u-secret"), then_metadata()],
    "upsert-twice": lambda v: [alter(upsert()), alter(upsert(password="other", iterations=8192)),
                               describe(USER, until=_described)],
    "delete": lambda v: [alter(upsert()), describe(USER, until=_described), alter(deletion()),
                         describe(USER, until=_gone),
                         *scram_login(2, USER, "u-secret")],
    "delete-missing": lambda v: [alter(deletion())],
    "unknown-mechanism": lambda v: [alter(upsert(mechanism=0), deletion("{ns}.v", mechanism=3))],
    "too-few-iterations": lambda v: [alter(upsert(iterations=1000))],
    "too-many-iterations": lambda v: [alter(upsert(iterations=20000))],
    "user-twice": lambda v: [alter(upsert(), deletion()), alter(upsert(), upsert(iterations=8192))],
    "empty-name": lambda v: [alter(upsert(name=""), deletion(name=""))],
    "empty-salt": lambda v: [alter(upsert(salt=b""))],
    "empty-password": lambda v: [alter(upsert(salted=b""))],
    "several": lambda v: [alter(upsert(), upsert(name="{ns}.w"), deletion("{ns}.missing")),
                          describe(USER, "{ns}.w", until=_described), describe()],
    "not-super-user": lambda v: [*as_user(ALICE, alter(upsert())), describe(USER)],
}

DESCRIBE = {
    "named": lambda v: [describe(ALICE, "bob")],
    "unknown-user": lambda v: [describe(ALICE, "{ns}.missing")],
    "duplicate": lambda v: [describe(ALICE, ALICE, "{ns}.missing", "{ns}.missing")],
    "empty-name": lambda v: [describe("")],
    "all": lambda v: [alter(upsert()), describe(USER, until=_described), describe()],
    "empty-list": lambda v: [Step(DU(users=[]), v, scope=True)],
    "not-super-user": lambda v: as_user(ALICE, describe(ALICE)),
}

SCENARIOS = [*each_version("SaslHandshake", HANDSHAKE, config="sasl-acl"),
             *each_version("SaslAuthenticate", AUTHENTICATE, config="sasl-acl"),
             *each_version("AlterUserScramCredentials", ALTER, config="sasl-acl"),
             *each_version("DescribeUserScramCredentials", DESCRIBE, config="sasl-acl")]
