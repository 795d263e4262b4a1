"""Fetch sessions (KIP-227), mirrored from Kafka's ``FetchSessionTest`` (core/src/test/scala/unit/kafka/server):
each test names the one it follows; ``test_*_kraftwire`` ones check rules Kafka's tests leave implicit."""

from __future__ import annotations

import random
import uuid

import pytest

from kraftwire import error_codes as ec
from kraftwire.ids import ZERO_UUID
from kraftwire.protocol import messages as w
from kraftwire.replica import fetch_sessions as fs

FOO, BAR = uuid.UUID(int=11), uuid.UUID(int=22)
NAMES = {FOO: "foo", BAR: "bar"}
LATEST = 17


def ask(partition: int, offset: int = 0, max_bytes: int = 100, topic_id=FOO, topic: str | None = "foo"):
    return fs.Wanted(topic_id, topic, w.FetchRequest.FetchPartition(
        partition=partition, current_leader_epoch=-1, fetch_offset=offset, last_fetched_epoch=-1,
        log_start_offset=0, partition_max_bytes=max_bytes, replica_directory_id=ZERO_UUID))


def answer(partition: int, hw: int, log_start: int = 0, records: bytes = b"", error: int = 0):
    return w.FetchResponse.PartitionData(partition_index=partition, error_code=error, high_watermark=hw,
                                         last_stable_offset=hw, log_start_offset=log_start,
                                         aborted_transactions=None, preferred_read_replica=-1, records=records)


def shard(entries: int, eviction_ms: int, seed: int = 1) -> fs.CacheShard:
    return fs.CacheShard(entries, eviction_ms, fs.MAX_INT, 0, random.Random(seed))


def cache_of(entries: int, eviction_ms: int) -> fs.FetchSessionCache:
    """A one-shard cache, as Kafka's tests build ``FetchManager(time, cacheShard)``."""
    return fs.FetchSessionCache(entries, random.Random(7), eviction_ms, shards=1)


def dummy(size: int) -> dict:
    return {("t", i): fs.CachedPartition(uuid.UUID(int=100 + i), "t", None) for i in range(size)}


def context(cache, wanted, session_id=0, epoch=0, follower=False, forgotten=(), version=LATEST, now=0):
    return fs.new_context(cache, version, session_id, epoch, follower, list(wanted), list(forgotten), NAMES, now)


def full_session(cache, wanted, answers, follower=False, now=0, version=LATEST) -> int:
    ctx = context(cache, wanted, follower=follower, now=now, version=version)
    assert isinstance(ctx, fs.FullContext)
    error, sid, listed = ctx.respond(list(zip(wanted, answers)), now)
    assert error == 0 and len(listed) == len(wanted)
    return sid


def test_new_session_id():  # testNewSessionId
    s = shard(3, 100)
    assert all(s.new_session_id() > 0 for _ in range(10_000))


def test_next_epoch_wraps_kraftwire():
    assert fs.next_epoch(0) == 1 and fs.next_epoch(41) == 42
    assert fs.next_epoch(2**31 - 1) == 1
    assert fs.next_epoch(-1) == -1


def test_session_cache():  # testSessionCache
    s = shard(3, 100)
    id1 = s.maybe_create(0, False, dummy(10), True)
    id2 = s.maybe_create(10, False, dummy(20), True)
    id3 = s.maybe_create(20, False, dummy(30), True)
    assert s.maybe_create(30, False, dummy(40), True) == fs.INVALID_SESSION_ID
    assert s.maybe_create(40, False, dummy(5), True) == fs.INVALID_SESSION_ID
    assert set(s.sessions) == {id1, id2, id3}
    s.touch(s.sessions[id1], 200)
    id4 = s.maybe_create(210, False, dummy(11), True)
    assert set(s.sessions) == {id1, id3, id4}
    s.touch(s.sessions[id1], 400)
    s.touch(s.sessions[id3], 390)
    s.touch(s.sessions[id4], 400)
    id5 = s.maybe_create(410, False, dummy(50), True)
    assert set(s.sessions) == {id3, id4, id5}
    assert s.maybe_create(410, False, dummy(5), True) == fs.INVALID_SESSION_ID
    id6 = s.maybe_create(410, True, dummy(5), True)
    assert set(s.sessions) == {id3, id5, id6}


