"""The replica manager's retention and compaction of the partitions it hosts (Kafka's ``LogManager`` cleanup and
``LogCleaner``), a part of ``ReplicaManager`` kept in its own file.

* **Retention.** Every ``log.retention.check.interval.ms`` ``retain`` deletes the old segments
  ``kraftwire.replica.retention`` picks; DeleteRecords moves a leader's log start (``delete_records``) and
  followers follow it on their next fetch.
* **Compaction.** ``compact`` runs one cleaner pass (``kraftwire.log.cleaner``) at a time, on the dirtiest
  compacted partition; segments at or past the first unstable transaction are never cleaned.
"""

from __future__ import annotations

import asyncio
import logging

from kraftwire import kafka_configs
from kraftwire.error_codes import KAFKA_STORAGE_ERROR, NONE, OFFSET_OUT_OF_RANGE, POLICY_VIOLATION
from kraftwire.errors import KraftwireError, LogIOError
from kraftwire.log import cleaner
from kraftwire.metadata.controller.topics import TOPIC_RESOURCE
from kraftwire.replica.leader_append import compacts, deletes
from kraftwire.replica.retention import delete_records_offset, segments_to_delete
from kraftwire.server.runtime.clocks import wall_ms
from kraftwire.server.runtime.hosted import Hosted

__all__ = ["PartitionCleaning"]

log = logging.getLogger("kraftwire.replicas")


