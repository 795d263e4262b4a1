"""KIP-853 voter changes as real processes: one controller formatted ``--standalone`` leads alone; two more, formatted
``--no-initial-controllers`` and configured with ``controller.quorum.bootstrap.servers`` only, start as observers
and catch up; ``metadata-quorum add-controller`` (their own config files, as Kafka's tool takes them) makes each a
voter, and ``describe --status`` lists the three with their directory ids and endpoints. The two restart and read
the set from their log. After a SIGKILL of the leader the two others elect one of themselves and keep committing (the
high watermark moves), and ``remove-controller --unregister``, asked of the follower (which forwards both requests to
the leader), takes the dead voter out and removes its registration (KIP-1312): two voters remain and commit."""

from __future__ import annotations

import signal
import time

from harness import processes
from harness.roles import wait_until
from kraftwire.ids import uuid_to_base64
from kraftwire.log.meta_properties import read_meta_properties

WAIT_S = 20.0
#: the moved voter's test polls each step for up to this long: on a slow machine its restart outlasts the leader's
#: check-quorum, and an election (pre-vote, vote, the new leader's first commit) comes first
MOVE_WAIT_S = 60.0


def _start(config, sock, log_path):
    return processes.start_server(config, [sock], log_path, {"CONTROLLER": sock})


_status, _replicas = processes.quorum_status, processes.status_replicas


