"""Differential tests: the pure-Python twin and the extension must agree on every input —
same values, and for bad input the same exception type, reason and position.

Inputs: random well-formed batches, the same with bit flips / truncations / garbage, the same
with the CRC recomputed after mutating (so the record parser itself is attacked, not just the
CRC), and batches whose (possibly compressed) record section is arbitrary bytes.
"""

from __future__ import annotations

import gzip
import struct

import crc32c
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kraftwire.records import api
from kraftwire.records import compression as comp
from kraftwire.records import pyimpl
from kraftwire.records.columns import to_arrow

from harness.codec import fix_crc, outcome, read_all

I64 = st.integers(-(2**63), 2**63 - 1)
I32 = st.integers(-(2**31), 2**31 - 1)

record_st = st.tuples(
    st.none() | st.binary(max_size=40),
    st.none() | st.binary(max_size=200),
    st.lists(st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=16)), max_size=3),
    st.integers(-(2**40), 2**40),
)
batch_st = st.fixed_dictionaries(
    {
        "base_offset": I64,
        "partition_leader_epoch": I32,
        "compression": st.sampled_from(api.COMPRESSION_NAMES),
        "is_control": st.booleans(),
        "is_transactional": st.booleans(),
        "producer_id": I64,
        "producer_epoch": st.integers(-(2**15), 2**15 - 1),
        "base_sequence": I32,
        "timestamp_type": st.sampled_from([0, 1]),
        "delete_horizon_ms": st.none() | st.integers(0, 2**41),  # KIP-534: the cleaner's stamp, bit 6
    }
)
# Fixtures used here are stateless module handles, so sharing them across examples is fine.
SETTINGS = settings(max_examples=max(300, settings.default.max_examples),  # more under the 'thorough' profile
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture], deadline=None)


def build(codec, params, recs, bulk):
    b = codec.RecordBatchBuilder(**params)
    if bulk:
        b.append_many([r[1] for r in recs], keys=[r[0] for r in recs], timestamp=recs[0][3] if recs else 0)
    else:
        for key, value, headers, ts in recs:
            b.append(key, value, headers, timestamp=ts)
    return b.build()


def compare_everything(py, ext, buf, max_batch_size=api.MAX_BATCH_SIZE):
    for validate in (True, False):
        events = read_all(py, buf, validate, max_batch_size)
        assert events == read_all(ext, buf, validate, max_batch_size)
        if validate:
            event(f"outcome: {events[-1][1] if events[-1][0] == 'corrupt' else 'ok'}")
    for kwargs in ({}, {"stop_at_corruption": True}, {"check_records": False, "stop_at_corruption": True}):
        a = outcome(py.validate_batches, buf, max_batch_size, **kwargs)
        b = outcome(ext.validate_batches, buf, max_batch_size, **kwargs)
        if a[0] == "ok" and a[1].error is not None:  # compare the carried error by its fields
            a = ("ok", a[1]._replace(error=(a[1].error.reason, a[1].error.position)))
            b = ("ok", b[1]._replace(error=(b[1].error.reason, b[1].error.position)))
        assert a == b, kwargs
    assert outcome(py.decode_raw_columns, buf, True, max_batch_size) == outcome(
        ext.decode_raw_columns, buf, True, max_batch_size
    )
    if outcome(py.decode_raw_columns, buf, True, max_batch_size)[0] == "ok":  # the cleaner's map of valid input
        a: dict = {}
        b: dict = {}
        assert py.index_keys(buf, a, max_batch_size) == ext.index_keys(buf, b, max_batch_size) and a == b
    assert outcome(py.whole_batches_size, buf, max_batch_size) == outcome(
        ext.whole_batches_size, buf, max_batch_size
    )
    assert outcome(py.rebase_batches, buf, 5, 6, max_batch_size) == outcome(
        ext.rebase_batches, buf, 5, 6, max_batch_size
    )


@SETTINGS
@given(params=batch_st, recs=st.lists(record_st, max_size=12), bulk=st.booleans())
def test_builders_produce_identical_bytes(both, params, recs, bulk):
    """Also with a delete horizon (bit 6, BaseTimestamp = the horizon): the records keep their own timestamps."""
    py, ext = both
    data = build(py, params, recs, bulk)
    assert data == build(ext, params, recs, bulk)
    compare_everything(py, ext, data)
    if recs:
        (batch,) = list(ext.read_batches(data))
        assert batch.record_count == len(recs)
        assert batch.delete_horizon_ms == params["delete_horizon_ms"]
        assert batch.has_delete_horizon == (params["delete_horizon_ms"] is not None)
        max_ts = max(r[3] for r in recs) if not bulk else recs[0][3]
        expected = []
        for i, (key, value, headers, ts) in enumerate(recs):
            if bulk:
                headers, ts = [], recs[0][3]
            if params["timestamp_type"] == 1:
                ts = max_ts
            offset = (params["base_offset"] + i + 2**63) % 2**64 - 2**63
            expected.append((offset, ts, key, value, headers))
        assert [tuple(r) for r in batch] == expected
        rows = to_arrow(ext.decode_raw_columns(data)).to_pylist()
        assert [(r["offset"], r["timestamp"], r["key"], r["value"], [(h["key"], h["value"]) for h in r["headers"]])
                for r in rows] == expected  # fmt: skip
        assert {(r["partition_leader_epoch"], r["is_control"], r["base_offset"]) for r in rows} == {
            (params["partition_leader_epoch"], params["is_control"], params["base_offset"])}


@st.composite
def buffers(draw):
    params_list = draw(st.lists(batch_st, min_size=1, max_size=3))
    out = b""
    for params in params_list:
        recs = draw(st.lists(record_st, min_size=1, max_size=6))
        out += build(pyimpl, params, recs, False)
    return out


