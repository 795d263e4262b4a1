"""One partition a broker hosts (``Hosted``): its log, its ``ReplicaState``, and its producers and transactions
kept beside the log in the partition directory (Kafka's ``ProducerStateManager`` files and ``.txnindex``).

* **Producers and transactions.** Each partition folds its idempotent producers (``kraftwire.replica.producers``)
  and its transactions in offset order (``kraftwire.replica.transactions``: open ones, the last stable offset,
  aborted ones) — as leader when it appends (``kraftwire.replica.leader_append`` records them), as follower when it
  copies (``fold_appended``), and on first use after a start from the latest producer snapshot (which carries each
  producer's open transaction, Kafka's CurrentTxnFirstOffset) plus the aborts below it in the segments'
  ``.txnindex`` files, then the log after it. A completed transaction holds the last stable offset until the high
  watermark passes its marker; those are not in the snapshot (nor in Kafka's): the fold finds the ones after it.
* **.txnindex.** An ABORT's ``AbortedTxn`` is appended to the ``.txnindex`` of the segment holding the marker
  (fsynced before the next producer snapshot), and the files are rewritten from the folded state after a
  truncation or a clean.
* **Snapshots.** ``<offset>.snapshot`` holds the folded table at a clean shutdown and at each segment roll; the two
  newest are kept.
"""

from __future__ import annotations

import logging
import os

from kraftwire.kafka_configs import LONG_MAX
from kraftwire.log.api import Isolation
from kraftwire.log.checkpoint import write_atomic
from kraftwire.log.lookup import batches_between
from kraftwire.log.partition_log import PartitionLog
from kraftwire.log.segment import TXN_INDEX_SUFFIX, segment_filename
from kraftwire.replica.partition import ReplicaState
from kraftwire.replica.producer_snapshot import CorruptProducerSnapshot, snapshot_name
from kraftwire.replica.producer_snapshot import decode_with_txns as decode_snapshot
from kraftwire.replica.producer_snapshot import encode as encode_snapshot
from kraftwire.replica.producers import ProducerTable
from kraftwire.replica.transactions import (AbortedTxn, PartitionTxns, by_segment, decode_txn_index,
                                            encode_txn_index, fold_batch)
from kraftwire.replica.verification import ProducerVerifications
from kraftwire.server.runtime.waits import OffsetWaits

__all__ = ["Hosted"]

log = logging.getLogger("kraftwire.replicas")


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
        table, ongoing, start = self._latest_snapshot()
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

    def _latest_snapshot(self) -> tuple[ProducerTable, dict[int, int], int]:
        """(producer table, open transactions, the offset the log is folded from) of the newest readable
        ``<offset>.snapshot`` at or below the log end; an empty table from the log start without one."""
        lg = self.log
        for offset in reversed(lg.producer_snapshots()):
            if offset > lg.end_offset():
                continue
            path = os.path.join(lg.directory, snapshot_name(offset))
            try:
                with open(path, "rb") as f:
                    table, ongoing = decode_snapshot(f.read())
                return table, ongoing, max(lg.start_offset(), offset)
            except (OSError, CorruptProducerSnapshot) as exc:
                log.warning("ignoring producer snapshot %s: %s", path, exc)
        return ProducerTable(), {}, lg.start_offset()

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
                self.verifications.clear(b.producer_id, b.producer_epoch if b.is_control else None)
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
