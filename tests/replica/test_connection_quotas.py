"""A broker's connection quotas (``replica.connection_quotas``), mirrored from Kafka's ConnectionQuotasTest with a
clock passed in: the per-IP count and its overrides, the broker-wide count and creation rate that make a new
connection wait, and the IP creation rate (``connection_creation_rate``) that closes one after a delay."""

from __future__ import annotations

import pytest

from kraftwire.replica import connection_quotas as cq

KNOWN, OTHER = "192.168.1.1", "192.168.1.2"
NOW = 1_000_000
SAMPLES = 2  # ConnectionQuotasTest's quota.window.num (one-second windows)


def _accept(quotas, limits, ip=KNOWN, *, ip_quota=cq.INT_MAX, protected=False, now=NOW) -> cq.Admission:
    """Kafka's ``inc``: wait for a slot (asserted free here), then the IP rate and count."""
    assert quotas.accept_delay(limits, protected, now) == 0 and quotas.slot_available(limits, protected)
    return quotas.register(ip, limits, ip_quota, protected, now)


def test_no_connection_limits_by_default():
    quotas, limits = cq.ConnectionQuotas(), cq.ConnectionLimits()
    for i in range(500):
        assert _accept(quotas, limits, now=NOW + i).admitted
    assert quotas.counts == {KNOWN: 500} and quotas.total == 500


def test_max_connections_per_ip():
    """testMaxConnectionsPerIp: 17 from one address; the next ones are counted and refused (Kafka's
    TooManyConnectionsException); another address is not limited by them; releasing makes room again."""
    quotas, limits = cq.ConnectionQuotas(), cq.ConnectionLimits(max_per_ip=17)
    for _ in range(17):
        assert _accept(quotas, limits).admitted
    for _ in range(2):
        refused = _accept(quotas, limits)
        assert refused.refusal == (f"Rejected connection from {KNOWN}, address already has the configured maximum "
                                   "of 17 connections.")
    assert quotas.counts[KNOWN] == 19
    for _ in range(17):
        assert _accept(quotas, limits, OTHER).admitted
    for _ in range(4):
        quotas.release(KNOWN)
    assert quotas.counts[KNOWN] == 15
    assert _accept(quotas, limits).admitted and _accept(quotas, limits).admitted
    assert not _accept(quotas, limits).admitted


def test_max_connections_per_ip_overrides():
    """testNonDefaultConnectionCountLimitAndRateLimit's override: ``max.connections.per.ip.overrides`` wins for its
    address; a value that does not parse is refused."""
    limits = cq.ConnectionLimits.from_configs({"max.connections.per.ip.overrides": f"{KNOWN}:2, ::1:5"},
                                              {"max.connections.per.ip": "1"})
    assert (limits.max_for(KNOWN), limits.max_for("::1"), limits.max_for(OTHER)) == (2, 5, 1)
    quotas = cq.ConnectionQuotas()
    assert _accept(quotas, limits).admitted and _accept(quotas, limits).admitted
    assert not _accept(quotas, limits).admitted
    assert _accept(quotas, limits, OTHER).admitted and not _accept(quotas, limits, OTHER).admitted
    with pytest.raises(ValueError):
        cq.parse_overrides("hostwithoutcount")


def test_layers_most_specific_first():
    """A broker's own dynamic value over the cluster-wide one over its properties file."""
    limits = cq.ConnectionLimits.from_configs({"max.connections": "5"}, {"max.connections": "7",
                                                                         "max.connection.creation.rate": "3"},
                                              {"max.connections": "9", "max.connections.per.ip": "4"})
    assert (limits.max_connections, limits.max_creation_rate, limits.max_per_ip) == (5, 3, 4)


