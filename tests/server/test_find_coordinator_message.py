"""FindCoordinator's error message as Kafka 4.4 answers it (found by the conformance run, #36)."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.server.apis.group_apis import _coordinator_message


def test_below_v4_an_errors_default_message_and_none_for_success():
    assert _coordinator_message(3, ec.NONE, None) == "NONE"
    assert _coordinator_message(1, ec.COORDINATOR_NOT_AVAILABLE, None) == "The coordinator is not available."
    assert _coordinator_message(2, ec.COORDINATOR_NOT_AVAILABLE, "kraftwire's own words") == \
        "The coordinator is not available."


def test_from_v4_no_message_per_key_but_for_a_request_refused_as_a_whole():
    assert _coordinator_message(4, ec.NONE, None) == ""
    assert _coordinator_message(4, ec.COORDINATOR_NOT_AVAILABLE, None) == ""
    assert _coordinator_message(4, ec.COORDINATOR_NOT_AVAILABLE, "kraftwire's own words") == "kraftwire's own words"
    assert _coordinator_message(4, ec.INVALID_REQUEST, None).startswith("This most likely occurs because of a request")
    assert _coordinator_message(0, ec.INVALID_REQUEST, None) == ec.JAVA_EXCEPTIONS[ec.INVALID_REQUEST][1]
