"""Reading topics over the wire with the options and row schema of Spark's own Kafka connector (``spark-sql-kafka``).

``spark.read.format("kraftwire").option("kafka.bootstrap.servers", ...)`` (and ``readStream``) selects this reader;
a job written for ``format("kafka")`` runs unchanged. Rows: ``key binary, value binary, topic string, partition int,
offset long, timestamp timestamp, timestampType int`` and, with ``includeHeaders=true``,
``headers array<struct<key:string,value:binary>>`` — the connector's names, types and order (``headers`` is null
for a record without any, as the connector has it).

Options (names case-insensitive, meanings as the connector's):

    subscribe | subscribePattern | assign   exactly one: topics (comma-separated), a regex matched against whole
                                            topic names (internal topics excluded), or ``{"t":[0,1]}``
    startingOffsets      earliest | latest | ``{"t":{"0":23,"1":-2}}`` (-2 earliest, -1 latest)
                         default: earliest (batch), latest (streaming); latest is refused in batch
    endingOffsets        batch only: latest (default) | per-partition JSON; earliest is refused
    startingOffsetsByTimestamp / endingOffsetsByTimestamp  ``{"t":{"0":1700000000000}}`` (ListOffsets by timestamp)
    startingTimestamp / endingTimestamp     one timestamp for every partition (wins over the JSON forms)
    startingOffsetsByTimestampStrategy      error (default: a partition without a record at or after the timestamp
                                            is an error) | latest; an ending timestamp past the last record ends
                                            at the latest offset
    maxOffsetsPerTrigger streaming: at most this many offsets per micro-batch, spread over the partitions in
                         proportion to their backlog
    minPartitions        split the offset ranges so there are at least this many Spark partitions (the connector
                         takes it as a hint and may plan a few less; here it is a floor when there are enough offsets)
    failOnDataLoss       default true: an offset asked for below the log start (retention, delete-records), a
                         partition gone or an offset moved backwards is an error; false: skip what is gone
    includeHeaders       default false
    kafka.*              consumer settings: ``kafka.bootstrap.servers`` (required), ``kafka.security.protocol``,
                         ``kafka.ssl.*`` (PEM files, as kraftwire's tools read them), ``kafka.sasl.mechanism``,
                         ``kafka.sasl.jaas.config``, ``kafka.client.id``, ``kafka.fetch.max.bytes``,
                         ``kafka.max.partition.fetch.bytes`` (default 8 MiB: one partition is fetched at a time,
                         and 8 MiB fetches read about twice as fast as the Java consumer's 1 MiB default),
                         ``kafka.request.timeout.ms``,
                         ``kafka.isolation.level`` (read_uncommitted, the consumer's default, or read_committed)

The driver resolves partitions (Metadata) and offsets (ListOffsets) and plans one Spark partition per
topic-partition range ``[start, end)``; each worker fetches its range from the partition's leader (asked again on
NOT_LEADER_OR_FOLLOWER and the like, a bounded number of times) and decodes it with the codec's columnar decode
into Arrow. Control records are never rows; with read_committed, aborted transactions' records are dropped as a
Kafka consumer drops them (the Fetch answer's AbortedTransactions). Streaming offsets are the connector's JSON,
``{"topic": {"0": next offset, ...}}``; partitions added later (or topics newly matching ``subscribePattern``) are
read from their earliest offset. :func:`plan_read` tells the ranges and offset count a batch read would cover.
"""

from __future__ import annotations

import asyncio
import json
import re
import struct
import time
from dataclasses import dataclass, field
from typing import Iterator, Optional

from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from kraftwire import error_codes as ec
from kraftwire.spark.options import OptionError, option_bool

__all__ = ["TOPIC_COLUMNS", "HEADERS_COLUMN", "TopicOptions", "OffsetRange", "ReadPlan", "TopicClient",
           "TopicBatchReader", "TopicStreamReader", "parse_options", "topic_schema", "topic_schema_for", "plan_read",
           "read_range", "over_wire"]

#: the connector's columns, in its order (Spark DDL types)
TOPIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("key", "binary"), ("value", "binary"), ("topic", "string"), ("partition", "int"), ("offset", "bigint"),
    ("timestamp", "timestamp"), ("timestampType", "int"))
HEADERS_COLUMN = ("headers", "array<struct<key:string,value:binary>>")

EARLIEST, LATEST = -2, -1
STRATEGIES = ("assign", "subscribe", "subscribepattern")
# asked again after new Metadata (9: REPLICA_NOT_AVAILABLE, 78: OFFSET_NOT_AVAILABLE)
_RETRIABLE = {ec.NOT_LEADER_OR_FOLLOWER, ec.LEADER_NOT_AVAILABLE, ec.FENCED_LEADER_EPOCH, ec.UNKNOWN_LEADER_EPOCH,
              ec.UNKNOWN_TOPIC_OR_PARTITION, ec.KAFKA_STORAGE_ERROR, 9, 78}
_METADATA_VERSION = 9
_LIST_OFFSETS_VERSION = 5
_FETCH_VERSION = 12  # topic names, AbortedTransactions
_ATTEMPTS = 100  # per request, and never past the request timeout (kafka.request.timeout.ms, default 30 s)
_BACKOFF_S = 0.2
_CONNECT_TIMEOUT_S = 10.0  # the Java client's socket.connection.setup.timeout.ms
# options of the Kafka consumer the connector refuses (it manages offsets and deserialisation itself)
_REFUSED = {
    "auto.offset.reset": "set the source option startingOffsets to earliest or latest instead",
    "key.deserializer": "keys are bytes: deserialize them with DataFrame operations",
    "value.deserializer": "values are bytes: deserialize them with DataFrame operations",
    "enable.auto.commit": "the source tracks offsets itself and commits none",
    "interceptor.classes": "the source reads bytes; interceptors would see none of its rows",
}


