"""Produce on a KRaft broker's topic partitions.

* **Produce** (v3+; v0-2 are refused per partition with UNSUPPORTED_VERSION as Kafka 4 does): per partition the
  records' check (``kraftwire.replica.produce_answer``: one whole batch of magic 2), the replica state's checks
  (leader, acks, min.insync.replicas), then the manager's append; the answer in Kafka's order and shape (same
  module). acks=0 gets no answer (a refusal closes the connection, as Kafka's does), acks=1 is answered after the
  append, acks=-1 once the high watermark passes the batch (REQUEST_TIMED_OUT after the request's timeout,
  NOT_LEADER_OR_FOLLOWER if the leadership moved first, NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below
  the minimum meanwhile). NOT_LEADER_OR_FOLLOWER carries the leader the image knows and its
  endpoint (KIP-951, v10+). Internal topics (``__cluster_metadata``) get INVALID_TOPIC_EXCEPTION.
* **Produce of transactional batches** (KIP-98): the request needs a transactional id the principal may WRITE
  (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition otherwise); the batches are checked as an idempotent
  producer's, open the producer's transaction at their first offset, and a plain batch from a producer whose
  transaction is open is INVALID_TXN_STATE. With ``transaction.partition.verification.enable`` (default true,
  KIP-890 part 1) the first transactional batch of a producer with no open transaction on the partition waits for
  its transaction coordinator to confirm the partition is in the transaction (``txn_verifier``): one never added
  is refused (INVALID_TXN_STATE; TRANSACTION_ABORTABLE for Produce v11+) and nothing is appended.
"""

from __future__ import annotations

import logging
import time

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.records.api import ATTRIBUTES_POS, LENGTH_POS, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, TRANSACTIONAL_MASK
from kraftwire.replica import produce_answer
from kraftwire.replica.health import NOT_FAILED_PRODUCE
from kraftwire.replica.produce_answer import TOPIC_IDS_SINCE
from kraftwire.replica.produce_records import request_error, shape_error
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import ResourceType
from kraftwire.server.apis.client_quotas import busy_since, mute
from kraftwire.server.apis.group_apis import internal_topic_error

log = logging.getLogger("kraftwire.partitions")


def _has_transactional_batches(body) -> bool:
    """Whether any partition of a Produce request holds a batch with the transactional attribute (read from the
    batch headers in place; a malformed tail is left to the append, which refuses it as CORRUPT_MESSAGE)."""
    for t in body.topic_data:
        for p in t.partition_data:
            records = p.records
            if not records:
                continue
            view = memoryview(records)
            pos, size = 0, len(view)
            while pos + RECORD_BATCH_OVERHEAD <= size:
                attributes = int.from_bytes(view[pos + ATTRIBUTES_POS:pos + ATTRIBUTES_POS + 2], "big")
                if attributes & TRANSACTIONAL_MASK:
                    return True
                length = int.from_bytes(view[pos + LENGTH_POS:pos + LENGTH_POS + 4], "big", signed=True)
                if length <= 0:
                    break
                pos += LOG_OVERHEAD + length
    return False


def _answer_key(topic, version: int):
    """What a topic's answer is grouped and named by: its name, or from v13 its id."""
    return topic.topic_id if version >= TOPIC_IDS_SINCE else topic.name


def _topic_answer(key, version: int, parts):
    R = w.ProduceResponse
    if version >= TOPIC_IDS_SINCE:
        return R.TopicProduceResponse(name="", topic_id=key, partition_responses=parts)
    return R.TopicProduceResponse(name=key, partition_responses=parts)


