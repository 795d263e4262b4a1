"""Metrics: counters, gauges and a log-linear latency histogram, rendered in Prometheus' text format.

The histogram keeps exact counts for values below 128 units and, above that, 64 sub-buckets per power of two, so a
reported percentile is within 1/64 (about 1.6 %) of the true value whatever the range — the same idea as an HDR
histogram, without a fixed maximum. Values are recorded in microseconds and reported in milliseconds.

Nothing here is thread-safe by design: the node records from its event loop thread only.
"""

from __future__ import annotations

import math
from typing import Iterable

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
    """Latency histogram; ``record_ms`` takes milliseconds, percentiles come back in milliseconds."""

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


def _labels(labels: dict[str, str] | None) -> str:
    if not labels:
        return ""
    parts = []
    for k, v in sorted(labels.items()):
        escaped = str(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
        parts.append(f'{k}="{escaped}"')
    return "{" + ",".join(parts) + "}"


def _fmt(value: float) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return repr(float(value))


class Registry:
    """Named metrics with optional labels; ``render()`` gives Prometheus text exposition format 0.0.4."""

    def __init__(self, prefix: str = "kraftwire_") -> None:
        self.prefix = prefix
        self._help: dict[str, tuple[str, str]] = {}
        self._values: dict[str, dict[tuple, float]] = {}
        self._histograms: dict[str, dict[tuple, Histogram]] = {}

    def _declare(self, name: str, kind: str, help_text: str) -> str:
        full = self.prefix + name
        known = self._help.get(full)
        if known and known[0] != kind:
            raise ValueError(f"metric {full} is already a {known[0]}, not a {kind}")
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

    def render(self, bounds_ms: Iterable[float] = DEFAULT_LATENCY_BOUNDS_MS) -> str:
        bounds = tuple(bounds_ms)
        lines: list[str] = []
        for full in sorted(self._help):
            kind, help_text = self._help[full]
            if help_text:
                lines.append(f"# HELP {full} {help_text}")
            lines.append(f"# TYPE {full} {kind}")
            if kind == "histogram":
                for key, hist in sorted(self._histograms.get(full, {}).items()):
                    labels = dict(key)
                    for b in bounds:
                        le = _labels({**labels, "le": _fmt(b)})
                        lines.append(f"{full}_bucket{le} {hist.cumulative_at_or_below_ms(b)}")
                    lines.append(f"{full}_bucket{_labels({**labels, 'le': '+Inf'})} {hist.count}")
                    lines.append(f"{full}_sum{_labels(labels)} {_fmt(hist.sum_ms)}")
                    lines.append(f"{full}_count{_labels(labels)} {hist.count}")
            else:
                for key, value in sorted(self._values.get(full, {}).items()):
                    lines.append(f"{full}{_labels(dict(key))} {_fmt(value)}")
        return "\n".join(lines) + "\n"
