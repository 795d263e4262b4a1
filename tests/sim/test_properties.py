"""Seeded simulation properties: safety invariants after every event, liveness after the faults heal.

Every property runs ``KRAFTWIRE_SIM_SEEDS`` seeds (default 100; the KIP-853 reconfiguration ones
``KRAFTWIRE_SIM_RECONFIG_SEEDS``, default 40, see conftest.py). A failure lists each failing seed with its
one-line replay command (``python -m kraftwire.testing.replay <property> --seed N``).
"""

from __future__ import annotations

from collections import Counter

import pytest

from kraftwire.testing.properties import PROPERTIES
from kraftwire.testing.sim import SimulationFailure

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("name", sorted(PROPERTIES))
def test_property_holds_for_every_seed(name, seeds, record_counters):
    failures = []
    counters: Counter = Counter()
    events = 0
    for seed in range(seeds):
        try:
            cluster = PROPERTIES[name](seed)
        except SimulationFailure as exc:
            failures.append(str(exc))
            continue
        counters.update(cluster.node_counters())
        events += cluster.events
    record_counters(name, counters, seeds, events)
    print(f"{name}: " + " ".join(f"{k}={v}" for k, v in sorted(counters.items())))
    assert not failures, f"{len(failures)} of {seeds} seeds failed:\n" + "\n".join(failures[:5])
