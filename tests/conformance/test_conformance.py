"""Every scenario of ``tests/conformance/scenarios`` against Kafka 4.4 and kraftwire (see
:mod:`conformance.runner`), and the recorded Kafka version table checked against the live Kafka."""

from __future__ import annotations

import pytest
from conformance.pair import KAFKA
from conformance.runner import KAFKA_SERVED, run_scenario
from conformance.scenarios import all_scenarios

SCENARIOS = all_scenarios()
pytestmark = pytest.mark.conformance


def _report(outcome, unexplained) -> str:
    lines = [f"{len(unexplained)} difference(s) from Kafka not on the allow-list (tests/conformance/allowed.py):"]
    lines += [f"  {d['path']}\n      Kafka:     {d['kafka']}\n      kraftwire: {d['kraftwire']}" for d in unexplained]
    lines.append("requests (as sent to Kafka) and answers:")
    for ex in outcome.exchanges:
        lines.append(f"  {ex.path}: {ex.request!r}"[:2000])
        for side, answer in ex.answers.items():
            lines.append(f"    {side}: {answer!r}"[:2000])
    return "\n".join(lines)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_conformance(scenario, pairs, results):
    try:
        outcome = run_scenario(scenario, pairs.get(scenario.config))
    except BaseException as exc:
        results.error(scenario, exc)
        raise
    unexplained = results.record(outcome)
    assert not unexplained, _report(outcome, unexplained)


def test_kafka_serves_the_recorded_versions(pairs):
    """Scenarios are generated from KAFKA_SERVED before any node starts; the live Kafka must agree with it."""
    live = pairs.get("single").api_versions(KAFKA)
    wrong = {api: (recorded, live.get(api)) for api, recorded in KAFKA_SERVED.items() if live.get(api) != recorded}
    assert not wrong, f"Kafka serves other versions than KAFKA_SERVED records (recorded, live): {wrong}"
