"""Suite-wide settings. Hypothesis runs without deadlines: two shared cores make timings meaningless."""

from __future__ import annotations

import os

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
