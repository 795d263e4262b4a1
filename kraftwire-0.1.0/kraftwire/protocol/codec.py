"""Generic encode/decode of any declared Kafka message at any version.

Public API
==========

Messages (classes generated from :mod:`kraftwire.protocol.schemas`, see :mod:`kraftwire.protocol.messages`)::

    from kraftwire.protocol import messages as m, codec
    m.get("FetchResponse")                     # the class, by Kafka's name; also m.FetchResponse
    m.api(1) / m.api("Fetch")                  # ApiInfo(name, key, request, response, valid_versions, flexible_from)
    resp = m.FetchResponse(responses=[m.FetchResponse.FetchableTopicResponse(...)])   # keyword-only, defaults filled

Encoding and decoding::

    codec.encode(msg, version) -> bytes
    codec.encode_chunks(msg, version) -> list            # zero-copy: bytes/memoryview chunks, records untouched
    codec.decode(cls_or_name, buf, version, *, exact=True) -> msg
    codec.decode_from(cls_or_name, buf, pos, end, version) -> (msg, next_pos)

``buf`` may be ``bytes``, ``bytearray`` or ``memoryview``. ``records`` fields decode to a ``memoryview``
slice of ``buf`` (``.obj`` is the caller's buffer: nothing is copied) and encode from ``bytes`` or
``memoryview`` as given (the chunk list holds the caller's object). ``exact=True`` rejects trailing bytes.

Errors: every malformed input raises :class:`~kraftwire.errors.ProtocolError` naming the message, field
and byte position; an undeclared version raises :class:`~kraftwire.errors.UnsupportedVersionError`.
Values that cannot be encoded (wrong type, out of range, None in a non-nullable field) also raise
ProtocolError. Fields absent at the requested version are silently left out (Kafka would refuse a
non-default "non-ignorable" one; kraftwire does not police that).

How it works: the first use of a (struct, version) pair generates the Python source of one encoder and
one decoder function from the declarations, with runs of fixed-width fields merged into a single
``struct.Struct``, and compiles it with ``exec``. Nothing is hand-written per API.
"""

from __future__ import annotations

import struct
from typing import Any

from kraftwire.errors import ProtocolError, UnsupportedVersionError
from kraftwire.protocol import wire_types as wt
from kraftwire.protocol.messages import MESSAGES, FieldInfo, MessageBase, StructInfo, get

__all__ = ["encode", "encode_chunks", "decode", "decode_from", "encoder", "decoder"]

_ENC: dict[tuple[int, int], Any] = {}
_DEC: dict[tuple[int, int], Any] = {}
_LOW_LEVEL = (struct.error, TypeError, ValueError, AttributeError, OverflowError, IndexError, UnicodeError)


class _Gen:
    """Accumulates generated source lines and the constants they reference."""

    def __init__(self) -> None:
        self.ns: dict[str, Any] = {"ProtocolError": ProtocolError, "_new": object.__new__}
        self.lines: list[str] = []
        self._n = 0

    def const(self, value: Any, prefix: str = "k") -> str:
        self._n += 1
        name = f"{prefix}{self._n}"
        self.ns[name] = value
        return name

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)


def _flexible(top: type, version: int) -> bool:
    return top.FLEXIBLE_FROM is not None and version >= top.FLEXIBLE_FROM


# ---------------------------------------------------------------------------------------------
# encoder generation
# ---------------------------------------------------------------------------------------------

def _fixed_fmt(f: FieldInfo) -> str | None:
    if f.is_array or f.struct is not None:
        return None
    return wt.FIXED_FORMATS.get(f.type)


def _emit_encode_value(g: _Gen, ind: int, f: FieldInfo, expr: str, version: int, flex: bool,
                       what: str, a: str, x: str, path: str) -> None:
    """Emit code that writes field *f* whose value is in local *expr*."""
    compact = flex and not f.classic_string
    nullable = f.is_nullable(version)
    if f.is_array:
        g.emit(ind, f"if {expr} is None:")
        if nullable:
            null = g.const(b"\x00" if compact else wt.INT32.pack(-1))
            g.emit(ind + 1, f"{a}({null})")
        else:
            g.emit(ind + 1, f"raise ProtocolError({what + ': None in a non-nullable array'!r})")
        g.emit(ind, "else:")
        ind += 1
        g.emit(ind, f"{a}({g.const(wt.uvarint_bytes) if compact else g.const(wt.INT32.pack)}(len({expr}){' + 1' if compact else ''}))")
        fmt = _fixed_fmt(f)
        if fmt:
            g.emit(ind, f"{a}({g.const(struct.pack)}('>%d{fmt}' % len({expr}), *{expr}))")
            return
        g.emit(ind, f"for e_{ind} in {expr}:")
        _emit_encode_item(g, ind + 1, f, f"e_{ind}", version, flex, what, a, x, path)
        return
    _emit_encode_item(g, ind, f, expr, version, flex, what, a, x, path)


