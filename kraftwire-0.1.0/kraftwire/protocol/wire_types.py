"""Kafka wire primitives: fixed-width integers, varints, strings, bytes, uuids, records, tagged fields.

Conventions (the generated codecs in :mod:`kraftwire.protocol.codec` call these):

* A *reader* is ``read_x(buf, pos, end, what) -> (value, new_pos)``. ``buf`` is a ``memoryview`` of
  the whole frame, ``end`` bounds the readable region, ``what`` names the field for error messages.
  Every length is checked against ``end - pos`` *before* anything is sliced or allocated; every
  failure is a :class:`~kraftwire.errors.ProtocolError` naming the field and the position.
* A *writer* is ``write_x(append, value, what)``: it appends ``bytes``/``memoryview`` chunks through
  ``append`` (a ``list.append``). Chunks are never joined here, so a 1 MB records payload stays the
  caller's own object until the transport writes it.

Layouts (all big-endian):

==================  =====================================================================
int8/16/32/64       two's complement, 1/2/4/8 bytes; uint16/uint32 unsigned; float64 IEEE 754
bool                int8, 0 = false, anything else decodes as true (Kafka's reader)
unsigned varint     7 bits per byte, least significant group first, high bit = continuation;
                    at most 5 bytes (32 bits) — longer, or bits beyond 32, is malformed
varint / varlong    zig-zag ((n << 1) ^ (n >> 63)) then unsigned varint (varlong: 10 bytes, 64 bits)
string              int16 length (-1 = null) + UTF-8, at most 32,767 bytes
compact string      unsigned varint (length + 1; 0 = null) + UTF-8, at most 32,767 bytes too
bytes / records     int32 length (-1 = null) + data;   compact: unsigned varint (length + 1)
array               int32 count (-1 = null) + items;   compact: unsigned varint (count + 1)
uuid                16 bytes (most significant half first)
tagged fields       unsigned varint count, then count x (uvarint tag, uvarint size, size bytes)
==================  =====================================================================

Every string holds at most :data:`MAX_STRING_BYTES` (32,767) bytes of UTF-8, the compact form included: Kafka's
generated readers refuse a longer one whatever its length prefix could express, and its writers refuse to write one,
so a peer can never make kraftwire hold (and later echo into an ``int16``-length field) a string no Kafka would.

``records`` values decode to a ``memoryview`` slice of the input (zero copy); ``bytes`` values decode
to ``bytes``. Encoders accept ``bytes``, ``bytearray`` or ``memoryview`` for both.

Unknown tagged fields are *preserved*: the decoder keeps them as ``{tag: bytes}`` on the decoded
object (``_unknown_tags``) and the encoder writes them back in tag order, so a frame from a newer peer
re-encodes byte for byte. Set ``_unknown_tags = None`` on an object to drop them.
"""

from __future__ import annotations

import struct
import uuid as _uuid

from kraftwire.errors import ProtocolError

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
UINT16 = struct.Struct(">H")
UINT32 = struct.Struct(">I")
FLOAT64 = struct.Struct(">d")

#: struct format character of each fixed-width type, used to merge runs of fixed fields.
FIXED_FORMATS = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "uint32": "I",
                 "float64": "d", "bool": "?"}

#: the most UTF-8 bytes a protocol string may hold, in every encoding (Kafka's readers and writers check ``0x7fff``)
MAX_STRING_BYTES = 0x7FFF

_NULL16 = INT16.pack(-1)
_NULL32 = INT32.pack(-1)
_UUID = _uuid.UUID
ZERO_UUID = _UUID(int=0)


def fail(what: str, pos: int, problem: str) -> ProtocolError:
    return ProtocolError(f"{what}: {problem} at byte {pos}")


def truncated(what: str, pos: int, need: int, end: int) -> ProtocolError:
    return fail(what, pos, f"needs {need} bytes but only {max(end - pos, 0)} remain (truncated)")


# ---------------------------------------------------------------------------------------------
# varints
# ---------------------------------------------------------------------------------------------

_UVARINT_CACHE = [bytes([i]) for i in range(128)]


