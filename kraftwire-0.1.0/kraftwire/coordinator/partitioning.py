"""Which partition of an internal topic coordinates a key: Kafka's ``Utils.abs(key.hashCode()) % partitions``.

``String.hashCode`` runs over UTF-16 code units (a character outside the BMP counts as its two surrogates) and wraps
as a signed 32-bit int; ``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0 where ``Math.abs`` would leave it negative.
A different hash would send a group to another coordinator than Kafka's brokers and clients expect.
"""

from __future__ import annotations

from kraftwire.java_order import string_hash as java_string_hash

GROUP_TOPIC = "__consumer_offsets"
TRANSACTION_TOPIC = "__transaction_state"
INTERNAL_TOPICS = frozenset({GROUP_TOPIC, TRANSACTION_TOPIC})


def java_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: ``Integer.MIN_VALUE`` is 0, anything else its absolute value."""
    return 0 if n == -0x8000_0000 else abs(n)


def partition_for(key: str, partitions: int) -> int:
    """The partition of an internal topic with ``partitions`` partitions that coordinates ``key``."""
    if partitions <= 0:
        raise ValueError(f"an internal topic needs at least one partition, not {partitions}")
    return java_abs(java_string_hash(key)) % partitions
