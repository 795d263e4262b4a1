"""Comparing the codec's two implementations (the python twin and the Cython extension).

``load_ext`` imports the extension: an ImportError is a failure — a silently skipped fast path is how codecs rot —
unless the run deliberately disables it with ``KRAFTWIRE_NO_EXT=1`` (``NO_EXT``).
"""

from __future__ import annotations

import importlib
import os
import struct

import crc32c

from kraftwire.errors import CorruptRecordError
from kraftwire.records import api

NO_EXT = os.environ.get("KRAFTWIRE_NO_EXT", "") not in ("", "0")


def load_ext():
    return importlib.import_module("kraftwire_ext._records")


def fix_crc(buf: bytearray, pos: int = 0) -> bytearray:
    """Recompute the CRC of the batch at *pos* (whose Length field is trusted) in place."""
    (length,) = struct.unpack_from(">i", buf, pos + api.LENGTH_POS)
    end = min(len(buf), pos + api.LOG_OVERHEAD + max(length, 0))
    crc = crc32c.crc32c(bytes(buf[pos + api.CRC_START : end]))
    struct.pack_into(">I", buf, pos + api.CRC_POS, crc)
    return buf


def batch_fields(batch) -> tuple:
    return (
        batch.base_offset, batch.last_offset, batch.partition_leader_epoch, batch.magic, batch.crc,
        batch.attributes, batch.compression, batch.is_control, batch.is_transactional, batch.timestamp_type,
        batch.has_delete_horizon, batch.delete_horizon_ms,
        batch.last_offset_delta, batch.base_timestamp, batch.max_timestamp, batch.producer_id,
        batch.producer_epoch, batch.base_sequence, batch.record_count, batch.size_in_bytes, batch.position,
        bytes(batch.buffer),
    )  # fmt: skip


def outcome(fn, *args, **kwargs):
    """What calling fn did, comparable across implementations: ('ok', value) or ('error', type, reason, position)."""
    try:
        return ("ok", fn(*args, **kwargs))
    except CorruptRecordError as exc:
        return ("corrupt", exc.reason, exc.position)
    except Exception as exc:  # noqa: BLE001 - compared by type and message
        return ("error", type(exc).__name__, str(exc))


def read_all(codec, buf, validate=True, max_batch_size=api.MAX_BATCH_SIZE):
    """Everything read_batches yields, as plain data, up to and including the first error."""
    events = []
    try:
        reader = codec.read_batches(buf, validate, max_batch_size)
        for batch in reader:
            events.append(("batch", batch_fields(batch)))
            for rec in batch:
                events.append(("record", tuple(rec)))
        events.append(("end", reader.valid_bytes, reader.incomplete))
    except CorruptRecordError as exc:
        events.append(("corrupt", exc.reason, exc.position))
    return events
