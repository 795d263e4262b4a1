"""The pure-Python twin's RecordBatchBuilder (part of ``kraftwire.records.pyimpl``, split out for size).

Encodes exactly the bytes ``kraftwire_ext._records.RecordBatchBuilder`` does (the differential
tests compare them); the layout comes from ``kraftwire.records.api``.
"""

from __future__ import annotations

import time
from typing import Iterable, Optional, Sequence

import crc32c

from kraftwire.records import compression as _compression
from kraftwire.records.api import (
    COMPRESSION_IDS,
    COMPRESSION_NAMES,
    COMPRESSION_NONE,
    CONTROL_MASK,
    CRC_POS,
    CRC_START,
    DELETE_HORIZON_MASK,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    MAGIC,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    checked_delete_horizon,
)

_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1
_I32_MIN = -(1 << 31)
_I32_MAX = (1 << 31) - 1
_U64 = 1 << 64


def _wrap64(v: int) -> int:
    return ((v - _I64_MIN) % _U64) + _I64_MIN


def _put_varint(out: bytearray, v: int) -> None:
    """Zig-zag varint/varlong of *v* (already range-checked)."""
    z = (v << 1) ^ (v >> 63)
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)


def _check_bytes(name: str, v) -> None:
    if v is not None and not isinstance(v, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes or None, not {type(v).__name__}")


class RecordBatchBuilder:
    """Builds one RecordBatch v2.

    ``append`` returns the record's absolute offset (``base_offset + offset delta``).
    BaseTimestamp is the first record's timestamp (as Java and kafka-python write it),
    MaxTimestamp the largest. With ``delete_horizon_ms`` (KIP-534: the log cleaner's delete horizon for the batch's
    tombstones and markers) the Attributes bit :data:`~kraftwire.records.api.DELETE_HORIZON_MASK` is set and
    BaseTimestamp *is* the horizon: the records' timestamp deltas are taken from it (they may be negative), so
    every record keeps its own timestamp, and MaxTimestamp is still the largest record timestamp (Kafka's
    ``MemoryRecordsBuilder``). ``build()`` returns the batch bytes (``b""`` when no record was
    appended: there is no empty batch) and ends the builder: later appends raise ``ValueError``.
    """

    def __init__(
        self,
        base_offset: int = 0,
        partition_leader_epoch: int = -1,
        compression: str = "none",
        is_control: bool = False,
        is_transactional: bool = False,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        timestamp_type: int = 0,
        delete_horizon_ms: Optional[int] = None,
        compression_level: Optional[int] = None,
    ):
        if compression not in COMPRESSION_IDS:
            raise ValueError(f"unknown compression {compression!r}; expected one of {COMPRESSION_NAMES}")
        if timestamp_type not in (0, 1):
            raise ValueError(f"timestamp_type must be 0 (CreateTime) or 1 (LogAppendTime), got {timestamp_type}")
        if not _I64_MIN <= base_offset <= _I64_MAX or not _I64_MIN <= producer_id <= _I64_MAX:
            raise OverflowError("base_offset / producer_id out of int64 range")
        if not _I32_MIN <= partition_leader_epoch <= _I32_MAX or not _I32_MIN <= base_sequence <= _I32_MAX:
            raise OverflowError("partition_leader_epoch / base_sequence out of int32 range")
        if not -(1 << 15) <= producer_epoch < (1 << 15):
            raise OverflowError("producer_epoch out of int16 range")
        delete_horizon_ms = checked_delete_horizon(delete_horizon_ms)
        self.base_offset = base_offset
        self.partition_leader_epoch = partition_leader_epoch
        self.compression = compression
        self._codec = COMPRESSION_IDS[compression]
        self.is_control = bool(is_control)
        self.is_transactional = bool(is_transactional)
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.timestamp_type = timestamp_type
        self.delete_horizon_ms = delete_horizon_ms
        self.compression_level = compression_level
        self.record_count = 0
        self._first_ts = 0 if delete_horizon_ms is None else delete_horizon_ms
        self._max_ts = 0
        self._records = bytearray()
        self._built: Optional[bytes] = None

    def _attributes(self) -> int:
        attrs = self._codec
        if self.timestamp_type:
            attrs |= TIMESTAMP_TYPE_MASK
        if self.is_transactional:
            attrs |= TRANSACTIONAL_MASK
        if self.is_control:
            attrs |= CONTROL_MASK
        if self.delete_horizon_ms is not None:
            attrs |= DELETE_HORIZON_MASK
        return attrs

    def _timestamp(self, timestamp) -> int:
        if timestamp is None:
            return int(time.time() * 1000)
        if not isinstance(timestamp, int):
            raise TypeError(f"timestamp must be int or None, not {type(timestamp).__name__}")
        if not _I64_MIN <= timestamp <= _I64_MAX:
            raise OverflowError("timestamp out of int64 range")
        return timestamp

    def _append(self, key, value, headers, ts: int) -> int:
        if self._built is not None:
            raise ValueError("the batch was already built")
        if self.record_count == _I32_MAX:
            raise OverflowError("too many records in one batch")
        if self.record_count == 0:
            self._max_ts = ts
            if self.delete_horizon_ms is None:
                self._first_ts = ts
        delta = ts - self._first_ts
        if not _I64_MIN <= delta <= _I64_MAX:
            raise OverflowError("timestamp delta out of int64 range")
        body = bytearray(b"\x00")  # attributes
        _put_varint(body, delta)
        _put_varint(body, self.record_count)
        if key is None:
            body.append(1)  # zig-zag -1
        else:
            _put_varint(body, len(key))
            body += key
        if value is None:
            body.append(1)
        else:
            _put_varint(body, len(value))
            body += value
        _put_varint(body, len(headers))
        for item in headers:
            hkey, hvalue = item
            if not isinstance(hkey, str):
                raise TypeError(f"header key must be str, not {type(hkey).__name__}")
            _check_bytes("header value", hvalue)
            k = hkey.encode("utf-8")
            _put_varint(body, len(k))
            body += k
            if hvalue is None:
                body.append(1)
            else:
                _put_varint(body, len(hvalue))
                body += hvalue
        if len(body) > _I32_MAX:
            raise OverflowError("record too large")
        _put_varint(self._records, len(body))
        self._records += body
        if ts > self._max_ts:
            self._max_ts = ts
        offset = self.base_offset + self.record_count
        self.record_count += 1
        return offset if offset <= _I64_MAX else _wrap64(offset)

    def append(self, key: Optional[bytes], value: Optional[bytes], headers: Iterable = (), timestamp: Optional[int] = None) -> int:
        """Append one record; returns its absolute offset."""
        _check_bytes("key", key)
        _check_bytes("value", value)
        if type(headers) is not tuple:
            headers = tuple(headers)  # a snapshot: unpacking items may run code that mutates the caller's list
        return self._append(key, value, headers, self._timestamp(timestamp))

    def append_many(
        self,
        values: Sequence[Optional[bytes]],
        keys: Optional[Sequence[Optional[bytes]]] = None,
        timestamp: Optional[int] = None,
    ) -> int:
        """Append one record per value (with the matching key, or null keys), all with one
        timestamp and no headers; returns the absolute offset of the last record appended
        (``base_offset + record_count - 1``)."""
        if keys is not None and len(keys) != len(values):
            raise ValueError(f"{len(keys)} keys for {len(values)} values")
        ts = self._timestamp(timestamp)
        for v in values:
            _check_bytes("value", v)
        if keys is not None:
            for k in keys:
                _check_bytes("key", k)
        last = self.base_offset + self.record_count - 1
        for i, v in enumerate(values):
            last = self._append(None if keys is None else keys[i], v, (), ts)
        return last

    def size_in_bytes(self) -> int:
        """Size of the batch so far, uncompressed (an upper estimate when compressing)."""
        return RECORD_BATCH_OVERHEAD + len(self._records)

    def build(self) -> bytes:
        if self._built is not None:
            return self._built
        if self.record_count == 0:
            self._built = b""
            return self._built
        records = self._records
        if self._codec != COMPRESSION_NONE:
            records = _compression.compress(self._codec, bytes(records), self.compression_level)
        length = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + len(records)
        if length > _I32_MAX:
            raise OverflowError("batch too large")
        out = bytearray(RECORD_BATCH_OVERHEAD)
        HEADER_STRUCT.pack_into(
            out, 0, self.base_offset, length, self.partition_leader_epoch, MAGIC, 0, self._attributes(),
            self.record_count - 1, self._first_ts, self._max_ts, self.producer_id, self.producer_epoch,
            self.base_sequence, self.record_count,
        )  # fmt: skip
        out += records
        crc = crc32c.crc32c(memoryview(out)[CRC_START:])
        out[CRC_POS : CRC_POS + 4] = crc.to_bytes(4, "big")
        self._built = bytes(out)
        self._records = bytearray()
        return self._built


