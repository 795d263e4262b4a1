"""Kafka's transaction coordinator for one ``__transaction_state`` partition, as a pure state machine.

**States** (``TransactionStatus`` ids, Kafka's): Empty 0, Ongoing 1, PrepareCommit 2, PrepareAbort 3,
CompleteCommit 4, CompleteAbort 5, Dead 6, PrepareEpochFence 7. Each transition is written as a
``TransactionLogValue`` (v0; v1 once ``transaction.version`` ≥ 1) under the transactional id's key; the reply waits
for it to commit, as Kafka answers after the append.

**Operations** (each returns a ``TxnResult``: records, replies, and marker requests for the edge to send):

* ``init_producer_id``: a new transactional id gets a new producer id at epoch 0; a known one in Empty or Complete*
  is bumped (a new producer id when the epoch is exhausted); an Ongoing one is fenced (epoch + 1, then aborted)
  and the client told CONCURRENT_TRANSACTIONS to retry; Prepare* answers CONCURRENT_TRANSACTIONS. A v3+ request
  naming its producer id and epoch (KIP-360) keeps the producer: its current epoch is bumped, and the retry of such
  a bump whose answer was lost (it names the epoch before the bump, the one the bump kept as ``last_producer_epoch``)
  gets the bumped epoch again; any other id or epoch is PRODUCER_FENCED (Kafka's ``prepareInitProducerIdTransit``
  and ``prepareIncrementProducerEpoch``). Like Kafka's lastProducerEpoch, ``last_producer_epoch`` lives in memory
  only: ``TransactionLogValue`` has no field for it, so a retry that spans a coordinator move is fenced, as in Kafka.
* ``add_partitions`` (and ``add_offsets``, which adds the group's ``__consumer_offsets`` partition): Empty or
  Complete* -> Ongoing (the start time set), Ongoing with every partition present answers without a write.
* ``verify_partitions`` (AddPartitionsToTxn v4+ VerifyOnly, KIP-890, from partition leaders): whether each
  partition is in the producer's ongoing transaction (TRANSACTION_ABORTABLE when not); nothing is written.
* ``end_txn``: Ongoing -> PrepareCommit/PrepareAbort, written, then the client is answered and the markers go out;
  ``markers_written`` moves the transaction to CompleteCommit/CompleteAbort with its partitions cleared. A retry of
  the same result after completion answers NONE; Prepare* with the same result CONCURRENT_TRANSACTIONS; a
  mismatched result or Empty INVALID_TXN_STATE.
* **transaction.version 2** (KIP-890 part 2; a client's EndTxn v5, a partition leader's adding AddPartitionsToTxn
  v4+: ``client_version`` 2, kept on the transaction as Kafka's ``clientTransactionVersion``): every EndTxn bumps the
  epoch — the Prepare* record, the markers and the answer (EndTxn v5 returns the producer id and epoch) carry
  epoch + 1, and the epoch before it is remembered (``last_producer_epoch``). Once the epoch is exhausted the
  Prepare* record names a new producer id (``next_producer_id``) that replaces the old one, at epoch 0, when the
  markers are written (the old one stays as ``last_producer_id``), and the answer already names it. A retry of the
  EndTxn (its epoch is the one before the bump, or the exhausted one of the replaced producer id) is recognised:
  CONCURRENT_TRANSACTIONS while the markers are written, NONE with the current producer once complete; the current
  epoch ends the next transaction, which added nothing yet: an abort is allowed (from Empty too: a TV2 client cannot
  know whether its Produce added a partition; a Prepare/CompleteAbort with no markers and the bumped epoch), a
  commit is INVALID_TXN_STATE, and either is CONCURRENT_TRANSACTIONS while the last one's markers are written; any
  other epoch is PRODUCER_FENCED (Kafka's ``TransactionCoordinator.endTransaction`` with ``endTxnEpochBumped`` and
  its retry-on-overflow rule; the answers checked against Kafka 4.4 in ``tests/kafka/test_txn_v2_oracle.py``).
* ``tick``: an Ongoing transaction past ``transaction.timeout.ms`` is fenced (epoch + 1) and aborted.
* ``expire``: a transactional id idle past ``transactional.id.expiration.ms`` is removed (a tombstone).

Producer ids come from ``allocate`` (the broker's block from AllocateProducerIds); nothing reads a clock.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from kraftwire import error_codes as ec
from kraftwire import re2j
from kraftwire.coordinator import records as cr
from kraftwire.protocol import messages as w

EMPTY, ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT, DEAD, PREPARE_EPOCH_FENCE = range(8)
STATE_NAMES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
               "PrepareEpochFence")
#: Kafka's valid previous states of each state
VALID_FROM = {
    EMPTY: {EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT},
    ONGOING: {ONGOING, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT},
    PREPARE_COMMIT: {ONGOING},
    # from Empty and Complete*: a TV2 abort of a transaction that added nothing
    PREPARE_ABORT: {ONGOING, PREPARE_EPOCH_FENCE, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT},
    COMPLETE_COMMIT: {PREPARE_COMMIT},
    COMPLETE_ABORT: {PREPARE_ABORT},
    DEAD: {EMPTY, COMPLETE_ABORT, COMPLETE_COMMIT},
    PREPARE_EPOCH_FENCE: {ONGOING},
}
#: the states a transaction is in once its end was decided
ENDED = frozenset((PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT))
MAX_EPOCH = 32767
#: Kafka bumps to a new producer id once the epoch reaches this (so that a bump for fencing still fits)
EPOCH_EXHAUSTED = MAX_EPOCH - 1
GROUP_TOPIC = "__consumer_offsets"


class TxnConfig(NamedTuple):
    max_timeout_ms: int = 900_000  # transaction.max.timeout.ms
    transaction_version: int = 0  # the metadata image's transaction.version: the value version written


class Marker(NamedTuple):
    """WriteTxnMarkers for the edge to send: the transaction's partitions, its producer and the result, and the
    transaction's version (Kafka's clientTransactionVersion, sent in WriteTxnMarkers v2: KIP-1228), whose epoch rule
    the partition leaders apply."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool
    partitions: frozenset
    transaction_version: int = 0


