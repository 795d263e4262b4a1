"""Follower fetching (KIP-392) as a user sees it, with real processes: one controller and three brokers (2, 3, 4),
each in its own rack (``broker.rack=rack-<id>``), ``replica.selector.class`` set to Kafka's rack-aware selector. A
topic of one partition and three replicas; a confluent-kafka consumer with ``client.rack`` set to a follower's rack
reads every record produced with acks=all, and the follower's own metrics show it served them
(``kraftwire_follower_fetch_bytes_total``), while the leader's and the other follower's show nothing of the kind.
Kafka's system test ``fetch_from_follower_test.py`` checks the same thing through the brokers' JMX metrics."""

from __future__ import annotations

import re
import socket
import urllib.request

from harness import roles

from kraftwire.config import RACK_AWARE_SELECTOR

TOPIC = "racked"
COUNT = 200
SERIES = re.compile(r'^kraftwire_follower_fetch_bytes_total\{topic="racked"\} (\S+)$', re.M)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _follower_bytes(metrics_port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as resp:
        found = SERIES.search(resp.read().decode())
    return float(found.group(1)) if found else 0.0


def _partition(port: int):
    for t in roles.metadata(port).topics:
        if t.name == TOPIC and t.error_code == 0 and t.partitions:
            return t.partitions[0]
    return None


def test_a_consumer_reads_from_the_follower_in_its_rack(make_roles_cluster):
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    metrics = {}

    def node_props(node_id: int, socks) -> str:
        metrics[node_id] = _free_port()
        return (f"broker.rack=rack-{node_id}\nreplica.selector.class={RACK_AWARE_SELECTOR}\n"
                f"kraftwire.metrics.port={metrics[node_id]}\n")

    cluster = make_roles_cluster(controllers=1, brokers=3, kraft=True, node_props=node_props)
    for node in cluster.nodes.values():
        node.start()
    cluster.wait_for_leader()
    ports = {n.node_id: n.port_of("BROKER") for n in cluster.brokers}
    bootstrap = ",".join(f"127.0.0.1:{p}" for p in ports.values())
    any_port = next(iter(ports.values()))
    roles.wait_until(lambda: all(roles.broker_ids(p) == [2, 3, 4] for p in ports.values()),
                     "three brokers in every broker's image", cluster)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, num_partitions=1, replication_factor=3)])[TOPIC].result(30)
    roles.wait_until(lambda: (p := _partition(any_port)) is not None and len(p.isr_nodes) == 3,
                     "every replica in sync", cluster)
    part = _partition(any_port)
    leader = part.leader_id
    follower, other = sorted(b for b in part.replica_nodes if b != leader)

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i in range(COUNT):
        producer.produce(TOPIC, key=b"k%d" % i, value=b"v%d" % i)
    assert producer.flush(30) == 0

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "racked-readers", "client.rack": f"rack-{follower}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    seen = []
    try:
        consumer.subscribe([TOPIC])
        for _ in range(300):
            if len(seen) >= COUNT:
                break
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                seen.append(msg.value())
    finally:
        consumer.close()
    assert seen == [b"v%d" % i for i in range(COUNT)]
    assert _follower_bytes(metrics[follower]) > 0, "the follower in the consumer's rack served nothing"
    assert _follower_bytes(metrics[other]) == 0 and _follower_bytes(metrics[leader]) == 0
