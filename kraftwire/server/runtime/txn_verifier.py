"""A partition leader asks transaction coordinators to verify transactional Produce (KIP-890 part 1): Kafka's
``AddPartitionsToTxnManager`` and the verification half of ``ReplicaManager.handleProduceAppend``.

* **When.** ``transaction.partition.verification.enable`` (default true) and a Produce with a transactional id:
  each partition this broker leads whose transactional batches come from a producer with no open transaction
  there starts a verification (``ReplicaManager.start_verification``: a guard, ``kraftwire.replica.verification``).
  The request's batches must all belong to one producer (id and epoch), else every partition is answered
  INVALID_PRODUCER_ID_MAPPING, as Kafka throws. Partitions that need nothing, and requests with no such partition,
  go on at once.
* **Asking.** The partitions go to the coordinator of the transactional id — the leader of its
  ``__transaction_state`` partition, on the inter-broker listener — as one transaction of an AddPartitionsToTxn
  request with VerifyOnly (v5, or v4 if the coordinator's ApiVersions says so). Requests are batched per coordinator:
  one in flight per node, and whatever arrives meanwhile goes out together in the next. A second verification of a
  transactional id already waiting for the same node: a newer epoch fails the waiting one with
  INVALID_PRODUCER_EPOCH, an older epoch is failed itself with INVALID_PRODUCER_EPOCH, another producer id at the
  same epoch fails the waiting one with NETWORK_EXCEPTION; the same producer and epoch *joins* the waiting one (Kafka
  fails the waiting one with NETWORK_EXCEPTION there, but Kafka reads no further request of a connection until its
  current one is answered, while kraftwire does: a producer's pipelined Produce for the same partitions would
  otherwise fail its predecessor every time). For the same reason a waiting Produce whose partitions have the
  producer's transaction open by the time its request would leave (an earlier Produce was verified and appended
  meanwhile) goes on without asking, in order — so a transaction is verified about once per partition, as in Kafka.
* **Answers** (``AddPartitionsToTxnHandler``): a partition's PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH and
  TRANSACTION_ABORTABLE becomes INVALID_TXN_STATE unless the Produce was v11+ (which knows TRANSACTION_ABORTABLE); a
  top-level error goes to every partition (CLUSTER_AUTHORIZATION_FAILED as INVALID_TXN_STATE); a coordinator
  without AddPartitionsToTxn v4 skips the verification; a lost connection or timeout (``request.timeout.ms``, 30 s)
  is NETWORK_EXCEPTION; no coordinator (no ``__transaction_state`` leader with an inter-broker endpoint)
  COORDINATOR_NOT_AVAILABLE. A transaction or partition missing from an answer counts as NETWORK_EXCEPTION
  (Kafka would leave it unanswered or append it unverified).
* **Produce's errors** (``postVerificationCallback``): INVALID_TXN_STATE with "Partition was not added to the
  transaction"; the retriable CONCURRENT_TRANSACTIONS, NETWORK_EXCEPTION, COORDINATOR_LOAD_IN_PROGRESS,
  COORDINATOR_NOT_AVAILABLE and NOT_COORDINATOR as NOT_ENOUGH_REPLICAS ("Unable to verify the partition has been
  added to the transaction. Underlying error: ..."), which older clients retry without a metadata refresh; the rest
  as they are. A verified partition is appended with its guard; a marker written meanwhile voids the guard and the
  append is refused INVALID_TXN_STATE.
* **Adding** (KIP-890 part 2): a transaction.version 2 client's Produce v12 and TxnOffsetCommit v5 never add
  their partitions themselves (no AddPartitionsToTxn, no AddOffsetsToTxn): the leader's request then asks the
  coordinator to *add* them (VerifyOnly false; Kafka's ``TransactionSupportedOperation.addPartition``), through the
  same batching; a transactional id waiting with both kinds is added (a partition it only verifies is one its
  producer writes to anyway).
* **TxnOffsetCommit** (``txn_offset_commit``, Kafka's ``handleTxnCommitOffsets``): the group coordinator verifies the
  group's ``__consumer_offsets`` partition the same way, through the same batching, before appending a producer's
  offsets there; TRANSACTION_ABORTABLE stays so for v4+, and the errors are answered as Kafka's
  ``maybeConvertOffsetCommitError`` maps them (NETWORK_EXCEPTION as COORDINATOR_LOAD_IN_PROGRESS, ...).
"""