class TxnReply(NamedTuple):
    token: Any
    api: str
    body: Any


class TxnResult:
    __slots__ = ("records", "replies", "markers")

    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []
        self.replies: list[TxnReply] = []
        self.markers: list[Marker] = []

    def reply(self, token, api: str, body) -> None:
        self.replies.append(TxnReply(token, api, body))


class TxnMetadata:
    __slots__ = ("transactional_id", "producer_id", "producer_epoch", "last_producer_id", "last_producer_epoch",
                 "next_producer_id", "client_version", "timeout_ms", "state", "partitions", "start_ms", "update_ms")

    def __init__(self, transactional_id: str, producer_id: int, epoch: int, timeout_ms: int, now_ms: int) -> None:
        self.transactional_id = transactional_id
        self.producer_id, self.producer_epoch = producer_id, epoch
        self.last_producer_id = -1
        #: the epoch before the last InitProducerId that named its producer (-1: none, or since fenced / loaded);
        #: Kafka's lastProducerEpoch, kept in memory only (not in ``snapshot``: no record carries it)
        self.last_producer_epoch = -1
        #: TV2: the producer id that replaces this one once the transaction ending with an exhausted epoch completes
        self.next_producer_id = -1
        #: the transaction.version of the client's last add or end (Kafka's clientTransactionVersion: 0 or 2)
        self.client_version = 0
        self.timeout_ms = timeout_ms
        self.state = EMPTY
        self.partitions: set[tuple[str, int]] = set()
        self.start_ms = -1
        self.update_ms = now_ms

    def snapshot(self):
        return (self.producer_id, self.producer_epoch, self.last_producer_id, self.next_producer_id,
                self.client_version, self.timeout_ms, self.state, frozenset(self.partitions), self.start_ms)

    @property
    def bumps_epoch(self) -> bool:
        """Whether this transaction's end bumps the epoch (its client speaks transaction.version 2)."""
        return self.client_version >= 2


