"""Hostile Kafka requests, generated from the message declarations and written to bytes by hand.

A *case* is one request frame (``int32 size + request header + body``) for one API at one version. Its body comes
from a *value tree* built field by field from ``kraftwire.protocol.messages``: plausible values that reach the
handlers (existing topic names and ids, small partition indexes, short waits) and hostile ones — boundary and
negative numbers, empty, huge (up to and beyond 32,767 bytes) and invalid UTF-8 strings, nulls where the schema
allows none, arrays whose counts lie or repeat an item, unknown tagged fields, random uuids, records that are
garbage or two batches. A case is one of (``make_case``): plausible through and through (10%); plausible but for
one hostile value (35%: it reaches deepest); hostile at a temperature, the chance of each value being so (25%); or
a plausible request whose bytes are then mutated (30%): bit flips, truncation, extension, a length prefix inside
the body that lies, a size prefix that lies, a header naming another API or version.

The writer below is not the codec: it writes whatever the tree says — a 40 KB string behind an int16 length, a
null in a non-nullable array, a count with no items behind it — so the node sees bytes the codec would refuse to
produce. ``tests/fuzz/test_generator.py`` checks that for plausible trees it writes exactly what the codec
writes, so the hostile bytes are lies on purpose, not by accident.

Every case is a pure function of ``(seed, stream, index)`` (``case_rng``) and of the pools it draws names from (the
node's topic ids change from run to run, the choices do not), so one case can be rebuilt alone.

Tree conventions: a struct is a ``dict`` of attribute -> value, with the optional key :data:`TAGS` holding extra
``(tag, payload bytes)`` tagged fields; an array is a ``list``, ``None`` or a :class:`Lie`; a string is a ``str``,
``None`` or :class:`Raw` bytes; bytes and records are ``bytes`` or ``None``; numbers are written modulo their
width (a bool is an int8 and may be 2).
"""

from __future__ import annotations

import random
import struct
import uuid
from dataclasses import dataclass, field
from typing import Any

from kraftwire.ids import METADATA_TOPIC_ID, ZERO_UUID
from kraftwire.protocol.messages import APIS, RequestHeader, FieldInfo, StructInfo
from kraftwire.records import RecordBatchBuilder

TAGS = "__tags__"

INT_RANGES = {"int8": (-2**7, 2**7 - 1), "int16": (-2**15, 2**15 - 1), "int32": (-2**31, 2**31 - 1),
              "int64": (-2**63, 2**63 - 1), "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1)}
INT_FORMATS = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "uint32": "I"}
#: how many bytes a "huge" string has: the int16 limit, one past it, the sizes of the known crashes, far beyond
HUGE_STRING_BYTES = (32767, 32768, 40_000, 100_000)
#: regular expressions that backtrack catastrophically on a topic named like :data:`REDOS_TOPIC`
CATASTROPHIC_REGEXES = ("(y+)+z", "(y|yy)+z", "(.*)*z")
HOSTILE_REGEXES = CATASTROPHIC_REGEXES + ("[", "(", "*", "\\", "(?P<", ".*", "y{1000000000}")
#: fields that let a request wait as long as they say (a Fetch's long poll, a join's rebalance): their hostile values
#: are never large, so that waiting is never mistaken for a hang
WAIT_FIELDS = ("max_wait_ms", "timeout_ms", "rebalance_timeout_ms", "session_timeout_ms")
#: a topic the fixtures create so that a catastrophic regex has something to backtrack on
REDOS_TOPIC = "y" * 40
#: record timestamps start here (November 2023): in the past, so no broker refuses them as too far ahead
BATCH_TIME_MS = 1_700_000_000_000
#: Kafka's legal and illegal topic names (249 characters is the limit; "." and ".." are reserved)
HOSTILE_TOPIC_NAMES = ("", ".", "..", "a" * 249, "a" * 250, "a/b", "a b", "__consumer_offsets", "__transaction_state",
                       "__cluster_metadata", "fuzz.a", "fuzz_a", "\u00e9t\u00e9", "a\x00b")
