"""Replica fetchers: a follower broker copies its partitions from their leaders (Kafka's ``ReplicaFetcherThread``;
facts in kafka-replication-facts.md §2). One task and one connection per leader broker carry every partition this
broker follows there; the decisions on each answer are ``kraftwire.replica.follower``'s.

Each round sends one Fetch (v15+: ReplicaState with this broker's id and epoch) naming every partition with its
topic id, the leader epoch this broker knows, its log end as the fetch offset, the epoch of its last batch and its
log start, asking for at most ``replica.fetch.max.bytes`` per partition and ``replica.fetch.response.max.bytes`` in
all; the leader parks it up to ``replica.fetch.wait.max.ms`` (500) when it has nothing new. On the answer:
records are appended as they are (validated by the log: a corrupt batch is never stored), the follower's high
watermark becomes the leader's capped at its end; DivergingEpoch truncates; OFFSET_OUT_OF_RANGE asks the leader
for its end and log start (ListOffsets as a replica) and truncates or restarts the log; NOT_LEADER_OR_FOLLOWER,
UNKNOWN_LEADER_EPOCH and unknown topics back off ``replica.fetch.backoff.ms`` (1000); FENCED_LEADER_EPOCH drops
the partition from the fetcher until the image moves. A lost connection is opened again after the backoff.
Each fetcher keeps a fetch session with its leader (KIP-227, ``kraftwire.replica.fetch_session_client``): after
the first full request, a round names only the partitions whose fetch position changed (and forgets those no
longer fetched there), and the answer lists only partitions with news; a session error makes the next round a full
request at once, any other failure closes the session as well.
Fetchers dial the leader's inter-broker listener (``inter.broker.listener.name``, or the first listener of
``security.inter.broker.protocol``) with that listener's TLS and this broker's SASL login to it.
"""

from __future__ import annotations

import asyncio
import logging
import time

from kraftwire import error_codes as ec
from kraftwire.errors import KraftwireError, LogIOError
from kraftwire.ids import ZERO_UUID
from kraftwire.metadata import answers
from kraftwire.metadata.controller.topics import TOPIC_RESOURCE
from kraftwire.replica import replication_quota as rq
from kraftwire.protocol import messages as w
from kraftwire.replica.fetch_session_client import FetchSessionHandler
from kraftwire.server.edge.client import KafkaConnection
from kraftwire.server.runtime import replica_core as core

log = logging.getLogger("kraftwire.fetcher")

FETCH_VERSION = 15
FETCH_WAIT_MS = 500
BACKOFF_S = 1.0


