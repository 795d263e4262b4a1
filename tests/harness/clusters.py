"""Clusters of combined nodes (``process.roles=broker,controller``), Apache Kafka 4.4.0 or kraftwire, started as
each runs in production from the same ``server.properties`` keys, for the tests and ``benchmarks/vs_kafka.py``.

* ``KafkaCluster``: every node formatted by Kafka's own ``StorageTool`` (one cluster id, a static
  ``controller.quorum.voters``) and run as ``java <jvm_args> kafka.Kafka server.properties``, by default with the
  JVM flags ``kafka-server-start.sh`` ships (``SERVER_JVM``). Kafka binds its own listeners on ports free a moment
  before.
* ``KraftwireCluster``: every node formatted by ``kraftwire storage format`` and run as ``kraftwire server-start``
  on listening sockets bound here (``--listener-fd``, as ``processes.CombinedNode``), kept open so a restart serves
  the very same ports.

Both share everything else: node ``i`` (1..n, its ``node.id``) lives in ``<base>/node-<i>`` (its properties, its
log dir, its output), listens on 127.0.0.1 only, is started with the open-files limit raised in the child
(``resource.setrlimit``: thousands of partitions hold thousands of files) and is stopped by PID. Used as a context
manager, a cluster starts every node and waits until each lists all n brokers (registered and unfenced); leaving it
stops every node still running (SIGTERM, SIGKILL after a bounded wait). Nothing is shared between clusters.
"""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import subprocess
import sys
import time

from harness import processes
from harness.kafka import free_ports, kafka_libs, stop_java

HOST = "127.0.0.1"
#: the JVM flags Kafka's ``kafka-server-start.sh`` and ``kafka-run-class.sh`` give a broker
SERVER_JVM = ("-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
              "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
              "-Djava.awt.headless=true")
#: the open-files limit a node starts with (both kinds alike)
NOFILE = 200_000
READY_S = 120.0
STOP_S = 30.0


