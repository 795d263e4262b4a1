"""The fuzzer's options and its shared node: one long-lived node configuration per test module (its ``KIND``),
fuzzed by the module's tests one listener at a time.

``--fuzz-seed N`` (or ``KRAFTWIRE_FUZZ_SEED``) picks the run; ``--fuzz-case I`` sends only case I of each stream
(to replay one failure); ``--fuzz-cases N`` sets how many cases each stream gets (the tests' own counts keep the
suite's run short; ``benchmarks/fuzz_long.py`` runs many seeds for long).
"""

from __future__ import annotations

import os

import pytest

from fuzz import nodes
from fuzz.runner import Report, Runner

DEFAULT_SEED = 1


def pytest_addoption(parser):
    group = parser.getgroup("fuzz", "the schema-driven fuzzer (tests/fuzz)")
    group.addoption("--fuzz-seed", type=int, default=None, metavar="N",
                    help=f"seed of the fuzz run (default {DEFAULT_SEED}; same as KRAFTWIRE_FUZZ_SEED)")
    group.addoption("--fuzz-case", type=int, default=None, metavar="I", help="send only case I of each stream")
    group.addoption("--fuzz-cases", type=int, default=None, metavar="N", help="cases per stream")


def _option(config, name: str, env: str):
    value = config.getoption(name, default=None)
    if value is None and os.environ.get(env):
        value = int(os.environ[env])
    return value


@pytest.fixture(scope="module")
def fuzz_node(request, tmp_path_factory):
    kind = request.module.KIND
    running = nodes.start(kind, str(tmp_path_factory.mktemp(f"fuzz-{kind}")))
    yield running
    running.cluster.close()


@pytest.fixture
def fuzz(request, fuzz_node):
    """``fuzz(stream, cases)``: run ``cases`` cases (or ``--fuzz-cases``) of the stream against the module's node;
    the report (its summary is printed). ``fuzz.whole``: the run is the test's own, so its coverage can be
    asserted."""
    seed = _option(request.config, "--fuzz-seed", "KRAFTWIRE_FUZZ_SEED")
    seed = DEFAULT_SEED if seed is None else seed
    only = _option(request.config, "--fuzz-case", "KRAFTWIRE_FUZZ_CASE")
    override = _option(request.config, "--fuzz-cases", "KRAFTWIRE_FUZZ_CASES")

    def run(stream: str, cases: int) -> Report:
        runner = Runner(fuzz_node.target, fuzz_node.streams[stream], seed, fuzz_node.advertised[stream],
                        request.node.nodeid)
        report = runner.run(override or cases, only=only)
        print(report.summary())
        return report

    run.whole = only is None and override is None  # the test's own run (not one case, not another count)
    return run
