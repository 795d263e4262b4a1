"""The shipped single-node ``config/kraft.properties`` (with an ephemeral port and a temporary log dir): it elects
itself and commits the workload; ``metadata-quorum`` prints Kafka's formats; kafka-python's
``describe_metadata_quorum()`` gets the same answers; metrics are served; malformed frames and half-open
connections never stop it."""

from __future__ import annotations

import os
import random
import re
import socket
import struct
import time
import urllib.request

from harness import processes


SHIPPED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "config",
                       "kraft.properties")


def _start_single(make_cluster, tmp_path, *, metrics: bool = True):
    # The tests run from a checkout, where the shipped sample config sits beside them: its absence is a failure.
    assert os.path.exists(SHIPPED), f"the shipped single-node config is missing: {SHIPPED}"
    cluster = make_cluster(1, extra_args=["--throughput", "1000", "--report-interval", "1"], listener="CONTROLLER")
    node = cluster.nodes[1]
    with open(SHIPPED, encoding="utf-8") as f:
        text = f.read()
    assert "node.id=1" in text and "controller.quorum.voters=1@localhost:9093" in text
    text = text.replace("localhost:9093", f"localhost:{node.port}").replace("/tmp/kraft-logs-1", node.log_dir)
    metrics_port = None
    if metrics:
        probe = processes.bind_listener()
        metrics_port = probe.getsockname()[1]
        probe.close()  # the metrics endpoint is not part of the quorum; a lost race only fails this test's start
        text += f"\nkraftwire.metrics.port={metrics_port}\n"
    with open(node.config, "w", encoding="utf-8") as f:
        f.write(text)
    node.start()
    return cluster, node, metrics_port


def test_shipped_single_node_config_commits_and_describes(make_cluster, tmp_path):
    cluster, node, metrics_port = _start_single(make_cluster, tmp_path)
    part = cluster.wait_for_leader()
    assert part.leader_id == 1
    part = cluster.wait_for(lambda p: p.high_watermark > 500, "500 committed offsets")
    # The node imports the kraftwire under test with its C codec, even though it starts in this checkout (whose
    # own copy is not built in CI): a node falling back to the pure-Python twin says so, and this fails.
    assert "record codec: the C extension" in node.stderr(), node.stderr()[-2000:]

    status = processes.kw("metadata-quorum", "--bootstrap-server", f"localhost:{node.port}", "describe", "--status").stdout
    keys = [line.split(":", 1)[0] for line in status.splitlines()]
    assert keys == ["ClusterId", "LeaderId", "LeaderEpoch", "HighWatermark", "MaxFollowerLag", "MaxFollowerLagTimeMs",
                    "CurrentVoters", "CurrentObservers"]
    assert re.search(r"^LeaderId:\s+1$", status, re.M)
    assert f"ClusterId:              {cluster.cluster_id}" in status
    assert f'"endpoints": ["CONTROLLER://localhost:{node.port}"]' in status
    repl = processes.kw("metadata-quorum", "--bootstrap-server", f"localhost:{node.port}", "describe", "--replication",
                  "--human-readable").stdout.splitlines()
    assert repl[0].split() == ["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp",
                               "LastCaughtUpTimestamp", "Status"]
    assert repl[1].split()[0] == "1" and repl[1].split()[-1] == "Leader" and "ms ago" in repl[1]
    # a list of bootstrap servers is tried in order until one answers (a closed port first)
    dead = processes.bind_listener()
    dead_port = dead.getsockname()[1]
    dead.close()
    listed = processes.kw("metadata-quorum", "--bootstrap-server", f"localhost:{dead_port},localhost:{node.port}",
                          "describe", "--status").stdout
    assert re.search(r"^LeaderId:\s+1$", listed, re.M)

    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=f"localhost:{node.port}", request_timeout_ms=10000)
    try:
        answer = admin.describe_metadata_quorum()
    finally:
        admin.close()
    p = answer["topics"][0]["partitions"][0]
    assert p["error"] is None and p["leader_id"] == 1 and p["leader_epoch"] == part.leader_epoch
    assert p["high_watermark"] >= part.high_watermark
    assert [v["replica_id"] for v in p["current_voters"]] == [1]
    assert answer["nodes"][0]["listeners"][0]["port"] == node.port

    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as resp:
        metrics = resp.read().decode()
    for name in ("kraftwire_raft_epoch", "kraftwire_raft_high_watermark", "kraftwire_raft_log_end_offset",
                 'kraftwire_raft_state{state="Leader"} 1', "kraftwire_requests_total"):
        assert name in metrics, name
    assert cluster.stop_all() == {1: 0}
    out = node.stdout()
    assert "records/s:" in out and "bytes.committed.rate" in out and "p99.9" in out


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def _send_and_wait_close(port: int, data: bytes, timeout: float = 10.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def test_malformed_frames_and_half_open_connections_never_stop_the_node(make_cluster, tmp_path):
    cluster, node, _ = _start_single(make_cluster, tmp_path, metrics=False)
    cluster.wait_for_leader()
    port = node.port
    rng = random.Random(6)
    half_open = []
    for _ in range(20):  # connections that send half a frame and then say nothing
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(struct.pack(">i", 1000) + b"\x00\x12")
        half_open.append(s)
    cases = [
        struct.pack(">i", -5),                                 # negative size prefix
        struct.pack(">i", 2**31 - 1) + b"xx",                  # above socket.request.max.bytes
        _frame(b"\x00\x12"),                                   # too short for a header
        _frame(struct.pack(">hhi", 9999, 0, 7) + b"\xff\xff"),  # unknown api key
        _frame(struct.pack(">hhi", 52, 77, 8) + b"\x00\x00"),   # unsupported Vote version
        _frame(struct.pack(">hhi", 52, 2, 9) + b"\x00\x00" + b"\xff" * 13),  # Vote body that does not decode
        _frame(struct.pack(">hhi", 55, 2, 10) + b"\x00\x00\x00" + bytes(range(40))),  # garbled DescribeQuorum
    ]
    for _ in range(60):
        body = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 64)))
        key = rng.choice([1, 18, 52, 53, 54, 55, 59, 60, rng.randrange(0, 100)])
        cases.append(_frame(struct.pack(">hhi", key, rng.randrange(-1, 20), rng.randrange(1 << 30)) + body))
    for data in cases:
        _send_and_wait_close(port, data)
    # an ApiVersions request at a version above the served range gets Kafka's KIP-511 answer (v0 body, error 35)
    reply = _send_and_wait_close(port, _frame(struct.pack(">hhi", 18, 99, 42) + b"\x00\x00\x00"))
    assert len(reply) >= 10 and struct.unpack_from(">i", reply, 4)[0] == 42
    assert struct.unpack_from(">h", reply, 8)[0] == 35
    assert node.running
    before = cluster.wait_for(lambda p: True, "a view").high_watermark
    cluster.wait_for(lambda p: p.high_watermark > before + 200, "commits after the garbage")
    for s in half_open:
        s.close()
    assert node.running
    assert cluster.stop_all() == {1: 0}
    assert "closing connection from" in node.stderr()
