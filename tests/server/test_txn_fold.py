"""A hosted partition's transactions folded over its real log files (``Hosted``, no node): aborts land in the
``.txnindex`` of the segment holding their marker, a truncation below a marker reopens its transaction and rewrites
the files, deleted segments take their files with them, and a fold after a reopen finds the same state from the
producer snapshot, the ``.txnindex`` files below it and the log after it."""

from __future__ import annotations

import os
import uuid

from kraftwire.log.partition_log import LogDirCheckpoints, PartitionLog
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.replica.partition import ReplicaState
from kraftwire.replica.transactions import AbortedTxn, decode_txn_index, marker_key, marker_value
from kraftwire.server.runtime.replicas import Hosted

TOPIC_ID = uuid.uuid4()


def _open(root: str, segment_bytes: int = 1 << 20) -> Hosted:
    directory = os.path.join(root, "t-0")
    lg = PartitionLog(directory, LogDirCheckpoints(root), topic_id=TOPIC_ID, high_watermark_checkpoint_interval_ms=0,
                      retention_bytes=-1, retention_ms=-1, segment_bytes=segment_bytes)
    hp = Hosted(TOPIC_ID, "t", 0, root, lg, ReplicaState(1, "t", 0))
    lg.on_roll = hp.write_producer_snapshot
    return hp


def _data(pid: int, seq: int, n: int = 1) -> bytes:
    b = RecordBatchBuilder(is_transactional=True, producer_id=pid, producer_epoch=0, base_sequence=seq)
    for _ in range(n):
        b.append(b"k", b"v" * 100, timestamp=1)
    return b.build()


def _marker(pid: int, commit: bool) -> bytes:
    b = RecordBatchBuilder(is_control=True, is_transactional=True, producer_id=pid, producer_epoch=0)
    b.append(marker_key(commit), marker_value(0), timestamp=1)
    return b.build()


def _append(hp: Hosted, raw: bytes) -> int:
    """As a follower appends: the log, then the folded state."""
    info = hp.log.append_as_leader(raw, 0)
    hp.fold_appended(read_batches(hp.log.read(info.first_offset, 1 << 20).records))
    return info.first_offset


def _index_files(hp: Hosted) -> dict[str, list[AbortedTxn]]:
    out = {}
    for name in sorted(os.listdir(hp.log.directory)):
        if name.endswith(".txnindex"):
            with open(os.path.join(hp.log.directory, name), "rb") as f:
                out[name] = decode_txn_index(f.read())
    return out


def test_txn_index_follows_segments_truncation_and_reopen(tmp_path):
    root = str(tmp_path)
    hp = _open(root, segment_bytes=600)  # a few batches per segment
    hp.log.initialize_leader_epoch(0)
    assert hp.txn_state().ongoing == {}  # folded (empty): it now follows every append
    _append(hp, _data(1, 0))           # 0: producer 1 opens
    _append(hp, _data(2, 0))           # 1: producer 2 opens
    _append(hp, _marker(1, False))     # 2: abort 1
    _append(hp, _data(1, 1))           # 3: producer 1 opens again
    _append(hp, _data(3, 0))           # 4: producer 3 opens
    _append(hp, _marker(2, False))     # 5: abort 2
    _append(hp, _marker(3, True))      # 6: commit 3
    txns = hp.txn_state()
    first, second = AbortedTxn(1, 0, 2, 1), AbortedTxn(2, 1, 5, 3)
    assert txns.aborted == [first, second] and txns.ongoing == {1: 3}
    bases = hp.log.segment_base_offsets()
    assert len(bases) >= 2
    expected: dict[str, list[AbortedTxn]] = {}
    for e in (first, second):
        expected.setdefault(f"{max(b for b in bases if b <= e.last_offset):020d}.txnindex", []).append(e)
    assert _index_files(hp) == expected and len(expected) == 2  # one per segment holding a marker
    hp.log.update_high_watermark(hp.log.end_offset())
    assert hp.last_stable_offset() == 3

    # truncation below the second abort: producer 2's transaction is open again, its entry leaves the files
    hp.log.truncate_to(5)
    txns = hp.txn_state()
    assert txns.aborted == [first] and txns.ongoing == {1: 3, 2: 1, 3: 4}
    assert [e for entries in _index_files(hp).values() for e in entries] == [first]
    _append(hp, _marker(2, True))  # 5: this time a commit
    assert hp.txn_state().ongoing == {1: 3, 3: 4}

    # a clean close writes a snapshot; reopened, the fold finds the same state
    hp.write_producer_snapshot()
    hp.log.close()
    again = _open(root, segment_bytes=600)
    assert again.txn_state().aborted == [first] and again.txn_state().ongoing == {1: 3, 3: 4}
    assert again.producer_table()[2].coordinator_epoch == 0

    # the oldest segments go (retention): their .txnindex files with them, their aborts with the log start
    start = again.log.delete_oldest_segments(len(again.log.segment_base_offsets()) - 1)
    again.txn_state().delete_before(start)
    assert again.txn_state().aborted == [] and _index_files(again) == {}
    again.log.close()