def test_add_controllers_fail_over_and_remove_one(tmp_path):
    socks = {i: processes.bind_listener() for i in (1, 2, 3)}
    ports = {i: s.getsockname()[1] for i, s in socks.items()}
    bootstrap = ",".join(f"localhost:{p}" for p in ports.values())
    cluster_id = processes.kw("storage", "random-uuid").stdout.strip()
    configs, logs, procs = {}, {}, {}
    for i in (1, 2, 3):
        configs[i] = tmp_path / f"controller-{i}.properties"
        configs[i].write_text(f"process.roles=controller\nnode.id={i}\n"
                              f"controller.quorum.bootstrap.servers={bootstrap}\n"
                              f"listeners=CONTROLLER://:{ports[i]}\nadvertised.listeners=CONTROLLER://localhost:"
                              f"{ports[i]}\ncontroller.listener.names=CONTROLLER\nlog.dirs={tmp_path}/c{i}\n"
                              "controller.quorum.election.timeout.ms=500\ncontroller.quorum.fetch.timeout.ms=1000\n")
        how = "--standalone" if i == 1 else "--no-initial-controllers"
        processes.kw("storage", "format", "-t", cluster_id, "-c", str(configs[i]), how)
        logs[i] = tmp_path / f"node-{i}.log"
    dirs = {i: read_meta_properties(str(tmp_path / f"c{i}")).directory_id for i in (1, 2, 3)}
    started = time.monotonic()

    def diagnostics() -> str:
        out = [f"elapsed {time.monotonic() - started:.1f} s"]
        for i in (1, 2, 3):
            state = "not started" if i not in procs else (
                "running" if procs[i].poll() is None else f"exited {procs[i].returncode}")
            text = logs[i].read_text(errors="replace") if logs[i].exists() else ""
            out.append(f"--- node {i} ({state}), last lines of its log:\n" + "\n".join(text.splitlines()[-40:]))
        return "\n".join(out)

    def wait(predicate, what):
        try:
            return wait_until(predicate, what, timeout=WAIT_S)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{diagnostics()}") from None

    def caught_up_observer(i: int):
        status = _status([ports[1]])
        observer = _replicas(status, "CurrentObservers").get(i)
        return status if observer is not None and observer["lag"] == 0 and observer["directoryId"] == \
            uuid_to_base64(dirs[i]) else None

    try:
        procs[1] = _start(configs[1], socks[1], logs[1])
        wait(lambda: _status([ports[1]]).get("LeaderId") == "1", "controller 1 leads alone")
        for i in (2, 3):
            procs[i] = _start(configs[i], socks[i], logs[i])
        for i in (2, 3):
            wait(lambda: caught_up_observer(i), f"controller {i} a caught-up observer")
            done = processes.kw("metadata-quorum", "--bootstrap-controller", bootstrap, "--command-config",
                                str(configs[i]), "add-controller", check=False, timeout=60)
            assert done.returncode == 0, f"add-controller {i}: {done.stdout}{done.stderr}\n{diagnostics()}"
            assert done.stdout == (f"Added controller {i} with directory id {uuid_to_base64(dirs[i])} and endpoints: "
                                   f"CONTROLLER://localhost:{ports[i]}\n")

        status = wait(lambda: (lambda s: s if len(_replicas(s, "CurrentVoters")) == 3 else None)(
            _status(ports.values())), "three voters")
        voters = _replicas(status, "CurrentVoters")
        assert {i: (v["directoryId"], v.get("endpoints")) for i, v in voters.items()} == {
            i: (uuid_to_base64(dirs[i]), [f"CONTROLLER://localhost:{ports[i]}"]) for i in (1, 2, 3)}, status
        assert int(status["LeaderId"]) == 1 and not _replicas(status, "CurrentObservers"), status
        again = processes.kw("metadata-quorum", "--bootstrap-controller", bootstrap, "--command-config",
                             str(configs[2]), "add-controller", check=False, timeout=60)
        assert again.returncode == 1 and again.stderr.startswith(
            "org.apache.kafka.common.errors.DuplicateVoterException: The voter id for ReplicaKey(id=2, "), again

        # the two added controllers restart: their voter set is only in their log now (no snapshot names it), and
        # they read it there rather than asking a quorum they are needed for
        said = {}
        for i in (2, 3):
            procs[i].terminate()
            procs[i].wait(30)
            said[i] = len(logs[i].read_text())  # what the restarted process says comes after
            procs[i] = _start(configs[i], socks[i], logs[i])
        for i in (2, 3):
            wait(lambda: (lambda text: f"node {i}: voters 1@localhost:" in text and " from the log at offset " in
                          text)(logs[i].read_text()[said[i]:]), f"controller {i} reads its voters from its log")
        # a fetch the leader had parked for the old process may still be answered (and dated) up to MaxWaitMs later
        restarted_ms = int(time.time() * 1000) + 1000

        def fetching_again():
            part = processes.leader_view(ports[1])
            if part is None:
                return None
            fetched = {v.replica_id: v.last_fetch_timestamp for v in part.current_voters}
            return sorted(fetched) == [1, 2, 3] and all(fetched[i] > restarted_ms for i in (2, 3))

        wait(fetching_again, "controllers 2 and 3 fetch as voters again after their restart")

        status = wait(lambda: (lambda s: s if s.get("LeaderId") in ("1", "2", "3") else None)(
            _status(ports.values())), "a leader")
        leader = int(status["LeaderId"])  # 1, unless it lost its quorum while 2 and 3 restarted
        procs[leader].send_signal(signal.SIGKILL)
        procs[leader].wait(10)
        others = sorted(set(ports) - {leader})
        rest = [ports[i] for i in others]
        status = wait(lambda: (lambda s: s if s.get("LeaderId") in tuple(map(str, others)) else None)(
            _status(rest)), f"controller {others[0]} or {others[1]} leads after the kill of {leader}")
        hw = int(status["HighWatermark"])
        wait(lambda: int(_status(rest).get("HighWatermark", "-1")) > hw, "the high watermark moves on")

        # asked of the follower (as a client would ask a broker): it forwards the request to the leader
        follower = next(i for i in others if i != int(status["LeaderId"]))
        done = processes.kw("metadata-quorum", "--bootstrap-server", f"localhost:{ports[follower]}",
                            "remove-controller", "--controller-id", str(leader), "--controller-directory-id",
                            uuid_to_base64(dirs[leader]), "--unregister", check=False, timeout=60)
        assert done.returncode == 0, f"remove-controller {leader}: {done.stdout}{done.stderr}\n{diagnostics()}"
        assert done.stdout == (f"Removed KRaft controller {leader} with directory id "
                               f"{uuid_to_base64(dirs[leader])}\nUnregistered KRaft controller {leader}\n")
        status = wait(lambda: (lambda s: s if sorted(_replicas(s, "CurrentVoters")) == others else None)(
            _status(rest)), "two voters after the removal")

        def registered() -> list[int]:
            out = processes.kw("cluster", "list-endpoints", "--bootstrap-controller", f"localhost:{rest[0]}",
                               check=False).stdout
            return sorted(int(line.split()[0]) for line in out.splitlines()[1:] if line.strip())

        wait(lambda: registered() == others, "only the two voters registered after the unregistration")
        hw = int(status["HighWatermark"])
        wait(lambda: int(_status(rest).get("HighWatermark", "-1")) > hw, "the two voters commit")
    finally:
        processes.stop_all(procs.values())


