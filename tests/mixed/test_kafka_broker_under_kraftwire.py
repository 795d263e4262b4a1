"""Apache Kafka 4.4 and kraftwire in one cluster (issue #44, the first shape in its smallest form): a kraftwire
controller, a Kafka broker and a kraftwire broker, as real processes. The Kafka broker registers with kraftwire's
controller (BrokerRegistration v4, its heartbeats at v2), replicates ``__cluster_metadata`` from it, and forwards a
CreateTopics to it inside an Envelope; the topic's two partitions are led one by each kind of broker with the other as
follower, so each ISR holds both. An idempotent acks=all producer writes through the kraftwire broker and a consumer
group reads through the Kafka broker (its offsets in ``__consumer_offsets``, replicated across both kinds too).

Checked: every acknowledged record read exactly once; each partition's log byte for byte the same on both brokers;
the Kafka broker's copy of the metadata log the same bytes as the controller's; no ERROR in Kafka's log and no
traceback in kraftwire's."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from confluent_kafka import Consumer, Producer

from harness import processes
from harness.kafka import JVM_LIGHT, free_ports, kafka_libs, storage_tool, until_broker_answers
from harness.roles import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.interop]

RECORDS = 2000
TOPIC = "mixed"
KAFKA_BROKER, KRAFTWIRE_BROKER = 2, 3


def _properties(path, **values) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(f"{k.replace('_', '.')}={v}\n" for k, v in values.items()))
    return str(path)


def _isr(bootstrap: str) -> dict:
    """partition -> (leader, isr) as ``kraftwire topics --describe`` prints them through ``bootstrap``."""
    out = processes.kw("topics", "--bootstrap-server", bootstrap, "--describe", "--topic", TOPIC, check=False).stdout
    found = {}
    for line in out.splitlines():
        fields = dict(f.split(": ", 1) for f in line.strip().split("\t") if ": " in f)
        if "Partition" in fields:
            found[int(fields["Partition"])] = (int(fields["Leader"]), fields["Isr"])
    return found


def _log(directory: str, name: str = "00000000000000000000.log") -> bytes:
    with open(os.path.join(directory, name), "rb") as f:
        return f.read()


def test_a_kafka_broker_and_a_kraftwire_broker_share_partitions_under_a_kraftwire_controller(tmp_path):
    controller_sock, broker_sock = processes.bind_listener(), processes.bind_listener()
    cport, wport = controller_sock.getsockname()[1], broker_sock.getsockname()[1]
    [kport] = free_ports(1)
    common = dict(controller_quorum_voters=f"1@127.0.0.1:{cport}", controller_listener_names="CONTROLLER",
                  listener_security_protocol_map="CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                  offsets_topic_replication_factor=2, transaction_state_log_replication_factor=2,
                  transaction_state_log_min_isr=1)
    controller = _properties(tmp_path / "controller.properties", process_roles="controller", node_id=1,
                             controller_quorum_voters=f"1@127.0.0.1:{cport}",
                             listeners=f"CONTROLLER://127.0.0.1:{cport}", controller_listener_names="CONTROLLER",
                             log_dirs=tmp_path / "c1")
    dirs = {KAFKA_BROKER: str(tmp_path / "kafka-2"), KRAFTWIRE_BROKER: str(tmp_path / "kraftwire-3")}
    brokers = {b: _properties(tmp_path / f"broker-{b}.properties", process_roles="broker", node_id=b,
                              listeners=f"PLAINTEXT://127.0.0.1:{p}", advertised_listeners=f"PLAINTEXT://127.0.0.1:{p}",
                              log_dirs=dirs[b], **common)
               for b, p in ((KAFKA_BROKER, kport), (KRAFTWIRE_BROKER, wport))}
    cluster_id = processes.kw("storage", "random-uuid").stdout.strip()
    processes.kw("storage", "format", "-t", cluster_id, "-c", controller)
    processes.kw("storage", "format", "-t", cluster_id, "-c", brokers[KRAFTWIRE_BROKER])
    storage_tool("format", "-t", cluster_id, "-c", brokers[KAFKA_BROKER])

    kafka_log = tmp_path / "kafka-broker.log"
    logs = [tmp_path / "controller.log", tmp_path / "kraftwire-broker.log"]
    procs = [processes.start_server(controller, [controller_sock], logs[0], {"CONTROLLER": controller_sock}),
             processes.start_server(brokers[KRAFTWIRE_BROKER], [broker_sock], logs[1], {"PLAINTEXT": broker_sock})]
    classpath = os.pathsep.join(os.path.join(libs, "*") for libs in (kafka_libs(), kafka_libs("logging/pom.xml")))
    with open(kafka_log, "wb") as out:
        procs.append(subprocess.Popen(["java", *JVM_LIGHT, "-cp", classpath, "kafka.Kafka", brokers[KAFKA_BROKER]],
                                      stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
    kafka, kraftwire = f"127.0.0.1:{kport}", f"127.0.0.1:{wport}"
    try:
        until_broker_answers(kport)  # Kafka listens once its controller has unfenced it
        until_broker_answers(wport)
        # through the Kafka broker: its CreateTopics reaches the controller inside an Envelope
        created = processes.kw("topics", "--bootstrap-server", kafka, "--create", "--topic", TOPIC,
                               "--replica-assignment", f"{KAFKA_BROKER}:{KRAFTWIRE_BROKER},"
                                                       f"{KRAFTWIRE_BROKER}:{KAFKA_BROKER}")
        assert created.stdout.strip() == f"Created topic {TOPIC}."
        wait_until(lambda: _isr(kraftwire) == {0: (KAFKA_BROKER, "2,3"), 1: (KRAFTWIRE_BROKER, "3,2")},
                   "each partition led by one kind of broker, both in its ISR")

        acked, failed = [], []
        producer = Producer({"bootstrap.servers": kraftwire, "enable.idempotence": True, "acks": "all",
                             "linger.ms": 5})
        for i in range(RECORDS):
            producer.produce(TOPIC, key=str(i % 17).encode(), value=str(i).encode(),
                             on_delivery=lambda err, msg: (failed if err else acked).append(err or msg.value()))
            producer.poll(0)
        assert producer.flush(60) == 0 and not failed, failed[:3]
        assert len(acked) == RECORDS

        consumer = Consumer({"bootstrap.servers": kafka, "group.id": "mixed-group", "auto.offset.reset": "earliest",
                             "enable.auto.commit": False})
        consumer.subscribe([TOPIC])
        seen: list[bytes] = []
        deadline = time.monotonic() + 90
        while len(seen) < RECORDS and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                seen.append(msg.value())
        consumer.commit(asynchronous=False)
        consumer.close()
        assert len(seen) == RECORDS and set(seen) == set(acked), (len(seen), len(set(seen)))

        # replica logs: the same bytes on both kinds of broker, once the followers have everything
        for p in (0, 1):
            partition = f"{TOPIC}-{p}"
            wait_until(lambda: _log(os.path.join(dirs[KAFKA_BROKER], partition))
                       == _log(os.path.join(dirs[KRAFTWIRE_BROKER], partition)), f"{partition} equal on both brokers")
        # the metadata log as Kafka's broker replicated it from kraftwire's controller
        ours = _log(str(tmp_path / "c1" / "__cluster_metadata-0"))
        theirs = _log(os.path.join(dirs[KAFKA_BROKER], "__cluster_metadata-0"))
        common_length = min(len(ours), len(theirs))
        assert common_length > 1000 and ours[:common_length] == theirs[:common_length]
    finally:
        processes.stop_all(procs)
    kafka_errors = [line for line in kafka_log.read_text(errors="replace").splitlines() if " ERROR " in line]
    assert not kafka_errors, kafka_errors[:5]
    for log in logs:
        assert "Traceback" not in log.read_text(errors="replace"), log
