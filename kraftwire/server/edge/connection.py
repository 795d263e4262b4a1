"""Inbound connections: a thin asyncio protocol that moves bytes. Frames go to the dispatcher; answers come back
through ``send_response``. A frame that cannot be split (negative or oversized size prefix) closes this connection
only; the node keeps serving everyone else. A peer that stops reading is disconnected once too much output is
queued for it, so a slow or half-open client cannot grow the node's memory without bound. Connections idle longer
than ``connections.max.idle.ms`` (Kafka's default: 10 minutes) are closed.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time

from kraftwire.error_codes import UNKNOWN_SERVER_ERROR
from kraftwire.errors import ProtocolError
from kraftwire.protocol.error_answers import error_answer
from kraftwire.protocol.framing import FrameReader, encode_response
from kraftwire.protocol.wire_types import ExternalBytes
from kraftwire.security.principal import ANONYMOUS, NoMatchingRule, parse_rules, tls_principal

log = logging.getLogger("kraftwire.connection")

#: output queued for one client beyond which it is disconnected
MAX_WRITE_BUFFER = 256 * 1024 * 1024
IDLE_TIMEOUT_S = 600.0
DEFAULT_RULES = parse_rules("DEFAULT")


def write_chunks(transport: asyncio.WriteTransport, chunks: list) -> None:
    """Write an encoded message. A transport whose ``writelines`` is asyncio's generic one (the selector transport
    before Python 3.12) joins the list first: a copy of every Fetch answer's records. Writing each chunk instead lets
    the socket take a large one straight from the log's buffer (the encoder has already joined the small ones).
    Transports with their own ``writelines`` (Python 3.12's sendmsg, uvloop's writev) get the list."""
    if type(transport).writelines is asyncio.WriteTransport.writelines:
        write = transport.write
        for chunk in chunks:
            write(chunk)
    else:
        transport.writelines(chunks)


class InboundConnection(asyncio.BufferedProtocol):
    def __init__(self, dispatcher, max_frame_bytes: int, principal_rules: tuple = DEFAULT_RULES,
                 listener: str | None = None, gate=None) -> None:
        self.dispatcher = dispatcher
        #: the broker's connection quotas (``connection_gate.ConnectionGate``) on a client listener, else None
        self.gate = gate
        #: the listener this connection arrived on: Metadata answers with each broker's endpoint on it, as Kafka does
        self.listener = listener
        self.principal_rules = principal_rules  # ssl.principal.mapping.rules of the listener (TLS only)
        self.reader = FrameReader(max_frame_bytes)  # requests are received straight into their frames
        self.transport: asyncio.Transport | None = None
        self.peer = "?"
        #: who is on the other end (``User:ANONYMOUS`` on PLAINTEXT; the mapped certificate subject on mutual TLS)
        self.principal = ANONYMOUS
        self.closed = False
        self.last_activity = time.monotonic()
        self._idle: asyncio.TimerHandle | None = None
        #: answers waiting behind one that holds a file region being sent (they go out in order after it)
        self._queue: collections.deque = collections.deque()
        self._drainer: asyncio.Task | None = None
        self.sendfile = True  # cleared when the loop has no loop.sendfile (uvloop): regions are then read
        #: correlation ids of requests still to be answered, in arrival order (``expect``): Kafka answers the
        #: requests of a connection in the order they came, and clients check it, so an answer that is ready
        #: before an earlier one (a Heartbeat behind an OffsetCommit waiting for its replicas) is held back
        self._expected: collections.deque = collections.deque()
        self._held: dict[int, list] = {}
        #: correlation id -> the request time its answer settles (``client_quotas.Charge``, request_percentage)
        self.charges: dict = {}
        #: frames received and not dispatched yet (those that came behind a request whose answer muted the connection)
        self._unread: collections.deque = collections.deque()
        #: KIP-219: when a quota's throttle ends (loop time) and the call that resumes reading then
        self._muted_until = 0.0
        self._unmute: asyncio.TimerHandle | None = None
        #: Kafka's request phases (``kafka_meters.RequestMeters``): when the last read brought frames in, and per
        #: correlation id [meters, api key, arrived, started, handled (0: not yet), answered, throttle ms] of the
        #: requests the dispatcher timed, until their answer is handed to the transport
        self.arrived_ns = 0
        self.timing: dict[int, list] = {}

    def connection_made(self, transport) -> None:  # type: ignore[override]
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        if transport.get_extra_info("sslcontext") is not None:
            try:
                self.principal = tls_principal(transport.get_extra_info("peercert"), self.principal_rules)
                log.log(logging.DEBUG if self.principal == ANONYMOUS else logging.INFO,
                        "%s authenticated with TLS from %s", self.principal, self.peer)
            except NoMatchingRule as exc:
                log.warning("closing TLS connection from %s: %s", self.peer, exc)
                self.closed = True
                transport.close()
                return
        if transport.get_extra_info("sslcontext") is not None:
            # asyncio's sendfile fallback on a TLS transport swaps the protocol and waits on flow control that
            # could hang under load (seen in CI); TLS must encrypt the bytes in Python anyway, so read and write
            self.sendfile = False
        self.dispatcher.connections.add(self)
        self._arm_idle()
        if self.gate is not None:
            self.gate.arrived(self)

    def _arm_idle(self) -> None:
        self._idle = asyncio.get_running_loop().call_later(IDLE_TIMEOUT_S, self._check_idle)

    def _check_idle(self) -> None:
        if self.closed:
            return
        if time.monotonic() - self.last_activity >= IDLE_TIMEOUT_S:
            log.info("closing idle connection from %s", self.peer)
            self.close()
        else:
            self._arm_idle()

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.reader.get_buffer(sizehint)

    def buffer_updated(self, nbytes: int) -> None:
        self._frames_arrived(self.reader.buffer_updated, nbytes)

    def data_received(self, data: bytes) -> None:
        """Bytes that arrived some other way (tests hand a connection its requests so)."""
        self._frames_arrived(self.reader.feed, data)

    def _frames_arrived(self, take, arrived) -> None:
        self.last_activity = time.monotonic()
        self.arrived_ns = time.perf_counter_ns()
        try:
            frames = take(arrived)
        except ProtocolError as exc:
            self.dispatcher.count_error("framing")
            log.warning("closing connection from %s: %s", self.peer, exc)
            self.close()
            return
        self._unread.extend(frames)
        self._dispatch_unread()

    def _dispatch_unread(self) -> None:
        """Dispatch the frames received, in order, until the connection is muted: a quota's mute (KIP-219) holds
        the requests already read as well as those not yet read, as Kafka, reading a connection's next request only
        once the last one is answered, never has more than one read."""
        unread = self._unread
        while unread and not self.closed and self._unmute is None:
            self.dispatcher.dispatch(unread.popleft(), self)

    def expect(self, correlation_id: int) -> None:
        """A request that will be answered arrived: its answer leaves after those of the requests before it."""
        self._expected.append(correlation_id)

    def send_response(self, body, version: int, correlation_id: int) -> None:
        """Encode and send an answer. One that cannot be encoded (a string beyond its field's limit) never escapes as
        an exception into the code answering: as Kafka does when it cannot write an answer, the request gets its
        error answer with UNKNOWN_SERVER_ERROR (``protocol.error_answers``); where none is declared the connection is
        closed. One log line either way. The answer of a request that pays request time carries its throttle time,
        and the connection is muted that long once it has gone (KIP-219)."""
        charge = self.charges.pop(correlation_id, None) if self.charges else None
        throttle = charge.settle(body) if charge is not None else 0
        try:
            chunks = encode_response(body, version, correlation_id)
        except ProtocolError as exc:
            chunks = self._refusal(body, version, correlation_id, exc)
            if chunks is None:
                self.close()
                return
        self.send_chunks(chunks, correlation_id, getattr(body, "throttle_time_ms", 0) or 0)
        self.throttle(throttle)

    def _refusal(self, body, version: int, correlation_id: int, problem: ProtocolError) -> list | None:
        """The encoded error answer in place of ``body``, which could not be encoded (None: there is none)."""
        refusal = error_answer(body, version, UNKNOWN_SERVER_ERROR)
        chunks = None
        if refusal is not None:
            try:
                chunks = encode_response(refusal, version, correlation_id)
            except ProtocolError:  # the keys read back from the answer were what could not be written
                chunks = None
        log.error("cannot encode %s v%d for %s (%s); %s", type(body).__name__, version, self.peer, problem,
                  "answering UNKNOWN_SERVER_ERROR" if chunks is not None else "closing the connection")
        return chunks

    def send_chunks(self, chunks: list, correlation_id: int | None = None, throttle_ms: int = 0) -> None:
        """Send an answer in its request's turn (see ``expect``); an answer nobody expects goes at once.
        ``throttle_ms``: the answer's throttle time, for the request's ThrottleTimeMs. An answer encoded by its
        handler still settles the request time its request owes (without a throttle field to set)."""
        if self.charges and correlation_id in self.charges:
            self.throttle(self.charges.pop(correlation_id).settle(None))
        phases = self.timing.get(correlation_id) if self.timing else None
        if phases is not None:
            answered = time.perf_counter_ns()
            if not phases[4]:  # answered by its handler: no remote time
                phases[4] = answered
            phases.append(answered)
            phases.append(throttle_ms)
        expected = self._expected
        if correlation_id is None or not expected or correlation_id not in expected:
            self._write_answer(chunks)
            self._timed(phases, correlation_id)
            return
        if expected[0] != correlation_id:
            self._held[correlation_id] = chunks
            return
        expected.popleft()
        self._write_answer(chunks)
        self._timed(phases, correlation_id)
        held = self._held
        while held and expected and expected[0] in held:
            cid = expected.popleft()
            self._write_answer(held.pop(cid))
            if self.timing:
                self._timed(self.timing.get(cid), cid)

    def _timed(self, phases: list | None, correlation_id) -> None:
        """The answer to a timed request went to the transport: record its phases."""
        if phases is None or len(phases) < 7:
            return
        del self.timing[correlation_id]
        meters, api_key, arrived, started, handled, answered, throttle_ms = phases
        meters.record(api_key, arrived, started, handled, answered, time.perf_counter_ns(), throttle_ms)

    def _write_answer(self, chunks: list) -> None:
        """Write an encoded answer. One holding a file region (a consumer Fetch's segment bytes) is sent by a
        task with ``loop.sendfile`` — the bytes go from the page cache to the socket without passing through Python
        (a TLS connection reads the region and writes it) — and answers that come meanwhile wait behind it, so they
        leave in order."""
        if self.closed or self.transport is None:
            return
        if self._queue or any(isinstance(c, ExternalBytes) for c in chunks):
            self._queue.append(chunks)
            if self._drainer is None:
                self._drainer = asyncio.get_running_loop().create_task(self._drain())
            return
        write_chunks(self.transport, chunks)
        self._check_buffer()

    def _check_buffer(self) -> None:
        if self.transport is not None and self.transport.get_write_buffer_size() > MAX_WRITE_BUFFER:
            log.warning("closing connection from %s: it does not read its responses", self.peer)
            self.close()

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._queue and not self.closed:
                for chunk in self._queue.popleft():
                    if self.closed:
                        break
                    if isinstance(chunk, ExternalBytes):
                        await self._send_region(loop, chunk)
                    else:
                        self.transport.write(chunk)
                self._check_buffer()
        except (OSError, RuntimeError, ConnectionError) as exc:
            log.info("closing connection from %s: sending a file region failed: %s", self.peer, exc)
            self.close()
        finally:
            self._drainer = None
            if self.closed:
                self._queue.clear()

    async def _send_region(self, loop, region) -> None:
        try:
            if self.sendfile:
                f = region.open()
                try:
                    await loop.sendfile(self.transport, f, region.position, region.length, fallback=True)
                    return
                except NotImplementedError:
                    self.sendfile = False  # uvloop: read it instead
                finally:
                    f.close()
            self.transport.write(region.read())
        finally:
            region.close()

    def throttle(self, throttle_ms: int) -> None:
        """KIP-219: the answer carrying ``throttle_time_ms`` has gone; stop reading this connection for that long (a
        client that ignores the field waits anyway). A longer throttle extends the mute, a shorter one does not."""
        if throttle_ms <= 0 or self.closed or self.transport is None:
            return
        loop = asyncio.get_running_loop()
        until = loop.time() + throttle_ms / 1000
        if until <= self._muted_until:
            return
        self._muted_until = until
        if self._unmute is None:
            self.transport.pause_reading()
        else:
            self._unmute.cancel()
        self._unmute = loop.call_at(until, self._resume_reading)

    def _resume_reading(self) -> None:
        self._unmute = None
        self._dispatch_unread()
        if self._unmute is None and not self.closed and self.transport is not None:
            self.transport.resume_reading()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self.transport is not None:
                self.transport.close()

    def connection_lost(self, exc) -> None:
        self.closed = True
        if self._idle is not None:
            self._idle.cancel()
        if self._unmute is not None:
            self._unmute.cancel()
        self.dispatcher.connections.discard(self)
        self.dispatcher.connection_closed(self)
        if self.gate is not None:
            self.gate.left(self)
