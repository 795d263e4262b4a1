"""The shape of a Produce answer around the appends (``kraftwire.replica.produce_answer``), as the conformance run
against Kafka 4.4 found it: ``ProduceRequest.validateRecords`` (``kraftwire.replica.produce_records``) and the order of ``KafkaApis.handleProduceRequest``'s
merged answers."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.records import RecordBatchBuilder
from kraftwire.replica.produce_answer import APPENDED, INVALID, UNAUTHORIZED, UNKNOWN, ordered
from kraftwire.replica.produce_records import shape_error


def records_error(version: int, records) -> int:
    """The error the partition check gives (0: none), as the Produce edge applies it."""
    refusal = shape_error(version, records) if version >= 3 and records is not None else None
    return refusal[0] if refusal is not None else 0


def _batch(count: int = 2, compression: str = "none") -> bytes:
    b = RecordBatchBuilder(compression=compression)
    for i in range(count):
        b.append(b"k%d" % i, b"v%d" % i, timestamp=1000 + i)
    return b.build()


def test_one_whole_batch_of_magic_two_per_partition():
    assert records_error(9, _batch()) == 0
    assert records_error(9, b"") == ec.INVALID_RECORD  # "must have at least one record batch per partition"
    assert records_error(9, _batch() + _batch()) == ec.INVALID_RECORD  # "exactly one record batch per partition"
    assert records_error(9, _batch() + _batch()[:30]) == 0  # a partial batch after it is not read
    legacy = bytearray(_batch())
    legacy[16] = 1  # the magic byte
    assert records_error(9, bytes(legacy)) == ec.INVALID_RECORD
    assert records_error(9, b"\0" * 8 + b"\0\0\0\x05" + b"\0" * 5) == ec.CORRUPT_MESSAGE  # shorter than a header
    broken_crc = bytearray(_batch())
    broken_crc[-1] ^= 1
    assert records_error(9, bytes(broken_crc)) == 0  # found by the append (CORRUPT_MESSAGE there)
    assert records_error(2, b"") == 0  # versions below 3 are refused otherwise
    assert records_error(9, None) == 0  # null records: refused by the append


def test_zstd_needs_produce_v7():
    zstd = _batch(compression="zstd")
    assert [records_error(v, zstd) for v in (3, 6, 7, 11)] == [ec.UNSUPPORTED_COMPRESSION_TYPE] * 2 + [0, 0]


def test_answers_go_appended_then_unauthorized_then_unknown_then_refused_records():
    answers = [(UNKNOWN, "a", "a-3"), (APPENDED, "b", "b-0"), (INVALID, "a", "a-1"), (APPENDED, "a", "a-0"),
               (UNAUTHORIZED, "c", "c-0")]
    assert ordered(answers) == [("b", ["b-0"]), ("a", ["a-0", "a-3", "a-1"]), ("c", ["c-0"])]
