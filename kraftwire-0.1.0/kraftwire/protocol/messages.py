"""Message classes generated at import from :mod:`kraftwire.protocol.schemas`, and the API table.

Every declared message (and every struct inside it) becomes a small class with ``__slots__``, a
keyword-only constructor whose defaults come from the declaration, ``__eq__``/``__repr__`` and
``to_dict()``. Struct classes hang off their message class under Kafka's struct name::

    from kraftwire.protocol import messages as m
    req = m.FetchRequest(replica_id=-1, max_wait_ms=500, topics=[
        m.FetchRequest.FetchTopic(topic_id=METADATA_TOPIC_ID, partitions=[
            m.FetchRequest.FetchPartition(partition=0, fetch_offset=10, last_fetched_epoch=3)])])

Every message is also a module attribute (``m.VoteRequest``) and reachable by name (``m.get("VoteRequest")``);
``m.api(52)`` / ``m.api("Vote")`` give the :class:`ApiInfo` of a request/response pair.

Attribute names are the snake_case of Kafka's field names (``KRaftVersion`` -> ``kraft_version``).
Fields absent at the version being encoded are ignored; on decode they hold their defaults.
"""

from __future__ import annotations

import keyword
import re
import uuid as _uuid
from typing import Any, NamedTuple

from kraftwire.errors import ProtocolError
from kraftwire.protocol import schemas

INF = 0x7FFF


def parse_versions(text: str | None) -> tuple[int, int] | None:
    """Kafka's version notation -> inclusive (lo, hi); "none" -> None."""
    if text is None or text == "none":
        return None
    if text.endswith("+"):
        return int(text[:-1]), INF
    if "-" in text:
        lo, hi = text.split("-")
        return int(lo), int(hi)
    return int(text), int(text)


def snake(name: str) -> str:
    """``ClusterId`` -> ``cluster_id``, ``KRaftVersion`` -> ``kraft_version``; Python keywords get a ``_`` suffix."""
    name = name.replace("KRaft", "Kraft")
    out = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()
    return out + "_" if keyword.iskeyword(out) or out in ("self", "_unknown_tags") else out


PRIMITIVE_DEFAULTS: dict[str, Any] = {
    "int8": 0, "int16": 0, "int32": 0, "int64": 0, "uint16": 0, "uint32": 0, "float64": 0.0,
    "bool": False, "string": "", "bytes": b"", "uuid": _uuid.UUID(int=0), "records": None,
}
_IMMUTABLE = (int, float, bool, str, bytes, _uuid.UUID, type(None))


def _in(rng: tuple[int, int] | None, version: int) -> bool:
    return rng is not None and rng[0] <= version <= rng[1]


class FieldInfo:
    """One declared field, with its version ranges parsed."""

    __slots__ = ("name", "attr", "type", "is_array", "versions", "nullable", "tag", "tagged",
                 "classic_string", "default", "struct", "null_struct")

    def __init__(self, f: schemas.Field, owner: str, structs: dict):
        self.name = f.name
        self.attr = snake(f.name)
        t = f.type
        self.is_array = t.startswith("[]")
        base = t[2:] if self.is_array else t
        self.versions = parse_versions(f.versions)
        self.nullable = parse_versions(f.nullable)
        self.tag = f.tag
        self.tagged = parse_versions(f.tagged) if f.tag is not None else None
        self.classic_string = f.flexible == "none"
        self.struct: StructInfo | None = None
        if f.fields is not None:
            key = (base, f.fields)
            if key not in structs:
                structs[key] = StructInfo(base, f.fields, owner, structs)
            self.struct = structs[key]
            self.type = "struct"
        else:
            if base not in PRIMITIVE_DEFAULTS:
                raise ProtocolError(f"{owner}.{f.name}: unknown type {t!r}")
            self.type = base
        #: a nullable struct whose default is null (e.g. a tagged ``ClassicMemberMetadata``): absent means None
        self.null_struct = self.struct is not None and not self.is_array and f.default is None
        if f.default is not schemas.UNSET:
            self.default = f.default
        elif self.is_array:
            self.default = []
        elif self.struct is not None:
            self.default = None  # marker: a fresh struct of defaults
        elif self.type == "records" and self.nullable is None:
            self.default = b""  # a non-nullable records field starts empty rather than null
        else:
            self.default = PRIMITIVE_DEFAULTS[self.type]

    def present(self, version: int) -> bool:
        return _in(self.versions, version)

    def is_nullable(self, version: int) -> bool:
        return _in(self.nullable, version)

    def is_tagged(self, version: int) -> bool:
        return self.tag is not None and _in(self.tagged, version)

    def make_default(self):
        if self.is_array:
            return None if self.default is None else []
        if self.struct is not None:
            if self.null_struct:
                return None
            return self.struct.cls() if self.default is None else self.default
        return self.default

    def __repr__(self) -> str:
        return f"FieldInfo({self.name!r}, {self.type!r}{'[]' if self.is_array else ''}, {self.versions})"


class StructInfo:
    """A struct (or a whole message): its fields and generated class."""

    def __init__(self, name: str, fields: tuple, owner: str, structs: dict):
        self.name = name
        self.fields = tuple(FieldInfo(f, f"{owner}.{name}" if owner != name else name, structs) for f in fields)
        self.cls: type = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StructInfo({self.name!r})"


