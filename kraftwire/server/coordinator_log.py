"""Loading a coordinator's state from its internal-topic partition (``__consumer_offsets``, ``__transaction_state``).

``replay_partition`` hands every batch of the partition's log, from its start, to ``take(batch, pos)`` (``pos``: the
first offset not yet taken, so a batch the previous chunk already covered in part is only taken from there), a
chunk of ``LOAD_CHUNK`` bytes per turn of the event loop, so that the broker keeps serving everyone else while a
large partition loads. The group and the transaction coordinators differ only in what they do with a batch.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from kraftwire.records import read_batches

#: bytes of the partition replayed per turn of the event loop while a shard loads
LOAD_CHUNK = 1 << 20


async def replay_partition(lg, still_current: Callable[[], bool], take: Callable[[object, int], None]) -> int | None:
    """Replay ``lg`` from its start into ``take``; the offset after the last batch taken, or None when
    ``still_current()`` turned False meanwhile (the leadership moved on: the shard is dropped)."""
    pos = lg.start_offset()
    while still_current() and pos < lg.end_offset():
        info = lg.read(pos, LOAD_CHUNK)
        if not len(info.records):
            break
        for batch in read_batches(info.records):
            if batch.last_offset < pos:
                continue
            take(batch, pos)
            pos = batch.last_offset + 1
        await asyncio.sleep(0)  # let the loop serve everyone else between chunks
    return pos if still_current() else None
