"""A minimal asyncio Kafka client: one connection, requests in order, responses matched by correlation id.

Used by the node to forward DescribeQuorum to the leader, by a broker that finds the quorum through
``controller.quorum.bootstrap.servers``, by a broker's controller link and replica fetchers, and by the admin tools
(``metadata-quorum``).

SASL sessions (KIP-368): when the login's answer carries a session lifetime, the connection logs in again (SaslHandshake
+ SaslAuthenticate, same mechanism and user) before the next request sent once 85-95% of the lifetime has passed
(``security.sasl.client.reauthenticate_after_ms``). The check is made when a request is sent — requests go one at a
time here, so nothing is in flight then — and a server accepts a re-authentication even after the session expired,
so an idle connection needs no timer.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import random
import secrets
import time

from kraftwire.errors import KraftwireError, ProtocolError
from kraftwire.protocol import messages as w
from kraftwire.protocol.framing import FrameReader, OutboundRequests
from kraftwire.security.sasl.client import reauthenticate_after_ms

log = logging.getLogger("kraftwire.client")
#: client id of a DescribeQuorum (or an admin request) a non-leader forwards to the leader; such a request is never
#: forwarded again
FORWARD_CLIENT_ID = "kraftwire-forward"


def scram_nonce() -> str:
    return secrets.token_urlsafe(24)


class SaslLoginError(KraftwireError):
    """The server refused this client's SASL login; ``reason`` is the server's own words when it gave them (Kafka's
    tools print those)."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


class _Answers(asyncio.BufferedProtocol):
    """A connection's reading side, put in place of the stream's protocol once connected (and TLS is up): answers
    are received straight into their frames (``FrameReader``) instead of passing through the stream's buffer and
    a copy out of it. What the writing side waits on (flow control, the connection's loss) is passed on to the
    stream's protocol, which the ``StreamWriter`` still uses."""

    def __init__(self, transport, stream_protocol, stream_reader: asyncio.StreamReader) -> None:
        self.transport = transport
        self.stream = stream_protocol
        self.reader = FrameReader()
        self.frames: collections.deque = collections.deque()
        self.error: BaseException | None = None
        self.ended = False
        self._waiter: asyncio.Future | None = None
        transport.set_protocol(self)
        # what reached the stream before the swap: the other end may have closed already (a refused link)
        self.error = stream_reader.exception()
        self.ended = stream_reader.at_eof() or transport.is_closing()

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.reader.get_buffer(sizehint)

    def buffer_updated(self, nbytes: int) -> None:
        try:
            self.frames.extend(self.reader.buffer_updated(nbytes))
        except ProtocolError as exc:
            self.error = exc
            self.transport.close()
        self._wake()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False

    def connection_lost(self, exc) -> None:
        self.ended = True
        if self.error is None:
            self.error = exc
        self._wake()
        self.stream.connection_lost(exc)

    def pause_writing(self) -> None:
        self.stream.pause_writing()

    def resume_writing(self) -> None:
        self.stream.resume_writing()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def next(self):
        """The next answer's frame."""
        while not self.frames:
            if self.error is not None:
                raise self.error
            if self.ended:
                raise ProtocolError("connection closed by the server")
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return self.frames.popleft()


