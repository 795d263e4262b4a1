"""The requests a node has sent and not yet seen answered: correlation ids, deadlines, and which response matches.

A response is accepted only for the request it answers: the same correlation id, from the peer the request went to,
of the response type of the request's kind, and sent in the node's current epoch. Anything else is stale and
ignored (counted as ``stale_responses``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator


@dataclass(slots=True)
class Outstanding:
    kind: type
    dest: int
    epoch: int
    deadline_ms: int


class OutstandingRequests:
    def __init__(self, first_correlation_id: int, response_of: dict[type, type]) -> None:
        self._next = first_correlation_id
        self._response_of = response_of
        self._by_cid: dict[int, Outstanding] = {}

    def next_correlation_id(self) -> int:
        cid = self._next
        self._next = (self._next + 1) & 0x7FFFFFFF
        return cid

    def add(self, cid: int, kind: type, dest: int, epoch: int, deadline_ms: int) -> None:
        self._by_cid[cid] = Outstanding(kind, dest, epoch, deadline_ms)

    def has(self, kind: type, dest: int | None = None) -> bool:
        return any(o.kind is kind and (dest is None or o.dest == dest) for o in self._by_cid.values())

    def pop(self, cid: int) -> Outstanding | None:
        return self._by_cid.pop(cid, None)

    def match(self, response, epoch: int) -> tuple[Outstanding | None, bool]:
        """``(the request answered, whether the answer counts)``: ``(None, False)`` for an unknown correlation id,
        another peer or another type (the entry stays); ``(request, False)`` when it was sent in an older epoch (the
        entry is dropped)."""
        out = self._by_cid.get(response.correlation_id)
        expected = self._response_of.get(out.kind) if out is not None else None
        if out is None or out.dest != response.src or not isinstance(response, expected):
            return None, False
        del self._by_cid[response.correlation_id]
        return out, out.epoch == epoch

    def expire(self, now_ms: int) -> list[Outstanding]:
        """Drop and return the requests whose deadline has come."""
        due = [cid for cid, o in self._by_cid.items() if o.deadline_ms <= now_ms]
        return [self._by_cid.pop(cid) for cid in due]

    def drop(self, keep: Callable[[Outstanding], bool]) -> None:
        for cid in [c for c, o in self._by_cid.items() if not keep(o)]:
            del self._by_cid[cid]

    def clear(self) -> None:
        self._by_cid.clear()

    def deadlines(self) -> Iterator[int]:
        return (o.deadline_ms for o in self._by_cid.values())