class TxnShard:
    """The transactions of one ``__transaction_state`` partition."""

    def __init__(self, partition: int, config: TxnConfig | None = None,
                 allocate: Callable[[], int] | None = None) -> None:
        self.partition = partition
        self.config = config or TxnConfig()
        self._allocate = allocate or _counter()
        self.txns: dict[str, TxnMetadata] = {}

    # ================================================================================================ records
    def _write(self, t: TxnMetadata, state: int, result: TxnResult, now_ms: int) -> None:
        if t.state not in VALID_FROM[state]:
            raise AssertionError(f"{t.transactional_id}: {STATE_NAMES[t.state]} -> {STATE_NAMES[state]}")
        t.state, t.update_ms = state, now_ms
        V = w.TransactionLogValue
        version = 1 if self.config.transaction_version >= 1 else 0
        parts: dict[str, list[int]] = {}
        for topic, p in sorted(t.partitions):
            parts.setdefault(topic, []).append(p)
        value = V(producer_id=t.producer_id, previous_producer_id=t.last_producer_id,
                  next_producer_id=t.next_producer_id,
                  producer_epoch=t.producer_epoch, transaction_timeout_ms=t.timeout_ms, transaction_status=state,
                  transaction_partitions=None if state == EMPTY else [
                      V.PartitionsSchema(topic=topic, partition_ids=ps) for topic, ps in parts.items()],
                  transaction_last_update_timestamp_ms=now_ms, transaction_start_timestamp_ms=t.start_ms,
                  client_transaction_version=t.client_version)
        key = cr.encode_key(w.TransactionLogKey(transactional_id=t.transactional_id), 0)
        result.records.append((key, cr.encode_value(value, version)))

    def replay(self, key: bytes, value: bytes | None) -> None:
        """Fold one record while loading the partition (a serving shard already holds what it wrote; a v0 value
        does not carry the previous producer id, as in Kafka)."""
        rec = cr.decode(key, value, cr.TRANSACTION_RECORDS)
        tid = rec.key.transactional_id
        if rec.value is None:
            self.txns.pop(tid, None)
            return
        v = rec.value
        t = self.txns.get(tid) or TxnMetadata(tid, v.producer_id, v.producer_epoch, v.transaction_timeout_ms, 0)
        t.producer_id, t.producer_epoch = v.producer_id, v.producer_epoch
        flexible = rec.value_version >= 1  # v0 has neither the producer ids around this one nor the client's TV
        t.last_producer_id = v.previous_producer_id if flexible else -1
        t.next_producer_id = v.next_producer_id if flexible else -1
        t.client_version = v.client_transaction_version if flexible else 0
        t.timeout_ms, t.state = v.transaction_timeout_ms, v.transaction_status
        t.partitions = {(tp.topic, p) for tp in (v.transaction_partitions or ()) for p in tp.partition_ids}
        t.start_ms, t.update_ms = v.transaction_start_timestamp_ms, v.transaction_last_update_timestamp_ms
        self.txns[tid] = t

    def loaded(self) -> list[Marker]:
        """After a load: the markers of transactions caught half-way (Prepare*), to send again — once the
        partition's high watermark reaches the log end the shard was loaded from: a prepare record above it may
        still be lost with this leader, and its transaction decided the other way by the next one."""
        return [Marker(t.transactional_id, t.producer_id, t.producer_epoch, t.state == PREPARE_COMMIT,
                       frozenset(t.partitions), t.client_version) for t in self.txns.values()
                if t.state in (PREPARE_COMMIT, PREPARE_ABORT)]

    # ================================================================================================ InitProducerId
    def init_producer_id(self, transactional_id: str, timeout_ms: int, expected: tuple[int, int] | None, token,
                         now_ms: int) -> TxnResult:
        """``expected``: the (producer id, epoch) a v3+ client names (None, or (-1, -1): none)."""
        result = TxnResult()

        def answer(code: int, pid: int = -1, epoch: int = -1) -> TxnResult:
            result.reply(token, "InitProducerId", w.InitProducerIdResponse(
                throttle_time_ms=0, error_code=code, producer_id=pid, producer_epoch=epoch))
            return result

        if transactional_id == "":
            return answer(ec.INVALID_REQUEST)
        if expected is not None and (expected[0] == -1) != (expected[1] == -1):
            return answer(ec.INVALID_REQUEST)  # Kafka's KafkaApis: a producer id without an epoch, or the reverse
        if expected == (-1, -1):
            expected = None
        if not 0 < timeout_ms <= self.config.max_timeout_ms:
            return answer(ec.INVALID_TRANSACTION_TIMEOUT)
        t = self.txns.get(transactional_id)
        if t is None:
            t = self.txns[transactional_id] = TxnMetadata(transactional_id, self._allocate(), -1, timeout_ms, now_ms)
        if expected is not None and not _may_init(t, *expected):
            return answer(ec.PRODUCER_FENCED)
        if t.state in (PREPARE_COMMIT, PREPARE_ABORT, PREPARE_EPOCH_FENCE):
            return answer(ec.CONCURRENT_TRANSACTIONS)
        if t.state == ONGOING:
            self._fence_and_abort(t, result, now_ms)  # the old producer's transaction goes; the client retries
            return answer(ec.CONCURRENT_TRANSACTIONS)
        if t.producer_epoch >= EPOCH_EXHAUSTED and (expected is None or expected[1] == t.producer_epoch):
            # a new producer id; a retry naming the old id and its exhausted epoch gets it again (``_may_init``)
            t.last_producer_epoch = t.producer_epoch if expected is not None else -1
            t.last_producer_id, t.producer_id, t.producer_epoch = t.producer_id, self._allocate(), 0
        else:
            epochs = _next_epochs(t, None if expected is None else expected[1])
            if epochs is None:
                return answer(ec.PRODUCER_FENCED)
            t.producer_epoch, t.last_producer_epoch = epochs
        t.timeout_ms = timeout_ms
        t.partitions, t.start_ms = set(), -1
        self._write(t, EMPTY, result, now_ms)
        return answer(0, t.producer_id, t.producer_epoch)

    def _fence_and_abort(self, t: TxnMetadata, result: TxnResult, now_ms: int) -> None:
        """Kafka's epoch fence: bump the epoch so the old producer is fenced, then abort what it left open.
        PrepareEpochFence is the pending transition Kafka holds in memory; what reaches the log is the PrepareAbort
        at the bumped epoch."""
        if t.producer_epoch < MAX_EPOCH:
            t.producer_epoch += 1
        t.last_producer_epoch = -1  # no retry of an earlier InitProducerId gets the fenced epoch back
        self._write(t, PREPARE_ABORT, result, now_ms)
        result.markers.append(Marker(t.transactional_id, t.producer_id, t.producer_epoch, False,
                                     frozenset(t.partitions), t.client_version))

    # ================================================================================================ partitions
    def _check(self, t: TxnMetadata | None, producer_id: int, epoch: int) -> int:
        if t is None or t.producer_id != producer_id:
            return ec.INVALID_PRODUCER_ID_MAPPING
        if epoch != t.producer_epoch:
            return ec.PRODUCER_FENCED
        if t.state in (PREPARE_COMMIT, PREPARE_ABORT, PREPARE_EPOCH_FENCE):
            return ec.CONCURRENT_TRANSACTIONS
        return 0

    def add_error(self, transactional_id: str, producer_id: int, epoch: int) -> int:
        """What an add to this producer's transaction would be refused with (NONE: it would be added): the
        coordinator's checks alone, nothing written (AddPartitionsToTxn v4+ without VerifyOnly,
        ``refusals.ADD_NEEDS_TRANSACTION_VERSION_2``)."""
        return self._check(self.txns.get(transactional_id), producer_id, epoch)

    def add_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                       partitions: list[tuple[str, int]], token, now_ms: int, *, api: str = "AddPartitionsToTxn",
                       version: int = 3, client_version: int = 0) -> TxnResult:
        """``client_version``: 2 when a partition leader adds for a transaction.version 2 client (its Produce v12 or
        TxnOffsetCommit v5), which makes the transaction's end bump the epoch."""
        result = TxnResult()
        t = self.txns.get(transactional_id)
        code = self._check(t, producer_id, epoch)
        if not code:
            wanted = set(partitions)
            if not (t.state == ONGOING and wanted <= t.partitions and t.client_version == client_version):
                if t.state != ONGOING:
                    t.start_ms = now_ms
                t.partitions |= wanted
                t.client_version = client_version
                self._write(t, ONGOING, result, now_ms)
        result.reply(token, api, _add_answer(api, version, partitions, code))
        return result

    def verify_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                          partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """KIP-890's check for a partition leader (AddPartitionsToTxn v4+ with VerifyOnly): per partition NONE when
        it is in the ongoing transaction of this producer, else TRANSACTION_ABORTABLE; every partition gets
        INVALID_REQUEST for an empty id, INVALID_PRODUCER_ID_MAPPING for an unknown id or another producer id,
        PRODUCER_FENCED for another epoch, CONCURRENT_TRANSACTIONS while a commit or abort is being prepared (Kafka's
        ``handleVerifyPartitionsInTransaction``). Nothing is written: the append that follows is guarded on the
        partition."""
        if not transactional_id:
            return {tp: ec.INVALID_REQUEST for tp in partitions}
        t = self.txns.get(transactional_id)
        if t is None or t.producer_id != producer_id:
            code = ec.INVALID_PRODUCER_ID_MAPPING
        elif t.producer_epoch != epoch:
            code = ec.PRODUCER_FENCED
        elif t.state in (PREPARE_COMMIT, PREPARE_ABORT):
            code = ec.CONCURRENT_TRANSACTIONS
        else:
            return {tp: ec.NONE if tp in t.partitions else ec.TRANSACTION_ABORTABLE for tp in partitions}
        return {tp: code for tp in partitions}

    def completing(self, transactional_id: str, producer_id: int, epoch: int) -> bool:
        """Whether this producer's transaction is being committed or aborted (PrepareCommit/PrepareAbort: its markers
        are on their way), so that an AddPartitionsToTxn or AddOffsetsToTxn starting its next one would meet
        CONCURRENT_TRANSACTIONS now and succeed once the markers are written."""
        t = self.txns.get(transactional_id)
        return (t is not None and t.producer_id == producer_id and t.producer_epoch == epoch
                and t.state in (PREPARE_COMMIT, PREPARE_ABORT))

    def add_offsets(self, transactional_id: str, producer_id: int, epoch: int, group_partition: int, token,
                    now_ms: int) -> TxnResult:
        """AddOffsetsToTxn: the group's ``__consumer_offsets`` partition joins the transaction."""
        result = self.add_partitions(transactional_id, producer_id, epoch, [(GROUP_TOPIC, group_partition)], token,
                                     now_ms, api="AddOffsetsToTxn")
        return result

    # ================================================================================================ EndTxn
    def end_txn(self, transactional_id: str, producer_id: int, epoch: int, commit: bool, token, now_ms: int, *,
                client_version: int = 0) -> TxnResult:
        """``client_version``: 2 for EndTxn v5 (transaction.version 2: the end bumps the epoch), else 0. Below a
        finalized transaction.version 2 a v5 end passes the same checks, and where it would write the transaction's
        prepare it is UNSUPPORTED_VERSION instead (Kafka 4.4 cannot write a TV2 record there: the conformance run's
        EndTxn-v5 scenarios at metadata.version 3.9 — an Ongoing or empty-abort end refused, an Empty commit
        INVALID_TXN_STATE, an unknown id INVALID_PRODUCER_ID_MAPPING)."""
        result = TxnResult()

        def answer(code: int, pid: int = -1, pepoch: int = -1) -> TxnResult:
            result.reply(token, "EndTxn", w.EndTxnResponse(throttle_time_ms=0, error_code=code, producer_id=pid,
                                                           producer_epoch=pepoch))
            return result

        t = self.txns.get(transactional_id)
        if t is None:
            return answer(ec.INVALID_PRODUCER_ID_MAPPING)
        retry_on_overflow = (t.bumps_epoch and producer_id == t.last_producer_id and epoch == EPOCH_EXHAUSTED
                             and t.producer_epoch == 0)
        if t.producer_id != producer_id and not retry_on_overflow:
            return answer(ec.INVALID_PRODUCER_ID_MAPPING)
        if not _valid_end_epoch(t, epoch, retry_on_overflow):
            return answer(ec.PRODUCER_FENCED)
        done, preparing = (COMPLETE_COMMIT, PREPARE_COMMIT) if commit else (COMPLETE_ABORT, PREPARE_ABORT)
        # TV2: the current epoch after an end is the next transaction's, which has added nothing yet
        next_txn = t.bumps_epoch and t.state in ENDED and (producer_id, epoch) == (t.producer_id, t.producer_epoch)
        if next_txn and t.state in (PREPARE_COMMIT, PREPARE_ABORT):
            return answer(ec.CONCURRENT_TRANSACTIONS)  # the last one's markers are still being written
        if t.state == done and not next_txn:
            return answer(0, t.producer_id, t.producer_epoch)  # a retry of what already happened
        if t.state == preparing:
            return answer(ec.CONCURRENT_TRANSACTIONS)
        empty_abort = (t.state == EMPTY or next_txn) and not commit and client_version >= 2
        if t.state != ONGOING and not empty_abort:
            return answer(ec.INVALID_TXN_STATE)
        if client_version >= 2 and self.config.transaction_version < 2:
            return answer(ec.UNSUPPORTED_VERSION)
        if client_version >= 2:
            if t.producer_epoch >= EPOCH_EXHAUSTED:
                t.next_producer_id = self._allocate()
            t.last_producer_epoch = t.producer_epoch
            t.producer_epoch += 1  # at most MAX_EPOCH: an exhausted epoch moves to a new producer id
            if empty_abort:
                t.start_ms = now_ms  # Kafka: a transaction with no partition starts when it is aborted
        t.client_version = client_version
        self._write(t, preparing, result, now_ms)
        result.markers.append(Marker(t.transactional_id, t.producer_id, t.producer_epoch, commit,
                                     frozenset(t.partitions), t.client_version))
        if t.next_producer_id >= 0:
            return answer(0, t.next_producer_id, 0)  # the client goes on with the producer id that replaces this one
        return answer(0, t.producer_id, t.producer_epoch)

    def markers_written(self, transactional_id: str, producer_id: int, epoch: int, now_ms: int) -> TxnResult:
        """Every marker of the transaction is on its partition: it completes (under transaction.version 2 with the
        new producer id, at epoch 0, when the epoch ran out)."""
        result = TxnResult()
        t = self.txns.get(transactional_id)
        if t is None or (t.producer_id, t.producer_epoch) != (producer_id, epoch) or t.state not in (
                PREPARE_COMMIT, PREPARE_ABORT):
            return result  # superseded meanwhile
        state = COMPLETE_COMMIT if t.state == PREPARE_COMMIT else COMPLETE_ABORT
        t.partitions = set()
        if t.bumps_epoch and t.next_producer_id >= 0:
            # the epoch the client saw last stays the exhausted one (Kafka keeps lastProducerEpoch at MAX - 1)
            t.last_producer_id, t.producer_id, t.next_producer_id = t.producer_id, t.next_producer_id, -1
            t.producer_epoch = 0
        self._write(t, state, result, now_ms)
        return result

    # ================================================================================================ timers
    def tick(self, now_ms: int) -> TxnResult:
        """Abort transactions open longer than their ``transaction.timeout.ms`` (the producer is fenced)."""
        result = TxnResult()
        for t in list(self.txns.values()):
            if t.state == ONGOING and t.start_ms >= 0 and now_ms - t.start_ms > t.timeout_ms:
                self._fence_and_abort(t, result, now_ms)
        return result

    def expire(self, now_ms: int, expiration_ms: int) -> TxnResult:
        """Kafka's removal of expired transactional ids: one idle (Empty, CompleteCommit, CompleteAbort) for
        ``transactional.id.expiration.ms`` since its last update goes (Dead) and its key gets a tombstone."""
        result = TxnResult()
        for t in list(self.txns.values()):
            if t.state in (EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT) and now_ms - t.update_ms >= expiration_ms:
                t.state = DEAD
                del self.txns[t.transactional_id]
                result.records.append((cr.encode_key(w.TransactionLogKey(transactional_id=t.transactional_id), 0),
                                       None))
        return result

    # ================================================================================================ admin
    def describe(self, transactional_id: str):
        t = self.txns.get(transactional_id)
        if t is None:
            return None
        return {"transactional_id": t.transactional_id, "state": STATE_NAMES[t.state], "producer_id": t.producer_id,
                "producer_epoch": t.producer_epoch, "timeout_ms": t.timeout_ms, "start_ms": t.start_ms,
                "partitions": sorted(t.partitions)}


