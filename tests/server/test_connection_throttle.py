"""KIP-219's mute at the edge: a throttled connection is not read for the throttle time, a longer throttle extends
the mute and a shorter one does not shorten it (``InboundConnection.throttle``), with a fake transport and the loop's
own clock (no wall-clock assertion: the loop's scheduled resume time is read, not measured)."""

from __future__ import annotations

import asyncio

from kraftwire.server.edge.connection import InboundConnection


class Transport:
    def __init__(self) -> None:
        self.reading = True
        self.closed = False

    def pause_reading(self) -> None:
        assert self.reading, "paused twice"
        self.reading = False

    def resume_reading(self) -> None:
        assert not self.reading, "resumed while reading"
        self.reading = True

    def close(self) -> None:
        self.closed = True


def _connection() -> tuple[InboundConnection, Transport]:
    conn = InboundConnection(dispatcher=None, max_frame_bytes=1024)
    transport = Transport()
    conn.transport = transport
    return conn, transport


def test_a_throttle_mutes_until_its_end_and_a_longer_one_extends_it():
    async def main():
        loop = asyncio.get_running_loop()
        conn, transport = _connection()
        conn.throttle(0)
        assert transport.reading  # nothing to wait for
        conn.throttle(50)
        assert not transport.reading
        first = conn._unmute.when()
        conn.throttle(10)  # shorter: the mute stays as it was
        assert conn._unmute.when() == first
        conn.throttle(80)  # longer: extended
        assert conn._unmute.when() > first
        end = conn._unmute.when()
        for _ in range(1000):  # bounded: the resume is due within 80 ms of loop time
            if transport.reading:
                break
            await asyncio.sleep(0.01)
        assert transport.reading and conn._unmute is None and loop.time() >= end

    asyncio.run(main())


def test_a_closed_connection_is_not_muted():
    async def main():
        conn, transport = _connection()
        conn.close()
        conn.throttle(1000)
        assert conn._unmute is None

    asyncio.run(main())