class KafkaConnection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_id: str) -> None:
        self._writer = writer
        self._answers = _Answers(writer.transport, writer.transport.get_protocol(), reader)
        self._out = OutboundRequests(client_id=client_id)
        self._sasl = None  # the SaslLogin of this connection, kept to re-authenticate
        self._reauthenticate_at: float | None = None  # time.monotonic() after which the next request logs in again
        self.reauthentications = 0

    @classmethod
    async def open(cls, host: str, port: int, *, timeout: float = 10.0, client_id: str = "kraftwire-admin",
                   ssl_context=None, sasl=None):
        """Connect (over TLS with ``ssl_context``, checking ``host`` when the context checks host names; then log in
        with ``sasl``, a ``SaslLogin``, when given)."""
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, ssl=ssl_context, server_hostname=host if ssl_context else None),
            timeout)
        conn = cls(reader, writer, client_id)
        if sasl is not None:
            try:
                await conn.login(sasl, timeout=timeout)
            except BaseException:
                await conn.close()
                raise
        return conn

    async def login(self, sasl, *, timeout: float = 10.0) -> None:
        """SaslHandshake v1 and SaslAuthenticate; ``SaslLoginError`` when the server refuses. The answer's session
        lifetime, if any, sets when the connection re-authenticates."""
        self._reauthenticate_at = None
        self._sasl = sasl
        auth = await self._login(sasl, timeout)
        after_ms = reauthenticate_after_ms(auth.session_lifetime_ms, random.random())
        if after_ms is not None:
            self._reauthenticate_at = time.monotonic() + after_ms / 1000.0

    async def _login(self, sasl, timeout: float):
        hs = await self._exchange(w.SaslHandshakeRequest(mechanism=sasl.mechanism), 1, timeout)
        if hs.error_code:
            raise SaslLoginError(f"the server refused SASL mechanism {sasl.mechanism} (error {hs.error_code}; it "
                                 f"enables {', '.join(hs.mechanisms) or 'none'})")
        if sasl.mechanism == "PLAIN":
            auth = await self._exchange(w.SaslAuthenticateRequest(auth_bytes=sasl.token()), 1, timeout)
            self._check_login(sasl, auth)
            return auth
        client = sasl.scram(scram_nonce())
        auth = await self._exchange(w.SaslAuthenticateRequest(auth_bytes=client.first()), 1, timeout)
        self._check_login(sasl, auth)
        try:
            final = client.final(bytes(auth.auth_bytes))
        except ValueError as exc:
            raise SaslLoginError(f"SASL {sasl.mechanism}: {exc}") from None
        auth = await self._exchange(w.SaslAuthenticateRequest(auth_bytes=final), 1, timeout)
        self._check_login(sasl, auth)
        try:
            client.verify(bytes(auth.auth_bytes))
        except ValueError as exc:
            raise SaslLoginError(f"SASL {sasl.mechanism}: {exc}") from None
        return auth

    @staticmethod
    def _check_login(sasl, auth) -> None:
        if auth.error_code:
            raise SaslLoginError(f"SASL login as {sasl.username} refused: {auth.error_message or auth.error_code}",
                                 auth.error_message)

    async def request(self, body, version: int, *, timeout: float = 10.0, header_version: int | None = None):
        """The decoded answer to ``body`` at ``version`` (``header_version``: see ``framing.encode_request``)."""
        if self._reauthenticate_at is not None and time.monotonic() >= self._reauthenticate_at:
            await self.login(self._sasl, timeout=timeout)
            self.reauthentications += 1
            log.debug("re-authenticated as %s with SASL %s", self._sasl.username, self._sasl.mechanism)
        return await self._exchange(body, version, timeout, header_version)

    async def _exchange(self, body, version: int, timeout: float, header_version: int | None = None):
        _, chunks = self._out.encode(body, version, header_version=header_version)
        self._writer.writelines(chunks)
        await self._writer.drain()
        return await asyncio.wait_for(self._read_response(), timeout)

    async def _read_response(self):
        _, body = self._out.on_response(await self._answers.next())
        return body

    @property
    def ended(self) -> bool:
        """The other end closed the connection, or it was lost."""
        return self._answers.ended

    async def close(self) -> None:
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (OSError, ConnectionError):
            pass


async def request_once(host: str, port: int, body, version: int, *, timeout: float = 10.0,
                       client_id: str = "kraftwire-admin", ssl_context=None, sasl=None):
    conn = await KafkaConnection.open(host, port, timeout=timeout, client_id=client_id, ssl_context=ssl_context,
                                      sasl=sasl)
    try:
        return await conn.request(body, version, timeout=timeout)
    finally:
        await conn.close()


def parse_host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host or "localhost", int(port)


async def describe_quorum(host: str, port: int, *, timeout: float = 10.0, topic: str = "__cluster_metadata",
                          ssl_context=None, sasl=None, controllers: bool = False):
    """(DescribeQuorum v2 response, DescribeCluster response) from the node at host:port, on one connection;
    ``controllers``: the node is a controller (``--bootstrap-controller``), asked for its controllers (endpoint type
    2, KIP-919) — Kafka's controller answers the brokers' type MISMATCHED_ENDPOINT_TYPE, without a cluster id."""
    conn = await KafkaConnection.open(host, port, timeout=timeout, ssl_context=ssl_context, sasl=sasl)
    try:
        R = w.DescribeQuorumRequest
        quorum = await conn.request(R(topics=[R.TopicData(topic_name=topic, partitions=[
            R.PartitionData(partition_index=0)])]), 2, timeout=timeout)
        cluster = await conn.request(w.DescribeClusterRequest(endpoint_type=2 if controllers else 1), 1,
                                     timeout=timeout)
        return quorum, cluster
    finally:
        await conn.close()
