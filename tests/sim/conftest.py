"""Simulation settings. Seeds per property: ``KRAFTWIRE_SIM_SEEDS`` (default 100; the thorough run uses 500).

(A ``--sim-seeds`` command-line option needs ``pytest_addoption`` in the rootdir conftest; until it exists the
environment variable is the switch.) Coverage counters of every property run are summed and printed at the end.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

COUNTERS: Counter = Counter()
RUNS: list[str] = []


def sim_seeds() -> int:
    return int(os.environ.get("KRAFTWIRE_SIM_SEEDS", "100"))


@pytest.fixture
def seeds() -> int:
    return sim_seeds()


@pytest.fixture
def record_counters():
    def record(name: str, counters: Counter, seeds: int, events: int) -> None:
        COUNTERS.update(counters)
        RUNS.append(f"{name}: {seeds} seeds, {events} events, " + " ".join(
            f"{k}={counters[k]}" for k in sorted(counters) if k in COVERAGE_KEYS))

    return record


COVERAGE_KEYS = (
    "elections", "prevote_rounds", "prevote_rejections", "truncations", "check_quorum_resignations",
    "purgatory_completions", "fetch_rejected", "epoch_filter_drops", "stale_responses", "hard_kills",
    "graceful_shutdowns", "partitions", "dropped", "duplicated", "corrupted", "future_batches", "snapshot_installs",
)


def pytest_terminal_summary(terminalreporter):
    if not RUNS:
        return
    terminalreporter.section("raft simulation coverage")
    for line in RUNS:
        terminalreporter.write_line(line)
    terminalreporter.write_line("total: " + " ".join(f"{k}={COUNTERS[k]}" for k in COVERAGE_KEYS))
