"""CIDR host patterns in ACLs (KIP-1276, ``metadata.version`` 4.4-IV1), as Kafka 4.4's ``CidrUtils`` reads them.

An ACL host containing ``/`` is a CIDR block. Kafka parses it with Apache commons-net's ``SubnetUtils`` (no ``:`` in
the text) or ``SubnetUtils6`` (a ``:`` in it), so the accepted forms and the refusal messages are theirs:

* **IPv4**: exactly ``a.b.c.d/n``, each of ``a``-``d`` one to three ASCII digits (leading zeros allowed) within
  0-255, ``n`` one or two digits within 0-32. Anything else: ``Could not parse [<cidr>]``; an octet or prefix out
  of range: ``Value [<v>] not in range [<lo>,<hi>]`` (octets are checked first, left to right). The block is
  inclusive: its network and broadcast addresses are in it; the address ``0.0.0.0`` is in no block.
* **IPv6**: split at the first ``/``: the prefix is read as Java's ``Integer.parseInt`` reads it (an optional sign,
  decimal digits, leading zeros allowed, a 32-bit value) and must lie in 0-128; the address is an IPv6 literal,
  optionally in brackets or with a ``%scope`` (an index or an interface name, taken to exist), that is not an IPv4-mapped address (``::ffff:a.b.c.d`` is an IPv4
  address to Java, ``- not an IPv6 address``).

A client address is in a block when it parses as an address of the block's family and lies within it; one that does
not parse, or of the other family, is in no block (Kafka's ``isInRange`` answers false rather than throwing), and a
malformed block contains nothing. Pure: no I/O, no name resolution (a client address is always an IP literal).
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache

_IPV4_CIDR = re.compile(r"([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})/([0-9]{1,2})")
_IPV4_ADDRESS = re.compile(r"([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})")
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
#: a scope Java reads: an index or an interface's name (whether that interface exists here is not checked)
_SCOPE = re.compile(r"[0-9A-Za-z_.-]+")
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1


def is_cidr(host: str) -> bool:
    """Kafka treats an ACL host as a CIDR block when it contains ``/`` (what 4.4-IV1 gates)."""
    return "/" in host


def validate(cidr: str) -> str | None:
    """Why ``CidrUtils.validate`` refuses *cidr* (the IllegalArgumentException's message), or None."""
    try:
        _block(cidr)
    except ValueError as e:
        return str(e)
    return None


def in_range(address: str, cidr: str) -> bool:
    """``CidrUtils.isInRange``: is the client *address* inside the block *cidr*? False for a non-CIDR host."""
    if not is_cidr(cidr):
        return False
    try:
        version, low, high = _block(cidr)
        value = _ipv6_value(address) if version == 6 else _ipv4_value(address)
    except ValueError:
        return False
    if version == 4 and value == 0:
        return False  # SubnetUtils never counts 0.0.0.0 as in range
    return low <= value <= high


@lru_cache(maxsize=4096)
def _block(cidr: str) -> tuple[int, int, int]:
    """(family, lowest, highest address as integers) of a valid block; ValueError with Kafka's message otherwise."""
    if ":" in cidr:
        return _ipv6_block(cidr)
    match = _IPV4_CIDR.fullmatch(cidr)
    if match is None:
        raise ValueError(f"Could not parse [{cidr}]")
    value = 0
    for group in match.groups()[:4]:
        value = (value << 8) | _range_check(int(group), 0, 255)
    prefix = _range_check(int(match.group(5)), 0, 32)
    return 4, *_span(value, prefix, 32)


def _ipv6_block(cidr: str) -> tuple[int, int, int]:
    slash = cidr.find("/")
    if slash < 0:
        raise ValueError(f"Could not parse [{cidr}] - missing prefix length")
    address, prefix_text = cidr[:slash], cidr[slash + 1:]
    if _JAVA_INT.fullmatch(prefix_text) is None or not _INT_MIN <= int(prefix_text) <= _INT_MAX:
        raise ValueError(f"Could not parse [{cidr}] - invalid prefix length")
    prefix = int(prefix_text)
    if not 0 <= prefix <= 128:
        raise ValueError(f"Could not parse [{cidr}] - prefix length must be between 0 and 128")
    return 6, *_span(_ipv6_value(address), prefix, 128)


def _range_check(value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise ValueError(f"Value [{value}] not in range [{low},{high}]")
    return value


def _span(value: int, prefix: int, bits: int) -> tuple[int, int]:
    host_bits = bits - prefix
    network = (value >> host_bits) << host_bits
    return network, network | ((1 << host_bits) - 1)


def _ipv4_value(address: str) -> int:
    match = _IPV4_ADDRESS.fullmatch(address)
    if match is None:
        raise ValueError(f"Could not parse [{address}]")
    value = 0
    for group in match.groups():
        value = (value << 8) | _range_check(int(group), 0, 255)
    return value


def _ipv6_value(address: str) -> int:
    """The 128-bit value of an IPv6 literal as Java's ``InetAddress.getByName`` reads one (brackets and a scope
    allowed); an IPv4-mapped literal is an IPv4 address to Java, so it is refused here."""
    literal = address[1:-1] if address.startswith("[") and address.endswith("]") else address
    if _SCOPE.fullmatch(literal.partition("%")[2] if "%" in literal else "x") is None:
        raise ValueError(f"Could not parse [{address}]")
    try:
        parsed = ipaddress.IPv6Address(literal)
    except ValueError:
        raise ValueError(f"Could not parse [{address}]") from None
    if parsed.ipv4_mapped is not None:
        raise ValueError(f"Could not parse [{address}] - not an IPv6 address")
    return int(parsed)
