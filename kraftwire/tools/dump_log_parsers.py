"""What ``dump-log`` prints for a record's key and value with Kafka's ``--print-data-log`` and its decoders: each
parser maps a record's (key, value) bytes to the ``key: ...`` and ``payload: ...`` texts (None: that part is left
out), as Kafka's DumpLogSegments' message parsers do.

* the default one: the key and the value as UTF-8 text;
* ``--offsets-decoder`` (``__consumer_offsets``) and ``--transaction-log-decoder`` (``__transaction_state``): the key
  as ``{"type":"<record type>","data":{...}}`` and the value as ``{"version":"<version>","data":{...}}``, ``data`` as
  Kafka's generated JSON converters write a message (fields in declaration order, lowerCamel, a tagged field only when
  it differs from its default, uuids and bytes in base64), a tombstone as ``<DELETE>``; the transaction log's
  ``transactionStatus`` by its state's name; a classic ``consumer`` group's member ``subscription`` and
  ``assignment`` decoded (ConsumerProtocolSubscription / Assignment v0-3) where they read whole, else left in base64. A record that cannot be read gives Kafka's ``Error at offset N,
  skipping. <why>`` (``Unknown record type T at offset N, skipping.`` for a type not known).
"""

from __future__ import annotations

import base64
import json
import struct
import uuid
from typing import Any, Callable, Optional

from kraftwire.coordinator import records as coordinator_records
from kraftwire.ids import uuid_to_base64

Parser = Callable[[int, Optional[bytes], Optional[bytes]], "tuple[str | None, str | None]"]

#: Kafka's TransactionState names by id
TRANSACTION_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
                      "PrepareEpochFence")


def message_json(msg: Any, version: int) -> Any:
    """A protocol message as Kafka's generated JSON converter writes it at ``version``."""
    info = getattr(msg, "_info", None)
    if info is None:
        if isinstance(msg, list):
            return [message_json(x, version) for x in msg]
        if isinstance(msg, uuid.UUID):
            return uuid_to_base64(msg)
        if isinstance(msg, (bytes, bytearray, memoryview)):
            return base64.b64encode(bytes(msg)).decode("ascii")
        return msg
    out = {}
    for f in info.fields:
        if not f.present(version):
            continue
        value = getattr(msg, f.attr)
        if f.is_tagged(version) and (value is None if f.struct is not None else value == f.default):
            continue  # a tagged field at its default is not written
        out[f.name[:1].lower() + f.name[1:]] = message_json(value, version)
    return out


def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def plain(offset: int, key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
    """The default parser: key and value as UTF-8 text."""
    def text(b):
        return None if b is None else bytes(b).decode("utf-8", "replace")

    return text(key), text(value)


class _Reader:
    """The classic (non-flexible) encoding of the consumer protocol's embedded messages."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        value = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return value

    def string(self, nullable: bool = False):
        n = self.take(">h")
        if n < 0 and nullable:
            return None
        text = self.data[self.pos:self.pos + n]
        if n < 0 or len(text) != n:
            raise ValueError("a string runs past the end")
        self.pos += n
        return text.decode("utf-8")

    def blob(self):
        n = self.take(">i")
        if n < 0:
            return None
        raw = self.data[self.pos:self.pos + n]
        if len(raw) != n:
            raise ValueError("bytes run past the end")
        self.pos += n
        return base64.b64encode(raw).decode("ascii")

    def array(self, item) -> list:
        return [item() for _ in range(self.take(">i"))]

    def topic_partitions(self) -> list[dict]:
        return self.array(lambda: {"topic": self.string(), "partitions": self.array(lambda: self.take(">i"))})


def _subscription(data: bytes) -> dict:
    r = _Reader(data)
    version = r.take(">h")
    out = {"topics": r.array(r.string), "userData": r.blob()}
    if version >= 1:
        out["ownedPartitions"] = r.topic_partitions()
    if version >= 2:
        out["generationId"] = r.take(">i")
    if version >= 3:
        out["rackId"] = r.string(nullable=True)
    return out


def _assignment(data: bytes) -> dict:
    r = _Reader(data)
    r.take(">h")
    return {"assignedPartitions": r.topic_partitions(), "userData": r.blob()}


def _consumer_members(data: dict) -> None:
    """A classic consumer group's members with their subscription and assignment decoded in place, as Kafka's
    decoder prints them; what does not read whole (or at a version past 3) stays as it was."""
    if data.get("protocolType") != "consumer":
        return
    for member in data.get("members") or []:
        for field, decode in (("subscription", _subscription), ("assignment", _assignment)):
            raw = member.get(field)
            if not isinstance(raw, str):
                continue
            try:
                blob = base64.b64decode(raw)
                if len(blob) < 2 or not 0 <= struct.unpack_from(">h", blob)[0] <= 3:
                    continue
                member[field] = decode(blob)
            except (ValueError, struct.error, UnicodeDecodeError):
                continue


def _coordinator(table, transaction_log: bool) -> Parser:
    def parse(offset: int, key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
        if key is None:
            return (f"Failed to decode message at offset {offset} using offset topic decoder (message had a missing "
                    "key)"), None
        if len(key) >= 2 and int.from_bytes(bytes(key[:2]), "big", signed=True) not in table:
            return f"Unknown record type {int.from_bytes(bytes(key[:2]), 'big', signed=True)} at offset {offset}, " \
                   "skipping.", None
        try:
            record = coordinator_records.decode(key, value, table)
        except coordinator_records.CoordinatorRecordError as exc:
            return f"Error at offset {offset}, skipping. {exc}", None
        key_text = _compact({"type": str(record.record_type), "data": message_json(record.key, 0)})
        if record.value is None:
            return key_text, "<DELETE>"
        data = message_json(record.value, record.value_version)
        if record.record_type == coordinator_records.GROUP_METADATA_KEY_TYPE and not transaction_log:
            _consumer_members(data)
        if transaction_log and "transactionStatus" in data:
            status = data["transactionStatus"]
            data["transactionStatus"] = TRANSACTION_STATES[status] if 0 <= status < len(TRANSACTION_STATES) \
                else str(status)
        return key_text, _compact({"version": str(record.value_version), "data": data})

    return parse


offsets = _coordinator(coordinator_records.GROUP_RECORDS, transaction_log=False)
transaction_log = _coordinator(coordinator_records.TRANSACTION_RECORDS, transaction_log=True)
