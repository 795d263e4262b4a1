"""BROKER_LOGGER resources on a KRaft node, in-process on real sockets: DescribeConfigs lists the node's Python
loggers with their levels, IncrementalAlterConfigs changes a level on the receiving broker (not the controller) and
refuses an unknown logger with Kafka's words, and a broker resource naming another broker is refused there too
(Kafka's ConfigAdminManager; its DynamicConfigChangeTest/kafka-configs broker-loggers tests)."""

from __future__ import annotations

import logging

from kraftwire import error_codes as ec
from kraftwire.metadata import broker_loggers as bl
from kraftwire.protocol import messages as w
from server.test_kraft_node import Combined

IA = w.IncrementalAlterConfigsRequest
DC = w.DescribeConfigsRequest
LOGGER = "kraftwire.tests.broker-loggers"


async def _alter(conn, kind: str, name: str, ops, validate_only=False) -> list[tuple[int, str | None]]:
    r = await conn.request(IA(resources=[IA.AlterConfigsResource(resource_type=kind, resource_name=name, configs=[
        IA.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops])],
        validate_only=validate_only), 1)
    return [(x.error_code, x.error_message) for x in r.responses]


async def _level(conn, logger: str) -> list[str]:
    r = await conn.request(DC(resources=[DC.DescribeConfigsResource(resource_type=bl.BROKER_LOGGER,
                                                                    resource_name="1", configuration_keys=[logger])],
                              include_synonyms=False, include_documentation=False), 4)
    assert r.results[0].error_code == ec.NONE
    return [c.value for c in r.results[0].configs]


def test_loggers_are_described_and_changed_on_the_receiving_broker(tmp_path):
    logging.getLogger(LOGGER).setLevel(logging.INFO)

    async def scenario(node, conn):
        assert await _level(conn, LOGGER) == ["INFO"]
        assert await _level(conn, "kafka.controller") == []
        assert await _alter(conn, bl.BROKER_LOGGER, "1", [("kafka.controller", bl.SET, "DEBUG")]) == [
            (ec.INVALID_CONFIG, "Logger kafka.controller does not exist!")]
        assert await _alter(conn, bl.BROKER_LOGGER, "1", [(LOGGER, bl.SET, "DEBUG")], validate_only=True) == [
            (ec.NONE, None)]
        assert await _level(conn, LOGGER) == ["INFO"]
        assert await _alter(conn, bl.BROKER_LOGGER, "1", [(LOGGER, bl.SET, "DEBUG")]) == [(ec.NONE, None)]
        assert await _level(conn, LOGGER) == ["DEBUG"]
        assert await _alter(conn, bl.BROKER, "2", [("message.max.bytes", bl.SET, "400000")], validate_only=True) == [
            (ec.INVALID_REQUEST, "Unexpected broker id, expected 1, but received 2")]
        assert await _alter(conn, bl.BROKER, "1", [("message.max.bytes", bl.SET, "400000")], validate_only=True) == [
            (ec.NONE, None)]  # this broker's own: the controller decides

    try:
        Combined(tmp_path).run(scenario)
    finally:
        logging.getLogger(LOGGER).setLevel(logging.NOTSET)
