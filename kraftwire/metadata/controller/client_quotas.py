"""Client quotas: the active controller's ClientQuotaControlManager (AlterClientQuotas) and the image's answer to
DescribeClientQuotas (Kafka's ClientQuotasImage.describe), pure.

An entity is a mapping of entity types to names: ``user``, ``client-id`` (either or both) or ``ip`` alone; a name of
None is the type's default entity (``--entity-default``). The image keys an entity as its ``(type, name)`` pairs
sorted by type (``MetadataImage.client_quotas``).

AlterClientQuotas, entity by entity, in request order (Kafka's messages, all INVALID_REQUEST unless said):

* the entity's types collapse as Kafka's request does (a type named twice keeps its last name);
* a second alteration of an entity the request already answered is refused (``Ignoring duplicate entity ...``) and
  the first one's records stay written, as in Kafka; an op naming a key twice refuses its entity the same way (the
  duplicate-key error is overwritten by that message, as Kafka's loop does);
* an empty entity, a type other than the three, an empty name; ``ip`` combined with another type; an ``ip`` name that
  is not an IP address (Kafka resolves host names with ``InetAddress.getByName``; the controller here does no DNS
  lookups, so only IP literals pass);
* per key set (removals are not checked and a removal of an absent key writes nothing): a key the entity's types do
  not have (users and clients: producer_byte_rate, consumer_byte_rate (longs), request_percentage,
  controller_mutation_rate (doubles); IPs: connection_creation_rate (an int)); NaN or an infinity (Kafka 4.4's
  ``must be a finite number``); a value at or below 0; an integral key
  with a value above its type's largest or with a fraction. The first bad key (in the order Kafka's map of the ops
  iterates) refuses the entity and none of its records are written;
* a value equal to the one held writes no record.

``validate_only`` answers the same and writes nothing. Results come in the order of Kafka's ``HashMap`` of entities.

DescribeClientQuotas filters the image with components (entity type, match type: 0 exact name, 1 the default entity,
2 any entity having the type) and ``strict`` (the entity has no other types); a bad filter is answered with the
error at the top and no entries (null), as Kafka's KafkaApis answers the exception its image throws.
"""

from __future__ import annotations

import ipaddress
import math
from typing import Iterable, Mapping

from kraftwire.error_codes import INVALID_REQUEST, NONE, UNSUPPORTED_VERSION
from kraftwire.java_order import hashmap_capacity, hashmap_order, string_hash
from kraftwire.metadata.controller.result import ControllerResult
from kraftwire.metadata.image import MetadataImage
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.protocol import messages as m

USER, CLIENT_ID, IP = "user", "client-id", "ip"
ENTITY_TYPES = (USER, CLIENT_ID, IP)

#: Kafka's QuotaConfig: the quota keys of users and client ids, and of IPs, with their ConfigDef types
USER_CLIENT_KEYS = {"producer_byte_rate": "LONG", "consumer_byte_rate": "LONG", "request_percentage": "DOUBLE",
                    "controller_mutation_rate": "DOUBLE"}
IP_KEYS = {"connection_creation_rate": "INT"}
_LARGEST = {"INT": (2.0 ** 31 - 1, "an INT"), "LONG": (2.0 ** 63, "a LONG")}  # Long.MAX_VALUE as a double is 2^63

MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2

Entity = tuple[tuple[str, "str | None"], ...]
_Error = tuple[int, str]


