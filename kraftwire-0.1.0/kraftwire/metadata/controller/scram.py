"""SCRAM credentials: the active controller's ScramControlManager (AlterUserScramCredentials) and the image's answer
to DescribeUserScramCredentials, pure.

AlterUserScramCredentials carries deletions {name, mechanism} and upsertions {name, mechanism, iterations, salt,
salted password}; the client salts the password, the controller derives StoredKey and ServerKey from the salted
password (Kafka's ScramFormatter) and writes a UserScramCredentialRecord, or a RemoveUserScramCredentialRecord for a
deletion. Every user gets one result; a user is refused as a whole and the others still go through (the records of
the request are one atomic batch), with Kafka's codes and messages:

* a user named in more than one alteration of the request (deletions and upsertions together, whatever the
  mechanisms): DUPLICATE_RESOURCE, so a request may alter one credential per user (Kafka's admin client sends every
  alteration of ``kafka-configs.sh --alter`` in one request: two mechanisms for one user are refused);
* ``metadata.version`` below 3.5-IV2: UNSUPPORTED_VERSION;
* an empty user name, or iterations below the mechanism's minimum (4096) or above 16384: UNACCEPTABLE_CREDENTIAL;
* a mechanism other than SCRAM-SHA-256 (1) or SCRAM-SHA-512 (2): UNSUPPORTED_SASL_MECHANISM;
* deleting a credential the image does not hold: RESOURCE_NOT_FOUND;
* an empty salted password (Java refuses an empty HMAC key): UNKNOWN_SERVER_ERROR without a message.

The first refusal of a user wins and the later alterations of that user are not looked at. Results come as Kafka's
do: the deleted users, then the upserted ones, then the refused ones, each group in ``java.util.HashMap`` order of
the user names (the maps Kafka's controller collects them in); records follow the same order.

DescribeUserScramCredentials is answered from the image (Kafka's ScramImage.describe): no users (null or empty) means
every user holding a credential; a user named twice gets DUPLICATE_RESOURCE, a user without credentials
RESOURCE_NOT_FOUND, the others their {mechanism, iterations} list.
"""

from __future__ import annotations

from typing import Iterable

from kraftwire.error_codes import (
    DUPLICATE_RESOURCE,
    NONE,
    RESOURCE_NOT_FOUND,
    UNACCEPTABLE_CREDENTIAL,
    UNKNOWN_SERVER_ERROR,
    UNSUPPORTED_SASL_MECHANISM,
    UNSUPPORTED_VERSION,
)
from kraftwire.metadata.controller.result import ControllerResult
from kraftwire.metadata.image import MetadataImage
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.protocol import messages as m
from kraftwire.security.sasl import scram as formatter
from kraftwire.java_order import string_hash

#: the first metadata.version whose log may hold SCRAM credentials (Kafka's MetadataVersion.isScramSupported)
SCRAM_SUPPORTED_FROM = "3.5-IV2"
#: Kafka's ScramMechanism per-mechanism minimum and ScramControlManager.MAX_ITERATIONS
MIN_ITERATIONS = {1: 4096, 2: 4096}
MAX_ITERATIONS = 16384

DUPLICATE = "A user credential cannot be altered twice in the same request"
UNSUPPORTED = "The current metadata.version does not support SCRAM"
EMPTY_USER = "Username must not be empty"
UNKNOWN_MECHANISM = "Unknown SCRAM mechanism"
TOO_FEW = "Too few iterations"
TOO_MANY = "Too many iterations"
NOT_THERE = "Attempt to delete a user credential that does not exist"
DESCRIBE_DUPLICATE = "Cannot describe SCRAM credentials for the same user twice in a single request: "
DESCRIBE_MISSING = "Attempt to describe a user credential that does not exist: "

_Error = tuple[int, "str | None"]


def is_supported(image: MetadataImage) -> bool:
    mv = image.metadata_version
    return mv is not None and mv.at_least(SCRAM_SUPPORTED_FROM)


# ------------------------------------------------------------------------------------------------ alter
def alter_credentials(image: MetadataImage, req) -> ControllerResult:
    supported = is_supported(image)
    deletions, upserts = _JavaMap(), _JavaMap()
    errors = _JavaMap()
    for d in req.deletions:
        if d.name in errors:
            continue
        if deletions.pop(d.name):
            errors.put(d.name, (DUPLICATE_RESOURCE, DUPLICATE))
        elif not supported:
            errors.put(d.name, (UNSUPPORTED_VERSION, UNSUPPORTED))
        else:
            error = _deletion_error(image, d)
            if error is None:
                deletions.put(d.name, d)
            else:
                errors.put(d.name, error)
    for u in req.upsertions:
        if u.name in errors:
            continue
        if deletions.pop(u.name) or upserts.pop(u.name):
            errors.put(u.name, (DUPLICATE_RESOURCE, DUPLICATE))
        elif not supported:
            errors.put(u.name, (UNSUPPORTED_VERSION, UNSUPPORTED))
        else:
            error = _upsertion_error(u)
            if error is None:
                upserts.put(u.name, u)
            else:
                errors.put(u.name, error)
    R = m.AlterUserScramCredentialsResponse
    results, records = [], []
    for d in deletions.values():
        results.append(R.AlterUserScramCredentialsResult(user=d.name, error_code=NONE, error_message=None))
        records.append(ApiMessageAndVersion(m.RemoveUserScramCredentialRecord(name=d.name, mechanism=d.mechanism), 0))
    upserted = 0
    for u in upserts.values():
        if not u.salted_password:
            errors.put(u.name, (UNKNOWN_SERVER_ERROR, None))
            continue
        records.append(ApiMessageAndVersion(_credential_record(u), 0))
        results.append(R.AlterUserScramCredentialsResult(user=u.name, error_code=NONE, error_message=None))
        upserted += 1
    for name, (code, message) in errors.items():
        results.append(R.AlterUserScramCredentialsResult(user=name, error_code=code, error_message=message))
    event = ""
    if records:
        event = f"SCRAM credentials: {upserted} upserted, {len(deletions)} deleted"
    return ControllerResult(tuple(records), R(throttle_time_ms=0, results=results), event)