def _emit_encode_item(g, ind, f, expr, version, flex, what, a, x, path):
    compact = flex and not f.classic_string
    nullable = f.is_nullable(version)
    w = repr(what)
    if f.struct is not None:
        fn = _encoder_for(f.struct, version, flex, f"{path}.{f.struct.name}")
        if nullable and not f.is_array:  # a nullable struct: int8 -1 for null, 1 before the struct
            g.emit(ind, f"if {expr} is None:")
            g.emit(ind + 1, f"{a}(b'\\xff')")
            g.emit(ind, "else:")
            g.emit(ind + 1, f"{a}(b'\\x01')")
            g.emit(ind + 1, f"{g.const(fn, 'E')}({expr}, {a}, {x})")
            return
        g.emit(ind, f"{g.const(fn, 'E')}({expr}, {a}, {x})")
    elif f.type in wt.FIXED_FORMATS:
        g.emit(ind, f"{a}({g.const(struct.Struct('>' + wt.FIXED_FORMATS[f.type]).pack)}({expr}))")
    elif f.type == "string":
        g.emit(ind, f"{g.const(wt.string_writer(compact, nullable))}({a}, {expr}, {w})")
    elif f.type in ("bytes", "records"):
        g.emit(ind, f"{g.const(wt.bytes_writer(compact, nullable))}({a}, {expr}, {w})")
    elif f.type == "uuid":
        g.emit(ind, f"{a}({expr}.bytes)")
    else:  # pragma: no cover - declarations are validated at import
        raise ProtocolError(f"{what}: no encoder for type {f.type}")


def _layout(info: StructInfo, version: int, flex: bool):
    """The fields written in order at ``version``, and the tagged ones (by tag) — one rule for encoder and decoder."""
    present = [f for f in info.fields if f.present(version) and not (flex and f.is_tagged(version))]
    tagged = sorted((f for f in info.fields if flex and f.is_tagged(version)), key=lambda f: f.tag)
    return present, tagged


def _encoder_for(info: StructInfo, version: int, flex: bool, path: str):
    key = (id(info), version * 2 + flex)
    fn = _ENC.get(key)
    if fn is not None:
        return fn
    g = _Gen()
    g.emit(0, "def enc(o, a, x):")
    present, tagged = _layout(info, version, flex)
    i = 0
    while i < len(present):
        f = present[i]
        if _fixed_fmt(f):
            run = [f]
            while i + len(run) < len(present) and _fixed_fmt(present[i + len(run)]):
                run.append(present[i + len(run)])
            packer = struct.Struct(">" + "".join(_fixed_fmt(r) for r in run)).pack
            args = ", ".join(f"o.{r.attr}" for r in run)
            g.emit(1, f"a({g.const(packer, 'P')}({args}))")
            i += len(run)
            continue
        g.emit(1, f"v = o.{f.attr}")
        _emit_encode_value(g, 1, f, "v", version, flex, f"{path}.{f.attr}", "a", "x", path)
        i += 1
    if flex:
        g.emit(1, "t = None")
        for f in tagged:
            g.emit(1, f"v = o.{f.attr}")
            dflt = f.make_default()
            cond = "v is not None" if dflt is None else f"v != {g.const(dflt, 'D')}"
            g.emit(1, f"if {cond}:")
            g.emit(2, "s = []")
            _emit_encode_value(g, 2, f, "v", version, flex, f"{path}.{f.attr}", "s.append", "s.extend", path)
            g.emit(2, "if t is None: t = []")
            g.emit(2, f"t.append(({f.tag}, s))")
        g.emit(1, "u = o._unknown_tags")
        g.emit(1, "if u:")
        g.emit(2, "if t is None: t = []")
        g.emit(2, "t.extend((k, [b]) for k, b in u.items())")
        g.emit(1, "if t is None:")
        g.emit(2, "a(b'\\x00')")
        g.emit(1, "else:")
        g.emit(2, "t.sort(key=_first)")
        g.emit(2, f"{g.const(wt.write_tagged)}(a, x, t)")
        g.ns["_first"] = lambda item: item[0]
    if len(g.lines) == 1:
        g.emit(1, "pass")
    exec(compile("\n".join(g.lines) + "\n", f"<kraftwire encode {path} v{version}>", "exec"), g.ns)
    fn = g.ns["enc"]
    _ENC[key] = fn
    return fn


