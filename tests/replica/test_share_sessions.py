"""Share sessions as a Kafka 4.4 broker keeps them (``kraftwire.replica.share_sessions``): the cache's limit and
counts (Kafka's ``ShareSessionCacheTest``), the epochs of ShareFetch and ShareAcknowledge
(``SharePartitionManagerTest``'s ``testNewContext*``, ``testSubsequentShareSession``, ``testToForgetPartitions``,
``testZeroSizeShareSession``) and what a closed connection releases (4.4's ``testRemoveConnection``)."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.replica.share_sessions import (FINAL_EPOCH, INITIAL_EPOCH, Departure, ShareSessionCache,
                                              next_epoch)

T1, T2 = "topic-id-1", "topic-id-2"


def parts(n: int, topic: str = T1) -> list:
    return [(topic, i) for i in range(n)]


def test_cache_limit_and_sizes():
    """``testShareSessionCache``: three sessions fit a cache of three, a fourth is refused whatever its size (4.4
    evicts nothing), and a removed session frees its slot."""
    cache = ShareSessionCache(max_sessions=3)
    keys = [cache.create("grp", f"m{i}", parts(n), f"c{i}") for i, n in enumerate((10, 20, 30))]
    assert all(keys) and cache.size() == 3 and cache.total_partitions() == 60
    assert cache.create("grp", "m3", parts(40), "c3") is None
    assert cache.create("grp", "m4", parts(5), "c4") is None
    assert cache.size() == 3
    assert cache.remove(keys[1]) is not None and cache.size() == 2 and cache.total_partitions() == 40
    assert cache.create("grp", "m5", parts(11), "c5") == ("grp", "m5")


def test_resize_cached_sessions():
    """``testResizeCachedSessions``: the partition total follows the sessions' partitions."""
    cache = ShareSessionCache(max_sessions=2)
    k1 = cache.create("grp", "m1", parts(2), "c1")
    k2 = cache.create("grp", "m2", parts(4), "c2")
    assert cache.total_partitions() == 6 and cache.create("grp", "m3", parts(5), "c3") is None
    cache.remove(k1)
    assert cache.size() == 1 and cache.total_partitions() == 4
    cache.get(k2).update([], [(T1, 0)])
    assert cache.total_partitions() == 3


def test_new_session_starts_at_epoch_one_and_moves_on():
    """``testNewContext`` / ``testSubsequentShareSession``: epoch 0 opens a session whose next request carries 1;
    each incremental request must carry the current epoch and moves it on."""
    cache = ShareSessionCache()
    ctx = cache.new_fetch_context("grp", "m", INITIAL_EPOCH, parts(2), [], False, "c")
    assert ctx.error == ec.NONE and not ctx.final and ctx.partitions == tuple(parts(2))
    assert cache.get(("grp", "m")).epoch == 1
    ctx = cache.new_fetch_context("grp", "m", 1, [(T2, 0)], [], False, "c")
    assert ctx.error == ec.NONE and ctx.partitions == (*parts(2), (T2, 0))
    assert cache.new_fetch_context("grp", "m", 1, [], [], False, "c").error == ec.INVALID_SHARE_SESSION_EPOCH
    assert cache.new_fetch_context("grp", "m", 5, [], [], False, "c").error == ec.INVALID_SHARE_SESSION_EPOCH
    assert cache.new_fetch_context("grp", "m", 2, [], [], False, "c").error == ec.NONE
    assert cache.get(("grp", "m")).epoch == 3


def test_incremental_without_session_is_not_found():
    cache = ShareSessionCache()
    assert cache.new_fetch_context("grp", "m", 1, parts(1), [], False, "c").error == ec.SHARE_SESSION_NOT_FOUND
    cache.new_fetch_context("grp", "m", INITIAL_EPOCH, parts(1), [], False, "c")
    # another member's or another group's key has no session
    assert cache.new_fetch_context("grp", "x", 1, [], [], False, "c").error == ec.SHARE_SESSION_NOT_FOUND
    assert cache.new_fetch_context("other", "m", 1, [], [], False, "c").error == ec.SHARE_SESSION_NOT_FOUND


def test_final_context():
    """``testNewContextReturnsFinalContext*``: -1 needs the session (SHARE_SESSION_NOT_FOUND without one) and
    fetches nothing, partitions named or not; the session goes when the runtime releases it."""
    cache = ShareSessionCache()
    assert cache.new_fetch_context("grp", "m", FINAL_EPOCH, [], [], False, "c").error == ec.SHARE_SESSION_NOT_FOUND
    cache.new_fetch_context("grp", "m", INITIAL_EPOCH, parts(3), [], False, "c")
    ctx = cache.new_fetch_context("grp", "m", FINAL_EPOCH, parts(1), [], True, "c")
    assert ctx.error == ec.NONE and ctx.final and ctx.partitions == ()
    assert cache.release("grp", "m") == tuple(parts(3))
    assert cache.get(("grp", "m")) is None and cache.release("grp", "m") == ()


