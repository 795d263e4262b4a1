"""Fetch (API 1), Raft usage: the leader answers with records, a DivergingEpoch or a SnapshotId, or parks the
request; the follower truncates, appends (through the KAFKA-18723 epoch filter), flushes, and fetches again.

Leader rules: the request is validated, then its epoch compared with ours (FENCED_LEADER_EPOCH below,
UNKNOWN_LEADER_EPOCH above, NOT_LEADER_OR_FOLLOWER when not leading). A follower with an empty log is sent the latest
snapshot's id when one exists (not the 0-0 bootstrap snapshot). Otherwise ``validate_offset_and_epoch`` decides between
records, DivergingEpoch and SnapshotId. A valid fetch from a replica with an id records its end offset (that may
advance the high watermark). The leader never sends data past its own flushed offset; an empty answer is parked up to
MaxWaitMs. A parked fetch whose replica has not heard the latest high watermark is answered once that news is
``high_watermark_linger_ms`` old (Kafka answers at once: linger 0), unless new data answers it sooner and carries it.
What the replica has heard is what its Fetch says (v18, KIP-1166); from an older replica, the high watermark last
sent to it.

A leader that resigned and is still in its epoch refuses a Fetch as any non-leader does, but sends with the refusal
the records the replica lacks, and the replica (a voter following it) appends them without counting the answer as a
leader's: a kraftwire rule, not Kafka's (Kafka's refusal carries no records), for a voter it cannot dial (issue #35
item 13; see ``_answer_as_former_leader``).

Follower rules: DivergingEpoch -> truncate first (never below the high watermark), and only then apply the leader's
high watermark; records -> filter, append, flush, and the next Fetch leaves only after that flush
(``Ready.send_after_flush``); high watermark = min(log end offset, leader's high watermark), never decreasing.
"""

from __future__ import annotations

from kraftwire.errors import RaftFatalError
from kraftwire.ids import NO_ID, OffsetAndEpoch, SnapshotId
from kraftwire.log.api import ValidationKind
from kraftwire.raft import messages as m
from kraftwire.raft.epoch_filter import filter_fetched
from kraftwire.raft.handlers.fetch_snapshot import send_fetch_snapshot, start_snapshot_fetch
from kraftwire.raft.leader import LeaderState
from kraftwire.raft.ready import AppendAsFollower
from kraftwire.raft.states import FollowerState, ResignedState, UnattachedState


# --- leader side ---------------------------------------------------------------------------------------------------
def handle_request(node, req: m.FetchRequest, now_ms: int) -> None:
    answer_fetch(node, req, now_ms, allow_park=True)


def _read_up_to(node, offset: int, limit: int, max_bytes: int) -> bytes | memoryview:
    """Whole batches from ``offset`` whose last offset is below ``limit`` (the leader's flushed offset), as the log
    read them (the log stores only batches the codec accepted)."""
    if offset >= limit:
        return b""
    return node.log.read(offset, max_bytes, limit=limit).records


