"""The pure-Python reference codec: readable, same API and same errors as ``kraftwire_ext._records``.

Read ``kraftwire.records.api`` for the byte layout and the rules both implementations enforce.
Where this module and the extension disagree, the differential tests fail; this one is the
specification in code, the extension is the fast path.
"""

from __future__ import annotations

import sys
from array import array
from typing import NamedTuple, Optional

import crc32c

from kraftwire.errors import CorruptRecordError
from kraftwire.records import api
from kraftwire.records import compression as _compression
from kraftwire.records.api import (
    ATTRIBUTES_POS,
    BASE_OFFSET_POS,
    COMPRESSION_MASK,
    COMPRESSION_NAMES,
    COMPRESSION_NONE,
    CONTROL_MASK,
    CRC_POS,
    CRC_START,
    DELETE_HORIZON_MASK,
    HEADER_SIZE_UP_TO_MAGIC,
    HEADER_STRUCT,
    LAST_OFFSET_DELTA_POS,
    LENGTH_POS,
    LOG_OVERHEAD,
    MAGIC,
    MAGIC_POS,
    MAX_BATCH_SIZE,
    MAX_VARINT_BYTES,
    MAX_VARLONG_BYTES,
    MIN_BATCH_LENGTH,
    MIN_RECORD_BODY,
    PARTITION_LEADER_EPOCH_POS,
    RECORD_BATCH_OVERHEAD,
    RECORD_COUNT_POS,
    RECORDS_POS,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    BatchInfo,
    ValidationResult,
)
from kraftwire.records.columns import RawColumns, arrow_available, to_arrow

IMPLEMENTATION = "python"

_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1
_I32_MIN = -(1 << 31)
_I32_MAX = (1 << 31) - 1
_U64 = 1 << 64
# In the last byte a varint may use 4 payload bits (5 * 7 = 35 > 32), a varlong 1 bit (10 * 7 = 70 > 64).
_VARINT_LAST_BYTE_BAD = 0xF0
_VARLONG_LAST_BYTE_BAD = 0xFE

_LITTLE = sys.byteorder == "little"


def _wrap64(v: int) -> int:
    """Java ``long`` wrap-around of an int (only called when out of range)."""
    return ((v - _I64_MIN) % _U64) + _I64_MIN


# ------------------------------------------------------------------------------------ records


class Record(NamedTuple):
    """One record. ``headers`` is a list of ``(str, bytes | None)``."""

    offset: int
    timestamp: int
    key: Optional[bytes]
    value: Optional[bytes]
    headers: list


def _check_max_batch_size(max_batch_size: int) -> None:
    if not RECORD_BATCH_OVERHEAD <= max_batch_size <= _I32_MAX:
        raise ValueError(f"max_batch_size must be in [{RECORD_BATCH_OVERHEAD}, {_I32_MAX}], got {max_batch_size}")


def _as_view(buf) -> memoryview:
    mv = memoryview(buf)
    if mv.ndim != 1 or mv.format not in ("B", "b", "c"):
        mv = mv.cast("B")
    elif mv.format != "B":
        mv = mv.cast("B")
    return mv


