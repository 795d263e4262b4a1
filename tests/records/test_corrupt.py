"""Every CorruptRecordError reason, with its exact position, from every entry point, in both implementations."""

from __future__ import annotations

import gzip
import struct

import pytest

from kraftwire.errors import CorruptRecordError
from kraftwire.records import api

from harness.codec import read_all


def zz(v: int) -> bytes:
    """Zig-zag varint, written independently of the codec."""
    z = (v << 1) ^ (v >> 63)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def record(body: bytes) -> bytes:
    return zz(len(body)) + body


def body(offset_delta=0, key=b"k", value=b"v", headers=(), ts_delta=b"\x00") -> bytes:
    """A record body; key/value/header parts may be raw bytes (already encoded) via tuples ('raw', bytes)."""
    out = bytearray(b"\x00") + ts_delta + zz(offset_delta)
    for part in (key, value):
        if isinstance(part, tuple):
            out += part[1]
        elif part is None:
            out += zz(-1)
        else:
            out += zz(len(part)) + part
    if isinstance(headers, tuple) and headers and headers[0] == "raw":
        out += headers[1]
    else:
        out += zz(len(headers))
        for k, v in headers:
            out += zz(len(k)) + k + (zz(-1) if v is None else zz(len(v)) + v)
    return bytes(out)


def batch(records: bytes, count: int, *, attributes=0, lod=None, magic=2, length=None, fix=True) -> bytes:
    lod = count - 1 if lod is None else lod
    hdr = api.HEADER_STRUCT.pack(
        0, length if length is not None else api.MIN_BATCH_LENGTH + len(records), -1, magic, 0, attributes, lod,
        0, 0, -1, -1, -1, count,
    )  # fmt: skip
    buf = bytearray(hdr + records)
    if fix:
        import crc32c

        struct.pack_into(">I", buf, api.CRC_POS, crc32c.crc32c(bytes(buf[api.CRC_START :])))
    return bytes(buf)


R0 = api.RECORDS_POS  # where the first record starts
GOOD = batch(record(body()), 1)

CASES = {
    "length below minimum": (batch(b"", 1, length=48), api.REASON_BAD_BATCH_LENGTH, api.LENGTH_POS),
    "length above limit, trailing": (GOOD[:12].replace(GOOD[8:12], (9 << 20).to_bytes(4, "big")), api.REASON_BAD_BATCH_LENGTH, 8),
    "negative length": (GOOD[:8] + b"\xff\xff\xff\xff" + GOOD[12:], api.REASON_BAD_BATCH_LENGTH, 8),
    "second batch bad length": (GOOD + GOOD[:8] + b"\x00\x00\x00\x05", api.REASON_BAD_BATCH_LENGTH, len(GOOD) + 8),
    "bad magic": (batch(record(body()), 1, magic=1), api.REASON_BAD_MAGIC, api.MAGIC_POS),
    "bad magic on a partial batch": (batch(record(body()), 1, magic=3)[:20], api.REASON_BAD_MAGIC, api.MAGIC_POS),
    "crc mismatch": (GOOD[:-1] + b"w", api.REASON_CRC_MISMATCH, api.CRC_POS),
    "unknown compression": (batch(record(body()), 1, attributes=5), api.REASON_UNKNOWN_COMPRESSION, api.ATTRIBUTES_POS),
    "negative last offset delta": (batch(record(body()), 0, lod=-1), api.REASON_BAD_LAST_OFFSET_DELTA, api.LAST_OFFSET_DELTA_POS),
    "count vs last offset delta": (batch(record(body()), 3, lod=1), api.REASON_RECORD_COUNT_MISMATCH, api.RECORD_COUNT_POS),
    "fewer records than counted": (batch(record(body()), 2), api.REASON_RECORD_COUNT_MISMATCH, len(GOOD)),
    "offset delta mismatch": (batch(record(body()) + record(body(offset_delta=5)), 2), api.REASON_OFFSET_DELTA_MISMATCH, len(GOOD) + 3),
    "varint overflow (5th byte)": (batch(b"\xff\xff\xff\xff\x7f" + b"\x00" * 8, 1), api.REASON_VARINT_OVERFLOW, R0),
    "varint overflow (6 bytes)": (batch(b"\xff\xff\xff\xff\xff\x01" + b"\x00" * 8, 1), api.REASON_VARINT_OVERFLOW, R0),
    "varlong overflow": (batch(record(body(ts_delta=b"\xff" * 10 + b"\x01")), 1), api.REASON_VARINT_OVERFLOW, R0 + 2),
    "record overrun (length)": (batch(zz(50) + body(), 1), api.REASON_RECORD_OVERRUN, R0),
    "record overrun (varint cut)": (batch(b"\x80", 1), api.REASON_RECORD_OVERRUN, R0),
    "record overrun (key)": (batch(record(body(key=("raw", zz(40) + b"k")) ), 1), api.REASON_RECORD_OVERRUN, R0 + 4),
    "bad record length": (batch(zz(3) + b"\x00\x00\x00", 1), api.REASON_BAD_RECORD_LENGTH, R0),
    "record length mismatch": (batch(zz(len(body()) + 1) + body() + b"\x00", 1), api.REASON_RECORD_LENGTH_MISMATCH, R0),
    "bad key length": (batch(record(body(key=("raw", zz(-2)))), 1), api.REASON_BAD_KEY_LENGTH, R0 + 4),
    "bad value length": (batch(record(body(value=("raw", zz(-5)))), 1), api.REASON_BAD_VALUE_LENGTH, R0 + 6),
    "bad header count": (batch(record(body(headers=("raw", zz(-1)))), 1), api.REASON_BAD_HEADER_COUNT, R0 + 8),
    "null header key": (batch(record(body(headers=("raw", zz(1) + zz(-1) + zz(-1)))), 1), api.REASON_BAD_HEADER_KEY_LENGTH, R0 + 9),
    "header key not utf-8": (batch(record(body(headers=[(b"\xff", None)])), 1), api.REASON_BAD_HEADER_KEY_ENCODING, R0 + 9),
    "surrogate header key": (batch(record(body(headers=[(b"\xed\xa0\x80", None)])), 1), api.REASON_BAD_HEADER_KEY_ENCODING, R0 + 9),
    "bad header value length": (batch(record(body(headers=("raw", zz(1) + zz(1) + b"h" + zz(-3)))), 1), api.REASON_BAD_HEADER_VALUE_LENGTH, R0 + 11),
    "trailing bytes": (batch(record(body()) + b"\x00", 1), api.REASON_TRAILING_BYTES, len(GOOD)),
    "decompression failed": (batch(b"not gzip", 1, attributes=1), api.REASON_DECOMPRESSION_FAILED, R0),
    "gzip bomb": (batch(gzip.compress(b"\x00" * (9 << 20)), 1, attributes=1), api.REASON_DECOMPRESSION_BOMB, R0),
    "error inside a compressed batch": (batch(gzip.compress(record(body(offset_delta=3))), 1, attributes=1), api.REASON_OFFSET_DELTA_MISMATCH, R0),
}  # fmt: skip

