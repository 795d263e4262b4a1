"""Incremental fetch sessions (KIP-227) as a Kafka 4.4 broker keeps them (``FetchManager``, ``FetchSessionCache``,
``FetchSessionCacheShard``, ``FetchContext``): which partitions a Fetch reads and which of them its answer lists.

A full Fetch lists every partition the client wants; without sessions it would do so every time, and a consumer of
1,000 partitions would send and receive 1,000 entries a round. With a session the broker remembers them: the
client's next requests (incremental) name only what changed (new partitions, new fetch offsets, ``forgotten``
ones), and the broker's answers list only partitions that changed (``CachedPartition.must_respond``).

* **Request metadata.** ``(session id, epoch)``: epoch 0 (INITIAL) is a full request asking for a new session, -1
  (FINAL) a full request wanting none; a full request naming a session closes it. Any other epoch is incremental
  and must be the session's current epoch: FETCH_SESSION_ID_NOT_FOUND when the session is gone,
  INVALID_FETCH_SESSION_EPOCH when the epoch is not the expected one, FETCH_SESSION_TOPIC_ID_ERROR when the request
  uses topic ids (v13+) and the session does not, or the other way round. Epochs count up from 1 and wrap from
  2**31-1 to 1 (``next_epoch``). Before v7 a request carries no metadata and is FINAL.
* **Creating** happens when the full answer is built (``FullContext.respond``): a session of every partition it
  lists, privileged when a replica (follower) asked, in the next shard round-robin. The cache is split in
  ``SHARDS`` (8) shards of ``max.incremental.fetch.session.cache.slots / 8`` slots each; shard ``n`` hands out ids
  in ``[max(1, n * R), (n + 1) * R)`` with ``R = (2**31-1) // 8``, at random from the injected RNG, never 0
  (INVALID_SESSION_ID: "no session; send full requests"). A full shard answers session id 0 unless it may evict.
* **Eviction** (``CacheShard._try_evict``), within the shard only: first the least recently used session if unused
  for more than ``MIN_EVICTION_MS`` (Kafka's fixed 120 s, ``KafkaBroker.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS``);
  otherwise the smallest evictable session by (privileged, partitions, id) if the new session is not smaller by the
  same order (a consumer's session of equal size never evicts). Which sessions are evictable is decided when a
  session is touched, as Kafka's trees are: by privileged requests, consumers' sessions and replicas' sessions older
  than ``MIN_EVICTION_MS``; by consumers, sessions older than that only.
* **A session id outside every shard** (``session id // R`` not a shard: ids from 2**31-8 up, or below -R) makes
  Kafka's ``getCacheShard`` throw: the request is answered UNKNOWN_SERVER_ERROR as a whole.
* **Incremental requests** add or update the partitions they name (new fetch offset, max bytes, leader epochs, the
  fetcher's log start) and drop the forgotten ones; a session left empty is closed and the request answered
  without a session (session id 0). Otherwise the session is touched, its epoch moves on, and the request reads
  every partition of the session in its order; partitions answered with records move to the end of that order, so
  the next answer starts with the others (fairness within MaxBytes).
* **Which partitions an incremental answer lists**: those with records, a high watermark or log start offset other
  than the one last sent, a preferred read replica, an error (which also forgets the high watermark sent, so the
  partition is listed again once the error is gone) or a diverging epoch. The last stable offset is not compared
  (neither is it by Kafka).

Everything here is pure: time comes in as ``now_ms``, randomness as an RNG object with ``randrange``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from kraftwire.error_codes import (FETCH_SESSION_ID_NOT_FOUND, FETCH_SESSION_TOPIC_ID_ERROR,
                                   INVALID_FETCH_SESSION_EPOCH, UNKNOWN_SERVER_ERROR)
from kraftwire.ids import ZERO_UUID

__all__ = ["INVALID_SESSION_ID", "INITIAL_EPOCH", "FINAL_EPOCH", "SHARDS", "MIN_EVICTION_MS", "DEFAULT_SLOTS",
           "TOPIC_IDS_SINCE", "SESSIONS_SINCE", "next_epoch", "Wanted", "CachedPartition", "FetchSession",
           "CacheShard", "FetchSessionCache", "SessionErrorContext", "SessionlessContext", "FullContext",
           "IncrementalContext", "new_context"]

INVALID_SESSION_ID = 0
INITIAL_EPOCH, FINAL_EPOCH = 0, -1
MAX_INT = 2**31 - 1
#: Kafka's ``KafkaBroker.NumFetchSessionCacheShards``
SHARDS = 8
#: Kafka's ``KafkaBroker.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS`` (a constant, not a config)
MIN_EVICTION_MS = 120_000
#: ``max.incremental.fetch.session.cache.slots``' default
DEFAULT_SLOTS = 1000
#: Fetch versions: session metadata from v7, topic ids from v13
SESSIONS_SINCE, TOPIC_IDS_SINCE = 7, 13


class Rng(Protocol):
    def randrange(self, start: int, stop: int) -> int: ...


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch`` (``FetchMetadata.nextEpoch``): FINAL stays FINAL, 2**31-1 wraps to 1."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == MAX_INT else epoch + 1


@dataclass(frozen=True, slots=True)
class Wanted:
    """A partition a request names: its topic id (ZERO_UUID before v13), its topic name (None when the id is not
    known here) and the request's partition entry (``FetchRequest.FetchPartition``: partition, fetch offset, ...)."""
    topic_id: Any
    topic: str | None
    request: Any

    @property
    def partition(self) -> int:
        return self.request.partition


