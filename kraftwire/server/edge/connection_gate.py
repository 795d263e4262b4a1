"""A broker's connection quotas at the edge (the rules are ``kraftwire.replica.connection_quotas``'): each new
connection on a client listener is put through them when it is made, and uncounted when it is lost.

Kafka's acceptor thread blocks while a connection waits for the creation rate or for a free slot under
``max.connections``, so later connections wait behind it; here the waiting connections queue, in arrival order, held
unread (``pause_reading``) until their turn — their requests are not read, as a client of Kafka's blocked acceptor
finds. A connection over its IP's ``connection_creation_rate`` is held unread and closed when its throttle time
ends; one beyond ``max.connections.per.ip`` is closed at once, with Kafka's log line.

The limits are read at each new connection from the node's image (the broker's dynamic configs, the cluster-wide
ones, ClientQuotaRecords of ``ip`` entities) over its properties file, so ``configs --entity-type brokers`` and
``--entity-type ips`` apply from the next connection on.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time

from kraftwire.metadata.controller.topics import BROKER_RESOURCE
from kraftwire.replica.connection_quotas import ConnectionLimits, ConnectionQuotas, ip_rate_quota

log = logging.getLogger("kraftwire.connections")


def _now_ms() -> int:
    return int(time.monotonic() * 1000)


def peer_ip(conn) -> str:
    """The address part of a connection's ``host:port`` peer (IPv6 keeps its colons)."""
    return conn.peer.rpartition(":")[0] or conn.peer


def protected_listeners(settings) -> frozenset:
    """Kafka's protected listener: the inter-broker one, when the broker has other client listeners."""
    brokers = [ep.name for ep in settings.listeners if ep.name not in settings.controller_listener_names]
    inter = settings.inter_broker_listener
    return frozenset({inter}) if inter is not None and len(brokers) > 1 else frozenset()


class ConnectionGate:
    """``metadata``: the node's MetadataNode (its ``image``); ``static``: the properties file's keys; ``protected``:
    the listener names Kafka would not limit (its inter-broker listener, when the broker has more than one)."""

    def __init__(self, metadata, node_id: int, static, config, protected=frozenset()) -> None:
        self.md, self.node_id, self.static, self.protected = metadata, node_id, static, frozenset(protected)
        self.quotas = ConnectionQuotas(samples=config.quota_window_num, window_s=config.quota_window_size_seconds)
        #: connections waiting for the creation rate or a slot, oldest first: [conn, accepted at (ms) or None]
        self._waiting: collections.deque = collections.deque()
        self._timer: asyncio.TimerHandle | None = None
        self._registered: set = set()

    def limits(self) -> ConnectionLimits:
        image = self.md.image
        return ConnectionLimits.from_configs(image.configs.get((BROKER_RESOURCE, str(self.node_id)), {}),
                                             image.configs.get((BROKER_RESOURCE, ""), {}), self.static)

    def arrived(self, conn) -> None:
        """A connection was made: let it in, queue it, or refuse it."""
        if self._waiting:  # Kafka's acceptor is blocked: this one is not even accepted yet
            conn.transport.pause_reading()
            self._waiting.append([conn, None])
            return
        self._accept(conn)

    def _accept(self, conn) -> None:
        limits, protected, now = self.limits(), conn.listener in self.protected, _now_ms()
        delay = self.quotas.accept_delay(limits, protected, now)
        if delay > 0 or not self.quotas.slot_available(limits, protected):
            conn.transport.pause_reading()
            self._waiting.append([conn, now + delay])
            self._wake_at(delay)
            return
        self._register(conn, limits, protected, now, resume=False)

    def _register(self, conn, limits: ConnectionLimits, protected: bool, now: int, *, resume: bool) -> None:
        ip = peer_ip(conn)
        admission = self.quotas.register(ip, limits, ip_rate_quota(self.md.image.client_quotas, ip), protected, now)
        if admission.refusal is not None:
            self._registered.add(conn)
            log.info("%s", admission.refusal)
            conn.close()
        elif admission.close_after_ms >= 0:
            log.debug("throttling connection from %s for %d ms (connection_creation_rate)", ip,
                      admission.close_after_ms)
            conn.transport.pause_reading()
            asyncio.get_running_loop().call_later(admission.close_after_ms / 1000, conn.close)
        else:
            self._registered.add(conn)
            if resume:
                conn.transport.resume_reading()

    def left(self, conn) -> None:
        """A connection was lost: uncount it, and let the waiting ones through if a slot is free now."""
        if conn in self._registered:
            self._registered.discard(conn)
            self.quotas.release(peer_ip(conn))
        for entry in self._waiting:
            if entry[0] is conn:
                self._waiting.remove(entry)
                break
        self._drain()

    def _wake_at(self, delay_ms: int) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000, self._drain)

    def _drain(self) -> None:
        """Let the waiting connections through, oldest first, while their time has come and a slot is free."""
        self._timer = None
        while self._waiting:
            conn, ready_at = self._waiting[0]
            if conn.closed:
                self._waiting.popleft()
                continue
            limits, protected, now = self.limits(), conn.listener in self.protected, _now_ms()
            if ready_at is None:  # its turn to be accepted: the creation rate first
                ready_at = self._waiting[0][1] = now + self.quotas.accept_delay(limits, protected, now)
            if ready_at > now:
                self._wake_at(ready_at - now)
                return
            if not self.quotas.slot_available(limits, protected):
                return  # ``left`` drains again when one closes
            self._waiting.popleft()
            self._register(conn, limits, protected, now, resume=True)
