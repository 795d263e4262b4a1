"""pytest-benchmark suite for the protocol codec vs kafka-python (not part of the test run).

    pytest benchmarks/test_protocol_bench.py --benchmark-group-by=group

For one table from a single interleaved run, use ``python benchmarks/protocol_table.py``.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from protocol_cases import CASES, RECORDS  # noqa: E402

_BUILT = {name: make() for name, make in CASES.items()}
PARAMS = [(case, impl) for case, fns in _BUILT.items() for impl in fns]


@pytest.mark.parametrize("case,impl", PARAMS, ids=[f"{c}|{i}" for c, i in PARAMS])
def test_protocol(benchmark, case, impl):
    benchmark.group = case
    benchmark(_BUILT[case][impl])


def test_records_are_not_copied():
    req = _BUILT["decode Produce v9 request, 1 MB records"]["kraftwire"]()
    view = req.body.topic_data[0].partition_data[0].records
    assert isinstance(view, memoryview) and view == RECORDS and len(view) == len(RECORDS)
    chunks = _BUILT["encode Fetch v12 response, 1 MB records"]["kraftwire (chunks)"]()
    assert any(c is RECORDS for c in chunks)
