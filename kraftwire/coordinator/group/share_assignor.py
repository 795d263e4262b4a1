"""The share groups' ``simple`` assignor (Kafka's ``SimpleAssignor``, KIP-932), pure.

In a share group a partition may be consumed by several members at once, so the assignor does not hand each
partition to one member; it spreads members over partitions:

* **Sharing.** With ``M`` members and ``P`` assignable partitions each partition should be shared by
  ``ceil(M / P)`` members (1 when there are at least as many partitions as members), and member ``i`` should get
  ``ceil(q * (i + 1)) - ceil(q * i)`` partitions, ``q = sharing * P / M``: every member gets at least one partition
  as soon as there is one, and the counts differ by at most one.
* **Stickiness.** A member keeps what it had (in the order it had it) up to its count; partitions of topics it no
  longer subscribes to are dropped; members over their count, then partitions shared by more members than the
  sharing, give up the excess; the partitions still short of sharers go to the members still short of partitions,
  round robin.
* **Subscriptions.** When every member subscribes to the same topics (homogeneous) all their partitions are one
  pool; otherwise (heterogeneous) each topic is a pool of its own, shared among the members subscribing to it.

Only *assignable* partitions count: those the share coordinator has initialized for the group (a partition whose
share state does not exist yet cannot be fetched). Kafka walks its hash maps in their hash order where this takes
members and partitions in sorted order; the counts and the sharing are Kafka's, which member gets which partition
among equals may differ.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

Assignment = dict  # topic id -> set of partitions
NAME = "simple"


def assign(subscriptions: Mapping[str, set], assignable: Mapping[Any, set[int]],
           current: Mapping[str, Assignment]) -> dict[str, Assignment]:
    """The target assignment of every member: ``subscriptions`` (member id -> subscribed topic ids), ``assignable``
    (topic id -> its assignable partitions), ``current`` (member id -> its current target assignment)."""
    members = sorted(subscriptions)
    if not members:
        return {}
    topic_sets = {frozenset(t for t in subscriptions[m]) for m in members}
    out: dict[str, Assignment] = {m: {} for m in members}
    if len(topic_sets) == 1:
        pools = [(members, sorted(next(iter(topic_sets)), key=str))]
    else:
        topics = sorted({t for m in members for t in subscriptions[m]}, key=str)
        pools = [([m for m in members if t in subscriptions[m]], [t]) for t in topics]
    for pool_members, topics in pools:
        partitions = [(t, p) for t in topics for p in sorted(assignable.get(t, ()))]
        for member, tps in _assign_pool(pool_members, partitions, set(topics), current).items():
            for t, p in tps:
                out[member].setdefault(t, set()).add(p)
    return out


def _assign_pool(members: list[str], partitions: list[tuple], topics: set,
                 current: Mapping[str, Assignment]) -> dict[str, list[tuple]]:
    """The homogeneous algorithm over one pool: ``members`` all subscribe to ``topics`` whose assignable
    partitions are ``partitions``."""
    if not partitions:
        return {m: [] for m in members}
    sharing = -(-len(members) // len(partitions))
    q = sharing * len(partitions) / len(members)
    desired = {m: math.ceil(q * (i + 1)) - math.ceil(q * i) for i, m in enumerate(members)}
    wanted = set(partitions)
    held: dict[str, list[tuple]] = {}
    sharers: dict[tuple, list[str]] = {tp: [] for tp in partitions}
    for m in members:
        kept = [(t, p) for t, ps in sorted(current.get(m, {}).items(), key=lambda x: str(x[0])) if t in topics
                for p in sorted(ps) if (t, p) in wanted]
        held[m] = kept[:desired[m]]  # a member over its count gives up the rest
        for tp in held[m]:
            sharers[tp].append(m)
    for tp in partitions:  # partitions shared too widely give up their last sharers
        while len(sharers[tp]) > sharing:
            held[sharers[tp].pop()].remove(tp)
    short = [m for m in members if len(held[m]) < desired[m]]
    i = 0
    for tp in partitions:
        while short and len(sharers[tp]) < sharing:
            candidates = [m for m in short if m not in sharers[tp]]
            if not candidates:
                break
            m = next((c for c in short[i:] + short[:i] if c in candidates))
            held[m].append(tp)
            sharers[tp].append(m)
            i = (short.index(m) + 1) % len(short)
            if len(held[m]) >= desired[m]:
                short.remove(m)
                i = i % len(short) if short else 0
        if not short:
            break
    return held
