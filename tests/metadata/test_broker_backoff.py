"""A broker's resend backoff after a refused registration (Kafka's BrokerLifecycleManager and ExponentialBackoff)."""

from __future__ import annotations

from kraftwire.metadata.broker_backoff import ExponentialBackoff, ResendBackoff, registration_wait_ms


def test_exponential_backoff():
    """Mirrors Kafka's ExponentialBackoffTest.testExponentialBackoff: 100 ms doubling within the jitter, capped."""
    backoff = ExponentialBackoff(100, 2, 2000, 0.2)
    for draw in (0.0, 0.25, 0.5, 0.999):
        for attempts in range(11):
            if attempts <= 4:
                expected = 100 * 2 ** attempts
                assert abs(backoff.backoff_ms(attempts, draw) - expected) <= expected * 0.2
            else:
                assert backoff.backoff_ms(attempts, draw) <= 2000


def test_exponential_backoff_without_jitter():
    """Mirrors Kafka's ExponentialBackoffTest.testExponentialBackoffWithoutJitter."""
    backoff = ExponentialBackoff(100, 2, 400, 0.0)
    assert [backoff.backoff_ms(n, 0.9) for n in range(4)] == [100, 200, 400, 400]
    assert ExponentialBackoff(500, 2, 400, 0.0).backoff_ms(3) == 400  # an initial wait above the cap is the cap


def test_registration_resend_sequence_up_to_the_session_timeout():
    """BrokerLifecycleManager's ExponentialBackoff(100, 2, broker.session.timeout.ms, 0.02): with the default 9 s
    session the waits double from 100 ms and stay at 9 s; a success starts again from 100 ms."""
    resend = ResendBackoff(9000)
    assert [resend.failed() for _ in range(9)] == [100, 200, 400, 800, 1600, 3200, 6400, 9000, 9000]
    resend.succeeded()
    assert resend.failed() == 100
    jittered = ResendBackoff(9000)
    assert [jittered.failed(0.0) for _ in range(3)] == [98, 196, 392]  # the jitter: ±2 %
    assert [ResendBackoff(9000).failed(0.9999) for _ in range(1)] == [101]


def test_a_restarted_broker_is_registered_within_twice_the_session_timeout():
    """Refused until its old session expires (at most a session timeout), then at most a session timeout between
    attempts: the bound a restarted broker holds Metadata for."""
    resend, t, session = ResendBackoff(8000), 0, 8000
    while t < session:  # DUPLICATE_BROKER_REGISTRATION while the old session lives
        t += resend.failed()
    assert t <= registration_wait_ms(session) == 16000