def _key(topic_id, topic, partition: int) -> tuple:
    """A partition's identity in a session: by topic id when it has one (a v13+ session, where the name may be
    unknown), by name otherwise (``CachedPartition.equals``)."""
    return (topic_id if topic_id != ZERO_UUID else topic, partition)


@dataclass(slots=True)
class CachedPartition:
    """What a session remembers of one partition: the request's last parameters and the high watermark and log
    start offset the client was last told (-1: not yet, or forgotten after an error)."""
    topic_id: Any
    topic: str | None
    request: Any
    high_watermark: int = -1
    log_start_offset: int = -1

    @property
    def wanted(self) -> Wanted:
        return Wanted(self.topic_id, self.topic, self.request)

    def must_respond(self, answer, update: bool) -> bool:
        """Whether an incremental answer lists this partition (``CachedPartition.maybeUpdateResponseData``);
        ``update`` records what the client is now told."""
        respond = len(answer.records or b"") > 0
        if self.high_watermark != answer.high_watermark:
            respond = True
            if update:
                self.high_watermark = answer.high_watermark
        if self.log_start_offset != answer.log_start_offset:
            respond = True
            if update:
                self.log_start_offset = answer.log_start_offset
        if getattr(answer, "preferred_read_replica", -1) >= 0:
            respond = True
        if answer.error_code:
            respond = True
            if update:
                self.high_watermark = -1
        diverging = getattr(answer, "diverging_epoch", None)
        if diverging is not None and diverging.epoch >= 0 and diverging.end_offset >= 0:
            respond = True
        return respond


@dataclass(eq=False, slots=True)
class FetchSession:
    """One incremental fetch session. ``partitions`` keeps the session's order (insertion, answered ones moved to
    the end); ``cached_size`` is the size the cache last saw (-1: not in the cache); the two ``evictable_by_*``
    flags are the cache's trees the session is in since it was last touched."""
    id: int
    privileged: bool
    uses_topic_ids: bool
    creation_ms: int
    last_used_ms: int
    epoch: int
    partitions: dict[tuple, CachedPartition] = field(default_factory=dict)
    cached_size: int = -1
    evictable_by_all: bool = False
    evictable_by_privileged: bool = False

    def evictable_key(self) -> tuple:
        return (self.privileged, self.cached_size, self.id)

    def update(self, wanted: list[Wanted], forgotten: list[tuple]) -> None:
        """An incremental request's changes (``FetchSession.update``): partitions named are added or take the new
        request parameters (keeping the offsets last sent); ``forgotten`` (topic id, topic, partition) ones go."""
        for want in wanted:
            key = _key(want.topic_id, want.topic, want.partition)
            cached = self.partitions.get(key)
            if cached is None:
                self.partitions[key] = CachedPartition(want.topic_id, want.topic, want.request)
            else:
                cached.request = want.request
        for topic_id, topic, partition in forgotten:
            self.partitions.pop(_key(topic_id, topic, partition), None)


