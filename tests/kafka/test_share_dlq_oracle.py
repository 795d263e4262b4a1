"""Share groups' dead-letter queues (KIP-1191) beside Kafka 4.4: one Kafka node and one kraftwire node, both
formatted at their defaults (share.version 2) and allowed to create DLQ topics. On each, group ``dg`` names
``dlq.dg`` (which does not exist yet) and copies records; the same two Java share consumers
(``tests/kafka/ShareConsumers.java``) read a 2-partition topic, rejecting some records. Both nodes create the same
DLQ topic (one partition, the same topic configs) and write the same records to it: the rejected records' values
with the same ``__dlq.errors.*`` headers."""

from __future__ import annotations

import asyncio

import pytest

from harness import processes, roles
from harness.kafka import KafkaNode, run_java, until_broker_answers

from kraftwire.protocol import messages as w
from kraftwire.server.edge.client import request_once
from server.test_kraft_node import _create
from server.test_share_fetch_node import DLQ_RECORDS, _dlq_records, _leaders, expected

PROPS = ("offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\n"
         "share.coordinator.state.topic.replication.factor=1\nshare.coordinator.state.topic.min.isr=1\n"
         "share.coordinator.state.topic.num.partitions=1\nerrors.deadletterqueue.auto.create.topics.enable=true\n")
REJECTED = sorted(v for v in range(DLQ_RECORDS) if expected(v)[-1][1] == "REJECT")


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


@pytest.fixture(scope="module")
def nodes(tmp_path_factory):
    with KafkaNode(tmp_path_factory.mktemp("kafka"), PROPS, ("--release-version", "4.4")) as kafka, \
            processes.CombinedNode(tmp_path_factory.mktemp("kraftwire"), PROPS) as ours:
        for port in (kafka.port, ours.port):
            until_broker_answers(port)
        yield kafka.port, ours.port


def test_rejected_records_reach_the_same_dead_letter_topic(nodes):
    kafka, ours = (_dead_letters(port) for port in nodes)
    assert ours == kafka
    partitions, configs, records = ours
    assert partitions == 1 and configs == [("errors.deadletterqueue.group.enable", "true"),
                                           ("message.timestamp.type", "CreateTime")]
    assert [int(value) for value, _headers in records] == REJECTED
    assert all(h["__dlq.errors.message"] == b"Offset rejected by client." for _v, h in records)
