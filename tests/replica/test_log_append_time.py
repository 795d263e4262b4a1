"""message.timestamp.type=LogAppendTime: the leader stamps each produced batch with its clock, as Kafka's
LogValidator does for v2 batches (LogValidatorTest.testLogAppendTimeNonCompressedV2 / testLogAppendTimeWithRecompressionV2:
the batch's timestamp type is LOG_APPEND_TIME and its max timestamp the append time, CRC valid), and the Produce
answer carries that time."""

from __future__ import annotations

import time

from kraftwire import error_codes as ec
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.replica.log_append_time import log_append_time, stamp
from kraftwire.replica.recompression import recompress


def _batch(codec="none", n=5) -> bytes:
    b = RecordBatchBuilder(compression=codec, producer_id=3, producer_epoch=0, base_sequence=0)
    for i in range(n):
        b.append(b"k", b"v%d" % i, timestamp=1_700_000_000_000 + i)
    return b.build()


def test_log_append_time_non_compressed_v2():
    out = stamp(_batch(), 1_800_000_000_000)
    (batch,) = list(read_batches(out))  # the CRC is checked
    assert (batch.timestamp_type, batch.max_timestamp) == (1, 1_800_000_000_000)
    assert (batch.producer_id, batch.base_sequence, batch.record_count) == (3, 0, 5)


def test_log_append_time_with_recompression_v2():
    cfg = {"compression.type": "gzip", "message.timestamp.type": "LogAppendTime"}
    assert log_append_time(cfg)
    out = stamp(recompress(_batch("lz4"), cfg), 1_800_000_000_000)
    (batch,) = list(read_batches(out))
    assert (batch.compression, batch.timestamp_type, batch.max_timestamp) == ("gzip", 1, 1_800_000_000_000)
    assert [r.value for r in batch] == [b"v%d" % i for i in range(5)]


def test_create_time_is_the_default():
    assert not log_append_time({}) and not log_append_time({"message.timestamp.type": "CreateTime"})


def test_a_log_append_time_topic_stamps_and_answers_the_append_time(tmp_path):
    from server.test_describe_producers import _produce
    from replica.test_recompression import led_topic
    from server.test_kraft_node import Combined

    c = Combined(tmp_path)
    raw = _batch()

    async def scenario(node, conn):
        await led_topic(node, conn, "lat", {"message.timestamp.type": "LogAppendTime"})
        before = int(time.time() * 1000)
        r = await conn.request(_produce("lat", 0, raw), 9)
        after = int(time.time() * 1000)
        pr = r.responses[0].partition_responses[0]
        assert pr.error_code == ec.NONE and before <= pr.log_append_time_ms <= after
        kept = bytes(node.replicas.get("lat", 0).log.read(0, 1 << 20).records)
        (batch,) = list(read_batches(kept))
        assert (batch.timestamp_type, batch.max_timestamp) == (1, pr.log_append_time_ms)

    c.run(scenario)
