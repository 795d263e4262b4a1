"""``spark.read.format("kraftwire").load(PATH)``: a PySpark Python Data Source over Raft log dirs and snapshots.

PATH: a log dir (every ``<topic>-<partition>/`` dir in it), a partition dir, a ``.log`` segment, a ``.checkpoint``
snapshot, or several of them (comma-separated, globs allowed). One row per record; columns in
:data:`kraftwire.spark.scan.COLUMNS` (``offset``/``timestamp`` are longs, ``timestamp`` in epoch ms; ``topic``/
``partition`` from the partition dir's name; ``committed`` = offset below the checkpointed high watermark, null when
there is none; snapshot rows are committed; ``record_type``/``record_version``/``record_json`` = the decoded
metadata record of a ``__cluster_metadata`` data record when decoding is on, see ``decodeMetadata``;
``is_snapshot`` marks snapshot rows; corruption is flagged, see :mod:`kraftwire.spark.scan`).

Options:
    startingOffset      first offset (inclusive)                                   default: none
    endingOffset        end offset (exclusive)                                     default: none
    includeControl      keep control records (flagged by is_control)              default: true
    committedOnly       only records below the checkpointed high watermark        default: false
    includeSnapshots    also read the frozen snapshots of the partition dirs      default: false
                        (a PATH naming a .checkpoint file is always read)
    includePath         fill the path column (false: null; Spark ingests ~40% more rows/s) default: true
    maxPartitionBytes   split segments larger than this at .index positions       default: 128 MiB
                        (Spark's own file-source default: each task costs Spark ~60 ms here, so fewer, larger
                        partitions read faster; lower it for more parallelism on small logs)
    statsDir            diagnostics: each partition read writes a JSON file here (bytes_read, rows, ...)
    topics              only these topics' partition dirs (comma list)                  default: all
    topicPattern        only topics whose whole name matches this regex                 default: all
    decodeMetadata      fill record_type/record_version/record_json for __cluster_metadata rows default: false
                        (also turned on by any filter on those columns; null for other topics)

Topic partitions: a log dir holds ``<topic>-<partition>/`` dirs (``topic``/``partition`` columns, the name split at
its last dash); their ``committed`` comes from the log dir's ``replication-offset-checkpoint``, the Raft log's
(``__cluster_metadata-0``) from its own ``high-watermark-checkpoint``. Pushed ``topic = x``, ``topic IN (...)``,
``partition = n``, ``partition IN (...)`` skip whole partition dirs.

Partitions: one per segment (large ones split on batch boundaries through the ``.index``). Pushed filters
(``spark.sql.python.filterPushdown.enabled``, which :func:`kraftwire.spark.register` turns on): comparisons and
``IN`` on ``offset``, bounds on ``timestamp``, ``is_control``/``committed`` equality. Offset bounds skip whole
segments and, through the ``.index``, the bytes before/after the range; timestamp lower bounds skip through the
``.timeindex``. Every filter taken is applied exactly to the rows, so Spark does not re-check them.
Everything here pickles. pyspark is imported by this module and stream.py (not by ``import kraftwire.spark``,
files.py or scan.py); pyarrow only where batches are built (the workers).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
    Not,
)
from pyspark.sql.types import StructType

from kraftwire.spark.files import Bounds, FileRange, Selection, plan, resolve
from kraftwire.spark.options import option_bool
from kraftwire.spark.scan import COLUMNS, RECORD_COLUMNS, RowFilter

__all__ = ["KraftwireDataSource", "KraftwireReader", "RangePartition", "spark_schema", "NAME"]

NAME = "kraftwire"
DEFAULT_MAX_PARTITION_BYTES = 128 * 1024 * 1024
_INT64_MAX = 2**63 - 1


def spark_schema() -> StructType:
    """The source's schema as a StructType (built without a JVM, from :data:`COLUMNS`)."""
    def t(ddl: str):
        if ddl.startswith("array"):
            return {"type": "array", "containsNull": True, "elementType": {"type": "struct", "fields": [
                {"name": "key", "type": "string", "nullable": True, "metadata": {}},
                {"name": "value", "type": "binary", "nullable": True, "metadata": {}}]}}
        return {"int": "integer", "bigint": "long", "tinyint": "byte", "smallint": "short"}.get(ddl, ddl)

    return StructType.fromJson({"type": "struct", "fields": [
        {"name": n, "type": t(d), "nullable": True, "metadata": {}} for n, d in COLUMNS]})


def _int(options, key: str):
    v = options.get(key)
    return None if v is None or str(v).strip() == "" else int(v)


