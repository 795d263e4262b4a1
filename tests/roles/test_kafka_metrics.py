"""Kafka's metrics on kraftwire's Prometheus endpoints, scraped over HTTP from real processes: three combined nodes
(broker and controller: three processes, the CI budget), a topic of three partitions at replication factor 3
(min.insync.replicas=2), one led by each broker.

* ActiveControllerCount adds up to 1 over the controllers; the active one counts the brokers and partitions;
* BytesInPerSec and MessagesInPerSec of the topic, summed over the brokers, grow by exactly the batches produced;
* a broker that is not the active controller stops: UnderReplicatedPartitions (summed over the brokers left) goes
  from 0 to 3; it comes back: 0 again, the leaders having expanded their ISRs (IsrExpandsPerSec);
* a committed group offset shows as kraftwire_consumer_group_lag on its coordinator;
* every metric the Grafana dashboard reads, and every name the JMX exporter rules give Kafka 4.4's MBeans (with the
  same label names), is in the scrape — but a share group's own series, which need a share group at work (the DLQ
  oracle test checks those against Kafka's).
"""

from __future__ import annotations

import asyncio
import re
import urllib.request

from harness import jmx_rules, roles
from harness.kafka import free_ports
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.server.edge.client import request_once

TOPIC = "metered"
ASSIGNMENT = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}
IDS = [1, 2, 3]


def _scrape(port: int) -> str:
    """The node's scrape; empty while it is not serving (restarting)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
            return resp.read().decode()
    except OSError:
        return ""


def _value(text: str, name: str, **labels: str) -> float:
    """The sample ``name{labels}`` — exactly those labels non-empty — (0 when absent: a node that has not counted
    anything yet). A line scan, not a full parse: the waits below scrape three nodes ten times a second."""
    want = {k: v for k, v in labels.items() if v}
    for line in text.splitlines():
        if not line.startswith(name) or line[len(name):len(name) + 1] not in ("{", " "):
            continue
        series, value = line.rsplit(" ", 1)
        got = dict(re.findall(r'(\w+)="([^"]*)"', series[len(name):]))
        if {k: v for k, v in got.items() if v} == want:
            return float(value)
    return 0.0


def _request(port: int, body, version: int):
    return asyncio.run(request_once("127.0.0.1", port, body, version, timeout=10.0))


def _produce(port: int, partition: int, count: int) -> int:
    """``count`` records to ``partition`` through its leader on ``port``, acks=-1; the batch's size in bytes."""
    P = w.ProduceRequest
    b = RecordBatchBuilder(base_offset=0)
    for i in range(count):
        b.append(None, f"value-{partition}-{i}".encode())
    raw = b.build()
    answer = _request(port, P(transactional_id=None, acks=-1, timeout_ms=10000, topic_data=[P.TopicProduceData(
        name=TOPIC, partition_data=[P.PartitionProduceData(index=partition, records=raw)])]), 9)
    assert answer.responses[0].partition_responses[0].error_code == 0, answer
    return len(raw)


