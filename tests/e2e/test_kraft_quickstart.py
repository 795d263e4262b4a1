"""Kafka's quickstart on the shipped ``config/server.properties`` (one combined node; ports and log dir swapped for
the test's): ``server-start``, then a topic created with kafka-python's admin client is listed by kcat and by
confluent-kafka, the log holds Kafka's metadata records (``dump-log --cluster-metadata-decoder``), and
``__cluster_metadata`` itself is internal. ``kraftwire topics`` creates, describes, grows, lists and deletes with
kafka-topics.sh's flags and output; ``kraftwire configs`` describes and alters with kafka-configs.sh's; ``kraftwire leader-election`` answers as kafka-leader-election.sh; KafkaJS's admin client creates, describes,
grows, configures and deletes a topic; ``kraftwire features`` describes and updates as kafka-features.sh. Events are produced and consumed with
``kraftwire console-producer``/``console-consumer`` (Kafka's quickstart steps 4 and 5), kcat, kafka-python,
confluent-kafka, aiokafka and KafkaJS, and read again after the node restarts."""

from __future__ import annotations

import re
import os
import shutil
import subprocess
import sys
import time

from harness import processes

# the checkout's config/ (the tests run from a checkout; the installed package does not carry config/)
SHIPPED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "config",
                       "server.properties")


def test_quickstart_on_the_shipped_combined_config(tmp_path):
    from confluent_kafka.admin import AdminClient
    from kafka.admin import KafkaAdminClient, NewTopic

    assert os.path.exists(SHIPPED), f"the shipped combined config is missing: {SHIPPED}"
    broker, controller = processes.bind_listener(), processes.bind_listener()
    bport, cport = broker.getsockname()[1], controller.getsockname()[1]
    logs = str(tmp_path / "kraft-combined-logs")
    with open(SHIPPED, encoding="utf-8") as f:
        text = f.read()
    assert "process.roles=broker,controller" in text and "/tmp/kraft-combined-logs" in text
    config = tmp_path / "server.properties"
    config.write_text(text.replace("localhost:9092", f"localhost:{bport}").replace("localhost:9093", f"localhost:{cport}")
                      .replace("/tmp/kraft-combined-logs", logs))
    cluster_id = processes.kw("storage", "random-uuid").stdout.strip()
    processes.kw("storage", "format", "-t", cluster_id, "-c", str(config))
    err = open(tmp_path / "node.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "kraftwire", "server-start", "--config", str(config),
                             "--listener-fd", f"PLAINTEXT={broker.fileno()}",
                             "--listener-fd", f"CONTROLLER={controller.fileno()}"],
                            stdout=subprocess.DEVNULL, stderr=err, pass_fds=(broker.fileno(), controller.fileno()),
                            env=processes.kraftwire_env())
    try:
        admin = None
        deadline = time.monotonic() + 30
        while admin is None:
            try:
                admin = KafkaAdminClient(bootstrap_servers=f"localhost:{bport}", request_timeout_ms=10000)
            except Exception:  # noqa: BLE001 - the node is starting
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        try:
            deadline = time.monotonic() + 30
            while True:  # the broker is fenced until it has caught up: NOT_CONTROLLER/INVALID_REPLICATION_FACTOR
                try:
                    admin.create_topics([NewTopic("quickstart-events", num_partitions=1, replication_factor=1)])
                    break
                except Exception:  # noqa: BLE001
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
        finally:
            admin.close()

        deadline = time.monotonic() + 20
        listed = ""
        while "quickstart-events" not in listed and time.monotonic() < deadline:
            listed = subprocess.run([shutil.which("kcat") or "kcat", "-b", f"localhost:{bport}", "-L"],
                                    capture_output=True, text=True, timeout=30).stdout
        assert 'topic "quickstart-events" with 1 partitions' in listed, listed
        assert "__cluster_metadata" not in listed
        assert "broker 1 at localhost:" in listed
        topics = AdminClient({"bootstrap.servers": f"localhost:{bport}"}).list_topics(timeout=20).topics
        assert set(topics) == {"quickstart-events"}
        _produce_and_consume(bport)
        _kraftwire_topics(bport)
        _kraftwire_configs(bport)
        _leader_election(bport)
        _kafkajs_admin(bport)
        _features(bport)
    finally:
        proc.terminate()
        assert proc.wait(30) == 0
        err.close()
    # Kafka's quickstart, step 6 of a restart: the events are still there
    err = open(tmp_path / "node2.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "kraftwire", "server-start", "--config", str(config),
                             "--listener-fd", f"PLAINTEXT={broker.fileno()}",
                             "--listener-fd", f"CONTROLLER={controller.fileno()}"],
                            stdout=subprocess.DEVNULL, stderr=err, pass_fds=(broker.fileno(), controller.fileno()),
                            env=processes.kraftwire_env())
    try:
        again = _console_consumer(bport, "--from-beginning", "--max-messages", str(len(EVENTS)), "--timeout-ms",
                                  "30000")
        assert again.splitlines() == EVENTS
    finally:
        proc.terminate()
        assert proc.wait(30) == 0
        err.close()
        broker.close()
        controller.close()
    assert {"quickstart-events-0", "replication-offset-checkpoint", "recovery-point-offset-checkpoint"} <= set(
        os.listdir(logs))
    segment = os.path.join(logs, "__cluster_metadata-0", "00000000000000000000.log")
    dump = processes.kw("dump-log", "--cluster-metadata-decoder", "--files", segment).stdout
    for kind in ("FEATURE_LEVEL_RECORD", "REGISTER_BROKER_RECORD", "TOPIC_RECORD", "PARTITION_RECORD"):
        assert kind in dump, dump[-3000:]
    assert "quickstart-events" in dump


