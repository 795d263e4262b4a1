"""A broker's connection quotas (KIP-402, KIP-612), pure: Kafka's ``ConnectionQuotas`` (SocketServer) with no clock
and no sockets of its own — the edge says when a connection arrives and leaves, and does what the answer says.

**The limits** (``ConnectionLimits``, broker configs, dynamic cluster-wide or per broker):
``max.connections`` (all listeners but a protected inter-broker one), ``max.connection.creation.rate`` (new
connections per second, same scope), ``max.connections.per.ip`` and ``max.connections.per.ip.overrides``
(``host:count,...``; the hosts as the peer's address is written, names are not resolved here). The IP quota
``connection_creation_rate`` (ClientQuotaRecord entities ``ip`` / the default ip) bounds the new connections per
second of one address. Every default is ``Integer.MAX_VALUE``: no limit.

**What happens to a new connection**, in Kafka's order:

1. *Waiting for a slot* (``accept_delay``): the connection is recorded on the broker-wide creation rate; over it,
   its acceptance waits for the rate's throttle time (capped at one quota window), and while ``max.connections``
   are open it waits for one to close. Kafka's acceptor thread blocks, so nothing new is accepted meanwhile; the
   edge holds the connection unread for that time, which a client sees the same way (its requests are not read).
2. *The IP rate* (``register``): recorded on the address's rate; over its ``connection_creation_rate`` the
   connection is taken back from every rate and closed once the throttle time has passed (Kafka's
   ``ConnectionThrottledException``, a delayed close: the client cannot reconnect at once and hammer the broker).
3. *The IP count*: counted, and beyond the address's ``max.connections.per.ip`` (or its override) closed at once
   (Kafka's ``TooManyConnectionsException``); ``release`` uncounts every registered connection when it closes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from kraftwire.replica.quotas import (
    DEFAULT_SAMPLES,
    DEFAULT_WINDOW_S,
    SENSOR_EXPIRY_MS,
    QuotaMap,
    Rate,
    java_round,
)

INT_MAX = 2**31 - 1
CONNECTION_CREATION_RATE = "connection_creation_rate"
#: the broker configs read here (all dynamic: per broker or cluster-wide, as Kafka's DynamicConnectionQuota)
MAX_CONNECTIONS = "max.connections"
MAX_CONNECTION_CREATION_RATE = "max.connection.creation.rate"
MAX_CONNECTIONS_PER_IP = "max.connections.per.ip"
MAX_CONNECTIONS_PER_IP_OVERRIDES = "max.connections.per.ip.overrides"


def parse_overrides(value: str | None) -> dict[str, int]:
    """``max.connections.per.ip.overrides``: ``host:count`` pairs separated by commas (an IPv6 host keeps its colons:
    the count is after the last one). Raises ValueError on a pair that is not so, as Kafka refuses the config."""
    out: dict[str, int] = {}
    for pair in (value or "").split(","):
        pair = pair.strip()
        if not pair:
            continue
        host, sep, count = pair.rpartition(":")
        if not sep or not host or not count.strip().lstrip("-").isdigit():
            raise ValueError(f"Invalid {MAX_CONNECTIONS_PER_IP_OVERRIDES} entry {pair!r}")
        out[host.strip()] = int(count)
    return out


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int = INT_MAX
    max_creation_rate: int = INT_MAX
    max_per_ip: int = INT_MAX
    per_ip_overrides: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_configs(cls, *layers: Mapping[str, str]) -> "ConnectionLimits":
        """The limits from config layers, most specific first (a broker's dynamic configs, the cluster-wide ones, its
        properties file); a value that does not parse leaves the key at the next layer's."""
        def pick(key: str, parse):
            for layer in layers:
                if key in layer and layer[key] is not None:
                    try:
                        return parse(layer[key])
                    except ValueError:
                        continue
            return None

        kwargs = {name: value for name, value in (
            ("max_connections", pick(MAX_CONNECTIONS, int)),
            ("max_creation_rate", pick(MAX_CONNECTION_CREATION_RATE, int)),
            ("max_per_ip", pick(MAX_CONNECTIONS_PER_IP, int)),
            ("per_ip_overrides", pick(MAX_CONNECTIONS_PER_IP_OVERRIDES, parse_overrides)),
        ) if value is not None}
        return cls(**kwargs)

    def max_for(self, ip: str) -> int:
        return self.per_ip_overrides.get(ip, self.max_per_ip)


