"""``kraftwire server-start`` refuses what it cannot run, naming the key and value (or the directory and why), and
exits non-zero at once; a node answers Raft requests from another cluster with INCONSISTENT_CLUSTER_ID and logs it."""

from __future__ import annotations

import socket
import subprocess
import sys
import uuid

import pytest

from harness import processes

BASE = """node.id=1
listeners=PLAINTEXT://localhost:{port}
controller.listener.names=PLAINTEXT
controller.quorum.voters=1@localhost:{port}
log.dirs={logs}
"""


def _start(config_path, timeout=30):
    return subprocess.run([sys.executable, "-m", "kraftwire", "server-start", "--config", str(config_path)],
                          capture_output=True, text=True, env=processes.kraftwire_env(), timeout=timeout)


@pytest.mark.parametrize("extra, needles", [
    ("controller.quorum.election.timeout.ms=fast\n", ["controller.quorum.election.timeout.ms", "'fast'"]),
    ("broker.id=1\n", ["broker.id", "node.id"]),
    ("zookeeper.connect=localhost:2181\n", ["zookeeper.connect", "ZooKeeper"]),
    ("listener.security.protocol.map=PLAINTEXT:TLS\n", ["listener.security.protocol.map", "PLAINTEXT:TLS"]),
    # SASL_SSL is served, but Kafka's default mechanism (GSSAPI) is not: the refusal names the key.
    ("listener.security.protocol.map=PLAINTEXT:SASL_SSL\n", ["sasl.enabled.mechanisms", "GSSAPI"]),
])
def test_config_errors_name_key_and_value(tmp_path, extra, needles):
    config = tmp_path / "server.properties"
    config.write_text(BASE.format(port=9, logs=tmp_path / "logs") + extra)
    proc = _start(config)
    assert proc.returncode == 1, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def test_unformatted_directory_is_refused(tmp_path):
    config = tmp_path / "server.properties"
    config.write_text(BASE.format(port=9, logs=tmp_path / "logs"))
    proc = _start(config)
    assert proc.returncode == 1
    assert "meta.properties" in proc.stderr or "not exist" in proc.stderr
    assert "storage format" in proc.stderr


def test_node_id_must_match_meta_properties(tmp_path):
    config = tmp_path / "server.properties"
    config.write_text(BASE.format(port=9, logs=tmp_path / "logs"))
    processes.kw("storage", "format", "-t", processes.kw("storage", "random-uuid").stdout.strip(), "-c", str(config))
    config.write_text(BASE.format(port=9, logs=tmp_path / "logs").replace("node.id=1", "node.id=2")
                      .replace("voters=1@", "voters=2@"))
    proc = _start(config)
    assert proc.returncode == 1
    assert "node.id" in proc.stderr and "1" in proc.stderr and "2" in proc.stderr


def test_raft_request_from_another_cluster_gets_inconsistent_cluster_id(make_cluster):
    cluster = make_cluster(1, command="server-start")
    node = cluster.nodes[1]
    node.start()
    part = cluster.wait_for_leader()
    from kraftwire.protocol import framing
    from kraftwire.protocol import messages as w

    R = w.VoteRequest
    body = R(cluster_id="some-other-cluster", voter_id=1, topics=[R.TopicData(topic_name="__cluster_metadata",
             partitions=[R.PartitionData(partition_index=0, replica_epoch=part.leader_epoch + 5, replica_id=7,
                                         replica_directory_id=uuid.uuid4(), voter_directory_id=uuid.UUID(int=0),
                                         last_offset_epoch=part.leader_epoch + 1, last_offset=10**6)])])
    with socket.create_connection(("127.0.0.1", node.port), timeout=10) as s:
        s.sendall(b"".join(framing.encode_request(body, 1, 31)))
        splitter = framing.FrameSplitter()
        frames = []
        while not frames:
            chunk = s.recv(65536)
            assert chunk, "connection closed without an answer"
            frames = splitter.feed(chunk)
    cid, answer = framing.decode_response(frames[0], 52, 1)
    assert cid == 31
    p = answer.topics[0].partitions[0]
    assert p.error_code == 104 and not p.vote_granted  # INCONSISTENT_CLUSTER_ID
    second = _start(node.config)  # the same log directory while the node runs: refused, the node unharmed
    assert second.returncode == 1 and "cannot open the log" in second.stderr, second.stderr
    after = cluster.wait_for_leader()
    assert after.leader_id == 1 and after.leader_epoch == part.leader_epoch  # nothing else happened
    assert cluster.stop_all() == {1: 0}
    assert "cluster id differs" in node.stderr()
