"""The client APIs of a KRaft broker's topic partitions (thin handlers over ``replicas.ReplicaManager``).

* **Produce** (v3+; v0-2 are refused per partition with UNSUPPORTED_VERSION as Kafka 4 does): per partition the
  records' check (``kraftwire.replica.produce_answer``: one whole batch of magic 2), the replica state's checks
  (leader, acks, min.insync.replicas), then the manager's append; the answer in Kafka's order and shape (same
  module). acks=0 gets no answer (a refusal closes the connection, as Kafka's does), acks=1 is answered after the
  append, acks=-1 once the high watermark passes the batch (REQUEST_TIMED_OUT after the request's timeout,
  NOT_LEADER_OR_FOLLOWER if the leadership moved first, NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below
  the minimum meanwhile). NOT_LEADER_OR_FOLLOWER carries the leader the image knows and its
  endpoint (KIP-951, v10+). Internal topics (``__cluster_metadata``) get INVALID_TOPIC_EXCEPTION.
* **Fetch** from consumers (replica id -1): whole batches up to the high watermark (IsolationLevel 0) or up to the
  last stable offset (1, READ_COMMITTED: the first offset of the oldest transaction open or whose marker the high
  watermark has not passed, capped by the high watermark) with the AbortedTransactions (producer id, first offset)
  overlapping what it may read; every answer carries the last stable offset; control batches (transaction markers)
  go out with the data, consumers skip them; partitions in request order, each within its PartitionMaxBytes and
  what is left of MaxBytes (capped by ``fetch.max.bytes``), only the first batch of the first partition with
  records allowed past them (``kraftwire.replica.fetch_limits``); 64 KiB
  or more of whole batches of a segment below that bound go out as a file region with ``sendfile``
  (``InboundConnection``), never read into Python, as Kafka serves them; a current leader epoch is checked
  (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH); an offset outside [log start, log end] is OFFSET_OUT_OF_RANGE.
  Fewer than MinBytes park the request until a high watermark it reads moves (or a marker lands) or MaxWaitMs
  passes. Fetch sessions are not kept: every answer has session id 0, which
  tells clients to send full requests (Kafka's rule for a broker without a session slot), and an incremental request
  is FETCH_SESSION_ID_NOT_FOUND; the answer's order and refusals as Kafka's (``kraftwire.replica.fetch_answer``).
* **ListOffsets**: -2 earliest (and -4 earliest local) = log start, -1 latest = high watermark (the last stable
  offset for READ_COMMITTED; the log end for a follower), -3 max timestamp, t ≥ 0 the first record at or after t
  (``kraftwire.log.lookup``; one at or past what a client may read is not found: -1); a client (never a follower)
  gets OFFSET_NOT_AVAILABLE while a new leader has not reached its epoch's start with its high watermark
  (``kraftwire.replica.list_offsets``).
* **Produce of transactional batches** (KIP-98): the request needs a transactional id the principal may WRITE
  (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition otherwise); the batches are checked as an idempotent
  producer's, open the producer's transaction at their first offset, and a plain batch from a producer whose
  transaction is open is INVALID_TXN_STATE. With ``transaction.partition.verification.enable`` (default true,
  KIP-890 part 1) the first transactional batch of a producer with no open transaction on the partition waits for
  its transaction coordinator to confirm the partition is in the transaction (``txn_verifier``): one never added
  is refused (INVALID_TXN_STATE; TRANSACTION_ABORTABLE for Produce v11+) and nothing is appended.
* **WriteTxnMarkers** (from transaction coordinators; ALTER or CLUSTER_ACTION on the cluster): COMMIT / ABORT
  control batches appended as leader, each answered once the high watermark passes it.
* **DescribeProducers** (``kafka-transactions.sh describe-producers``/``find-hanging``; READ on the topic): the
  producer table and open transactions of a partition replica, leader or follower, as Kafka answers from any replica.
* **OffsetForLeaderEpoch** (KIP-320, clients validate their position after a leader change): the partition's end
  offset for the asked epoch from its leader-epoch cache, (-1, -1) when undefined.
* **DeleteRecords** (``kafka-delete-records.sh``, ``AdminClient.delete_records``): on the leader, the log start moves
  to the offset (-1: the high watermark); an offset past the high watermark or negative is OFFSET_OUT_OF_RANGE, a
  topic whose cleanup.policy lacks ``delete`` POLICY_VIOLATION. The answer's low watermark is the leader's new log
  start (Kafka waits for every live replica's; followers move theirs on their next fetch). Segments wholly below it
  go at once; the rest of a segment stays unreadable.
* **DescribeLogDirs** (``kafka-log-dirs.sh``): each log directory of this broker with the partitions it holds
  (all, or the topics and partitions asked), their sizes, offset lag 0 (no future replicas), and the file system's
  total and usable bytes (v4); an offline directory answers KAFKA_STORAGE_ERROR.
* **InitProducerId** without a transactional id: the next id of a block of 1,000 the active controller allocates
  (AllocateProducerIds with this broker's epoch), epoch 0 — also for a producer naming its own id and epoch (KIP-360:
  Kafka bumps epochs of transactional producers only). With a transactional id it goes to the transaction
  coordinator (``txn_apis``).
"""

from __future__ import annotations

import logging
import os