def raise_open_files() -> None:
    """In the child before exec: the open-files limit raised to ``NOFILE`` (or to the hard limit when this user may
    not raise that)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, NOFILE), max(hard, NOFILE)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def combined_properties(node_id: int, voters: str, port: int, controller_port: int, log_dir: str) -> str:
    """The ``server.properties`` keys of one combined node: a PLAINTEXT client listener, a CONTROLLER listener."""
    return (f"process.roles=broker,controller\nnode.id={node_id}\ncontroller.quorum.voters={voters}\n"
            f"listeners=PLAINTEXT://{HOST}:{port},CONTROLLER://{HOST}:{controller_port}\n"
            f"advertised.listeners=PLAINTEXT://{HOST}:{port}\ncontroller.listener.names=CONTROLLER\n"
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n"
            f"log.dirs={log_dir}\n")


def metadata(port: int, topics=None, timeout: float = 5.0):
    """A Metadata v12 response from the node whose client listener is ``port``: every topic, or the named ones."""
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import request_once

    R = w.MetadataRequest
    wanted = None if topics is None else [R.MetadataRequestTopic(name=t) for t in topics]
    return asyncio.run(request_once(HOST, port, R(topics=wanted, allow_auto_topic_creation=False), 12,
                                    timeout=timeout))


class Node:
    """One combined node: ``node_id``, ``dir``, ``config``, ``port`` (PLAINTEXT), ``controller_port``, ``log_path``
    (its standard output and error over all its starts), ``proc`` (the running process, or the last one)."""

    def __init__(self, node_id: int, base: str, port: int, controller_port: int) -> None:
        self.node_id = node_id
        self.dir = os.path.join(base, f"node-{node_id}")
        os.makedirs(self.dir, exist_ok=True)
        self.config = os.path.join(self.dir, "server.properties")
        self.log_dir = os.path.join(self.dir, "data")
        self.log_path = os.path.join(self.dir, "node.log")
        self.port = port
        self.controller_port = controller_port
        self.proc: subprocess.Popen | None = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def output(self) -> str:
        if not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()


class _CombinedCluster:
    """What both kinds share; a kind supplies ``_ports()``, ``_format(nodes, cluster_id)`` and ``_spawn(node)``."""

    kind = ""

    def __init__(self, base, n: int = 3, props: str = "", format_args=("--release-version", "3.9")) -> None:
        self.base = str(base)
        self.n = n
        self.format_args = tuple(format_args)
        #: nodes stopped or killed on purpose (``stop``, ``kill``): any other exited node is a failure
        self.down: set[int] = set()
        ports = self._ports(2 * n)
        self.nodes = {i: Node(i, self.base, ports[2 * i - 2], ports[2 * i - 1]) for i in range(1, n + 1)}
        voters = ",".join(f"{i}@{HOST}:{node.controller_port}" for i, node in self.nodes.items())
        for i, node in self.nodes.items():
            with open(node.config, "w", encoding="utf-8") as f:
                f.write(combined_properties(i, voters, node.port, node.controller_port, node.log_dir) + props)
        from kraftwire.ids import random_kafka_uuid, uuid_to_base64

        self.cluster_id = uuid_to_base64(random_kafka_uuid())
        self._format(list(self.nodes.values()), self.cluster_id)

    # -------------------------------------------------------------------------------------------- per kind
    def _ports(self, count: int) -> list[int]:
        raise NotImplementedError

    def _format(self, nodes: list[Node], cluster_id: str) -> None:
        raise NotImplementedError

    def _spawn(self, node: Node) -> subprocess.Popen:
        raise NotImplementedError

    # -------------------------------------------------------------------------------------------- the API
    @property
    def bootstrap(self) -> str:
        """Every node's client listener, ``host:port,...``."""
        return ",".join(f"{HOST}:{node.port}" for node in self.nodes.values())

    def start(self, i: int) -> None:
        """Start node ``i`` (again: the same properties, the same directories, the same ports)."""
        node = self.nodes[i]
        assert not node.running, f"node {i} is running"
        with open(node.log_path, "ab") as log:
            log.write(f"--- {self.kind} node {i} started at {time.strftime('%H:%M:%S')} ---\n".encode())
        node.proc = self._spawn(node)
        self.down.discard(i)

    def stop(self, i: int, timeout: float = STOP_S) -> int:
        """SIGTERM to node ``i`` (its shutdown runs), SIGKILL if it has not exited within ``timeout`` s; its exit
        code."""
        self.down.add(i)
        proc = self.nodes[i].proc
        return 0 if proc is None else stop_java(proc, timeout)  # SIGTERM then SIGKILL: the same for any process

    def kill(self, i: int) -> None:
        """SIGKILL to node ``i``; returns once it has exited."""
        self.down.add(i)
        proc = self.nodes[i].proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)

    def pid(self, i: int) -> int | None:
        """The process id of node ``i`` while it runs, else None."""
        node = self.nodes[i]
        return node.proc.pid if node.running else None

    def running(self) -> list[int]:
        return [i for i, node in self.nodes.items() if node.running]

    def check_alive(self) -> None:
        """Fail loudly, with its output, when a node exited that was not stopped or killed on purpose."""
        for i, node in self.nodes.items():
            if i not in self.down and node.proc is not None and node.proc.poll() is not None:
                raise AssertionError(f"{self.kind} node {i} exited with {node.proc.returncode}:\n"
                                     + node.output()[-4000:])

    def brokers_seen(self, i: int) -> list[int] | None:
        """The broker ids node ``i``'s Metadata lists (registered and unfenced), or None while it does not answer."""
        try:
            return sorted(b.node_id for b in metadata(self.nodes[i].port).brokers)
        except Exception:  # noqa: BLE001 - starting, stopping or down
            return None

    def wait_ready(self, timeout: float = READY_S) -> float:
        """Wait until every running node's Metadata lists exactly the running nodes as brokers; the seconds it
        took."""
        start = time.monotonic()
        deadline = start + timeout
        while True:
            self.check_alive()
            up = self.running()
            if up and all(self.brokers_seen(i) == up for i in up):
                return time.monotonic() - start
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.kind}: nodes {up} did not all list brokers {up} within {timeout} s: "
                                     + str({i: self.brokers_seen(i) for i in up}) + "\n" + self.diagnostics())
            time.sleep(0.2)

    def diagnostics(self) -> str:
        return "\n".join(f"--- {self.kind} node {i} (running={node.running}) ---\n{node.output()[-3000:]}"
                         for i, node in self.nodes.items())

    def partitions_ready(self, topic: str, partitions: int, isr: int, nodes=None) -> bool:
        """Whether every node of ``nodes`` (the running ones) lists ``topic`` with ``partitions`` partitions, each led
        with at least ``isr`` replicas in sync."""
        for i in nodes if nodes is not None else self.running():
            try:
                md = metadata(self.nodes[i].port, [topic])
            except Exception:  # noqa: BLE001 - starting, stopping or down
                return False
            found = [t for t in md.topics if t.name == topic and t.error_code == 0]
            if not found or len(found[0].partitions) != partitions or any(
                    p.leader_id < 0 or len(p.isr_nodes) < isr for p in found[0].partitions):
                return False
        return True

    def create_topic(self, topic: str, partitions: int, replication_factor: int, configs=None,
                     timeout: float = READY_S) -> float:
        """Create ``topic`` through the admin API (confluent-kafka) and wait until every running node lists all its
        partitions with full ISRs; the seconds it took."""
        from confluent_kafka.admin import AdminClient, NewTopic

        start = time.monotonic()
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        futures = admin.create_topics([NewTopic(topic, partitions, replication_factor, config=dict(configs or {}))],
                                      request_timeout=timeout, operation_timeout=timeout)
        futures[topic].result(timeout)
        deadline = start + timeout
        while not self.partitions_ready(topic, partitions, replication_factor):
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.kind}: {topic} not in sync on every node within {timeout} s\n"
                                     + self.diagnostics())
            self.check_alive()
            time.sleep(0.2)
        return time.monotonic() - start

    def close(self) -> None:
        """SIGTERM to every running node at once, SIGKILL to any still running after ``STOP_S``."""
        self.down.update(self.nodes)
        procs = [node.proc for node in self.nodes.values() if node.running]
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_S
        for proc in procs:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)

    def __enter__(self):
        try:
            for i in self.nodes:
                self.start(i)
            self.wait_ready()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _run_all(commands: list[list[str]], what: str, env=None, timeout: float = 180) -> None:
    """Run ``commands`` side by side to completion; fail loudly on any non-zero exit."""
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for cmd in commands]
    failures = []
    for cmd, proc in zip(commands, procs):
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        if proc.returncode != 0:
            failures.append(f"{' '.join(cmd)} exited {proc.returncode}:\n{out}\n{err}")
    if failures:
        raise AssertionError(f"{what} failed:\n" + "\n".join(failures))


