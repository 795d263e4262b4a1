"""The transaction coordinator on a KRaft broker: the asyncio edge around ``kraftwire.coordinator.txn.TxnShard``.

* **Where a transactional id lives.** Id ``x`` belongs to partition ``Utils.abs(x.hashCode()) % N`` of
  ``__transaction_state`` (``coordinator.partitioning``), and its coordinator is that partition's leader.
  FindCoordinator (key type 1) answers it; while the topic does not exist, the first such request asks the
  controller to create it (``transaction.state.log.num.partitions`` 50, ``transaction.state.log.replication.factor``
  3, ``min.insync.replicas`` = ``transaction.state.log.min.isr`` 2, compacted, uncompressed, no unclean election,
  ``transaction.state.log.segment.bytes``), telling the client COORDINATOR_NOT_AVAILABLE meanwhile, as Kafka does.
* **Hosting** is the coordinator runtime's (``coordinator.runtime`` with ``coordinator.txn.hosting.TxnKind``, on
  this broker's ISR partitions: ``server.coordinator_runtime``).
* **Loading.** When the image makes this broker the leader of a partition (a new leader epoch: Kafka's coordinator
  epoch), the partition is replayed from its log start into a fresh shard (COORDINATOR_LOAD_IN_PROGRESS meanwhile;
  NOT_COORDINATOR once this broker no longer leads it). Transactions found half-way (PrepareCommit/PrepareAbort)
  have their markers sent again once the high watermark reaches the loaded log end.
* **Writing.** A shard's records go to the partition as one batch with acks=all; the replies leave once the high
  watermark passes the batch. A failed write answers with Kafka's mapping (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE)
  and reloads the shard from the log, which undoes what the shard had assumed.
* **Markers.** Once a PrepareCommit/PrepareAbort is committed, ``txn_markers.MarkerSender`` sends WriteTxnMarkers (v2
  with the transaction's version where the leader serves it, else v1; the coordinator epoch = the partition's leader
  epoch) to each partition's leader on the inter-broker listener, retrying Kafka's retriable errors (and a missing or
  unreachable leader) until every partition has its marker; a partition whose topic is gone, or answering
  UNSUPPORTED_VERSION/UNSUPPORTED_FOR_MESSAGE_FORMAT, counts as done, and
  INVALID_PRODUCER_EPOCH/TRANSACTION_COORDINATOR_FENCED ends the sending (a newer coordinator or producer took over), as
  Kafka's TransactionMarkerRequestCompletionHandler decides. Then ``markers_written`` writes Complete*. EndTxn is
  answered once its Prepare* is committed, as Kafka answers, and the producer's next AddPartitionsToTxn or
  AddOffsetsToTxn arriving while those markers are still being written waits for them, ``NEXT_TXN_HOLD_S`` (20 ms) at
  most, instead of meeting CONCURRENT_TRANSACTIONS at once (``_hold_for_markers``).
* **Timers.** Every ``transaction.abort.timed.out.transaction.cleanup.interval.ms`` each shard's ``tick`` fences and
  aborts transactions open past their ``transaction.timeout.ms``; every
  ``transaction.remove.expired.transaction.cleanup.interval.ms`` transactional ids idle past
  ``transactional.id.expiration.ms`` are removed (a tombstone each), as Kafka's coordinator does.
* **Producer ids** come from the broker's blocks of the active controller (``producer_ids.ProducerIdBlocks``, the
  same blocks idempotent producers use); one spare id is kept ready so the pure shard can take one synchronously.

APIs: InitProducerId with a transactional id (delegated here by ``ProducerIdBlocks.handle``), AddPartitionsToTxn
v0-3 (the client versions) and v4-5 (KIP-890's batched form from partition leaders: ``txn_broker_apis``),
AddOffsetsToTxn v0-4, EndTxn v0-5 (v5 bumps the epoch at every end and answers the producer id and epoch: KIP-890
part 2, ``TxnShard.end_txn``; the request's version decides, whatever transaction.version the cluster finalized, as
Kafka's ``transactionVersionForEndTxn``), ListTransactions v0-2, DescribeTransactions v0 (``txn_admin_apis``).
TxnOffsetCommit goes to the group coordinator (``group_apis``), which holds its offsets until the
``__consumer_offsets`` partition gets the transaction's marker.

Not here: the PrepareEpochFence state kept in memory (the fence is written as the bumped epoch's PrepareAbort), a
per-transaction "pending state" (a request arriving while a write of the same id is in flight sees the new state at
once; the write's failure reloads the shard from the log).
"""

