"""The two nodes a conformance scenario talks to: Apache Kafka and kraftwire, started from the same
``server.properties`` keys, one pair per :class:`Configuration` for the whole pytest session.

What "the same configuration" means is checked, not assumed: after start-up :meth:`Pair.check_equivalent` compares
the two ``server.properties`` files key by key (the keys naming this machine — listeners, ports, directories — aside)
and the finalized features (metadata.version, transaction.version, group.version, ...) both report in
ApiVersions.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import NamedTuple

from harness import processes, roles
from harness.kafka import KafkaNode

from kraftwire.protocol import messages as w
from kraftwire.security.sasl.client import SaslLogin
from kraftwire.server.edge.client import KafkaConnection

KAFKA, KRAFTWIRE = "kafka", "kraftwire"
SIDES = (KAFKA, KRAFTWIRE)
#: what each node's harness writes itself (KafkaNode's fixed keys), so both files carry them
NODE_KEYS = ("offsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n"
             "transaction.state.log.min.isr=1\n")
#: keys whose values name this machine (ports, hosts, directories) and so differ between the two files
MACHINE_KEYS = frozenset({"listeners", "advertised.listeners", "controller.quorum.voters", "log.dirs"})
#: a request that gets no answer within this many seconds counts as a stall
REQUEST_TIMEOUT_S = 30.0


#: ``Step.login`` when a step does not name one: the configuration's first login (none on a PLAINTEXT listener)
CONFIGURED = "<configured>"


#: ``storage format`` at kraftwire's default level, metadata.version 4.4-IV2 (transaction.version 2, group.version 1,
#: eligible.leader.replicas.version 1), with share groups off on both sides (they have pairs of their own: "share",
#: "sasl-acl") and streams groups, which kraftwire does not implement, off for Kafka
LEVELS_4_4 = ("--release-version", "4.4-IV2",
              *(arg for name in ("share.version", "streams.version") for arg in ("--feature", f"{name}=0")))
#: the level the pairs were formatted at before kraftwire's default moved to 4.4-IV0, kept for one configuration
#: so that the older level (transaction.version 0, group.version 0) is still compared
LEVELS_3_9 = ("--release-version", "3.9")


class Configuration(NamedTuple):
    """A node configuration: ``server.properties`` keys for both, the ``storage format`` arguments, and the SASL
    logins of its scenario connections (``Step.login`` names one by user; the first is every step's default and the
    pair's own, so on a SASL listener it is a super user's)."""

    name: str
    props: str = ""
    format_args: tuple[str, ...] = LEVELS_4_4
    logins: tuple[SaslLogin, ...] = ()
    #: combined nodes per side: one (a KafkaNode and a CombinedNode), or several (a KafkaCluster and a
    #: KraftwireCluster, whose nodes a step may stop and start)
    nodes: int = 1

    def login(self, name: str | None) -> SaslLogin | None:
        """The login of user ``name`` (:data:`CONFIGURED`: the first; None: no login, a bare connection)."""
        if name is None or not self.logins:
            return None
        if name == CONFIGURED:
            return self.logins[0]
        found = [login for login in self.logins if login.username == name]
        if not found:
            raise KeyError(f"configuration {self.name!r} has no login for {name!r}")
        return found[0]


#: the "sasl-acl" accounts: PLAIN ones in the client listener's JAAS entry, SCRAM-SHA-256 ones added at format time
#: (the same credentials on both sides; each side salts them itself)
SASL_USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
SCRAM_USERS = ("alice", "bob")
PLAIN_JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" "
              "password=\"admin-secret\" " + " ".join(f'user_{u}="{p}"' for u, p in SASL_USERS.items()) + ";")
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
#: the group and transaction coordinators' keys that make scenarios quick and their answers settled (see below)
COORDINATOR_KEYS = ("group.initial.rebalance.delay.ms=0\noffsets.topic.num.partitions=1\n"
                    "transaction.state.log.num.partitions=1\noffsets.retention.check.interval.ms=86400000\n")

#: the share coordinator's keys where share groups are on: its state topic of one partition and one replica
SHARE_KEYS = ("share.coordinator.state.topic.num.partitions=1\nshare.coordinator.state.topic.replication.factor=1\n"
              "share.coordinator.state.topic.min.isr=1\n")
#: LEVELS_4_4 with share groups on at Kafka's default level (share.version 2: with their dead-letter queues), for
#: the "sasl-acl" pair's share-group scenarios
LEVELS_4_4_SHARE = ("--release-version", "4.4-IV2", "--feature", "share.version=2", "--feature", "streams.version=0")

#: the configurations scenarios may name (``Scenario.config``); a pair starts only when a selected scenario needs it
CONFIGURATIONS = {c.name: c for c in (
    # one combined node, Kafka's defaults (auto.create.topics.enable=true, num.partitions=1, ...), at kraftwire's
    # default level (LEVELS_4_4, as every configuration but the next)
    Configuration("single"),
    # the same with topic auto-creation off in the broker's file (Metadata before v4 cannot ask for it per request)
    # and topic deletion off (DeleteTopics' TOPIC_DELETION_DISABLED), at metadata.version 3.9-IV0
    Configuration("no-auto-create", "auto.create.topics.enable=false\ndelete.topic.enable=false\n", LEVELS_3_9),
    # the same node for the group and transaction scenarios: a group's first join completes at once instead of
    # after Kafka's 3 s initial rebalance delay, the internal topics have one partition each (created on the first
    # FindCoordinator; 50 would take both nodes many seconds), and the periodic clean-up that drops empty groups
    # without offsets does not run during a session (it would, at a moment of its own, make one node's group vanish)
    Configuration("coordinators", COORDINATOR_KEYS),
    # the client listener (named PLAINTEXT by both harnesses) is SASL_PLAINTEXT with SCRAM-SHA-256 and PLAIN, and
    # StandardAuthorizer checks ACLs: admin is the super user every step logs in as unless it names another login;
    # User:ANONYMOUS is the broker's principal on the PLAINTEXT controller listener, which Kafka's controller must
    # let register (CLUSTER_ACTION); alice and bob are ordinary users (SCRAM-SHA-256). The coordinators' keys as in
    # "coordinators", and KIP-848 consumer groups of one member (GROUP_MAX_SIZE_REACHED for a second; no other
    # scenario of this pair has a consumer group member); share groups on (share.version 2, the share coordinator's
    # keys as in "share") for the share APIs' ACL scenarios (scenarios/share_acls.py)
    # three combined nodes per side (the voters of one quorum, each a broker): a killed node is fenced, and leaves
    # the ISRs, within seconds rather than Kafka's defaults (9 s / 30 s); leaderships stay where elections put them
    # (no automatic preferred-leader elections, which would move them at a moment of their own)
    Configuration("three-node", "broker.heartbeat.interval.ms=500\nbroker.session.timeout.ms=3000\n"
                                "replica.lag.time.max.ms=3000\nauto.leader.rebalance.enable=false\n"
                                + COORDINATOR_KEYS, nodes=3),
    # share groups on at 4.4-IV0's default (share.version 2: KIP-932 with KIP-1191's dead-letter queues) with their
    # share coordinator's topic of one partition and one replica, for ShareFetch and ShareAcknowledge
    Configuration("share", COORDINATOR_KEYS + SHARE_KEYS,
                  ("--release-version", "4.4-IV0", "--feature", "streams.version=0")),
    Configuration("sasl-acl", "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:SASL_PLAINTEXT\n"
                              "sasl.enabled.mechanisms=SCRAM-SHA-256,PLAIN\n"
                              "sasl.mechanism.inter.broker.protocol=PLAIN\n"
                              f"listener.name.plaintext.plain.sasl.jaas.config={PLAIN_JAAS}\n"
                              f"listener.name.plaintext.scram-sha-256.sasl.jaas.config={SCRAM_JAAS}\n"
                              "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"
                              "super.users=User:admin;User:ANONYMOUS\nallow.everyone.if.no.acl.found=false\n"
                              "group.consumer.max.size=1\n" + COORDINATOR_KEYS + SHARE_KEYS,
                  (*LEVELS_4_4_SHARE,
                   *(arg for user in SCRAM_USERS
                     for arg in ("--add-scram", f"SCRAM-SHA-256=[name={user},password={SASL_USERS[user]}]"))),
                  (SaslLogin("PLAIN", "admin", SASL_USERS["admin"]),
                   *(SaslLogin("SCRAM-SHA-256", user, SASL_USERS[user]) for user in SCRAM_USERS))),
)}


class Failure(NamedTuple):
    """A request that got no decodable answer: the connection closed, or nothing came back in time."""

    what: str

    def __str__(self) -> str:
        return f"<no answer: {self.what}>"


def _properties(path: str) -> dict[str, str]:
    with open(path, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")]
    return dict(line.split("=", 1) for line in lines)


class Pair:
    """A started Kafka node and kraftwire node of one configuration. ``machine`` holds, per side, the values that
    name this machine (hosts, ports, log directories, cluster id), which the comparison maps onto each other."""

    #: how long the nodes may take to come up (each to list every running node as a broker)
    ready_s = roles.WAIT_S

    def __init__(self, config: Configuration, base: str) -> None:
        self.config = config
        kafka_base, ours_base = os.path.join(base, KAFKA), os.path.join(base, KRAFTWIRE)
        os.makedirs(ours_base)
        built: dict[str, object] = {}

        def build(side, make):
            try:
                built[side] = make()
            except BaseException as exc:  # reported below, after both formats ended
                built[side] = exc

        threads = [threading.Thread(target=build, args=(KAFKA, lambda: KafkaNode(
                       kafka_base, config.props, format_args=config.format_args))),
                   threading.Thread(target=build, args=(KRAFTWIRE, lambda: processes.CombinedNode(
                       ours_base, NODE_KEYS + config.props, format_args=config.format_args)))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for exc in built.values():
            if isinstance(exc, BaseException):
                raise exc
        self.kafka, self.ours = built[KAFKA], built[KRAFTWIRE]
        with open(self.ours.config, "a", encoding="utf-8") as f:  # KafkaNode writes this key too
            f.write(f"advertised.listeners=PLAINTEXT://localhost:{self.ours.port}\n")
        self._started = []
        self._describe_nodes({KAFKA: {1: (self.kafka.port, self.kafka.config, self.kafka)},
                              KRAFTWIRE: {1: (self.ours.port, self.ours.config, self.ours)}},
                             [self.ours.log_path])

    def _describe_nodes(self, nodes: dict[str, dict[int, tuple]], logs: list[str]) -> None:
        """What the requests and the health checks need of each side's nodes: {side: {node id: (client port,
        server.properties, object with ``proc``)}}, and kraftwire's log files."""
        self.nodes = nodes
        self.logs = logs
        #: the nodes a step stopped (on both sides), which are not asked and whose exit is no problem
        self.down: set[int] = set()

    def port(self, side: str, node: int | None = None) -> int:
        """The client port of ``side``'s node ``node`` (None: the lowest-numbered node that runs)."""
        if node is None:
            node = min(set(self.nodes[side]) - self.down)
        return self.nodes[side][node][0]

    def start(self) -> "Pair":
        self._launch()
        self._ready()
        self.check_equivalent()
        self.machine = {side: self._machine(side) for side in SIDES}
        return self

    def _launch(self) -> None:
        for node in (self.kafka, self.ours):
            node.__enter__()
            self._started.append(node)

    def signal_stop(self) -> None:
        """Ask both to stop without waiting: Kafka is killed (its files are thrown away, and its orderly shutdown
        takes seconds), kraftwire gets SIGTERM."""
        for node, stop in ((self.kafka, "kill"), (self.ours, "terminate")):
            if node in self._started and node.proc.poll() is None:
                getattr(node.proc, stop)()

    def close(self) -> None:
        self.signal_stop()
        for node in reversed(self._started):
            node.__exit__(None, None, None)

    # ------------------------------------------------------------------------------------------------- requests
    async def connect(self, side: str, login: str | None = CONFIGURED, timeout: float = REQUEST_TIMEOUT_S,
                      node: int | None = None):
        """A connection to ``side``'s node ``node`` (see :meth:`port`), logged in as the configuration's ``login``
        (see :meth:`Configuration.login`), or the :class:`Failure` that stopped it (a refused login)."""
        return await _outcome(KafkaConnection.open("127.0.0.1", self.port(side, node), timeout=timeout,
                                                   client_id="kraftwire-conformance",
                                                   sasl=self.config.login(login)), timeout)

    async def ask(self, side: str, body, version: int, timeout: float = REQUEST_TIMEOUT_S,
                  login: str | None = CONFIGURED, node: int | None = None, header_version: int | None = None):
        """The decoded answer of ``side``'s node ``node`` to ``body`` at ``version`` on a connection of its own
        (logged in as ``login``; ``header_version``: the version the header names, when another), or a
        :class:`Failure`."""
        conn = await self.connect(side, login, timeout, node)
        if isinstance(conn, Failure):
            return conn
        try:
            return await _outcome(conn.request(body, version, timeout=timeout, header_version=header_version),
                                  timeout)
        finally:
            await conn.close()

    def _broker_ids(self, side: str, node: int) -> list[int] | None:
        answer = asyncio.run(self.ask(side, w.MetadataRequest(topics=[]), 12, timeout=5, node=node))
        return None if isinstance(answer, Failure) else sorted(b.node_id for b in answer.brokers)

    def _ready(self) -> None:
        """Wait until every node of both sides that runs lists every such node as a broker."""
        for side in SIDES:
            up = sorted(set(self.nodes[side]) - self.down)
            for node in up:
                roles.wait_until(lambda: self._broker_ids(side, node) == up, f"the {side} node {node} online",
                                 timeout=self.ready_s)

    def ask_both(self, body, version: int) -> dict:
        async def both():
            answers = await asyncio.gather(*(self.ask(side, body, version) for side in SIDES))
            return dict(zip(SIDES, answers))

        return asyncio.run(both())

    def _api_versions(self, side: str):
        answer = asyncio.run(self.ask(side, w.ApiVersionsRequest(client_software_name="kraftwire-conformance",
                                                                 client_software_version="1"), 3))
        assert not isinstance(answer, Failure) and answer.error_code == 0, f"{side} ApiVersions: {answer}"
        return answer

    def api_versions(self, side: str) -> dict[str, tuple[int, int]]:
        """{api name: (min, max)} as ``side`` advertises them (ApiVersions v3); unknown api keys by number."""
        return {(w.APIS[a.api_key].name if a.api_key in w.APIS else str(a.api_key)): (a.min_version, a.max_version)
                for a in self._api_versions(side).api_keys}

    # ----------------------------------------------------------------------------------------------------- health
    def log_size(self) -> tuple[int, ...]:
        """Where each kraftwire log ends now."""
        return tuple(os.path.getsize(path) if os.path.exists(path) else 0 for path in self.logs)

    def problems_since(self, offsets: tuple[int, ...]) -> list[str]:
        """A traceback kraftwire logged after ``offsets`` (:meth:`log_size`) of its logs, and a node of either side
        having exited that no step stopped."""
        problems = []
        for path, offset in zip(self.logs, offsets):
            with open(path, "rb") as f:
                f.seek(offset)
                text = f.read().decode("utf-8", "replace")
            at = text.find("Traceback (most recent call last)")
            if at >= 0:  # from the log line that carries it
                line_start = text.rfind("\n", 0, max(0, text.rfind("\n", 0, at))) + 1
                problems.append(text[line_start:line_start + 3000].strip())
        for side in SIDES:
            for node_id, (_, _, node) in self.nodes[side].items():
                if node_id not in self.down and node.proc is not None and node.proc.poll() is not None:
                    problems.append(f"the {side} node {node_id} exited with {node.proc.returncode}")
        return problems

    # ------------------------------------------------------------------------------------------------ equivalence
    def check_equivalent(self) -> None:
        """Both files carry the same keys and values (the values of the machine keys aside), and both nodes finalized
        the same features at the same levels."""
        for node in self.nodes[KAFKA]:
            files = {side: _properties(self.nodes[side][node][1]) for side in SIDES}
            for props in files.values():
                for key in MACHINE_KEYS:
                    assert key in props, f"{key} missing from one server.properties: {files}"
                    props.pop(key)
            assert files[KAFKA] == files[KRAFTWIRE], f"the two server.properties of node {node} differ: {files}"
        levels = {side: sorted((f.name, f.min_version_level, f.max_version_level)
                               for f in self._api_versions(side).finalized_features)
                  for side in SIDES}
        assert levels[KAFKA] == levels[KRAFTWIRE] and any(name == "metadata.version" for name, *_ in levels[KAFKA]), \
            f"the finalized features differ: {levels}"

    def _machine(self, side: str) -> dict[str, list]:
        """The values naming ``side``'s machine, by kind, node by node in the same order on both sides."""
        machine: dict[str, list] = {"host": [], "port": [], "path": []}
        for node in sorted(self.nodes[side]):
            props = _properties(self.nodes[side][node][1])
            listeners = dict(entry.split("://", 1) for entry in props["listeners"].split(","))
            endpoints = [listeners[name].rsplit(":", 1) for name in sorted(listeners)]
            machine["host"] += [host for host in sorted({host for host, _ in endpoints}) if host not in machine["host"]]
            machine["port"] += [int(port) for _, port in endpoints]
            machine["path"] += [props["log.dirs"], os.path.dirname(props["log.dirs"])]
        machine["cluster"] = [asyncio.run(self.ask(side, w.DescribeClusterRequest(), 0)).cluster_id]
        return machine