class ListingFilter:
    """ListTransactions' filters, as Kafka's coordinator applies them: states by name (case-insensitive; the names it
    does not know come back as ``unknown_states``), producer ids, v1's DurationFilter (KIP-994: Ongoing transactions
    running longer than that many ms), v2's TransactionalIdPattern (KIP-1152: an RE2/J expression, as Kafka compiles
    it, the whole id must match; empty or null filters nothing). A pattern RE2/J refuses makes ``error``
    INVALID_REGULAR_EXPRESSION and the answer lists nothing (Kafka sends no message with it). State filters that name
    only states Kafka does not know match nothing (``matches_nothing``), as Kafka 4.4 answers them."""

    def __init__(self, body, version: int, now_ms: int) -> None:
        by_name = {n.lower(): i for i, n in enumerate(STATE_NAMES)}
        self.states = {by_name[s.lower()] for s in body.state_filters or () if s.lower() in by_name}
        self.unknown_states = [s for s in body.state_filters or () if s.lower() not in by_name]
        self.producer_ids = set(body.producer_id_filters or ())
        self.duration = body.duration_filter if version >= 1 else -1
        self.now_ms = now_ms
        self.error = ec.NONE
        self.pattern = None
        text = body.transactional_id_pattern if version >= 2 else None
        if text:
            try:
                self.pattern = re2j.compile(text)
            except re2j.PatternError:
                self.error = ec.INVALID_REGULAR_EXPRESSION
        self.matches_nothing = bool(self.unknown_states) and not self.states

    def accepts(self, t: "TxnMetadata") -> bool:
        if self.matches_nothing:
            return False
        if self.states and t.state not in self.states or self.producer_ids and t.producer_id not in self.producer_ids:
            return False
        if self.duration >= 0 and (t.state != ONGOING or t.start_ms < 0 or self.now_ms - t.start_ms <= self.duration):
            return False
        return self.pattern is None or self.pattern.fullmatch(t.transactional_id) is not None


