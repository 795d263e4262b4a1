"""The replica manager's synchronous decisions (``ReplicaCore``), apart from its asyncio glue and its files: what the
broker does with its partitions on an image, a Produce, a WriteTxnMarkers, a follower's fetch, its own fetch's answer
and an AlterPartition answer. ``ReplicaManager`` (``server/runtime/replicas.py``) runs it on ``PartitionLog``\\ s
with the monotonic clock and the event loop's timers; the partition simulation (``kraftwire.testing.partition_broker``)
runs the very same on in-memory logs with its fake clock and timers, so a broken decision here is one the simulation
can see (issue #39: it no longer checks a copy).

Each decision is the pure layer's (``kraftwire.replica``: the append plans, ``ReplicaState``, ``hosting``) executed by
the partition steps (``partition_runtime``); this class says which step runs when. What differs between the broker
and the simulation is asked of the host through the methods listed under "the host provides" (a class mixing this
in implements them): the clocks, the image's broker registrations, the timers of the acks=-1 waits, creating,
configuring, flushing and removing a partition's log, a failed log directory, and the replica fetchers.
"""

from __future__ import annotations

import logging
from typing import Callable, Mapping

from kraftwire.error_codes import name_of as ec_name
from kraftwire.error_codes import (CORRUPT_MESSAGE, FENCED_LEADER_EPOCH, KAFKA_STORAGE_ERROR, NONE,
                                   NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE, REQUEST_TIMED_OUT)
from kraftwire.errors import InvalidAppendError, KraftwireError, LogIOError
from kraftwire.replica import hosting
from kraftwire.replica.leader_append import AppendResult, plan_append, plan_marker
from kraftwire.replica.partition import LEADER, LeaderChange, PendingIsr
from kraftwire.replica.verification import has_ongoing_transaction
from kraftwire.server.runtime import partition_runtime as runtime
from kraftwire.server.runtime.waits import HIGH_WATERMARK

__all__ = ["APPENDED", "BACKOFF", "FENCED", "OUT_OF_RANGE", "ReplicaCore", "TRUNCATED"]

log = logging.getLogger("kraftwire.replicas")

#: what a follower does next after its fetch's answer for one partition (``ReplicaCore.follower_fetched``)
APPENDED, TRUNCATED, BACKOFF, OUT_OF_RANGE, FENCED = "appended", "truncated", "backoff", "out of range", "fenced"


