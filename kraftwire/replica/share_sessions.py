"""Share sessions (KIP-932) as a Kafka 4.4 broker keeps them (``ShareSessionCache``, ``ShareSession``,
``SharePartitionManager.newContext`` / ``acknowledgeSessionUpdate``): which share-partitions a member's ShareFetch
reads, and when a member's acquired records are released because its session ended.

A share consumer sends ShareFetch to every partition leader it is assigned partitions on; the leader remembers,
per ``(group id, member id)``, the partitions the member fetches, so later requests name only what changed (new
partitions, ``ForgottenTopicsData``).

* **Epochs** (``ShareSessionEpoch``): 0 opens a session (any old one of the key is dropped, its records *not*
  released), -1 closes it, any other value must be the session's current epoch, which moves on after each request
  (1, 2, … wrapping from 2**31-1 to 1). A ShareFetch at 0 carrying acknowledgements is INVALID_REQUEST (a new
  session holds no records to acknowledge); -1 or an incremental epoch for a key with no session is
  SHARE_SESSION_NOT_FOUND; a wrong incremental epoch INVALID_SHARE_SESSION_EPOCH. ShareAcknowledge never opens a
  session: epoch 0 is INVALID_SHARE_SESSION_EPOCH, -1 needs the session, any other epoch moves it on as a fetch does.
* **The limit**: ``group.share.max.share.sessions`` (2000) sessions per broker; a new session past it is
  SHARE_SESSION_LIMIT_REACHED. Kafka 4.4 evicts nothing (earlier releases' LRU eviction is gone): a session ends
  when its member closes it (-1), opens a new one (0), or when the connection that opened it closes.
* **The connection**: each session belongs to the connection that opened it. When that connection closes the
  session is removed and its member *leaves* (the runtime releases every record it holds), and a group whose last
  session that was is *empty* (the runtime may drop the group's share-partitions). A session replaced or removed
  before its connection closed leaves a stale entry: the connection closing then releases nothing.

Everything here is pure: no clock is needed (4.4 has no idle eviction) and nothing is random.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kraftwire import error_codes as ec

__all__ = ["INITIAL_EPOCH", "FINAL_EPOCH", "DEFAULT_MAX_SESSIONS", "next_epoch", "ShareSession", "ShareSessionCache",
           "FetchContext", "Departure"]

INITIAL_EPOCH, FINAL_EPOCH = 0, -1
MAX_INT = 2**31 - 1
#: ``group.share.max.share.sessions``' default
DEFAULT_MAX_SESSIONS = 2000

SessionKey = tuple[str, str]  # (group id, member id)
Partition = tuple  # (topic id, partition index)


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch`` (``ShareRequestMetadata.nextEpoch``): FINAL stays FINAL, 2**31-1 wraps to 1."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == MAX_INT else epoch + 1


@dataclass
class ShareSession:
    """One member's session: its partitions in the order they were added, and the epoch its next request carries."""

    key: SessionKey
    connection_id: str
    epoch: int
    partitions: dict[Partition, None] = field(default_factory=dict)

    def update(self, added: list[Partition], forgotten: list[Partition]) -> tuple[list, list, list]:
        """Add the partitions a request names and drop the forgotten ones (``ShareSession.update``):
        ``(added, updated, removed)`` — a named partition already in the session is *updated* (it keeps its place)."""
        new, updated, removed = [], [], []
        for p in added:
            (updated if p in self.partitions else new).append(p)
            self.partitions.setdefault(p, None)
        for p in forgotten:
            if self.partitions.pop(p, 0) is None:
                removed.append(p)
        return new, updated, removed


@dataclass(frozen=True)
class FetchContext:
    """What :meth:`ShareSessionCache.new_fetch_context` decided: ``error`` (the request's top-level error code, NONE
    to go on), ``final`` (the request closes the session: acknowledgements are applied, nothing is fetched, then
    the session is released) and the partitions to fetch, in the session's order."""

    error: int
    final: bool = False
    partitions: tuple[Partition, ...] = ()


@dataclass(frozen=True)
class Departure:
    """What a closed connection means for the share-partitions (``ShareGroupListener``): ``member`` left (release
    every record it holds), and ``group_empty`` when it was the group's last session on this broker."""

    group_id: str
    member_id: str | None
    group_empty: bool