def test_a_voter_that_moves_port_updates_its_entry(tmp_path):
    """UpdateRaftVoter: controller 2, added on one port, restarts listening on another. It still reaches the leader
    (whose endpoint it knows), follows it, and after 3 x fetch timeout asks it to rewrite its entry; the voter set,
    and so ``describe --status``, then names the new port, and the leader dials it there.

    When the restart outlasts the leader's check-quorum (a slow machine), controller 1 resigns holding records 2 never
    fetched, and cannot dial 2 (its voter set names the old port): 2 takes that tail from its former leader's
    refusals, wins the election, and its BeginQuorumEpoch tells 1 where it listens now; its own start-of-epoch
    VotersRecord rewrites the entry (issue #35 item 13). Every step polls for its condition, up to ``MOVE_WAIT_S``."""
    socks = {1: processes.bind_listener(), 2: processes.bind_listener()}
    ports = {i: s.getsockname()[1] for i, s in socks.items()}
    cluster_id = processes.kw("storage", "random-uuid").stdout.strip()

    def config(i: int, port: int):
        path = tmp_path / f"controller-{i}-{port}.properties"
        path.write_text(f"process.roles=controller\nnode.id={i}\n"
                        f"controller.quorum.bootstrap.servers=localhost:{ports[1]}\n"
                        f"listeners=CONTROLLER://:{port}\nadvertised.listeners=CONTROLLER://localhost:{port}\n"
                        f"controller.listener.names=CONTROLLER\nlog.dirs={tmp_path}/c{i}\n"
                        "controller.quorum.election.timeout.ms=500\ncontroller.quorum.fetch.timeout.ms=500\n")
        return path

    configs = {i: config(i, ports[i]) for i in (1, 2)}
    processes.kw("storage", "format", "-t", cluster_id, "-c", str(configs[1]), "--standalone")
    processes.kw("storage", "format", "-t", cluster_id, "-c", str(configs[2]), "--no-initial-controllers")
    dirs = {i: read_meta_properties(str(tmp_path / f"c{i}")).directory_id for i in (1, 2)}
    logs = {i: tmp_path / f"node-{i}.log" for i in (1, 2)}
    procs = {}

    def wait(predicate, what):
        try:
            return wait_until(predicate, what, timeout=MOVE_WAIT_S)
        except AssertionError as exc:
            tails = "\n".join(f"--- node {i}:\n" + "\n".join(logs[i].read_text(errors="replace").splitlines()[-30:])
                              for i in (1, 2) if logs[i].exists())
            raise AssertionError(f"{exc}\n{tails}") from None

    def endpoints_of_2():
        voter = _replicas(_status([ports[1]]), "CurrentVoters").get(2)
        return voter.get("endpoints") if voter else None

    try:
        procs[1] = _start(configs[1], socks[1], logs[1])
        wait(lambda: _status([ports[1]]).get("LeaderId") == "1", "controller 1 leads alone")
        procs[2] = _start(configs[2], socks[2], logs[2])
        wait(lambda: (_replicas(_status([ports[1]]), "CurrentObservers").get(2) or {}).get("lag") == 0,
             "controller 2 a caught-up observer")
        done = processes.kw("metadata-quorum", "--bootstrap-controller", f"localhost:{ports[1]}", "--command-config",
                            str(configs[2]), "add-controller", check=False, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        assert wait(endpoints_of_2, "controller 2 a voter") == [f"CONTROLLER://localhost:{ports[2]}"]

        procs[2].terminate()
        procs[2].wait(30)
        socks[2].close()
        moved = processes.bind_listener()
        new_port = moved.getsockname()[1]
        procs[2] = _start(config(2, new_port), moved, logs[2])
        wait(lambda: endpoints_of_2() == [f"CONTROLLER://localhost:{new_port}"],
             "the voter set names controller 2's new port")
        status = _status([ports[1], new_port])
        assert _replicas(status, "CurrentVoters")[2]["directoryId"] == uuid_to_base64(dirs[2])
        hw = int(status["HighWatermark"])
        # the leader now dials 2 at its new port (a BeginQuorumEpoch after a leader change would reach it); both
        # voters still commit together
        wait(lambda: int(_status([ports[1]]).get("HighWatermark", "-1")) > hw, "the two voters commit")
    finally:
        processes.stop_all(procs.values())