from kraftwire import error_codes as ec
from kraftwire.config import METADATA_TOPIC
from kraftwire.errors import KraftwireError
from kraftwire.java_order import topics_in_hashmap_order
from kraftwire.log import lookup
from kraftwire.log.api import Isolation
from kraftwire.metadata import answers
from kraftwire.protocol import messages as w
from kraftwire.records.api import ATTRIBUTES_POS, LENGTH_POS, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, TRANSACTIONAL_MASK
from kraftwire.replica import fetch_answer
from kraftwire.replica import list_offsets as offsets
from kraftwire.replica import produce_answer
from kraftwire.replica.fetch_limits import FetchLimits
from kraftwire.replica.fetch_readiness import HIGH_WATERMARK, LAST_STABLE_OFFSET, LOG_END, PartitionNow, Watched, fetch_ready
from kraftwire.replica.leader_fetch import check_replica_fetch
from kraftwire.replica.partition import LEADER
from kraftwire.replica.produce_records import request_error, shape_error
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import ResourceType
from kraftwire.server.group_apis import internal_topic_error
from kraftwire.server.purgatory import FetchPurgatory
from kraftwire.server.replicas import Hosted, ReplicaManager

#: a consumer Fetch reads at least this much of a partition as a file region (``sendfile``) when it can
REGION_MIN_BYTES = 64 * 1024

log = logging.getLogger("kraftwire.partitions")

PRODUCER_ID_BLOCK = 1000
#: how long a WriteTxnMarkers append waits for the high watermark (Kafka's request.timeout.ms default)
MARKER_TIMEOUT_MS = 30000


class _CheckedFetch:
    """A consumer Fetch with the topics its principal may not read (``denied``): they are answered
    TOPIC_AUTHORIZATION_FAILED in every answer, including the one a parked fetch gets later."""

    __slots__ = ("header", "api", "version", "body", "denied")

    def __init__(self, request, denied: frozenset[str]) -> None:
        self.header, self.api, self.version, self.body = request.header, request.api, request.version, request.body
        self.denied = denied


