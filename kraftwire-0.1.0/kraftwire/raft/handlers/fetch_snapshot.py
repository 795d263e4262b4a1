"""FetchSnapshot (API 59): the leader serves a snapshot in chunks (``Position``/``MaxBytes``); a follower below the
leader's log start downloads it and installs it. Fetch and FetchSnapshot share the follower's fetch timer.

The download state and the install steps live in ``raft/snapshots.py``.
"""

from __future__ import annotations

from kraftwire.ids import SnapshotId
from kraftwire.raft import messages as m
from kraftwire.raft.leader import LeaderState
from kraftwire.raft.states import FollowerState


def handle_request(node, req: m.FetchSnapshotRequest, now_ms: int) -> None:
    state = node.quorum.state

    def answer(error: int, **fields) -> None:
        node.reply(
            m.FetchSnapshotResponse(
                node.local_id, req.src, req.correlation_id, error, node.quorum.leader_id, node.epoch, **fields
            )
        )

    if req.current_leader_epoch < node.epoch:
        return answer(m.FENCED_LEADER_EPOCH)
    if req.current_leader_epoch > node.epoch:
        return answer(m.UNKNOWN_LEADER_EPOCH)
    if not isinstance(state, LeaderState):
        return answer(m.NOT_LEADER_OR_FOLLOWER)
    reader = node.log.read_snapshot(req.snapshot_id)
    if reader is None:
        return answer(m.SNAPSHOT_NOT_FOUND)
    size = reader.size_in_bytes()
    if req.position < 0 or req.position >= max(size, 1):
        return answer(m.POSITION_OUT_OF_RANGE)
    chunk = reader.slice(req.position, min(req.max_bytes, node.config.fetch_snapshot_max_bytes))
    state.record_fetch_snapshot(req.replica_id, now_ms)
    answer(m.NONE, snapshot_id=req.snapshot_id, size=size, position=req.position, unaligned_records=bytes(chunk))


def handle_response(node, resp: m.FetchSnapshotResponse, out, now_ms: int) -> None:
    state = node.quorum.state
    following = isinstance(state, FollowerState)
    if resp.error != m.NONE and not node.quorum.is_voter and (not following or resp.src != state.leader_id):
        # an observer asked a voter that does not lead: ask another (or the leader it names), as after a Fetch
        node.set_fetch_retry(now_ms + node.config.retry_backoff_ms)
        node.observer.refused(resp.src, resp.leader_id, state.leader_id if following else None)
        return
    if not following or resp.src != state.leader_id:
        return
    if resp.error != m.NONE:
        node.set_fetch_retry(now_ms + node.config.retry_backoff_ms)
        if resp.error in (m.SNAPSHOT_NOT_FOUND, m.POSITION_OUT_OF_RANGE):
            node.snapshots.download = None  # ask the leader again with Fetch
        return
    state.last_fetch_success_ms = now_ms
    state.fetch_deadline_ms = now_ms + node.config.fetch_timeout_ms  # one timer for Fetch and FetchSnapshot
    node.counters["snapshot_chunks"] += 1
    node.snapshots.on_chunk(resp.snapshot_id, resp.position, resp.size, resp.unaligned_records)


def start_snapshot_fetch(node, snapshot_id: SnapshotId, now_ms: int) -> None:
    node.snapshots.start_download(snapshot_id)
    node.wake_now()


def send_fetch_snapshot(node, dest: int, now_ms: int) -> None:
    download = node.snapshots.download
    node.send_request(
        lambda cid: m.FetchSnapshotRequest(
            node.local_id, dest, cid, node.config.cluster_id, replica_id=node.local_id,
            current_leader_epoch=node.epoch, snapshot_id=download.snapshot_id, position=len(download.data),
            max_bytes=node.config.fetch_snapshot_max_bytes,
        ),
        dest, now_ms,
    )