from __future__ import annotations

import asyncio
import logging
import time

from kraftwire import error_codes as ec
from kraftwire.coordinator.partitioning import TRANSACTION_TOPIC, partition_for
from kraftwire.coordinator.runtime import Hosted
from kraftwire.coordinator.txn.coordinator import (
    EPOCH_EXHAUSTED,
    Marker,
    TxnConfig,
    TxnResult,
    TxnShard,
    partitions_answer,
)
from kraftwire.coordinator.txn.hosting import TxnKind
from kraftwire.coordinator.txn.refusals import refusal_order
from kraftwire.metadata.features import TRANSACTION_VERSION
from kraftwire.protocol import messages as w
from kraftwire.security.authorizer import AclOperation as Op
from kraftwire.security.authorizer import ResourceType
from kraftwire.server.apis.txn_admin_apis import TxnAdminApis
from kraftwire.server.apis.txn_broker_apis import add_partitions_batched
from kraftwire.server.runtime.clocks import wall_ms as _now_ms
from kraftwire.server.runtime.coordinator_log import coordinator_of, create_internal_topic
from kraftwire.server.runtime.coordinator_runtime import BrokerRuntime
from kraftwire.server.runtime.txn_markers import MarkerLinks, MarkerSender

log = logging.getLogger("kraftwire.transactions")

WRITE_TIMEOUT_MS = 30_000  # Kafka waits request.timeout.ms for a transaction log append
NEXT_TXN_HOLD_S = 0.02  # the longest a producer's next transaction waits for its last one's markers


# ==================================================================================================== answers
#: the response versions from which a client knows PRODUCER_FENCED (KIP-588); below them Kafka answers
#: INVALID_PRODUCER_EPOCH instead (KafkaApis' "older clients could not understand the new PRODUCER_FENCED")
FENCED_SINCE = {w.InitProducerIdResponse: 4, w.EndTxnResponse: 2, w.AddPartitionsToTxnResponse: 2,
                w.AddOffsetsToTxnResponse: 2}


def for_version(body, version: int):
    """``body`` as a client of ``version`` understands it: PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH for the
    versions before ``FENCED_SINCE`` (in place: each answer is built for its request)."""
    since = FENCED_SINCE.get(type(body))
    if since is None or version >= since:
        return body
    if isinstance(body, w.AddPartitionsToTxnResponse):
        for t in body.results_by_topic_v3_and_below or ():
            for r in t.results_by_partition:
                if r.partition_error_code == ec.PRODUCER_FENCED:
                    r.partition_error_code = ec.INVALID_PRODUCER_EPOCH
    elif body.error_code == ec.PRODUCER_FENCED:
        body.error_code = ec.INVALID_PRODUCER_EPOCH
    return body


# ==================================================================================================== hosting
class _IdSink:
    """Stands for a client connection in ``ProducerIdBlocks``' queue: the id it is given goes to ``got``."""

    peer = "txn-coordinator"

    def __init__(self, got) -> None:
        self.got = got

    def send_response(self, body, version, cid) -> None:
        self.got(body.error_code, body.producer_id)