class _Parser:
    """Walks the records of one batch. ``fixed_pos`` (compressed batches) replaces every error position."""

    __slots__ = ("data", "fixed_pos")

    def __init__(self, data, fixed_pos):
        self.data = data
        self.fixed_pos = fixed_pos

    def fail(self, reason: str, pos: int):
        raise CorruptRecordError(reason, pos if self.fixed_pos is None else self.fixed_pos)

    def varint(self, p: int, end: int, max_bytes: int, last_bad: int):
        """Zig-zag varint at *p* (bounded by *end*): ``(value, next position)``."""
        data = self.data
        start = p
        raw = 0
        shift = 0
        n = 0
        while True:
            if p >= end:
                self.fail(api.REASON_RECORD_OVERRUN, start)
            b = data[p]
            p += 1
            n += 1
            if n == max_bytes:
                if b & last_bad:
                    self.fail(api.REASON_VARINT_OVERFLOW, start)
                raw |= b << shift
                break
            raw |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
        return (raw >> 1) ^ -(raw & 1), p

    def length_field(self, p: int, end: int, bad_reason: str, nullable: bool):
        """A length-prefixed byte string: ``(bytes | None, next position)``."""
        n, q = self.varint(p, end, MAX_VARINT_BYTES, _VARINT_LAST_BYTE_BAD)
        if n < 0:
            if n == -1 and nullable:
                return None, q
            self.fail(bad_reason, p)
        if q + n > end:
            self.fail(api.REASON_RECORD_OVERRUN, p)
        return q, q + n

    def records(self, p: int, end: int, count: int, base_offset: int, base_ts: int, log_append_ts: Optional[int]):
        """Yield the ``count`` records in [p, end) as tuples ``(offset, timestamp, key, value, headers)``."""
        data = self.data
        varint = self.varint
        field = self.length_field
        for i in range(count):
            if p >= end:
                self.fail(api.REASON_RECORD_COUNT_MISMATCH, p)
            rec_start = p
            length, p = varint(p, end, MAX_VARINT_BYTES, _VARINT_LAST_BYTE_BAD)
            if length < MIN_RECORD_BODY:
                self.fail(api.REASON_BAD_RECORD_LENGTH, rec_start)
            body_end = p + length
            if body_end > end:
                self.fail(api.REASON_RECORD_OVERRUN, rec_start)
            p += 1  # attributes: unused
            ts_delta, p = varint(p, body_end, MAX_VARLONG_BYTES, _VARLONG_LAST_BYTE_BAD)
            delta_pos = p
            offset_delta, p = varint(p, body_end, MAX_VARINT_BYTES, _VARINT_LAST_BYTE_BAD)
            if offset_delta != i:
                self.fail(api.REASON_OFFSET_DELTA_MISMATCH, delta_pos)
            kstart, p = field(p, body_end, api.REASON_BAD_KEY_LENGTH, True)
            key = None if kstart is None else bytes(data[kstart:p])
            vstart, p = field(p, body_end, api.REASON_BAD_VALUE_LENGTH, True)
            value = None if vstart is None else bytes(data[vstart:p])
            hpos = p
            header_count, p = varint(p, body_end, MAX_VARINT_BYTES, _VARINT_LAST_BYTE_BAD)
            if header_count < 0:
                self.fail(api.REASON_BAD_HEADER_COUNT, hpos)
            headers = []
            for _ in range(header_count):
                hkpos = p
                hkstart, p = field(p, body_end, api.REASON_BAD_HEADER_KEY_LENGTH, False)
                try:
                    hkey = str(data[hkstart:p], "utf-8")
                except UnicodeDecodeError:
                    self.fail(api.REASON_BAD_HEADER_KEY_ENCODING, hkpos)
                hvstart, q = field(p, body_end, api.REASON_BAD_HEADER_VALUE_LENGTH, True)
                if hvstart is None:
                    headers.append((hkey, None))
                else:
                    headers.append((hkey, bytes(data[hvstart:q])))
                p = q
            if p != body_end:
                self.fail(api.REASON_RECORD_LENGTH_MISMATCH, rec_start)
            if log_append_ts is None:
                ts = base_ts + ts_delta
                if ts > _I64_MAX or ts < _I64_MIN:
                    ts = _wrap64(ts)
            else:
                ts = log_append_ts
            offset = base_offset + i
            if offset > _I64_MAX:
                offset = _wrap64(offset)
            yield (offset, ts, key, value, headers)
        if p != end:
            self.fail(api.REASON_TRAILING_BYTES, p)


# ------------------------------------------------------------------------------------ batches


