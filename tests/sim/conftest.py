"""Simulation settings. Seeds per property: ``KRAFTWIRE_SIM_SEEDS`` (default 100; the thorough run uses 500). The
KIP-853 reconfiguration properties (``RECONFIG_PROPERTIES``, about twice as slow per seed) run
``KRAFTWIRE_SIM_RECONFIG_SEEDS`` seeds: by default 40, or ``KRAFTWIRE_SIM_SEEDS`` when that is set.

(A ``--sim-seeds`` command-line option needs ``pytest_addoption`` in the rootdir conftest; until it exists the
environment variable is the switch.) Coverage counters of every property run are summed and printed at the end.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

COUNTERS: Counter = Counter()
RUNS: list[str] = []


RECONFIG_PROPERTIES = ("grow_and_shrink", "replace_wiped_voter")


def sim_seeds() -> int:
    return int(os.environ.get("KRAFTWIRE_SIM_SEEDS", "100"))


def reconfig_seeds() -> int:
    return int(os.environ.get("KRAFTWIRE_SIM_RECONFIG_SEEDS", os.environ.get("KRAFTWIRE_SIM_SEEDS", "40")))


@pytest.fixture
def seeds(request) -> int:
    """Seeds for the property a test is parametrized with (``name``), or for any property."""
    callspec = getattr(request.node, "callspec", None)
    name = callspec.params.get("name") if callspec is not None else None
    return reconfig_seeds() if name in RECONFIG_PROPERTIES else sim_seeds()


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
    "voters_added", "voters_removed", "resigned_after_removal", "voter_change_timeouts", "admin_already_applied",
    "wipes", "stalled_without_wiped_voter", "moves", "stale_endpoint", "fetch_answered_by_former_leader",
    "appended_from_former_leader",
)


def pytest_terminal_summary(terminalreporter):
    if not RUNS:
        return
    terminalreporter.section("raft simulation coverage")
    for line in RUNS:
        terminalreporter.write_line(line)
    terminalreporter.write_line("total: " + " ".join(f"{k}={COUNTERS[k]}" for k in COVERAGE_KEYS))