def answer_fetch(node, req: m.FetchRequest, now_ms: int, *, allow_park: bool) -> None:
    state = node.quorum.state

    def answer(error: int, **fields) -> None:
        hw = state.high_watermark if isinstance(state, LeaderState) else None
        replica = state.replica(req.replica_id) if isinstance(state, LeaderState) else None
        if replica is not None and hw is not None:
            replica.sent_high_watermark = hw
        node.reply(
            m.FetchResponse(
                node.local_id, req.src, req.correlation_id, error, node.quorum.leader_id, node.epoch,
                high_watermark=-1 if hw is None else hw, log_start_offset=node.log.start_offset(), **fields,
            )
        )

    if (
        req.max_wait_ms < 0
        or req.fetch_offset < 0
        or req.last_fetched_epoch < 0
        or req.last_fetched_epoch > req.current_leader_epoch
    ):
        return answer(m.INVALID_REQUEST)
    if req.current_leader_epoch < node.epoch:
        return answer(m.FENCED_LEADER_EPOCH)
    if req.current_leader_epoch > node.epoch:
        return answer(m.UNKNOWN_LEADER_EPOCH)
    if not isinstance(state, LeaderState):
        error = m.BROKER_NOT_AVAILABLE if isinstance(state, ResignedState) else m.NOT_LEADER_OR_FOLLOWER
        if node.quorum.led_this_epoch():
            return _answer_as_former_leader(node, req, error)
        return answer(error)
    latest = node.log.latest_snapshot_id()
    if req.fetch_offset == 0 and latest is not None and latest.end_offset > 0:
        return answer(m.NONE, snapshot_id=latest)  # an empty follower starts from the snapshot (never the bootstrap)
    validation = node.log.validate_offset_and_epoch(req.fetch_offset, req.last_fetched_epoch)
    if validation.kind is ValidationKind.SNAPSHOT:
        oe = validation.offset_and_epoch
        return answer(m.NONE, snapshot_id=SnapshotId(oe.offset, oe.epoch))
    if validation.kind is ValidationKind.DIVERGING:
        return answer(m.NONE, diverging_epoch=validation.offset_and_epoch)
    hw_before = state.high_watermark
    if req.replica_id != NO_ID:
        if state.update_replica_end_offset(req.replica_id, req.fetch_offset, now_ms, node.log.end_offset(),
                                           req.replica_directory_id):
            node.emit_high_watermark(state.high_watermark)
    records = _read_up_to(node, req.fetch_offset, node.replication_limit(), min(req.max_bytes, node.config.max_fetch_bytes))
    if not records and allow_park and req.max_wait_ms > 0:
        # Parked against the high watermark the replica knows: the one last sent to it, else the one before this
        # fetch (so news this very fetch made counts). News alone answers after high_watermark_linger_ms; data
        # comes sooner and carries it.
        replica = state.replica(req.replica_id)
        if req.high_watermark is not None:  # KIP-1166: the replica says what it knows
            known = req.high_watermark
        else:  # an older replica: the high watermark last sent to it, else the one before this fetch
            known = hw_before if replica is None or state.high_watermark is None else replica.sent_high_watermark
        if node.config.high_watermark_linger_ms > 0 or known == state.high_watermark:
            node.park_fetch(req, now_ms, known)
            return
    answer(m.NONE, records=records)


def _answer_as_former_leader(node, req: m.FetchRequest, error: int) -> None:
    """A leader that resigned and is still in its epoch refuses the Fetch (it is no leader: the replica's fetch
    timer keeps running, so it runs for election), but sends with the refusal the records the replica lacks, from
    a log that is still the epoch leader's (``QuorumState.led_this_epoch``) - the same bytes it would have sent while
    it led, up to its flushed offset, with the high watermark it had. So a voter the former leader cannot reach (a
    voter set naming an address it left) still gets its uncommitted tail; without it, its log is shorter, the former
    leader refuses it every vote, and, unable to reach it for its own, no leader is ever elected. Only records that
    extend the replica's log (no DivergingEpoch, no SnapshotId: those wait for the next leader)."""
    records = b""
    if node.log.validate_offset_and_epoch(req.fetch_offset, req.last_fetched_epoch).kind is ValidationKind.VALID:
        records = _read_up_to(node, req.fetch_offset, node.replication_limit(),
                              min(req.max_bytes, node.config.max_fetch_bytes))
    if records:
        node.counters["fetch_answered_by_former_leader"] += 1
    node.reply(m.FetchResponse(
        node.local_id, req.src, req.correlation_id, error, node.quorum.leader_id, node.epoch,
        high_watermark=node.high_watermark, log_start_offset=node.log.start_offset(), records=records,
    ))


# --- follower side -------------------------------------------------------------------------------------------------
def fetch_target(node) -> int | None:
    state = node.quorum.state
    if isinstance(state, FollowerState):
        return state.leader_id if node.observer.target is None or node.quorum.is_voter else node.observer.target
    if not node.quorum.is_voter and isinstance(state, UnattachedState):
        return node.observer.pick() if node.observer.target is None else node.observer.target
    return None


def send_fetch(node, dest: int, now_ms: int, *, fetch_offset: int, last_fetched_epoch: int, after_flush: bool):
    node.send_request(
        lambda cid: m.FetchRequest(
            node.local_id, dest, cid, node.config.cluster_id,
            replica_id=node.local_id, replica_epoch=-1, current_leader_epoch=node.epoch,
            fetch_offset=fetch_offset, last_fetched_epoch=last_fetched_epoch,
            max_wait_ms=node.config.fetch_max_wait_ms, max_bytes=node.config.max_fetch_bytes,
            replica_directory_id=node.config.directory_id, high_watermark=node.high_watermark,
        ),
        dest, now_ms, after_flush=after_flush, timeout_ms=node.config.fetch_max_wait_ms + node.config.request_timeout_ms,
    )


