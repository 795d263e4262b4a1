"""ShareFetch and ShareAcknowledge (KIP-932) on a KRaft broker: the asyncio glue around the share sessions
(``kraftwire.replica.share_sessions``), the share-partitions (``kraftwire.replica.share_fetch``,
``share_partition``) and the share coordinator (``share_apis.ShareApis.serve_state``).

* **A request** is checked (``share_fetch.request_error``), its session stepped (open, move on, close), its
  acknowledgements applied and their writes made durable, then — for a ShareFetch that does not close its session —
  each partition of the session read and acquired — except when it carries RENEW acknowledgements (``IsRenewAck``,
  KIP-1222): such a fetch only acknowledges, as Kafka's answers its fetch part empty. The answer waits
  (``MaxWaitMs``) while nothing could be acquired and less than ``MinBytes`` was: a moved high watermark or released
  records wake it.
* **A share-partition** is loaded on first use here: ReadShareGroupState of its key (which also fences an older
  leader's writes), then ``SharePartition.initialize``; it is dropped when this broker stops leading the partition.
* **Durability**: each ``ShareWrite`` goes to the share coordinator as WriteShareGroupState before the
  acknowledgement (or release) it comes from is answered. An acknowledgement's changes are pending until then: a
  refused write rolls them back (``SharePartition.complete``) and answers Kafka's error for it
  (``persister_error``).
* **The dead-letter queue** (share.version 2, the group naming a DLQ topic): once a write that left records
  ARCHIVING is durable, each run is written to the DLQ topic (``share_dlq_apis``) and then archived, a second write
  — whether the DLQ write worked or not, as Kafka's. A share-partition loaded with ARCHIVING records sends them again.
* **Locks** expire on the runtime's clock (a ticker while share-partitions are loaded); a closed connection ends the
  session it opened (the member's records released), and a group with no session left here is dropped.

* **The share coordinator** of a key is this broker's when it leads the key's ``__share_group_state`` partition,
  else that partition's leader, asked over the inter-broker links (``BrokerLinks``).

**Waiting** (Kafka's ``DelayedShareFetch``): a ShareFetch acquires nothing until it completes — when the readable
bytes of its acquirable partitions reach ``MinBytes`` (``share_fetch.fetch_ready``), a partition fails, or
``MaxWaitMs`` passes — and then acquires what each partition has.

**Members**: a member's records are released when its share session ends (closed with -1, or its connection
closed); Kafka 4.4's group coordinator removing a member (a heartbeat leaving, a session timeout) reaches no
share-partition leader (``ShareGroupListener.onMemberLeave`` is called by the share session cache alone), so its
records wait for their locks to expire, here as there.
"""

from __future__ import annotations

import asyncio
import functools
import logging

from kraftwire import error_codes as ec
from kraftwire.coordinator.share.hosting import SHARE_STATE_TOPIC, key_refusal, split
from kraftwire.errors import KraftwireError
from kraftwire.metadata.features import share_dlq_enabled, share_groups_enabled
from kraftwire.metadata.group_configs import GROUP as GROUP_CONFIGS
from kraftwire.protocol import messages as w
from kraftwire.replica import share_fetch
from kraftwire.replica.share_fetch import ShareLeader, request_error, share_config
from kraftwire.replica.share_partition import (AckBatch, SharePartition, ShareState, ShareStateBatch,
                                               persister_error)
from kraftwire.replica.share_sessions import DEFAULT_MAX_SESSIONS, ShareSessionCache
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.server.apis.share_dlq_apis import DeadLetterError, DeadLetterWriter
from kraftwire.server.edge.broker_links import BrokerLinks
from kraftwire.server.runtime.clocks import monotonic_ms, wall_ms as _now_ms

log = logging.getLogger("kraftwire.share")

