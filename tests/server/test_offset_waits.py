"""One offset-keyed wait for the answers that need the log to reach an offset."""

from __future__ import annotations

import asyncio

from kraftwire.error_codes import NONE, NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT
from kraftwire.server.runtime.waits import FLUSHED, HIGH_WATERMARK, OffsetWaits


def test_each_watermark_ends_its_own_waits_in_offset_order_once():
    waits, ended = OffsetWaits(), []
    for end in (5, 3, 9):
        waits.add(HIGH_WATERMARK, end, 1, lambda e, end=end: ended.append(("hw", end, e)))
    waits.add(FLUSHED, 4, 1, lambda e: ended.append(("flushed", 4, e)))
    waits.check(high_watermark=5, flushed=3, leading_epoch=1)
    assert ended == [("hw", 3, NONE), ("hw", 5, NONE)]
    waits.check(high_watermark=5, flushed=4, leading_epoch=1)
    waits.check(high_watermark=5, flushed=4, leading_epoch=1)
    assert ended[2:] == [("flushed", 4, NONE)] and len(waits) == 1


def test_losing_the_epoch_ends_what_was_not_reached_with_not_leader():
    waits, ended = OffsetWaits(), []
    waits.add(HIGH_WATERMARK, 3, 1, lambda e: ended.append((3, e)))
    waits.add(HIGH_WATERMARK, 8, 1, lambda e: ended.append((8, e)))
    waits.check(high_watermark=4, flushed=9, leading_epoch=2)  # reached first, then the new epoch
    assert ended == [(3, NONE), (8, NOT_LEADER_OR_FOLLOWER)] and len(waits) == 0
    waits.add(HIGH_WATERMARK, 20, 2, lambda e: ended.append((20, e)))
    waits.check(high_watermark=4, flushed=9, leading_epoch=None)  # no longer leading at all
    assert ended[-1] == (20, NOT_LEADER_OR_FOLLOWER)


def test_a_timeout_ends_a_wait_once_and_the_watermark_later_does_nothing():
    async def main():
        waits, ended = OffsetWaits(), []
        loop = asyncio.get_running_loop()
        waits.add(HIGH_WATERMARK, 5, 1, ended.append, loop=loop, timeout_s=0.01, timeout_error=REQUEST_TIMED_OUT)
        waits.add(HIGH_WATERMARK, 6, 1, ended.append, loop=loop, timeout_s=5, timeout_error=REQUEST_TIMED_OUT)
        await asyncio.sleep(0.05)
        waits.check(high_watermark=10, flushed=10, leading_epoch=1)
        return ended

    assert asyncio.run(main()) == [REQUEST_TIMED_OUT, NONE]


def test_pending_says_whether_check_has_anything_to_end():
    waits, ended = OffsetWaits(), []
    assert not waits.pending
    waits.add(FLUSHED, 2, 1, ended.append)
    waits.add(HIGH_WATERMARK, 4, 1, ended.append)
    assert waits.pending
    waits.check(high_watermark=3, flushed=2, leading_epoch=1)
    assert waits.pending and ended == [NONE]  # the high watermark wait is still out
    waits.check(high_watermark=4, flushed=2, leading_epoch=1)
    assert not waits.pending and ended == [NONE, NONE]
