"""A fetcher's side of a fetch session (``kraftwire.replica.fetch_session_client``), mirrored from Kafka's
``FetchSessionHandlerTest`` (clients/src/test/java/org/apache/kafka/clients)."""

from __future__ import annotations

import uuid

from kraftwire import error_codes as ec
from kraftwire.ids import ZERO_UUID
from kraftwire.replica.fetch_session_client import FetchSessionHandler

FOO, BAR = uuid.UUID(int=1), uuid.UUID(int=2)


def entry(topic_id, offset: int, log_start: int, max_bytes: int):
    """(topic id, request entry): a plain tuple stands for the wire entry, compared by value."""
    return (topic_id, (offset, log_start, max_bytes))


def test_incrementals():  # testIncrementals
    for foo, bar in ((FOO, BAR), (ZERO_UUID, ZERO_UUID)):
        h = FetchSessionHandler()
        plan = h.build({("foo", 0): entry(foo, 0, 100, 200), ("foo", 1): entry(foo, 10, 110, 210)})
        assert (plan.session_id, plan.epoch, plan.full) == (0, 0, True)
        assert list(plan.to_send) == [("foo", 0), ("foo", 1)]
        assert h.handle_response(plan, 0, 123, [("foo", 0), ("foo", 1)])
        wanted = {("foo", 0): entry(foo, 0, 100, 200), ("foo", 1): entry(foo, 10, 120, 210),
                  ("bar", 0): entry(bar, 20, 200, 200)}
        plan2 = h.build(wanted)
        assert (plan2.session_id, plan2.epoch, plan2.full) == (123, 1, False)
        assert plan2.to_send == {("bar", 0): entry(bar, 20, 200, 200), ("foo", 1): entry(foo, 10, 120, 210)}
        assert list(plan2.to_send) == [("bar", 0), ("foo", 1)] and plan2.to_forget == []
        assert h.session == wanted
        assert h.handle_response(plan2, 0, 123, [("foo", 1)])
        # an INVALID_FETCH_SESSION_EPOCH closes the session: the next request is full, naming the old id
        assert not h.handle_response(h.build(wanted), ec.INVALID_FETCH_SESSION_EPOCH, 0, [])
        plan4 = h.build(wanted)
        assert (plan4.session_id, plan4.epoch, plan4.full) == (123, 0, True) and plan4.to_send == wanted


def test_incremental_partition_removal():  # testIncrementalPartitionRemoval
    h = FetchSessionHandler()
    plan = h.build({("foo", 0): entry(FOO, 0, 100, 200), ("foo", 1): entry(FOO, 10, 110, 210),
                    ("bar", 0): entry(BAR, 20, 120, 220)})
    assert h.handle_response(plan, 0, 123, [("foo", 0), ("foo", 1), ("bar", 0)])
    plan2 = h.build({("foo", 1): entry(FOO, 10, 110, 210)})
    assert (plan2.session_id, plan2.epoch) == (123, 1) and plan2.to_send == {}
    assert [k for k, _ in plan2.to_forget] == [("foo", 0), ("bar", 0)]
    assert [e[0] for _, e in plan2.to_forget] == [FOO, BAR]
    # FETCH_SESSION_ID_NOT_FOUND: the next request is full and asks for a new session
    assert not h.handle_response(plan2, ec.FETCH_SESSION_ID_NOT_FOUND, 0, [])
    plan3 = h.build({("foo", 0): entry(FOO, 0, 100, 200)})
    assert (plan3.session_id, plan3.epoch, list(plan3.to_send)) == (0, 0, [("foo", 0)])


def test_topic_id_replaced():  # testTopicIdReplaced (both ends with topic ids)
    h = FetchSessionHandler()
    plan = h.build({("foo", 0): entry(FOO, 0, 100, 200)})
    assert h.handle_response(plan, 0, 123, [("foo", 0)])
    plan2 = h.build({("foo", 0): entry(BAR, 0, 100, 200)})
    assert plan2.to_forget == [(("foo", 0), entry(FOO, 0, 100, 200))]
    assert plan2.to_send == {("foo", 0): entry(BAR, 0, 100, 200)}


def test_verify_full_fetch_response_partitions():  # testVerifyFullFetchResponsePartitions
    """A full answer that omits a session partition, or lists one outside it, is not used; the next request is full
    and asks for a new session."""
    h = FetchSessionHandler()
    plan = h.build({("foo", 0): entry(FOO, 0, 1, 1), ("foo", 1): entry(FOO, 0, 1, 1)})
    assert not h.handle_response(plan, 0, 123, [("foo", 0)])
    plan = h.build({("foo", 0): entry(FOO, 0, 1, 1), ("foo", 1): entry(FOO, 0, 1, 1)})
    assert (plan.session_id, plan.epoch) == (0, 0)
    assert not h.handle_response(plan, 0, 123, [("foo", 0), ("foo", 1), ("bar", 0)])
    plan = h.build({("foo", 0): entry(FOO, 0, 1, 1), ("foo", 1): entry(FOO, 0, 1, 1)})
    assert h.handle_response(plan, 0, 0, [("foo", 0), ("foo", 1)])  # no session: full requests go on
    assert (h.build({("foo", 0): entry(FOO, 1, 1, 1)}).epoch, h.session_id) == (0, 0)


def test_top_level_error_resets_metadata():  # testTopLevelErrorResetsMetadata
    h = FetchSessionHandler()
    plan = h.build({("foo", 0): entry(FOO, 0, 100, 200), ("foo", 1): entry(FOO, 10, 110, 210)})
    assert h.handle_response(plan, 0, 123, [("foo", 0), ("foo", 1)])
    plan2 = h.build({("unknown", 0): entry(BAR, 0, 100, 200)})
    assert (plan2.session_id, plan2.epoch, plan2.full) == (123, 1, False)
    assert not h.handle_response(plan2, ec.UNKNOWN_TOPIC_ID, 123, [])
    plan3 = h.build({})
    assert (plan3.session_id, plan3.epoch) == (123, 0)


def test_incremental_answer_outside_the_session_and_failed_exchanges_kraftwire():
    """An incremental answer listing a partition outside the session is not used (the session is closed, a new
    one asked for); so is any failed exchange; the broker closing the session (id 0) means full requests."""
    h = FetchSessionHandler()
    plan = h.build({("foo", 0): entry(FOO, 0, 1, 1)})
    assert h.handle_response(plan, 0, 77, [("foo", 0)])
    plan = h.build({("foo", 0): entry(FOO, 5, 1, 1)})
    assert not h.handle_response(plan, 0, 77, [("bar", 9)])
    assert (h.session_id, h.epoch) == (77, 0)
    plan = h.build({("foo", 0): entry(FOO, 5, 1, 1)})
    assert h.handle_response(plan, 0, 78, [("foo", 0)])
    h.handle_error()
    assert (h.session_id, h.epoch) == (78, 0)
    plan = h.build({("foo", 0): entry(FOO, 5, 1, 1)})
    assert h.handle_response(plan, 0, 79, [("foo", 0)]) and h.build({("foo", 0): entry(FOO, 6, 1, 1)}).epoch == 1
    assert h.handle_response(h.build({("foo", 0): entry(FOO, 6, 1, 1)}), 0, 0, [])
    assert h.build({("foo", 0): entry(FOO, 6, 1, 1)}).full