def test_resize_cached_sessions():  # testResizeCachedSessions
    s = shard(2, 100)
    assert (s.total_partitions, len(s.sessions), s.evictions) == (0, 0, 0)
    id1 = s.maybe_create(0, False, dummy(2), True)
    session1 = s.sessions[id1]
    assert (s.total_partitions, len(s.sessions), s.evictions) == (2, 1, 0)
    id2 = s.maybe_create(0, False, dummy(4), True)
    session2 = s.sessions[id2]
    assert (s.total_partitions, len(s.sessions), s.evictions) == (6, 2, 0)
    s.touch(session1, 200)
    s.touch(session2, 200)
    id3 = s.maybe_create(200, False, dummy(5), True)
    assert set(s.sessions) == {id2, id3}
    assert (s.total_partitions, len(s.sessions), s.evictions) == (9, 2, 1)
    s.remove(id3)
    assert set(s.sessions) == {id2} and (s.total_partitions, s.evictions) == (4, 1)
    session2.partitions.pop(next(iter(session2.partitions)))
    assert (len(session2.partitions), session2.cached_size) == (3, 4)
    s.touch(session2, session2.last_used_ms)
    assert s.total_partitions == 3


def test_incremental_fetch_session_and_update_and_generate_response_data():
    """testIncrementalFetchSession / testUpdateAndGenerateResponseData: a full request creates a session of every
    partition answered; an incremental one names only what changed, reads the whole session and is answered with
    the changed partitions only; a full request naming the session closes it."""
    cache = cache_of(10, 1000)
    wanted = [ask(0, 0), ask(1, 10)]
    sid = full_session(cache, wanted, [answer(0, 100, 100), answer(1, 10, 10)])
    assert sid != 0 and cache.get(sid).epoch == 1
    # incremental: foo-0's offset moves, bar-0 joins; both foo partitions are still read
    ctx = context(cache, [ask(0, 5), ask(0, 15, topic_id=BAR, topic="bar")], sid, 1)
    assert isinstance(ctx, fs.IncrementalContext)
    read = ctx.partitions()
    assert [(x.topic, x.partition, x.request.fetch_offset) for x in read] == [
        ("foo", 0, 5), ("foo", 1, 10), ("bar", 0, 15)]
    error, sid2, listed = ctx.respond([(read[0], answer(0, 100, 100)), (read[1], answer(1, 10, 10)),
                                       (read[2], answer(0, 0, 0))], 10)
    assert (error, sid2) == (0, sid)
    assert [x.topic for x, _ in listed] == ["bar"]  # foo-0 and foo-1 unchanged
    assert cache.get(sid).epoch == 2
    # a wrong epoch, then an unknown session
    assert context(cache, [], sid, 1) == fs.SessionErrorContext(ec.INVALID_FETCH_SESSION_EPOCH)
    assert context(cache, [], sid + 1, 2) == fs.SessionErrorContext(ec.FETCH_SESSION_ID_NOT_FOUND)
    # forgetting foo-1; foo-0's high watermark moves and it is listed
    ctx = context(cache, [], sid, 2, forgotten=[(FOO, "foo", 1)])
    read = ctx.partitions()
    assert [(x.topic, x.partition) for x in read] == [("foo", 0), ("bar", 0)]
    _, _, listed = ctx.respond([(read[0], answer(0, 105, 100)), (read[1], answer(0, 0, 0))], 20)
    assert [(x.topic, a.high_watermark) for x, a in listed] == [("foo", 105)]
    # a full request naming the session closes it and starts another
    ctx = context(cache, wanted, sid, 0)
    assert isinstance(ctx, fs.FullContext) and cache.get(sid) is None


