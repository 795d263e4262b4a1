"""Per-record errors of a produced batch (KIP-467), pure: mirrors Kafka's UnifiedLogTest.testCompactedTopicConstraints
and LogValidatorTest.testInvalidRecordExceptionHasBatchIndex (every invalid record of the batch named by its index)."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.replica.record_errors import check_records, keyless_message


def _batch(*keys) -> bytes:
    b = RecordBatchBuilder()
    for k in keys:
        b.append(k, b"v")
    return b.build()


def test_compacted_topic_constraints():
    """UnifiedLogTest.testCompactedTopicConstraints: a keyless record anywhere in the batch is refused, by index."""
    assert check_records(read_batches(_batch(b"a", b"b")), "t", 0, compacted=True) is None
    assert check_records(read_batches(_batch(None, b"a")), "t", 0, compacted=False) is None
    first = check_records(read_batches(_batch(None, b"a")), "t", 0, compacted=True)
    assert first.error == ec.INVALID_RECORD and first.records == ((0, keyless_message("t", 0)),)
    second = check_records(read_batches(_batch(b"a", None)), "t", 3, compacted=True)
    assert [i for i, _ in second.records] == [1]
    assert second.records[0][1] == "Compacted topic cannot accept message without key in topic partition t-3"


def test_invalid_record_exception_has_batch_index():
    """LogValidatorTest.testInvalidRecordExceptionHasBatchIndex: every invalid record listed; the partition's
    message quotes the first three, in Kafka's words."""
    got = check_records(read_batches(_batch(b"k", None, b"k2", None, None, None)), "c", 0, compacted=True)
    assert [i for i, _ in got.records] == [1, 3, 4, 5]
    m = keyless_message("c", 0)
    assert got.message == (
        "One or more records have been rejected due to 4 record errors in total, and only showing the first three "
        f"errors at most: [RecordError(batchIndex=1, message='{m}'), RecordError(batchIndex=3, message='{m}'), "
        f"RecordError(batchIndex=4, message='{m}')]")


HOUR, DAY = 3_600_000, 86_400_000
NOW = 1_795_877_096_284


def _timed(*stamps, keys=None) -> bytes:
    b = RecordBatchBuilder()
    for i, ts in enumerate(stamps):
        b.append(keys[i] if keys else b"k", b"v", timestamp=ts)
    return b.build()


def _check(data: bytes, compacted=False, before=DAY, after=HOUR):
    return check_records(read_batches(data), "t", 0, compacted=compacted, now_ms=NOW, before_ms=before,
                         after_ms=after)


def test_record_with_past_timestamp_is_rejected():
    """LogValidatorTest.testRecordWithPastTimestampIsRejected: INVALID_TIMESTAMP, every record named."""
    old = NOW - DAY - 5 * 60_000
    got = _check(_timed(old, old, old))
    assert got.error == ec.INVALID_TIMESTAMP and [i for i, _ in got.records] == [0, 1, 2]
    assert got.message == "One or more records have been rejected due to invalid timestamp"
    assert got.records[1][1] == (f"Timestamp {old} of message with offset 1 is out of range. The timestamp should be "
                                 f"within [{NOW - DAY}, {NOW + HOUR}]")


def test_record_with_future_timestamp_is_rejected():
    """LogValidatorTest.testRecordWithFutureTimestampIsRejected, and the unbounded past as Kafka prints it (a Java
    long's wrap-around)."""
    late = NOW + HOUR + 5 * 60_000
    got = _check(_timed(NOW, late, -1, late), before=2**63 - 1)
    assert got.error == ec.INVALID_TIMESTAMP and [i for i, _ in got.records] == [1, 3]  # -1: no timestamp
    assert got.records[0][1].endswith(f"within [{NOW - (2**63 - 1)}, {NOW + HOUR}]")
    assert _check(_timed(NOW, NOW + HOUR)) is None
    assert check_records(read_batches(_timed(late)), "t", 0, compacted=False, now_ms=None) is None  # LogAppendTime


def test_batch_with_invalid_records_and_invalid_timestamp():
    """LogValidatorTest.testBatchWithInvalidRecordsAndInvalidTimestamp: the timestamp error wins the partition's
    error, the keyless records are still listed (as a Kafka 4.4 broker answers)."""
    late = NOW + 2 * HOUR
    got = _check(_timed(late, late, NOW, keys=[None, b"k", None]), compacted=True)
    assert got.error == ec.INVALID_TIMESTAMP
    assert [(i, m.split(" ")[0]) for i, m in got.records] == [(0, "Compacted"), (1, "Timestamp"), (2, "Compacted")]