def _name_and_mechanism_error(name: str, mechanism: int) -> _Error | None:
    if not name:
        return UNACCEPTABLE_CREDENTIAL, EMPTY_USER
    if mechanism not in formatter.BY_TYPE:
        return UNSUPPORTED_SASL_MECHANISM, UNKNOWN_MECHANISM
    return None


def _deletion_error(image: MetadataImage, d) -> _Error | None:
    error = _name_and_mechanism_error(d.name, d.mechanism)
    if error is None and (d.mechanism, d.name) not in image.scram:
        error = RESOURCE_NOT_FOUND, NOT_THERE
    return error


def _upsertion_error(u) -> _Error | None:
    error = _name_and_mechanism_error(u.name, u.mechanism)
    if error is not None:
        return error
    if u.iterations < MIN_ITERATIONS[u.mechanism]:
        return UNACCEPTABLE_CREDENTIAL, TOO_FEW
    if u.iterations > MAX_ITERATIONS:
        return UNACCEPTABLE_CREDENTIAL, TOO_MANY
    return None


def _credential_record(u) -> m.UserScramCredentialRecord:
    """StoredKey and ServerKey from the client's salted password; the password itself is never seen."""
    cred = formatter.credential_from_salted(formatter.BY_TYPE[u.mechanism], bytes(u.salted_password), bytes(u.salt),
                                            u.iterations)
    return m.UserScramCredentialRecord(name=u.name, mechanism=u.mechanism, salt=cred.salt, stored_key=cred.stored_key,
                                       server_key=cred.server_key, iterations=u.iterations)


# ------------------------------------------------------------------------------------------------ describe
def describe_credentials(image: MetadataImage, req) -> m.DescribeUserScramCredentialsResponse:
    R = m.DescribeUserScramCredentialsResponse
    named = _JavaMap()  # user -> named more than once
    if not req.users:
        for mechanism, user in sorted(image.scram):
            named.put(user, False)
    else:
        for u in req.users:
            named.put(u.name, u.name in named)
    results = []
    for user, duplicate in named.items():
        if duplicate:
            results.append(R.DescribeUserScramCredentialsResult(
                user=user, error_code=DUPLICATE_RESOURCE, error_message=DESCRIBE_DUPLICATE + user, credential_infos=[]))
            continue
        infos = [R.CredentialInfo(mechanism=mech, iterations=image.scram[(mech, user)].iterations)
                 for mech in sorted(formatter.BY_TYPE) if (mech, user) in image.scram]
        if infos:
            results.append(R.DescribeUserScramCredentialsResult(user=user, error_code=NONE, error_message="",
                                                                credential_infos=infos))
        else:
            results.append(R.DescribeUserScramCredentialsResult(
                user=user, error_code=RESOURCE_NOT_FOUND, error_message=DESCRIBE_MISSING + user, credential_infos=[]))
    # Kafka's metadata cache leaves the messages of an answer without error at their default, empty
    return R(throttle_time_ms=0, error_code=NONE, error_message="", results=results)


# ------------------------------------------------------------------------------------------------ Java's order
class _JavaMap:
    """A ``java.util.HashMap<String, V>`` as far as its iteration order goes: buckets of the spread String hash over
    a table that has grown (never shrunk) to keep the largest size the map reached at most three quarters full;
    a bucket keeps insertion order (a bucket of eight or more keys, which Java turns into a tree, is not modelled).
    A key here is never put again once removed, as in the controller's maps."""

    def __init__(self) -> None:
        self._items: dict[str, object] = {}
        self._capacity = 16

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def put(self, key: str, value) -> None:
        self._items[key] = value
        while len(self._items) > self._capacity * 3 // 4:
            self._capacity *= 2

    def pop(self, key: str) -> bool:
        """Remove ``key``; whether it was there."""
        return self._items.pop(key, _MISSING) is not _MISSING

    def keys(self) -> list[str]:
        return _bucket_order(self._items, self._capacity)

    def values(self) -> list:
        return [self._items[k] for k in self.keys()]

    def items(self) -> list[tuple[str, object]]:
        return [(k, self._items[k]) for k in self.keys()]


_MISSING = object()


def _bucket_order(keys: Iterable[str], capacity: int) -> list[str]:
    def bucket(key: str) -> int:
        h = string_hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return [k for _, _, k in sorted((bucket(k), i, k) for i, k in enumerate(keys))]
