"""Real ``kraftwire`` processes on real sockets (127.0.0.1) and real files, for the end-to-end, roles, interop and
Spark tests and the benchmarks.

Listening sockets are bound here (port 0) *before* the voter list is written, and handed to the node processes
(``--listener-fd``); the harness keeps its own copy open, so a node killed with SIGKILL restarts on the very same
socket (no pick-then-bind race, no port reuse window). Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time

import kraftwire

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(kraftwire.__file__)))
ELECTION_TIMEOUT_S = 30.0
#: a node that serves its Raft log to clients as a topic and appends nothing itself (Kafka's raft test server with
#: no workload): the client, roles and security tests run against it, ``kraftwire.metadata.log.topic`` naming the topic
SERVE_ONLY = {"command": "test-server", "extra_args": ("--throughput", "0")}


def kraftwire_env() -> dict:
    """Children import the kraftwire under test (the installed one in CI), never the checkout they run in."""
    from kraftwire.tools.local_cluster import kraftwire_env as env

    return env()


def kw(*args, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``python -m kraftwire ARGS`` to completion."""
    proc = subprocess.run([sys.executable, "-m", "kraftwire", *args], capture_output=True, text=True,
                          env=kraftwire_env(), timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"kraftwire {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def bind_listener() -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(128)
    s.set_inheritable(True)
    return s


def describe(port: int, timeout: float = 3.0):
    """(DescribeQuorum v2 response, DescribeCluster response) via the node on ``port``."""
    from kraftwire.tools.metadata_quorum import fetch_quorum

    return asyncio.run(fetch_quorum("127.0.0.1", port, timeout=timeout))


def leader_view(port: int):
    """The quorum partition as the node on ``port`` reports it (forwarded to the leader), or None."""
    try:
        quorum, _ = describe(port)
    except Exception:  # noqa: BLE001 - nodes may be starting or down
        return None
    part = quorum.topics[0].partitions[0]
    if part.error_code != 0 or part.leader_id < 0:
        return None
    return part


class NodeProc:
    def __init__(self, cluster: "Cluster", node_id: int, sock: socket.socket, config: str) -> None:
        self.cluster = cluster
        self.node_id = node_id
        self.sock = sock
        self.port = sock.getsockname()[1]
        self.config = config
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    @property
    def log_dir(self) -> str:
        return os.path.join(self.cluster.base, f"kraft-logs-{self.node_id}")

    @property
    def stderr_path(self) -> str:
        return os.path.join(self.cluster.base, f"node-{self.node_id}.{self.starts}.log")

    def start(self, *extra: str) -> None:
        assert self.proc is None or self.proc.poll() is not None
        self.starts += 1
        cmd = [sys.executable, "-m", "kraftwire", self.cluster.command, "--config", self.config,
               "--listener-fd", f"{self.cluster.listener}={self.sock.fileno()}", *self.cluster.extra_args, *extra]
        out = open(os.path.join(self.cluster.base, f"node-{self.node_id}.{self.starts}.out"), "wb")
        err = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, pass_fds=(self.sock.fileno(),),
                                     env=kraftwire_env())
        out.close()
        err.close()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def terminate(self, timeout: float = 30) -> int:
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
                raise AssertionError(f"node {self.node_id} did not stop within {timeout} s of SIGTERM")
        return self.proc.returncode

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stderr(self) -> str:
        """Everything the node wrote to stderr (its log), over all its starts."""
        return self._output("log")

    def stdout(self) -> str:
        return self._output("out")

    def _output(self, suffix: str) -> str:
        out = []
        for i in range(1, self.starts + 1):
            path = os.path.join(self.cluster.base, f"node-{self.node_id}.{i}.{suffix}")
            if os.path.exists(path):
                with open(path, encoding="utf-8", errors="replace") as f:
                    out.append(f.read())
        return "\n".join(out)


