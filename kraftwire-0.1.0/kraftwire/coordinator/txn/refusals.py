"""AddPartitionsToTxn refusals as Kafka 4.4 answers them, pure: their order, and the batched adds it refuses.

**Batched adds.** From v4 (KIP-890) a partition leader sends AddPartitionsToTxn batched per coordinator; with
``VerifyOnly`` it asks whether a partition is in the transaction (part 1), without it the coordinator is to add the
partitions on the producer's behalf (part 2), which needs ``transaction.version`` 2. kraftwire has no
``transaction.version`` feature (level 0, as a Kafka 4.4 cluster at metadata.version 3.9): such an add, once every
partition and the coordinator's own checks (``TxnShard.add_error``) passed, fails the whole request with
UNSUPPORTED_VERSION and no per-transaction results, as Kafka 4.4 answers (``ADD_NEEDS_TRANSACTION_VERSION_2``).

**Order.** When a partition of a transaction's add is refused (the principal may not write its topic, or it does
not exist), Kafka's ``KafkaApis`` answers every partition of that transaction: the refused ones with their error,
the others OPERATION_NOT_ATTEMPTED. It collects them in Scala mutable maps joined by ``++`` (a map built at once for
all the partitions: ``java_order.scala_mutable_capacity(built=True)``) and groups them by topic in a
``java.util.HashMap`` (``AddPartitionsToTxnResponse.resultForTransaction``): the topics come in that map's order,
each topic's partitions in the joined map's. v3 and below answer the one transaction so; v4+ answer each
transaction of the batch so.
"""

from __future__ import annotations

from kraftwire.error_codes import UNSUPPORTED_VERSION
from kraftwire.java_order import (hashmap_order, scala_mutable_capacity, scala_mutable_order, string_hash,
                                  topic_partition_hash)

#: the top-level error of a batched (v4+) AddPartitionsToTxn that adds without VerifyOnly (see the module's account)
ADD_NEEDS_TRANSACTION_VERSION_2 = UNSUPPORTED_VERSION


def refusal_order(partitions: list[tuple[str, int]]) -> list[tuple[str, list[int]]]:
    """The refused transaction's ``(topic, partitions)`` in Kafka's order; ``partitions`` each once."""
    joined = scala_mutable_order(partitions, lambda tp: topic_partition_hash(*tp),
                                 scala_mutable_capacity(len(set(partitions)), built=True))
    by_topic: dict[str, list[int]] = {}
    for topic, partition in joined:
        by_topic.setdefault(topic, []).append(partition)
    return [(topic, by_topic[topic]) for topic in hashmap_order(by_topic, string_hash)]
