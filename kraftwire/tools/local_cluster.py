"""A local KRaft cluster of real ``kraftwire server-start`` processes on loopback, for ``kraftwire quickstart``.

Two shapes, as Kafka runs them: ``combined`` nodes (``process.roles=broker,controller``, a PLAINTEXT client listener
and a CONTROLLER listener each), or separate ``controllers`` (``process.roles=controller``) and ``brokers``
(``process.roles=broker``). Node ids: controllers (or combined nodes) 1..M, brokers after them.

Every listening socket is bound here first and handed to its node (``--listener-fd``), so no port can be taken
between choosing it and serving it. Nodes run in their own session with their output in ``<dir>/node-<id>.log``,
so they can outlive this process (``quickstart --keep``). Everything is formatted in-process with one cluster id.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

HOST = "127.0.0.1"
STOP_S = 30.0


def kraftwire_env() -> dict:
    """The environment for child processes (``python -m kraftwire ...``): they import the same kraftwire as this
    process. ``-m`` puts the working directory first on ``sys.path``, so run from a source checkout a child would
    import the checkout (without its compiled extension) instead of the installed package: ``PYTHONSAFEPATH``
    (Python 3.11+) leaves the working directory out."""
    import kraftwire

    root = os.path.dirname(os.path.dirname(os.path.abspath(kraftwire.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONSAFEPATH"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def bind_listener() -> socket.socket:
    """A listening socket on a free loopback port, inheritable by a child."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((HOST, 0))
    s.listen(128)
    s.set_inheritable(True)
    return s


@dataclass
class LocalNode:
    node_id: int
    roles: str  # "broker,controller", "controller" or "broker"
    config: str
    log_path: str
    sockets: dict[str, socket.socket] = field(default_factory=dict)  # listener name -> bound socket, until started
    proc: subprocess.Popen | None = None
    ports: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.ports = {name: s.getsockname()[1] for name, s in self.sockets.items()}

    def port(self, listener: str) -> int:
        return self.ports[listener]

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles


def node_properties(node: LocalNode, voters: str, log_dir: str, replication: int) -> str:
    """One node's ``server.properties``: Kafka's keys, the internal topics replicated as widely as the brokers
    allow (up to Kafka's 3), groups formed at once (``group.initial.rebalance.delay.ms=0``, as Kafka's shipped
    file)."""
    listeners = ",".join(f"{name}://{HOST}:{port}" for name, port in node.ports.items())
    lines = [f"process.roles={node.roles}", f"node.id={node.node_id}", f"controller.quorum.voters={voters}",
             f"listeners={listeners}", "controller.listener.names=CONTROLLER",
             "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT", f"log.dirs={log_dir}"]
    if node.is_broker:
        lines += [f"advertised.listeners=PLAINTEXT://{HOST}:{node.port('PLAINTEXT')}",
                  "inter.broker.listener.name=PLAINTEXT", f"offsets.topic.replication.factor={replication}",
                  f"transaction.state.log.replication.factor={replication}",
                  f"transaction.state.log.min.isr={min(2, replication)}", f"default.replication.factor={replication}",
                  "group.initial.rebalance.delay.ms=0"]
    return "\n".join(lines) + "\n"


