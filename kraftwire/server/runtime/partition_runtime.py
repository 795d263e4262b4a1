"""One partition's replication steps: the pure rules of ``kraftwire.replica`` executed on its log. The replica manager's
decisions (``server/runtime/replica_core.py``) run these, on ``PartitionLog``\\ s with the monotonic clock in the
broker (``server/runtime/replicas.py``, ``server/runtime/fetcher.py``) and on ``MemoryPartitionLog``\\ s with its
fake clock in the partition simulation (``kraftwire.testing.partition_sim``), so a broken step here is a broken step
there.

The log is anything with ``PartitionLog``'s replication surface (end and start offsets, ``leader_epoch_end``,
``append_as_leader`` / ``append_as_follower``, ``truncate_to``, ``restart_at``, ``follow_log_start``, the high
watermark). Time is passed in; the log's I/O errors go to the caller, which owns the log directory's fate.
"""

from __future__ import annotations

from typing import Mapping

from kraftwire.log.base import check_batches_with_headers
from kraftwire.replica import follower as rules
from kraftwire.replica.leader_append import AppendPlan, AppendResult, MarkerPlan, record_append, record_marker
from kraftwire.replica.partition import LEADER, LeaderChange, PendingIsr, ReplicaState, may_join_isr
from kraftwire.replica.transactions import AbortedTxn

__all__ = ["advance", "append_marker_planned", "append_planned", "apply_registration", "follow_log_start", "follower_append",
           "follower_caught_up", "follower_diverged", "follower_out_of_range", "leader_saw_fetch"]


def apply_registration(state: ReplicaState, lg, registration, now_ms: int) -> LeaderChange | None:
    """Apply the image's registration of the partition; a new leader epoch led here starts at the log end, in the
    log's epoch cache. What changed (None: nothing)."""
    change = state.apply(registration, lg.end_offset(), now_ms)
    if change is not None and change.new_leader_epoch and change.role == LEADER:
        lg.initialize_leader_epoch(registration.leader_epoch)
    return change


def advance(state: ReplicaState, lg, min_insync_replicas: int, *, now_ms: int, lag_ms: int,
            brokers: Mapping[int, object]) -> bool:
    """As leader: raise the high watermark as far as the followers allow, in the state and in the log; True if
    it moved."""
    moved = state.advance_high_watermark(lg.end_offset(), min_insync_replicas, now_ms=now_ms, lag_ms=lag_ms,
                                         brokers=brokers)
    if moved:
        lg.update_high_watermark(state.high_watermark)
    return moved


def append_planned(state: ReplicaState, lg, plan: AppendPlan, producers, verifications) -> AppendResult:
    """Append ``leader_append.plan_append``'s plan as leader in its leader epoch and record the producer's state
    (``producers()``: the folded producer table and transactions); the answer."""
    info = lg.append_as_leader(plan.raw, state.leader_epoch, plan.batches, in_place=plan.in_place)
    if plan.producer is not None:
        table, txns = producers()
        record_append(plan, info.first_offset, info.last_offset, table, txns, verifications)
    return AppendResult(base_offset=info.first_offset, end=info.last_offset + 1, log_start_offset=lg.start_offset(),
                        log_append_time_ms=plan.appended_at)


def append_marker_planned(state: ReplicaState, lg, plan: MarkerPlan, table, txns,
                          verifications) -> tuple[AppendResult, AbortedTxn | None]:
    """Append ``leader_append.plan_marker``'s marker as leader in its leader epoch and close the producer's
    transaction; the answer, and the abort it records (for the ``.txnindex``) or None."""
    info = lg.append_as_leader(plan.raw, state.leader_epoch)
    entry = record_marker(plan, info.first_offset, info.last_offset, table, txns, verifications,
                          lg.high_watermark())
    return AppendResult(base_offset=info.first_offset, end=info.last_offset + 1,
                        log_start_offset=lg.start_offset()), entry


def leader_saw_fetch(state: ReplicaState, lg, replica: int, fetch_offset: int, broker_epoch: int, registration,
                     now_ms: int, log_start: int = -1) -> PendingIsr | None:
    """As leader: follower ``replica`` (its image ``registration``, None when unregistered) fetched from
    ``fetch_offset`` with ``broker_epoch`` (``log_start``: its log start, as the fetch says); the ISR expansion it
    earns, to send, or None."""
    state.follower_fetched(replica, fetch_offset, broker_epoch, now_ms, lg.end_offset(), log_start)
    return state.propose_expansion(replica, may_join_isr(registration, broker_epoch))


def follower_diverged(lg, epoch: int, end_offset: int) -> int:
    """The leader answered DivergingEpoch(``epoch``, ``end_offset``): the log truncated where the rules say (its
    start then follows the leader's, ``follow_log_start``); the offset truncated to."""
    target = rules.truncation_offset(epoch, end_offset, lg.leader_epoch_end, lg.end_offset())
    lg.truncate_to(target)
    return target


def follower_append(state: ReplicaState, lg, records) -> list:
    """The leader's batches appended as they are, in this broker's leader epoch: validated here (a corrupt batch
    raises and is never stored), the one read of their headers on the follower — the log takes the report, and the
    headers are returned for the producer state to fold."""
    checked = check_batches_with_headers(records, lg.max_batch_size, lg.check_records)
    lg.append_as_follower(records, state.leader_epoch, checked.batches)
    return checked.headers


def follower_caught_up(state: ReplicaState, lg, leader_hw: int, leader_start: int) -> bool:
    """After an answer with records (or none new): the follower's high watermark is the leader's capped at its end,
    its log start follows the leader's; True if the log start moved."""
    hw = rules.follower_high_watermark(leader_hw, lg.end_offset())
    if hw > lg.high_watermark():
        lg.update_high_watermark(hw)
        state.log_high_watermark(lg.high_watermark())
    return follow_log_start(state, lg, leader_start)


def follow_log_start(state: ReplicaState, lg, leader_start: int) -> bool:
    """The follower's log start moves up to the leader's (retention, DeleteRecords), capped at its end; True if it
    moved (the high watermark may have moved with it)."""
    if leader_start > lg.start_offset() and lg.follow_log_start(leader_start):
        state.log_high_watermark(lg.high_watermark())
        return True
    return False


def follower_out_of_range(lg, leader_end: int, leader_start: int) -> tuple[str, int]:
    """OFFSET_OUT_OF_RANGE, with the leader's end and log start asked: the log truncated or restarted as the rules
    say; (action, offset)."""
    action, offset = rules.out_of_range(leader_end, leader_start, lg.end_offset())
    if action == rules.TRUNCATE:
        lg.truncate_to(offset)
    elif action == rules.RESTART:
        lg.restart_at(offset)
    return action, offset
