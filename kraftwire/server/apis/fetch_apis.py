"""Fetch on a KRaft broker's topic partitions: consumers' and replicas'.

* **Fetch** from consumers (replica id -1): whole batches up to the high watermark (IsolationLevel 0) or up to the
  last stable offset (1, READ_COMMITTED: the first offset of the oldest transaction open or whose marker the high
  watermark has not passed, capped by the high watermark) with the AbortedTransactions (producer id, first offset)
  overlapping what it may read; every answer carries the last stable offset; control batches (transaction markers)
  go out with the data, consumers skip them; partitions in request order, each within its PartitionMaxBytes and
  what is left of MaxBytes (capped by ``fetch.max.bytes``), only the first batch of the first partition with
  records allowed past them (``kraftwire.replica.fetch_limits``); 64 KiB
  or more of whole batches of a segment below that bound go out as a file region with ``sendfile``
  (``InboundConnection``), never read into Python, as Kafka serves them; a current leader epoch is checked
  (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH); an offset outside [log start, log end] is OFFSET_OUT_OF_RANGE.
  Fewer than MinBytes park the request until a high watermark it reads moves (or a marker lands) or MaxWaitMs
  passes. Fetch sessions (KIP-227) as Kafka's ``FetchManager`` keeps them (``kraftwire.replica.fetch_sessions``),
  for consumers and followers alike: the request's context is settled when it arrives (which partitions it reads:
  those it names, or its session's), and the session is created or told what was sent when the answer goes out
  (the purgatory's ``finish``), which lists only what changed for an incremental request; the answer's order and
  refusals as Kafka's (``kraftwire.replica.fetch_answer``).
* **Follower fetching** (KIP-392): a consumer's Fetch from v11 may be served by a follower, up to the follower's high
  watermark (parked ones wake when replication moves it); with ``replica.selector.class`` the leader may answer a
  partition with ``preferred_read_replica`` instead of records, at once (``kraftwire.replica.read_replica``).
"""

from __future__ import annotations

import logging
import math
import time

from kraftwire import error_codes as ec
from kraftwire.errors import KraftwireError
from kraftwire.ids import ZERO_UUID
from kraftwire.log.api import Isolation
from kraftwire.metadata.controller.topics import TOPIC_RESOURCE
from kraftwire.protocol import messages as w
from kraftwire.replica import fetch_answer, fetch_sessions, read_replica
from kraftwire.replica import replication_quota as rq
from kraftwire.replica.fetch_limits import FetchLimits
from kraftwire.replica.health import NOT_FAILED_FETCH
from kraftwire.replica.fetch_readiness import HIGH_WATERMARK, LAST_STABLE_OFFSET, LOG_END, PartitionNow, Watched, fetch_ready
from kraftwire.replica.leader_fetch import check_replica_fetch
from kraftwire.replica.partition import FOLLOWER
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.server.apis.client_quotas import busy_since, mute, now_ms
from kraftwire.server.runtime.clocks import monotonic_ms
from kraftwire.server.runtime.replicas import Hosted

log = logging.getLogger("kraftwire.partitions")
#: a consumer Fetch reads at least this much of a partition as a file region (``sendfile``) when it can
REGION_MIN_BYTES = 64 * 1024


class _SessionFetch:
    """A Fetch with its session context (``fetch_sessions.new_context``: which partitions it reads and how its
    answer is listed), the topics its principal may not read (``denied``: they are answered
    TOPIC_AUTHORIZATION_FAILED in every answer, including the one a parked fetch gets later) and the ``listener`` it
    came in on (the replicas a consumer may be sent to are those with an endpoint there, KIP-392); for a consumer,
    the most bytes its consumer_byte_rate quota lets one answer carry (``quota_bytes``, Kafka's
    getMaxValueInQuotaWindow) and the time handling it took (``busy_ns``, request_percentage), known once its first
    answer is built."""

    __slots__ = ("header", "api", "version", "body", "size", "context", "denied", "listener", "quota_bytes",
                 "busy_ns")

    def __init__(self, request, context, denied: frozenset[str], listener: str,
                 quota_bytes: int | None = None) -> None:
        self.header, self.api, self.version, self.body = request.header, request.api, request.version, request.body
        self.size = getattr(request, "size", 0)
        self.context, self.denied, self.listener, self.quota_bytes = context, denied, listener, quota_bytes
        self.busy_ns = 0