class PartitionApis:
    def __init__(self, node, metadata, replicas: ReplicaManager, kraft) -> None:
        self.node = node
        self.md = metadata
        self.replicas = replicas
        self.kraft = kraft  # KraftApis: the listener view and the path to the active controller
        self.purgatory = FetchPurgatory(self._ready_answer, self._fetch_ready)
        self.region_bytes = 0  # Fetch bytes (consumers' and followers') answered as file regions (sendfile)
        self.ids = ProducerIdBlocks(node, kraft, replicas)
        replicas.watchers.append(self._hw_moved)
        #: called with (topic, partition, producer id, producer epoch, commit) after a marker is appended
        self.marker_listeners: list = []
        replicas.alter = self._alter_partition
        replicas.assign = self._assign_replicas_to_dirs

    def register(self) -> None:
        from kraftwire.protocol import served

        d = self.node.dispatcher
        d.serve("Produce", self.produce)
        d.serve("ListOffsets", self.list_offsets)
        d.serve("OffsetForLeaderEpoch", self.offset_for_leader_epoch)
        d.serve("DeleteRecords", self.delete_records)
        d.serve("DescribeLogDirs", self.describe_log_dirs)
        d.serve("InitProducerId", self.ids.handle)
        d.serve("WriteTxnMarkers", self.write_txn_markers)
        d.serve("DescribeProducers", self.describe_producers)
        self.node.broker_fetch = (served.versions("Fetch")[0], self.fetch)

    # ------------------------------------------------------------------------------------------------ shared
    def _unhosted_error(self, name: str | None, index: int) -> int:
        """The error for a partition this broker does not host (or does not lead)."""
        image = self.md.image
        if name is None or name == METADATA_TOPIC:
            return ec.UNKNOWN_TOPIC_OR_PARTITION
        topic = image.topic(name)
        if topic is None or index not in topic.partitions:
            return ec.UNKNOWN_TOPIC_OR_PARTITION
        return ec.NOT_LEADER_OR_FOLLOWER

    def _leader_hint(self, name: str, index: int):
        """(leader id, leader epoch) the image holds for the partition, or (-1, -1)."""
        topic = self.md.image.topic(name) if name else None
        reg = topic.partitions.get(index) if topic is not None else None
        return (reg.leader, reg.leader_epoch) if reg is not None else (-1, -1)

    def _node_endpoints(self, R, leaders: set[int], conn) -> list:
        listener = self.kraft.listener_of(conn)
        out = []
        for broker_id in sorted(leaders):
            ep = answers.broker_endpoint(self.md.image, broker_id, listener)
            if ep is not None:
                out.append(R.NodeEndpoint(node_id=broker_id, host=ep.host, port=ep.port,
                                          rack=self.md.image.brokers[broker_id].rack))
        return out

    # ------------------------------------------------------------------------------------------------ Produce
    def produce(self, request, conn, verified=None) -> None:
        """``verified``: the transaction verification's outcome (``txn_verifier.Verified``) once it is known."""
        body, version = request.body, request.version
        R = w.ProduceResponse
        acks = body.acks
        topics, waiting, hints = [], [], set()
        corrupt = request_error(p.records for t in body.topic_data for p in t.partition_data)
        if corrupt is not None:  # a first batch Kafka's record iterator refuses fails the whole request
            self._refuse_produce(request, conn, corrupt)
            return
        access = self.node.authorizer
        # Kafka: a request holding transactional batches needs a transactional id the principal may WRITE, else
        # every partition is refused
        refused = _has_transactional_batches(body) and (body.transactional_id is None or (
            access is not None and not access.allows(conn, ResourceType.TRANSACTIONAL_ID, body.transactional_id,
                                                     Op.WRITE)))
        if verified is None and not refused:  # KIP-890: the coordinator confirms first transactional writes
            verified = self.replicas.verifier.produce(
                body, version, lambda v: self.produce(request, conn, v),
                writable=lambda name: internal_topic_error(name) is None and (
                    access is None or access.topic(conn, name, Op.WRITE, log_denied=False)))
            if verified is None:
                return  # produce runs again with the coordinator's answer
        answered = []  # (group, topic, partition answer): the groups of kraftwire.replica.produce_answer
        for t in body.topic_data:
            writable = access is None or access.topic(conn, t.name, Op.WRITE)
            for p in t.partition_data:
                pr = R.PartitionProduceResponse(index=p.index, error_code=0, base_offset=-1, log_append_time_ms=-1,
                                                log_start_offset=-1, record_errors=[])
                answered.append((self._produce_group(t.name, p, pr, version, refused, writable), t.name, pr))
                if pr.error_code:
                    continue
                if verified is not None and (t.name, p.index) in verified.errors:
                    pr.error_code, pr.error_message = verified.errors[(t.name, p.index)]
                    continue
                self._produce_one(t.name, p, pr, acks, version, waiting,
                                  verified.guards.get((t.name, p.index)) if verified is not None else None)
                if pr.error_code == ec.NOT_LEADER_OR_FOLLOWER and version >= 10:
                    leader, epoch = self._leader_hint(t.name, p.index)
                    pr.current_leader = R.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
                    if leader >= 0:
                        hints.add(leader)
        if acks == 0:
            if any(pr.error_code for _, _, pr in answered):  # Kafka: the producer learns of it by the close
                conn.close()
            return
        topics = [R.TopicProduceResponse(name=name, partition_responses=parts)
                  for name, parts in produce_answer.ordered(answered)]
        resp = R(responses=topics, throttle_time_ms=0)
        if hints and version >= 10:
            resp.node_endpoints = self._node_endpoints(R, hints, conn)
        cid = request.header.correlation_id
        if not waiting:
            conn.send_response(resp, version, cid)
            return
        left = [len(waiting)]

        def done(pr, hp, error: int) -> None:
            if error == ec.NONE:
                error = hp.state.ack_error(hp.min_isr)
            if error:
                pr.error_code, pr.base_offset = error, -1
            left[0] -= 1
            if left[0] == 0:
                conn.send_response(resp, version, cid)

        for pr, hp, end in waiting:
            self.replicas.wait_committed(hp, end, lambda error, pr=pr, hp=hp: done(pr, hp, error), body.timeout_ms)

    def _refuse_produce(self, request, conn, error: tuple[int, str]) -> None:
        """Every partition of a Produce gets ``error``; with acks=0 (no answer to carry it) the connection is closed,
        as Kafka does."""
        body, R = request.body, w.ProduceResponse
        if body.acks == 0:
            log.warning("closing connection from %s: an acks=0 Produce failed: %s", conn.peer, error[1])
            conn.close()
            return
        P = R.PartitionProduceResponse
        topics = [R.TopicProduceResponse(name=t.name, partition_responses=[
            P(index=p.index, error_code=error[0], error_message=error[1], base_offset=-1, log_append_time_ms=-1,
              log_start_offset=-1, record_errors=[]) for p in t.partition_data]) for t in body.topic_data]
        conn.send_response(R(responses=topics, throttle_time_ms=0), request.version, request.header.correlation_id)

    def _produce_group(self, name: str, p, pr, version: int, refused: bool, writable: bool) -> int:
        """The checks before the append, in Kafka's order: ``pr`` gets their error; the answer's group."""
        if refused:
            pr.error_code = ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            return produce_answer.APPENDED
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

    def _produce_one(self, name, p, pr, acks: int, version: int, waiting: list, guard=None) -> None:
        if version < 3:
            pr.error_code = ec.UNSUPPORTED_VERSION
            return
        internal = internal_topic_error(name)
        if internal is not None:
            pr.error_code = internal[0]  # Kafka answers it without its message
            return
        hp = self.replicas.get(name, p.index)
        if hp is None:
            pr.error_code = self._unhosted_error(name, p.index)
            return
        if hp.failed:
            pr.error_code = ec.KAFKA_STORAGE_ERROR
            return
        error, _ = hp.state.produce_error(acks, hp.min_isr)
        if error:
            pr.error_code = error  # Kafka answers these without a message
            if error == ec.NOT_ENOUGH_REPLICAS:  # refused by the partition: its log start offset goes along
                pr.log_start_offset = hp.log.start_offset()
            return
        result = self.replicas.append(hp, p.records, acks, verify=True, guard=guard)
        if result.error:
            pr.error_code = result.error
            if result.error not in produce_answer.NO_LOG_START:
                pr.log_start_offset = hp.log.start_offset()
            if result.record_errors:  # KIP-467: which records of the batch were refused, and why
                pr.error_message = result.message
                E = w.ProduceResponse.BatchIndexAndErrorMessage
                pr.record_errors = [E(batch_index=i, batch_index_error_message=m) for i, m in result.record_errors]
            return
        pr.base_offset, pr.log_start_offset = result.base_offset, result.log_start_offset
        pr.log_append_time_ms = result.log_append_time_ms
        if acks == -1:
            waiting.append((pr, hp, result.end))

    # ------------------------------------------------------------------------------------------------ Fetch
    def _partition_read(self, hp: Hosted | None, name, p, version: int, pd, limits: FetchLimits,
                        committed: bool = False) -> int:
        """Fill ``pd`` for one partition (``committed``: READ_COMMITTED, up to the last stable offset, with the
        aborted transactions it overlaps) within ``limits``; returns the bytes of records in it."""
        if hp is None:
            pd.error_code = self._unhosted_error(name, p.partition)
            pd.high_watermark = pd.last_stable_offset = pd.log_start_offset = -1
            if version >= fetch_answer.LEADER_HINTS_SINCE and pd.error_code == ec.NOT_LEADER_OR_FOLLOWER:
                leader, epoch = self._leader_hint(name, p.partition)
                pd.current_leader = w.FetchResponse.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
            return 0
        if hp.failed:
            pd.error_code = ec.KAFKA_STORAGE_ERROR
            return 0
        error = hp.state.epoch_error(p.current_leader_epoch if version >= 9 else -1)
        if error:
            pd.error_code = error
            if version >= 12 and error in (ec.NOT_LEADER_OR_FOLLOWER, ec.FENCED_LEADER_EPOCH):
                leader, epoch = self._leader_hint(name, p.partition)
                pd.current_leader = w.FetchResponse.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
            return 0
        lg = hp.log
        hw, start, end = lg.high_watermark(), lg.start_offset(), lg.end_offset()
        try:
            lso = hp.last_stable_offset()
        except (OSError, KraftwireError) as exc:
            log.warning("folding the transactions of %s-%d: %s", hp.topic, hp.index, exc)
            pd.error_code = ec.KAFKA_STORAGE_ERROR
            return 0
        offset = p.fetch_offset
        if offset < start or offset > end:  # Kafka answers a refused read without offsets
            pd.error_code = ec.OFFSET_OUT_OF_RANGE
            return 0
        pd.high_watermark, pd.last_stable_offset = hw, lso
        pd.log_start_offset = start
        upper = lso if committed else hw
        if committed:
            pd.aborted_transactions = []
        limit = limits.limit(p.partition_max_bytes)
        if offset >= upper or not limits.may_read(limit):
            return 0
        if committed:
            A = w.FetchResponse.AbortedTransaction
            pd.aborted_transactions = [A(producer_id=a.producer_id, first_offset=a.first_offset)
                                       for a in hp.txns.aborted_between(offset, upper)]
        try:
            return self._read(pd, lg, offset, limit, upper, Isolation.COMMITTED, limits)
        except KraftwireError as exc:
            log.warning("reading %s-%d at %d: %s", hp.topic, hp.index, offset, exc)
            pd.error_code = ec.KAFKA_STORAGE_ERROR
            return 0

    def _read(self, pd, lg, offset: int, limit: int, upper: int, isolation, limits: FetchLimits) -> int:
        """Put into ``pd`` the whole batches from ``offset`` below ``upper`` (at most ``limit`` bytes) that the
        answer's ``limits`` let go out; the bytes it carries. At least ``REGION_MIN_BYTES`` of them on disk go as a
        file region, sent from the page cache with sendfile and never read into Python (a consumer's and a
        follower's reads alike, as Kafka's FileRecords); less is read (from the segment's recent appends when it
        still holds them)."""
        if limit >= REGION_MIN_BYTES:
            region = lg.read_region(offset, limit, upper, REGION_MIN_BYTES)
            if region is not None:
                pd.records = region
                self.region_bytes += len(region)
                return len(region)
        return _take(pd, lg.read(offset, limit, isolation, limit=upper).records, limits, limit)

    def _fetch_answer(self, request):
        """(response, whether it may be sent now, the hosted partitions it reads, and the watch to park it with:
        (the partitions read without an error as ``Watched``, the answer's MinBytes))."""
        body, version = request.body, request.version
        R = w.FetchResponse
        image = self.md.image
        limits = FetchLimits(body.max_bytes, body.min_bytes, self.node.settings.config.fetch_max_bytes)
        total, errors, keys, answered, watched = 0, False, set(), [], []
        denied = getattr(request, "denied", ())
        replica, broker_epoch = fetch_answer.fetching_replica(body, version)
        refusal = fetch_answer.request_error(body, version) if replica < 0 else 0
        if refusal:
            return fetch_answer.error_answer(body, version, refusal), True, set(), None
        for t in body.topics:
            if version >= 13:
                topic = image.topics.get(t.topic_id)
                name = topic.name if topic is not None else None
            else:
                name = t.topic
            at = (t.topic, t.topic_id)
            for p in t.partitions:
                if name is not None and name in denied:  # answered with the rest, never a reason to answer early
                    answered.append((fetch_answer.REFUSED, at,
                                     fetch_answer.refused(p.partition, ec.TOPIC_AUTHORIZATION_FAILED)))
                    continue
                if version >= 13 and name is None:
                    answered.append((fetch_answer.REFUSED, at, fetch_answer.refused(p.partition, ec.UNKNOWN_TOPIC_ID)))
                    errors = True
                    continue
                if replica < 0 and self._unhosted_error(name, p.partition) == ec.UNKNOWN_TOPIC_OR_PARTITION:
                    answered.append((fetch_answer.REFUSED, at,
                                     fetch_answer.refused(p.partition, ec.UNKNOWN_TOPIC_OR_PARTITION)))
                    errors = True
                    continue
                pd = R.PartitionData(partition_index=p.partition, error_code=0, high_watermark=-1,
                                     last_stable_offset=-1, log_start_offset=-1, aborted_transactions=None,
                                     preferred_read_replica=-1, records=b"")
                answered.append((fetch_answer.READ, at, pd))
                hp = self.replicas.get(name, p.partition)
                diverged = False
                if replica >= 0:
                    n = self._replica_read(hp, name, p, version, pd, limits, replica, broker_epoch)
                    div = getattr(pd, "diverging_epoch", None)
                    diverged = div is not None and div.epoch >= 0
                    errors |= diverged
                else:
                    n = self._partition_read(hp, name, p, version, pd, limits, body.isolation_level == 1)
                total += n
                limits.took(n)
                errors |= pd.error_code != 0
                if hp is not None:
                    keys.add((hp.topic, hp.index))
                    if pd.error_code == 0 and not diverged:
                        bound = LOG_END if replica >= 0 else LAST_STABLE_OFFSET if body.isolation_level == 1 else HIGH_WATERMARK
                        watched.append(Watched((hp.topic, hp.index), p.fetch_offset, bound, hp.state.leader_epoch,
                                               hp.state.role))
        topics = [R.FetchableTopicResponse(topic=name, topic_id=topic_id, partitions=parts)
                  for (name, topic_id), parts in fetch_answer.ordered(answered)]
        resp = R(throttle_time_ms=0, error_code=0, session_id=0, responses=topics)
        # sent at once: MinBytes reached, an error or divergence to report, or nothing hosted here to wait for
        return resp, total >= max(limits.min_bytes, 1) or errors or not keys, keys, (tuple(watched), limits.min_bytes)

    def _replica_read(self, hp: Hosted | None, name, p, version: int, pd, limits: FetchLimits, replica: int,
                      broker_epoch: int) -> int:
        """Fill ``pd`` for a follower broker's fetch (as the leader) within ``limits``; returns the bytes of records
        in it."""
        if hp is None:
            pd.error_code = self._unhosted_error(name, p.partition)
            return 0
        if hp.failed:
            pd.error_code = ec.KAFKA_STORAGE_ERROR
            return 0
        lg = hp.log
        start, end = lg.start_offset(), lg.end_offset()
        offset = p.fetch_offset
        check = check_replica_fetch(hp.state, replica=replica, current_leader_epoch=p.current_leader_epoch,
                                    broker_epoch=broker_epoch, registration=self.md.image.brokers.get(replica),
                                    fetch_offset=offset, last_fetched_epoch=p.last_fetched_epoch, log_start=start,
                                    log_end=end, epoch_end=lg.leader_epoch_end)
        if check.fenced:
            pd.error_code = check.error
            if version >= 16 and check.leader_hint:  # KIP-951: where the leader is
                leader, epoch = self._leader_hint(name, p.partition)
                pd.current_leader = w.FetchResponse.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
            return 0
        pd.high_watermark = pd.last_stable_offset = lg.high_watermark()
        pd.log_start_offset = start
        if not check.accepted:
            pd.error_code = check.error
            if check.diverging is not None:
                epoch, end_offset = check.diverging
                pd.diverging_epoch = w.FetchResponse.EpochEndOffset(epoch=epoch, end_offset=end_offset)
            return 0
        self.replicas.replica_fetched(hp, replica, offset, broker_epoch)
        pd.high_watermark = pd.last_stable_offset = lg.high_watermark()
        limit = limits.limit(p.partition_max_bytes)
        if offset >= end or not limits.may_read(limit):
            return 0
        try:
            return self._read(pd, lg, offset, limit, end, Isolation.UNCOMMITTED, limits)
        except KraftwireError as exc:
            log.warning("reading %s-%d at %d for broker %d: %s", hp.topic, hp.index, offset, replica, exc)
            pd.error_code = ec.KAFKA_STORAGE_ERROR
            return 0

    def _ready_answer(self, request):
        resp, ready, _, _ = self._fetch_answer(request)
        return resp, ready

    def _fetch_ready(self, request, watch) -> bool:
        """Whether a parked fetch may be answered, from its partitions' offsets and positions alone
        (``kraftwire.replica.fetch_readiness``): its answer is built only once this says yes."""
        watched, min_bytes = watch
        return fetch_ready(((w, self._partition_now(w)) for w in watched), min_bytes)

    def _partition_now(self, watched: Watched) -> PartitionNow | None:
        """A watched partition as it is now; None when it is no longer hosted or its last stable offset cannot be
        folded (either way the answer carries an error)."""
        hp = self.replicas.get(*watched.key)
        if hp is None:
            return None
        lg = hp.log
        end = lg.end_offset()
        if watched.bound == LOG_END:
            upper = end
        elif watched.bound == HIGH_WATERMARK:
            upper = lg.high_watermark()
        else:
            try:
                upper = hp.last_stable_offset()
            except (OSError, KraftwireError):
                return None
        return PartitionNow(hp.state.leader_epoch, hp.state.role, hp.failed, lg.start_offset(), end, upper,
                            lg.bytes_between)

    def fetch(self, request, conn) -> None:
        access = self.node.authorizer
        if access is not None:  # a consumer's fetch (a replica's was checked at the gate): READ on each topic
            names = self._fetch_topic_names(request)
            denied = frozenset(n for n in names if not access.topic(conn, n, Op.READ))
            if denied:
                request = _CheckedFetch(request, denied)
        resp, ready, keys, watch = self._fetch_answer(request)
        if (request.version >= fetch_answer.LEADER_HINTS_SINCE
                and fetch_answer.fetching_replica(request.body, request.version)[0] < 0):
            resp.node_endpoints = self._node_endpoints(w.FetchResponse, fetch_answer.hinted_leaders(resp), conn)
        self.purgatory.respond(request, conn, resp, ready, keys, watch)

    def _fetch_topic_names(self, request) -> set[str]:
        if request.version < 13:
            return {t.topic for t in request.body.topics}
        topics = self.md.image.topics
        return {topics[t.topic_id].name for t in request.body.topics if t.topic_id in topics}

    def _hw_moved(self, hp: Hosted) -> None:
        self.purgatory.wake((hp.topic, hp.index))

    # ------------------------------------------------------------------------------------------------ ListOffsets
    def list_offsets(self, request, conn) -> None:
        R = w.ListOffsetsResponse
        version = request.version
        topics = []
        access = self.node.authorizer
        twice = offsets.duplicate_partitions(request.body.topics)
        isolation = request.body.isolation_level if version >= 2 else 0
        answered, refused = set(), set()
        for t in request.body.topics:
            parts = []
            described = access is None or access.topic(conn, t.name, Op.DESCRIBE)
            if not described:
                refused.add(t.name)
            for p in t.partitions:
                if (t.name, p.partition_index) in answered:
                    continue  # a partition named twice is answered once
                answered.add((t.name, p.partition_index))
                pr = R.ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=0, timestamp=-1,
                                                    offset=-1, leader_epoch=-1)
                parts.append(pr)
                if not described:
                    pr.error_code = ec.TOPIC_AUTHORIZATION_FAILED
                elif (t.name, p.partition_index) in twice:
                    pr.error_code = ec.INVALID_REQUEST
                elif not offsets.known_isolation(isolation):
                    pr.error_code = ec.UNKNOWN_SERVER_ERROR
                else:
                    self._list_one(t.name, p, pr, version, request.body.replica_id, isolation)
            topics.append((t.name, parts))
        responses = {(name, pr.partition_index): pr for name, parts in topics for pr in parts}
        topics = [R.ListOffsetsTopicResponse(name=name, partitions=[responses[name, i] for i in indexes])
                  for name, indexes in offsets.in_kafka_order(
                      [(name, [pr.partition_index for pr in parts]) for name, parts in topics], refused.__contains__)]
        conn.send_response(R(throttle_time_ms=0, topics=topics), version, request.header.correlation_id)

    def _list_one(self, name, p, pr, version: int, replica: int, isolation: int = 0) -> None:
        hp = self.replicas.get(name, p.partition_index)
        if hp is None:
            pr.error_code = self._unhosted_error(name, p.partition_index)
            return
        if hp.failed:
            pr.error_code = ec.KAFKA_STORAGE_ERROR
            return
        error = hp.state.epoch_error(p.current_leader_epoch if version >= 4 else -1)
        if error:
            pr.error_code = error
            return
        lg = hp.log
        ts = p.timestamp
        hw, epoch_start = lg.high_watermark(), hp.state.epoch_start_offset
        if ts == offsets.LATEST:
            pr.error_code = offsets.lagging_error(ts, replica, version, epoch_start, hw)
            if pr.error_code:
                return
        pr.leader_epoch = hp.state.leader_epoch
        try:
            fetchable = offsets.last_fetchable_offset(replica, isolation, hw, hp.last_stable_offset, lg.end_offset())
            if ts in (offsets.EARLIEST, offsets.EARLIEST_LOCAL):
                pr.offset = lg.start_offset()
                pr.leader_epoch = lg.epoch_for_offset(pr.offset)
            elif ts == offsets.LATEST:
                pr.offset = fetchable  # a follower asks for the log end, a client for what it may read
            elif ts == offsets.MAX_TIMESTAMP:
                pr.offset, pr.timestamp, pr.leader_epoch = lookup.max_timestamp(lg)
            elif ts in offsets.NOTHING_TIERED and offsets.timestamp_supported(ts, version):
                pr.offset, pr.leader_epoch = -1, -1  # nothing is tiered: there is no remote log
            elif ts >= 0:
                pr.offset, pr.timestamp, pr.leader_epoch = lookup.offset_for_timestamp(lg, ts)
            else:
                pr.error_code, pr.leader_epoch = ec.UNSUPPORTED_VERSION, -1
                return
            if ts == offsets.MAX_TIMESTAMP or ts >= 0:
                pr.error_code = offsets.lagging_error(ts, replica, version, epoch_start, hw, pr.offset, fetchable)
                if pr.error_code or pr.offset >= fetchable:  # not readable yet: not found (Kafka's rule)
                    pr.offset, pr.timestamp, pr.leader_epoch = -1, -1, -1
        except (KraftwireError, OSError) as exc:
            log.warning("ListOffsets on %s-%d: %s", hp.topic, hp.index, exc)
            pr.error_code = ec.KAFKA_STORAGE_ERROR

    # ------------------------------------------------------------------------------------------------ WriteTxnMarkers
    def write_txn_markers(self, request, conn) -> None:
        """A transaction coordinator's markers (KafkaApis ``handleWriteTxnMarkersRequest``: with an authorizer the
        principal needs ALTER or CLUSTER_ACTION on the cluster, else every partition is CLUSTER_AUTHORIZATION_FAILED,
        as Kafka's error response says): for each marker, each named partition this broker hosts gets a COMMIT or
        ABORT control batch with the producer id and epoch, appended as its leader; each is answered once the high
        watermark passes it (Kafka appends with acks=-1, timing out after request.timeout.ms; an ISR below
        min.insync.replicas is NOT_ENOUGH_REPLICAS before the append). A partition whose log is not here is
        UNKNOWN_TOPIC_OR_PARTITION, one this broker does not lead NOT_LEADER_OR_FOLLOWER. Hooks in
        ``marker_listeners`` hear of each marker appended (``(topic, partition, producer id, producer epoch,
        commit)``: a coordinator with pending transactional offsets completes them)."""
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
                                                         m.transaction_result)
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
        from kraftwire.metadata.controller.topics import name_error

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

    # ------------------------------------------------------------------------------------------------ ISR changes
    def _alter_partition(self, hp: Hosted, pending) -> None:
        """Propose ``pending`` (the new ISR) to the active controller (AlterPartition v3, with each member's broker
        epoch as the leader knows it)."""
        A = w.AlterPartitionRequest
        state = hp.state
        me = self.node.settings.node_id
        epochs = {me: self.replicas.broker_epoch()}
        for b, f in state.followers.items():
            epochs[b] = f.broker_epoch
        body = A(broker_id=me, broker_epoch=epochs[me], topics=[A.TopicData(topic_id=hp.topic_id, partitions=[
            A.PartitionData(partition_index=hp.index, leader_epoch=state.leader_epoch,
                            new_isr_with_epochs=[A.BrokerState(broker_id=b, broker_epoch=epochs.get(b, -1))
                                                 for b in pending.isr],
                            leader_recovery_state=0, partition_epoch=state.partition_epoch)])])

        def answered(response) -> None:
            if self.replicas.get(hp.topic, hp.index) is not hp:
                return  # the partition went away meanwhile
            error, data = response.error_code, None
            if not error:
                parts = [p for t in response.topics for p in t.partitions if p.partition_index == hp.index]
                if not parts:
                    error = ec.UNKNOWN_SERVER_ERROR
                else:
                    data = parts[0]
                    error = data.error_code
            self.replicas.alter_answered(hp, pending, error, data)

        self.kraft.call("AlterPartition", body, 3, answered)

    # ------------------------------------------------------------------------------------------------ DeleteRecords
    def delete_records(self, request, conn) -> None:
        R = w.DeleteRecordsResponse
        outcome: dict[tuple[str, int], tuple[int, int]] = {}
        access = self.node.authorizer
        for t in request.body.topics:
            deletable = access is None or access.topic(conn, t.name, Op.DELETE)
            for p in t.partitions:
                if not deletable:
                    outcome[(t.name, p.partition_index)] = ec.TOPIC_AUTHORIZATION_FAILED, -1
                else:
                    outcome[(t.name, p.partition_index)] = self._delete_one(t.name, p.partition_index, p.offset)
        # Kafka answers from hash maps: topics and partitions in their iteration order (java_order)
        topics = [R.DeleteRecordsTopicResult(name=name, partitions=[R.DeleteRecordsPartitionResult(
            partition_index=index, error_code=outcome[(name, index)][0], low_watermark=outcome[(name, index)][1])
            for index in indexes]) for name, indexes in topics_in_hashmap_order(outcome)]
        conn.send_response(R(throttle_time_ms=0, topics=topics), request.version, request.header.correlation_id)

    def _delete_one(self, name: str, index: int, offset: int) -> tuple[int, int]:
        hp = self.replicas.get(name, index)
        if hp is None:
            return self._unhosted_error(name, index), -1
        if hp.failed:
            return ec.KAFKA_STORAGE_ERROR, -1
        if hp.state.role != LEADER:
            return ec.NOT_LEADER_OR_FOLLOWER, -1
        error = self.replicas.delete_records(hp, offset)
        return error, -1 if error else hp.log.start_offset()  # Kafka: no low watermark with an error

    # ------------------------------------------------------------------------------------------------ DescribeLogDirs
    def describe_log_dirs(self, request, conn) -> None:
        R = w.DescribeLogDirsResponse
        asked = None
        if request.body.topics is not None:
            asked = {(t.topic, p) for t in request.body.topics for p in t.partitions}
        results = []
        for root in self.replicas.roots:
            offline = root in self.replicas.offline_roots
            by_topic: dict[str, list] = {}
            if not offline:
                for (name, index), hp in sorted(self.replicas.partitions.items()):
                    if hp.root != root or (asked is not None and (name, index) not in asked):
                        continue
                    by_topic.setdefault(name, []).append(R.DescribeLogDirsPartition(
                        partition_index=index, partition_size=hp.log.size_in_bytes(), offset_lag=0,
                        is_future_key=False))
            total = usable = -1
            if not offline:
                try:
                    st = os.statvfs(root)
                    total, usable = st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize
                except OSError:
                    pass
            results.append(R.DescribeLogDirsResult(
                error_code=ec.KAFKA_STORAGE_ERROR if offline else ec.NONE, log_dir=root,
                topics=[R.DescribeLogDirsTopic(name=n, partitions=ps) for n, ps in by_topic.items()],
                total_bytes=total, usable_bytes=usable))
        conn.send_response(R(throttle_time_ms=0, error_code=ec.NONE, results=results), request.version,
                           request.header.correlation_id)

    # ------------------------------------------------------------------------------------------------ KIP-858
    def _assign_replicas_to_dirs(self, wanted: dict, answered) -> None:
        """AssignReplicasToDirs v0 to the active controller: ``wanted`` is {directory id: {topic id: [index]}}."""
        A = w.AssignReplicasToDirsRequest
        epoch = self.replicas.broker_epoch()
        if epoch < 0:
            answered(ec.STALE_BROKER_EPOCH)
            return
        body = A(broker_id=self.node.settings.node_id, broker_epoch=epoch, directories=[
            A.DirectoryData(id=d, topics=[A.TopicData(topic_id=t, partitions=[A.PartitionData(partition_index=i)
                                                                            for i in sorted(idx)])
                                          for t, idx in per_dir.items()])
            for d, per_dir in wanted.items()])

        def done(response) -> None:
            codes = [response.error_code] + [p.error_code for d in response.directories for t in d.topics
                                             for p in t.partitions]
            answered(next((c for c in codes if c), ec.NONE))

        self.kraft.call("AssignReplicasToDirs", body, 0, done)

    # ------------------------------------------------------------------------------------------------ KIP-320
    def offset_for_leader_epoch(self, request, conn) -> None:
        R = w.OffsetForLeaderEpochResponse
        version = request.version
        topics = []
        access = self.node.authorizer
        replica = request.body.replica_id if version >= 3 else -1
        if access is not None and replica >= 0:  # a follower's request needs CLUSTER_ACTION, as its Fetch does
            cluster_ok = access.allows_cluster(conn, Op.CLUSTER_ACTION)
        for t in request.body.topics:
            parts = []
            if access is None:
                allowed = True
            else:
                allowed = cluster_ok if replica >= 0 else access.topic(conn, t.topic, Op.DESCRIBE)
            for p in t.partitions:
                e = R.EpochEndOffset(error_code=0, partition=p.partition, leader_epoch=-1, end_offset=-1)
                parts.append(e)
                if not allowed:
                    e.error_code = ec.TOPIC_AUTHORIZATION_FAILED
                    continue
                hp = self.replicas.get(t.topic, p.partition)
                if hp is None:
                    e.error_code = self._unhosted_error(t.topic, p.partition)
                    continue
                if hp.failed:
                    e.error_code = ec.KAFKA_STORAGE_ERROR
                    continue
                e.error_code = hp.state.epoch_error(p.current_leader_epoch if version >= 2 else -1)
                if e.error_code == ec.NONE:
                    e.leader_epoch, e.end_offset = hp.log.leader_epoch_end(p.leader_epoch)
            topics.append(R.OffsetForLeaderTopicResult(topic=t.topic, partitions=parts))
        conn.send_response(R(throttle_time_ms=0, topics=topics), version, request.header.correlation_id)


