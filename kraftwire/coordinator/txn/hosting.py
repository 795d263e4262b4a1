"""The transaction coordinator as a kind of shard the coordinator runtime hosts (``kraftwire.coordinator.runtime``).

* **Loading** folds every data record of the partition into a fresh ``TxnShard`` (control batches carry nothing of
  the coordinator's). Transactions found half-way (PrepareCommit/PrepareAbort) have their markers sent again, but
  only once the high watermark reaches the log end the shard was loaded from: a prepare record above it may still be
  lost with this leader, and its transaction decided the other way by the next one.
* **Its own writes** are already in the shard (a request arriving while a write of the same id is in flight sees
  the new state at once; a failed write reloads the shard from the log).
* **Once committed**, a write's replies are sent and then the markers of the transactions it prepared
  (``send_markers(hosted, marker)``, given by the edge: WriteTxnMarkers to the partitions' leaders).
"""

from __future__ import annotations

import logging
from typing import Callable

from kraftwire.coordinator.partitioning import TRANSACTION_TOPIC
from kraftwire.coordinator.runtime import replay_batch
from kraftwire.coordinator.txn.coordinator import Marker, TxnConfig, TxnShard, partitions_answer
from kraftwire.protocol import messages as w

log = logging.getLogger("kraftwire.transactions")


class TxnKind:
    """``ShardKind`` of the transaction coordinator. ``config()``: the shard's config now (the features may have
    moved); ``allocate()``: a producer id, at once; ``send_markers(hosted, marker)``: start writing a prepared
    transaction's markers."""

    topic = TRANSACTION_TOPIC

    def __init__(self, config: Callable[[], TxnConfig], allocate: Callable[[], int],
                 send_markers: Callable[[object, Marker], None]) -> None:
        self.config = config
        self.allocate = allocate
        self.send_markers = send_markers

    def new_shard(self, partition: int) -> TxnShard:
        return TxnShard(partition, self.config(), allocate=self.allocate)

    take = staticmethod(replay_batch)

    def loaded(self, hosted, now_ms: int) -> None:
        hosted.resend = hosted.shard.loaded()
        log.info("loaded %s-%d in coordinator epoch %d: %d records, %d transactional ids", TRANSACTION_TOPIC,
                 hosted.partition, hosted.epoch, hosted.records, len(hosted.shard.txns))
        self.advanced(hosted)

    @staticmethod
    def serving(shard: TxnShard) -> bool:
        return True

    @staticmethod
    def appended(hosted, records: list, base_offset: int, producer) -> None:
        pass  # the shard already holds what it wrote

    def committed(self, hosted, result) -> None:
        for marker in result.markers:
            self.send_markers(hosted, marker)

    def advanced(self, hosted) -> None:
        """Send the markers of the transactions the load found prepared, once the high watermark reached the log
        end they were loaded from."""
        if hosted.resend and hosted.state == "ACTIVE" and hosted.writer.high_watermark() >= hosted.loaded_to:
            markers, hosted.resend = hosted.resend, []
            for marker in markers:
                self.send_markers(hosted, marker)

    @staticmethod
    def refusal(reply, code: int):
        return refusal(reply.api, reply.body, code)

    @staticmethod
    def producer_refusal(error: int) -> None:
        return None  # the transaction coordinator writes as no producer

    @staticmethod
    def unloaded(shard: TxnShard) -> list:
        return []  # nothing waits inside a transaction shard


def refusal(api: str, body, code: int):
    """The answer of a reply whose write failed: the same answer carrying ``code``."""
    if api == "InitProducerId":
        return w.InitProducerIdResponse(throttle_time_ms=0, error_code=code, producer_id=-1, producer_epoch=-1)
    if api == "AddPartitionsToTxn":
        wanted = [(t.name, r.partition_index) for t in body.results_by_topic_v3_and_below
                  for r in t.results_by_partition]
        return partitions_answer(wanted, {tp: code for tp in wanted})
    if api == "AddOffsetsToTxn":
        return w.AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=code)
    return w.EndTxnResponse(throttle_time_ms=0, error_code=code)
