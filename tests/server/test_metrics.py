"""The latency histogram against exact percentiles, and the Prometheus text rendering."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kraftwire.server.edge.metrics import Histogram, Registry, _bucket_bounds, _bucket_index


def exact_percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(len(ordered) * p / 100.0)) - 1]


@given(st.integers(min_value=0, max_value=2**62))
def test_every_value_lands_in_a_bucket_that_contains_it(value):
    low, high = _bucket_bounds(_bucket_index(value))
    assert low <= value <= high
    # relative width bounded by 1/64 above the exact range
    assert high - low <= max(0, low) / 64


@given(st.lists(st.floats(min_value=0.0, max_value=60_000.0), min_size=1, max_size=400),
       st.sampled_from([50.0, 75.0, 99.0, 99.9, 100.0]))
def test_percentiles_are_within_the_bucket_error(values, p):
    h = Histogram()
    for v in values:
        h.record_ms(v)
    truth_us = int(exact_percentile(values, p) * 1000)
    got_us = h.percentile(p) * 1000
    low, high = _bucket_bounds(_bucket_index(truth_us))
    assert low - 1 <= got_us <= high + 1
    assert h.count == len(values)


def test_known_distribution():
    rng = random.Random(7)
    h = Histogram()
    values = [rng.expovariate(1 / 5.0) for _ in range(20_000)]
    for v in values:
        h.record_ms(v)
    for p in (50, 99, 99.9):
        assert h.percentile(p) == pytest.approx(exact_percentile(values, p), rel=0.02, abs=0.002)
    assert h.max_ms == pytest.approx(max(values), abs=0.001)
    assert Histogram().percentile(99) == 0.0
    with pytest.raises(ValueError):
        h.percentile(101)


def test_merge_equals_recording_everything_in_one():
    a, b, both = Histogram(), Histogram(), Histogram()
    for i in range(1000):
        (a if i % 3 else b).record_ms(i / 7)
        both.record_ms(i / 7)
    a.merge(b)
    assert [a.percentile(p) for p in (1, 50, 99)] == [both.percentile(p) for p in (1, 50, 99)]
    assert a.count == both.count and a.sum_ms == both.sum_ms


def test_prometheus_rendering():
    r = Registry()
    r.inc("requests_total", help="Requests handled", api="Fetch")
    r.inc("requests_total", 2, api="Fetch")
    r.inc("requests_total", api="Produce")
    r.set("high_watermark", 42, help="High watermark")
    h = r.histogram("commit_latency_ms", help="Append to commit")
    for v in (0.1, 0.7, 3.0, 40.0):
        h.record_ms(v)
    text = r.render(bounds_ms=(0.5, 1, 50))
    assert '# TYPE kraftwire_requests_total counter' in text
    assert 'kraftwire_requests_total{api="Fetch"} 3' in text
    assert 'kraftwire_requests_total{api="Produce"} 1' in text
    assert 'kraftwire_high_watermark 42' in text
    assert 'kraftwire_commit_latency_ms_bucket{le="0.5"} 1' in text
    assert 'kraftwire_commit_latency_ms_bucket{le="1"} 2' in text
    assert 'kraftwire_commit_latency_ms_bucket{le="50"} 4' in text
    assert 'kraftwire_commit_latency_ms_bucket{le="+Inf"} 4' in text
    assert 'kraftwire_commit_latency_ms_count 4' in text
    assert r.value("requests_total", api="Fetch") == 3
    with pytest.raises(ValueError):
        r.set("requests_total", 1)


def test_recording_a_value_n_times_at_once_equals_recording_it_n_times():
    one, many = Histogram(), Histogram()
    for v, n in ((0.4, 3), (12.5, 40), (250.0, 1), (0.0, 7)):
        for _ in range(n):
            one.record_ms(v)
        many.record_ms(v, n)
    assert many.count == one.count == 51
    for p in (1, 50, 90, 99, 99.9):
        assert many.percentile(p) == one.percentile(p)
