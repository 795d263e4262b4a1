"""The order a ``java.util.HashMap`` iterates its keys in, so the tools that print Kafka's JSON or per-partition lines
(``log-dirs``, ``delete-records``) print them in the order Kafka's do. A HashMap's order is its bucket order: the
key's ``hashCode`` spread (``h ^ h >>> 16``) masked to the table size, a power of two of at least 16 that keeps the
map at most three quarters full; keys sharing a bucket keep their insertion order. Java's ``String.hashCode`` is here
too, for the tools and for the coordinators' partitioning (layer 0: every part may use it)."""

from __future__ import annotations

import struct
from typing import Callable, Iterable, TypeVar

T = TypeVar("T")

__all__ = ["string_hash", "topic_partition_hash", "hashmap_order", "topics_in_hashmap_order"]


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def string_hash(s: str) -> int:
    """``String.hashCode``: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units (a character outside the BMP counts
    as its two surrogates), as a signed 32-bit int. Also what picks a group's or transactional id's coordinator."""
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for unit in struct.unpack(f">{len(data) // 2}H", data):
        h = (31 * h + unit) & 0xFFFFFFFF
    return _int32(h)


def topic_partition_hash(topic: str, partition: int) -> int:
    """``TopicPartition.hashCode``."""
    return _int32(31 * (31 + partition) + string_hash(topic))


def hashmap_order(keys: Iterable[T], hash_of: Callable[[T], int]) -> list[T]:
    items = list(keys)
    capacity = 16
    while len(items) > capacity * 3 // 4:
        capacity *= 2

    def bucket(item: T) -> int:
        h = hash_of(item) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return [item for _, _, item in sorted((bucket(item), i, item) for i, item in enumerate(items))]


def topics_in_hashmap_order(partitions: Iterable[tuple[str, int]]) -> list[tuple[str, list[int]]]:
    """``(topic, partition)`` pairs grouped as Kafka's answers built from a ``HashMap<TopicPartition, ...>`` by way
    of a ``HashMap<String, ...>`` of topics group them (DeleteRecords): the topics in the order of a map of their
    names, each topic's partitions in the order of the map of all the pairs."""
    pairs = list(dict.fromkeys(partitions))
    ordered = hashmap_order(pairs, lambda tp: topic_partition_hash(*tp))
    return [(topic, [p for t, p in ordered if t == topic])
            for topic in hashmap_order(list(dict.fromkeys(t for t, _ in pairs)), string_hash)]
