"""Session fixtures of the conformance run: the node pairs (one Kafka and one kraftwire per configuration, started
on first use and stopped at the session's end) and the results, written as the conformance table at the end."""

from __future__ import annotations

import pytest

from conformance.pair import Pairs
from conformance.results import Results
from conformance.scenarios import all_scenarios


@pytest.fixture(scope="session")
def pairs(tmp_path_factory):
    registry = Pairs(str(tmp_path_factory.mktemp("conformance")))
    yield registry
    registry.close()


@pytest.fixture(scope="session")
def results(request):
    collected = Results(len(all_scenarios()))
    yield collected
    out = collected.write()
    if out:
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"conformance table: {out}/TABLE.md")
