"""Client quota enforcement on a broker (KIP-13, KIP-55, KIP-124, KIP-219), pure: Kafka's ClientQuotaManager and
ClientRequestQuotaManager with their sampled rate, no clock of their own (every call passes ``now_ms``).

**The rate** (Kafka's ``Rate`` over a ``WindowedSum``, ``quota.window.num`` samples of ``quota.window.size.seconds``):
a value is added to the current sample, a new sample starts once the current one is a window old (the oldest is
reused: ``samples + 1`` are kept), samples whose last event is ``samples`` windows old are reset. The rate is the sum
of the samples over the elapsed time since the oldest sample started, counted as at least ``samples - 1`` whole
windows (so a client's first burst is measured over the full span, not over its few milliseconds).

**Whose quota** (the eight levels of KIP-55, first match wins, among the ``ClientQuotaRecord`` entities holding the
manager's key): user + client id, user + default client id, user, default user + client id, default user + default
client id, default user, client id, default client id. The level that matches also says which clients share one
rate: a user quota is shared by every client id of the user, a client id quota by every user of it. The user is the
principal's name (``ANONYMOUS`` on a PLAINTEXT listener, which default-user quotas cover as in Kafka). No quota of the
key anywhere: nothing is recorded (Kafka's ``quotasEnabled``).

**The throttle time** (``QuotaUtils.throttleTime``): the value is recorded first, then, if the rate is above the
bound, ``round((rate - bound) / bound * window)`` with the window the rate was measured over, in ms — the time to
wait before the rate is back at the bound if nothing more came. The request-time quota caps it at one window
(``ClientRequestQuotaManager``). The edge answers at once with that ``throttle_time_ms`` and then stops reading the
connection for that long (KIP-219), so a client that ignores the field is held back anyway.

**Which requests pay request time** (KIP-124, Kafka's KafkaApis and ControllerApis): every API a client sends, its
answer carrying the throttle time where its version has ``throttle_time_ms`` — ApiVersions, Metadata, the group and
offset APIs, the admin APIs, the ones a broker forwards to the controller (whose own throttle time, the controller
mutation quota's, the answer keeps when it is larger, as Kafka's ``sendForwardedResponse`` does). Exempt, as Kafka
answers them with ``sendResponseExemptThrottle`` or before KafkaApis: the cluster's own RPCs (``REQUEST_TIME_EXEMPT``:
the Raft RPCs, AlterPartition, WriteTxnMarkers, the ZooKeeper-era controller RPCs, Envelope, whose inner request
pays instead) and the SASL exchange. Produce and Fetch record their time themselves, together with their byte
quota (``SELF_CHARGED``), and a follower's Fetch is exempt there.

Sensors idle for an hour are dropped, as Kafka expires them, so ids that come and go do not grow the state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"

#: Kafka's QuotaConfig defaults: quota.window.num and quota.window.size.seconds
DEFAULT_SAMPLES = 11
DEFAULT_WINDOW_S = 1
#: Kafka's ClientQuotaManager.InactiveSensorExpirationTimeSeconds
SENSOR_EXPIRY_MS = 3600 * 1000
#: ClientRequestQuotaManager: thread time in nanoseconds as a percentage of one thread over a second
NANOS_TO_PERCENTAGE = 100.0 / 1e9

#: APIs Kafka exempts from request_percentage (``ApiKeys.clusterAction`` answered with sendResponseExemptThrottle,
#: the Raft RPCs of ControllerApis.handleRaftRequest, the SASL exchange the authenticator answers)
REQUEST_TIME_EXEMPT = frozenset({
    "LeaderAndIsr", "StopReplica", "UpdateMetadata", "ControlledShutdown", "WriteTxnMarkers", "AlterPartition",
    "Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "DescribeQuorum", "FetchSnapshot", "AddRaftVoter",
    "RemoveRaftVoter", "UpdateRaftVoter", "Envelope", "SaslHandshake", "SaslAuthenticate",
})
#: APIs whose handlers record their request time themselves, with their byte quota (a Fetch from a follower exempt)
SELF_CHARGED = frozenset({"Produce", "Fetch"})


def pays_request_time(api_name: str) -> bool:
    """Whether the dispatcher charges a request of ``api_name`` to its client's request_percentage quota."""
    return api_name not in REQUEST_TIME_EXEMPT and api_name not in SELF_CHARGED


