"""Transactions on a KRaft broker's topic partitions.

* **WriteTxnMarkers** (from transaction coordinators; ALTER or CLUSTER_ACTION on the cluster): COMMIT / ABORT
  control batches appended as leader, each answered once the high watermark passes it.
* **DescribeProducers** (``kafka-transactions.sh describe-producers``/``find-hanging``; READ on the topic): the
  producer table and open transactions of a partition replica, leader or follower, as Kafka answers from any replica.
"""

from __future__ import annotations

import logging

from kraftwire import error_codes as ec
from kraftwire.config import METADATA_TOPIC
from kraftwire.errors import KraftwireError
from kraftwire.metadata.controller.topics import name_error
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op

log = logging.getLogger("kraftwire.partitions")
#: how long a WriteTxnMarkers append waits for the high watermark (Kafka's request.timeout.ms default)
MARKER_TIMEOUT_MS = 30000


class MarkerApis:
    """WriteTxnMarkers and DescribeProducers, a part of ``partition_apis.PartitionApis``."""

    # ------------------------------------------------------------------------------------------------ WriteTxnMarkers
    def write_txn_markers(self, request, conn) -> None:
        """A transaction coordinator's markers (KafkaApis ``handleWriteTxnMarkersRequest``: with an authorizer the
        principal needs ALTER or CLUSTER_ACTION on the cluster, else every partition is
        CLUSTER_AUTHORIZATION_FAILED, as Kafka's error response says): for each marker, each named partition
        this broker hosts gets a COMMIT or ABORT control batch with the producer id and epoch, appended as its
        leader; each is answered once the high watermark passes it (Kafka appends with acks=-1, timing out after
        request.timeout.ms; an ISR below min.insync.replicas is NOT_ENOUGH_REPLICAS before the append). v2's
        TransactionVersion (KIP-1228; 0 before) picks the epoch rule of ``replica.producers``: a TV2 marker must
        bump the epoch of an open transaction. A partition whose log is not here is UNKNOWN_TOPIC_OR_PARTITION,
        one this broker does not lead NOT_LEADER_OR_FOLLOWER. Hooks in ``marker_listeners`` hear of each marker
        appended (``(topic, partition, producer id, producer epoch, commit)``: a coordinator with pending
        transactional offsets completes them)."""
        R = w.WriteTxnMarkersResponse
        version, cid = request.version, request.header.correlation_id
        timeout_ms = MARKER_TIMEOUT_MS
        access = self.node.authorizer
        denied = access is not None and not (access.allows_cluster(conn, Op.ALTER, log_denied=False)
                                             or access.allows_cluster(conn, Op.CLUSTER_ACTION))
        markers, waiting = [], []
        for m in request.body.markers:
            topics = []
            for t in m.topics:
                parts = []
                for index in t.partition_indexes:
                    pr = R.WritableTxnMarkerPartitionResult(partition_index=index, error_code=ec.NONE)
                    parts.append(pr)
                    if denied:
                        pr.error_code = ec.CLUSTER_AUTHORIZATION_FAILED
                        continue
                    hp = self.replicas.get(t.name, index) if t.name != METADATA_TOPIC else None
                    if hp is None:
                        pr.error_code = ec.UNKNOWN_TOPIC_OR_PARTITION
                        continue
                    error, _message = hp.state.produce_error(-1, hp.min_isr)
                    if error:
                        pr.error_code = error
                        continue
                    result = self.replicas.append_marker(hp, m.producer_id, m.producer_epoch, m.coordinator_epoch,
                                                         m.transaction_result, m.transaction_version)
                    if result.error:
                        pr.error_code = result.error
                        continue
                    for listener in list(self.marker_listeners):
                        listener(t.name, index, m.producer_id, m.producer_epoch, m.transaction_result)
                    waiting.append((pr, hp, result.end))
                topics.append(R.WritableTxnMarkerTopicResult(name=t.name, partitions=parts))
            markers.append(R.WritableTxnMarkerResult(producer_id=m.producer_id, topics=topics))
        resp = R(markers=markers)
        if not waiting:
            conn.send_response(resp, version, cid)
            return
        left = [len(waiting)]

        def done(pr, hp, error: int) -> None:
            if error == ec.NONE:
                error = hp.state.ack_error(hp.min_isr)
            pr.error_code = error
            left[0] -= 1
            if left[0] == 0:
                conn.send_response(resp, version, cid)

        for pr, hp, end in waiting:
            self.replicas.wait_committed(hp, end, lambda error, pr=pr, hp=hp: done(pr, hp, error), timeout_ms)

    # ------------------------------------------------------------------------------------------------ DescribeProducers
    def describe_producers(self, request, conn) -> None:
        """The producer state of partitions this broker holds a replica of, leader or follower (KafkaApis
        ``handleDescribeProducersRequest``, ``Partition.activeProducerState``): per topic an illegal name is
        INVALID_TOPIC_EXCEPTION with Kafka's reason, a topic the principal may not READ TOPIC_AUTHORIZATION_FAILED, one
        the image lacks UNKNOWN_TOPIC_OR_PARTITION; per partition one not hosted here NOT_LEADER_OR_FOLLOWER (the image
        has it) or UNKNOWN_TOPIC_OR_PARTITION, a failed log directory KAFKA_STORAGE_ERROR; else each producer the
        partition's table knows, by producer id, with its epoch, last sequence, last timestamp, the coordinator epoch
        of its last marker and the first offset of its open transaction (-1: none)."""
        R = w.DescribeProducersResponse
        access = self.node.authorizer
        topics = []
        for t in request.body.topics:
            reason = name_error(t.name)
            if reason:
                error, message = ec.INVALID_TOPIC_EXCEPTION, reason
            elif access is not None and not access.topic(conn, t.name, Op.READ):
                error, message = ec.TOPIC_AUTHORIZATION_FAILED, ec.default_message(ec.TOPIC_AUTHORIZATION_FAILED)
            elif t.name == METADATA_TOPIC or self.md.image.topic(t.name) is None:  # with Kafka's default message
                error, message = ec.UNKNOWN_TOPIC_OR_PARTITION, ec.JAVA_EXCEPTIONS[ec.UNKNOWN_TOPIC_OR_PARTITION][1]
            else:
                error, message = ec.NONE, None
            parts = []
            for index in t.partition_indexes:
                pr = R.PartitionResponse(partition_index=index, error_code=error, error_message=message,
                                         active_producers=[])
                parts.append(pr)
                if not error:
                    self._producer_state(t.name, index, pr)
            topics.append(R.TopicResponse(name=t.name, partitions=parts))
        conn.send_response(R(throttle_time_ms=0, topics=topics), request.version, request.header.correlation_id)

    def _producer_state(self, name: str, index: int, pr) -> None:
        hp = self.replicas.get(name, index)
        if hp is None:
            pr.error_code = self._unhosted_error(name, index)
            return
        if hp.failed:
            pr.error_code = ec.KAFKA_STORAGE_ERROR
            return
        try:
            table = hp.producer_table()
            ongoing = hp.txns.ongoing
        except (OSError, KraftwireError) as exc:
            log.warning("folding the producers of %s-%d: %s", hp.topic, hp.index, exc)
            pr.error_code = ec.KAFKA_STORAGE_ERROR
            return
        P = w.DescribeProducersResponse.ProducerState
        pr.active_producers = [P(producer_id=pid, producer_epoch=e.epoch, last_sequence=e.last_seq,
                                 last_timestamp=e.timestamp, coordinator_epoch=e.coordinator_epoch,
                                 current_txn_start_offset=ongoing.get(pid, -1))
                               for pid, e in sorted(table.items())]
