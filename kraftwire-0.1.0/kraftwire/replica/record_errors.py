"""Per-record validation of a produced batch on the leader (KIP-467), pure: which records of a batch break a rule
of the topic, each named by its index in its batch, and the partition-level error that goes with them.

Kafka's LogValidator checks the records of each batch in turn; the first batch holding an invalid record fails the
whole request for the partition with INVALID_RECORD, every invalid record of that batch listed in the
ProduceResponse's ``record_errors`` (``batch_index``: the record's position in its batch, from 0) and the
partition's ``error_message`` summing up at most the first three of them. The texts below are Kafka's, since
clients (librdkafka's test 0011, for one) read them.

A record has at most one error, the first of: no key in a compacted topic; a timestamp (not -1) more than
``message.timestamp.before.max.ms`` before or ``message.timestamp.after.max.ms`` after the leader's clock (for a
CreateTime topic). One timestamp error makes the batch's error INVALID_TIMESTAMP (``One or more records have been
rejected due to invalid timestamp``), whatever else its records broke; otherwise it is INVALID_RECORD. Kafka 4.4
accepts a producer's batch marked LogAppendTime, and so does this."""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.error_codes import INVALID_RECORD, INVALID_TIMESTAMP

#: how many record errors the partition's error message quotes (Kafka's)
QUOTED = 3
LONG_MAX = 2**63 - 1
NO_TIMESTAMP = -1
INVALID_TIMESTAMP_MESSAGE = "One or more records have been rejected due to invalid timestamp"


@dataclass(frozen=True)
class RecordErrors:
    """A batch refused for some of its records: the partition's error code and message, and (index, message)
    for each invalid record of the batch."""

    error: int
    message: str
    records: tuple[tuple[int, str], ...]


def keyless_message(topic: str, partition: int) -> str:
    """Kafka's text for a record without a key produced to a compacted topic."""
    return f"Compacted topic cannot accept message without key in topic partition {topic}-{partition}"


def _long(value: int) -> int:
    """``value`` as a Java long's arithmetic leaves it (wrapped to 64 bits)."""
    return (value + 2**63) % 2**64 - 2**63


def timestamp_message(timestamp: int, offset: int, now_ms: int, before_ms: int, after_ms: int) -> str:
    """Kafka's text for a record whose timestamp is out of the accepted range around ``now_ms``."""
    return (f"Timestamp {timestamp} of message with offset {offset} is out of range. The timestamp should be within "
            f"[{_long(now_ms - before_ms)}, {_long(now_ms + after_ms)}]")


def _quote(index: int, message: str) -> str:
    """One record error the way Kafka's summary prints it."""
    return f"RecordError(batchIndex={index}, message='{message}')"


def summary(records: list[tuple[int, str]]) -> str:
    """The partition's error message for INVALID_RECORD record errors (Kafka's wording)."""
    quoted = ", ".join(_quote(i, m) for i, m in records[:QUOTED])
    return (f"One or more records have been rejected due to {len(records)} record errors in total, and only "
            f"showing the first three errors at most: [{quoted}]")


def check_records(batches, topic: str, partition: int, *, compacted: bool, now_ms: int | None = None,
                  before_ms: int = LONG_MAX, after_ms: int = LONG_MAX) -> RecordErrors | None:
    """The record errors of the first batch of ``batches`` (decoded batches, each an iterable of records with a
    ``key``, ``timestamp`` and ``offset``) holding an invalid record, or None when every record passes.
    ``compacted``: the topic's cleanup.policy includes compact, so every record needs a key; ``now_ms`` (None: no
    timestamp check, as for a LogAppendTime topic) with ``before_ms`` / ``after_ms``: the accepted timestamps."""
    timed = now_ms is not None
    for batch in batches:
        # the records are decoded only where one may break a rule: the batch's max timestamp bounds the future side
        early = timed and before_ms < LONG_MAX
        late = timed and batch.max_timestamp != NO_TIMESTAMP and batch.max_timestamp - now_ms > after_ms
        if not (compacted or early or late):
            continue
        errors: list[tuple[int, str]] = []
        bad_time = False
        for i, record in enumerate(batch):
            if compacted and record.key is None:
                errors.append((i, keyless_message(topic, partition)))
            elif timed and record.timestamp != NO_TIMESTAMP and (
                    now_ms - record.timestamp > before_ms or record.timestamp - now_ms > after_ms):
                errors.append((i, timestamp_message(record.timestamp, record.offset, now_ms, before_ms, after_ms)))
                bad_time = True
        if errors:
            if bad_time:
                return RecordErrors(INVALID_TIMESTAMP, INVALID_TIMESTAMP_MESSAGE, tuple(errors))
            return RecordErrors(INVALID_RECORD, summary(errors), tuple(errors))
    return None
