"""Reading one byte range of a segment or snapshot into ``pyarrow.RecordBatch``es (runs in Spark's Python workers).

The hot path is the codec's columnar decode (``decode_raw_columns``: CRC-32C checked, records straight into Arrow
buffers, no per-record Python objects); this module only wraps those buffers and adds the per-file columns.

Corruption (documented contract, what the audit relies on):

* A batch whose framing is intact (Length and magic sane) but that fails validation — CRC mismatch, bad header,
  malformed records — never stops the read. If its records still decode (typically a CRC mismatch from a flipped
  payload byte) they are returned with ``batch_crc_valid = false`` and ``error`` = the reason; otherwise one
  *marker row* stands for the whole batch: ``offset`` = ``batch_base_offset`` = the header's base offset,
  ``key``/``value`` null, ``batch_crc_valid`` = whether its CRC matched, ``error`` = the reason. Reading goes on
  with the next batch.
* Broken framing (bad Length or magic) cannot be resynchronised: a marker row (``offset`` null) with the reason
  and byte position ends that range. The next range of the segment (split at index positions) still reads.
* A torn tail (a trailing partial batch: a crash mid-append, or a live node appending) is not corruption: it is
  left out, as every reader of the log does.
Every healthy row has ``batch_crc_valid = true`` and ``error`` null.

Per-file columns: ``node``, ``path``, ``topic``/``partition`` (the partition dir's name), ``committed``,
``is_snapshot``. ``record_type``/``record_version``/``record_json`` are null unless ``scan(decode_metadata=True)``
reads a ``__cluster_metadata`` partition: then every data record that passes the filter is decoded (after filtering,
in the worker) by the decoder of ``kraftwire dump-log --cluster-metadata-decoder`` into three Arrow columns.
"""

from __future__ import annotations

import json
import os
import struct
import uuid
from dataclasses import dataclass, field
from typing import Iterator, Optional

from kraftwire.errors import CorruptRecordError
from kraftwire.records import api as layout
from kraftwire.records import decode_raw_columns, validate_batches, whole_batches_size
from kraftwire.spark.files import Bounds, FileRange

__all__ = ["COLUMNS", "METADATA_TOPIC", "RowFilter", "arrow_schema", "decode_metadata_columns", "scan", "READ_CHUNK",
           "RECORD_COLUMNS"]

#: (name, Spark DDL type) in output order — the one definition of the source's schema.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("node", "int"),
    ("path", "string"),
    ("topic", "string"),
    ("partition", "int"),
    ("offset", "bigint"),
    ("partition_leader_epoch", "int"),
    ("timestamp", "bigint"),
    ("timestamp_type", "tinyint"),
    ("key", "binary"),
    ("value", "binary"),
    ("headers", "array<struct<key:string,value:binary>>"),
    ("is_control", "boolean"),
    ("control_type", "smallint"),
    ("batch_base_offset", "bigint"),
    ("batch_crc_valid", "boolean"),
    ("committed", "boolean"),
    ("is_snapshot", "boolean"),
    ("record_type", "string"),
    ("record_version", "int"),
    ("record_json", "string"),
    ("error", "string"),
)

#: The partition dir whose records are Kafka's metadata records (decoded into ``record_*`` on request).
METADATA_TOPIC = "__cluster_metadata"
RECORD_COLUMNS = ("record_type", "record_version", "record_json")

#: Bytes read per ``pread`` (one Arrow batch per chunk, whole batches only; a larger batch is read whole). Small
#: batches keep Spark's JVM converting one while the worker decodes the next, and leave little to drain at the end of
#: a task: 512 KiB read 1 GiB ~30% faster on local[1] and ~20% on local[2] than 8 MiB did (benchmarks/spark_bench.py).
READ_CHUNK = 512 * 1024

_BASE_LENGTH = struct.Struct(">qi")
_I32 = struct.Struct(">i")
_ARROW = None


def arrow_schema():
    """The Arrow schema Spark expects for :data:`COLUMNS` (its list item is named ``element``, all nullable)."""
    global _ARROW
    if _ARROW is None:
        import pyarrow as pa

        header = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
        headers = pa.list_(pa.field("element", header))
        types = {"int": pa.int32(), "string": pa.string(), "bigint": pa.int64(), "tinyint": pa.int8(),
                 "smallint": pa.int16(), "binary": pa.binary(), "boolean": pa.bool_()}
        schema = pa.schema([pa.field(n, headers if t.startswith("array") else types[t]) for n, t in COLUMNS])
        _ARROW = (pa, schema, header, headers)
    return _ARROW


