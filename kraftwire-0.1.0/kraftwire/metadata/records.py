"""Kafka's metadata records as they sit in ``__cluster_metadata`` batches: the serde frame around a record.

A metadata record travels as the *value* of an ordinary (non-control) record whose key is null. The value is::

    unsigned varint  frame version   (always 1)
    unsigned varint  api key         (the record type: RegisterBrokerRecord 0, TopicRecord 2, ...)
    unsigned varint  record version
    the record's fields at that version (every metadata record is flexible: compact types, tagged fields)

Nothing may follow the record: trailing bytes, an unknown frame version, an unknown record type or a version the
declarations do not know are a ``MetadataRecordError`` naming what was wrong — a node stops on it, never skips it.
The declarations are generated from Kafka's specs into ``kraftwire.protocol.schemas`` (kind ``metadata``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kraftwire.errors import KraftwireError, ProtocolError
from kraftwire.protocol import codec, messages
from kraftwire.protocol.messages import MessageBase
from kraftwire.protocol.wire_types import read_uvarint, uvarint_bytes

FRAME_VERSION = 1

#: record type (api key) -> record class, e.g. ``RECORD_TYPES[2] is messages.TopicRecord``
RECORD_TYPES: dict[int, type] = {cls.API_KEY: cls for cls in messages.MESSAGES.values() if cls.KIND == "metadata"}
#: record name -> record class
RECORDS_BY_NAME: dict[str, type] = {cls.NAME: cls for cls in RECORD_TYPES.values()}


def type_name(cls: type) -> str:
    """Kafka's ``MetadataRecordType`` name of a record class: ``RegisterBrokerRecord`` -> ``REGISTER_BROKER_RECORD``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.NAME).upper()


class MetadataRecordError(KraftwireError):
    """A metadata record value that cannot be read: the reason names the byte and what was expected."""


class ApiMessageAndVersion(NamedTuple):
    """A decoded metadata record and the version it was written at (Kafka's name for the pair)."""

    message: MessageBase
    version: int


def encode(record: MessageBase, version: int) -> bytes:
    """The record value of ``record`` at ``version`` (frame version, api key, version, then the record)."""
    cls = type(record)
    if getattr(cls, "KIND", None) != "metadata":
        raise MetadataRecordError(f"{cls.__name__} is not a metadata record")
    lo, hi = cls.VALID_VERSIONS
    if not lo <= version <= hi:
        raise MetadataRecordError(f"{cls.NAME} has versions {lo}-{hi}, not {version}")
    return (uvarint_bytes(FRAME_VERSION) + uvarint_bytes(cls.API_KEY) + uvarint_bytes(version)
            + codec.encode(record, version))


def decode(value) -> ApiMessageAndVersion:
    """Read one record value; ``MetadataRecordError`` for anything Kafka's serde would refuse."""
    view = memoryview(value)
    end = len(view)
    try:
        frame, pos = read_uvarint(view, 0, end, "metadata record frame version")
        if frame != FRAME_VERSION:
            raise MetadataRecordError(f"unsupported metadata record frame version {frame} (expected {FRAME_VERSION})")
        api_key, pos = read_uvarint(view, pos, end, "metadata record type")
        version, pos = read_uvarint(view, pos, end, "metadata record version")
        cls = RECORD_TYPES.get(api_key)
        if cls is None:
            raise MetadataRecordError(f"unknown metadata record type {api_key}")
        lo, hi = cls.VALID_VERSIONS
        if not lo <= version <= hi:
            raise MetadataRecordError(f"{cls.NAME} version {version} is not supported (versions {lo}-{hi})")
        record, pos = codec.decode_from(cls, view, pos, end, version)
    except ProtocolError as exc:
        raise MetadataRecordError(f"malformed metadata record: {exc}") from None
    if pos != end:
        raise MetadataRecordError(f"{cls.NAME} v{version}: {end - pos} trailing bytes after the record")
    return ApiMessageAndVersion(record, version)