from __future__ import annotations

import asyncio
import logging

from kraftwire import error_codes as ec
from kraftwire.coordinator.partitioning import TRANSACTION_TOPIC, partition_for
from kraftwire.metadata import answers
from kraftwire.protocol import messages as w
from kraftwire.protocol.served import key as api_key
from kraftwire.records import read_batches
from kraftwire.metadata.features import TRANSACTION_VERSION
from kraftwire.replica.partition import LEADER
from kraftwire.replica.verification import adds_partitions, has_ongoing_transaction
from kraftwire.server.edge.broker_links import BrokerLinks

log = logging.getLogger("kraftwire.txn_verifier")

#: Kafka's request.timeout.ms default, the inter-broker send thread's timeout
VERIFY_TIMEOUT_S = 30.0
#: AddPartitionsToTxn versions a broker sends (Kafka's ``forBroker``: 4 to the latest)
BROKER_VERSIONS = (4, 5)
#: the request versions from which a client leaves adding its partitions to the leader (transaction.version 2)
#: verification errors a Produce answers as NOT_ENOUGH_REPLICAS (retried by every client, no metadata refresh)
RETRY_AS_NOT_ENOUGH_REPLICAS = frozenset({ec.CONCURRENT_TRANSACTIONS, ec.NETWORK_EXCEPTION,
                                          ec.COORDINATOR_LOAD_IN_PROGRESS, ec.COORDINATOR_NOT_AVAILABLE,
                                          ec.NOT_COORDINATOR})


class Verified:
    """A Produce request's verification outcome: ``errors`` ((topic, partition) -> (code, message)) for partitions
    not to append, ``guards`` ((topic, partition) -> guard) for those to append with a guard."""

    __slots__ = ("errors", "guards")

    def __init__(self, errors: dict | None = None, guards: dict | None = None) -> None:
        self.errors = errors or {}
        self.guards = guards or {}


def produce_error(code: int) -> tuple[int, str | None]:
    """A verification error as the Produce answers it (Kafka's ``postVerificationCallback``)."""
    if code == ec.INVALID_TXN_STATE:
        return code, "Partition was not added to the transaction"
    if code in RETRY_AS_NOT_ENOUGH_REPLICAS:
        return ec.NOT_ENOUGH_REPLICAS, ("Unable to verify the partition has been added to the transaction. "
                                        f"Underlying error: {ec.name_of(code)}")
    return code, None


