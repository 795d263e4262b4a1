"""``kraftwire.java_order`` against a real JVM: a few hundred random key sets (topic-like names, and topic
partitions) put in each kind of Java and Scala hash collection whose order Kafka's answers follow, in one run of
``tests/kafka/JavaOrders.java`` on Kafka 4.4's classpath (its Scala library), compared with the Python model."""

from __future__ import annotations

import random

import pytest

from kraftwire.java_order import (hashmap_capacity, hashmap_order, scala_hash_order, scala_mutable_capacity,
                                  scala_mutable_order, scala_set_order, string_hash, topic_partition_hash)

from harness.kafka import run_java

ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"


def _names(rng: random.Random, n: int) -> list[str]:
    return list(dict.fromkeys("".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40))) for _ in range(n)))


def _tp_hash(tp: tuple[str, int]) -> int:
    return topic_partition_hash(*tp)


MODELS = {
    "jhashmap": lambda keys, h: hashmap_order(keys, h),
    "jhashmap-sized": lambda keys, h: hashmap_order(keys, h, hashmap_capacity(len(keys), initial=len(keys))),
    "jhashmap-copy": lambda keys, h: hashmap_order(keys, h, hashmap_capacity(len(keys), copied=True)),
    "scala-mutable": scala_mutable_order,
    "scala-mutable-set": scala_mutable_order,
    "scala-mutable-concat": lambda keys, h: scala_mutable_order(keys, h, scala_mutable_capacity(len(keys), built=True)),
    "scala-set": scala_set_order,
    "scala-hashmap": scala_hash_order,
}


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """(kind, keys, the JVM's order) for 60 sets of each kind and key type, of 1 to 120 keys."""
    rng = random.Random(36)
    sets = []
    for kind in MODELS:
        for i in range(60):
            n = rng.choice([1, 2, 3, 4, 5, 6, 11, 12, 13, 23, 24, 25, 47, 48, 49, rng.randint(1, 120)])
            if i % 2:
                topics = _names(rng, rng.randint(1, 3))
                keys = list(dict.fromkeys((rng.choice(topics), rng.randint(-1, 60)) for _ in range(n)))
                sets.append(("tp-" + kind, keys))
            else:
                sets.append((kind, _names(rng, n)))
    path = tmp_path_factory.mktemp("orders") / "sets.txt"
    path.write_text("".join("\t".join([kind, *(k if isinstance(k, str) else f"{k[0]}:{k[1]}" for k in keys)]) + "\n"
                            for kind, keys in sets))
    lines = run_java("JavaOrders.java", str(path)).splitlines()
    assert len(lines) == len(sets)
    return [(kind, keys, line.split("\t")) for (kind, keys), line in zip(sets, lines)]


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_orders_match_the_jvm(cases, kind):
    checked = 0
    for case_kind, keys, jvm in cases:
        if case_kind.removeprefix("tp-") != kind:
            continue
        if case_kind.startswith("tp-"):
            got = [f"{t}:{p}" for t, p in MODELS[kind](keys, _tp_hash)]
        else:
            got = MODELS[kind](keys, string_hash)
        assert got == jvm, (case_kind, keys)
        checked += 1
    assert checked == 60
