"""Scenario files: every module here with a ``SCENARIOS`` list is collected (see :mod:`conformance.runner`)."""

from __future__ import annotations

import importlib
import pkgutil


def all_scenarios() -> list:
    """Every module's ``SCENARIOS``, in module order; ids must be unique across modules."""
    found, where = [], {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for scenario in module.SCENARIOS:
            if scenario.id in where:
                raise ValueError(f"scenario {scenario.id} is defined in {where[scenario.id]} and {info.name}")
            where[scenario.id] = info.name
            found.append(scenario)
    return found
