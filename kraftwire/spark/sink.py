"""Writing DataFrames to Kafka topics: ``df.write.format("kraftwire")`` and ``df.writeStream.format("kraftwire")``
with the schema and options of Spark's own Kafka connector (``format("kafka")``), through librdkafka
(confluent-kafka) from each task; no row goes to the driver.

Input columns (by exact name; other columns are ignored, as in the connector):
    value      string or binary   required ("Required attribute 'value' not found")
    key        string or binary   optional (null key: the partitioner spreads the records)
    topic      string             required unless the ``topic`` option is set; the option overrides the column
    partition  int                optional (null: the partitioner picks one)
    headers    array<struct<key:string,value:binary>>   optional
    timestamp  timestamp (or double seconds)             optional record CreateTime (null: now)
A wrong type fails the query with the connector's wording, e.g. ``value attribute unsupported type int. value must
be a(n) string or binary``; a null topic fails the task (``null topic present in the data. Use the topic option for
setting a default topic.``).

Options:
    kafka.bootstrap.servers   required
    topic                     the topic of every row (overrides the ``topic`` column)
    kafka.*                   librdkafka producer settings, prefix stripped (``kafka.linger.ms``,
                              ``kafka.compression.type``, ``kafka.security.protocol``, ``kafka.sasl.*`` ...).
                              Refused as in the connector: ``kafka.key.serializer``, ``kafka.value.serializer``;
                              also ``kafka.transactional.id`` (see exactlyOnce). An unknown setting fails on the
                              driver with librdkafka's message. Defaults: ``enable.idempotence=true``, ``acks=all``,
                              ``partitioner=murmur2_random`` (a key lands where Kafka's Java producer puts it).
    exactlyOnce               writeStream only; default false (see below)
    transactionalIdPrefix     exactlyOnce: the transactional.id prefix, default ``kraftwire-spark-<query id>``

Batch writes take ``mode("append")`` (Spark refuses ErrorIfExists/Ignore for Python data sources; Overwrite is
refused here, as the connector refuses it). Each task writes through an idempotent producer (acks=all; a Python
worker keeps its producer for the next task while it has delivered everything), flushes, and fails if any record
was not delivered (``kafka.message.timeout.ms`` bounds how long that takes); a
task Spark retries writes its rows again, so a batch write, like the connector's, is at-least-once.

Exactly-once streaming (``exactlyOnce=true``; Spark's Kafka sink is at-least-once). Each task of micro-batch B writes
Spark partition P of the batch in one Kafka transaction of a producer with ``transactional.id`` = ``<prefix>-<P>``,
where the prefix is stable across restarts (default: the streaming query's id, which lives in the checkpoint; read
from the task's local property ``sql.streaming.queryId``, B from ``streaming.sql.batchId``). The task:
  1. ``init_transactions``: bumps the producer epoch of that id, so every older attempt of the partition (a retried
     task, a zombie of a killed driver) is fenced, and its open transaction is aborted (or, if its commit was
     already under way, completed);
  2. reads, in the consumer group ``<prefix>-<P>``, the committed offset of partition 0 of the topic of its first
     row (OffsetFetch, require_stable): the next batch id this partition still has to write there. If it is above
     B, batch B is already in the topics (a replay has the same rows, so its first row's topic was written and
     marked by B): the task writes nothing;
  3. otherwise writes its rows and, in the same transaction, commits (TxnOffsetCommit) offset B+1 for partition 0
     of every topic it wrote, in that group (the offset's metadata holds query id, batch id and row count), then
     commits. The rows and the batch id become visible together, or neither. A partition with no rows in a batch
     opens no transaction.
So a batch Spark replays after a crash (or a task it retries) writes each partition's rows once.
The contract (what the upstream must give for this to hold): for a batch id and a Spark partition id, a replay has
the same rows in the same partition as the first run (Spark's replayable sources - kraftwire/Kafka offsets, files,
``rate`` - with deterministic transformations do; nondeterministic expressions such as ``rand()``/``uuid()``, or a
change of the number of partitions between runs, break it: the replay's rows are dropped if the batch was
committed). The prefix must belong to one query (two queries sharing it skip each other's batches). The
committed batch ids are group offsets: they expire after the broker's ``offsets.retention.minutes`` of an idle
query. Consumers see the output with ``isolation.level=read_committed``; Spark's commit log and the topics can
disagree only in the one direction a replay heals. A task slower than ``kafka.transaction.timeout.ms`` (default 60 s)
is aborted by the coordinator and fails. Not the default for writeStream: it needs that replay determinism (an
at-least-once sink tolerates a nondeterministic upstream, the exactly-once one would drop rows), a transaction per
task and batch (latency), and read_committed consumers; the default keeps ``format("kafka")``'s semantics.

Rows arrive as Arrow record batches (DataSourceArrowWriter / DataSourceStreamArrowWriter).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from itertools import repeat
from typing import Iterator

from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from kraftwire.spark.options import option_bool

__all__ = ["KraftwireSinkWriter", "KraftwireStreamSinkWriter", "SinkCommitMessage", "SinkSpec", "sink_spec"]

_WANTED = {  # column -> accepted types (simpleString), as the connector's KafkaWriter
    "topic": ("string",),
    "key": ("string", "binary"),
    "value": ("string", "binary"),
    "headers": ("array<struct<key:string,value:binary>>",),
    "partition": ("int",),
    "timestamp": ("timestamp", "double"),
}
_COMMON_PREFIXES = ("bootstrap.servers", "security.", "sasl.", "ssl.", "client.", "socket.", "broker.",
                    "api.version", "enable.ssl", "ssl_", "oauthbearer", "https.", "metadata.", "topic.metadata",
                    "reconnect.", "connections.", "debug", "log_level", "resolve.", "client.dns")
_UNSTABLE_OFFSET_COMMIT = 88
_POLL_EVERY = 8192


@dataclass(frozen=True)
class SinkSpec:
    """What every task needs (validated on the driver; pickled to the workers)."""
    conf: dict            # librdkafka producer settings
    topic: str | None     # the ``topic`` option (overrides the column)
    index: dict           # input column name -> position, for the columns used
    ts_kind: str | None   # "timestamp" | "double" | None
    exactly_once: bool
    txn_prefix: str | None
    delivery_timeout_s: float

    @property
    def common_conf(self) -> dict:
        """The connection/security settings, for the consumer and admin handles of exactlyOnce."""
        return {k: v for k, v in self.conf.items() if k.startswith(_COMMON_PREFIXES)}


@dataclass
class SinkCommitMessage(WriterCommitMessage):
    partition: int
    rows: int
    batch_id: int | None = None
    skipped: bool = False   # exactlyOnce: the batch was already committed for this partition


def sink_spec(schema: StructType, options: dict, *, streaming: bool, overwrite: bool = False) -> SinkSpec:
    """Check the DataFrame's schema and the options as the connector does; the producer settings."""
    opts = {str(k).lower(): v for k, v in options.items()}
    if overwrite and not streaming:
        raise ValueError("Save mode Overwrite not allowed for Kafka. Allowed save modes are Append "
                         "(and ErrorIfExists, which Spark refuses for Python data sources): use mode('append')")
    if "kafka.key.serializer" in opts:
        raise ValueError("Kafka option 'key.serializer' is not supported as keys are serialized with "
                         "ByteArraySerializer.")
    if "kafka.value.serializer" in opts:
        raise ValueError("Kafka option 'value.serializer' is not supported as value are serialized with "
                         "ByteArraySerializer.")
    if "kafka.transactional.id" in opts:
        raise ValueError("Kafka option 'transactional.id' is not supported: with exactlyOnce=true each task "
                         "derives its transactional.id from the option transactionalIdPrefix")
    if not str(opts.get("kafka.bootstrap.servers") or "").strip():
        raise ValueError("Option 'kafka.bootstrap.servers' must be specified for configuring Kafka producer")
    topic = opts.get("topic")
    topic = None if topic is None else str(topic).strip()
    if topic == "":
        raise ValueError("kraftwire: option topic is empty")
    exactly_once = option_bool(opts, "exactlyOnce", False)
    if exactly_once and not streaming:
        raise ValueError("kraftwire: exactlyOnce applies to writeStream (a batch write is at-least-once)")
    prefix = opts.get("transactionalidprefix")
    if prefix is not None and not str(prefix).strip():
        raise ValueError("kraftwire: option transactionalIdPrefix is empty")

    types = {f.name: f.dataType.simpleString() for f in schema.fields}
    index = {f.name: i for i, f in enumerate(schema.fields) if f.name in _WANTED}
    if topic is None and "topic" not in types:
        raise ValueError("topic option required when no 'topic' attribute is present. Use the topic option for "
                         "setting a topic.")
    if "value" not in types:
        raise ValueError("Required attribute 'value' not found")
    for name, desired in _WANTED.items():
        if name in types and not (name == "topic" and topic is not None) and types[name] not in desired:
            raise ValueError(f"{name} attribute unsupported type {types[name]}. {name} must be a(n) "
                             f"{' or '.join(desired)}")
    if topic is not None:
        index.pop("topic", None)

    from kraftwire.tools.command_config import librdkafka_config

    # Kafka's client keys (PEM stores, sasl.jaas.config...) as librdkafka's, as every kraftwire tool takes them
    conf = librdkafka_config({k[len("kafka."):]: str(v) for k, v in opts.items() if k.startswith("kafka.")})
    conf.setdefault("enable.idempotence", "true")
    conf.setdefault("acks", "all")
    conf.setdefault("partitioner", "murmur2_random")
    conf["delivery.report.only.error"] = True  # confluent-kafka wants a bool here
    timeout_ms = int(conf.get("message.timeout.ms") or conf.get("delivery.timeout.ms") or 300000)
    _check_conf(conf, exactly_once)
    return SinkSpec(conf=conf, topic=topic, index=index,
                    ts_kind=types.get("timestamp") if "timestamp" in index else None,
                    exactly_once=exactly_once, txn_prefix=None if prefix is None else str(prefix).strip(),
                    delivery_timeout_s=timeout_ms / 1000.0 + 10.0)