#: how often loaded share-partitions' locks are checked for expiry
TICK_S = 0.1
MAX_SESSIONS_KEY = "group.share.max.share.sessions"
#: ShareFetch v2's ShareAcquireMode that stops at MaxRecords exactly (0, the default, acquires whole batches)
RECORD_LIMIT = 1
#: how long a share-state request to another broker's share coordinator may take
STATE_TIMEOUT_S = 10.0


#: the message of an acknowledgement Kafka refuses in ``validateAcknowledgementBatches``: none, where its other
#: per-partition refusals of a ShareAcknowledge carry their code's default message
_NO_MESSAGE = ""


def _message(code: int, msg: str | None) -> str | None:
    """A ShareAcknowledge partition's error message: the one given, none for :data:`_NO_MESSAGE` and for
    TOPIC_AUTHORIZATION_FAILED (which Kafka 4.4 answers with the code alone), else the code's default."""
    if msg is not None:
        return msg or None
    return ec.default_message(code) if code and code != ec.TOPIC_AUTHORIZATION_FAILED else None


class ShareFetchApis:
    def __init__(self, share_apis) -> None:
        self.share = share_apis
        self.node, self.md, self.replicas = share_apis.node, share_apis.md, share_apis.replicas
        self.parts = share_apis.node.partition_apis
        value = self.replicas.broker_configs().value(MAX_SESSIONS_KEY)
        self.sessions = ShareSessionCache(int(value) if value else DEFAULT_MAX_SESSIONS)
        self.leader = ShareLeader()
        self._state_epochs: dict = {}
        self._loading: dict = {}
        self._load_failures: dict = {}
        #: loads finished so far, and which one (its number) made each loaded share-partition
        self._load_seq = 0
        self._loaded_at: dict = {}
        self._waiters: list[asyncio.Future] = []
        self._ticker: asyncio.Task | None = None
        self._tasks: set[asyncio.Task] = set()
        self.links = BrokerLinks(self.node, "share-partition-leader")
        self.dlq = DeadLetterWriter(self.node, self.md, self.replicas, share_apis.kraft)
        self.meters = self.node.share_meters

    def register(self) -> None:
        d = self.node.dispatcher
        d.serve("ShareFetch", self.share_fetch)
        d.serve("ShareAcknowledge", self.share_acknowledge)
        d.on_close.append(self._connection_closed)
        self.replicas.watchers.append(lambda _hp: self._wake())
        self.md.on_image.append(self._image)

    def close(self) -> None:
        for task in [self._ticker, *self._tasks]:
            if task is not None:
                task.cancel()
        self._ticker = None
        if self.links.conns:
            asyncio.get_running_loop().create_task(self.links.close())
        if self.dlq.links.conns:
            asyncio.get_running_loop().create_task(self.dlq.close())

    # ================================================================================================ requests
    def share_fetch(self, request, conn) -> None:
        self._spawn(self._share_fetch(request, conn))

    def share_acknowledge(self, request, conn) -> None:
        self._spawn(self._share_acknowledge(request, conn))

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _refusal(self, request, conn, body) -> int:
        renew = None
        if share_fetch.renew_ack(request.version, body) and hasattr(body, "max_wait_ms"):
            renew = (body.max_bytes, body.min_bytes, body.max_records, body.max_wait_ms)
        gid = body.group_id
        return request_error(enabled=share_groups_enabled(self.md.image.features), group_id=gid,
                             group_allowed=gid is None or self.share.groups._may(conn, 0, gid, Op.READ),
                             member_id=body.member_id, renew=renew)

    async def _share_fetch(self, request, conn) -> None:
        body, version, cid = request.body, request.version, request.header.correlation_id
        R = w.ShareFetchResponse
        refusal = self._refusal(request, conn, body)
        if not refusal:
            acks = {(t.topic_id, p.partition_index): [_ack_batch(b) for b in p.acknowledgement_batches]
                    for t in body.topics for p in t.partitions if p.acknowledgement_batches}
            ctx = self.sessions.new_fetch_context(
                body.group_id, body.member_id, body.share_session_epoch,
                [(t.topic_id, p.partition_index) for t in body.topics for p in t.partitions],
                [(t.topic_id, p) for t in body.forgotten_topics_data for p in t.partitions], bool(acks), id(conn))
            refusal = ctx.error
        if refusal:
            conn.send_response(R(throttle_time_ms=0, error_code=refusal, responses=[], node_endpoints=[]), version,
                               cid)
            return
        gid, mid = body.group_id, body.member_id
        answers: dict = {}
        config = self._config(gid)
        renewing = share_fetch.renew_ack(version, body)
        if ctx.final:
            ack_errors = await self._acknowledge(gid, mid, acks, conn, version, renewing)
            await self._durably(self.leader.release_member(gid, mid, self.sessions.release(gid, mid)))
        elif renewing:
            ack_errors = await self._acknowledge(gid, mid, acks, conn, version, renewing)
        else:
            # as Kafka's: the fetch completes first when it can (its delayed fetch tries at once), then the
            # acknowledgements apply, so records they release go to a later fetch unless this one waits; a waiting
            # fetch acquires nothing until it completes — MinBytes readable, a partition failed, or MaxWaitMs over
            # since: when the fetch last marked TopicPartitionsAcquireTimeMs (its start, at first)
            deadline, since = _now_ms() + max(0, body.max_wait_ms), [monotonic_ms()]
            horizon: int | None = self._load_seq  # the share-partition loads this fetch has seen finish
            if self._ready(gid, body, ctx.partitions, answers, conn, horizon, since):
                await self._acquire(gid, mid, body, ctx.partitions, answers, conn, horizon, since)
                ack_errors = await self._acknowledge(gid, mid, acks, conn, version, False)
            else:
                # records the acknowledgements release, a share-partition whose load finished, a moved high
                # watermark: each tries the waiting fetch again (Kafka's maybeCompleteDelayedShareFetchRequest) —
                # finished loads one at a time, in the order they finished, as Kafka tries its delayed fetch on
                # each initialization's completion; at the deadline it completes with what is loaded
                ack_errors = await self._acknowledge(gid, mid, acks, conn, version, False)
                while not self._ready(gid, body, ctx.partitions, answers, conn, horizon, since):
                    if horizon < self._load_seq:
                        horizon += 1
                    elif not await self._woken(deadline):
                        horizon = None
                        break
                await self._acquire(gid, mid, body, ctx.partitions, answers, conn, horizon, since)
        for key, (code, msg) in ack_errors.items():
            answer = answers.setdefault(key, R.PartitionData(partition_index=key[1], records=b"", acquired_records=[]))
            answer.acknowledge_error_code, answer.acknowledge_error_message = code, msg or None
        leaders = {a.current_leader.leader_id for a in answers.values()
                   if a.error_code == ec.NOT_LEADER_OR_FOLLOWER and a.current_leader.leader_id >= 0}
        conn.send_response(R(throttle_time_ms=0, error_code=ec.NONE,
                             acquisition_lock_timeout_ms=config.record_lock_duration_ms,
                             responses=_by_topic(R.ShareFetchableTopicResponse, answers),
                             node_endpoints=self.parts._node_endpoints(R, leaders, conn)), version, cid)

    async def _share_acknowledge(self, request, conn) -> None:
        body, version, cid = request.body, request.version, request.header.correlation_id
        R = w.ShareAcknowledgeResponse
        refusal = self._refusal(request, conn, body)
        if not refusal:
            refusal = self.sessions.acknowledge_update(body.group_id, body.member_id, body.share_session_epoch)
        if refusal:
            conn.send_response(R(throttle_time_ms=0, error_code=refusal, responses=[], node_endpoints=[]), version,
                               cid)
            return
        gid, mid = body.group_id, body.member_id
        acks = {(t.topic_id, p.partition_index): [_ack_batch(b) for b in p.acknowledgement_batches]
                for t in body.topics for p in t.partitions}
        errors = await self._acknowledge(gid, mid, acks, conn, version, share_fetch.renew_ack(version, body))
        if body.share_session_epoch == -1:
            await self._durably(self.leader.release_member(gid, mid, self.sessions.release(gid, mid)))
        answers = {key: R.PartitionData(partition_index=key[1], error_code=code,
                                        error_message=_message(code, msg))
                   for key, (code, msg) in errors.items()}
        for key, answer in answers.items():
            if answer.error_code == ec.NOT_LEADER_OR_FOLLOWER:
                answer.current_leader = R.LeaderIdAndEpoch(*self._leader_hint(key))
        leaders = {a.current_leader.leader_id for a in answers.values()
                   if a.error_code == ec.NOT_LEADER_OR_FOLLOWER and a.current_leader.leader_id >= 0}
        conn.send_response(R(throttle_time_ms=0, error_code=ec.NONE,
                             acquisition_lock_timeout_ms=self._config(gid).record_lock_duration_ms,
                             responses=_by_topic(R.ShareAcknowledgeTopicResponse, answers),
                             node_endpoints=self.parts._node_endpoints(R, leaders, conn)), version, cid)

    # ================================================================================================ partitions
    def _partition_error(self, key, conn) -> tuple[int, object]:
        """``(error, hosted)`` of a share-partition's partition: UNKNOWN_TOPIC_ID, TOPIC_AUTHORIZATION_FAILED,
        UNKNOWN_TOPIC_OR_PARTITION or NOT_LEADER_OR_FOLLOWER, else NONE and the hosted leader replica."""
        topic_id, index = key
        name = next((t.name for t in self.md.image.topics.values() if t.id == topic_id), None)
        if name is None:
            return ec.UNKNOWN_TOPIC_ID, None
        access = self.node.authorizer
        if access is not None and not access.topic(conn, name, Op.READ):
            return ec.TOPIC_AUTHORIZATION_FAILED, None
        hp = self.replicas.get_by_id(topic_id, index)
        if hp is None or hp.failed:
            return self.parts._unhosted_error(name, index), None
        error = hp.state.epoch_error(-1, leader_only=True)
        return (error, None) if error else (ec.NONE, hp)

    def _leader_hint(self, key) -> tuple[int, int]:
        name = next((t.name for t in self.md.image.topics.values() if t.id == key[0]), None)
        return self.parts._leader_hint(name, key[1]) if name else (-1, -1)

    def _config(self, group_id: str):
        image = self.md.image
        return share_config(image.configs.get((GROUP_CONFIGS, group_id), {}), self.replicas.broker_configs().value,
                            dlq_supported=share_dlq_enabled(image.features))

    async def _acknowledge(self, gid: str, mid: str, acks: dict, conn, version: int, renewing: bool) -> dict:
        """Apply each partition's acknowledgements and make their writes durable: ``{(topic id, partition): (error,
        message)}``. Malformed batches are refused before the partition is looked at, as Kafka's, with no message
        (:data:`_NO_MESSAGE`)."""
        out, writes = {}, []
        now = _now_ms()
        if acks:  # the group config as it stands, for the acknowledged share-partitions
            self.leader.refresh_config(self._config(gid), [(gid, *key) for key in acks])
        for key, batches in acks.items():
            error = share_fetch.acknowledgement_error(batches, version, renewing)
            if error:
                out[key] = (error, _NO_MESSAGE)
                continue
            error, hp = self._partition_error(key, conn)
            if error:
                out[key] = (error, None)
                continue
            code, msg, write = self.leader.acknowledge((gid, *key), mid, batches, now)
            out[key] = (code, msg)
            if write is not None:
                writes.append(((gid, *key), write))
        codes = await self._durably(writes)
        now, again = _now_ms(), []
        for (key, write), code in zip(writes, codes):
            # the write decides: durable, the changes stand; refused, they are rolled back (the records go back
            # to the member, or are released when their lock ran out meanwhile, which is written in turn)
            release = self.leader.complete(key, write, code == ec.NONE, now)
            if release is not None:
                again.append((key, release))
            if code:
                out[key[1:]] = (persister_error(code), None)
        await self._durably(again)
        if writes:
            self._wake()
            self._start_dead_letters(key for key, _write in writes)
        self.meters.acknowledged(b for key, batches in acks.items() if out[key][0] == ec.NONE for b in batches)
        return out

    async def _woken(self, deadline: int) -> bool:
        """Wait until a high watermark moves or records are released (True), or ``deadline`` passes (False)."""
        left = deadline - _now_ms()
        if left <= 0:
            return False
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await asyncio.wait_for(waiter, left / 1000)
        except asyncio.TimeoutError:
            return False
        return True

    def _loaded(self, gid: str, partitions, answers: dict, conn, horizon: int | None) -> list:
        """Each partition's share-partition loaded here: ``[(key, hosted)]`` of those that are, the others answered
        with their error — but those whose load is still under way, or finished after the ``horizon``-th load
        (None: any), are left out, their loads started (Kafka's ``DelayedShareFetch`` tries with the
        ``SharePartition``s initialized so far and skips one still initializing; each initialization finishing
        tries the fetch again). So a new group's first fetch completes with the share-partition that loaded first
        when it has records, as Kafka's does."""
        R = w.ShareFetchResponse
        out = []
        for key in partitions:
            error, hp = self._partition_error(key, conn)
            message = None
            if not error:
                loaded = self._load((gid, *key), hp)
                if loaded is None or (horizon is not None and self._loaded_at.get((gid, *key), 0) > horizon):
                    continue
                error, message = loaded
            if error:
                answer = answers.get(key) or R.PartitionData(partition_index=key[1], records=b"",
                                                             acquired_records=[])
                answer.error_code, answer.error_message = error, message
                if error == ec.NOT_LEADER_OR_FOLLOWER:
                    answer.current_leader = R.LeaderIdAndEpoch(*self._leader_hint(key))
                answers[key] = answer
                continue
            out.append((key, hp))
        if self.leader.partitions:
            self._start_ticker()
        return out

    def _ready(self, gid: str, body, partitions, answers: dict, conn, horizon: int | None, since: list) -> bool:
        """Whether a ShareFetch completes now (``share_fetch.fetch_ready``), from each loaded share-partition's
        readable bytes — its next fetch offset to the high watermark (the last stable offset when read_committed),
        read up to MaxBytes — or None when it cannot acquire. A try that finds a partition that can acquire marks
        TopicPartitionsAcquireTimeMs, as each of Kafka's tries that takes a partition's fetch lock does."""
        readable, committed = [], self._config(gid).read_committed
        for key, hp in self._loaded(gid, partitions, answers, conn, horizon):
            sp = self.leader.get((gid, *key))
            if not sp.can_acquire():
                readable.append(None)
                continue
            read = self._read(key, hp, sp, committed, body.max_bytes, answers)
            if read is not None:
                readable.append(len(read[2]))
        if any(r is not None for r in readable):
            self.meters.acquiring(gid, since, monotonic_ms())
        return share_fetch.fetch_ready(readable, body.max_bytes, body.min_bytes,
                                       any(a.error_code for a in answers.values()))

    async def _acquire(self, gid: str, mid: str, body, partitions, answers: dict, conn,
                       horizon: int | None, since: list) -> None:
        """The fetch completes: each partition's available records acquired, within MaxRecords and MaxBytes over
        the request. Its share-partitions that can acquire, over those asked, make RequestTopicPartitionsFetchRatio;
        one completing at MaxWaitMs (``horizon`` None) marks TopicPartitionsAcquireTimeMs, as Kafka's expiry does."""
        R = w.ShareFetchResponse
        budget, max_bytes = body.max_records, body.max_bytes
        config = self._config(gid)
        now, writes, committed = _now_ms(), [], config.read_committed
        loaded = self._loaded(gid, partitions, answers, conn, horizon)
        self.leader.refresh_config(config, [(gid, *key) for key, _hp in loaded])
        self.meters.fetched(gid, sum(self.leader.get((gid, *k)).can_acquire() for k, _hp in loaded), len(partitions))
        if horizon is None:
            self.meters.acquiring(gid, since, monotonic_ms())
        for key, hp in loaded:
            sp = self.leader.get((gid, *key))
            if budget <= 0 or max_bytes <= 0 or not sp.can_acquire():
                continue
            read = self._read(key, hp, sp, committed, max_bytes, answers, aborted=committed)
            if read is None or not read[2]:
                continue
            _offset, _upper, raw, aborted = read
            got = self.leader.acquire((gid, *key), mid, raw, budget, now,
                                      record_limit=body.share_acquire_mode == RECORD_LIMIT, aborted=aborted)
            if got.write is not None:
                writes.append(((gid, *key), got.write))
            if got.ranges:
                answer = answers.get(key) or R.PartitionData(partition_index=key[1], records=b"",
                                                             acquired_records=[])
                answer.records = raw[:got.record_bytes]
                answer.acquired_records = [R.AcquiredRecords(first_offset=r.first_offset, last_offset=r.last_offset,
                                                             delivery_count=r.delivery_count) for r in got.ranges]
                budget -= got.count
                max_bytes -= got.record_bytes
                answers[key] = answer
        await self._durably(writes)

    def _read(self, key, hp, sp, committed: bool, max_bytes: int, answers: dict, *, aborted: bool = False):
        """``(offset, upper, records, aborted transactions)`` a share-partition can acquire from: whole batches from
        its next fetch offset below the high watermark (the last stable offset when ``committed``), at most
        ``max_bytes`` but at least one batch; with ``aborted``, the aborted transactions among them. None when the
        storage fails: the partition is answered KAFKA_STORAGE_ERROR, as the regular Fetch answers it."""
        try:
            offset = max(sp.next_fetch_offset(), hp.log.start_offset())
            upper = _readable_end(hp, committed)
            if offset >= upper:
                return offset, upper, b"", None
            raw = bytes(hp.log.read(offset, max_bytes, limit=upper).records)
            return offset, upper, raw, hp.txn_state().aborted_between(offset, upper) if aborted else None
        except (OSError, KraftwireError) as exc:
            log.warning("a share fetch reading %s-%d: %s", hp.topic, hp.index, exc)
            R = w.ShareFetchResponse
            answer = answers.get(key) or R.PartitionData(partition_index=key[1], records=b"", acquired_records=[])
            answer.error_code, answer.error_message = ec.KAFKA_STORAGE_ERROR, None
            answers[key] = answer
            return None

    def _load(self, key, hp) -> tuple[int, str | None] | None:
        """The share-partition of ``key`` as its load from the share coordinator (ReadShareGroupState) stands:
        ``(NONE, None)`` once loaded, else the read's error as Kafka's ``SharePartition.maybeInitialize`` answers it
        (``persister_error``, with the share coordinator's message) — a share-partition the group coordinator has not
        initialized yet reads INVALID_REQUEST, answered UNKNOWN_SERVER_ERROR. None while the read is under way
        (started here if it is not): it wakes waiting fetches when done, and a MaxWaitMs 0 fetch of a share-partition
        not loaded yet answers without it, as Kafka 4.4's does."""
        if self.leader.get(key) is not None:
            return ec.NONE, None
        failed = self._load_failures.pop(key, None)
        if failed is not None:  # a load that finished with an error since the last ask: told once, then retried
            return failed
        if key not in self._loading:
            pending = self._loading[key] = asyncio.ensure_future(self._read_state(key, hp))
            pending.add_done_callback(functools.partial(self._load_finished, key, monotonic_ms()))
        return None

    def _load_finished(self, key, started_ms: int, future) -> None:
        """A share-partition's load is over: its error kept for the next fetch to answer, waiting fetches woken;
        its time, failed or not, is PartitionLoadTimeMs."""
        self._loading.pop(key, None)
        if future.cancelled():
            return
        self.meters.loaded(monotonic_ms() - started_ms)
        exc = future.exception()
        if exc is not None:
            log.error("share-partition %s: loading its state failed: %r", key, exc)
            self._load_failures[key] = (ec.UNKNOWN_SERVER_ERROR, None)
        elif future.result()[0] != ec.NONE:
            self._load_failures[key] = future.result()
        self._wake()

    async def _read_state(self, key, hp) -> tuple[int, str | None]:
        gid, topic_id, index = key
        RQ = w.ReadShareGroupStateRequest
        epoch = hp.state.leader_epoch
        answer = await self.state_call("ReadShareGroupState", 0, RQ(group_id=gid, topics=[RQ.ReadStateData(
            topic_id=topic_id, partitions=[RQ.PartitionData(partition=index, leader_epoch=epoch)])]))
        part = answer.results[0].partitions[0]
        if part.error_code:
            log.info("share-partition %s: ReadShareGroupState answered %s", key, ec.name_of(part.error_code))
            return persister_error(part.error_code), part.error_message
        durable = ShareState(part.state_epoch, epoch, part.start_offset, -1, 0, tuple(
            ShareStateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
            for b in part.state_batches))
        if self.leader.get(key) is None:
            lg = hp.log
            self._state_epochs[key] = part.state_epoch
            self.leader.partitions[key] = SharePartition.initialize(
                self._config(gid), durable, leader_epoch=epoch, log_start_offset=lg.start_offset(),
                log_end_offset=lg.high_watermark())
            self._load_seq += 1
            self._loaded_at[key] = self._load_seq
            self._start_dead_letters([key])  # ARCHIVING records of an earlier leader: sent again
        return ec.NONE, None

    async def _durably(self, writes: list) -> list[int]:
        """Write each ``(key, ShareWrite)`` to the share coordinator (WriteShareGroupState v1); their error codes."""
        RQ = w.WriteShareGroupStateRequest
        codes = []
        for (gid, topic_id, index), write in writes:
            body = RQ(group_id=gid, topics=[RQ.WriteStateData(topic_id=topic_id, partitions=[RQ.PartitionData(
                partition=index, state_epoch=self._state_epochs.get((gid, topic_id, index), 0),
                leader_epoch=write.leader_epoch, start_offset=write.start_offset,
                delivery_complete_count=write.delivery_complete_count,
                state_batches=[RQ.StateBatch(first_offset=b.first_offset, last_offset=b.last_offset,
                                             delivery_state=b.delivery_state, delivery_count=b.delivery_count)
                               for b in write.state_batches])])])
            answer = await self.state_call("WriteShareGroupState", 1, body)
            code = answer.results[0].partitions[0].error_code
            if code:
                log.warning("share-partition %s/%s-%d: WriteShareGroupState answered %s", gid, topic_id, index,
                            ec.name_of(code))
            codes.append(code)
        # an acknowledgement's records stay pending until its caller completes the write, which takes its dead
        # letters then; the other writes' ARCHIVING records may go now
        self._start_dead_letters(key for (key, write), code in zip(writes, codes)
                                 if code == ec.NONE and not write.pending)
        return codes

    # ================================================================================ the dead-letter queue
    def _start_dead_letters(self, keys) -> None:
        """The DLQ writes the share-partitions of ``keys`` have ready (their ARCHIVING records durable), each
        started on its own."""
        for key in set(keys):
            for letter in self.leader.dead_letters(key):
                self._spawn(self._dead_letter(key, letter))

    async def _dead_letter(self, key, letter) -> None:
        """Write one run to the group's DLQ topic, then archive it — whether the write worked or not, as Kafka's
        ``SharePartition.initiateDLQAndArchive`` ("Failed to write to DLQ, proceeding to ARCHIVED regardless.")."""
        gid, topic_id, index = key
        try:
            await self.dlq.write(gid, topic_id, index, letter)
        except Exception as exc:  # noqa: BLE001 - refused, a storage error reading the originals, a lost link
            log.error("Failed to write to DLQ, proceeding to ARCHIVED regardless. share-partition %s/%s-%d "
                      "offsets %d-%d: %s", gid, topic_id, index, letter.first_offset, letter.last_offset,
                      exc if isinstance(exc, DeadLetterError) else repr(exc))
        write = self.leader.archive_dead_letters(key, letter)
        if write is not None:
            await self._durably([(key, write)])
            self._wake()

    async def state_call(self, api: str, version: int, body):
        """A one-key share-state request answered by the key's share coordinator: this broker's when it leads the
        key's ``__share_group_state`` partition (or nobody does: the local answer says why), else that partition's
        leader over the inter-broker links; one that cannot be reached answers COORDINATOR_NOT_AVAILABLE."""
        op = split(body, self.share._state_partitions())[0]
        topic = self.md.image.topic(SHARE_STATE_TOPIC)
        reg = topic.partitions.get(op.state_partition) if topic is not None else None
        if reg is None or reg.leader < 0 or reg.leader == self.replicas.broker_id:
            future = asyncio.get_running_loop().create_future()
            self.share.serve_state(api, body, version, True,
                                   lambda answer: future.done() or future.set_result(answer))
            return await future
        try:
            return await self.links.request(
                reg.leader, lambda conn, _prepared: conn.request(body, version, timeout=STATE_TIMEOUT_S))
        except Exception as exc:  # noqa: BLE001 - unreachable coordinator, closed connection, timeout: retried later
            log.info("%s to share coordinator %d: %s", api, reg.leader, exc)
            return key_refusal(api, op, ec.COORDINATOR_NOT_AVAILABLE)

    # ================================================================================================ events
    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _start_ticker(self) -> None:
        if self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        """Expire due locks every ``TICK_S`` and write what they released."""
        while True:
            await asyncio.sleep(TICK_S)
            writes = self.leader.expire_locks(_now_ms())
            if writes:
                self._wake()
                await self._durably(writes)

    def _connection_closed(self, conn) -> None:
        gone = self.sessions.connection_closed(id(conn))
        if gone is None:
            return
        writes = self.leader.release_member(gone.group_id, gone.member_id) if gone.member_id else []
        if gone.group_empty:
            self._spawn(self._release_then_drop(writes, gone.group_id))
        elif writes:
            self._spawn(self._durably(writes))
        if writes:
            self._wake()

    async def _release_then_drop(self, writes: list, group_id: str) -> None:
        await self._durably(writes)
        if not any(k[0] == group_id for k in self.sessions.sessions):
            self.leader.drop_group(group_id)

    def _image(self, _image) -> None:
        """Share-partitions of partitions this broker no longer leads are dropped (their new leader reads the
        durable state)."""
        for gid, topic_id, index in list(self.leader.partitions):
            hp = self.replicas.get_by_id(topic_id, index)
            if hp is None or hp.state.epoch_error(-1, leader_only=True) or \
                    hp.state.leader_epoch != self.leader.partitions[(gid, topic_id, index)].leader_epoch:
                self.leader.drop_partition(topic_id, index)


def _readable_end(hp, committed: bool) -> int:
    """Where a share-partition's reads stop: the last stable offset under ``share.isolation.level=read_committed``
    (``committed``), else the high watermark (Kafka's ``FetchIsolation`` of a share fetch, from the group's config
    as it stands at the fetch)."""
    return hp.last_stable_offset() if committed else hp.log.high_watermark()


def _ack_batch(b) -> AckBatch:
    return AckBatch(b.first_offset, b.last_offset, tuple(b.acknowledge_types))


def _by_topic(topic_cls, answers: dict) -> list:
    """Per-partition answers gathered under their topic ids, in the order first seen."""
    topics: dict = {}
    for (topic_id, _index), answer in answers.items():
        topics.setdefault(topic_id, []).append(answer)
    return [topic_cls(topic_id=t, partitions=ps) for t, ps in topics.items()]