def _may_init(t: TxnMetadata, producer_id: int, epoch: int) -> bool:
    """Whether an InitProducerId naming (``producer_id``, ``epoch``) may go on (Kafka's ``isValidProducerId``): the
    transactional id is new (no epoch yet), or the id is the current one (its epoch is judged by ``_next_epochs``),
    or it is the id replaced for an exhausted epoch and names that epoch (a retry of the rotation)."""
    return (t.producer_epoch == -1 or producer_id == t.producer_id
            or (producer_id == t.last_producer_id and epoch >= EPOCH_EXHAUSTED))


def _valid_end_epoch(t: TxnMetadata, epoch: int, retry_on_overflow: bool) -> bool:
    """Whether an EndTxn's epoch may go on (Kafka's ``isValidEpoch`` in ``endTransaction``). A transaction whose
    client speaks transaction.version 2 had its epoch bumped by the end being retried, so the same epoch means the
    next transaction's (``end_txn`` tells them apart): in Prepare* the epoch before the bump is a retry, in
    Complete* also the exhausted epoch of the producer id just replaced; elsewhere the epoch must be the current one.
    Otherwise (TV0/1) it must be the current one."""
    if not t.bumps_epoch or t.state not in ENDED or epoch == t.producer_epoch:
        return epoch == t.producer_epoch
    bumped = t.producer_epoch == epoch + 1
    if t.state in (PREPARE_COMMIT, PREPARE_ABORT):
        return bumped
    return bumped or retry_on_overflow


