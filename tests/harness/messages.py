"""Hypothesis strategies derived from the protocol declarations.

``message_strategy(cls, version)`` is a hypothesis strategy derived from the declarations: every field
present at *version* gets a value of its type (None only where nullable at that version).
"""

from __future__ import annotations

from hypothesis import strategies as st

from kraftwire.protocol.messages import FieldInfo, StructInfo

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
_PRIM = {
    "int8": st.integers(-(2**7), 2**7 - 1),
    "int16": st.integers(-(2**15), 2**15 - 1),
    "int32": st.integers(-(2**31), 2**31 - 1),
    "int64": st.integers(-(2**63), 2**63 - 1),
    "uint16": st.integers(0, 2**16 - 1),
    "uint32": st.integers(0, 2**32 - 1),
    "float64": st.floats(allow_nan=False),
    "bool": st.booleans(),
    "string": _TEXT,
    "bytes": st.binary(max_size=16),
    "records": st.binary(max_size=40),
    "uuid": st.uuids(version=None) | st.just(__import__("uuid").UUID(int=0)),
}


def _field(f: FieldInfo, version: int, depth: int):
    if f.struct is not None:
        item = _struct(f.struct, version, depth + 1)
    else:
        item = _PRIM[f.type]
    s = st.lists(item, max_size=3 if depth < 2 else 1) if f.is_array else item
    if f.is_nullable(version):
        s = st.none() | s
    return s


def _struct(info: StructInfo, version: int, depth: int = 0):
    fields = {f.attr: _field(f, version, depth) for f in info.fields if f.present(version)}
    return st.fixed_dictionaries(fields).map(lambda kw: info.cls(**kw))


def message_strategy(cls, version: int):
    return _struct(cls._info, version)


def all_message_versions():
    from kraftwire.protocol.messages import MESSAGES

    for name, cls in MESSAGES.items():
        lo, hi = cls.VALID_VERSIONS
        for v in range(lo, hi + 1):
            yield name, v
