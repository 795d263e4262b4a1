"""The replica audit: compare every partition's replicas across brokers' log dirs offset by offset, as Spark
DataFrame work.

Input: log dirs (a broker's or controller's ``log.dirs`` entry: every ``<topic>-<partition>/`` dir in it, the Raft
log ``__cluster_metadata-0`` among them) or partition dirs, globs allowed, read with the ``kraftwire`` source
(segments only; control records included). A *replica* is one partition dir; replicas are grouped into partitions
by the dir name (``orders.v1-eu-3`` is topic ``orders.v1-eu``, partition 3), so one audit covers every partition of
several brokers. Per record the audit keeps (replica, offset, partition leader epoch, a 64-bit content hash of
timestamp/key/value/headers/control flag, the batch's CRC verdict, whether the offset is below the replica's own
checkpointed high watermark); the heavy parts (hashing, per-offset variants, per-replica aggregates, gap search)
are DataFrame operations, so they scale with the cluster. Only small summaries (one row per replica, per replica
and epoch, and at most ``sample`` offsets per finding) reach the driver.

A replica's high watermark (HW) is the one Kafka checkpoints: ``replication-offset-checkpoint`` at the log dir's
root for a topic partition, the partition dir's own ``high-watermark-checkpoint`` for the Raft log.

Rules per partition — a *violation* makes the audit fail:

* corrupt batch: any row flagged by the reader (``error`` set or ``batch_crc_valid`` false);
* gap or duplicate: a replica's offsets are not exactly ``[first, last]``, each once (gaps below the replica's
  ``cleaner-offset-checkpoint`` entry are compaction, not gaps);
* non-monotonic epochs: in offset order a replica's partition leader epochs ever decrease (or interleave);
* divergence: replicas hold different records (different epoch or content) at one offset and

  - two of them hold it below their own checkpointed HW (a replica's HW says the record there was committed, and a
    committed record is never truncated, so committed copies must be equal), or
  - two of them hold it in the same leader epoch (one leader writes an epoch; every copy of its batches is equal:
    the log matching property — wherever the HWs are), or
  - one copy is committed and another differs without being older (a later leader overwrote a committed record).

Any other difference is an *uncommitted tail*: a copy from an older leader epoch at or above its holder's HW (the
appends of a deposed leader, or of a replica that has not reconciled yet: a stopped broker keeps them until it
restarts and truncates), or copies nobody holds as committed. Tails are reported per replica, not violations.
Replicas that simply lag (shorter logs) or start later (retention, snapshots) agree. A replica without a HW
checkpoint entry (kraftwire brokers checkpoint their followers' HWs only at shutdown) commits nothing itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from kraftwire.log.checkpoint import parse_offset_checkpoint, read_file_or_none
from kraftwire.log.cleaner import CLEANER_OFFSET_CHECKPOINT
from kraftwire.spark.files import resolve, topic_partition

__all__ = ["ReplicaSummary", "PartitionReport", "AuditReport", "audit"]


@dataclass
class ReplicaSummary:
    replica: str  # the partition dir
    node: int | None  # the broker (node) id from meta.properties
    high_watermark: int | None
    topic: str | None = None
    partition: int | None = None
    first_offset: int | None = None
    last_offset: int | None = None
    records: int = 0
    epochs: int = 0
    corrupt_batches: int = 0
    first_corrupt: int | None = None
    gaps: int = 0
    duplicates: int = 0
    epoch_errors: int = 0
    committed_divergent: int = 0
    uncommitted_tail: int = 0
    tail_range: tuple[int, int] | None = None
    cleaned_up_to: int | None = None

    @property
    def status(self) -> str:
        if self.corrupt_batches or self.gaps or self.duplicates or self.epoch_errors or self.committed_divergent:
            return "VIOLATION"
        return "tail" if self.uncommitted_tail else "ok"

    @property
    def log_end_offset(self) -> int | None:
        return None if self.last_offset is None else self.last_offset + 1

    @property
    def who(self) -> str:
        return f"broker {_s(self.node)} ({self.replica})"


@dataclass
class PartitionReport:
    """One partition's replicas and findings (``name``: ``<topic>-<partition>``, the dir name)."""

    name: str
    topic: str | None
    partition: int | None
    replicas: list[ReplicaSummary]
    committed_watermark: int | None  # the largest checkpointed HW of its replicas
    divergent_offsets: int = 0
    first_divergence: int | None = None
    violations: list[str] = field(default_factory=list)
    tails: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def status(self) -> str:
        return "VIOLATION" if self.violations else ("tail" if self.tails else "ok")

    def describe(self) -> str:
        """One line in ``kafka-topics --describe``'s shape."""
        reps = ",".join(_s(r.node) for r in self.replicas)
        return (f"Topic: {_s(self.topic)}\tPartition: {_s(self.partition)}\tReplicas: {reps}\t"
                f"HighWatermark: {_s(self.committed_watermark)}\tDivergentOffsets: {self.divergent_offsets}"
                + (f" (first at {self.first_divergence})" if self.first_divergence is not None else "")
                + f"\tStatus: {self.status}")


