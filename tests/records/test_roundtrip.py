"""Builder -> reader round trips and the small utilities (rebase, framing, columns), in both implementations."""

from __future__ import annotations

from array import array

import pytest

from kraftwire.errors import CorruptRecordError
from kraftwire.records import api
from kraftwire.records.columns import COLUMN_NAMES, to_arrow

COMPRESSIONS = list(api.COMPRESSION_NAMES)


def sample_records(n=20):
    out = []
    for i in range(n):
        key = None if i % 5 == 0 else f"key-{i}".encode()
        value = None if i % 7 == 3 else bytes([i % 256]) * (i * 13 % 300)
        headers = [(f"h{j}", None if (i + j) % 3 == 0 else b"v" * j) for j in range(i % 4)]
        if i == 4:
            headers.append(("ünïcødé-ключ", b""))
        out.append((key, value, headers, 1_700_000_000_000 + (i * 37) % 11 - 5))
    return out


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_round_trip_every_compression(codec, compression):
    recs = sample_records()
    b = codec.RecordBatchBuilder(base_offset=1000, partition_leader_epoch=9, compression=compression)
    offsets = [b.append(k, v, h, timestamp=t) for k, v, h, t in recs]
    assert offsets == list(range(1000, 1020)) and b.record_count == 20
    data = b.build()
    assert b.build() is data  # build is idempotent
    (batch,) = list(codec.read_batches(data))
    assert batch.compression == compression
    assert (batch.base_offset, batch.last_offset, batch.record_count, batch.partition_leader_epoch) == (1000, 1019, 20, 9)
    assert batch.base_timestamp == recs[0][3] and batch.max_timestamp == max(r[3] for r in recs)
    assert [tuple(r) for r in batch] == [(1000 + i, t, k, v, h) for i, (k, v, h, t) in enumerate(recs)]
    assert batch.records() == list(batch)
    assert bytes(batch.buffer) == data and batch.size_in_bytes == len(data)


def test_batch_flags(codec):
    b = codec.RecordBatchBuilder(
        base_offset=7, is_control=True, is_transactional=True, producer_id=123, producer_epoch=4, base_sequence=99,
        timestamp_type=1,
    )  # fmt: skip
    b.append(api.control_key(api.CONTROL_COMMIT), b"\x00\x00\x00\x00", timestamp=5)
    (batch,) = list(codec.read_batches(b.build()))
    assert batch.is_control and batch.is_transactional and batch.timestamp_type == 1
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (123, 4, 99)
    assert batch.attributes == api.CONTROL_MASK | api.TRANSACTIONAL_MASK | api.TIMESTAMP_TYPE_MASK
    (rec,) = list(batch)
    assert api.parse_control_key(rec.key) == (0, api.CONTROL_COMMIT)


def test_append_many(codec):
    b = codec.RecordBatchBuilder(base_offset=10)
    assert b.append(b"a", b"b", timestamp=1) == 10
    assert b.append_many([b"x", None, bytearray(b"z")], keys=[None, b"k", memoryview(b"m")], timestamp=2) == 13
    assert b.append_many([b"only"], timestamp=3) == 14
    assert b.append_many([], timestamp=4) == 14
    recs = [tuple(r) for r in list(codec.read_batches(b.build()))[0]]
    assert recs == [(10, 1, b"a", b"b", []), (11, 2, None, b"x", []), (12, 2, b"k", None, []), (13, 2, b"m", b"z", []),
                    (14, 3, None, b"only", [])]  # fmt: skip


def test_default_timestamp_is_now(codec):
    import time

    before = int(time.time() * 1000)
    b = codec.RecordBatchBuilder()
    b.append(None, b"v")
    b.append_many([b"w"])
    after = int(time.time() * 1000)
    for r in list(codec.read_batches(b.build()))[0]:
        assert before <= r.timestamp <= after


def test_empty_builder_builds_nothing_and_built_builder_is_closed(codec):
    assert codec.RecordBatchBuilder().build() == b""
    b = codec.RecordBatchBuilder()
    b.append(None, b"v", timestamp=0)
    b.build()
    with pytest.raises(ValueError):
        b.append(None, b"v", timestamp=0)


def test_size_in_bytes_tracks_the_uncompressed_batch(codec):
    b = codec.RecordBatchBuilder()
    assert b.size_in_bytes() == api.RECORD_BATCH_OVERHEAD
    b.append(b"k", b"v" * 100, [("h", b"x")], timestamp=1)
    assert b.size_in_bytes() == len(b.build())


