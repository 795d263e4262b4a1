"""KIP-500 roles on one node: ``process.roles=controller`` (a voter), ``broker`` (an observer of the quorum with its
node id: it fetches the log, never votes, never stands for election) and ``broker,controller`` (combined: both in one
process).

* **Listeners.** ``controller.listener.names`` separates the controller listener from client listeners as in Kafka:
  when a node has client listeners, the controller listener refuses client APIs (Produce, ListOffsets, groups,
  InitProducerId) and the client listeners refuse the quorum's RPCs (Vote, Begin/EndQuorumEpoch, FetchSnapshot,
  BrokerRegistration, BrokerHeartbeat); ApiVersions on each lists only what that listener serves. A node whose only
  listener is the controller listener (the seed configs) serves everything there, as before.
* **Broker lifecycle.** A node with the broker role registers with the active controller (BrokerRegistration, to the
  Raft leader's voter endpoint) and heartbeats every ``broker.heartbeat.interval.ms``; a refused registration is
  logged with the error's name and sent again after Kafka's resend backoff (``metadata.broker_backoff``: 100 ms
  doubling up to ``broker.session.timeout.ms``); a node with the controller role answers those while it leads.
  On shutdown a broker asks for a controlled shutdown (WantShutDown) and waits,
  bounded, for ShouldShutDown. ``test_server.roles.LegacyRoles`` is the test server's (``lifecycle``: kraftwire
  control records, progress as the high watermark); ``kraft_roles.MetadataRoles`` the KRaft node's (Kafka's records,
  progress as the image's offset).
* **Who serves clients.** ``serving_brokers()`` is what Metadata and DescribeCluster list: voters that are not
  registered brokers (their controller listener serves clients), and registered brokers that are Online (at their
  registered client endpoint); never a Fenced, Stopping or Offline broker.
"""

from __future__ import annotations

import asyncio
import logging
import random
import struct
import time
import uuid

from kraftwire import error_codes as ec
from kraftwire.errors import KraftwireError
from kraftwire.ids import NO_ID
from kraftwire.metadata.broker_backoff import ResendBackoff
from kraftwire.protocol import served
from kraftwire.protocol.api_versions import answer_frame
from kraftwire.server.edge.client import KafkaConnection
from kraftwire.server.edge.dispatcher import DispatcherView, take_turn

log = logging.getLogger("kraftwire.roles")

API_VERSIONS = served.key("ApiVersions")
#: served only on a controller listener (when the node has dedicated client listeners): the quorum's RPCs and what
#: brokers ask the active controller (Kafka's ``"listeners": ["controller"]`` APIs; a broker sends them to a voter's
#: endpoint). AddRaftVoter and RemoveRaftVoter are not among them: Kafka 4 serves them on broker listeners too (a
#: broker forwards them)
CONTROLLER_ONLY = served.keys("Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "FetchSnapshot", "BrokerRegistration",
                              "BrokerHeartbeat", "UpdateRaftVoter", "AlterPartition", "AllocateProducerIds",
                              "AssignReplicasToDirs", "ControllerRegistration", "Envelope")
#: served only on client listeners (when the node has dedicated client listeners)
CLIENT_ONLY = served.keys("Produce", "ListOffsets", "OffsetCommit", "OffsetFetch", "FindCoordinator", "JoinGroup",
                          "Heartbeat", "LeaveGroup", "SyncGroup", "InitProducerId", "ConsumerGroupHeartbeat",
                          "ConsumerGroupDescribe", "ShareGroupHeartbeat", "ShareGroupDescribe")
#: a broker's lifecycle states (KIP-631), as both kinds of node name them
FENCED, ONLINE, STOPPING, OFFLINE = 1, 2, 3, 4
STATE_NAMES = {FENCED: "Fenced", ONLINE: "Online", STOPPING: "Stopping", OFFLINE: "Offline"}
TICK_S = 0.1
SHUTDOWN_WAIT_S = 5.0
FENCED_HEARTBEAT_MS = 100


class ListenerDispatcher(DispatcherView):
    """One listener's view of the node's dispatcher: refuses (closes the connection on) the api keys in ``denied``
    and answers ApiVersions without them."""

    def __init__(self, base, denied: frozenset, name: str) -> None:
        super().__init__(base)
        self.denied = denied
        self.name = name

    def registered(self) -> dict:
        return {k: v for k, v in self.base.registered().items() if k not in self.denied}

    def api_identity(self):
        """A controller listener does not check whom a client means to reach (KIP-1242 is the broker's)."""
        return None if self.denied is CLIENT_ONLY else self.base.api_identity()

    def dispatch(self, frame: bytes, conn) -> None:
        if len(frame) >= 8:
            (api_key,) = struct.unpack_from(">h", frame, 0)
            if api_key == API_VERSIONS:
                started = time.perf_counter_ns()
                (correlation_id,) = struct.unpack_from(">i", frame, 4)
                take_turn(conn, correlation_id)
                throttle = self.base.request_time_before_dispatch(frame, conn, started)
                conn.send_chunks(answer_frame(frame, self.registered(), self.api_features(), self.api_identity(),
                                              throttle), correlation_id)
                if throttle:
                    conn.throttle(throttle)
                return
            if api_key in self.denied:
                self.base.count_error(str(api_key))
                log.warning("closing connection from %s: api key %d is not served on listener %s", conn.peer, api_key,
                            self.name)
                conn.close()
                return
        self.base.dispatch(frame, conn)