def with_throttle(body, throttle_ms: int) -> int:
    """Put ``throttle_ms`` in an answer that has ``throttle_time_ms``, keeping a larger one it carries already (a
    forwarded answer's controller throttle); the throttle time the connection is muted for."""
    held = getattr(body, "throttle_time_ms", None)
    if held is None:
        return throttle_ms
    throttle = max(held or 0, throttle_ms)
    body.throttle_time_ms = throttle
    return throttle


QuotaMap = Mapping[tuple[tuple[str, "str | None"], ...], Mapping[str, float]]


def java_round(x: float) -> int:
    """``Math.round(double)``: halves go up."""
    return math.floor(x + 0.5)


# ------------------------------------------------------------------------------------------------ the rate
@dataclass
class _Sample:
    start_ms: int
    last_ms: int
    value: float = 0.0

    def reset(self, now_ms: int) -> None:
        self.start_ms = self.last_ms = now_ms
        self.value = 0.0


@dataclass
class Rate:
    """Kafka's ``Rate`` over a ``WindowedSum``: per second."""

    samples: int = DEFAULT_SAMPLES
    window_ms: int = DEFAULT_WINDOW_S * 1000
    _samples: list[_Sample] = field(default_factory=list)
    _current: int = 0

    def record(self, value: float, now_ms: int) -> None:
        sample = self._current_sample(now_ms)
        if now_ms - sample.start_ms >= self.window_ms:
            sample = self._advance(now_ms)
        sample.value += value
        sample.last_ms = now_ms

    def measure(self, now_ms: int) -> float:
        self._purge(now_ms)
        total = sum(s.value for s in self._samples)
        return total / (self.window_size_ms(now_ms) / 1000.0)

    def window_size_ms(self, now_ms: int) -> int:
        """The span the rate is measured over: since the oldest sample started, at least ``samples - 1`` windows."""
        self._purge(now_ms)
        if not self._samples:
            self._samples.append(_Sample(now_ms, now_ms))
        elapsed = now_ms - min(s.start_ms for s in self._samples)
        full = elapsed // self.window_ms
        if full < self.samples - 1:
            elapsed += (self.samples - 1 - full) * self.window_ms
        return max(elapsed, 1)

    def last_event_ms(self) -> int:
        return max((s.last_ms for s in self._samples), default=0)

    def _current_sample(self, now_ms: int) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now_ms, now_ms))
        return self._samples[self._current]

    def _advance(self, now_ms: int) -> _Sample:
        self._current = (self._current + 1) % (self.samples + 1)
        if self._current >= len(self._samples):
            sample = _Sample(now_ms, now_ms)
            self._samples.append(sample)
            return sample
        sample = self._samples[self._current]
        sample.reset(now_ms)
        return sample

    def _purge(self, now_ms: int) -> None:
        expire = self.samples * self.window_ms
        for s in self._samples:
            if now_ms - s.last_ms >= expire:
                s.reset(now_ms)


# ------------------------------------------------------------------------------------------------ whose quota
def _entity(user: str | None | bool, client: str | None | bool) -> tuple:
    """The image's key of an entity: ``False`` leaves a type out, None is its default entity."""
    parts = []
    if client is not False:
        parts.append(("client-id", client))
    if user is not False:
        parts.append(("user", user))
    return tuple(parts)


#: KIP-55's levels, most specific first: (user part, client part, which clients share the rate). ``U``/``C`` stand
#: for the request's user and client id, None for the default entity, False for a type left out; the sharing tags
#: say which of the two identify the rate ("" for the one that does not).
_U, _C = object(), object()
LEVELS = (
    (_U, _C, "user+client"), (_U, None, "user+client"), (_U, False, "user"), (None, _C, "user+client"),
    (None, None, "user+client"), (None, False, "user"), (False, _C, "client"), (False, None, "client"),
)


def _level_entity(level, user: str, client: str) -> tuple:
    u, c, _ = level
    return _entity(user if u is _U else u, client if c is _C else c)