# ---------------------------------------------------------------------------------------------
# decoder generation
# ---------------------------------------------------------------------------------------------

def _reader_for_item(f: FieldInfo, version: int, flex: bool, path: str):
    compact = flex and not f.classic_string
    nullable = f.is_nullable(version)
    if f.struct is not None:
        return _decoder_for(f.struct, version, flex, f"{path}.{f.struct.name}"), True
    if f.type in wt.FIXED_FORMATS:
        return wt.reader_for_fixed(struct.Struct(">" + wt.FIXED_FORMATS[f.type])), False
    if f.type == "string":
        return wt.string_reader(compact, nullable), False
    if f.type == "bytes":
        return wt.bytes_reader(compact, nullable, False), False
    if f.type == "records":
        return wt.bytes_reader(compact, nullable, True), False
    if f.type == "uuid":
        return wt.read_uuid, False
    raise ProtocolError(f"{path}.{f.attr}: no decoder for type {f.type}")  # pragma: no cover


def _emit_decode_value(g: _Gen, ind: int, f: FieldInfo, target: str, version: int, flex: bool,
                       what: str, end: str, path: str) -> None:
    """Emit code that reads field *f* into *target* (an assignable expression), advancing ``pos``."""
    w = repr(what)
    reader, is_struct = _reader_for_item(f, version, flex, path)
    r = g.const(reader, "R")
    call = f"{r}(buf, pos, {end})" if is_struct else f"{r}(buf, pos, {end}, {w})"
    compact = flex and not f.classic_string
    if not f.is_array:
        if f.type == "string":
            _emit_string_fast_path(g, ind, target, compact, call, end)
        elif is_struct and f.is_nullable(version):  # int8 -1: null; 1: the struct follows
            g.emit(ind, f"if pos >= {end}: raise {g.const(wt.truncated)}({w}, pos, 1, {end})")
            g.emit(ind, "m = buf[pos]")
            g.emit(ind, "pos += 1")
            g.emit(ind, "if m == 255:")
            g.emit(ind + 1, f"{target} = None")
            g.emit(ind, "elif m == 1:")
            g.emit(ind + 1, f"{target}, pos = {call}")
            g.emit(ind, "else:")
            g.emit(ind + 1, f"raise {g.const(wt.fail)}({w}, pos - 1, 'a nullable struct marker must be -1 or 1, not %d' % m)")
        else:
            g.emit(ind, f"{target}, pos = {call}")
        return
    # fast path: a one-byte compact count; anything else (null, multi-byte, classic int32) goes to the checker
    if compact:
        g.emit(ind, f"c = buf[pos] if pos < {end} else 0")
        g.emit(ind, f"if 0 < c < 128 and c <= {end} - pos:")
        g.emit(ind + 1, "n = c - 1")
        g.emit(ind + 1, "pos += 1")
        g.emit(ind, "else:")
        g.emit(ind + 1, f"n, pos = {g.const(wt.read_array_length)}(buf, pos, {end}, {w}, True, {f.is_nullable(version)})")
    else:
        g.emit(ind, f"n, pos = {g.const(wt.read_array_length)}(buf, pos, {end}, {w}, False, {f.is_nullable(version)})")
    g.emit(ind, "if n < 0:")
    g.emit(ind + 1, f"{target} = None")
    g.emit(ind, "else:")
    fmt = _fixed_fmt(f)
    if fmt:
        size = struct.calcsize(">" + fmt)
        g.emit(ind + 1, f"if n * {size} > {end} - pos: raise {g.const(wt.truncated)}({w}, pos, n * {size}, {end})")
        g.emit(ind + 1, f"{target} = list({g.const(struct.unpack_from)}('>%d{fmt}' % n, buf, pos))")
        g.emit(ind + 1, f"pos += n * {size}")
        return
    g.emit(ind + 1, "l = []")
    g.emit(ind + 1, "ap = l.append")
    if f.type == "string":
        g.emit(ind + 1, "for _ in range(n):")
        _emit_string_fast_path(g, ind + 2, "e", compact, call, end)
        g.emit(ind + 2, "ap(e)")
    else:
        g.emit(ind + 1, "for _ in range(n):")
        g.emit(ind + 2, f"e, pos = {call}")
        g.emit(ind + 2, "ap(e)")
    g.emit(ind + 1, f"{target} = l")