def _check_conf(conf: dict, exactly_once: bool) -> None:
    """librdkafka's own verdict on the settings, on the driver (no connection is waited for)."""
    from confluent_kafka import KafkaException, Producer

    probe = dict(conf)
    if exactly_once:
        probe["transactional.id"] = "kraftwire-settings-check"
    try:
        p = Producer(probe)
    except (KafkaException, TypeError, ValueError) as e:
        raise ValueError(f"kraftwire: the kafka.* producer settings are refused by librdkafka: {e}") from None
    del p


# -------------------------------------------------------------------------------------------- the tasks


class _Reports:
    """Delivery failures and fatal errors, from librdkafka's callbacks (only failed records are reported)."""

    def __init__(self) -> None:
        self.failed = 0
        self.first: str | None = None
        self.fatal: str | None = None

    def on_delivery(self, err, msg) -> None:
        if err is not None:
            self.failed += 1
            if self.first is None:
                self.first = f"{err.str()} (topic {msg.topic()}, partition {msg.partition()})"

    def on_error(self, err) -> None:
        if err.fatal() and self.fatal is None:
            self.fatal = err.str()

    def check(self, rows: int | None) -> None:
        if self.fatal is not None:
            raise RuntimeError(f"kraftwire: the producer hit a fatal error: {self.fatal}")
        if self.failed:
            of = "" if rows is None else f" of {rows}"
            raise RuntimeError(f"kraftwire: {self.failed}{of} records were not delivered; first error: "
                               f"{self.first}")


