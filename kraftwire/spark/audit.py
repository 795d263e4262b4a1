"""The replica audit: compare several nodes' copies of the Raft log offset by offset, as Spark DataFrame work.

Input: the replicas' log dirs (each a metadata log dir or a partition dir), read with the ``kraftwire`` source
(segments only; control records included). A replica is one partition dir. Per record the audit keeps
(replica, offset, partition leader epoch, a 64-bit content hash of timestamp/key/value/headers/control flag, the
batch's CRC verdict); the heavy parts (hashing, per-offset variants, per-replica aggregates, gap search) are
DataFrame operations, so they scale with the cluster. Only small summaries (one row per replica, per epoch, and
at most ``sample`` offsets) reach the driver.

Rules — a *violation* makes the audit fail:

* corrupt batch: any row flagged by the reader (``error`` set or ``batch_crc_valid`` false);
* gap or duplicate: a replica's offsets are not exactly ``[first, last]``, each once;
* non-monotonic epochs: in offset order a replica's partition leader epochs ever decrease (or interleave);
* committed divergence: at an offset below the *largest* checkpointed high watermark of any replica, two
  replicas hold different records (different epoch or content). Every replica's checkpoint is a lower bound of
  what was committed, so such an offset was committed and the replicas must agree.

Divergence at or above that watermark is an *uncommitted tail* (a deposed leader's unreplicated appends, which
Raft truncates later): reported per replica, not a violation. Replicas that simply lag (shorter logs) agree.
Replicas without a ``high-watermark-checkpoint`` contribute no watermark; with none at all, every divergence
is reported as a tail (nothing is known to be committed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from kraftwire.spark.files import resolve

__all__ = ["ReplicaSummary", "AuditReport", "audit"]


@dataclass
class ReplicaSummary:
    replica: str
    node: int | None
    high_watermark: int | None
    first_offset: int | None = None
    last_offset: int | None = None
    records: int = 0
    epochs: int = 0
    corrupt_batches: int = 0
    gaps: int = 0
    duplicates: int = 0
    epoch_errors: int = 0
    committed_divergent: int = 0
    uncommitted_tail: int = 0
    tail_range: tuple[int, int] | None = None

    @property
    def status(self) -> str:
        if self.corrupt_batches or self.gaps or self.duplicates or self.epoch_errors or self.committed_divergent:
            return "VIOLATION"
        return "tail" if self.uncommitted_tail else "ok"


@dataclass
class AuditReport:
    replicas: list[ReplicaSummary]
    committed_watermark: int | None
    divergent_offsets: int = 0
    first_divergence: int | None = None
    violations: list[str] = field(default_factory=list)
    tails: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    def render(self) -> str:
        cols = ["node", "replica", "hw", "first", "last", "records", "epochs", "corrupt", "gaps", "dups",
                "epoch_err", "diverged<hw", "tail", "status"]
        rows = []
        for r in self.replicas:
            rows.append([_s(r.node), r.replica, _s(r.high_watermark), _s(r.first_offset), _s(r.last_offset),
                         str(r.records), str(r.epochs), str(r.corrupt_batches), str(r.gaps), str(r.duplicates),
                         str(r.epoch_errors), str(r.committed_divergent),
                         "-" if not r.tail_range else f"{r.uncommitted_tail} [{r.tail_range[0]}..{r.tail_range[1]}]",
                         r.status])
        widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c) for i, c in enumerate(cols)]
        line = lambda vals: "  ".join(v.ljust(w) for v, w in zip(vals, widths)).rstrip()  # noqa: E731
        out = [line(cols), line(["-" * w for w in widths])] + [line(r) for r in rows]
        out.append("")
        out.append(f"committed watermark (largest checkpointed high watermark): {_s(self.committed_watermark)}; "
                   f"divergent offsets: {self.divergent_offsets}"
                   + (f" (first at {self.first_divergence})" if self.first_divergence is not None else ""))
        for t in self.tails:
            out.append(f"uncommitted tail: {t}")
        for v in self.violations:
            out.append(f"VIOLATION: {v}")
        out.append("audit: " + ("PASSED" if self.ok else f"FAILED ({len(self.violations)} violation(s))"))
        return "\n".join(out)


def _s(v) -> str:
    return "-" if v is None else str(v)


def audit(spark, logdirs: list[str], *, sample: int = 10) -> AuditReport:
    """Audit the replicas under ``logdirs`` (``spark`` must have the source registered: ``kraftwire.spark.register``)."""
    from pyspark.sql import functions as F

    files = [f for f in resolve(",".join(logdirs)) if f.kind == "segment"]
    info: dict[str, tuple] = {}
    for f in files:
        info.setdefault(os.path.dirname(f.path), (f.node, f.high_watermark))
    hws = [hw for _, hw in info.values() if hw is not None]
    committed = max(hws) if hws else None

    # Segments only (the partition dirs, not their snapshots: snapshot offsets are not log offsets).
    df = spark.read.format("kraftwire").load(",".join(sorted(info)))
    replica = F.regexp_extract(F.col("path"), r"^(.*)/[^/]*$", 1)
    bad = F.col("error").isNotNull() | ~F.col("batch_crc_valid")
    rows = df.select(
        replica.alias("replica"),
        "offset",
        F.col("partition_leader_epoch").alias("epoch"),
        "batch_base_offset",
        bad.alias("bad"),
        F.xxhash64("timestamp", "key", "value", "headers", "is_control").alias("h"),
    ).persist()
    try:
        return _audit(F, rows, info, committed, sample)
    finally:
        rows.unpersist()


def _audit(F, rows, info, committed, sample) -> AuditReport:
    summaries = {d: ReplicaSummary(d, node, hw) for d, (node, hw) in sorted(info.items())}
    report = AuditReport(list(summaries.values()), committed)

    # ---- per replica: extent, counts, corrupt batches
    good = rows.where(~F.col("bad"))
    agg = rows.groupBy("replica").agg(
        F.min("offset").alias("first"), F.max("offset").alias("last"),
        F.count("offset").alias("n"), F.countDistinct("offset").alias("distinct"),
        F.countDistinct(F.when(F.col("bad"), F.coalesce("batch_base_offset", F.lit(-1)))).alias("corrupt"),
        F.countDistinct("epoch").alias("epochs"),
    ).collect()
    for r in agg:
        s = summaries.setdefault(r["replica"], ReplicaSummary(r["replica"], None, None))
        s.first_offset, s.last_offset, s.records, s.epochs = r["first"], r["last"], r["n"], r["epochs"]
        s.corrupt_batches = r["corrupt"]
        s.duplicates = r["n"] - r["distinct"]
        if r["first"] is not None:
            s.gaps = (r["last"] - r["first"] + 1) - r["distinct"]
        if s.corrupt_batches:
            report.violations.append(f"{s.replica}: {s.corrupt_batches} corrupt batch(es)")
        if s.duplicates:
            report.violations.append(f"{s.replica}: {s.duplicates} duplicate offset(s)")
    if any(s.gaps for s in summaries.values()):
        present = rows.where(F.col("offset").isNotNull()).select("replica", "offset")
        after = present.select("replica", (F.col("offset") + 1).alias("offset"))
        holes = after.join(present, ["replica", "offset"], "left_anti").join(
            present.groupBy("replica").agg(F.max("offset").alias("last")), "replica").where(
            F.col("offset") <= F.col("last")).orderBy("replica", "offset").limit(sample * len(summaries)).collect()
        for h in holes:
            report.violations.append(f"{h['replica']}: gap starting at offset {h['offset']}")
        for s in summaries.values():
            if s.gaps and not any(h["replica"] == s.replica for h in holes):
                report.violations.append(f"{s.replica}: {s.gaps} missing offset(s)")

    # ---- epochs must not decrease along the offsets (one row per replica and epoch reaches the driver)
    spans = good.groupBy("replica", "epoch").agg(F.min("offset").alias("lo"), F.max("offset").alias("hi")).collect()
    by_replica: dict[str, list] = {}
    for r in spans:
        by_replica.setdefault(r["replica"], []).append((r["lo"], r["hi"], r["epoch"]))
    for rep, lst in by_replica.items():
        lst.sort()
        for (lo1, hi1, e1), (lo2, hi2, e2) in zip(lst, lst[1:]):
            if e2 < e1 or lo2 <= hi1:
                summaries[rep].epoch_errors += 1
                report.violations.append(
                    f"{rep}: epoch {e2} at offsets [{lo2}..{hi2}] after epoch {e1} at [{lo1}..{hi1}] (epochs must not "
                    f"decrease)")

    # ---- offset by offset across replicas: more than one (epoch, content) variant is a divergence
    variants = good.select("offset", "epoch", "h").distinct().groupBy("offset").agg(F.count("*").alias("v"))
    divergent = variants.where(F.col("v") > 1).select("offset")
    stats = divergent.agg(F.count("*").alias("n"), F.min("offset").alias("first")).collect()[0]
    report.divergent_offsets, report.first_divergence = stats["n"], stats["first"]
    if report.divergent_offsets:
        # Every replica holding a record at a divergent offset is involved there (which side is "right" is
        # not the audit's call: below the watermark it is a violation either way, above it Raft will truncate).
        wm = -1 if committed is None else committed
        at = good.join(divergent, "offset")
        per = at.groupBy("replica").agg(
            F.sum(F.when(F.col("offset") < wm, 1).otherwise(0)).alias("below"),
            F.sum(F.when(F.col("offset") >= wm, 1).otherwise(0)).alias("above"),
            F.min(F.when(F.col("offset") >= wm, F.col("offset"))).alias("tlo"),
            F.max(F.when(F.col("offset") >= wm, F.col("offset"))).alias("thi"),
        ).collect()
        for r in per:
            s = summaries[r["replica"]]
            s.committed_divergent = r["below"] or 0
            s.uncommitted_tail = r["above"] or 0
            if s.uncommitted_tail:
                s.tail_range = (r["tlo"], r["thi"])
                report.tails.append(f"{s.replica} (node {_s(s.node)}): {s.uncommitted_tail} record(s) at offsets "
                                    f"[{r['tlo']}..{r['thi']}] where the replicas disagree, at or above the committed "
                                    f"watermark {_s(committed)}")
        below = divergent.where(F.col("offset") < wm).agg(F.count("*").alias("n"), F.min("offset").alias("m")).collect()[0]
        if below["n"]:
            report.violations.append(
                f"replicas disagree at {below['n']} offset(s) below the committed watermark {committed} "
                f"(first at offset {below['m']}): "
                + ", ".join(f"{s.replica} (node {_s(s.node)})" for s in summaries.values() if s.committed_divergent))
    return report
