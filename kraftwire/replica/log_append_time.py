"""``message.timestamp.type=LogAppendTime`` on the leader's append path (Kafka's LogValidator), pure.

Every produced data batch is stamped in place, as Kafka stamps a v2 batch: the Attributes' timestamp-type bit says
LogAppendTime and MaxTimestamp becomes the leader's clock at the append; the records and their own timestamps are
left as they are (a reader of a LogAppendTime batch takes MaxTimestamp as every record's timestamp) and the CRC is
computed again. The Produce answer carries that time (``log_append_time_ms``). A CreateTime topic keeps batches as
produced and answers -1.
"""

from __future__ import annotations

import struct

import crc32c

from kraftwire.records import read_batches
from kraftwire.records.api import ATTRIBUTES_POS, CRC_POS, CRC_START, MAX_TIMESTAMP_POS, TIMESTAMP_TYPE_MASK

_I16 = struct.Struct(">h")
_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")


def log_append_time(cfg) -> bool:
    """Whether a topic's effective configuration keeps the log's own clock (``message.timestamp.type``)."""
    return (cfg.get("message.timestamp.type") or "CreateTime") == "LogAppendTime"


def stamp(raw: bytes, now_ms: int, batches=None) -> bytes:
    """``raw`` (validated data batches) with each batch marked LogAppendTime at ``now_ms``. ``batches``: the headers
    of ``raw`` when the caller read them (``validate_batches(..., headers=True)``), else they are read here."""
    out = bytearray(raw)
    for batch in read_batches(raw, validate=False) if batches is None else batches:
        pos = batch.position
        attributes = _I16.unpack_from(out, pos + ATTRIBUTES_POS)[0] | TIMESTAMP_TYPE_MASK
        _I16.pack_into(out, pos + ATTRIBUTES_POS, attributes)
        _I64.pack_into(out, pos + MAX_TIMESTAMP_POS, now_ms)
        end = pos + batch.size_in_bytes
        _U32.pack_into(out, pos + CRC_POS, crc32c.crc32c(bytes(out[pos + CRC_START:end])))
    return bytes(out)