@pytest.mark.parametrize(
    "kwargs, exc",
    [({"compression": "brotli"}, ValueError), ({"timestamp_type": 2}, ValueError), ({"base_offset": 2**63}, OverflowError),
     ({"partition_leader_epoch": 2**31}, OverflowError), ({"producer_epoch": 2**15}, OverflowError)],
)  # fmt: skip
def test_builder_argument_errors(codec, kwargs, exc):
    with pytest.raises(exc):
        codec.RecordBatchBuilder(**kwargs)


def test_append_argument_errors(codec):
    b = codec.RecordBatchBuilder()
    with pytest.raises(TypeError):
        b.append("str key", b"v", timestamp=1)
    with pytest.raises(TypeError):
        b.append(None, 5, timestamp=1)
    with pytest.raises(TypeError):
        b.append(None, b"v", [(b"bytes-key", b"v")], timestamp=1)
    with pytest.raises(TypeError):
        b.append(None, b"v", timestamp=1.5)
    with pytest.raises(OverflowError):
        b.append(None, b"v", timestamp=2**63)
    b.append(None, b"v", timestamp=-(2**63))
    with pytest.raises(OverflowError):
        b.append(None, b"v", timestamp=2**63 - 1)  # delta does not fit a varlong
    with pytest.raises(ValueError):
        b.append_many([b"a"], keys=[b"a", b"b"])
    with pytest.raises(TypeError):
        b.append_many(["a"])
    assert b.record_count == 1


def test_extreme_values_wrap_like_java(codec):
    b = codec.RecordBatchBuilder(base_offset=2**63 - 1)
    b.append(None, b"a", timestamp=2**63 - 1)
    b.append(None, b"b", timestamp=0)
    (batch,) = list(codec.read_batches(b.build()))
    assert batch.last_offset == -(2**63)
    assert [r.offset for r in batch] == [2**63 - 1, -(2**63)]
    assert [r.timestamp for r in batch] == [2**63 - 1, 0]
    neg = codec.RecordBatchBuilder(base_offset=-1)  # -1 is a legal int64 return value, not an error marker
    assert neg.append(None, None, timestamp=0) == -1
    assert neg.append_many([b"x"], timestamp=0) == 0


def two_batches(codec):
    a = codec.RecordBatchBuilder(base_offset=0, partition_leader_epoch=1)
    a.append_many([b"a", b"b", b"c"], timestamp=1)
    b = codec.RecordBatchBuilder(base_offset=0, partition_leader_epoch=1, compression="lz4")
    b.append_many([b"d", b"e"], timestamp=2)
    return a.build(), b.build()


def test_incomplete_tail_is_quiet(codec):
    a, b = two_batches(codec)
    for cut in (1, 11, 12, 16, 17, 60, len(b) - 1):
        buf = a + b[:cut]
        reader = codec.read_batches(buf)
        assert [x.base_offset for x in reader] == [0]
        assert (reader.valid_bytes, reader.incomplete) == (len(a), True)
        assert codec.whole_batches_size(buf) == len(a)
        result = codec.validate_batches(buf)
        assert (result.valid_bytes, result.incomplete, result.batch_count, result.error) == (len(a), True, 1, None)
    reader = codec.read_batches(a + b)
    assert len(list(reader)) == 2 and reader.valid_bytes == len(a + b) and not reader.incomplete


def test_validate_result(codec):
    a, b = two_batches(codec)
    buf = codec.rebase_batches(a + b, 50, 6)
    r = codec.validate_batches(buf)
    assert (r.valid_bytes, r.batch_count, r.record_count, r.first_offset, r.last_offset, r.last_epoch, r.max_timestamp) == (
        len(buf), 2, 5, 50, 54, 6, 2)
    assert r.batches == [api.BatchInfo(50, 52, 6, 0, len(a)), api.BatchInfo(53, 54, 6, len(a), len(b))]
    empty = codec.validate_batches(b"")
    assert (empty.valid_bytes, empty.batch_count, empty.first_offset, empty.incomplete) == (0, 0, -1, False)


def test_rebase_and_stamp(codec):
    a, b = two_batches(codec)
    out = codec.rebase_batches(a + b, 100, 3)
    assert [(x.base_offset, x.partition_leader_epoch) for x in codec.read_batches(out)] == [(100, 3), (103, 3)]
    assert [r.offset for x in codec.read_batches(out) for r in x] == [100, 101, 102, 103, 104]
    with pytest.raises(ValueError):
        codec.rebase_batches(a + b[:-1], 100, 3)
    buf = bytearray(a + b)
    codec.set_base_offset_and_epoch(buf, len(a), 77, 12)
    assert [(x.base_offset, x.partition_leader_epoch) for x in codec.read_batches(buf)] == [(0, 1), (77, 12)]
    with pytest.raises(TypeError):
        codec.set_base_offset_and_epoch(a, 0, 1, 1)
    with pytest.raises(ValueError):
        codec.set_base_offset_and_epoch(buf, len(buf) - 10, 1, 1)
    with pytest.raises(CorruptRecordError):
        codec.rebase_batches(b"\x00" * 8 + b"\x00\x00\x00\x01" + b"\x00" * 60, 0, 0)