@dataclass
class AuditReport:
    partitions: list[PartitionReport]

    @property
    def replicas(self) -> list[ReplicaSummary]:
        return [r for p in self.partitions for r in p.replicas]

    @property
    def violations(self) -> list[str]:
        return [v for p in self.partitions for v in p.violations]

    @property
    def tails(self) -> list[str]:
        return [t for p in self.partitions for t in p.tails]

    @property
    def divergent_offsets(self) -> int:
        return sum(p.divergent_offsets for p in self.partitions)

    @property
    def first_divergence(self) -> int | None:
        firsts = [p.first_divergence for p in self.partitions if p.first_divergence is not None]
        return min(firsts) if firsts else None

    @property
    def committed_watermark(self) -> int | None:
        """The partition's largest checkpointed HW when one partition was audited (else None: see partitions)."""
        return self.partitions[0].committed_watermark if len(self.partitions) == 1 else None

    def partition(self, topic: str, partition: int) -> PartitionReport:
        return next(p for p in self.partitions if p.topic == topic and p.partition == partition)

    @property
    def ok(self) -> bool:
        return not self.violations

    def render(self) -> str:
        cols = ["TOPIC", "PARTITION", "BROKER", "HIGH-WATERMARK", "FIRST-OFFSET", "LOG-END-OFFSET", "RECORDS",
                "EPOCHS", "CORRUPT", "GAPS", "DUPS", "EPOCH-ERR", "DIVERGED<HW", "TAIL", "STATUS", "REPLICA"]
        rows = []
        for r in self.replicas:
            rows.append([_s(r.topic), _s(r.partition), _s(r.node), _s(r.high_watermark), _s(r.first_offset),
                         _s(r.log_end_offset), str(r.records), str(r.epochs), str(r.corrupt_batches), str(r.gaps),
                         str(r.duplicates), str(r.epoch_errors), str(r.committed_divergent),
                         "-" if not r.tail_range else f"{r.uncommitted_tail} [{r.tail_range[0]}..{r.tail_range[1]}]",
                         r.status, r.replica])
        widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c) for i, c in enumerate(cols)]
        line = lambda vals: "  ".join(v.ljust(w) for v, w in zip(vals, widths)).rstrip()  # noqa: E731
        out = [line(cols)] + [line(r) for r in rows]
        out.append("")
        out.extend(p.describe() for p in self.partitions)
        for t in self.tails:
            out.append(f"uncommitted tail: {t}")
        for v in self.violations:
            out.append(f"VIOLATION: {v}")
        bad = sum(1 for p in self.partitions if p.violations)
        out.append(f"partitions: {len(self.partitions)}, replicas: {len(self.replicas)}, "
                   f"partitions with violations: {bad}, divergent offsets: {self.divergent_offsets}")
        out.append("audit: " + ("PASSED" if self.ok else f"FAILED ({len(self.violations)} violation(s))"))
        return "\n".join(out)

    def as_json(self) -> dict:
        return {
            "ok": self.ok,
            "divergent_offsets": self.divergent_offsets,
            "violations": self.violations,
            "tails": self.tails,
            "partitions": [{
                "topic": p.topic, "partition": p.partition, "status": p.status,
                "committed_watermark": p.committed_watermark, "divergent_offsets": p.divergent_offsets,
                "first_divergence": p.first_divergence, "violations": p.violations, "tails": p.tails,
                "replicas": [dict(vars(r), status=r.status, log_end_offset=r.log_end_offset) for r in p.replicas],
            } for p in self.partitions],
        }


