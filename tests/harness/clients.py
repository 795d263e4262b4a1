"""Helpers for real Kafka clients against a real 3-node kraftwire quorum (processes on 127.0.0.1).

Builds on ``processes.processes``. One quorum per test module (the clients
write to the quorum's one topic, ``clients``; every test tags its values and checks only its own records, in full
and in order, so modules stay independent without paying for a quorum per test). Every wait is bounded.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time

from kraftwire.protocol import framing

from harness import processes

TOPIC = "clients"
RECORDS = 10_000


class Quorum:
    def __init__(self, cluster) -> None:
        self.cluster = cluster

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.cluster.nodes.values())

    @property
    def servers(self) -> list[str]:
        return [f"127.0.0.1:{n.port}" for n in self.cluster.nodes.values()]

    def leader(self):
        part = self.cluster.wait_for_leader()
        return self.cluster.nodes[part.leader_id]

    def partition_dir(self, node) -> str:
        return os.path.join(node.log_dir, f"{TOPIC}-0")

    def batches(self, node) -> list[dict]:
        return processes.segment_batches(self.partition_dir(node), check=False)


def start_quorum(base: str, extra_props: str = "") -> Quorum:
    cluster = processes.Cluster(base, 3, **processes.SERVE_ONLY, extra_props=f"kraftwire.metadata.log.topic={TOPIC}\n" + extra_props)
    cluster.start_all()
    cluster.wait_for_leader()
    return Quorum(cluster)


def values(tag: str, n: int = RECORDS) -> list[bytes]:
    return [f"{tag}-{i:06d}".encode() for i in range(n)]


def only(tag: str, got) -> list[bytes]:
    prefix = f"{tag}-".encode()
    return [v for v in got if v is not None and v.startswith(prefix)]


def bounded(seconds: float):
    """A deadline helper: ``left()`` seconds remaining, ``expired()``."""
    end = time.monotonic() + seconds

    class _D:
        @staticmethod
        def left() -> float:
            return max(0.0, end - time.monotonic())

        @staticmethod
        def expired() -> bool:
            return time.monotonic() >= end

    return _D


class FaultProxy:
    """A TCP proxy in front of every node of a quorum (threads, blocking sockets). Metadata and FindCoordinator
    answers are rewritten so clients keep talking through the proxies; ``drop_produce(n)`` makes the proxies
    swallow the next ``n`` Produce answers that report success, closing that connection right after the node
    processed the request (the client sees the connection die and resends the same batch)."""

    def __init__(self, quorum: Quorum) -> None:
        self.quorum = quorum
        self.lock = threading.Lock()
        self.to_drop = 0
        self.dropped = 0
        self.listeners = {}
        self.ports = {}
        self.closed = False
        for node_id, node in quorum.cluster.nodes.items():
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            s.listen(64)
            self.listeners[node_id] = s
            self.ports[node_id] = s.getsockname()[1]
            threading.Thread(target=self._accept, args=(s, node.port), daemon=True).start()

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{p}" for p in self.ports.values())

    def drop_produce(self, n: int) -> None:
        with self.lock:
            self.to_drop += n

    def close(self) -> None:
        self.closed = True
        for s in self.listeners.values():
            s.close()

    # ------------------------------------------------------------------------------------------------ plumbing
    def _accept(self, listener, target_port: int) -> None:
        while not self.closed:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", target_port), timeout=10)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            inflight: dict[int, tuple[int, int]] = {}
            threading.Thread(target=self._pump_requests, args=(client, server, inflight), daemon=True).start()
            threading.Thread(target=self._pump_responses, args=(server, client, inflight), daemon=True).start()

    @staticmethod
    def _read_frame(sock):
        head = b""
        while len(head) < 4:
            chunk = sock.recv(4 - len(head))
            if not chunk:
                return None
            head += chunk
        (size,) = struct.unpack(">i", head)
        body = bytearray()
        while len(body) < size:
            chunk = sock.recv(min(1 << 20, size - len(body)))
            if not chunk:
                return None
            body += chunk
        return head, bytes(body)

    @staticmethod
    def _shut(*socks) -> None:
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _pump_requests(self, client, server, inflight) -> None:
        try:
            while True:
                got = self._read_frame(client)
                if got is None:
                    break
                head, body = got
                api_key, version, cid = struct.unpack_from(">hhi", body, 0)
                inflight[cid] = (api_key, version)
                server.sendall(head + body)
        except OSError:
            pass
        self._shut(client, server)

    def _pump_responses(self, server, client, inflight) -> None:
        try:
            while True:
                got = self._read_frame(server)
                if got is None:
                    break
                head, body = got
                (cid,) = struct.unpack_from(">i", body, 0)
                api_key, version = inflight.pop(cid, (None, None))
                if api_key in (3, 10):  # Metadata, FindCoordinator: point clients at the proxies
                    _, resp = framing.decode_response(body, api_key, version)
                    self._rewrite(api_key, resp)
                    client.sendall(b"".join(bytes(c) for c in framing.encode_response(resp, version, cid)))
                    continue
                if api_key == 0:
                    _, resp = framing.decode_response(body, api_key, version)
                    ok = all(p.error_code == 0 for t in resp.responses for p in t.partition_responses)
                    with self.lock:
                        drop = ok and self.to_drop > 0
                        if drop:
                            self.to_drop -= 1
                            self.dropped += 1
                    if drop:
                        break
                client.sendall(head + body)
        except OSError:
            pass
        self._shut(client, server)

    def _rewrite(self, api_key: int, resp) -> None:
        if api_key == 3:
            for b in resp.brokers:
                if b.node_id in self.ports:
                    b.host, b.port = "127.0.0.1", self.ports[b.node_id]
        else:
            if getattr(resp, "node_id", -1) in self.ports:
                resp.host, resp.port = "127.0.0.1", self.ports[resp.node_id]
            for co in resp.coordinators or []:
                if co.node_id in self.ports:
                    co.host, co.port = "127.0.0.1", self.ports[co.node_id]


#: the KafkaJS scripts of the interop tests (node_modules installed by CI, or here on first use)
KAFKAJS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "interop", "kafkajs")


def ensure_kafkajs() -> None:
    import shutil
    import subprocess

    assert shutil.which("node") and shutil.which("npm"), "node and npm are required for the KafkaJS tests"
    if not os.path.isdir(os.path.join(KAFKAJS_DIR, "node_modules", "kafkajs")):
        out = subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=KAFKAJS_DIR, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, f"npm install kafkajs failed:\n{out.stdout}\n{out.stderr}"


def read_committed_to_end(port: int, topic: str, partition: int = 0, group: str = "txn-reader") -> list[bytes]:
    """A confluent-kafka consumer (isolation.level=read_committed) from the beginning of ``topic``-``partition`` to
    the end of what it may read (the last stable offset, told by its partition-EOF event); bounded."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": group,
                         "enable.auto.commit": False, "isolation.level": "read_committed",
                         "enable.partition.eof": True, "socket.timeout.ms": 5000})
    try:
        consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        values = []
        for _ in range(100):
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == -191:  # _PARTITION_EOF: at the last stable offset
                    return values
                raise AssertionError(str(msg.error()))
            values.append(msg.value())
        raise AssertionError(f"no end of partition after {values}")
    finally:
        consumer.close()
