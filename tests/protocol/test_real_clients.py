"""Golden traffic from real Kafka clients: every request they send decodes exactly and re-encodes byte-identical.

A small capture server (socket threads on 127.0.0.1, ephemeral port) answers ApiVersions from an advertised
registry, Metadata pointing at itself, and just enough of Produce/Fetch/ListOffsets/FindCoordinator/
InitProducerId for kafka-python, aiokafka, confluent-kafka and kcat to go on and send Metadata, Produce,
Fetch, ListOffsets, FindCoordinator and JoinGroup. Every client runs in a subprocess with a hard timeout.
A missing client is a failure, never a skip.
"""

from __future__ import annotations

import shutil
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import uuid

import pytest

from kraftwire import error_codes as ec
from kraftwire.errors import ProtocolError, UnsupportedVersionError
from kraftwire.ids import METADATA_TOPIC_ID
from kraftwire.protocol import codec, framing, messages as m
from kraftwire.protocol.api_versions import api_versions_response

pytestmark = pytest.mark.interop

TOPIC = "__cluster_metadata"
CLIENT_TIMEOUT = 25

# What the capture server advertises: the full declared ranges of the APIs it answers.
ADVERTISED = {
    m.api(n).key: m.api(n).valid_versions
    for n in ("ApiVersions", "Metadata", "Produce", "Fetch", "ListOffsets", "FindCoordinator", "InitProducerId",
              "JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch", "DescribeCluster")
}


def _topic_id(name: str) -> uuid.UUID:
    return METADATA_TOPIC_ID if name == TOPIC else uuid.uuid5(uuid.NAMESPACE_DNS, name)


class CaptureServer:
    def __init__(self, advertised: dict | None = None) -> None:
        self.advertised = dict(ADVERTISED if advertised is None else advertised)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.frames: list[bytes] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stop = False
        self._conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop = True
        self.sock.close()
        for c in list(self._conns):
            try:
                c.close()
            except OSError:
                pass

    def _accept(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        splitter = framing.FrameSplitter()
        conn.settimeout(CLIENT_TIMEOUT + 5)
        try:
            while not self._stop:
                data = conn.recv(1 << 16)
                if not data:
                    return
                for frame in splitter.feed(data):
                    with self._lock:
                        if sum(1 for f in self.frames if f[:4] == frame[:4]) < 6:  # bound per (key, version)
                            self.frames.append(frame)
                    reply = self._answer(frame)
                    if reply is not None:
                        conn.sendall(b"".join(reply))
        except (OSError, ProtocolError) as exc:
            if not self._stop and not isinstance(exc, (ConnectionResetError, TimeoutError, BrokenPipeError)):
                self.errors.append(repr(exc))
        finally:
            conn.close()

    def _answer(self, frame: bytes):
        try:
            req = framing.decode_request(frame)
        except UnsupportedVersionError as exc:
            if exc.api_key == 18:
                body, version = api_versions_response(self.advertised, exc.api_version)
                return framing.encode_response(body, version, exc.correlation_id)
            self.errors.append(repr(exc))
            return None
        key, v, cid, body = req.api.key, req.version, req.header.correlation_id, req.body
        if key == 18:
            resp, v = api_versions_response(self.advertised, v)
        elif key == 3:
            resp = self._metadata(body, v)
        elif key == 0:
            if body.acks == 0:
                return None
            R = m.ProduceResponse
            resp = R(responses=[R.TopicProduceResponse(name=t.name, partition_responses=[
                R.PartitionProduceResponse(index=p.index, base_offset=0, log_start_offset=0)
                for p in t.partition_data]) for t in body.topic_data])
        elif key == 1:
            R = m.FetchResponse
            resp = R(responses=[R.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id, partitions=[
                R.PartitionData(partition_index=p.partition, high_watermark=0, last_stable_offset=0,
                                log_start_offset=0, records=b"") for p in t.partitions]) for t in body.topics])
        elif key == 2:
            R = m.ListOffsetsResponse
            resp = R(topics=[R.ListOffsetsTopicResponse(name=t.name, partitions=[
                R.ListOffsetsPartitionResponse(partition_index=p.partition_index, timestamp=-1, offset=0)
                for p in t.partitions]) for t in body.topics])
        elif key == 10:
            R = m.FindCoordinatorResponse
            keys = body.coordinator_keys or [body.key]
            resp = R(node_id=0, host="127.0.0.1", port=self.port, coordinators=[
                R.Coordinator(key=k, node_id=0, host="127.0.0.1", port=self.port) for k in keys])
        elif key == 22:
            resp = m.InitProducerIdResponse(producer_id=1000, producer_epoch=0)
        else:  # groups etc.: a well-formed "coordinator not available" answer
            resp = req.api.response()
            if hasattr(resp, "error_code"):
                resp.error_code = ec.COORDINATOR_NOT_AVAILABLE
        return framing.encode_response(resp, v, cid)

    def _metadata(self, body, v):
        R = m.MetadataResponse
        names = [t.name for t in body.topics if t.name] if body.topics else []
        if not names:
            names = [TOPIC]
        topics = [R.MetadataResponseTopic(name=n, topic_id=_topic_id(n), partitions=[
            R.MetadataResponsePartition(partition_index=0, leader_id=0, leader_epoch=0, replica_nodes=[0], isr_nodes=[0])])
            for n in names]
        return R(brokers=[R.MetadataResponseBroker(node_id=0, host="127.0.0.1", port=self.port)],
                 cluster_id="kraftwire-capture", controller_id=0, topics=topics)