#: UTF-8 that is not: a lone continuation byte, an overlong encoding, a surrogate, a cut multibyte sequence
INVALID_UTF8 = (b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"abc\xe2\x82", b"\x80" * 8)


class Raw(bytes):
    """A string field's bytes written as they are (invalid UTF-8, say)."""


@dataclass
class Lie:
    """An array whose count says ``count`` while ``items`` follow."""

    items: list
    count: int


@dataclass
class Pools:
    """What the node under test holds, so plausible values reach past the lookups: its topics (name -> id and
    partition count), groups, transactional ids, cluster id and node ids."""

    topics: dict[str, tuple[uuid.UUID, int]]
    cluster_id: str
    node_ids: tuple[int, ...]
    groups: tuple[str, ...] = ("fuzz-group", "fuzz-group-2")
    transactional_ids: tuple[str, ...] = ("fuzz-txn",)
    config_names: tuple[str, ...] = ("cleanup.policy", "retention.ms", "segment.bytes", "min.insync.replicas",
                                     "max.message.bytes", "message.timestamp.type", "compression.type",
                                     "log.retention.ms", "num.partitions", "log.cleaner.threads",
                                     "remote.storage.enable", "unknown.key")
    config_values: tuple[str, ...] = ("compact", "delete", "compact,delete", "1", "0", "-1", "-2", "1000",
                                      "9223372036854775807", "9223372036854775808", "CreateTime", "x", "true", "")


@dataclass
class Case:
    """One request: where it goes (``stream``), what it is, and its bytes (``frame``, size prefix included)."""

    seed: int
    stream: str
    index: int
    api_key: int
    version: int
    mode: str  # "plausible", "one hostile value", "hostile t=<temperature>", "mutation" (of a plausible one's bytes)
    tree: dict  # the body's values (for a mutation: the request before its bytes were mutated)
    client_id: Any
    frame: bytes
    notes: list[str] = field(default_factory=list)
    #: the size prefix claims more bytes than follow: the node can only wait for them (or close)
    incomplete: bool = False
    #: the size prefix claims fewer bytes than follow: what follows the frame is garbage the node reads next
    trailing_garbage: bool = False

    @property
    def api_name(self) -> str:
        info = APIS.get(self.api_key)
        return info.name if info is not None else f"api key {self.api_key}"

    @property
    def correlation_id(self) -> int:
        """What the node reads as the correlation id (the frame's, after any mutation), or None if cut off."""
        return struct.unpack_from(">i", self.frame, 8)[0] if len(self.frame) >= 12 else None

    @property
    def sent_key_version(self) -> tuple[int, int] | None:
        return struct.unpack_from(">hh", self.frame, 4) if len(self.frame) >= 8 else None

    def describe(self, limit: int = 1500) -> str:
        tree = _short(self.tree)
        text = (f"case {self.index} of stream {self.stream!r} (seed {self.seed}): {self.api_name} "
                f"(key {self.api_key}) v{self.version}, {self.mode}"
                + (f" [{'; '.join(self.notes)}]" if self.notes else "")
                + f"\n  body: {tree}\n  frame ({len(self.frame)} bytes): {self.frame[:96].hex()}"
                + ("..." if len(self.frame) > 96 else ""))
        return text if len(text) <= limit else text[:limit] + " ..."


def _short(value, depth: int = 0):
    """The tree with long strings and bytes abbreviated, for failure messages."""
    if isinstance(value, dict):
        return {k: _short(v, depth + 1) for k, v in value.items()}
    if isinstance(value, Lie):
        return f"Lie(count={value.count}, items={_short(value.items, depth + 1)})"
    if isinstance(value, list):
        return [_short(v, depth + 1) for v in value[:6]] + ([f"... {len(value)} items"] if len(value) > 6 else [])
    if isinstance(value, (str, bytes)) and len(value) > 48:
        return f"{type(value).__name__}[{len(value)}]({value[:24]!r}...)"
    return value


def case_rng(seed: int, stream: str, index: int) -> random.Random:
    """The generator of one case: a pure function of its coordinates, so any case can be rebuilt alone."""
    return random.Random(f"{seed}/{stream}/{index}")


