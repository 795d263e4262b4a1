"""The records of the coordinators' internal topics, in Kafka's byte layout (``CoordinatorRecordSerde``).

Each is a plain (not control) record with a key and a value::

    key    int16 record type (the key's api key: LegacyOffsetCommitKey 0, OffsetCommitKey 1, GroupMetadataKey 2,
           ConsumerGroupMetadataKey 3, ...; TransactionLogKey 0), then the key's fields at version 0
    value  int16 value version, then the value's fields at that version; a null value is a tombstone

``__share_group_state`` (the share coordinator's) has its own types: ShareSnapshotKey 0 and ShareUpdateKey 1.
The declarations are generated from Kafka's JSON into ``kraftwire.protocol.schemas`` (kind ``coordinator``), so
Kafka's own formatters read what kraftwire writes. A key or value that cannot be read is a
``CoordinatorRecordError`` naming what was wrong; loading a partition stops on it rather than guessing.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kraftwire.errors import KraftwireError, ProtocolError
from kraftwire.protocol import codec, messages
from kraftwire.protocol.messages import MessageBase

_INT16 = struct.Struct(">h")


class CoordinatorRecordError(KraftwireError):
    """A key or value of an internal topic that cannot be read."""


def _pairs(prefix_filter) -> dict[int, tuple[type, type]]:
    """record type -> (key class, value class) for the declared keys whose name passes ``prefix_filter``; a key and
    its value share the record type as their api key."""
    out: dict[int, tuple[type, type]] = {}
    for name, cls in messages.MESSAGES.items():
        if cls.KIND != "coordinator" or not name.endswith("Key") or not prefix_filter(name):
            continue
        if cls.API_KEY in out:
            raise ProtocolError(f"record type {cls.API_KEY} is both {out[cls.API_KEY][0].NAME} and {name}")
        out[cls.API_KEY] = (cls, messages.MESSAGES[name[: -len("Key")] + "Value"])
    return out


#: the share coordinator's ``__share_group_state`` records, which reuse types 0 and 1
_SHARE_STATE = ("ShareSnapshot", "ShareUpdate")
#: ``__consumer_offsets``: record type -> (key class, value class)
GROUP_RECORDS = _pairs(lambda n: not n.startswith(("TransactionLog",) + _SHARE_STATE))
#: ``__transaction_state``: record type -> (key class, value class)
TRANSACTION_RECORDS = _pairs(lambda n: n.startswith("TransactionLog"))
#: ``__share_group_state``: record type -> (key class, value class)
SHARE_STATE_RECORDS = _pairs(lambda n: n.startswith(_SHARE_STATE))

#: the versions kraftwire writes (Kafka's choice: the newest non-flexible one for the classic records)
OFFSET_COMMIT_KEY_TYPE = 1
GROUP_METADATA_KEY_TYPE = 2
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1
GROUP_METADATA_VALUE_VERSION = 3


class CoordinatorRecord(NamedTuple):
    """A decoded record: its type, its key, and its value (None for a tombstone) with the value's version."""

    record_type: int
    key: MessageBase
    value: MessageBase | None
    value_version: int = -1


def encode_key(key: MessageBase, record_type: int) -> bytes:
    if record_type != key.API_KEY:
        raise CoordinatorRecordError(f"{key.NAME} is record type {key.API_KEY}, not {record_type}")
    return _INT16.pack(record_type) + codec.encode(key, 0)


def encode_value(value: MessageBase | None, version: int) -> bytes | None:
    if value is None:
        return None
    lo, hi = value.VALID_VERSIONS
    if not lo <= version <= hi:
        raise CoordinatorRecordError(f"{value.NAME} has versions {lo}-{hi}, not {version}")
    return _INT16.pack(version) + codec.encode(value, version)


def decode(key: bytes | memoryview | None, value: bytes | memoryview | None,
           table: dict[int, tuple[type, type]] = GROUP_RECORDS) -> CoordinatorRecord:
    """Read one record of an internal topic (``table``: ``GROUP_RECORDS``, ``TRANSACTION_RECORDS`` or
    ``SHARE_STATE_RECORDS``)."""
    if key is None or len(key) < 2:
        raise CoordinatorRecordError("a coordinator record needs a key of at least 2 bytes")
    record_type = _INT16.unpack_from(key, 0)[0]
    pair = table.get(record_type)
    if pair is None:
        raise CoordinatorRecordError(f"unknown coordinator record type {record_type}")
    key_cls, value_cls = pair
    try:
        k = codec.decode(key_cls, memoryview(key)[2:], 0)
    except ProtocolError as exc:
        raise CoordinatorRecordError(f"malformed {key_cls.NAME}: {exc}") from None
    if value is None:
        return CoordinatorRecord(record_type, k, None)
    if len(value) < 2:
        raise CoordinatorRecordError(f"the value of a {key_cls.NAME} is {len(value)} bytes, too short for a version")
    version = _INT16.unpack_from(value, 0)[0]
    lo, hi = value_cls.VALID_VERSIONS
    if not lo <= version <= hi:
        raise CoordinatorRecordError(f"{value_cls.NAME} version {version} is not supported (versions {lo}-{hi})")
    try:
        v = codec.decode(value_cls, memoryview(value)[2:], version)
    except ProtocolError as exc:
        raise CoordinatorRecordError(f"malformed {value_cls.NAME} v{version}: {exc}") from None
    return CoordinatorRecord(record_type, k, v, version)


# ------------------------------------------------------------------------------------------------ the classic records
def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    return encode_key(messages.OffsetCommitKey(group=group, topic=topic, partition=partition), OFFSET_COMMIT_KEY_TYPE)


def offset_commit_value(offset: int, leader_epoch: int, metadata: str, commit_timestamp: int,
                        expire_timestamp: int = -1) -> bytes:
    """Kafka writes v3, or v1 when the commit carries an explicit expiry (OffsetCommit v2-v4's retention; -1: none,
    any other value is one, a past time too)."""
    version = OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY if expire_timestamp != -1 else OFFSET_COMMIT_VALUE_VERSION
    return encode_value(messages.OffsetCommitValue(offset=offset, leader_epoch=leader_epoch, metadata=metadata,
                                                   commit_timestamp=commit_timestamp,
                                                   expire_timestamp=expire_timestamp), version)


def group_metadata_key(group: str) -> bytes:
    return encode_key(messages.GroupMetadataKey(group=group), GROUP_METADATA_KEY_TYPE)


def group_metadata_value(value: MessageBase) -> bytes:
    return encode_value(value, GROUP_METADATA_VALUE_VERSION)
