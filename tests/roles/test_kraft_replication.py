"""Replication as a user sees it, with real processes: three controllers and three brokers (4, 5, 6) hosting a
6-partition topic at replication factor 3 with min.insync.replicas=2, every inter-broker link through its own proxy
(``harness.links``).

* kcat, kafka-python, confluent-kafka, aiokafka and KafkaJS produce with acks=all; kcat, kafka-python,
  confluent-kafka and aiokafka read every partition back.
* The same five clients each read the topic in a consumer group and commit (``__consumer_offsets`` at its defaults:
  50 partitions, 3 replicas). The broker coordinating one of the groups is SIGKILLed; after new writes every group
  resumes at its committed offsets on the new coordinators: each client reads exactly the new records.
* Broker 6 is cut off from its peers (its controller links stay): it leaves the ISR of the partitions it follows,
  and the partitions it leads shrink to itself, so acks=all to them is refused with NOT_ENOUGH_REPLICAS, as a client
  sees it, while the others take writes. Healed, it rejoins every ISR.
* A partition leader is SIGKILLed under an idempotent acks=all producer: every acknowledged record is read back
  exactly once, in order per partition.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import time

from harness import clients, roles
from harness.links import per_link_brokers

TOPIC = "orders"
BROKERS = (4, 5, 6)


def _partitions(port: int) -> dict[int, tuple[int, list[int], list[int]]] | None:
    md = roles.metadata(port)
    for t in md.topics:
        if t.name == TOPIC and t.error_code == 0:
            return {p.partition_index: (p.leader_id, sorted(p.replica_nodes), sorted(p.isr_nodes))
                    for p in t.partitions}
    return None


def _full_isr(port: int) -> bool:
    parts = _partitions(port)
    return parts is not None and len(parts) == 6 and all(isr == [4, 5, 6] for _, _, isr in parts.values())


def test_a_replicated_topic_through_five_clients_a_partitioned_broker_and_a_leader_kill(make_roles_cluster):
    links: dict = {}
    names, props, node_props = per_link_brokers(BROKERS, links)
    cluster = make_roles_cluster(controllers=3, brokers=3, kraft=True, extra_listeners=names,
                                 extra_props=props + "replica.lag.time.max.ms=2000\n", node_props=node_props)
    try:
        _run(cluster, links)
    finally:
        for proxy in links.values():
            proxy.close()


def _run(cluster, links) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    for node in cluster.nodes.values():
        node.start()
    cluster.wait_for_leader()
    ports = {n.node_id: n.port_of("BROKER") for n in cluster.brokers}
    b4 = ports[4]
    bootstrap = ",".join(f"127.0.0.1:{p}" for p in ports.values())
    roles.wait_until(lambda: all(roles.broker_ids(p) == [4, 5, 6] for p in ports.values()),
                     "three brokers Online in every broker's image", cluster)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=20000)
    try:
        admin.create_topics([NewTopic(TOPIC, num_partitions=6, replication_factor=3,
                                      topic_configs={"min.insync.replicas": "2"})])
    finally:
        admin.close()
    roles.wait_until(lambda: _full_isr(b4), "every replica in sync", cluster)
    assert {leader for leader, _, _ in _partitions(b4).values()} == set(BROKERS)  # two leaderships each
    # the replicas really fetch through the proxies of their own links
    roles.wait_until(lambda: all(links[(f, leader)].connections > 0 for f in BROKERS for leader in BROKERS
                                 if f != leader), "a replica fetcher on every link", cluster)

    produced = _five_clients_produce(bootstrap)
    _four_clients_read_back(bootstrap, produced)
    _five_clients_in_groups_across_a_coordinator_kill(cluster, ports)
    _a_broker_partitioned_from_its_peers(cluster, links, ports)
    _acks_all_survive_a_leader_kill(cluster, ports)


def _five_clients_produce(bootstrap: str) -> dict[str, list[str]]:
    """Each client writes its records with acks=all; returns each client's values."""
    from confluent_kafka import Producer
    from kafka import KafkaProducer

    produced: dict[str, list[str]] = {}
    kcat = shutil.which("kcat") or "kcat"
    lines = [f"k{i}:kcat-{i}" for i in range(20)]
    out = subprocess.run([kcat, "-b", bootstrap, "-t", TOPIC, "-P", "-K:", "-X", "acks=all"],
                         input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    produced["kcat"] = [f"kcat-{i}" for i in range(20)]

    p = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(20):
        p.send(TOPIC, key=f"k{i}".encode(), value=f"kafka-python-{i}".encode())
    p.flush(30)
    p.close()
    produced["kafka-python"] = [f"kafka-python-{i}" for i in range(20)]

    errors = []
    cp = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all"})
    for i in range(20):
        cp.produce(TOPIC, key=f"k{i}".encode(), value=f"confluent-{i}".encode(),
                   on_delivery=lambda err, msg: errors.append(err) if err else None)
    assert cp.flush(30) == 0 and not errors, errors
    produced["confluent"] = [f"confluent-{i}" for i in range(20)]

    async def aio() -> None:
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
        await producer.start()
        try:
            for i in range(20):
                await producer.send_and_wait(TOPIC, key=f"k{i}".encode(), value=f"aiokafka-{i}".encode())
        finally:
            await producer.stop()

    asyncio.run(aio())
    produced["aiokafka"] = [f"aiokafka-{i}" for i in range(20)]

    clients.ensure_kafkajs()
    out = subprocess.run(["node", "produce.js", bootstrap, TOPIC, "kafkajs", "20"], cwd=clients.KAFKAJS_DIR,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    offsets = json.loads(out.stdout.strip().splitlines()[-1])["offsets"]
    assert len(offsets) == 20 and len({tuple(o) for o in offsets}) == 20
    produced["kafkajs"] = [f"kafkajs-{i}" for i in range(20)]
    return produced


def _four_clients_read_back(bootstrap: str, produced: dict[str, list[str]]) -> None:
    """Every consumer reads all six partitions: the same records, each client's in the order written per key."""
    from confluent_kafka import Consumer, TopicPartition as CTP
    from kafka import KafkaConsumer, TopicPartition

    every = sorted(v for values in produced.values() for v in values)
    reads: dict[str, dict[int, list[str]]] = {}

    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, auto_offset_reset="earliest",
                      consumer_timeout_ms=5000)
    c.assign([TopicPartition(TOPIC, p) for p in range(6)])
    reads["kafka-python"] = {}
    for m in c:
        reads["kafka-python"].setdefault(m.partition, []).append(m.value.decode())
    c.close()

    cc = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    cc.assign([CTP(TOPIC, p, 0) for p in range(6)])
    reads["confluent"] = {}
    deadline = time.monotonic() + 30
    while sum(len(v) for v in reads["confluent"].values()) < len(every) and time.monotonic() < deadline:
        m = cc.poll(0.5)
        if m is not None and m.error() is None:
            reads["confluent"].setdefault(m.partition(), []).append(m.value().decode())
    cc.close()

    async def aio() -> dict[int, list[str]]:
        from aiokafka import AIOKafkaConsumer

        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, auto_offset_reset="earliest")
        await consumer.start()
        got: dict[int, list[str]] = {}
        try:
            consumer.assign([TopicPartition(TOPIC, p) for p in range(6)])
            for _ in range(100):
                for tp, batch in (await consumer.getmany(timeout_ms=200)).items():
                    got.setdefault(tp.partition, []).extend(m.value.decode() for m in batch)
                if sum(len(v) for v in got.values()) >= len(every):
                    break
        finally:
            await consumer.stop()
        return got

    reads["aiokafka"] = asyncio.run(aio())

    kcat = shutil.which("kcat") or "kcat"
    out = subprocess.run([kcat, "-b", bootstrap, "-t", TOPIC, "-C", "-e", "-f", "%p|%s\n"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    reads["kcat"] = {}
    for line in out.stdout.splitlines():
        p, value = line.split("|", 1)
        reads["kcat"].setdefault(int(p), []).append(value)

    for reader, parts in reads.items():
        assert sorted(v for values in parts.values() for v in values) == every, reader
        assert parts == reads["kafka-python"], reader  # the same records in the same order in every partition
        for client, values in produced.items():
            for values_in_p in parts.values():
                mine = [v for v in values_in_p if v.startswith(client + "-")]
                assert mine == sorted(mine, key=lambda v: int(v.rsplit("-", 1)[1])), (reader, client)


GROUP_CLIENTS = ("kafka-python", "confluent", "aiokafka", "kafkajs", "kcat")


def _group_read(client: str, bootstrap: str, group: str, want: int) -> list[tuple[int, str]]:
    """``want`` records of the topic read by ``client`` as a member of ``group`` from its committed offsets (the
    beginning without any), committed before it leaves: (partition, value) pairs."""
    got: list[tuple[int, str]] = []
    if client == "kafka-python":
        from kafka import KafkaConsumer

        c = KafkaConsumer(TOPIC, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                          enable_auto_commit=False, session_timeout_ms=10000, heartbeat_interval_ms=1000,
                          request_timeout_ms=30000)
        deadline = time.monotonic() + 90
        while len(got) < want and time.monotonic() < deadline:
            for tp, records in c.poll(500).items():
                got.extend((tp.partition, r.value.decode()) for r in records)
        c.commit()
        c.close(autocommit=False)
    elif client == "confluent":
        from confluent_kafka import Consumer

        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                      "enable.auto.commit": False})
        c.subscribe([TOPIC])
        deadline = time.monotonic() + 90
        while len(got) < want and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                got.append((m.partition(), m.value().decode()))
        c.commit(asynchronous=False)
        c.close()
    elif client == "aiokafka":
        async def aio() -> None:
            from aiokafka import AIOKafkaConsumer

            c = AIOKafkaConsumer(TOPIC, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                                 enable_auto_commit=False, session_timeout_ms=10000, heartbeat_interval_ms=1000)
            await c.start()
            try:
                deadline = time.monotonic() + 90
                while len(got) < want and time.monotonic() < deadline:
                    for tp, batch in (await c.getmany(timeout_ms=500)).items():
                        got.extend((tp.partition, m.value.decode()) for m in batch)
                await c.commit()
            finally:
                await c.stop()

        asyncio.run(aio())
    elif client == "kafkajs":
        out = subprocess.run(["node", "group.js", bootstrap, TOPIC, group, str(want)], cwd=clients.KAFKAJS_DIR,
                             capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, out.stderr[-3000:]
        got = [(p, v) for p, v in json.loads(out.stdout.strip().splitlines()[-1])["values"]]
    else:
        kcat = shutil.which("kcat") or "kcat"
        out = subprocess.run([kcat, "-b", bootstrap, "-G", group, TOPIC, "-X", "auto.offset.reset=earliest", "-e",
                              "-q", "-f", "%p|%s\n"], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-3000:]
        got = [(int(p), v) for p, v in (line.split("|", 1) for line in out.stdout.splitlines())]
    return got


def _end_offsets(bootstrap: str) -> int:
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
    try:
        return sum(c.end_offsets([TopicPartition(TOPIC, p) for p in range(6)]).values())
    finally:
        c.close()


def _coordinator(port: int, group: str) -> int:
    from kraftwire.coordinator.partitioning import GROUP_TOPIC, partition_for

    md = roles.metadata(port)
    topic = next(t for t in md.topics if t.name == GROUP_TOPIC)
    return next(p.leader_id for p in topic.partitions if p.partition_index == partition_for(group, len(topic.partitions)))


def _five_clients_in_groups_across_a_coordinator_kill(cluster, ports) -> None:
    bootstrap = ",".join(f"127.0.0.1:{p}" for p in ports.values())
    total = _end_offsets(bootstrap)
    everything = sorted(roles.read_partitions(ports[4], TOPIC, 6).items())
    for client in GROUP_CLIENTS:
        got = _group_read(client, bootstrap, f"group-{client}", total)
        assert sorted(got) == sorted((p, v.decode()) for p, records in everything for _o, v in records), client
    b4 = ports[4]
    coordinators = {client: _coordinator(b4, f"group-{client}") for client in GROUP_CLIENTS}
    victim_id = coordinators["confluent"]
    victim = next(n for n in cluster.brokers if n.node_id == victim_id)
    victim.kill()
    alive = [p for b, p in ports.items() if b != victim_id]
    survivors = ",".join(f"127.0.0.1:{p}" for p in alive)
    roles.wait_until(lambda: all(_coordinator(alive[0], f"group-{c}") not in (victim_id, -1) for c in GROUP_CLIENTS),
                     f"every group coordinated without broker {victim_id}", cluster)
    from confluent_kafka import Producer

    # acks=all retried until delivered: a loaded machine may briefly shrink an ISR below min.insync.replicas
    p = Producer({"bootstrap.servers": survivors, "acks": "all", "enable.idempotence": True,
                  "message.timeout.ms": 90000})
    fresh = [f"after-the-kill-{i}" for i in range(30)]
    failed = []
    for value in fresh:
        p.produce(TOPIC, value=value.encode(), on_delivery=lambda err, _m: failed.append(err) if err else None)
    assert p.flush(120) == 0 and not failed, failed
    for client in GROUP_CLIENTS:
        got = _group_read(client, survivors, f"group-{client}", len(fresh))
        assert sorted(v for _p, v in got) == sorted(fresh), (client, coordinators[client], victim_id)
    victim.start()
    roles.wait_until(lambda: _full_isr(b4), f"broker {victim_id} back in every ISR", cluster)
    # leadership back to the preferred replicas, as before the kill (the next steps rely on two leaderships each)
    from harness import processes

    def preferred() -> bool:
        for p in range(6):
            processes.kw("leader-election", "--bootstrap-server", bootstrap, "--election-type", "PREFERRED",
                         "--topic", TOPIC, "--partition", str(p), check=False)
        return sorted(leader for leader, _, _ in _partitions(b4).values()) == [4, 4, 5, 5, 6, 6]

    roles.wait_until(preferred, "two leaderships per broker again", cluster)


def _a_broker_partitioned_from_its_peers(cluster, links, ports) -> None:
    from kafka import KafkaProducer
    from kafka.errors import NotEnoughReplicasError

    b4 = ports[4]
    for (a, b), proxy in links.items():
        if 6 in (a, b):
            proxy.cut()
    # a follower at its leader's end stays in sync however long it is quiet (Kafka's rule): write to every
    # partition with acks=1, so the replicas across the cut fall behind
    behind = KafkaProducer(bootstrap_servers=",".join(f"127.0.0.1:{p}" for p in ports.values()), acks=1)
    try:
        for p in range(6):
            assert behind.send(TOPIC, value=b"across the cut", partition=p).get(20).offset >= 0
    finally:
        behind.close()
    # broker 6 leaves the ISR of what it follows, and what it leads shrinks to broker 6 alone
    roles.wait_until(lambda: all((isr == [6]) if leader == 6 else (isr == [4, 5])
                                 for leader, _, isr in _partitions(b4).values()),
                     "broker 6 out of its peers' ISRs and alone in its own", cluster)
    led_by_6 = sorted(p for p, (leader, _, _) in _partitions(b4).items() if leader == 6)
    assert led_by_6
    producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{ports[6]}", acks="all", retries=0,
                             request_timeout_ms=10000)
    try:
        for p in led_by_6:
            future = producer.send(TOPIC, value=b"refused", partition=p)
            try:
                future.get(20)
                raise AssertionError(f"acks=all to partition {p} with an ISR of one was accepted")
            except NotEnoughReplicasError:
                pass
        others = [p for p in range(6) if p not in led_by_6]
        for p in others:
            assert producer.send(TOPIC, value=b"taken", partition=p).get(20).offset >= 0
    finally:
        producer.close()
    for proxy in links.values():
        proxy.heal()
    roles.wait_until(lambda: _full_isr(b4), "broker 6 back in every ISR", cluster)


def _acks_all_survive_a_leader_kill(cluster, ports, total: int = 3000) -> None:
    victim = next(n for n in cluster.brokers if n.node_id == 4)
    # SIGKILL the leader of two partitions, records in flight
    acked = roles.produce_through_a_kill(",".join(f"127.0.0.1:{p}" for p in ports.values()), TOPIC, victim, total)
    b5 = ports[5]
    roles.wait_until(lambda: all(leader in (5, 6) for leader, _, _ in _partitions(b5).values()),
                     "brokers 5 and 6 lead every partition", cluster)
    seen = roles.read_partitions(b5, TOPIC, 6)
    for p, records in acked.items():
        mine = {v for _, v in records}
        values = [v for _, v in seen.get(p, []) if v in mine]
        assert len(values) == len(set(values)), f"partition {p} holds a record twice"
        assert sorted(records) == [(o, v) for o, v in seen[p] if v in mine], p
    victim.start()
    roles.wait_until(lambda: _full_isr(b5), "broker 4 back in every ISR", cluster)
