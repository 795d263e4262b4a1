"""Client quotas in ``kraftwire configs`` (``--entity-type users|clients|ips``), as Kafka 4.4's ``kafka-configs.sh``
drives them over DescribeClientQuotas and AlterClientQuotas and prints them.

* ``--describe`` asks for the entities holding exactly the named types (``strict``): a name matches that entity,
  ``--entity-default`` the default one, a type named without either any entity of it; one line per entity,
  ``Quota configs for user-principal 'alice', the default client-id are producer_byte_rate=1024.0`` (user, client id,
  ip in that order; the values as Java prints doubles), in the order of the admin client's ``HashMap`` of the answer.
* ``--alter`` reads the entity's quotas first (deleting a key it does not hold is ``Invalid config(s): K``), then
  sends one AlterClientQuotas of the set values (``Cannot parse quota configuration value for K: V`` for a value Java's
  ``Double.parseDouble`` refuses) and removals; the controller's refusal is printed as the admin client's exception.
* An ``ips`` name must be an IP address or a host name that resolves (checked here, as Kafka's tool does).
"""

from __future__ import annotations

import math
import re
import socket
from decimal import Decimal

from kraftwire import error_codes as ec
from kraftwire.java_order import hashmap_order, string_hash
from kraftwire.metadata.controller.client_quotas import IP_KEYS, USER_CLIENT_KEYS, entity_hash
from kraftwire.protocol import messages as w

#: the tool's entity types and the quota entity types they stand for
QUOTA_TYPES = {"users": "user", "clients": "client-id", "ips": "ip"}
_LABELS = {"user": "user-principal", "client-id": "client-id", "ip": "ip"}
#: Java's Double.parseDouble: decimal or hexadecimal floating point, NaN, Infinity, an f/d suffix, blanks around
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?)")


def java_double(value: float) -> str:
    """``Double.toString``: the shortest digits that read back, plain from 10^-3 to 10^7, else ``d.dddE±n``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        text = repr(value)
        return text if "e" not in text else format(Decimal(text), "f") + ("" if "." in format(Decimal(text), "f")
                                                                           else ".0")
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    digits = "".join(map(str, digits)) or "0"
    power = len(digits) - 1 + exponent
    return f"{'-' if sign else ''}{digits[0]}.{digits[1:] or '0'}E{power}"


def parse_java_double(text: str) -> float | None:
    """What ``Double.parseDouble`` makes of ``text``, or None where it throws."""
    stripped = text.strip()
    if not _JAVA_DOUBLE.fullmatch(stripped):
        return None
    return float(stripped.rstrip("fFdD") if stripped[-1:] in "fFdD" and "Infinity" not in stripped else stripped)


def valid_ip_entity(name: str) -> bool:
    """Kafka's tool: an IP address, or a host name the resolver knows (``InetAddress.getByName``)."""
    try:
        socket.getaddrinfo(name, None)
    except (OSError, UnicodeError):
        return False
    return True


def components(types: list[str], names: list[str]) -> list:
    """The filter of the tool's entity types and names (paired in order; a type without a name matches any)."""
    C = w.DescribeClientQuotasRequest.ComponentData
    out = []
    for i, kind in enumerate(types):
        entity_type = QUOTA_TYPES[kind]
        if i >= len(names):
            out.append(C(entity_type=entity_type, match_type=2, match=None))
        elif names[i] == "":
            out.append(C(entity_type=entity_type, match_type=1, match=None))
        else:
            out.append(C(entity_type=entity_type, match_type=0, match=names[i]))
    return out


