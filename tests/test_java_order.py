"""Kafka's hash-map orders that kraftwire's answers reproduce (``kraftwire.java_order``), checked against orders Kafka
4.4 answered (the conformance run, issue #36: DeleteRecords, DescribeTransactions, DeleteGroups)."""

from __future__ import annotations

from kraftwire.java_order import (hashmap_order, topic_partition_hash, topics_in_hashmap_order,
                                  topics_in_scala_groupby_order)

#: three topics Kafka 4.4 was asked to delete records of, in this order
NAMES = ["ord1795890529609457391-0", "ord1795890529609460323-1", "ord1795890529609461164-2"]


def test_delete_records_of_one_topic_as_kafka_answered():
    assert hashmap_order(range(6), lambda p: topic_partition_hash(NAMES[0], p)) == [5, 3, 4, 1, 2, 0]
    assert topics_in_hashmap_order((NAMES[2], p) for p in range(6)) == [(NAMES[2], [1, 0, 5, 4, 3, 2])]


def test_delete_records_of_three_topics_as_kafka_answered():
    """Kafka answered partitions 0 and 1 of each: topics 0, 2, 1 — partitions 1, 0 / 1, 0 / 0, 1."""
    assert topics_in_hashmap_order((name, p) for name in NAMES for p in (0, 1)) == [
        (NAMES[0], [1, 0]), (NAMES[2], [1, 0]), (NAMES[1], [0, 1])]
    assert topics_in_hashmap_order([("t", 1), ("t", 1)]) == [("t", [1])]  # a map keeps one of each


def test_a_transactions_partitions_as_kafka_described_them():
    """DescribeTransactions lists a transaction's partitions in its HashSet's order: Kafka answered 1, 0 for the
    first two of these topics and 0, 1 for the others."""
    got = [hashmap_order([0, 1], lambda p, v=v: topic_partition_hash(f"AddPartitionsToTxn-v{v}-add-r90595.a", p))
           for v in range(4)]
    assert got == [[1, 0], [1, 0], [0, 1], [0, 1]]


def test_alter_replica_log_dirs_groups_as_scalas_group_by():
    """The order Kafka 4.4 answered an AlterReplicaLogDirs of seven unknown topics, partitions 0, 3, 1 each, in the
    conformance run (AlterReplicaLogDirs-v1-unknown-topics): topics by the immutable HashMap groupBy returns, each
    topic's partitions by its own mutable HashMap."""
    ns = "AlterReplicaLogDirs-v1-unknown-topics"
    grouped = topics_in_scala_groupby_order([(f"{ns}.m{c}", p) for c in "abcdefg" for p in (0, 3, 1)])
    assert [t[-2:] for t, _ in grouped] == ["mf", "mc", "mb", "me", "md", "ma", "mg"]
    by_topic = {t[-2:]: ps for t, ps in grouped}
    assert (by_topic["mb"], by_topic["mc"], by_topic["md"]) == ([0, 1, 3], [1, 0, 3], [0, 1, 3])
