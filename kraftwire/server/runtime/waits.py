"""``OffsetWaits``: answers that wait for this leader's log to reach an offset — a Produce with acks=1 (the flushed
offset) or acks=-1, or a coordinator's own append (the high watermark).

Each wait names the watermark, the offset it needs, and the leader epoch it was made in, and ends exactly once with
``callback(error)``: ``NONE`` when the watermark reaches the offset; ``NOT_LEADER_OR_FOLLOWER`` when this node no
longer leads that epoch first (the data may still commit under the next leader, as with Kafka); the caller's
timeout error after its timeout. Waits are kept in one heap per watermark, so ``check`` after every Ready costs a
comparison with the smallest target while nothing is due, not a pass over every pending request.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Callable

from kraftwire.error_codes import NONE, NOT_LEADER_OR_FOLLOWER

#: the watermarks a wait can name
HIGH_WATERMARK = "high watermark"
FLUSHED = "flushed"


class Wait:
    __slots__ = ("target", "epoch", "callback", "timer", "done")

    def __init__(self, target: int, epoch: int, callback: Callable[[int], None]) -> None:
        self.target = target
        self.epoch = epoch
        self.callback = callback
        self.timer = None
        self.done = False

    def end(self, error: int) -> None:
        if not self.done:
            self.done = True
            if self.timer is not None:
                self.timer.cancel()
            self.callback(error)


class OffsetWaits:
    def __init__(self) -> None:
        self._heaps: dict[str, list] = {HIGH_WATERMARK: [], FLUSHED: []}
        self._order = itertools.count()  # ties end in the order they were made
        self._epoch: int | None = None  # the epoch every pending wait was made in (they all belong to one)

    def __len__(self) -> int:
        return sum(1 for heap in self._heaps.values() for *_, w in heap if not w.done)

    @property
    def pending(self) -> bool:
        """Whether any wait may still be pending (``check`` has nothing to do otherwise): cheaper than ``len``."""
        heaps = self._heaps
        return bool(heaps[HIGH_WATERMARK] or heaps[FLUSHED])

    def add(self, watermark: str, target: int, epoch: int, callback: Callable[[int], None], *, loop=None,
            timeout_s: float | None = None, timeout_error: int = 0) -> Wait:
        """Wait for ``watermark`` to reach ``target``; with ``timeout_s``, ``callback(timeout_error)`` after it."""
        wait = Wait(target, epoch, callback)
        if self._epoch is not None and epoch != self._epoch:
            self.leadership_lost()  # waits of an older epoch cannot be pending beside a newer one's
        self._epoch = epoch
        heapq.heappush(self._heaps[watermark], (target, next(self._order), wait))
        if timeout_s is not None:
            wait.timer = loop.call_later(timeout_s, wait.end, timeout_error)
        return wait

    def check(self, high_watermark: int, flushed: int, leading_epoch: int | None) -> None:
        """End the waits the watermarks reached; then, if this node no longer leads their epoch
        (``leading_epoch`` is None or another epoch), every other one."""
        for watermark, reached in ((HIGH_WATERMARK, high_watermark), (FLUSHED, flushed)):
            heap = self._heaps[watermark]
            while heap and (heap[0][2].done or heap[0][0] <= reached):
                heapq.heappop(heap)[2].end(NONE)
        if self._epoch is not None and leading_epoch != self._epoch:
            self.leadership_lost()

    def leadership_lost(self) -> None:
        heaps = [heap for heap in self._heaps.values() if heap]
        self._heaps = {HIGH_WATERMARK: [], FLUSHED: []}
        self._epoch = None
        for heap in heaps:
            for *_, wait in sorted(heap):
                wait.end(NOT_LEADER_OR_FOLLOWER)
