"""Shared workloads for the codec benchmarks: the cases, and the same work done by each implementation.

Implementations: kraftwire's extension (``ext``), its pure-Python twin (``python``), aiokafka's
Cython codec (``aiokafka-c``, ``aiokafka.record._crecords``) and kafka-python. Every decode
validates the CRC (the peers do not do it while iterating, so they call ``validate_crc()``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from aiokafka.record import _crecords as aiokafka_c
from kafka.record import default_records as kafka_python

from kraftwire.records import api, pyimpl

try:
    import kraftwire_ext._records as ext
except ImportError:  # the benchmarks are meaningless without it, but keep the python rows working
    ext = None

RECORDS = 1000
KEY_SIZE = 16
TIMESTAMP = 1_700_000_000_000


@dataclass(frozen=True)
class Case:
    name: str
    value_size: int = 100
    headers: int = 0
    compression: str = "none"


CASES = [
    Case("100B values"),
    Case("1000B values (1 MB batch)", value_size=1000),
    Case("3 headers/record", headers=3),
    Case("lz4", compression="lz4"),
    Case("zstd", compression="zstd"),
    Case("gzip", compression="gzip"),
]

_WORDS = [b"kraft", b"wire", b"epoch", b"leader", b"voter", b"offset", b"batch", b"raft ", b"fetch", b"quorum"]


def workload(case: Case, seed: int = 1):
    """(keys, values, headers per record): random keys, compressible word-soup values."""
    rng = random.Random(seed)
    keys = [rng.randbytes(KEY_SIZE) for _ in range(RECORDS)]
    values = []
    for _ in range(RECORDS):
        v = bytearray()
        while len(v) < case.value_size:
            v += rng.choice(_WORDS)
        values.append(bytes(v[: case.value_size]))
    headers = [[(f"header-{j}", rng.randbytes(8)) for j in range(case.headers)] for _ in range(RECORDS)]
    return keys, values, headers


# --------------------------------------------------------------------------- kraftwire (ext / python)


def ours_encode_record(mod, case, keys, values, headers):
    b = mod.RecordBatchBuilder(compression=case.compression)
    append = b.append
    for i in range(RECORDS):
        append(keys[i], values[i], headers[i], TIMESTAMP + i)  # distinct timestamps: no flattering reuse
    return b.build()


def ours_encode_bulk(mod, case, keys, values, headers):
    b = mod.RecordBatchBuilder(compression=case.compression)
    b.append_many(values, keys, TIMESTAMP)
    return b.build()


def ours_decode(mod, buf):
    n = 0
    for batch in mod.read_batches(buf):
        for r in batch:
            r.offset, r.timestamp, r.key, r.value, r.headers
            n += 1
    return n


def ours_validate(mod, buf):
    return mod.validate_batches(buf).record_count


def ours_validate_crc(mod, buf):
    return mod.validate_batches(buf, check_records=False).record_count


def ours_columnar(mod, buf):
    return mod.decode_columns(buf).num_rows


# --------------------------------------------------------------------------- peers


def peer_encode_record(builder_cls, case, keys, values, headers):
    b = builder_cls(2, api.COMPRESSION_IDS[case.compression], 0, -1, -1, -1, 1 << 30)
    append = b.append
    for i in range(RECORDS):
        append(i, TIMESTAMP + i, keys[i], values[i], headers[i])
    return bytes(b.build())


def peer_decode(batch_cls, buf):
    batch = batch_cls(buf)
    if not batch.validate_crc():
        raise ValueError("crc")
    n = 0
    for r in batch:
        r.offset, r.timestamp, r.key, r.value, r.headers
        n += 1
    return n


def peer_validate(batch_cls, buf):
    return batch_cls(buf).validate_crc()


def peer_columnar(batch_cls, buf):
    """The same result as decode_columns, built the way a peer user would: rows -> Arrow."""
    import pyarrow as pa

    batch = batch_cls(buf)
    if not batch.validate_crc():
        raise ValueError("crc")
    offsets, timestamps, keys, values, headers = [], [], [], [], []
    for r in batch:
        offsets.append(r.offset)
        timestamps.append(r.timestamp)
        keys.append(r.key)
        values.append(r.value)
        headers.append([{"key": k, "value": v} for k, v in r.headers])
    header_type = pa.list_(pa.struct([pa.field("key", pa.string(), nullable=False), pa.field("value", pa.binary())]))
    return pa.RecordBatch.from_arrays(
        [pa.array(offsets, pa.int64()), pa.array(timestamps, pa.int64()), pa.array(keys, pa.binary()),
         pa.array(values, pa.binary()), pa.array(headers, header_type)],
        names=["offset", "timestamp", "key", "value", "headers"],
    ).num_rows  # fmt: skip


IMPLEMENTATIONS = {
    "ext": ("ours", ext),
    "python": ("ours", pyimpl),
    "aiokafka-c": ("peer", (aiokafka_c.DefaultRecordBatchBuilder, aiokafka_c.DefaultRecordBatch)),
    "kafka-python": ("peer", (kafka_python.DefaultRecordBatchBuilder, kafka_python.DefaultRecordBatch)),
}
#: "validate only": ours checks framing, CRC, header and walks every record; the peers can only check the CRC.
#: "validate crc only": ours with check_records=False (framing, CRC, header), the same work as the peers.
OPERATIONS = ["encode per record", "encode bulk", "decode all fields", "validate only", "validate crc only", "columnar"]


def operation(impl: str, op: str, case: Case, data):
    """A zero-argument callable doing *op* for *impl* on *case*, or None if the impl has no such path."""
    kind, mod = IMPLEMENTATIONS[impl]
    keys, values, headers, buf = data
    if mod is None:
        return None
    if kind == "ours":
        return {
            "encode per record": lambda: ours_encode_record(mod, case, keys, values, headers),
            "encode bulk": None if case.headers else (lambda: ours_encode_bulk(mod, case, keys, values, headers)),
            "decode all fields": lambda: ours_decode(mod, buf),
            "validate only": lambda: ours_validate(mod, buf),
            "validate crc only": lambda: ours_validate_crc(mod, buf),
            "columnar": lambda: ours_columnar(mod, buf),
        }[op]
    builder_cls, batch_cls = mod
    return {
        "encode per record": lambda: peer_encode_record(builder_cls, case, keys, values, headers),
        "encode bulk": None,  # no bulk API: compared against their per-record path
        "decode all fields": lambda: peer_decode(batch_cls, buf),
        "validate only": lambda: peer_validate(batch_cls, buf),
        "validate crc only": lambda: peer_validate(batch_cls, buf),
        "columnar": lambda: peer_columnar(batch_cls, buf),
    }[op]


def case_data(case: Case):
    keys, values, headers = workload(case)
    buf = ours_encode_record(pyimpl, case, keys, values, headers)  # the batch every decoder reads
    return keys, values, headers, buf
