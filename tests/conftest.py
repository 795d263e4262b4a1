"""Suite-wide settings. Hypothesis runs without deadlines: two shared cores make timings meaningless.

``tests/`` goes on ``sys.path`` (last, so it shadows nothing installed) for the shared helpers: ``import harness``.
"""

from __future__ import annotations

import os
import sys

_TESTS = os.path.dirname(os.path.abspath(__file__))
if _TESTS not in sys.path:
    sys.path.append(_TESTS)

import subprocess

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    deadline=None,
    max_examples=2000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("KRAFTWIRE_HYPOTHESIS_PROFILE", "default"))


def pytest_report_header(config):
    import kraftwire

    lines = [f"kraftwire {kraftwire.__version__} from {os.path.dirname(kraftwire.__file__)}"]
    try:
        from kraftwire import records

        lines.append(f"kraftwire.records implementation: {records.IMPLEMENTATION}")
    except Exception as exc:  # the header must never hide the real failure, which the tests report
        lines.append(f"kraftwire.records did not import: {exc!r}")
    return lines


#: the directories of the suite's pure part: the codec, protocol, Raft core, simulations and decision layers, no
#: process, listener or Kafka — CPU-bound, so the test command runs them on both cores (``--part pure -n 2``,
#: pytest-xdist) and the rest, which waits on processes and shares long-lived ones, in one process
#: (``--part processes``); without ``--part`` a run collects both
PURE = ("records", "protocol", "raft", "sim", "metadata", "replica", "coordinator", "log", "snapshot")


def pytest_addoption(parser):
    parser.addoption(
        "--sim-seeds",
        type=int,
        default=None,
        metavar="N",
        help="seeds per Raft simulation property (default 100; same as KRAFTWIRE_SIM_SEEDS)",
    )
    parser.addoption(
        "--part",
        choices=("pure", "processes"),
        default=None,
        help="collect only the pure tests (tests/{%s}) or only the others" % ",".join(PURE),
    )


def pytest_ignore_collect(collection_path, config):
    """``--part``: leave out the top-level entries of ``tests/`` of the other part."""
    part = config.getoption("--part")
    if part is None or os.path.dirname(str(collection_path)) != _TESTS:
        return None
    if os.path.basename(str(collection_path)) == "conftest.py":
        return None
    return True if (os.path.basename(str(collection_path)) in PURE) != (part == "pure") else None


def pytest_configure(config):
    seeds = config.getoption("--sim-seeds")
    if seeds is not None:
        if seeds < 1:
            raise ValueError(f"--sim-seeds must be at least 1, got {seeds}")
        os.environ["KRAFTWIRE_SIM_SEEDS"] = str(seeds)


@pytest.fixture(scope="session")
def built_dist(tmp_path_factory):
    """The sdist and wheel of this checkout, built once per run as the CI builds them (``python -m build``,
    isolated: setuptools and Cython fetched into a throwaway environment): ``tests/test_packaging.py`` checks them,
    ``tests/e2e/test_readme_tour.py`` installs the wheel into a fresh venv."""
    repo = os.path.dirname(_TESTS)
    dist = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(dist), repo],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"python -m build failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return dist
