"""Api key -> handler. ApiVersions is answered from the handlers registered here (via the protocol layer), so the
node advertises exactly what it serves.

A handler is ``fn(request, conn)`` where ``request`` is ``framing.Request(header, api, version, body)``; it answers
with ``conn.send_response(body, version, correlation_id)`` now or later. Malformed requests close that connection,
as Kafka's request parser does, with one log line: a frame whose header cannot be read, an unknown api key or an
unsupported version (other than ApiVersions, which gets Kafka's KIP-511 answer), and a body that does not decode
(a string longer than 32,767 bytes, an array counting more items than there are bytes left, ...), and a body that
decodes but that Kafka's request class refuses to build (an ACL request naming an UNKNOWN element:
``kraftwire.metadata.controller.acls.request_error``), before any authorization.

SaslHandshake and SaslAuthenticate are served on every listener, as Kafka's are: outside a SASL exchange (a
PLAINTEXT listener, or a login not being renewed, ``edge.sasl``) they get ILLEGAL_SASL_STATE and the connection stays
open (``sasl_state_refusal``).
"""

from __future__ import annotations

import logging
import struct
import time
from typing import Callable

from kraftwire.error_codes import ILLEGAL_SASL_STATE
from kraftwire.errors import KraftwireError, ProtocolError, UnsupportedVersionError
from kraftwire.metadata.controller.acls import request_error
from kraftwire.protocol import framing, served
from kraftwire.protocol.api_versions import Identity, encode_api_versions_response
from kraftwire.protocol import messages as w
from kraftwire.server.edge.kafka_meters import RequestMeters

log = logging.getLogger("kraftwire.dispatcher")

API_VERSIONS = served.key("ApiVersions")
#: APIs whose decoded body Kafka's request class validates while parsing (the refusal closes the connection)
PARSE_CHECKED = {served.key(api): api for api in ("CreateAcls", "DeleteAcls", "DescribeAcls")}
PRODUCE = served.key("Produce")
SASL_HANDSHAKE = served.key("SaslHandshake")
#: Kafka's KafkaApis answer to a SaslAuthenticate outside a SASL exchange
AUTHENTICATE_AFTER_LOGIN = "SaslAuthenticate request received after successful authentication"


def sasl_state_refusal(api_key: int):
    """Kafka's answer to a SaslHandshake (``api_key``) or SaslAuthenticate outside a SASL exchange."""
    if api_key == SASL_HANDSHAKE:
        return w.SaslHandshakeResponse(error_code=ILLEGAL_SASL_STATE, mechanisms=[])
    return w.SaslAuthenticateResponse(error_code=ILLEGAL_SASL_STATE, error_message=AUTHENTICATE_AFTER_LOGIN,
                                      auth_bytes=b"", session_lifetime_ms=0)


def take_turn(conn, correlation_id: int) -> None:
    """The request ``correlation_id`` will be answered: its answer leaves behind those still owed to the requests
    before it on ``conn`` (Kafka answers a connection's requests in order). Every answer the node gives goes through
    here first — a handler's, and those given without one (ApiVersions, a malformed request's error)."""
    expect = getattr(conn, "expect", None)
    if expect is not None:
        expect(correlation_id)


def _parse_refusal(request) -> str | None:
    """Why Kafka's request class refuses this decoded body while parsing it, or None."""
    api = PARSE_CHECKED.get(request.api.key)
    if api is None:
        return None
    return request_error(api, request.body, request.version)


