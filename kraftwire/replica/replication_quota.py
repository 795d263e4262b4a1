"""Replication throttles (Kafka's ReplicationQuotaManager, KIP-73), pure; one per direction on each broker.

* Leader: a broker's ``leader.replication.throttled.rate`` (bytes per second; a dynamic broker config, this broker's
  value or the cluster-wide default) bounds what it sends to followers of *throttled* replicas: those a topic's
  ``leader.replication.throttled.replicas`` lists for this broker (``partition:broker,...``, or ``*`` for all). A
  follower fetch reads nothing from a throttled partition while the rate is over the bound, unless the follower is
  in the ISR (Kafka's ``shouldLeaderThrottle``: a caught-up replica is never held back); the bytes sent for
  throttled partitions are recorded.
* Follower: ``follower.replication.throttled.rate`` with ``follower.replication.throttled.replicas``: a broker
  leaves its throttled partitions out of its fetch requests while over the bound, unless it is in their ISR
  (``shouldFollowerThrottle``), and records the bytes it receives for them. The rate is Kafka's ``SimpleRate``: like a client quota's, but measured over the time since
the oldest sample started, at least one window (``replication.quota.window.num`` 11 of
``replication.quota.window.size.seconds`` 1), and checked without recording (``isQuotaExceeded``).

No clock: ``now_ms`` is passed in.
"""

from __future__ import annotations

from kraftwire.replica.quotas import DEFAULT_SAMPLES, DEFAULT_WINDOW_S, Rate

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
ALL = "*"


class SimpleRate(Rate):
    """Kafka's ``SimpleRate``: the span is the time since the oldest sample started, at least one window."""

    def window_size_ms(self, now_ms: int) -> int:
        self._purge(now_ms)
        if not self._samples:
            return self.window_ms
        return max(now_ms - min(s.start_ms for s in self._samples), self.window_ms)


def throttled_partitions(value: str | None, broker: int) -> frozenset[int] | str:
    """The partitions of a topic whose replicas on ``broker`` a ``*.replication.throttled.replicas`` value
    throttles: ``ALL`` for ``*``, else the partitions of its ``partition:broker`` entries naming ``broker``
    (Kafka's ``parseThrottledPartitions``; entries it cannot read are skipped)."""
    if not value or not value.strip():
        return frozenset()
    if value.strip() == ALL:
        return ALL
    out = set()
    for entry in value.split(","):
        partition, sep, replica = entry.strip().partition(":")
        if sep and partition.strip().isdigit() and replica.strip().isdigit() and int(replica) == broker:
            out.add(int(partition))
    return frozenset(out)


def is_throttled(throttled: frozenset[int] | str, partition: int) -> bool:
    return throttled == ALL or partition in throttled


def parse_rate(value: str | None) -> int | None:
    """A ``*.replication.throttled.rate`` value in bytes per second; None (no bound) when unset or unreadable."""
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


class ReplicationQuota:
    """One direction's throttle (the leader's here): the rate of throttled bytes and its bound."""

    def __init__(self, samples: int = DEFAULT_SAMPLES, window_s: int = DEFAULT_WINDOW_S) -> None:
        self.rate = SimpleRate(samples, window_s * 1000)
        #: bytes recorded in all (for the throttled-bytes metric)
        self.total_bytes = 0
        #: reads of a throttled partition held back in all (for the metric that shows the throttle biting)
        self.held_back = 0

    def exceeded(self, bound: int | None, now_ms: int) -> bool:
        """Whether the rate is over ``bound`` now (None: unbounded)."""
        return bound is not None and self.rate.measure(now_ms) > bound

    def holds_back(self, in_sync: bool, bound: int | None, now_ms: int) -> bool:
        """:func:`holds_back` for a throttled partition's replica under ``bound``, counting each read held back."""
        held = holds_back(in_sync, True, self.exceeded(bound, now_ms))
        self.held_back += held
        return held

    def record(self, size: int, now_ms: int) -> None:
        if size > 0:
            self.rate.record(size, now_ms)
            self.total_bytes += size


def holds_back(in_sync: bool, throttled: bool, exceeded: bool) -> bool:
    """Kafka's ``shouldLeaderThrottle`` and ``shouldFollowerThrottle``: hold back a follower's read of a throttled
    partition while over the bound, unless the follower is in the ISR."""
    return not in_sync and throttled and exceeded
