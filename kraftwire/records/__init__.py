"""RecordBatch v2 codec: one API, two implementations.

``IMPLEMENTATION`` is ``"ext"`` (the Cython extension ``kraftwire_ext._records``) or
``"python"`` (the reference twin ``kraftwire.records.pyimpl``). ``KRAFTWIRE_NO_EXT=1`` forces
the twin; if the extension cannot be imported otherwise, the twin is used as well (the test
suite fails in that case, so CI notices). Layout constants, error reasons and the Protocol
live in :mod:`kraftwire.records.api`.

Public names::

    RecordBatchBuilder(base_offset=0, partition_leader_epoch=-1, compression="none", is_control=False,
                       is_transactional=False, producer_id=-1, producer_epoch=-1, base_sequence=-1,
                       timestamp_type=0, delete_horizon_ms=None)
        .append(key, value, headers=(), timestamp=None) -> absolute offset of the record
        .append_many(values, keys=None, timestamp=None) -> absolute offset of the last record
        .size_in_bytes() -> int ; .record_count ; .build() -> bytes
    read_batches(buf, validate=True, max_batch_size=MAX_BATCH_SIZE) -> BatchReader
        (iterator of RecordBatch; .valid_bytes, .incomplete) ; iterating a RecordBatch yields Record
        RecordBatch.has_delete_horizon ; .delete_horizon_ms -> int | None (KIP-534, attribute bit 6)
    validate_batches(buf, max_batch_size=MAX_BATCH_SIZE, *, check_records=True, stop_at_corruption=False,
                     headers=False) -> ValidationResult   (.headers: the RecordBatch of each batch, with headers=True)
    whole_batches_size(buf, max_batch_size=MAX_BATCH_SIZE) -> int
    set_base_offset_and_epoch(buf, position, base_offset, partition_leader_epoch) -> None   (in place)
    rebase_batches(buf, base_offset, partition_leader_epoch, max_batch_size=MAX_BATCH_SIZE, *, batches=None)
        -> bytes   (batches: validate_batches' report of buf, so the headers are not read again)
    decode_columns(buf, validate=True, max_batch_size=MAX_BATCH_SIZE) -> pyarrow.RecordBatch | RawColumns
    decode_raw_columns(buf, validate=True, max_batch_size=MAX_BATCH_SIZE) -> RawColumns
    index_keys(buf, into, max_batch_size=MAX_BATCH_SIZE) -> records read   (into[key] = offset, keyed data records)
    control_key(type, version=0) -> bytes ; parse_control_key(key) -> (version, type) ; CONTROL_* ids

Buffers: readers, batches and record iterators hold a buffer export of their input (so a
``bytearray`` cannot be resized while they are alive); ``RecordBatch.buffer`` is a view into it.
Records' ``key``/``value`` are always fresh ``bytes``. Errors: every malformed input raises
``kraftwire.errors.CorruptRecordError(reason, position)`` with a reason from ``api.ALL_REASONS``.
"""

from __future__ import annotations

import os

from kraftwire.errors import CorruptRecordError
from kraftwire.records import api
from kraftwire.records.api import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    CONTROL_KRAFT_VERSION,
    CONTROL_KRAFT_VOTERS,
    CONTROL_LEADER_CHANGE,
    CONTROL_SNAPSHOT_FOOTER,
    CONTROL_SNAPSHOT_HEADER,
    CONTROL_TYPE_NAMES,
    CONTROL_UNKNOWN,
    COMPRESSION_NAMES,
    LOG_OVERHEAD,
    MAX_BATCH_SIZE,
    RECORD_BATCH_OVERHEAD,
    BatchInfo,
    RecordCodec,
    ValidationResult,
    control_key,
    parse_control_key,
)
from kraftwire.records.columns import COLUMN_NAMES, RawColumns, to_arrow

_EXPORTS = (
    "Record", "RecordBatch", "BatchReader", "RecordBatchBuilder", "read_batches", "validate_batches",
    "whole_batches_size", "set_base_offset_and_epoch", "rebase_batches", "decode_raw_columns", "decode_columns",
    "index_keys",
)  # fmt: skip


def _choose():
    """(implementation module, why the extension is not used) — None if the extension is mid-import."""
    if os.environ.get("KRAFTWIRE_NO_EXT", "") not in ("", "0"):
        from kraftwire.records import pyimpl

        return pyimpl, "disabled by KRAFTWIRE_NO_EXT"
    try:
        from kraftwire_ext import _records as ext
    except ImportError as exc:  # fall back to the twin; tests/records asserts the ext loaded
        from kraftwire.records import pyimpl

        return pyimpl, repr(exc)
    if not hasattr(ext, "IMPLEMENTATION"):
        # The extension itself is importing us (it reads kraftwire.records.api): bind lazily.
        return None
    return ext, ""


def _bind() -> bool:
    chosen = _choose()
    if chosen is None:
        return False
    impl, why = chosen
    g = globals()
    g["codec"] = impl
    g["IMPLEMENTATION"] = impl.IMPLEMENTATION
    g["EXT_IMPORT_ERROR"] = why
    for name in _EXPORTS:
        g[name] = getattr(impl, name)
    return True


def __getattr__(name: str):
    """Late binding for the one case where the extension is imported before this package."""
    if name in _EXPORTS or name in ("codec", "IMPLEMENTATION", "EXT_IMPORT_ERROR"):
        if _bind():
            return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Set by _bind(): ``codec`` (the implementation module, satisfies ``api.RecordCodec``),
#: ``IMPLEMENTATION`` ("ext" | "python"), ``EXT_IMPORT_ERROR`` (why the extension is not in use, "" if it is),
#: and the codec's public names.
_bind()

__all__ = [
    "IMPLEMENTATION", "EXT_IMPORT_ERROR", "codec", "api", "CorruptRecordError",
    "Record", "RecordBatch", "BatchReader", "RecordBatchBuilder", "read_batches", "validate_batches",
    "whole_batches_size", "set_base_offset_and_epoch", "rebase_batches", "decode_raw_columns", "decode_columns",
    "index_keys", "RawColumns", "COLUMN_NAMES", "to_arrow", "BatchInfo", "ValidationResult", "RecordCodec",
    "MAX_BATCH_SIZE", "LOG_OVERHEAD", "RECORD_BATCH_OVERHEAD", "COMPRESSION_NAMES",
    "control_key", "parse_control_key", "CONTROL_TYPE_NAMES", "CONTROL_UNKNOWN", "CONTROL_ABORT", "CONTROL_COMMIT",
    "CONTROL_LEADER_CHANGE", "CONTROL_SNAPSHOT_HEADER", "CONTROL_SNAPSHOT_FOOTER", "CONTROL_KRAFT_VERSION",
    "CONTROL_KRAFT_VOTERS",
]  # fmt: skip