def _producer(conf: dict, reports: _Reports):
    from confluent_kafka import Producer

    return Producer({**conf, "on_delivery": reports.on_delivery, "error_cb": reports.on_error})


def _column(batch, spec: SinkSpec, name: str):
    i = spec.index.get(name)
    return None if i is None else batch.column(i)


def _timestamps(col, kind: str) -> list:
    import pyarrow as pa
    import pyarrow.compute as pc

    if kind == "double":  # seconds, as Spark's cast of a double to a timestamp
        return pc.cast(pc.multiply(col, 1000.0), pa.int64(), safe=False).to_pylist()
    unit = col.type.unit
    div = {"s": None, "ms": 1, "us": 1000, "ns": 1000000}[unit]
    ints = col.cast(pa.int64())
    return (pc.multiply(ints, 1000) if div is None else pc.divide(ints, div)).to_pylist()


def _produce(producer, batches: Iterator, spec: SinkSpec, reports: _Reports) -> tuple[int, set]:
    """Send every row of ``batches``; return (rows, the topics written)."""
    rows = 0
    written = set()
    produce = producer.produce
    next_poll = _POLL_EVERY
    for batch in batches:
        n = batch.num_rows
        if n == 0:
            continue
        values = _column(batch, spec, "value").to_pylist()
        kcol, tcol = _column(batch, spec, "key"), _column(batch, spec, "topic")
        keys = repeat(None) if kcol is None else kcol.to_pylist()
        topics = repeat(spec.topic) if tcol is None else tcol.to_pylist()
        written.update([spec.topic] if tcol is None else topics)
        pcol, hcol, scol = (_column(batch, spec, c) for c in ("partition", "headers", "timestamp"))
        if pcol is None and hcol is None and scol is None:
            for t, k, v in zip(topics, keys, values):
                try:
                    produce(t, v, k)
                except BufferError:
                    _wait_for_room(producer, spec, reports, lambda: produce(t, v, k))
                except TypeError:
                    _null_topic(t)
                    raise
        else:
            parts = repeat(-1) if pcol is None else pcol.fill_null(-1).to_pylist()
            hdrs = repeat(None) if hcol is None else hcol.to_pylist()
            stamps = repeat(0) if scol is None else _timestamps(scol, spec.ts_kind)
            for t, k, v, p, h, s in zip(topics, keys, values, parts, hdrs, stamps):
                if h is not None:
                    h = [(x["key"], x["value"]) for x in h]
                    if any(hk is None for hk, _ in h):
                        raise ValueError("kraftwire: a header with a null key")
                kw = {"partition": p, "timestamp": s or 0, "headers": h}
                try:
                    produce(t, v, k, **kw)
                except BufferError:
                    _wait_for_room(producer, spec, reports, lambda: produce(t, v, k, **kw))
                except TypeError:
                    _null_topic(t)
                    raise
        rows += n
        if rows >= next_poll:
            producer.poll(0)
            reports.check(rows)
            next_poll = rows + _POLL_EVERY
    written.discard(None)
    return rows, written


