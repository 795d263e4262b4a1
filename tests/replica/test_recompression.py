"""A topic's compression.type on the leader's append path: the pure rule (``kraftwire.replica.recompression``), as
Kafka's LogValidatorTest checks it (testRecompressedBatchWithoutRecordsNotAllowed's neighbours:
testCompressedV2 / testUncompressedBatchWithCompressionTypeProducer... and BrokerCompressionType), and through a
real node: a batch produced in gzip to a zstd topic is kept in zstd with every record, key, header, timestamp and
producer field intact."""

from __future__ import annotations

import asyncio

import pytest

from kraftwire import error_codes as ec
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.replica.recompression import level, recompress, target_codec


def _batch(codec: str, n: int = 20, **kw) -> bytes:
    b = RecordBatchBuilder(compression=codec, **kw)
    for i in range(n):
        b.append(f"k{i}".encode(), f"value-{i}".encode() * 8, headers=[("h", f"{i}".encode())],
                 timestamp=1_700_000_000_000 + i)
    return b.build()


def _records(raw: bytes):
    return [(r.offset, r.key, r.value, r.headers, r.timestamp) for b in read_batches(raw) for r in b]


def test_producer_keeps_what_the_producer_sent():
    assert target_codec("producer", "snappy") == "snappy"
    assert recompress(_batch("gzip"), {"compression.type": "producer"}) is None


@pytest.mark.parametrize("topic_type,source,expected", [
    ("zstd", "gzip", "zstd"), ("gzip", "none", "gzip"), ("uncompressed", "lz4", "none"), ("lz4", "snappy", "lz4"),
])
def test_another_codec_is_rebuilt_with_the_same_records_and_producer_fields(topic_type, source, expected):
    raw = _batch(source, producer_id=7, producer_epoch=2, base_sequence=40, is_transactional=True)
    out = recompress(raw, {"compression.type": topic_type})
    assert out is not None
    (batch,) = list(read_batches(out))  # validated: CRC and lengths are right
    (before,) = list(read_batches(raw))
    assert batch.compression == expected
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.is_transactional) == (7, 2, 40, True)
    assert (batch.max_timestamp, batch.last_offset_delta) == (before.max_timestamp, before.last_offset_delta)
    assert _records(out) == _records(raw)


def test_a_batch_already_in_the_target_codec_is_kept_whatever_its_level():
    raw = _batch("gzip", compression_level=1)
    assert recompress(raw, {"compression.type": "gzip", "compression.gzip.level": "9"}) is None


def test_the_topic_level_applies_to_the_rebuilt_batch():
    raw = _batch("none", n=200)
    fast = recompress(raw, {"compression.type": "gzip", "compression.gzip.level": "1"})
    best = recompress(raw, {"compression.type": "gzip", "compression.gzip.level": "9"})
    assert len(best) < len(fast)
    assert _records(fast) == _records(best) == _records(raw)
    assert level({"compression.gzip.level": "-1"}, "gzip") is None  # zlib's default
    assert level({"compression.zstd.level": "-5"}, "zstd") == -5


async def led_topic(node, conn, name: str, configs: dict[str, str]) -> None:
    """Create topic ``name`` (one partition, these configs) on an in-process node and wait, bounded, until the node
    leads it."""
    from server.test_kraft_node import CT

    create = CT(topics=[CT.CreatableTopic(name=name, num_partitions=1, replication_factor=1, assignments=[],
                                          configs=[CT.CreatableTopicConfig(name=k, value=v)
                                                   for k, v in configs.items()])],
                timeout_ms=5000, validate_only=False)
    assert (await conn.request(create, 7)).topics[0].error_code == ec.NONE
    for _ in range(250):
        hp = node.replicas.get(name, 0)
        if hp is not None and hp.state.role == "leader":
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{name}-0 not led within 5 s")


def test_a_zstd_topic_keeps_a_gzip_batch_in_zstd_on_a_real_node(tmp_path):
    from server.test_describe_producers import _produce
    from server.test_kraft_node import Combined

    c = Combined(tmp_path)
    raw = _batch("gzip", n=50)

    async def scenario(node, conn):
        await led_topic(node, conn, "z", {"compression.type": "zstd"})
        r = await conn.request(_produce("z", 0, raw), 9)
        assert r.responses[0].partition_responses[0].error_code == ec.NONE
        kept = node.replicas.get("z", 0).log.read(0, 1 << 20).records
        batches = list(read_batches(bytes(kept)))
        assert [b.compression for b in batches] == ["zstd"]
        assert _records(bytes(kept)) == _records(raw)

    c.run(scenario)