def test_max_broker_wide_connection_limit():
    """testMaxBrokerWideConnectionLimit: at ``max.connections`` a new connection waits for a slot (a protected
    inter-broker listener does not); a release frees one."""
    quotas, limits = cq.ConnectionQuotas(), cq.ConnectionLimits(max_connections=3)
    for i in range(3):
        assert _accept(quotas, limits, f"10.0.0.{i}").admitted
    assert not quotas.slot_available(limits, protected=False)
    assert quotas.slot_available(limits, protected=True)
    quotas.release("10.0.0.1")
    assert quotas.slot_available(limits, protected=False)


def test_broker_connection_rate_limit_when_actual_rate_above_limit():
    """testBrokerConnectionRateLimitWhenActualRateAboveLimit: connections every 10 ms (100/s) against a limit of 90
    — acceptances wait (at most one window), none is refused, and with the waits the rate comes down to the limit;
    a protected listener is not delayed."""
    quotas, limits = cq.ConnectionQuotas(samples=SAMPLES), cq.ConnectionLimits(max_creation_rate=90)
    now, delays = NOW, []
    for _ in range(400):
        delays.append(quotas.accept_delay(limits, False, now))
        now += max(10, delays[-1])  # the acceptor blocks for the delay
    assert any(d > 0 for d in delays) and max(delays) <= 1000
    assert 400 / ((now - NOW) / 1000) == pytest.approx(90, abs=5)
    assert quotas.accept_delay(limits, True, now) == 0


def test_broker_connection_rate_limit_when_actual_rate_below_limit():
    quotas, limits = cq.ConnectionQuotas(samples=SAMPLES), cq.ConnectionLimits(max_creation_rate=50)
    assert [quotas.accept_delay(limits, False, NOW + 25 * i) for i in range(400)] == [0] * 400  # 40/s


def test_ip_connection_rate_when_actual_rate_above_limit():
    """testIpConnectionRateWhenActualRateAboveLimit: 40 connections/s from one address against its quota of 20 —
    some are closed after a throttle time (at most one window); throttled ones are not counted, and those counted
    come at the quota's rate."""
    quotas, limits = cq.ConnectionQuotas(samples=SAMPLES), cq.ConnectionLimits()
    outcomes = [_accept(quotas, limits, ip_quota=20, now=NOW + 25 * i) for i in range(80)]
    throttled = [a.close_after_ms for a in outcomes if not a.admitted]
    assert throttled and all(0 < t <= 1000 for t in throttled)
    assert quotas.counts[KNOWN] == 80 - len(throttled)
    assert quotas.counts[KNOWN] / 2.0 == pytest.approx(20, abs=1)  # 80 connections over 2 s


def test_ip_connection_rate_when_actual_rate_below_limit():
    quotas, limits = cq.ConnectionQuotas(samples=SAMPLES), cq.ConnectionLimits()
    assert all(_accept(quotas, limits, ip_quota=30, now=NOW + 40 * i).admitted for i in range(200))  # 25/s


def test_rejected_ip_connection_unrecorded_from_connection_rate_quotas():
    """testRejectedIpConnectionUnrecordedFromConnectionRateQuotas: an IP quota of 0 throttles the connection, and it
    is taken back from the IP and broker rates (so it does not count against the next ones)."""
    quotas, limits = cq.ConnectionQuotas(), cq.ConnectionLimits()
    assert _accept(quotas, limits, ip_quota=0).close_after_ms == 1000
    assert quotas._broker_rate.measure(NOW) == 0 and quotas._ip_rates[KNOWN].measure(NOW) == 0
    assert quotas.total == 0


def test_ip_rate_quota_precedence():
    """An address's own ``connection_creation_rate`` over the default ip entity's; none: unlimited."""
    quotas = {(("ip", KNOWN),): {"connection_creation_rate": 5.0}, (("ip", None),): {"connection_creation_rate": 2.0}}
    assert cq.ip_rate_quota(quotas, KNOWN) == 5 and cq.ip_rate_quota(quotas, OTHER) == 2
    assert cq.ip_rate_quota({}, KNOWN) == cq.INT_MAX