def test_initial_request_with_acknowledgements_is_invalid():
    cache = ShareSessionCache()
    assert cache.new_fetch_context("grp", "m", INITIAL_EPOCH, parts(1), [], True, "c").error == ec.INVALID_REQUEST
    assert cache.size() == 0


def test_initial_request_replaces_the_old_session():
    cache = ShareSessionCache()
    cache.new_fetch_context("grp", "m", INITIAL_EPOCH, parts(3), [], False, "c1")
    cache.new_fetch_context("grp", "m", 1, [], [], False, "c1")
    ctx = cache.new_fetch_context("grp", "m", INITIAL_EPOCH, [(T2, 0)], [], False, "c2")
    assert ctx.partitions == ((T2, 0),) and cache.size() == 1 and cache.get(("grp", "m")).epoch == 1
    # the first connection no longer speaks for the session: closing it releases nothing
    assert cache.connection_closed("c1") == Departure("grp", None, False)
    assert cache.get(("grp", "m")) is not None


def test_limit_reached():
    cache = ShareSessionCache(max_sessions=1)
    cache.new_fetch_context("grp", "a", INITIAL_EPOCH, parts(1), [], False, "c1")
    assert cache.new_fetch_context("grp", "b", INITIAL_EPOCH, parts(1), [], False,
                                   "c2").error == ec.SHARE_SESSION_LIMIT_REACHED
    # the member holding the one slot may open its session again
    assert cache.new_fetch_context("grp", "a", INITIAL_EPOCH, parts(2), [], False, "c1").error == ec.NONE


def test_to_forget_partitions():
    """``testToForgetPartitions``: forgotten partitions leave the session, a named one already there keeps its
    place, and a session may be left with none (``testZeroSizeShareSession``)."""
    cache = ShareSessionCache()
    cache.new_fetch_context("grp", "m", INITIAL_EPOCH, parts(2), [], False, "c")
    session = cache.get(("grp", "m"))
    assert session.update([(T1, 1), (T2, 0)], [(T1, 0), (T2, 9)]) == ([(T2, 0)], [(T1, 1)], [(T1, 0)])
    ctx = cache.new_fetch_context("grp", "m", 1, [], [(T1, 1), (T2, 0)], False, "c")
    assert ctx.error == ec.NONE and ctx.partitions == () and cache.get(("grp", "m")) is not None


def test_acknowledge_session_update():
    """``acknowledgeSessionUpdate``: ShareAcknowledge never opens a session (0 is INVALID_SHARE_SESSION_EPOCH),
    needs one, and moves its epoch on as a fetch does; -1 leaves the epoch for the release."""
    cache = ShareSessionCache()
    assert cache.acknowledge_update("grp", "m", 1) == ec.SHARE_SESSION_NOT_FOUND
    assert cache.acknowledge_update("grp", "m", FINAL_EPOCH) == ec.SHARE_SESSION_NOT_FOUND
    cache.new_fetch_context("grp", "m", INITIAL_EPOCH, parts(1), [], False, "c")
    assert cache.acknowledge_update("grp", "m", INITIAL_EPOCH) == ec.INVALID_SHARE_SESSION_EPOCH
    assert cache.acknowledge_update("grp", "m", 2) == ec.INVALID_SHARE_SESSION_EPOCH
    assert cache.acknowledge_update("grp", "m", 1) == ec.NONE
    assert cache.new_fetch_context("grp", "m", 2, [], [], False, "c").error == ec.NONE
    assert cache.acknowledge_update("grp", "m", FINAL_EPOCH) == ec.NONE
    assert cache.get(("grp", "m")).epoch == 3


def test_connection_closed_releases_the_member_and_empties_the_group():
    """4.4's ``testRemoveConnection``: the connection that opened a session closing removes it and its member
    leaves; the group is empty on this broker once its last session went."""
    cache = ShareSessionCache()
    cache.new_fetch_context("grp", "a", INITIAL_EPOCH, parts(1), [], False, "c1")
    cache.new_fetch_context("grp", "b", INITIAL_EPOCH, parts(1), [], False, "c2")
    assert cache.connection_closed("c1") == Departure("grp", "a", False)
    assert cache.connection_closed("c1") is None
    assert cache.connection_closed("c2") == Departure("grp", "b", True)
    assert cache.size() == 0 and cache.members_per_group == {}


def test_released_session_then_connection_closed():
    """A session closed with -1 before its connection: the member already left with the release, so the closing
    connection releases nothing but still tells that the group is empty."""
    cache = ShareSessionCache()
    cache.new_fetch_context("grp", "a", INITIAL_EPOCH, parts(1), [], False, "c1")
    cache.release("grp", "a")
    assert cache.connection_closed("c1") == Departure("grp", None, True)


def test_next_epoch_wraps():
    assert next_epoch(0) == 1 and next_epoch(41) == 42 and next_epoch(2**31 - 1) == 1
    assert next_epoch(FINAL_EPOCH) == FINAL_EPOCH