def _next_epochs(t: TxnMetadata, expected_epoch: int | None) -> tuple[int, int] | None:
    """(epoch, last epoch) after an InitProducerId that does not change the producer id (Kafka's
    ``prepareIncrementProducerEpoch``), None when the producer is fenced. Without an expected epoch (a new producer
    instance) the epoch is bumped and no earlier one is remembered, so the instance it replaces is fenced. With one:
    the current epoch (or none yet) is bumped and remembered; the remembered one is a retry of that bump whose answer
    was lost, answered with the current epoch unchanged; any other is fenced."""
    if expected_epoch is None:
        return t.producer_epoch + 1, -1
    if t.producer_epoch == -1 or expected_epoch == t.producer_epoch:
        return t.producer_epoch + 1, t.producer_epoch
    if expected_epoch == t.last_producer_epoch:
        return t.producer_epoch, t.last_producer_epoch
    return None


def partitions_answer(wanted: list[tuple[str, int]], codes: dict):
    """AddPartitionsToTxn v0-3's answer: ``codes`` per (topic, partition), NONE for the others, topics in order."""
    R = w.AddPartitionsToTxnResponse
    topics: dict[str, list[int]] = {}
    for topic, p in wanted:
        topics.setdefault(topic, []).append(p)
    return R(throttle_time_ms=0, results_by_topic_v3_and_below=[
        R.AddPartitionsToTxnTopicResult(name=topic, results_by_partition=[
            R.AddPartitionsToTxnPartitionResult(partition_index=p, partition_error_code=codes.get((topic, p), 0))
            for p in ps]) for topic, ps in topics.items()])


def _add_answer(api: str, version: int, partitions: list[tuple[str, int]], code: int):
    if api == "AddOffsetsToTxn":
        return w.AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=code)
    return partitions_answer(partitions, dict.fromkeys(partitions, code))


def _counter() -> Callable[[], int]:
    n = [999]

    def allocate() -> int:
        n[0] += 1
        return n[0]

    return allocate