def entities_of(answer) -> list[tuple[dict, dict]]:
    """The (entity, quotas) pairs of a DescribeClientQuotas answer in the order the admin client's maps give them
    (``new HashMap<>(n)`` for the entities, each entity's types and its values)."""
    if answer.error_code:
        from kraftwire.tools.configs import ServerRefusal

        raise ServerRefusal(answer.error_code, answer.error_message)
    entries = []
    for e in answer.entries or []:
        entity = {d.entity_type: d.entity_name for d in e.entity}
        entries.append((entity, {v.key: v.value for v in e.values}))
    order = hashmap_order(range(len(entries)), lambda i: entity_hash(entries[i][0]), _sized(len(entries)))
    return [(entries[i][0], {k: entries[i][1][k] for k in hashmap_order(entries[i][1], string_hash,
                                                                         _sized(len(entries[i][1])))})
            for i in order]


def _sized(n: int) -> int:
    """The table of ``new HashMap<>(n)`` holding n keys."""
    capacity = 1
    while capacity < n:
        capacity *= 2
    while n > int(capacity * 0.75):
        capacity *= 2
    return capacity


def describe_lines(answer) -> list[str]:
    lines = []
    for entity, values in entities_of(answer):
        parts = [f"{_LABELS[t]} '{entity[t]}'" if entity[t] is not None else f"the default {_LABELS[t]}"
                 for t in ("user", "client-id", "ip") if t in entity]
        text = ", ".join(f"{k}={java_double(v)}" for k, v in values.items())
        lines.append(f"Quota configs for {', '.join(parts)} are {text}")
    return lines


async def describe(conn, types: list[str], names: list[str], timeout: float) -> list[str]:
    answer = await conn.request(w.DescribeClientQuotasRequest(components=components(types, names), strict=True), 1,
                                timeout=timeout)
    return describe_lines(answer)


def check_keys(types: list[str], adds: list[str], deletes: list[str]) -> None:
    """Kafka's tool's refusals of keys that are not quotas of the entity types (users go through ``configs``' own
    SCRAM-aware check)."""
    from kraftwire.tools.configs import ConfigArgumentError

    if "ips" in types:  # Kafka's words say "added" for a deletion too
        unknown = [k for k in [*adds, *deletes] if k not in IP_KEYS]
        if unknown:
            raise ConfigArgumentError("Only connection quota configs can be added for 'ips' using --bootstrap-server. "
                                      f"Unexpected config names: {', '.join(unknown)}")
    elif "clients" in types:
        for verb, keys in (("added", list(adds)), ("deleted", deletes)):
            unknown = [k for k in keys if k not in USER_CLIENT_KEYS]
            if unknown:
                raise ConfigArgumentError(f"Only quota configs can be {verb} for 'clients' using --bootstrap-server. "
                                          f"Unexpected config names: {','.join(unknown)}")


async def alter(conn, types: list[str], names: list[str], adds: dict[str, str], deletes: list[str], timeout: float,
                until_decided) -> None:
    from kraftwire.tools.configs import ConfigArgumentError, ServerRefusal

    described = entities_of(await conn.request(
        w.DescribeClientQuotasRequest(components=components(types, names), strict=True), 1, timeout=timeout))
    held = described[0][1] if described else {}
    missing = [k for k in deletes if k not in held]
    if missing:
        raise ConfigArgumentError(f"Invalid config(s): {','.join(missing)}")
    values = {}
    for key, text in adds.items():
        value = parse_java_double(text)
        if value is None:
            raise ConfigArgumentError(f"Cannot parse quota configuration value for {key}: {text}")
        values[key] = value
    A = w.AlterClientQuotasRequest
    entity = [A.EntityData(entity_type=QUOTA_TYPES[t], entity_name=n or None) for t, n in zip(types, names)]
    ops = [A.OpData(key=k, value=v, remove=False) for k, v in values.items()]
    ops += [A.OpData(key=k, value=0.0, remove=True) for k in deletes]
    body = A(entries=[A.EntryData(entity=entity, ops=ops)], validate_only=False)
    answer = await until_decided(conn, body, 1, timeout, lambda a: [e.error_code for e in a.entries])
    for e in answer.entries:
        if e.error_code != ec.NONE:
            raise ServerRefusal(e.error_code, e.error_message)
