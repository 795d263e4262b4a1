"""RecordBatch v2: the byte layout (in one place), the codec's rules, and the codec Protocol.

Both implementations — the Cython extension ``kraftwire_ext._records`` and the pure-Python twin
``kraftwire.records.pyimpl`` — read every offset, mask and error reason from this module, and
both satisfy :class:`RecordCodec`. Differential tests hold them to identical results *and*
identical ``CorruptRecordError(reason, position)`` for every input.

Batch header (all integers big-endian; offsets derived from :data:`BATCH_FIELDS` below)::

     0  BaseOffset            int64   offset of the first record (the leader stamps it)
     8  Length                int32   bytes after this field; batch size = Length + LOG_OVERHEAD
    12  PartitionLeaderEpoch  int32   the leader epoch that appended it (-1 = none; leader stamps)
    16  Magic                 int8    always 2
    17  CRC                   uint32  CRC-32C (Castagnoli) over [Attributes, end of batch)
    21  Attributes            int16   bits 0-2 compression, 3 timestamp type, 4 transactional,
                                      5 control, 6 delete horizon
    23  LastOffsetDelta       int32   offset delta of the last record
    27  BaseTimestamp         int64   timestamp of the first record, or (attribute bit 6 set) the delete
                                      horizon the log cleaner stamped (KIP-534); record timestamp deltas
                                      are relative to it either way
    35  MaxTimestamp          int64   largest record timestamp
    43  ProducerId            int64
    51  ProducerEpoch         int16
    53  BaseSequence          int32
    57  RecordsCount          int32
    61  Records               ...     one compressed stream when compression != none

The CRC does not cover BaseOffset, Length, PartitionLeaderEpoch or Magic, so a leader can
re-stamp BaseOffset and PartitionLeaderEpoch without recomputing it.

Record (zig-zag varints, protobuf style)::

    Length varint | Attributes int8 | TimestampDelta varlong | OffsetDelta varint |
    KeyLength varint (-1 = null) | Key | ValueLength varint (-1 = null) | Value |
    HeadersCount varint | HeadersCount x (KeyLength varint, Key utf-8, ValueLength varint (-1 = null), Value)

Rules this codec enforces (identically in both implementations; each names its error reason):

* Framing: ``Length`` below :data:`MIN_BATCH_LENGTH` or a batch size (``Length + 12``) above the
  maximum batch size is ``REASON_BAD_BATCH_LENGTH`` wherever the batch stands (position: the
  Length field). ``Magic != 2`` is ``REASON_BAD_MAGIC`` (position: the magic byte). Fewer than
  12 bytes, fewer than 17 bytes (up to and including magic) or fewer than ``Length + 12`` bytes
  left over at the end of the input is an *incomplete* trailing batch: iteration stops quietly.
* Header (checked after the CRC): compression id > 4 is ``REASON_UNKNOWN_COMPRESSION``,
  ``LastOffsetDelta < 0`` is ``REASON_BAD_LAST_OFFSET_DELTA``, ``RecordsCount != LastOffsetDelta + 1``
  is ``REASON_RECORD_COUNT_MISMATCH`` (positions: the field).
* Records: record *i* must carry offset delta *i*; the records must exactly fill the batch
  (or the decompressed stream). Positions of record-level errors are absolute input positions
  for uncompressed batches; for compressed batches they are the position of the batch's records
  section (decompressed bytes have no input position).
* Varints: a varint (varlong) longer than 5 (10) bytes, or whose last byte carries bits beyond
  32 (64), is ``REASON_VARINT_OVERFLOW``; one cut off by the end of its record is
  ``REASON_RECORD_OVERRUN``.
* Offsets and timestamps are int64 and wrap like Java's ``long`` arithmetic.
* A record's timestamp is BaseTimestamp + TimestampDelta, or MaxTimestamp when the batch's
  timestamp type is LogAppendTime (Kafka's rule).
"""

from __future__ import annotations

import struct
from typing import Any, Iterable, Iterator, NamedTuple, Optional, Protocol, Sequence, runtime_checkable

# --------------------------------------------------------------------------------------------
# Layout: the single field table. Every *_POS constant below is derived from it.
# --------------------------------------------------------------------------------------------