def new_incarnation() -> uuid.UUID:
    return uuid.uuid4()


class Roles:
    """What both kinds of node share: the listener split, the broker's registration and heartbeat loop with its
    resend backoff, controlled shutdown. The broker states come from the hooks below."""

    def __init__(self, node) -> None:
        self.node = node
        s = node.settings
        self.settings = s
        self.session_timeout_ms = s.broker_session_timeout_ms
        self.heartbeat_interval_ms = s.broker_heartbeat_interval_ms
        self.incarnation = new_incarnation()
        self.broker_epoch = -1
        #: consecutive refused registrations, and the wait the last one asked for (None: none pending)
        self.resend = ResendBackoff(self.session_timeout_ms)
        self._retry_ms: int | None = None
        self._jitter = random.Random()
        self.registered_at: float | None = None
        self.online_at: float | None = None
        self.started_at = time.monotonic()
        self._shutting = False
        self._stopping = False
        self._should_shut_down = False
        self._tasks: list[asyncio.Task] = []
        self._conn: KafkaConnection | None = None
        self._conn_target = None
        self._install()

    # ------------------------------------------------------------------------------------------------ the hooks
    # A node's kind fills these: ``kraft_roles.MetadataRoles`` (Kafka's records, progress as the image's offset)
    # and the test server's ``TestServerRoles`` (kraftwire's control records, progress as the high watermark).
    def _install(self) -> None:
        """Set ``self.controller`` (the legacy controller, or None) and serve what the node's kind answers."""
        raise NotImplementedError

    def catch_up(self) -> None:
        """Fold what the log committed into the broker states before they are read."""
        raise NotImplementedError

    def _controller_tick(self) -> None:
        """What must happen without a request, every ``TICK_S``: session expiry, a broker watching its state."""
        raise NotImplementedError

    def _my_state(self):
        """(broker epoch, lifecycle state) of this broker as the log says, None before it registered."""
        raise NotImplementedError

    def _registration(self):
        """(BrokerRegistrationRequest, version) this broker sends."""
        raise NotImplementedError

    def _heartbeat(self):
        """(BrokerHeartbeatRequest, version) this broker sends."""
        raise NotImplementedError

    # ------------------------------------------------------------------------------------------------ listeners
    def dispatcher_for(self, ep):
        s = self.settings
        names = set(s.controller_listener_names or (s.controller_listener,))
        dedicated = any(e.name not in names for e in s.listeners)
        if not dedicated:
            return self.node.dispatcher
        if ep.name in names:
            return ListenerDispatcher(self.node.dispatcher, CLIENT_ONLY, ep.name)
        return ListenerDispatcher(self.node.dispatcher, CONTROLLER_ONLY, ep.name)

    # ------------------------------------------------------------------------------------------------ running
    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self._tick_loop()))
        if self.settings.is_broker:
            self._tasks.append(loop.create_task(self._broker_loop()))

    async def _tick_loop(self) -> None:
        last_state = None
        while not self._stopping:
            await asyncio.sleep(TICK_S)
            try:
                self._controller_tick()
                if self.settings.is_broker:
                    state = self._my_state()
                    if state != last_state and state is not None:
                        if state[1] == ONLINE and self.online_at is None:
                            self.online_at = time.monotonic()
                            log.info("broker %d is Online (epoch %d) %.3f s after start", self.settings.node_id,
                                     state[0], self.online_at - self.started_at)
                        else:
                            log.info("broker %d is %s (epoch %d)", self.settings.node_id,
                                     STATE_NAMES.get(state[1], state[1]), state[0])
                        last_state = state
            except Exception as exc:  # noqa: BLE001 - the tick must survive a bad record or a race
                log.warning("roles tick: %s", exc, exc_info=True)

    def _leader_endpoint(self):
        raft = self.node.raft
        if raft is None:
            return None
        leader = raft.quorum.leader_id
        if leader == NO_ID:
            return None
        return self.settings.voter(leader)

    async def _request(self, body, version: int):
        voter = self._leader_endpoint()
        if voter is None:
            return None
        timeout = self.settings.config.controller_quorum_request_timeout_ms / 1000.0
        if self._conn is None or self._conn_target != voter:
            await self._close_conn()
            self._conn = await KafkaConnection.open(voter.host, voter.port, timeout=timeout,
                                                    client_id=f"kraftwire-broker-{self.settings.node_id}",
                                                    ssl_context=self.node.controller_tls,
                                                    sasl=self.settings.controller_sasl)
            self._conn_target = voter
        try:
            return await self._conn.request(body, version, timeout=timeout)
        except BaseException:
            await self._close_conn()
            raise

    async def _close_conn(self) -> None:
        conn, self._conn, self._conn_target = self._conn, None, None
        if conn is not None:
            await conn.close()

    async def _broker_step(self) -> None:
        s = self.settings
        if self.broker_epoch < 0:
            body, version = self._registration()
            resp = await self._request(body, version)
            if resp is None:
                return
            if resp.error_code == 0:
                self.resend.succeeded()
                self.broker_epoch = resp.broker_epoch
                self.registered_at = time.monotonic()
                log.info("broker %d registered with controller %d: epoch %d (Fenced until caught up)", s.node_id,
                         self._conn_target.node_id if self._conn_target else -1, self.broker_epoch)
            elif resp.error_code != ec.NOT_CONTROLLER:  # Kafka's lifecycle manager backs off; NOT_CONTROLLER
                # is its controller channel's to retry at once, with the new leader
                self._retry_ms = self.resend.failed(self._jitter.random())
                log.warning("broker %d: BrokerRegistration refused with %s; registering again in %d ms", s.node_id,
                            ec.name_of(resp.error_code), self._retry_ms)
            return
        body, version = self._heartbeat()
        resp = await self._request(body, version)
        if resp is None:
            return
        if resp.error_code in (ec.STALE_BROKER_EPOCH, ec.BROKER_ID_NOT_REGISTERED):
            log.info("broker %d: the controller does not know epoch %d (error %d): registering again", s.node_id,
                     self.broker_epoch, resp.error_code)
            self.broker_epoch = -1
        elif resp.error_code == 0:
            self.resend.succeeded()
            if resp.should_shut_down:
                self._should_shut_down = True

    def _advertised(self):
        return self.settings.advertised_client_listeners()

    async def _broker_loop(self) -> None:
        while not self._stopping:
            try:
                await self._broker_step()
            except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
                log.debug("broker %d: controller request failed: %s", self.settings.node_id, exc)
            except Exception as exc:  # noqa: BLE001 - the broker must keep heartbeating after an unexpected failure
                log.warning("broker %d: controller request failed: %s: %s", self.settings.node_id,
                            type(exc).__name__, exc)
                await self._close_conn()
            registered = self.broker_epoch >= 0
            state = self._my_state() if registered else None
            online = state is not None and state[1] == ONLINE
            if self._retry_ms is not None:  # refused: the resend backoff
                wait, self._retry_ms = self._retry_ms, None
            elif online:
                wait = self.heartbeat_interval_ms
            elif registered:  # Fenced: report progress often so the controller unfences as soon as it is caught up
                wait = min(self.heartbeat_interval_ms, FENCED_HEARTBEAT_MS)
            else:
                wait = self.settings.config.controller_quorum_retry_backoff_ms
            await asyncio.sleep(max(wait, 20) / 1000.0)

    async def controlled_shutdown(self, timeout_s: float = SHUTDOWN_WAIT_S) -> None:
        """Broker role: WantShutDown heartbeats until the controller answers ShouldShutDown (bounded); the
        registry then shows this broker Stopping, then Offline."""
        tasks, self._tasks = list(self._tasks), []
        # Wait until they have stopped: a heartbeat in flight still reads from the controller connection, and a
        # second reader on it fails ("read() called while another coroutine is already waiting"). The loops also
        # check ``_stopping``, and the cancel is repeated: Python 3.11's wait_for (under every request) can swallow
        # a cancel that arrives as its inner future completes, and a loop that lost it would run on for ever.
        self._stopping = True
        pending = set(tasks)
        for _ in range(50):
            if not pending:
                break
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=0.1)
        if pending:
            log.warning("broker %d: %d background task(s) did not stop", self.settings.node_id, len(pending))
        if not self.settings.is_broker or self.broker_epoch < 0:
            await self._close_conn()
            return
        self._shutting = True
        log.info("broker %d: controlled shutdown (Stopping)", self.settings.node_id)
        deadline = time.monotonic() + timeout_s
        while not self._should_shut_down and time.monotonic() < deadline and self.broker_epoch >= 0:
            try:
                await asyncio.wait_for(self._broker_step(), max(0.05, deadline - time.monotonic()))
            except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
                log.debug("controlled shutdown request failed: %s", exc)
            except Exception as exc:  # noqa: BLE001 - shutting down must go on whatever one request did
                log.warning("controlled shutdown request failed: %s: %s", type(exc).__name__, exc)
            if not self._should_shut_down:
                await asyncio.sleep(0.1)
        log.info("broker %d: controlled shutdown %s", self.settings.node_id,
                 "complete (Offline)" if self._should_shut_down else "not confirmed by the controller in time")
        await self._close_conn()
