"""The KIP-500 roles as real processes: controllers (voters) and brokers (observers), each serving its Raft log to
clients as topic ``roles`` (``processes.SERVE_ONLY``: the test server appending nothing).

Builds on ``processes.processes``. Controllers use
the seed shape (their only listener is the controller listener ``CONTROLLER``, which then serves clients too);
brokers have ``process.roles=broker``, a client listener ``BROKER`` and reach the quorum through
``controller.quorum.voters`` (or, with ``bootstrap_brokers=True``, ``controller.quorum.bootstrap.servers`` only). Every listening socket is bound here first and handed over (``--listener-fd``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

from harness import processes

WAIT_S = 30.0
COMMON = ("listener.security.protocol.map=CONTROLLER:PLAINTEXT,BROKER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n"
          "controller.listener.names=CONTROLLER\nbroker.heartbeat.interval.ms=300\nbroker.session.timeout.ms=3000\n")


class Proc(processes.NodeProc):
    """A node with one or more listeners, each handed over as a bound socket."""

    def __init__(self, cluster, node_id: int, socks: dict, config: str) -> None:
        first = next(iter(socks.values()))
        super().__init__(cluster, node_id, first, config)
        self.socks = socks

    def start(self, *extra: str) -> None:
        assert self.proc is None or self.proc.poll() is not None
        self.starts += 1
        fds = []
        for name, s in self.socks.items():
            fds += ["--listener-fd", f"{name}={s.fileno()}"]
        cmd = [sys.executable, "-m", "kraftwire", self.cluster.command, "--config", self.config, *fds,
               *self.cluster.extra_args, *extra]
        out = open(os.path.join(self.cluster.base, f"node-{self.node_id}.{self.starts}.out"), "wb")
        err = open(self.stderr_path, "wb")
        self.started_at = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, pass_fds=tuple(s.fileno() for s in self.socks.values()),
                                     env=processes.kraftwire_env())
        out.close()
        err.close()

    def port_of(self, name: str) -> int:
        return self.socks[name].getsockname()[1]

    def signal(self, sig) -> None:
        if self.running:
            self.proc.send_signal(sig)


class RolesCluster(processes.Cluster):
    def __init__(self, base: str, *, controllers: int = 3, brokers: int = 2, extra_props: str = "",
                 combined: bool = False, bootstrap_brokers: bool = False, format_args=(),
                 extra_listeners: tuple[str, ...] = (), kraft: bool = False, node_props=None) -> None:
        """``extra_listeners``: more client listener names on every broker (bound here, like the others); their
        protocols go in ``extra_props``' listener.security.protocol.map. ``kraft``: real KRaft nodes
        (``server-start``: the log holds Kafka's metadata records) instead of test servers serving topic ``roles``.
        ``node_props(node_id, socks)``: more properties for one node, given its bound sockets by listener name."""
        self.base = base
        self.listener = "CONTROLLER"
        if kraft:
            self.command, self.extra_args = "server-start", []
        else:
            self.command = processes.SERVE_ONLY["command"]
            self.extra_args = list(processes.SERVE_ONLY["extra_args"])
        self.nodes = {}
        csocks = [processes.bind_listener() for _ in range(controllers)]
        voters = ",".join(f"{i}@localhost:{s.getsockname()[1]}" for i, s in enumerate(csocks, 1))
        bootstrap = ",".join(f"localhost:{s.getsockname()[1]}" for s in csocks)
        self.cluster_id = processes.kw("storage", "random-uuid").stdout.strip()
        for i in range(1, controllers + brokers + 1):
            path = os.path.join(base, f"server-{i}.properties")
            if i <= controllers:
                socks = {"CONTROLLER": csocks[i - 1]}
                if combined:
                    socks["BROKER"] = processes.bind_listener()
                roles = "broker,controller" if combined else "controller"
            else:
                socks = {"BROKER": processes.bind_listener()}
                roles = "broker"
            if "BROKER" in socks:
                for name in extra_listeners:
                    socks[name] = processes.bind_listener()
            listeners = ",".join(f"{n}://localhost:{s.getsockname()[1]}" for n, s in socks.items())
            quorum = (f"controller.quorum.bootstrap.servers={bootstrap}" if bootstrap_brokers and i > controllers
                      else f"controller.quorum.voters={voters}")
            with open(path, "w", encoding="utf-8") as f:
                f.write(f"process.roles={roles}\nnode.id={i}\nlisteners={listeners}\n{COMMON}"
                        f"{quorum}\nlog.dirs={os.path.join(base, f'kraft-logs-{i}')}\n"
                        + ("" if kraft else "kraftwire.metadata.log.topic=roles\n") + extra_props
                        + (node_props(i, socks) if node_props is not None else ""))
            processes.kw("storage", "format", "-t", self.cluster_id, "-c", path, *format_args)
            self.nodes[i] = Proc(self, i, socks, path)
        self.controllers = [self.nodes[i] for i in range(1, controllers + 1)]
        self.brokers = [self.nodes[i] for i in range(controllers + 1, controllers + brokers + 1)]

    def close(self) -> None:
        for node in self.nodes.values():
            if node.proc is not None and node.proc.poll() is None:
                node.proc.send_signal(signal.SIGCONT)
            node.kill()
            for s in node.socks.values():
                s.close()

    def wait_for_leader(self, *, exclude=(), min_epoch: int = 0, timeout: float = WAIT_S):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for node in self.controllers:
                if node.running:
                    part = processes.leader_view(node.port)
                    if part is not None and part.leader_id not in exclude and part.leader_epoch >= min_epoch:
                        return part
            time.sleep(0.1)
        raise AssertionError(f"no leader within {timeout} s\n" + self.diagnostics())


def metadata(port: int, timeout: float = 3.0):
    """Metadata v1 (all topics) from the node on ``port``."""
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import request_once

    return asyncio.run(request_once("127.0.0.1", port, w.MetadataRequest(topics=None), 1, timeout=timeout))


def broker_ids(port: int):
    try:
        return sorted(b.node_id for b in metadata(port).brokers)
    except Exception:  # noqa: BLE001 - the node may be starting or down
        return None


def wait_until(predicate, what: str, cluster=None, timeout: float = WAIT_S):
    """``predicate()``'s first true value, polled for ``timeout`` seconds; else AssertionError naming ``what``, with
    the cluster's diagnostics when one is given."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"{what} not reached within {timeout} s (last {last!r})"
                         + ("\n" + cluster.diagnostics() if cluster is not None else ""))