class CacheShard:
    """One of the cache's shards (``FetchSessionCacheShard``): at most ``max_entries`` sessions with ids in
    ``[max(1, shard * id_range), (shard + 1) * id_range)``."""

    def __init__(self, max_entries: int, eviction_ms: int, id_range: int, shard: int, rng: Rng) -> None:
        self.max_entries, self.eviction_ms, self.id_range, self.shard, self.rng = (
            max_entries, eviction_ms, id_range, shard, rng)
        self.sessions: dict[int, FetchSession] = {}
        self.total_partitions = 0
        self.evictions = 0

    def new_session_id(self) -> int:
        low, high = max(1, self.shard * self.id_range), (self.shard + 1) * self.id_range
        while True:  # bounded in practice: a shard holds far fewer sessions than its id range
            sid = self.rng.randrange(low, high)
            if sid not in self.sessions and sid != INVALID_SESSION_ID:
                return sid

    def maybe_create(self, now_ms: int, privileged: bool, partitions: dict[tuple, CachedPartition],
                     uses_topic_ids: bool) -> int:
        """A new session of ``partitions`` when there is room or one may be evicted for it; its id, else 0."""
        if len(self.sessions) >= self.max_entries and not self._try_evict(privileged, len(partitions), now_ms):
            return INVALID_SESSION_ID
        session = FetchSession(self.new_session_id(), privileged, uses_topic_ids, now_ms, now_ms,
                               next_epoch(INITIAL_EPOCH), partitions)
        self.sessions[session.id] = session
        self.touch(session, now_ms)
        return session.id

    def _try_evict(self, privileged: bool, size: int, now_ms: int) -> bool:
        if not self.sessions:
            return False
        stalest = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - stalest.last_used_ms > self.eviction_ms:
            self._evict(stalest)
            return True
        candidates = [s for s in self.sessions.values()
                      if (s.evictable_by_privileged if privileged else s.evictable_by_all)]
        if not candidates:
            return False
        victim = min(candidates, key=FetchSession.evictable_key)
        if (privileged, size, 0) < victim.evictable_key():
            return False
        self._evict(victim)
        return True

    def _evict(self, session: FetchSession) -> None:
        self.remove(session.id)
        self.evictions += 1

    def remove(self, session_id: int) -> FetchSession | None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self.total_partitions -= session.cached_size
            session.cached_size = -1
            session.evictable_by_all = session.evictable_by_privileged = False
        return session

    def touch(self, session: FetchSession, now_ms: int) -> None:
        """Record a use: recency, size, and which evictions may take the session from now on."""
        session.last_used_ms = now_ms
        if session.cached_size != -1:
            self.total_partitions -= session.cached_size
        session.cached_size = len(session.partitions)
        old = now_ms - session.creation_ms > self.eviction_ms
        session.evictable_by_privileged = not session.privileged or old
        session.evictable_by_all = old
        self.total_partitions += session.cached_size