class _TopicNames:
    """The image's topic names by id, looked up only for the session partitions whose names are not known yet."""

    __slots__ = ("topics",)

    def __init__(self, image) -> None:
        self.topics = image.topics

    def get(self, topic_id):
        topic = self.topics.get(topic_id)
        return None if topic is None else topic.name


def _inconsistent(hp: Hosted | None, topic_id) -> bool:
    """Whether a session partition's topic id is not the hosted log's: the topic was deleted and created again under
    the session, which still names it by the old id and the name it had (Kafka's ReplicaManager checks this once the
    partition is found, before anything else; a request without ids always matches)."""
    return hp is not None and hp.topic_id != topic_id and topic_id != ZERO_UUID and not hp.failed


def _topic_key(want) -> tuple:
    """How a partition's answer is filed: by its topic's (name, id) — the id alone is written from v13."""
    return (want.topic or "", want.topic_id)


def _take(pd, records, limits: FetchLimits, limit: int) -> int:
    """Put what a partition read into ``pd`` if the answer's ``limits`` let it go out; the bytes it carries."""
    if not limits.fits(len(records), limit):
        return 0
    pd.records = records
    return len(records)


class FetchApis:
    """Fetch, a part of ``partition_apis.PartitionApis``."""

    # ------------------------------------------------------------------------------------------------ Fetch
    def _partition_read(self, hp: Hosted | None, name, p, version: int, pd, limits: FetchLimits,
                        committed: bool = False, any_replica: bool = False, client=None) -> int:
        """Fill ``pd`` for one partition (``committed``: READ_COMMITTED, up to the last stable offset, with the
        aborted transactions it overlaps; ``any_replica``: the debugging consumer, from a follower too and up to
        the log end; ``client``: (rack, listener) of a consumer's Fetch v11+, which a follower serves up to its high
        watermark and a leader may send to a follower, KIP-392) within ``limits``; returns the bytes of records in
        it (``pd.preferred_read_replica`` set: none, the consumer should read elsewhere)."""
        if hp is None:
            pd.error_code = self._unhosted_error(name, p.partition)
            pd.high_watermark = pd.last_stable_offset = pd.log_start_offset = -1
            if version >= fetch_answer.LEADER_HINTS_SINCE and pd.error_code == ec.NOT_LEADER_OR_FOLLOWER:
                leader, epoch = self._leader_hint(name, p.partition)
                pd.current_leader = w.FetchResponse.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
            return 0
        if hp.failed:
            pd.error_code = ec.KAFKA_STORAGE_ERROR
            return 0
        error = hp.state.epoch_error(p.current_leader_epoch if version >= 9 else -1,
                                     leader_only=not any_replica and client is None)
        if error:
            pd.error_code = error
            # KIP-951's hint from v16, as for an unhosted partition (a v12-15 answer carries none: the conformance
            # run's FENCED_LEADER_EPOCH at v12 after a leader moved)
            if version >= fetch_answer.LEADER_HINTS_SINCE and error in (ec.NOT_LEADER_OR_FOLLOWER,
                                                                         ec.FENCED_LEADER_EPOCH):
                leader, epoch = self._leader_hint(name, p.partition)
                pd.current_leader = w.FetchResponse.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
            return 0
        lg = hp.log
        hw, start, end = lg.high_watermark(), lg.start_offset(), lg.end_offset()
        try:
            lso = hp.last_stable_offset()
        except (OSError, KraftwireError) as exc:
            log.warning("folding the transactions of %s-%d: %s", hp.topic, hp.index, exc)
            pd.error_code = ec.KAFKA_STORAGE_ERROR
            return 0
        offset = p.fetch_offset
        if client is not None and self._preferred_replica(hp, offset, pd, client) >= 0:
            pd.high_watermark, pd.last_stable_offset, pd.log_start_offset = hw, lso, start
            return 0
        if offset < start or offset > end:  # Kafka answers a refused read without offsets
            pd.error_code = ec.OFFSET_OUT_OF_RANGE
            return 0
        pd.high_watermark, pd.last_stable_offset = hw, lso
        pd.log_start_offset = start
        upper = end if any_replica else lso if committed else hw
        if committed:
            pd.aborted_transactions = []
        limit = limits.limit(p.partition_max_bytes)
        if offset >= upper or not limits.may_read(limit):
            return 0
        if committed:
            A = w.FetchResponse.AbortedTransaction
            pd.aborted_transactions = [A(producer_id=a.producer_id, first_offset=a.first_offset)
                                       for a in hp.txns.aborted_between(offset, upper)]
        try:
            return self._read(pd, lg, offset, limit, upper, Isolation.COMMITTED, limits)
        except KraftwireError as exc:
            log.warning("reading %s-%d at %d: %s", hp.topic, hp.index, offset, exc)
            pd.error_code = ec.KAFKA_STORAGE_ERROR
            return 0

    def _preferred_replica(self, hp: Hosted, offset: int, pd, client) -> int:
        """Set and return ``pd.preferred_read_replica``: the replica the leader tells this consumer to read from
        (``kraftwire.replica.read_replica``; -1: here)."""
        rack, listener = client
        pd.preferred_read_replica = read_replica.preferred_read_replica(
            hp.state, selector=self.node.settings.config.replica_selector_class, client_rack=rack, fetch_offset=offset,
            log_end=hp.log.end_offset(), racks=read_replica.replica_racks(self.md.image, hp.state.replicas, listener),
            now_ms=self.replicas.now_ms())
        return pd.preferred_read_replica

    def _read(self, pd, lg, offset: int, limit: int, upper: int, isolation, limits: FetchLimits) -> int:
        """Put into ``pd`` the whole batches from ``offset`` below ``upper`` (at most ``limit`` bytes) that the
        answer's ``limits`` let go out; the bytes it carries. At least ``REGION_MIN_BYTES`` of them on disk go as a
        file region, sent from the page cache with sendfile and never read into Python (a consumer's and a
        follower's reads alike, as Kafka's FileRecords); less is read (from the segment's recent appends when it
        still holds them)."""
        if limit >= REGION_MIN_BYTES:
            region = lg.read_region(offset, limit, upper, REGION_MIN_BYTES)
            if region is not None:
                pd.records = region
                self.region_bytes += len(region)
                return len(region)
        return _take(pd, lg.read(offset, limit, isolation, limit=upper).records, limits, limit)

    def _fetch_answer(self, request):
        """(draft answer — the (partition, answer) pairs in answer order, or a whole-request refusal — whether it may
        be sent now, the hosted partitions it reads, and the watch to park it with: (the partitions read without an
        error as ``Watched``, the answer's MinBytes))."""
        body, version = request.body, request.version
        R = w.FetchResponse
        quota_bytes = request.quota_bytes
        limits = FetchLimits(body.max_bytes if quota_bytes is None else min(body.max_bytes, quota_bytes),
                             body.min_bytes, self.node.settings.config.fetch_max_bytes)
        total, errors, keys, answered, watched = 0, False, set(), [], []
        denied = request.denied
        replica, broker_epoch = fetch_answer.fetching_replica(body, version)
        context = request.context
        if isinstance(context, fetch_sessions.SessionErrorContext):
            return fetch_answer.error_answer(body, version, context.error), True, set(), None
        refusal = fetch_answer.request_error(body, version) if replica < 0 else 0
        if refusal:
            return fetch_answer.error_answer(body, version, refusal), True, set(), None
        # KIP-392: a consumer's (rack, listener) from v11; a partition sent to another replica answers at once
        client = ((body.rack_id, request.listener)
                  if read_replica.has_client_metadata(version, replica) else None)
        preferred = False
        for want in context.partitions():
            name, p = want.topic, want.request
            if name is not None and name in denied:  # answered with the rest, never a reason to answer early
                answered.append((fetch_answer.REFUSED, want,
                                 fetch_answer.refused(p.partition, ec.TOPIC_AUTHORIZATION_FAILED)))
                continue
            if version >= 13 and name is None:
                answered.append((fetch_answer.REFUSED, want, fetch_answer.refused(p.partition, ec.UNKNOWN_TOPIC_ID)))
                errors = True
                continue
            if replica < 0 and self._unhosted_error(name, p.partition) == ec.UNKNOWN_TOPIC_OR_PARTITION:
                answered.append((fetch_answer.REFUSED, want,
                                 fetch_answer.refused(p.partition, ec.UNKNOWN_TOPIC_OR_PARTITION)))
                errors = True
                continue
            pd = R.PartitionData(partition_index=p.partition, error_code=0, high_watermark=-1,
                                 last_stable_offset=-1, log_start_offset=-1, aborted_transactions=None,
                                 preferred_read_replica=-1, records=b"")
            answered.append((fetch_answer.READ, want, pd))
            hp = self.replicas.get(name, p.partition)
            diverged = False
            if _inconsistent(hp, want.topic_id):
                pd.error_code = ec.INCONSISTENT_TOPIC_ID
                n = 0
            elif replica >= 0:
                n = self._replica_read(hp, name, p, version, pd, limits, replica, broker_epoch)
                div = getattr(pd, "diverging_epoch", None)
                diverged = div is not None and div.epoch >= 0
                errors |= diverged
            else:
                n = self._partition_read(hp, name, p, version, pd, limits, body.isolation_level == 1,
                                         fetch_answer.reads_any_replica(replica), client)
                preferred |= pd.preferred_read_replica >= 0
                self.node.topic_meters.fetched(name, n, pd.error_code not in NOT_FAILED_FETCH)
                if n and hp.state.role == FOLLOWER:
                    self.node.metrics.inc("follower_fetch_bytes_total", n, "bytes of records read for consumers "
                                          "from partitions this broker follows (KIP-392)", topic=hp.topic)
            total += n
            limits.took(n)
            errors |= pd.error_code != 0
            if hp is not None:
                keys.add((hp.topic, hp.index))
                if pd.error_code == 0 and not diverged and pd.preferred_read_replica < 0:
                    bound = (LOG_END if replica >= 0 or fetch_answer.reads_any_replica(replica)
                             else LAST_STABLE_OFFSET if body.isolation_level == 1 else HIGH_WATERMARK)
                    watched.append(Watched((hp.topic, hp.index), p.fetch_offset, bound, hp.state.leader_epoch,
                                           hp.state.role))
        # a draft: the session lists what goes out when it is sent (``_finish``)
        draft = fetch_answer.in_answer_order(answered)
        # sent at once: MinBytes reached, an error, divergence or another replica to report, or nothing hosted here
        # to wait for
        return (draft, total >= max(limits.min_bytes, 1) or errors or preferred or not keys, keys,
                (tuple(watched), limits.min_bytes))

    def _finish(self, request, conn, draft):
        """The answer that goes out, from ``_fetch_answer``'s draft: the session context lists its partitions (and
        creates or moves its session: exactly once, here); a v16+ consumer's answer carries the endpoints of the
        leaders its refusals point to (KIP-951)."""
        if isinstance(draft, w.FetchResponse):  # refused as a whole
            return draft
        R = w.FetchResponse
        error, session_id, listed = request.context.respond(draft, monotonic_ms())
        topics = [R.FetchableTopicResponse(topic=name, topic_id=topic_id, partitions=parts)
                  for (name, topic_id), parts in fetch_answer.by_topic(listed, _topic_key)]
        resp = R(throttle_time_ms=0, error_code=error, session_id=session_id, responses=topics)
        if (request.version >= fetch_answer.LEADER_HINTS_SINCE
                and fetch_answer.fetching_replica(request.body, request.version)[0] < 0):
            resp.node_endpoints = self._node_endpoints(R, fetch_answer.hinted_leaders(resp), conn)
        return resp

    def _replica_read(self, hp: Hosted | None, name, p, version: int, pd, limits: FetchLimits, replica: int,
                      broker_epoch: int) -> int:
        """Fill ``pd`` for a follower broker's fetch (as the leader) within ``limits``; returns the bytes of records
        in it."""
        if hp is None:
            pd.error_code = self._unhosted_error(name, p.partition)
            return 0
        if hp.failed:
            pd.error_code = ec.KAFKA_STORAGE_ERROR
            return 0
        lg = hp.log
        start, end = lg.start_offset(), lg.end_offset()
        offset = p.fetch_offset
        check = check_replica_fetch(hp.state, replica=replica, current_leader_epoch=p.current_leader_epoch,
                                    broker_epoch=broker_epoch, registration=self.md.image.brokers.get(replica),
                                    fetch_offset=offset, last_fetched_epoch=p.last_fetched_epoch, log_start=start,
                                    log_end=end, epoch_end=lg.leader_epoch_end)
        if check.fenced:
            pd.error_code = check.error
            if version >= 16 and check.leader_hint:  # KIP-951: where the leader is
                leader, epoch = self._leader_hint(name, p.partition)
                pd.current_leader = w.FetchResponse.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
            return 0
        pd.high_watermark = pd.last_stable_offset = lg.high_watermark()
        pd.log_start_offset = start
        if not check.accepted:
            pd.error_code = check.error
            if check.diverging is not None:
                epoch, end_offset = check.diverging
                pd.diverging_epoch = w.FetchResponse.EpochEndOffset(epoch=epoch, end_offset=end_offset)
            return 0
        self.replicas.replica_fetched(hp, replica, offset, broker_epoch, p.log_start_offset)
        pd.high_watermark = pd.last_stable_offset = lg.high_watermark()
        limit = limits.limit(p.partition_max_bytes)
        if offset >= end or not limits.may_read(limit) or self._held_back(hp, replica):
            return 0
        try:
            return self._read(pd, lg, offset, limit, end, Isolation.UNCOMMITTED, limits)
        except KraftwireError as exc:
            log.warning("reading %s-%d at %d for broker %d: %s", hp.topic, hp.index, offset, replica, exc)
            pd.error_code = ec.KAFKA_STORAGE_ERROR
            return 0

    # ------------------------------------------------------------------------------------------------ throttles
    def _leader_rate(self) -> int | None:
        """This broker's leader.replication.throttled.rate (None: not set)."""
        return rq.parse_rate(self.replicas.broker_configs().value(rq.LEADER_RATE))

    def _throttled(self, topic: str, partition: int) -> bool:
        """Whether the topic's leader.replication.throttled.replicas lists this broker's replica of ``partition``."""
        configs = self.md.image.configs.get((TOPIC_RESOURCE, topic), {})
        listed = rq.throttled_partitions(configs.get(rq.LEADER_REPLICAS), self.node.settings.node_id)
        return rq.is_throttled(listed, partition)

    def _held_back(self, hp: Hosted, replica: int) -> bool:
        """KIP-73 on the leader: a follower outside the ISR reads nothing of a throttled partition while this
        broker's throttled bytes are over its leader.replication.throttled.rate (``replica.replication_quota``)."""
        bound = self._leader_rate()
        if bound is None or not self._throttled(hp.topic, hp.index):
            return False
        return self.replication.holds_back(replica in hp.state.isr, bound, now_ms())

    def _record_replication(self, resp) -> None:
        """Record the record bytes a follower fetch answer carries for throttled partitions (Kafka's
        sizeOfThrottledPartitions, then ``quotas.leader.record``)."""
        if self._leader_rate() is None:
            return
        topics = self.md.image.topics
        size = 0
        for t in resp.responses:
            name = t.topic or (topics[t.topic_id].name if t.topic_id in topics else None)
            if name is None:
                continue
            size += sum(len(p.records or b"") for p in t.partitions if self._throttled(name, p.partition_index))
        self.replication.record(size, now_ms())

    def _ready_answer(self, request):
        resp, ready, _, _ = self._fetch_answer(request)
        return resp, ready

    def _fetch_ready(self, request, watch) -> bool:
        """Whether a parked fetch may be answered, from its partitions' offsets and positions alone
        (``kraftwire.replica.fetch_readiness``): its answer is built only once this says yes."""
        watched, min_bytes = watch
        return fetch_ready(((w, self._partition_now(w)) for w in watched), min_bytes)

    def _partition_now(self, watched: Watched) -> PartitionNow | None:
        """A watched partition as it is now; None when it is no longer hosted or its last stable offset cannot be
        folded (either way the answer carries an error)."""
        hp = self.replicas.get(*watched.key)
        if hp is None:
            return None
        lg = hp.log
        end = lg.end_offset()
        if watched.bound == LOG_END:
            upper = end
        elif watched.bound == HIGH_WATERMARK:
            upper = lg.high_watermark()
        else:
            try:
                upper = hp.last_stable_offset()
            except (OSError, KraftwireError):
                return None
        return PartitionNow(hp.state.leader_epoch, hp.state.role, hp.failed, lg.start_offset(), end, upper,
                            lg.bytes_between)

    def fetch(self, request, conn) -> None:
        started = time.perf_counter_ns()
        body, version = request.body, request.version
        replica = fetch_answer.fetching_replica(body, version)[0]
        context = self._session_context(body, version, replica >= 0)
        denied = frozenset()
        access = self.node.authorizer
        if access is not None and replica < 0:  # a consumer's fetch (a replica's was checked at the gate): READ
            names = {want.topic for want in context.partitions() if want.topic is not None}
            denied = frozenset(n for n in names if not access.topic(conn, n, Op.READ))
        quota = self.quotas.fetch_limit(request, conn) if replica < 0 else math.inf
        request = _SessionFetch(request, context, denied, self.kraft.listener_of(conn),
                                None if quota == math.inf else min(int(quota), 2**31 - 1))
        draft, ready, keys, watch = self._fetch_answer(request)
        if replica < 0:
            request.busy_ns = busy_since(started)
        self.purgatory.respond(request, conn, draft, ready, keys, watch)

    def _send_fetch(self, request, conn, resp) -> None:
        """Send a Fetch answer. A follower's throttled bytes are recorded against leader.replication.throttled.rate.
        A consumer's goes with the larger throttle time of its consumer_byte_rate and request_percentage quotas, and
        a throttled one without records (Kafka answers it empty and takes its bytes back), then the connection is
        muted that long (KIP-219)."""
        throttle = 0
        if fetch_answer.fetching_replica(request.body, request.version)[0] >= 0:
            self._record_replication(resp)
        else:
            size = sum(len(p.records or b"") for t in resp.responses for p in t.partitions)
            throttle = self.quotas.fetch(request, conn, size, getattr(request, "busy_ns", 0))
            if throttle > 0:  # Kafka answers a throttled consumer without records, whichever quota it is over
                resp = w.FetchResponse(throttle_time_ms=throttle, error_code=ec.NONE, session_id=resp.session_id,
                                       responses=[])
        conn.send_response(resp, request.version, request.header.correlation_id)
        mute(conn, throttle)

    def _session_context(self, body, version: int, follower: bool):
        """The request's session context (``FetchManager.newContext``): the partitions it names with their topic
        names (from the image for topic ids, v13+), and those it forgets."""
        image = self.md.image
        by_id = version >= fetch_sessions.TOPIC_IDS_SINCE
        names = _TopicNames(image)
        wanted, forgotten = [], []
        for t in body.topics:
            topic_id = t.topic_id if by_id else ZERO_UUID
            name = names.get(topic_id) if by_id else t.topic
            wanted.extend(fetch_sessions.Wanted(topic_id, name, p) for p in t.partitions)
        for t in body.forgotten_topics_data or ():
            topic_id = t.topic_id if by_id else ZERO_UUID
            name = names.get(topic_id) if by_id else t.topic
            forgotten.extend((topic_id, name, p) for p in t.partitions)
        context = fetch_sessions.new_context(self.sessions, version, body.session_id, body.session_epoch, follower,
                                             wanted, forgotten, names, monotonic_ms())
        self.node.metrics.inc("fetch_session_requests_total", help="Fetch requests by session context",
                              context=type(context).__name__)
        return context

    def _hw_moved(self, hp: Hosted) -> None:
        self.purgatory.wake((hp.topic, hp.index))