EVENTS: list[str] = []


def _console_consumer(port: int, *args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "kraftwire", "console-consumer", "--bootstrap-server",
                          f"localhost:{port}", "--topic", "quickstart-events", *args], capture_output=True, text=True,
                         env=processes.kraftwire_env(), timeout=90)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def _produce_and_consume(port: int) -> None:
    """Quickstart steps 4 and 5 with kraftwire's console tools, then every client on the same topic: each reads back
    exactly what all wrote, in order (one partition)."""
    import asyncio
    import json

    from confluent_kafka import Producer
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    from harness import clients

    first = ["This is my first event", "This is my second event"]
    out = subprocess.run([sys.executable, "-m", "kraftwire", "console-producer", "--bootstrap-server",
                          f"localhost:{port}", "--topic", "quickstart-events"], input="\n".join(first) + "\n",
                         capture_output=True, text=True, env=processes.kraftwire_env(), timeout=90)
    assert out.returncode == 0, out.stderr[-3000:]
    assert _console_consumer(port, "--from-beginning", "--max-messages", "2").splitlines() == first
    EVENTS.extend(first)

    kcat = shutil.which("kcat") or "kcat"
    out = subprocess.run([kcat, "-b", f"localhost:{port}", "-t", "quickstart-events", "-P", "-K:", "-X", "acks=all"],
                         input="k1:from kcat\n", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    EVENTS.append("from kcat")
    p = KafkaProducer(bootstrap_servers=f"localhost:{port}", acks="all")
    assert p.send("quickstart-events", b"from kafka-python").get(30).offset == 3
    p.close()
    EVENTS.append("from kafka-python")
    cp = Producer({"bootstrap.servers": f"localhost:{port}", "enable.idempotence": True})
    cp.produce("quickstart-events", b"from confluent-kafka")
    assert cp.flush(30) == 0
    EVENTS.append("from confluent-kafka")

    async def aio() -> list[bytes]:
        from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

        producer = AIOKafkaProducer(bootstrap_servers=f"localhost:{port}", acks="all", enable_idempotence=True)
        await producer.start()
        try:
            await producer.send_and_wait("quickstart-events", b"from aiokafka")
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=f"localhost:{port}", group_id=None,
                                    auto_offset_reset="earliest")
        await consumer.start()
        try:
            consumer.assign([TopicPartition("quickstart-events", 0)])
            got: list[bytes] = []
            for _ in range(50):
                for batch in (await consumer.getmany(timeout_ms=200)).values():
                    got.extend(m.value for m in batch)
                if len(got) >= 6:
                    break
            return got
        finally:
            await consumer.stop()

    assert [v.decode() for v in asyncio.run(aio())] == EVENTS + ["from aiokafka"]
    EVENTS.append("from aiokafka")
    clients.ensure_kafkajs()
    out = subprocess.run(["node", "produce.js", f"localhost:{port}", "quickstart-events", "from kafkajs", "2"],
                         cwd=clients.KAFKAJS_DIR, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1])["offsets"] == [[0, 6], [0, 7]]
    EVENTS.extend(["from kafkajs-0", "from kafkajs-1"])

    c = KafkaConsumer(bootstrap_servers=f"localhost:{port}", group_id=None, auto_offset_reset="earliest",
                      consumer_timeout_ms=5000)
    c.assign([TopicPartition("quickstart-events", 0)])
    assert [m.value.decode() for m in c] == EVENTS
    c.close()
    listed = subprocess.run([kcat, "-b", f"localhost:{port}", "-t", "quickstart-events", "-C", "-e", "-f", "%k|%s\n"],
                            capture_output=True, text=True, timeout=60).stdout.splitlines()
    assert listed[2] == "k1|from kcat" and [line.split("|", 1)[1] for line in listed] == EVENTS
    printed = _console_consumer(port, "--from-beginning", "--max-messages", "3", "--property", "print.key=true",
                                "--property", "print.offset=true")
    assert printed.splitlines() == ["Offset:0\tnull\tThis is my first event", "Offset:1\tnull\tThis is my second event",
                                    "Offset:2\tk1\tfrom kcat"]