class LeaderFetcher:
    """The partitions this broker follows on one leader broker, and the task that fetches them."""

    def __init__(self, manager, leader: int) -> None:
        self.manager = manager
        self.leader = leader
        self.partitions: dict[tuple[str, int], object] = {}  # (topic, index) -> Hosted
        self.backoff: dict[tuple[str, int], float] = {}  # partition -> loop time it may be fetched again
        self.task: asyncio.Task | None = None
        self.conn = None
        self.stopping = False
        self.session = FetchSessionHandler()

    def start(self) -> None:
        if self.task is None or self.task.done():
            self.stopping = False
            self.task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Stop the task, bounded: the loop also checks ``stopping``, and the cancel is repeated — Python 3.11's
        wait_for (under every request) can swallow a cancel that arrives as its inner future completes, and an
        ``await task`` would then wait for ever (a broker's shutdown hung on it in CI)."""
        task, self.task = self.task, None
        self.stopping = True
        if task is not None:
            for _ in range(50):
                task.cancel()
                done, _ = await asyncio.wait({task}, timeout=0.1)
                if done:
                    break
            else:
                log.warning("the fetcher of leader %d did not stop", self.leader)
        await self._close()

    async def _close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                await conn.close()
            except Exception:  # noqa: BLE001
                pass

    async def _connect(self):
        endpoint = self.manager.leader_endpoint(self.leader)
        if endpoint is None:
            return None
        host, port = endpoint
        settings = self.manager.node.settings
        self.conn = await KafkaConnection.open(host, port, timeout=5.0, client_id=f"replica-{self.manager.broker_id}",
                                               ssl_context=self.manager.tls, sasl=settings.inter_broker_sasl)
        return self.conn

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while self.partitions and not self.stopping:
            try:
                conn = self.conn or await self._connect()
                if conn is None:
                    await asyncio.sleep(BACKOFF_S)
                    continue
                now = loop.time()
                ready = {k: hp for k, hp in self.partitions.items()
                         if self.backoff.get(k, 0) <= now and not hp.failed and not self.manager.held_back(hp)}
                if not ready:  # all backing off, throttled or in an offline log directory: wait, never spin
                    waits = [t - now for t in self.backoff.values() if t > now]
                    await asyncio.sleep(min(waits) if waits else BACKOFF_S)
                    continue
                plan, request = self._request(ready)
                asked = {k: hp.state.leader_epoch for k, hp in ready.items()}
                response = await conn.request(request, FETCH_VERSION, timeout=FETCH_WAIT_MS / 1000 + 30)
                await self._handle(conn, asked, plan, response)
            except asyncio.CancelledError:
                raise
            except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
                self.session.handle_error()
                log.info("fetching from broker %d: %s; again in %.0f s", self.leader, exc, BACKOFF_S)
                await self._close()
                await asyncio.sleep(BACKOFF_S)
        await self._close()

    def _request(self, ready: dict):
        """(session plan, Fetch request) for the ``ready`` partitions: all of them in a full request, what changed
        since the last one in an incremental request."""
        F = w.FetchRequest
        config = self.manager.node.settings.config  # Kafka's replica.fetch.max.bytes and .response.max.bytes
        wanted = {}
        for hp in ready.values():
            lg = hp.log
            wanted[(hp.topic_id, hp.index)] = (hp.topic_id, F.FetchPartition(
                partition=hp.index, current_leader_epoch=hp.state.leader_epoch, fetch_offset=lg.end_offset(),
                last_fetched_epoch=lg.latest_epoch(),
                log_start_offset=lg.start_offset(), partition_max_bytes=config.replica_fetch_max_bytes,
                replica_directory_id=ZERO_UUID))
        plan = self.session.build(wanted)
        by_topic: dict = {}
        for topic_id, entry in plan.to_send.values():
            by_topic.setdefault(topic_id, []).append(entry)
        forgotten: dict = {}
        for (_, index), (topic_id, _) in plan.to_forget:
            forgotten.setdefault(topic_id, []).append(index)
        return plan, F(cluster_id=None, replica_id=-1,
                       replica_state=F.ReplicaState(replica_id=self.manager.broker_id,
                                                    replica_epoch=self.manager.replicas.broker_epoch()),
                       max_wait_ms=FETCH_WAIT_MS, min_bytes=1, max_bytes=config.replica_fetch_response_max_bytes,
                       isolation_level=0, session_id=plan.session_id, session_epoch=plan.epoch,
                       topics=[F.FetchTopic(topic_id=tid, partitions=parts) for tid, parts in by_topic.items()],
                       forgotten_topics_data=[F.ForgottenTopic(topic_id=tid, partitions=parts)
                                              for tid, parts in forgotten.items()],
                       rack_id="")

    async def _handle(self, conn, asked: dict, plan, response) -> None:
        """Each partition's answer, unless the partition moved on while the request was out: it left this fetcher,
        or a new leader epoch began (Kafka's fetcher drops such an answer too; the partition simulation found that
        acting on a stale FENCED_LEADER_EPOCH parked the partition for good). An answer the session cannot take is
        dropped: a session error means a full request next round, any other error is a failed round."""
        listed = [(t.topic_id, pd.partition_index) for t in response.responses for pd in t.partitions]
        if not self.session.handle_response(plan, response.error_code, response.session_id, listed):
            if response.error_code in (0, ec.FETCH_SESSION_ID_NOT_FOUND, ec.INVALID_FETCH_SESSION_EPOCH):
                return
            raise KraftwireError(f"fetch answered {ec.name_of(response.error_code)}")
        loop = asyncio.get_running_loop()
        for t in response.responses:
            for pd in t.partitions:
                hp = self.manager.replicas.get_by_id(t.topic_id, pd.partition_index)
                key = (hp.topic, hp.index) if hp is not None else None
                if (hp is None or key not in self.partitions or self.partitions[key] is not hp or hp.failed
                        or asked.get(key) != hp.state.leader_epoch):
                    continue
                self.manager.received(hp, len(pd.records or b""))
                try:
                    await self._partition(conn, hp, pd, loop)
                except LogIOError as exc:
                    self.manager.replicas.dir_failed(hp.root, exc)

    async def _partition(self, conn, hp, pd, loop) -> None:
        """One partition's answer: the replica manager decides (``ReplicaCore.follower_fetched``), this fetcher
        carries it out (back off, ask the leader's offsets, drop a fenced partition)."""
        key = (hp.topic, hp.index)
        div = getattr(pd, "diverging_epoch", None) if pd.error_code == ec.NONE else None
        diverging = (div.epoch, div.end_offset) if div is not None and div.epoch >= 0 and div.end_offset >= 0 else None
        step = self.manager.replicas.follower_fetched(hp, pd.error_code, diverging, pd.records, pd.high_watermark,
                                                      pd.log_start_offset)
        if step == core.APPENDED:
            self.backoff.pop(key, None)
        elif step == core.OUT_OF_RANGE:
            await self._out_of_range(conn, hp)
        elif step == core.FENCED:
            self.partitions.pop(key, None)
        elif step == core.BACKOFF:
            self.backoff[key] = loop.time() + BACKOFF_S

    async def _out_of_range(self, conn, hp) -> None:
        L = w.ListOffsetsRequest
        ends = {}
        for ts in (-1, -2):
            body = L(replica_id=self.manager.broker_id, isolation_level=0, topics=[L.ListOffsetsTopic(
                name=hp.topic, partitions=[L.ListOffsetsPartition(partition_index=hp.index,
                                                                  current_leader_epoch=hp.state.leader_epoch,
                                                                  timestamp=ts)])])
            answer = await conn.request(body, 4, timeout=10)
            p = answer.topics[0].partitions[0]
            if p.error_code:
                self.backoff[(hp.topic, hp.index)] = asyncio.get_running_loop().time() + BACKOFF_S
                return
            ends[ts] = p.offset
        self.manager.replicas.follower_out_of_range(hp, ends[-1], ends[-2])


class ReplicaFetchers:
    """Which leader each followed partition is fetched from; one ``LeaderFetcher`` per leader broker."""

    def __init__(self, replicas, node) -> None:
        self.replicas = replicas
        self.node = node
        self.broker_id = node.settings.node_id
        self.fetchers: dict[int, LeaderFetcher] = {}
        self.closed = False
        #: TLS of the connections to the leaders (an SSL or SASL_SSL inter-broker listener)
        self.tls = node.settings.inter_broker_ssl_context()
        #: follower.replication.throttled.rate's quota (KIP-73)
        self.replication = rq.ReplicationQuota()

    # ------------------------------------------------------------------------------------------------ throttles
    def _follower_rate(self) -> int | None:
        return rq.parse_rate(self.replicas.broker_configs().value(rq.FOLLOWER_RATE))

    def _throttled(self, hp) -> bool:
        configs = self.node.metadata.image.configs.get((TOPIC_RESOURCE, hp.topic), {})
        return rq.is_throttled(rq.throttled_partitions(configs.get(rq.FOLLOWER_REPLICAS), self.broker_id), hp.index)

    def held_back(self, hp) -> bool:
        """KIP-73 on the follower: a throttled partition this broker is not in the ISR of is left out of the fetch
        while its throttled bytes are over follower.replication.throttled.rate (``replica.replication_quota``)."""
        bound = self._follower_rate()
        if bound is None or not self._throttled(hp):
            return False
        return self.replication.holds_back(self.broker_id in hp.state.isr, bound, int(time.monotonic() * 1000))

    def received(self, hp, size: int) -> None:
        """Record the bytes a fetch answer brought for a throttled partition."""
        if size and self._follower_rate() is not None and self._throttled(hp):
            self.replication.record(size, int(time.monotonic() * 1000))

    def leader_endpoint(self, broker_id: int):
        """(host, port) of the leader's inter-broker listener (``inter.broker.listener.name``), None while the image
        has no such endpoint for it."""
        ep = answers.broker_endpoint(self.node.metadata.image, broker_id, self.node.settings.inter_broker_listener)
        return None if ep is None else (ep.host, ep.port)

    def follow(self, hp) -> None:
        """Fetch ``hp`` from its leader (moving it from any other fetcher)."""
        if self.closed:
            return
        key = (hp.topic, hp.index)
        self.unfollow(key)
        leader = hp.state.leader
        if leader < 0 or leader == self.broker_id:
            return
        fetcher = self.fetchers.get(leader)
        if fetcher is None:
            fetcher = self.fetchers[leader] = LeaderFetcher(self, leader)
        fetcher.partitions[key] = hp
        fetcher.backoff.pop(key, None)
        fetcher.start()

    def unfollow(self, key) -> None:
        for fetcher in self.fetchers.values():
            fetcher.partitions.pop(key, None)
            fetcher.backoff.pop(key, None)

    async def close(self) -> None:
        self.closed = True
        fetchers, self.fetchers = list(self.fetchers.values()), {}
        for fetcher in fetchers:
            await fetcher.stop()
