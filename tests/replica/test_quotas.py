"""Client quota enforcement (``replica.quotas``): Kafka's sampled rate, KIP-55's precedence and the throttle time,
mirrored from Kafka's ClientQuotaManagerTest and ClientRequestQuotaManagerTest with a clock passed in."""

from __future__ import annotations

import math

import pytest

from kraftwire.replica import quotas as q

PRODUCE = q.PRODUCER_BYTE_RATE
SAMPLES = q.DEFAULT_SAMPLES


def entity(user=False, client=False) -> tuple:
    """The image's key; False leaves a type out, None is the default entity."""
    parts = []
    if client is not False:
        parts.append(("client-id", client))
    if user is not False:
        parts.append(("user", user))
    return tuple(parts)


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000

    def sleep(self, ms: int) -> None:
        self.ms += ms


def test_quota_violation():
    """ClientQuotaManagerTest.testQuotaViolation: 400 bytes a second for ten seconds stays under 500/s; a spike of
    2300 half a second later makes 6300 over 10.5 s = 600/s, throttled (600-500)/500 * 10.5 s = 2100 ms; once the
    spike's sample rolls over, no throttle."""
    quotas = {entity(client=None): {PRODUCE: 500.0}}
    manager, clock = q.ClientQuotaManager(PRODUCE), Clock()
    for _ in range(10):
        assert manager.record(quotas, "ANONYMOUS", "unknown", 400, clock.ms) == 0
        clock.sleep(1000)
    clock.sleep(500)
    assert manager.record(quotas, "ANONYMOUS", "unknown", 2300, clock.ms) == 2100
    clock.sleep(2100)
    for _ in range(10):
        manager.record(quotas, "ANONYMOUS", "unknown", 400, clock.ms)
        clock.sleep(1000)
    assert manager.record(quotas, "ANONYMOUS", "unknown", 0, clock.ms) == 0


def test_request_percentage_quota_violation():
    """ClientRequestQuotaManagerTest.testRequestPercentageQuotaViolation: 1 % is 10 ms of thread time a second;
    a spike of 67.1 ms gives 210 ms; a spike that needs more than a window is capped at one window (1000 ms)."""
    quotas = {entity("ANONYMOUS", "test-client"): {q.REQUEST_PERCENTAGE: 1.0}}
    manager, clock = q.ClientQuotas.create().request, Clock()

    def percent(millis: float) -> float:
        return millis * 1_000_000 * q.NANOS_TO_PERCENTAGE

    for _ in range(10):
        assert manager.record(quotas, "ANONYMOUS", "test-client", percent(4), clock.ms) == 0
        clock.sleep(1000)
    clock.sleep(500)
    assert manager.record(quotas, "ANONYMOUS", "test-client", percent(67.1), clock.ms) == 210
    clock.sleep(210)
    for _ in range(11):
        manager.record(quotas, "ANONYMOUS", "test-client", percent(4), clock.ms)
        clock.sleep(1000)
    assert manager.record(quotas, "ANONYMOUS", "test-client", 0, clock.ms) == 0
    assert manager.record(quotas, "ANONYMOUS", "test-client", percent(500), clock.ms) == 1000
    for _ in range(10):
        clock.sleep(1000)
        assert manager.record(quotas, "ANONYMOUS", "test-client", 0, clock.ms) == 1000
    clock.sleep(1000)
    assert manager.record(quotas, "ANONYMOUS", "test-client", 0, clock.ms) == 0


def check(manager, quotas, clock, user, client, bound, value, throttled):
    """ClientQuotaManagerTest.checkQuota: the bound that applies, the most one window may take, and whether
    ``value`` times the number of samples, recorded now, is throttled."""
    assert q.quota_for(quotas, PRODUCE, user, client)[1] == bound
    expected_max = math.inf if bound is None else (SAMPLES - 1) * bound
    assert manager.max_value_in_window(quotas, user, client) == pytest.approx(expected_max)
    throttle = manager.record(quotas, user, client, value * SAMPLES, clock.ms)
    assert (throttle > 0) is throttled, (user, client, throttle)