def over_wire(options) -> bool:
    """Whether ``options`` select reading topics over the wire (``kafka.bootstrap.servers`` is given)."""
    return any(str(k).lower() == "kafka.bootstrap.servers" for k in options)


# ------------------------------------------------------------------------------------------------ options

@dataclass(frozen=True)
class OffsetSpec:
    """Where a range starts or ends: ``kind`` earliest | latest | offsets (``values`` {(t, p): offset}) |
    timestamps (``values`` {(t, p): ms}) | timestamp (``ts``: one timestamp for all)."""

    kind: str
    values: tuple = ()
    ts: Optional[int] = None

    def as_dict(self) -> dict:
        return dict(self.values)


@dataclass(frozen=True)
class TopicOptions:
    bootstrap: str
    strategy: str  # assign | subscribe | subscribepattern
    topics: tuple = ()  # subscribe
    pattern: Optional[str] = None  # subscribePattern
    assigned: tuple = ()  # assign: ((topic, partition), ...)
    starting: OffsetSpec = OffsetSpec("earliest")
    ending: OffsetSpec = OffsetSpec("latest")
    timestamp_strategy: str = "error"
    max_offsets_per_trigger: Optional[int] = None
    min_partitions: Optional[int] = None
    fail_on_data_loss: bool = True
    include_headers: bool = False
    consumer: tuple = ()  # (key, value) of the kafka.* options, prefix dropped
    isolation: int = 0  # 0 read_uncommitted (the consumer's default), 1 read_committed
    client_id: str = "kraftwire-spark"
    fetch_max_bytes: int = 50 * 1024 * 1024
    partition_fetch_bytes: int = 8 * 1024 * 1024
    timeout_s: float = 30.0

    def consumer_props(self) -> dict:
        return dict(self.consumer)


def _positive(opts: dict, key: str, name: str) -> Optional[int]:
    v = opts.get(key)
    if v is None:
        return None
    try:
        n = int(str(v).strip())
    except ValueError:
        n = 0
    if n <= 0:
        raise OptionError(f"kraftwire: invalid value {v!r} for option {name}: a positive integer")
    return n


def _json_partitions(text: str, name: str) -> dict:
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    if not isinstance(obj, dict) or not all(isinstance(v, (dict, list)) for v in obj.values()):
        raise OptionError(f"kraftwire: option {name} must be JSON like {{\"topicA\":{{\"0\":23,\"1\":-1}}}}, "
                          f"got {text!r}")
    return obj


def _offset_json(text: str, name: str, *, timestamps: bool = False) -> tuple:
    out = []
    for topic, parts in _json_partitions(text, name).items():
        if not isinstance(parts, dict):
            raise OptionError(f"kraftwire: option {name}: topic {topic!r} needs an object of partition: "
                              f"{'timestamp' if timestamps else 'offset'}, got {parts!r}")
        for p, off in parts.items():
            if not str(p).lstrip("-").isdigit() or isinstance(off, bool) or not isinstance(off, int):
                raise OptionError(f"kraftwire: option {name}: {topic!r} partition {p!r}: {off!r} is not an integer")
            if timestamps and off < 0:
                raise OptionError(f"kraftwire: option {name}: {topic}-{p}: a timestamp is at least 0, not {off}")
            if not timestamps and off < EARLIEST:
                raise OptionError(f"kraftwire: option {name}: {topic}-{p}: an offset is >= 0, -1 (latest) or "
                                  f"-2 (earliest), not {off}")
            out.append(((topic, int(p)), off))
    return tuple(sorted(out))


def _spec(opts: dict, prefix: str, default: str, *, batch: bool) -> OffsetSpec:
    """startingOffsets / endingOffsets and their timestamp forms (the timestamp forms win, as in the connector)."""
    ts_key, by_ts_key, off_key = f"{prefix}timestamp", f"{prefix}offsetsbytimestamp", f"{prefix}offsets"
    if opts.get(ts_key) is not None:
        v = str(opts[ts_key]).strip()
        if not v.isdigit():
            raise OptionError(f"kraftwire: invalid value {opts[ts_key]!r} for option {prefix}Timestamp: "
                              "a timestamp in ms (>= 0)")
        return OffsetSpec("timestamp", ts=int(v))
    if opts.get(by_ts_key) is not None:
        return OffsetSpec("timestamps", _offset_json(str(opts[by_ts_key]), f"{prefix}OffsetsByTimestamp",
                                                     timestamps=True))
    text = opts.get(off_key)
    if text is None:
        return OffsetSpec(default)
    s = str(text).strip()
    if s.lower() in ("earliest", "latest"):
        spec = OffsetSpec(s.lower())
    else:
        spec = OffsetSpec("offsets", _offset_json(s, f"{prefix}Offsets"))
    if batch and prefix == "starting":
        if spec.kind == "latest":
            raise OptionError("kraftwire: option startingOffsets can't be latest for batch queries")
        for (t, p), off in spec.values:
            if off == LATEST:
                raise OptionError(f"kraftwire: option startingOffsets for {t}-{p} can't be latest (-1) for batch "
                                  "queries")
    if batch and prefix == "ending":
        if spec.kind == "earliest":
            raise OptionError("kraftwire: option endingOffsets can't be earliest for batch queries")
        for (t, p), off in spec.values:
            if off == EARLIEST:
                raise OptionError(f"kraftwire: option endingOffsets for {t}-{p} can't be earliest (-2) for batch "
                                  "queries")
    return spec