def _s(v) -> str:
    return "-" if v is None else str(v)


def _cleaned_up_to(partition_dir: str, topic: str | None, partition: int | None, cache: dict) -> int | None:
    """The log cleaner's checkpoint for this partition (offsets below it may have been compacted away)."""
    if topic is None:
        return None
    root = os.path.dirname(partition_dir)
    if root not in cache:
        text = read_file_or_none(os.path.join(root, CLEANER_OFFSET_CHECKPOINT))
        try:
            cache[root] = parse_offset_checkpoint(text) if text is not None else {}
        except ValueError:
            cache[root] = {}
    return cache[root].get((topic, partition))


def audit(spark, logdirs: list[str], *, sample: int = 10) -> AuditReport:
    """Audit every partition's replicas under ``logdirs`` (``spark`` must have the source registered:
    ``kraftwire.spark.register``)."""
    from pyspark.sql import functions as F

    files = [f for f in resolve(",".join(logdirs)) if f.kind == "segment"]
    summaries: dict[str, ReplicaSummary] = {}
    cleaner_cache: dict = {}
    for f in files:
        d = os.path.dirname(f.path)
        if d not in summaries:
            topic, part = topic_partition(d)
            summaries[d] = ReplicaSummary(d, f.node, f.high_watermark, topic, part,
                                          cleaned_up_to=_cleaned_up_to(d, topic, part, cleaner_cache))
    if not summaries:
        return AuditReport([])

    # Segments only (the partition dirs, not their snapshots: snapshot offsets are not log offsets).
    df = spark.read.format("kraftwire").load(",".join(sorted(summaries)))
    replica = F.regexp_extract(F.col("path"), r"^(.*)/[^/]*$", 1)
    bad = F.col("error").isNotNull() | ~F.col("batch_crc_valid")
    rows = df.select(
        F.regexp_extract(F.col("path"), r"([^/]*)/[^/]*$", 1).alias("pkey"),  # the partition dir's name
        replica.alias("replica"),
        "offset",
        F.col("partition_leader_epoch").alias("epoch"),
        "batch_base_offset",
        bad.alias("bad"),
        F.coalesce(F.col("committed"), F.lit(False)).alias("below_hw"),
        F.when(bad, F.col("error")).alias("err"),
        F.xxhash64("timestamp", "key", "value", "headers", "is_control").alias("h"),
    ).persist()
    findings: dict = {}
    try:
        _audit(spark, F, rows, summaries, sample, findings)
    finally:
        rows.unpersist()
    groups: dict[str, list[ReplicaSummary]] = {}
    order = lambda kv: (os.path.basename(kv[0]), kv[1].node is None, kv[1].node or 0, kv[0])  # noqa: E731
    for d, s in sorted(summaries.items(), key=order):
        groups.setdefault(os.path.basename(d), []).append(s)
    reports = {}
    for name, reps in sorted(groups.items(), key=lambda kv: (_s(kv[1][0].topic), kv[1][0].partition or 0, kv[0])):
        hws = [r.high_watermark for r in reps if r.high_watermark is not None]
        reports[name] = PartitionReport(name, reps[0].topic, reps[0].partition, reps, max(hws) if hws else None)
    for name, p in reports.items():
        found = findings.get(name, {})
        p.violations.extend(found.get("violations", []))
        p.tails.extend(found.get("tails", []))
        if found.get("divergence") is not None:
            p.divergent_offsets, p.first_divergence = found["divergence"]
    return AuditReport(list(reports.values()))