@dataclass
class ShareSessionCache:
    """Every share session on one broker."""

    max_sessions: int = DEFAULT_MAX_SESSIONS
    sessions: dict[SessionKey, ShareSession] = field(default_factory=dict)
    members_per_group: dict[str, int] = field(default_factory=dict)
    #: connection id -> (session key, stale): the session it opened, stale once that session ended another way
    connections: dict[str, list] = field(default_factory=dict)

    # -- the cache (ShareSessionCache) -----------------------------------------------------------------------

    def get(self, key: SessionKey) -> ShareSession | None:
        return self.sessions.get(key)

    def size(self) -> int:
        return len(self.sessions)

    def total_partitions(self) -> int:
        return sum(len(s.partitions) for s in self.sessions.values())

    def create(self, group_id: str, member_id: str, partitions: list[Partition],
               connection_id: str) -> SessionKey | None:
        """A new session at epoch 1, None when ``max_sessions`` are open (``maybeCreateSession``)."""
        if len(self.sessions) >= self.max_sessions:
            return None
        key = (group_id, member_id)
        self.sessions[key] = ShareSession(key, connection_id, next_epoch(INITIAL_EPOCH), dict.fromkeys(partitions))
        self.members_per_group[group_id] = self.members_per_group.get(group_id, 0) + 1
        self.connections[connection_id] = [key, False]
        return key

    def remove(self, key: SessionKey) -> ShareSession | None:
        """Drop a session, releasing nothing; the connection that opened it no longer speaks for it."""
        session = self.sessions.pop(key, None)
        if session is None:
            return None
        self.members_per_group[key[0]] = max(0, self.members_per_group.get(key[0], 0) - 1)
        entry = self.connections.get(session.connection_id)
        if entry is not None:
            entry[1] = True
        return session

    def connection_closed(self, connection_id: str) -> Departure | None:
        """A connection closed (Kafka's ``ClientConnectionDisconnectListener``): the session it opened is removed
        and its member leaves, unless that session had already ended; then whether its group has no session left."""
        entry = self.connections.pop(connection_id, None)
        if entry is None:
            return None
        key, stale = entry
        member = None
        if not stale and self.remove(key) is not None:
            member = key[1]
        group_empty = self.members_per_group.get(key[0], 0) == 0
        if group_empty:
            self.members_per_group.pop(key[0], None)
        return Departure(key[0], member, group_empty)

    # -- the requests (SharePartitionManager) ----------------------------------------------------------------

    def new_fetch_context(self, group_id: str, member_id: str, epoch: int, wanted: list[Partition],
                          forgotten: list[Partition], has_acknowledgements: bool,
                          connection_id: str) -> FetchContext:
        """A ShareFetch's session step (``newContext``): open, close or move on the member's session."""
        key = (group_id, member_id)
        if epoch == FINAL_EPOCH:
            if key not in self.sessions:
                return FetchContext(ec.SHARE_SESSION_NOT_FOUND)
            return FetchContext(ec.NONE, final=True)
        if epoch == INITIAL_EPOCH:
            if has_acknowledgements:
                return FetchContext(ec.INVALID_REQUEST)
            self.remove(key)
            if self.create(group_id, member_id, list(dict.fromkeys(wanted)), connection_id) is None:
                return FetchContext(ec.SHARE_SESSION_LIMIT_REACHED)
            return FetchContext(ec.NONE, partitions=tuple(self.sessions[key].partitions))
        session = self.sessions.get(key)
        if session is None:
            return FetchContext(ec.SHARE_SESSION_NOT_FOUND)
        if session.epoch != epoch:
            return FetchContext(ec.INVALID_SHARE_SESSION_EPOCH)
        session.update(wanted, forgotten)
        session.epoch = next_epoch(session.epoch)
        return FetchContext(ec.NONE, partitions=tuple(session.partitions))

    def acknowledge_update(self, group_id: str, member_id: str, epoch: int) -> int:
        """A ShareAcknowledge's session step (``acknowledgeSessionUpdate``): its error code, NONE to go on (at -1
        the runtime then releases the session)."""
        if epoch == INITIAL_EPOCH:
            return ec.INVALID_SHARE_SESSION_EPOCH
        session = self.sessions.get((group_id, member_id))
        if session is None:
            return ec.SHARE_SESSION_NOT_FOUND
        if epoch == FINAL_EPOCH:
            return ec.NONE
        if session.epoch != epoch:
            return ec.INVALID_SHARE_SESSION_EPOCH
        session.epoch = next_epoch(session.epoch)
        return ec.NONE

    def release(self, group_id: str, member_id: str) -> tuple[Partition, ...]:
        """A request at -1 ended the session (``releaseSession``): it is removed and the partitions it held are
        where the runtime releases the member's records."""
        session = self.remove((group_id, member_id))
        return () if session is None else tuple(session.partitions)
