"""The shape of a Produce's records (``kraftwire.replica.produce_records``): one magic-2 batch per partition, no zstd
below v7 (Kafka's ProduceRequestTest: testV3AndAboveShouldContainOnlyOneRecordBatch,
testV3AndAboveCannotHaveNoRecordBatches, testV3AndAboveCannotUseMagicV0/V1, testV6AndBelowCannotUseZStdCompression),
and the whole-request refusal of a first batch Kafka's record iterator cannot read. The answers were taken from
Kafka 4.4 (``tests/kafka/test_bad_input_oracle.py`` keeps checking them on real sockets)."""

from __future__ import annotations

import struct

import pytest

from kraftwire.error_codes import CORRUPT_MESSAGE, INVALID_RECORD, UNSUPPORTED_COMPRESSION_TYPE
from kraftwire.records import RecordBatchBuilder
from kraftwire.records.api import MAGIC_POS
from kraftwire.replica.produce_records import request_error, shape_error


def _batch(*values: bytes, compression: str = "none", transactional: bool = False) -> bytes:
    b = RecordBatchBuilder(compression=compression, is_transactional=transactional,
                           producer_id=7 if transactional else -1, producer_epoch=0 if transactional else -1)
    for v in values:
        b.append(b"k", v)
    return b.build()


def _magic(batch: bytes, magic: int) -> bytes:
    return batch[:MAGIC_POS] + struct.pack(">b", magic) + batch[MAGIC_POS + 1:]


ONE = _batch(b"a")
TINY = struct.pack(">qi", 0, 5) + bytes(5)  # a size below the smallest record of any magic


@pytest.mark.parametrize("records", [ONE, _batch(b"a", b"b", compression="gzip"), ONE + ONE[:20], ONE + ONE[:11],
                                     memoryview(ONE)],
                         ids=["one", "gzip", "torn-20", "torn-11", "memoryview"])  # stable ids: the bytes hold a clock
def test_one_batch_passes_and_a_torn_tail_is_no_second_batch(records):
    assert shape_error(9, records) is None


@pytest.mark.parametrize("version", [3, 7, 9, 11])
def test_more_than_one_batch_is_an_invalid_record(version):
    assert shape_error(version, ONE + ONE) == (INVALID_RECORD, None)
    assert shape_error(version, ONE + _batch(b"b", b"c", compression="gzip") + ONE) == (INVALID_RECORD, None)


def test_no_batch_is_an_invalid_record():
    for records in (b"", ONE[:11], ONE[:-1]):
        assert shape_error(9, records) == (INVALID_RECORD, None)


@pytest.mark.parametrize("magic", [0, 1])
def test_a_legacy_magic_is_an_invalid_record(magic):
    assert shape_error(9, _magic(ONE, magic)) == (INVALID_RECORD, None)


def test_zstd_needs_version_7():
    zstd = _batch(b"z", compression="zstd")
    assert shape_error(6, zstd) == (UNSUPPORTED_COMPRESSION_TYPE, None)
    assert shape_error(3, zstd) == (UNSUPPORTED_COMPRESSION_TYPE, None)
    assert shape_error(7, zstd) is None


def test_versions_below_3_are_not_checked():
    assert shape_error(2, ONE + ONE) is None
    assert shape_error(0, b"") is None


@pytest.mark.parametrize("records", [ONE + TINY, ONE + _magic(ONE, 7), ONE + _magic(ONE, -1), TINY, _magic(ONE, 3)],
                         ids=["tiny-tail", "magic-7-tail", "magic-minus-1-tail", "tiny", "magic-3"])
def test_a_header_the_iterator_refuses_is_corrupt_without_a_message(records):
    assert shape_error(9, records) == (CORRUPT_MESSAGE, None)


def test_a_refused_first_batch_fails_the_request_with_kafkas_text():
    assert request_error([ONE, _magic(ONE, 5)]) == (CORRUPT_MESSAGE, "Invalid magic found in record: 5")
    assert request_error([TINY, ONE]) == (
        CORRUPT_MESSAGE, "Record size 5 is less than the minimum record overhead (14)")
    assert request_error([None, b"", ONE, ONE + TINY]) is None  # only first batches are read
    assert request_error([ONE[:15]]) is None  # too short to reach the magic: no batch, left to the partition check


def test_the_look_stops_at_the_first_transactional_batch():
    """Kafka reads first batches only until one is transactional: a refused one after it is left to each
    partition's own check (CORRUPT_MESSAGE without a message)."""
    assert request_error([_batch(b"t", transactional=True), TINY]) is None
    assert request_error([ONE, TINY, _batch(b"t", transactional=True)]) == (
        CORRUPT_MESSAGE, "Record size 5 is less than the minimum record overhead (14)")
