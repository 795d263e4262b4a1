"""A broker's client quotas at the edge (the rules are ``kraftwire.replica.quotas``'): who a request comes from, the
time, the quota managers fed with what Kafka's KafkaApis records, and the throttle applied as KIP-219 has it — the
answer goes at once carrying ``throttle_time_ms``, then the connection is not read for that long.

* Produce: the request body's size against ``producer_byte_rate``, when the answer is sent (after an acks=-1 wait;
  an acks=0 request has no answer and is throttled by the mute alone).
* Request time (``request_percentage``, Produce and Fetch): the time the node spent handling the request (its
  synchronous part on the event loop, where Kafka counts its request handler thread's time) as a percentage of one
  thread over a second; the answer carries the larger of the two throttle times, as Kafka's does. An acks=0 Produce
  is not counted.
* Fetch from a consumer: the record bytes of the answer against ``consumer_byte_rate`` (Kafka counts the whole
  encoded answer; the records are nearly all of it); the answer's size is capped at the
  most one quota window allows (``max_value_in_window``) so a consumer is never throttled for sure. A throttled
  consumer is answered without records (its bytes are taken back), as Kafka answers it. Replica fetches from other
  brokers are not client traffic and are not counted.

* CreateTopics, DeleteTopics and CreatePartitions on the active controller: ``controller_mutation_rate``
  (``mutation_quota``), which the controller's decision charges per partition (``metadata.controller.topics``);
  the throttle time it puts in the answer is kept by the request-time settlement below when larger.
* Every other request a client sends (``replica.quotas.pays_request_time``): the dispatcher opens a ``Charge`` when
  it starts decoding the frame; the answer settles it — the event loop's time from then until the answer is sent,
  or until the handler returned when the answer comes later (a forwarded request's, one waiting for the metadata log:
  the waiting costs the loop nothing) — into ``throttle_time_ms`` and the mute. How this maps to Kafka: its
  request_percentage is the time its request handler threads (and, since KIP-124's follow-up, network threads)
  spend on a client's requests, as a percentage of one thread; here one event loop does both jobs, so the time it
  spends decoding and handling a request is that thread time, and 100 is the whole loop — a client at 50 % keeps
  the node's loop half busy, as it would keep one of Kafka's handler threads half busy. Encoding the answer is not
  counted (it happens once the throttle time is in the answer).

The quotas are read from the node's metadata image at each request, so what AlterClientQuotas commits applies from
the next request on.
"""

from __future__ import annotations

import time

from kraftwire.replica.quotas import (
    NANOS_TO_PERCENTAGE,
    ClientQuotas,
    ControllerMutationQuotaManager,
    pays_request_time,
    with_throttle,
)
from kraftwire.security.principal import ANONYMOUS
from kraftwire.server.edge.client import FORWARD_CLIENT_ID


def user_of(conn) -> str:
    """The principal's name (``ANONYMOUS`` on a PLAINTEXT listener), which user quotas are keyed by."""
    principal = getattr(conn, "principal", ANONYMOUS) or ANONYMOUS
    return principal.split(":", 1)[1] if ":" in principal else principal


def now_ms() -> int:
    return int(time.monotonic() * 1000)


def busy_since(started_ns: int) -> int:
    """Nanoseconds of handling since ``started_ns`` (a ``time.perf_counter_ns()`` reading)."""
    return time.perf_counter_ns() - started_ns


def mute(conn, throttle_ms: int) -> None:
    """Stop reading ``conn`` for ``throttle_ms`` once its answer has gone (connections that cannot: nothing)."""
    throttle = getattr(conn, "throttle", None)
    if throttle is not None and throttle_ms > 0:
        throttle(throttle_ms)


class Charge:
    """The request time a request owes its client's request_percentage quota, settled by its answer."""

    __slots__ = ("edge", "request", "conn", "started_ns", "busy_ns")

    def __init__(self, edge: "QuotaEdge", request, conn, started_ns: int) -> None:
        self.edge, self.request, self.conn, self.started_ns = edge, request, conn, started_ns
        self.busy_ns: int | None = None  # set when the handler returns before answering

    def handler_returned(self) -> None:
        if self.busy_ns is None:
            self.busy_ns = busy_since(self.started_ns)

    def settle(self, body) -> int:
        """Record the request's time, put the throttle time in ``body`` (None: an answer already encoded); the
        throttle time the connection is to be muted for."""
        busy = self.busy_ns if self.busy_ns is not None else busy_since(self.started_ns)
        throttle = self.edge.request_time(self.request, self.conn, busy)
        return throttle if body is None else with_throttle(body, throttle)


class QuotaEdge:
    """``config``: the node's ``quota.window.num``, ``quota.window.size.seconds`` and their ``controller.``
    counterparts (the controller mutation quota's)."""

    def __init__(self, metadata, config=None) -> None:
        self.md = metadata
        if config is None:
            self.managers, self.mutations = ClientQuotas.create(), ControllerMutationQuotaManager()
        else:
            samples, window_s = config.quota_window_num, config.quota_window_size_seconds
            self.managers = ClientQuotas.create(samples, window_s)
            self.mutations = ControllerMutationQuotaManager(samples=config.controller_quota_window_num,
                                                            window_s=config.controller_quota_window_size_seconds)

    def mutation_quota(self, request, conn):
        """The controller mutation quota of a CreateTopics, DeleteTopics or CreatePartitions (KIP-599), strict from
        the versions Kafka makes it so; None: no bound applies."""
        return self.mutations.quota(self._quotas(), user_of(conn), request.header.client_id or "", request.api.name,
                                    request.version, now_ms())

    def charge(self, request, conn, started_ns: int) -> Charge | None:
        """A ``Charge`` for a request that pays request time (None: exempt, or self-charged). A request another
        kraftwire node forwarded is not charged again (the broker that received it charged its client, as Kafka's
        controller charges an Envelope's inner request and not the Envelope)."""
        if not pays_request_time(request.api.name) or request.header.client_id == FORWARD_CLIENT_ID:
            return None
        return Charge(self, request, conn, started_ns)

    def _quotas(self):
        return self.md.image.client_quotas

    def produce(self, request, conn) -> int:
        """Record a Produce's size; its throttle time in ms."""
        return self.managers.produce.record(self._quotas(), user_of(conn), request.header.client_id or "",
                                            request.size, now_ms())

    def request_time(self, request, conn, busy_ns: int) -> int:
        """Record ``busy_ns`` of handling against request_percentage; its throttle time in ms."""
        return self.managers.request.record(self._quotas(), user_of(conn), request.header.client_id or "",
                                            busy_ns * NANOS_TO_PERCENTAGE, now_ms())

    def fetch_limit(self, request, conn) -> float:
        """The most bytes a consumer's Fetch may answer without a certain throttle."""
        return self.managers.fetch.max_value_in_window(self._quotas(), user_of(conn), request.header.client_id or "")

    def fetch(self, request, conn, size: int, busy_ns: int) -> int:
        """Record a consumer Fetch answer of ``size`` bytes and ``busy_ns`` of handling; the larger throttle time in
        ms. A throttled answer goes without records, so its bytes are taken back, whichever quota throttled it."""
        quotas, user, client, now = self._quotas(), user_of(conn), request.header.client_id or "", now_ms()
        throttle = max(self.request_time(request, conn, busy_ns),
                       self.managers.fetch.record(quotas, user, client, size, now))
        if throttle > 0:
            self.managers.fetch.unrecord(quotas, user, client, size, now)
        return throttle
