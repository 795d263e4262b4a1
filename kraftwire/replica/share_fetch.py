"""ShareFetch and ShareAcknowledge on a partition leader (KIP-932; Kafka 4.4's ``KafkaApis.handleShareFetchRequest``
/ ``handleShareAcknowledgeRequest``, ``SharePartitionManager``, ``ShareFetchUtils``): the decisions, pure. The edge
(``server/apis/share_fetch_apis.py``) reads the log, talks to the share coordinator and keeps the clock; it asks
here what to answer.

* **The request's checks**, in Kafka's order, each answered as a whole with the code at the top and no message
  (:func:`request_error`): ``share.version`` below 1 UNSUPPORTED_VERSION; no group id INVALID_REQUEST; READ on the
  group GROUP_AUTHORIZATION_FAILED; an empty or over-long member id INVALID_REQUEST; a v2 ShareFetch with
  ``IsRenewAck`` and any of MaxBytes, MinBytes, MaxRecords, MaxWaitMs not 0 INVALID_REQUEST. Then the share session
  (``share_sessions``): its refusals are answered the same way.
* **Per partition**: a topic id the image does not know UNKNOWN_TOPIC_ID; READ on the topic
  TOPIC_AUTHORIZATION_FAILED; a partition led elsewhere NOT_LEADER_OR_FOLLOWER (with where the leader is); an
  acknowledgement for a share-partition not loaded here UNKNOWN_TOPIC_OR_PARTITION.
* **Acquiring** (:meth:`ShareLeader.acquire`): the log is read from the share-partition's
  :meth:`~kraftwire.replica.share_partition.SharePartition.next_fetch_offset` up to the high watermark; the
  records of the batches read are acquired for the member, at most ``MaxRecords`` over the whole request (Kafka's
  ``acquiredRecordsCount``; the last batch whole unless ``ShareAcquireMode`` is 1, record-limit), and the answer
  carries the read batches up to the last acquired record with the AcquiredRecords ranges (not cut at
  ``BatchSize``: Kafka 4.4 answers a batch of 3 acquired under BatchSize 2 as one range).
* **Isolation** (the group's ``share.isolation.level``, Kafka's ``ShareFetchUtils`` / ``SharePartition.acquire``):
  ``read_uncommitted`` (the default) reads up to the high watermark; ``read_committed`` up to the last stable
  offset, and the records of aborted transactions among those acquired (:func:`aborted_ranges`, told the aborted
  transactions as a read_committed Fetch is) are archived at once — not delivered, never redelivered, written to the
  share coordinator like any other change. Control batches are acquired and delivered under both levels, as
  Kafka's (its consumers acknowledge them as gaps).
* **Acknowledging** (:meth:`ShareLeader.acknowledge`): a share-partition's batches are applied all or nothing
  (``SharePartition.acknowledge``); the :class:`~kraftwire.replica.share_partition.ShareWrite` it returns is written
  to the share coordinator before the acknowledgement is answered.
* **Locks, members, groups**: :meth:`ShareLeader.expire_locks`, :meth:`ShareLeader.release_member` (a session
  closed with -1 or by its connection) and :meth:`ShareLeader.drop_group` (a group with no session left here).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Callable, Mapping

from kraftwire import error_codes as ec
from kraftwire.coordinator.group.share_protocol import member_id_valid
from kraftwire.metadata import group_configs
from kraftwire.records import read_batches
from kraftwire.records.api import CONTROL_ABORT
from kraftwire.replica.share_partition import (
    REJECT, RENEW, AckBatch, AcquiredRecords, DeadLetter, ShareConfig, SharePartition, ShareWrite,
    check_ack_batches,
)
from kraftwire.replica.transactions import read_marker

__all__ = ["RENEW_ACK_SINCE", "ShareKey", "ShareLeader", "Acquired", "aborted_ranges", "acknowledgement_error",
           "batch_bounds",
           "fetch_ready", "renew_ack", "renew_allowed", "request_error", "share_config"]

#: ShareFetch's and ShareAcknowledge's ``IsRenewAck`` and the RENEW type (KIP-1222) from v2. Kafka 4.4 gates them on
#: the request's version alone: share.version 1 serves them (share.version 2 is the dead-letter queue's, KIP-1191)
RENEW_ACK_SINCE = 2
#: the group config that lets members renew their locks (Kafka's ShareGroupConfigProvider.isRenewAcknowledgeEnabled)
RENEW_ENABLE = "share.renew.acknowledge.enable"
#: the group config choosing what a share-partition reads (Kafka's ShareGroupConfig ``share.isolation.level``)
ISOLATION_LEVEL = "share.isolation.level"
ShareKey = tuple  # (group id, topic id, partition)

_BATCH_HEADER = struct.Struct(">qi")  # base offset, batch length
_LAST_OFFSET_DELTA = struct.Struct(">i")  # at byte 23 of a v2 batch


def request_error(*, enabled: bool, group_id: str | None, group_allowed: bool, member_id: str | None,
                  renew: tuple[int, int, int, int] | None = None) -> int:
    """The whole-request refusal of a ShareFetch or ShareAcknowledge, in Kafka's order, NONE to go on. ``renew``: a
    v2 ShareFetch with ``IsRenewAck`` set, its (MaxBytes, MinBytes, MaxRecords, MaxWaitMs), all of which must be
    0. (Kafka logs why; its answer carries the code alone.)"""
    if not enabled:
        return ec.UNSUPPORTED_VERSION
    if group_id is None:
        return ec.INVALID_REQUEST
    if not group_allowed:
        return ec.GROUP_AUTHORIZATION_FAILED
    if member_id is None or not member_id_valid(member_id):
        return ec.INVALID_REQUEST
    if renew is not None and any(renew):
        return ec.INVALID_REQUEST
    return ec.NONE


def renew_ack(version: int, body) -> bool:
    """Whether a ShareFetch or ShareAcknowledge carries RENEW acknowledgements: ``IsRenewAck`` set in a v2 or later
    request. Such a ShareFetch acquires nothing (Kafka's ``handleShareFetchRequest`` answers its fetch part empty)."""
    return version >= RENEW_ACK_SINCE and bool(getattr(body, "is_renew_ack", False))


def acknowledgement_error(batches: list[AckBatch], version: int, is_renew_ack: bool) -> int:
    """One partition's acknowledgement batches checked before anything else about the partition (Kafka's
    ``validateAcknowledgementBatches`` runs before the topic and leadership checks): INVALID_REQUEST for a malformed
    batch, a type past REJECT before v2 or past RENEW from v2, or a RENEW without ``IsRenewAck``."""
    return check_ack_batches(batches, max_type=RENEW if version >= RENEW_ACK_SINCE else REJECT,
                             renew_ack=is_renew_ack)


def fetch_ready(readable: list[int | None], max_bytes: int, min_bytes: int, failed: bool) -> bool:
    """Whether a ShareFetch completes now (Kafka's ``DelayedShareFetch.tryComplete``/``isMinBytesSatisfied``): a
    partition failed, or the readable bytes of the partitions that can acquire (``readable``: bytes from the next
    fetch offset to the high watermark, None for a share-partition that cannot acquire) — each counted up to its
    even share of ``max_bytes`` (``PartitionMaxBytesStrategy``' uniform split) — reach ``min_bytes``. With no
    partition that can acquire, the fetch waits."""
    if failed:
        return True
    acquirable = [r for r in readable if r is not None]
    if not acquirable:
        return False
    share = max_bytes // len(acquirable)
    return sum(min(r, share) for r in acquirable) >= min_bytes


def share_config(overrides: Mapping[str, str], broker: Callable[[str], str | None], *,
                 dlq_supported: bool = False) -> ShareConfig:
    """A group's share-partition settings: its own group configs within the broker's bounds, else the broker's
    ``group.share.*`` values (``group_configs.effective_ms``). ``dlq_supported``: share.version is 2 or above, so a
    group naming a DLQ topic has its rejected and exhausted records written there."""
    reset = overrides.get(group_configs.AUTO_OFFSET_RESET) or "latest"
    return ShareConfig(
        record_lock_duration_ms=group_configs.effective_ms("share.record.lock.duration.ms", overrides, broker),
        delivery_count_limit=group_configs.effective_ms("share.delivery.count.limit", overrides, broker),
        max_record_locks=group_configs.effective_ms("share.partition.max.record.locks", overrides, broker),
        auto_offset_reset=reset,
        renew_enabled=renew_allowed(overrides),
        read_committed=(overrides.get(ISOLATION_LEVEL) or "").strip().lower() == "read_committed",
        dlq_enabled=dlq_supported and bool(overrides.get(group_configs.DLQ_TOPIC)))


def renew_allowed(overrides: Mapping[str, str]) -> bool:
    """The group's ``share.renew.acknowledge.enable`` (default true)."""
    return (overrides.get(RENEW_ENABLE) or "true").strip().lower() == "true"


def aborted_ranges(batches, aborted) -> list[tuple[int, int]]:
    """``(first, last)`` offsets of the batches in ``batches`` (read in offset order) that belong to aborted
    transactions (Kafka's ``SharePartition.fetchAbortedTransactionRecordBatches``): ``aborted`` holds the aborted
    transactions overlapping the read (``AbortedTxn``s, as a read_committed Fetch is told them); a producer's
    transaction counts as aborted from the batch reaching its first offset until its ABORT marker; the transactional
    batches of such a producer in between are aborted, the marker itself is not."""
    pending = sorted(aborted, key=lambda a: a.first_offset)
    producers: set[int] = set()
    out: list[tuple[int, int]] = []
    for b in batches:
        if b.producer_id < 0:
            continue
        while pending and pending[0].first_offset <= b.last_offset:
            producers.add(pending.pop(0).producer_id)
        if b.is_control and read_marker(b)[0] == CONTROL_ABORT:
            producers.discard(b.producer_id)
        elif b.is_transactional and b.producer_id in producers:
            out.append((b.base_offset, b.last_offset))
    return out


def batch_bounds(records) -> list[tuple[int, int, int]]:
    """``(first offset, last offset, end byte)`` of each whole record batch in ``records`` (v2 batches as the log
    holds them)."""
    out, pos, view = [], 0, memoryview(records)
    while pos + 27 <= len(view):
        base, length = _BATCH_HEADER.unpack_from(view, pos)
        end = pos + 12 + length
        if end > len(view):
            break
        (delta,) = _LAST_OFFSET_DELTA.unpack_from(view, pos + 23)
        out.append((base, base + delta, end))
        pos = end
    return out


def _merged(ranges: list[AcquiredRecords]) -> list[AcquiredRecords]:
    """Adjacent ranges with the same delivery count joined."""
    out: list[AcquiredRecords] = []
    for r in ranges:
        if out and out[-1].last_offset + 1 == r.first_offset and out[-1].delivery_count == r.delivery_count:
            out[-1] = AcquiredRecords(out[-1].first_offset, r.last_offset, r.delivery_count)
        else:
            out.append(r)
    return out


def _without(ranges: list[AcquiredRecords], dropped: list[tuple[int, int]]) -> list[AcquiredRecords]:
    """``ranges`` with the offsets of the ``dropped`` ``(first, last)`` spans cut out."""
    out = []
    for r in ranges:
        pieces = [(r.first_offset, r.last_offset)]
        for first, last in dropped:
            pieces = [p for a, b in pieces for p in ((a, min(b, first - 1)), (max(a, last + 1), b)) if p[0] <= p[1]]
        out.extend(AcquiredRecords(a, b, r.delivery_count) for a, b in pieces)
    return out


@dataclass(frozen=True)
class Acquired:
    """One partition's fetch answer: the acquired ranges and how many bytes of the read records go with them."""

    ranges: tuple[AcquiredRecords, ...] = ()
    record_bytes: int = 0
    #: what archiving acquired records of aborted transactions changed, to write before answering
    write: ShareWrite | None = None

    @property
    def count(self) -> int:
        return sum(r.last_offset - r.first_offset + 1 for r in self.ranges)


@dataclass
class ShareLeader:
    """Every share-partition this broker leads, by (group id, topic id, partition)."""

    partitions: dict[ShareKey, SharePartition] = field(default_factory=dict)

    def get(self, key: ShareKey) -> SharePartition | None:
        return self.partitions.get(key)

    def acquire(self, key: ShareKey, member_id: str, records, max_records: int, now_ms: int, *,
                record_limit: bool = False, aborted=None) -> Acquired:
        """Acquire for ``member_id`` the records of the whole batches in ``records`` (read from the share-partition's
        ``next_fetch_offset``), at most ``max_records`` — except that, as Kafka's default batch-optimized mode
        (ShareAcquireMode 0) does, the batch holding the last record that fits is acquired whole; ``record_limit``
        (mode 1) stops at ``max_records`` exactly. ``aborted`` (a read_committed share-partition: the aborted
        transactions overlapping the read): the acquired records of aborted transactions are archived instead of
        delivered (:func:`aborted_ranges`)."""
        sp = self.partitions[key]
        bounds = batch_bounds(records)
        if not bounds or max_records <= 0:
            return Acquired()
        ranges = sp.acquire(member_id, max(bounds[0][0], sp.next_fetch_offset()), bounds[-1][1], max_records,
                            now_ms)
        if not ranges:
            return Acquired()
        last = ranges[-1].last_offset
        batch_last, end = next((last_offset, e) for _first, last_offset, e in bounds if last_offset >= last)
        if not record_limit and batch_last > last:
            ranges = _merged(ranges + sp.acquire(member_id, last + 1, batch_last, batch_last - last, now_ms))
        if not aborted:
            return Acquired(tuple(ranges), end)
        dropped = aborted_ranges(read_batches(records, validate=False), aborted)
        write = sp.archive(o for first, last in dropped for o in range(first, last + 1))
        kept = _without(ranges, dropped)
        return Acquired(tuple(kept), end if kept else 0, write)

    def refresh_config(self, config: ShareConfig, keys) -> None:
        """The group's settings as they stand now on its loaded share-partitions among ``keys`` (those a request
        names): Kafka's ``SharePartition`` reads the lock duration, the delivery-count limit, RENEW's and the DLQ's
        settings from the group config on each use, so a change applies to the next acquisition or acknowledgement.
        (``share.auto.offset.reset`` only matters when a share-partition starts.)"""
        for key in keys:
            sp = self.partitions.get(key)
            if sp is not None and sp.config != config:
                sp.config = config

    def dead_letters(self, key: ShareKey) -> list[DeadLetter]:
        """The share-partition's ARCHIVING runs whose DLQ write may start now (``SharePartition.dead_letters``)."""
        sp = self.partitions.get(key)
        return [] if sp is None else sp.dead_letters()

    def archive_dead_letters(self, key: ShareKey, letter: DeadLetter) -> ShareWrite | None:
        """A DLQ write ended: the run archived, the write to make; nothing when the share-partition is gone (its
        new leader sends the run again)."""
        sp = self.partitions.get(key)
        return None if sp is None else sp.archive_dead_letters(letter)

    def acknowledge(self, key: ShareKey, member_id: str, batches: list[AckBatch],
                    now_ms: int) -> tuple[int, str | None, ShareWrite | None]:
        """One partition's acknowledgements: ``(error, message, write)``; UNKNOWN_TOPIC_OR_PARTITION when the
        share-partition is not loaded here (Kafka's ``acknowledge`` with no ``SharePartition``)."""
        sp = self.partitions.get(key)
        if sp is None:
            return ec.UNKNOWN_TOPIC_OR_PARTITION, None, None
        return sp.acknowledge(member_id, batches, now_ms)

    def complete(self, key: ShareKey, write: ShareWrite, durable: bool, now_ms: int) -> ShareWrite | None:
        """An acknowledgement's write came back (``SharePartition.complete``): the write its rollback needs, if
        any. A share-partition dropped meanwhile (a leader change) has nothing to complete."""
        sp = self.partitions.get(key)
        return None if sp is None else sp.complete(write, durable, now_ms)

    def release_member(self, group_id: str, member_id: str,
                       only: tuple | None = None) -> list[tuple[ShareKey, ShareWrite]]:
        """A member's session ended: every record it holds in the group's share-partitions (``only``: those of the
        listed (topic id, partition)) goes back; the writes to make."""
        out = []
        for key, sp in self.partitions.items():
            if key[0] == group_id and (only is None or key[1:] in only):
                write = sp.release_member(member_id)
                if write is not None:
                    out.append((key, write))
        return out

    def expire_locks(self, now_ms: int) -> list[tuple[ShareKey, ShareWrite]]:
        """Every lock due by ``now_ms`` released; the writes to make."""
        out = []
        for key, sp in self.partitions.items():
            write = sp.expire_locks(now_ms)
            if write is not None:
                out.append((key, write))
        return out

    def next_deadline(self) -> int | None:
        return min((d for sp in self.partitions.values() if (d := sp.next_lock_deadline()) is not None),
                   default=None)

    def drop_group(self, group_id: str) -> None:
        """No session of the group is left here (``onGroupEmpty``): its share-partitions are loaded again from the
        share coordinator on next use."""
        for key in [k for k in self.partitions if k[0] == group_id]:
            del self.partitions[key]

    def drop_partition(self, topic_id, partition: int) -> None:
        """This broker no longer leads the partition: its share-partitions go (the new leader reads the state)."""
        for key in [k for k in self.partitions if k[1:] == (topic_id, partition)]:
            del self.partitions[key]
