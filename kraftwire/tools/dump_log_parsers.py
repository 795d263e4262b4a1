"""What ``dump-log`` prints for a record's key and value with Kafka's ``--print-data-log`` and its decoders: each
parser maps a record's (key, value) bytes to the ``key: ...`` and ``payload: ...`` texts (None: that part is left
out), as Kafka's DumpLogSegments' message parsers do.

* the default one: the key and the value as UTF-8 text;
* ``--offsets-decoder`` (``__consumer_offsets``) and ``--transaction-log-decoder`` (``__transaction_state``): the key
  as ``{"type":"<record type>","data":{...}}`` and the value as ``{"version":"<version>","data":{...}}``, ``data`` as
  Kafka's generated JSON converters write a message (fields in declaration order, lowerCamel, a tagged field only when
  it differs from its default, uuids and bytes in base64), a tombstone as ``<DELETE>``; the transaction log's
  ``transactionStatus`` by its state's name. A record that cannot be read gives Kafka's ``Error at offset N,
  skipping. <why>`` (``Unknown record type T at offset N, skipping.`` for a type not known).
"""

from __future__ import annotations

import base64
import json
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
        if transaction_log and "transactionStatus" in data:
            status = data["transactionStatus"]
            data["transactionStatus"] = TRANSACTION_STATES[status] if 0 <= status < len(TRANSACTION_STATES) \
                else str(status)
        return key_text, _compact({"version": str(record.value_version), "data": data})

    return parse


offsets = _coordinator(coordinator_records.GROUP_RECORDS, transaction_log=False)
transaction_log = _coordinator(coordinator_records.TRANSACTION_RECORDS, transaction_log=True)