def parse_options(options, *, streaming: bool) -> TopicOptions:
    """Validate the connector's options (``OptionError`` names the option)."""
    opts = {str(k).lower(): v for k, v in dict(options).items()}
    bootstrap = str(opts.get("kafka.bootstrap.servers") or "").strip()
    if not bootstrap:
        raise OptionError("kraftwire: option kafka.bootstrap.servers must be given (HOST:PORT[,HOST:PORT])")
    from kraftwire.server.edge.client import parse_host_port

    for s in bootstrap.split(","):
        if s.strip():
            try:
                parse_host_port(s)
            except ValueError:
                raise OptionError(f"kraftwire: option kafka.bootstrap.servers: {s.strip()!r} is not "
                                  "HOST:PORT") from None

    given = [k for k in STRATEGIES if opts.get(k) is not None]
    names = "assign, subscribe, subscribePattern"
    if not given:
        raise OptionError(f"kraftwire: one of the options {names} must be given to read topics")
    if len(given) > 1:
        raise OptionError(f"kraftwire: only one of the options {names} can be given (got "
                          f"{', '.join('subscribePattern' if g == 'subscribepattern' else g for g in given)})")
    strategy = given[0]
    value = str(opts[strategy])
    topics, pattern, assigned = (), None, ()
    if strategy == "subscribe":
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            raise OptionError(f"kraftwire: no topics to subscribe to: option subscribe is {value!r}")
    elif strategy == "subscribepattern":
        pattern = value.strip()
        if not pattern:
            raise OptionError(f"kraftwire: option subscribePattern is empty ({value!r})")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise OptionError(f"kraftwire: option subscribePattern {pattern!r} is not a valid regex: {exc}") from None
    else:
        obj = _json_partitions(value, "assign")
        pairs = []
        for t, parts in obj.items():
            if not isinstance(parts, list) or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0
                                                      for p in parts):
                raise OptionError(f"kraftwire: option assign: topic {t!r} needs a list of partition numbers, "
                                  f"got {parts!r}")
            pairs += [(t, p) for p in parts]
        if not pairs:
            raise OptionError(f"kraftwire: no topic-partitions to assign: option assign is {value!r}")
        assigned = tuple(sorted(set(pairs)))

    consumer = {k[len("kafka."):]: str(v) for k, v in opts.items() if k.startswith("kafka.")}
    for key, why in _REFUSED.items():
        if key in consumer:
            raise OptionError(f"kraftwire: option kafka.{key} is not supported: {why}")
    isolation_text = consumer.get("isolation.level", "read_uncommitted").strip().lower()
    if isolation_text not in ("read_uncommitted", "read_committed"):
        raise OptionError(f"kraftwire: option kafka.isolation.level must be read_uncommitted or read_committed, "
                          f"not {consumer['isolation.level']!r}")
    if streaming and any(opts.get(k) is not None for k in ("endingoffsets", "endingoffsetsbytimestamp",
                                                             "endingtimestamp")):
        raise OptionError("kraftwire: option endingOffsets (and its timestamp forms) is not valid in streaming "
                          "queries")
    strategy_ts = str(opts.get("startingoffsetsbytimestampstrategy", "error")).strip().lower()
    if strategy_ts not in ("error", "latest"):
        raise OptionError(f"kraftwire: option startingOffsetsByTimestampStrategy must be error or latest, not "
                          f"{opts['startingoffsetsbytimestampstrategy']!r}")
    starting = _spec(opts, "starting", "latest" if streaming else "earliest", batch=not streaming)
    ending = OffsetSpec("latest") if streaming else _spec(opts, "ending", "latest", batch=True)
    if strategy == "assign":
        for spec, name in ((starting, "starting"), (ending, "ending")):
            extra = sorted({tp for tp, _ in spec.values} - set(assigned))
            if extra:
                raise OptionError(f"kraftwire: option {name}Offsets names {', '.join(f'{t}-{p}' for t, p in extra)}, "
                                  "which option assign does not")
    fetch_bytes = _positive(consumer, "fetch.max.bytes", "kafka.fetch.max.bytes") or 50 * 1024 * 1024
    part_bytes = (_positive(consumer, "max.partition.fetch.bytes", "kafka.max.partition.fetch.bytes")
                  or TopicOptions.partition_fetch_bytes)
    timeout_ms = _positive(consumer, "request.timeout.ms", "kafka.request.timeout.ms") or 30_000
    opt = TopicOptions(
        bootstrap=bootstrap, strategy=strategy, topics=topics, pattern=pattern, assigned=assigned,
        starting=starting, ending=ending, timestamp_strategy=strategy_ts,
        max_offsets_per_trigger=_positive(opts, "maxoffsetspertrigger", "maxOffsetsPerTrigger"),
        min_partitions=_positive(opts, "minpartitions", "minPartitions"),
        fail_on_data_loss=option_bool(opts, "failOnDataLoss", True),
        include_headers=option_bool(opts, "includeHeaders", False),
        consumer=tuple(sorted(consumer.items())), isolation=1 if isolation_text == "read_committed" else 0,
        client_id=consumer.get("client.id") or "kraftwire-spark", fetch_max_bytes=fetch_bytes,
        partition_fetch_bytes=part_bytes, timeout_s=timeout_ms / 1000.0)
    security(opt)  # security settings are checked on the driver, before any task runs
    return opt


def security(opt: TopicOptions):
    """(TLS context or None, SaslLogin or None) from the ``kafka.security.protocol`` / ``kafka.ssl.*`` /
    ``kafka.sasl.*`` options, read as kraftwire's tools read a ``--command-config`` file."""
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import security_from

    try:
        return security_from(opt.consumer_props())
    except ConfigError as exc:
        raise OptionError(f"kraftwire: option kafka.{exc.key}: {exc.reason} (value {exc.value!r})") from None
    except OSError as exc:
        raise OptionError(f"kraftwire: options kafka.ssl.*: cannot load the TLS files: {exc}") from None


