"""Java's ``.properties`` syntax, as ``java.util.Properties.load`` reads it: comment lines (``#``, ``!``) and blank
lines dropped, backslash continuations joined, the key ending at the first unescaped ``=``, ``:`` or whitespace,
``\\t \\n \\r \\f \\uXXXX`` escapes in keys and values, a later key overriding an earlier one."""

from __future__ import annotations

__all__ = ["parse_properties", "load_properties"]


def _logical_lines(text: str):
    """Yield logical lines: comments and blank lines dropped, backslash continuations joined."""
    pending: str | None = None
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")
        if pending is None and (not line or line[0] in "#!"):
            continue
        # A line continues when it ends in an odd number of backslashes.
        trailing = len(line) - len(line.rstrip("\\"))
        continues = trailing % 2 == 1
        if continues:
            line = line[:-1]
        pending = line if pending is None else pending + line
        if not continues:
            yield pending
            pending = None
    if pending is not None:
        yield pending


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "u" and i + 6 <= len(s):
                try:
                    out.append(chr(int(s[i + 2 : i + 6], 16)))
                    i += 6
                    continue
                except ValueError:
                    pass
            out.append(_ESCAPES.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _split_key_value(line: str) -> tuple[str, str]:
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=: \t\f":
            break
        i += 1
    key = line[:i]
    rest = line[i:]
    # Separator: optional whitespace, at most one of '=' or ':', optional whitespace.
    rest = rest.lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return _unescape(key), _unescape(rest)


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java properties text into an ordered dict (later keys override earlier ones, as in Java)."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split_key_value(line)
        props[key] = value
    return props


def load_properties(path: str) -> dict[str, str]:
    with open(path, encoding="utf-8") as f:
        return parse_properties(f.read())
