"""How Kafka 4.4 shapes a Produce answer around the appends themselves (``KafkaApis.handleProduceRequest``,
``ProduceRequest.validateRecords``, ``ReplicaManager.appendToLocalLog``), found by the conformance run (issue #36).

* **The records of a partition, before anything else** (``validateRecords``): from v3 they must hold exactly one
  whole record batch, of magic 2 (INVALID_RECORD), and below v7 it may not be ZStandard-compressed
  (UNSUPPORTED_COMPRESSION_TYPE). A trailing partial batch does not count: Kafka reads whole batches only (and later
  drops the partial one). Such a partition is answered without an append, all its offsets -1.
* **Order.** The partitions the replica manager appended to (or refused while appending) come first, in request
  order, then those the principal may not write, then those the metadata does not know, then those whose records
  were refused above — each topic where its first partition lands.
* **Log start offset.** A refusal while appending carries the partition's log start offset, except for the errors
  Kafka answers with its "unknown" append info (:data:`NO_LOG_START`).
* **Message.** Only a refusal of records by validation (INVALID_RECORD or INVALID_TIMESTAMP with per-record errors,
  KIP-467) carries an error message; every other error goes without one.
"""

from __future__ import annotations

from kraftwire.error_codes import (CORRUPT_MESSAGE, INVALID_RECORD, KAFKA_STORAGE_ERROR, MESSAGE_TOO_LARGE,
                                   NOT_LEADER_OR_FOLLOWER, RECORD_LIST_TOO_LARGE, UNKNOWN_TOPIC_OR_PARTITION,
                                   UNSUPPORTED_COMPRESSION_TYPE)
from kraftwire.errors import CorruptRecordError
from kraftwire.records import read_batches
from kraftwire.records.api import REASON_BAD_BATCH_LENGTH, REASON_BAD_MAGIC

__all__ = ["APPENDED", "UNAUTHORIZED", "UNKNOWN", "INVALID", "NO_LOG_START", "records_error", "ordered"]

#: the groups a partition's answer falls in, in the order Kafka answers them
APPENDED, UNAUTHORIZED, UNKNOWN, INVALID = range(4)
#: errors while appending that Kafka answers without the partition's log start offset (-1)
NO_LOG_START = frozenset({UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, MESSAGE_TOO_LARGE,
                          RECORD_LIST_TOO_LARGE, CORRUPT_MESSAGE, KAFKA_STORAGE_ERROR})
ZSTD_SINCE = 7


def records_error(version: int, records) -> int:
    """The error ``validateRecords`` finds in one partition's records at Produce ``version`` (0: none). It reads
    batch headers only: a bad CRC or a wrong record count is left to the append (CORRUPT_MESSAGE there)."""
    if version < 3 or records is None:  # null records: left to the append (Kafka never answers such a request)
        return 0
    batches = read_batches(bytes(records), validate=False)
    try:
        first = next(batches, None)
        if first is None:
            return INVALID_RECORD
        if version < ZSTD_SINCE and first.compression == "zstd":
            return UNSUPPORTED_COMPRESSION_TYPE
        if next(batches, None) is not None:
            return INVALID_RECORD
    except CorruptRecordError as exc:
        if exc.reason == REASON_BAD_MAGIC:  # Kafka reads an older batch, then refuses it for not being magic 2
            return INVALID_RECORD
        if exc.reason == REASON_BAD_BATCH_LENGTH:  # shorter than a batch header
            return CORRUPT_MESSAGE
    return 0


def ordered(answers: list[tuple[int, str, object]]) -> list[tuple[str, list]]:
    """``answers`` — (group, topic, partition answer) in request order — as Kafka lists them: (topic, partition
    answers) pairs, the groups in order, each topic where its first partition lands."""
    topics: dict[str, list] = {}
    for _, name, answer in sorted(answers, key=lambda a: a[0]):
        topics.setdefault(name, []).append(answer)
    return list(topics.items())
