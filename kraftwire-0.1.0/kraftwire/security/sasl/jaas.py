"""Kafka's ``sasl.jaas.config`` values: one JAAS login module entry, ``<class> <flag> key="value" ... ;``.

Kafka takes the broker side of a mechanism from ``listener.name.<listener>.<mechanism>.sasl.jaas.config`` (the
mechanism lower-cased), e.g.::

    listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule \\
        required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";

The value holds exactly one login module; the flag is one of required, requisite, sufficient, optional; option values
are double-quoted (with backslash escapes) or bare words; the entry ends with ``;``. ``JaasError`` says what is wrong.
"""

from __future__ import annotations

import re
from typing import NamedTuple

FLAGS = ("required", "requisite", "sufficient", "optional")
_TOKEN = re.compile(r'\s*(?:(?P<quoted>"(?:[^"\\]|\\.)*")|(?P<semi>;)|(?P<eq>=)|(?P<word>[^\s=;"]+))')


class JaasError(ValueError):
    pass


class LoginModule(NamedTuple):
    class_name: str
    flag: str
    options: dict[str, str]


def _tokens(text: str):
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            return
        m = _TOKEN.match(text, pos)
        if m is None:
            raise JaasError(f"cannot read the JAAS entry at character {pos}: {text[pos:pos + 20]!r}")
        pos = m.end()
        if m.group("quoted") is not None:
            yield "value", re.sub(r"\\(.)", r"\1", m.group("quoted")[1:-1])
        elif m.group("semi"):
            yield ";", ";"
        elif m.group("eq"):
            yield "=", "="
        else:
            yield "word", m.group("word")


def parse_jaas_config(text: str) -> LoginModule:
    """The one login module of a ``sasl.jaas.config`` value."""
    tokens = list(_tokens(text))
    if not tokens or tokens[-1][0] != ";":
        raise JaasError("a JAAS entry ends with ';'")
    if sum(1 for kind, _ in tokens if kind == ";") != 1:
        raise JaasError("sasl.jaas.config must contain exactly one login module")
    tokens = tokens[:-1]
    if len(tokens) < 2 or tokens[0][0] != "word" or tokens[1][0] != "word":
        raise JaasError("a JAAS entry starts with a login module class and a flag")
    class_name, flag = tokens[0][1], tokens[1][1]
    if flag.lower() not in FLAGS:
        raise JaasError(f"the login module flag {flag!r} is not one of {', '.join(FLAGS)}")
    options: dict[str, str] = {}
    rest = tokens[2:]
    if len(rest) % 3:
        raise JaasError("options are written key=value")
    for i in range(0, len(rest), 3):
        (k_kind, key), (eq, _), (v_kind, value) = rest[i:i + 3]
        if k_kind != "word" or eq != "=" or v_kind not in ("value", "word"):
            raise JaasError(f"option {i // 3 + 1} is not key=value")
        options[key] = value
    return LoginModule(class_name, flag.lower(), options)