# ------------------------------------------------------------------------------------------------ the writer
class Writer:
    """Bytes of a request as the tree says, remembering where each length prefix sits (for length lies)."""

    def __init__(self) -> None:
        self.buf = bytearray()
        #: (offset, kind) of every length or count prefix written: kind "int16", "int32" or "uvarint"
        self.lengths: list[tuple[int, str]] = []

    def fixed(self, fmt: str, value: int | float) -> None:
        if fmt in INT_FORMATS.values():
            bits = struct.calcsize(fmt) * 8
            value = int(value) & ((1 << bits) - 1)
            if fmt.islower() and value >= 1 << (bits - 1):
                value -= 1 << bits
        self.buf += struct.pack(">" + fmt, value)

    def uvarint(self, n: int) -> None:
        n &= 0xFFFFFFFF
        while n >= 0x80:
            self.buf.append((n & 0x7F) | 0x80)
            n >>= 7
        self.buf.append(n)

    def length(self, n: int, kind: str) -> None:
        """A length or count: ``n`` (-1 for null) as int16, int32 or compact uvarint (n + 1)."""
        self.lengths.append((len(self.buf), kind))
        if kind == "uvarint":
            self.uvarint(n + 1)
        else:
            self.fixed("h" if kind == "int16" else "i", n)


def write_struct(w: Writer, info: StructInfo, version: int, flex: bool, tree: dict) -> None:
    """The fields present at ``version`` in declaration order, then (flexible versions) the tagged section."""
    tagged = []
    for f in info.fields:
        if not f.present(version):
            continue
        if flex and f.is_tagged(version):
            if f.attr in tree and tree[f.attr] != f.make_default():  # (as Kafka writes: defaults are left out)
                sub = Writer()
                _write_field(sub, f, version, flex, tree[f.attr])
                tagged.append((f.tag, bytes(sub.buf)))
            continue
        _write_field(w, f, version, flex, tree.get(f.attr, f.make_default()))
    if flex:
        tagged += tree.get(TAGS, [])
        w.uvarint(len(tagged))
        for tag, payload in sorted(tagged, key=lambda t: t[0]):
            w.uvarint(tag)
            w.uvarint(len(payload))
            w.buf += payload


def _write_field(w: Writer, f: FieldInfo, version: int, flex: bool, value) -> None:
    compact = flex and not f.classic_string
    if f.is_array:
        if value is None:
            w.length(-1, "uvarint" if compact else "int32")
            return
        items, count = (value.items, value.count) if isinstance(value, Lie) else (value, len(value))
        w.length(count, "uvarint" if compact else "int32")
        for item in items:
            _write_item(w, f, version, flex, item)
        return
    _write_item(w, f, version, flex, value)


def _write_item(w: Writer, f: FieldInfo, version: int, flex: bool, value) -> None:
    compact = flex and not f.classic_string
    if f.struct is not None:
        if f.is_nullable(version) and not f.is_array:  # a nullable struct: int8 -1 for null, 1 before it
            if value is None:
                w.buf.append(0xFF)
                return
            w.buf.append(1)
        write_struct(w, f.struct, version, flex, value)
    elif f.type in INT_FORMATS:
        w.fixed(INT_FORMATS[f.type], value)
    elif f.type == "bool":
        w.fixed("b", int(value))
    elif f.type == "float64":
        w.buf += struct.pack(">d", value)
    elif f.type == "uuid":
        w.buf += value.bytes
    elif f.type == "string":
        _write_data(w, None if value is None else value if isinstance(value, bytes) else value.encode("utf-8"),
                    "uvarint" if compact else "int16")
    else:  # bytes, records
        _write_data(w, value, "uvarint" if compact else "int32")


def _write_data(w: Writer, data: bytes | None, kind: str) -> None:
    if data is None:
        w.length(-1, kind)
        return
    w.length(len(data), kind)  # an int16 length of a 40 KB string wraps: the lie the node must survive
    w.buf += data