class Dispatcher:
    def __init__(self, metrics=None) -> None:
        self._handlers: dict[int, tuple[int, int, Callable]] = {}
        self.connections: set = set()
        self.metrics = metrics
        #: Kafka's RequestMetrics (counts by request and version, request phases), kept when ``metrics`` is given
        self.requests = RequestMeters()
        #: when the request being dispatched arrived (``perf_counter_ns``; 0 outside a timed dispatch): the
        #: controller's event queue time starts there
        self.arrival_ns = 0
        self.on_close: list[Callable] = []
        #: returns the ``api_versions.Features`` to advertise (set by a KRaft node), or None
        self.features_source: Callable | None = None
        #: a broker's ``api_versions.Identity`` (KIP-1242's check of ApiVersions v5), None on a controller-only node
        self.identity: Identity | None = None
        #: ``gate(request, conn) -> bool`` runs before every handler (a KRaft node's ACL checks on the cluster,
        #: ``server.access``); False: it refused and answered the request itself
        self.gate: Callable | None = None
        #: ``charge(request, conn, started_ns)`` -> the request time the request's answer settles, or None (a KRaft
        #: node's ``client_quotas.QuotaEdge``, request_percentage); None: no request quota on this node
        self.request_quota = None
        self.serve("ApiVersions", self._api_versions)
        for name in ("SaslHandshake", "SaslAuthenticate"):
            self.serve(name, self._sasl_outside_exchange)

    def register(self, api_key: int, min_version: int, max_version: int, fn: Callable) -> None:
        self._handlers[api_key] = (min_version, max_version, fn)

    def serve(self, name: str, fn: Callable, *, min_version: int | None = None, max_version: int | None = None
              ) -> None:
        """Register *fn* for the API called *name* at the versions ``protocol.served`` lists (from *min_version*,
        up to *max_version*, when a caller serves less)."""
        lo, hi = served.versions(name)
        self.register(served.key(name), lo if min_version is None else max(lo, min_version),
                      hi if max_version is None else min(hi, max_version), fn)

    def serves(self, name: str) -> bool:
        return served.key(name) in self._handlers

    def registered(self) -> dict[int, tuple[int, int]]:
        return {k: (lo, hi) for k, (lo, hi, _) in self._handlers.items()}

    def api_features(self):
        """The features ApiVersions carries (``api_versions.Features``), from ``features_source`` when the node
        set one (a KRaft node: its image), else None."""
        return self.features_source() if self.features_source is not None else None

    def api_identity(self):
        """Who this listener is to KIP-1242's check (``api_versions.Identity``), None when it does not check."""
        return self.identity

    def count_error(self, kind: str) -> None:
        if self.metrics is not None:
            self.metrics.inc("request_errors_total", api=kind)

    def _sasl_outside_exchange(self, request, conn) -> None:
        conn.send_response(sasl_state_refusal(request.api.key), request.version, request.header.correlation_id)

    def request_time_before_dispatch(self, frame, conn, started_ns: int) -> int:
        """The throttle time of a request a listener answers itself before dispatching (ApiVersions on a role's
        listener), its request time recorded; 0 when it pays none or does not decode."""
        if self.request_quota is None or getattr(conn, "charges", None) is None:
            return 0
        try:
            request = framing.decode_request(frame)
        except (ProtocolError, KraftwireError, ValueError, struct.error):
            return 0
        charge = self.request_quota.charge(request, conn, started_ns)
        return charge.settle(None) if charge is not None else 0

    def _api_versions(self, request, conn) -> None:
        cid = request.header.correlation_id
        charges = getattr(conn, "charges", None)
        charge = charges.pop(cid, None) if charges else None
        throttle = charge.settle(None) if charge is not None else 0
        conn.send_chunks(encode_api_versions_response(self.registered(), request.version, cid, self.api_features(),
                                                      request.body, self.api_identity(), throttle), cid)
        if throttle:
            conn.throttle(throttle)

    def dispatch(self, frame: bytes, conn) -> None:
        started = time.perf_counter_ns()  # the request's time on the event loop starts with its decoding
        if len(frame) < 8:
            self.count_error("malformed")
            log.warning("closing connection from %s: a %d-byte frame is too short for a request header",
                        conn.peer, len(frame))
            conn.close()
            return
        api_key, version, correlation_id = struct.unpack_from(">hhi", frame, 0)
        entry = self._handlers.get(api_key)
        try:
            request = framing.decode_request(frame)
        except UnsupportedVersionError:
            if api_key == API_VERSIONS:
                self._count(api_key, version)
                take_turn(conn, correlation_id)
                conn.send_chunks(encode_api_versions_response(self.registered(), version, correlation_id,
                                                              self.api_features()), correlation_id)
                return
            self.count_error(str(api_key))
            log.warning("closing connection from %s: unsupported api key %d version %d", conn.peer, api_key, version)
            conn.close()
            return
        except (ProtocolError, KraftwireError, ValueError, struct.error) as exc:
            self.count_error(str(api_key))
            log.warning("closing connection from %s: malformed request (api key %d v%d): %s", conn.peer, api_key,
                        version, exc)
            conn.close()
            return
        if entry is None or not entry[0] <= version <= entry[1]:
            if api_key == API_VERSIONS:
                take_turn(conn, correlation_id)
                self._api_versions(request, conn)
                return
            self.count_error(str(api_key))
            log.warning("closing connection from %s: api key %d version %d is not served here", conn.peer, api_key,
                        version)
            conn.close()
            return
        refused = _parse_refusal(request)
        if refused is not None:
            self.count_error(str(api_key))
            log.warning("closing connection from %s: malformed request (api key %d v%d): %s", conn.peer, api_key,
                        version, refused)
            conn.close()
            return
        self._count(api_key, version)
        answered = api_key != PRODUCE or request.body.acks != 0  # a Produce with acks=0 is never answered
        if answered:
            take_turn(conn, correlation_id)
        timing = getattr(conn, "timing", None) if self.metrics is not None else None
        if timing is not None:  # the request's phases for Kafka's RequestMetrics; local time includes the decoding
            arrived = getattr(conn, "arrived_ns", 0) or started  # 0: handed a frame without a read
            if answered:  # the connection finishes it when the answer goes (``InboundConnection.send_chunks``)
                phases = timing[correlation_id] = [self.requests, api_key, arrived, started, 0]
            self.arrival_ns = arrived
        charges = getattr(conn, "charges", None)
        charge = None
        if self.request_quota is not None and charges is not None:
            charge = self.request_quota.charge(request, conn, started)
            if charge is not None:
                charges[correlation_id] = charge
        try:
            if self.gate is None or self.gate(request, conn):
                entry[2](request, conn)
            if charge is not None:
                charge.handler_returned()
        except Exception as exc:  # a handler bug must not stop the node; the client gets disconnected
            self.count_error(str(api_key))
            log.exception("handler for api key %d failed: %s; closing the connection from %s", api_key, exc, conn.peer)
            conn.close()
        finally:
            if timing is not None:
                self.arrival_ns = 0
                handled = time.perf_counter_ns()
                if not answered:
                    self.requests.record(api_key, arrived, started, handled, handled, handled, 0)
                elif not phases[4]:  # still unanswered: the rest is remote time
                    phases[4] = handled

    def _count(self, api_key: int, version: int) -> None:
        """Count a request (``kraftwire_requests_total`` and Kafka's RequestsPerSec are both made of these counts at
        scrape time)."""
        if self.metrics is not None:
            self.requests.count(api_key, version)

    def connection_closed(self, conn) -> None:
        for callback in self.on_close:
            callback(conn)

    def close_all(self) -> None:
        for conn in list(self.connections):
            conn.close()


class DispatcherView:
    """A dispatcher in front of another (``base``): connections, error counts and closing go to the base; a
    subclass changes what is served (``registered``) and how frames are let through (``dispatch``)."""

    def __init__(self, base) -> None:
        self.base = base

    @property
    def connections(self):
        return self.base.connections

    def count_error(self, kind: str) -> None:
        self.base.count_error(kind)

    def connection_closed(self, conn) -> None:
        self.base.connection_closed(conn)

    def registered(self) -> dict:
        return self.base.registered()

    def api_features(self):
        return self.base.api_features()

    def api_identity(self):
        return self.base.api_identity()

    def request_time_before_dispatch(self, frame, conn, started_ns: int) -> int:
        return self.base.request_time_before_dispatch(frame, conn, started_ns)

    def dispatch(self, frame: bytes, conn) -> None:
        self.base.dispatch(frame, conn)