class ProduceApis:
    """Produce, a part of ``partition_apis.PartitionApis``."""

    # ------------------------------------------------------------------------------------------------ Produce
    def produce(self, request, conn, verified=None) -> None:
        """``verified``: the transaction verification's outcome (``txn_verifier.Verified``) once it is known."""
        started = time.perf_counter_ns()
        body, version = request.body, request.version
        R = w.ProduceResponse
        acks = body.acks
        topics, waiting, hints = [], [], set()
        corrupt = request_error(p.records for t in body.topic_data for p in t.partition_data)
        if corrupt is not None:  # a first batch Kafka's record iterator refuses fails the whole request
            self._refuse_produce(request, conn, corrupt)
            return
        if version >= TOPIC_IDS_SINCE:  # by id (KIP-516): each topic the image knows gets its name, the others ""
            known = self.md.image.topics
            for t in body.topic_data:
                t.name = known[t.topic_id].name if t.topic_id in known else ""
        access = self.node.authorizer
        # Kafka: a request holding transactional batches needs a transactional id the principal may WRITE, else
        # every partition is refused
        refused = _has_transactional_batches(body) and (body.transactional_id is None or (
            access is not None and not access.allows(conn, ResourceType.TRANSACTIONAL_ID, body.transactional_id,
                                                     Op.WRITE)))
        if verified is None and not refused:  # KIP-890: the coordinator confirms first transactional writes
            verified = self.replicas.verifier.produce(
                body, version, lambda v: self.produce(request, conn, v),
                writable=lambda name: bool(name) and internal_topic_error(name) is None and (
                    access is None or access.topic(conn, name, Op.WRITE, log_denied=False)))
            if verified is None:
                return  # produce runs again with the coordinator's answer
        answered = []  # (group, topic, partition answer): the groups of kraftwire.replica.produce_answer
        for t in body.topic_data:
            writable = bool(t.name) and (access is None or access.topic(conn, t.name, Op.WRITE))
            for p in t.partition_data:
                pr = R.PartitionProduceResponse(index=p.index, error_code=0, base_offset=-1, log_append_time_ms=-1,
                                                log_start_offset=-1, record_errors=[])
                answered.append((self._produce_group(t.name, p, pr, version, refused, writable),
                                 _answer_key(t, version), pr))
                if pr.error_code:
                    continue
                if verified is not None and (t.name, p.index) in verified.errors:
                    pr.error_code, pr.error_message = verified.errors[(t.name, p.index)]
                    continue
                appended = self._produce_one(t.name, p, pr, acks, version, waiting,
                                             verified.guards.get((t.name, p.index)) if verified is not None else None)
                if version >= 3:  # BrokerTopicMetrics
                    self.node.topic_meters.produced(t.name, len(p.records) if appended else 0, appended,
                                                    pr.error_code not in NOT_FAILED_PRODUCE)
                if pr.error_code == ec.NOT_LEADER_OR_FOLLOWER and version >= 10:
                    leader, epoch = self._leader_hint(t.name, p.index)
                    pr.current_leader = R.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
                    if leader >= 0:
                        hints.add(leader)
        if acks == 0:
            if any(pr.error_code for _, _, pr in answered):  # Kafka: the producer learns of it by the close
                conn.close()
            else:
                mute(conn, self.quotas.produce(request, conn))
            return
        topics = [_topic_answer(key, version, parts) for key, parts in produce_answer.ordered(answered)]
        resp = R(responses=topics, throttle_time_ms=0)
        if hints and version >= 10:
            resp.node_endpoints = self._node_endpoints(R, hints, conn)
        busy = busy_since(started)
        if not waiting:
            self._answer_produce(request, conn, resp, busy)
            return
        left = [len(waiting)]

        def done(pr, hp, error: int) -> None:
            if error == ec.NONE:
                error = hp.state.ack_error(hp.min_isr)
            if error:
                pr.error_code, pr.base_offset = error, -1
            left[0] -= 1
            if left[0] == 0:
                self._answer_produce(request, conn, resp, busy)

        for pr, hp, end in waiting:
            self.replicas.wait_committed(hp, end, lambda error, pr=pr, hp=hp: done(pr, hp, error), body.timeout_ms)

    def _answer_produce(self, request, conn, resp, busy_ns: int) -> None:
        """Send a Produce answer with the larger throttle time of its producer_byte_rate and request_percentage
        quotas (``busy_ns``: the handling time), then mute (KIP-219)."""
        throttle = max(self.quotas.produce(request, conn), self.quotas.request_time(request, conn, busy_ns))
        resp.throttle_time_ms = throttle
        conn.send_response(resp, request.version, request.header.correlation_id)
        mute(conn, throttle)

    def _refuse_produce(self, request, conn, error: tuple[int, str]) -> None:
        """Every partition of a Produce gets ``error``; with acks=0 (no answer to carry it) the connection is closed,
        as Kafka does."""
        body, R = request.body, w.ProduceResponse
        if body.acks == 0:
            log.warning("closing connection from %s: an acks=0 Produce failed: %s", conn.peer, error[1])
            conn.close()
            return
        P = R.PartitionProduceResponse
        topics = [R.TopicProduceResponse(name=t.name, topic_id=t.topic_id, partition_responses=[
            P(index=p.index, error_code=error[0], error_message=error[1], base_offset=-1, log_append_time_ms=-1,
              log_start_offset=-1, record_errors=[]) for p in t.partition_data]) for t in body.topic_data]
        conn.send_response(R(responses=topics, throttle_time_ms=0), request.version, request.header.correlation_id)

    def _produce_group(self, name: str, p, pr, version: int, refused: bool, writable: bool) -> int:
        """The checks before the append, in Kafka's order: ``pr`` gets their error; the answer's group."""
        if refused:
            pr.error_code = ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            return produce_answer.APPENDED
        if not name:  # v13: an id the image does not know, before any other check
            pr.error_code = ec.UNKNOWN_TOPIC_ID
            return produce_answer.UNKNOWN
        if not writable:  # nothing is appended to a topic the principal may not write
            pr.error_code = ec.TOPIC_AUTHORIZATION_FAILED
            return produce_answer.UNAUTHORIZED
        if version >= 3 and internal_topic_error(name) is None and self._unhosted_error(name, p.index) \
                == ec.UNKNOWN_TOPIC_OR_PARTITION:
            pr.error_code = ec.UNKNOWN_TOPIC_OR_PARTITION
            return produce_answer.UNKNOWN
        shape = shape_error(version, p.records) if version >= 3 and p.records is not None else None
        if shape is None:
            return produce_answer.APPENDED
        pr.error_code = shape[0]  # Kafka answers it without a message
        return produce_answer.INVALID

    def _produce_one(self, name, p, pr, acks: int, version: int, waiting: list, guard=None) -> int:
        """Append one partition's records as leader; how many records were appended (0: ``pr`` says why not)."""
        if version < 3:
            pr.error_code = ec.UNSUPPORTED_VERSION
            return 0
        internal = internal_topic_error(name)
        if internal is not None:
            pr.error_code = internal[0]  # Kafka answers it without its message
            return 0
        hp = self.replicas.get(name, p.index)
        if hp is None:
            pr.error_code = self._unhosted_error(name, p.index)
            return 0
        if hp.failed:
            pr.error_code = ec.KAFKA_STORAGE_ERROR
            return 0
        error, _ = hp.state.produce_error(acks, hp.min_isr)
        if error:
            pr.error_code = error  # Kafka answers these without a message
            if error == ec.NOT_ENOUGH_REPLICAS:  # refused by the partition: its log start offset goes along
                pr.log_start_offset = hp.log.start_offset()
            return 0
        # the request's records are read by nobody after the append: a received frame's buffer is re-based in place
        result = self.replicas.append(hp, p.records, acks, verify=True, guard=guard, owned=True)
        if result.error:
            pr.error_code = result.error
            if result.error not in produce_answer.NO_LOG_START:
                pr.log_start_offset = hp.log.start_offset()
            if result.record_errors:  # KIP-467: which records of the batch were refused, and why
                pr.error_message = result.message
                E = w.ProduceResponse.BatchIndexAndErrorMessage
                pr.record_errors = [E(batch_index=i, batch_index_error_message=m) for i, m in result.record_errors]
            return 0
        pr.base_offset, pr.log_start_offset = result.base_offset, result.log_start_offset
        pr.log_append_time_ms = result.log_append_time_ms
        if acks == -1:
            waiting.append((pr, hp, result.end))
        return result.end - result.base_offset