def _null_topic(t) -> None:
    if t is None:
        raise ValueError("null topic present in the data. Use the topic option for setting a default topic.")


def _wait_for_room(producer, spec: SinkSpec, reports: _Reports, send) -> None:
    """The local queue is full: serve delivery reports until ``send`` fits (bounded by the delivery timeout)."""
    deadline = time.monotonic() + spec.delivery_timeout_s
    while True:
        producer.poll(0.05)
        reports.check(None)
        try:
            send()
            return
        except BufferError:
            if time.monotonic() > deadline:
                raise RuntimeError("kraftwire: the producer queue stayed full for "
                                   f"{spec.delivery_timeout_s:.0f} s") from None


def _flush(producer, spec: SinkSpec, reports: _Reports, rows: int) -> None:
    """Wait until every record is delivered or failed (librdkafka fails each after message.timeout.ms)."""
    deadline = time.monotonic() + spec.delivery_timeout_s
    while True:
        left = producer.flush(1.0)
        if left == 0:
            break
        if reports.fatal is not None:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"kraftwire: {left} of {rows} records still undelivered after "
                               f"{spec.delivery_timeout_s:.0f} s")
    reports.check(rows)


def _partition_id() -> int:
    from pyspark import TaskContext

    tc = TaskContext.get()
    return -1 if tc is None else tc.partitionId()


