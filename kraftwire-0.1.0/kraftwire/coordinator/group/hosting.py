"""The group coordinator as a kind of shard the coordinator runtime hosts (``kraftwire.coordinator.runtime``).

* **Loading** folds every record of the partition into a fresh ``GroupShard``; a transactional batch (a
  TxnOffsetCommit's) holds its offsets for the producer until a transaction marker of that producer completes them
  (COMMIT) or drops them (ABORT). At the log end the shard's view is advanced to the high watermark and it serves.
* **Its own writes** are folded at the offsets they landed at (a TxnOffsetCommit's as pending transactional
  offsets); the committed view follows the high watermark.
* **Transaction markers** the partition's leader appends (WriteTxnMarkers) are looked for below the high watermark
  whenever it moves while offsets are pending (``scan``).
* **A producer's batch refused for that producer** (a void verification, a fenced epoch, a sequence out of order,
  offsets too large) changes nothing: it is answered as Kafka's ``maybeConvertOffsetCommitError`` passes it on
  (``offset_commit_error``, given by the edge) and the shard is not reloaded.
"""

from __future__ import annotations

import logging
from typing import Callable

from kraftwire import error_codes as ec
from kraftwire.coordinator.group.shard import GroupConfig, GroupShard, refusal
from kraftwire.coordinator.partitioning import GROUP_TOPIC
from kraftwire.errors import LogIOError

log = logging.getLogger("kraftwire.groups")

#: append errors that refuse a TxnOffsetCommit's batch for its producer alone (the partition itself is fine)
PRODUCER_REFUSALS = frozenset((ec.INVALID_TXN_STATE, ec.INVALID_PRODUCER_EPOCH, ec.OUT_OF_ORDER_SEQUENCE_NUMBER,
                               ec.MESSAGE_TOO_LARGE, ec.RECORD_LIST_TOO_LARGE))


def marker_of(batch) -> bool | None:
    """A transaction marker batch: True for COMMIT, False for ABORT; None for any other batch."""
    if not (batch.is_control and batch.is_transactional):
        return None
    for rec in batch:
        key = bytes(rec.key or b"")
        if len(key) >= 4:
            return int.from_bytes(key[2:4], "big", signed=True) == 1  # key: int16 version, int16 type (1 COMMIT)
    return None


class GroupKind:
    """``ShardKind`` of the group coordinator. ``version_of(token)``: the request version a reply answers (its
    refusal is built for it); ``offset_commit_error(code)``: a refused producer batch's answer."""

    topic = GROUP_TOPIC

    def __init__(self, config: GroupConfig, new_id: Callable[[], str], *, group_configs=None,
                 offset_commit_error: Callable[[int], int] = lambda code: code,
                 version_of: Callable[[object], int] = lambda token: token[1]) -> None:
        self.config = config
        self.new_id = new_id
        self.group_configs = group_configs
        self.offset_commit_error = offset_commit_error
        self.version_of = version_of

    def new_shard(self, partition: int) -> GroupShard:
        if self.group_configs is None:
            return GroupShard(partition, self.config, new_id=self.new_id)
        return GroupShard(partition, self.config, new_id=self.new_id, group_configs=self.group_configs)

    def take(self, hosted, batch, position: int) -> int:
        shard = hosted.shard
        if batch.is_control:
            commit = marker_of(batch)
            if commit is not None:
                shard.complete_txn(batch.producer_id, commit, batch.base_offset)
            return 0
        txn = batch.is_transactional  # a TxnOffsetCommit's offsets wait for their marker
        count = 0
        for rec in batch:
            if rec.offset >= position:
                if txn:
                    shard.replay_txn(batch.producer_id, rec.key, rec.value, rec.offset)
                else:
                    shard.replay(rec.key, rec.value, rec.offset)
                count += 1
        return count

    def loaded(self, hosted, now_ms: int) -> None:
        hosted.scanned = hosted.loaded_to
        hosted.shard.advance(hosted.writer.high_watermark())
        hosted.shard.loaded(now_ms)
        log.info("loaded %s-%d in leader epoch %d: %d records, %d groups", GROUP_TOPIC, hosted.partition,
                 hosted.epoch, hosted.records, len(hosted.shard.group_ids()))

    @staticmethod
    def serving(shard: GroupShard) -> bool:
        return shard.live

    @staticmethod
    def appended(hosted, records: list, base_offset: int, producer: tuple[int, int] | None) -> None:
        shard = hosted.shard
        for i, (key, value) in enumerate(records):
            if producer is None:
                shard.replay(key, value, base_offset + i)
            else:
                shard.replay_txn(producer[0], key, value, base_offset + i)

    @staticmethod
    def committed(hosted, result) -> None:
        pass  # the replies were all a group write owes

    def advanced(self, hosted) -> None:
        if hosted.state == "ACTIVE":
            self.scan(hosted)
        hosted.shard.advance(hosted.writer.high_watermark())

    def scan(self, hosted) -> None:
        """The transaction markers the partition's leader appended since the last look, up to the high watermark:
        each completes its producer's pending TxnOffsetCommit offsets."""
        writer, shard = hosted.writer, hosted.shard
        hw = writer.high_watermark()
        if not shard.txn_offsets:
            hosted.scanned = max(hosted.scanned, hw)
            return
        pos = max(hosted.scanned, writer.start_offset())
        try:
            while pos < hw:
                moved = False
                for batch in writer.read(pos):
                    if batch.base_offset >= hw:
                        break
                    if batch.last_offset < pos:
                        continue
                    commit = marker_of(batch)
                    if commit is not None:
                        shard.complete_txn(batch.producer_id, commit, batch.base_offset)
                    pos, moved = batch.last_offset + 1, True
                if not moved:
                    break
        except LogIOError as exc:
            log.error("cannot read %s-%d for transaction markers: %s", GROUP_TOPIC, hosted.partition, exc)
            return
        hosted.scanned = max(hosted.scanned, min(pos, hw))

    def refusal(self, reply, code: int):
        return refusal(reply, self.version_of(reply.token), code)

    def producer_refusal(self, error: int) -> int | None:
        return self.offset_commit_error(error) if error in PRODUCER_REFUSALS else None

    @staticmethod
    def unloaded(shard: GroupShard):
        return shard.unload()