def _emit_string_fast_path(g: _Gen, ind: int, target: str, compact: bool, call: str, end: str) -> None:
    """Inline the common case (short, non-null, in bounds); the checked reader handles everything else.

    Invalid UTF-8 on the fast path surfaces as UnicodeDecodeError, which decode_from turns into a
    ProtocolError ("string is not valid UTF-8").
    """
    if compact:
        g.emit(ind, f"c = buf[pos] if pos < {end} else 0")
        g.emit(ind, f"if 0 < c < 128 and pos + c <= {end}:")
        g.emit(ind + 1, f"{target} = str(buf[pos + 1:pos + c], 'utf-8')")
        g.emit(ind + 1, "pos += c")
    else:
        g.emit(ind, f"c = (buf[pos] << 8 | buf[pos + 1]) if pos + 1 < {end} else 0x8000")
        g.emit(ind, f"if c < 0x8000 and pos + 2 + c <= {end}:")
        g.emit(ind + 1, f"{target} = str(buf[pos + 2:pos + 2 + c], 'utf-8')")
        g.emit(ind + 1, "pos += 2 + c")
    g.emit(ind, "else:")
    g.emit(ind + 1, f"{target}, pos = {call}")


def _default_expr(g: _Gen, f: FieldInfo) -> str:
    d = f.make_default()
    if f.is_array and d is not None:
        return "[]"
    if f.struct is not None and not f.is_array:
        return "None" if f.null_struct else f"{g.const(f.struct.cls, 'C')}()"
    return g.const(d, "D")


def _decoder_for(info: StructInfo, version: int, flex: bool, path: str):
    key = (id(info), version * 2 + flex)
    fn = _DEC.get(key)
    if fn is not None:
        return fn
    g = _Gen()
    g.emit(0, "def dec(buf, pos, end):")
    g.emit(1, f"o = _new({g.const(info.cls, 'C')})")
    present, tagged = _layout(info, version, flex)
    absent = [f for f in info.fields if f not in present and f not in tagged]
    i = 0
    while i < len(present):
        f = present[i]
        if _fixed_fmt(f):
            run = [f]
            while i + len(run) < len(present) and _fixed_fmt(present[i + len(run)]):
                run.append(present[i + len(run)])
            st = struct.Struct(">" + "".join(_fixed_fmt(r) for r in run))
            names = ", ".join(r.attr for r in run)
            g.emit(1, f"if end - pos < {st.size}: raise {g.const(wt.truncated)}({path + '.' + names!r}, pos, {st.size}, end)")
            targets = ", ".join(f"o.{r.attr}" for r in run)
            g.emit(1, f"{targets}{',' if len(run) == 1 else ''} = {g.const(st.unpack_from, 'U')}(buf, pos)")
            g.emit(1, f"pos += {st.size}")
            i += len(run)
            continue
        _emit_decode_value(g, 1, f, f"o.{f.attr}", version, flex, f"{path}.{f.attr}", "end", path)
        i += 1
    for f in absent + tagged:
        g.emit(1, f"o.{f.attr} = {_default_expr(g, f)}")
    if flex:
        what = f"{path} tagged fields"
        g.emit(1, "u = None")
        g.emit(1, f"n, pos = {g.const(wt.read_uvarint)}(buf, pos, end, {what!r})")
        g.emit(1, f"if n > end - pos: raise {g.const(wt.fail)}({what!r}, pos, 'tag count %d exceeds the remaining bytes' % n)")
        g.emit(1, "for _ in range(n):")
        g.emit(2, f"tag, size, pos = {g.const(wt.read_tag_header)}(buf, pos, end, {what!r})")
        g.emit(2, "stop = pos + size")
        kw = "if"
        for f in tagged:
            g.emit(2, f"{kw} tag == {f.tag}:")
            _emit_decode_value(g, 3, f, f"o.{f.attr}", version, flex, f"{path}.{f.attr}", "stop", path)
            g.emit(3, f"if pos != stop: raise {g.const(wt.fail)}({path + '.' + f.attr!r}, pos, 'tagged field does not fill its declared size')")
            kw = "elif"
        g.emit(2, "else:" if tagged else "if True:")
        g.emit(3, "if u is None: u = {}")
        g.emit(3, "u[tag] = bytes(buf[pos:stop])")
        g.emit(3, "pos = stop")
        g.emit(1, "o._unknown_tags = u")
    else:
        g.emit(1, "o._unknown_tags = None")
    g.emit(1, "return o, pos")
    exec(compile("\n".join(g.lines) + "\n", f"<kraftwire decode {path} v{version}>", "exec"), g.ns)
    fn = g.ns["dec"]
    _DEC[key] = fn
    return fn