def _topics(port: int, *args: str, ok: bool = True) -> str:
    proc = processes.kw("topics", "--bootstrap-server", f"localhost:{port}", *args, check=False)
    assert (proc.returncode == 0) == ok, (args, proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


def _eventually(port: int, *args: str, want: str) -> str:
    deadline = time.monotonic() + 20
    while True:
        out = _topics(port, *args)
        if want in out or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


def _kraftwire_topics(port: int) -> None:
    assert _topics(port, "--create", "--topic", "orders", "--partitions", "3", "--replication-factor", "1",
                   "--config", "retention.ms=1000") == "Created topic orders.\n"
    dup = _topics(port, "--create", "--topic", "orders", ok=False)
    assert dup.startswith("Error while executing topic command : ") and "already exists" in dup
    assert _topics(port, "--create", "--topic", "orders", "--if-not-exists") == ""
    bad = _topics(port, "--create", "--topic", "cfg", "--config", "retention.ms=soon", ok=False)
    assert "retention.ms" in bad
    described = _eventually(port, "--describe", "--topic", "orders", want="Partition: 2").splitlines()
    head = described[0].split("\t")
    # the shipped file's log.segment.bytes is a static broker setting, listed as Kafka 4's quickstart shows it; with
    # ELR on (the default) the cluster-level min.insync.replicas comes first, as Kafka 4.4's kafka-topics prints it
    assert head[0] == "Topic: orders" and head[1].startswith("TopicId: ") and head[2:] == [
        "PartitionCount: 3", "ReplicationFactor: 1",
        "Configs: min.insync.replicas=1,segment.bytes=1073741824,retention.ms=1000"]
    # from DescribeTopicPartitions, as Kafka's tool: ELR on (the default), none eligible while every ISR is whole
    assert described[1:] == [f"\tTopic: orders\tPartition: {i}\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \t"
                             "LastKnownElr: " for i in range(3)]
    assert _topics(port, "--describe", "--under-replicated-partitions") == ""
    assert _topics(port, "--alter", "--topic", "orders", "--partitions", "5") == ""
    assert "Partition: 4" in _eventually(port, "--describe", "--topic", "orders", want="Partition: 4")
    # the console consumer looked up its group's coordinator, which created __consumer_offsets (listed, as by Kafka)
    assert _eventually(port, "--list", want="orders").split() == ["__consumer_offsets", "orders", "quickstart-events"]
    assert _topics(port, "--delete", "--topic", "ord.*") == ""
    deadline = time.monotonic() + 20
    while "orders" in _topics(port, "--list").split() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _topics(port, "--list").split() == ["__consumer_offsets", "quickstart-events"]
    assert _topics(port, "--list", "--exclude-internal").split() == ["quickstart-events"]
    missing = _topics(port, "--describe", "--topic", "nope", ok=False)
    assert missing == "Error while executing topic command : Topic 'nope' does not exist as expected\n"


def _configs(port: int, *args: str, ok: bool = True):
    proc = processes.kw("configs", "--bootstrap-server", f"localhost:{port}", *args, check=False)
    assert (proc.returncode == 0) == ok, (args, proc.returncode, proc.stdout, proc.stderr)
    return proc


def _kraftwire_configs(port: int) -> None:
    topic = ("--entity-type", "topics", "--entity-name", "quickstart-events")
    done = _configs(port, *topic, "--alter", "--add-config", "retention.ms=1000,cleanup.policy=[compact,delete]")
    assert done.stdout == "Completed updating config for topic quickstart-events.\n"
    deadline = time.monotonic() + 20
    while "retention.ms" not in (out := _configs(port, *topic, "--describe").stdout) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert out.splitlines() == [
        "Dynamic configs for topic quickstart-events are:",
        # as Kafka 4.4 prints them: the broker-level synonyms follow the topic's own value
        "  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, "
        "DEFAULT_CONFIG:log.cleanup.policy=delete}",
        # (no log.retention.ms anywhere, so the list of its broker synonyms is empty, as with segment.ms in Kafka)
        "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000}"]
    bad = _configs(port, *topic, "--alter", "--add-config", "retention.ms=soon", ok=False)
    assert bad.stderr.startswith("Error while executing config command with args") and "retention.ms" in bad.stderr
    missing = _configs(port, *topic, "--alter", "--delete-config", "segment.ms", ok=False)
    assert "Invalid config(s): segment.ms" in missing.stderr
    broker = _configs(port, "--entity-type", "brokers", "--entity-name", "1", "--describe", "--all").stdout
    assert broker.splitlines()[0] == "All configs for broker 1 are:"
    assert "  process.roles=broker,controller sensitive=false synonyms={STATIC_BROKER_CONFIG:process.roles=" \
           "broker,controller}" in broker.splitlines()


def _leader_election(port: int) -> None:
    def elect(*args: str):
        return processes.kw("leader-election", "--bootstrap-server", f"localhost:{port}", "--election-type",
                            "preferred", *args, check=False)

    one = elect("--topic", "quickstart-events", "--partition", "0")
    assert (one.returncode, one.stdout) == (0, "Valid replica already elected for partitions quickstart-events-0\n")
    everything = elect("--all-topic-partitions")
    assert (everything.returncode, everything.stdout) == (0, "")  # nothing needed an election, none is listed
    missing = elect("--topic", "nope", "--partition", "3")
    assert missing.returncode == 1
    assert missing.stdout.startswith("Error completing leader election (PREFERRED) for partition: nope-3: "
                                     "UNKNOWN_TOPIC_OR_PARTITION"), missing.stdout
    usage = elect("--topic", "quickstart-events")
    assert usage.returncode == 1 and "Missing required option(s): partition" in usage.stderr


def _kafkajs_admin(port: int) -> None:
    import json

    from harness import clients

    clients.ensure_kafkajs()
    out = subprocess.run(["node", "admin.js", f"localhost:{port}", "kjs-admin"], cwd=clients.KAFKAJS_DIR,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["created"] is True and seen["again"] is False  # KafkaJS: false when the topic already exists
    assert seen["partitions"] == [[i, 1, [1], [1]] for i in range(3)]
    assert seen["grown"] == 5 and seen["listed"] is True and seen["deleted"] is True
    assert seen["retention"] == [["retention.ms", "1000"]]


def _features(port: int) -> None:
    def features(*args: str):
        return processes.kw("features", "--bootstrap-server", f"localhost:{port}", *args, check=False)

    described = features("describe")
    assert described.returncode == 0
    lines = described.stdout.strip().splitlines()
    # Kafka 4.4's columns: "Feature: <name padded to 40>  SupportedMinVersion: <padded to 15>  ..."
    assert lines[0].startswith("Feature: eligible.leader.replicas.version          SupportedMinVersion: 0        ")
    rows = {row[0]: row[1:4] for row in (re.findall(r"\w+: (\S+)", line) for line in lines)}
    assert list(rows) == sorted(rows)  # by name, as Kafka's tool lists them
    assert rows == {  # a static quorum: kraft.version 0; share.version 2 (its dead-letter queues), Kafka 4.4's default
        "eligible.leader.replicas.version": ["0", "1", "1"], "group.version": ["0", "1", "1"],
        "kraft.version": ["0", "1", "0"], "metadata.version": ["3.3-IV3", "4.4-IV2", "4.4-IV2"],
        "share.version": ["0", "2", "2"], "streams.version": ["0", "0", "0"], "transaction.version": ["0", "2", "2"]}
    epochs = {line.rsplit("Epoch: ", 1)[1] for line in lines}
    assert len(epochs) == 1 and int(epochs.pop()) > 0
    dry = features("upgrade", "--feature", "metadata.version=33", "--dry-run")
    assert (dry.returncode, dry.stdout) == (0, "metadata.version can be upgraded to 33.\n")
    down = features("downgrade", "--release-version", "3.8-IV0")
    assert down.returncode == 1 and down.stdout.startswith("Could not downgrade eligible.leader.replicas.version to "
                                                           "0. The update failed for all features since ")
    assert down.stderr.strip() == "7 out of 7 operation(s) failed."
    mapping = features("version-mapping", "--release-version", "3.7")
    assert mapping.stdout.splitlines()[:3] == ["metadata.version=19 (3.7)", "kraft.version=0", "transaction.version=0"]
