"""Metrics: counters, gauges and a log-linear latency histogram, exposed through ``prometheus_client``.

Each ``Registry`` (one per node: tests run several nodes in one process) owns a ``prometheus_client``
``CollectorRegistry`` holding the process and GC collectors and one collector that turns this registry's values into
metric families at scrape time. ``serve()`` starts prometheus_client's own HTTP exposition (a daemon thread); when
the node's event loop is given, a scrape collects on that loop's thread, so the values are read where they are written
and nothing here needs a lock. ``render()`` gives the same text without HTTP.

The values themselves are kept here, not in ``prometheus_client.Counter``/``Histogram`` objects, because recording
sits on the node's hot path (a counter per request, the commit latency per committed append) and these plain
structures cost about half as much per call (``benchmarks/metrics_bench.py``, see ``Histogram``).

The histogram keeps exact counts for values below 128 units and, above that, 64 sub-buckets per power of two, so a
reported percentile is within 1/64 (about 1.6 %) of the true value whatever the range — the same idea as an HDR
histogram, without a fixed maximum. Values are recorded in microseconds and reported in milliseconds.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import threading
from typing import Callable, Iterable

from prometheus_client import CollectorRegistry, GCCollector, ProcessCollector, generate_latest, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

_EXACT = 128  # values below this land in a bucket of their own
_SUB = 64  # sub-buckets per power of two above _EXACT

#: Prometheus bucket bounds (milliseconds) for latency histograms.
DEFAULT_LATENCY_BOUNDS_MS: tuple[float, ...] = (0.25, 0.5, 1, 2, 3, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000)


def _bucket_index(value: int) -> int:
    if value < _EXACT:
        return value
    shift = value.bit_length() - 7  # top 7 bits select the sub-bucket: top in [64, 127]
    return _EXACT + (shift - 1) * _SUB + ((value >> shift) - _SUB)


def _bucket_bounds(index: int) -> tuple[int, int]:
    """Inclusive [low, high] of the values that map to bucket *index*."""
    if index < _EXACT:
        return index, index
    shift, top = divmod(index - _EXACT, _SUB)
    shift += 1
    top += _SUB
    return top << shift, ((top + 1) << shift) - 1


class Histogram:
    """Latency histogram; ``record_ms`` takes milliseconds, percentiles come back in milliseconds.

    Kept rather than ``hdrhistogram``'s ``HdrHistogram`` (same accuracy idea) because recording is on the hot path
    and the library's pure-Python ``record_value`` is slower: ``benchmarks/metrics_bench.py`` on the 2-core dev VM
    (Python 3.11, hdrhistogram 0.10.8, 200,000 exponentially distributed latencies, best of 5) measured
    ``record_ms`` at 911 and 1174 ns per call against ``record_value`` at 2398 and 2790 ns (two runs).
    """

    __slots__ = ("_counts", "count", "_sum_us", "_max_us", "_min_us")

    def __init__(self) -> None:
        self._counts: list[int] = []
        self.count = 0
        self._sum_us = 0
        self._max_us = 0
        self._min_us = -1

    def record_ms(self, value_ms: float, count: int = 1) -> None:
        """Record ``count`` observations of ``value_ms``."""
        us = int(value_ms * 1000.0) if value_ms > 0 else 0
        index = _bucket_index(us)
        counts = self._counts
        if index >= len(counts):
            counts.extend([0] * (index + 1 - len(counts)))
        counts[index] += count
        self.count += count
        self._sum_us += us * count
        if us > self._max_us:
            self._max_us = us
        if self._min_us < 0 or us < self._min_us:
            self._min_us = us

    def merge(self, other: "Histogram") -> None:
        if len(other._counts) > len(self._counts):
            self._counts.extend([0] * (len(other._counts) - len(self._counts)))
        for i, c in enumerate(other._counts):
            self._counts[i] += c
        self.count += other.count
        self._sum_us += other._sum_us
        self._max_us = max(self._max_us, other._max_us)
        if other._min_us >= 0 and (self._min_us < 0 or other._min_us < self._min_us):
            self._min_us = other._min_us

    def reset(self) -> None:
        self.__init__()

    @property
    def sum_ms(self) -> float:
        return self._sum_us / 1000.0

    @property
    def max_ms(self) -> float:
        return self._max_us / 1000.0

    @property
    def mean_ms(self) -> float:
        return self._sum_us / self.count / 1000.0 if self.count else 0.0

    def percentile(self, p: float) -> float:
        """The value at or below which *p* percent of recordings fall (``p`` in [0, 100]); 0.0 when empty."""
        if not self.count:
            return 0.0
        if not 0.0 <= p <= 100.0:
            raise ValueError(f"percentile {p} is outside [0, 100]")
        rank = max(1, math.ceil(self.count * p / 100.0))
        seen = 0
        for index, c in enumerate(self._counts):
            seen += c
            if seen >= rank:
                low, high = _bucket_bounds(index)
                # The bucket's midpoint, never past the largest value actually seen.
                return min((low + high) / 2.0, self._max_us) / 1000.0
        return self.max_ms  # unreachable: counts add up to count

    def cumulative_at_or_below_ms(self, bound_ms: float) -> int:
        """Recordings whose bucket lies wholly at or below *bound_ms* (Prometheus ``le`` semantics, ±1.6 %)."""
        bound_us = bound_ms * 1000.0
        total = 0
        for index, c in enumerate(self._counts):
            if c and _bucket_bounds(index)[1] > bound_us:
                break
            total += c
        return total


def _fmt(value: float) -> str:
    """A bucket bound as the ``le`` label value: ``1`` rather than ``1.0``, as kraftwire has always written it."""
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return repr(float(value))


#: how long a scrape waits for the event loop to hand over the values before it fails (HTTP 500)
COLLECT_TIMEOUT_S = 5.0


class Registry:
    """Named metrics with optional labels, exposed through a ``prometheus_client.CollectorRegistry`` of its own.

    Counter names end in ``_total`` (Prometheus' convention, which ``prometheus_client`` enforces by appending it).
    ``refresh``, when set, runs before every collection on the collecting thread (the event loop's, once ``serve``
    was given the loop): the node sets its state gauges there. Each of ``sources`` (callables returning metric
    families) runs after it, on the same thread: metrics computed whole at scrape time (the Kafka-named ones,
    ``server.node.kafka_metrics``) are built there instead of being stored here.
    """

    def __init__(self, prefix: str = "kraftwire_") -> None:
        self.prefix = prefix
        self._help: dict[str, tuple[str, str]] = {}
        self._values: dict[str, dict[tuple, float]] = {}
        self._histograms: dict[str, dict[tuple, Histogram]] = {}
        self.refresh: Callable[[], None] | None = None
        self.sources: list[Callable[[], list]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._http = None  # (server, thread) of the HTTP exposition while serving
        self.prometheus = CollectorRegistry()
        ProcessCollector(registry=self.prometheus)
        GCCollector(registry=self.prometheus)
        self.prometheus.register(_Exporter(self, DEFAULT_LATENCY_BOUNDS_MS))

    def _declare(self, name: str, kind: str, help_text: str) -> str:
        full = self.prefix + name
        known = self._help.get(full)
        if known and known[0] != kind:
            raise ValueError(f"metric {full} is already a {known[0]}, not a {kind}")
        if known is None and kind == "counter" and not full.endswith("_total"):
            raise ValueError(f"counter {full} must end in _total")
        if help_text or known is None:
            self._help[full] = (kind, help_text)
        return full

    def inc(self, name: str, amount: float = 1, help: str = "", **labels: str) -> None:
        full = self._declare(name, "counter", help)
        key = tuple(sorted(labels.items()))
        series = self._values.setdefault(full, {})
        series[key] = series.get(key, 0) + amount

    def set(self, name: str, value: float, help: str = "", **labels: str) -> None:
        full = self._declare(name, "gauge", help)
        self._values.setdefault(full, {})[tuple(sorted(labels.items()))] = value

    def histogram(self, name: str, help: str = "", **labels: str) -> Histogram:
        full = self._declare(name, "histogram", help)
        series = self._histograms.setdefault(full, {})
        key = tuple(sorted(labels.items()))
        hist = series.get(key)
        if hist is None:
            hist = series[key] = Histogram()
        return hist

    def value(self, name: str, **labels: str) -> float:
        return self._values.get(self.prefix + name, {}).get(tuple(sorted(labels.items())), 0)

    # ------------------------------------------------------------------------------------------------ exposition
    def families(self, bounds_ms: Iterable[float] = DEFAULT_LATENCY_BOUNDS_MS) -> list:
        """This registry's metrics as ``prometheus_client`` metric families (runs ``refresh`` first). Call it on the
        thread that records."""
        if self.refresh is not None:
            self.refresh()
        bounds = tuple(bounds_ms)
        out = []
        for full in sorted(self._help):
            kind, help_text = self._help[full]
            if kind == "histogram":
                series = self._histograms.get(full, {})
            else:
                series = self._values.get(full, {})
            # One family has one set of label names; a series without one of them has it empty (Prometheus reads
            # an empty label as an absent one).
            names = sorted({k for key in series for k, _ in key})
            if kind == "counter":
                family = CounterMetricFamily(full, help_text, labels=names)
            elif kind == "gauge":
                family = GaugeMetricFamily(full, help_text, labels=names)
            else:
                family = HistogramMetricFamily(full, help_text, labels=names)
            for key, item in sorted(series.items()):
                labels = dict(key)
                values = [str(labels.get(n, "")) for n in names]
                if kind == "histogram":
                    buckets = [(_fmt(b), item.cumulative_at_or_below_ms(b)) for b in bounds]
                    buckets.append(("+Inf", item.count))
                    family.add_metric(values, buckets, item.sum_ms)
                else:
                    family.add_metric(values, item)
            out.append(family)
        for source in self.sources:
            out.extend(source())
        return out

    def collect(self, bounds_ms: Iterable[float] = DEFAULT_LATENCY_BOUNDS_MS) -> list:
        """``families()``, on the event loop's thread when serving with a loop and called from another thread."""
        loop = self._loop
        if loop is None or threading.get_ident() == self._loop_thread:
            return self.families(bounds_ms)
        done: concurrent.futures.Future = concurrent.futures.Future()

        def on_loop() -> None:
            if done.set_running_or_notify_cancel():
                try:
                    done.set_result(self.families(bounds_ms))
                except BaseException as exc:  # noqa: BLE001 - handed to the scraping thread
                    done.set_exception(exc)

        loop.call_soon_threadsafe(on_loop)
        try:
            return done.result(COLLECT_TIMEOUT_S)
        finally:
            done.cancel()

    def render(self, bounds_ms: Iterable[float] | None = None) -> str:
        """The scrape text (Prometheus text format 0.0.4): this registry's metrics, and the process and GC
        collectors' unless other histogram bounds are asked for."""
        if bounds_ms is None:
            return generate_latest(self.prometheus).decode()
        once = CollectorRegistry()
        once.register(_Exporter(self, tuple(bounds_ms)))
        return generate_latest(once).decode()

    def serve(self, host: str, port: int, loop: asyncio.AbstractEventLoop | None = None) -> tuple[str, int]:
        """Serve the scrape over HTTP on ``host:port`` (port 0: any free one) with prometheus_client's server, in a
        daemon thread; with ``loop``, values are collected on that loop's thread. Returns the bound address.
        Raises OSError when the address cannot be bound."""
        if self._http is not None:
            raise RuntimeError("this registry is already served")
        if loop is not None:
            self._loop, self._loop_thread = loop, threading.get_ident()
        server, thread = start_http_server(port, host, registry=self.prometheus)
        self._http = (server, thread)
        return server.server_address[0], server.server_address[1]

    def stop_serving(self) -> None:
        """Stop the HTTP exposition (blocks up to the server's 0.5 s poll); idempotent."""
        http, self._http = self._http, None
        if http is not None:
            server, thread = http
            server.shutdown()
            server.server_close()
            thread.join(5)
        self._loop = self._loop_thread = None


class _Exporter:
    """The prometheus_client collector of one ``Registry``."""

    def __init__(self, registry: Registry, bounds_ms: tuple[float, ...]) -> None:
        self.registry = registry
        self.bounds_ms = bounds_ms

    def collect(self):
        return self.registry.collect(self.bounds_ms)