def produce_through_a_kill(bootstrap: str, topic: str, victim, total: int = 3000) -> dict[int, list[tuple[int, bytes]]]:
    """confluent-kafka, idempotent, acks=all, ``total`` records into ``topic`` while ``victim`` (a node) is SIGKILLed
    a third of the way in, records in flight: every record must be acknowledged; the acknowledged (offset, value)
    pairs per partition."""
    from confluent_kafka import Producer

    acked: dict[int, list[tuple[int, bytes]]] = {}
    failed = []

    def delivered(err, msg) -> None:
        if err is not None:
            failed.append(err)
        else:
            acked.setdefault(msg.partition(), []).append((msg.offset(), msg.value()))

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 2,
                         "message.timeout.ms": 60000})
    for i in range(total):
        producer.produce(topic, key=f"k{i % 97}".encode(), value=f"v{i:05d}".encode(), on_delivery=delivered)
        producer.poll(0)
        if i == total // 3:
            producer.flush(30)
            victim.kill()
        if i % 100 == 0:
            time.sleep(0.02)
    assert producer.flush(90) == 0
    assert not failed, failed[:3]
    assert sum(len(v) for v in acked.values()) == total
    return acked


def read_partitions(port: int, topic: str, partitions: int) -> dict[int, list[tuple[int, bytes]]]:
    """Every (offset, value) of ``topic``'s partitions, read from the broker on ``port`` (kafka-python, assigned)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{port}", group_id=None, auto_offset_reset="earliest",
                             consumer_timeout_ms=5000)
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        seen: dict[int, list[tuple[int, bytes]]] = {}
        for m in consumer:
            seen.setdefault(m.partition, []).append((m.offset, m.value))
        return seen
    finally:
        consumer.close()
