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
