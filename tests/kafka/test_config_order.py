"""DescribeConfigs lists a resource's keys in Kafka's order (``kraftwire.metadata.config_order``): the definition
orders in ``kraftwire/kafka_config_order.tsv`` are Kafka 4.4's, and the order computed from them is the one Kafka's
own ``ConfigHelperUtils.createResponseConfig`` answers for a default broker, topic and group configuration (both
read through ``ConfigOrder.java`` on Kafka's jars). Regenerate the file from the program's ``def`` lines when the
pin moves."""

from __future__ import annotations

from harness.kafka import run_java

from kraftwire.metadata import config_order


def _kafka() -> list[list[str]]:
    return [line.split("\t") for line in run_java("ConfigOrder.java").splitlines() if line.strip()]


def test_the_definition_orders_are_kafkas_and_the_described_orders_follow_from_them():
    kafka = _kafka()
    definitions = {scope: [(name, internal == "1") for kind, s, name, internal in
                           (line for line in kafka if line[0] == "def") if s == scope]
                   for scope in ("broker", "topic", "group")}
    assert config_order.DEFINITIONS == definitions, "regenerate kraftwire/kafka_config_order.tsv"
    for scope in definitions:
        described = [name for kind, s, name in (line for line in kafka if line[0] == "described") if s == scope]
        assert len(described) > 10
        assert config_order.in_described_order(scope, sorted(described)) == described, scope
