"""The edge's two clocks, in milliseconds: the monotonic one for deadlines and intervals (ISR lag, flush.ms, the
beats), the wall clock for what is compared with batch timestamps (producer expiry, retention, LogAppendTime). The
pure layers never read either: the edge passes the time in."""

from __future__ import annotations

import time

__all__ = ["monotonic_ms", "wall_ms"]


def monotonic_ms() -> int:
    return int(time.monotonic() * 1000)


def wall_ms() -> int:
    return int(time.time() * 1000)