def _take(pd, records, limits: FetchLimits, limit: int) -> int:
    """Put what a partition read into ``pd`` if the answer's ``limits`` let it go out; the bytes it carries."""
    if not limits.fits(len(records), limit):
        return 0
    pd.records = records
    return len(records)


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


class ProducerIdBlocks:
    """InitProducerId on a broker: ids come from blocks the active controller allocates (``ProducerIdsRecord``)."""

    def __init__(self, node, kraft, replicas: ReplicaManager) -> None:
        self.node = node
        self.kraft = kraft
        self.replicas = replicas
        self.next_id = 0
        self.end = 0
        self.waiting: list = []
        self.asking = False

    def handle(self, request, conn) -> None:
        body = request.body
        R = w.InitProducerIdResponse
        version, cid = request.version, request.header.correlation_id
        if body.transactional_id is not None and getattr(self.node, "txn_apis", None) is not None:
            self.node.txn_apis.init_producer_id(request, conn)  # the transaction coordinator (txn_apis)
            return
        if body.transactional_id is not None:
            log.warning("refused InitProducerId for transactional id %r from %s: the transaction coordinator is not "
                        "running on this node yet (idempotent producers are served)", body.transactional_id,
                        conn.peer)
            conn.send_response(R(throttle_time_ms=0, error_code=ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                                 producer_id=-1, producer_epoch=-1), version, cid)
            return
        access = self.node.authorizer
        if access is not None and not (access.allows_cluster(conn, Op.IDEMPOTENT_WRITE)
                                       or access.allows_any(conn, ResourceType.TOPIC, Op.WRITE)):
            conn.send_response(R(throttle_time_ms=0, error_code=ec.CLUSTER_AUTHORIZATION_FAILED, producer_id=-1,
                                 producer_epoch=-1), version, cid)
            return
        # an idempotent producer naming its id and epoch (KIP-360) gets a new id too: Kafka's coordinator "blindly"
        # hands a new one to any request without a transactional id
        self.waiting.append((conn, version, cid))
        self._serve()

    def _serve(self) -> None:
        R = w.InitProducerIdResponse
        while self.waiting and self.next_id < self.end:
            conn, version, cid = self.waiting.pop(0)
            pid, self.next_id = self.next_id, self.next_id + 1
            conn.send_response(R(throttle_time_ms=0, error_code=0, producer_id=pid, producer_epoch=0), version, cid)
        if self.waiting and not self.asking:
            self._allocate()

    def _allocate(self) -> None:
        epoch = self.replicas.broker_epoch()
        if epoch < 0:
            self._fail(ec.COORDINATOR_LOAD_IN_PROGRESS)
            return
        self.asking = True
        body = w.AllocateProducerIdsRequest(broker_id=self.node.settings.node_id, broker_epoch=epoch)

        def done(response) -> None:
            self.asking = False
            if response.error_code:
                log.info("AllocateProducerIds: %s", ec.name_of(response.error_code))
                self._fail(ec.COORDINATOR_LOAD_IN_PROGRESS if response.error_code == ec.NOT_CONTROLLER
                           else response.error_code)
                return
            self.next_id = response.producer_id_start
            self.end = response.producer_id_start + response.producer_id_len
            self._serve()

        self.kraft.call("AllocateProducerIds", body, 0, done)

    def _fail(self, error: int) -> None:
        R = w.InitProducerIdResponse
        waiting, self.waiting = self.waiting, []
        for conn, version, cid in waiting:
            conn.send_response(R(throttle_time_ms=0, error_code=error, producer_id=-1, producer_epoch=-1), version,
                               cid)
