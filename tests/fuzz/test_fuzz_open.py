"""The fuzzer against one combined node, PLAINTEXT, no authorizer: every API and version its client and controller
listeners advertise, with hostile values and mutated bytes (``fuzz.runner`` lists the invariants checked after
every request); then the metadata log it wrote, read by Kafka's own tool."""

from __future__ import annotations

from fuzz.metadata_log import check_log

KIND = "open"


def test_client_listener(fuzz):
    report = fuzz("client", 700)
    assert not report.failures and not report.aborted, report.render()


def test_controller_listener(fuzz):
    report = fuzz("controller", 450)
    assert not report.failures and not report.aborted, report.render()


def test_metadata_log_is_one_kafka_could_have_written(fuzz_node):
    check_log(fuzz_node)
