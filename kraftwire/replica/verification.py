"""A partition leader's transaction verification state (KIP-890 part 1), pure: Kafka's ``VerificationStateEntry``
and ``VerificationGuard`` as its ``ProducerStateManager`` keeps them.

Before the first transactional batch of a producer that has no open transaction on the partition is appended, the
leader asks the producer's transaction coordinator whether the partition is in the ongoing transaction
(AddPartitionsToTxn v4+ with VerifyOnly). ``start`` opens that verification and hands out a **guard**: a token
unique to this verification. The append that follows the coordinator's yes must present the same guard
(``check_append``), and the entry is removed (``clear``) as soon as any transactional batch or marker of the
producer reaches the log, so a marker written between the coordinator's answer and the append — the transaction
ended meanwhile — invalidates the verification: the append is refused with INVALID_TXN_STATE instead of opening a
transaction no coordinator knows of (the "hanging transaction"). A fresh guard per entry makes an answer that
belongs to an earlier verification unusable for a later one (the ABA case Kafka's comments describe).

Rules (Kafka's ``UnifiedLog.maybeStartTransactionVerification``, ``analyzeAndValidateProducerState``,
``ProducerAppendInfo.checkSequence``):

* A producer's transaction is open on the partition for a batch only at the epoch it was opened with
  (``has_ongoing_transaction``; Kafka's ``UnifiedLog.hasOngoingTransaction``): a transaction.version 2 producer
  bumps its epoch at each end, so a batch at the bumped epoch starts the *next* transaction — while the last one's
  marker is still on its way to this partition, it must be verified (the coordinator holds the add until the
  markers are written), not slipped into the last transaction, whose marker would then commit or abort it too.
* ``start`` with an open transaction needs no verification: None (Kafka's SENTINEL). Otherwise the producer's
  entry — created, or the existing one — is returned; an existing one keeps the lowest sequence seen for its epoch
  and moves to a newer epoch (with that batch's sequence).
* A marker ends the producer's verification, except the last transaction's marker written at the epoch a
  transaction.version 2 entry verifies (``supports_epoch_bump``): that marker ends the transaction before the one
  being verified, so the next one's guard stays good (Kafka's ``isV2NextTransactionStarted``).
* A transactional data batch of a producer without an open transaction is appended only with the entry's guard
  (verification on); else INVALID_TXN_STATE, "Record was not part of an ongoing transaction".
* While an entry exists, a batch whose first sequence is above the entry's lowest sequence is
  OUT_OF_ORDER_SEQUENCE_NUMBER: a lower one failed verification with a retriable error and must go first.
* Entries never used are dropped after ``producer.id.expiration.ms`` (``expire``).
"""

from __future__ import annotations

from kraftwire.error_codes import INVALID_TXN_STATE, NONE, OUT_OF_ORDER_SEQUENCE_NUMBER

__all__ = ["VerificationGuard", "VerificationEntry", "ProducerVerifications", "VERIFICATION_EXPIRY_MS", "ADD_SINCE",
           "adds_partitions", "has_ongoing_transaction"]

#: the request versions whose writers are transaction.version 2 clients (KIP-890 part 2): they never add their
#: partitions themselves, so the leader asks the coordinator to add them instead of only verifying
ADD_SINCE = {"Produce": 12, "TxnOffsetCommit": 5}


def adds_partitions(api: str, version: int, transaction_version: int) -> bool:
    """Whether the leader of a ``api`` request at ``version`` asks the coordinator to *add* its partition (VerifyOnly
    false) rather than verify it. A TxnOffsetCommit v5 adds only once transaction.version 2 is finalized: below it
    Kafka 4.4 verifies such a commit as a v4 one (the conformance run's TxnOffsetCommit-v5 scenarios at
    metadata.version 3.9); a Produce v12 adds by its version alone (a client sends it only when it negotiated 2)."""
    if version < ADD_SINCE[api]:
        return False
    return api != "TxnOffsetCommit" or transaction_version >= 2

def has_ongoing_transaction(table, txns, producer_id: int, epoch: int) -> bool:
    """Whether the producer's transaction is open on the partition for a batch at ``epoch``: open there (``txns``:
    ``PartitionTxns``) and opened at that epoch (``table``: the ``ProducerTable``)."""
    if producer_id not in txns.ongoing:
        return False
    entry = table.get(producer_id)
    return entry is not None and entry.epoch == epoch