def test_quota_config_precedence():
    """ClientQuotaManagerTest.testQuotaConfigPrecedence: KIP-55's eight levels, which clients share a rate, and
    quota changes that keep or restart a rate."""
    quotas = {
        entity(user=None): {PRODUCE: 1000.0}, entity(client=None): {PRODUCE: 2000.0},
        entity(None, None): {PRODUCE: 3000.0}, entity("userA"): {PRODUCE: 4000.0},
        entity("userA", "client1"): {PRODUCE: 5000.0}, entity("userB"): {PRODUCE: 6000.0},
        entity("userB", "client1"): {PRODUCE: 7000.0}, entity("userB", None): {PRODUCE: 8000.0},
        entity("userC"): {PRODUCE: 10000.0}, entity(client="client1"): {PRODUCE: 9000.0},
    }
    manager, clock = q.ClientQuotaManager(PRODUCE), Clock()

    def checks(*cases):
        for case in cases:
            check(manager, quotas, clock, *case)

    checks(("userA", "client1", 5000, 4500, False), ("userA", "client2", 4000, 4500, True),
           ("userA", "client3", 4000, 0, True), ("userA", "client1", 5000, 0, False),
           ("userB", "client1", 7000, 8000, True), ("userB", "client2", 8000, 7000, False),
           ("userB", "client3", 8000, 7000, False),
           ("userD", "client1", 3000, 3500, True), ("userD", "client2", 3000, 2500, False),
           ("userE", "client1", 3000, 2500, False))
    del quotas[entity(None, None)]  # back to the default user
    checks(("userD", "client1", 1000, 0, False), ("userE", "client4", 1000, 1500, True),
           ("userF", "client4", 1000, 800, False), ("userF", "client5", 1000, 800, True))
    del quotas[entity(user=None)]  # back to the default client id
    checks(("userF", "client4", 2000, 0, False), ("userF", "client5", 2000, 0, False),
           ("userF", "client5", 2000, 2500, True), ("userG", "client5", 2000, 0, True))
    quotas[entity("userA")] = {PRODUCE: 8000.0}
    quotas[entity("userA", "client1")] = {PRODUCE: 10000.0}
    checks(("userA", "client2", 8000, 0, False), ("userA", "client2", 8000, 4500, True),
           ("userA", "client1", 10000, 0, False), ("userA", "client1", 10000, 6000, True))
    del quotas[entity("userA", "client1")]
    checks(("userA", "client6", 8000, 0, True))
    quotas[entity("userA", "client6")] = {PRODUCE: 11000.0}
    checks(("userA", "client6", 11000, 8500, False))
    quotas[entity("userA", None)] = {PRODUCE: 12000.0}
    del quotas[entity("userA", "client6")]
    checks(("userA", "client6", 12000, 4000, True))


def test_other_keys_do_not_apply():
    """A quota of another type on the same entity neither enables nor bounds this one (each type has its own
    manager and entities, Kafka's per-type callback)."""
    quotas = {entity("u"): {q.CONSUMER_BYTE_RATE: 1.0}}
    manager = q.ClientQuotaManager(PRODUCE)
    assert not manager.enabled(quotas)
    assert manager.record(quotas, "u", "c", 1e9, 0) == 0
    assert manager.max_value_in_window(quotas, "u", "c") == math.inf


def test_get_max_value_in_quota_window_with_non_default_quota_window():
    """ClientQuotaManagerTest.testGetMaxValueInQuotaWindowWithNonDefaultQuotaWindow: 4 samples, 3 full windows."""
    manager = q.ClientQuotaManager(q.CONSUMER_BYTE_RATE, samples=4)
    assert manager.max_value_in_window({}, "userA", "client1") == math.inf
    quotas = {entity(user=None): {q.CONSUMER_BYTE_RATE: 10.0}}
    assert manager.max_value_in_window(quotas, "userA", "client1") == 30


def test_expire_quota_sensors():
    """ClientQuotaManagerTest.testExpireQuotaSensors: a rate idle for an hour is dropped (here when another one is
    created), and a new one starts from nothing."""
    quotas = {entity(client=None): {PRODUCE: 500.0}}
    manager = q.ClientQuotaManager(PRODUCE)
    manager.record(quotas, "u", "old", 100, 0)
    manager.record(quotas, "u", "new", 100, q.SENSOR_EXPIRY_MS)
    assert set(manager._rates) == {("", "new")}


def test_rate_counts_the_first_burst_over_the_full_span():
    """Kafka's Rate: before ``samples - 1`` windows have passed, the span is still that long, so a first request
    is measured over ten seconds (5000 bytes at once: 500/s, exactly the bound, not throttled)."""
    quotas = {entity(client="c"): {PRODUCE: 500.0}}
    manager = q.ClientQuotaManager(PRODUCE)
    assert manager.record(quotas, "u", "c", 5000, 0) == 0
    assert manager.record(quotas, "u", "c", 500, 0) == 1000  # (5500/10 - 500) / 500 * 10 s


def test_unrecord_takes_a_value_back():
    quotas = {entity(client="c"): {q.CONSUMER_BYTE_RATE: 100.0}}
    manager = q.ClientQuotaManager(q.CONSUMER_BYTE_RATE)
    assert manager.record(quotas, "u", "c", 2000, 0) > 0
    manager.unrecord(quotas, "u", "c", 2000, 0)
    assert manager.record(quotas, "u", "c", 0, 0) == 0


def test_java_round():
    assert [q.java_round(x) for x in (0.5, 1.5, 2.4999, -0.5)] == [1, 2, 2, 0]


# ------------------------------------------------------------------------------------------------ who pays request time
def test_request_time_is_charged_to_client_apis_and_exempt_for_cluster_actions():
    """RequestQuotaTest.testResponseThrottleTime's clientActions pay (ApiVersions among them, UpdateFeatures too: a
    broker forwards it and throttles it), testExemptRequestTime's cluster actions are exempt; Produce and Fetch pay
    with their byte quotas, in their own handlers."""
    for api in ("ApiVersions", "Metadata", "CreateTopics", "DescribeConfigs", "JoinGroup", "OffsetCommit",
                "ListOffsets", "FindCoordinator", "UpdateFeatures", "DescribeCluster", "AlterClientQuotas"):
        assert q.pays_request_time(api), api
    for api in ("WriteTxnMarkers", "AlterPartition", "Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "FetchSnapshot",
                "DescribeQuorum", "Envelope", "SaslHandshake", "SaslAuthenticate", "Produce", "Fetch"):
        assert not q.pays_request_time(api), api