def test_kafka_named_metrics_of_a_cluster_under_a_broker_stop(make_roles_cluster):
    ports = {}

    def metrics_port(node_id: int, socks) -> str:
        ports[node_id] = free_ports(1)[0]
        return f"kraftwire.metrics.port={ports[node_id]}\n"

    cluster = make_roles_cluster(controllers=3, brokers=0, combined=True, kraft=True, node_props=metrics_port,
                                 extra_props="offsets.topic.num.partitions=1\n")  # one group log: quick to create
    for node in cluster.nodes.values():
        node.start()
    cluster.wait_for_leader()
    broker = {i: cluster.nodes[i].port_of("BROKER") for i in IDS}
    roles.wait_until(lambda: roles.broker_ids(broker[1]) == IDS, "three brokers", cluster)
    CT = w.CreateTopicsRequest
    created = _request(broker[1], CT(topics=[CT.CreatableTopic(
        name=TOPIC, num_partitions=-1, replication_factor=-1,
        assignments=[CT.CreatableReplicaAssignment(partition_index=p, broker_ids=r) for p, r in ASSIGNMENT.items()],
        configs=[CT.CreatableTopicConfig(name="min.insync.replicas", value="2")])],
        timeout_ms=10000, validate_only=False), 5)
    assert created.topics[0].error_code == 0, created

    def scrape(ids) -> dict[int, str]:
        return {i: _scrape(ports[i]) for i in ids}

    def total(texts: dict[int, str], name: str, **labels: str) -> float:
        return sum(_value(t, name, **labels) for t in texts.values())

    URP = "kafka_server_replicamanager_underreplicatedpartitions"
    ACTIVE = "kafka_controller_kafkacontroller_activecontrollercount"

    def in_sync() -> bool:
        texts = scrape(IDS)
        return total(texts, "kafka_server_replicamanager_leadercount", ) >= 3 and total(texts, URP) == 0

    roles.wait_until(in_sync, "the topic's partitions led and in sync", cluster)
    controllers = scrape(IDS)
    assert total(controllers, ACTIVE) == 1
    (active_id,) = [i for i, t in controllers.items() if _value(t, ACTIVE) == 1]
    active = controllers[active_id]
    assert _value(active, "kafka_controller_kafkacontroller_activebrokercount") == 3
    assert _value(active, "kafka_controller_kafkacontroller_globalpartitioncount") >= 3
    assert _value(active, "kafka_controller_kafkacontroller_offlinepartitionscount") == 0

    IN = "kafka_server_brokertopicmetrics_bytesinpersec_total"
    MESSAGES = "kafka_server_brokertopicmetrics_messagesinpersec_total"
    before = scrape(IDS)
    produced = sum(_produce(broker[r[0]], p, 10) for p, r in ASSIGNMENT.items())
    after = scrape(IDS)
    assert total(after, IN, topic=TOPIC) - total(before, IN, topic=TOPIC) == produced
    assert total(after, MESSAGES, topic=TOPIC) - total(before, MESSAGES, topic=TOPIC) == 30
    assert total(after, IN) - total(before, IN) == produced  # the all-topics series

    expands = total(after, "kafka_server_replicamanager_isrexpandspersec_total")
    victim = next(i for i in IDS if i != active_id)
    left = [i for i in IDS if i != victim]
    assert cluster.nodes[victim].terminate() == 0  # a clean stop: the controller takes it out of every ISR
    roles.wait_until(lambda: total(scrape(left), URP) == 3, "every partition under-replicated", cluster)
    assert total(scrape(left), ACTIVE) == 1
    cluster.nodes[victim].start()
    roles.wait_until(lambda: total(scrape(IDS), URP) == 0, "every partition in sync again", cluster)
    assert total(scrape(IDS), "kafka_server_replicamanager_isrexpandspersec_total") >= expands + 3

    # a group's committed offset, on the group's coordinator
    FC = w.FindCoordinatorRequest
    coordinator = roles.wait_until(lambda: (lambda a: a.node_id if a.error_code == 0 else None)(
        _request(broker[1], FC(key="metered-group", key_type=0), 2)), "a group coordinator", cluster)
    OC = w.OffsetCommitRequest
    commit = OC(group_id="metered-group", generation_id_or_member_epoch=-1, member_id="", retention_time_ms=-1,
                topics=[OC.OffsetCommitRequestTopic(name=TOPIC, partitions=[OC.OffsetCommitRequestPartition(
                    partition_index=0, committed_offset=4, committed_metadata="")])])
    roles.wait_until(lambda: _request(broker[coordinator], commit, 5).topics[0].partitions[0].error_code == 0,
                     "the offset committed (once the coordinator has loaded)", cluster)
    texts = scrape(ports)
    assert _value(texts[coordinator], "kraftwire_consumer_group_lag", group="metered-group", topic=TOPIC,
                  partition="0") == 6

    served: dict[str, set] = {}
    for text in texts.values():
        for name, label_sets in jmx_rules.scrape_series(text).items():
            served.setdefault(name, set()).update(label_sets)
    missing = jmx_rules.dashboard_metrics() - set(served)
    assert not missing, f"the dashboard reads metrics no node serves: {sorted(missing)}"
    config = jmx_rules.load_rules()
    for attribute in jmx_rules.kafka_attributes():
        if "type=ShareGroupMetrics" in attribute and "group=" in attribute:
            continue  # a share group's own series: tests/kafka/test_share_dlq_oracle.py checks them with a live group
        out = jmx_rules.apply(config, attribute)
        if out is not None:
            name, labels = out
            assert frozenset(labels) in served.get(name, set()), \
                f"{attribute} is named {name}{sorted(labels)}, which no kraftwire node serves with those labels"
