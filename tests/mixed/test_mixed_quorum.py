"""A controller quorum of Apache Kafka 4.4 and kraftwire voters (issue #44's third shape, smallest form), with a
broker of each kind, and one step of the fourth shape (a rolling replacement) on the same processes.

The quorum is dynamic (KIP-853, formatted with ``--initial-controllers``), eligible leader replicas on (4.4-IV0's
default). Kafka's controller leads first (its
election timeout is the shortest), so the kraftwire broker registers with a Kafka controller and the Kafka broker with
it too (the second shape); then the Kafka controller is killed, a kraftwire voter takes over, and both brokers carry
on under it (the first shape): the Kafka broker creates a topic through the kraftwire controller inside an Envelope,
as the kraftwire broker's admin requests reached the Kafka controller before (its client's quota applies there).
A topic whose partitions are led by one kind of broker each (so each ISR holds both kinds) takes idempotent acks=all
writes before and after the failover, a consumer group (its offsets replicated across both kinds) reads every record
once, and each partition's log is byte-identical on the two brokers.

Then the replacement, with an idempotent producer and a consumer group running throughout and a transactional
producer committing and aborting before and after: a new kraftwire controller (made a voter while Kafka's
controller still led) replaces it: the dead Kafka controller leaves by ``remove-controller``, and the kraftwire leader
resigns and restarts; a new kraftwire broker takes every partition of the Kafka
broker (``reassign-partitions``), which is shut down and unregistered. Nothing acknowledged is lost, nothing is
written twice, read_committed sees the committed transactions and not the aborted one. The metadata log is the same
bytes on every node that holds it (the old voters, the new one, every broker), and Kafka's ``kafka-metadata-shell``
prints the same tree of it as ``kraftwire metadata-shell``. No ERROR in the Kafka broker's log, no traceback in
kraftwire's.

Every deliberate Raft difference of the README's table ("Where kraftwire's Raft differs from Kafka's on purpose",
issue #44), with a Kafka peer on the other side where the wire can show it: row → step → assertion.

* high-watermark linger, Fetch v18 → after the failover the Kafka broker (an observer) fetches the metadata log from
  the kraftwire leader, whose linger is on (``kraftwire.quorum.high.watermark.linger.ms=5``); the kraftwire voters
  fetched from Kafka's leader with v18 before → the Kafka broker lists the topic created under the kraftwire leader
  (it has learnt a high watermark past its records), and later the one created after the leader resigned.
* replicate only flushed data → no step: a follower cannot tell whether what it fetched was flushed first; the
  metadata log is the same bytes on every node at the end.
* ``high-watermark-checkpoint`` → at the end, each kraftwire node has one beside its metadata log with a positive
  offset; the Kafka nodes have none (Kafka never reads it: it is a file of kraftwire's in kraftwire's directories).
* a candidate's refusal moves its election deadline → no step: only the timing of a split vote differs, not the
  answer (a refused Vote), and a split vote cannot be made to happen on demand.
* pre-vote with static voters → no step: this quorum is dynamic (kraft.version 1), where Kafka pre-votes too; the
  Kafka voter's pre-vote (KIP-996) is granted by a kraftwire voter → Kafka's log shows it became a candidate from
  the prospective state (alone it is one vote of three).
* pre-votes granted after EndQuorumEpoch → the kraftwire leader resigns by SIGTERM once the voters are all
  kraftwire's (the Kafka controller is gone by then) → a kraftwire voter leads in the very next epoch.
* a resigned leader names no leader; a non-voter's (pre-)vote answer with static voters → the same resignation,
  with the Kafka broker fetching from the resigned leader → the Kafka broker follows the successor (it lists the
  topic created after) and its log has no ERROR. The non-voter answer is kraft.version 0's only: not in this quorum.
* records attached to a resigned leader's Fetch refusal → the same resignation: whatever the Kafka broker's last
  Fetch from the resigned leader carried, no ERROR in its log and it follows the successor.
* forwarding AddRaftVoter/RemoveRaftVoter → while Kafka's controller leads, the new controller's AddRaftVoter goes to
  a kraftwire controller (not the leader) → it answers NONE after the Kafka leader added the voter (four voters);
  RemoveRaftVoter later goes through ``metadata-quorum remove-controller`` to the kraftwire leader.
* the ``kraftwire.`` key prefix → the linger key is in every controller's file, Kafka's too → Kafka's controller
  starts with it and leads: no Kafka key collides with it."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time

import pytest
from confluent_kafka import Consumer, Producer

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once

from harness import mixed, processes
from kraftwire.log.checkpoint import OffsetCheckpointFile
from harness.kafka import free_ports, stop_java, storage_tool, until_broker_answers
from harness.roles import broker_ids, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.interop]

KAFKA_CONTROLLER, KAFKA_BROKER, KRAFTWIRE_BROKER = 1, 5, 4
KRAFTWIRE_CONTROLLERS = (2, 3)
#: the replacements (shape 4's step): a kraftwire controller for the Kafka one, a kraftwire broker for the Kafka one
NEW_CONTROLLER, NEW_BROKER = 6, 7
TOPIC, BATCH = "quorum-mixed", 1000
TXN_TOPIC = f"{TOPIC}-txn"
def _produce(bootstrap: str, first: int) -> list[bytes]:
    acked, failed = [], []
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                         "linger.ms": 5, "message.timeout.ms": 60000})
    for i in range(first, first + BATCH):
        producer.produce(TOPIC, value=str(i).encode(),
                         on_delivery=lambda err, msg: (failed if err else acked).append(err or msg.value()))
        producer.poll(0)
    assert producer.flush(90) == 0 and not failed, failed[:3]
    return acked


def _create_as(port: int, client_id: str, topic: str, replicas: list[list[int]]) -> int:
    """The error code of a CreateTopics v7 for ``topic`` (one partition per entry of ``replicas``), sent by
    ``client_id`` to the broker on ``port``."""
    CT = w.CreateTopicsRequest
    body = CT(topics=[CT.CreatableTopic(name=topic, num_partitions=-1, replication_factor=-1, configs=[], assignments=[
        CT.CreatableReplicaAssignment(partition_index=i, broker_ids=r) for i, r in enumerate(replicas)])],
        timeout_ms=10000, validate_only=False)
    return asyncio.run(request_once("127.0.0.1", port, body, 7, client_id=client_id)).topics[0].error_code


def _limit_mutations(port: int, client_id: str, rate: float) -> int:
    """``controller_mutation_rate`` for ``client_id``, asked of the broker on ``port``; the answer's error code."""
    Q = w.AlterClientQuotasRequest
    body = Q(entries=[Q.EntryData(entity=[Q.EntityData(entity_type="client-id", entity_name=client_id)], ops=[
        Q.OpData(key="controller_mutation_rate", value=rate, remove=False)])], validate_only=False)
    return asyncio.run(request_once("127.0.0.1", port, body, 1)).entries[0].error_code


