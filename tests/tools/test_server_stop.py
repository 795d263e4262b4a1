"""``kraftwire server-stop``, Kafka's kafka-server-stop.sh for kraftwire nodes: which processes it finds, how
``--node-id`` / ``--process-role`` choose among them, and a real node stopped by its node id. Other engineers' nodes
run on this machine too, so the process test only ever signals a node id no one else uses (or signal 0)."""

from __future__ import annotations

import subprocess
import sys

from harness.processes import bind_listener, kraftwire_env, kw
from harness.roles import wait_until
from kraftwire.tools import server_stop

NODE_ID = 7919  # no other test's node


def test_server_command_reads_the_config_and_overrides_of_each_way_to_start_a_node():
    cmd = server_stop.server_command
    assert cmd(["/usr/bin/python3", "-m", "kraftwire", "server-start", "--config", "a.properties",
                "--listener-fd", "X=3"]) == ("a.properties", [])
    assert cmd(["/venv/bin/python", "/venv/bin/kraftwire", "server-start", "b.properties", "--override",
                "node.id=4", "--override", "process.roles=broker"]) == ("b.properties", ["node.id=4",
                                                                          "process.roles=broker"])
    assert cmd(["python", "/src/kraftwire/__main__.py", "server-start", "c.properties"]) == ("c.properties", [])
    assert cmd(["python", "-m", "kraftwire", "test-server", "--config", "d"]) is None
    assert cmd(["java", "kafka.Kafka", "server.properties"]) is None


def test_no_server_running_is_kafkas_message_and_exit_1(monkeypatch, capsys):
    from kraftwire.cli import main

    monkeypatch.setattr(server_stop, "running_servers", lambda: [])
    assert main(["server-stop"]) == 1
    assert capsys.readouterr().out == "No kafka server to stop\n"


def test_a_node_stopped_by_its_node_id_and_not_by_another(tmp_path):
    broker, controller = bind_listener(), bind_listener()
    port, cport = broker.getsockname()[1], controller.getsockname()[1]
    config = tmp_path / "server.properties"
    config.write_text(f"process.roles=broker,controller\nnode.id={NODE_ID}\n"
                      f"controller.quorum.voters={NODE_ID}@localhost:{cport}\n"
                      f"listeners=PLAINTEXT://localhost:{port},CONTROLLER://localhost:{cport}\n"
                      "controller.listener.names=CONTROLLER\n"
                      "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n"
                      f"log.dirs={tmp_path / 'logs'}\n")
    kw("storage", "format", "-t", kw("storage", "random-uuid").stdout.strip(), "-c", str(config))
    with open(tmp_path / "node.log", "ab") as err:
        # started from its directory with a relative path, as kafka-server-stop.sh expects of kafka-server-start.sh
        proc = subprocess.Popen([sys.executable, "-m", "kraftwire", "server-start", "server.properties",
                                 "--override", "log.retention.ms=600000",
                                 "--listener-fd", f"PLAINTEXT={broker.fileno()}",
                                 "--listener-fd", f"CONTROLLER={controller.fileno()}"],
                                cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err,
                                pass_fds=(broker.fileno(), controller.fileno()), env=kraftwire_env())
    try:
        def mine():  # a forked child shows its parent's command line until it has exec'd
            return [s for s in server_stop.running_servers() if s[0] == proc.pid]

        wait_until(mine, "the node's command line in /proc", timeout=30)
        assert mine() == [(proc.pid, str(config), ["log.retention.ms=600000"])]

        # another node id, with the precedence note: nothing of ours is signalled
        other = kw("server-stop", f"--node-id={NODE_ID + 1}", "--process-role=broker,controller")
        assert other.stdout == "When both node-id and process-role are provided, the value for node-id will take " \
                               "precedence\n"
        check = subprocess.run([sys.executable, "-m", "kraftwire", "server-stop"], capture_output=True, text=True,
                               env={**kraftwire_env(), "SIGNAL": "0"}, timeout=60)
        assert check.returncode == 0 and check.stdout == ""
        assert proc.poll() is None

        assert kw("server-stop", "--node-id", str(NODE_ID)).returncode == 0
        wait_until(lambda: proc.poll() is not None, "the node stopped by server-stop", timeout=30)
        assert proc.returncode == 0  # SIGTERM: a graceful shutdown
        assert "shutting down" in (tmp_path / "node.log").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        broker.close()
        controller.close()
