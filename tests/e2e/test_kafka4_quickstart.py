"""Kafka 4's quickstart: a combined node configured as Kafka 4 ships it (``controller.quorum.bootstrap.servers``, no
static voters), formatted with ``storage format --standalone`` and started as ``server-start CONFIG``
(kafka-server-start.sh's positional form). kcat produces and consumes ``quickstart-events``; ``metadata-quorum``
shows the one voter with its directory id. Snapshots are taken often and retention moves the log start past the
bootstrap checkpoint, so after a restart the voter set can only come from a snapshot the node wrote itself
(kraft.version 1 snapshots carry it)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys

from harness import processes
from harness.roles import wait_until
from kraftwire.log.meta_properties import read_meta_properties
from kraftwire.ids import uuid_to_base64
from kraftwire.raft.dynamic_voters import BOOTSTRAP_SNAPSHOT, read_voter_set

KCAT = shutil.which("kcat") or "kcat"
SMALL = ("metadata.log.segment.min.bytes=4096\nmetadata.log.segment.bytes=4096\nmetadata.max.retention.bytes=4096\n"
         "metadata.log.max.record.bytes.between.snapshots=2048\n")


def _config(path, bport: int, cport: int, logs: str) -> None:
    path.write_text(
        "process.roles=broker,controller\nnode.id=1\n"
        f"controller.quorum.bootstrap.servers=localhost:{cport}\n"
        f"listeners=PLAINTEXT://:{bport},CONTROLLER://:{cport}\ninter.broker.listener.name=PLAINTEXT\n"
        f"advertised.listeners=PLAINTEXT://localhost:{bport},CONTROLLER://localhost:{cport}\n"
        "controller.listener.names=CONTROLLER\n"
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,"
        "SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL\n"
        f"num.network.threads=3\nnum.io.threads=8\nlog.dirs={logs}\nnum.partitions=1\n"
        "offsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n"
        "transaction.state.log.min.isr=1\nshare.coordinator.state.topic.replication.factor=1\n"
        "share.coordinator.state.topic.min.isr=1\nlog.retention.hours=168\nlog.segment.bytes=1073741824\n"
        "log.retention.check.interval.ms=300000\n" + SMALL)


def _start(config, bsock, csock, log_path):
    return subprocess.Popen([sys.executable, "-m", "kraftwire", "server-start", str(config),
                             "--listener-fd", f"PLAINTEXT={bsock.fileno()}",
                             "--listener-fd", f"CONTROLLER={csock.fileno()}"],
                            stdout=subprocess.DEVNULL, stderr=open(log_path, "ab"),
                            pass_fds=(bsock.fileno(), csock.fileno()), env=processes.kraftwire_env())


def _kw_ok(*args) -> str:
    done = processes.kw(*args, check=False)
    return done.stdout if done.returncode == 0 else ""


def test_kafka4_quickstart_with_a_standalone_dynamic_quorum(tmp_path):
    bsock, csock = processes.bind_listener(), processes.bind_listener()
    bport, cport = bsock.getsockname()[1], csock.getsockname()[1]
    logs = str(tmp_path / "kraft-combined-logs")
    config = tmp_path / "server.properties"
    _config(config, bport, cport, logs)
    cluster_id = processes.kw("storage", "random-uuid").stdout.strip()
    refused = processes.kw("storage", "format", "-t", cluster_id, "-c", str(config), check=False)
    assert refused.returncode == 1 and "--standalone, --initial-controllers, or --no-initial-controllers" in \
        refused.stderr
    out = processes.kw("storage", "format", "--standalone", "-t", cluster_id, "-c", str(config)).stdout
    assert out.startswith(f"Formatting dynamic metadata voter directory {logs} with metadata.version ")
    directory_id = read_meta_properties(logs).directory_id
    bootstrap = os.path.join(logs, "__cluster_metadata-0", BOOTSTRAP_SNAPSHOT)
    assert os.path.exists(bootstrap)

    node_log = tmp_path / "node.log"
    proc = _start(config, bsock, csock, node_log)
    try:
        bootstrap_server = f"localhost:{bport}"
        wait_until(lambda: "Created topic quickstart-events." in _kw_ok(
            "topics", "--create", "--topic", "quickstart-events", "--bootstrap-server", bootstrap_server),
            "quickstart-events created")
        produced = subprocess.run([KCAT, "-P", "-b", bootstrap_server, "-t", "quickstart-events"],
                                  input="This is my first event\nThis is my second event\n", text=True,
                                  capture_output=True, timeout=60)
        assert produced.returncode == 0, produced.stderr
        status = processes.kw("metadata-quorum", "--bootstrap-server", bootstrap_server, "describe",
                              "--status").stdout
        assert "LeaderId:               1" in status
        assert f'"directoryId": "{uuid_to_base64(directory_id)}"' in status
        # more metadata until snapshots exist and retention moved the log start past the bootstrap checkpoint
        n = 0
        while os.path.exists(bootstrap) and n < 60:
            processes.kw("topics", "--create", "--topic", f"more-{n}", "--partitions", "2",
                         "--bootstrap-server", bootstrap_server)
            n += 1
        wait_until(lambda: not os.path.exists(bootstrap), "the bootstrap checkpoint gone below the log start")
    finally:
        proc.terminate()
        assert proc.wait(30) == 0, node_log.read_text()[-3000:]
    snapshots = sorted(glob.glob(os.path.join(logs, "__cluster_metadata-0", "*.checkpoint")))
    assert snapshots, "no snapshot"
    with open(snapshots[-1], "rb") as f:
        kraft_version, record = read_voter_set(f.read())
    assert kraft_version == 1 and [(v.voter_id, v.voter_directory_id) for v in record.voters] == [(1, directory_id)]

    proc = _start(config, bsock, csock, node_log)
    try:
        consumed = wait_until(lambda: subprocess.run(
            [KCAT, "-C", "-b", f"localhost:{bport}", "-t", "quickstart-events", "-e", "-q"], capture_output=True,
            text=True, timeout=60).stdout, "the events read back after the restart")
        assert consumed.splitlines() == ["This is my first event", "This is my second event"]
        assert "voters 1@localhost:%d from snapshot" % cport in node_log.read_text()
    finally:
        proc.terminate()
        assert proc.wait(30) == 0, node_log.read_text()[-3000:]