def test_the_answer_keeps_the_larger_throttle_time():
    """Kafka's sendForwardedResponse and sendResponseMaybeThrottleWithControllerQuota: the larger of the request
    quota's throttle and the one the answer carries; an answer without the field mutes for the request quota's."""
    class Answer:
        throttle_time_ms = 300

    answer = Answer()
    assert q.with_throttle(answer, 100) == 300 and answer.throttle_time_ms == 300
    assert q.with_throttle(answer, 700) == 700 and answer.throttle_time_ms == 700
    assert q.with_throttle(object(), 50) == 50


# ------------------------------------------------------------------------------------------------ controller mutations
MUTATION = q.CONTROLLER_MUTATION_RATE


def _mutation_quota(strict: bool, now_ms: int = 1_000_000, bucket=None) -> q.MutationQuota:
    """A bound of 10 mutations/s over 10 one-second samples: a 100-token burst (the Kafka tests' sensor)."""
    return q.MutationQuota(bucket or q.TokenBucket(), 10.0, 100.0, strict, now_ms)


def test_strict_controller_mutation_quota_violation():
    """StrictControllerMutationQuotaTest.testControllerMutationQuotaViolation: a request is judged before it is
    recorded, so one that empties the bucket below zero passes and the next is refused, 8 s to wait (-80 tokens at
    10/s), less the time since."""
    quota = _mutation_quota(strict=True)
    assert quota.admit(90) == 0 and quota.throttle_ms(quota.now_ms) == 0  # 10 tokens left
    assert quota.admit(90) == 0 and quota.throttle_ms(quota.now_ms) == 0  # -80
    assert quota.admit(90) == 8000
    assert quota.throttle_ms(quota.now_ms) == 8000
    assert quota.throttle_ms(quota.now_ms + 5000) == 3000


def test_permissive_controller_mutation_quota_violation():
    """PermissiveControllerMutationQuotaTest: never refused, the throttle time grows with the debt."""
    quota = _mutation_quota(strict=False)
    assert quota.admit(90) == 0 and quota.throttle_ms(quota.now_ms) == 0
    assert quota.admit(90) == 0 and quota.throttle_ms(quota.now_ms) == 8000
    assert quota.admit(90) == 0 and quota.throttle_ms(quota.now_ms) == 17000
    assert quota.throttle_ms(quota.now_ms + 5000) == 12000


def test_controller_mutation_quota_manager_violation():
    """ControllerMutationQuotaManagerTest.testControllerMutationQuotaViolation: under the quota nothing waits; a
    110-mutation spike on a full bucket passes, the next is refused for 1 s (-10 tokens at 10/s), and once that
    second has passed the same spike passes again. CreateTopics v6 is strict."""
    manager, clock = q.ControllerMutationQuotaManager(samples=10, window_s=1), Clock()
    quotas = {entity(user="ANONYMOUS", client="test-client"): {MUTATION: 10.0}}

    def record(value: int) -> int:
        return manager.quota(quotas, "ANONYMOUS", "test-client", "CreateTopics", 6, clock.ms).admit(value)

    for _ in range(10):
        assert record(10) == 0
        clock.sleep(1000)
    assert record(110) == 0
    assert record(110) == 1000
    clock.sleep(1000)
    assert record(110) == 0


def test_controller_mutation_quota_is_strict_from_kafkas_versions():
    """ControllerApis' strictSinceVersion: CreateTopics 6, DeleteTopics 5, CreatePartitions 3; no bound for the
    client (or none anywhere): no quota (UnboundedControllerMutationQuota)."""
    manager = q.ControllerMutationQuotaManager()
    quotas = {entity(client=None): {MUTATION: 1.0}}
    for api, strict_since in (("CreateTopics", 6), ("DeleteTopics", 5), ("CreatePartitions", 3)):
        assert manager.quota(quotas, "u", "c", api, strict_since, 0).strict
        assert not manager.quota(quotas, "u", "c", api, strict_since - 1, 0).strict
    assert manager.quota({}, "u", "c", "CreateTopics", 7, 0) is None
    assert manager.quota({entity(client="other"): {MUTATION: 1.0}}, "u", "c", "CreateTopics", 7, 0) is None


def test_mutation_throttle_time():
    """ControllerMutationQuotaManagerTest.testThrottleTime: -tokens / bound seconds."""
    for tokens, expected in ((0, 0), (-5, 500), (-10, 1000)):
        quota = _mutation_quota(strict=True, bucket=q.TokenBucket(tokens=tokens, last_ms=1_000_000))
        quota.bound = 10.0
        assert quota.admit(1) == expected