#: (field name, struct format character), in wire order.
BATCH_FIELDS: tuple[tuple[str, str], ...] = (
    ("base_offset", "q"),
    ("length", "i"),
    ("partition_leader_epoch", "i"),
    ("magic", "b"),
    ("crc", "I"),
    ("attributes", "h"),
    ("last_offset_delta", "i"),
    ("base_timestamp", "q"),
    ("max_timestamp", "q"),
    ("producer_id", "q"),
    ("producer_epoch", "h"),
    ("base_sequence", "i"),
    ("record_count", "i"),
)


def _field_positions() -> dict[str, int]:
    positions, pos = {}, 0
    for name, fmt in BATCH_FIELDS:
        positions[name] = pos
        pos += struct.calcsize(">" + fmt)
    positions["records"] = pos
    return positions


FIELD_POSITIONS: dict[str, int] = _field_positions()

#: One struct for the whole header, in field-table order.
HEADER_STRUCT = struct.Struct(">" + "".join(fmt for _, fmt in BATCH_FIELDS))

BASE_OFFSET_POS = FIELD_POSITIONS["base_offset"]
LENGTH_POS = FIELD_POSITIONS["length"]
PARTITION_LEADER_EPOCH_POS = FIELD_POSITIONS["partition_leader_epoch"]
MAGIC_POS = FIELD_POSITIONS["magic"]
CRC_POS = FIELD_POSITIONS["crc"]
ATTRIBUTES_POS = FIELD_POSITIONS["attributes"]
LAST_OFFSET_DELTA_POS = FIELD_POSITIONS["last_offset_delta"]
BASE_TIMESTAMP_POS = FIELD_POSITIONS["base_timestamp"]
MAX_TIMESTAMP_POS = FIELD_POSITIONS["max_timestamp"]
PRODUCER_ID_POS = FIELD_POSITIONS["producer_id"]
PRODUCER_EPOCH_POS = FIELD_POSITIONS["producer_epoch"]
BASE_SEQUENCE_POS = FIELD_POSITIONS["base_sequence"]
RECORD_COUNT_POS = FIELD_POSITIONS["record_count"]
RECORDS_POS = FIELD_POSITIONS["records"]

#: BaseOffset + Length: the bytes not counted by Length.
LOG_OVERHEAD = LENGTH_POS + struct.calcsize(">i")
#: The whole batch header; the records start here.
RECORD_BATCH_OVERHEAD = RECORDS_POS
#: Bytes needed to see the magic byte (the header "up to magic").
HEADER_SIZE_UP_TO_MAGIC = MAGIC_POS + 1
#: Smallest legal Length field (a header with no record bytes).
MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD
#: CRC-32C covers [CRC_START, end of batch).
CRC_START = ATTRIBUTES_POS
MAGIC = 2

#: Default limit on a batch's size in bytes (Length + 12), also the decompressed-size limit.
MAX_BATCH_SIZE = 8 * 1024 * 1024

#: Bounds of Kafka's record encoding.
MAX_VARINT_BYTES = 5
MAX_VARLONG_BYTES = 10
#: Smallest record body: attributes, timestamp delta, offset delta, key len, value len, header count.
MIN_RECORD_BODY = 6
#: Length varint (5) + attributes (1) + timestamp delta (10) + offset delta (5), excluding key/value/headers.
MAX_RECORD_OVERHEAD = 21

# --------------------------------------------------------------------------------------------
# Attributes
# --------------------------------------------------------------------------------------------

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

COMPRESSION_NONE = 0
COMPRESSION_GZIP = 1
COMPRESSION_SNAPPY = 2
COMPRESSION_LZ4 = 3
COMPRESSION_ZSTD = 4

#: Compression names in id order (the id is the index).
COMPRESSION_NAMES: tuple[str, ...] = ("none", "gzip", "snappy", "lz4", "zstd")
COMPRESSION_IDS: dict[str, int] = {name: i for i, name in enumerate(COMPRESSION_NAMES)}

TIMESTAMP_CREATE_TIME = 0
TIMESTAMP_LOG_APPEND_TIME = 1

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1



