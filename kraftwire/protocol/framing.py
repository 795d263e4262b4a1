"""Size-prefixed frames, request/response headers, correlation ids. Sans-IO: bytes in, bytes out.

Frame: ``int32 size`` followed by ``size`` bytes. A request frame holds a request header then the
body; a response frame holds a response header then the body.

Header versions (Kafka's rule): request header v2 (tagged fields after ClientId) when the API is
flexible at that version, else v1; response header v1 (tagged fields after CorrelationId) when
flexible, else v0 — except ApiVersions responses, which always use header v0 so a client that does
not yet know the broker's versions can read them (KIP-511).

Public API::

    FrameSplitter(max_size=DEFAULT_MAX_FRAME)      .feed(data) -> list[bytes]   # complete frames, no prefix
    frame(chunks) -> list                           # prepend the int32 size; join small chunks, keep records by reference
    decode_request_header(frame) -> (RequestHeader, body_pos)
    decode_request(frame) -> Request(header, api, version, body)   # UnsupportedVersionError carries correlation_id
    encode_request(body, version, correlation_id, client_id="kraftwire") -> list   # framed chunks
    encode_response(body, version, correlation_id) -> list                          # framed chunks
    decode_response(frame, api_key, version) -> (correlation_id, body)
    OutboundRequests(client_id="kraftwire")         # correlation-id bookkeeping for requests we send
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

from kraftwire.error_codes import UNSUPPORTED_VERSION
from kraftwire.errors import ProtocolError, UnsupportedVersionError
from kraftwire.protocol import codec
from kraftwire.protocol import wire_types as wt
from kraftwire.protocol.messages import APIS, MessageBase, RequestHeader, ResponseHeader, api

#: Kafka's ``socket.request.max.bytes`` default (100 MiB).
DEFAULT_MAX_FRAME = 100 * 1024 * 1024
API_VERSIONS_KEY = 18
_SIZE = wt.INT32


#: Chunks at least this large (records payloads) are passed through by reference; smaller neighbours are
#: joined, so a transport's ``writelines`` gets a few buffers instead of one per field.
ZERO_COPY_MIN = 16 * 1024


def coalesce(chunks: list, zero_copy_min: int = ZERO_COPY_MIN) -> list:
    """Join runs of small chunks; keep chunks of ``zero_copy_min`` bytes or more as the caller's objects."""
    out: list = []
    run: list = []
    for c in chunks:
        if len(c) >= zero_copy_min:
            if run:
                out.append(b"".join(run))
                run = []
            out.append(c)
        else:
            run.append(c)
    if run:
        out.append(b"".join(run))
    return out


def frame(chunks: list) -> list:
    """Prepend the int32 size prefix to *chunks* and coalesce small chunks (see :func:`coalesce`)."""
    chunks.insert(0, _SIZE.pack(sum(map(len, chunks))))
    return coalesce(chunks)


def check_frame_size(size: int, max_size: int = DEFAULT_MAX_FRAME) -> int:
    """``size`` (a frame's size prefix) if a frame may be that long; else ProtocolError (close the connection)."""
    if size < 0:
        raise ProtocolError(f"frame size prefix is negative ({size})")
    if size > max_size:
        raise ProtocolError(f"frame size {size} exceeds the maximum of {max_size} bytes (socket.request.max.bytes)")
    return size


#: the receive buffer a FrameReader starts with and copies small frames out of; a larger frame gets a buffer of its
#: own. A connection whose reads fill it (the socket held more: a stream of requests or answers) gets one of
#: ``SCRATCH_MAX_BYTES`` instead, as large as what asyncio reads at once for a plain ``Protocol``: with 64 KiB reads
#: a stream of 5-100 KB frames cost four to six times the reads (an event-loop trip and a ``recv_into`` each) of
#: the ``FrameSplitter`` this reader replaced, and about twice its CPU per frame
SCRATCH_BYTES = 64 * 1024
SCRATCH_MAX_BYTES = 256 * 1024