def _plain_idempotent(pid: int, seq: int) -> bytes:
    b = RecordBatchBuilder(producer_id=pid, producer_epoch=0, base_sequence=seq)
    b.append(b"k", b"v", timestamp=1)
    return b.build()


def test_first_unstable_offset_after_truncation(tmp_path):
    """Kafka's ProducerStateManagerTest case of the name, on the files: a commit frees the transaction once the high
    watermark passes its marker; a truncation that keeps the marker keeps it free, one that cuts the marker opens
    the transaction again (folded from the producer snapshot below it and the log after)."""
    hp = _open(str(tmp_path))
    hp.log.initialize_leader_epoch(0)
    _append(hp, _plain_idempotent(9, 0))  # 0
    _append(hp, _data(1, 0))              # 1: producer 1 opens
    hp.log.update_high_watermark(2)
    assert hp.txn_state().first_unstable_offset() == 1 and hp.last_stable_offset() == 1
    hp.write_producer_snapshot()          # at 2
    _append(hp, _marker(1, True))         # 2: commit 1, not replicated yet
    assert hp.last_stable_offset() == 1 and hp.txn_state().first_undecided_offset() is None
    hp.log.update_high_watermark(3)
    assert hp.txn_state().first_unstable_offset() is None and hp.last_stable_offset() == 3
    hp.write_producer_snapshot()          # at 3
    _append(hp, _plain_idempotent(9, 1))  # 3
    hp.log.truncate_to(3)
    assert hp.txn_state().first_unstable_offset() is None and hp.last_stable_offset() == 3
    hp.log.truncate_to(2)                 # the marker goes (an unclean leader change): the high watermark with it
    assert hp.log.producer_snapshots()[0] == 2
    assert hp.txn_state().ongoing == {1: 1} and hp.last_stable_offset() == 1
    hp.log.close()


def test_an_unreplicated_transaction_is_folded_again_from_the_log(tmp_path):
    """A producer snapshot holds only each producer's open transaction (Kafka's CurrentTxnFirstOffset), not the
    completed ones waiting for the high watermark: a fold without a snapshot above them finds them again in the
    log, and they hold the last stable offset until the high watermark passes their marker."""
    root = str(tmp_path)
    hp = _open(root)
    hp.log.initialize_leader_epoch(0)
    assert hp.txn_state().ongoing == {}  # folded (empty): it now follows every append
    _append(hp, _data(1, 0))        # 0: producer 1 opens
    hp.write_producer_snapshot()    # at 1 (as a segment roll would): producer 1's transaction is open there
    _append(hp, _data(2, 0))        # 1: producer 2 opens
    _append(hp, _marker(1, False))  # 2: abort 1
    hp.log.update_high_watermark(2)
    txns = hp.txn_state()
    assert txns.unreplicated == {0: (1, 2)} and txns.ongoing == {2: 1} and hp.last_stable_offset() == 0
    assert txns.aborted == [AbortedTxn(1, 0, 2, 1)]
    hp.log.close()                  # a crash: no snapshot at the end

    again = _open(root)
    again.log.update_high_watermark(2)  # what the checkpoint or the leader says
    txns = again.txn_state()
    assert txns.unreplicated == {0: (1, 2)} and txns.ongoing == {2: 1} and again.last_stable_offset() == 0
    again.log.update_high_watermark(3)
    assert again.last_stable_offset() == 1 and again.txn_state().unreplicated == {}
    again.log.close()