def checked_delete_horizon(delete_horizon_ms: Any) -> Optional[int]:
    """A builder's ``delete_horizon_ms`` argument checked (both implementations call this, so they raise alike):
    None (no horizon) or a plain int in ``[0, 2**63 - 1]`` (Kafka sets the bit only for a horizon >= 0)."""
    if delete_horizon_ms is None:
        return None
    if not isinstance(delete_horizon_ms, int):
        raise TypeError(f"delete_horizon_ms must be int or None, not {type(delete_horizon_ms).__name__}")
    if delete_horizon_ms > (1 << 63) - 1:
        raise OverflowError("delete_horizon_ms out of int64 range")
    if delete_horizon_ms < 0:
        raise ValueError(f"delete_horizon_ms must be >= 0 or None, got {delete_horizon_ms}")
    return int(delete_horizon_ms)  # a bool or int subclass: a plain int


# --------------------------------------------------------------------------------------------
# Control records: key = int16 version + int16 type (the values belong to kraftwire.protocol)
# --------------------------------------------------------------------------------------------

CONTROL_KEY_STRUCT = struct.Struct(">hh")
CONTROL_KEY_VERSION = 0
CONTROL_ABORT = 0
CONTROL_COMMIT = 1
CONTROL_LEADER_CHANGE = 2
CONTROL_SNAPSHOT_HEADER = 3
CONTROL_SNAPSHOT_FOOTER = 4
CONTROL_KRAFT_VERSION = 5
CONTROL_KRAFT_VOTERS = 6
CONTROL_UNKNOWN = -1

CONTROL_TYPE_NAMES: dict[int, str] = {
    CONTROL_ABORT: "ABORT",
    CONTROL_COMMIT: "COMMIT",
    CONTROL_LEADER_CHANGE: "LEADER_CHANGE",
    CONTROL_SNAPSHOT_HEADER: "SNAPSHOT_HEADER",
    CONTROL_SNAPSHOT_FOOTER: "SNAPSHOT_FOOTER",
    CONTROL_KRAFT_VERSION: "KRAFT_VERSION",
    CONTROL_KRAFT_VOTERS: "KRAFT_VOTERS",
}


def control_key(control_type: int, version: int = CONTROL_KEY_VERSION) -> bytes:
    """The 4-byte key of a control record: int16 version, int16 type."""
    return CONTROL_KEY_STRUCT.pack(version, control_type)


def parse_control_key(key: Optional[bytes]) -> tuple[int, int]:
    """``(version, type)`` of a control record key; ``(-1, CONTROL_UNKNOWN)`` if it is too short or null.

    Like Kafka, a key longer than 4 bytes is read by its first 4 bytes (newer versions may append).
    """
    if key is None or len(key) < CONTROL_KEY_STRUCT.size:
        return (-1, CONTROL_UNKNOWN)
    return CONTROL_KEY_STRUCT.unpack_from(key, 0)


# --------------------------------------------------------------------------------------------
# Error reasons: the exact strings of CorruptRecordError.reason (both implementations).
# --------------------------------------------------------------------------------------------

REASON_BAD_BATCH_LENGTH = "bad batch length"
REASON_BAD_MAGIC = "bad magic"
REASON_CRC_MISMATCH = "crc mismatch"
REASON_UNKNOWN_COMPRESSION = "unknown compression"
REASON_BAD_LAST_OFFSET_DELTA = "bad last offset delta"
REASON_RECORD_COUNT_MISMATCH = "record count mismatch"
REASON_OFFSET_DELTA_MISMATCH = "offset delta mismatch"
REASON_VARINT_OVERFLOW = "varint overflow"
REASON_RECORD_OVERRUN = "record overrun"
REASON_BAD_RECORD_LENGTH = "bad record length"
REASON_RECORD_LENGTH_MISMATCH = "record length mismatch"
REASON_BAD_KEY_LENGTH = "bad key length"
REASON_BAD_VALUE_LENGTH = "bad value length"
REASON_BAD_HEADER_COUNT = "bad header count"
REASON_BAD_HEADER_KEY_LENGTH = "bad header key length"
REASON_BAD_HEADER_KEY_ENCODING = "bad header key encoding"
REASON_BAD_HEADER_VALUE_LENGTH = "bad header value length"
REASON_TRAILING_BYTES = "trailing bytes in batch"
REASON_DECOMPRESSION_FAILED = "decompression failed"
REASON_DECOMPRESSION_BOMB = "decompressed size exceeds limit"

