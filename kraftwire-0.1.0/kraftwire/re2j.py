"""Regular expressions as Kafka takes them from clients: RE2/J's syntax, matched in linear time.

Kafka compiles a consumer group's ``SubscribedTopicRegex`` (KIP-848) with RE2/J, so no pattern a client sends can
make matching backtrack, and a pattern RE2/J refuses is answered INVALID_REGULAR_EXPRESSION with RE2/J's description
of the fault in the message. Python's ``re`` backtracks: ``(y+)+z`` against a topic named ``yyyy…`` takes time
exponential in the name's length and would hold the event loop. Here patterns compile with google-re2 (C++ RE2, the
syntax RE2/J copies and the same linear-time guarantee), and a refusal is described in RE2/J's words, for the fault
RE2/J's parser meets first.

Where the two parsers disagree (measured against RE2/J 1.8, Kafka 4.4's, by ``tests/test_re2j.py``):

* RE2/J refuses what C++ RE2 accepts: a capture name outside ``[A-Za-z0-9_]``, the same name twice, ``\\C`` (any
  byte) and a repetition right after a ``{`` that is no repeat count (``a{*``). ``_java_only_fault`` finds them.
* RE2/J accepts what C++ RE2 refuses: an escaped non-ASCII character (``\\é``, the character itself), which is
  rewritten for RE2 as ``\\x{e9}``; nested repetitions whose counts multiply past 1000 (``(?:a{100}){11}``) and a
  program over RE2's memory budget, which stay refused (what cannot be compiled cannot be matched), described as RE2/J
  describes a repeat count it refuses, and in RE2's own words.
* RE2 knows Unicode scripts newer than RE2/J's tables (``\\p{Adlam}``): accepted here.
"""

from __future__ import annotations

import re2

__all__ = ["PatternError", "compile"]

_REPEAT_LIMIT = 1000  # the largest count either parser takes in {n,m}
#: C++ RE2's texts for its error codes, longest first (one may begin with another), and RE2/J's for the same fault
_DESCRIPTIONS = sorted({
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    # RE2/J's parser pops an empty stack on a ")" that closes nothing and says so; Kafka answers with that text
    "unexpected )": "regexp/syntax: internal error",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
    "invalid UTF-8": "invalid escape sequence",  # RE2's word for a "\x{" that ends the pattern
}.items(), key=lambda kv: -len(kv[0]))
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a client's bad pattern is answered, not logged by the library