class PartitionCleaning:
    """Retention, DeleteRecords and compaction; mixed into ``ReplicaManager`` (its ``partitions``, ``node``,
    ``cleaning``, ``broker_configs`` and ``dir_failed``)."""

    def delete_records(self, hp: Hosted, offset: int) -> int:
        """DeleteRecords on the leader: move the log start to ``offset`` (-1: the high watermark); the error code."""
        if not deletes(hp.config):
            return POLICY_VIOLATION
        lg = hp.log
        target = delete_records_offset(offset, lg.high_watermark())
        if target is None:
            return OFFSET_OUT_OF_RANGE
        try:
            if lg.increment_log_start(target):
                log.info("%s-%d: records below %d deleted (DeleteRecords)", hp.topic, hp.index, target)
        except LogIOError as exc:
            self.dir_failed(hp.root, exc)
            return KAFKA_STORAGE_ERROR
        return NONE

    def _topic_config(self, topic: str) -> dict:
        """The topic's effective configuration: its own settings, else this broker's (``kafka_configs``)."""
        image = self.node.metadata.image
        return self.broker_configs(image).topic_config(image.configs.get((TOPIC_RESOURCE, topic), {}))

    def retain(self, now_ms: int | None = None) -> None:
        """Retention on every hosted partition (leader or follower, each below its own high watermark): the
        segments ``kraftwire.replica.retention`` says go, by ``retention.ms`` and ``retention.bytes`` (the topic's,
        else the broker's ``log.retention.*``) and below the log start offset."""
        now_ms = wall_ms() if now_ms is None else now_ms
        for hp in list(self.partitions.values()):
            if hp.failed:
                continue
            cfg = hp.config
            ms, size = kafka_configs.number(cfg["retention.ms"]), kafka_configs.number(cfg["retention.bytes"])
            ms = -1 if ms < 0 else ms
            if not deletes(cfg):
                ms = size = -1  # compact-only: only what lies below the log start goes
            lg = hp.log
            deletion = segments_to_delete(lg.segment_infos(), log_start=lg.start_offset(), log_end=lg.end_offset(),
                                          high_watermark=lg.high_watermark(), now_ms=now_ms, retention_ms=ms,
                                          retention_bytes=size)
            if deletion is None:
                continue
            try:
                start = lg.delete_oldest_segments(deletion.count)
            except LogIOError as exc:
                self.dir_failed(hp.root, exc)
                continue
            if hp.txns is not None:
                hp.txns.delete_before(start)  # their .txnindex files went with the segments
            log.info("%s-%d: deleted %d old segment(s) (%s); the log starts at %d", hp.topic, hp.index,
                     deletion.count, deletion.reason, start)

    # ------------------------------------------------------------------------------------------------ compaction
    def cleaner_config(self, topic: str) -> cleaner.CleanerConfig:
        """The topic's cleaner settings, else the broker's ``log.cleaner.*`` defaults."""
        cfg = self._topic_config(topic)
        config = self.node.settings.config
        return cleaner.CleanerConfig(
            delete_retention_ms=kafka_configs.number(cfg["delete.retention.ms"]),
            min_compaction_lag_ms=kafka_configs.number(cfg["min.compaction.lag.ms"]),
            min_cleanable_dirty_ratio=float(cfg["min.cleanable.dirty.ratio"]),
            dedupe_buffer_size=config.log_cleaner_dedupe_buffer_size)

    def compact(self, *, force: bool = False) -> asyncio.Future | None:
        """Start one cleaner pass, on the compacted partition with the dirtiest log (Kafka's choice), unless one is
        under way or ``log.cleaner.enable`` is off. The offset map and the rewrite run in a worker thread; the swap
        runs back on the loop. Returns the pass (a future of its stats), or None."""
        if self.cleaning is not None or not self.node.settings.config.log_cleaner_enable:
            return None
        now = wall_ms()
        best = None
        for hp in self.partitions.values():
            if hp.failed or not compacts(hp.config):
                continue
            cfg = self.cleaner_config(hp.topic)
            try:
                txns = hp.txn_state()
                hp.log.first_unstable_offset = txns.first_unstable_offset()
            except (OSError, KraftwireError) as exc:
                log.warning("not cleaning %s-%d: its transactions: %s", hp.topic, hp.index, exc)
                continue
            ratio = cleaner.dirty_ratio(hp.log, now, cfg)
            if (force and ratio > 0) or ratio >= cfg.min_cleanable_dirty_ratio:
                if best is None or ratio > best[0]:
                    best = (ratio, hp, cfg, txns)
        if best is None:
            return None
        _ratio, hp, cfg, txns = best
        job = cleaner.job(hp.log, now, cfg, force=force, aborted=list(txns.aborted))
        if job is None:
            return None
        lg = hp.log
        loop = asyncio.get_running_loop()

        def work():
            p = cleaner.plan(job, cfg)
            return p, cleaner.prepare(job, p, now, cfg)

        done_future = loop.create_future()

        def finished(task) -> None:
            self.cleaning = None
            job.close()
            if task.cancelled():
                done_future.cancel()
                return
            exc = task.exception()
            if exc is not None:
                log.error("cleaning %s-%d failed: %s", hp.topic, hp.index, exc)
                if isinstance(exc, OSError):
                    self.dir_failed(hp.root, exc)
                done_future.set_result(None)
                return
            p, prepared = task.result()
            if hp.failed or hp.log is not lg or self.partitions.get((hp.topic, hp.index)) is not hp:
                cleaner.discard(prepared)
                done_future.set_result(None)
                return
            try:
                hp.producer_table()  # the aborted transactions are known before the swap removes .txnindex files
                stats = cleaner.commit(lg, p, prepared)
            except OSError as exc:
                cleaner.discard(prepared)
                self.dir_failed(hp.root, exc)
                done_future.set_result(None)
                return
            try:
                hp.sync_txn_index()  # written again for the cleaned segments
            except OSError as exc:
                self.dir_failed(hp.root, exc)
            log.info("%s-%d cleaned up to offset %d: %d segment(s), %d -> %d bytes, %d of %d records kept",
                     hp.topic, hp.index, stats.end, stats.segments, stats.bytes_before, stats.bytes_after,
                     stats.records_kept, stats.records_read)
            done_future.set_result(stats)

        task = loop.run_in_executor(None, work)
        task.add_done_callback(finished)
        self.cleaning = done_future
        return done_future