def _frame(mv: memoryview, pos: int, n: int, max_batch_size: int) -> int:
    """Size of the whole batch at *pos*, 0 if it is incomplete; raises on corrupt framing."""
    remaining = n - pos
    if remaining < LOG_OVERHEAD:
        return 0
    length = int.from_bytes(mv[pos + LENGTH_POS : pos + LOG_OVERHEAD], "big", signed=True)
    if length < MIN_BATCH_LENGTH or length > max_batch_size - LOG_OVERHEAD:
        raise CorruptRecordError(api.REASON_BAD_BATCH_LENGTH, pos + LENGTH_POS)
    if remaining < HEADER_SIZE_UP_TO_MAGIC:
        return 0
    if mv[pos + MAGIC_POS] != MAGIC:
        raise CorruptRecordError(api.REASON_BAD_MAGIC, pos + MAGIC_POS)
    size = length + LOG_OVERHEAD
    if remaining < size:
        return 0
    return size


def _header(mv: memoryview, pos: int, size: int, validate: bool) -> tuple:
    """Unpack and check the header of the whole batch at *pos* (CRC only when *validate*)."""
    h = HEADER_STRUCT.unpack_from(mv, pos)
    if validate and crc32c.crc32c(mv[pos + CRC_START : pos + size]) != h[4]:
        raise CorruptRecordError(api.REASON_CRC_MISMATCH, pos + CRC_POS)
    if h[5] & COMPRESSION_MASK >= len(COMPRESSION_NAMES):
        raise CorruptRecordError(api.REASON_UNKNOWN_COMPRESSION, pos + ATTRIBUTES_POS)
    if h[6] < 0:
        raise CorruptRecordError(api.REASON_BAD_LAST_OFFSET_DELTA, pos + LAST_OFFSET_DELTA_POS)
    if h[12] != h[6] + 1:
        raise CorruptRecordError(api.REASON_RECORD_COUNT_MISMATCH, pos + RECORD_COUNT_POS)
    return h


def _records_region(mv: memoryview, pos: int, size: int, attributes: int, max_batch_size: int):
    """``(data, start, end, fixed error position)`` of the batch's records, decompressed if needed."""
    codec = attributes & COMPRESSION_MASK
    start = pos + RECORDS_POS
    if codec == COMPRESSION_NONE:
        return mv, start, pos + size, None
    data = _compression.decompress(codec, mv[start : pos + size], max_batch_size, start)
    return data, 0, len(data), start