def test_validation_hands_back_the_headers_it_read(codec):
    """``headers=True``: the batch of each valid batch as ``read_batches`` gives it, from the one validation."""
    a, b = two_batches(codec)
    buf = codec.rebase_batches(a + b, 50, 6)
    fields = ("base_offset", "last_offset", "partition_leader_epoch", "attributes", "max_timestamp", "producer_id",
              "producer_epoch", "base_sequence", "record_count", "position", "size_in_bytes")
    r = codec.validate_batches(buf, headers=True)
    assert [[getattr(h, f) for f in fields] for h in r.headers] == \
        [[getattr(h, f) for f in fields] for h in codec.read_batches(buf)]
    assert [[x.offset for x in h] for h in r.headers] == [[50, 51, 52], [53, 54]]
    assert codec.validate_batches(buf).headers is None  # asked for only
    partial = codec.validate_batches(buf + a[:20], headers=True)
    assert partial.incomplete and len(partial.headers) == 2


def test_rebase_at_the_positions_validation_reported(codec):
    """``rebase_batches(batches=)`` stamps the reported batches without reading their headers again: the same
    bytes as the walk; a report that does not tile the buffer is a ValueError."""
    a, b = two_batches(codec)
    report = codec.validate_batches(a + b).batches
    assert codec.rebase_batches(memoryview(a + b), 100, 3, batches=report) == codec.rebase_batches(a + b, 100, 3)
    # any sequence of reports (the Raft core hands a tuple)
    assert codec.rebase_batches(a + b, 100, 3, batches=tuple(report)) == codec.rebase_batches(a + b, 100, 3)
    with pytest.raises(ValueError):
        codec.rebase_batches(a + b[:-1], 100, 3, batches=report)
    with pytest.raises(ValueError):
        codec.rebase_batches(a + b, 100, 3, batches=report[1:])
    with pytest.raises(ValueError):
        codec.rebase_batches(a + b + a, 100, 3, batches=report)


def test_reads_from_memoryview_bytearray_and_offsets(codec):
    a, b = two_batches(codec)
    for buf in (bytearray(a + b), memoryview(a + b), memoryview(b"xx" + a + b)[2:]):
        assert [x.record_count for x in codec.read_batches(buf)] == [3, 2]


def test_columns_to_arrow(codec):
    pa = pytest.importorskip("pyarrow")
    b = codec.RecordBatchBuilder(base_offset=5, partition_leader_epoch=2)
    for k, v, h, t in sample_records(10):
        b.append(k, v, h, timestamp=t)
    c = codec.RecordBatchBuilder(base_offset=15, partition_leader_epoch=3, is_control=True, compression="zstd")
    c.append(api.control_key(2), b"\x00\x01", timestamp=99)
    data = b.build() + c.build()
    table = codec.decode_columns(data)
    assert isinstance(table, pa.RecordBatch) and table.schema.names == list(COLUMN_NAMES)
    rows = table.to_pylist()
    expected = [(5 + i, t, k, v, [{"key": hk, "value": hv} for hk, hv in h]) for i, (k, v, h, t) in enumerate(sample_records(10))]
    assert [(r["offset"], r["timestamp"], r["key"], r["value"], r["headers"]) for r in rows[:10]] == expected
    assert [r["partition_leader_epoch"] for r in rows] == [2] * 10 + [3]
    assert [r["is_control"] for r in rows] == [False] * 10 + [True]
    assert rows[10]["base_offset"] == 15 and rows[3]["base_offset"] == 5
    assert [r["control_type"] for r in rows] == [-1] * 10 + [api.CONTROL_LEADER_CHANGE]
    table.validate(full=True)
    assert to_arrow(codec.decode_raw_columns(b"")).num_rows == 0