class _Refused(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


# ------------------------------------------------------------------------------------------------ Java's maps
def _grown_capacity(initial: int, size: int) -> int:
    """The table of ``new HashMap<>(initial)`` after ``size`` puts: ``tableSizeFor(initial)``, doubled while more
    than three quarters full (a table below 16 keeps ``(int)(capacity * 0.75)`` as its threshold)."""
    capacity = 1
    while capacity < initial:
        capacity *= 2
    while size > int(capacity * 0.75):
        capacity *= 2
    return capacity


def entity_hash(entries: Mapping[str, str | None]) -> int:
    """``ClientQuotaEntity.hashCode``: ``Objects.hash(map)``, the map's hash being the sum of ``key ^ value``."""
    total = sum(string_hash(k) ^ (0 if v is None else string_hash(v)) for k, v in entries.items())
    return (31 + total) & 0xFFFFFFFF


def entity_types_order(entries: Mapping[str, str | None], capacity: int) -> list[str]:
    return hashmap_order(entries, string_hash, capacity)


def entity_string(entries: Mapping[str, str | None], capacity: int) -> str:
    """``ClientQuotaEntity.toString`` of an entity map of table size ``capacity``."""
    body = ", ".join(f"{t}={'null' if entries[t] is None else entries[t]}"
                     for t in entity_types_order(entries, capacity))
    return f"ClientQuotaEntity(entries={{{body}}})"


# ------------------------------------------------------------------------------------------------ alter
def alter_client_quotas(image: MetadataImage, req) -> ControllerResult:
    R = m.AlterClientQuotasResponse
    results: dict[tuple, tuple[dict, int, _Error]] = {}  # frozen entity -> (entity map, capacity, error)
    records: list[ApiMessageAndVersion] = []
    quotas = image.client_quotas
    for entry in req.entries:
        entity: dict[str, str | None] = {}
        for e in entry.entity:
            entity[e.entity_type] = e.entity_name
        key = tuple(sorted(entity.items(), key=lambda kv: kv[0]))
        capacity = _grown_capacity(len(entry.entity), len(entity))  # the request's new HashMap<>(n)
        ops: dict[str, float | None] = {}
        duplicate = False
        for op in entry.ops:
            if op.key in ops:
                duplicate = True
            else:
                ops[op.key] = None if op.remove else op.value
        if duplicate or key in results:
            results[key] = (entity, capacity,
                            (INVALID_REQUEST, "Ignoring duplicate entity " + entity_string(entity, capacity)))
            continue
        ops_order = hashmap_order(ops, string_hash, _grown_capacity(len(entry.ops), len(ops)))
        try:
            new = _entity_records(entity, [(k, ops[k]) for k in ops_order], quotas.get(key, {}))
        except _Refused as refused:
            results[key] = (entity, capacity, (refused.code, refused.message))
            continue
        records += new
        results[key] = (entity, capacity, (NONE, None))
    order = hashmap_order(results, lambda k: entity_hash(results[k][0]), _grown_capacity(16, len(results)))
    entries = []
    for key in order:
        entity, capacity, (code, message) = results[key]
        entries.append(R.EntryData(error_code=code, error_message=message, entity=[
            R.EntityData(entity_type=t, entity_name=entity[t]) for t in entity_types_order(entity, capacity)]))
    response = R(throttle_time_ms=0, entries=entries)
    if req.validate_only:
        records = []
    event = f"client quotas: {len(records)} records" if records else ""
    return ControllerResult(tuple(records), response, event)


def _entity_records(entity: dict, ops: list[tuple[str, float | None]],
                    current: Mapping[str, float]) -> list[ApiMessageAndVersion]:
    valid_keys = _keys_for(entity)
    # the record lists the types as Kafka's validated map (a new HashMap<>(3)) iterates them
    data = [m.ClientQuotaRecord.EntityData(entity_type=t, entity_name=entity[t]) for t in entity_types_order(entity, 4)]
    out = []
    for name, value in ops:
        if value is None:
            if name in current:
                out.append(ApiMessageAndVersion(m.ClientQuotaRecord(entity=data, key=name, value=0.0, remove=True), 0))
            continue
        _check_value(valid_keys, name, value)
        held = current.get(name)
        if held is None or not _same_double(held, value):
            out.append(ApiMessageAndVersion(m.ClientQuotaRecord(entity=data, key=name, value=value, remove=False), 0))
    return out


def _keys_for(entity: dict) -> Mapping[str, str]:
    if not entity:
        raise _Refused(INVALID_REQUEST, "Invalid empty client quota entity")
    for etype, name in entity.items():
        if etype not in ENTITY_TYPES:
            raise _Refused(INVALID_REQUEST, f"Unhandled client quota entity type: {etype}")
        if name == "":
            raise _Refused(INVALID_REQUEST, f"Empty {etype} not supported")
    if IP in entity:
        if USER in entity or CLIENT_ID in entity:
            # sic: Kafka's message lacks the space
            raise _Refused(INVALID_REQUEST, "Invalid quota entity combination, IP entity shouldnot be combined with "
                                            "User or ClientId")
        if not is_ip_literal(entity[IP]):
            raise _Refused(INVALID_REQUEST, f"{entity[IP]} is not a valid IP or resolvable host.")
        return IP_KEYS
    return USER_CLIENT_KEYS


def is_ip_literal(name: str | None) -> bool:
    """The default IP (None) or an IPv4/IPv6 address."""
    if name is None:
        return True
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def _check_value(valid_keys: Mapping[str, str], key: str, value: float) -> None:
    kind = valid_keys.get(key)
    if kind is None:
        raise _Refused(INVALID_REQUEST, f"Invalid configuration key {key}")
    if not math.isfinite(value):
        raise _Refused(INVALID_REQUEST, f"Quota {key} must be a finite number")
    if value <= 0.0:
        raise _Refused(INVALID_REQUEST, f"Quota {key} must be greater than 0")
    if kind == "DOUBLE":
        return
    largest, article = _LARGEST[kind]
    if value > largest:
        raise _Refused(INVALID_REQUEST, f"Proposed value for {key} is too large for {article}.")
    if abs(math.fmod(value, 1.0)) > 1e-6:  # Java's % on doubles
        raise _Refused(INVALID_REQUEST, f"{key} cannot be a fractional value.")


def _same_double(a: float, b: float) -> bool:
    """``Double.equals``: NaN equals NaN."""
    return a == b or (math.isnan(a) and math.isnan(b))


# ------------------------------------------------------------------------------------------------ describe
def describe_client_quotas(image: MetadataImage, req) -> m.DescribeClientQuotasResponse:
    R = m.DescribeClientQuotasResponse
    try:
        exact, typed = _filter(req.components)
    except _Refused as refused:
        return R(throttle_time_ms=0, error_code=refused.code, error_message=refused.message, entries=None)
    quotas = image.client_quotas
    entries = []
    for key in _matching(image, exact, typed, req.strict):
        entity, values = dict(key), quotas[key]
        entries.append(R.EntryData(
            entity=[R.EntityData(entity_type=t, entity_name=entity[t]) for t in entity_types_order(entity, 16)],
            values=[R.ValueData(key=k, value=values[k])
                    for k in hashmap_order(values, string_hash, image_capacity(len(values)))]))
    # the message of an answer without error is left at its default, empty (the image builds a fresh response)
    return R(throttle_time_ms=0, error_code=NONE, error_message="", entries=entries)


def _matching(image: MetadataImage, exact: dict[str, str | None], typed: set[str], strict: bool) -> list[Entity]:
    """The entities a filter selects, in Kafka 4.4's order (KAFKA-13022's indexes): with no component every entity
    (none when strict) in the image's order; otherwise a copy of the index map of the first exact component (or
    of the first type) narrowed by the others, in that copy's order."""
    def hashed(keys: Iterable[Entity], capacity: int) -> list[Entity]:
        return hashmap_order(keys, lambda k: entity_hash(dict(k)), capacity)

    everything = hashed(image.client_quotas, image_capacity(len(image.client_quotas)))
    if not exact and not typed:
        return [] if strict else everything

    def index(selected: list[Entity]) -> list[Entity]:
        # the index maps are filled one by one from the image's map
        return hashed(selected, _grown_capacity(16, len(selected)))

    picks = [index([k for k in everything if t in dict(k) and dict(k)[t] == exact[t]])
             for t in hashmap_order(exact, string_hash, 16)]
    picks += [index([k for k in everything if t in dict(k)]) for t in hashmap_order(typed, string_hash, 16)]
    first = picks[0]
    result = hashed(first, hashmap_capacity(len(first), copied=True))
    for other in picks[1:]:
        kept = set(other)
        result = [k for k in result if k in kept]
    wanted = len(exact) + len(typed)
    return [k for k in result if not strict or len(k) == wanted]


def image_capacity(size: int) -> int:
    """Kafka's image rebuilds its quota maps as ``new HashMap<>(previous size)`` filled one by one: close to the
    smallest table that holds ``size`` keys (a map that shrank keeps its larger table; not modelled)."""
    return _grown_capacity(1, size)


def _filter(components: Iterable) -> tuple[dict[str, str | None], set[str]]:
    exact: dict[str, str | None] = {}
    typed: set[str] = set()
    for c in components:
        if not c.entity_type:
            raise _Refused(INVALID_REQUEST, "Invalid empty entity type.")
        if c.entity_type in exact or c.entity_type in typed:
            raise _Refused(INVALID_REQUEST, f"Entity type {c.entity_type} cannot appear more than once in the filter.")
        if c.entity_type not in ENTITY_TYPES:
            raise _Refused(UNSUPPORTED_VERSION, f"Unsupported entity type {c.entity_type}")
        if c.match_type == MATCH_EXACT:
            if c.match is None:
                raise _Refused(INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, but set match string to null.")
            exact[c.entity_type] = c.match
        elif c.match_type == MATCH_DEFAULT:
            if c.match is not None:
                raise _Refused(INVALID_REQUEST, "Request specified MATCH_TYPE_DEFAULT, but also specified a match "
                                                "string.")
            exact[c.entity_type] = None
        elif c.match_type == MATCH_SPECIFIED:
            if c.match is not None:
                raise _Refused(INVALID_REQUEST, "Request specified MATCH_TYPE_SPECIFIED, but also specified a match "
                                                "string.")
            typed.add(c.entity_type)
        else:
            raise _Refused(INVALID_REQUEST, f"Unknown match type {c.match_type}")
    named = exact.keys() | typed
    if IP in named and (USER in named or CLIENT_ID in named):
        raise _Refused(INVALID_REQUEST, "Invalid entity filter component combination. IP filter component should not "
                                        "be used with user or clientId filter component.")
    return exact, typed