class KafkaCluster(_CombinedCluster):
    """n combined Apache Kafka 4.4.0 nodes; ``jvm_args`` default to Kafka's shipped broker flags."""

    kind = "kafka"

    def __init__(self, base, n: int = 3, props: str = "", format_args=("--release-version", "3.9"),
                 jvm_args=SERVER_JVM) -> None:
        self.jvm_args = tuple(jvm_args)
        self.classpath = os.path.join(kafka_libs(), "*")
        super().__init__(base, n, props, format_args)

    def _ports(self, count: int) -> list[int]:
        return free_ports(count)

    def _format(self, nodes: list[Node], cluster_id: str) -> None:
        _run_all([["java", "-cp", self.classpath, "kafka.tools.StorageTool", "format", "-t", cluster_id,
                   "-c", node.config, *self.format_args] for node in nodes], "Kafka's StorageTool format")

    def _spawn(self, node: Node) -> subprocess.Popen:
        with open(node.log_path, "ab") as log:
            return subprocess.Popen(["java", *self.jvm_args, "-cp", self.classpath, "kafka.Kafka", node.config],
                                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    preexec_fn=raise_open_files)


class KraftwireCluster(_CombinedCluster):
    """n combined kraftwire nodes (``kraftwire server-start``), each on listening sockets bound here."""

    kind = "kraftwire"

    def __init__(self, base, n: int = 3, props: str = "", format_args=("--release-version", "3.9")) -> None:
        self._socks: list = []
        super().__init__(base, n, props, format_args)

    def _ports(self, count: int) -> list[int]:
        self._socks = [processes.bind_listener() for _ in range(count)]
        return [s.getsockname()[1] for s in self._socks]

    def _format(self, nodes: list[Node], cluster_id: str) -> None:
        _run_all([[sys.executable, "-m", "kraftwire", "storage", "format", "-t", cluster_id, "-c", node.config,
                   *self.format_args] for node in nodes], "kraftwire storage format", env=processes.kraftwire_env())

    def _spawn(self, node: Node) -> subprocess.Popen:
        broker, controller = self._socks[2 * node.node_id - 2], self._socks[2 * node.node_id - 1]
        return processes.start_server(node.config, (broker, controller), node.log_path,
                                      {"PLAINTEXT": broker, "CONTROLLER": controller}, preexec_fn=raise_open_files)

    def close(self) -> None:
        super().close()
        for s in self._socks:
            s.close()
