"""The leader's append plan, pure: what a partition leader decides before and after it appends a producer's batches
or a transaction marker (Kafka's ``UnifiedLog.appendAsLeader`` with ``LogValidator`` and ``ProducerAppendInfo``).
The replica manager (``kraftwire.server.runtime.replicas``) and the partition simulation (``kraftwire.testing``) both
run these: the log I/O is theirs, the rules are here.

Before a producer's append (``plan_append``), in Kafka's order — the first rule broken answers, nothing is appended:

* the records hold at least one whole batch (a partial batch after whole ones is dropped, as Kafka drops it), each
  passing its CRC-32C and framing (CORRUPT_MESSAGE), none over ``max.message.bytes`` (MESSAGE_TOO_LARGE);
* a producer may not write control batches (INVALID_RECORD);
* every record passes the per-record checks (``record_errors``: keys on compacted topics, CreateTime timestamps
  within ``message.timestamp.before/after.max.ms``), else INVALID_RECORD with the records' errors (KIP-467);
* a transactional batch has a producer id; an idempotent producer sends one batch per partition (INVALID_RECORD);
* an idempotent batch already in the log (the same sequences) is answered with its offsets and appended again never;
  then the KIP-890 verification of a client's first transactional batch; then its epoch and sequence
  (``producers``); a plain batch of a producer whose transaction is open is INVALID_TXN_STATE;
* the topic's ``compression.type`` recompresses, ``message.timestamp.type=LogAppendTime`` stamps the leader's clock,
  and the rebuilt batches are held to ``max.message.bytes`` again, and all of them to ``segment.bytes``
  (RECORD_LIST_TOO_LARGE: they must fit in one segment).

After it (``record_append``): the producer's sequences and its open transaction are recorded, and its verification
is over. A marker (``plan_marker``, ``record_marker``) is refused when stale (INVALID_PRODUCER_EPOCH,
TRANSACTION_COORDINATOR_FENCED), else it is one transactional control batch; once appended it closes the producer's
transaction (an abort is recorded for the ``.txnindex``) and voids any verification begun before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from kraftwire.error_codes import (CORRUPT_MESSAGE, INVALID_RECORD, INVALID_TXN_STATE, MESSAGE_TOO_LARGE, NONE,
                                   RECORD_LIST_TOO_LARGE)
from kraftwire.errors import CorruptRecordError
from kraftwire.records import RecordBatchBuilder, validate_batches
from kraftwire.records.api import CONTROL_ABORT, CONTROL_COMMIT
from kraftwire.replica.log_append_time import log_append_time, stamp
from kraftwire.replica.producers import ProducerTable
from kraftwire.replica.recompression import recompress
from kraftwire.replica.record_errors import check_records
from kraftwire.replica.transactions import AbortedTxn, PartitionTxns, marker_key, marker_value
from kraftwire.replica.verification import ProducerVerifications, has_ongoing_transaction

__all__ = ["AppendPlan", "AppendResult", "MarkerPlan", "compacts", "deletes", "plan_append", "plan_marker",
           "record_append", "record_marker"]


def _policies(cfg: Mapping) -> list[str]:
    return [p.strip() for p in (cfg.get("cleanup.policy") or "delete").split(",")]


def deletes(cfg: Mapping) -> bool:
    """Whether a topic's effective cleanup.policy includes ``delete`` (retention and DeleteRecords apply)."""
    return "delete" in _policies(cfg)


def compacts(cfg: Mapping) -> bool:
    """Whether a topic's effective cleanup.policy includes ``compact`` (the cleaner runs; records need keys)."""
    return "compact" in _policies(cfg)


class AppendResult:
    """What an append answered: an error (with its message), or where the batches went."""

    __slots__ = ("error", "message", "base_offset", "end", "log_start_offset", "record_errors", "log_append_time_ms")

    def __init__(self, error: int = NONE, message: str | None = None, base_offset: int = -1, end: int = -1,
                 log_start_offset: int = -1, record_errors: tuple = (), log_append_time_ms: int = -1) -> None:
        self.error, self.message, self.base_offset, self.end = error, message, base_offset, end
        self.log_start_offset = log_start_offset
        #: (index in its batch, message) of each invalid record (KIP-467), with ``error`` INVALID_RECORD
        self.record_errors = record_errors
        #: the time a LogAppendTime topic stamped the batches with (-1: CreateTime)
        self.log_append_time_ms = log_append_time_ms


@dataclass(frozen=True, slots=True)
class AppendPlan:
    """Batches a leader may append: ``raw`` (as rebuilt), their validated ``batches`` (the codec's report: the log
    checks the append against them and re-bases at their positions without reading the headers again), the header
    of the idempotent producer's batch to record once appended (None: a plain write), and the LogAppendTime stamp
    (-1: CreateTime)."""

    raw: bytes | memoryview
    batches: list
    producer: object | None
    appended_at: int = -1
    #: ``raw`` is the producer's own records as received, writable and read by nobody after the append (a Produce
    #: frame's buffer): the log re-bases them where they are instead of in a copy
    in_place: bool = False