def topic_schema_for(options):
    """The schema the options give (``includeHeaders`` adds ``headers``); the rest is checked by the readers."""
    opts = {str(k).lower(): v for k, v in dict(options).items()}
    return topic_schema(option_bool(opts, "includeHeaders", False))


def topic_schema(include_headers: bool = False):
    """The connector's schema as a StructType (no JVM needed)."""
    from pyspark.sql.types import StructType

    def t(ddl: str):
        if ddl.startswith("array"):
            return {"type": "array", "containsNull": True, "elementType": {"type": "struct", "fields": [
                {"name": "key", "type": "string", "nullable": True, "metadata": {}},
                {"name": "value", "type": "binary", "nullable": True, "metadata": {}}]}}
        return {"int": "integer", "bigint": "long"}.get(ddl, ddl)

    cols = TOPIC_COLUMNS + ((HEADERS_COLUMN,) if include_headers else ())
    return StructType.fromJson({"type": "struct", "fields": [
        {"name": n, "type": t(d), "nullable": True, "metadata": {}} for n, d in cols]})


# ------------------------------------------------------------------------------------------------ the wire client

@dataclass
class FetchResult:
    error: int
    records: bytes
    high_watermark: int
    last_stable_offset: int
    log_start: int
    aborted: list  # [(producer id, first offset)]


def _fatal_errors() -> tuple:
    import ssl

    from kraftwire.server.edge.client import SaslLoginError

    return (SaslLoginError, ssl.SSLCertVerificationError)


_FATAL = _fatal_errors()


