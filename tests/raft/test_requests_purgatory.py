"""The node's bookkeeping pieces on their own: outstanding requests, the fetch purgatory, observer targeting."""

from __future__ import annotations

import random
from types import SimpleNamespace

from kraftwire.ids import NO_ID
from kraftwire.raft.handlers import RESPONSE_OF
from kraftwire.raft import messages as m
from kraftwire.raft.observer import ObserverTarget
from kraftwire.raft.purgatory import FetchPurgatory
from kraftwire.raft.requests import OutstandingRequests


def _vote_response(cid: int, src: int):
    return m.VoteResponse(src, 1, cid, m.NONE, NO_ID, 3, vote_granted=True)


def test_a_response_matches_only_its_request_in_the_current_epoch():
    reqs = OutstandingRequests(0x7FFFFFFF, RESPONSE_OF)
    cid = reqs.next_correlation_id()
    assert cid == 0x7FFFFFFF and reqs.next_correlation_id() == 0  # wraps to a non-negative id
    reqs.add(cid, m.VoteRequest, dest=2, epoch=3, deadline_ms=100)
    assert reqs.has(m.VoteRequest) and reqs.has(m.VoteRequest, 2) and not reqs.has(m.VoteRequest, 3)
    assert reqs.match(_vote_response(cid, src=3), epoch=3) == (None, False)  # another peer: still outstanding
    assert reqs.match(_vote_response(cid + 1, src=2), epoch=3) == (None, False)  # unknown id
    out, current = reqs.match(_vote_response(cid, src=2), epoch=3)
    assert out.dest == 2 and current and not reqs.has(m.VoteRequest)
    reqs.add(7, m.VoteRequest, dest=2, epoch=3, deadline_ms=100)
    out, current = reqs.match(_vote_response(7, src=2), epoch=4)  # sent in an older epoch: stale, forgotten
    assert out is not None and not current and not reqs.has(m.VoteRequest)


def test_requests_expire_at_their_deadline():
    reqs = OutstandingRequests(1, RESPONSE_OF)
    reqs.add(1, m.VoteRequest, 2, 1, deadline_ms=100)
    reqs.add(2, m.FetchRequest, 3, 1, deadline_ms=200)
    assert sorted(reqs.deadlines()) == [100, 200]
    assert [o.dest for o in reqs.expire(99)] == []
    assert [o.dest for o in reqs.expire(100)] == [2]
    reqs.drop(lambda o: o.kind is not m.FetchRequest)
    assert list(reqs.deadlines()) == []


def _fetch(replica: int, offset: int, max_wait_ms: int = 500, cid: int = 1):
    return SimpleNamespace(replica_id=replica, fetch_offset=offset, max_wait_ms=max_wait_ms, correlation_id=cid)


def test_a_parked_fetch_is_due_on_data_on_max_wait_and_on_lingering_high_watermark_news():
    p = FetchPurgatory()
    p.park(_fetch(2, 10), now_ms=0, high_watermark=8)
    p.park(_fetch(3, 10), now_ms=0, high_watermark=9)
    assert p.take_due(1, replication_limit=10, high_watermark=9, linger_ms=5) == []  # replica 2: news, lingering
    assert list(p.deadlines()) == [6, 500]
    assert [r.replica_id for r in p.take_due(6, 10, 9, 5)] == [2]
    assert [r.replica_id for r in p.take_due(7, replication_limit=11, high_watermark=9, linger_ms=5)] == [3]  # data
    p.park(_fetch(2, 11), now_ms=10, high_watermark=9)
    assert p.take_due(509, 11, 9, 5) == [] and [r.replica_id for r in p.take_due(510, 11, 9, 5)] == [2]


def test_one_parked_fetch_per_replica_and_all_are_answered_on_leaving():
    p = FetchPurgatory()
    p.park(_fetch(2, 10, cid=1), 0, 9)
    p.park(_fetch(2, 11, cid=2), 0, 9)  # a newer fetch of the same replica replaces the older
    p.park(_fetch(NO_ID, 5, cid=3), 0, 9)
    p.park(_fetch(NO_ID, 5, cid=4), 0, 9)  # anonymous observers are told apart by correlation id
    assert [r.correlation_id for r in p.take_all()] == [2, 3, 4]
    assert not p


def test_observer_targeting_prefers_voters_that_answered():
    o = ObserverTarget({1, 2, 3}, random.Random(7))
    picks = {o.pick(unresponsive=(1, 2)) for _ in range(20)}
    assert picks == {3}
    assert o.pick(unresponsive=(3,)) in {1, 2, 3} and not o.quiet  # all were quiet: every voter is tried again
    assert {o.pick(skip=(2,)) for _ in range(20)} == {1, 3}
    o.fetched()
    assert o.target is None and not o.quiet
