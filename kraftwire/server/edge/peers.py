"""Outbound connections to the other voters: one TCP connection per peer, requests pipelined on it.

``Peers.send(request)`` translates a core request to the wire and writes it on the destination's connection
(connecting first when needed). Responses are matched by the wire correlation id and handed to the driver as core
responses carrying the core's own correlation id. Failures become ``RequestFailed`` events so the core can back off
and retry: connection refused or lost, a request not answered within its timeout (the connection is then closed,
as Kafka's NetworkClient does), or a peer still in its reconnect backoff (exponential, 50 ms up to 1 s).

On a SASL controller listener each connection logs in (SaslHandshake + SaslAuthenticate, PLAIN) before its first
Raft request. When the login's answer carries a session lifetime (the peer's ``connections.max.reauth.ms``,
KIP-368), the connection logs in again on the same socket before it ends: the first request sent once 85-95% of the
lifetime has passed (``security.sasl.client.reauthenticate_after_ms``) waits, like every request after it, while the
re-authentication runs behind the requests already in flight (the peer answers them in order), and then goes out.
A peer accepts a re-authentication even after the session expired, so a connection left idle needs no timer.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid

from kraftwire import __version__ as _VERSION
from kraftwire.errors import KraftwireError
from kraftwire.protocol import messages as w
from kraftwire.protocol.framing import FrameSplitter, OutboundRequests
from kraftwire.raft import messages as m
from kraftwire.security.sasl.client import reauthenticate_after_ms
from kraftwire.server.edge import wire

log = logging.getLogger("kraftwire.peers")

RECONNECT_BACKOFF_MS = 50
RECONNECT_BACKOFF_MAX_MS = 1000
_HANDSHAKE, _AUTHENTICATE = "sasl-handshake", "sasl-authenticate"  # the contexts of a login's two requests
_REAUTH_HANDSHAKE, _REAUTH_AUTHENTICATE = "sasl-reauth-handshake", "sasl-reauth-authenticate"  # and a re-login's
_NEGOTIATE = "api-versions"  # the context of the ApiVersions request each new connection starts with
_LOGIN_STEPS = (_HANDSHAKE, _AUTHENTICATE, _REAUTH_HANDSHAKE, _REAUTH_AUTHENTICATE, _NEGOTIATE)


class _Peer(asyncio.Protocol):
    def __init__(self, peers: "Peers", node_id: int, host: str, port: int) -> None:
        self.peers = peers
        self.node_id = node_id
        self.host = host
        self.port = port
        self.transport: asyncio.Transport | None = None
        self.connecting = False
        self.queue: list[m.Message] = []
        self.out = OutboundRequests(client_id=f"kraftwire-{peers.local_id}")
        self.splitter = FrameSplitter()
        self.timers: dict[int, asyncio.TimerHandle] = {}
        self.backoff_until = 0.0
        self.failures = 0
        self.was_connected = False
        #: a SASL login under way on this connection: Raft requests wait in ``queue`` until it succeeds
        self.logging_in = False
        self._login_seq = 0  # which login a login timer belongs to
        #: time.monotonic() after which the next request first re-authenticates (None: the session never ends)
        self.reauthenticate_at: float | None = None
        self.reauthentications = 0
        #: the peer's ApiVersions on this connection: api key -> highest version (None: not asked yet, or no answer)
        self.versions: dict[int, int] | None = None
        #: asking them: Raft requests wait in ``queue`` meanwhile
        self.negotiating = False
        #: dropped from the voters (``Peers.update``): nothing more is sent on this connection
        self.retired = False

    # ------------------------------------------------------------------------------------------------ sending
    def send(self, msg: m.Message) -> None:
        if self.transport is not None and not self.logging_in and not self.negotiating:
            if self.reauthenticate_at is not None and time.monotonic() >= self.reauthenticate_at:
                self.queue.append(msg)
                self._begin_login(reauthentication=True)
                return
            self._write(msg)
            return
        if self.transport is not None:  # logging in or asking versions: sent once that is done
            self.queue.append(msg)
            return
        if time.monotonic() < self.backoff_until:
            self.peers.fail(self.node_id, msg)
            return
        self.queue.append(msg)
        if not self.connecting:
            self.connecting = True
            asyncio.get_running_loop().create_task(self._connect())

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            timeout = self.peers.request_timeout_ms / 1000
            tls = self.peers.ssl_context
            await asyncio.wait_for(loop.create_connection(lambda: self, self.host, self.port, ssl=tls,
                                                          server_hostname=self.host if tls is not None else None),
                                   timeout)
        except (OSError, asyncio.TimeoutError) as exc:
            self.connecting = False
            self.failures += 1
            backoff = min(RECONNECT_BACKOFF_MS * (2 ** (self.failures - 1)), RECONNECT_BACKOFF_MAX_MS)
            self.backoff_until = time.monotonic() + backoff / 1000
            if self.failures == 1 or self.failures % 50 == 0:
                log.warning("cannot connect to node %d at %s:%d: %s (retrying)", self.node_id, self.host, self.port,
                            exc or type(exc).__name__)
            queued, self.queue = self.queue, []
            for msg in queued:
                self.peers.fail(self.node_id, msg)

    def connection_made(self, transport) -> None:  # type: ignore[override]
        if self.retired:
            transport.close()
            return
        self.transport = transport
        self.connecting = False
        if self.failures or not self.was_connected:
            log.info("connected to node %d at %s:%d", self.node_id, self.host, self.port)
        self.failures = 0
        self.was_connected = True
        if self.peers.sasl is not None:
            self._begin_login(reauthentication=False)
            return
        self._negotiate()

    def _negotiate(self) -> None:
        """ApiVersions first, as Kafka's NetworkClient does on every new connection: each Raft request then goes at
        the highest version both sides speak (a Kafka 3.x voter has no Vote v2, so no pre-vote: the core is told
        UNSUPPORTED_VERSION and runs a real election, as Kafka's prospective does)."""
        assert self.transport is not None
        self.negotiating = True
        _, chunks = self.out.encode(w.ApiVersionsRequest(client_software_name="kraftwire",
                                                         client_software_version=_VERSION), 3, context=_NEGOTIATE)
        self.transport.writelines(chunks)
        asyncio.get_running_loop().call_later(self.peers.request_timeout_ms / 1000, self._negotiation_timed_out,
                                              self.transport)

    def _negotiation_timed_out(self, transport) -> None:
        if self.negotiating and self.transport is transport:
            log.warning("node %d did not answer ApiVersions in time; closing the connection", self.node_id)
            transport.close()

    def _versions_answer(self, body) -> None:
        if body.error_code:
            log.info("node %d answered ApiVersions with %s: requests go at our own versions", self.node_id,
                     m.error_name(body.error_code))
            self.versions = None
        else:
            self.versions = {k.api_key: k.max_version for k in body.api_keys}
        self.negotiating = False
        self._flush_queue()

    def _begin_login(self, *, reauthentication: bool) -> None:
        """SaslHandshake now; Raft requests queue until the login succeeds. A re-authentication's answers come
        behind those of the requests in flight, so its deadline is counted from the last of their deadlines."""
        assert self.transport is not None
        self.logging_in = True
        self.reauthenticate_at = None
        self._login_seq += 1
        self._write_login(w.SaslHandshakeRequest(mechanism=self.peers.sasl.mechanism),
                          _REAUTH_HANDSHAKE if reauthentication else _HANDSHAKE)
        loop = asyncio.get_running_loop()
        start = max([loop.time(), *(timer.when() for timer in self.timers.values())])
        loop.call_at(start + self.peers.request_timeout_ms / 1000, self._login_timed_out, self.transport,
                     self._login_seq)

    def _login_timed_out(self, transport, seq: int) -> None:
        if self.logging_in and self.transport is transport and seq == self._login_seq:
            log.warning("node %d did not answer our SASL login in time; closing the connection", self.node_id)
            transport.close()

    def _flush_queue(self) -> None:
        queued, self.queue = self.queue, []
        for msg in queued:
            self._write(msg)

    def _write_login(self, body, step: str) -> None:
        _, chunks = self.out.encode(body, 1, context=step)
        assert self.transport is not None
        self.transport.writelines(chunks)

    def _login_answer(self, step: str, body) -> None:
        """The next step of the SASL login; a refusal closes the connection (queued requests then fail)."""
        sasl = self.peers.sasl
        reauthentication = step in (_REAUTH_HANDSHAKE, _REAUTH_AUTHENTICATE)
        if body.error_code:
            what = "mechanism" if step in (_HANDSHAKE, _REAUTH_HANDSHAKE) else "login"
            detail = getattr(body, "error_message", None) or body.error_code
            log.warning("node %d refused our SASL %s %s%s as %s: %s", self.node_id, sasl.mechanism,
                        "re-authentication " if reauthentication else "", what, sasl.username, detail)
            if self.transport is not None:
                self.transport.close()
            return
        if step in (_HANDSHAKE, _REAUTH_HANDSHAKE):
            self._write_login(w.SaslAuthenticateRequest(auth_bytes=sasl.token()),
                              _REAUTH_AUTHENTICATE if reauthentication else _AUTHENTICATE)
            return
        if reauthentication:
            self.reauthentications += 1
            log.debug("re-authenticated to node %d as %s", self.node_id, sasl.username)
        after_ms = reauthenticate_after_ms(body.session_lifetime_ms, random.random())
        self.reauthenticate_at = time.monotonic() + after_ms / 1000 if after_ms is not None else None
        self.logging_in = False
        if reauthentication:
            self._flush_queue()
        else:
            self._negotiate()

    def _write(self, msg: m.Message) -> None:
        api_key, version, body = wire.request_to_wire(msg, self.peers.topic, self.peers.directory_id)
        if self.versions is not None:
            version = wire.negotiated_version(msg, api_key, version, self.versions.get(api_key))
            if version is None:
                self.peers.count("requests_unsupported", api_key)
                self.peers.unsupported(msg)
                return
        cid, chunks = self.out.encode(body, version, context=msg)
        assert self.transport is not None
        self.transport.writelines(chunks)
        timeout_ms = self.peers.request_timeout_ms
        if isinstance(msg, m.FetchRequest):
            timeout_ms += msg.max_wait_ms
        self.timers[cid] = asyncio.get_running_loop().call_later(timeout_ms / 1000, self._timed_out, cid)
        self.peers.count("requests_sent", api_key)

    def _timed_out(self, cid: int) -> None:
        self.timers.pop(cid, None)
        pending = self.out.cancel(cid)
        if pending is None:
            return
        log.warning("request %s to node %d timed out; closing the connection", type(pending.context).__name__,
                    self.node_id)
        self.peers.fail(self.node_id, pending.context)
        if self.transport is not None:
            self.transport.close()

    # ------------------------------------------------------------------------------------------------ receiving
    def data_received(self, data: bytes) -> None:
        try:
            frames = self.splitter.feed(data)
            for frame in frames:
                pending, body = self.out.on_response(frame)
                if pending.context == _NEGOTIATE:
                    self._versions_answer(body)
                    continue
                if pending.context in _LOGIN_STEPS:
                    self._login_answer(pending.context, body)
                    continue
                timer = self.timers.pop(pending.correlation_id, None)
                if timer is not None:
                    timer.cancel()
                request = pending.context
                response = wire.response_to_core(pending.api_key, body, self.node_id, self.peers.local_id,
                                                 request.correlation_id, request)
                self.peers.deliver(response)
        except (KraftwireError, ValueError, TypeError, AttributeError, IndexError) as exc:
            log.warning("bad response from node %d: %s; closing the connection", self.node_id, exc)
            if self.transport is not None:
                self.transport.close()

    def connection_lost(self, exc) -> None:
        if self.transport is not None:
            log.info("connection to node %d lost%s", self.node_id, f": {exc}" if exc else "")
        self.transport = None
        self.connecting = False
        self.logging_in = False
        self.negotiating = False
        self.versions = None
        self.reauthenticate_at = None
        self.splitter = FrameSplitter()
        for timer in self.timers.values():
            timer.cancel()
        self.timers.clear()
        for pending in self.out.fail_all():
            if pending.context not in _LOGIN_STEPS:
                self.peers.fail(self.node_id, pending.context)
        queued, self.queue = self.queue, []  # waiting for a login that will not happen on this connection
        for msg in queued:
            self.peers.fail(self.node_id, msg)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def retire(self) -> None:
        """No longer a peer: closed now, and a connection still being made is closed as soon as it is made."""
        self.retired = True
        self.close()


class Peers:
    def __init__(self, local_id: int, voters, topic: wire.Topic, *, directory_id: uuid.UUID | None,
                 request_timeout_ms: int, deliver, on_failed, metrics=None, ssl_context=None, sasl=None) -> None:
        self.local_id = local_id
        self.ssl_context = ssl_context  # TLS to the controller listener (None: PLAINTEXT)
        self.sasl = sasl  # a SaslLogin when the controller listener is SASL_PLAINTEXT / SASL_SSL
        self.topic = topic
        self.directory_id = directory_id
        self.request_timeout_ms = request_timeout_ms
        self._deliver = deliver
        self._on_failed = on_failed
        self.metrics = metrics
        self._peers = {v.node_id: _Peer(self, v.node_id, v.host, v.port) for v in voters if v.node_id != local_id}
        self.closed = False

    def update(self, voters) -> None:
        """The voter set changed (KIP-853): a connection to each new voter (made when first needed), the connection
        of a voter that left or moved closed (its requests in flight fail, as on any lost connection)."""
        wanted = {v.node_id: v for v in voters if v.node_id != self.local_id}
        for node_id in list(self._peers):
            peer = self._peers[node_id]
            v = wanted.get(node_id)
            if v is None or (v.host, v.port) != (peer.host, peer.port):
                log.info("node %d is no longer a voter at %s:%d: its connection is closed", node_id, peer.host,
                         peer.port)
                del self._peers[node_id]
                peer.retire()
        for node_id, v in wanted.items():
            if node_id not in self._peers:
                log.info("node %d is a voter at %s:%d", node_id, v.host, v.port)
                self._peers[node_id] = _Peer(self, node_id, v.host, v.port)

    def send(self, msg: m.Message) -> None:
        peer = self._peers.get(msg.dst)
        if peer is None or self.closed:
            self.fail(msg.dst, msg)
            return
        peer.send(msg)

    def deliver(self, response: m.Message) -> None:
        if not self.closed:
            self._deliver(response)

    def unsupported(self, msg: m.Message) -> None:
        """The peer speaks no version of ``msg`` that carries what it needs: the core gets UNSUPPORTED_VERSION."""
        if not self.closed:
            asyncio.get_running_loop().call_soon(self.deliver, wire.unsupported_response(msg))

    def fail(self, node_id: int, msg: m.Message) -> None:
        if self.closed:
            return
        # outside the current call stack: the core must not be re-entered from inside its own Ready
        asyncio.get_running_loop().call_soon(self._on_failed, node_id, msg.correlation_id)

    def count(self, what: str, api_key: int) -> None:
        if self.metrics is not None:
            self.metrics.inc(f"raft_{what}_total", api=str(api_key))

    def close(self) -> None:
        self.closed = True
        for peer in self._peers.values():
            peer.close()
