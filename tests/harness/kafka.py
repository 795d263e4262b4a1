"""Apache Kafka's jars, for the tests that use Kafka itself as the oracle: ``kafka_libs()`` runs
``tests/kafka/fetch.sh`` (Maven Central; a cached copy is reused) and returns the directory of the jars, or fails the
test loudly — a missing Kafka is a broken set-up, never a skip."""

from __future__ import annotations

import asyncio
import functools
import os
import subprocess
import time

from kraftwire.errors import ProtocolError
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KAFKA_DIR = os.path.join(TESTS, "kafka")
#: a small heap and the quick JIT only: Kafka's own programs start faster this way on two shared cores
JVM_LIGHT = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx512m")


@functools.cache
def kafka_libs(pom: str = "pom.xml") -> str:
    """The directory of the jars of ``tests/kafka/<pom>`` (``connect/pom.xml``: Kafka Connect with the file
    connectors and MirrorMaker 2), fetched when missing."""
    proc = subprocess.run(["bash", os.path.join(KAFKA_DIR, "fetch.sh"), os.path.join(KAFKA_DIR, pom)],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise AssertionError(f"could not fetch Apache Kafka's jars (tests/kafka/fetch.sh {pom} exited "
                             f"{proc.returncode}):\n{proc.stderr}")
    return proc.stdout.strip().splitlines()[-1]


def connect_libs() -> str:
    """Kafka Connect's jars with the file connectors and MirrorMaker 2 (``tests/kafka/connect/pom.xml``)."""
    return kafka_libs("connect/pom.xml")


def spark_connector_jars() -> list[str]:
    """Spark's Kafka connector and what it needs beyond PySpark's jars (``tests/kafka/spark/pom.xml``)."""
    libs = kafka_libs("spark/pom.xml")
    return sorted(os.path.join(libs, name) for name in os.listdir(libs) if name.endswith(".jar"))


def run_java(source: str, *args: str, timeout: float = 300) -> str:
    """Run a single-file Java program of ``tests/kafka`` on Kafka's classpath; its standard output."""
    proc = subprocess.run(["java", "-cp", os.path.join(kafka_libs(), "*"), os.path.join(KAFKA_DIR, source), *args],
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"java {source} exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    return proc.stdout


def start_java(main: str, *args: str, log: str, libs: str | None = None, jvm_args=()) -> subprocess.Popen:
    """Start ``main`` (a class of Kafka's jars, or the path of a single-file Java program) on the jars of ``libs``
    (Kafka's, ``kafka_libs()``, unless told) with ``JVM_LIGHT`` and ``jvm_args``, in the background; its stdout and
    stderr go to the file ``log``. Stop it with ``stop_java``."""
    with open(log, "wb") as out:
        return subprocess.Popen(["java", *JVM_LIGHT, *jvm_args, "-cp", os.path.join(libs or kafka_libs(), "*"), main,
                                 *args],
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def stop_java(proc: subprocess.Popen, timeout: float = 40) -> int:
    """SIGTERM (the program's shutdown hooks run), SIGKILL after ``timeout`` s; its exit code."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    return proc.returncode


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports free a moment ago, for a server that binds its own listeners (Kafka)."""
    import socket

    socks = []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def storage_tool(*args: str, timeout: float = 120) -> str:
    """Kafka's ``kafka-storage.sh`` (``kafka.tools.StorageTool``) with ``args``; its standard output, or a loud failure."""
    proc = subprocess.run(["java", "-cp", os.path.join(kafka_libs(), "*"), "kafka.tools.StorageTool", *args],
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"StorageTool {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


class KafkaNode:
    """Apache Kafka itself, one combined KRaft node on loopback, for the oracle tests: formatted in ``base`` with
    ``extra_props`` (``server.properties`` keys) and ``format_args``, started with a small heap, stopped on exit.
    ``port`` is its PLAINTEXT listener; with ``jmx``, ``jmx_port`` serves its MBeans over JMX on loopback
    (``tests/kafka/ReadMBeans.java`` reads them)."""

    def __init__(self, base: str, extra_props: str = "", format_args=("--release-version", "3.9"),
                 jmx: bool = False) -> None:
        self.base = str(base)
        os.makedirs(self.base, exist_ok=True)
        self.port, cport = free_ports(2)
        self.config = os.path.join(self.base, "server.properties")
        with open(self.config, "w", encoding="utf-8") as f:
            f.write(f"process.roles=broker,controller\nnode.id=1\ncontroller.quorum.voters=1@127.0.0.1:{cport}\n"
                    f"listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{cport}\n"
                    f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}\ncontroller.listener.names=CONTROLLER\n"
                    "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n"
                    f"log.dirs={os.path.join(self.base, 'data')}\noffsets.topic.replication.factor=1\n"
                    "transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n" + extra_props)
        self.classpath = os.path.join(kafka_libs(), "*")
        cluster_id = storage_tool("random-uuid").strip().splitlines()[-1]
        storage_tool("format", "-t", cluster_id, "-c", self.config, *format_args)
        self.proc = None
        self.jmx_port = free_ports(1)[0] if jmx else None

    def __enter__(self) -> "KafkaNode":
        import socket
        import time

        out = open(os.path.join(self.base, "kafka.out"), "wb")
        jmx = () if self.jmx_port is None else (
            "-Dcom.sun.management.jmxremote", f"-Dcom.sun.management.jmxremote.port={self.jmx_port}",
            f"-Dcom.sun.management.jmxremote.rmi.port={self.jmx_port}", "-Dcom.sun.management.jmxremote.host=127.0.0.1",
            "-Dcom.sun.management.jmxremote.authenticate=false", "-Dcom.sun.management.jmxremote.ssl=false",
            "-Djava.rmi.server.hostname=127.0.0.1")
        self.proc = subprocess.Popen(["java", *JVM_LIGHT, *jmx, "-cp", self.classpath, "kafka.Kafka", self.config],
                                     stdout=out, stderr=subprocess.STDOUT)
        out.close()
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"Kafka exited {self.proc.returncode} at start-up: see {self.base}/kafka.out")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.2)
        self.__exit__()
        raise AssertionError("Kafka did not listen within 90 s")

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def until_broker_answers(port: int, timeout: float = 90.0) -> None:
    """Wait until the node on ``port`` (Kafka or kraftwire) answers Metadata with a broker listed: listening, and
    past its start-up. Connection errors on the way (not listening yet, closing while starting) are retried."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            answer = asyncio.run(request_once("127.0.0.1", port, w.MetadataRequest(
                topics=None, allow_auto_topic_creation=False), 12, timeout=15.0))
            if answer.brokers:
                return
        except (OSError, ProtocolError):
            pass
        assert time.monotonic() < deadline, f"no broker on {port} after {timeout:.0f} s"
        time.sleep(0.5)


class KafkaCluster:
    """Apache Kafka as a small cluster on loopback: one controller (node 1) and ``brokers`` broker-only nodes (2, 3,
    ...), for what one combined node cannot show (replication, racks). ``node_props(node_id)`` adds properties to a
    broker; ``restart_brokers(node_props)`` stops every broker, rewrites those properties and starts them again (for
    static configs such as ``replica.selector.class``). ``ports`` maps each broker to its PLAINTEXT port. Use as a
    context manager: every JVM is stopped on exit."""

    def __init__(self, base: str, brokers: int = 3, node_props=None, format_args=()) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.base = str(base)
        os.makedirs(self.base, exist_ok=True)
        cport, *bports = free_ports(1 + brokers)
        self.ports = {i: port for i, port in enumerate(bports, 2)}
        self.voters = f"1@127.0.0.1:{cport}"
        self.procs: dict[int, subprocess.Popen] = {}
        self.configs = {1: self._write(1, "process.roles=controller\n"
                                          f"listeners=CONTROLLER://127.0.0.1:{cport}\n")}
        for node_id in self.ports:
            self.configs[node_id] = self._write(node_id, self._broker_props(node_id, node_props))
        cluster_id = storage_tool("random-uuid").strip().splitlines()[-1]
        with ThreadPoolExecutor(len(self.configs)) as pool:  # one JVM each: in parallel
            list(pool.map(lambda c: storage_tool("format", "-t", cluster_id, "-c", c, *format_args),
                          self.configs.values()))

    def _broker_props(self, node_id: int, node_props) -> str:
        port = self.ports[node_id]
        return (f"process.roles=broker\nlisteners=PLAINTEXT://127.0.0.1:{port}\n"
                f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}\n"
                + (node_props(node_id) if node_props is not None else ""))

    def _write(self, node_id: int, props: str) -> str:
        path = os.path.join(self.base, f"server-{node_id}.properties")
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"node.id={node_id}\ncontroller.quorum.voters={self.voters}\ncontroller.listener.names=CONTROLLER\n"
                    "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n"
                    f"log.dirs={os.path.join(self.base, f'data-{node_id}')}\n" + props)
        return path

    def _start(self, node_id: int) -> None:
        out = open(os.path.join(self.base, f"kafka-{node_id}.out"), "ab")
        self.procs[node_id] = subprocess.Popen(["java", *JVM_LIGHT, "-cp", os.path.join(kafka_libs(), "*"),
                                                "kafka.Kafka", self.configs[node_id]],
                                               stdout=out, stderr=subprocess.STDOUT)
        out.close()

    def _stop(self, node_id: int) -> None:
        proc = self.procs.pop(node_id, None)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)

    def _until_brokers_answer(self) -> None:
        for node_id, port in self.ports.items():
            if self.procs[node_id].poll() is not None:
                raise AssertionError(f"Kafka broker {node_id} exited: see {self.base}/kafka-{node_id}.out")
            until_broker_answers(port)

    def restart_brokers(self, node_props) -> None:
        for node_id in self.ports:
            self._stop(node_id)
        for node_id in self.ports:
            self._write(node_id, self._broker_props(node_id, node_props))
            self._start(node_id)
        self._until_brokers_answer()

    def __enter__(self) -> "KafkaCluster":
        for node_id in self.configs:
            self._start(node_id)
        try:
            self._until_brokers_answer()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        for node_id in sorted(self.procs, reverse=True):  # the brokers first: their controlled shutdown needs it
            self._stop(node_id)