def quota_for(quotas: QuotaMap, key: str, user: str, client_id: str) -> tuple[tuple[str, str], float | None]:
    """The rate's tags (user, client id; "" for the part that does not identify it) and the bound of ``key`` for
    a request of ``user`` with ``client_id`` (None: no quota applies)."""
    for level in LEVELS:
        held = quotas.get(_level_entity(level, user, client_id))
        if held is not None and key in held:
            share = level[2]
            tags = (user if share != "client" else "", client_id if share != "user" else "")
            return tags, held[key]
    return ("", client_id), None


class ClientQuotaManager:
    """One quota type (``producer_byte_rate``, ``consumer_byte_rate`` or ``request_percentage``): the rates per
    sharing group and the throttle times. ``max_throttle_ms`` caps the throttle (the request quota's one window)."""

    def __init__(self, key: str, *, samples: int = DEFAULT_SAMPLES, window_s: int = DEFAULT_WINDOW_S,
                 max_throttle_ms: int | None = None) -> None:
        self.key = key
        self.samples, self.window_ms = samples, window_s * 1000
        self.max_throttle_ms = max_throttle_ms
        self._rates: dict[tuple[str, str], Rate] = {}
        self._enabled_for: QuotaMap | None = None
        self._enabled = False

    def enabled(self, quotas: QuotaMap) -> bool:
        """Whether any entity holds this key (looked up again only when the image's quotas change)."""
        if quotas is not self._enabled_for:
            self._enabled_for = quotas
            self._enabled = any(self.key in held for held in quotas.values())
        return self._enabled

    def record(self, quotas: QuotaMap, user: str, client_id: str, value: float, now_ms: int) -> int:
        """Record ``value`` for the request's client and return the throttle time in ms (0: within its quota)."""
        if not self.enabled(quotas):
            return 0
        tags, bound = quota_for(quotas, self.key, user, client_id)
        rate = self._rates.get(tags)
        if rate is None:
            self._expire(now_ms)
            rate = self._rates[tags] = Rate(self.samples, self.window_ms)
        rate.record(value, now_ms)
        if bound is None:
            return 0
        measured = rate.measure(now_ms)
        if measured <= bound:
            return 0
        throttle = java_round((measured - bound) / bound * rate.window_size_ms(now_ms))
        return throttle if self.max_throttle_ms is None else min(throttle, self.max_throttle_ms)

    def unrecord(self, quotas: QuotaMap, user: str, client_id: str, value: float, now_ms: int) -> None:
        """Take back a recorded value (a fetch answered empty because it is throttled)."""
        if self.enabled(quotas):
            tags, _ = quota_for(quotas, self.key, user, client_id)
            rate = self._rates.get(tags)
            if rate is not None:
                rate.record(-value, now_ms)

    def max_value_in_window(self, quotas: QuotaMap, user: str, client_id: str) -> float:
        """The most one request may carry without being throttled for sure (Kafka caps a consumer's fetch size so)."""
        if not self.enabled(quotas):
            return math.inf
        _, bound = quota_for(quotas, self.key, user, client_id)
        return math.inf if bound is None else bound * (self.samples - 1) * self.window_ms / 1000

    def _expire(self, now_ms: int) -> None:
        for tags in [t for t, r in self._rates.items() if now_ms - r.last_event_ms() >= SENSOR_EXPIRY_MS]:
            del self._rates[tags]


@dataclass
class ClientQuotas:
    """A broker's three client quota managers (Kafka's QuotaFactory.QuotaManagers, client part)."""

    produce: ClientQuotaManager
    fetch: ClientQuotaManager
    request: ClientQuotaManager

    @classmethod
    def create(cls, samples: int = DEFAULT_SAMPLES, window_s: int = DEFAULT_WINDOW_S) -> "ClientQuotas":
        return cls(ClientQuotaManager(PRODUCER_BYTE_RATE, samples=samples, window_s=window_s),
                   ClientQuotaManager(CONSUMER_BYTE_RATE, samples=samples, window_s=window_s),
                   ClientQuotaManager(REQUEST_PERCENTAGE, samples=samples, window_s=window_s,
                                      max_throttle_ms=window_s * 1000))