def test_many_headers_and_buffer_header_values(codec):
    headers = [(f"k{i}", [None, b"b", bytearray(b"ba"), memoryview(b"mv")][i % 4]) for i in range(20)]
    b = codec.RecordBatchBuilder()
    b.append(b"key", b"value", headers, timestamp=1)
    b.append(b"key", b"value", tuple(headers[:3]), timestamp=2)
    b.append(None, None, iter([("x", b"y")]), timestamp=3)
    recs = list(list(codec.read_batches(b.build()))[0])
    expected = [(k, None if v is None else bytes(v)) for k, v in headers]
    assert recs[0].headers == expected and recs[1].headers == expected[:3] and recs[2].headers == [("x", b"y")]
    b = codec.RecordBatchBuilder()
    with pytest.raises(TypeError):
        b.append(None, None, [("ok", b"v")] * 9 + [("bad", "str value")], timestamp=1)
    with pytest.raises(UnicodeEncodeError):
        b.append(None, None, [("\ud800", b"v")], timestamp=1)


def test_objects_not_made_by_the_codec_fail_cleanly(codec):
    """Type.__new__ skips __init__: every method must raise, never crash."""
    reader = codec.BatchReader.__new__(codec.BatchReader)
    with pytest.raises((TypeError, AttributeError)):
        next(reader)
    batch = codec.RecordBatch.__new__(codec.RecordBatch)
    with pytest.raises((TypeError, AttributeError)):
        list(batch)
    with pytest.raises((TypeError, AttributeError)):
        batch.buffer
    builder = codec.RecordBatchBuilder.__new__(codec.RecordBatchBuilder)
    try:
        builder.append(b"k", b"v", timestamp=1)
        builder.build()
    except (TypeError, AttributeError):
        pass


def test_builder_reinitialised_after_build(codec):
    b = codec.RecordBatchBuilder()
    b.append(None, b"one", timestamp=1)
    first = b.build()
    b.__init__(base_offset=9)
    b.append(None, b"two", timestamp=2)
    assert [tuple(r) for r in list(codec.read_batches(b.build()))[0]] == [(9, 2, None, b"two", [])]
    assert [r.value for r in list(codec.read_batches(first))[0]] == [b"one"]


def test_header_items_that_run_user_code(codec):
    """Unpacking a non-tuple header item may run user code that empties the caller's list."""
    headers = []

    class Evil:
        def __iter__(self):
            headers.clear()
            return iter(("k", b"v"))

    headers.extend([("a", b"1"), Evil(), ("c", b"3")])
    b = codec.RecordBatchBuilder()
    b.append(None, None, headers, timestamp=1)
    (rec,) = list(list(codec.read_batches(b.build()))[0])
    assert rec.headers == [("a", b"1"), ("k", b"v"), ("c", b"3")]


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_record_timestamps_with_delete_horizon(codec, compression):
    """Kafka's MemoryRecordsBuilderTest.testRecordTimestampsWithDeleteHorizon (and MemoryRecordsTest.
    testBaseTimestampToDeleteHorizonConversion): with a delete horizon the Attributes bit 6 is set, BaseTimestamp is
    the horizon, MaxTimestamp the largest record timestamp, and every record reads back its own timestamp (the
    deltas are taken from the horizon, here negative for the first record); the CRC covers it all."""
    b = codec.RecordBatchBuilder(base_offset=3, compression=compression, delete_horizon_ms=100)
    b.append(b"0", b"0", timestamp=50)
    b.append(b"1", None, timestamp=100)
    b.append(b"2", b"2", timestamp=150)
    data = b.build()
    assert b.delete_horizon_ms == 100
    (batch,) = list(codec.read_batches(data, validate=True))
    assert batch.has_delete_horizon and batch.delete_horizon_ms == 100
    assert batch.attributes & api.DELETE_HORIZON_MASK
    assert (batch.base_timestamp, batch.max_timestamp) == (100, 150)
    assert [(r.offset, r.timestamp, r.value) for r in batch] == [(3, 50, b"0"), (4, 100, None), (5, 150, b"2")]
    assert codec.validate_batches(data).max_timestamp == 150
    rc = codec.decode_raw_columns(data)
    assert list(array("q", bytes(rc.timestamp))) == [50, 100, 150]

    plain = codec.RecordBatchBuilder(base_offset=3, compression=compression)
    plain.append(b"0", b"0", timestamp=50)
    (batch,) = list(codec.read_batches(plain.build()))
    assert not batch.has_delete_horizon and batch.delete_horizon_ms is None and batch.base_timestamp == 50


@pytest.mark.parametrize(
    "horizon, exc", [(-1, ValueError), (2**63, OverflowError), (1.5, TypeError), ("7", TypeError)],
)
def test_delete_horizon_argument_errors(codec, horizon, exc):
    with pytest.raises(exc):
        codec.RecordBatchBuilder(delete_horizon_ms=horizon)
