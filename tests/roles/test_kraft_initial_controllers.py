"""Three controllers and a broker configured as Kafka 4 ships them (``controller.quorum.bootstrap.servers`` only),
the controllers formatted with the same ``storage format --initial-controllers`` list (KIP-853), as real processes:
they elect a leader among the voters that list names, ``metadata-quorum`` shows each voter with the directory id the
list gave it, the broker finds the quorum and serves a topic, and after a SIGKILL of the leader another voter leads
and the topic still takes writes."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys

from harness import processes
from harness.roles import wait_until
from kraftwire.errors import KraftwireError
from kraftwire.ids import random_kafka_uuid, uuid_to_base64
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once


def _start(config, socks: dict, log_path):
    fds = []
    for name, s in socks.items():
        fds += ["--listener-fd", f"{name}={s.fileno()}"]
    return subprocess.Popen([sys.executable, "-m", "kraftwire", "server-start", str(config), *fds],
                            stdout=subprocess.DEVNULL, stderr=open(log_path, "ab"),
                            pass_fds=tuple(s.fileno() for s in socks.values()), env=processes.kraftwire_env())


def _status(ports) -> dict:
    """``metadata-quorum describe --status`` through the controllers, as a dict of its lines ({} while down)."""
    done = processes.kw("metadata-quorum", "--bootstrap-controller", ",".join(f"localhost:{p}" for p in ports),
                        "describe", "--status", check=False, timeout=20)
    if done.returncode != 0:
        return {}
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in done.stdout.splitlines())}


def _controllers(port: int) -> list:
    """DescribeCluster's controllers (endpoint type 2) as a controller answers them: (id, host, port)."""
    try:
        answer = asyncio.run(request_once("127.0.0.1", port, w.DescribeClusterRequest(
            include_cluster_authorized_operations=False, endpoint_type=2), 1, timeout=5))
    except (OSError, KraftwireError):
        return []
    return [(b.broker_id, b.host, b.port) for b in answer.brokers]


def test_three_controllers_from_initial_controllers_elect_and_fail_over(tmp_path):
    csocks = {i: processes.bind_listener() for i in (1, 2, 3)}
    cports = {i: s.getsockname()[1] for i, s in csocks.items()}
    bsock = processes.bind_listener()
    bport = bsock.getsockname()[1]
    bootstrap = ",".join(f"localhost:{p}" for p in cports.values())
    dirs = {i: random_kafka_uuid() for i in (1, 2, 3)}
    initial = ",".join(f"{i}@localhost:{cports[i]}:{uuid_to_base64(dirs[i])}" for i in (1, 2, 3))
    cluster_id = processes.kw("storage", "random-uuid").stdout.strip()
    configs = {}
    for i in (1, 2, 3):
        configs[i] = tmp_path / f"controller-{i}.properties"
        configs[i].write_text(f"process.roles=controller\nnode.id={i}\ncontroller.quorum.bootstrap.servers={bootstrap}\n"
                              f"listeners=CONTROLLER://:{cports[i]}\nadvertised.listeners=CONTROLLER://localhost:"
                              f"{cports[i]}\ncontroller.listener.names=CONTROLLER\nlog.dirs={tmp_path}/c{i}\n"
                              "controller.quorum.election.timeout.ms=500\n")
        out = processes.kw("storage", "format", "-t", cluster_id, "-c", str(configs[i]), "--initial-controllers",
                           initial).stdout
        assert out.startswith(f"Formatting dynamic metadata voter directory {tmp_path}/c{i} ")
    configs[4] = tmp_path / "broker-4.properties"
    configs[4].write_text(f"process.roles=broker\nnode.id=4\ncontroller.quorum.bootstrap.servers={bootstrap}\n"
                          f"listeners=PLAINTEXT://:{bport}\nadvertised.listeners=PLAINTEXT://localhost:{bport}\n"
                          "controller.listener.names=CONTROLLER\nlistener.security.protocol.map=PLAINTEXT:PLAINTEXT,"
                          f"CONTROLLER:PLAINTEXT\nlog.dirs={tmp_path}/b4\noffsets.topic.replication.factor=1\n")
    processes.kw("storage", "format", "-t", cluster_id, "-c", str(configs[4]))  # a broker needs no option
    procs = {}
    try:
        for i in (1, 2, 3):
            procs[i] = _start(configs[i], {"CONTROLLER": csocks[i]}, tmp_path / f"node-{i}.log")
        procs[4] = _start(configs[4], {"PLAINTEXT": bsock}, tmp_path / "node-4.log")
        status = wait_until(lambda: (lambda s: s if s.get("LeaderId", "-1") not in ("-1", "") else None)(
            _status(cports.values())), "a leader among the initial controllers")
        voters = json.loads(status["CurrentVoters"])
        assert sorted((v["id"], v["directoryId"]) for v in voters) == sorted(
            (i, uuid_to_base64(d)) for i, d in dirs.items())
        leader = int(status["LeaderId"])
        assert leader in (1, 2, 3)
        # each controller registered itself (KIP-919): DescribeCluster of the controllers lists all three from the
        # image, at their advertised controller endpoints (nothing static names them here)
        wait_until(lambda: _controllers(cports[leader]) == [(i, "localhost", cports[i]) for i in (1, 2, 3)],
                   "the three controllers registered")
        wait_until(lambda: "Created topic events." in processes.kw(
            "topics", "--create", "--topic", "events", "--bootstrap-server", f"localhost:{bport}",
            check=False).stdout, "a topic created through the broker")

        procs[leader].send_signal(signal.SIGKILL)
        procs[leader].wait(10)
        rest = [p for i, p in cports.items() if i != leader]
        status = wait_until(lambda: (lambda s: s if s.get("LeaderId") not in (None, "-1", str(leader)) else None)(
            _status(rest)), "another voter leads after the kill")
        assert int(status["LeaderId"]) in set(cports) - {leader}
        wait_until(lambda: "Created topic after-kill." in processes.kw(
            "topics", "--create", "--topic", "after-kill", "--bootstrap-server", f"localhost:{bport}",
            check=False).stdout, "a topic created through the new leader")
        described = processes.kw("topics", "--describe", "--topic", "after-kill", "--bootstrap-server",
                                 f"localhost:{bport}").stdout
        assert re.search(r"Partition: 0\tLeader: 4\t", described), described
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.terminate()
        for p in procs.values():
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