def _run(args, *, stdin: bytes | None = None, timeout: float = CLIENT_TIMEOUT) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(args, input=stdin, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:  # the client hung on our answers: fine, we have its requests
        return subprocess.CompletedProcess(args, -9, exc.stdout or b"", exc.stderr or b"")


KAFKA_PYTHON = """
import sys
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
B = sys.argv[1]
common = dict(bootstrap_servers=B, request_timeout_ms=4000)
p = KafkaProducer(max_block_ms=4000, **common)
try:
    p.send("{topic}", b"value", key=b"key").get(timeout=6)
finally:
    p.close(timeout=2)
c = KafkaConsumer(group_id=None, consumer_timeout_ms=2500, auto_offset_reset="earliest", fetch_max_wait_ms=200, **common)
c.assign([TopicPartition("{topic}", 0)])
c.poll(timeout_ms=2000)
c.close()
g = KafkaConsumer("{topic}", group_id="capture-group", consumer_timeout_ms=4000, session_timeout_ms=6000,
                  heartbeat_interval_ms=1000, **common)
g.poll(timeout_ms=4000)
g.close(autocommit=False)
"""

AIOKAFKA = """
import asyncio, sys
from aiokafka import AIOKafkaProducer, AIOKafkaConsumer, TopicPartition
B = sys.argv[1]
async def main():
    p = AIOKafkaProducer(bootstrap_servers=B, request_timeout_ms=4000)
    await p.start()
    try:
        await asyncio.wait_for(p.send_and_wait("{topic}", b"value", key=b"key"), 6)
    finally:
        await p.stop()
    c = AIOKafkaConsumer(bootstrap_servers=B, group_id=None, auto_offset_reset="earliest", fetch_max_wait_ms=200,
                         request_timeout_ms=4000)
    await c.start()
    try:
        c.assign([TopicPartition("{topic}", 0)])
        await c.getmany(timeout_ms=2000)
    finally:
        await c.stop()
asyncio.run(main())
"""

CONFLUENT = """
import sys
from confluent_kafka import Producer, Consumer
B = sys.argv[1]
p = Producer({{"bootstrap.servers": B, "socket.timeout.ms": 4000, "message.timeout.ms": 5000}})
p.produce("{topic}", b"value", b"key")
p.flush(6)
c = Consumer({{"bootstrap.servers": B, "group.id": "capture-group", "session.timeout.ms": 6000,
              "auto.offset.reset": "earliest", "socket.timeout.ms": 4000}})
c.subscribe(["{topic}"])
c.poll(5)
c.close()
"""


def _script(src: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(src).format(topic=TOPIC)]


def _drive(client: str, server: CaptureServer) -> str:
    """Run the client against *server*; returns its stderr tails (for failure messages)."""
    bootstrap = f"127.0.0.1:{server.port}"
    runs = []
    if client == "kafka-python":
        runs.append(_run(_script(KAFKA_PYTHON) + [bootstrap]))
    elif client == "aiokafka":
        runs.append(_run(_script(AIOKAFKA) + [bootstrap]))
    elif client == "confluent-kafka":
        runs.append(_run(_script(CONFLUENT) + [bootstrap]))
    elif client == "kcat":
        kcat = shutil.which("kcat")
        assert kcat, "kcat is not installed (the CI installs it; this test must not skip)"
        runs.append(_run([kcat, "-b", bootstrap, "-L", "-m", "5"], timeout=10))
        runs.append(_run([kcat, "-b", bootstrap, "-P", "-t", TOPIC, "-p", "0", "-X", "message.timeout.ms=5000"],
                         stdin=b"hello\nworld\n", timeout=10))
        runs.append(_run([kcat, "-b", bootstrap, "-C", "-t", TOPIC, "-p", "0", "-o", "beginning", "-c", "1", "-e",
                          "-X", "fetch.wait.max.ms=200"], timeout=6))
    return "\n".join(f"rc={r.returncode} stderr: {r.stderr.decode(errors='replace')[-800:]}" for r in runs)


# client -> the api keys it must have sent
EXPECTED = {
    "kafka-python": {18, 3, 22, 0, 2, 1, 10, 11},
    "aiokafka": {18, 3, 0, 2, 1},
    "confluent-kafka": {18, 3, 0, 10, 11},
    "kcat": {18, 3, 0, 2, 1},
}
SEEN: dict[str, set[int]] = {}


def _module_present(client: str) -> None:
    mod = {"kafka-python": "kafka", "aiokafka": "aiokafka", "confluent-kafka": "confluent_kafka"}.get(client)
    if mod:
        __import__(mod)  # ImportError fails the test: peers are required test dependencies


@pytest.mark.parametrize("client", list(EXPECTED))
def test_real_client_traffic_round_trips(client):
    _module_present(client)
    server = CaptureServer()
    try:
        log = _drive(client, server)
    finally:
        server.close()
    assert not server.errors, server.errors
    assert server.frames, f"{client} sent nothing\n{log}"
    seen = set()
    for frame in server.frames:
        req = framing.decode_request(frame, exact=True)  # no trailing bytes allowed
        hv = req.api.request_header_version(req.version)
        again = codec.encode(req.header, hv) + codec.encode(req.body, req.version)
        assert again == frame, f"{client}: {req.api.name} v{req.version} did not re-encode byte-identical"
        seen.add(req.api.key)
    SEEN[client] = seen
    missing = EXPECTED[client] - seen
    assert not missing, f"{client} never sent api keys {sorted(missing)} (saw {sorted(seen)})\n{log}"


def test_all_clients_together_cover_the_client_apis():
    if len(SEEN) < len(EXPECTED):
        for client in EXPECTED:
            if client not in SEEN:
                test_real_client_traffic_round_trips(client)
    union = set().union(*SEEN.values())
    for name in ("Metadata", "Produce", "Fetch", "ListOffsets", "FindCoordinator", "JoinGroup"):
        assert m.api(name).key in union, name


# KIP-511 with real clients: advertise ApiVersions only up to v2, so each client's first ApiVersions request
# (kafka-python v4, librdkafka v3) gets error 35 in a v0 body; the client must retry lower and go on.
FALLBACK = {
    "kafka-python": (4, KAFKA_PYTHON),
    "confluent-kafka": (3, CONFLUENT),
}


@pytest.mark.parametrize("client", list(FALLBACK))
def test_real_clients_follow_the_kip_511_fallback(client):
    _module_present(client)
    first_version, _ = FALLBACK[client]
    server = CaptureServer(advertised={**ADVERTISED, 18: (0, 2)})
    try:
        log = _drive(client, server)
    finally:
        server.close()
    assert not server.errors, server.errors
    sent = []
    for frame in server.frames:
        key, version = struct.unpack_from(">hh", frame, 0)
        sent.append((key, version))
    api_versions_sent = [v for k, v in sent if k == 18]
    assert api_versions_sent and api_versions_sent[0] == first_version, (sent, log)
    assert any(v <= 2 for v in api_versions_sent), (sent, log)
    assert any(k == 3 for k, _ in sent), f"{client} did not go on to Metadata after the fallback: {sent}\n{log}"