#: a Python worker's idempotent producers by configuration, kept across its tasks (Spark reuses Python workers): a
#: micro-batch then costs no producer start (metadata, InitProducerId), which is most of a small batch's latency
_PRODUCERS: dict[tuple, tuple] = {}


def write_at_least_once(spec: SinkSpec, batches: Iterator) -> SinkCommitMessage:
    """One task's rows through an idempotent producer (the worker's, kept between tasks while it is healthy); raise
    unless every record was delivered."""
    key = tuple(sorted((k, str(v)) for k, v in spec.conf.items()))
    producer, reports = _PRODUCERS.pop(key, (None, None))
    if producer is None:
        reports = _Reports()
        producer = _producer(spec.conf, reports)
    reports.failed, reports.first = 0, None
    rows, _ = _produce(producer, batches, spec, reports)  # on any error the producer is dropped, never reused
    _flush(producer, spec, reports, rows)
    _PRODUCERS[key] = (producer, reports)
    return SinkCommitMessage(partition=_partition_id(), rows=rows)


class _BatchLedger:
    """The consumer group ``<prefix>-<P>`` whose offsets record the micro-batches partition P wrote: offset B+1 on
    partition 0 of each topic batch B wrote. A plain consumer handle (never subscribed) reads them (OffsetFetch;
    require_stable through isolation.level=read_committed) and gives the group metadata for
    send_offsets_to_transaction. (No AdminClient: confluent-kafka's admin futures can crash a short-lived process
    when their handle is collected from librdkafka's thread.)"""

    def __init__(self, spec: SinkSpec, group: str) -> None:
        from confluent_kafka import Consumer

        self.group = group
        self.consumer = Consumer({**spec.common_conf, "group.id": group, "enable.auto.commit": "false",
                                  "isolation.level": "read_committed"})

    def next_batch(self, topic: str, timeout_s: float) -> int:
        """The next batch id recorded for ``topic`` (0: none), waiting while a transaction holds the offset."""
        from confluent_kafka import KafkaException, TopicPartition

        deadline = time.monotonic() + timeout_s
        while True:
            try:
                [tp] = self.consumer.committed([TopicPartition(topic, 0)], timeout=max(1.0, min(
                    15.0, deadline - time.monotonic())))
                if tp.error is None:
                    return max(tp.offset, 0)
                err = tp.error
            except KafkaException as e:
                err = e.args[0]
            if not (err.retriable() or err.code() == _UNSTABLE_OFFSET_COMMIT) or time.monotonic() > deadline:
                raise RuntimeError(f"kraftwire: reading the committed batch ids of group {self.group}: {err}")
            time.sleep(0.2)

    def metadata(self):
        return self.consumer.consumer_group_metadata()

    def close(self) -> None:
        self.consumer.close()


def _first_rows(batches: Iterator, spec: SinkSpec):
    """(the first non-empty batch, its first row's topic, an iterator over every batch), or None: no rows."""
    from itertools import chain

    for b in batches:
        if b.num_rows:
            topic = spec.topic
            if topic is None:
                topic = b.column(spec.index["topic"])[0].as_py()
                _null_topic(topic)
            return b, topic, chain([b], batches)
    return None


