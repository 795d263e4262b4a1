"""The fuzzer against a controller and a separate broker (which forwards the controller's APIs to it): the
broker's client listener and the controller's listener, every API and version each advertises; then both copies
of the metadata log, read by Kafka's own tool."""

from __future__ import annotations

from fuzz.metadata_log import check_log

KIND = "split"


def test_client_listener(fuzz):
    report = fuzz("client", 450)
    assert not report.failures and not report.aborted, report.render()


def test_controller_listener(fuzz):
    report = fuzz("controller", 300)
    assert not report.failures and not report.aborted, report.render()


def test_metadata_log_is_one_kafka_could_have_written(fuzz_node):
    check_log(fuzz_node)
