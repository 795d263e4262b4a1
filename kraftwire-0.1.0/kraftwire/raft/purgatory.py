"""The leader's fetch purgatory: follower Fetches that found nothing new wait here for something worth answering.

A parked Fetch is due when the leader may replicate past its fetch offset (new durable data), at its MaxWaitMs, or
when the high watermark differs from the one the replica knows and that news is ``high_watermark_linger_ms`` old
(so high-watermark news rides along with the next data when it comes soon). One parked Fetch per replica id: a
newer one replaces the older. On leaving leadership every parked Fetch is answered with an error.
"""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.ids import NO_ID


@dataclass(slots=True)
class ParkedFetch:
    request: object  # raft.messages.FetchRequest
    deadline_ms: int
    #: the high watermark the fetching replica knows; a different one is news for it
    high_watermark: int | None
    #: when high-watermark news alone answers it (set when the news appears: that time + the linger)
    news_due_ms: int | None = None


class FetchPurgatory:
    def __init__(self) -> None:
        self._parked: dict[int, ParkedFetch] = {}

    def __bool__(self) -> bool:
        return bool(self._parked)

    def park(self, request, now_ms: int, high_watermark: int | None) -> None:
        key = request.replica_id if request.replica_id != NO_ID else -request.correlation_id - 2
        self._parked[key] = ParkedFetch(request, now_ms + request.max_wait_ms, high_watermark)

    def take_due(self, now_ms: int, replication_limit: int, high_watermark: int | None, linger_ms: int) -> list:
        """Remove and return the requests now due (in the order they were parked)."""
        out = []
        for key, parked in list(self._parked.items()):
            due = replication_limit > parked.request.fetch_offset or now_ms >= parked.deadline_ms
            if not due and high_watermark != parked.high_watermark:
                if parked.news_due_ms is None:
                    parked.news_due_ms = now_ms + linger_ms
                due = now_ms >= parked.news_due_ms
            if due:
                del self._parked[key]
                out.append(parked.request)
        return out

    def take_all(self) -> list:
        out = [p.request for p in self._parked.values()]
        self._parked.clear()
        return out

    def deadlines(self):
        for p in self._parked.values():
            yield p.deadline_ms if p.news_due_ms is None else min(p.deadline_ms, p.news_due_ms)
