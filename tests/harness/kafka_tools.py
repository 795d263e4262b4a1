"""Apache Kafka's own command-line tools and Java clients, run in one JVM (``tests/kafka/ToolDriver.java``) against
kraftwire or Kafka: ``tools = KafkaTools(base); tools.run("kafka-topics", "--bootstrap-server", b, "--list")``; and
``start_single_node``, the one-node kraftwire cluster most of them run against.

The Java sources (``SOURCES``: the driver and the client programs) are compiled once into the jar cache, under
a directory named by their hash, so a changed source compiles again and an unchanged one never does."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass

from harness import roles
from harness.kafka import KAFKA_DIR, kafka_libs

#: the scripts of Kafka's ``bin/`` by the main class each runs (Kafka 4.4's ``bin/*.sh``)
SCRIPTS = {
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-configs": "org.apache.kafka.tools.ConfigCommand",
    "kafka-console-producer": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-share-groups": "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
    "kafka-console-share-consumer": "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
    "kafka-acls": "org.apache.kafka.tools.AclCommand",
    "kafka-transactions": "org.apache.kafka.tools.TransactionsCommand",
    "kafka-metadata-quorum": "org.apache.kafka.tools.MetadataQuorumCommand",
    "kafka-features": "org.apache.kafka.tools.FeatureCommand",
    "kafka-get-offsets": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-log-dirs": "org.apache.kafka.tools.LogDirsCommand",
    "kafka-delete-records": "org.apache.kafka.tools.DeleteRecordsCommand",
    "kafka-leader-election": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test": "org.apache.kafka.tools.ConsumerPerformance",
    "kafka-verifiable-producer": "org.apache.kafka.tools.VerifiableProducer",
    "kafka-verifiable-consumer": "org.apache.kafka.tools.VerifiableConsumer",
    "kafka-storage": "kafka.tools.StorageTool",
    "kafka-dump-log": "org.apache.kafka.tools.DumpLogSegments",
    "kafka-cluster": "org.apache.kafka.tools.ClusterTool",
    "kafka-broker-api-versions": "org.apache.kafka.tools.BrokerApiVersionsCommand",
    "kafka-e2e-latency": "org.apache.kafka.tools.EndToEndLatency",
    "kafka-replica-verification": "org.apache.kafka.tools.ReplicaVerificationTool",
    "kafka-clients": "KafkaClients",  # tests/kafka/KafkaClients.java: Kafka's Java clients, one mode per call
}
#: the programs of ``tests/kafka`` the driver JVM runs
SOURCES = ("ToolDriver.java", "KafkaClients.java")
#: a JVM that starts fast and stays small: these tools do little work each
JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx512m", "-Xss1m",
             "--add-opens", "java.base/java.lang=ALL-UNNAMED")


@dataclass(frozen=True)
class Result:
    exit: int
    out: str
    err: str

    def lines(self) -> list[str]:
        return self.out.splitlines()

    def json_lines(self) -> list[dict]:
        """The standard output lines that are JSON objects (the verifiable clients', KafkaClients')."""
        return [json.loads(line) for line in self.out.splitlines() if line.startswith("{")]


def compiled_classes() -> str:
    """The directory of ``SOURCES`` compiled against Kafka's jars (compiled now if not cached)."""
    libs = kafka_libs()
    sources = [os.path.join(KAFKA_DIR, name) for name in SOURCES]
    digest = hashlib.sha256()
    for path in sources:
        with open(path, "rb") as f:
            digest.update(os.path.basename(path).encode() + b"\0" + f.read())
    target = os.path.join(os.path.dirname(libs), "classes", digest.hexdigest()[:16])
    if os.path.isdir(target):
        return target
    os.makedirs(os.path.dirname(target), exist_ok=True)
    scratch = tempfile.mkdtemp(dir=os.path.dirname(target))
    proc = subprocess.run(["javac", "-nowarn", "-d", scratch, "-cp", os.path.join(libs, "*"), *sources],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        raise AssertionError(f"javac {' '.join(SOURCES)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    try:
        os.rename(scratch, target)
    except OSError:  # another run compiled the same sources first
        shutil.rmtree(scratch, ignore_errors=True)
    return target


class KafkaTools:
    """One ``ToolDriver`` JVM, started on first use; ``run`` sends it one tool invocation and waits for its answer.
    A tool that does not answer within ``timeout`` fails the test, and the JVM is replaced for the next one. Its own
    standard error (a JVM crash) goes to ``base/tool-driver.err``."""

    def __init__(self, base: str) -> None:
        self.base = str(base)
        self.proc: subprocess.Popen | None = None
        self.answers: queue.Queue = queue.Queue()

    def _start(self) -> None:
        classpath = os.pathsep.join([compiled_classes(), os.path.join(kafka_libs(), "*")])
        err = open(os.path.join(self.base, "tool-driver.err"), "ab")
        self.proc = subprocess.Popen(["java", *JVM_FLAGS, "-cp", classpath, "ToolDriver"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=err, cwd=self.base)
        err.close()
        self.answers = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc, self.answers), daemon=True).start()

    @staticmethod
    def _read(proc: subprocess.Popen, answers: queue.Queue) -> None:
        for line in proc.stdout:
            answers.put(line)
        answers.put(None)

    def run(self, tool: str, *args: str, stdin: str = "", timeout: float = 60) -> Result:
        """Run ``tool`` (a key of ``SCRIPTS`` or a main class) with ``args``, ``stdin`` as its standard input."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        command = {"main": SCRIPTS.get(tool, tool), "args": list(args), "stdin": stdin}
        self.proc.stdin.write((json.dumps(command) + "\n").encode())
        self.proc.stdin.flush()
        try:
            line = self.answers.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise AssertionError(f"{tool} {' '.join(args)} did not finish within {timeout} s") from None
        if line is None:
            self.close()
            raise AssertionError(f"the tool JVM died running {tool} {' '.join(args)}; see {self.base}/tool-driver.err")
        answer = json.loads(line)
        return Result(answer["exit"], answer["out"], answer["err"])

    def ok(self, tool: str, *args: str, stdin: str = "", timeout: float = 60) -> Result:
        """``run`` that requires exit status 0."""
        result = self.run(tool, *args, stdin=stdin, timeout=timeout)
        if result.exit != 0:
            raise AssertionError(f"{tool} {' '.join(args)} exited {result.exit}:\n--- stdout\n{result.out[-3000:]}\n"
                                 f"--- stderr\n{result.err[-3000:]}")
        return result

    def described(self, bootstrap: str, topic: str, timeout: float = 30) -> list[str]:
        """``kafka-topics --describe --topic`` once the broker knows the topic and every partition has a leader (a
        broker's image follows a creation a moment after the controller answers it, with Kafka as with kraftwire)."""
        def ready():
            result = self.run("kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", topic)
            if result.exit != 0:
                assert "does not exist" in result.out, result.out + result.err
                return None
            lines = result.lines()
            return lines if len(lines) > 1 and all("\tLeader: -1\t" not in line for line in lines[1:]) else None

        return roles.wait_until(ready, f"{topic} described with its leaders", timeout=timeout)

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait(10)
            self.proc.stdin.close()
            self.proc = None


# --- the kraftwire node they run against ----------------------------------------------------------------------------
#: one broker: the internal topics fit it, and groups join without waiting for more members; ``server.properties``
#: as Kafka itself accepts it (``inter.broker.listener.name`` names the client listener), so that Kafka's StorageTool
#: reads it as it reads a Kafka broker's
SINGLE_NODE = ("inter.broker.listener.name=BROKER\n"
               "offsets.topic.replication.factor=1\noffsets.topic.num.partitions=3\n"
               "transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n"
               "transaction.state.log.num.partitions=3\ngroup.initial.rebalance.delay.ms=0\n")


@dataclass(frozen=True)
class Node:
    """A running kraftwire node as the tools reach it."""

    bootstrap: str  # its client listener, host:port
    controller: str  # its controller listener, host:port (for --bootstrap-controller)
    config: str  # its server.properties
    log_dir: str
    cluster: roles.RolesCluster

    def partition_dir(self, topic: str, partition: int = 0) -> str:
        return os.path.join(self.log_dir, f"{topic}-{partition}")


def start_single_node(base: str, extra_props: str = "", format_args=()) -> Node:
    """One ``server-start`` node (``process.roles=broker,controller``), waited for until its broker is Online; the
    caller closes ``node.cluster``."""
    os.makedirs(base, exist_ok=True)
    cluster = roles.RolesCluster(base, controllers=1, brokers=0, combined=True, kraft=True,
                                 extra_props=SINGLE_NODE + extra_props, format_args=format_args)
    proc = cluster.nodes[1]
    try:
        cluster.start_all()
        roles.wait_until(lambda: roles.broker_ids(proc.port_of("CONTROLLER")) == [1], "broker 1 Online", cluster)
    except BaseException:
        cluster.close()
        raise
    return Node(f"localhost:{proc.port_of('BROKER')}", f"localhost:{proc.port_of('CONTROLLER')}", proc.config,
                proc.log_dir, cluster)
