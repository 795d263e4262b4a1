"""A lying length must never drive an allocation: fuzz under a tracemalloc peak limit.

Record counts, key/value/header lengths, header counts, batch lengths and decompressed sizes
are all set to huge values while the input stays tiny; the peak traced allocation while
parsing must stay proportional to the input (or, for decompression, to the batch size limit).
"""

from __future__ import annotations

import gzip
import struct
import tracemalloc

import crc32c
import lz4.frame
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftwire.errors import CorruptRecordError
from kraftwire.records import api

HUGE = st.sampled_from([2**31 - 1, 2**30, 2**28 + 3, 10**9, 2**31 - 2])


def zz(v: int) -> bytes:
    z = (v << 1) ^ (v >> 63)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def batch(records: bytes, count: int, attributes: int = 0) -> bytes:
    hdr = api.HEADER_STRUCT.pack(0, api.MIN_BATCH_LENGTH + len(records), 0, 2, 0, attributes, count - 1, 0, 0, -1, -1, -1, count)
    buf = bytearray(hdr + records)
    struct.pack_into(">I", buf, api.CRC_POS, crc32c.crc32c(bytes(buf[api.CRC_START :])))
    return bytes(buf)


def exercise(codec, buf, limit=api.MAX_BATCH_SIZE):
    """Run every entry point over buf; only CorruptRecordError is an acceptable failure."""
    for fn in (
        lambda: [list(b) for b in codec.read_batches(buf, True, limit)],
        lambda: codec.validate_batches(buf, limit),
        lambda: codec.decode_raw_columns(buf, True, limit),
        lambda: codec.whole_batches_size(buf, limit),
    ):
        try:
            fn()
        except CorruptRecordError:
            pass


def peak_of(fn) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@st.composite
def lying_batches(draw):
    huge = draw(HUGE)
    where = draw(st.sampled_from(["count", "record length", "key", "value", "header count", "header key", "header value", "batch length"]))
    count = 1
    body = bytearray(b"\x00\x00\x00")  # attributes, ts delta, offset delta
    body += zz(huge) if where == "key" else zz(1) + b"k"
    body += zz(huge) if where == "value" else zz(1) + b"v"
    if where == "header count":
        body += zz(huge)
    elif where in ("header key", "header value"):
        body += zz(1) + (zz(huge) + b"x" if where == "header key" else zz(1) + b"h" + zz(huge) + b"y")
    else:
        body += zz(0)
    rec = (zz(huge) if where == "record length" else zz(len(body))) + body
    if where == "count":
        count = huge
    buf = batch(bytes(rec) * draw(st.integers(1, 3)), count)
    if where == "batch length":
        buf = buf[:8] + struct.pack(">i", huge) + buf[12:]
    return buf


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(buf=lying_batches())
def test_lying_lengths_do_not_allocate(codec, buf):
    peak = peak_of(lambda: exercise(codec, buf))
    assert peak < 64 * 1024 + 16 * len(buf), peak


def _zstd_unknown_size(data: bytes) -> bytes:
    obj = zstandard.ZstdCompressor().compressobj()
    return obj.compress(data) + obj.flush()


BOMB = 32 * 1024 * 1024
LIMIT = 256 * 1024


@pytest.fixture(scope="module")
def bombs():
    zeros = b"\x00" * BOMB
    raw_snappy_claim = bytes([0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) + b"\x00" * 20  # declares 4 GiB
    xerial = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + struct.pack(">i", len(raw_snappy_claim)) + raw_snappy_claim
    # zstd frame whose header claims 2**40 bytes: magic, FHD (FCS flag 3 = 8 bytes, single segment), size, then garbage
    zstd_claim = b"\x28\xb5\x2f\xfd" + bytes([0xE0]) + (2**40).to_bytes(8, "little") + b"\x01\x00\x00"
    return {
        "gzip": (1, gzip.compress(zeros, compresslevel=1)),
        "lz4": (3, lz4.frame.compress(zeros)),
        "zstd (declared size)": (4, zstandard.ZstdCompressor().compress(zeros)),
        "zstd (streamed, no size)": (4, _zstd_unknown_size(zeros)),
        "zstd (lying header)": (4, zstd_claim),
        "snappy raw (lying preamble)": (2, raw_snappy_claim),
        "snappy xerial (lying preamble)": (2, xerial),
    }


@pytest.mark.parametrize(
    "name",
    ["gzip", "lz4", "zstd (declared size)", "zstd (streamed, no size)", "zstd (lying header)",
     "snappy raw (lying preamble)", "snappy xerial (lying preamble)"],
)  # fmt: skip
def test_decompression_is_bounded_by_the_batch_limit(codec, bombs, name):
    codec_id, payload = bombs[name]
    buf = batch(payload, 1, attributes=codec_id)
    errors = []

    def run():
        try:
            codec.validate_batches(buf, LIMIT)
        except CorruptRecordError as exc:
            errors.append(exc)

    peak = peak_of(run)
    assert errors and errors[0].reason in (api.REASON_DECOMPRESSION_BOMB, api.REASON_DECOMPRESSION_FAILED)
    if "lying" not in name:
        assert errors[0].reason == api.REASON_DECOMPRESSION_BOMB
    assert errors[0].position == api.RECORDS_POS
    assert peak < 4 * LIMIT + 4 * len(buf) + 256 * 1024, peak


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_batches_caught_in_a_reference_cycle_are_collected_cleanly():
    """Batches held in a garbage cycle (as an exception's traceback holds a reader's) are freed without the cycle
    collector trying to clear the input buffer they still export ("memoryview has 1 exported buffer")."""
    import gc

    from kraftwire.records import RecordBatchBuilder, read_batches

    b = RecordBatchBuilder()
    b.append(b"k", b"v" * 100, timestamp=1)
    data = b.build() * 3
    gc.collect()
    for _ in range(20):
        batches = list(read_batches(bytearray(data)))  # made before the cycle: the collector meets them first
        holder = [batches]
        holder.append(holder)
        del batches, holder
        reader = read_batches(bytearray(data))
        first = next(iter(reader))
        cycle = {"reader": reader, "first": first}
        cycle["self"] = cycle
        del reader, first, cycle
    assert gc.collect() > 0