class RangePartition(InputPartition):
    """One byte range of one file (see :class:`kraftwire.spark.files.FileRange`)."""

    def __init__(self, rng: FileRange) -> None:
        super().__init__(rng)
        self.range = rng


class KraftwireDataSource(DataSource):
    """``format("kraftwire")``: with option ``kafka.bootstrap.servers``, topics over the wire with the options and
    schema of Spark's Kafka connector (:mod:`kraftwire.spark.topics`); otherwise the log files under a PATH (and,
    streaming, the ``bootstrap.servers`` tail of :mod:`kraftwire.spark.stream`)."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        from kraftwire.spark import topics

        if topics.over_wire(self.options):  # kafka.bootstrap.servers: topics over the wire, the connector's schema
            return topics.topic_schema_for(self.options)
        return spark_schema()

    def reader(self, schema: StructType) -> "KraftwireReader":
        from kraftwire.spark import topics

        if topics.over_wire(self.options):
            if schema.fieldNames() != self.schema().fieldNames():
                raise ValueError("kraftwire: the schema is fixed; do not pass .schema(...) to this source")
            return topics.TopicBatchReader(dict(self.options))
        if [f.name for f in schema.fields] != [n for n, _ in COLUMNS]:
            raise ValueError("kraftwire: the schema is fixed; do not pass .schema(...) to this source")
        return KraftwireReader(dict(self.options))

    def streamReader(self, schema: StructType):
        from kraftwire.spark import topics
        from kraftwire.spark.stream import KraftwireStreamReader

        if topics.over_wire(self.options):
            return topics.TopicStreamReader(dict(self.options))
        return KraftwireStreamReader(dict(self.options))

    def writer(self, schema: StructType, overwrite: bool):
        """``df.write.format("kraftwire")``: rows to Kafka topics (:mod:`kraftwire.spark.sink`)."""
        from kraftwire.spark.sink import KraftwireSinkWriter

        return KraftwireSinkWriter.create(schema, dict(self.options), overwrite)

    def streamWriter(self, schema: StructType, overwrite: bool):
        """``df.writeStream.format("kraftwire")``: at-least-once, or exactly-once with ``exactlyOnce=true``."""
        from kraftwire.spark.sink import KraftwireStreamSinkWriter

        return KraftwireStreamSinkWriter.create(schema, dict(self.options), overwrite)


def _as_int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _selection(opts: dict) -> Selection:
    """The ``topics``/``topicPattern`` options as a :class:`Selection` (the pattern is checked here, on the driver)."""
    import re

    topics = opts.get("topics")
    pattern = opts.get("topicpattern")
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"kraftwire: option topicPattern is no regular expression: {exc}") from None
    names = None if topics is None else frozenset(t.strip() for t in str(topics).split(",") if t.strip())
    if names is not None and not names:
        raise ValueError("kraftwire: option topics names no topic")
    return Selection(topics=names, pattern=pattern or None)


def _names_record_columns(flt) -> bool:
    inner = flt.child if isinstance(flt, Not) else flt
    col = getattr(inner, "attribute", None)
    return bool(col) and col[0] in RECORD_COLUMNS


def _take_selection(sel: Selection, flt):
    """``sel`` narrowed by a ``topic``/``partition`` equality or ``IN`` filter, or None when ``flt`` is no such
    filter (every row of a partition dir has its dir's topic and partition, so skipping dirs applies it exactly)."""
    if not isinstance(flt, (EqualTo, In)) or flt.attribute not in (("topic",), ("partition",)):
        return None
    values = [flt.value] if isinstance(flt, EqualTo) else list(flt.value)
    if flt.attribute == ("topic",):
        if not all(isinstance(v, str) for v in values):
            return None
        new = frozenset(values)
        return replace(sel, topics=new if sel.topics is None else sel.topics & new)
    if not all(_as_int(v) is not None for v in values):
        return None
    new = frozenset(values)
    return replace(sel, partitions=new if sel.partitions is None else sel.partitions & new)


class KraftwireReader(DataSourceReader):
    def __init__(self, options: dict) -> None:
        opts = {k.lower(): v for k, v in options.items()}
        path = opts.get("path") or opts.get("paths")
        if not path:
            raise ValueError("kraftwire: give a PATH: spark.read.format('kraftwire').load(PATH)")
        if path.startswith("["):  # .load([a, b]) arrives as a JSON list
            import json

            path = ",".join(json.loads(path))
        self.path = path
        self.include_snapshots = option_bool(opts, "includeSnapshots", False)
        self.max_bytes = _int(opts, "maxpartitionbytes") or DEFAULT_MAX_PARTITION_BYTES
        self.stats_dir = opts.get("statsdir")
        self.with_path = option_bool(opts, "includePath", True)
        start, end = _int(opts, "startingoffset"), _int(opts, "endingoffset")
        bounds = Bounds(offset_lo=start, offset_hi=None if end is None else end - 1)
        self.filter = RowFilter(
            bounds=bounds,
            is_control=None if option_bool(opts, "includeControl", True) else False,
            committed=True if option_bool(opts, "committedOnly", False) else None,
        )
        self.select = _selection(opts)
        self.decode_metadata = option_bool(opts, "decodeMetadata", False)

    # ---------------------------------------------------------------------------------------- pushdown

    def pushFilters(self, filters):
        for flt in filters:
            if _names_record_columns(flt):
                self.decode_metadata = True  # a query about record_* needs them decoded; Spark applies it
                yield flt
                continue
            select = _take_selection(self.select, flt)
            if select is not None:
                self.select = select
                continue
            taken = self._take(flt)
            if taken is None:
                yield flt
            else:
                self.filter = taken

    def _take(self, flt) -> RowFilter | None:
        """The row filter narrowed by ``flt``, or None when ``flt`` is not one this source applies."""
        rf = self.filter
        b = rf.bounds
        if not isinstance(flt, (EqualTo, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual, In, Not)):
            return None
        col = flt.attribute if not isinstance(flt, Not) else getattr(flt.child, "attribute", None)
        if isinstance(flt, Not):
            inner = flt.child
            if isinstance(inner, EqualTo) and col in (("is_control",), ("committed",)) and isinstance(inner.value, bool):
                return self._take(EqualTo(col, not inner.value))
            return None
        if col in (("is_control",), ("committed",)):
            if not (isinstance(flt, EqualTo) and isinstance(flt.value, bool)):
                return None
            key = col[0]
            current = getattr(rf, key)
            if current is not None and current != flt.value:
                return replace(rf, bounds=Bounds(0, -1))  # contradiction: nothing matches
            return replace(rf, **{key: flt.value})
        if col not in (("offset",), ("timestamp",)):
            return None
        lo_name, hi_name = ("offset_lo", "offset_hi") if col == ("offset",) else ("ts_lo", "ts_hi")
        lo, hi = getattr(b, lo_name), getattr(b, hi_name)
        if isinstance(flt, In):
            values = [v for v in flt.value if _as_int(v) is not None]
            if col != ("offset",) or len(values) != len(flt.value):
                return None
            if not values:
                return replace(rf, bounds=Bounds(0, -1))
            new_in = frozenset(values) if rf.offsets_in is None else rf.offsets_in & frozenset(values)
            lo2 = max(min(values), lo) if lo is not None else min(values)
            hi2 = min(max(values), hi) if hi is not None else max(values)
            return replace(rf, offsets_in=new_in, bounds=replace(b, **{lo_name: lo2, hi_name: hi2}))
        v = _as_int(flt.value)
        if v is None:
            return None
        if isinstance(flt, EqualTo):
            new_lo, new_hi = v, v
        elif isinstance(flt, GreaterThan):
            new_lo, new_hi = v + 1, None
        elif isinstance(flt, GreaterThanOrEqual):
            new_lo, new_hi = v, None
        elif isinstance(flt, LessThan):
            new_lo, new_hi = None, v - 1
        elif isinstance(flt, LessThanOrEqual):
            new_lo, new_hi = None, v
        else:
            return None
        if new_lo is not None:
            lo = new_lo if lo is None else max(lo, new_lo)
        if new_hi is not None:
            hi = new_hi if hi is None else min(hi, new_hi)
        return replace(rf, bounds=replace(b, **{lo_name: lo, hi_name: hi}))

    # ---------------------------------------------------------------------------------------- planning

    def partitions(self):
        files = resolve(self.path, self.include_snapshots, self.select)
        return [RangePartition(r) for r in plan(files, self.filter.bounds, self.max_bytes)]

    def read(self, partition: RangePartition) -> Iterator:
        from kraftwire.spark.scan import ScanStats, scan, write_stats

        if not isinstance(partition, RangePartition):
            return  # nothing planned (no dir selected, empty bounds): Spark reads one empty default partition
        stats = ScanStats()
        yield from scan(partition.range, self.filter, stats=stats, with_path=self.with_path,
                        decode_metadata=self.decode_metadata)
        if self.stats_dir:
            write_stats(self.stats_dir, partition.range, stats)
