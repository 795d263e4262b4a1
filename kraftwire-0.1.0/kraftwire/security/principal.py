"""Principals (``User:<name>``) of authenticated connections, as Kafka's default principal builder makes them.

* PLAINTEXT, and TLS without a client certificate: ``User:ANONYMOUS``.
* TLS with a client certificate: the certificate's subject as an RFC 2253 distinguished name (most specific first,
  ``CN=alice,OU=eng,O=acme,C=US``, as Java's ``X500Principal.getName()`` prints it), mapped by
  ``ssl.principal.mapping.rules``: comma-separated ``RULE:<regex>/<replacement>/[L|U]`` or ``DEFAULT`` (the DN
  unchanged); the first rule whose regex matches the whole DN wins, ``$1``… name its groups, ``L``/``U`` lower- or
  upper-case the result; no matching rule is an authentication failure.

Pure: no I/O; the certificate arrives as the ``ssl`` module's ``getpeercert()`` dict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ANONYMOUS = "User:ANONYMOUS"

#: attribute names RFC 2253 prints by keyword (Python's names → keyword)
_KEYWORDS = {"commonName": "CN", "localityName": "L", "stateOrProvinceName": "ST", "organizationName": "O",
             "organizationalUnitName": "OU", "countryName": "C", "streetAddress": "STREET",
             "domainComponent": "DC", "userId": "UID"}
_EMAIL_OID = "1.2.840.113549.1.9.1"


class NoMatchingRule(ValueError):
    """No ``ssl.principal.mapping.rules`` rule matched the certificate's DN."""


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: re.Pattern | None  # None: DEFAULT
    replacement: str = ""
    case: str = ""  # "", "L" or "U"

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        m = self.pattern.fullmatch(dn)
        if m is None:
            return None
        out = m.expand(self.replacement)
        return out.lower() if self.case == "L" else out.upper() if self.case == "U" else out


def parse_rules(text: str) -> tuple[Rule, ...]:
    """Parse ``ssl.principal.mapping.rules``; ``ValueError`` says what is wrong."""
    rules: list[Rule] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\n,":
            i += 1
        if i >= n:
            break
        if text.startswith("DEFAULT", i):
            rules.append(Rule(None))
            i += len("DEFAULT")
        elif text.startswith("RULE:", i):
            i += len("RULE:")
            pattern, i = _until_slash(text, i)
            replacement, i = _until_slash(text, i)
            case = ""
            if i < n and text[i] in "LU":
                case, i = text[i], i + 1
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"bad regular expression {pattern!r}: {exc}") from None
            rules.append(Rule(compiled, _java_replacement(replacement), case))
        else:
            raise ValueError(f"expected DEFAULT or RULE:pattern/replacement/[LU] at {text[i:]!r}")
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] != ",":
            raise ValueError(f"expected ',' between rules at {text[i:]!r}")
    if not rules:
        raise ValueError("no rules (use DEFAULT)")
    return tuple(rules)


def _until_slash(text: str, i: int) -> tuple[str, int]:
    out = []
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(text[i:i + 2] if text[i + 1] != "/" else "/")
            i += 2
            continue
        if c == "/":
            return "".join(out), i + 1
        out.append(c)
        i += 1
    raise ValueError(f"unterminated rule part {''.join(out)!r} (RULE:pattern/replacement/[LU])")


def _java_replacement(replacement: str) -> str:
    """Java's ``$1`` group references as Python's ``\\g<1>``; other backslashes stay literal."""
    out = replacement.replace("\\", "\\\\")
    return re.sub(r"\$(\d+)", r"\\g<\1>", out)


def map_dn(dn: str, rules: tuple[Rule, ...]) -> str:
    for rule in rules:
        name = rule.apply(dn)
        if name is not None:
            return name
    raise NoMatchingRule(f"no ssl.principal.mapping.rules rule matches {dn!r}")


def subject_dn(peercert: dict) -> str:
    """The RFC 2253 string of a ``getpeercert()`` subject (most specific RDN first, special characters escaped)."""
    rdns = []
    for rdn in reversed(peercert.get("subject", ())):
        parts = []
        for name, value in rdn:
            if name == "emailAddress":  # no RFC 2253 keyword: the OID and the DER IA5String in hex, as Java prints it
                raw = value.encode("ascii", "replace")
                parts.append(f"{_EMAIL_OID}=#16{len(raw):02x}{raw.hex()}")
            else:
                parts.append(f"{_KEYWORDS.get(name, name)}={_escape(value)}")
        rdns.append("+".join(parts))
    return ",".join(rdns)


def _escape(value: str) -> str:
    out = re.sub(r'([,+"\\<>;])', r"\\\1", value)
    if out.startswith((" ", "#")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out


def tls_principal(peercert: dict | None, rules: tuple[Rule, ...]) -> str:
    """``User:<mapped DN>`` of a TLS peer, ``User:ANONYMOUS`` without a certificate; ``NoMatchingRule`` when no
    rule maps it."""
    if not peercert:
        return ANONYMOUS
    return "User:" + map_dn(subject_dn(peercert), rules)
