"""pytest-benchmark suite for the RecordBatch v2 codec (not part of the test run).

    pytest benchmarks/test_codec_bench.py --benchmark-group-by=param:case,param:op

For one table of ratios from a single interleaved run, use ``python benchmarks/codec_table.py``.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from codec_cases import CASES, IMPLEMENTATIONS, OPERATIONS, case_data, operation  # noqa: E402

_DATA = {}


def _data(case):
    if case.name not in _DATA:
        _DATA[case.name] = case_data(case)
    return _DATA[case.name]


@pytest.mark.parametrize("impl", list(IMPLEMENTATIONS))
@pytest.mark.parametrize("op", OPERATIONS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_codec(benchmark, case, op, impl):
    fn = operation(impl, op, case, _data(case))
    if fn is None:
        pytest.skip(f"{impl} has no {op!r} path for {case.name}")
    benchmark.group = f"{case.name} / {op}"
    benchmark(fn)


def test_smoke_every_path_runs_once():
    """A quick check that every benchmark body works (usable as a smoke run without timing)."""
    for case in CASES[:1]:
        for op in OPERATIONS:
            for impl in IMPLEMENTATIONS:
                fn = operation(impl, op, case, _data(case))
                if fn is not None:
                    fn()
