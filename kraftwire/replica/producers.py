"""Idempotent producers' state of one partition, and Kafka's sequence rules (``ProducerStateManager``, facts in
kafka-replication-facts.md §6). Pure: folded from data-batch headers in offset order, so every replica of a log
holds the same table.

* producer id -1: no checks;
* an epoch below the producer's current one: INVALID_PRODUCER_EPOCH;
* a new epoch of a known producer must start at sequence 0, else OUT_OF_ORDER_SEQUENCE_NUMBER; a producer not seen
  before may start anywhere (its history may have been deleted);
* a batch equal (first and last sequence) to one of the producer's last five is a retry: acknowledged with its
  original offsets, not appended again (and, as Kafka answers it, with that batch's max timestamp as its
  LogAppendTime);
* otherwise the first sequence must follow the last one (wrapping at 2^31), else OUT_OF_ORDER_SEQUENCE_NUMBER.

Transaction markers (``apply_marker``, ``check_marker``; Kafka's ``appendEndTxnMarker``): a marker with an epoch below
the producer's is INVALID_PRODUCER_EPOCH, one with a coordinator epoch below the last marker's
TRANSACTION_COORDINATOR_FENCED; a marker with a newer epoch (the coordinator fenced the producer) makes it the
producer's epoch and forgets its batches, so the next batch starts a new sequence and older epochs are refused.
A marker of transaction version 2 (KIP-1228: WriteTxnMarkers v2's TransactionVersion, 2 or above) must carry an
epoch above the producer's, as a TV2 coordinator bumps the epoch at every end: its current epoch is refused too,
unless it repeats a marker already written (no transaction open) or the epoch is exhausted (32767). A version of -1
(Kafka's TV_UNKNOWN) from a coordinator is UNKNOWN_SERVER_ERROR (Kafka 4.4 throws IllegalArgumentException), whatever
the producer; a marker of version 0 or 1 (or v1 of the request) keeps the rule of older epochs only.

Producers idle for ``producer.id.expiration.ms`` without an open transaction are forgotten (``expire``), as Kafka's
broker forgets them; the edge calls it every ``producer.id.expiration.check.interval.ms``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from kraftwire.error_codes import (INVALID_PRODUCER_EPOCH, OUT_OF_ORDER_SEQUENCE_NUMBER, TRANSACTION_COORDINATOR_FENCED,
                                   UNKNOWN_SERVER_ERROR)

__all__ = ["CACHED_BATCHES", "MAX_EPOCH", "SEQ_MOD", "TV_2", "TV_UNKNOWN", "ProducerEntry", "ProducerTable",
           "SequenceCheck", "next_seq"]

CACHED_BATCHES = 5
SEQ_MOD = 1 << 31
#: the highest producer epoch; a TV2 marker may repeat it (no bump is left)
MAX_EPOCH = 32767
#: a marker's transaction version that Kafka refuses from a coordinator (TransactionVersion.TV_UNKNOWN)
TV_UNKNOWN = -1
#: the first transaction version whose markers bump the epoch (KIP-890 part 2; KIP-1228 tells the leader)
TV_2 = 2


def next_seq(seq: int, count: int) -> int:
    return (seq + count) % SEQ_MOD


@dataclass(slots=True)
class ProducerEntry:
    epoch: int
    last_seq: int = -1
    #: (first sequence, last sequence, first offset, last offset, max timestamp) of the latest batches
    batches: deque = field(default_factory=lambda: deque(maxlen=CACHED_BATCHES))
    #: the max timestamp of the latest batch (-1: unknown)
    timestamp: int = -1
    #: the coordinator epoch of the producer's last transaction marker (-1: none)
    coordinator_epoch: int = -1
    #: the offset of the last marker that bumped the epoch (an entry without batches; -1: none)
    marker_offset: int = -1


class SequenceCheck:
    """Outcome of checking a batch: ``error`` (0: fine) with ``message``, or ``duplicate`` = (first offset, last
    offset) of the batch it repeats, whose max timestamp is ``timestamp``."""

    __slots__ = ("error", "duplicate", "message", "timestamp")

    def __init__(self, error: int = 0, duplicate=None, message: str | None = None, timestamp: int = -1) -> None:
        self.error = error
        self.duplicate = duplicate
        self.message = message
        self.timestamp = timestamp


class ProducerTable(dict):
    """producer id -> ``ProducerEntry``."""

    def apply(self, pid: int, epoch: int, first_seq: int, count: int, first_offset: int, last_offset: int, *,
              timestamp: int = -1) -> None:
        """Fold in a batch of ``count`` records that the log holds at [first_offset, last_offset]."""
        entry = self.get(pid)
        if entry is None or epoch != entry.epoch:
            coordinator_epoch = entry.coordinator_epoch if entry is not None else -1
            entry = self[pid] = ProducerEntry(epoch, coordinator_epoch=coordinator_epoch)
        last_seq = (first_seq + count - 1) % SEQ_MOD
        entry.last_seq = last_seq
        entry.batches.append((first_seq, last_seq, first_offset, last_offset, timestamp))
        entry.timestamp = max(entry.timestamp, timestamp)

    def apply_batch(self, b, coordinator_epoch: int | None = None) -> None:
        """Fold in a data batch's header (anything with the ``BatchInfo`` / ``RecordBatch`` header fields); a
        transactional control batch is a marker when its ``coordinator_epoch`` is given."""
        if b.producer_id < 0:
            return
        if not b.is_control:
            self.apply(b.producer_id, b.producer_epoch, b.base_sequence, b.last_offset_delta + 1, b.base_offset,
                       b.last_offset, timestamp=b.max_timestamp)
        elif coordinator_epoch is not None and b.is_transactional:
            self.apply_marker(b.producer_id, b.producer_epoch, coordinator_epoch, b.base_offset,
                              timestamp=b.max_timestamp)

    def apply_marker(self, pid: int, epoch: int, coordinator_epoch: int, offset: int, *, timestamp: int = -1) -> None:
        """Fold in a transaction marker the log holds at ``offset``."""
        entry = self.get(pid)
        if entry is None or epoch > entry.epoch:
            entry = self[pid] = ProducerEntry(epoch, marker_offset=offset)
        entry.coordinator_epoch = max(entry.coordinator_epoch, coordinator_epoch)
        entry.timestamp = max(entry.timestamp, timestamp)

    def expire(self, now_ms: int, expiration_ms: int, ongoing) -> list[int]:
        """Forget producers idle for ``producer.id.expiration.ms`` (Kafka's ``removeExpiredProducers``): those whose
        last batch's timestamp is at least ``expiration_ms`` old (an unknown one, -1, counts as the epoch) and that
        have no open transaction (``ongoing``: producer ids). ``now_ms`` is wall-clock time, the clock of the batch
        timestamps. A forgotten producer's next batch is taken as from one never seen. Returns the ids forgotten."""
        gone = [pid for pid, entry in self.items()
                if pid not in ongoing and now_ms - entry.timestamp >= expiration_ms]
        for pid in gone:
            del self[pid]
        return gone

    def check_marker(self, pid: int, epoch: int, coordinator_epoch: int, transaction_version: int = 0,
                     txn_open: bool = False) -> SequenceCheck:
        """A marker from a transaction coordinator (Kafka's ``ProducerAppendInfo.appendEndTxnMarker``, origin
        COORDINATOR): ``transaction_version`` is WriteTxnMarkers v2's (0 before v2), ``txn_open`` whether the
        producer has a transaction open on the partition."""
        if transaction_version == TV_UNKNOWN:
            return SequenceCheck(UNKNOWN_SERVER_ERROR, message="transactionVersion must be explicitly specified, "
                                 "cannot use default value TV_UNKNOWN for origin COORDINATOR")
        entry = self.get(pid)
        if entry is None:
            return SequenceCheck()
        tv2 = transaction_version >= TV_2
        if epoch < entry.epoch or (tv2 and epoch == entry.epoch and txn_open and epoch != MAX_EPOCH):
            relation = "<=" if tv2 else "<"
            return SequenceCheck(INVALID_PRODUCER_EPOCH, message=f"marker for producer {pid} epoch {epoch}, which is "
                                 f"{relation} its current epoch {entry.epoch} (TV{transaction_version})")
        if coordinator_epoch < entry.coordinator_epoch:
            return SequenceCheck(TRANSACTION_COORDINATOR_FENCED, message=f"marker for producer {pid} from coordinator "
                                 f"epoch {coordinator_epoch}, older than {entry.coordinator_epoch}")
        return SequenceCheck()

    def check(self, pid: int, epoch: int, first_seq: int, count: int) -> SequenceCheck:
        entry = self.get(pid)
        if pid < 0 or entry is None:
            return SequenceCheck()
        if epoch < entry.epoch:
            return SequenceCheck(INVALID_PRODUCER_EPOCH, message=f"producer {pid} epoch {epoch} is older than its "
                                 f"current epoch {entry.epoch}")
        if epoch > entry.epoch:
            if first_seq != 0:
                return SequenceCheck(OUT_OF_ORDER_SEQUENCE_NUMBER, message=f"producer {pid}: new epoch {epoch} must "
                                     f"start at sequence 0, not {first_seq}")
            return SequenceCheck()
        last_seq = (first_seq + count - 1) % SEQ_MOD
        for b_first, b_last, off_first, off_last, stamp in entry.batches:
            if b_first == first_seq and b_last == last_seq:
                return SequenceCheck(duplicate=(off_first, off_last), timestamp=stamp)
        if first_seq != next_seq(entry.last_seq, 1):
            return SequenceCheck(OUT_OF_ORDER_SEQUENCE_NUMBER, message=f"producer {pid} epoch {epoch}: sequence "
                                 f"{first_seq} does not follow {entry.last_seq}")
        return SequenceCheck()
