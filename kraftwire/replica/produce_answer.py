"""How Kafka 4.4 shapes a Produce answer around the appends themselves (``KafkaApis.handleProduceRequest``,
``ProduceRequest.validateRecords``, ``ReplicaManager.appendToLocalLog``), found by the conformance run (issue #36).

* **The records of a partition** are checked first (:mod:`kraftwire.replica.produce_records`); a partition whose
  records are refused there is answered without an append, all its offsets -1, and without a message.
* **Order.** The partitions the replica manager appended to (or refused while appending) come first, in request
  order, then those the principal may not write, then those the metadata does not know (an unknown topic id from
  v13 too), then those whose records were refused above — each topic where its first partition lands.
* **Log start offset.** A refusal while appending carries the partition's log start offset, except for the errors
  Kafka answers with its "unknown" append info (:data:`NO_LOG_START`).
* **Message.** Only a refusal of records by validation (INVALID_RECORD or INVALID_TIMESTAMP with per-record errors,
  KIP-467) carries an error message; every other error goes without one.
"""

from __future__ import annotations

from kraftwire.error_codes import (CORRUPT_MESSAGE, KAFKA_STORAGE_ERROR, MESSAGE_TOO_LARGE, NOT_LEADER_OR_FOLLOWER,
                                   RECORD_LIST_TOO_LARGE, UNKNOWN_TOPIC_OR_PARTITION)

__all__ = ["APPENDED", "UNAUTHORIZED", "UNKNOWN", "INVALID", "NO_LOG_START", "TOPIC_IDS_SINCE", "ordered"]

#: Produce names topics by id from v13 (KIP-516): an id the metadata does not know is UNKNOWN_TOPIC_ID, answered with
#: the partitions the metadata does not know (``UNKNOWN``), before the principal's rights are looked at
TOPIC_IDS_SINCE = 13

#: the groups a partition's answer falls in, in the order Kafka answers them
APPENDED, UNAUTHORIZED, UNKNOWN, INVALID = range(4)
#: errors while appending that Kafka answers without the partition's log start offset (-1)
NO_LOG_START = frozenset({UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, MESSAGE_TOO_LARGE,
                          RECORD_LIST_TOO_LARGE, CORRUPT_MESSAGE, KAFKA_STORAGE_ERROR})


def ordered(answers: list[tuple[int, object, object]]) -> list[tuple[object, list]]:
    """``answers`` — (group, topic name or id, partition answer) in request order — as Kafka lists them: (topic,
    partition answers) pairs, the groups in order, each topic where its first partition lands."""
    topics: dict = {}
    for _, name, answer in sorted(answers, key=lambda a: a[0]):
        topics.setdefault(name, []).append(answer)
    return list(topics.items())