class ClusterPair(Pair):
    """A started Kafka cluster and kraftwire cluster of ``config.nodes`` combined nodes each
    (``harness.clusters``); a step may stop node ``i`` of both (SIGKILL: each is fenced when its session times out)
    and start it again."""

    ready_s = 120.0  # three JVMs starting side by side on two busy cores

    def __init__(self, config: Configuration, base: str) -> None:
        from harness.clusters import KafkaCluster, KraftwireCluster
        from harness.kafka import JVM_LIGHT

        self.config = config
        self.kafka = KafkaCluster(os.path.join(base, KAFKA), config.nodes, config.props, config.format_args,
                                  jvm_args=JVM_LIGHT)
        self.ours = KraftwireCluster(os.path.join(base, KRAFTWIRE), config.nodes, config.props, config.format_args)
        self._describe_nodes({side: {i: (node.port, node.config, node) for i, node in cluster.nodes.items()}
                              for side, cluster in ((KAFKA, self.kafka), (KRAFTWIRE, self.ours))},
                             [node.log_path for node in self.ours.nodes.values()])
        self._started = []

    def _launch(self) -> None:
        for cluster in (self.kafka, self.ours):
            self._started.append(cluster)
            for i in cluster.nodes:
                cluster.start(i)

    def stop_node(self, node: int) -> None:
        """Kill node ``node`` of both sides."""
        self.down.add(node)
        for cluster in (self.kafka, self.ours):
            cluster.kill(node)

    def start_node(self, node: int) -> None:
        """Start node ``node`` of both sides again (same files, same ports); requests may go to it once every
        running node of both lists it as a broker."""
        for cluster in (self.kafka, self.ours):
            cluster.start(node)
        self.down.discard(node)
        self._ready()

    def signal_stop(self) -> None:
        """As :meth:`Pair.signal_stop`, every node: Kafka's killed, kraftwire's sent SIGTERM."""
        for cluster in self._started:
            for i in cluster.running():
                proc = cluster.nodes[i].proc
                (proc.kill if cluster is self.kafka else proc.terminate)()

    def close(self) -> None:
        self.signal_stop()
        for cluster in reversed(self._started):
            cluster.close()


