"""Parked fetches (Kafka's DelayedFetch): a Fetch with fewer than MinBytes ready waits until what it reads moves or
MaxWaitMs passes, then is answered exactly once. Shared by the test server's consumer fetch and a broker's
partition fetches; each supplies ``answer(request) -> (response, ready)`` and says when to look again (``wake``).

A supplier may pass ``send(request, conn, response)`` to send the answers itself (a broker applies a consumer's
fetch quota as the answer goes out); by default ``conn.send_response``.

A supplier that can tell readiness without building the answer (a broker: ``kraftwire.replica.fetch_readiness``)
also passes ``ready(request, watch) -> bool``, and parks each fetch with its ``watch``: a wake then asks that cheap
check and builds the answer only when it says yes, as Kafka's ``DelayedFetch.tryComplete`` does.

A supplier whose answers change state when they go out (a broker's fetch sessions: the offsets a session last sent)
passes ``finish(request, conn, answer) -> response``: ``answer`` is then a draft, and ``finish`` runs exactly once,
on the draft that is sent; ``send`` then sends what ``finish`` made of it.
"""

from __future__ import annotations

import asyncio
from typing import Callable

__all__ = ["FetchPurgatory"]


class _Parked:
    __slots__ = ("request", "conn", "keys", "watch", "timer", "done")

    def __init__(self, request, conn, keys, watch) -> None:
        self.request, self.conn, self.keys, self.watch, self.timer, self.done = request, conn, keys, watch, None, False


class FetchPurgatory:
    def __init__(self, answer: Callable[[object], tuple[object, bool]],
                 ready: Callable[[object, object], bool] | None = None,
                 finish: Callable[[object, object, object], object] | None = None,
                 send: Callable[[object, object, object], None] | None = None) -> None:
        self.answer = answer
        self.ready = ready
        self.finish = finish
        self.send = send or (lambda request, conn, response: conn.send_response(
            response, request.version, request.header.correlation_id))
        self.parked: list[_Parked] = []

    def _deliver(self, request, conn, response) -> None:
        if self.finish is not None:
            response = self.finish(request, conn, response)
        self.send(request, conn, response)

    def respond(self, request, conn, response, ready: bool, keys=None, watch=None) -> None:
        """Send ``response`` now if it is ``ready`` (or the request does not wait); otherwise park the request until
        ``wake`` finds it ready (for one of ``keys``, when given; first by ``self.ready(request, watch)`` when both
        are given) or its MaxWaitMs passes."""
        body = request.body
        if ready or body.max_wait_ms <= 0:
            self._deliver(request, conn, response)
            return
        parked = _Parked(request, conn, keys, watch)
        parked.timer = asyncio.get_running_loop().call_later(body.max_wait_ms / 1000.0, self._expire, parked)
        self.parked.append(parked)

    def wake(self, key=None) -> None:
        """Answer the parked requests that are ready now; only those reading ``key`` are looked at when it is
        given. Requests whose connection closed are dropped."""
        if not self.parked:
            return
        keep = []
        for parked in self.parked:
            if parked.done:
                continue
            if parked.conn.closed:
                parked.done = True
                if parked.timer is not None:
                    parked.timer.cancel()
                continue
            if ((key is None or parked.keys is None or key in parked.keys)
                    and (self.ready is None or parked.watch is None or self.ready(parked.request, parked.watch))):
                response, ready = self.answer(parked.request)
                if ready:
                    self._send(parked, response)
                    continue
            keep.append(parked)
        self.parked = keep

    def _send(self, parked: _Parked, response=None) -> None:
        if parked.done:
            return
        parked.done = True
        if parked.timer is not None:
            parked.timer.cancel()
        if response is None:
            response, _ = self.answer(parked.request)
        self._deliver(parked.request, parked.conn, response)

    def _expire(self, parked: _Parked) -> None:
        parked.timer = None
        self._send(parked)
        self.parked = [p for p in self.parked if not p.done]