def _mutation_rate(port: int, client_id: str) -> float | None:
    """``client_id``'s controller_mutation_rate in the metadata of the broker on ``port`` (None: not there yet)."""
    D = w.DescribeClientQuotasRequest
    body = D(components=[D.ComponentData(entity_type="client-id", match_type=0, match=client_id)], strict=True)
    entries = asyncio.run(request_once("127.0.0.1", port, body, 1)).entries or []
    return next((v.value for e in entries for v in e.values if v.key == "controller_mutation_rate"), None)


def test_a_quorum_of_kafka_and_kraftwire_controllers_fails_over_and_replaces_them(tmp_path):
    socks = {i: processes.bind_listener()
             for i in (*KRAFTWIRE_CONTROLLERS, KRAFTWIRE_BROKER, NEW_CONTROLLER, NEW_BROKER)}
    ports = {i: s.getsockname()[1] for i, s in socks.items()}
    ports[KAFKA_CONTROLLER], ports[KAFKA_BROKER] = free_ports(2)
    directory_ids = {i: mixed.directory_id() for i in (KAFKA_CONTROLLER, *KRAFTWIRE_CONTROLLERS)}
    initial = ",".join(f"{i}@127.0.0.1:{ports[i]}:{d}" for i, d in directory_ids.items())
    bootstrap_controllers = ",".join(f"127.0.0.1:{ports[i]}" for i in directory_ids)
    controller_ports = [ports[i] for i in (KAFKA_CONTROLLER, *KRAFTWIRE_CONTROLLERS)]
    dirs = {i: str(tmp_path / f"node-{i}") for i in ports}
    configs = {}
    for i in (KAFKA_CONTROLLER, *KRAFTWIRE_CONTROLLERS, NEW_CONTROLLER):
        configs[i] = mixed.properties(tmp_path / f"node-{i}.properties", {
            "process.roles": "controller", "node.id": i, "controller.quorum.bootstrap.servers": bootstrap_controllers,
            "listeners": f"CONTROLLER://127.0.0.1:{ports[i]}",
            "advertised.listeners": f"CONTROLLER://127.0.0.1:{ports[i]}", "controller.listener.names": "CONTROLLER",
            "log.dirs": dirs[i],
            # Kafka's voter stands for election first; kraftwire's wait longer
            "controller.quorum.election.timeout.ms": 500 if i == KAFKA_CONTROLLER else 4000,
            # kraftwire's own key (its default, the linger on), in Kafka's file too: Kafka's config has no such key
            "kraftwire.quorum.high.watermark.linger.ms": 5})
    for i in (KRAFTWIRE_BROKER, KAFKA_BROKER, NEW_BROKER):
        configs[i] = mixed.properties(tmp_path / f"node-{i}.properties", {
            "process.roles": "broker", "node.id": i, "controller.quorum.bootstrap.servers": bootstrap_controllers,
            "listeners": f"PLAINTEXT://127.0.0.1:{ports[i]}", "advertised.listeners": f"PLAINTEXT://127.0.0.1:{ports[i]}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT", "log.dirs": dirs[i],
            "offsets.topic.replication.factor": 2, "offsets.topic.num.partitions": 3,
            "transaction.state.log.replication.factor": 2, "transaction.state.log.num.partitions": 2,
            "transaction.state.log.min.isr": 1})
    cluster_id = processes.kw("storage", "random-uuid").stdout.strip()
    storage_tool("format", "-t", cluster_id, "-c", configs[KAFKA_CONTROLLER], "--initial-controllers", initial,
                 *mixed.FORMAT)
    storage_tool("format", "-t", cluster_id, "-c", configs[KAFKA_BROKER], *mixed.FORMAT)
    for i in KRAFTWIRE_CONTROLLERS:
        processes.kw("storage", "format", "-t", cluster_id, "-c", configs[i], "--initial-controllers", initial, *mixed.FORMAT)
    processes.kw("storage", "format", "-t", cluster_id, "-c", configs[NEW_CONTROLLER], "--no-initial-controllers",
                 *mixed.FORMAT)
    for i in (KRAFTWIRE_BROKER, NEW_BROKER):
        processes.kw("storage", "format", "-t", cluster_id, "-c", configs[i], *mixed.FORMAT)

    logs = {i: tmp_path / f"node-{i}.log" for i in ports}
    procs = {KAFKA_CONTROLLER: mixed.start_kafka(configs[KAFKA_CONTROLLER], logs[KAFKA_CONTROLLER])}
    # Kafka's voter is up before the others: its first vote request then wins as soon as one kraftwire voter runs
    wait_until(lambda: mixed.listening(ports[KAFKA_CONTROLLER]), "Kafka's controller listening")

    def start(i: int) -> None:
        procs[i] = processes.start_server(configs[i], [socks[i]], logs[i],
                                          {"CONTROLLER" if i in (*KRAFTWIRE_CONTROLLERS, NEW_CONTROLLER)
                                           else "PLAINTEXT": socks[i]})

    # the controller to add later starts now: it observes the quorum under Kafka's leader and catches up
    for i in (*KRAFTWIRE_CONTROLLERS, KRAFTWIRE_BROKER, NEW_CONTROLLER):
        start(i)
    procs[KAFKA_BROKER] = mixed.start_kafka(configs[KAFKA_BROKER], logs[KAFKA_BROKER])
    kafka, kraftwire = f"127.0.0.1:{ports[KAFKA_BROKER]}", f"127.0.0.1:{ports[KRAFTWIRE_BROKER]}"
    try:
        assert wait_until(lambda: mixed.leader(controller_ports[1:]), "a quorum leader", timeout=90) == KAFKA_CONTROLLER
        # Kafka's voter stood as a candidate only once a kraftwire voter had granted its pre-vote (KIP-996)
        kafka_controller_log = logs[KAFKA_CONTROLLER].read_text(errors="replace")
        assert re.search(r"Completed transition to CandidateState\(.* from ProspectiveState\(", kafka_controller_log)
        until_broker_answers(ports[KAFKA_BROKER])
        until_broker_answers(ports[KRAFTWIRE_BROKER])
        processes.kw("topics", "--bootstrap-server", kraftwire, "--create", "--topic", TOPIC, "--replica-assignment",
                     f"{KRAFTWIRE_BROKER}:{KAFKA_BROKER},{KAFKA_BROKER}:{KRAFTWIRE_BROKER}")
        processes.kw("topics", "--bootstrap-server", kraftwire, "--create", "--topic", TXN_TOPIC,
                     "--replica-assignment", f"{KAFKA_BROKER}:{KRAFTWIRE_BROKER},{KRAFTWIRE_BROKER}:{KAFKA_BROKER}")
        acked = _produce(kraftwire, 0)
        # the kraftwire broker forwards to the Kafka controller inside an Envelope carrying its client's request as
        # sent: the controller charges that client's controller_mutation_rate (KIP-599; 0.1/s: a burst of 1.1
        # partitions), so the client's second CreateTopics, past its quota, is refused there
        assert _limit_mutations(ports[KRAFTWIRE_BROKER], "envelope-probe", 0.1) == ec.NONE
        wait_until(lambda: _mutation_rate(ports[KRAFTWIRE_BROKER], "envelope-probe"), "the quota published")
        mine = [[KRAFTWIRE_BROKER]]
        assert _create_as(ports[KRAFTWIRE_BROKER], "envelope-probe", f"{TOPIC}-q1", mine * 2) == ec.NONE
        assert _create_as(ports[KRAFTWIRE_BROKER], "envelope-probe", f"{TOPIC}-q2", mine) == ec.THROTTLING_QUOTA_EXCEEDED
        committed, aborted = mixed.transactions(f"{kafka},{kraftwire}", TXN_TOPIC, 0)

        # a non-leading kraftwire controller forwards AddRaftVoter to the Kafka leader, which adds the new one
        wait_until(lambda: processes.status_replicas(processes.quorum_status(controller_ports[1:]),
                                                     "CurrentObservers").get(NEW_CONTROLLER, {}).get("lag") == 0,
                   "the new controller observes the quorum and has caught up", timeout=90)
        added = mixed.add_voter_through(ports[KRAFTWIRE_CONTROLLERS[0]], NEW_CONTROLLER, ports[NEW_CONTROLLER],
                                        dirs[NEW_CONTROLLER])
        assert added.error_code == 0, added
        voters = processes.status_replicas(processes.quorum_status(controller_ports[1:]), "CurrentVoters")
        assert sorted(voters) == [KAFKA_CONTROLLER, *KRAFTWIRE_CONTROLLERS, NEW_CONTROLLER], voters
        controller_ports.append(ports[NEW_CONTROLLER])

        procs[KAFKA_CONTROLLER].send_signal(signal.SIGKILL)
        procs[KAFKA_CONTROLLER].wait(10)
        new_leader = wait_until(lambda: (lambda x: x if x in (*KRAFTWIRE_CONTROLLERS, NEW_CONTROLLER) else None)(
            mixed.leader(controller_ports[1:])), "a kraftwire voter leads after the Kafka controller's death")
        acked += _produce(kafka, BATCH)
        # a Kafka broker's admin request reaches the kraftwire controller inside an Envelope (KIP-590)
        created = processes.kw("topics", "--bootstrap-server", kafka, "--create", "--topic", f"{TOPIC}-2",
                               "--replica-assignment", f"{KAFKA_BROKER}:{KRAFTWIRE_BROKER}")
        assert created.stdout.strip() == f"Created topic {TOPIC}-2."
        # the Kafka broker fetches the metadata log from the kraftwire leader (Fetch v18, the linger on) and learns
        # the high watermark past the new topic's records: it lists the topic
        mixed.until_listed(ports[KAFKA_BROKER], f"{TOPIC}-2")

        consumer = Consumer({"bootstrap.servers": kafka, "group.id": "quorum-mixed", "auto.offset.reset": "earliest",
                             "enable.auto.commit": False})
        consumer.subscribe([TOPIC])
        seen: list[bytes] = []
        deadline = time.monotonic() + 90
        while len(seen) < len(acked) and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                seen.append(msg.value())
        consumer.close()
        assert len(seen) == len(acked) == 2 * BATCH and set(seen) == set(acked)
        for p in (0, 1):
            partition = f"{TOPIC}-{p}"
            wait_until(lambda: mixed.first_segment(os.path.join(dirs[KAFKA_BROKER], partition))
                       == mixed.first_segment(os.path.join(dirs[KRAFTWIRE_BROKER], partition)), f"{partition} equal on both brokers")
        assert new_leader in (*KRAFTWIRE_CONTROLLERS, NEW_CONTROLLER)

        # --- shape 4's step: the Kafka controller and the Kafka broker replaced by kraftwire nodes, under load
        workload = mixed.Workload(f"{kraftwire},{kafka}", TOPIC, "quorum-mixed-throughout").start()
        start(NEW_BROKER)
        live_controllers = ",".join(f"127.0.0.1:{ports[i]}" for i in (*KRAFTWIRE_CONTROLLERS, NEW_CONTROLLER))
        processes.kw("metadata-quorum", "--bootstrap-controller", live_controllers, "remove-controller",
                     "--controller-id", str(KAFKA_CONTROLLER), "--controller-directory-id",
                     directory_ids[KAFKA_CONTROLLER])
        voters = processes.status_replicas(processes.quorum_status(controller_ports[1:]), "CurrentVoters")
        assert sorted(voters) == [*KRAFTWIRE_CONTROLLERS, NEW_CONTROLLER], voters

        # the kraftwire leader resigns (SIGTERM: EndQuorumEpoch); a kraftwire voter succeeds it in the next epoch,
        # and the Kafka broker, which fetched from the resigned leader, follows the successor
        status = processes.quorum_status(controller_ports[1:])
        resigned, epoch = int(status["LeaderId"]), int(status["LeaderEpoch"])
        procs[resigned].send_signal(signal.SIGTERM)
        assert procs[resigned].wait(30) == 0
        successor = wait_until(lambda: (lambda s: s if int(s.get("LeaderId", "-1") or -1) not in (-1, resigned)
                                        else None)(processes.quorum_status(controller_ports[1:])),
                               "a successor to the resigned leader")
        assert int(successor["LeaderEpoch"]) == epoch + 1, (epoch, successor)
        start(resigned)

        def created() -> bool:
            """The topic created on the kraftwire broker — retried while the new active controller still counts
            that broker fenced (under load its heartbeats to the resigned leader can have lapsed; CI saw "All
            brokers specified in the manual partition assignment for partition 0 are fenced or in controlled
            shutdown.")."""
            proc = processes.kw("topics", "--bootstrap-server", kraftwire, "--create", "--topic", f"{TOPIC}-3",
                                "--replica-assignment", f"{KRAFTWIRE_BROKER}", check=False)
            assert proc.returncode == 0 or "are fenced or in controlled shutdown" in proc.stdout + proc.stderr, proc
            return proc.returncode == 0

        wait_until(created, f"{TOPIC}-3 created on the kraftwire broker")
        mixed.until_listed(ports[KAFKA_BROKER], f"{TOPIC}-3")
        until_broker_answers(ports[NEW_BROKER])
        mixed.reassign_away(ports[KRAFTWIRE_BROKER], KAFKA_BROKER, NEW_BROKER, tmp_path)
        # SIGTERM: Kafka's controlled shutdown, then the JVM's exit status for the signal (143), not a failure's
        assert stop_java(procs[KAFKA_BROKER]) == 143
        processes.kw("cluster", "unregister", "--bootstrap-server", kraftwire, "--id", str(KAFKA_BROKER))
        wait_until(lambda: broker_ids(ports[KRAFTWIRE_BROKER]) == [KRAFTWIRE_BROKER, NEW_BROKER],
                   "the Kafka broker unregistered")
        after_committed, after_aborted = mixed.transactions(kraftwire, TXN_TOPIC, 3)
        workload.stop()
        assert not workload.failed, workload.failed[:3]
        assert len(workload.acked) > 100 and len(set(workload.acked)) == len(workload.acked)
        assert set(workload.seen) == set(workload.acked)
        everything = mixed.read_all(kraftwire, TOPIC, len(acked) + len(workload.acked))
        assert sorted(everything) == sorted(acked + workload.acked), "lost or duplicated records"
        transactional = mixed.read_all(kraftwire, TXN_TOPIC, len(committed | after_committed))
        assert sorted(transactional) == sorted(committed | after_committed)
        assert not set(transactional) & (aborted | after_aborted)

        for p in (0, 1):
            partition = f"{TOPIC}-{p}"
            wait_until(lambda: mixed.first_segment(os.path.join(dirs[NEW_BROKER], partition))
                       == mixed.first_segment(os.path.join(dirs[KRAFTWIRE_BROKER], partition)),
                       f"{partition} equal on the kraftwire brokers")
    finally:
        processes.stop_all(procs.values())
    # the metadata log: the same bytes on every replica, over what they all hold
    copies = [mixed.first_segment(os.path.join(dirs[i], "__cluster_metadata-0")) for i in ports]
    common_length = min(len(c) for c in copies)
    assert common_length > 1000 and len({c[:common_length] for c in copies}) == 1
    # and Kafka's metadata shell prints the same tree of it as kraftwire's
    segment = os.path.join(dirs[NEW_CONTROLLER], "__cluster_metadata-0", "00000000000000000000.log")
    kraftwire_tree = processes.kw("metadata-shell", "--snapshot", segment, "tree", "/image").stdout
    assert f"BrokerRegistration(id={KAFKA_BROKER}," not in kraftwire_tree  # unregistered
    assert kraftwire_tree.splitlines() == mixed.kafka_metadata_shell_tree(segment, kraftwire_tree).splitlines()
    kafka_errors = [line for line in logs[KAFKA_BROKER].read_text(errors="replace").splitlines() if " ERROR " in line]
    assert not kafka_errors, kafka_errors[:5]
    for i in (*KRAFTWIRE_CONTROLLERS, KRAFTWIRE_BROKER, NEW_CONTROLLER, NEW_BROKER):
        assert "Traceback" not in logs[i].read_text(errors="replace"), logs[i]
    # kraftwire's high-watermark-checkpoint beside its metadata log, a file Kafka's nodes neither write nor need
    for i in ports:
        checkpoint = OffsetCheckpointFile(os.path.join(dirs[i], "__cluster_metadata-0", "high-watermark-checkpoint"),
                                          "__cluster_metadata").read()
        assert (checkpoint is None) == (i in (KAFKA_CONTROLLER, KAFKA_BROKER)), (i, checkpoint)
        assert checkpoint is None or checkpoint > 0, (i, checkpoint)