#: Kafka's segment.bytes default (1 GiB), for a config that does not carry the key
SEGMENT_BYTES_DEFAULT = 1 << 30


def _too_large(batches, max_batch_size: int):
    return next((b for b in batches if b.size > max_batch_size), None)


def plan_append(records, *, topic: str, index: int, config: Mapping, max_batch_size: int, log_start: int,
                producers: Callable[[], tuple[ProducerTable, PartitionTxns]], verifications: ProducerVerifications,
                verify: bool = False, guard=None, verification_enabled: bool = True,
                wall_ms: int, owned: bool = False) -> AppendPlan | AppendResult:
    """The plan for appending a producer's ``records`` to ``topic``-``index`` as its leader, or the AppendResult
    refusing (or, for a duplicate, answering) it. ``producers()`` gives the partition's folded producer table and
    transactions (folded on first use, so only asked for an idempotent batch); ``verify``: a client's Produce, whose
    first transactional batch needs ``guard``; ``wall_ms``: the leader's wall clock (timestamps, LogAppendTime);
    ``owned``: nobody reads ``records`` after the append (a client's Produce), so a writable buffer of them may be
    re-based in place (``AppendPlan.in_place``)."""
    if records is None or not len(records):
        return AppendResult(CORRUPT_MESSAGE, "the request holds no record batch")
    raw = records  # the request's bytes, or a view of them: read in place, copied once by the re-base
    try:
        # the one read of the batches' headers on the leader: the checks below, the producer's state and the log's
        # re-base all use what it reports
        result = validate_batches(raw, max(max_batch_size, len(raw)), headers=True)
        if result.incomplete and result.batch_count:  # Kafka drops a partial batch after the whole ones
            raw = raw[:result.valid_bytes]
        elif result.valid_bytes != len(raw) or result.batch_count == 0:
            raise CorruptRecordError("the records end with an incomplete batch", result.valid_bytes)
        headers = result.headers
    except CorruptRecordError as exc:
        return AppendResult(CORRUPT_MESSAGE, str(exc))
    too_large = _too_large(result.batches, max_batch_size)
    if too_large is not None:
        return AppendResult(MESSAGE_TOO_LARGE, f"a batch of {too_large.size} bytes is larger than "
                                               f"max.message.bytes {max_batch_size}")
    if any(b.is_control for b in headers):
        return AppendResult(INVALID_RECORD, "a producer may not write control batches")
    create_time = (config.get("message.timestamp.type") or "CreateTime") == "CreateTime"
    invalid = check_records(headers, topic, index, compacted=compacts(config),
                            now_ms=wall_ms if create_time else None,
                            before_ms=int(config["message.timestamp.before.max.ms"]),
                            after_ms=int(config["message.timestamp.after.max.ms"]))
    if invalid is not None:
        return AppendResult(invalid.error, invalid.message, log_start_offset=log_start, record_errors=invalid.records)
    if any(b.is_transactional and b.producer_id < 0 for b in headers):
        return AppendResult(INVALID_RECORD, "a transactional batch needs a producer id")
    producer = None
    if any(b.producer_id >= 0 for b in headers):
        if len(headers) != 1:
            return AppendResult(INVALID_RECORD, "an idempotent producer must send one batch per partition")
        producer = b = headers[0]
        table, txns = producers()
        check = table.check(b.producer_id, b.producer_epoch, b.base_sequence, b.last_offset_delta + 1)
        if check.duplicate is not None:  # Kafka answers a retried batch with its max timestamp as append time
            first, last = check.duplicate
            return AppendResult(base_offset=first, end=last + 1, log_start_offset=log_start,
                                log_append_time_ms=check.timestamp)
        if verify:  # Kafka's order: a duplicate, then the verification, then the epoch and sequence
            error, message = verifications.check_append(b.producer_id, b.base_sequence, b.is_transactional,
                                                        has_ongoing_transaction(table, txns, b.producer_id,
                                                                                b.producer_epoch), guard,
                                                        enabled=verification_enabled)
            if error:
                return AppendResult(error, message)
        if check.error:
            return AppendResult(check.error, check.message)
        if not b.is_transactional and b.producer_id in txns.ongoing:
            # Kafka's ProducerAppendInfo: a plain write while the producer's transaction is open
            return AppendResult(INVALID_TXN_STATE, f"expected a transactional write from producer "
                                                   f"{b.producer_id} in {topic}-{index}")
    rebuilt = recompress(raw, config, headers)  # the topic's compression.type (LogValidator)
    appended_at = -1
    if log_append_time(config):  # message.timestamp.type=LogAppendTime: the leader's clock, in place
        appended_at = wall_ms
        rebuilt = stamp(raw, appended_at, headers) if rebuilt is None else stamp(rebuilt, appended_at)
    if rebuilt is not None:  # new bytes: their own validation reports where their batches are
        raw = rebuilt
        result = validate_batches(raw, max(max_batch_size, len(raw)))
        too_large = _too_large(result.batches, max_batch_size)
        if too_large is not None:
            return AppendResult(MESSAGE_TOO_LARGE, f"a batch of {too_large.size} bytes, recompressed, is larger "
                                                   f"than max.message.bytes {max_batch_size}")
    segment_bytes = int(config.get("segment.bytes") or SEGMENT_BYTES_DEFAULT)
    if len(raw) > segment_bytes:  # Kafka's UnifiedLog.append: the batches must fit in one segment
        return AppendResult(RECORD_LIST_TOO_LARGE, f"{len(raw)} bytes of batches exceed segment.bytes {segment_bytes}")
    in_place = owned and rebuilt is None and isinstance(raw, memoryview) and not raw.readonly
    return AppendPlan(raw, result.batches, producer, appended_at, in_place)


