"""Cross-implementation with real peers: kafka-python and aiokafka (pure Python and its Cython ``_crecords``).

Our batches decode in theirs and theirs in ours, for every compression; an uncompressed batch
is byte-identical to kafka-python's builder output (partition leader epoch aside: kafka-python
writes 0, a producer-side batch has none yet).
"""

from __future__ import annotations

import pytest
from aiokafka.record import _crecords as aiokafka_c
from aiokafka.record import default_records as aiokafka_py_module
from kafka.record.default_records import DefaultRecordBatch as KafkaPythonBatch
from kafka.record.default_records import DefaultRecordBatchBuilder as KafkaPythonBuilder
from kafka.record.memory_records import MemoryRecords as KafkaPythonMemoryRecords

from kraftwire.records import api

pytestmark = pytest.mark.interop


@pytest.fixture(autouse=True)
def kafka_python_snappy(monkeypatch):
    """kafka-python needs python-snappy for its raw snappy blocks, which is not installed; give it
    cramjam's raw block codec instead. The xerial framing it writes and parses stays its own."""
    import types

    import cramjam
    import kafka.codec

    if kafka.codec.snappy is None:
        shim = types.SimpleNamespace(
            compress=lambda b: bytes(cramjam.snappy.compress_raw(bytes(b))),
            decompress=lambda b: bytes(cramjam.snappy.decompress_raw(bytes(b))),
        )
        monkeypatch.setattr(kafka.codec, "snappy", shim)

COMPRESSIONS = list(api.COMPRESSION_NAMES)

PEERS = {
    "kafka-python": (KafkaPythonBuilder, KafkaPythonBatch),
    "aiokafka-py": (aiokafka_py_module._DefaultRecordBatchBuilderPy, aiokafka_py_module._DefaultRecordBatchPy),
    "aiokafka-c": (aiokafka_c.DefaultRecordBatchBuilder, aiokafka_c.DefaultRecordBatch),
}


def records(n=40):
    """Compressible records (kafka-python sends uncompressed when compression does not help)."""
    out = []
    for i in range(n):
        key = None if i % 9 == 4 else f"key-{i % 5}".encode()
        value = None if i % 11 == 7 else (f"value {i} " * (1 + i % 6)).encode()
        headers = [(f"h{j}", None if j == 1 else f"hv{i}".encode()) for j in range(i % 3)]
        out.append((key, value, headers, 1_700_000_000_000 + i * 3 - (i % 4)))
    return out


def peer_records(batch):
    return [(r.offset, r.timestamp, r.key, r.value, [(k, v) for k, v in r.headers]) for r in batch]


@pytest.mark.parametrize("peer", PEERS)
@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_our_batches_decode_in_peers(codec, peer, compression):
    recs = records()
    b = codec.RecordBatchBuilder(base_offset=500, partition_leader_epoch=3, compression=compression)
    for k, v, h, t in recs:
        b.append(k, v, h, timestamp=t)
    data = b.build()
    _, batch_cls = PEERS[peer]
    batch = batch_cls(data)
    assert batch.validate_crc()
    assert batch.compression_type == api.COMPRESSION_IDS[compression]
    assert batch.base_offset == 500 and batch.last_offset_delta == len(recs) - 1
    assert peer_records(batch) == [(500 + i, t, k, v, h) for i, (k, v, h, t) in enumerate(recs)]


@pytest.mark.parametrize("peer", PEERS)
@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_peer_batches_decode_in_ours(codec, peer, compression):
    recs = records()
    builder_cls, _ = PEERS[peer]
    b = builder_cls(2, api.COMPRESSION_IDS[compression], 0, -1, -1, -1, 1 << 20)
    for i, (k, v, h, t) in enumerate(recs):
        assert b.append(i, timestamp=t, key=k, value=v, headers=h) is not None
    data = bytes(b.build())
    (batch,) = list(codec.read_batches(data))
    assert batch.compression == compression
    assert [tuple(r) for r in batch] == [(i, t, k, v, h) for i, (k, v, h, t) in enumerate(recs)]
    result = codec.validate_batches(data)
    assert (result.batch_count, result.record_count) == (1, len(recs))
    assert codec.decode_raw_columns(data).num_rows == len(recs)


@pytest.mark.parametrize("epoch", [0, -1])
def test_uncompressed_batch_is_byte_identical_to_kafka_python(codec, epoch):
    recs = records()
    theirs = KafkaPythonBuilder(2, 0, 0, -1, -1, -1, 1 << 20)
    ours = codec.RecordBatchBuilder(partition_leader_epoch=epoch)
    for i, (k, v, h, t) in enumerate(recs):
        theirs.append(i, timestamp=t, key=k, value=v, headers=h)
        ours.append(k, v, h, timestamp=t)
    a, b = bytes(theirs.build()), ours.build()
    epoch_field = slice(api.PARTITION_LEADER_EPOCH_POS, api.MAGIC_POS)
    assert a[: epoch_field.start] + a[epoch_field.stop :] == b[: epoch_field.start] + b[epoch_field.stop :]
    if epoch == 0:
        assert a == b


def test_multi_batch_buffers_interoperate(codec):
    parts = []
    for i, compression in enumerate(COMPRESSIONS):
        b = codec.RecordBatchBuilder(compression=compression)
        b.append_many([f"v{i}-{j}".encode() * 10 for j in range(5)], timestamp=1000 + i)
        parts.append(b.build())
    buf = codec.rebase_batches(b"".join(parts), 0, 1)
    mr = KafkaPythonMemoryRecords(buf)
    offsets = []
    while mr.has_next():
        offsets += [r.offset for r in mr.next_batch()]
    assert offsets == list(range(5 * len(COMPRESSIONS)))


def test_control_batches_are_control_for_peers(codec):
    b = codec.RecordBatchBuilder(is_control=True, partition_leader_epoch=2)
    b.append(api.control_key(api.CONTROL_LEADER_CHANGE), b"\x00\x00\x00\x00\x00\x01\x00\x00", timestamp=1)
    batch = aiokafka_c.DefaultRecordBatch(b.build())
    assert batch.is_control_batch
    kp = KafkaPythonBatch(b.build())
    assert kp.is_control_batch
