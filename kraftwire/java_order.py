"""The order a ``java.util.HashMap`` iterates its keys in, so the tools that print Kafka's JSON or per-partition lines
(``log-dirs``, ``delete-records``) print them in the order Kafka's do. A HashMap's order is its bucket order: the
key's ``hashCode`` spread (``h ^ h >>> 16``) masked to the table size, a power of two of at least 16 that keeps the
map at most three quarters full; keys sharing a bucket keep their insertion order. Java's ``String.hashCode`` is here
too, for the tools and for the coordinators' partitioning (layer 0: every part may use it)."""

from __future__ import annotations

import struct
from typing import Callable, Iterable, TypeVar

T = TypeVar("T")

__all__ = ["string_hash", "topic_partition_hash", "hashmap_capacity", "hashmap_order", "topics_in_hashmap_order",
           "scala_mutable_capacity", "scala_mutable_order", "scala_hash_order", "scala_set_order"]


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


def hashmap_capacity(size: int, *, copied: bool = False, initial: int | None = None) -> int:
    """The table size of a ``HashMap`` holding ``size`` keys: filled key by key from the default 16 it doubles
    whenever it gets more than three quarters full; a new map filled at once by ``putAll`` (or the copy
    constructor) sizes its table for ``size / 0.75 + 1`` first, which can be twice as large; one made with
    ``new HashMap<>(initial)`` starts at the power of two at or above ``initial`` (at least 1) and doubles from
    there (``new HashMap<>(2)`` holding two keys has four buckets, not sixteen)."""
    if initial is not None:
        capacity = 1
        while capacity < initial:
            capacity *= 2
        for filled in range(1, size + 1):
            if filled > int(capacity * 0.75):
                capacity *= 2
        return capacity
    if copied and size:
        wanted, capacity = int(size / 0.75 + 1), 1
        while capacity < wanted:
            capacity *= 2
        return capacity
    capacity = 16
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def hashmap_order(keys: Iterable[T], hash_of: Callable[[T], int], capacity: int | None = None) -> list[T]:
    """The iteration order of a ``HashMap`` (or ``HashSet``) the keys were put in, in this order: by bucket, and in
    a bucket by insertion (a resize splits each bucket keeping that order). ``capacity`` is the table size when
    the map was not filled key by key (``hashmap_capacity``). Chains long enough to become trees do not happen
    for the handfuls of keys this serves."""
    items = list(keys)
    capacity = capacity or hashmap_capacity(len(items))

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


def _spread(h: int) -> int:
    """How Scala 2.13's mutable ``HashMap`` improves a hash: the high half xored into the low half."""
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def _improve(h: int) -> int:
    """How Scala 2.13's immutable hash collections improve a hash (``scala.collection.Hashing.improve``)."""
    h &= 0xFFFFFFFF
    h = (h + (~(h << 9) & 0xFFFFFFFF)) & 0xFFFFFFFF
    h ^= h >> 14
    h = (h + (h << 4)) & 0xFFFFFFFF
    return h ^ (h >> 10)


def scala_mutable_capacity(size: int, *, built: bool = False) -> int:
    """The table size of a Scala 2.13 mutable ``HashMap``/``HashSet`` holding ``size`` keys: filled key by key from
    16, doubled before an insertion would make it three quarters full; built at once by ``++`` from collections of
    known sizes, sized for them first (to at least 16, and up to twice the table filling key by key gives)."""
    if built:
        wanted = int((size + 1) / 0.75) - 1
        capacity = 16
        while capacity <= wanted:
            capacity *= 2
        return capacity
    capacity = 16
    while size >= capacity * 3 // 4:
        capacity *= 2
    return capacity


def scala_mutable_order(keys: Iterable[T], hash_of: Callable[[T], int], capacity: int | None = None) -> list[T]:
    """The iteration order of a ``scala.collection.mutable.HashMap`` or ``HashSet`` (Scala 2.13): by bucket of the
    improved hash, and in a bucket by that hash (signed), whatever the insertion order; ``capacity`` as
    ``scala_mutable_capacity`` says (filled key by key unless given)."""
    items = list(dict.fromkeys(keys))
    capacity = capacity or scala_mutable_capacity(len(items))
    improved = {id(item): _int32(_spread(hash_of(item))) for item in items}
    return sorted(items, key=lambda item: (improved[id(item)] & (capacity - 1), improved[id(item)]))


def scala_hash_order(keys: Iterable[T], hash_of: Callable[[T], int]) -> list[T]:
    """The iteration order of Scala 2.13's immutable ``HashSet``/``HashMap`` (a CHAMP trie) holding these keys. The
    trie is canonical: at each level five bits of the improved hash (lowest first) pick a slot; a key alone in its
    slot sits in the node, keys sharing a slot go one level down. A node lists its own keys by slot, then its
    sub-nodes by slot. Keys whose whole hash is equal (a collision node) keep their insertion order. (The improvement
    is not the mutable map's: checked against the JVM by tests/test_java_order_jvm.py.)"""

    def walk(level: list[tuple[int, T]], shift: int) -> list[T]:
        if shift >= 32:
            return [item for _, item in level]
        slots: dict[int, list[tuple[int, T]]] = {}
        for entry in level:
            slots.setdefault((entry[0] >> shift) & 31, []).append(entry)
        own = [slots[slot][0][1] for slot in sorted(slots) if len(slots[slot]) == 1]
        below = [item for slot in sorted(slots) if len(slots[slot]) > 1 for item in walk(slots[slot], shift + 5)]
        return own + below

    return walk([(_improve(hash_of(item)), item) for item in dict.fromkeys(keys)], 0)


def scala_set_order(keys: Iterable[T], hash_of: Callable[[T], int]) -> list[T]:
    """The iteration order of a Scala 2.13 immutable ``Set`` built from the keys in this order (``.toSet``): up to
    four keys it is a ``Set1``..``Set4``, which keeps insertion order; from five on a ``HashSet``."""
    items = list(dict.fromkeys(keys))
    return items if len(items) <= 4 else scala_hash_order(items, hash_of)


def topics_in_scala_groupby_order(partitions: Iterable[tuple[str, int]]) -> list[tuple[str, list[int]]]:
    """``(topic, partition)`` pairs as Kafka's answers built by Scala's ``groupBy(_.topic)`` over a mutable map of
    them group them (AlterReplicaLogDirs): the topics in the order of the immutable ``HashMap`` ``groupBy`` returns,
    each topic's partitions in the order of its own mutable ``HashMap``, filled pair by pair."""
    pairs = list(dict.fromkeys(partitions))
    topics = scala_hash_order(dict.fromkeys(t for t, _ in pairs), string_hash)
    return [(topic, [p for _, p in scala_mutable_order([(t, p) for t, p in pairs if t == topic],
                                                       lambda tp: topic_partition_hash(*tp))]) for topic in topics]
