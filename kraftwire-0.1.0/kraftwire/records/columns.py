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


_ARROW = None


def _arrow():
    """pyarrow and the types/schema, built once (per-call type construction was ~30% of the wrapping)."""
    global _ARROW
    if _ARROW is None:
        import pyarrow as pa

        header = pa.struct([pa.field("key", pa.string(), nullable=False), pa.field("value", pa.binary())])
        types = (pa.int64(), pa.int64(), pa.int8(), pa.binary(), pa.binary(), pa.list_(header), pa.int32(),
                 pa.int64(), pa.bool_(), pa.int16())  # fmt: skip
        schema = pa.schema([pa.field(name, t) for name, t in zip(COLUMN_NAMES, types)])
        _ARROW = (pa, header, types, schema)
    return _ARROW


def to_arrow(raw: RawColumns):
    """Wrap the buffers of *raw* as a ``pyarrow.RecordBatch`` without copying them."""
    pa, header, types, schema = _arrow()
    n = raw.num_rows
    h = raw.num_headers
    buf = pa.py_buffer
    from_buffers = pa.Array.from_buffers
    header_keys = from_buffers(pa.string(), h, [None, buf(raw.header_key_offsets), buf(raw.header_key_data)])
    header_values = from_buffers(
        pa.binary(), h, [buf(raw.header_value_validity), buf(raw.header_value_offsets), buf(raw.header_value_data)]
    )
    headers_struct = from_buffers(header, h, [None], children=[header_keys, header_values])
    arrays = [
        from_buffers(types[0], n, [None, buf(raw.offset)]),
        from_buffers(types[1], n, [None, buf(raw.timestamp)]),
        from_buffers(types[2], n, [None, buf(raw.timestamp_type)]),
        from_buffers(types[3], n, [buf(raw.key_validity), buf(raw.key_offsets), buf(raw.key_data)]),
        from_buffers(types[4], n, [buf(raw.value_validity), buf(raw.value_offsets), buf(raw.value_data)]),
        from_buffers(types[5], n, [None, buf(raw.header_offsets)], children=[headers_struct]),
        from_buffers(types[6], n, [None, buf(raw.partition_leader_epoch)]),
        from_buffers(types[7], n, [None, buf(raw.base_offset)]),
        from_buffers(types[8], n, [None, buf(raw.is_control)]),
        from_buffers(types[9], n, [None, buf(raw.control_type)]),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