def record_append(plan: AppendPlan, first_offset: int, last_offset: int, table: ProducerTable | None,
                  txns: PartitionTxns | None, verifications: ProducerVerifications) -> None:
    """The plan's batches are in the log at [first_offset, last_offset]: an idempotent producer's sequences, and its
    open transaction, are recorded; the transaction is open here now, so its verification is over."""
    b = plan.producer
    if b is None:
        return
    table.apply(b.producer_id, b.producer_epoch, b.base_sequence, b.last_offset_delta + 1, first_offset, last_offset,
                timestamp=b.max_timestamp)
    if b.is_transactional:
        txns.apply(b.producer_id, first_offset, last_offset, True, False)
        verifications.clear(b.producer_id)


@dataclass(frozen=True, slots=True)
class MarkerPlan:
    """A COMMIT or ABORT marker to append: one transactional control batch, and what it records once appended."""

    raw: bytes
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    commit: bool
    timestamp: int


def plan_marker(table: ProducerTable, producer_id: int, producer_epoch: int, coordinator_epoch: int, commit: bool,
                *, base_offset: int, leader_epoch: int, wall_ms: int, max_batch_size: int | None = None,
                transaction_version: int = 0, txn_open: bool = False) -> MarkerPlan | AppendResult:
    """WriteTxnMarkers on the leader (Kafka's ``appendEndTxnMarker``): the marker batch (its one record's value is
    the coordinator epoch), or the AppendResult refusing it: a batch larger than the topic's ``max.message.bytes``
    (``max_batch_size``; Kafka's log checks a marker's size as any batch's, before the producer's state:
    MESSAGE_TOO_LARGE), then a stale one (``ProducerTable.check_marker``: ``transaction_version`` is the
    request's, ``txn_open`` whether the producer has a transaction open here)."""
    builder = RecordBatchBuilder(base_offset=base_offset, partition_leader_epoch=leader_epoch, is_control=True,
                                 is_transactional=True, producer_id=producer_id, producer_epoch=producer_epoch)
    builder.append(marker_key(commit), marker_value(coordinator_epoch), timestamp=wall_ms)
    raw = builder.build()
    if max_batch_size is not None and len(raw) > max_batch_size:
        return AppendResult(MESSAGE_TOO_LARGE, f"a batch of {len(raw)} bytes is larger than "
                                               f"max.message.bytes {max_batch_size}")
    check = table.check_marker(producer_id, producer_epoch, coordinator_epoch, transaction_version, txn_open)
    if check.error:
        return AppendResult(check.error, check.message)
    return MarkerPlan(raw, producer_id, producer_epoch, coordinator_epoch, commit, wall_ms)


def record_marker(plan: MarkerPlan, first_offset: int, last_offset: int, table: ProducerTable, txns: PartitionTxns,
                  verifications: ProducerVerifications, high_watermark: int) -> AbortedTxn | None:
    """The marker is in the log at [first_offset, last_offset]: the producer's transaction is over (the abort it
    records, for the ``.txnindex``, or None), and a verification begun before it is void."""
    table.apply_marker(plan.producer_id, plan.producer_epoch, plan.coordinator_epoch, first_offset,
                       timestamp=plan.timestamp)
    txns.on_high_watermark(high_watermark)  # keeps the unreplicated ones few
    entry = txns.apply(plan.producer_id, first_offset, last_offset, True, True,
                       CONTROL_COMMIT if plan.commit else CONTROL_ABORT)
    verifications.clear(plan.producer_id, plan.producer_epoch)
    return entry