class TxnApis(TxnAdminApis):
    def __init__(self, node, metadata, replicas, kraft, ids) -> None:
        self.node = node
        self.md = metadata
        self.replicas = replicas
        self.kraft = kraft
        self.ids = ids  # producer_ids.ProducerIdBlocks
        c = node.settings.config
        self.max_timeout_ms = c.transaction_max_timeout_ms
        self.route_error = ec.NOT_COORDINATOR
        self.spare: list[int] = []
        self._want_ids: list = []  # callbacks waiting for a spare producer id
        self._creating = False
        self._ticker: asyncio.Task | None = None
        self.links = MarkerLinks(node)
        self.markers = MarkerSender(self._leader_of, self.links.call)
        #: transactional id -> what waits for its markers to be written (``_hold_for_markers``)
        self._marking: dict[str, list] = {}
        self.runtime = BrokerRuntime(TxnKind(self._config, self._take_id, self._send_markers), self._send, replicas,
                                     metadata, WRITE_TIMEOUT_MS)
        self.runtime.on_hosting = self._start_timers

    @property
    def shards(self) -> dict:
        """The hosted ``__transaction_state`` partitions (``coordinator.runtime.Hosted``), by partition."""
        return self.runtime.hosted

    def register(self) -> None:
        d = self.node.dispatcher
        d.serve("AddPartitionsToTxn", self.add_partitions_to_txn)
        d.serve("AddOffsetsToTxn", self.add_offsets_to_txn)
        d.serve("EndTxn", self.end_txn)
        d.serve("ListTransactions", self.list_transactions)
        d.serve("DescribeTransactions", self.describe_transactions)

    def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        for task in list(self.markers.tasks):
            task.cancel()
        self.runtime.close()
        links = self.links
        if links.conns:
            try:
                asyncio.get_running_loop().create_task(links.close())
            except RuntimeError:
                pass

    def transaction_version(self) -> int:
        """The finalized transaction.version of this broker's image."""
        return self.md.image.features.get(TRANSACTION_VERSION, 0)

    def _config(self) -> TxnConfig:
        return TxnConfig(max_timeout_ms=self.max_timeout_ms, transaction_version=self.transaction_version())

    # ================================================================================================ routing
    def partitions(self) -> int:
        topic = self.md.image.topic(TRANSACTION_TOPIC)
        return (len(topic.partitions) if topic is not None
                else self.node.settings.config.transaction_state_log_num_partitions)

    def _route(self, transactional_id: str) -> tuple[int, Hosted | None]:
        """The id's partition and its hosted shard (None: ``route_error`` says why). The shard writes at the
        transaction.version finalized now, as Kafka picks the value version at each append: a live upgrade takes
        effect without a reload."""
        p = partition_for(transactional_id, self.partitions())
        hosted, self.route_error = self.runtime.route(p)
        if hosted is not None and hosted.shard.config.transaction_version != self.transaction_version():
            hosted.shard.config = self._config()
        return p, hosted

    def coordinator(self, key: str, listener: str):
        """FindCoordinator's (error, message, node id, host, port) for a transactional id."""
        found = coordinator_of(self.md.image, TRANSACTION_TOPIC, key, listener)
        if found is None:
            self._create_topic()
            return (ec.COORDINATOR_NOT_AVAILABLE, None, -1, "", -1)
        return found

    def _create_topic(self) -> None:
        if self._creating:
            return
        self._creating = True
        c = self.node.settings.config

        def done() -> None:
            self._creating = False

        create_internal_topic(self.kraft, TRANSACTION_TOPIC, c.transaction_state_log_num_partitions,
                              c.transaction_state_log_replication_factor,
                              [("cleanup.policy", "compact"), ("compression.type", "uncompressed"),
                               ("min.insync.replicas", str(c.transaction_state_log_min_isr)),
                               ("unclean.leader.election.enable", "false"),
                               ("segment.bytes", str(c.transaction_state_log_segment_bytes))], done)

    def _leader_of(self, topic: str, partition: int) -> int | None:
        t = self.md.image.topic(topic)
        if t is None or partition not in t.partitions:
            return None
        return t.partitions[partition].leader

    # ================================================================================================ timers
    def _start_timers(self) -> None:
        if self.shards and self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick_loop())

    async def _tick_loop(self) -> None:
        c = self.node.settings.config
        interval = c.transaction_abort_timed_out_transaction_cleanup_interval_ms / 1000
        expire_every = c.transaction_remove_expired_transaction_cleanup_interval_ms / 1000
        next_expiry = time.monotonic() + expire_every
        while True:
            await asyncio.sleep(min(interval, max(0.01, next_expiry - time.monotonic())))
            self.tick()
            if time.monotonic() >= next_expiry:
                next_expiry = time.monotonic() + expire_every
                self.expire()

    def _each_shard(self, call, what: str) -> None:
        for p, loaded in list(self.shards.items()):
            if loaded.state != "ACTIVE" or self.shards.get(p) is not loaded:
                continue
            try:
                self._write(p, call(loaded.shard))
            except Exception:  # a bug must not end the timers of every other partition
                log.exception("transaction coordinator %s of %s-%d failed", what, TRANSACTION_TOPIC, p)

    def tick(self) -> None:
        """Fence and abort the transactions open past their timeout."""
        now = _now_ms()

        def call(shard: TxnShard) -> TxnResult:
            result = shard.tick(now)
            for m in result.markers:
                log.info("transaction of %s timed out: fenced (epoch %d) and aborted", m.transactional_id,
                         m.producer_epoch)
            return result

        self._each_shard(call, "tick")

    def expire(self) -> None:
        """Remove the transactional ids idle past ``transactional.id.expiration.ms``."""
        now, ms = _now_ms(), self.node.settings.config.transactional_id_expiration_ms
        self._each_shard(lambda shard: shard.expire(now, ms), "expiry")

    # ================================================================================================ writing
    @staticmethod
    def _send(reply, body) -> None:
        conn, version, cid = reply.token
        conn.send_response(for_version(body, version), version, cid)

    def _reply(self, token, body) -> None:
        conn, version, cid = token
        conn.send_response(for_version(body, version), version, cid)

    def _write(self, p: int, result: TxnResult) -> None:
        """Append ``result``'s records, answer once committed, then send its markers (the coordinator runtime)."""
        self.runtime.write(p, result, _now_ms())

    def _send_markers(self, loaded: Hosted, marker: Marker) -> None:
        """Send a prepared transaction's markers, then write Complete*; what waits for them (the producer's next
        transaction: ``_hold_for_markers``) goes on once Complete* is decided (the shard is Complete* from then on,
        its write under way), or once the sending stops."""
        p = loaded.partition
        tid = marker.transactional_id
        waiting = self._marking.setdefault(tid, [])

        def current() -> bool:
            return self.shards.get(p) is loaded

        def done(ok: bool) -> None:
            if ok and current():
                self._write(p, loaded.shard.markers_written(tid, marker.producer_id, marker.producer_epoch,
                                                            _now_ms()))
            if self._marking.get(tid) is waiting:
                del self._marking[tid]
            for go_on in waiting:
                go_on()

        if not marker.partitions:
            done(True)
            return
        self.markers.send(marker, loaded.epoch, done, current)

    def _hold_for_markers(self, loaded: Hosted, transactional_id: str, producer_id: int, epoch: int,
                          again) -> bool:
        """Whether the request was held: the producer's last transaction is still having its markers written (its
        EndTxn was answered once PrepareCommit/PrepareAbort was committed, as Kafka answers), so this request
        starting the next one would meet CONCURRENT_TRANSACTIONS, which librdkafka and the Java producer retry after
        20 ms — most of a small transaction's time on RF-3 topics. ``again()`` runs it once the markers are written
        (the transaction complete), or after ``NEXT_TXN_HOLD_S``, whichever comes first; it then answers as the
        shard says, CONCURRENT_TRANSACTIONS included (a slow partition leader stalls nobody longer than that)."""
        waiting = self._marking.get(transactional_id)
        if waiting is None or not loaded.shard.completing(transactional_id, producer_id, epoch):
            return False
        ran = []

        def go_on() -> None:
            if not ran:
                ran.append(True)
                again()

        waiting.append(go_on)
        asyncio.get_running_loop().call_later(NEXT_TXN_HOLD_S, go_on)
        return True

    # ================================================================================================ producer ids
    def _take_id(self) -> int:
        return self.spare.pop()

    def _with_spare_id(self, then, fail) -> None:
        """Run ``then()`` once a spare producer id is ready (at once when one is); ``fail(code)`` if none comes."""
        if self.spare:
            then()
            return
        self._want_ids.append((then, fail))
        if len(self._want_ids) > 1:
            return  # an id is on its way

        def got(code: int, pid: int) -> None:
            waiting, self._want_ids = self._want_ids, []
            if code:
                for _then, fail_ in waiting:
                    fail_(code)
                return
            self.spare.append(pid)
            for then_, fail_ in waiting:
                self._with_spare_id(then_, fail_)  # each may take the spare; the next one then asks again

        self.ids.waiting.append((_IdSink(got), 0, 0))
        self.ids._serve()

    # ================================================================================================ the APIs
    def _may(self, conn, transactional_id: str, operation: int) -> bool:
        access = self.node.authorizer
        return access is None or access.allows(conn, ResourceType.TRANSACTIONAL_ID, transactional_id, operation)

    def init_producer_id(self, request, conn) -> None:
        """InitProducerId with a transactional id (``ProducerIdBlocks.handle`` hands it over)."""
        body, version = request.body, request.version
        token = (conn, version, request.header.correlation_id)
        R = w.InitProducerIdResponse
        tid = body.transactional_id

        def answer(code: int) -> None:
            self._reply(token, R(throttle_time_ms=0, error_code=code, producer_id=-1, producer_epoch=-1))

        if not self._may(conn, tid, Op.WRITE):
            answer(ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            return
        expected = (body.producer_id, body.producer_epoch) if version >= 3 else None  # the shard judges the pair

        def run() -> None:
            p, loaded = self._route(tid)  # routed again: the shard may have moved while the id was fetched
            if loaded is None:
                answer(self.route_error)
                return
            self._write(p, loaded.shard.init_producer_id(tid, body.transaction_timeout_ms, expected, token,
                                                         _now_ms()))

        _p, loaded = self._route(tid)
        if loaded is None:
            answer(self.route_error)
            return
        self._with_spare_id(run, answer)

    def add_partitions_to_txn(self, request, conn, held: bool = False) -> None:
        if request.version >= 4:  # from partition leaders (KIP-890): batched, VerifyOnly
            add_partitions_batched(self, request, conn)
            return
        body, version = request.body, request.version
        token = (conn, version, request.header.correlation_id)
        tid = body.v3_and_below_transactional_id
        wanted = [(t.name, p) for t in body.v3_and_below_topics for p in t.partitions]
        access = self.node.authorizer
        image = self.md.image

        def answer(codes: dict) -> None:
            self._reply(token, partitions_answer(wanted, codes))

        if not self._may(conn, tid, Op.WRITE):
            answer({tp: ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED for tp in wanted})
            return
        refused = {}
        for topic, p in wanted:
            if access is not None and not access.topic(conn, topic, Op.WRITE):
                refused[(topic, p)] = ec.TOPIC_AUTHORIZATION_FAILED
            elif image.topic(topic) is None or p not in image.topic(topic).partitions:
                refused[(topic, p)] = ec.UNKNOWN_TOPIC_OR_PARTITION
        if refused:  # Kafka: the others are not attempted; in Kafka's order (coordinator.txn.refusals)
            wanted = [(topic, p) for topic, ps in refusal_order(wanted) for p in ps]
            answer({tp: refused.get(tp, ec.OPERATION_NOT_ATTEMPTED) for tp in wanted})
            return
        p, loaded = self._route(tid)
        if loaded is None:
            answer({tp: self.route_error for tp in wanted})
            return
        pid, epoch = body.v3_and_below_producer_id, body.v3_and_below_producer_epoch
        if not held and self._hold_for_markers(loaded, tid, pid, epoch,
                                               lambda: self.add_partitions_to_txn(request, conn, held=True)):
            return
        self._write(p, loaded.shard.add_partitions(tid, pid, epoch, wanted, token, _now_ms(), version=version))

    def add_offsets_to_txn(self, request, conn, held: bool = False) -> None:
        body, version = request.body, request.version
        token = (conn, version, request.header.correlation_id)

        def answer(code: int) -> None:
            self._reply(token, w.AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=code))

        if not self._may(conn, body.transactional_id, Op.WRITE):
            answer(ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            return
        access = self.node.authorizer
        if access is not None and not access.group(conn, body.group_id, Op.READ):
            answer(ec.GROUP_AUTHORIZATION_FAILED)
            return
        p, loaded = self._route(body.transactional_id)
        if loaded is None:
            answer(self.route_error)
            return
        if not held and self._hold_for_markers(loaded, body.transactional_id, body.producer_id, body.producer_epoch,
                                               lambda: self.add_offsets_to_txn(request, conn, held=True)):
            return
        group_partitions = self.node.group_apis.partitions() if self.node.group_apis is not None else (
            self.node.settings.config.offsets_topic_num_partitions)
        self._write(p, loaded.shard.add_offsets(body.transactional_id, body.producer_id, body.producer_epoch,
                                                partition_for(body.group_id, group_partitions), token, _now_ms()))

    def end_txn(self, request, conn) -> None:
        body, version = request.body, request.version
        token = (conn, version, request.header.correlation_id)

        def answer(code: int) -> None:
            self._reply(token, w.EndTxnResponse(throttle_time_ms=0, error_code=code))

        if not self._may(conn, body.transactional_id, Op.WRITE):
            answer(ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            return
        tid = body.transactional_id

        def run() -> None:
            p, loaded = self._route(tid)  # routed again: the shard may have moved while an id was fetched
            if loaded is None:
                answer(self.route_error)
                return
            self._write(p, loaded.shard.end_txn(tid, body.producer_id, body.producer_epoch, body.committed, token,
                                                _now_ms(), client_version=2 if version >= 5 else 0))

        _p, loaded = self._route(tid)
        if loaded is None:
            answer(self.route_error)
            return
        t = loaded.shard.txns.get(tid)
        if version >= 5 and t is not None and t.producer_epoch >= EPOCH_EXHAUSTED:
            self._with_spare_id(run, answer)  # this end moves to a new producer id (TV2): one must be at hand
        else:
            run()


