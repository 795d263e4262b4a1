"""The node: wires settings, log, quorum-state, Raft core, driver, peers, listeners and the metrics endpoint.

Two kinds: a KRaft node (``Node(settings)``, what ``server-start`` runs), whose log is ``__cluster_metadata`` with
Kafka's metadata records (``metadata_node``, ``kraft_apis``), and the raft test server (``Node(settings,
topic=...)``), which serves its log to clients as that topic (``broker``, the legacy ``lifecycle``).

KIP-853: a node without static voters takes the voter set its metadata log names (the newest snapshot naming one,
then the log's VotersRecords), else asks ``controller.quorum.bootstrap.servers`` (DescribeQuorum: a broker, or a
controller formatted with ``--no-initial-controllers`` still to be added); the core follows the set from there, and
after each Ready the edge dials, forwards to and describes the voters it names. AddRaftVoter / RemoveRaftVoter are
checked here as Kafka's raft client checks them, then decided by the core (an add first asks the new voter its
kraft.version range with ApiVersions).

``Node(settings).start()`` refuses an unformatted directory (no meta.properties) and a node.id that does not match
it; ``shutdown()`` is graceful: a leader resigns (EndQuorumEpoch to the voters, parked fetches answered), then the
listeners close, the log is flushed and closed (clean-shutdown marker written).

The node's Raft traffic (RPCs in, the core's messages out, the voters dialled) is ``raft_io.RaftIO``'s, its own
quorum APIs (DescribeQuorum, Add/RemoveRaftVoter, the test server's DescribeCluster and Metadata)
``apis.quorum_apis.QuorumApis``'; both are mixed into ``Node``.
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import logging
import os
import random
import socket
import ssl
import time
from dataclasses import replace

from kraftwire import records
from kraftwire.config import ControllerEndpointError, controller_endpoints
from kraftwire.errors import ConfigError, KraftwireError, LogError, StorageNotFormattedError
from kraftwire.ids import METADATA_TOPIC_ID, NO_ID, PERFORMANCE_TEST_TOPIC_ID, ZERO_UUID, ReplicaKey
from kraftwire.log.meta_properties import MetaPropertiesError, ensure_formatted, read_meta_properties
from kraftwire.log.quorum_state_store import FileQuorumStateStore
from kraftwire.log.segmented import SegmentedLog
from kraftwire.metadata.bootstrap import BOOTSTRAP_FILE, decode_bootstrap_file, scram_credentials
from kraftwire.protocol.api_versions import Identity
from kraftwire.raft.node import RaftNode
from kraftwire.raft.states import ResignedState
from kraftwire.raft.voter_set import VoterNode, VoterSet
from kraftwire.security.sasl import scram
from kraftwire.server.apis.client_quotas import QuotaEdge
from kraftwire.server.apis.group_apis import GroupApis
from kraftwire.server.apis.kraft_apis import KraftApis
from kraftwire.server.apis.partition_apis import PartitionApis
from kraftwire.server.apis.quorum_apis import QuorumApis
from kraftwire.server.apis.share_apis import ShareApis
from kraftwire.server.apis.txn_apis import TxnApis
from kraftwire.server.edge import wire
from kraftwire.server.edge.access import Access
from kraftwire.server.edge.client import describe_quorum
from kraftwire.server.edge.connection import InboundConnection
from kraftwire.server.edge.connection_gate import ConnectionGate, protected_listeners
from kraftwire.server.edge.dispatcher import Dispatcher
from kraftwire.server.edge.envelope import EnvelopeApi
from kraftwire.server.edge.forward_links import ForwardLinks
from kraftwire.server.edge.metrics import Registry
from kraftwire.server.edge.peers import Peers
from kraftwire.server.edge.sasl import SaslDispatcher
from kraftwire.server.edge.kafka_meters import LoopIdle, ShareMeters, TopicMeters
from kraftwire.server.node import gauges, kafka_metrics
from kraftwire.server.node.kraft_roles import MetadataRoles
from kraftwire.server.node.raft_io import RaftIO
from kraftwire.server.node.settings import NodeSettings, Voter
from kraftwire.server.runtime.clocks import wall_ms as now_ms
from kraftwire.server.runtime.driver import Driver, election_from_store
from kraftwire.server.runtime.metadata_node import MetadataNode, check_metadata_log
from kraftwire.server.runtime.replicas import ReplicaManager

log = logging.getLogger("kraftwire.node")

PERFORMANCE_TEST_TOPIC = "__raft_performance_test"
STATUS_INTERVAL_S = 30.0


def topic_id_for(name: str):
    return PERFORMANCE_TEST_TOPIC_ID if name == PERFORMANCE_TEST_TOPIC else METADATA_TOPIC_ID


class StartupError(KraftwireError):
    """The node cannot start (unformatted directory, identity mismatch, port in use)."""


class Node(RaftIO, QuorumApis):
    def __init__(self, settings: NodeSettings, *, listen_sockets: dict[str, socket.socket] | None = None,
                 topic: str | None = None, listeners=()) -> None:
        if topic is not None and topic != settings.config.metadata_log_topic:
            settings = replace(settings, config=replace(settings.config, metadata_log_topic=topic))
        self.settings = settings
        self.listen_sockets = dict(listen_sockets or {})
        self.raft_listeners = list(listeners)
        self.metrics = Registry()
        self.metrics.refresh = lambda: gauges.refresh(self)
        self.metrics.sources.append(lambda: kafka_metrics.families(self))
        #: BrokerTopicMetrics' and ShareGroupMetrics' counters (a broker's Produce, Fetch and share APIs add to them)
        self.topic_meters, self.share_meters = TopicMeters(), ShareMeters()
        #: the event loop's idle share (RequestHandlerAvgIdlePercent), once started on a selector loop
        self.loop_idle: LoopIdle | None = None
        self.dispatcher = Dispatcher(self.metrics)
        self._inbound: dict[int, tuple] = {}
        self._ids = itertools.count(1)
        self._servers: list[asyncio.base_events.Server] = []
        self.bound: dict[str, tuple[str, int]] = {}
        self.raft: RaftNode | None = None
        self.driver: Driver | None = None
        self.peers: Peers | None = None
        self.forward_links: ForwardLinks | None = None  # kept connections to the controllers (``forward``)
        #: core correlation id -> time.perf_counter() when a voter change went to the core (for its metrics)
        self._voter_changes: dict[int, float] = {}
        self.log = None
        self.cluster_id = ""
        self.directory_id = None
        self.started_ms = 0
        self._membership_seen = -1  # the core's membership version the voters below were taken at
        self._dialed: tuple = ()  # where the peers dial each voter now (see _dial_leader_where_it_listens)
        #: (direction, node, request) of the cluster-id refusals logged as warnings: a node of another cluster retries
        #: every controller.quorum.retry.backoff.ms, so each pair is warned about once, then at DEBUG (the
        #: inconsistent_cluster_id_total metric counts every one)
        self._cluster_id_warned: set[tuple[str, int, str]] = set()
        #: TLS contexts: per SSL listener served, and for connections to the controller listener (None: PLAINTEXT)
        self.server_tls: dict[str, ssl.SSLContext] = {}
        self.controller_tls: ssl.SSLContext | None = None
        #: set by the runner on SIGINT/SIGTERM: ends a quorum discovery that is still waiting for an answer
        self.stop_requested: asyncio.Event | None = None
        #: (min version, handler) for client Fetch requests, set by the broker APIs before ``start()``
        self.broker_fetch = None
        #: a KRaft broker's hosted topic partitions (``replicas.ReplicaManager``), else None
        self.replicas = None
        self.partition_apis = None
        #: a KRaft broker's group coordinator (``group_apis.GroupApis``), else None
        self.group_apis = None
        #: a KRaft broker's transaction coordinator (``txn_apis.TxnApis``), else None
        self.txn_apis = None
        #: a KRaft broker's share coordinator and share groups (``share_apis.ShareApis``), else None
        self.share_apis = None
        #: ACL checks (``authorizer.class.name`` set on a KRaft node), else None: everything is allowed
        self.authorizer = None
        #: a KRaft node's client quotas (``client_quotas.QuotaEdge``), else None
        self.quotas = None
        #: a KRaft broker's connection quotas (``connection_gate.ConnectionGate``), else None
        self.connection_gate = None
        #: a KRaft node (``topic`` None): its log is ``__cluster_metadata`` holding Kafka's metadata records, folded
        #: into ``metadata``'s image; else the raft test server, serving its log to clients as ``topic``
        self.metadata = None
        if topic is None:
            self.metadata = MetadataNode(self)
            self.raft_listeners.append(self.metadata)
            md = self.metadata
            self.authorizer = Access.from_config(settings.config, lambda: md.image, self._metadata_caught_up)
            self.dispatcher.gate = self.authorizer.gate if self.authorizer is not None else None
            self.quotas = QuotaEdge(self.metadata, settings.config)  # client quotas, from the image (KIP-13/124/219)
            self.dispatcher.request_quota = self.quotas
            if settings.is_broker:  # connection quotas on the client listeners (KIP-402, KIP-612)
                self.connection_gate = ConnectionGate(self.metadata, settings.node_id, settings.config.raw,
                                                      settings.config, protected_listeners(settings))
            kraft = KraftApis(self, self.metadata)
            kraft.register()
            if settings.is_controller:
                EnvelopeApi(self).register()
            if settings.is_broker:  # the topic partitions the image assigns this broker (the partitions issue)
                self.replicas = ReplicaManager(self)
                self.metadata.on_image.append(self.replicas.apply)
                self.partition_apis = PartitionApis(self, self.metadata, self.replicas, kraft)
                self.partition_apis.register()
                self.group_apis = GroupApis(self, self.metadata, self.replicas, kraft)
                self.group_apis.register()
                self.txn_apis = TxnApis(self, self.metadata, self.replicas, kraft, self.partition_apis.ids)
                self.txn_apis.register()
                self.share_apis = ShareApis(self, self.metadata, self.replicas, self.group_apis, kraft)
                self.share_apis.register()
            self.roles = MetadataRoles(self)
        else:
            if settings.config.authorizer_class_name:
                raise ConfigError("authorizer.class.name", settings.config.authorizer_class_name,
                                  "ACLs live in a KRaft cluster's metadata log (server-start); the test server has "
                                  "none to check")
            self._serve_log_as_topic()

    def _serve_log_as_topic(self) -> None:
        """The hook of a node whose log is served to clients as ``topic``: register the client APIs and set
        ``self.roles``. The raft test server fills it (``test_server.server.RaftTestServer``); the KRaft node knows
        nothing of it."""
        raise NotImplementedError("a node serving its log as a client topic is the raft test server "
                                  "(kraftwire.server.test_server.server.RaftTestServer)")

    # ================================================================================================================
    # start
    # ================================================================================================================
    async def start(self) -> None:
        s = self.settings
        try:
            self.server_tls = {ep.name: ctx for ep in s.listeners
                               if (ctx := s.server_ssl_context(ep.name)) is not None}
            self.controller_tls = s.controller_ssl_context()
        except ConfigError as exc:
            raise StartupError(f"configuration error: {exc}") from exc
        for warning in s.warnings:
            log.warning("%s", warning)
        if s.ignored_keys:
            log.info("These configurations '%s' were supplied but are not used by kraftwire.", ", ".join(s.ignored_keys))
        for key in s.unknown_keys:
            log.warning("unknown configuration '%s' (not a Kafka or kraftwire key): ignored", key)
        try:
            meta = ensure_formatted(s.metadata_dir, node_id=s.node_id)
            for d in s.config.all_log_dirs():
                other = read_meta_properties(d) if d != s.metadata_dir else meta
                if other is None:
                    raise StorageNotFormattedError(f"log directory {d} is not formatted (no meta.properties); "
                                                   "run 'kraftwire storage format' on every log directory")
                if other.cluster_id != meta.cluster_id or other.node_id != meta.node_id:
                    raise MetaPropertiesError(f"log directory {d} belongs to cluster {other.cluster_id} node "
                                              f"{other.node_id}, {s.metadata_dir} to cluster {meta.cluster_id} "
                                              f"node {meta.node_id}")
        except (StorageNotFormattedError, MetaPropertiesError) as exc:
            raise StartupError(str(exc)) from exc
        self.cluster_id = meta.cluster_id
        if self.metadata is not None:
            self.metadata.start(self.cluster_id)
            if s.is_broker:  # ApiVersions v5: a client meaning another node is told to bootstrap again (KIP-1242)
                self.dispatcher.identity = Identity(self.cluster_id, s.node_id)
        if self.replicas is not None:
            try:
                self.replicas.start()
            except OSError as exc:
                raise StartupError(f"cannot read the log directories: {exc}") from exc
        self.directory_id = meta.directory_id
        self.topic = wire.Topic(s.topic, topic_id_for(s.topic))
        try:
            self.log = SegmentedLog.from_config(s.config, topic_id=self.topic.topic_id)
        except LogError as exc:
            raise StartupError(f"cannot open the log in {s.partition_dir}: {exc}") from exc
        if self.log.recovery_report:
            log.info("log %s opened: %s", self.log.directory, "; ".join(self.log.recovery_report))
        if self.metadata is not None:
            why = check_metadata_log(self.log)
            if why:
                self.log.close()
                raise StartupError(
                    f"the log in {s.partition_dir} is not a KRaft metadata log: {why}. It was written by an earlier "
                    "kraftwire (whose server-start served its log as a client topic) or by 'kraftwire test-server'. "
                    "A KRaft node's __cluster_metadata holds Kafka's metadata records only: format a new directory "
                    "(kraftwire storage format), or serve this one with 'kraftwire test-server'")
        store = FileQuorumStateStore(self.log.directory)
        try:
            stored = election_from_store(store.read())
        except LogError as exc:
            self.log.close()
            raise StartupError(f"cannot read {store.path}: {exc}") from exc
        voter_set = None  # (kraft.version, VotersRecord, voters) when the metadata log names the voters
        quorum_set = None  # the VoterSet a dynamic quorum answered with, for a node whose log names none yet
        if not s.voters:
            voter_set = self._voters_from_log() if self.metadata is not None else None
            if voter_set is not None:
                voters = voter_set[2]
            else:
                try:
                    voters, quorum_set = await self._discover_voters()
                except StartupError:
                    self.log.close()
                    raise
            s = self.settings = self.roles.settings = replace(s, voters=voters)
        raft_config = replace(s.raft_config(self.cluster_id), directory_id=self.directory_id)
        if voter_set is not None:
            raft_config = replace(raft_config, kraft_version=voter_set[0], voters_record=voter_set[1],
                                  voter_set=VoterSet.from_record(voter_set[1]))
        elif quorum_set is not None:
            # KIP-853, a controller formatted with --no-initial-controllers (or a broker): the quorum's set until
            # the log this node fetches names its own
            raft_config = replace(raft_config, kraft_version=1, voter_set=quorum_set)
        if raft_config.kraft_version >= 1 and "controller" in s.config.process_roles:
            raft_config = replace(raft_config, local_endpoints=_local_controller_endpoints(s.config.raw))
        self.raft = RaftNode(raft_config, self.log, stored, random.Random(), now_ms())
        for listener in self.raft_listeners:
            self.raft.register(listener)
        # quorum-state follows kraft.version: data_version 0 with the static voters, 1 with directory ids
        self.driver = Driver(self.raft, self.log, store, self._route, metrics=self.metrics,
                             static_voters=None if self.raft.membership.dynamic else raft_config.voters)
        self.peers = Peers(s.node_id, s.voters, self.topic, directory_id=self.directory_id,
                           request_timeout_ms=raft_config.request_timeout_ms, deliver=self._deliver_response,
                           on_failed=self.driver.request_failed, metrics=self.metrics,
                           ssl_context=self.controller_tls, sasl=s.controller_sasl)
        self._membership_seen = -1
        self._dialed = tuple(s.voters)  # where the peers dial each voter now
        self._check_membership()  # the log may name a later set than the one the node started from
        self.driver.on_ready.append(self._check_membership)
        s = self.settings
        self._register_handlers()
        self.dispatcher.on_close.append(self._connection_closed)
        loop = asyncio.get_running_loop()
        self.loop_idle = LoopIdle.install(loop)
        try:
            for ep in s.listeners:
                sock = self.listen_sockets.pop(ep.name, None)
                tls = self.server_tls.get(ep.name)
                rules = s.principal_rules(ep.name)
                dispatcher = self.roles.dispatcher_for(ep)
                sasl = s.sasl_of(ep.name)
                if sasl is not None:
                    dispatcher = SaslDispatcher(dispatcher, sasl, self._scram_credentials(sasl))
                gate = self.connection_gate if ep.name not in s.controller_listener_names else None
                factory = (lambda d, r, n, g: lambda: InboundConnection(d, s.max_frame_bytes, r, n, g))(
                    dispatcher, rules, ep.name, gate)
                if sock is not None:
                    server = await loop.create_server(factory, sock=sock, ssl=tls)
                else:
                    try:
                        server = await loop.create_server(factory, ep.host or None, ep.port, reuse_address=True,
                                                          ssl=tls)
                    except OSError as exc:
                        # "localhost" may also name ::1 on a host without IPv6: serve the IPv4 loopback then
                        if ep.host != "localhost" or exc.errno not in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                            raise
                        server = await loop.create_server(factory, "127.0.0.1", ep.port, reuse_address=True,
                                                          ssl=tls)
                self._servers.append(server)
                addr = server.sockets[0].getsockname()
                self.bound[ep.name] = (addr[0], addr[1])
                log.info("listening on %s://%s:%d (%s)", ep.name, addr[0], addr[1], s.protocol_of(ep.name))
            if s.metrics_port:
                host, port = self.metrics.serve(s.metrics_host, s.metrics_port, loop)
                log.info("metrics on http://%s:%d/metrics", host, port)
        except OSError as exc:
            self.log.close()
            raise StartupError(f"cannot listen: {exc}") from exc
        self.started_ms = now_ms()
        log.info("node %d of cluster %s: log %s, voters %s", s.node_id, self.cluster_id, self.log.directory,
                 ",".join(f"{v.node_id}@{v.host}:{v.port}" for v in s.voters))
        _log_codec()
        self.driver.start()
        self.roles.start()
        self._status_task = loop.create_task(self._status_loop())
        if self.replicas is not None:
            self._replica_task = loop.create_task(self._replica_beat())

    async def _replica_beat(self, interval_s: float = 1.0) -> None:
        """The hosted partitions' offset checkpoints (high watermarks, recovery points, log starts)."""
        while True:
            await asyncio.sleep(interval_s)
            try:
                self.replicas.beat()
            except Exception as exc:  # noqa: BLE001 - the beat must survive; a failed dir is already offline
                log.warning("replica checkpoints: %s", exc, exc_info=True)

    async def _status_loop(self, interval_s: float = STATUS_INTERVAL_S) -> None:
        """One INFO line per interval, so an operator sees the node is alive and where its log is; time-based
        retention runs on the same beat."""
        while True:
            await asyncio.sleep(interval_s)
            raft, lg = self.raft, self.log
            if raft is None or lg is None:
                return
            if self.driver is not None:
                self.driver.maybe_clean()
            leader = raft.quorum.leader_id
            log.info("status: %s in epoch %d, leader %s, high watermark %d, log end %d, %d flushes",
                     raft.state_name, raft.epoch, "unknown" if leader == NO_ID else leader, lg.high_watermark(),
                     lg.end_offset(), self.driver.flushes if self.driver else 0)

    def _register_handlers(self) -> None:
        """Raft RPCs, DescribeQuorum always; DescribeCluster and Metadata unless registered before ``start()``.
        Fetch is shared with client fetches: ``broker_fetch = (min_version, handler)`` set before ``start()`` gets
        every Fetch that is not a Raft replica's (no replica id, or a version without topic ids)."""
        d = self.dispatcher
        for key in wire.RAFT_KEYS:
            lo, hi = wire.ACCEPT[key]
            if key == wire.FETCH:
                if self.broker_fetch is not None:
                    lo = min(lo, self.broker_fetch[0])
                d.register(key, lo, hi, self._fetch)
            else:
                d.register(key, lo, hi, self._raft_request)
        d.serve("DescribeQuorum", self._describe_quorum)
        d.serve("AddRaftVoter", self._voter_change)
        d.serve("RemoveRaftVoter", self._voter_change)
        if not d.serves("DescribeCluster"):
            d.serve("DescribeCluster", self._describe_cluster)
        if not d.serves("Metadata"):
            d.serve("Metadata", self._metadata)

    def _partition_fetch(self, body) -> bool:
        """A replica's Fetch for topic partitions (a follower broker), not for this quorum's log."""
        return self.replicas is not None and not wire.fetches_the_quorum_log(body, self.topic)

    def _fetch(self, request, conn) -> None:
        body, version = request.body, request.version
        replica = body.replica_state.replica_id if version >= 15 else body.replica_id
        if self.broker_fetch is not None and (replica < 0 or version < wire.ACCEPT[wire.FETCH][0]
                                              or self._partition_fetch(body)):
            self.broker_fetch[1](request, conn)
            return
        if version < wire.ACCEPT[wire.FETCH][0]:
            log.warning("closing connection from %s: Fetch v%d has no topic ids (Raft needs v13+)", conn.peer, version)
            conn.close()
            return
        self._raft_request(request, conn)

    async def _discover_voters(self):
        """A node given only ``controller.quorum.bootstrap.servers`` whose log names no voters (a broker, or a
        controller formatted with ``--no-initial-controllers`` that is still to be added): ask them (DescribeQuorum
        v2, the same request ``kraftwire metadata-quorum`` sends) which voters form the quorum and where their
        controller listener is. Brokers often start before the controllers, so this retries (backing off up to 2 s)
        until one answers with a leader's view, or the node is asked to stop. Returns (voters, VoterSet or None):
        the set with each voter's directory id and endpoints when the quorum is a KIP-853 one (its voters have
        directory ids), None for a static quorum."""
        s = self.settings
        timeout = s.config.controller_quorum_request_timeout_ms / 1000.0
        backoff = max(0.05, s.config.controller_quorum_retry_backoff_ms / 1000.0)
        attempt = 0
        while True:
            why = "no bootstrap server"
            for host, port in s.bootstrap_servers:
                try:
                    quorum, _ = await describe_quorum(host, port, timeout=timeout, topic=s.topic,
                                                      ssl_context=self.controller_tls, sasl=s.controller_sasl)
                except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
                    why = f"{host}:{port}: {exc or type(exc).__name__}"
                    continue
                voters = _voters_from(quorum, s.controller_listener_names)
                if voters:
                    voter_set = quorum_voter_set(quorum)
                    log.info("node %d found the quorum through %s:%d: voters %s%s", s.node_id, host, port,
                             ",".join(f"{v.node_id}@{v.host}:{v.port}" for v in voters),
                             f" (KIP-853 voter set {voter_set.describe()})" if voter_set is not None else "")
                    return voters, voter_set
                why = f"{host}:{port}: no leader to describe the quorum yet"
            attempt += 1
            if attempt == 1 or attempt % 20 == 0:
                log.warning("node %d: the quorum is not reachable through controller.quorum.bootstrap.servers yet "
                            "(%s); retrying", s.node_id, why)
            stop = self.stop_requested
            if stop is not None and stop.is_set():
                raise StartupError(f"stopped before the quorum answered ({why})")
            try:
                await asyncio.wait_for(stop.wait() if stop is not None else asyncio.sleep(3600),
                                       min(backoff * attempt, 2.0))
            except asyncio.TimeoutError:
                pass

    def _metadata_caught_up(self) -> bool:
        """This node knows a leader and its image has folded the log up to the high watermark it learned."""
        raft = self.raft
        if raft is None or self.metadata is None or raft.quorum.leader_id < 0:
            return False
        hw = raft.high_watermark
        return hw > 0 and self.metadata.image.offset >= hw - 1

    def _scram_credentials(self, sasl):
        """The SCRAM credentials of a listener that enables SCRAM, as a lookup ``(user, mechanism byte) ->
        scram.Credential | None`` asked at every login. A KRaft node asks its current metadata image (the
        UserScramCredentialRecords of the log, as Kafka's ScramPublisher keeps its credential cache), so what
        AlterUserScramCredentials adds or deletes counts from the next login. The test server, which has no image,
        reads once at start what ``storage format --add-scram`` wrote into ``bootstrap.checkpoint``."""
        if not any(m.startswith("SCRAM-") for m in sasl.mechanisms):
            return None
        md = self.metadata
        if md is not None:
            def from_image(user: str, mechanism: int):
                c = md.image.scram.get((mechanism, user))
                return None if c is None else scram.Credential(c.salt, c.stored_key, c.server_key, c.iterations)
            log.info("listener %s: SCRAM credentials from the metadata image", sasl.listener)
            return from_image
        path = os.path.join(self.settings.metadata_dir, BOOTSTRAP_FILE)
        try:
            with open(path, "rb") as f:
                creds = scram_credentials(decode_bootstrap_file(f.read()))
        except FileNotFoundError:
            log.warning("listener %s enables SCRAM but %s does not exist: nobody can log in with SCRAM", sasl.listener,
                        path)
            creds = {}
        except (OSError, KraftwireError) as exc:
            raise StartupError(f"cannot read the SCRAM credentials in {path}: {exc}") from exc
        else:
            log.info("listener %s: SCRAM credentials for %d user(s) from %s", sasl.listener,
                     len({u for u, _ in creds}), path)
        store = {key: scram.Credential(*value) for key, value in creds.items()}
        return lambda user, mechanism: store.get((user, mechanism))

    # ================================================================================================================
    # metrics endpoint
    # ================================================================================================================
    def render_metrics(self) -> str:
        """What the metrics endpoint serves (Prometheus text format)."""
        return self.metrics.render()

    # ================================================================================================================
    # shutdown
    # ================================================================================================================
    async def shutdown(self, *, resign_timeout_s: float = 2.0) -> None:
        driver, raft = self.driver, self.raft
        for name in ("_status_task", "_replica_task"):
            task = getattr(self, name, None)
            if task is not None:
                task.cancel()
        if driver is not None and raft is not None and not driver.stopped:
            await self.roles.controlled_shutdown()
            if raft.is_leader():
                log.info("node %d resigns leadership of epoch %d (shutdown): EndQuorumEpoch to the voters",
                         self.settings.node_id, raft.epoch)
                driver.call(lambda r, now: r.resign(now))
                deadline = time.monotonic() + resign_timeout_s
                while time.monotonic() < deadline:
                    state = raft.quorum.state
                    if not isinstance(state, ResignedState) or not state.unacknowledged:
                        break
                    await asyncio.sleep(0.01)
            for server in self._servers:
                server.close()
            await driver.stop()
        await asyncio.to_thread(self.metrics.stop_serving)  # its accept loop ends within 0.5 s: off the loop
        if self.peers is not None:
            self.peers.close()
        if self.forward_links is not None:
            await self.forward_links.close()
        self.dispatcher.close_all()
        await asyncio.sleep(0)
        if self.group_apis is not None:
            self.group_apis.close()
        if self.txn_apis is not None:
            self.txn_apis.close()
        if self.share_apis is not None:
            self.share_apis.close()
        if self.replicas is not None:
            await self.replicas.fetchers.close()
            self.replicas.close()
            self.replicas.mark_clean_shutdown(self.roles.broker_epoch)
        if self.log is not None:
            self.log.close()
            self.log = None
        log.info("node %d stopped", self.settings.node_id)