def test_fetch_session_with_unknown_id():  # testFetchSessionWithUnknownId / ...OldRequestVersion
    cache = cache_of(10, 1000)
    assert context(cache, [ask(0)], 123, 1) == fs.SessionErrorContext(ec.FETCH_SESSION_ID_NOT_FOUND)
    assert context(cache, [ask(0, topic_id=ZERO_UUID)], 123, 1, version=12) == fs.SessionErrorContext(
        ec.FETCH_SESSION_ID_NOT_FOUND)


@pytest.mark.parametrize("created, then", [(LATEST, 12), (12, LATEST)])
def test_incremental_session_topic_id_mismatch(created, then):
    """testIncrementalFetchSessionWithIdsWhenSessionDoesNotUseIds / ...WithoutIdsWhenSessionUsesIds"""
    cache = cache_of(10, 1000)
    tid = FOO if created >= fs.TOPIC_IDS_SINCE else ZERO_UUID
    sid = full_session(cache, [ask(0, topic_id=tid)], [answer(0, 10)], version=created)
    assert context(cache, [], sid, 1, version=then) == fs.SessionErrorContext(ec.FETCH_SESSION_TOPIC_ID_ERROR)


def test_sessions_by_topic_name_before_v13_kraftwire():
    """A v12 session keys its partitions by name (the topic ids are all zero)."""
    cache = cache_of(10, 1000)
    sid = full_session(cache, [ask(0, topic_id=ZERO_UUID), ask(0, topic_id=ZERO_UUID, topic="bar")],
                       [answer(0, 10), answer(0, 20)], version=12)
    ctx = context(cache, [ask(0, 4, topic_id=ZERO_UUID)], sid, 1, version=12,
                  forgotten=[(ZERO_UUID, "bar", 0)])
    assert [(x.topic, x.request.fetch_offset) for x in ctx.partitions()] == [("foo", 4)]


def test_resolve_unknown_partitions():  # testResolveUnknownPartitions / testMaybeResolveUnknownName
    """A partition whose topic id is unknown is kept in the session by id and named once the id is known."""
    cache = cache_of(10, 1000)
    unknown = ask(0, topic_id=BAR, topic=None)
    ctx = context(cache, [unknown], 0, 0)
    _, sid, _ = ctx.respond([(unknown, answer(0, -1, -1, error=ec.UNKNOWN_TOPIC_ID))], 0)
    ctx = fs.new_context(cache, LATEST, sid, 1, False, [], [], {BAR: "bar"}, 5)
    assert [(x.topic, x.topic_id) for x in ctx.partitions()] == [("bar", BAR)]


def test_fetch_session_expiration():  # testFetchSessionExpiration
    cache = cache_of(2, 1000)
    wanted = [ask(0), ask(1, 10)]
    answers = [answer(0, 100, 100), answer(1, 10, 10)]
    s1 = full_session(cache, wanted, answers, now=0)
    s2 = full_session(cache, wanted, answers, now=500)
    assert isinstance(context(cache, [], s1, 1, now=1000), fs.IncrementalContext)
    s3 = full_session(cache, wanted, answers, now=1501)
    assert cache.get(s1) is not None and cache.get(s3) is not None
    assert cache.get(s2) is None, "session 2 was used less recently than session 1"


def test_privileged_session_handling():  # testPrivilegedSessionHandling
    cache = cache_of(2, 1000)
    wanted = [ask(0), ask(1, 10)]
    answers = [answer(0, 100, 100), answer(1, 10, 10)]
    s1 = full_session(cache, wanted, answers, follower=True, now=0)
    s2 = full_session(cache, wanted, answers, follower=False, now=500)
    s3 = full_session(cache, wanted, answers, follower=True, now=1000)
    assert cache.get(s1) is not None and cache.get(s3) is not None
    assert cache.get(s2) is None, "a follower's session evicts a consumer's of the same size"
    s4 = full_session(cache, wanted, answers, follower=True, now=1501)
    assert cache.get(s1) is None, "a privileged session unused past the eviction time goes"
    assert cache.get(s3) is not None and cache.get(s4) is not None


