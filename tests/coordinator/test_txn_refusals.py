"""The order of an AddPartitionsToTxn refusal (``kraftwire.coordinator.txn.refusals``), as Kafka 4.4 answered the
conformance scenarios AddPartitionsToTxn-v*-unknown-partition (partitions 0 and 5 of a topic, 5 unknown, and a
missing topic): the missing topic first for every version, then the topic's partitions 0, 5 or 5, 0 by the hash of
its name (the Scala and Java map models are checked against the JVM by tests/test_java_order_jvm.py)."""

from __future__ import annotations

from kraftwire.coordinator.txn.refusals import refusal_order


def test_refusals_in_kafkas_order():
    kafka = {0: [0, 5], 1: [5, 0], 2: [0, 5], 3: [5, 0], 5: [0, 5]}
    for version, partitions in kafka.items():
        ns = f"AddPartitionsToTxn-v{version}-unknown-partition"
        asked = [(f"{ns}.a", 0), (f"{ns}.a", 5), (f"{ns}.missing", 0), (f"{ns}.a", 0)]
        assert refusal_order(asked) == [(f"{ns}.missing", [0]), (f"{ns}.a", partitions)], version
