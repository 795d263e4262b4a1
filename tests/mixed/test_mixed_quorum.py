"""A controller quorum of Apache Kafka 4.4 and kraftwire voters (issue #44's third shape, smallest form), with a
broker of each kind: Kafka's controller leads first (its election timeout is the shortest), so the kraftwire broker
registers with a Kafka controller and the Kafka broker with it too (the second shape); then the Kafka controller is
killed, a kraftwire voter takes over, and both brokers carry on under it (the first shape): the Kafka broker
creates a topic through the kraftwire controller inside an Envelope. The metadata log is the same bytes on every
voter and on the brokers' replicas of it; a topic whose partitions are led by one kind of broker each (so each ISR
holds both kinds) takes idempotent acks=all writes before and after the failover, a consumer group (its offsets
replicated across both kinds) reads every record once, and each partition's log is byte-identical on the two
brokers. No ERROR in the Kafka broker's log, no traceback in kraftwire's."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time

import pytest
from confluent_kafka import Consumer, Producer

from harness import processes
from harness.kafka import JVM_LIGHT, free_ports, kafka_libs, storage_tool, until_broker_answers
from harness.roles import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.interop]

KAFKA_CONTROLLER, KAFKA_BROKER, KRAFTWIRE_BROKER = 1, 5, 4
KRAFTWIRE_CONTROLLERS = (2, 3)
TOPIC, BATCH = "quorum-mixed", 1000
#: Kafka 4.4's release as kraftwire's newest metadata.version, without the features kraftwire does not implement yet
FORMAT = ("--release-version", "4.4-IV0", "--feature", "eligible.leader.replicas.version=0",
          "--feature", "share.version=0", "--feature", "streams.version=0")


def _properties(path, lines: dict) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(f"{k}={v}\n" for k, v in lines.items()))
    return str(path)


def _java(config: str, log) -> subprocess.Popen:
    classpath = os.pathsep.join(os.path.join(libs, "*") for libs in (kafka_libs(), kafka_libs("logging/pom.xml")))
    with open(log, "wb") as out:
        return subprocess.Popen(["java", *JVM_LIGHT, "-cp", classpath, "kafka.Kafka", config], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def _leader(ports) -> int | None:
    status = processes.quorum_status(ports)
    leader = int(status.get("LeaderId", "-1") or -1)
    return leader if leader >= 0 else None


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


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def _log(directory: str) -> bytes:
    with open(os.path.join(directory, "00000000000000000000.log"), "rb") as f:
        return f.read()


def test_a_quorum_of_kafka_and_kraftwire_controllers_fails_over_between_them(tmp_path):
    socks = {i: processes.bind_listener() for i in (*KRAFTWIRE_CONTROLLERS, KRAFTWIRE_BROKER)}
    ports = {i: s.getsockname()[1] for i, s in socks.items()}
    ports[KAFKA_CONTROLLER], ports[KAFKA_BROKER] = free_ports(2)
    voters = ",".join(f"{i}@127.0.0.1:{ports[i]}" for i in (KAFKA_CONTROLLER, *KRAFTWIRE_CONTROLLERS))
    controller_ports = [ports[i] for i in (KAFKA_CONTROLLER, *KRAFTWIRE_CONTROLLERS)]
    dirs = {i: str(tmp_path / f"node-{i}") for i in ports}
    configs = {}
    for i in (KAFKA_CONTROLLER, *KRAFTWIRE_CONTROLLERS):
        configs[i] = _properties(tmp_path / f"node-{i}.properties", {
            "process.roles": "controller", "node.id": i, "controller.quorum.voters": voters,
            "listeners": f"CONTROLLER://127.0.0.1:{ports[i]}", "controller.listener.names": "CONTROLLER",
            "log.dirs": dirs[i],
            # Kafka's voter stands for election first; kraftwire's wait longer
            "controller.quorum.election.timeout.ms": 500 if i == KAFKA_CONTROLLER else 4000})
    for i in (KRAFTWIRE_BROKER, KAFKA_BROKER):
        configs[i] = _properties(tmp_path / f"node-{i}.properties", {
            "process.roles": "broker", "node.id": i, "controller.quorum.voters": voters,
            "listeners": f"PLAINTEXT://127.0.0.1:{ports[i]}", "advertised.listeners": f"PLAINTEXT://127.0.0.1:{ports[i]}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT", "log.dirs": dirs[i],
            "offsets.topic.replication.factor": 2, "transaction.state.log.replication.factor": 2,
            "transaction.state.log.min.isr": 1})
    cluster_id = processes.kw("storage", "random-uuid").stdout.strip()
    for i in (KAFKA_CONTROLLER, KAFKA_BROKER):
        storage_tool("format", "-t", cluster_id, "-c", configs[i], *FORMAT)
    for i in (*KRAFTWIRE_CONTROLLERS, KRAFTWIRE_BROKER):
        processes.kw("storage", "format", "-t", cluster_id, "-c", configs[i], *FORMAT)

    logs = {i: tmp_path / f"node-{i}.log" for i in ports}
    procs = {KAFKA_CONTROLLER: _java(configs[KAFKA_CONTROLLER], logs[KAFKA_CONTROLLER])}
    # Kafka's voter is up before the others: its first vote request then wins as soon as one kraftwire voter runs
    wait_until(lambda: _listening(ports[KAFKA_CONTROLLER]), "Kafka's controller listening")
    for i in (*KRAFTWIRE_CONTROLLERS, KRAFTWIRE_BROKER):
        procs[i] = processes.start_server(configs[i], [socks[i]], logs[i],
                                          {"PLAINTEXT" if i == KRAFTWIRE_BROKER else "CONTROLLER": socks[i]})
    procs[KAFKA_BROKER] = _java(configs[KAFKA_BROKER], logs[KAFKA_BROKER])
    kafka, kraftwire = f"127.0.0.1:{ports[KAFKA_BROKER]}", f"127.0.0.1:{ports[KRAFTWIRE_BROKER]}"
    try:
        assert wait_until(lambda: _leader(controller_ports[1:]), "a quorum leader") == KAFKA_CONTROLLER
        until_broker_answers(ports[KAFKA_BROKER])
        until_broker_answers(ports[KRAFTWIRE_BROKER])
        processes.kw("topics", "--bootstrap-server", kraftwire, "--create", "--topic", TOPIC, "--replica-assignment",
                     f"{KRAFTWIRE_BROKER}:{KAFKA_BROKER},{KAFKA_BROKER}:{KRAFTWIRE_BROKER}")
        acked = _produce(kraftwire, 0)

        procs[KAFKA_CONTROLLER].send_signal(signal.SIGKILL)
        procs[KAFKA_CONTROLLER].wait(10)
        new_leader = wait_until(lambda: (lambda x: x if x in KRAFTWIRE_CONTROLLERS else None)(
            _leader(controller_ports[1:])), "a kraftwire voter leads after the Kafka controller's death")
        acked += _produce(kafka, BATCH)
        # a Kafka broker's admin request reaches the kraftwire controller inside an Envelope (KIP-590)
        created = processes.kw("topics", "--bootstrap-server", kafka, "--create", "--topic", f"{TOPIC}-2",
                               "--replica-assignment", f"{KAFKA_BROKER}:{KRAFTWIRE_BROKER}")
        assert created.stdout.strip() == f"Created topic {TOPIC}-2."

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
            wait_until(lambda: _log(os.path.join(dirs[KAFKA_BROKER], partition))
                       == _log(os.path.join(dirs[KRAFTWIRE_BROKER], partition)), f"{partition} equal on both brokers")
        # the metadata log: the same bytes on every replica, over what they all hold
        copies = [_log(os.path.join(dirs[i], "__cluster_metadata-0")) for i in ports]
        common_length = min(len(c) for c in copies)
        assert common_length > 1000 and len({c[:common_length] for c in copies}) == 1
        assert new_leader in KRAFTWIRE_CONTROLLERS
    finally:
        processes.stop_all(procs.values())
    kafka_errors = [line for line in logs[KAFKA_BROKER].read_text(errors="replace").splitlines() if " ERROR " in line]
    assert not kafka_errors, kafka_errors[:5]
    for i in (*KRAFTWIRE_CONTROLLERS, KRAFTWIRE_BROKER):
        assert "Traceback" not in logs[i].read_text(errors="replace"), logs[i]