def test_consumer_never_evicts_a_young_session_kraftwire():
    """Within the eviction time a consumer's session evicts nothing (only sessions older than it are evictable by
    all), and a follower's session of equal size evicts no other follower's."""
    cache = cache_of(1, 1000)
    s1 = full_session(cache, [ask(0)], [answer(0, 1)], now=0)
    assert full_session(cache, [ask(0), ask(1)], [answer(0, 1), answer(1, 1)], now=10) == 0
    assert cache.get(s1) is not None
    cache = cache_of(1, 1000)
    f1 = full_session(cache, [ask(0)], [answer(0, 1)], follower=True, now=0)
    assert full_session(cache, [ask(1)], [answer(1, 1)], follower=True, now=10) == 0
    assert cache.get(f1) is not None


def test_zero_size_fetch_session():  # testZeroSizeFetchSession
    cache = cache_of(10, 1000)
    sid = full_session(cache, [ask(0), ask(1, 10)], [answer(0, 100, 100), answer(1, 10, 10)])
    ctx = context(cache, [], sid, 1, forgotten=[(FOO, "foo", 0), (FOO, "foo", 1)])
    assert isinstance(ctx, fs.SessionlessContext)
    assert ctx.respond([], 0) == (0, fs.INVALID_SESSION_ID, [])
    assert cache.size == 0


def test_diverging_epoch():  # testDivergingEpoch
    cache = cache_of(10, 1000)
    sid = full_session(cache, [ask(0), ask(1)], [answer(0, 100), answer(1, 100)], follower=True)
    ctx = context(cache, [], sid, 1, follower=True)
    read = ctx.partitions()
    diverged = answer(1, 100)
    diverged.diverging_epoch = w.FetchResponse.EpochEndOffset(epoch=3, end_offset=90)
    _, _, listed = ctx.respond([(read[0], answer(0, 100)), (read[1], diverged)], 1)
    assert [a.partition_index for _, a in listed] == [1]


def test_errors_are_listed_and_forget_the_high_watermark_kraftwire():
    """An error is always listed and clears the cached high watermark, so the same offsets are listed again once
    the error is gone; a preferred read replica is always listed."""
    cache = cache_of(10, 1000)
    sid = full_session(cache, [ask(0)], [answer(0, 50)])
    ctx = context(cache, [], sid, 1)
    (want,) = ctx.partitions()
    assert len(ctx.respond([(want, answer(0, -1, -1, error=ec.NOT_LEADER_OR_FOLLOWER))], 1)[2]) == 1
    ctx = context(cache, [], sid, 2)
    assert len(ctx.respond([(want, answer(0, 50))], 2)[2]) == 1
    ctx = context(cache, [], sid, 3)
    assert ctx.respond([(want, answer(0, 50))], 3)[2] == []
    ctx = context(cache, [], sid, 4)
    preferred = answer(0, 50)
    preferred.preferred_read_replica = 2
    assert len(ctx.respond([(want, preferred)], 4)[2]) == 1


def test_deprioritizes_partitions_with_records_only():  # testDeprioritizesPartitionsWithRecordsOnly
    cache = cache_of(10, 1000)
    wanted = [ask(1, 100, 1000), ask(2, 100, 1000, BAR, "bar"), ask(3, 100, 1000, uuid.UUID(int=33), "zar")]
    sid = full_session(cache, wanted, [answer(1, 50), answer(2, 50), answer(3, 50)])
    ctx = context(cache, wanted, sid, 1)
    assert [x.partition for x in ctx.partitions()] == [1, 2, 3]
    assert ctx.respond([], 1) == (0, sid, [])
    ctx.session.epoch = 2  # the same context answered again, as Kafka's test does
    _, _, listed = ctx.respond([(wanted[0], answer(1, 60)), (wanted[1], answer(2, 60, records=b"x")),
                                (wanted[2], answer(3, 50))], 2)
    assert [x.partition for x, _ in listed] == [1, 2]
    assert [x.partition for x in ctx.partitions()] == [1, 3, 2]


def test_duplicate_request_answered_invalid_epoch_kraftwire():
    """Two incremental contexts from one epoch (a duplicate request): the later answer finds the session moved on
    (``IncrementalFetchContext.updateAndGenerateResponseData``'s epoch check) and lists nothing."""
    cache = cache_of(10, 1000)
    sid = full_session(cache, [ask(0)], [answer(0, 5)])
    first = context(cache, [], sid, 1)
    second = context(cache, [], sid, 2)
    assert first.respond([], 1) == (ec.INVALID_FETCH_SESSION_EPOCH, sid, [])
    assert second.respond([], 1)[0] == 0


