"""Fixtures of the tests that run Apache Kafka's own software against kraftwire: its command-line tools and Java
clients, every one in the same JVM, and one kraftwire node shared by the tests of the session (a combined broker and
controller, ``server-start``), whose topics each test names for itself (helpers: ``harness.kafka_tools``)."""

from __future__ import annotations

import pytest

from harness.kafka_tools import KafkaTools, start_single_node


@pytest.fixture(scope="session")
def tools(tmp_path_factory):
    driver = KafkaTools(str(tmp_path_factory.mktemp("kafka-tools")))
    try:
        yield driver
    finally:
        driver.close()


@pytest.fixture(scope="session")
def node(tmp_path_factory):
    started = start_single_node(str(tmp_path_factory.mktemp("kafka-software-node")))
    try:
        yield started
    finally:
        started.cluster.close()