# ------------------------------------------------------------------------------------------------ controller mutations
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
#: KIP-599: from these versions a request over its quota is refused (THROTTLING_QUOTA_EXCEEDED); before them it is
#: let through and throttled after the fact (Kafka's ControllerApis ``strictSinceVersion``)
STRICT_SINCE = {"CreateTopics": 6, "DeleteTopics": 5, "CreatePartitions": 3}


@dataclass
class TokenBucket:
    """Kafka's ``TokenBucket``: ``burst = samples * window * quota`` tokens, refilled at ``quota`` per second, one
    taken per partition created or deleted; it may go below zero (a request is judged before it is recorded)."""

    tokens: float | None = None  # None: never used (Kafka's bucket starts at time 0, so it is full at first use)
    last_ms: int = 0

    def measure(self, quota: float, burst: float, now_ms: int) -> float:
        if self.tokens is None:
            self.tokens = burst
        else:
            self.tokens = min(burst, self.tokens + quota * (now_ms - self.last_ms) / 1000.0)
        self.last_ms = now_ms
        return self.tokens

    def record(self, value: float, quota: float, burst: float, now_ms: int) -> None:
        self.tokens = min(burst, self.measure(quota, burst, now_ms) - value)


class MutationQuota:
    """One request's controller mutation quota (Kafka's Strict/PermissiveControllerMutationQuota), at the time the
    controller decides it: ``admit(permits)`` before each topic's partitions are created or deleted returns 0, or
    (strict only) the throttle time when the topic is refused THROTTLING_QUOTA_EXCEEDED; ``throttle_ms`` is what the
    answer carries — the last violation's throttle time less the time since, as Kafka deducts it."""

    def __init__(self, bucket: TokenBucket, bound: float, burst: float, strict: bool, now_ms: int) -> None:
        self.bucket, self.bound, self.burst, self.strict, self.now_ms = bucket, bound, burst, strict, now_ms
        self.last_throttle_ms = 0
        self.last_recorded_ms = now_ms

    def _violation(self, tokens: float) -> int:
        """``ControllerMutationQuotaManager.throttleTimeMs``: the time until the bucket is back at zero."""
        self.last_throttle_ms = java_round(-tokens / self.bound * 1000)
        self.last_recorded_ms = self.now_ms
        return self.last_throttle_ms

    def admit(self, permits: int) -> int:
        if self.strict:
            tokens = self.bucket.measure(self.bound, self.burst, self.now_ms)
            if tokens < 0:
                return self._violation(tokens)
            self.bucket.record(permits, self.bound, self.burst, self.now_ms)
            return 0
        self.bucket.record(permits, self.bound, self.burst, self.now_ms)
        tokens = self.bucket.tokens
        if tokens < 0:
            self._violation(tokens)
        return 0

    def throttle_ms(self, now_ms: int) -> int:
        return max(0, self.last_throttle_ms - (now_ms - self.last_recorded_ms))


class ControllerMutationQuotaManager:
    """The controller's token buckets per sharing group (KIP-55's precedence for ``controller_mutation_rate``)."""

    def __init__(self, *, samples: int = DEFAULT_SAMPLES, window_s: int = DEFAULT_WINDOW_S) -> None:
        self.samples, self.window_s = samples, window_s
        self._buckets: dict[tuple[str, str], TokenBucket] = {}
        self._enabled = ClientQuotaManager(CONTROLLER_MUTATION_RATE)  # only its ``enabled`` cache is used

    def quota(self, quotas: QuotaMap, user: str, client_id: str, api: str, version: int,
              now_ms: int) -> MutationQuota | None:
        """The quota of one request of ``api`` at ``version``; None when no bound applies to its client (Kafka's
        UnboundedControllerMutationQuota)."""
        if not self._enabled.enabled(quotas):
            return None
        tags, bound = quota_for(quotas, CONTROLLER_MUTATION_RATE, user, client_id)
        if bound is None:
            return None
        bucket = self._buckets.get(tags)
        if bucket is None:
            self._expire(now_ms)
            bucket = self._buckets[tags] = TokenBucket()
        return MutationQuota(bucket, bound, self.samples * self.window_s * bound, version >= STRICT_SINCE[api],
                             now_ms)

    def _expire(self, now_ms: int) -> None:
        for tags in [t for t, b in self._buckets.items() if now_ms - b.last_ms >= SENSOR_EXPIRY_MS]:
            del self._buckets[tags]