class Cluster:
    """N nodes in the README's shape: ``node.id=N``, ``listeners=PLAINTEXT://localhost:P``,
    ``controller.listener.names=PLAINTEXT``, ``controller.quorum.voters=1@localhost:P1,...``,
    ``log.dirs=<tmp>/kraft-logs-N``."""

    def __init__(self, base: str, n: int, *, command: str = "test-server", extra_args=(), extra_props: str = "",
                 listener: str = "PLAINTEXT", observers: int = 0):
        self.base = base
        self.listener = listener
        self.command = command
        self.extra_args = list(extra_args)
        socks = [bind_listener() for _ in range(n)]
        voters = ",".join(f"{i}@localhost:{s.getsockname()[1]}" for i, s in enumerate(socks[:n - observers], 1))
        cluster_id = kw("storage", "random-uuid").stdout.strip()
        self.cluster_id = cluster_id
        self.nodes: dict[int, NodeProc] = {}
        for i, s in enumerate(socks, 1):
            path = os.path.join(base, f"server-{i}.properties")
            with open(path, "w", encoding="utf-8") as f:
                f.write(f"node.id={i}\nlisteners=PLAINTEXT://localhost:{s.getsockname()[1]}\n"
                        f"controller.listener.names=PLAINTEXT\ncontroller.quorum.voters={voters}\n"
                        f"log.dirs={os.path.join(base, f'kraft-logs-{i}')}\n{extra_props}")
            kw("storage", "format", "-t", cluster_id, "-c", path)
            self.nodes[i] = NodeProc(self, i, s, path)

    def start_all(self) -> None:
        for node in self.nodes.values():
            node.start()

    def running(self):
        return [n for n in self.nodes.values() if n.running]

    def wait_for_leader(self, *, exclude=(), min_epoch: int = 0, timeout: float = ELECTION_TIMEOUT_S):
        """Poll the running nodes until one reports a leader (not in ``exclude``, epoch >= ``min_epoch``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for node in self.running():
                part = leader_view(node.port)
                if part is not None and part.leader_id not in exclude and part.leader_epoch >= min_epoch:
                    return part
            self.check_alive()
            time.sleep(0.1)
        raise AssertionError(f"no leader within {timeout} s\n" + self.diagnostics())

    def wait_for(self, predicate, what: str, timeout: float = ELECTION_TIMEOUT_S):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            for node in self.running():
                part = leader_view(node.port)
                if part is not None:
                    last = part
                    if predicate(part):
                        return part
                    break
            self.check_alive()
            time.sleep(0.2)
        raise AssertionError(f"{what} not reached within {timeout} s; last view {last}\n" + self.diagnostics())

    def check_alive(self) -> None:
        for node in self.nodes.values():
            if node.proc is not None and node.proc.poll() not in (None, 0, -signal.SIGKILL, -signal.SIGTERM):
                raise AssertionError(f"node {node.node_id} exited with {node.proc.returncode}\n" + node.stderr()[-4000:])

    def diagnostics(self) -> str:
        return "\n".join(f"--- node {n.node_id} (running={n.running}) ---\n{n.stderr()[-3000:]}"
                         for n in self.nodes.values())

    def stop_all(self) -> dict[int, int]:
        codes = {}
        for node in self.nodes.values():
            codes[node.node_id] = node.terminate()
        return codes

    def close(self) -> None:
        for node in self.nodes.values():
            node.kill()
            node.sock.close()


class CombinedNode:
    """One ``server-start`` process with ``process.roles=broker,controller`` on pre-bound listeners, formatted in
    ``base`` with ``format_args`` (e.g. ``("--release-version", "3.9")``) (benchmarks, the conformance runner):
    ``with CombinedNode(base, extra) as node: ... node.port ... node.logs``. Its stderr (the node's log) goes to
    ``node.log_path``."""

    def __init__(self, base, extra_props: str = "", format_args=()) -> None:
        self.base = str(base)
        self.broker, self.controller = bind_listener(), bind_listener()
        self.port, cport = self.broker.getsockname()[1], self.controller.getsockname()[1]
        self.logs = os.path.join(self.base, "logs")
        self.config = os.path.join(self.base, "server.properties")
        with open(self.config, "w", encoding="utf-8") as f:
            f.write(f"process.roles=broker,controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:{cport}\n"
                    f"listeners=PLAINTEXT://localhost:{self.port},CONTROLLER://localhost:{cport}\n"
                    "controller.listener.names=CONTROLLER\n"
                    "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n"
                    f"log.dirs={self.logs}\n" + extra_props)
        kw("storage", "format", "-t", kw("storage", "random-uuid").stdout.strip(), "-c", self.config, *format_args)
        self.log_path = os.path.join(self.base, "kraftwire.log")
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "CombinedNode":
        with open(self.log_path, "ab") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "kraftwire", "server-start", "--config", self.config,
                 "--listener-fd", f"PLAINTEXT={self.broker.fileno()}",
                 "--listener-fd", f"CONTROLLER={self.controller.fileno()}"],
                stdout=subprocess.DEVNULL, stderr=err,
                pass_fds=(self.broker.fileno(), self.controller.fileno()), env=kraftwire_env())
        return self

    def stderr(self) -> str:
        """What the node wrote to standard error (its log) so far."""
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:  # a node stuck in a computation never runs its SIGTERM handler
                self.proc.kill()
                self.proc.wait(10)
        self.broker.close()
        self.controller.close()


def segment_batches(partition_dir: str, *, check: bool = True) -> list[dict]:
    """Every batch of a node's log (dump-log --json over its segments, in order); ``check=False`` accepts a torn
    tail (dump-log then exits non-zero and reports it)."""
    files = sorted(os.path.join(partition_dir, f) for f in os.listdir(partition_dir) if f.endswith(".log"))
    if not files:
        return []
    out = kw("dump-log", "--json", "--files", *files, check=check).stdout
    return [b for b in (json.loads(line) for line in out.splitlines() if line.startswith("{")) if "base_offset" in b]


# --- KIP-853 process tests: servers started on pre-bound sockets, ``metadata-quorum describe --status`` as data ------
def start_server(config, socks, log_path, listener_fds: dict[str, socket.socket], **popen) -> subprocess.Popen:
    """``kraftwire server-start config`` serving each listener on its pre-bound socket (``{name: socket}``), its
    stderr appended to ``log_path``; ``popen``: more ``subprocess.Popen`` arguments (e.g. ``preexec_fn``)."""
    fds = [arg for name, sock in listener_fds.items() for arg in ("--listener-fd", f"{name}={sock.fileno()}")]
    with open(log_path, "ab") as err:
        return subprocess.Popen([sys.executable, "-m", "kraftwire", "server-start", str(config), *fds],
                                stdout=subprocess.DEVNULL, stderr=err,
                                pass_fds=[s.fileno() for s in socks], env=kraftwire_env(), **popen)


def stop_all(procs) -> None:
    """Terminate every process still running, then wait (killing one that does not stop in 30 s)."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()


def quorum_status(ports) -> dict:
    """``metadata-quorum describe --status`` through the controllers on ``ports`` as {key: value} ({} while none
    answers)."""
    try:
        done = kw("metadata-quorum", "--bootstrap-controller", ",".join(f"localhost:{p}" for p in ports),
                  "describe", "--status", check=False, timeout=20)
    except subprocess.TimeoutExpired:  # a controller still starting holds the connection without answering
        return {}
    if done.returncode != 0:
        return {}
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in done.stdout.splitlines())}


def status_replicas(status: dict, key: str) -> dict:
    """``CurrentVoters`` / ``CurrentObservers`` of a ``quorum_status`` as {id: entry}."""
    return {r["id"]: r for r in json.loads(status.get(key) or "[]")}
