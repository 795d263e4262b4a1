"""The shape of the records in a client's Produce, pure: the checks Kafka makes before any partition is appended to.

* Per partition (Kafka's ``ProduceRequest.validateRecords``): a Produce of version 3 or later carries exactly one
  record batch per partition, of magic 2, and not ZStandard-compressed below version 7. A partition whose records
  break this gets its error, without a message, and nothing of it is appended; the other partitions go on.
* Per request (Kafka's look for transactional batches, ``RequestUtils.hasTransactionalRecords``): the first batch of
  each partition is read, in order, until a transactional one is found; a header the record iterator refuses there
  fails the whole request — every partition gets CORRUPT_MESSAGE with the iterator's text, and nothing is appended.

Batches are walked the way Kafka's record iterator walks them: a batch is counted once all of its bytes are there,
so a torn tail after the first batch is not a second batch (what the append then makes of it is the log's business),
and a size below the smallest legacy record (14 bytes) or a magic outside 0-2 is refused as it is reached."""

from __future__ import annotations

import struct

from kraftwire.error_codes import CORRUPT_MESSAGE, INVALID_RECORD, UNSUPPORTED_COMPRESSION_TYPE
from kraftwire.records.api import (ATTRIBUTES_POS, COMPRESSION_MASK, COMPRESSION_ZSTD, HEADER_SIZE_UP_TO_MAGIC,
                                   LENGTH_POS, LOG_OVERHEAD, MAGIC, MAGIC_POS, TRANSACTIONAL_MASK)

#: the smallest record of any magic: a legacy v0 record's crc, magic, attributes, key and value lengths
MIN_LEGACY_RECORD = 14
#: the first Produce version that may carry ZStandard-compressed batches (KIP-110)
ZSTD_FROM_VERSION = 7
_INT32 = struct.Struct(">i")
_INT16 = struct.Struct(">h")
_INT8 = struct.Struct(">b")


class _Corrupt(Exception):
    """A batch header Kafka's record iterator refuses; ``message`` is its text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _batch_end(records, pos: int) -> int | None:
    """The end of the batch at ``pos`` when all of it is there, None when the data ends first."""
    remaining = len(records) - pos
    if remaining < LOG_OVERHEAD:
        return None
    size = _INT32.unpack_from(records, pos + LENGTH_POS)[0]
    if size < MIN_LEGACY_RECORD:
        raise _Corrupt(f"Record size {size} is less than the minimum record overhead ({MIN_LEGACY_RECORD})")
    if remaining < HEADER_SIZE_UP_TO_MAGIC:
        return None
    magic = _INT8.unpack_from(records, pos + MAGIC_POS)[0]
    if not 0 <= magic <= MAGIC:
        raise _Corrupt(f"Invalid magic found in record: {magic}")
    if remaining < LOG_OVERHEAD + size:
        return None
    return pos + LOG_OVERHEAD + size


def request_error(partition_records) -> tuple[int, str] | None:
    """``(CORRUPT_MESSAGE, Kafka's text)`` when the first batch of a partition is refused before a transactional
    first batch is found, in the order given (``partition_records``: each partition's records, None for none)."""
    for records in partition_records:
        if records is None:
            continue
        try:
            end = _batch_end(records, 0)
        except _Corrupt as exc:
            return CORRUPT_MESSAGE, exc.message
        if end is not None and records[MAGIC_POS] == MAGIC and \
                _INT16.unpack_from(records, ATTRIBUTES_POS)[0] & TRANSACTIONAL_MASK:
            return None
    return None


def shape_error(version: int, records) -> tuple[int, str | None] | None:
    """``(error, message)`` when the records of one partition of a Produce at ``version`` are not one magic-2 batch
    (compressed as ``version`` allows), else None. ``records``: the partition's bytes (bytes or memoryview), not
    None."""
    if version < 3:  # older Produce versions carry any magic and any number of batches
        return None
    try:
        end = _batch_end(records, 0)
    except _Corrupt:
        return CORRUPT_MESSAGE, None
    if end is None:
        return INVALID_RECORD, None  # "must have at least one record batch per partition"
    if records[MAGIC_POS] != MAGIC:
        return INVALID_RECORD, None  # "only allowed to contain record batches with magic version 2"
    attributes = _INT16.unpack_from(records, ATTRIBUTES_POS)[0]
    if version < ZSTD_FROM_VERSION and attributes & COMPRESSION_MASK == COMPRESSION_ZSTD:
        return UNSUPPORTED_COMPRESSION_TYPE, None
    try:
        second = _batch_end(records, end)
    except _Corrupt:
        return CORRUPT_MESSAGE, None
    if second is not None:
        return INVALID_RECORD, None  # "only allowed to contain exactly one record batch per partition"
    return None