class FrameReader:
    """Frames received straight into buffers, for an asyncio ``BufferedProtocol`` (``get_buffer`` /
    ``buffer_updated``), as Kafka's ``NetworkReceive`` does: once a frame's size prefix shows it larger than the
    scratch buffer, it gets a buffer of exactly its size, which the socket then fills in place — a produced batch or
    a Fetch answer is received once and never joined from pieces (a ``FrameSplitter`` fed by ``recv`` allocates each
    read, then copies the frame out). Smaller frames are copied out of the scratch buffer once, as bytes. A large
    frame is a ``bytearray`` this reader hands over and never touches again.

    Reads go on where the last one ended; the incomplete frame at the end is moved to the front of the scratch
    buffer only when the room left after it is less than a quarter of the buffer or than the frame needs — moving
    it after every read, or reading into whatever little room is left, would spend a copy or an event-loop trip
    on a few bytes. A read that fills all the room offered grows the scratch buffer to ``max_scratch_bytes``
    (once): a connection that only asks and answers keeps the small one.

    A size prefix that is negative or above ``max_size`` raises ProtocolError before anything is allocated for it.
    """

    def __init__(self, max_size: int = DEFAULT_MAX_FRAME, scratch_bytes: int = SCRATCH_BYTES,
                 max_scratch_bytes: int = SCRATCH_MAX_BYTES) -> None:
        self.max_size = max_size
        self._scratch = memoryview(bytearray(scratch_bytes))
        self._min_room = max(scratch_bytes // 4, 4)  # less room than this after the kept bytes: move them first
        self._max_scratch = max_scratch_bytes
        self._start = 0  # the scratch buffer's bytes not yet taken as frames: [_start, _end)
        self._end = 0
        self._frame: bytearray | None = None  # the large frame being received, and how much of it arrived
        self._filled = 0

    def get_buffer(self, sizehint: int = -1) -> memoryview:
        """Where the next bytes received go (never empty)."""
        if self._frame is not None:
            return memoryview(self._frame)[self._filled:]
        return self._scratch[self._end:]

    def buffer_updated(self, nbytes: int) -> list:
        """``nbytes`` arrived in the last ``get_buffer``: the frames they completed."""
        if self._frame is not None:
            self._filled += nbytes
            if self._filled < len(self._frame):
                return []
            frame, self._frame = self._frame, None
            return [frame]
        view = self._scratch
        pos, end = self._start, self._end + nbytes
        grow = end == len(view) and len(view) < self._max_scratch  # the read filled the room: the socket has more
        room = self._max_scratch if grow else len(view)
        need = 4  # bytes the incomplete frame at ``pos`` takes in the scratch buffer (its prefix, at least)
        frames: list = []
        while end - pos >= 4:
            size = check_frame_size(_SIZE.unpack_from(view, pos)[0], self.max_size)
            start = pos + 4
            if end - start >= size:
                frames.append(bytes(view[start:start + size]))
                pos = start + size
                continue
            if 4 + size > room:  # will not fit: its own buffer, filled in place from here on
                self._frame = bytearray(size)
                self._filled = end - start
                # through a memoryview: a bytearray's own slice assignment copies a source that is not a bytearray
                # into a temporary first (up to a scratch buffer's worth per large frame)
                memoryview(self._frame)[:self._filled] = view[start:end]
                pos = end
                grow = False  # the next reads go into the frame's buffer: a larger scratch buffer would not help them
            else:
                need = 4 + size
            break
        if grow:
            view = self._grow(pos, end)
            pos, end = 0, end - pos
        if pos == end:
            pos = end = 0
        elif len(view) - end < self._min_room or pos + need > len(view):
            view[:end - pos] = view[pos:end]  # the incomplete frame's start moves to the front
            pos, end = 0, end - pos
        self._start, self._end = pos, end
        return frames

    def _grow(self, pos: int, end: int) -> memoryview:
        """Swap the scratch buffer for one of ``max_scratch_bytes``, keeping its bytes ``[pos, end)`` at the front."""
        view = memoryview(bytearray(self._max_scratch))
        view[:end - pos] = self._scratch[pos:end]
        self._scratch = view
        self._min_room = max(len(view) // 4, 4)
        return view

    def feed(self, data) -> list:
        """The frames completed by ``data`` (bytes received some other way), copied through the buffers."""
        frames: list = []
        src = memoryview(data)
        pos = 0
        while pos < len(src):
            buf = self.get_buffer()
            n = min(len(buf), len(src) - pos)
            buf[:n] = src[pos:pos + n]
            frames.extend(self.buffer_updated(n))
            pos += n
        return frames


class FrameSplitter:
    """Split a byte stream into frames. ``feed()`` returns the complete frames (without size prefix).

    A size prefix that is negative or above ``max_size`` raises ProtocolError before anything is
    buffered for it; the connection should be closed (the stream cannot be resynchronised).
    """

    def __init__(self, max_size: int = DEFAULT_MAX_FRAME) -> None:
        self.max_size = max_size
        self._parts: list = []  # what arrived of an incomplete frame: bytes, or views of the bytes that arrived
        self._have = 0  # their total length
        self._body: int | None = None  # the size of the frame being gathered once its prefix is known

    def feed(self, data) -> list[bytes]:
        """The frames completed by ``data``. Every frame is copied exactly once out of what arrived: complete frames
        straight from ``data``, a frame spanning several reads by one join of its pieces once it is whole (growing
        a bytearray would copy it on every resize, and slicing one copies twice; a fresh megabyte costs its page
        faults on every copy)."""
        frames: list[bytes] = []
        if not isinstance(data, bytes):
            data = bytes(data)  # kept or sliced below: a caller may reuse a mutable buffer (asyncio hands bytes)
        if self._parts:
            self._parts.append(data)
            self._have += len(data)
            body = self._body
            if body is None:  # fewer than 4 bytes of the prefix were buffered
                if self._have < 4:
                    return frames
                data = b"".join(self._parts)
                self._parts, self._have = [], 0
            else:
                if self._have < body:
                    return frames
                over = self._have - body  # bytes beyond the frame: all in ``data``, which completed it
                view = memoryview(data)
                self._parts[-1] = view[:len(view) - over]
                frames.append(b"".join(self._parts))
                self._parts, self._have, self._body = [], 0, None
                data = view[len(view) - over:]
        # Slicing bytes copies once; a view (the tail after a gathered frame) copies with bytes().
        src = data if isinstance(data, bytes) else None
        view = data if isinstance(data, memoryview) else memoryview(data)
        start, end = 0, len(view)
        while end - start >= 4:
            size = check_frame_size(_SIZE.unpack_from(view, start)[0], self.max_size)
            if end - start - 4 < size:
                self._body = size
                start += 4
                break
            frames.append(src[start + 4:start + 4 + size] if src is not None
                          else bytes(view[start + 4:start + 4 + size]))
            start += 4 + size
        if start < end or self._body is not None:  # (a prefix alone, with none of its body yet, counts too)
            self._parts = [view[start:]]  # a view of immutable bytes stays valid
            self._have = end - start
        return frames

    @property
    def buffered(self) -> int:
        """Bytes held for an incomplete frame (its size prefix included)."""
        return self._have + (4 if self._body is not None else 0)

    def check_eof(self) -> None:
        """Call when the peer closed: a partial frame left over is a truncated frame."""
        if self._parts:
            raise ProtocolError(f"connection closed inside a frame ({self.buffered} bytes of a partial frame)")


class Request(NamedTuple):
    header: Any  # RequestHeader
    api: Any  # ApiInfo
    version: int
    body: Any  # the request message
    #: the body's size in bytes (Kafka's RequestAndSize.size: what a produce quota records)
    size: int = 0


def _peek_key_version(frame_buf) -> tuple[int, int, int]:
    if len(frame_buf) < 8:
        raise ProtocolError(f"request frame of {len(frame_buf)} bytes is too short for a request header")
    key, version, correlation_id = struct.unpack_from(">hhi", frame_buf, 0)
    return key, version, correlation_id


def decode_request_header(frame_buf) -> tuple[Any, int]:
    """Decode the request header; returns ``(header, body_pos)``.

    The header version comes from the API's flexible versions. For an unknown api key or a version
    above the known range the header is read as v1 (api key, version, correlation id, client id),
    which is all a server needs to send an error back; for ApiVersions above the known range it is
    read as v2 (ApiVersions is flexible from v3, so newer versions are too).
    """
    key, version, _ = _peek_key_version(frame_buf)
    info = APIS.get(key)
    if info is None:
        hv = 1
    elif info.supports(version) or version > info.valid_versions[1]:
        hv = 2 if info.is_flexible(version) else 1
    else:
        hv = 1
    header, pos = codec.decode_from(RequestHeader, frame_buf, 0, None, hv)
    return header, pos


def decode_request(frame_buf, *, exact: bool = False) -> Request:
    """Decode a whole request frame (without its size prefix).

    Bytes after the body are ignored, as Kafka's request parser does: librdkafka 2.x writes an all-topics
    Metadata v12 request's topic array as a 4-byte 0 instead of the 1-byte null (librdkafka issue #5049), leaving
    three. A body that ends early is still an error. ``exact=True`` refuses the extra bytes (for tests that check a
    client's encoding).

    An unknown api key or unsupported version raises :class:`UnsupportedVersionError` with
    ``correlation_id`` and ``header`` attributes set, so the caller can still answer.
    """
    view = memoryview(frame_buf) if not isinstance(frame_buf, memoryview) else frame_buf
    header, pos = decode_request_header(view)
    info = APIS.get(header.request_api_key)
    version = header.request_api_version
    if info is None or not info.supports(version):
        err = UnsupportedVersionError(header.request_api_key, version)
        err.correlation_id = header.correlation_id  # type: ignore[attr-defined]
        err.header = header  # type: ignore[attr-defined]
        raise err
    body, end = codec.decode_from(info.request, view, pos, len(view), version)
    if exact and end != len(view):
        raise ProtocolError(f"{info.request.NAME} v{version}: {len(view) - end} unexpected trailing bytes")
    return Request(header, info, version, body, len(view) - pos)


def encode_request(body: MessageBase, version: int, correlation_id: int, client_id: str | None = "kraftwire",
                   header_version: int | None = None) -> list:
    """Frame + request header + body, as a chunk list (``b"".join`` it or hand it to ``writelines``).
    ``header_version``: the API version the header names when it is not ``version`` (the body's) — a version the
    server does not know, as a newer client sends its ApiVersions (KIP-511: the server answers UNSUPPORTED_VERSION)."""
    info = api(body.API_KEY) if body.KIND == "request" else None
    if info is None:
        raise ProtocolError(f"{type(body).__name__} is not a request")
    header = RequestHeader(request_api_key=info.key,
                           request_api_version=version if header_version is None else header_version,
                           correlation_id=correlation_id, client_id=client_id)
    chunks = codec.encode_chunks(header, info.request_header_version(version))
    chunks += codec.encode_chunks(body, version)
    return frame(chunks)


def encode_response(body: MessageBase, version: int, correlation_id: int) -> list:
    """Frame + response header (v0 for ApiVersions, else by flexibility) + body, as a chunk list."""
    if body.KIND != "response":
        raise ProtocolError(f"{type(body).__name__} is not a response")
    info = api(body.API_KEY)
    header = ResponseHeader(correlation_id=correlation_id)
    chunks = codec.encode_chunks(header, info.response_header_version(version))
    chunks += codec.encode_chunks(body, version)
    return frame(chunks)


def decode_response(frame_buf, api_key: int, version: int) -> tuple[int, Any]:
    """Decode a response frame (without size prefix) for a request sent at (*api_key*, *version*).

    An ApiVersions response that does not decode at the version asked for is decoded as v0, as Kafka's client
    does (``ApiVersionsResponse.parse``): a server answers a version it does not know with UNSUPPORTED_VERSION at v0
    (KIP-511), while any other error (INVALID_REQUEST for a malformed request) comes at the version asked for.
    """
    info = api(api_key)
    view = memoryview(frame_buf) if not isinstance(frame_buf, memoryview) else frame_buf
    header, pos = codec.decode_from(ResponseHeader, view, 0, None, info.response_header_version(version))
    if api_key == API_VERSIONS_KEY and len(view) - pos >= 2 \
            and wt.INT16.unpack_from(view, pos)[0] == UNSUPPORTED_VERSION:
        version = 0  # other errors (INVALID_REQUEST for a bad client software name) come at the request's version
    body = codec.decode(info.response, view[pos:], version)
    return header.correlation_id, body


class Pending(NamedTuple):
    correlation_id: int
    api_key: int
    version: int
    context: Any


class OutboundRequests:
    """Correlation ids for requests this node sends on one connection (sans-IO).

    ``encode()`` assigns the next id (wrapping at 2**31) and remembers (api key, version, context);
    ``on_response(frame)`` reads the id, decodes the body with the remembered version and returns
    ``(Pending, body)``. A response whose id is not pending raises ProtocolError. ``cancel()`` drops
    one pending entry (timeouts); ``fail_all()`` returns and clears them (connection lost).
    """

    def __init__(self, client_id: str | None = "kraftwire", first_correlation_id: int = 0) -> None:
        self.client_id = client_id
        self._next = first_correlation_id
        self._pending: dict[int, Pending] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def __contains__(self, correlation_id: int) -> bool:
        return correlation_id in self._pending

    def encode(self, body: MessageBase, version: int, context: Any = None,
               header_version: int | None = None) -> tuple[int, list]:
        cid = self._next
        self._next = 0 if cid >= 0x7FFFFFFF else cid + 1
        chunks = encode_request(body, version, cid, self.client_id, header_version)
        self._pending[cid] = Pending(cid, body.API_KEY, version, context)
        return cid, chunks

    def on_response(self, frame_buf) -> tuple[Pending, Any]:
        if len(frame_buf) < 4:
            raise ProtocolError(f"response frame of {len(frame_buf)} bytes is too short for a header")
        cid = _SIZE.unpack_from(frame_buf, 0)[0]
        pending = self._pending.pop(cid, None)
        if pending is None:
            raise ProtocolError(f"response with correlation id {cid} matches no pending request")
        try:
            _, body = decode_response(frame_buf, pending.api_key, pending.version)
        except ProtocolError:
            raise
        return pending, body

    def cancel(self, correlation_id: int) -> Pending | None:
        return self._pending.pop(correlation_id, None)

    def fail_all(self) -> list[Pending]:
        out = list(self._pending.values())
        self._pending.clear()
        return out
