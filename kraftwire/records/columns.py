"""Columnar decode results: raw Arrow-layout buffers, and their conversion to ``pyarrow.RecordBatch``.

Both codec implementations fill a :class:`RawColumns` with buffers already in Arrow's memory
layout (little-endian fixed-width values, int32 offsets, LSB-first validity bitmaps), so the
conversion below is a handful of zero-copy ``pyarrow.Array.from_buffers`` calls and no
per-record Python work. pyarrow is imported lazily: it is optional for the rest of kraftwire.

Columns (one row per record, batch fields repeated per record)::

    offset int64, timestamp int64, timestamp_type int8, key binary (nullable),
    value binary (nullable), headers list<struct<key: string not null, value: binary>>,
    partition_leader_epoch int32, base_offset int64 (of the record's batch), is_control bool,
    control_type int16 (a control record's type from its key, CONTROL_* in api; -1 for data records)
"""

from __future__ import annotations

from typing import NamedTuple


class RawColumns(NamedTuple):
    num_rows: int
    offset: bytes  # int64[num_rows]
    timestamp: bytes  # int64[num_rows]
    timestamp_type: bytes  # int8[num_rows]
    key_validity: bytes  # bitmap
    key_offsets: bytes  # int32[num_rows + 1]
    key_data: bytes
    value_validity: bytes
    value_offsets: bytes
    value_data: bytes
    header_offsets: bytes  # int32[num_rows + 1], into the header entries
    num_headers: int
    header_key_offsets: bytes  # int32[num_headers + 1]
    header_key_data: bytes
    header_value_validity: bytes
    header_value_offsets: bytes
    header_value_data: bytes
    partition_leader_epoch: bytes  # int32[num_rows]
    base_offset: bytes  # int64[num_rows]
    is_control: bytes  # bitmap
    control_type: bytes  # int16[num_rows]: the control record type (key bytes 2..4), -1 for data records


COLUMN_NAMES = (
    "offset",
    "timestamp",
    "timestamp_type",
    "key",
    "value",
    "headers",
    "partition_leader_epoch",
    "base_offset",
    "is_control",
    "control_type",
)


def arrow_available() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def to_arrow(raw: RawColumns):
    """Wrap the buffers of *raw* as a ``pyarrow.RecordBatch`` without copying them."""
    import pyarrow as pa

    n = raw.num_rows
    h = raw.num_headers
    buf = pa.py_buffer
    header_struct = pa.struct([pa.field("key", pa.string(), nullable=False), pa.field("value", pa.binary())])
    header_keys = pa.Array.from_buffers(pa.string(), h, [None, buf(raw.header_key_offsets), buf(raw.header_key_data)])
    header_values = pa.Array.from_buffers(
        pa.binary(), h, [buf(raw.header_value_validity), buf(raw.header_value_offsets), buf(raw.header_value_data)]
    )
    headers_struct = pa.Array.from_buffers(header_struct, h, [None], children=[header_keys, header_values])
    arrays = [
        pa.Array.from_buffers(pa.int64(), n, [None, buf(raw.offset)]),
        pa.Array.from_buffers(pa.int64(), n, [None, buf(raw.timestamp)]),
        pa.Array.from_buffers(pa.int8(), n, [None, buf(raw.timestamp_type)]),
        pa.Array.from_buffers(pa.binary(), n, [buf(raw.key_validity), buf(raw.key_offsets), buf(raw.key_data)]),
        pa.Array.from_buffers(pa.binary(), n, [buf(raw.value_validity), buf(raw.value_offsets), buf(raw.value_data)]),
        pa.Array.from_buffers(pa.list_(header_struct), n, [None, buf(raw.header_offsets)], children=[headers_struct]),
        pa.Array.from_buffers(pa.int32(), n, [None, buf(raw.partition_leader_epoch)]),
        pa.Array.from_buffers(pa.int64(), n, [None, buf(raw.base_offset)]),
        pa.Array.from_buffers(pa.bool_(), n, [None, buf(raw.is_control)]),
        pa.Array.from_buffers(pa.int16(), n, [None, buf(raw.control_type)]),
    ]
    return pa.RecordBatch.from_arrays(arrays, names=list(COLUMN_NAMES))