#: Kafka's ``producer.id.expiration.ms`` default: an entry never followed by an append lives this long
VERIFICATION_EXPIRY_MS = 86_400_000


class VerificationGuard:
    """A token that matches only itself (compared by identity)."""

    __slots__ = ("producer_id",)

    def __init__(self, producer_id: int) -> None:
        self.producer_id = producer_id

    def __repr__(self) -> str:
        return f"VerificationGuard(producer {self.producer_id}, {id(self):#x})"


class VerificationEntry:
    __slots__ = ("guard", "started_ms", "lowest_sequence", "epoch", "supports_epoch_bump")

    def __init__(self, producer_id: int, sequence: int, epoch: int, now_ms: int,
                 supports_epoch_bump: bool = False) -> None:
        self.guard = VerificationGuard(producer_id)
        self.started_ms = now_ms
        self.lowest_sequence = sequence
        self.epoch = epoch
        #: a transaction.version 2 writer's: its last transaction's marker comes at the epoch it verifies
        self.supports_epoch_bump = supports_epoch_bump

    def update(self, sequence: int, epoch: int) -> None:
        """Keep the lowest sequence of the newest epoch seen."""
        if epoch == self.epoch and sequence < self.lowest_sequence:
            self.lowest_sequence = sequence
        if epoch > self.epoch:
            self.epoch, self.lowest_sequence = epoch, sequence


class ProducerVerifications:
    """producer id -> ``VerificationEntry`` of one partition."""

    def __init__(self) -> None:
        self.entries: dict[int, VerificationEntry] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def start(self, producer_id: int, sequence: int, epoch: int, ongoing: bool, now_ms: int,
              supports_epoch_bump: bool = False) -> VerificationGuard | None:
        """The guard of the verification the producer's next transactional batch needs; None when its transaction
        is open on the partition at ``epoch`` (nothing to verify). ``supports_epoch_bump``: a transaction.version 2
        writer (its partitions added by the leader)."""
        if ongoing:
            return None
        entry = self.entries.get(producer_id)
        if entry is None:
            entry = self.entries[producer_id] = VerificationEntry(producer_id, sequence, epoch, now_ms,
                                                                  supports_epoch_bump)
        entry.update(sequence, epoch)
        return entry.guard

    def guard(self, producer_id: int) -> VerificationGuard | None:
        entry = self.entries.get(producer_id)
        return entry.guard if entry is not None else None

    def check_append(self, producer_id: int, first_sequence: int, transactional: bool, ongoing: bool,
                     guard: VerificationGuard | None, *, enabled: bool) -> tuple[int, str | None]:
        """(error, message) for a client's batch about to be appended with the guard its request holds (None:
        none); (NONE, None) when it may go."""
        if producer_id < 0:
            return NONE, None
        if enabled and transactional and not ongoing:
            mine = self.guard(producer_id)
            if guard is None or mine is None or guard is not mine:
                return INVALID_TXN_STATE, "Record was not part of an ongoing transaction"
        entry = self.entries.get(producer_id)
        if entry is not None and first_sequence > entry.lowest_sequence:
            return OUT_OF_ORDER_SEQUENCE_NUMBER, (
                f"Out of order sequence number for producer {producer_id}: {first_sequence} (incoming seq. number), "
                f"{entry.lowest_sequence} (earliest seen sequence)")
        return NONE, None

    def clear(self, producer_id: int, marker_epoch: int | None = None) -> None:
        """A transactional batch (``marker_epoch`` None) or a marker of the producer reached the log: its
        verification is over, unless the marker is the last transaction's, written at the epoch a transaction.version
        2 entry verifies for the next one."""
        entry = self.entries.get(producer_id)
        if entry is None:
            return
        if marker_epoch is not None and entry.supports_epoch_bump and marker_epoch == entry.epoch:
            return
        del self.entries[producer_id]

    def expire(self, now_ms: int, max_age_ms: int = VERIFICATION_EXPIRY_MS) -> list[int]:
        """Drop entries started ``max_age_ms`` or longer ago; the producer ids dropped."""
        gone = [pid for pid, e in self.entries.items() if now_ms - e.started_ms >= max_age_ms]
        for pid in gone:
            del self.entries[pid]
        return gone