# ---------------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------------

def _check_version(cls: type, version: int) -> None:
    lo, hi = cls.VALID_VERSIONS
    if not (type(version) is int and lo <= version <= hi):
        raise UnsupportedVersionError(
            cls.API_KEY if cls.API_KEY is not None else -1, version,
            f"{cls.NAME} has no version {version!r} (valid: {lo}-{hi})")


def encoder(cls: type, version: int):
    """The compiled ``enc(msg, append, extend)`` of *cls* at *version* (for callers batching output)."""
    _check_version(cls, version)
    return _encoder_for(cls._info, version, _flexible(cls, version), cls.NAME)


def decoder(cls: type, version: int):
    """The compiled ``dec(buf: memoryview, pos, end) -> (msg, pos)`` of *cls* at *version*."""
    _check_version(cls, version)
    return _decoder_for(cls._info, version, _flexible(cls, version), cls.NAME)


_ENC_BY_CLASS: dict[tuple[type, int], Any] = {}
_DEC_BY_CLASS: dict[tuple[type, int], Any] = {}


def encode_chunks(msg: MessageBase, version: int) -> list:
    """Encode *msg* at *version* into a list of ``bytes``/``memoryview`` chunks (records not copied)."""
    cls = type(msg)
    fn = _ENC_BY_CLASS.get((cls, version))
    if fn is None:
        if not isinstance(msg, MessageBase):
            raise ProtocolError(f"not a message: {cls.__name__}")
        fn = _ENC_BY_CLASS[(cls, version)] = encoder(cls, version)
    out: list = []
    try:
        fn(msg, out.append, out.extend)
    except ProtocolError:
        raise
    except _LOW_LEVEL as exc:
        raise ProtocolError(f"cannot encode {cls.NAME} v{version}: {type(exc).__name__}: {exc}") from exc
    return out


def encode(msg: MessageBase, version: int) -> bytes:
    """Encode *msg* at *version* to ``bytes``."""
    return b"".join(encode_chunks(msg, version))


def _as_view(buf) -> memoryview:
    if type(buf) is memoryview:
        return buf if buf.format == "B" and buf.ndim == 1 else buf.cast("B")
    try:
        return memoryview(buf)
    except TypeError:
        raise ProtocolError(f"cannot decode from {type(buf).__name__}") from None


def decode_from(cls: type | str, buf, pos: int, end: int | None, version: int):
    """Decode one *cls* at *version* from ``buf[pos:end]``; returns ``(msg, next_pos)``."""
    if isinstance(cls, str):
        cls = get(cls)
    fn = _DEC_BY_CLASS.get((cls, version))
    if fn is None:
        fn = _DEC_BY_CLASS[(cls, version)] = decoder(cls, version)
    view = buf if type(buf) is memoryview and buf.format == "B" else _as_view(buf)
    if end is None:
        end = len(view)
    try:
        return fn(view, pos, end)
    except ProtocolError:
        raise
    except RecursionError:
        raise ProtocolError(f"{cls.NAME} v{version}: nesting too deep") from None
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"{cls.NAME} v{version}: a string is not valid UTF-8 ({exc.reason})") from None
    except _LOW_LEVEL as exc:
        raise ProtocolError(f"malformed {cls.NAME} v{version}: {type(exc).__name__}: {exc}") from exc


def decode(cls: type | str, buf, version: int, *, exact: bool = True):
    """Decode a whole *cls* at *version* from *buf*; with ``exact``, trailing bytes are an error."""
    view = _as_view(buf)
    msg, pos = decode_from(cls, view, 0, len(view), version)
    if exact and pos != len(view):
        name = cls if isinstance(cls, str) else cls.NAME
        raise ProtocolError(f"{name} v{version}: {len(view) - pos} unexpected trailing bytes at byte {pos}")
    return msg


def warm_up(names: list[str] | None = None) -> None:
    """Compile every (message, version) codec now instead of at first use (e.g. at server start)."""
    for name in names or list(MESSAGES):
        cls = MESSAGES[name]
        lo, hi = cls.VALID_VERSIONS
        for v in range(lo, hi + 1):
            encoder(cls, v)
            decoder(cls, v)