class TopicClient:
    """A blocking client over :class:`kraftwire.server.edge.client.KafkaConnection` (one event loop, one connection per
    broker, kept open): Metadata, ListOffsets and Fetch, each sent to the partition's leader and sent again — after
    asking Metadata anew — on a retriable error or a lost connection, a bounded number of times."""

    def __init__(self, opt: TopicOptions) -> None:
        from kraftwire.server.edge.client import parse_host_port

        self.opt = opt
        self.bootstrap = [parse_host_port(s) for s in opt.bootstrap.split(",") if s.strip()]
        self.tls, self.sasl = security(opt)
        self.loop = asyncio.new_event_loop()
        self.conns: dict = {}
        self.brokers: dict[int, tuple[str, int]] = {}
        self.leaders: dict[tuple[str, int], int] = {}
        self.partitions: dict[str, list[int]] = {}
        self.internal: set[str] = set()

    def close(self) -> None:
        for conn in self.conns.values():
            try:
                self.loop.run_until_complete(conn.close())
            except Exception:  # noqa: BLE001 - closing a broken connection
                pass
        self.conns.clear()
        self.loop.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _request(self, addr: tuple[str, int], body, version: int):
        from kraftwire.server.edge.client import KafkaConnection

        conn = self.conns.get(addr)
        if conn is None:
            conn = self.loop.run_until_complete(KafkaConnection.open(
                addr[0], addr[1], timeout=min(self.opt.timeout_s, _CONNECT_TIMEOUT_S), client_id=self.opt.client_id,
                ssl_context=self.tls, sasl=self.sasl))
            self.conns[addr] = conn
        try:
            return self.loop.run_until_complete(conn.request(body, version, timeout=self.opt.timeout_s))
        except BaseException:
            self.conns.pop(addr, None)
            try:
                self.loop.run_until_complete(conn.close())
            except Exception:  # noqa: BLE001
                pass
            raise

    def refresh(self, topics: Optional[list] = None) -> None:
        """Metadata (of ``topics``, or of every topic), from the first server that answers."""
        from kraftwire.protocol import messages as w

        M = w.MetadataRequest
        req = M(topics=None if topics is None else [M.MetadataRequestTopic(name=t) for t in topics],
                allow_auto_topic_creation=False)
        last = None
        addrs = list(dict.fromkeys(list(self.brokers.values()) + self.bootstrap))
        deadline = time.monotonic() + self.opt.timeout_s
        for attempt in range(_ATTEMPTS):
            if attempt and time.monotonic() > deadline:
                break
            for addr in addrs if attempt == 0 else self.bootstrap + list(self.brokers.values()):
                try:
                    md = self._request(addr, req, _METADATA_VERSION)
                except _FATAL as exc:  # a refused login or certificate: asking again would not help
                    raise RuntimeError(f"kraftwire: connecting to {addr[0]}:{addr[1]}: {exc}") from exc
                except Exception as exc:  # noqa: BLE001 - try the next server
                    last = exc
                    continue
                self.brokers = {b.node_id: (b.host, b.port) for b in md.brokers}
                for t in md.topics:
                    if t.error_code == ec.TOPIC_AUTHORIZATION_FAILED:
                        raise RuntimeError(f"kraftwire: not authorized to read topic {t.name}")
                    if t.error_code:
                        self.partitions.pop(t.name, None)
                        continue
                    if t.is_internal:
                        self.internal.add(t.name)
                    self.partitions[t.name] = sorted(p.partition_index for p in t.partitions)
                    for p in t.partitions:
                        self.leaders[(t.name, p.partition_index)] = p.leader_id if p.error_code in (0, 9) else -1
                if topics is None:
                    for name in set(self.partitions) - {t.name for t in md.topics}:
                        del self.partitions[name]
                return
            time.sleep(_BACKOFF_S)
        raise RuntimeError(f"kraftwire: no Metadata answer from {self.opt.bootstrap}: {last}")

    def leader(self, tp: tuple[str, int]) -> Optional[tuple[str, int]]:
        lid = self.leaders.get(tp, -1)
        return self.brokers.get(lid) if lid >= 0 else None

    # ---------------------------------------------------------------------------------------- ListOffsets

    def list_offsets(self, wanted: dict) -> dict:
        """{(t, p): timestamp (-2 earliest, -1 latest, or ms)} -> {(t, p): offset} (-1 when no record has a timestamp
        at or after the one asked for); each partition asked of its leader, with the client's isolation level."""
        from kraftwire.protocol import messages as w

        L = w.ListOffsetsRequest
        out: dict = {}
        todo = dict(wanted)
        last = None
        deadline = time.monotonic() + self.opt.timeout_s
        for attempt in range(_ATTEMPTS):
            if not todo:
                return out
            if time.monotonic() > deadline:
                break
            if any(self.leader(tp) is None for tp in todo):
                self.refresh(sorted({t for t, _ in todo}))
            by_leader: dict = {}
            for tp, ts in todo.items():
                addr = self.leader(tp)
                if addr is not None:
                    by_leader.setdefault(addr, {}).setdefault(tp[0], []).append((tp[1], ts))
                else:
                    last = f"{tp[0]}-{tp[1]} has no leader"
                    if tp[0] not in self.partitions and attempt >= 5:  # not just being created: it is not there
                        raise RuntimeError(f"kraftwire: topic {tp[0]} does not exist")
                    if tp[0] in self.partitions and tp[1] not in self.partitions[tp[0]]:
                        raise RuntimeError(f"kraftwire: partition {tp[0]}-{tp[1]} does not exist "
                                           f"(topic {tp[0]} has {len(self.partitions[tp[0]])} partitions)")
            stale = False
            for addr, topics in by_leader.items():
                req = L(replica_id=-1, isolation_level=self.opt.isolation, topics=[
                    L.ListOffsetsTopic(name=t, partitions=[L.ListOffsetsPartition(
                        partition_index=p, current_leader_epoch=-1, timestamp=ts) for p, ts in parts])
                    for t, parts in topics.items()])
                try:
                    resp = self._request(addr, req, _LIST_OFFSETS_VERSION)
                except Exception as exc:  # noqa: BLE001 - the broker went away: ask Metadata again
                    last, stale = exc, True
                    continue
                for t in resp.topics:
                    for p in t.partitions:
                        tp = (t.name, p.partition_index)
                        if p.error_code == 0:
                            out[tp] = p.offset
                            todo.pop(tp, None)
                        elif p.error_code in _RETRIABLE:
                            last, stale = f"{t.name}-{p.partition_index}: {ec.name_of(p.error_code)}", True
                        else:
                            raise RuntimeError(f"kraftwire: ListOffsets of {t.name}-{p.partition_index}: "
                                               f"{ec.name_of(p.error_code)}")
            if todo:
                if stale:
                    self.leaders = {k: v for k, v in self.leaders.items() if k not in todo}
                time.sleep(_BACKOFF_S)
        if not todo:
            return out
        raise RuntimeError(f"kraftwire: ListOffsets of {_fmt(todo)} failed within {self.opt.timeout_s} s "
                           f"(kafka.request.timeout.ms): {last}")

    # ---------------------------------------------------------------------------------------- Fetch

    def fetch(self, tp: tuple[str, int], offset: int, max_wait_ms: int = 500) -> FetchResult:
        """One partition's Fetch at ``offset`` from its leader; OFFSET_OUT_OF_RANGE is returned, not raised."""
        from kraftwire.protocol import messages as w

        F = w.FetchRequest
        req = F(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=self.opt.fetch_max_bytes,
                isolation_level=self.opt.isolation, session_id=0, session_epoch=-1,
                topics=[F.FetchTopic(topic=tp[0], partitions=[F.FetchPartition(
                    partition=tp[1], current_leader_epoch=-1, fetch_offset=offset, last_fetched_epoch=-1,
                    log_start_offset=-1, partition_max_bytes=min(self.opt.partition_fetch_bytes,
                                                                 self.opt.fetch_max_bytes))])],
                forgotten_topics_data=[], rack_id="")
        last = None
        deadline = time.monotonic() + self.opt.timeout_s
        for attempt in range(_ATTEMPTS):
            if attempt and time.monotonic() > deadline:
                break
            addr = self.leader(tp)
            if addr is None:
                self.refresh([tp[0]])
                addr = self.leader(tp)
                if addr is None:
                    last = "no leader"
                    time.sleep(_BACKOFF_S)
                    continue
            try:
                resp = self._request(addr, req, _FETCH_VERSION)
            except Exception as exc:  # noqa: BLE001 - the leader went away: ask Metadata again
                last = exc
                self.leaders.pop(tp, None)
                time.sleep(_BACKOFF_S)
                continue
            pd = resp.responses[0].partitions[0]
            if pd.error_code in _RETRIABLE:
                last = ec.name_of(pd.error_code)
                self.leaders.pop(tp, None)
                time.sleep(_BACKOFF_S)
                continue
            if pd.error_code not in (0, ec.OFFSET_OUT_OF_RANGE):
                raise RuntimeError(f"kraftwire: Fetch of {tp[0]}-{tp[1]} at offset {offset}: "
                                   f"{ec.name_of(pd.error_code)}")
            aborted = [(a.producer_id, a.first_offset) for a in (pd.aborted_transactions or [])]
            return FetchResult(pd.error_code, bytes(pd.records or b""), pd.high_watermark, pd.last_stable_offset,
                               pd.log_start_offset, aborted)
        raise RuntimeError(f"kraftwire: Fetch of {tp[0]}-{tp[1]} at offset {offset} failed within "
                           f"{self.opt.timeout_s} s (kafka.request.timeout.ms): {last}")


# ------------------------------------------------------------------------------------------------ planning