class LocalCluster:
    """``combined`` nodes, or ``controllers`` + ``brokers``, in ``base``; ``extra`` lines go into every node's file."""

    def __init__(self, base: str, *, combined: int = 0, controllers: int = 0, brokers: int = 0,
                 extra: list[str] = ()) -> None:
        from kraftwire.config import load_config
        from kraftwire.ids import random_kafka_uuid, uuid_to_base64
        from kraftwire.tools.storage import format_storage

        self.base = base
        roles = (["broker,controller"] * combined) or (["controller"] * controllers + ["broker"] * brokers)
        self.nodes: list[LocalNode] = []
        for node_id, role in enumerate(roles, start=1):
            names = (["PLAINTEXT"] if "broker" in role else []) + (["CONTROLLER"] if "controller" in role else [])
            self.nodes.append(LocalNode(node_id, role, os.path.join(base, f"node-{node_id}.properties"),
                                        os.path.join(base, f"node-{node_id}.log"),
                                        {name: bind_listener() for name in names}))
        voters = ",".join(f"{n.node_id}@{HOST}:{n.port('CONTROLLER')}" for n in self.controllers)
        replication = min(3, len(self.brokers))
        self.cluster_id = uuid_to_base64(random_kafka_uuid())
        for node in self.nodes:
            with open(node.config, "w", encoding="utf-8") as f:
                f.write(node_properties(node, voters, os.path.join(base, f"kraft-logs-{node.node_id}"), replication))
                f.write("".join(f"{line}\n" for line in extra))
            format_storage(load_config(node.config).validate(), self.cluster_id)

    @property
    def controllers(self) -> list[LocalNode]:
        return [n for n in self.nodes if "controller" in n.roles]

    @property
    def brokers(self) -> list[LocalNode]:
        return [n for n in self.nodes if n.is_broker]

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{HOST}:{n.port('PLAINTEXT')}" for n in self.brokers)

    def describe_shape(self) -> str:
        if all(n.roles == "broker,controller" for n in self.nodes):
            return f"{len(self.nodes)} combined (broker+controller) nodes"
        return f"{len(self.controllers)} controllers and {len(self.brokers)} brokers"

    def start(self) -> None:
        """Start every node (``kraftwire server-start``), each in its own session so it may outlive this process."""
        env = kraftwire_env()
        for node in self.nodes:
            fds = [f"{name}={s.fileno()}" for name, s in node.sockets.items()]
            with open(node.log_path, "ab") as log:
                node.proc = subprocess.Popen(
                    [sys.executable, "-m", "kraftwire", "server-start", "--config", node.config,
                     *(arg for fd in fds for arg in ("--listener-fd", fd))],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, start_new_session=True,
                    pass_fds=tuple(s.fileno() for s in node.sockets.values()))
        for node in self.nodes:  # the children hold them now
            for s in node.sockets.values():
                s.close()
            node.sockets.clear()

    def exited(self) -> list[LocalNode]:
        return [n for n in self.nodes if n.proc is not None and n.proc.poll() is not None]

    def brokers_listed(self, node: LocalNode) -> list[int] | None:
        """The broker ids ``node``'s Metadata lists (registered and unfenced), or None while it does not answer."""
        from kraftwire.protocol import messages as w
        from kraftwire.server.edge.client import request_once

        try:
            answer = asyncio.run(request_once(HOST, node.port("PLAINTEXT"), w.MetadataRequest(
                topics=[], allow_auto_topic_creation=False), 12, timeout=2.0))
        except (OSError, asyncio.TimeoutError, ConnectionError):
            return None
        return sorted(b.node_id for b in answer.brokers)

    def wait_ready(self, timeout: float) -> bool:
        """Until every broker's Metadata lists every broker; False when ``timeout`` passed or a node exited."""
        want = [n.node_id for n in self.brokers]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self.exited():
            if all(self.brokers_listed(n) == want for n in self.brokers):
                return True
            time.sleep(0.2)
        return False

    def stop(self) -> list[int]:
        """SIGTERM to the brokers (each shuts down in a controlled way while the controllers still run), then to
        the controllers; SIGKILL to any node still running after ``STOP_S``. The exit codes, in node order."""
        for group in (self.brokers, [n for n in self.nodes if not n.is_broker]):
            running = [n.proc for n in group if n.proc is not None and n.proc.poll() is None]
            for proc in running:
                proc.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + STOP_S
            for proc in running:
                try:
                    proc.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)
        return [n.proc.returncode if n.proc is not None else 0 for n in self.nodes]

    def tail(self, node: LocalNode, lines: int = 20) -> str:
        try:
            with open(node.log_path, encoding="utf-8", errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""
