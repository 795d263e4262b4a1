"""The replica manager's log directories: where each hosted partition lives, its log opened, configured, flushed
and removed there, and what happens when a directory fails (Kafka's ``LogManager`` and JBOD rules), a part of
``ReplicaManager`` kept in its own file.

* **Placement.** A new partition goes to the online directory holding the fewest partitions (or where it already
  is); a partition that left the image is closed, renamed ``<topic>-<p>.<uuid hex>-delete`` and removed, as Kafka
  does. ``_assign_dirs`` tells the controller where each replica lives (AssignReplicasToDirs, KIP-858), as
  ``kraftwire.replica.hosting`` decides.
* **Files.** Each log directory's ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint`` and
  ``replication-offset-checkpoint`` hold every partition's line; the beat rewrites the changed ones and ``close``
  writes them at shutdown, after every log is closed cleanly.
* **Faults.** An I/O error in a partition's log takes its whole log directory offline: its partitions answer
  KAFKA_STORAGE_ERROR and are not touched again, while the other directories keep serving (Kafka's JBOD rule).
  The heartbeat reports offline directories (KIP-858) and the controller moves the leadership and ISR of the
  partitions placed there. When the last directory goes offline the broker stops (fail-stop), as Kafka halts.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import uuid

from kraftwire import kafka_configs
from kraftwire.kafka_configs import LONG_MAX
from kraftwire.error_codes import name_of as ec_name
from kraftwire.errors import LogIOError
from kraftwire.log.checkpoint import PartitionMetadataFile, fsync_dir
from kraftwire.log.partition_log import PartitionLog
from kraftwire.replica import hosting
from kraftwire.replica.partition import ReplicaState
from kraftwire.server.runtime.clocks import monotonic_ms
from kraftwire.server.runtime.hosted import Hosted

__all__ = ["DELETE_SUFFIX", "LogDirs"]

log = logging.getLogger("kraftwire.replicas")

DELETE_SUFFIX = "-delete"


class LogDirs:
    """Placement, configuration, flushing, removal and failure of the hosted partitions' logs; mixed into
    ``ReplicaManager`` (its ``roots``, ``offline_roots``, ``partitions``, ``by_id``, ``dir_ids``, ``fetchers``)."""

    def _write_checkpoints(self) -> None:
        for root, checkpoints in self.roots.items():
            if root in self.offline_roots:
                continue
            try:
                checkpoints.write()
            except (OSError, LogIOError) as exc:
                self.dir_failed(root, exc)

    def _pick_root(self) -> str | None:
        return hosting.least_loaded(self.roots, self.offline_roots, (hp.root for hp in self.partitions.values()))

    def _host(self, topic_id, topic: str, index: int, cfg) -> Hosted | None:
        key = (topic, index)
        preferred = self._preferred.pop(key, None)
        if preferred in self.offline_roots:
            preferred = None
        root = self._future_at_start(key, topic_id, index) or self._found.pop(key, None) or preferred \
            or self._pick_root()
        if root is None:
            log.error("cannot host %s-%d: every log directory is offline", topic, index)
            return None
        directory = os.path.join(root, f"{topic}-{index}")
        settings = self._log_settings(cfg)
        try:
            existing = PartitionMetadataFile(directory).read() if os.path.isdir(directory) else None
            if existing is not None and existing != topic_id:
                # a directory left by an earlier topic of the same name (deleted while this broker was down)
                log.warning("%s holds topic id %s, not %s: removing it", directory, existing, topic_id)
                self._remove_dir(directory, root)
            lg = self._open(directory, root, topic_id, settings)
        except (OSError, LogIOError) as exc:
            self.dir_failed(root, exc)
            return None
        if lg.recovery_report and lg.recovery_report[0] != "clean":
            log.info("partition %s-%d recovered: %s", topic, index, "; ".join(lg.recovery_report))
        hp = Hosted(topic_id, topic, index, root, lg, ReplicaState(self.broker_id, topic, index))
        lg.on_roll = hp.write_producer_snapshot  # I/O errors surface as the roll's own
        hp.state.log_high_watermark(lg.high_watermark())
        hp.flushed_at_ms = monotonic_ms()
        self._configure(hp, cfg)
        self.partitions[key] = hp
        self.by_id[(topic_id, index)] = hp
        self._resume_future(hp)
        return hp

    def _open(self, directory: str, root: str, topic_id, settings: dict) -> PartitionLog:
        return PartitionLog(directory, self.roots[root], topic_id=topic_id, high_watermark_checkpoint_interval_ms=0,
                            retention_bytes=-1, retention_ms=-1, **settings)

    @staticmethod
    def _log_settings(cfg) -> dict:
        """The log's settings from the topic's effective configuration (``BrokerConfigs.topic_config``)."""
        n = kafka_configs.number
        return {"segment_bytes": n(cfg["segment.bytes"]), "segment_ms": n(cfg["segment.ms"]),
                "index_interval_bytes": n(cfg["index.interval.bytes"]),
                "max_batch_size": n(cfg["max.message.bytes"])}

    def _configure(self, hp: Hosted, cfg) -> None:
        hp.config = cfg
        for attr, value in self._log_settings(cfg).items():
            setattr(hp.log, attr, value)
        n = kafka_configs.number
        hp.min_isr = n(cfg["min.insync.replicas"])
        hp.flush_messages = n(cfg["flush.messages"])
        hp.flush_ms = n(cfg["flush.ms"])

    def _maybe_flush(self, hp: Hosted, now_ms: int | None = None) -> None:
        """fsync ``hp``'s log when flush.messages records are unflushed, or (on the beat) its last flush is flush.ms
        old — Kafka's per-topic durability knobs; by default neither ever fires and the replicas protect the data."""
        lg = hp.log
        unflushed = lg.end_offset() - lg.flushed_offset()
        if unflushed <= 0:
            return
        due = unflushed >= hp.flush_messages
        if not due and now_ms is not None and hp.flush_ms < LONG_MAX:
            due = now_ms - hp.flushed_at_ms >= hp.flush_ms
        if not due:
            return
        try:
            lg.flush()
        except LogIOError as exc:
            self.dir_failed(hp.root, exc)
            return
        hp.flushed_at_ms = monotonic_ms() if now_ms is None else now_ms

    def _delete(self, hp: Hosted, why: str) -> None:
        self.fetchers.unfollow((hp.topic, hp.index))
        self.partitions.pop((hp.topic, hp.index), None)
        self.by_id.pop((hp.topic_id, hp.index), None)
        hp.waits.leadership_lost()
        log.info("removing partition %s-%d: %s", hp.topic, hp.index, why)
        self._cancel_move((hp.topic, hp.index), why, files=not hp.failed)
        if hp.failed:
            return
        directory = hp.log.directory
        try:
            hp.log.close()
        except LogIOError as exc:
            log.warning("closing %s-%d before removal: %s", hp.topic, hp.index, exc)
        self.roots[hp.root].forget((hp.topic, hp.index))
        self._remove_dir(directory, hp.root)

    def _remove_dir(self, directory: str, root: str) -> None:
        base = os.path.basename(directory)
        # Kafka's name: <topic>-<p>.<uuid without dashes>-delete, the topic cut so the name stays within 255 bytes
        tag = f".{uuid.uuid4().hex}{DELETE_SUFFIX}"
        target = os.path.join(root, base[: 255 - len(tag)] + tag)
        try:
            os.rename(directory, target)
            fsync_dir(root)
        except OSError as exc:
            self.dir_failed(root, exc)
            return
        try:
            asyncio.get_running_loop().run_in_executor(None, shutil.rmtree, target, True)
        except RuntimeError:  # no loop (tests driving the manager directly)
            shutil.rmtree(target, ignore_errors=True)

    def dir_failed(self, root: str, exc: BaseException) -> None:
        if root in self.offline_roots:
            return
        self.offline_roots.add(root)
        log.error("log directory %s is offline after an I/O error (%s): its partitions answer KAFKA_STORAGE_ERROR",
                  root, exc)
        for hp in self.partitions.values():
            if hp.root == root:
                hp.failed = True
                hp.waits.leadership_lost()
        for key in [k for k, move in self.moves.items() if move.root == root]:
            self._cancel_move(key, "its log directory failed", files=False)
        if self.roots and set(self.roots) <= self.offline_roots:
            # Kafka halts a broker whose every log directory failed: nothing it hosts can be served any more
            self.on_all_offline("every log directory is offline", exc)

    # ------------------------------------------------------------------------------------------------ KIP-858
    def online_dir_ids(self) -> list:
        return [d for root, d in self.dir_ids.items() if root not in self.offline_roots]

    def offline_dir_ids(self) -> list:
        return [d for root, d in self.dir_ids.items() if root in self.offline_roots]

    def _assign_dirs(self, image, topics=None) -> None:
        """Tell the active controller where this broker placed replicas whose directory the image does not say
        (AssignReplicasToDirs, metadata version 3.7-IV2 and later), one request for all of them. Only the topics
        the image changed are looked at (``topics``; None: all, after an answer that did not take)."""
        version = image.metadata_version
        if self.assign is None or version is None or not version.at_least("3.7-IV2") or not self.dir_ids:
            return
        if topics is not None and not topics:
            return
        self._assign_all = False
        placed = {key: self.dir_ids.get(self._placed_root(hp)) for key, hp in self.by_id.items()}
        wanted = hosting.dirs_to_assign(image, self.broker_id, placed, self._assigning, topics)
        if not wanted:
            return
        keys = {(t, i) for per_dir in wanted.values() for t, idx in per_dir.items() for i in idx}
        self._assigning |= keys

        def answered(error: int) -> None:
            self._assigning -= keys  # done, or asked again with the next image if it did not take
            if error:
                self._assign_all = True
                log.info("AssignReplicasToDirs: %s; asking again with the next image", ec_name(error))

        self.assign(wanted, answered)