def _note(findings: dict, pkey: str, kind: str, text) -> None:
    entry = findings.setdefault(pkey, {"violations": [], "tails": []})
    if kind == "divergence":
        entry["divergence"] = text
    else:
        entry[kind].append(text)


def _label(s: ReplicaSummary) -> str:
    return f"{os.path.basename(s.replica)} on {s.who}"


def _audit(spark, F, rows, summaries: dict[str, ReplicaSummary], sample: int, findings: dict) -> None:
    """Fill ``summaries`` and ``findings`` ({partition dir name: {"violations", "tails", "divergence"}})."""
    from functools import partial

    from pyspark.sql import Window

    _note_ = partial(_note, findings)

    # ---- per replica: extent, counts, corrupt batches
    good = rows.where(~F.col("bad"))
    agg = rows.groupBy("replica").agg(
        F.min("offset").alias("first"), F.max("offset").alias("last"),
        F.count("offset").alias("n"), F.countDistinct("offset").alias("distinct"),
        F.countDistinct(F.when(F.col("bad"), F.coalesce("batch_base_offset", F.lit(-1)))).alias("corrupt"),
        F.min(F.when(F.col("bad"), F.col("batch_base_offset"))).alias("first_corrupt"),
        F.min("err").alias("err"),
        F.countDistinct("epoch").alias("epochs"),
    ).collect()
    holes_possible = False
    for r in agg:
        s = summaries[r["replica"]]
        s.first_offset, s.last_offset, s.records, s.epochs = r["first"], r["last"], r["n"], r["epochs"]
        s.corrupt_batches, s.first_corrupt = r["corrupt"], r["first_corrupt"]
        s.duplicates = r["n"] - r["distinct"]
        if r["first"] is not None and (r["last"] - r["first"] + 1) != r["distinct"]:
            holes_possible = True
        pkey = os.path.basename(s.replica)
        if s.corrupt_batches:
            where = ("at an unknown offset" if s.first_corrupt is None
                     else f"first in the batch at offset {s.first_corrupt}")
            _note_(pkey, "violations", f"{_label(s)}: {s.corrupt_batches} corrupt batch(es), {where}: {r['err']}")
        if s.duplicates:
            _note_(pkey, "violations", f"{_label(s)}: {s.duplicates} duplicate offset(s)")

    # ---- gaps: a missing range [offset + 1, next - 1] between two present offsets (above the cleaner's checkpoint)
    if holes_possible:
        cleaned = spark.createDataFrame(
            [(d, -1 if s.cleaned_up_to is None else s.cleaned_up_to) for d, s in summaries.items()],
            "replica string, cleaned long")
        present = rows.where(F.col("offset").isNotNull()).select("replica", "offset").distinct()
        nxt = F.lead("offset").over(Window.partitionBy("replica").orderBy("offset"))
        holes = present.select("replica", (F.col("offset") + 1).alias("start"), (nxt - 1).alias("end")).where(
            F.col("end") >= F.col("start")).join(F.broadcast(cleaned), "replica").where(
            F.col("start") >= F.col("cleaned"))
        per = holes.groupBy("replica").agg(
            F.sum(F.col("end") - F.col("start") + 1).alias("missing"), F.count("*").alias("ranges"),
            F.slice(F.sort_array(F.collect_list(F.struct("start", "end"))), 1, max(1, sample)).alias("first"),
        ).collect()
        for r in per:
            s = summaries[r["replica"]]
            s.gaps = r["missing"]
            for h in r["first"]:
                _note_(os.path.basename(s.replica), "violations",
                       f"{_label(s)}: gap starting at offset {h['start']} (offsets {h['start']}..{h['end']} missing)")
            if r["ranges"] > len(r["first"]):
                _note_(os.path.basename(s.replica), "violations",
                       f"{_label(s)}: {r['ranges'] - len(r['first'])} more missing range(s)")

    # ---- epochs must not decrease along the offsets (one row per replica and epoch reaches the driver)
    spans = good.groupBy("replica", "epoch").agg(F.min("offset").alias("lo"), F.max("offset").alias("hi")).collect()
    by_replica: dict[str, list] = {}
    for r in spans:
        by_replica.setdefault(r["replica"], []).append((r["lo"], r["hi"], r["epoch"]))
    for rep, lst in by_replica.items():
        lst.sort()
        s = summaries[rep]
        for (lo1, hi1, e1), (lo2, hi2, e2) in zip(lst, lst[1:]):
            if e2 < e1 or lo2 <= hi1:
                s.epoch_errors += 1
                _note_(os.path.basename(rep), "violations",
                      f"{_label(s)}: epoch {e2} at offsets [{lo2}..{hi2}] after epoch {e1} at [{lo1}..{hi1}] "
                      f"(epochs must not decrease)")

    # ---- offset by offset across a partition's replicas
    variant = F.struct("epoch", "h")
    per_offset = good.groupBy("pkey", "offset").agg(
        F.countDistinct(variant).alias("v"),
        F.countDistinct(F.when(F.col("below_hw"), variant)).alias("cv"),
        F.max(F.when(F.col("below_hw"), variant)).alias("cvar"),
    ).where(F.col("v") > 1)
    divergent = per_offset.persist()
    try:
        stats = divergent.groupBy("pkey").agg(F.count("*").alias("n"), F.min("offset").alias("first")).collect()
        if not stats:
            return
        for r in stats:
            _note_(r["pkey"], "divergence", (r["n"], r["first"]))
        # Each row at a divergent offset: a violation when it is a committed copy that another committed copy
        # contradicts, when another replica holds a different record in the same leader epoch (one leader per
        # epoch: copies of its batches are equal), or when a committed copy exists and this row differs from it
        # without being older (a later leader overwrote a committed record); else a tail when it differs from the
        # committed copy (an older epoch's unreconciled append) or when no copy there is committed.
        same_epoch = Window.partitionBy("pkey", "offset", "epoch")
        at = good.join(divergent, ["pkey", "offset"]).withColumn(
            "eh", F.size(F.collect_set("h").over(same_epoch)))
        differs = variant != F.col("cvar")
        violation = ((F.col("below_hw") & (F.col("cv") > 1)) | (F.col("eh") > 1)
                     | ((F.col("cv") >= 1) & differs & (F.col("epoch") >= F.col("cvar.epoch"))))
        tail = ~violation & ((F.col("cv") == 0) | differs)
        at = at.select("pkey", "replica", "offset", violation.alias("bad"), tail.alias("tail")).persist()
        try:
            per = at.groupBy("replica").agg(
                F.sum(F.when(F.col("bad"), 1).otherwise(0)).alias("below"),
                F.sum(F.when(F.col("tail"), 1).otherwise(0)).alias("above"),
                F.min(F.when(F.col("tail"), F.col("offset"))).alias("tlo"),
                F.max(F.when(F.col("tail"), F.col("offset"))).alias("thi"),
            ).collect()
            conflicts = at.where("bad").groupBy("pkey").agg(
                F.countDistinct("offset").alias("n"), F.min("offset").alias("first")).collect()
        finally:
            at.unpersist()
        for r in per:
            s = summaries[r["replica"]]
            pkey = os.path.basename(s.replica)
            s.committed_divergent = r["below"] or 0
            s.uncommitted_tail = r["above"] or 0
            if s.uncommitted_tail:
                s.tail_range = (r["tlo"], r["thi"])
                _note_(pkey, "tails", f"{_label(s)}: {s.uncommitted_tail} record(s) at offsets [{r['tlo']}..{r['thi']}] "
                                      f"differ from the other replicas and are not committed (above its high "
                                      f"watermark {_s(s.high_watermark)}, from an older leader epoch)")
        for r in sorted(conflicts, key=lambda r: r["pkey"]):
            pkey = r["pkey"]
            involved = [s for s in summaries.values() if os.path.basename(s.replica) == pkey and s.committed_divergent]
            _note_(pkey, "violations",
                   f"{pkey}: replicas disagree at {r['n']} offset(s) below the committed watermark (a replica's own "
                   f"checkpointed high watermark) or within one leader epoch, first at offset {r['first']}: "
                   + ", ".join(s.who for s in involved))
    finally:
        divergent.unpersist()