class PatternError(ValueError):
    """A pattern RE2/J refuses; ``description`` is RE2/J's ``PatternSyntaxException.getDescription()``."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


def compile(pattern: str):  # noqa: A001 - the module's one verb, as re.compile
    """``pattern`` compiled (``fullmatch``, ``search`` as ``re``'s), or ``PatternError``."""
    fault = _java_only_fault(pattern)
    if fault is not None:
        at, description = fault
        try:  # a fault RE2 finds before it comes first (a group still open there is no fault yet)
            _re2(pattern[:at])
        except PatternError as earlier:
            if earlier.description != "missing closing )":
                raise
        raise PatternError(description)
    return _re2(pattern)


def _re2(pattern: str):
    try:
        return re2.compile(_for_re2(pattern), _OPTIONS)
    except re2.error as exc:
        text = exc.args[0] if exc.args else b""
        text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
        raise PatternError(_description(pattern, text)) from None


def _description(pattern: str, text: str) -> str:
    """RE2/J's description of the fault C++ RE2 reported as ``text``: its code's text, ": ", the fragment."""
    for cpp, java in _DESCRIPTIONS:
        if text.startswith(cpp):
            break
    else:
        return text
    fragment = text[len(cpp) + 2:]
    if cpp == "invalid perl operator" and _named_group_opener(pattern, fragment):
        return "invalid named capture"  # RE2/J reads "(?<" and "(?P<" as the start of a named group
    if cpp == "bad repetition operator":  # RE2/J checks a count's size before it checks what it repeats
        brace = fragment.rfind("{")
        counts = _repeat_counts(fragment, brace) if brace > 0 else None
        if counts is not None and not _counts_ok(*counts[1:]):
            return "invalid repeat count"
    return java


def _named_group_opener(pattern: str, fragment: str) -> bool:
    """Whether RE2's "invalid perl operator" at ``fragment`` is, to RE2/J, a named group's broken opening: RE2 says
    "perl operator" for a lookbehind and for an opener that ends the pattern, and names ``(?P<`` only ``(?P``."""
    if fragment.startswith("(?<"):
        return True
    if fragment != "(?P":
        return False
    last_close = pattern.rfind(">")
    i = pattern.find("(?P")
    while i >= 0 and pattern.startswith("<", i + 3) and last_close >= i + 4:
        i = pattern.find("(?P", i + 3)  # a complete opener RE2 took
    return i >= 0 and pattern.startswith("<", i + 3)


def _for_re2(pattern: str) -> str:
    """``pattern`` with each escaped non-ASCII character written as ``\\x{..}``: RE2/J reads ``\\é`` as ``é``, C++
    RE2 refuses it. Quoted text (``\\Q...\\E``) is left as it is."""
    if pattern.isascii():
        return pattern
    out, i, n = [], 0, len(pattern)
    while i < n:
        if pattern[i] == "\\" and i + 1 < n:
            if pattern[i + 1] == "Q":
                end = pattern.find("\\E", i + 2)
                end = n if end < 0 else end + 2
                out.append(pattern[i:end])
                i = end
                continue
            c = pattern[i + 1]
            out.append(f"\\x{{{ord(c):x}}}" if not c.isascii() else pattern[i:i + 2])
            i += 2
        else:
            out.append(pattern[i])
            i += 1
    return "".join(out)


def _java_only_fault(pattern: str) -> tuple[int, str] | None:
    """(where, RE2/J's description) of the first fault RE2/J finds and C++ RE2 does not, or None. The scan follows
    only the structure these need (escapes, ``\\Q...\\E``, classes, named groups, braces) and passes over any other
    fault, which RE2 reports itself."""
    names: set[str] = set()
    i, n = 0, len(pattern)
    after_brace = False  # RE2/J counts a "{" that is no repeat count as a repetition: none may follow it
    while i < n:
        c = pattern[i]
        brace = False
        if c == "\\":
            if pattern.startswith("Q", i + 1):  # literal text up to \E or the end
                end = pattern.find("\\E", i + 2)
                i = n if end < 0 else end + 2
                continue
            if pattern.startswith("C", i + 1):
                return i, "invalid escape sequence"
            i += 2  # the rest of a longer escape (\x{41}, \p{Greek}) is letters, digits and braces
        elif c == "[":
            i = _class_end(pattern, i)
        elif pattern.startswith(("(?P<", "(?<"), i):
            start = i + (4 if pattern[i + 2] == "P" else 3)
            end = pattern.find(">", start)
            if end < 0:
                return None  # RE2 refuses it too
            name = pattern[start:end]
            if not name or not all(ch == "_" or ch.isascii() and ch.isalnum() for ch in name):
                return i, "invalid named capture"
            if name in names:
                return i, "duplicate capture group name"
            names.add(name)
            i = end + 1
        elif c in "*+?" or c == "{" and _repeat_counts(pattern, i) is not None:
            counts = _repeat_counts(pattern, i) if c == "{" else None
            if counts is not None and not _counts_ok(*counts[1:]):
                return None  # a count too large comes first for RE2/J, and RE2 refuses it too
            if after_brace:
                return i - 1, "invalid nested repetition operator"
            i = counts[0] if counts is not None else i + 1
        else:
            brace = c == "{"
            i += 1
        after_brace = brace
    return None


def _repeat_counts(text: str, i: int) -> tuple[int, int, int] | None:
    """(the index after it, min, max: -1 for none) of the repeat count ``{n}``, ``{n,}`` or ``{n,m}`` opening at
    ``i``, as RE2/J reads one (no leading zeros), or None when the brace there opens none."""
    numbers: list[int] = []
    j = i + 1
    while True:
        k = j
        while k < len(text) and "0" <= text[k] <= "9":
            k += 1
        digits = text[j:k]
        if len(digits) > 1 and digits[0] == "0" or not digits and not numbers:
            return None
        numbers.append(-1 if not digits else int(digits) if len(digits) <= 4 else _REPEAT_LIMIT + 1)
        if k < len(text) and text[k] == "}":
            low, high = numbers if len(numbers) == 2 else (numbers[0], numbers[0])
            return k + 1, low, high
        if len(numbers) == 2 or k >= len(text) or text[k] != ",":
            return None
        j = k + 1


def _counts_ok(low: int, high: int) -> bool:
    return low <= _REPEAT_LIMIT and high <= _REPEAT_LIMIT and (high < 0 or low <= high)


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class opening at ``i`` (a leading ``]`` is a member, ``[:alpha:]`` nests)."""
    last_posix_end = pattern.rfind(":]")
    j = i + 1
    if pattern.startswith("^", j):
        j += 1
    if pattern.startswith("]", j):
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        if pattern[j] == "\\":
            j += 2
        elif pattern.startswith("[:", j) and last_posix_end >= j + 2:
            j = pattern.find(":]", j + 2) + 2
        else:
            j += 1
    return j + 1