ALL_REASONS: tuple[str, ...] = tuple(v for k, v in dict(globals()).items() if k.startswith("REASON_"))

# --------------------------------------------------------------------------------------------
# Values the codec returns
# --------------------------------------------------------------------------------------------


class BatchInfo(NamedTuple):
    """One validated batch, as :func:`validate_batches` reports it."""

    base_offset: int
    last_offset: int
    partition_leader_epoch: int
    position: int
    size: int


class ValidationResult(NamedTuple):
    """What :func:`validate_batches` checked.

    ``valid_bytes`` is the length of the valid prefix (whole, valid batches). ``incomplete`` is
    true when bytes after it are the start of a batch that is not all there (not corrupt).
    ``error`` is the ``CorruptRecordError`` that stopped validation (only with
    ``stop_at_corruption=True``; otherwise it is raised). Offsets are ``-1`` when no batch was valid.
    ``headers`` (only with ``headers=True``, else None): a :class:`RecordBatchLike` per valid batch, the
    header the validation read, so a caller needing its fields (producer, attributes, records) does not
    read the batches a second time.
    """

    valid_bytes: int
    batch_count: int
    record_count: int
    first_offset: int
    last_offset: int
    last_epoch: int
    max_timestamp: int
    batches: list
    incomplete: bool
    error: Any
    headers: Any = None


class RecordLike(Protocol):
    offset: int
    timestamp: int
    key: Optional[bytes]
    value: Optional[bytes]
    headers: list


class RecordBatchLike(Protocol):
    base_offset: int
    last_offset: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    compression: str
    is_control: bool
    is_transactional: bool
    timestamp_type: int
    has_delete_horizon: bool
    delete_horizon_ms: Optional[int]  # BaseTimestamp when has_delete_horizon, else None
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int
    size_in_bytes: int
    position: int

    @property
    def buffer(self) -> memoryview: ...

    def __iter__(self) -> Iterator[RecordLike]: ...

    def records(self) -> list: ...


class RecordBatchBuilderLike(Protocol):
    record_count: int

    def append(self, key: Optional[bytes], value: Optional[bytes], headers: Iterable = (),
               timestamp: Optional[int] = None) -> int: ...

    def append_many(self, values: Sequence[Optional[bytes]], keys: Optional[Sequence[Optional[bytes]]] = None,
                    timestamp: Optional[int] = None) -> int: ...

    def size_in_bytes(self) -> int: ...

    def build(self) -> bytes: ...


class BatchReaderLike(Protocol):
    valid_bytes: int
    incomplete: bool

    def __iter__(self) -> Iterator[RecordBatchLike]: ...

    def __next__(self) -> RecordBatchLike: ...


@runtime_checkable
class RecordCodec(Protocol):
    """What both ``kraftwire.records.pyimpl`` and ``kraftwire_ext._records`` provide."""

    IMPLEMENTATION: str
    RecordBatchBuilder: Any
    RecordBatch: Any
    Record: Any
    BatchReader: Any

    def read_batches(self, buf: Any, validate: bool = True, max_batch_size: int = MAX_BATCH_SIZE) -> BatchReaderLike: ...

    def validate_batches(self, buf: Any, max_batch_size: int = MAX_BATCH_SIZE, *, check_records: bool = True,
                         stop_at_corruption: bool = False, headers: bool = False) -> ValidationResult: ...

    def whole_batches_size(self, buf: Any, max_batch_size: int = MAX_BATCH_SIZE) -> int: ...

    def set_base_offset_and_epoch(self, buf: Any, position: int, base_offset: int, partition_leader_epoch: int) -> None: ...

    def rebase_batches(self, buf: Any, base_offset: int, partition_leader_epoch: int,
                       max_batch_size: int = MAX_BATCH_SIZE, *, batches: Optional[list] = None) -> bytes: ...

    def decode_raw_columns(self, buf: Any, validate: bool = True, max_batch_size: int = MAX_BATCH_SIZE) -> Any: ...

    def index_keys(self, buf: Any, into: dict, max_batch_size: int = MAX_BATCH_SIZE) -> int: ...

    def decode_columns(self, buf: Any, validate: bool = True, max_batch_size: int = MAX_BATCH_SIZE) -> Any: ...
