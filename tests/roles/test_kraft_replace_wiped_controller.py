"""Replacing a controller whose disk was wiped, under a running workload, as real processes (KIP-853).

Node 1 runs ``broker,controller`` formatted ``--standalone`` (Kafka 4's quickstart); controllers 2 and 3, formatted
``--no-initial-controllers``, are added. A client keeps changing a topic config through node 1 the whole time (each
change is one ConfigRecord, answered once committed). Controller 3 is then killed and its disk wiped; formatted
again it has a new directory id, so it comes back as an *observer* while the voter set still names the old disk. It
is removed under the old directory id and added under the new one. ``describe --status`` reflects each step, and at
the end every change the client saw acknowledged is in the log of every voter: nothing committed was lost."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import threading

from harness import processes
from harness.roles import wait_until
from kraftwire.ids import uuid_to_base64
from kraftwire.log.meta_properties import read_meta_properties
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import KafkaConnection, request_once

WAIT_S = 30.0
TOPIC = "guarded"


_status, _replicas = processes.quorum_status, processes.status_replicas


class ConfigWriter(threading.Thread):
    """Sets ``retention.ms`` of the topic to 1000000 + i, one change at a time; keeps the values acknowledged."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.acked: list[str] = []
        self.errors: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        asyncio.run(self._run())

    async def _run(self) -> None:
        R = w.IncrementalAlterConfigsRequest
        i, conn = 0, None
        while not self.stop.is_set():
            value = str(1_000_000 + i)
            try:
                if conn is None:
                    conn = await KafkaConnection.open("127.0.0.1", self.port, timeout=10)
                answer = await conn.request(R(resources=[R.AlterConfigsResource(
                    resource_type=2, resource_name=TOPIC, configs=[R.AlterableConfig(
                        name="retention.ms", config_operation=0, value=value)])], validate_only=False), 1, timeout=30)
            except Exception as exc:  # noqa: BLE001 - a retry on a new connection; the value counts only if acked
                self.errors.append(repr(exc))
                conn = None
                await asyncio.sleep(0.1)
                continue
            code = answer.responses[0].error_code
            if code == 0:
                self.acked.append(value)
            else:
                self.errors.append(f"error {code}")
                await asyncio.sleep(0.05)
            i += 1
            await asyncio.sleep(0.005)
        if conn is not None:
            await conn.close()


