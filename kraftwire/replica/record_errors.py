"""Per-record validation of a produced batch on the leader (KIP-467), pure: which records of a batch break a rule
of the topic, each named by its index in its batch, and the partition-level error that goes with them.

Kafka's LogValidator checks the records of each batch in turn; the first batch holding an invalid record fails the
whole request for the partition with INVALID_RECORD, every invalid record of that batch listed in the
ProduceResponse's ``record_errors`` (``batch_index``: the record's position in its batch, from 0) and the
partition's ``error_message`` summing up at most the first three of them. The texts below are Kafka's, since
clients (librdkafka's test 0011, for one) read them."""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.error_codes import INVALID_RECORD

#: how many record errors the partition's error message quotes (Kafka's)
QUOTED = 3


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


def _quote(index: int, message: str) -> str:
    """One record error the way Kafka's summary prints it."""
    return f"RecordError(batchIndex={index}, message='{message}')"


def summary(records: list[tuple[int, str]]) -> str:
    """The partition's error message for INVALID_RECORD record errors (Kafka's wording)."""
    quoted = ", ".join(_quote(i, m) for i, m in records[:QUOTED])
    return (f"One or more records have been rejected due to {len(records)} record errors in total, and only "
            f"showing the first three errors at most: [{quoted}]")


def check_records(batches, topic: str, partition: int, *, compacted: bool) -> RecordErrors | None:
    """The record errors of the first batch of ``batches`` (decoded batches, each an iterable of records with a
    ``key``) holding an invalid record, or None when every record passes. ``compacted``: the topic's
    cleanup.policy includes compact, so every record needs a key."""
    if not compacted:
        return None
    for batch in batches:
        errors = [(i, keyless_message(topic, partition)) for i, record in enumerate(batch) if record.key is None]
        if errors:
            return RecordErrors(INVALID_RECORD, summary(errors), tuple(errors))
    return None