#: what a request gets on a connection the server closed: the client's ProtocolError at the end of the stream
CLOSED_BY_SERVER = "ProtocolError: connection closed by the server"


async def _outcome(awaitable, timeout: float):
    """What ``awaitable`` gives, or the :class:`Failure` it ended with (a closed connection, an undecodable answer,
    a refused login, nothing within ``timeout``)."""
    try:
        return await awaitable
    except asyncio.TimeoutError:
        return Failure(f"no answer within {timeout:g} s")
    except (ConnectionResetError, BrokenPipeError):
        # The server closed the connection and the request written after it reached a closed socket: the client
        # reads a reset rather than the end of the stream. Which of the two it reads is a matter of TCP timing (did
        # the request arrive before the close?), so both are the one outcome.
        return Failure(CLOSED_BY_SERVER)
    except (OSError, ConnectionError) as exc:
        return Failure(f"connection failed ({type(exc).__name__})")
    except Exception as exc:  # noqa: BLE001 - a closed connection or an undecodable answer is an outcome
        return Failure(f"{type(exc).__name__}: {exc}")


class Sessions:
    """The connections one scenario keeps open across steps (``Step.connection``), one per side and name, each
    logged in as the login of the step that opened it: a SASL exchange spans several requests on one connection.
    A connection that failed stays failed: every later request on it gets that :class:`Failure`."""

    def __init__(self, pair: Pair) -> None:
        self.pair = pair
        self._open: dict[tuple[str, str], object] = {}

    async def ask(self, side: str, name: str, body, version: int, timeout: float = REQUEST_TIMEOUT_S,
                  login: str | None = CONFIGURED, node: int | None = None):
        conn = self._open.get((side, name))
        if conn is None:
            conn = self._open[side, name] = await self.pair.connect(side, login, timeout, node)
        if isinstance(conn, Failure):
            return conn
        answer = await _outcome(conn.request(body, version, timeout=timeout), timeout)
        if isinstance(answer, Failure):
            self._open[side, name] = answer
        return answer

    async def close(self) -> None:
        for conn in self._open.values():
            if not isinstance(conn, Failure):
                await conn.close()
        self._open.clear()


class Pairs:
    """The session's pairs, each started when a scenario first needs it (one after the other: started side by side
    on two busy cores they took longer); a pair that failed to start fails every later use at once with the same
    error (instead of starting again for each scenario)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self._pairs: dict[str, Pair | BaseException] = {}

    def get(self, name: str) -> Pair:
        if name not in self._pairs:
            pair = None
            try:
                config = CONFIGURATIONS[name]
                pair = (Pair if config.nodes == 1 else ClusterPair)(config, os.path.join(self.base, name))
                self._pairs[name] = pair.start()
            except BaseException as exc:  # kept: every scenario of this configuration reports it
                if pair is not None:
                    pair.close()
                self._pairs[name] = exc
        got = self._pairs[name]
        if isinstance(got, BaseException):
            raise AssertionError(f"the {name!r} pair did not start: {got!r}") from got
        return got

    def close(self) -> None:
        pairs = [pair for pair in self._pairs.values() if isinstance(pair, Pair)]
        for pair in pairs:  # every node stops at once, then each is waited for
            pair.signal_stop()
        for pair in pairs:
            pair.close()