class RecordBatch:
    """One RecordBatch v2 (header fields as attributes); iterate it for its :class:`Record`\\ s."""

    __slots__ = (
        "base_offset", "length", "partition_leader_epoch", "magic", "crc", "attributes", "last_offset_delta",
        "base_timestamp", "max_timestamp", "producer_id", "producer_epoch", "base_sequence", "record_count",
        "last_offset", "position", "size_in_bytes", "_view", "_max_batch_size",
    )  # fmt: skip

    def __init__(self, view: memoryview, position: int, size: int, header: tuple, max_batch_size: int):
        (
            self.base_offset, self.length, self.partition_leader_epoch, self.magic, self.crc, self.attributes,
            self.last_offset_delta, self.base_timestamp, self.max_timestamp, self.producer_id,
            self.producer_epoch, self.base_sequence, self.record_count,
        ) = header  # fmt: skip
        last = self.base_offset + self.last_offset_delta
        self.last_offset = last if last <= _I64_MAX else _wrap64(last)
        self.position = position
        self.size_in_bytes = size
        self._view = view
        self._max_batch_size = max_batch_size

    @property
    def buffer(self) -> memoryview:
        """The batch's bytes (a view into the input)."""
        return self._view[self.position : self.position + self.size_in_bytes]

    @property
    def compression(self) -> str:
        return COMPRESSION_NAMES[self.attributes & COMPRESSION_MASK]

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def timestamp_type(self) -> int:
        return 1 if self.attributes & TIMESTAMP_TYPE_MASK else 0

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1 if self.last_offset < _I64_MAX else _I64_MIN

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_MASK)

    @property
    def delete_horizon_ms(self) -> Optional[int]:
        """The log cleaner's delete horizon (KIP-534): BaseTimestamp when the Attributes bit says so, else None."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_MASK else None

    # No __len__ on purpose: list(batch) would preallocate from the (untrusted) record count.

    def __iter__(self):
        data, start, end, fixed = _records_region(
            self._view, self.position, self.size_in_bytes, self.attributes, self._max_batch_size
        )
        log_append = self.max_timestamp if self.attributes & TIMESTAMP_TYPE_MASK else None
        parser = _Parser(data, fixed)
        for t in parser.records(start, end, self.record_count, self.base_offset, self.base_timestamp, log_append):
            yield Record(*t)

    def records(self) -> list:
        return list(self)

    def __repr__(self) -> str:
        return (
            f"RecordBatch(base_offset={self.base_offset}, last_offset={self.last_offset}, "
            f"partition_leader_epoch={self.partition_leader_epoch}, record_count={self.record_count}, "
            f"compression={self.compression!r}, is_control={self.is_control}, position={self.position}, "
            f"size_in_bytes={self.size_in_bytes})"
        )


class BatchReader:
    """Iterator over the batches of a buffer (see :func:`read_batches`).

    ``valid_bytes``: bytes of the whole batches returned so far. ``incomplete``: set once the
    iterator is exhausted, true when a partial batch trails the last whole one.
    """

    def __init__(self, buf, validate: bool = True, max_batch_size: int = MAX_BATCH_SIZE):
        _check_max_batch_size(max_batch_size)
        self._view = _as_view(buf)
        self._validate = validate
        self._max = max_batch_size
        self.valid_bytes = 0
        self.incomplete = False

    def __iter__(self):
        return self

    def __next__(self) -> RecordBatch:
        mv = self._view
        pos = self.valid_bytes
        n = len(mv)
        size = _frame(mv, pos, n, self._max)
        if size == 0:
            self.incomplete = pos < n
            raise StopIteration
        header = _header(mv, pos, size, self._validate)
        self.valid_bytes = pos + size
        return RecordBatch(mv, pos, size, header, self._max)


def read_batches(buf, validate: bool = True, max_batch_size: int = MAX_BATCH_SIZE) -> BatchReader:
    """Iterate the RecordBatches in *buf*; a trailing partial batch ends the iteration quietly.

    With *validate* each batch's CRC is checked before it is returned (framing and header
    consistency are always checked). Record-level errors surface while iterating a batch.
    """
    return BatchReader(buf, validate, max_batch_size)


def whole_batches_size(buf, max_batch_size: int = MAX_BATCH_SIZE) -> int:
    """Bytes of the whole batches at the start of *buf*, checking framing (length, magic) only."""
    _check_max_batch_size(max_batch_size)
    mv = _as_view(buf)
    n = len(mv)
    pos = 0
    while True:
        size = _frame(mv, pos, n, max_batch_size)
        if size == 0:
            return pos
        pos += size


def validate_batches(
    buf, max_batch_size: int = MAX_BATCH_SIZE, *, check_records: bool = True, stop_at_corruption: bool = False,
    headers: bool = False,
) -> ValidationResult:
    """Check every whole batch in *buf*: framing, magic, CRC-32C, header consistency and (with
    *check_records*, decompressing if needed) every record's framing and offset delta.

    Raises the first ``CorruptRecordError``, or with *stop_at_corruption* returns it in
    ``.error`` along with the valid prefix (log recovery). A trailing partial batch is not an
    error: ``incomplete`` is set and ``valid_bytes`` stops before it. With *headers*, ``headers``
    holds the :class:`RecordBatch` of each valid batch (the header this validation read).
    """
    _check_max_batch_size(max_batch_size)
    mv = _as_view(buf)
    n = len(mv)
    pos = 0
    batches = []
    views = [] if headers else None
    record_count = 0
    first_offset = last_offset = last_epoch = max_ts = -1
    incomplete = False
    error = None
    try:
        while True:
            size = _frame(mv, pos, n, max_batch_size)
            if size == 0:
                incomplete = pos < n
                break
            h = _header(mv, pos, size, True)
            if check_records:
                data, start, end, fixed = _records_region(mv, pos, size, h[5], max_batch_size)
                for _ in _Parser(data, fixed).records(start, end, h[12], 0, 0, None):
                    pass
            last = h[0] + h[6]
            if last > _I64_MAX:
                last = _wrap64(last)
            if not batches:
                first_offset = h[0]
                max_ts = h[8]
            elif h[8] > max_ts:
                max_ts = h[8]
            batches.append(BatchInfo(h[0], last, h[2], pos, size))
            if views is not None:
                views.append(RecordBatch(mv, pos, size, h, max_batch_size))
            record_count += h[12]
            last_offset = last
            last_epoch = h[2]
            pos += size
    except CorruptRecordError as exc:
        if not stop_at_corruption:
            raise
        error = exc
    return ValidationResult(
        pos, len(batches), record_count, first_offset, last_offset, last_epoch, max_ts, batches, incomplete, error,
        views,
    )


def _writable_view(buf) -> memoryview:
    mv = _as_view(buf)
    if mv.readonly:
        raise TypeError("buffer is read-only")
    return mv


def set_base_offset_and_epoch(buf, position: int, base_offset: int, partition_leader_epoch: int) -> None:
    """Stamp BaseOffset and PartitionLeaderEpoch of the batch at *position* in a writable buffer.

    Neither field is covered by the CRC, so the batch stays valid.
    """
    mv = _writable_view(buf)
    if position < 0 or position + RECORD_BATCH_OVERHEAD > len(mv):
        raise ValueError(f"no batch header at position {position}")
    if not _I64_MIN <= base_offset <= _I64_MAX or not _I32_MIN <= partition_leader_epoch <= _I32_MAX:
        raise OverflowError("base offset or partition leader epoch out of range")
    mv[position + BASE_OFFSET_POS : position + LENGTH_POS] = base_offset.to_bytes(8, "big", signed=True)
    mv[position + PARTITION_LEADER_EPOCH_POS : position + MAGIC_POS] = partition_leader_epoch.to_bytes(
        4, "big", signed=True
    )


def rebase_batches(
    buf, base_offset: int, partition_leader_epoch: int, max_batch_size: int = MAX_BATCH_SIZE, *, batches=None
) -> bytes:
    """A copy of the whole batches in *buf*, re-based to consecutive offsets from *base_offset*
    and stamped with *partition_leader_epoch* (how a leader appends client-produced batches).

    Checks framing and header consistency (not the CRC, which these fields do not affect);
    a trailing partial batch is a ``ValueError``. With *batches* (:func:`validate_batches`'
    report of exactly *buf*) the headers are not read again: each batch is stamped at its
    reported position, and a report that does not tile *buf* is a ``ValueError``.
    """
    _check_max_batch_size(max_batch_size)
    if not _I64_MIN <= base_offset <= _I64_MAX or not _I32_MIN <= partition_leader_epoch <= _I32_MAX:
        raise OverflowError("base offset or partition leader epoch out of range")
    mv = _as_view(buf)
    n = len(mv)
    out = bytearray(mv)
    pos = 0
    next_offset = base_offset
    if batches is not None:
        for info in batches:
            delta = info.last_offset - info.base_offset
            if info.position != pos or info.size < RECORD_BATCH_OVERHEAD or pos + info.size > n or delta < 0:
                raise ValueError(f"batch report does not match the buffer at byte {info.position}")
            set_base_offset_and_epoch(out, pos, _wrap64(next_offset), partition_leader_epoch)
            next_offset = next_offset + delta + 1
            pos += info.size
        if pos != n:
            raise ValueError(f"incomplete batch at byte {pos}")
        return bytes(out)
    while True:
        size = _frame(mv, pos, n, max_batch_size)
        if size == 0:
            break
        h = _header(mv, pos, size, False)
        set_base_offset_and_epoch(out, pos, _wrap64(next_offset), partition_leader_epoch)
        next_offset = next_offset + h[6] + 1
        pos += size
    if pos != n:
        raise ValueError(f"incomplete batch at byte {pos}")
    return bytes(out)


# ------------------------------------------------------------------------------------ columns


def _bitmap(bits: bytearray, n: int) -> bytes:
    out = bytearray((n + 7) // 8)
    for i in range(n):
        if bits[i]:
            out[i >> 3] |= 1 << (i & 7)
    return bytes(out)


def _le(a: array) -> bytes:
    if not _LITTLE:
        a = array(a.typecode, a)
        a.byteswap()
    return a.tobytes()


def index_keys(buf, into: dict, max_batch_size: int = MAX_BATCH_SIZE) -> int:
    """For every keyed record of the data batches in buf (whole batches; control batches are skipped),
    ``into[key] = offset``, in offset order so the last record of a key wins; returns the number of data records
    read (the log cleaner's offset map)."""
    total = 0
    for batch in read_batches(buf, validate=False, max_batch_size=max_batch_size):
        if batch.is_control:
            continue
        for rec in batch:
            total += 1
            if rec.key is not None:
                into[rec.key] = rec.offset
    return total


def decode_raw_columns(buf, validate: bool = True, max_batch_size: int = MAX_BATCH_SIZE) -> RawColumns:
    """Decode every record of every whole batch in *buf* into Arrow-layout buffers (:mod:`columns`)."""
    offsets, timestamps, epochs, bases, ctypes = array("q"), array("q"), array("i"), array("q"), array("h")
    ts_types, controls = bytearray(), bytearray()
    key_ok, key_offs, key_data = bytearray(), array("i", [0]), bytearray()
    val_ok, val_offs, val_data = bytearray(), array("i", [0]), bytearray()
    hdr_offs = array("i", [0])
    hk_offs, hk_data = array("i", [0]), bytearray()
    hv_ok, hv_offs, hv_data = bytearray(), array("i", [0]), bytearray()
    for batch in read_batches(buf, validate, max_batch_size):
        ts_type = batch.timestamp_type
        control = 1 if batch.is_control else 0
        for offset, ts, key, value, headers in batch:
            offsets.append(offset)
            timestamps.append(ts)
            epochs.append(batch.partition_leader_epoch)
            bases.append(batch.base_offset)
            ts_types.append(ts_type)
            controls.append(control)
            ctypes.append(api.parse_control_key(key)[1] if control else api.CONTROL_UNKNOWN)
            key_ok.append(key is not None)
            if key is not None:
                key_data += key
            key_offs.append(len(key_data))
            val_ok.append(value is not None)
            if value is not None:
                val_data += value
            val_offs.append(len(val_data))
            for hk, hv in headers:
                hk_data += hk.encode("utf-8")
                hk_offs.append(len(hk_data))
                hv_ok.append(hv is not None)
                if hv is not None:
                    hv_data += hv
                hv_offs.append(len(hv_data))
            hdr_offs.append(len(hk_offs) - 1)
    n = len(offsets)
    return RawColumns(
        n, _le(offsets), _le(timestamps), bytes(ts_types),
        _bitmap(key_ok, n), _le(key_offs), bytes(key_data),
        _bitmap(val_ok, n), _le(val_offs), bytes(val_data),
        _le(hdr_offs), len(hk_offs) - 1, _le(hk_offs), bytes(hk_data),
        _bitmap(hv_ok, len(hv_ok)), _le(hv_offs), bytes(hv_data),
        _le(epochs), _le(bases), _bitmap(controls, n), _le(ctypes),
    )  # fmt: skip


def decode_columns(buf, validate: bool = True, max_batch_size: int = MAX_BATCH_SIZE):
    """Columnar decode: a ``pyarrow.RecordBatch`` when pyarrow is installed, else :class:`RawColumns`."""
    raw = decode_raw_columns(buf, validate, max_batch_size)
    return to_arrow(raw) if arrow_available() else raw


from kraftwire.records.pybuilder import RecordBatchBuilder  # noqa: E402  (re-exported: part of this codec)

__all__ = [
    "IMPLEMENTATION", "Record", "RecordBatch", "BatchReader", "RecordBatchBuilder", "read_batches",
    "validate_batches", "whole_batches_size", "set_base_offset_and_epoch", "rebase_batches",
    "decode_raw_columns", "decode_columns",
]  # fmt: skip