def write_exactly_once(spec: SinkSpec, batches: Iterator) -> SinkCommitMessage:
    """One task of a micro-batch, exactly once (module docstring)."""
    from confluent_kafka import KafkaException, TopicPartition
    from pyspark import TaskContext

    tc = TaskContext.get()
    batch = tc.getLocalProperty("streaming.sql.batchId")
    query = tc.getLocalProperty("sql.streaming.queryId")
    if batch is None or query is None:
        raise RuntimeError("kraftwire: exactlyOnce needs a micro-batch streaming query (no streaming.sql.batchId "
                           "in this task; continuous processing is not supported)")
    batch_id, part = int(batch), tc.partitionId()
    txn_id = f"{spec.txn_prefix or 'kraftwire-spark-' + query}-{part}"
    timeout = spec.delivery_timeout_s
    first = _first_rows(batches, spec)
    if first is None:  # no rows: nothing to write, nothing to record
        return SinkCommitMessage(partition=part, rows=0, batch_id=batch_id)
    _, probe_topic, batches = first
    reports = _Reports()
    producer = _producer({**spec.conf, "transactional.id": txn_id}, reports)
    ledger = _BatchLedger(spec, txn_id)
    try:
        producer.init_transactions(timeout)  # fences older attempts; their open transaction ends first
        # the replay of a committed batch has the same rows (the contract), so its first row's topic was written
        # and marked by that batch
        if ledger.next_batch(probe_topic, timeout) > batch_id:
            for _ in batches:  # already in the topics: consume the input, write nothing
                pass
            return SinkCommitMessage(partition=part, rows=0, batch_id=batch_id, skipped=True)
        producer.begin_transaction()
        try:
            rows, topics = _produce(producer, batches, spec, reports)
            _flush(producer, spec, reports, rows)
            meta = json.dumps({"queryId": query, "batchId": batch_id, "rows": rows}, separators=(",", ":"))
            producer.send_offsets_to_transaction([TopicPartition(t, 0, batch_id + 1, meta) for t in sorted(topics)],
                                                 ledger.metadata(), timeout)
            _commit(producer, timeout)
        except BaseException:
            try:
                producer.abort_transaction(min(timeout, 30.0))
            except KafkaException:
                pass  # fenced or fatal: the coordinator aborts it (or the next attempt's init_transactions does)
            raise
    finally:
        ledger.close()
    return SinkCommitMessage(partition=part, rows=rows, batch_id=batch_id)


def _commit(producer, timeout: float) -> None:
    from confluent_kafka import KafkaException

    for attempt in range(5):
        try:
            producer.commit_transaction(timeout)
            return
        except KafkaException as e:
            err = e.args[0]
            if not err.retriable() or attempt == 4:
                raise
            time.sleep(0.2)


# -------------------------------------------------------------------------------------------- the writers


class KraftwireSinkWriter(DataSourceArrowWriter):
    """``df.write.format("kraftwire")``: each task writes its rows; nothing to do on the driver."""

    def __init__(self, spec: SinkSpec) -> None:
        self.spec = spec

    @classmethod
    def create(cls, schema: StructType, options: dict, overwrite: bool) -> "KraftwireSinkWriter":
        return cls(sink_spec(schema, options, streaming=False, overwrite=overwrite))

    def write(self, iterator) -> SinkCommitMessage:
        return write_at_least_once(self.spec, iterator)

    def commit(self, messages) -> None:
        pass

    def abort(self, messages) -> None:
        pass  # delivered records stay (as with the connector)


class KraftwireStreamSinkWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("kraftwire")``: at-least-once, or exactly-once with ``exactlyOnce=true``."""

    def __init__(self, spec: SinkSpec) -> None:
        self.spec = spec

    @classmethod
    def create(cls, schema: StructType, options: dict, overwrite: bool) -> "KraftwireStreamSinkWriter":
        return cls(sink_spec(schema, options, streaming=True, overwrite=overwrite))

    def write(self, iterator) -> SinkCommitMessage:
        if self.spec.exactly_once:
            return write_exactly_once(self.spec, iterator)
        return write_at_least_once(self.spec, iterator)

    def commit(self, messages, batchId) -> None:
        pass  # the tasks committed their transactions (exactlyOnce) or flushed

    def abort(self, messages, batchId) -> None:
        pass