@dataclass(frozen=True)
class OffsetRange:
    """Offsets ``[start, end)`` of one topic-partition: one Spark partition."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return max(0, self.end - self.start)


@dataclass
class ReadPlan:
    """What a batch read covers: its ranges and the offsets in them (``rows`` is an upper bound on the rows: control
    records, aborted transactions and compaction leave offsets without a row)."""

    ranges: list = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(r.size for r in self.ranges)


def resolve_partitions(client: TopicClient, opt: TopicOptions) -> list:
    """The (topic, partition) pairs the options name, sorted; Metadata asked anew."""
    if opt.strategy == "assign":
        client.refresh(sorted({t for t, _ in opt.assigned}))
        return list(opt.assigned)
    if opt.strategy == "subscribe":
        client.refresh(list(opt.topics))
        names = [t for t in opt.topics if t in client.partitions]
    else:
        client.refresh(None)
        rx = re.compile(opt.pattern)
        names = [t for t in client.partitions if t not in client.internal and rx.fullmatch(t)]
    return sorted((t, p) for t in set(names) for p in client.partitions[t])


def _fmt(tps) -> str:
    return ", ".join(f"{t}-{p}" for t, p in sorted(tps))


def resolve_offsets(client: TopicClient, opt: TopicOptions, spec: OffsetSpec, tps: list, *, starting: bool) -> dict:
    """{(t, p): offset} for ``spec`` over ``tps`` (ListOffsets for earliest/latest and timestamps)."""
    if spec.kind in ("earliest", "latest"):
        return client.list_offsets({tp: EARLIEST if spec.kind == "earliest" else LATEST for tp in tps})
    name = ("starting" if starting else "ending") + ("Offsets" if spec.kind == "offsets" else
                                                     "OffsetsByTimestamp" if spec.kind == "timestamps" else "Timestamp")
    if spec.kind == "timestamp":
        wanted = {tp: spec.ts for tp in tps}
    else:
        given = spec.as_dict()
        if set(given) != set(tps):
            raise OptionError(f"kraftwire: option {name} gives specific offsets, so it must name every partition read "
                              f"(-2 earliest, -1 latest); named: {_fmt(given)}; read: {_fmt(tps)}")
        wanted = given
        if spec.kind == "offsets":
            fixed = {tp: o for tp, o in wanted.items() if o >= 0}
            found = client.list_offsets({tp: o for tp, o in wanted.items() if o < 0})
            return {**fixed, **found}
    found = client.list_offsets(wanted)
    missing = [tp for tp, off in found.items() if off < 0]
    if missing:
        if starting and opt.timestamp_strategy == "error":
            raise RuntimeError(f"kraftwire: option {name}: no record at or after the timestamp in {_fmt(missing)} "
                               "(set startingOffsetsByTimestampStrategy to latest to start at the end instead)")
        found.update(client.list_offsets({tp: LATEST for tp in missing}))
    return found


def split_ranges(ranges: list, min_partitions: Optional[int]) -> list:
    """Drop empty ranges; with ``min_partitions`` above their count, cut the ranges into ``min_partitions`` parts in
    all (fewer only when there are fewer offsets), each range's share in proportion to its offsets (largest
    remainders first, at least one part each), the parts of a range as even as integers allow."""
    ranges = [r for r in ranges if r.size > 0]
    if not min_partitions or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)
    quotas = [r.size * min_partitions / total for r in ranges]
    parts = [min(r.size, max(1, int(q))) for r, q in zip(ranges, quotas)]
    order = sorted(range(len(ranges)), key=lambda i: (parts[i] - quotas[i], -ranges[i].size))
    for _ in range(min_partitions):  # bounded: each round adds one part or stops
        if sum(parts) >= min_partitions:
            break
        grown = False
        for i in order:
            if parts[i] < ranges[i].size:
                parts[i] += 1
                grown = True
                break
        if not grown:
            break
        order = sorted(range(len(ranges)), key=lambda i: (parts[i] - quotas[i], -ranges[i].size))
    out = []
    for r, n_parts in zip(ranges, parts):
        left, start = r.size, r.start
        for i in range(n_parts):
            n = left // (n_parts - i)
            left -= n
            out.append(OffsetRange(r.topic, r.partition, start, start + n))
            start += n
    return out


def _data_loss(opt: TopicOptions, message: str) -> None:
    if opt.fail_on_data_loss:
        raise RuntimeError(f"kraftwire: {message}. Some data may have been lost (aged out by retention, deleted, or "
                           "the topic removed); set the source option failOnDataLoss to false to go on without it")


def plan_batch(opt: TopicOptions, client: Optional[TopicClient] = None) -> ReadPlan:
    """The driver's plan of a batch read: partitions from Metadata, offsets from ListOffsets, split by
    minPartitions."""
    own = client is None
    client = client or TopicClient(opt)
    try:
        tps = resolve_partitions(client, opt)
        if not tps:
            return ReadPlan([])
        start = resolve_offsets(client, opt, opt.starting, tps, starting=True)
        end = resolve_offsets(client, opt, opt.ending, tps, starting=False)
    finally:
        if own:
            client.close()
    ranges = []
    for tp in tps:
        a, b = start[tp], end[tp]
        if a > b:
            raise RuntimeError(f"kraftwire: the starting offset {a} of {tp[0]}-{tp[1]} is after its ending offset "
                               f"{b}: check startingOffsets/endingOffsets")
        ranges.append(OffsetRange(tp[0], tp[1], a, b))
    return ReadPlan(split_ranges(ranges, opt.min_partitions))


def plan_read(options: dict) -> ReadPlan:
    """The ranges and offset count ``spark.read.format("kraftwire")`` with these options would read (no Spark)."""
    return plan_batch(parse_options(options, streaming=False))


# ------------------------------------------------------------------------------------------------ reading a range

_HDR = struct.Struct(">qi")
_ATTR = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


def _batches(data, whole: int) -> list:
    """(base offset, last offset, attributes, producer id) of each batch in ``data[:whole]``."""
    from kraftwire.records import api as layout

    out, pos = [], 0
    while pos < whole:
        base, length = _HDR.unpack_from(data, pos)
        attrs = _ATTR.unpack_from(data, pos + layout.ATTRIBUTES_POS)[0]
        last = base + _I32.unpack_from(data, pos + layout.LAST_OFFSET_DELTA_POS)[0]
        pid = _I64.unpack_from(data, pos + layout.PRODUCER_ID_POS)[0]
        out.append((base, last, attrs, pid))
        pos += length + layout.LOG_OVERHEAD
    return out


def _aborted_batches(batches: list, aborted: list) -> list:
    """Base offsets of the batches a read_committed consumer drops: transactional data batches of a producer whose
    aborted transaction began at or before the batch, up to that producer's ABORT marker."""
    from kraftwire.records import api as layout

    pending = sorted(aborted, key=lambda a: a[1])
    active: set = set()
    dropped = []
    i = 0
    for base, last, attrs, pid in batches:
        if pid < 0:
            continue
        while i < len(pending) and pending[i][1] <= last:
            active.add(pending[i][0])
            i += 1
        if attrs & layout.CONTROL_MASK:
            active.discard(pid)  # the marker ends the transaction (an ABORT: only aborted ones are listed)
        elif attrs & layout.TRANSACTIONAL_MASK and pid in active:
            dropped.append(base)
    return dropped


