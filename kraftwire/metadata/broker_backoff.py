"""How long a broker waits before asking the active controller again after a failed registration (Kafka's
``BrokerLifecycleManager`` with its ``ExponentialBackoff(100, 2, broker.session.timeout.ms, 0.02)``; our words).
Pure: the broker's lifecycle loop (``kraftwire.server.node.roles``) counts and sleeps; the random draw is passed in.

* The n-th consecutive failure (n from 0) waits ``100 ms · 2^n``, the exponent capped where the wait reaches
  ``broker.session.timeout.ms``, times a jitter factor drawn uniformly from [0.98, 1.02), and never more than the
  session timeout: 100, 200, 400, ... ms, then the session timeout (9 s by default) for as long as it fails.
* A success (registered, or a heartbeat answered) starts the count again.
* A broker restarted while its old incarnation's session is alive is refused (DUPLICATE_BROKER_REGISTRATION) until
  that session expires, at most one session timeout later; its attempts are then at most a session timeout apart,
  so it is registered within twice the session timeout (``registration_wait_ms``): how long a restarted broker
  holds the requests that wait for its registration.
"""

from __future__ import annotations

import math

__all__ = ["ExponentialBackoff", "ResendBackoff", "registration_wait_ms", "INITIAL_MS", "MULTIPLIER", "JITTER"]

INITIAL_MS = 100
MULTIPLIER = 2
JITTER = 0.02


class ExponentialBackoff:
    """``ExponentialBackoff(initial_ms, multiplier, max_ms, jitter)``: the wait after a number of failed attempts
    (Kafka's ``org.apache.kafka.common.utils.ExponentialBackoff``)."""

    __slots__ = ("initial_ms", "multiplier", "max_ms", "jitter", "exp_max")

    def __init__(self, initial_ms: int, multiplier: int, max_ms: int, jitter: float) -> None:
        self.initial_ms = min(max_ms, initial_ms)
        self.multiplier = multiplier
        self.max_ms = max_ms
        self.jitter = jitter
        #: the exponent at which the wait reaches ``max_ms``
        self.exp_max = math.log(max_ms / max(initial_ms, 1)) / math.log(multiplier) if max_ms > initial_ms else 0.0

    def backoff_ms(self, attempts: int, draw: float = 0.5) -> int:
        """The wait after ``attempts`` failures before this one; ``draw`` in [0, 1) picks the jitter (0.5: none)."""
        if self.exp_max == 0:
            return self.initial_ms
        term = self.initial_ms * self.multiplier ** min(attempts, self.exp_max)
        factor = 1 - self.jitter + 2 * self.jitter * draw if self.jitter > 0 else 1.0
        return min(int(factor * term), self.max_ms)


class ResendBackoff:
    """``ResendBackoff(session_timeout_ms)``: consecutive failures of a broker's requests to the controller and the
    wait each one asks for."""

    __slots__ = ("backoff", "failed_attempts")

    def __init__(self, session_timeout_ms: int) -> None:
        self.backoff = ExponentialBackoff(INITIAL_MS, MULTIPLIER, session_timeout_ms, JITTER)
        self.failed_attempts = 0

    def failed(self, draw: float = 0.5) -> int:
        """One more failure: the milliseconds to wait before the next attempt."""
        delay = self.backoff.backoff_ms(self.failed_attempts, draw)
        self.failed_attempts += 1
        return delay

    def succeeded(self) -> None:
        self.failed_attempts = 0


def registration_wait_ms(session_timeout_ms: int) -> int:
    """The longest a restarted broker may wait to be registered: its old session's remainder plus the longest
    resend backoff, each at most ``session_timeout_ms``."""
    return 2 * session_timeout_ms
