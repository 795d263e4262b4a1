"""One pass over the log in offset order feeding every state rebuilt from it (producer state, group offsets and
generations), on every replica alike. ``catch_up()`` reads from where it stopped to the log end; a truncation below
that point (a follower dropping a diverging tail) or a log start moving past it (retention) makes it start again
from the log start, after telling every subscriber to forget what it had (``reset``)."""

from __future__ import annotations

from typing import Callable

from kraftwire.errors import KraftwireError
from kraftwire.log.api import Isolation
from kraftwire.records import read_batches

SCAN_CHUNK = 8 * 1024 * 1024


class LogScan:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.scanned_to = -1  # nothing scanned yet (the log is opened by start())
        self.on_batch: list[Callable] = []
        self.on_reset: list[Callable[[], None]] = []
        ctx.watchers.append(self.catch_up)

    def catch_up(self) -> None:
        lg = self.ctx.log
        if lg is None:
            return
        end = lg.end_offset()
        if end < self.scanned_to or self.scanned_to < lg.start_offset():
            for reset in self.on_reset:
                reset()
            self.scanned_to = lg.start_offset()
        while self.scanned_to < end:
            try:
                info = lg.read(self.scanned_to, SCAN_CHUNK, Isolation.UNCOMMITTED)
            except KraftwireError:
                return
            if not len(info.records):
                return
            for b in read_batches(info.records, validate=False):
                if b.last_offset < self.scanned_to:
                    continue
                for fn in self.on_batch:
                    fn(b)
                self.scanned_to = b.last_offset + 1

    def appended(self, first_offset: int, last_offset: int, apply: Callable[[], None]) -> None:
        """This node has just appended offsets [first, last] (as leader): ``apply`` them now if the scan had
        reached them, so the next check does not have to read them back."""
        if self.scanned_to == first_offset:
            apply()
            self.scanned_to = last_offset + 1
