"""Share groups' dead-letter queues (KIP-1191) beside Kafka 4.4: one Kafka node and one kraftwire node, both
formatted at their defaults (share.version 2) and allowed to create DLQ topics. On each, group ``dg`` names
``dlq.dg`` (which does not exist yet) and copies records; the same two Java share consumers
(``tests/kafka/ShareConsumers.java``) read a 2-partition topic, rejecting some records. Both nodes create the same
DLQ topic (one partition, the same topic configs) and write the same records to it: the rejected records' values
with the same ``__dlq.errors.*`` headers.

Then both nodes' ShareGroupMetrics: Kafka's MBeans read over JMX (``tests/kafka/ReadMBeans.java``) and named by
``config/jmx-exporter-rules.yaml``, kraftwire's scraped from its metrics endpoint. Both give the same series (names
and labels), and the counts of what both did agree: the acknowledged offsets by
type (as the consumers' script acknowledges them), the DLQ records written, no write given up."""

from __future__ import annotations

import asyncio

import pytest

from prometheus_client.parser import text_string_to_metric_families

from harness import jmx_rules, processes, roles
from harness.kafka import KafkaNode, free_ports, run_java, until_broker_answers

from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once
from server.test_kraft_node import _create
from server.test_share_fetch_node import DLQ_RECORDS, _dlq_records, _leaders, expected

PROPS = ("offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\n"
         "share.coordinator.state.topic.replication.factor=1\nshare.coordinator.state.topic.min.isr=1\n"
         "share.coordinator.state.topic.num.partitions=1\nerrors.deadletterqueue.auto.create.topics.enable=true\n")
REJECTED = sorted(v for v in range(DLQ_RECORDS) if expected(v)[-1][1] == "REJECT")
SHARE_MBEANS = "kafka.server:type=ShareGroupMetrics,*"


def _ask(port: int, body, version: int):
    return asyncio.run(request_once("127.0.0.1", port, body, version, timeout=15.0))


def _dead_letters(port: int) -> tuple:
    """What one node does with group ``dg``'s rejected records: the DLQ topic's partitions, its own configs and its
    records (value, headers), by value."""
    assert _ask(port, _create("dq", partitions=2), 7).topics[0].error_code == 0
    roles.wait_until(lambda: _leaders(port, "dq"), "dq led")
    IAC = w.IncrementalAlterConfigsRequest
    altered = _ask(port, IAC(resources=[IAC.AlterConfigsResource(resource_type=32, resource_name="dg", configs=[
        IAC.AlterableConfig(name="errors.deadletterqueue.topic.name", config_operation=0, value="dlq.dg"),
        IAC.AlterableConfig(name="errors.deadletterqueue.copy.record.enable", config_operation=0, value="true")])],
        validate_only=False), 1)
    assert altered.responses[0].error_code == 0, altered
    out = run_java("ShareConsumers.java", f"localhost:{port}", "dq", "dg", str(DLQ_RECORDS), "25000", timeout=90)
    assert out.splitlines()[-1] == f"DONE {DLQ_RECORDS}", out
    records = roles.wait_until(lambda: _dlq_records(port, "dlq.dg", len(REJECTED)), "the DLQ records")
    DC = w.DescribeConfigsRequest
    configs = _ask(port, DC(resources=[DC.DescribeConfigsResource(resource_type=2, resource_name="dlq.dg",
                                                                  configuration_keys=None)]), 4)
    own = sorted((c.name, c.value) for c in configs.results[0].configs if c.config_source == 1)
    return len(_leaders(port, "dlq.dg")), own, sorted(records, key=lambda r: int(r[0]))


def _kafka_share_metrics(jmx_port: int) -> dict[tuple[str, frozenset], float]:
    """Kafka's ShareGroupMetrics as the exporter rules name them: (name, labels) -> value."""
    config, out = jmx_rules.load_rules(), {}
    text = run_java("ReadMBeans.java", str(jmx_port), SHARE_MBEANS, timeout=60)
    for line in text.splitlines():
        bean, attributes = line.split(" :: ")
        domain, keys = bean.split(":", 1)
        for pair in attributes.rstrip(",").split(","):
            attribute, value = pair.split("=", 1)
            named = jmx_rules.apply(config, f"{domain}<{', '.join(keys.split(','))}><>{attribute}: 0")
            if named is not None:
                out[(named[0], frozenset(named[1].items()))] = float(value)
    return out


def _our_share_metrics(metrics_port: int) -> dict[tuple[str, frozenset], float]:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {(s.name, frozenset(s.labels.items())): s.value for family in text_string_to_metric_families(text)
            for s in family.samples if s.name.startswith("kafka_server_sharegroupmetrics_")}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The workload on Kafka and on kraftwire: each one's dead letters and ShareGroupMetrics after it."""
    metrics_port = free_ports(1)[0]
    with KafkaNode(tmp_path_factory.mktemp("kafka"), PROPS, ("--release-version", "4.4"), jmx=True) as kafka, \
            processes.CombinedNode(tmp_path_factory.mktemp("kraftwire"),
                                   PROPS + f"kraftwire.metrics.port={metrics_port}\n") as ours:
        for port in (kafka.port, ours.port):
            until_broker_answers(port)
        letters = [_dead_letters(port) for port in (kafka.port, ours.port)]
        yield letters, _kafka_share_metrics(kafka.jmx_port), _our_share_metrics(metrics_port)


def test_rejected_records_reach_the_same_dead_letter_topic(runs):
    (kafka, ours), _, _ = runs
    assert ours == kafka
    partitions, configs, records = ours
    assert partitions == 1 and configs == [("errors.deadletterqueue.group.enable", "true"),
                                           ("message.timestamp.type", "CreateTime")]
    assert [int(value) for value, _headers in records] == REJECTED
    assert all(h["__dlq.errors.message"] == b"Offset rejected by client." for _v, h in records)


def test_share_group_metrics_count_what_kafka_counts(runs):
    _, kafka, ours = runs
    # the same series: each of Kafka's that kraftwire serves, and none more (a group's meters appear when first used)
    assert set(ours) == set(kafka), (sorted(set(kafka) - set(ours)), sorted(set(ours) - set(kafka)))
    base = "kafka_server_sharegroupmetrics_"
    acks = {}
    for v in range(DLQ_RECORDS):
        for _count, action in expected(v):
            acks[action] = acks.get(action, 0) + 1
    for action, n in acks.items():
        key = (base + "recordacknowledgementspersec_total", frozenset({("acktype", action.capitalize())}))
        assert (kafka[key], ours[key]) == (n, n), action
    group = frozenset({("group", "dg")})
    assert kafka[(base + "deadletterqueuerecordcount_total", group)] == len(REJECTED)
    assert ours[(base + "deadletterqueuerecordcount_total", group)] == len(REJECTED)
    for side in (kafka, ours):
        # Kafka makes a group's meter at its first mark: no write given up, no series
        assert (base + "deadletterqueuefailedproducerequestspersec_total", group) not in side
        # one write per rejected record (they are in different partitions), a retry or two at most
        assert len(REJECTED) <= side[(base + "deadletterqueuetotalproducerequestspersec_total", group)] <= 6
        assert side[(base + "partitionloadtimems_count", frozenset())] >= 2  # both share-partitions of dq
        assert side[(base + "requesttopicpartitionsfetchratio_count", group)] > 0
        assert side[(base + "topicpartitionsacquiretimems_count", group)] > 0
        ratio = side[(base + "requesttopicpartitionsfetchratio", group | {("quantile", "0.99")})]
        assert 0 <= ratio <= 100