class Base:
    """Behaviour shared by every generated message and struct class."""

    __slots__ = ()
    _info: StructInfo

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f.attr) == getattr(other, f.attr) for f in self._info.fields)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{f.attr}={getattr(self, f.attr)!r}" for f in self._info.fields)
        return f"{type(self).__qualname__}({inner})"

    def to_dict(self) -> dict:
        """Plain nested dicts/lists (memoryviews become bytes), e.g. for JSON-ish rendering."""

        def conv(v):
            if isinstance(v, Base):
                return v.to_dict()
            if isinstance(v, list):
                return [conv(x) for x in v]
            if isinstance(v, memoryview):
                return bytes(v)
            return v

        return {f.attr: conv(getattr(self, f.attr)) for f in self._info.fields}


class MessageBase(Base):
    __slots__ = ()
    NAME: str
    KIND: str
    API_KEY: int | None
    VALID_VERSIONS: tuple[int, int]
    FLEXIBLE_FROM: int | None
    KRAFTWIRE_SPECIFIC: bool

    @classmethod
    def is_flexible(cls, version: int) -> bool:
        return cls.FLEXIBLE_FROM is not None and version >= cls.FLEXIBLE_FROM


_MISSING = object()


def _make_class(info: StructInfo, qualname: str, base: type) -> type:
    attrs = [f.attr for f in info.fields]
    ns: dict[str, Any] = {"_M": _MISSING}
    params, body = [], []
    for i, f in enumerate(info.fields):
        d = f.make_default() if f.struct is None else None
        if f.struct is None and isinstance(d, _IMMUTABLE):
            ns[f"d{i}"] = d
            params.append(f"{f.attr}=d{i}")
            body.append(f"    self.{f.attr} = {f.attr}")
        else:
            ns[f"f{i}"] = f
            params.append(f"{f.attr}=_M")
            body.append(f"    self.{f.attr} = f{i}.make_default() if {f.attr} is _M else {f.attr}")
    body.append("    self._unknown_tags = _unknown_tags")
    params.append("_unknown_tags=None")
    src = f"def __init__(self, *, {', '.join(params)}):\n" + "\n".join(body) + "\n"
    # __eq__ compares the declared fields as one tuple (the encoder compares tagged structs to defaults)
    own = "".join(f"self.{a}, " for a in attrs)
    other = "".join(f"other.{a}, " for a in attrs)
    src += ("def __eq__(self, other):\n"
            "    if type(other) is not type(self):\n"
            "        return NotImplemented\n"
            f"    return ({own}) == ({other})\n")
    exec(compile(src, f"<kraftwire init {qualname}>", "exec"), ns)
    cls = type(qualname.rsplit(".", 1)[-1], (base,), {"__slots__": tuple(attrs) + ("_unknown_tags",),
                                                      "__init__": ns["__init__"], "__eq__": ns["__eq__"],
                                                      "__hash__": None, "_info": info})
    cls.__qualname__ = qualname
    cls.__module__ = __name__
    info.cls = cls
    return cls


class ApiInfo(NamedTuple):
    """A request/response pair: api key, versions, header versions."""

    name: str
    key: int
    request: type
    response: type
    valid_versions: tuple[int, int]
    flexible_from: int | None

    def is_flexible(self, version: int) -> bool:
        return self.flexible_from is not None and version >= self.flexible_from

    def supports(self, version: int) -> bool:
        return self.valid_versions[0] <= version <= self.valid_versions[1]

    def request_header_version(self, version: int) -> int:
        return 2 if self.is_flexible(version) else 1

    def response_header_version(self, version: int) -> int:
        if self.key == 18:  # ApiVersions responses always use header v0 (KIP-511)
            return 0
        return 1 if self.is_flexible(version) else 0


MESSAGES: dict[str, type] = {}
APIS: dict[int, ApiInfo] = {}
APIS_BY_NAME: dict[str, ApiInfo] = {}


def _build() -> None:
    for name, decl in schemas.MESSAGES.items():
        structs: dict = {}
        info = StructInfo(name, decl.fields, name, structs)
        valid = parse_versions(decl.valid)
        flex = parse_versions(decl.flexible)
        for child in structs.values():  # struct defaults are built lazily, so order does not matter
            _make_class(child, f"{name}.{child.name}", Base)
        cls = _make_class(info, name, MessageBase)
        cls.NAME = name
        cls.KIND = decl.kind
        cls.API_KEY = decl.api_key
        cls.VALID_VERSIONS = valid
        cls.FLEXIBLE_FROM = flex[0] if flex else None
        cls.KRAFTWIRE_SPECIFIC = decl.kraftwire
        for child in structs.values():
            if not hasattr(cls, child.name):
                setattr(cls, child.name, child.cls)
        MESSAGES[name] = cls
    for name, cls in MESSAGES.items():
        if cls.KIND == "request":
            base = name[: -len("Request")]
            resp = MESSAGES[base + "Response"]
            if resp.VALID_VERSIONS != cls.VALID_VERSIONS:
                raise ProtocolError(f"{base}: request and response version ranges differ")
            api_info = ApiInfo(base, cls.API_KEY, cls, resp, cls.VALID_VERSIONS, cls.FLEXIBLE_FROM)
            APIS[cls.API_KEY] = api_info
            APIS_BY_NAME[base] = api_info


_build()
globals().update(MESSAGES)


def get(name: str) -> type:
    """The message class named *name* (Kafka's name, e.g. ``"FetchResponse"``)."""
    try:
        return MESSAGES[name]
    except KeyError:
        raise ProtocolError(f"unknown message {name!r}") from None


def api(key: int | str) -> ApiInfo:
    """The :class:`ApiInfo` for an api key (``1``) or name (``"Fetch"``); ProtocolError if unknown."""
    table = APIS if isinstance(key, int) else APIS_BY_NAME
    try:
        return table[key]  # type: ignore[index]
    except KeyError:
        raise ProtocolError(f"unknown api {key!r}") from None