def mutate(data: bytes, draw) -> bytearray:
    buf = bytearray(data)
    kind = draw(st.sampled_from(["flip", "truncate", "garbage", "set", "splice"]))
    if kind == "flip":
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(buf) - 1))
            buf[i] ^= 1 << draw(st.integers(0, 7))
    elif kind == "truncate":
        del buf[draw(st.integers(0, len(buf))) :]
    elif kind == "garbage":
        i = draw(st.integers(0, len(buf)))
        buf[i:i] = draw(st.binary(min_size=1, max_size=30))
    elif kind == "set":
        i = draw(st.integers(0, len(buf) - 1))
        buf[i] = draw(st.sampled_from([0x00, 0x01, 0x7F, 0x80, 0xFF]))
    else:
        i = draw(st.integers(0, len(buf)))
        j = draw(st.integers(i, len(buf)))
        del buf[i:j]
    return buf


@SETTINGS
@given(data=buffers(), ops=st.data(), recompute_crc=st.booleans())
def test_mutated_batches_agree(both, data, ops, recompute_crc):
    py, ext = both
    buf = mutate(data, ops.draw)
    if recompute_crc and len(buf) >= api.RECORD_BATCH_OVERHEAD:
        fix_crc(buf)
    compare_everything(py, ext, bytes(buf))


@SETTINGS
@given(
    records=st.binary(max_size=300),
    count=st.integers(1, 12) | st.integers(1, 3) | st.integers(-2, 0),
    attributes=st.builds(lambda c, f: c | f, st.sampled_from([0, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 5, 7]), st.sampled_from([0, 0x08, 0x10, 0x20, 0x78])),
    compress_first=st.booleans(),
)
def test_arbitrary_record_sections_agree(both, records, count, attributes, compress_first):
    """A valid header and CRC around arbitrary record bytes (optionally validly compressed)."""
    py, ext = both
    codec_id = attributes & api.COMPRESSION_MASK
    if compress_first and 0 < codec_id < len(api.COMPRESSION_NAMES):
        records = comp.compress(codec_id, records)
    hdr = api.HEADER_STRUCT.pack(3, api.MIN_BATCH_LENGTH + len(records), 1, 2, 0, attributes, count - 1, 10, 20, -1, -1, -1, count)
    buf = bytearray(hdr + records)
    struct.pack_into(">I", buf, api.CRC_POS, crc32c.crc32c(bytes(buf[api.CRC_START :])))
    compare_everything(py, ext, bytes(buf))


@st.composite
def record_soup(draw):
    """Records made of plausible-but-wrong fields, so the parser's branches are all reached."""
    out = bytearray()
    for i in range(draw(st.integers(1, 4))):
        body = bytearray(b"\x00")
        varint = st.sampled_from([b"\x00", b"\x01", b"\x02", b"\x03", b"\x7f", b"\x80\x01", b"\xff\xff\xff\xff\x0f",
                                  b"\xff\xff\xff\xff\x1f", b"\xff" * 9 + b"\x01", b"\xff" * 10 + b"\x01"])  # fmt: skip
        body += draw(varint)  # ts delta
        body += draw(st.sampled_from([bytes([2 * i]), b"\x02", b"\x00"]))  # offset delta
        for _ in range(2):
            body += draw(varint) + draw(st.binary(max_size=4))
        body += draw(varint)
        for _ in range(draw(st.integers(0, 2))):
            body += draw(varint) + draw(st.sampled_from([b"a", b"\xff", b"\xc3\xa9", b"\xed\xa0\x80", b""]))
            body += draw(varint) + draw(st.binary(max_size=3))
        length = len(body) + draw(st.integers(-2, 2))
        z = (length << 1) ^ (length >> 63)
        enc = bytearray()
        while z >= 0x80:
            enc.append((z & 0x7F) | 0x80)
            z >>= 7
        enc.append(z)
        out += enc + body
    return bytes(out), draw(st.integers(1, 5)), draw(st.sampled_from([0, 1]))


@SETTINGS
@given(soup=record_soup())
def test_record_soup_agrees(both, soup):
    records, count, gz = soup
    if gz:
        records = gzip.compress(records)
    hdr = api.HEADER_STRUCT.pack(0, api.MIN_BATCH_LENGTH + len(records), 1, 2, 0, gz, count - 1, 10, 20, -1, -1, -1, count)
    buf = bytearray(hdr + records)
    struct.pack_into(">I", buf, api.CRC_POS, crc32c.crc32c(bytes(buf[api.CRC_START :])))
    compare_everything(both[0], both[1], bytes(buf))


@SETTINGS
@given(garbage=st.binary(max_size=200), limit=st.sampled_from([61, 100, 4096, api.MAX_BATCH_SIZE]))
def test_garbage_agrees(both, garbage, limit):
    py, ext = both
    compare_everything(py, ext, garbage, limit)


@SETTINGS
@given(horizon=st.none() | st.integers(-(2**64), 2**64) | st.sampled_from([-1, 0, 2**63 - 1, 2**63]) | st.booleans(),
       ts=I64)
def test_delete_horizon_arguments_agree(both, horizon, ts):
    """The builder's delete_horizon_ms: the same value or the same error (type, message) in both, also when a
    record's timestamp delta from the horizon leaves int64."""
    py, ext = both

    def run(codec):
        b = codec.RecordBatchBuilder(delete_horizon_ms=horizon)
        b.append(b"k", None, timestamp=ts)
        return b.build()

    a, b = outcome(run, py), outcome(run, ext)
    assert a == b
    if a[0] == "ok":
        compare_everything(py, ext, a[1])