def offset_commit_error(code: int) -> int:
    """A verification error as a TxnOffsetCommit answers it (Kafka's ``maybeConvertOffsetCommitError``)."""
    if code == ec.NETWORK_EXCEPTION:
        return ec.COORDINATOR_LOAD_IN_PROGRESS  # retried by every client without a coordinator lookup
    if code in (ec.UNKNOWN_TOPIC_OR_PARTITION, ec.NOT_ENOUGH_REPLICAS, ec.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
        return ec.COORDINATOR_NOT_AVAILABLE
    if code in (ec.NOT_LEADER_OR_FOLLOWER, ec.KAFKA_STORAGE_ERROR):
        return ec.NOT_COORDINATOR
    if code in (ec.MESSAGE_TOO_LARGE, ec.RECORD_LIST_TOO_LARGE, ec.INVALID_FETCH_SIZE):
        return ec.INVALID_COMMIT_OFFSET_SIZE
    return code


def coordinator_error(code: int, generic: bool) -> int:
    """A coordinator's partition answer as the leader passes it on (``AddPartitionsToTxnHandler``)."""
    if code == ec.PRODUCER_FENCED:
        return ec.INVALID_PRODUCER_EPOCH
    if code == ec.TRANSACTION_ABORTABLE and not generic:
        return ec.INVALID_TXN_STATE
    return code


def open_at(hp, producer_id: int, epoch: int) -> bool:
    """Whether the producer's transaction is open on the hosted partition ``hp`` at ``epoch`` (nothing to add)."""
    return has_ongoing_transaction(hp.producer_table(), hp.txn_state(), producer_id, epoch)


def transactional_producers(records) -> tuple[set, int | None]:
    """({(producer id, epoch)} of the transactional batches, the first batch's base sequence) of one partition's
    records; (set(), None) for none or an unreadable set (the append refuses it)."""
    if not records:
        return set(), None
    producers, first_seq = set(), None
    try:
        for i, b in enumerate(read_batches(memoryview(records), validate=False)):  # headers only
            if i == 0:
                first_seq = b.base_sequence
            if b.producer_id >= 0 and b.is_transactional:
                producers.add((b.producer_id, b.producer_epoch))
    except Exception:  # noqa: BLE001 - a corrupt set is the append's to refuse (CORRUPT_MESSAGE)
        return set(), None
    return producers, first_seq


class _Waiting:
    """One transactional id's verification waiting for its coordinator: the partitions and who asked."""

    __slots__ = ("transactional_id", "producer_id", "epoch", "partitions", "asked", "done", "adds")

    def __init__(self, transactional_id: str, producer_id: int, epoch: int) -> None:
        self.transactional_id = transactional_id
        self.producer_id, self.epoch = producer_id, epoch
        self.adds = False  # whether the coordinator adds the partitions (a TV2 client's) instead of verifying them
        self.partitions: list[tuple[str, int]] = []
        self.asked: list[tuple[list, object, bool, object]] = []  # (partitions, callback, generic, needed)
        self.done = False

    def add(self, partitions, callback, generic: bool, needed=None) -> None:
        for tp in partitions:
            if tp not in self.partitions:
                self.partitions.append(tp)
        self.asked.append((list(partitions), callback, generic, needed))

    def prune(self) -> bool:
        """Answer at once, in order, the first askers none of whose partitions needs asking any more (``needed``:
        a Produce that came while an earlier one of the producer was being verified finds the transaction open
        once that one is appended, as Kafka — reading a connection's next request only after answering the
        last — would find it); True while something is left to ask."""
        while self.asked:
            partitions, callback, _generic, needed = self.asked[0]
            if needed is None or any(needed(tp) for tp in partitions):
                break
            self.asked.pop(0)
            _call(callback, {})
        self.partitions = list(dict.fromkeys(tp for asked in self.asked for tp in asked[0]))
        self.done = not self.asked
        return not self.done

    def answer(self, codes: dict) -> None:
        """``codes``: (topic, partition) -> the coordinator's code (missing: NETWORK_EXCEPTION)."""
        self.done = True
        for partitions, callback, generic, _needed in self.asked:
            errors = {}
            for tp in partitions:
                code = coordinator_error(codes.get(tp, ec.NETWORK_EXCEPTION), generic)
                if code != ec.NONE:
                    errors[tp] = code
            _call(callback, errors)

    def fail(self, code: int) -> None:
        self.answer({tp: code for tp in self.partitions})

    def skip(self) -> None:
        self.done = True
        for _partitions, callback, _generic, _needed in self.asked:
            _call(callback, {})


def _call(callback, errors: dict) -> None:
    try:
        callback(errors)
    except Exception:  # one Produce's failure must not keep the others of a batch unanswered
        log.exception("a verification callback failed")


class _NotSupported(Exception):
    """The coordinator has no AddPartitionsToTxn v4+: verification is skipped, as Kafka does."""


class _Links:
    """AddPartitionsToTxn v4-5 to transaction coordinators over the broker's inter-broker connections
    (``BrokerLinks``), at the version each one's ApiVersions allows (learnt when its connection opens); one request
    at a time per broker (the sender keeps one in flight per node anyway)."""

    def __init__(self, node) -> None:
        self.links = BrokerLinks(node, "txn-verifier", prepare=_verify_version)

    @property
    def conns(self):
        return self.links.conns

    async def call(self, broker: int, body):
        """(version, response); raises ``_NotSupported`` or what the connection raised."""

        async def send(conn, version):
            if version is None:
                return None  # the connection stays: the broker's versions will not change under it
            return version, await conn.request(body, version, timeout=VERIFY_TIMEOUT_S)

        answer = await self.links.request(broker, send)
        if answer is None:
            raise _NotSupported(broker)
        return answer

    async def close(self) -> None:
        await self.links.close()


async def _verify_version(conn) -> int | None:
    """The AddPartitionsToTxn version to verify with, from the broker's ApiVersions (None: it has no v4+)."""
    versions = await conn.request(w.ApiVersionsRequest(client_software_name="kraftwire", client_software_version="1"),
                                  3, timeout=VERIFY_TIMEOUT_S)
    wanted = api_key("AddPartitionsToTxn")
    top = next((a.max_version for a in versions.api_keys if a.api_key == wanted), -1)
    return min(top, BROKER_VERSIONS[1]) if top >= BROKER_VERSIONS[0] else None


class TxnVerifier:
    def __init__(self, node, replicas) -> None:
        self.node = node
        self.replicas = replicas
        self.links = _Links(node)
        self.waiting: dict[int, dict[str, _Waiting]] = {}  # coordinator broker -> transactional id -> waiting
        self.in_flight: set[int] = set()
        self.tasks: set[asyncio.Task] = set()
        self.closed = False
        #: partitions verified / refused by a coordinator (what Kafka's VerificationFailureRate counts)
        self.verified = 0
        self.failures = 0

    def _transaction_version(self) -> int:
        """The finalized transaction.version of this broker's image."""
        return self.node.metadata.image.features.get(TRANSACTION_VERSION, 0)

    # ------------------------------------------------------------------------------------------------ Produce
    def produce(self, body, version: int, then, writable=None) -> Verified | None:
        """The verification a Produce needs: its ``Verified`` at once when nothing is to be asked, else None and
        ``then(Verified)`` once the coordinator answered. ``writable(topic)``: whether the request may write the
        topic at all (the others are refused before any verification, as Kafka authorizes first)."""
        tid = body.transactional_id
        if tid is None:
            return Verified()  # refused whole when it holds transactional batches (partition_apis)
        producers, firsts = set(), {}
        for t in body.topic_data:
            for p in t.partition_data:
                found, first_seq = transactional_producers(p.records)
                if found:
                    producers |= found
                    firsts[(t.name, p.index)] = first_seq
        if len(producers) > 1:
            return Verified({(t.name, p.index): (ec.INVALID_PRODUCER_ID_MAPPING,
                                                 "Transactional records contained more than one producer ID")
                             for t in body.topic_data for p in t.partition_data})
        add = adds_partitions("Produce", version, self._transaction_version())
        if not producers or not (add or self.replicas.verification_enabled()):
            return Verified()  # a TV2 client's partitions are added whether or not verification is on
        ((pid, epoch),) = producers
        guards = {}
        for (topic, index), first_seq in firsts.items():
            hp = self.replicas.get(topic, index)
            if writable is not None and not writable(topic):
                continue
            if hp is None or hp.failed or hp.state.role != LEADER:
                continue  # the append answers it (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, ...)
            try:
                guard = self.replicas.start_verification(hp, pid, first_seq, epoch, add)
            except Exception as exc:  # noqa: BLE001 - the log could not be folded: the append reports it
                log.debug("no verification for %s-%d: %r", topic, index, exc)
                continue
            if guard is not None:
                guards[(topic, index)] = guard
        if not guards:
            return Verified()

        def answered(errors: dict) -> None:
            then(Verified({tp: produce_error(code) for tp, code in errors.items()}, guards))

        def needed(tp) -> bool:  # no open transaction of the producer there yet
            hp = self.replicas.get(*tp)
            try:
                return hp is not None and not hp.failed and not open_at(hp, pid, epoch)
            except Exception:  # noqa: BLE001 - the append reports what is wrong with the log
                return False

        self.verify(tid, pid, epoch, list(guards), answered, generic=version >= 11, needed=needed, add=add)
        return None

    # ------------------------------------------------------------------------------------------------ TxnOffsetCommit
    def txn_offset_commit(self, transactional_id: str, producer_id: int, epoch: int, hp, sequence: int,
                          version: int, then) -> Verified | None:
        """The verification a TxnOffsetCommit needs before the group coordinator appends the producer's offsets to
        ``hp`` (its ``__consumer_offsets`` partition, led here) as a transactional batch starting at ``sequence``
        (Kafka's ``handleTxnCommitOffsets``): its ``Verified`` at once when nothing is to be asked (verification
        off, or the producer's transaction already open there), else None and ``then(Verified)`` once the
        coordinator answered. An error is (code, None) as the TxnOffsetCommit answers it: TRANSACTION_ABORTABLE only
        for v4+ (INVALID_TXN_STATE before), then ``offset_commit_error``."""
        tp = (hp.topic, hp.index)
        add = adds_partitions("TxnOffsetCommit", version, self._transaction_version())
        if transactional_id is None or not (add or self.replicas.verification_enabled()):
            return Verified()
        try:
            guard = self.replicas.start_verification(hp, producer_id, sequence, epoch, add)
        except Exception as exc:  # noqa: BLE001 - the log could not be folded (Kafka: the partition's error)
            log.debug("no verification for %s-%d: %r", tp[0], tp[1], exc)
            return Verified({tp: (ec.NOT_COORDINATOR, None)})
        if guard is None:
            return Verified()

        def answered(errors: dict) -> None:
            then(Verified({p: (offset_commit_error(code), None) for p, code in errors.items()}, {tp: guard}))

        def needed(p) -> bool:  # no open transaction of the producer there yet
            try:
                return not hp.failed and not open_at(hp, producer_id, epoch)
            except Exception:  # noqa: BLE001 - the append reports what is wrong with the log
                return False

        self.verify(transactional_id, producer_id, epoch, [tp], answered, generic=version >= 4, needed=needed,
                    add=add)
        return None

    # ------------------------------------------------------------------------------------------------ asking
    def coordinator(self, transactional_id: str) -> int | None:
        """The broker leading the id's ``__transaction_state`` partition, when it has an inter-broker endpoint."""
        image = self.node.metadata.image
        topic = image.topic(TRANSACTION_TOPIC)
        if topic is None or not topic.partitions:
            return None
        reg = topic.partitions.get(partition_for(transactional_id, len(topic.partitions)))
        if reg is None or reg.leader < 0:
            return None
        if answers.broker_endpoint(image, reg.leader, self.node.settings.inter_broker_listener) is None:
            return None
        return reg.leader

    def verify(self, transactional_id: str, producer_id: int, epoch: int, partitions, callback, *,
               generic: bool = False, needed=None, add: bool = False) -> None:
        """Ask whether ``partitions`` are in the transaction (``add``: have them added to it);
        ``callback({(topic, partition): error})`` with the partitions not verified (empty: all verified).
        ``needed(partition)``: whether it still needs asking when the request is about to leave (None: always)."""
        node = self.coordinator(transactional_id)
        if node is None or self.closed:
            _call(callback, {tp: ec.COORDINATOR_NOT_AVAILABLE for tp in partitions})
            return
        txns = self.waiting.setdefault(node, {})
        current = txns.get(transactional_id)
        if current is not None:
            if current.epoch > epoch:
                self.failures += len(partitions)
                _call(callback, {tp: ec.INVALID_PRODUCER_EPOCH for tp in partitions})
                return
            if current.epoch < epoch or current.producer_id != producer_id:
                del txns[transactional_id]
                self.failures += len(current.partitions)
                current.fail(ec.INVALID_PRODUCER_EPOCH if current.epoch < epoch else ec.NETWORK_EXCEPTION)
                current = None
        if current is None:
            current = txns[transactional_id] = _Waiting(transactional_id, producer_id, epoch)
        current.add(partitions, callback, generic, needed)
        current.adds = current.adds or add
        self._kick(node)

    def _kick(self, node: int) -> None:
        if node in self.in_flight or not self.waiting.get(node) or self.closed:
            return
        self.in_flight.add(node)
        task = asyncio.get_running_loop().create_task(self._send(node))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _send(self, node: int) -> None:
        """One request to ``node`` with every transaction waiting for it (those arriving until this task runs
        join it), then the next one if more arrived meanwhile."""
        try:
            txns = {tid: w_ for tid, w_ in self.waiting.pop(node, {}).items() if w_.prune()}
            if txns:
                try:
                    await self._exchange(node, txns)
                except Exception:  # a bug must not leave Produce requests unanswered
                    log.exception("verifying with broker %d failed", node)
                    for waiting in txns.values():
                        if not waiting.done:
                            waiting.fail(ec.NETWORK_EXCEPTION)
        finally:
            self.in_flight.discard(node)
        if not self.closed:
            self._kick(node)

    async def _exchange(self, node: int, txns: dict[str, _Waiting]) -> None:
        R = w.AddPartitionsToTxnRequest
        transactions = []
        for tid, waiting in txns.items():
            topics: dict[str, list[int]] = {}
            for topic, p in waiting.partitions:
                topics.setdefault(topic, []).append(p)
            transactions.append(R.AddPartitionsToTxnTransaction(
                transactional_id=tid, producer_id=waiting.producer_id, producer_epoch=waiting.epoch,
                verify_only=not waiting.adds, topics=[R.AddPartitionsToTxnTopic(name=n, partitions=ps)
                                          for n, ps in topics.items()]))
        try:
            _version, response = await self.links.call(node, R(transactions=transactions))
        except _NotSupported:
            log.warning("broker %d does not serve AddPartitionsToTxn v4: transactional produce goes on unverified",
                        node)
            for waiting in txns.values():
                waiting.skip()
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - unreachable, disconnected, timed out: NETWORK_EXCEPTION
            log.info("AddPartitionsToTxn to broker %d failed: %r", node, exc)
            for waiting in txns.values():
                self.failures += len(waiting.partitions)
                waiting.fail(ec.NETWORK_EXCEPTION)
            return
        if response.error_code:
            code = (ec.INVALID_TXN_STATE if response.error_code == ec.CLUSTER_AUTHORIZATION_FAILED
                    else response.error_code)
            log.warning("AddPartitionsToTxn to broker %d answered %s", node, ec.name_of(response.error_code))
            for waiting in txns.values():
                self.failures += len(waiting.partitions)
                waiting.fail(code)
            return
        by_txn = {}
        for result in response.results_by_transaction or ():
            by_txn[result.transactional_id] = {(t.name, r.partition_index): r.partition_error_code
                                               for t in result.topic_results for r in t.results_by_partition}
        for tid, waiting in txns.items():
            codes = by_txn.get(tid, {})
            refused = sum(1 for tp in waiting.partitions if codes.get(tp, ec.NETWORK_EXCEPTION) != ec.NONE)
            self.failures += refused
            self.verified += len(waiting.partitions) - refused
            waiting.answer(codes)

    def close(self) -> None:
        self.closed = True
        for task in list(self.tasks):
            task.cancel()
        waiting, self.waiting = self.waiting, {}
        for txns in waiting.values():
            for w_ in txns.values():
                w_.fail(ec.NETWORK_EXCEPTION)
        if self.links.conns:
            try:
                asyncio.get_running_loop().create_task(self.links.close())
            except RuntimeError:
                pass
