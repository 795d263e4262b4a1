"""Combining share-state batches: what the share coordinator keeps of a share-partition's in-flight records when a
write (or a ShareUpdate record) lands on the state it holds — Kafka's ``PersisterStateBatchCombiner``.

A state batch is an offset range ``[first, last]`` with one delivery state and one delivery count. The combination
of the batches held and the batches written is a list of non-overlapping batches:

* **pruned** to the share-partition start offset (a batch wholly below it goes, one straddling it is cut to start
  there; ``-1`` prunes nothing);
* **merged** pairwise in offset order: two batches with the same delivery information (count, then state) that
  overlap or touch become one; where two batches with different information overlap, the offsets they share take
  the *greater* information (a higher delivery count, or the same count and a higher state), since a record's
  delivery count only grows and its state only moves forward, and the rest of each keeps its own.

The order of the work matters for which of two equal-looking results comes out, so it follows Kafka's: the batches
sit in a set ordered by (first, last, count, state) without duplicates; the first overlapping (or touching and
equal) pair is taken out and replaced by its combination, batches before that pair are final; repeat until no pair
is left.
"""

from __future__ import annotations

import bisect
from typing import Iterable, NamedTuple


class StateBatch(NamedTuple):
    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int

    @property
    def order(self) -> tuple[int, int, int, int]:
        """The position of the batch in the combiner's set (Kafka's ``PersisterStateBatch.compareTo``)."""
        return (self.first_offset, self.last_offset, self.delivery_count, self.delivery_state)

    def info(self) -> tuple[int, int]:
        """What ``_compare_info`` compares: the delivery count first, then the state."""
        return (self.delivery_count, self.delivery_state)


def _compare_info(a: StateBatch, b: StateBatch) -> int:
    """<0, 0, >0 as ``a``'s delivery information is below, equal to or above ``b``'s."""
    x, y = a.info(), b.info()
    return (x > y) - (x < y)


class _Sorted:
    """The combiner's ordered set of batches."""

    def __init__(self, batches: Iterable[StateBatch]) -> None:
        self.items = sorted(set(batches), key=lambda b: b.order)

    def add(self, batch: StateBatch) -> None:
        keys = [b.order for b in self.items]
        i = bisect.bisect_left(keys, batch.order)
        if i == len(self.items) or self.items[i] != batch:
            self.items.insert(i, batch)

    def remove(self, batch: StateBatch) -> None:
        self.items.remove(batch)


def combine(held: list[StateBatch], written: list[StateBatch], start_offset: int) -> list[StateBatch]:
    """The non-overlapping batches of ``held`` and ``written`` together, pruned to ``start_offset``."""
    combined = _prune(list(held) + list(written), start_offset)
    if len(combined) < 2:
        return combined
    pending = _Sorted(combined)
    final: list[StateBatch] = []
    pair = _next_pair(pending, final)
    while pair is not None:
        prev, candidate = pair
        pending.remove(prev)
        pending.remove(candidate)
        for batch in _resolve(prev, candidate):
            pending.add(batch)
        pair = _next_pair(pending, final)
    final.extend(pending.items)
    return final


def _prune(batches: list[StateBatch], start_offset: int) -> list[StateBatch]:
    if start_offset == -1:
        return batches
    out = []
    for b in batches:
        if b.last_offset < start_offset:
            continue
        out.append(b if b.first_offset >= start_offset else b._replace(first_offset=start_offset))
    return out


def _next_pair(pending: _Sorted, final: list[StateBatch]) -> tuple[StateBatch, StateBatch] | None:
    """The first two batches (in order) that overlap, or touch with equal information; the batches before them
    can no longer change and move to ``final``."""
    items = pending.items
    if not items:
        return None
    settled = []
    prev = items[0]
    found = None
    for candidate in items[1:]:
        if candidate.first_offset <= prev.last_offset or (
                prev.last_offset + 1 == candidate.first_offset and _compare_info(prev, candidate) == 0):
            found = (prev, candidate)
            break
        settled.append(prev)
        prev = candidate
    for b in settled:
        pending.remove(b)
    final.extend(settled)
    return found


def _resolve(prev: StateBatch, cand: StateBatch) -> list[StateBatch]:
    """What replaces an overlapping (or touching, equal) pair; ``prev`` starts no later than ``cand``."""
    cmp = _compare_info(cand, prev)
    if cmp == 0:
        return [prev._replace(last_offset=max(cand.last_offset, prev.last_offset))]
    head = prev._replace(last_offset=cand.first_offset - 1)  # prev's offsets before cand
    if cand.first_offset == prev.first_offset:
        if cand.last_offset == prev.last_offset:
            return [cand]
        if cmp < 0:  # prev wins its range; cand keeps what lies beyond it (cand is the longer: it sorts after)
            return [prev, cand._replace(first_offset=prev.last_offset + 1)]
        return [cand]
    if cand.last_offset < prev.last_offset:  # prev swallows cand
        if cmp < 0:
            return [prev]
        return [head, cand, prev._replace(first_offset=cand.last_offset + 1)]
    if cand.last_offset == prev.last_offset:
        return [prev] if cmp < 0 else [head, cand]
    if cmp < 0:  # cand reaches further
        return [prev, cand._replace(first_offset=prev.last_offset + 1)]
    return [head, cand]