class FetchSessionCache:
    """The broker's sessions: ``SHARDS`` shards sharing ``slots`` (``max.incremental.fetch.session.cache.slots``),
    new sessions placed round-robin (``FetchSessionCache``)."""

    def __init__(self, slots: int, rng: Rng, eviction_ms: int = MIN_EVICTION_MS, shards: int = SHARDS) -> None:
        id_range = MAX_INT // shards
        self.shards = [CacheShard(slots // shards, eviction_ms, id_range, n, rng) for n in range(shards)]
        self.id_range = id_range
        self._next = 0

    def shard_of(self, session_id: int) -> CacheShard | None:
        """The shard owning ``session_id``; None where Kafka's lookup would fail."""
        index = shard_index(session_id, len(self.shards))
        return self.shards[index] if index is not None else None

    def next_shard(self) -> CacheShard:
        shard = self.shards[self._next % len(self.shards)]
        self._next = (self._next + 1) % len(self.shards)
        return shard

    def get(self, session_id: int) -> FetchSession | None:
        shard = self.shard_of(session_id)
        return None if shard is None else shard.sessions.get(session_id)

    @property
    def size(self) -> int:
        """Kafka's NumIncrementalFetchSessions."""
        return sum(len(s.sessions) for s in self.shards)

    @property
    def total_partitions(self) -> int:
        """Kafka's NumIncrementalFetchPartitionsCached."""
        return sum(s.total_partitions for s in self.shards)

    @property
    def evictions(self) -> int:
        """How many sessions were evicted (Kafka's IncrementalFetchSessionEvictionsPerSec counts them)."""
        return sum(s.evictions for s in self.shards)


# ------------------------------------------------------------------------------------------------ contexts
# A context says which partitions a request reads (``partitions``) and, given the answers of those partitions
# (``(Wanted, partition answer)`` in the answer's order), which go out and under which session: ``respond`` returns
# (top-level error, session id, the answers listed). ``respond`` may change the session, so it is called once, for
# the answer that is sent. A ``SessionErrorContext`` reads nothing and is answered as a whole.

@dataclass(frozen=True, slots=True)
class SessionErrorContext:
    """The request cannot be served as its session metadata stands: answered ``error`` as a whole
    (``fetch_answer.error_answer``), reading nothing."""
    error: int

    def partitions(self) -> tuple:
        """Nothing is read (so nothing is checked against the principal's ACLs either)."""
        return ()


@dataclass(slots=True)
class SessionlessContext:
    """A full request wanting no session (epoch -1, or before v7), or an incremental one that emptied its session:
    every partition named is read and listed; session id 0."""
    wanted: list[Wanted]

    def partitions(self) -> list[Wanted]:
        return self.wanted

    def respond(self, answers: list, now_ms: int) -> tuple[int, int, list]:
        return 0, INVALID_SESSION_ID, answers


@dataclass(slots=True)
class FullContext:
    """A full request asking for a session (epoch 0): every partition named is read and listed, and the answer
    creates a session of them if the cache has or makes room (its id in the answer; 0 otherwise)."""
    cache: FetchSessionCache
    wanted: list[Wanted]
    uses_topic_ids: bool
    follower: bool

    def partitions(self) -> list[Wanted]:
        return self.wanted

    def respond(self, answers: list, now_ms: int) -> tuple[int, int, list]:
        partitions: dict[tuple, CachedPartition] = {}
        for want, answer in answers:
            partitions[_key(want.topic_id, want.topic, want.partition)] = CachedPartition(
                want.topic_id, want.topic, want.request, answer.high_watermark, answer.log_start_offset)
        sid = self.cache.next_shard().maybe_create(now_ms, self.follower, partitions, self.uses_topic_ids)
        return 0, sid, answers


@dataclass(slots=True)
class IncrementalContext:
    """An incremental request on a live session: every partition of the session is read, the changed ones listed."""
    session: FetchSession
    request_epoch: int
    topic_names: dict

    def partitions(self) -> list[Wanted]:
        """The session's partitions in its order, a partition whose topic name was unknown named if it is now."""
        out = []
        for cached in self.session.partitions.values():
            if cached.topic is None and self.session.uses_topic_ids:
                cached.topic = self.topic_names.get(cached.topic_id)
            out.append(cached.wanted)
        return out

    def respond(self, answers: list, now_ms: int) -> tuple[int, int, list]:
        session = self.session
        if session.epoch != next_epoch(self.request_epoch):  # another request moved the session on meanwhile
            return INVALID_FETCH_SESSION_EPOCH, session.id, []
        listed = []
        for want, answer in answers:
            key = _key(want.topic_id, want.topic, want.partition)
            cached = session.partitions.get(key)
            if cached is None or not cached.must_respond(answer, True):
                continue
            listed.append((want, answer))
            if answer.records:
                session.partitions[key] = session.partitions.pop(key)
        return 0, session.id, listed


def shard_index(session_id: int, shards: int = SHARDS) -> int | None:
    """The shard of ``shards`` whose id range holds ``session_id`` (each ``MAX_INT // shards`` ids; Java's division
    truncates toward 0), or None: Kafka's ``getCacheShard`` then throws and the Fetch is answered
    UNKNOWN_SERVER_ERROR."""
    id_range = MAX_INT // shards
    index = abs(session_id) // id_range * (1 if session_id >= 0 else -1)
    return index if 0 <= index < shards else None


def new_context(cache: FetchSessionCache, version: int, session_id: int, epoch: int, follower: bool,
                wanted: list[Wanted], forgotten: list[tuple], topic_names: dict, now_ms: int):
    """The context of a Fetch (``FetchManager.newContext``): ``wanted`` the partitions it names (in order),
    ``forgotten`` its (topic id, topic, partition) ``forgotten_topics_data``, ``topic_names`` the names of topic ids
    known now. A full request closes the session it names; an incremental one updates its session here, at once,
    as Kafka does when the request arrives."""
    if version < SESSIONS_SINCE:
        return SessionlessContext(wanted)
    if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
        if session_id != INVALID_SESSION_ID:
            shard = cache.shard_of(session_id)
            if shard is None:
                return SessionErrorContext(UNKNOWN_SERVER_ERROR)  # Kafka's shard lookup throws
            shard.remove(session_id)
        if epoch == FINAL_EPOCH:
            return SessionlessContext(wanted)
        return FullContext(cache, wanted, version >= TOPIC_IDS_SINCE, follower)
    shard = cache.shard_of(session_id)
    if shard is None:
        return SessionErrorContext(UNKNOWN_SERVER_ERROR)  # Kafka's shard lookup throws
    session = shard.sessions.get(session_id)
    if session is None:
        return SessionErrorContext(FETCH_SESSION_ID_NOT_FOUND)
    if session.epoch != epoch:
        return SessionErrorContext(INVALID_FETCH_SESSION_EPOCH)
    if session.uses_topic_ids != (version >= TOPIC_IDS_SINCE):
        return SessionErrorContext(FETCH_SESSION_TOPIC_ID_ERROR)
    session.update(wanted, forgotten)
    if not session.partitions:
        shard.remove(session.id)
        return SessionlessContext(wanted)
    shard.touch(session, now_ms)
    session.epoch = next_epoch(session.epoch)
    return IncrementalContext(session, epoch, topic_names)