class ReplicaCore:
    """The decisions on the hosted partitions (``partitions`` by (topic, index), ``by_id`` by (topic id, index));
    see the module's docstring. ``alter(hp, pending)`` sends an AlterPartition; ``watchers`` are told of a partition
    whose high watermark or (as leader) log end moved."""

    broker_id: int
    lag_ms: int
    partitions: dict
    by_id: dict
    watchers: list
    alter: Callable | None
    #: ISR changes this broker proposed as leader and the controller accepted (Kafka's IsrShrinksPerSec and
    #: IsrExpandsPerSec count these; a removal the controller makes itself, fencing a broker, is not one)
    isr_shrinks = 0
    isr_expands = 0

    # ------------------------------------------------------------------------------------------------ the host provides
    def now_ms(self) -> int:
        """The clock of the replication timers (monotonic on the broker)."""
        raise NotImplementedError

    def wall_ms(self) -> int:
        """The clock of batch timestamps (LogAppendTime, producer ages)."""
        raise NotImplementedError

    def image_brokers(self) -> Mapping[int, object]:
        """The broker registrations of the latest image (KIP-903 eligibility, the high watermark's waits)."""
        raise NotImplementedError

    def timers(self):
        """Something with asyncio's ``call_later(delay_s, fn, *args)`` for the acks=-1 waits' timeouts."""
        raise NotImplementedError

    def verification_enabled(self) -> bool:
        """``transaction.partition.verification.enable`` (KIP-890)."""
        raise NotImplementedError

    def _host(self, topic_id, topic: str, index: int, cfg):
        """Open (or create) the partition's log, configured by ``cfg``: its ``Hosted``, registered in
        ``partitions`` and ``by_id``; None when it cannot be hosted."""
        raise NotImplementedError

    def _configure(self, hp, cfg) -> None:
        raise NotImplementedError

    def _delete(self, hp, why: str) -> None:
        """Stop hosting ``hp`` (it leaves ``partitions``, ``by_id`` and the fetchers) and remove its log."""
        raise NotImplementedError

    def _maybe_flush(self, hp, now_ms: int | None = None) -> None:
        raise NotImplementedError

    def dir_failed(self, root: str, exc: BaseException) -> None:
        raise NotImplementedError

    def _follow(self, hp) -> None:
        """Have the fetchers fetch ``hp`` from its leader (again)."""
        raise NotImplementedError

    def _unfollow(self, hp) -> None:
        raise NotImplementedError

    def _followed(self, hp) -> bool:
        """Does a fetcher of ``hp``'s leader have it now?"""
        raise NotImplementedError

    # ------------------------------------------------------------------------------------------------ the image
    def place(self, topic_id, topic: str, index: int, reg, cfg, may_create: Callable[[], bool] = lambda: True):
        """One partition of the image (its registration ``reg``, its topic's effective configuration ``cfg``):
        dropped when this broker is not among its replicas, else hosted (when ``may_create()`` allows a new log:
        None if not now) and its registration applied — (``Hosted`` or None, ``LeaderChange`` or None)."""
        hp = self.by_id.get((topic_id, index))
        if self.broker_id not in reg.replicas:
            if hp is not None:
                self._delete(hp, "this broker is no longer a replica")
            return None, None
        if hp is None:
            if not may_create():
                return None
            hp = self._host(topic_id, topic, index, cfg)
            if hp is None:
                return None, None
        else:
            self._configure(hp, cfg)
        if hp.failed:
            return hp, None
        return hp, self.apply_registration(hp, reg)

    def apply_registration(self, hp, reg) -> LeaderChange | None:
        """The image's registration of a hosted partition: lead, follow or stop fetching it; what changed."""
        try:
            change = runtime.apply_registration(hp.state, hp.log, reg, self.now_ms())
            self._count_isr_change(hp)
        except LogIOError as exc:
            self.dir_failed(hp.root, exc)
            return None
        if change is None:
            return None
        if change.new_leader_epoch and change.role == LEADER:
            log.info("leading %s-%d in leader epoch %d from offset %d (ISR %s)", hp.topic, hp.index,
                     reg.leader_epoch, hp.state.epoch_start_offset, list(reg.isr))
        if hp.state.role != LEADER:
            hp.waits.leadership_lost()
        action = hosting.fetcher_action(hp.state.role, change.new_leader_epoch, self._followed(hp))
        if action == hosting.FOLLOW:
            self._follow(hp)
        elif action == hosting.UNFOLLOW:
            self._unfollow(hp)
        self._advance(hp)
        return change

    # ------------------------------------------------------------------------------------------------ leading
    def append(self, hp, records, acks: int, *, verify: bool = False, guard=None, owned: bool = False) -> AppendResult:
        """Append a producer's records to ``hp`` as its leader (the caller checked ``produce_error``). ``verify``:
        a client's Produce, whose first transactional batch of a producer without an open transaction needs the
        ``guard`` of a verification the coordinator confirmed (``kraftwire.replica.verification``; the
        coordinators' own writes are not verified here). ``owned``: the caller never reads ``records`` again (a
        received Produce), so a writable buffer of them is re-based in place."""
        if hp.failed:
            return AppendResult(KAFKA_STORAGE_ERROR)
        lg = hp.log
        plan = plan_append(records, topic=hp.topic, index=hp.index, config=hp.config,
                           max_batch_size=lg.max_batch_size, log_start=lg.start_offset(),
                           producers=lambda: (hp.producer_table(), hp.txns), verifications=hp.verifications,
                           verify=verify, guard=guard, verification_enabled=self.verification_enabled(),
                           wall_ms=self.wall_ms(), owned=owned)
        if isinstance(plan, AppendResult):
            return plan
        try:
            result = runtime.append_planned(hp.state, lg, plan, lambda: (hp.producers, hp.txns), hp.verifications)
        except InvalidAppendError as exc:
            return AppendResult(CORRUPT_MESSAGE, str(exc))
        except LogIOError as exc:
            self.dir_failed(hp.root, exc)
            return AppendResult(KAFKA_STORAGE_ERROR, str(exc))
        self._maybe_flush(hp)
        self._advance(hp, appended=True)
        return result

    def append_marker(self, hp, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                      commit: bool, transaction_version: int = 0) -> AppendResult:
        """WriteTxnMarkers on the leader: a control batch (transactional, one COMMIT or ABORT record whose value is
        the coordinator epoch) for the producer, appended in the leader epoch; an abort goes to the ``.txnindex``
        of its segment. INVALID_PRODUCER_EPOCH / TRANSACTION_COORDINATOR_FENCED for a stale marker, by the rules of
        the marker's ``transaction_version`` (Kafka's ``appendEndTxnMarker``)."""
        if hp.failed:
            return AppendResult(KAFKA_STORAGE_ERROR)
        if hp.state.role != LEADER:
            return AppendResult(NOT_LEADER_OR_FOLLOWER)
        lg = hp.log
        try:
            table = hp.producer_table()
        except (OSError, LogIOError) as exc:
            self.dir_failed(hp.root, exc)
            return AppendResult(KAFKA_STORAGE_ERROR, str(exc))
        except KraftwireError as exc:  # the log could not be read back: the marker waits, the directory stays
            return AppendResult(KAFKA_STORAGE_ERROR, str(exc))
        plan = plan_marker(table, producer_id, producer_epoch, coordinator_epoch, commit, base_offset=lg.end_offset(),
                           leader_epoch=hp.state.leader_epoch, wall_ms=self.wall_ms(), max_batch_size=lg.max_batch_size,
                           transaction_version=transaction_version, txn_open=producer_id in hp.txns.ongoing)
        if isinstance(plan, AppendResult):
            return plan
        try:
            result, entry = runtime.append_marker_planned(hp.state, lg, plan, table, hp.txns, hp.verifications)
            hp._record_abort(entry)
        except InvalidAppendError as exc:
            return AppendResult(CORRUPT_MESSAGE, str(exc))
        except (LogIOError, OSError) as exc:
            self.dir_failed(hp.root, exc)
            return AppendResult(KAFKA_STORAGE_ERROR, str(exc))
        self._maybe_flush(hp)
        self._advance(hp, appended=True)
        return result

    def start_verification(self, hp, producer_id: int, sequence: int, epoch: int,
                           supports_epoch_bump: bool = False):
        """Kafka's ``maybeStartTransactionVerification`` on the leader: the guard of the verification the producer's
        batch needs, or None when its transaction is open on the partition at ``epoch``."""
        ongoing = has_ongoing_transaction(hp.producer_table(), hp.txn_state(), producer_id, epoch)
        return hp.verifications.start(producer_id, sequence, epoch, ongoing, self.now_ms(), supports_epoch_bump)

    def replica_fetched(self, hp, replica: int, fetch_offset: int, broker_epoch: int,
                        log_start: int = -1) -> PendingIsr | None:
        """As leader: a follower fetched from ``fetch_offset`` (``log_start``: its log start); it may join the ISR
        and move the high watermark. The ISR expansion proposed, or None."""
        pending = runtime.leader_saw_fetch(hp.state, hp.log, replica, fetch_offset, broker_epoch,
                                           self.image_brokers().get(replica), self.now_ms(), log_start)
        if pending is not None:
            log.info("adding broker %d to the ISR of %s-%d: %s", replica, hp.topic, hp.index, list(pending.isr))
            self._send_alter(hp)
        self._advance(hp)
        return pending

    def check_isr(self, now_ms: int) -> list:
        """The beat's ISR work as leader: shrinks proposed for followers that fell behind, an AlterPartition an
        answer asked for sent again, the high watermark moved by time alone (a follower outside the ISR that
        stopped fetching stops holding it back). The [(``Hosted``, shrink proposed)]."""
        shrinks = []
        for hp in list(self.partitions.values()):
            if not hp.failed and hp.state.role == LEADER:
                pending = hp.state.propose_shrink(now_ms, self.lag_ms, hp.log.end_offset())
                if pending is not None:
                    log.info("shrinking the ISR of %s-%d from %s to %s", hp.topic, hp.index, list(hp.state.isr),
                             list(pending.isr))
                    shrinks.append((hp, pending))
                # the shrink, or a change an answer asked to send again: ``alter_to_send`` keeps one on its way
                self._send_alter(hp)
                self._advance(hp, now_ms=now_ms)
        return shrinks

    def _send_alter(self, hp) -> None:
        if self.alter is None:
            return
        pending = hp.state.alter_to_send()
        if pending is not None:
            self.alter(hp, pending)

    def alter_answered(self, hp, proposal, error: int, data=None) -> None:
        again = hp.state.isr_answered(proposal, error, leader_epoch=getattr(data, "leader_epoch", -1),
                                      partition_epoch=getattr(data, "partition_epoch", -1),
                                      isr=tuple(getattr(data, "isr", ()) or ()))
        if error:
            log.info("AlterPartition for %s-%d: %s%s", hp.topic, hp.index, ec_name(error),
                     "; sending it again" if again else "")
        self._count_isr_change(hp)
        self._advance(hp)

    def _count_isr_change(self, hp) -> None:
        settled = hp.state.take_settled()
        if settled is not None:
            if settled.expand:
                self.isr_expands += 1
            else:
                self.isr_shrinks += 1

    def _advance(self, hp, *, appended: bool = False, now_ms: int | None = None) -> None:
        """Raise the high watermark as far as the replica state allows and wake what waits on it (parked follower
        fetches also wait for new data: ``appended``). The followers the ISR waits for to join come from the
        image's broker registrations (fenced, shutting down) and their fetch times."""
        now_ms = self.now_ms() if now_ms is None else now_ms
        moved = runtime.advance(hp.state, hp.log, hp.min_isr, now_ms=now_ms, lag_ms=self.lag_ms,
                                brokers=self.image_brokers())
        if moved or appended:
            self._tell_watchers(hp)
        hp.waits.check(hp.log.high_watermark(), -1,
                       hp.state.leader_epoch if hp.state.role == LEADER and not hp.failed else None)

    def _tell_watchers(self, hp) -> None:
        for watcher in list(self.watchers):
            watcher(hp)

    def wait_committed(self, hp, end: int, callback: Callable[[int], None], timeout_ms: int) -> None:
        """``callback(error)`` once the high watermark reaches ``end`` (NONE), when this broker stops leading the
        epoch first (NOT_LEADER_OR_FOLLOWER), or after ``timeout_ms`` (REQUEST_TIMED_OUT)."""
        if hp.failed:
            callback(NOT_LEADER_OR_FOLLOWER)
            return
        hp.waits.add(HIGH_WATERMARK, end, hp.state.leader_epoch, callback, loop=self.timers(),
                     timeout_s=max(timeout_ms, 0) / 1000.0, timeout_error=REQUEST_TIMED_OUT)
        self._advance(hp)

    # ------------------------------------------------------------------------------------------------ following
    def follower_fetched(self, hp, error: int, diverging: tuple[int, int] | None, records, high_watermark: int,
                         log_start: int) -> str:
        """The leader's answer to this follower's fetch for ``hp`` (``diverging``: (epoch, end offset) of a
        DivergingEpoch): truncate, or append its records and follow its high watermark and log start. What the
        fetcher does next: APPENDED, TRUNCATED, BACKOFF (records refused, or an error to wait out), OUT_OF_RANGE
        (ask the leader its end and log start, then ``follower_out_of_range``) or FENCED (stop fetching until the
        image moves)."""
        lg = hp.log
        if error == NONE and diverging is not None:
            end = lg.end_offset()
            # (the producer table is folded again after it: the log counts truncations)
            target = runtime.follower_diverged(lg, *diverging)
            log.info("%s-%d diverged from leader %d at epoch %d: truncated to %d (end %d)", hp.topic, hp.index,
                     hp.state.leader, diverging[0], target, end)
            self._follow_log_start(hp, log_start)
            return TRUNCATED
        if error == NONE:
            if records is not None and len(records):
                raw = records  # a view of the answer's own frame (never reused): stored, not copied
                try:
                    headers = runtime.follower_append(hp.state, lg, raw)
                except KraftwireError as exc:
                    if isinstance(exc, LogIOError):
                        raise
                    log.warning("%s-%d: refused what leader %d sent: %s", hp.topic, hp.index, hp.state.leader, exc)
                    return BACKOFF
                self.follower_appended(hp, headers)
            hw = lg.high_watermark()
            if runtime.follower_caught_up(hp.state, lg, high_watermark, log_start):
                self._log_start_moved(hp)
            if lg.high_watermark() != hw:  # consumers reading from this follower (KIP-392) wait on it
                self._tell_watchers(hp)
            return APPENDED
        if error == OFFSET_OUT_OF_RANGE:
            return OUT_OF_RANGE
        if error == FENCED_LEADER_EPOCH:
            log.info("%s-%d: leader %d fenced epoch %d; waiting for the image", hp.topic, hp.index, hp.state.leader,
                     hp.state.leader_epoch)
            return FENCED
        return BACKOFF

    def follower_appended(self, hp, headers) -> None:
        """A follower appended the leader's batches (``headers``: theirs, as the append's validation read them): its
        producer table (if folded) learns them; flush.messages."""
        self._maybe_flush(hp)
        try:
            hp.fold_appended(headers)
        except OSError as exc:
            self.dir_failed(hp.root, exc)

    def follower_out_of_range(self, hp, leader_end: int, leader_start: int) -> tuple[str, int]:
        """The leader's end and log start, asked after OFFSET_OUT_OF_RANGE: the log truncated or restarted as the
        rules say; (action, offset)."""
        ours = hp.log.end_offset()
        action, offset = runtime.follower_out_of_range(hp.log, leader_end, leader_start)
        log.info("%s-%d out of range on leader %d (end %d, start %d, ours %d): %s to %d", hp.topic, hp.index,
                 hp.state.leader, leader_end, leader_start, ours, action, offset)
        return action, offset

    def _follow_log_start(self, hp, leader_start: int) -> None:
        if runtime.follow_log_start(hp.state, hp.log, leader_start):
            self._log_start_moved(hp)

    def _log_start_moved(self, hp) -> None:
        log.info("%s-%d: log start follows leader %d to %d", hp.topic, hp.index, hp.state.leader,
                 hp.log.start_offset())