def encode_frame(api_key: int, version: int, correlation_id: int, client_id, tree: dict,
                 header_tags: list | None = None) -> tuple[bytes, Writer]:
    """The whole frame of a request (size prefix, header v1 or v2, body) and the body's writer (its length
    prefixes, offset by the header)."""
    info = APIS[api_key]
    flex = info.is_flexible(version)
    w = Writer()
    header = {"request_api_key": api_key, "request_api_version": version, "correlation_id": correlation_id,
              "client_id": client_id}
    if header_tags:
        header[TAGS] = header_tags
    write_struct(w, RequestHeader._info, info.request_header_version(version), flex, header)
    write_struct(w, info.request._info, version, flex, tree)
    return struct.pack(">i", len(w.buf)) + bytes(w.buf), w


# ------------------------------------------------------------------------------------------------ the values
class Generator:
    """Value trees for one case: ``temperature`` is the chance that a field (or an array, or a struct's tagged
    fields) is hostile; ``one``, when set, makes that one value (counted in the order they are generated) hostile
    and nothing else — a single bad value in a request that otherwise reaches deep into the node."""

    def __init__(self, rng: random.Random, pools: Pools, temperature: float = 0.0, one: int | None = None) -> None:
        self.rng = rng
        self.pools = pools
        self.temperature = temperature
        self.one = one
        self.values = 0  # values generated so far (for ``one``)
        self.notes: list[str] = []

    def message(self, api_key: int, version: int) -> dict:
        info = APIS[api_key]
        self.flex = info.is_flexible(version)
        tree = self.struct(info.request._info, version, depth=0)
        if info.name == "ConsumerGroupHeartbeat" and self.rng.random() < 0.5:
            # half of them join (KIP-848): epoch 0 and nothing owned, or the first checks refuse them all
            tree.update(member_epoch=0, topic_partitions=[])
        return tree

    def struct(self, info: StructInfo, version: int, depth: int) -> dict:
        tree: dict = {}
        for f in info.fields:
            if not f.present(version):
                continue
            if f.is_tagged(version) and self.flex and self.rng.random() < 0.5:
                continue  # a tagged field left out: its default
            tree[f.attr] = self.field(f, info.name, version, depth)
        if self.flex and self.hot():
            tree[TAGS] = self.unknown_tags()
        return tree

    def hot(self) -> bool:
        return self.rng.random() < self.temperature

    def unknown_tags(self) -> list[tuple[int, bytes]]:
        rng = self.rng
        tags = [(rng.choice((0, 1, 2, 3, 10_000, 2**31 - 1, rng.randrange(2**32))), rng.randbytes(rng.randint(0, 9)))
                for _ in range(rng.randint(1, 3))]
        self.notes.append(f"tagged fields {[t for t, _ in tags]}")
        return tags

    def field(self, f: FieldInfo, owner: str, version: int, depth: int):
        rng = self.rng
        if not f.is_array:
            return self.item(f, owner, version, depth)
        if self.hot():
            choice = rng.randrange(5)
            if choice == 0:
                self.notes.append(f"null array {owner}.{f.attr}")
                return None
            items = [self.item(f, owner, version, depth) for _ in range(rng.randint(0, 2))]
            if choice == 1:
                count = rng.choice((len(items) + 1, len(items) + 1000, 2**31 - 1, -2, -1 if items else 1))
                self.notes.append(f"count lie {owner}.{f.attr}: {count} for {len(items)}")
                return Lie(items, count)
            if choice == 2 and items:
                self.notes.append(f"repeated item in {owner}.{f.attr}")
                return items + [items[0]]
            if choice == 3:
                n = rng.choice((50, 300)) if depth > 0 or f.struct is None else 50
                self.notes.append(f"{n} items in {owner}.{f.attr}")
                return [self.item(f, owner, version, depth) for _ in range(n)]
            return items
        n = rng.choice((1, 1, 1, 0, 2) if depth == 0 else (0, 1, 1, 2))  # two items may name the same thing
        return [self.item(f, owner, version, depth) for _ in range(n)]

    def item(self, f: FieldInfo, owner: str, version: int, depth: int):
        if f.struct is not None:
            if f.is_nullable(version) and not f.is_array and self.hot():
                return None
            return self.struct(f.struct, version, depth + 1)
        self.values += 1
        if self.hot() or self.values - 1 == self.one:
            return self.hostile(f, owner, version)
        value = self.plausible(f, owner)
        return "" if value is None and not f.is_nullable(version) else value

    # --- hostile values -----------------------------------------------------------------------------
    def hostile(self, f: FieldInfo, owner: str, version: int):
        rng = self.rng
        t = f.type
        what = f"{owner}.{f.attr}"
        if t in INT_RANGES and f.attr in WAIT_FIELDS:
            value = rng.choice((INT_RANGES[t][0], -1, 0, 1))
        elif t in INT_RANGES:
            lo, hi = INT_RANGES[t]
            value = rng.choice((lo, hi, lo + 1, hi - 1, -1 if lo < 0 else 1, 0, rng.randint(lo, hi)))
        elif t == "bool":
            value = rng.choice((2, -1, 127))
        elif t == "float64":
            value = rng.choice((float("nan"), float("inf"), -float("inf"), -0.0, 1e308))
        elif t == "uuid":
            value = rng.choice((ZERO_UUID, METADATA_TOPIC_ID, uuid.UUID(int=2**128 - 1), self.random_uuid()))
        elif t == "string":
            value = self.hostile_string()
        else:  # bytes, records
            value = self.hostile_records() if t == "records" else rng.choice((None, b"", rng.randbytes(64)))
        self.notes.append(f"{what}={_short(value)!r}")
        return value

    def hostile_string(self):
        rng = self.rng
        kind = rng.randrange(7)
        if kind == 0:
            return None  # null, nullable or not
        if kind in (1, 5):  # twice as likely: the int16 limit is where the known crashes are
            n = rng.choice(HUGE_STRING_BYTES)
            return rng.choice(("x" * n, "\u00e9" * (n // 2)))  # ASCII, or two-byte characters
        if kind == 2:
            return Raw(rng.choice(INVALID_UTF8))
        if kind == 3:
            return rng.choice(HOSTILE_TOPIC_NAMES)
        if kind == 4:
            return rng.choice(HOSTILE_REGEXES)
        return rng.choice(("", "\x00", "\u202e", "User:", "*", "%s%n", "../../etc/passwd"))

    def hostile_records(self):
        rng = self.rng
        batch = self.batch()
        kind = rng.randrange(7)
        if kind == 0:
            self.notes.append("two record batches")
            return self.batch(plain=True) + self.batch(plain=True)
        if kind == 1:
            b = bytearray(batch)
            b[rng.randrange(21, len(b))] ^= 0xFF  # past the CRC field: the CRC no longer matches
            return bytes(b)
        if kind == 2:
            return batch[:rng.randrange(len(batch))]
        if kind == 3:
            b = bytearray(batch)
            b[57:61] = struct.pack(">i", rng.choice((0, -1, 2**31 - 1, 1000)))  # RecordsCount lies
            return bytes(b)
        if kind == 4:
            b = bytearray(batch)
            b[8:12] = struct.pack(">i", rng.choice((0, 48, 2**31 - 1, -1)))  # Length lies
            return bytes(b)
        if kind == 5:
            return self.batch(control=True)
        return rng.choice((None, b"", rng.randbytes(rng.randint(1, 80))))

    # --- plausible values ---------------------------------------------------------------------------
    def plausible(self, f: FieldInfo, owner: str):
        t = f.type
        if t == "string":
            return self.plausible_string(f.attr, owner)
        if t == "uuid":
            return self.plausible_uuid(f.attr)
        if t == "records":
            return self.batch()
        if t == "bytes":
            return self.rng.choice((b"", b"\x00\x01", self.rng.randbytes(8)))
        if t == "bool":
            return self.rng.random() < 0.5
        if t == "float64":
            return self.rng.choice((0.0, 0.5))
        return self.plausible_int(f.attr, t)

    def random_uuid(self) -> uuid.UUID:
        return uuid.UUID(int=self.rng.getrandbits(128))

    def topic(self) -> str:
        names = list(self.pools.topics)
        return self.rng.choice(names + ["fuzz-new-" + str(self.rng.randrange(50))])

    def plausible_string(self, attr: str, owner: str):
        rng, pools = self.rng, self.pools
        if attr == "cluster_id":
            return rng.choice((pools.cluster_id, pools.cluster_id, "not-this-cluster"))
        if "regex" in attr:
            return rng.choice(CATASTROPHIC_REGEXES + ("fuzz-.*", "y+", rng.choice(HOSTILE_REGEXES)))
        if "transactional_id" in attr:
            return rng.choice(pools.transactional_ids + ("fuzz-txn-2",))
        if "group" in attr and "instance" not in attr:
            return rng.choice(pools.groups)
        if attr == "member_id":
            return rng.choice(("", "fuzz-member", str(self.random_uuid())))
        if attr in ("group_instance_id", "instance_id"):
            return rng.choice((None, "fuzz-instance"))
        if attr in ("name", "value") and "Config" in owner or owner == "AlterableConfig":
            return rng.choice(pools.config_names if attr == "name" else pools.config_values)
        if attr in ("configuration_keys",):
            return rng.choice(pools.config_names)
        if attr == "name" and owner in ("ScramCredentialDeletion", "ScramCredentialUpsertion", "UserName"):
            return rng.choice(("alice", "admin", "fuzz-user"))
        if attr == "name" and owner in ("Feature", "FeatureUpdateKey") or attr == "feature":
            return rng.choice(("metadata.version", "kraft.version", "transaction.version", "group.version", "x"))
        if attr == "server_assignor":
            return rng.choice((None, "uniform", "range"))
        if attr == "name" and owner == "JoinGroupRequestProtocol" or attr == "protocol_name":
            return rng.choice(("range", "roundrobin", "x"))
        if attr == "protocol_type":
            return rng.choice(("consumer", "connect", ""))
        if attr in ("name", "topic", "topic_name", "topic_names", "subscribed_topic_names", "resource_name",
                    "resource_name_filter"):
            return self.topic() if attr != "resource_name" or rng.random() < 0.7 else rng.choice(pools.groups)
        if attr in ("key", "coordinator_keys"):
            return rng.choice(pools.groups + pools.transactional_ids)
        if "principal" in attr:
            return rng.choice(("User:alice", "User:admin", "User:*", "User:ANONYMOUS"))
        if attr in ("host", "host_filter"):
            return rng.choice(("*", "127.0.0.1", "localhost"))
        if attr == "mechanism":
            return rng.choice(("PLAIN", "SCRAM-SHA-256"))
        if attr in ("rack", "rack_id"):
            return rng.choice((None, "rack-a"))
        if attr in ("states_filter", "state_filters", "types_filter"):
            return rng.choice(("Stable", "Empty", "Ongoing", "consumer", "classic"))
        return rng.choice(("", "fuzz", "0"))

    def plausible_uuid(self, attr: str) -> uuid.UUID:
        if attr == "topic_id":
            ids = [tid for tid, _ in self.pools.topics.values()]
            return self.rng.choice(ids + [ZERO_UUID, self.random_uuid()])
        return self.rng.choice((ZERO_UUID, self.random_uuid()))

    def plausible_int(self, attr: str, t: str) -> int:
        rng = self.rng
        if "partition" in attr and "epoch" not in attr and "max_bytes" not in attr or attr in ("index", "partition"):
            return rng.choice((0, 0, 1, 2, 5))
        if attr in ("max_wait_ms", "timeout_ms", "rebalance_timeout_ms", "transaction_timeout_ms"):
            return rng.choice((0, 100, 500))  # requests may wait this long: kept short so a hang stands out
        if attr == "session_timeout_ms":
            return rng.choice((500, 1000, 30_000))
        if "epoch" in attr or attr in ("generation_id", "generation_id_or_member_epoch"):
            return rng.choice((-1, 0, 1))
        if attr in ("broker_id", "broker_ids", "replica_id", "leader_id", "candidate_id", "voter_id", "node_id",
                    "new_isr", "preferred_successors"):
            return rng.choice(self.pools.node_ids + (-1, 100))
        if attr in ("num_partitions", "count"):
            return rng.choice((1, 2, 4, -1))
        if attr == "replication_factor":
            return rng.choice((1, -1, 2))
        if attr == "acks":
            return rng.choice((-1, 1, 0))
        if "producer_id" in attr:
            return rng.choice((-1, 0, 1000))
        if "offset" in attr or attr in ("timestamp", "position", "high_watermark"):
            return rng.choice((0, 1, -1, -2, 10))
        if "bytes" in attr:
            return rng.choice((1, 1 << 20, 0))
        if attr in ("key_type", "isolation_level", "election_type", "endpoint_type", "config_operation"):
            return rng.choice((0, 1, 2))
        if attr in ("resource_type", "resource_type_filter", "operation", "permission_type", "pattern_type_filter",
                    "resource_pattern_type", "mechanism"):
            return rng.randrange(0, 8)
        if attr == "port":
            return rng.choice((9092, 0))
        return rng.choice((0, 1, -1))

    def batch(self, control: bool = False, plain: bool = False) -> bytes:
        """A valid record batch: now and then idempotent or transactional (never when ``plain``), compressed."""
        rng = self.rng
        transactional = not (control or plain) and rng.random() < 0.2
        idempotent = transactional or not plain and rng.random() < 0.2
        b = RecordBatchBuilder(base_offset=0, is_control=control, is_transactional=transactional,
                               producer_id=1000 if idempotent else -1, producer_epoch=0 if idempotent else -1,
                               base_sequence=0 if idempotent else -1,
                               compression=rng.choice(("none", "none", "gzip", "zstd")))
        timestamp = BATCH_TIME_MS + rng.randrange(10**6)  # (never the clock's: a case must come out the same again)
        for i in range(rng.randint(1, 3)):
            b.append(None if rng.random() < 0.3 else b"k%d" % i, rng.randbytes(rng.randint(0, 32)),
                     timestamp=timestamp + i)
        return b.build()


# ------------------------------------------------------------------------------------------------ the cases
def make_case(seed: int, stream: str, index: int, api_key: int, version: int, pools: Pools,
              plausible: bool = False) -> Case:
    """Case ``index`` of ``stream``: for (``api_key``, ``version``), a hostile request or a mutated plausible one
    (``plausible``: a plausible one, whatever the draw)."""
    rng = case_rng(seed, stream, index)
    correlation_id = rng.randrange(1, 2**31 - 1) if rng.random() < 0.9 else rng.choice((0, -1, -2**31))
    roll = rng.random()
    mode = "mutation" if roll < 0.3 else "plausible" if roll < 0.4 else "one hostile value" if roll < 0.75 else "hostile"
    if plausible:
        mode = "plausible"
    if mode == "hostile":
        gen = Generator(rng, pools, temperature=rng.choice((0.05, 0.15, 0.4)))
        mode += f" t={gen.temperature}"
    else:
        one = rng.randrange(leaf_count(APIS[api_key].request._info, version)) if mode == "one hostile value" else None
        gen = Generator(rng, pools, one=one)
    tree = gen.message(api_key, version)
    client_id = gen.hostile_string() if gen.hot() else "fuzz"
    header_tags = gen.unknown_tags() if APIS[api_key].is_flexible(version) and gen.hot() else None
    frame, writer = encode_frame(api_key, version, correlation_id, client_id, tree, header_tags)
    case = Case(seed, stream, index, api_key, version, mode, tree, client_id, frame, gen.notes)
    if mode == "mutation":
        mutate_frame(rng, case, writer)
    return case


def leaf_count(info: StructInfo, version: int) -> int:
    """Fields of a message at ``version`` that hold a value, those of its structs included (an array's once): about
    how many values a plausible request has."""
    return sum(leaf_count(f.struct, version) if f.struct is not None else 1
               for f in info.fields if f.present(version)) or 1


def mutate_frame(rng: random.Random, case: Case, writer: Writer) -> None:
    """One to three mutations of the frame's bytes. The size prefix stays true unless the mutation is a size lie;
    the api key and version are kept (a flip there mostly tests the dispatcher's table, which a few cases do)."""
    body = bytearray(case.frame[4:])
    for _ in range(rng.choice((1, 1, 2, 3))):
        op = rng.randrange(8)
        if op == 0 and len(body) > 4:
            flips = [rng.randrange(4, len(body)) for _ in range(rng.randint(1, 4))]
            for i in flips:
                body[i] ^= 1 << rng.randrange(8)
            case.notes.append(f"bit flips at {flips}")
        elif op == 1:
            cut = rng.randrange(len(body) + 1)
            del body[cut:]
            case.notes.append(f"truncated to {cut} bytes")
        elif op == 2:
            extra = rng.randbytes(rng.randint(1, 16))
            body += extra
            case.notes.append(f"extended by {len(extra)} bytes")
        elif op in (3, 4) and writer.lengths:
            offset, kind = rng.choice(writer.lengths)
            lie = rng.choice((0, 1, 2, 127, 128, 32767, 2**31 - 1, -2))
            _lie_about_length(body, offset, kind, lie)  # (the writer's offsets are the frame's, after the size)
            case.notes.append(f"length prefix at byte {offset} ({kind}) now says {lie}")
        elif op == 5 and len(body) > 8:
            i = rng.randrange(8, len(body))
            body[i:i] = rng.randbytes(rng.randint(1, 8))
            case.notes.append(f"inserted bytes at {i}")
        elif op == 6:
            case.frame = _size_lie(rng, case, bytes(body))
            return
        elif op == 7 and len(body) >= 4:
            key, version = struct.unpack_from(">hh", body, 0)
            new = rng.choice(((key, version + 1), (key, -1), (key, 2**15 - 1), (rng.choice((-1, 99, 1000)), 0)))
            struct.pack_into(">HH", body, 0, new[0] & 0xFFFF, new[1] & 0xFFFF)
            case.notes.append(f"header says api key {new[0]} v{new[1]}")
    case.frame = struct.pack(">i", len(body)) + bytes(body)


def _lie_about_length(body: bytearray, offset: int, kind: str, lie: int) -> None:
    """Overwrite the length prefix at ``offset`` (if earlier mutations left it in place) to say ``lie``."""
    if kind == "uvarint":
        end = offset
        while end < len(body) and body[end] & 0x80:
            end += 1
        if end >= len(body):
            return
        lied = Writer()
        lied.uvarint(lie + 1)
        body[offset:end + 1] = lied.buf
        return
    width = 2 if kind == "int16" else 4
    if offset + width <= len(body):
        bound = 2 ** (8 * width - 1)
        struct.pack_into(">h" if width == 2 else ">i", body, offset, max(-bound, min(lie, bound - 1)))


def _size_lie(rng: random.Random, case: Case, body: bytes) -> bytes:
    if rng.random() < 0.5 and len(body) > 1:
        claimed = rng.randrange(len(body))
        case.trailing_garbage = True
    else:
        claimed = len(body) + rng.choice((1, 100, 1 << 20))
        case.incomplete = True
    case.notes.append(f"size prefix says {claimed} for {len(body)} bytes")
    return struct.pack(">i", claimed) + body


def schedule(seed: int, stream: str, advertised: dict[int, tuple[int, int]]) -> list[tuple[int, int]]:
    """Every (api key, version) the listener advertises, in a seeded order: cases cycle through it, so each is
    fuzzed before any is fuzzed twice."""
    pairs = [(key, v) for key, (lo, hi) in sorted(advertised.items()) if key in APIS for v in range(lo, hi + 1)]
    random.Random(f"{seed}/{stream}/schedule").shuffle(pairs)
    return pairs


def cases(seed: int, stream: str, advertised: dict[int, tuple[int, int]], pools: Pools, count: int, start: int = 0,
          plausible_first: bool = False):
    """Cases ``start`` .. ``count - 1`` of a stream (a listener's share of a run); ``plausible_first``: the first
    case of every API and version is plausible, so that each is seen well-formed at least once."""
    pairs = schedule(seed, stream, advertised)
    for index in range(start, count):
        key, version = pairs[index % len(pairs)]
        yield make_case(seed, stream, index, key, version, pools, plausible_first and index < len(pairs))
