"""The broker's replica manager: the topic partitions the metadata image assigns this broker, hosted in its log
directories, and the asyncio side of ``kraftwire.replica`` (Kafka's ``ReplicaManager``/``LogManager``, facts in
kafka-replication-facts.md §1, §4).

* **Following the image.** After every metadata commit the node calls ``apply(image)``: a partition listing this
  broker among its replicas is opened (created in the log directory holding the fewest partitions, or where it
  already is) and its ``ReplicaState`` applies the registration — a new leader epoch goes into the log's epoch cache
  at the log end. A partition that left the image (its topic deleted, or this broker no longer a replica) is closed,
  renamed ``<topic>-<p>.<uuid hex>-delete`` and removed, as Kafka does; leftovers of an interrupted removal go at the
  next start. Topic configs (``segment.bytes``, ``segment.ms``, ``index.interval.bytes``, ``max.message.bytes``,
  ``min.insync.replicas``) are read from the image each time, so an altered config applies to the open log.
* **Leading.** ``append`` validates a producer's batches (framing, CRC-32C, every record: a corrupt batch is never
  appended), checks idempotent producers' sequences (``kraftwire.replica.producers``, folded lazily from the log's
  batch headers the first time a producer id shows up in a partition), appends as leader with the partition's leader
  epoch and raises the high watermark. ``waits`` holds acks=-1 answers until the high watermark passes them.
* **Transactions.** With the producers, each partition folds its transactions in offset order
  (``kraftwire.replica.transactions``: open ones, the last stable offset, aborted ones) — as leader when it appends,
  as follower when it copies, and on first use after a start from the latest producer snapshot (which carries each
  producer's open transaction, Kafka's CurrentTxnFirstOffset) plus the aborts below it in the segments'
  ``.txnindex`` files, then the log after it. A completed transaction holds the last stable offset until the high
  watermark passes its marker; those are not in the snapshot (nor in Kafka's): the fold finds the ones after it.
  WriteTxnMarkers appends a COMMIT or ABORT control batch (``append_marker``); an ABORT's ``AbortedTxn`` is
  appended to the ``.txnindex`` of the segment holding the marker (fsynced before the next producer snapshot), and
  the files are rewritten from the folded state after a truncation or a clean. Segments at or past the first
  unstable transaction are never cleaned.
* **Verification** (KIP-890, ``transaction.partition.verification.enable``): a client's first transactional batch
  of a producer with no open transaction here is appended only with the guard of a verification the transaction
  coordinator confirmed (``start_verification``; ``txn_verifier`` asks); a transactional batch or marker of the
  producer reaching the log — as leader or follower — ends its verification.
* **Files.** Each log directory's ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint`` and
  ``replication-offset-checkpoint`` hold every partition's line; ``beat`` rewrites the changed ones (the node calls it
  every second) and ``close`` at shutdown, after every log is closed cleanly.
* **Retention.** Every ``log.retention.check.interval.ms`` ``retain`` deletes the old segments
  ``kraftwire.replica.retention`` picks; DeleteRecords moves a leader's log start (``delete_records``) and
  followers follow it on their next fetch.
* **Faults.** An I/O error in a partition's log takes its whole log directory offline: its partitions answer
  KAFKA_STORAGE_ERROR and are not touched again, while the other directories keep serving (Kafka's JBOD rule).
  The heartbeat reports offline directories (KIP-858) and the controller moves the leadership and ISR of the
  partitions placed there; ``_assign_dirs`` tells it where each replica lives (AssignReplicasToDirs). When the
  last directory goes offline the broker stops (fail-stop), as Kafka halts.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
import uuid
from typing import Callable

from kraftwire.error_codes import name_of as ec_name
from kraftwire.error_codes import (
    CORRUPT_MESSAGE,
    KAFKA_STORAGE_ERROR,
    NONE,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
    POLICY_VIOLATION,
    REQUEST_TIMED_OUT,
)
from kraftwire.errors import InvalidAppendError, KraftwireError, LogIOError
from kraftwire.log import cleaner
from kraftwire.log.api import Isolation
from kraftwire.log.checkpoint import PartitionMetadataFile, fsync_dir, write_atomic
from kraftwire.log.lookup import batches_between
from kraftwire.log.meta_properties import read_meta_properties
from kraftwire.log.segment import TXN_INDEX_SUFFIX, segment_filename
from kraftwire.log.partition_log import LogDirCheckpoints, PartitionLog, parse_partition_dir
from kraftwire import kafka_configs
from kraftwire.kafka_configs import LONG_MAX, BrokerConfigs
from kraftwire.metadata.controller.topics import BROKER_RESOURCE, TOPIC_RESOURCE, broker_configs, replica_dir
from kraftwire.records import read_batches
from kraftwire.replica.partition import FOLLOWER, LEADER, ReplicaState
from kraftwire.replica.producer_snapshot import CorruptProducerSnapshot, snapshot_name
from kraftwire.replica.producer_snapshot import decode_with_txns as decode_snapshot
from kraftwire.replica.producer_snapshot import encode as encode_snapshot
from kraftwire.replica.producers import ProducerTable
from kraftwire.replica.leader_append import AppendResult, compacts, deletes, plan_append, plan_marker
from kraftwire.replica.transactions import (AbortedTxn, PartitionTxns, by_segment, decode_txn_index,
                                            encode_txn_index, fold_batch)
from kraftwire.replica.retention import delete_records_offset, segments_to_delete
from kraftwire.replica.verification import ProducerVerifications
from kraftwire.server import partition_runtime as runtime
from kraftwire.server.broker.waits import HIGH_WATERMARK, OffsetWaits
from kraftwire.server.driver import fail_stop

log = logging.getLogger("kraftwire.replicas")


def _now_ms() -> int:
    return int(time.monotonic() * 1000)


def _wall_ms() -> int:
    """Wall-clock milliseconds: what batch timestamps are compared with (producer expiry, retention)."""
    return int(time.time() * 1000)

DELETE_SUFFIX = "-delete"


#: the longest an image pass spends creating partitions before it lets the event loop run (``apply``)
APPLY_BUDGET_S = 0.02

class Hosted:
    """One partition this broker hosts: its log, replica state, producers and pending acks=-1 answers."""

    __slots__ = ("topic_id", "topic", "index", "root", "log", "state", "producers", "txns", "txn_unsynced", "waits",
                 "min_isr", "failed", "flush_messages", "flush_ms", "flushed_at_ms", "truncations", "verifications", "config")

    def __init__(self, topic_id, topic: str, index: int, root: str, lg: PartitionLog, state: ReplicaState) -> None:
        self.topic_id = topic_id
        self.topic = topic
        self.index = index
        self.root = root
        self.log = lg
        self.state = state
        self.producers: ProducerTable | None = None  # folded on first use
        self.txns: PartitionTxns | None = None  # folded with the producers
        self.txn_unsynced: set[str] = set()  # .txnindex files appended to since the last snapshot (fsynced then)
        self.waits = OffsetWaits()
        self.min_isr = 1
        self.failed = False
        self.flush_messages = self.flush_ms = LONG_MAX  # flush.messages / flush.ms: never by default, as Kafka
        #: the topic's effective configuration (``kafka_configs.BrokerConfigs.topic_config``), set by the replica
        #: manager whenever the topic's or the brokers' configuration changes
        self.config: dict = {}
        self.flushed_at_ms = 0
        self.truncations = lg.truncations  # a truncation since the table was folded makes it stale
        #: transaction verifications under way as leader (KIP-890, ``kraftwire.replica.verification``)
        self.verifications = ProducerVerifications()

    def __repr__(self) -> str:
        return f"Hosted({self.topic}-{self.index} {self.state.role} in {self.root})"

    def producer_table(self) -> ProducerTable:
        """The idempotent producers of this partition: the latest ``<offset>.snapshot`` at or below the log end (a
        clean shutdown writes one), then the batch headers after it; the whole log when there is none or it is
        damaged. Folded on first use, and again after a truncation, together with the transactions
        (``txn_state``)."""
        lg = self.log
        if self.producers is not None and self.truncations == lg.truncations:
            return self.producers
        table, ongoing, start = None, {}, lg.start_offset()
        for offset in reversed(lg.producer_snapshots()):
            if offset > lg.end_offset():
                continue
            path = os.path.join(lg.directory, snapshot_name(offset))
            try:
                with open(path, "rb") as f:
                    table, ongoing = decode_snapshot(f.read())
                start = max(start, offset)
                break
            except (OSError, CorruptProducerSnapshot) as exc:
                log.warning("ignoring producer snapshot %s: %s", path, exc)
        table = table if table is not None else ProducerTable()
        # the transactions: those the snapshot says are open, the aborted ones below it from the segments'
        # .txnindex files (a snapshot is only written by a replica that kept them), the rest from the log
        txns = PartitionTxns()
        txns.on_high_watermark(lg.high_watermark())  # markers below it are replicated: they hold nothing
        txns.ongoing = {pid: first for pid, first in ongoing.items() if first < start}
        txns.aborted = [e for e in self._stored_aborted() if e.last_offset < start]
        stored = list(txns.aborted)
        for b in batches_between(lg, start, lg.end_offset(), Isolation.UNCOMMITTED):
            fold_batch(table, txns, b)
        txns.delete_before(lg.start_offset())
        self.producers, self.txns, self.truncations = table, txns, lg.truncations
        if txns.aborted != stored or self._txn_index_files():
            self.sync_txn_index()
        return table

    def txn_state(self) -> PartitionTxns:
        """The partition's open, unreplicated and aborted transactions (``kraftwire.replica.transactions``), told
        the current high watermark."""
        self.producer_table()
        self.txns.on_high_watermark(self.log.high_watermark())
        return self.txns

    def last_stable_offset(self) -> int:
        """Kafka's LSO: the first offset of the oldest transaction open or whose marker is not yet below the high
        watermark, at least the log start, capped by the high watermark."""
        return self.txn_state().last_stable_offset(self.log.high_watermark(), self.log.start_offset())

    # ------------------------------------------------------------------------------------------------ .txnindex
    def _txn_index_files(self) -> list[str]:
        return sorted(n for n in os.listdir(self.log.directory) if n.endswith(TXN_INDEX_SUFFIX))

    def _stored_aborted(self) -> list[AbortedTxn]:
        entries: set[AbortedTxn] = set()
        for name in self._txn_index_files():
            try:
                with open(os.path.join(self.log.directory, name), "rb") as f:
                    entries.update(decode_txn_index(f.read()))
            except (OSError, ValueError) as exc:
                log.warning("ignoring %s of %s-%d: %s", name, self.topic, self.index, exc)
        return sorted(entries, key=lambda e: e.last_offset)

    def sync_txn_index(self) -> None:
        """Rewrite the segments' ``.txnindex`` files to hold exactly the aborted transactions known (after a fold,
        a truncation or a clean); files of segments without any go."""
        if self.txns is None:
            return
        directory = self.log.directory
        wanted = {segment_filename(base, TXN_INDEX_SUFFIX): encode_txn_index(entries)
                  for base, entries in by_segment(self.txns.aborted, self.log.segment_base_offsets()).items()}
        for name in self._txn_index_files():
            if name not in wanted:
                os.unlink(os.path.join(directory, name))
        for name, data in wanted.items():
            path = os.path.join(directory, name)
            try:
                with open(path, "rb") as f:
                    if f.read() == data:
                        continue
            except FileNotFoundError:
                pass
            write_atomic(path, data)
            self.txn_unsynced.discard(path)

    def _record_abort(self, entry: AbortedTxn | None) -> None:
        """Append an abort to the ``.txnindex`` of the segment holding its marker (as Kafka, not fsynced: a crash
        may lose it, and the next fold finds it again in the log above the last snapshot)."""
        if entry is None:
            return
        for base in by_segment([entry], self.log.segment_base_offsets()):
            path = os.path.join(self.log.directory, segment_filename(base, TXN_INDEX_SUFFIX))
            with open(path, "ab") as f:
                f.write(encode_txn_index([entry]))
            self.txn_unsynced.add(path)

    def fold_appended(self, batches) -> None:
        """Batches just appended (as leader or follower): the folded producers and transactions learn them."""
        batches = list(batches)
        for b in batches:  # a transactional batch or marker ends any verification of its producer (Kafka's rule)
            if b.is_transactional and b.producer_id >= 0 and self.verifications.entries:
                self.verifications.clear(b.producer_id)
        if self.producers is None or self.truncations != self.log.truncations:
            self.producers = self.txns = None  # folded again when needed
            return
        self.txns.on_high_watermark(self.log.high_watermark())  # keeps the unreplicated ones few
        for b in batches:
            self._record_abort(fold_batch(self.producers, self.txns, b))

    def write_producer_snapshot(self, offset: int | None = None) -> None:
        """The folded table as ``<offset>.snapshot`` (default: the log end; at a clean shutdown, and at a segment
        roll with the new segment's base, before the batch that rolled it is folded in), keeping the two newest.
        Each producer's open transaction goes in with it (Kafka's CurrentTxnFirstOffset)."""
        if self.producers is None or self.truncations != self.log.truncations:
            return
        lg = self.log
        offset = lg.end_offset() if offset is None else offset
        # the aborts below the snapshot are durable before it is: a fold after a power loss reads them from the
        # .txnindex files and the rest from the log after the snapshot (Kafka flushes a segment's indexes at a roll)
        unsynced, self.txn_unsynced = self.txn_unsynced, set()
        for path in sorted(unsynced):
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        ongoing = self.txns.ongoing if self.txns is not None else None
        write_atomic(os.path.join(lg.directory, snapshot_name(offset)), encode_snapshot(self.producers, ongoing))
        for offset in lg.producer_snapshots()[:-2]:
            try:
                os.unlink(os.path.join(lg.directory, snapshot_name(offset)))
            except FileNotFoundError:
                pass


class ReplicaManager:
    def __init__(self, node) -> None:
        self.node = node
        self.broker_id = node.settings.node_id
        self.partitions: dict[tuple[str, int], Hosted] = {}
        self.by_id: dict[tuple[object, int], Hosted] = {}
        self.roots: dict[str, LogDirCheckpoints] = {}
        self.offline_roots: set[str] = set()
        #: each log directory's ``directory.id`` (meta.properties): registered with the controller, which records
        #: where each replica lives (KIP-858) and is told when a directory goes offline
        self.dir_ids: dict[str, object] = {}
        self._assigning: set = set()  # (topic id, index) whose AssignReplicasToDirs is on its way
        self._assign_all = True  # look at every hosted partition at the next image (at start, after a refusal)
        self._found: dict[tuple[str, int], str] = {}  # partition directories present at start -> their root
        self._topics_seen: dict = {}
        self._configs_seen = None
        self._image_to_apply = None
        self._registration_seen = False  # the image has shown this incarnation's registration (``apply``)
        self._resume: asyncio.Handle | None = None  # the next apply pass, when one was cut short
        self._changed_before: set = set()  # topics the passes cut short went through
        #: called with the ``Hosted`` whose high watermark or (as leader) log end moved: parked fetches listen
        self.watchers: list[Callable[[Hosted], None]] = []
        #: ``alter(hp, pending)`` sends an AlterPartition for ``hp``'s pending ISR (set by the partition APIs)
        self.alter: Callable | None = None
        #: ``assign({dir id: {topic id: [index]}}, answered(error))`` sends AssignReplicasToDirs (partition APIs)
        self.assign: Callable | None = None
        self.lag_ms = node.settings.config.replica_lag_time_max_ms
        #: called when the last log directory goes offline (fail-stop; tests replace it)
        self.on_all_offline: Callable[[str, BaseException], None] = fail_stop
        self._retain_at = _now_ms() + node.settings.config.log_retention_check_interval_ms
        self._clean_at = _now_ms() + node.settings.config.log_cleaner_backoff_ms
        self._expire_producers_at = _now_ms() + node.settings.config.producer_id_expiration_check_interval_ms
        self.cleaning: asyncio.Future | None = None  # the cleaner's pass under way (one at a time, off the loop)
        self.started = False
        from kraftwire.server.fetcher import ReplicaFetchers

        self.fetchers = ReplicaFetchers(self, node)
        from kraftwire.server.txn_verifier import TxnVerifier

        #: asks transaction coordinators to verify transactional Produce (KIP-890, Kafka's AddPartitionsToTxnManager)
        self.verifier = TxnVerifier(node, self)

    # ------------------------------------------------------------------------------------------------ start / stop
    def start(self) -> None:
        """Index the partition directories of every log directory and remove interrupted deletions."""
        for root in self.node.settings.config.all_log_dirs():
            root = os.path.abspath(root)
            self.roots[root] = LogDirCheckpoints(root)
            meta = read_meta_properties(root)
            if meta is not None and meta.directory_id is not None:
                self.dir_ids[root] = meta.directory_id
            for name in sorted(os.listdir(root)):
                path = os.path.join(root, name)
                if not os.path.isdir(path):
                    continue
                if name.endswith(DELETE_SUFFIX):
                    shutil.rmtree(path, ignore_errors=True)
                    continue
                parsed = parse_partition_dir(name)
                if parsed is None or parsed[0] == self.node.settings.config.metadata_log_topic:
                    continue
                if parsed in self._found:
                    log.error("partition %s-%d has directories in both %s and %s: serving the first", *parsed,
                              self._found[parsed], root)
                    continue
                self._found[parsed] = root
        self.started = True

    def close(self) -> None:
        self.started = False  # an image published after this is not applied
        self.verifier.close()
        if self._resume is not None:
            self._resume.cancel()
            self._resume = None
        # the high watermarks while the logs are open: a leader still leading at shutdown (its controlled shutdown
        # unconfirmed, the controllers gone first) would otherwise meet a closed log and fail its directory
        self.beat(retain=False)
        for hp in list(self.partitions.values()):
            hp.waits.leadership_lost()
            if not hp.failed:
                try:
                    hp.write_producer_snapshot()
                except OSError as exc:
                    log.warning("no producer snapshot for %s-%d: %s", hp.topic, hp.index, exc)
                try:
                    hp.log.close()
                except LogIOError as exc:
                    log.error("closing %s-%d: %s", hp.topic, hp.index, exc)
        self._write_checkpoints()  # the directories' checkpoints as the closed logs left them
        self.partitions.clear()
        self.by_id.clear()

    def beat(self, now_ms: int | None = None, *, retain: bool = True) -> None:
        """Propose ISR shrinks for followers that fell behind; write the log directories' offset checkpoints that
        changed (the high watermarks first)."""
        now_ms = _now_ms() if now_ms is None else now_ms
        if retain and now_ms >= self._retain_at:
            self._retain_at = now_ms + self.node.settings.config.log_retention_check_interval_ms
            self.retain()
        if now_ms >= self._expire_producers_at:
            self._expire_producers_at = now_ms + self.node.settings.config.producer_id_expiration_check_interval_ms
            # scheduled on the monotonic clock, judged on the wall clock: the producers' ages come from their
            # batches' timestamps (Kafka's removeExpiredProducers(time.milliseconds))
            self.expire_producers(_wall_ms())
        if retain and now_ms >= self._clean_at and self.cleaning is None:
            self._clean_at = now_ms + self.node.settings.config.log_cleaner_backoff_ms
            self.compact()
        for hp in self.partitions.values():
            if not hp.failed and hp.state.role == LEADER:
                pending = hp.state.propose_shrink(now_ms, self.lag_ms, hp.log.end_offset())
                if pending is not None:
                    log.info("shrinking the ISR of %s-%d from %s to %s", hp.topic, hp.index, list(hp.state.isr),
                             list(pending.isr))
                    self._send_alter(hp)
                elif hp.state.pending is not None and not hp.state.in_flight:
                    self._send_alter(hp)  # an answer asked for it to be sent again
                # time alone can move it: a follower outside the ISR that stopped fetching stops holding it back
                self._advance(hp, now_ms=now_ms)
        for hp in list(self.partitions.values()):
            if not hp.failed and hp.flush_ms < LONG_MAX:
                self._maybe_flush(hp, now_ms)
            if hp.verifications.entries:
                hp.verifications.expire(now_ms)  # verifications never followed by an append
        for hp in self.partitions.values():
            if not hp.failed:  # followers' too, as Kafka's replica manager checkpoints every partition's
                try:
                    hp.log.checkpoint_high_watermark()
                except LogIOError as exc:
                    self.dir_failed(hp.root, exc)
        self._write_checkpoints()

    def expire_producers(self, wall_ms: int) -> None:
        """Forget the producers idle for ``producer.id.expiration.ms`` without an open transaction, on every
        partition whose table is folded (leader or follower, as Kafka's broker does each on its own).
        ``wall_ms``: wall-clock milliseconds, the clock of the batch timestamps the producers' ages come from."""
        expiration = self.node.settings.config.producer_id_expiration_ms
        for hp in self.partitions.values():
            if hp.failed or hp.producers is None or hp.truncations != hp.log.truncations:
                continue
            gone = hp.producers.expire(wall_ms, expiration, hp.txns.ongoing if hp.txns is not None else ())
            if gone:
                log.info("%s-%d: forgot %d producer id(s) idle for %d ms", hp.topic, hp.index, len(gone), expiration)

    def _write_checkpoints(self) -> None:
        for root, checkpoints in self.roots.items():
            if root in self.offline_roots:
                continue
            try:
                checkpoints.write()
            except (OSError, LogIOError) as exc:
                self.dir_failed(root, exc)

    # ------------------------------------------------------------------------------------------------ the image
    def apply(self, image) -> None:
        """Host, lead, follow or drop partitions as ``image`` says. Creating a partition's files costs a few
        milliseconds of fsyncs, so a pass that must create many (a burst of CreateTopics: thousands) stops after
        ``APPLY_BUDGET_S`` (20 ms) of them and goes on at the next turn of the event loop, with the latest image
        then: the broker keeps heartbeating (it would otherwise be fenced for a session timeout's worth of file
        creation) and serving; a partition not created yet answers as not hosted, as in Kafka until its log
        exists."""
        if not self.started:
            return
        self._image_to_apply = image
        if not self.registered_in(image):
            return  # held until this incarnation's registration is in the image (then with the latest image)
        if self._resume is None:
            self._apply_pass()

    def registered_in(self, image) -> bool:
        """Does the image hold this process's own registration (its incarnation id)? Until then a
        restarted broker's image is the one it had before it stopped: it would lead the partitions that image gave
        it, replicate to its followers from a log that may be shorter than theirs, and load coordinators from it,
        while the controller is about to take them away (a new incarnation registers after the changes that take
        the old one out of every ISR and leadership). Kafka's broker likewise publishes no metadata to its replica
        manager before it has caught up and registered. The image that holds this process's incarnation id holds
        those changes too (they come first in the registration's batch). Nodes without roles apply at once."""
        if self._registration_seen:
            return True
        incarnation = getattr(getattr(self.node, "roles", None), "incarnation", None)
        mine = image.brokers.get(self.broker_id)
        self._registration_seen = incarnation is None or (mine is not None and mine.incarnation_id == incarnation)
        return self._registration_seen

    def _apply_pass(self) -> None:
        self._resume = None
        image = self._image_to_apply
        if not self.started or image is None:
            return
        seen = self._topics_seen
        done = dict(seen)  # what this pass finished (a pass cut short keeps the unfinished topics unseen)
        changed = set()
        deadline = time.monotonic() + APPLY_BUDGET_S
        cut_short, created = False, 0
        layers_changed = self._broker_layers_changed(image)
        brokers = self.broker_configs(image)
        for topic_id, topic in image.topics.items():
            if seen.get(topic_id) is topic and not layers_changed and not self._configs_changed(image, topic):
                continue
            if cut_short:
                break
            changed.add(topic_id)
            cfg = brokers.topic_config(image.configs.get((TOPIC_RESOURCE, topic.name), {}))
            for index, reg in topic.partitions.items():
                hp = self.by_id.get((topic_id, index))
                if self.broker_id not in reg.replicas:
                    if hp is not None:
                        self._delete(hp, "this broker is no longer a replica")
                    continue
                if hp is None:
                    if created and time.monotonic() > deadline:  # at least one per pass: every pass progresses
                        cut_short = True
                        break
                    created += 1
                    hp = self._host(topic_id, topic.name, index, cfg)
                    if hp is None:
                        continue
                else:
                    self._configure(hp, cfg)
                if hp.failed:
                    continue
                try:
                    change = runtime.apply_registration(hp.state, hp.log, reg, _now_ms())
                except LogIOError as exc:
                    self.dir_failed(hp.root, exc)
                    continue
                if change is None:
                    continue
                if change.new_leader_epoch and change.role == LEADER:
                    log.info("leading %s-%d in leader epoch %d from offset %d (ISR %s)", hp.topic, index,
                             reg.leader_epoch, hp.state.epoch_start_offset, list(reg.isr))
                if hp.state.role != LEADER:
                    hp.waits.leadership_lost()
                if hp.state.role == FOLLOWER:
                    if change.new_leader_epoch or change.role != FOLLOWER or not self._followed(hp):
                        self.fetchers.follow(hp)
                else:
                    self.fetchers.unfollow((hp.topic, hp.index))
                self._advance(hp)
            if not cut_short:
                done[topic_id] = topic
        if cut_short:
            self._topics_seen = done
            self._changed_before |= changed  # their directories are told once the pass completes
            self._resume = asyncio.get_running_loop().call_soon(self._apply_pass)
            return
        changed |= self._changed_before
        self._changed_before = set()
        for topic_id in [t for t in seen if t not in image.topics]:
            for hp in [h for (tid, _), h in list(self.by_id.items()) if tid == topic_id]:
                self._delete(hp, "its topic was deleted")
        self._topics_seen = dict(image.topics)
        self._configs_seen = image.configs
        self._assign_dirs(image, None if self._assign_all else changed)

    def _followed(self, hp: Hosted) -> bool:
        f = self.fetchers.fetchers.get(hp.state.leader)
        return f is not None and f.partitions.get((hp.topic, hp.index)) is hp

    def _broker_layers_changed(self, image) -> bool:
        """Whether the dynamic broker configuration of this broker or the cluster-wide default changed since the
        last pass: every hosted partition's effective configuration is resolved again, as Kafka reconfigures its
        logs on a dynamic change."""
        before = self._configs_seen
        return before is None or any(before.get(key) is not image.configs.get(key)
                                     for key in ((BROKER_RESOURCE, ""), (BROKER_RESOURCE, str(self.broker_id))))

    def broker_configs(self, image=None) -> BrokerConfigs:
        """The broker-level layers topic configs resolve through on this broker (``kafka_configs``)."""
        image = self.node.metadata.image if image is None else image
        return broker_configs(image, self.broker_id, self.node.settings.config.raw)

    def _configs_changed(self, image, topic) -> bool:
        before = self._configs_seen
        key = (TOPIC_RESOURCE, topic.name)
        return before is None or before.get(key) is not image.configs.get(key)

    def _pick_root(self) -> str | None:
        counts = {root: 0 for root in self.roots if root not in self.offline_roots}
        for hp in self.partitions.values():
            if hp.root in counts:
                counts[hp.root] += 1
        return min(counts, key=lambda r: (counts[r], list(self.roots).index(r))) if counts else None

    def _host(self, topic_id, topic: str, index: int, cfg) -> Hosted | None:
        key = (topic, index)
        root = self._found.pop(key, None) or self._pick_root()
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
        hp.flushed_at_ms = _now_ms()
        self._configure(hp, cfg)
        self.partitions[key] = hp
        self.by_id[(topic_id, index)] = hp
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
        hp.flushed_at_ms = _now_ms() if now_ms is None else now_ms

    def _delete(self, hp: Hosted, why: str) -> None:
        self.fetchers.unfollow((hp.topic, hp.index))
        self.partitions.pop((hp.topic, hp.index), None)
        self.by_id.pop((hp.topic_id, hp.index), None)
        hp.waits.leadership_lost()
        log.info("removing partition %s-%d: %s", hp.topic, hp.index, why)
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
        wanted: dict = {}
        for (topic_id, index), hp in self.by_id.items():
            if topics is not None and topic_id not in topics:
                continue
            topic = image.topics.get(topic_id)
            reg = topic.partitions.get(index) if topic is not None else None
            mine = self.dir_ids.get(hp.root)
            if reg is None or mine is None or (topic_id, index) in self._assigning:
                continue
            if replica_dir(reg, self.broker_id) != mine:
                wanted.setdefault(mine, {}).setdefault(topic_id, []).append(index)
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

    # ------------------------------------------------------------------------------------------------ lookups
    def get(self, topic: str, index: int) -> Hosted | None:
        return self.partitions.get((topic, index))

    def get_by_id(self, topic_id, index: int) -> Hosted | None:
        return self.by_id.get((topic_id, index))

    # ------------------------------------------------------------------------------------------------ leading
    def verification_enabled(self) -> bool:
        """``transaction.partition.verification.enable`` (KIP-890; Kafka's default true)."""
        return self.node.settings.config.transaction_partition_verification_enable

    def append(self, hp: Hosted, records, acks: int, *, verify: bool = False, guard=None) -> AppendResult:
        """Append a producer's records to ``hp`` as its leader (the caller checked ``produce_error``). ``verify``:
        a client's Produce, whose first transactional batch of a producer without an open transaction needs the
        ``guard`` of a verification the coordinator confirmed (``kraftwire.replica.verification``; the
        coordinators' own writes are not verified here)."""
        if hp.failed:
            return AppendResult(KAFKA_STORAGE_ERROR)
        lg = hp.log
        plan = plan_append(records, topic=hp.topic, index=hp.index, config=hp.config,
                           max_batch_size=lg.max_batch_size, log_start=lg.start_offset(),
                           producers=lambda: (hp.producer_table(), hp.txns), verifications=hp.verifications,
                           verify=verify, guard=guard, verification_enabled=self.verification_enabled(),
                           wall_ms=_wall_ms())
        if isinstance(plan, AppendResult):
            return plan
        try:
            result = runtime.append_planned(hp.state, lg, plan, lambda: (hp.producers, hp.txns), hp.verifications)
        except InvalidAppendError as exc:
            return AppendResult(CORRUPT_MESSAGE, str(exc))
        except LogIOError as exc:
            self.dir_failed(hp.root, exc)
            return AppendResult(KAFKA_STORAGE_ERROR, str(exc))
        self._maybe_flush(hp)
        self._advance(hp, appended=True)
        return result

    def append_marker(self, hp: Hosted, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                      commit: bool) -> AppendResult:
        """WriteTxnMarkers on the leader: a control batch (transactional, one COMMIT or ABORT record whose value is
        the coordinator epoch) for the producer, appended in the leader epoch; an abort goes to the ``.txnindex``
        of its segment. INVALID_PRODUCER_EPOCH / TRANSACTION_COORDINATOR_FENCED for a stale marker (Kafka's
        ``appendEndTxnMarker``)."""
        if hp.failed:
            return AppendResult(KAFKA_STORAGE_ERROR)
        if hp.state.role != LEADER:
            return AppendResult(NOT_LEADER_OR_FOLLOWER)
        lg = hp.log
        try:
            table = hp.producer_table()
        except (OSError, LogIOError) as exc:
            self.dir_failed(hp.root, exc)
            return AppendResult(KAFKA_STORAGE_ERROR, str(exc))
        except KraftwireError as exc:  # the log could not be read back: the marker waits, the directory stays
            return AppendResult(KAFKA_STORAGE_ERROR, str(exc))
        plan = plan_marker(table, producer_id, producer_epoch, coordinator_epoch, commit, base_offset=lg.end_offset(),
                           leader_epoch=hp.state.leader_epoch, wall_ms=_wall_ms())
        if isinstance(plan, AppendResult):
            return plan
        try:
            result, entry = runtime.append_marker_planned(hp.state, lg, plan, table, hp.txns, hp.verifications)
            hp._record_abort(entry)
        except InvalidAppendError as exc:
            return AppendResult(CORRUPT_MESSAGE, str(exc))
        except (LogIOError, OSError) as exc:
            self.dir_failed(hp.root, exc)
            return AppendResult(KAFKA_STORAGE_ERROR, str(exc))
        self._maybe_flush(hp)
        self._advance(hp, appended=True)
        return result

    def start_verification(self, hp: Hosted, producer_id: int, sequence: int, epoch: int):
        """Kafka's ``maybeStartTransactionVerification`` on the leader: the guard of the verification the producer's
        batch needs, or None when its transaction is open on the partition."""
        ongoing = producer_id in hp.txn_state().ongoing
        return hp.verifications.start(producer_id, sequence, epoch, ongoing, _now_ms())

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
        now_ms = _wall_ms() if now_ms is None else now_ms
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
        now = int(time.time() * 1000)
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

    def broker_epoch(self) -> int:
        """This broker's registration epoch (-1 before it registered)."""
        epoch = getattr(self.node.roles, "broker_epoch", None)
        return -1 if epoch is None else epoch

    def follower_appended(self, hp: Hosted, raw: bytes) -> None:
        """A follower appended the leader's batches: its producer table (if folded) learns them; flush.messages."""
        self._maybe_flush(hp)
        try:
            hp.fold_appended(read_batches(raw, validate=False))
        except OSError as exc:
            self.dir_failed(hp.root, exc)

    def replica_fetched(self, hp: Hosted, replica: int, fetch_offset: int, broker_epoch: int) -> None:
        """As leader: a follower fetched from ``fetch_offset``; it may join the ISR and move the high watermark."""
        pending = runtime.leader_saw_fetch(hp.state, hp.log, replica, fetch_offset, broker_epoch,
                                           self.node.metadata.image.brokers.get(replica), _now_ms())
        if pending is not None:
            log.info("adding broker %d to the ISR of %s-%d: %s", replica, hp.topic, hp.index, list(pending.isr))
            self._send_alter(hp)
        self._advance(hp)

    def _send_alter(self, hp: Hosted) -> None:
        if self.alter is None:
            return
        pending = hp.state.alter_to_send()
        if pending is not None:
            self.alter(hp, pending)

    def alter_answered(self, hp: Hosted, proposal, error: int, data=None) -> None:
        again = hp.state.isr_answered(proposal, error, leader_epoch=getattr(data, "leader_epoch", -1),
                                      partition_epoch=getattr(data, "partition_epoch", -1),
                                      isr=tuple(getattr(data, "isr", ()) or ()))
        if error:
            log.info("AlterPartition for %s-%d: %s%s", hp.topic, hp.index, ec_name(error),
                     "; sending it again" if again else "")
        self._advance(hp)

    def _advance(self, hp: Hosted, *, appended: bool = False, now_ms: int | None = None) -> None:
        """Raise the high watermark as far as the replica state allows and wake what waits on it (parked follower
        fetches also wait for new data: ``appended``). The followers the ISR waits for to join come from the
        image's broker registrations (fenced, shutting down) and their fetch times."""
        now_ms = _now_ms() if now_ms is None else now_ms
        moved = runtime.advance(hp.state, hp.log, hp.min_isr, now_ms=now_ms, lag_ms=self.lag_ms,
                                brokers=self.node.metadata.image.brokers)
        if moved or appended:
            for watcher in list(self.watchers):
                watcher(hp)
        hp.waits.check(hp.log.high_watermark(), -1,
                       hp.state.leader_epoch if hp.state.role == LEADER and not hp.failed else None)

    def wait_committed(self, hp: Hosted, end: int, callback: Callable[[int], None], timeout_ms: int) -> None:
        """``callback(error)`` once the high watermark reaches ``end`` (NONE), when this broker stops leading the
        epoch first (NOT_LEADER_OR_FOLLOWER), or after ``timeout_ms`` (REQUEST_TIMED_OUT)."""
        if hp.failed:
            callback(NOT_LEADER_OR_FOLLOWER)
            return
        hp.waits.add(HIGH_WATERMARK, end, hp.state.leader_epoch, callback, loop=asyncio.get_running_loop(),
                     timeout_s=max(timeout_ms, 0) / 1000.0, timeout_error=REQUEST_TIMED_OUT)
        self._advance(hp)