def maybe_send_fetch(node, now_ms: int) -> None:
    dest = fetch_target(node)
    if dest is None or now_ms < node.fetch_retry_ms or node.snapshots.installing is not None:
        return
    if node.has_outstanding(m.FetchRequest) or node.has_outstanding(m.FetchSnapshotRequest):
        return
    if node.snapshots.download is not None:
        return send_fetch_snapshot(node, dest, now_ms)
    if node.step.log_ops:  # the log will change when this Ready runs: fetch from the new end next step
        node.wake_now()
        return
    log = node.log
    if log.end_offset() > node.flushed_offset and not node.config.mutations.fetch_past_flush:
        node.step.flush = True
        return  # fetch again once LogFlushed says the log is durable
    send_fetch(
        node, dest, now_ms, fetch_offset=log.end_offset(), last_fetched_epoch=log.last_fetched_epoch(),
        after_flush=False,
    )


def truncation_offset(log, diverging: OffsetAndEpoch) -> int:
    """Where to truncate for the leader's DivergingEpoch (end offset, epoch): at most the leader's end offset for
    that epoch, and at most our own end offset for the largest epoch we hold at or below it."""
    local = log.end_offset_for_epoch(diverging.epoch)
    if local.offset < 0:
        return min(diverging.offset, log.start_offset())
    return min(local.offset, diverging.offset)


def handle_response(node, resp: m.FetchResponse, out, now_ms: int) -> None:
    state = node.quorum.state
    if resp.error != m.NONE:
        node.set_fetch_retry(now_ms + node.config.retry_backoff_ms)
        if not node.quorum.is_voter:
            node.observer.refused(resp.src, resp.leader_id,
                                  state.leader_id if isinstance(state, FollowerState) else None)
        elif resp.records and isinstance(state, FollowerState) and resp.src == state.leader_id:
            # its former leader's tail (``_answer_as_former_leader``): appended, but the fetch timer runs on
            node.counters["appended_from_former_leader"] += 1
            _append(node, resp, now_ms, fetch_next=False)
        return
    if not isinstance(state, FollowerState) or resp.src != state.leader_id:
        return
    node.observer.fetched()
    state.last_fetch_success_ms = now_ms
    state.fetch_deadline_ms = now_ms + node.config.fetch_timeout_ms
    log = node.log
    leo = log.end_offset()
    if resp.diverging_epoch is not None:
        target = truncation_offset(log, resp.diverging_epoch)
        node.counters["truncations"] += 1
        if node.config.mutations.hw_before_truncate:
            if resp.high_watermark >= 0:
                node.emit_high_watermark(min(leo, resp.high_watermark))
            node.defer_truncate(target)
            return
        if target < node.high_watermark:
            raise RaftFatalError(f"node {node.local_id}: truncation to {target} below high watermark {node.high_watermark}")
        node.truncate(target)
        if resp.high_watermark >= 0:
            node.emit_high_watermark(min(target, resp.high_watermark))
        node.wake_now()  # fetch again from the truncated log
        return
    if resp.snapshot_id is not None:
        node.counters["snapshot_needed"] += 1
        start_snapshot_fetch(node, resp.snapshot_id, now_ms)
        return
    _append(node, resp, now_ms, fetch_next=True)


def _append(node, resp: m.FetchResponse, now_ms: int, *, fetch_next: bool) -> None:
    """Fetched records into the log (through the epoch filter), the leader's high watermark, and (``fetch_next``)
    the next Fetch once they are flushed."""
    log = node.log
    result = filter_fetched(
        resp.records, follower_epoch=node.epoch, log_end_offset=log.end_offset(), last_epoch=log.last_fetched_epoch(),
        epoch_filter=not node.config.mutations.epoch_filter_off,
    )
    if result.rejected:
        node.counters["fetch_rejected"] += 1
        node.set_fetch_retry(now_ms + node.config.retry_backoff_ms)
        return
    if result.dropped_batches:
        node.counters["epoch_filter_drops"] += 1
    if result.batch_count:
        node.step.log_ops.append(AppendAsFollower(result.records, node.epoch, result.batches))
        node.step.flush = True
        node.appended_as_follower(result.records, result.batches)
    if resp.high_watermark >= 0:
        node.emit_high_watermark(min(result.end_offset, resp.high_watermark))
    if result.batch_count and fetch_next:
        send_fetch(
            node, resp.src, now_ms, fetch_offset=result.end_offset, last_fetched_epoch=result.last_epoch,
            after_flush=not node.config.mutations.fetch_past_flush,
        )