def uvarint_bytes(n: int) -> bytes:
    if 0 <= n < 128:
        return _UVARINT_CACHE[n]
    if n < 0 or n > 0xFFFFFFFF:
        raise ProtocolError(f"unsigned varint out of range: {n}")
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def uvarlong_bytes(n: int) -> bytes:
    if 0 <= n < 128:
        return _UVARINT_CACHE[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def varint_bytes(n: int) -> bytes:
    if not -0x80000000 <= n <= 0x7FFFFFFF:
        raise ProtocolError(f"varint out of int32 range: {n}")
    return uvarlong_bytes(((n << 1) ^ (n >> 31)) & 0xFFFFFFFF)


def varlong_bytes(n: int) -> bytes:
    if not -0x8000000000000000 <= n <= 0x7FFFFFFFFFFFFFFF:
        raise ProtocolError(f"varlong out of int64 range: {n}")
    return uvarlong_bytes(((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF)


def read_uvarint(buf, pos: int, end: int, what: str, max_bytes: int = 5) -> tuple[int, int]:
    """Unsigned varint of at most 32 bits (``max_bytes=10`` for 64)."""
    if pos < end:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
    result = 0
    shift = 0
    start = pos
    limit = 32 if max_bytes == 5 else 64
    while True:
        if pos >= end:
            raise fail(what, start, "varint runs past the end of the data (truncated)")
        if pos - start >= max_bytes:
            raise fail(what, start, f"malformed varint: longer than {max_bytes} bytes")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    if result >> limit:
        raise fail(what, start, f"malformed varint: more than {limit} bits")
    return result, pos


def read_varint(buf, pos, end, what):
    n, pos = read_uvarint(buf, pos, end, what)
    return (n >> 1) ^ -(n & 1), pos


def read_varlong(buf, pos, end, what):
    n, pos = read_uvarint(buf, pos, end, what, 10)
    return (n >> 1) ^ -(n & 1), pos


# ---------------------------------------------------------------------------------------------
# single fixed-width values (runs of them are merged into one struct by the codec)
# ---------------------------------------------------------------------------------------------

def reader_for_fixed(st: struct.Struct):
    size = st.size
    unpack = st.unpack_from

    def read(buf, pos, end, what):
        if end - pos < size:
            raise truncated(what, pos, size, end)
        return unpack(buf, pos)[0], pos + size

    return read


#: uuid.UUID objects by their 16 bytes. Decoded messages repeat a few ids very often (a topic id per partition, a
#: log directory per replica, the metadata topic's id in every Raft Fetch) and building a UUID costs ~1.7 us while a
#: lookup costs ~0.1 us; UUIDs are immutable, so sharing one object is safe. Bounded: cleared when it is full.
_UUID_CACHE: dict[bytes, _UUID] = {}
_UUID_CACHE_MAX = 1 << 16


def read_uuid(buf, pos, end, what):
    if end - pos < 16:
        raise truncated(what, pos, 16, end)
    raw = bytes(buf[pos:pos + 16])
    value = _UUID_CACHE.get(raw)
    if value is None:
        if len(_UUID_CACHE) >= _UUID_CACHE_MAX:
            _UUID_CACHE.clear()
        value = _UUID_CACHE[raw] = _UUID(bytes=raw)
    return value, pos + 16


def write_uuid(append, value, what):
    try:
        append(value.bytes)
    except AttributeError:
        raise ProtocolError(f"{what}: expected a uuid.UUID, got {type(value).__name__}") from None


# ---------------------------------------------------------------------------------------------
# lengths
# ---------------------------------------------------------------------------------------------

def _length(buf, pos, end, what, compact: bool, wide: bool, most: int = 0x7FFFFFFF) -> tuple[int, int]:
    """Return (length, pos); -1 means null. Checks the length against ``most`` (the limit of the type, whatever the
    bytes that follow; the default lets any length through) and then against the remaining bytes.

    Lengths are read as Kafka's Java readers read them, as an ``int``: any negative length is null (a nullable field
    takes it as one, a non-nullable one refuses it), and a compact length is the varint as a signed 32-bit value
    minus one, wrapping: above ``0x80000000`` the varint is a negative int (``0xffffffff`` is -1, less one -2:
    null), while ``0x80000000`` less one wraps to 2**31 - 1, which is what ``varint - 1`` gives here too."""
    if compact:
        n, pos = read_uvarint(buf, pos, end, what)
        n -= 1
        if n > 0x7FFFFFFF:
            n = -1
    elif wide:
        if end - pos < 4:
            raise truncated(what, pos, 4, end)
        n = INT32.unpack_from(buf, pos)[0]
        pos += 4
    else:
        if end - pos < 2:
            raise truncated(what, pos, 2, end)
        n = INT16.unpack_from(buf, pos)[0]
        pos += 2
    if n < 0:
        return -1, pos
    if n > most:
        raise fail(what, pos, f"invalid length {n}: a string holds at most {most} bytes")
    if n > end - pos:
        raise fail(what, pos, f"length {n} runs past the end of the data ({end - pos} bytes remain)")
    return n, pos


def read_array_length(buf, pos, end, what, compact, nullable):
    n, pos = _length(buf, pos, end, what, compact, True)
    if n < 0 and not nullable:
        raise fail(what, pos, "null array in a non-nullable field")
    return n, pos


def write_array_length(append, n, compact):
    append(uvarint_bytes(n + 1) if compact else INT32.pack(n))


# ---------------------------------------------------------------------------------------------
# strings, bytes, records: one factory per (compact, nullable) combination
# ---------------------------------------------------------------------------------------------

def string_reader(compact: bool, nullable: bool):
    def read(buf, pos, end, what):
        n, pos = _length(buf, pos, end, what, compact, False, MAX_STRING_BYTES)
        if n < 0:
            if not nullable:
                raise fail(what, pos, "null string in a non-nullable field")
            return None, pos
        try:
            return str(buf[pos:pos + n], "utf-8"), pos + n
        except UnicodeDecodeError:
            raise fail(what, pos, "string is not valid UTF-8") from None

    return read


def string_writer(compact: bool, nullable: bool):
    null = b"\x00" if compact else _NULL16
    pack16 = INT16.pack

    def write(append, value, what):
        if value is None:
            if not nullable:
                raise ProtocolError(f"{what}: None in a non-nullable string field")
            append(null)
            return
        try:
            data = value.encode("utf-8")
        except AttributeError:
            raise ProtocolError(f"{what}: expected str, got {type(value).__name__}") from None
        n = len(data)
        if n > MAX_STRING_BYTES:
            raise ProtocolError(f"{what}: a string of {n} bytes is too long to be written (at most "
                                f"{MAX_STRING_BYTES})")
        append(uvarint_bytes(n + 1) if compact else pack16(n))
        append(data)

    return write


def bytes_reader(compact: bool, nullable: bool, zero_copy: bool):
    """``zero_copy`` (records fields) returns a memoryview slice of the input; otherwise ``bytes``."""

    def read(buf, pos, end, what):
        n, pos = _length(buf, pos, end, what, compact, True)
        if n < 0:
            if not nullable:
                raise fail(what, pos, "null bytes in a non-nullable field")
            return None, pos
        chunk = buf[pos:pos + n]
        return (chunk if zero_copy else bytes(chunk)), pos + n

    return read


class ExternalBytes:
    """Bytes a ``records`` field carries without holding them (a segment file region sent with ``sendfile``):
    the encoder writes its length and passes the object through as a chunk of its own; the connection sends it."""

    __slots__ = ()

    def __len__(self) -> int:  # pragma: no cover - subclasses say
        raise NotImplementedError


def bytes_writer(compact: bool, nullable: bool):
    null = b"\x00" if compact else _NULL32
    pack32 = INT32.pack

    def write(append, value, what):
        if value is None:
            if not nullable:
                raise ProtocolError(f"{what}: None in a non-nullable bytes field")
            append(null)
            return
        if type(value) is memoryview:
            if value.format != "B" or value.ndim != 1:
                value = value.cast("B")
            n = value.nbytes
        elif isinstance(value, (bytes, bytearray, ExternalBytes)):
            n = len(value)
        else:
            raise ProtocolError(f"{what}: expected bytes or memoryview, got {type(value).__name__}")
        append(uvarint_bytes(n + 1) if compact else pack32(n))
        if n:
            append(value)

    return write


# ---------------------------------------------------------------------------------------------
# tagged fields
# ---------------------------------------------------------------------------------------------

def read_tag_header(buf, pos, end, what) -> tuple[int, int, int]:
    """Read one (tag, size) pair; returns (tag, size, pos) with size checked against the data."""
    tag, pos = read_uvarint(buf, pos, end, what + " tag")
    size, pos = read_uvarint(buf, pos, end, what + " tag size")
    if size > end - pos:
        raise fail(what, pos, f"tagged field {tag} of {size} bytes runs past the end of the data")
    return tag, size, pos


def write_tagged(append, extend, items):
    """Write sorted ``(tag, chunks)`` pairs as a tagged-field section."""
    append(uvarint_bytes(len(items)))
    for tag, chunks in items:
        append(uvarint_bytes(tag))
        append(uvarint_bytes(sum(map(len, chunks))))
        extend(chunks)