def test_replace_a_wiped_controller_under_a_workload(tmp_path):
    socks = {i: processes.bind_listener() for i in (1, 2, 3)}
    broker_sock = processes.bind_listener()
    ports = {i: s.getsockname()[1] for i, s in socks.items()}
    broker_port = broker_sock.getsockname()[1]
    cluster_id = processes.kw("storage", "random-uuid").stdout.strip()
    configs, logs = {}, {i: tmp_path / f"node-{i}.log" for i in (1, 2, 3)}
    for i in (1, 2, 3):
        combined = i == 1
        listeners = f"PLAINTEXT://:{broker_port},CONTROLLER://:{ports[i]}" if combined else f"CONTROLLER://:{ports[i]}"
        advertised = (f"PLAINTEXT://localhost:{broker_port},CONTROLLER://localhost:{ports[i]}" if combined
                      else f"CONTROLLER://localhost:{ports[i]}")
        configs[i] = tmp_path / f"node-{i}.properties"
        configs[i].write_text(
            f"process.roles={'broker,controller' if combined else 'controller'}\nnode.id={i}\n"
            f"controller.quorum.bootstrap.servers=localhost:{ports[1]}\nlisteners={listeners}\n"
            f"advertised.listeners={advertised}\ncontroller.listener.names=CONTROLLER\n"
            "inter.broker.listener.name=PLAINTEXT\n"
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
            f"log.dirs={tmp_path}/n{i}\ncontroller.quorum.election.timeout.ms=500\n"
            "controller.quorum.fetch.timeout.ms=1000\n")
        processes.kw("storage", "format", "-t", cluster_id, "-c", str(configs[i]),
                     "--standalone" if combined else "--no-initial-controllers")
    dirs = {i: read_meta_properties(str(tmp_path / f"n{i}")).directory_id for i in (1, 2, 3)}
    fds = {1: {"CONTROLLER": socks[1], "PLAINTEXT": broker_sock}}
    fds.update({i: {"CONTROLLER": socks[i]} for i in (2, 3)})
    procs: dict[int, subprocess.Popen] = {}
    writer = ConfigWriter(broker_port)

    def diagnostics() -> str:
        tails = [f"acked {len(writer.acked)}, errors {writer.errors[-5:]}"]
        for i in (1, 2, 3):
            text = logs[i].read_text(errors="replace") if logs[i].exists() else ""
            tails.append(f"--- node {i}:\n" + "\n".join(text.splitlines()[-25:]))
        return "\n".join(tails)

    def wait(predicate, what):
        try:
            return wait_until(predicate, what, timeout=WAIT_S)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{diagnostics()}") from None

    def add(i: int) -> None:
        wait(lambda: (lambda o: o is not None and o["lag"] == 0 and o["directoryId"] == uuid_to_base64(dirs[i]))(
            _replicas(_status([ports[1]]), "CurrentObservers").get(i)), f"controller {i} a caught-up observer")
        done = processes.kw("metadata-quorum", "--bootstrap-controller", f"localhost:{ports[1]}", "--command-config",
                            str(configs[i]), "add-controller", check=False, timeout=60)
        assert done.returncode == 0, f"add-controller {i}: {done.stdout}{done.stderr}\n{diagnostics()}"

    try:
        procs[1] = processes.start_server(configs[1], [socks[1], broker_sock], logs[1], fds[1])
        CT = w.CreateTopicsRequest

        def created():
            try:
                answer = asyncio.run(request_once("127.0.0.1", broker_port, CT(topics=[CT.CreatableTopic(
                    name=TOPIC, num_partitions=1, replication_factor=1, assignments=[], configs=[])],
                    timeout_ms=30000, validate_only=False), 7, timeout=10))
            except Exception:  # noqa: BLE001 - still starting
                return False
            return answer.topics[0].error_code in (0, 36)

        wait(created, "the topic created")
        writer.start()
        for i in (2, 3):
            procs[i] = processes.start_server(configs[i], [socks[i]], logs[i], fds[i])
        for i in (2, 3):
            add(i)
        status = wait(lambda: (lambda s: s if sorted(_replicas(s, "CurrentVoters")) == [1, 2, 3] else None)(
            _status([ports[1]])), "three voters")

        # controller 3's disk is lost: killed, wiped, formatted again (a new directory id), started
        procs[3].send_signal(signal.SIGKILL)
        procs[3].wait(10)
        shutil.rmtree(tmp_path / "n3")
        processes.kw("storage", "format", "-t", cluster_id, "-c", str(configs[3]), "--no-initial-controllers")
        old, dirs[3] = dirs[3], read_meta_properties(str(tmp_path / "n3")).directory_id
        assert dirs[3] != old
        procs[3] = processes.start_server(configs[3], [socks[3]], logs[3], fds[3])

        def wiped_is_an_observer():
            s = _status([ports[1]])
            voter, observer = _replicas(s, "CurrentVoters").get(3), _replicas(s, "CurrentObservers").get(3)
            return (s if voter is not None and voter["directoryId"] == uuid_to_base64(old) and observer is not None
                    and observer["directoryId"] == uuid_to_base64(dirs[3]) else None)

        wait(wiped_is_an_observer, "the wiped controller an observer beside its old voter entry")
        done = processes.kw("metadata-quorum", "--bootstrap-controller", f"localhost:{ports[1]}", "remove-controller",
                            "--controller-id", "3", "--controller-directory-id", uuid_to_base64(old), check=False,
                            timeout=60)
        assert done.returncode == 0, f"remove-controller: {done.stdout}{done.stderr}\n{diagnostics()}"
        add(3)
        status = wait(lambda: (lambda s: s if {i: v["directoryId"] for i, v in _replicas(s, "CurrentVoters").items()}
                               == {i: uuid_to_base64(d) for i, d in dirs.items()} else None)(_status([ports[1]])),
                      "voter 3 under its new directory id")
        hw = int(status["HighWatermark"])
        wait(lambda: int(_status([ports[1]]).get("HighWatermark", "-1")) > hw + 20, "the workload commits on")
        writer.stop.set()
        writer.join(30)
        assert len(writer.acked) > 50, diagnostics()

        # every acknowledged change is in every voter's log (the replaced voter fetched it all again)
        wait(lambda: all(r.get("lag") == 0 for r in _replicas(_status([ports[1]]), "CurrentVoters").values()),
             "every voter caught up")
    finally:
        writer.stop.set()
        processes.stop_all(procs.values())
    for i in (1, 2, 3):
        partition = tmp_path / f"n{i}" / "__cluster_metadata-0"
        segments = sorted(str(partition / f) for f in os.listdir(partition) if f.endswith(".log"))
        dump = processes.kw("dump-log", "--cluster-metadata-decoder", "--files", *segments).stdout
        missing = [v for v in writer.acked if f'"value":"{v}"' not in dump]
        assert not missing, f"node {i}'s log lacks {len(missing)} acknowledged changes, e.g. {missing[:3]}"