def test_sharded_cache_retrieves_from_correct_segment():
    """testFetchSessionCache_getShardedCache_retrievesCacheFromCorrectSegment; where Kafka's lookup throws,
    ``new_context`` answers UNKNOWN_SERVER_ERROR."""
    cache = fs.FetchSessionCache(80, random.Random(1))
    r = cache.id_range
    assert cache.shard_of(r - 1) is cache.shards[0]
    assert cache.shard_of(r) is cache.shards[1]
    assert cache.shard_of(r * 2) is cache.shards[2]
    assert cache.shard_of(r * 8) is None and cache.shard_of(-r) is None
    assert cache.shard_of(-1) is cache.shards[0]
    for sid, epoch in ((r * 8, 1), (r * 8, 0), (r * 8, -1)):
        assert context(cache, [], sid, epoch) == fs.SessionErrorContext(ec.UNKNOWN_SERVER_ERROR)


def test_sharded_cache_round_robins_into_shards():  # testFetchSessionCache_RoundRobinsIntoShards
    cache = fs.FetchSessionCache(80, random.Random(1))
    assert [cache.next_shard() for _ in range(16)] == cache.shards * 2


def test_session_ids_lie_in_their_shard_kraftwire():
    """Each shard hands out ids in its own range (so a session id names its shard) and holds slots / 8 sessions."""
    cache = fs.FetchSessionCache(16, random.Random(3))
    ids = [full_session(cache, [ask(0)], [answer(0, 1)]) for _ in range(16)]
    assert all(cache.shard_of(sid) is cache.shards[n % 8] for n, sid in enumerate(ids))
    assert full_session(cache, [ask(0)], [answer(0, 1)]) == 0  # every shard full of young equal-size sessions
    assert cache.size == 16 and cache.total_partitions == 16


def test_final_epoch_and_old_versions_are_sessionless_kraftwire():
    cache = cache_of(10, 1000)
    sid = full_session(cache, [ask(0)], [answer(0, 5)])
    ctx = context(cache, [ask(0)], sid, -1)
    assert isinstance(ctx, fs.SessionlessContext) and cache.get(sid) is None
    assert isinstance(context(cache, [ask(0)], 0, 0, version=6), fs.SessionlessContext)


def test_cached_leader_epoch_and_last_fetched_epoch():  # testCachedLeaderEpoch / testLastFetchedEpoch
    """An incremental request reads each partition with the parameters last sent for it: the leader epochs of the
    full request for the partitions it does not name, the new ones for those it does."""
    cache = cache_of(10, 1000)

    def with_epochs(partition, leader_epoch, last_fetched):
        want = ask(partition)
        want.request.current_leader_epoch, want.request.last_fetched_epoch = leader_epoch, last_fetched
        return want
    wanted = [with_epochs(0, -1, -1), with_epochs(1, 1, 0), with_epochs(2, 2, 1)]
    sid = full_session(cache, wanted, [answer(0, 1), answer(1, 1), answer(2, 1)])
    ctx = context(cache, [with_epochs(1, 3, 2)], sid, 1)
    assert [(x.request.current_leader_epoch, x.request.last_fetched_epoch) for x in ctx.partitions()] == [
        (-1, -1), (3, 2), (2, 1)]


def test_a_refused_context_reads_nothing_kraftwire():
    """A request refused for its session (here: an incremental epoch naming no session) names no partition to read
    — and so none whose ACLs the edge checks; the fuzz run on an ACL node found the edge asking."""
    cache = fs.FetchSessionCache(10, random.Random(1))
    context = fs.new_context(cache, 13, 77, 5, False, [], [], {}, 0)
    assert isinstance(context, fs.SessionErrorContext) and context.error == ec.FETCH_SESSION_ID_NOT_FOUND
    assert context.partitions() == ()