# Header-level errors raise before a batch is yielded; record-level ones while iterating it.
HEADER_LEVEL = {api.REASON_BAD_BATCH_LENGTH, api.REASON_BAD_MAGIC, api.REASON_CRC_MISMATCH,
                api.REASON_UNKNOWN_COMPRESSION, api.REASON_BAD_LAST_OFFSET_DELTA}  # fmt: skip


def test_every_reason_has_a_case():
    assert {reason for _, reason, _ in CASES.values()} == set(api.ALL_REASONS)


@pytest.mark.parametrize("name", CASES)
def test_read_batches_reports_reason_and_position(codec, name):
    buf, reason, position = CASES[name]
    events = read_all(codec, buf)
    assert events[-1] == ("corrupt", reason, position), events
    if reason in HEADER_LEVEL and position < len(GOOD):
        assert len(events) == 1, "a batch with a corrupt header must not be yielded"


@pytest.mark.parametrize("name", CASES)
def test_validate_batches_reports_reason_and_position(codec, name):
    buf, reason, position = CASES[name]
    with pytest.raises(CorruptRecordError) as info:
        codec.validate_batches(buf)
    assert (info.value.reason, info.value.position) == (reason, position)
    result = codec.validate_batches(buf, stop_at_corruption=True)
    assert (result.error.reason, result.error.position) == (reason, position)
    assert result.valid_bytes == (len(GOOD) if position >= len(GOOD) and buf.startswith(GOOD) and name.startswith("second") else 0)


@pytest.mark.parametrize("name", CASES)
def test_columnar_decode_reports_reason_and_position(codec, name):
    buf, reason, position = CASES[name]
    with pytest.raises(CorruptRecordError) as info:
        codec.decode_raw_columns(buf)
    assert (info.value.reason, info.value.position) == (reason, position)


def test_a_crc_mismatch_is_raised_before_the_batch_is_yielded(codec):
    reader = codec.read_batches(CASES["crc mismatch"][0])
    with pytest.raises(CorruptRecordError):
        next(reader)
    (batch,) = list(codec.read_batches(CASES["crc mismatch"][0], validate=False))  # validate=False skips the CRC only
    assert batch.record_count == 1


def test_header_checks_do_not_need_records_iterated(codec):
    for name in ("unknown compression", "count vs last offset delta"):
        with pytest.raises(CorruptRecordError):
            next(iter(codec.read_batches(CASES[name][0])))


def test_records_before_a_corrupt_record_are_yielded(codec):
    events = read_all(codec, CASES["offset delta mismatch"][0])
    assert [e[0] for e in events] == ["batch", "record", "corrupt"]


def test_check_records_false_skips_the_record_walk(codec):
    result = codec.validate_batches(CASES["offset delta mismatch"][0], check_records=False)
    assert result.batch_count == 1 and result.error is None


def test_valid_prefix_before_corruption(codec):
    buf = GOOD + GOOD + CASES["crc mismatch"][0] + GOOD
    result = codec.validate_batches(buf, stop_at_corruption=True)
    assert result.valid_bytes == 2 * len(GOOD) and result.batch_count == 2
    assert (result.error.reason, result.error.position) == (api.REASON_CRC_MISMATCH, 2 * len(GOOD) + api.CRC_POS)


def test_decompression_limit_follows_max_batch_size(codec):
    payload = record(body(value=b"\x00" * 5000))
    buf = batch(gzip.compress(payload), 1, attributes=1)
    assert codec.validate_batches(buf).batch_count == 1
    with pytest.raises(CorruptRecordError) as info:
        codec.validate_batches(buf, max_batch_size=len(payload) - 1 if len(payload) - 1 >= len(buf) else len(buf))
    assert info.value.reason == api.REASON_DECOMPRESSION_BOMB


def test_error_fields_survive_pickling():
    import pickle

    exc = pickle.loads(pickle.dumps(CorruptRecordError("crc mismatch", 17)))
    assert (exc.reason, exc.position) == ("crc mismatch", 17)