def ip_rate_quota(quotas: QuotaMap, ip: str) -> int:
    """The address's ``connection_creation_rate``: its own entity's, else the default ip entity's, else none
    (``INT_MAX``, Kafka's QuotaConfig.IP_CONNECTION_RATE_DEFAULT)."""
    for key in ((("ip", ip),), (("ip", None),)):
        held = quotas.get(key)
        if held is not None and CONNECTION_CREATION_RATE in held:
            return int(held[CONNECTION_CREATION_RATE])
    return INT_MAX


@dataclass(frozen=True)
class Admission:
    """What ``register`` decided: ``close_after_ms`` >= 0 closes the connection after that long (the IP rate),
    ``refusal`` closes it now with that log line (the IP count); neither: it is admitted."""

    close_after_ms: int = -1
    refusal: str | None = None

    @property
    def admitted(self) -> bool:
        return self.close_after_ms < 0 and self.refusal is None


ADMITTED = Admission()


class ConnectionQuotas:
    """The counts and the creation rates of one broker's client listeners."""

    def __init__(self, *, samples: int = DEFAULT_SAMPLES, window_s: int = DEFAULT_WINDOW_S) -> None:
        self.samples, self.window_ms = samples, window_s * 1000
        self.counts: dict[str, int] = {}
        self.total = 0
        self._broker_rate = Rate(samples, self.window_ms)
        self._ip_rates: dict[str, Rate] = {}

    def _record(self, rate: Rate, bound: float, now_ms: int) -> int:
        """Record one connection; the throttle time when the rate is now above ``bound`` (at most one window,
        Kafka's QuotaUtils.boundedThrottleTime)."""
        rate.record(1.0, now_ms)
        if bound >= INT_MAX:
            return 0
        measured = rate.measure(now_ms)
        if measured <= bound:
            return 0
        if bound <= 0:  # Kafka's throttle time is then infinite, bounded to the window
            return self.window_ms
        throttle = java_round((measured - bound) / bound * rate.window_size_ms(now_ms))
        return min(throttle, self.window_ms)

    def accept_delay(self, limits: ConnectionLimits, protected: bool, now_ms: int) -> int:
        """A new connection recorded on the broker-wide creation rate (not on a protected listener); how long its
        acceptance waits for the rate (then, while ``slot_available`` is False, for a connection to close)."""
        if protected:
            return 0
        return self._record(self._broker_rate, limits.max_creation_rate, now_ms)

    def slot_available(self, limits: ConnectionLimits, protected: bool) -> bool:
        return protected or self.total < limits.max_connections

    def register(self, ip: str, limits: ConnectionLimits, ip_quota: int, protected: bool, now_ms: int) -> Admission:
        """The connection from ``ip``, accepted: its IP rate, then its count (see the module's steps 2 and 3). A
        connection admitted or refused for its count is counted (``release`` it when it closes); one throttled for
        its rate is not."""
        if ip_quota < INT_MAX:
            rate = self._ip_rates.get(ip)
            if rate is None:
                self._expire(now_ms)
                rate = self._ip_rates[ip] = Rate(self.samples, self.window_ms)
            throttle = self._record(rate, ip_quota, now_ms)
            if throttle > 0:
                rate.record(-1.0, now_ms)
                if not protected:
                    self._broker_rate.record(-1.0, now_ms)
                return Admission(close_after_ms=throttle)
        count = self.counts.get(ip, 0)
        self.counts[ip] = count + 1
        self.total += 1
        most = limits.max_for(ip)
        if count >= most:
            return Admission(refusal=f"Rejected connection from {ip}, address already has the configured maximum "
                                     f"of {most} connections.")
        return ADMITTED

    def release(self, ip: str) -> None:
        """A registered connection (admitted, or refused for its count) closed."""
        count = self.counts.get(ip, 0)
        if count <= 1:
            self.counts.pop(ip, None)
        else:
            self.counts[ip] = count - 1
        self.total = max(0, self.total - 1)

    def _expire(self, now_ms: int) -> None:
        for ip in [ip for ip, r in self._ip_rates.items() if now_ms - r.last_event_ms() >= SENSOR_EXPIRY_MS]:
            del self._ip_rates[ip]