def load_settings(path: str) -> NodeSettings:
    try:
        return NodeSettings.from_file(path)
    except ConfigError:
        raise


def _voters_from(quorum, listener_names) -> tuple[Voter, ...]:
    """The voters of a DescribeQuorum v2 answer, each at its listener named in ``listener_names`` (else its first);
    empty when the answer is an error or lacks an endpoint."""
    topics = quorum.topics or []
    if not topics or not topics[0].partitions:
        return ()
    part = topics[0].partitions[0]
    if part.error_code != 0 or part.leader_id < 0 or not part.current_voters:
        return ()
    listeners = {n.node_id: list(n.listeners) for n in (quorum.nodes or [])}
    voters = []
    for v in part.current_voters:
        options = listeners.get(v.replica_id) or []
        chosen = next((ep for ep in options if ep.name in listener_names), options[0] if options else None)
        if chosen is None:
            return ()
        voters.append(Voter(v.replica_id, chosen.host, chosen.port))
    return tuple(voters)


def quorum_voter_set(quorum) -> VoterSet | None:
    """The KIP-853 voter set of a DescribeQuorum v2 answer: each voter's id, directory id and endpoints (its Nodes
    entry); None when no voter has a directory id (a static quorum, kraft.version 0)."""
    part = quorum.topics[0].partitions[0]
    if not any(v.replica_directory_id not in (None, ZERO_UUID) for v in part.current_voters):
        return None
    listeners = {n.node_id: tuple((ep.name, ep.host, ep.port) for ep in n.listeners) for n in (quorum.nodes or [])}
    return VoterSet.of(VoterNode(ReplicaKey(v.replica_id, None if v.replica_directory_id in (None, ZERO_UUID)
                                            else v.replica_directory_id), listeners.get(v.replica_id, ()))
                       for v in part.current_voters)


def _log_codec() -> None:
    """Say which RecordBatch codec this process runs: the C extension is several times faster, and a missing one
    (a source checkout that was never built, a broken wheel) must not pass unnoticed."""
    if records.IMPLEMENTATION == "ext":
        log.info("record codec: the C extension (kraftwire_ext)")
    elif os.environ.get("KRAFTWIRE_NO_EXT", "") not in ("", "0"):
        log.info("record codec: pure Python (KRAFTWIRE_NO_EXT is set)")
    else:
        log.warning("record codec: pure Python, several times slower — the C extension did not import: %s "
                    "(pip install the package, or build it in place: python setup.py build_ext --inplace)",
                    records.EXT_IMPORT_ERROR)


def _local_controller_endpoints(props) -> tuple:
    """This controller's endpoints as the voter set should name them (``advertised.listeners`` over
    ``listeners``): a voter whose entry differs sends UpdateRaftVoter. None known (an ephemeral port, a listener
    without an address): empty, so it never asks."""
    try:
        endpoints = controller_endpoints(props)
    except ControllerEndpointError:
        return ()
    return tuple(endpoints) if all(port > 0 for _, _, port in endpoints) else ()