def _connector_batch(raw, topic: str, partition: int, include_headers: bool):
    """The codec's Arrow-layout buffers as the connector's columns (zero-copy except the timestamp scaling)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from kraftwire.spark.scan import arrow_schema

    _, _, header, headers_type = arrow_schema()
    n, buf, fb = raw.num_rows, pa.py_buffer, pa.Array.from_buffers
    ms = fb(pa.int64(), n, [None, buf(raw.timestamp)])
    arrays = [
        fb(pa.binary(), n, [buf(raw.key_validity), buf(raw.key_offsets), buf(raw.key_data)]),
        fb(pa.binary(), n, [buf(raw.value_validity), buf(raw.value_offsets), buf(raw.value_data)]),
        pa.repeat(pa.scalar(topic, pa.string()), n),
        pa.repeat(pa.scalar(partition, pa.int32()), n),
        fb(pa.int64(), n, [None, buf(raw.offset)]),
        pc.multiply(ms, 1000).cast(pa.timestamp("us", tz="UTC")),
        fb(pa.int8(), n, [None, buf(raw.timestamp_type)]).cast(pa.int32()),
    ]
    names = [c for c, _ in TOPIC_COLUMNS]
    if include_headers:
        h = raw.num_headers
        hk = fb(pa.string(), h, [None, buf(raw.header_key_offsets), buf(raw.header_key_data)])
        hv = fb(pa.binary(), h, [buf(raw.header_value_validity), buf(raw.header_value_offsets),
                                 buf(raw.header_value_data)])
        offsets, entries = buf(raw.header_offsets), [fb(header, h, [None], children=[hk, hv])]
        # as the connector: a record without headers has a null array, not an empty one
        present = pc.greater(pc.list_value_length(fb(headers_type, n, [None, offsets], children=entries)), 0)
        arrays.append(fb(headers_type, n, [present.buffers()[1], offsets], children=entries))
        names.append(HEADERS_COLUMN[0])
    keep = pc.invert(fb(pa.bool_(), n, [None, buf(raw.is_control)]))
    return pa.RecordBatch.from_arrays(arrays, names=names), keep, fb(pa.int64(), n, [None, buf(raw.base_offset)])


def read_range(opt: TopicOptions, rng: OffsetRange, client: Optional[TopicClient] = None) -> Iterator:
    """Yield ``pyarrow.RecordBatch``es (the connector's columns) of the records of ``rng``, fetched from the
    partition's leader; stops exactly at ``rng.end``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from kraftwire.records import decode_raw_columns, whole_batches_size

    own = client is None
    client = client or TopicClient(opt)
    tp = (rng.topic, rng.partition)
    offset = rng.start
    deadline = time.monotonic() + opt.timeout_s
    try:
        while offset < rng.end:
            res = client.fetch(tp, offset)
            if res.error == ec.OFFSET_OUT_OF_RANGE:
                # as Kafka's, the refusal carries no offsets: the log's bounds come from ListOffsets
                log_start = client.list_offsets({tp: -2}).get(tp, -1)
                if 0 <= log_start and offset < log_start:
                    _data_loss(opt, f"cannot fetch offset {offset} of {rng.topic}-{rng.partition}: the log starts at "
                                    f"{log_start}")
                    offset = log_start
                    continue
                _data_loss(opt, f"cannot fetch offset {offset} of {rng.topic}-{rng.partition}: the log ends before it "
                                f"(its end: {client.list_offsets({tp: -1}).get(tp, -1)})")
                return
            data = res.records
            whole = whole_batches_size(data) if data else 0
            if whole == 0:
                # nothing yet below the planned end: a new leader not yet caught up, or records not yet stable
                if time.monotonic() > deadline:
                    raise RuntimeError(f"kraftwire: no records at offset {offset} of {rng.topic}-{rng.partition} "
                                       f"within {opt.timeout_s} s (high watermark {res.high_watermark}, last stable "
                                       f"offset {res.last_stable_offset}, range end {rng.end})")
                time.sleep(0.05)
                continue
            deadline = time.monotonic() + opt.timeout_s
            view = memoryview(data)[:whole]
            batches = _batches(data, whole)
            next_offset = batches[-1][1] + 1
            raw = decode_raw_columns(view, True)
            if raw.num_rows:
                out, keep, base = _connector_batch(raw, rng.topic, rng.partition, opt.include_headers)
                off = out.column("offset")
                keep = pc.and_(keep, pc.and_(pc.greater_equal(off, offset), pc.less(off, rng.end)))
                if opt.isolation == 1 and res.aborted:
                    dropped = _aborted_batches(batches, res.aborted)
                    if dropped:
                        keep = pc.and_(keep, pc.invert(pc.is_in(base, value_set=pa.array(dropped, pa.int64()))))
                out = out.filter(keep)
                if out.num_rows:
                    yield out
            if next_offset <= offset:
                raise RuntimeError(f"kraftwire: a Fetch of {rng.topic}-{rng.partition} at offset {offset} answered "
                                   f"batches ending at {next_offset - 1}")
            offset = next_offset
    finally:
        if own:
            client.close()


# ------------------------------------------------------------------------------------------------ Spark readers

class TopicRangePartition(InputPartition):
    def __init__(self, rng: OffsetRange) -> None:
        super().__init__((rng.topic, rng.partition, rng.start, rng.end))
        self.range = rng


class TopicBatchReader(DataSourceReader):
    """``spark.read``: ranges planned on the driver, read by the workers."""

    def __init__(self, options: dict) -> None:
        self.opt = parse_options(options, streaming=False)

    def partitions(self):
        return [TopicRangePartition(r) for r in plan_batch(self.opt).ranges]

    def read(self, partition: TopicRangePartition) -> Iterator:
        if isinstance(partition, TopicRangePartition):  # no ranges planned: Spark reads one empty partition
            yield from read_range(self.opt, partition.range)


def _to_json(offsets: dict) -> dict:
    out: dict = {}
    for (t, p), off in sorted(offsets.items()):
        out.setdefault(t, {})[str(p)] = off
    return out


def _from_json(obj: dict) -> dict:
    return {(t, int(p)): int(off) for t, parts in (obj or {}).items() for p, off in parts.items()}


def rate_limit(start: dict, latest: dict, limit: int) -> dict:
    """End offsets at most ``limit`` offsets past ``start`` in all, shared in proportion to each partition's backlog
    (a share below one offset rounds up, others down)."""
    backlog = {tp: max(0, latest[tp] - start.get(tp, latest[tp])) for tp in latest}
    total = sum(backlog.values())
    if total <= limit:
        return dict(latest)
    out = {}
    for tp, end in latest.items():
        if tp not in start or backlog[tp] == 0:
            out[tp] = end
            continue
        share = limit * backlog[tp] / total
        step = int(share) if share >= 1 else (1 if share > 0 else 0)
        out[tp] = min(end, start[tp] + step)
    return out


class TopicStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream``: offsets ``{"topic": {"0": next offset}}`` as the connector checkpoints them.
    ``Trigger.AvailableNow`` reads up to the latest offsets of when the query started."""

    def __init__(self, options: dict) -> None:
        self.opt = parse_options(options, streaming=True)
        self._client: Optional[TopicClient] = None
        self._until: Optional[dict] = None  # Trigger.AvailableNow: the offsets to stop at

    def prepareForTriggerAvailableNow(self) -> None:
        client = self._c()
        tps = resolve_partitions(client, self.opt)
        self._until = client.list_offsets({tp: LATEST for tp in tps}) if tps else {}

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_client"] = None  # an open connection and its event loop stay on the driver
        return state

    def _c(self) -> TopicClient:
        if self._client is None:
            self._client = TopicClient(self.opt)
        return self._client

    def initialOffset(self) -> dict:
        client = self._c()
        tps = resolve_partitions(client, self.opt)
        return _to_json(resolve_offsets(client, self.opt, self.opt.starting, tps, starting=True))

    def getDefaultReadLimit(self):
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

        n = self.opt.max_offsets_per_trigger
        return ReadMaxRows(n) if n else ReadAllAvailable()

    def _earliest_of_new(self, start: dict, tps: list) -> dict:
        new = [tp for tp in tps if tp not in start]
        return self._c().list_offsets({tp: EARLIEST for tp in new}) if new else {}

    def latestOffset(self, start: dict, limit) -> dict:
        from pyspark.sql.streaming.datasource import ReadMaxRows

        client = self._c()
        begin = _from_json(start)
        tps = resolve_partitions(client, self.opt)
        latest = client.list_offsets({tp: LATEST for tp in tps}) if tps else {}
        gone = sorted(set(begin) - set(latest))
        if gone:
            _data_loss(self.opt, f"partitions {_fmt(gone)} are gone")
        if self._until is not None:  # Trigger.AvailableNow: nothing past what existed when it began
            latest = {tp: min(o, self._until[tp]) for tp, o in latest.items() if tp in self._until}
        if isinstance(limit, ReadMaxRows):
            from_ = {**self._earliest_of_new(begin, tps), **{tp: o for tp, o in begin.items() if tp in latest}}
            latest = rate_limit(from_, latest, limit.max_rows)
        return _to_json(latest)

    def partitions(self, start: dict, end: dict):
        begin, stop = _from_json(start), _from_json(end)
        tps = sorted(stop)
        new = self._earliest_of_new(begin, tps)
        for tp, off in sorted(new.items()):
            if off != 0:
                _data_loss(self.opt, f"added partition {tp[0]}-{tp[1]} starts at offset {off}, not 0")
        ranges = []
        for tp in tps:
            a = begin[tp] if tp in begin else new[tp]
            b = stop[tp]
            if b < a:
                _data_loss(self.opt, f"the offset of {tp[0]}-{tp[1]} went back from {a} to {b}")
                continue
            ranges.append(OffsetRange(tp[0], tp[1], a, b))
        return [TopicRangePartition(r) for r in split_ranges(ranges, self.opt.min_partitions)]

    def read(self, partition: TopicRangePartition) -> Iterator:
        if isinstance(partition, TopicRangePartition):  # no ranges planned: Spark reads one empty partition
            yield from read_range(self.opt, partition.range)

    def commit(self, end: dict) -> None:
        pass

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