@dataclass(frozen=True)
class RowFilter:
    """What a row must satisfy (options plus pushed filters); applied exactly to every batch read."""

    bounds: Bounds = field(default_factory=Bounds)
    offsets_in: Optional[frozenset] = None
    is_control: Optional[bool] = None  # None: both; includeControl=false sets False
    committed: Optional[bool] = None  # committedOnly=true sets True

    def trivial(self) -> bool:
        b = self.bounds
        return (b.offset_lo is None and b.offset_hi is None and b.ts_lo is None and b.ts_hi is None
                and self.offsets_in is None and self.is_control is None and self.committed is None)


def _const_string(pa, text: str, n: int):
    return pa.repeat(pa.scalar(text, pa.string()), n)  # C++ fill: no per-row Python work, no numpy needed


def _const_bool(pa, value: bool, n: int):
    return pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer((b"\xff" if value else b"\x00") * ((n + 7) // 8))])


def _to_batch(raw, f, crc_valid: bool = True, error: Optional[str] = None, with_path: bool = True):
    """Wrap the codec's Arrow-layout buffers (no copies) and add the per-file columns."""
    pa, schema, header, headers_type = arrow_schema()
    n, h = raw.num_rows, raw.num_headers
    buf = pa.py_buffer
    fb = pa.Array.from_buffers
    hk = fb(pa.string(), h, [None, buf(raw.header_key_offsets), buf(raw.header_key_data)])
    hv = fb(pa.binary(), h, [buf(raw.header_value_validity), buf(raw.header_value_offsets), buf(raw.header_value_data)])
    offset = fb(pa.int64(), n, [None, buf(raw.offset)])
    if f.kind == "snapshot":
        committed = _const_bool(pa, True, n)
    elif f.high_watermark is None:
        committed = pa.nulls(n, pa.bool_())
    else:
        import pyarrow.compute as pc

        committed = pc.less(offset, pa.scalar(f.high_watermark, pa.int64()))
    arrays = [
        pa.nulls(n, pa.int32()) if f.node is None else pa.repeat(pa.scalar(f.node, pa.int32()), n),
        _const_string(pa, f.path, n) if with_path else pa.nulls(n, pa.string()),
        pa.nulls(n, pa.string()) if f.topic is None else _const_string(pa, f.topic, n),
        pa.nulls(n, pa.int32()) if f.partition is None else pa.repeat(pa.scalar(f.partition, pa.int32()), n),
        offset,
        fb(pa.int32(), n, [None, buf(raw.partition_leader_epoch)]),
        fb(pa.int64(), n, [None, buf(raw.timestamp)]),
        fb(pa.int8(), n, [None, buf(raw.timestamp_type)]),
        fb(pa.binary(), n, [buf(raw.key_validity), buf(raw.key_offsets), buf(raw.key_data)]),
        fb(pa.binary(), n, [buf(raw.value_validity), buf(raw.value_offsets), buf(raw.value_data)]),
        fb(headers_type, n, [None, buf(raw.header_offsets)], children=[fb(header, h, [None], children=[hk, hv])]),
        fb(pa.bool_(), n, [None, buf(raw.is_control)]),
        fb(pa.int16(), n, [None, buf(raw.control_type)]),
        fb(pa.int64(), n, [None, buf(raw.base_offset)]),
        _const_bool(pa, crc_valid, n),
        committed,
        _const_bool(pa, f.kind == "snapshot", n),
        pa.nulls(n, pa.string()),
        pa.nulls(n, pa.int32()),
        pa.nulls(n, pa.string()),
        pa.nulls(n, pa.string()) if error is None else _const_string(pa, error, n),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _marker(f, base: Optional[int], epoch: Optional[int], crc_valid: bool, error: str):
    """One row standing for a batch that could not be decoded."""
    pa, schema, _, _ = arrow_schema()
    committed = True if f.kind == "snapshot" else (
        None if f.high_watermark is None or base is None else base < f.high_watermark)
    row = {"node": f.node, "path": f.path, "topic": f.topic, "partition": f.partition, "offset": base, "partition_leader_epoch": epoch, "timestamp": None,
           "timestamp_type": None, "key": None, "value": None, "headers": None, "is_control": None,
           "control_type": None, "batch_base_offset": base, "batch_crc_valid": crc_valid, "committed": committed,
           "is_snapshot": f.kind == "snapshot", "record_type": None, "record_version": None, "record_json": None,
           "error": error}
    return pa.RecordBatch.from_pylist([row], schema=schema)


def _filter(batch, rf: RowFilter):
    """Apply ``rf`` exactly (skipped when the batch's offsets and flags make it a no-op)."""
    if rf.trivial() or batch.num_rows == 0:
        return batch
    import pyarrow as pa
    import pyarrow.compute as pc

    b = rf.bounds
    mask = None

    def both(m):
        nonlocal mask
        mask = m if mask is None else pc.and_kleene(mask, m)

    off = batch.column("offset")
    if b.offset_lo is not None:
        both(pc.greater_equal(off, b.offset_lo))
    if b.offset_hi is not None:
        both(pc.less_equal(off, b.offset_hi))
    if rf.offsets_in is not None:
        both(pc.is_in(off, value_set=pa.array(sorted(rf.offsets_in), pa.int64())))
    ts = batch.column("timestamp")
    if b.ts_lo is not None:
        both(pc.greater_equal(ts, b.ts_lo))
    if b.ts_hi is not None:
        both(pc.less_equal(ts, b.ts_hi))
    if rf.is_control is not None:
        c = batch.column("is_control")
        both(c if rf.is_control else pc.invert(c))
    if rf.committed is not None:
        c = batch.column("committed")
        both(c if rf.committed else pc.invert(c))
    if mask is None:
        return batch
    return batch.filter(mask, null_selection_behavior="drop")


_NAMES = None


def _record_names() -> dict:
    """Kafka's ``MetadataRecordType`` names (``TOPIC_RECORD``) -> record names (``TopicRecord``)."""
    global _NAMES
    if _NAMES is None:
        from kraftwire.metadata import records as metadata_records

        _NAMES = {metadata_records.type_name(c): c.NAME for c in metadata_records.RECORD_TYPES.values()}
    return _NAMES


def decode_metadata_columns(batch):
    """``batch`` with ``record_type``/``record_version``/``record_json`` filled from each data record's value by the
    metadata decoder ``kraftwire dump-log --cluster-metadata-decoder`` uses (``record_json`` = its ``data``: Kafka's
    field names, only the fields of that version). Control records and marker rows stay null; a value that is no
    metadata record gets ``record_json`` = ``{"error": reason}`` and a null type."""
    if batch.num_rows == 0:
        return batch
    from kraftwire.tools.dump_log import decode_metadata

    pa, schema, _, _ = arrow_schema()
    names = _record_names()
    values = batch.column("value").to_pylist()
    control = batch.column("is_control").to_pylist()
    types, versions, texts = [], [], []
    for v, c in zip(values, control):
        if c is not False or v is None:  # control record or marker row
            types.append(None)
            versions.append(None)
            texts.append(None)
            continue
        d = decode_metadata(v)
        if "error" in d:
            types.append(None)
            versions.append(None)
            texts.append(json.dumps({"error": d["error"]}))
        else:
            types.append(names.get(d["type"], d["type"]))
            versions.append(d["version"])
            texts.append(json.dumps(d["data"], separators=(",", ":")))
    cols = {"record_type": pa.array(types, pa.string()), "record_version": pa.array(versions, pa.int32()),
            "record_json": pa.array(texts, pa.string())}
    arrays = [cols[name] if name in cols else batch.column(i) for i, name in enumerate(schema.names)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


@dataclass
class ScanStats:
    bytes_read: int = 0
    rows: int = 0
    corrupt_batches: int = 0


def _decode_slow(data: bytes, f, base_pos: int, with_path: bool = True) -> Iterator:
    """``data`` (whole batches) failed the fast path: decode batch by batch, flagging the bad ones."""
    pos = 0
    n = len(data)
    while pos < n:
        rest = memoryview(data)[pos:]
        checked = validate_batches(rest, stop_at_corruption=True)
        if checked.valid_bytes:
            yield _to_batch(decode_raw_columns(rest[: checked.valid_bytes], False), f, with_path=with_path)
            pos += checked.valid_bytes
        if checked.error is None:
            return
        bad = memoryview(data)[pos:]
        base, length = _BASE_LENGTH.unpack_from(bad, layout.BASE_OFFSET_POS)
        epoch = _I32.unpack_from(bad, layout.PARTITION_LEADER_EPOCH_POS)[0]
        size = length + layout.LOG_OVERHEAD
        reason = checked.error.reason
        crc_ok = reason != layout.REASON_CRC_MISMATCH
        where = f"{reason} in the batch at byte {base_pos + pos}"
        try:
            yield _to_batch(decode_raw_columns(bad[:size], False), f, crc_valid=crc_ok, error=where, with_path=with_path)
        except (CorruptRecordError, ValueError):
            yield _marker(f, base, epoch, crc_ok, where)
        pos += size


def scan(r: FileRange, rf: RowFilter, chunk: int = READ_CHUNK, stats: Optional[ScanStats] = None,
         with_path: bool = True, decode_metadata: bool = False) -> Iterator:
    """Yield ``pyarrow.RecordBatch``es (schema :func:`arrow_schema`) for the records of ``r`` that pass ``rf``
    (``with_path=False``: the ``path`` column is null, which Spark ingests much faster than a string per row;
    ``decode_metadata``: fill ``record_*`` for a ``__cluster_metadata`` partition's rows that pass ``rf``)."""
    stats = stats if stats is not None else ScanStats()
    f = r.file
    decode = decode_metadata and f.topic == METADATA_TOPIC
    hi = rf.bounds.offset_hi
    fd = os.open(f.path, os.O_RDONLY)
    try:
        pos = r.start
        carry = b""
        last_seen = -1
        while pos < r.end or carry:
            want = min(chunk, r.end - pos)
            data = carry + os.pread(fd, want, pos) if want > 0 else carry
            stats.bytes_read += max(0, want)
            pos += max(0, want)
            carry = b""
            try:
                whole = whole_batches_size(data)
            except CorruptRecordError as exc:
                whole = exc.position
                tail_error = exc
            else:
                tail_error = None
            if whole == 0 and tail_error is None:
                if pos >= r.end or len(data) < layout.LOG_OVERHEAD:
                    return  # torn tail (or a range that ends mid-batch): not corruption
                # One batch larger than the chunk: read the rest of it.
                need = _BASE_LENGTH.unpack_from(data, layout.BASE_OFFSET_POS)[1] + layout.LOG_OVERHEAD
                carry = data
                extra = min(need - len(data), r.end - pos)
                if extra <= 0:
                    return
                carry = data + os.pread(fd, extra, pos)
                stats.bytes_read += extra
                pos += extra
                continue
            body = memoryview(data)[:whole]
            if whole:
                try:
                    batches = [_to_batch(decode_raw_columns(body, True), f, with_path=with_path)]
                except CorruptRecordError:
                    batches = list(_decode_slow(bytes(body), f, pos - len(data), with_path))
                for b in batches:
                    if b.num_rows and b.column("offset")[b.num_rows - 1].is_valid:
                        last_seen = b.column("offset")[b.num_rows - 1].as_py()
                    stats.corrupt_batches += 0 if b.num_rows == 0 or b.column("error").null_count == b.num_rows else 1
                    out = _filter(b, rf)
                    stats.rows += out.num_rows
                    if out.num_rows:
                        yield decode_metadata_columns(out) if decode else out
            if tail_error is not None:
                stats.corrupt_batches += 1
                yield _marker(f, None, None, False,
                              f"{tail_error.reason} at byte {pos - len(data) + tail_error.position}; rest of range unread")
                return
            carry = data[whole:]
            if hi is not None and last_seen >= hi:
                return  # offsets only grow within a range
    finally:
        os.close(fd)


def write_stats(directory: str, r: FileRange, stats: ScanStats) -> None:
    """Diagnostics (the ``statsDir`` option): one JSON file per range read."""
    os.makedirs(directory, exist_ok=True)
    record = {"path": r.file.path, "start": r.start, "end": r.end, "bytes_read": stats.bytes_read,
              "rows": stats.rows, "corrupt_batches": stats.corrupt_batches}
    tmp = os.path.join(directory, f".{uuid.uuid4().hex}.tmp")
    with open(tmp, "w") as fh:
        json.dump(record, fh)
    os.replace(tmp, tmp.replace(".tmp", ".json").replace("/.", "/"))
