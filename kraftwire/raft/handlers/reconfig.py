"""AddRaftVoter (API 80), RemoveRaftVoter (API 81), UpdateRaftVoter (API 82): KIP-853 voter changes.

Kafka's rules and messages (``AddVoterHandler``/``RemoveVoterHandler``), checked in this order:

1. only the leader (NOT_LEADER_OR_FOLLOWER otherwise; the edge checks the cluster id, the directory id and, for an
   add, an endpoint on the controller listener first, and asks the new voter its kraft.version range with
   ApiVersions — Kafka's step 5);
2. one change at a time: another one pending -> REQUEST_TIMED_OUT;
3. the high watermark must be known (the leader has committed in its epoch) -> else REQUEST_TIMED_OUT;
4. kraft.version must be 1 -> else UNSUPPORTED_VERSION;
5. the last voter change must be committed -> else REQUEST_TIMED_OUT;
6. add: the id must be new (DUPLICATE_VOTER); its kraft.version range must cover the current one (INVALID_REQUEST);
   it must be a caught-up observer fetching with that directory id (REQUEST_TIMED_OUT). remove: the exact voter key,
   and one voter must remain (VOTER_NOT_FOUND);
7. the leader appends the new VotersRecord; the set is in force from that moment (on the leader and on each follower
   as it appends the record);
8. the answer waits for the record to commit (a majority of the *new* set), at most the request's timeout (add) or
   ``controller.quorum.request.timeout.ms`` (remove): then REQUEST_TIMED_OUT, though the change may still commit;
   an AddRaftVoter v1 with AckWhenCommitted false is answered at once after the append, its change still pending
   (step 2) until it commits or times out, silently then;
9. a leader that removed itself resigns once the change is committed.

A leader that loses its leadership answers the pending change with NOT_LEADER_OR_FOLLOWER.

UpdateRaftVoter: a voter whose entry in the set in force differs from what it is now (its controller endpoints, its
kraft.version range) asks the leader to rewrite it, every 3 x ``controller.quorum.fetch.timeout.ms`` while it
follows (Kafka's period: a few fetches first). The leader checks the request's epoch (FENCED_LEADER_EPOCH /
UNKNOWN_LEADER_EPOCH / NOT_LEADER_OR_FOLLOWER), then steps 2-5 (a pending add or remove, no high watermark, an
uncommitted change: REQUEST_TIMED_OUT; kraft.version 0: UNSUPPORTED_VERSION), the range (INVALID_REQUEST), the key
(VOTER_NOT_FOUND), appends the updated VotersRecord and answers at once, as Kafka's UpdateVoterHandler does.
"""

from __future__ import annotations

from kraftwire.ids import replica_key_text
from kraftwire.raft import messages as m
from kraftwire.raft.leader import LeaderState
from kraftwire.raft.membership import PendingChange
from kraftwire.raft.voter_set import VoterNode


def _common_checks(node, what: str) -> tuple[int, str | None] | None:
    """Steps 1-5; None when the change may go ahead."""
    state = node.quorum.state
    if not isinstance(state, LeaderState):
        return m.NOT_LEADER_OR_FOLLOWER, None
    ms = node.membership
    concurrent = node.config.mutations.concurrent_voter_changes  # planted bug: skips both one-at-a-time checks
    if ms.pending is not None and not concurrent:
        return m.REQUEST_TIMED_OUT, "Request timed out waiting for leader to handle previous voter change request"
    hw = state.high_watermark
    if hw is None or hw <= state.epoch_start_offset:
        return (m.REQUEST_TIMED_OUT,
                "Request timed out waiting for leader to establish HWM and fence previous voter changes")
    if ms.kraft_version < 1:
        return (m.UNSUPPORTED_VERSION,
                f"Cluster doesn't support {what} voter because the kraft.version feature is {ms.kraft_version}")
    if ms.uncommitted_change(hw) and not concurrent:
        return (m.REQUEST_TIMED_OUT, "Request timed out waiting for voters to commit the latest voter change at "
                f"{ms.history.last_offset()} with HWM {hw}")
    return None


def precheck_add(node, req: m.AddRaftVoterRequest) -> tuple[int, str | None] | None:
    """Steps 1-5 and the duplicate check, which Kafka makes before it asks the new voter for its versions (the edge
    calls this, then sends ApiVersions, then hands the request to the core, which checks everything again)."""
    refused = _common_checks(node, "adding")
    if refused is not None:
        return refused
    voters = node.membership.voters()
    if req.voter_key.id in voters.ids:
        return m.DUPLICATE_VOTER, (f"The voter id for {_key(req.voter_key)} is already part of the set of voters "
                                 f"{_keys(voters)}.")
    return None


def handle_add(node, req: m.AddRaftVoterRequest, now_ms: int) -> None:
    def answer(error: int, message: str | None = None) -> None:
        node.reply(m.AddRaftVoterResponse(node.local_id, req.src, req.correlation_id, error, node.quorum.leader_id,
                                          node.epoch, error_message=message))

    refused = precheck_add(node, req)
    if refused is not None:
        return answer(*refused)
    ms, leader = node.membership, node.quorum.state
    key = req.voter_key
    if not req.kraft_version_min <= ms.kraft_version <= req.kraft_version_max:
        return answer(m.INVALID_REQUEST, f"Aborted add voter operation for {_key(key)} since the kraft.version range "
                                         f"(min: {req.kraft_version_min}, max: {req.kraft_version_max} doesn't "
                                         f"support the finalized version {ms.kraft_version}")
    if not leader.is_caught_up(key.id, key.directory_id, now_ms):
        return answer(m.REQUEST_TIMED_OUT, f"Aborted add voter operation for {_key(key)} since it is lagging behind")
    new = ms.voters().add(VoterNode(key, tuple(req.endpoints), req.kraft_version_min, req.kraft_version_max))
    offset = node.append_voters(new, now_ms)
    ms.pending = PendingChange("add", req, key, offset, now_ms + max(0, req.timeout_ms))
    node.counters["voters_added"] += 1
    if not req.ack_when_committed:
        answer(m.NONE)
        ms.pending.answered = True


def handle_remove(node, req: m.RemoveRaftVoterRequest, now_ms: int) -> None:
    refused = _common_checks(node, "removing")
    if refused is None:
        voters = node.membership.voters()
        new = voters.remove(req.voter_key)
        if new is None:
            refused = m.VOTER_NOT_FOUND, f"Cannot remove voter {_key(req.voter_key)} from the set of voters {_keys(voters)}"
    if refused is not None:
        error, message = refused
        node.reply(m.RemoveRaftVoterResponse(node.local_id, req.src, req.correlation_id, error, node.quorum.leader_id,
                                             node.epoch, error_message=message))
        return
    offset = node.append_voters(new, now_ms)
    node.membership.pending = PendingChange("remove", req, req.voter_key, offset,
                                            now_ms + node.config.request_timeout_ms)
    node.counters["voters_removed"] += 1


def handle_update(node, req: m.UpdateRaftVoterRequest, now_ms: int) -> None:
    def answer(error: int) -> None:
        node.reply(m.UpdateRaftVoterResponse(node.local_id, req.src, req.correlation_id, error, node.quorum.leader_id,
                                             node.epoch))

    if req.current_leader_epoch < node.epoch:
        return answer(m.FENCED_LEADER_EPOCH)
    if req.current_leader_epoch > node.epoch:
        return answer(m.UNKNOWN_LEADER_EPOCH)
    refused = _common_checks(node, "updating")
    if refused is not None:
        return answer(refused[0])
    ms = node.membership
    if not req.kraft_version_min <= ms.kraft_version <= req.kraft_version_max or not req.endpoints:
        return answer(m.INVALID_REQUEST)
    new = ms.voters().update(VoterNode(req.voter_key, tuple(req.endpoints), req.kraft_version_min,
                                       req.kraft_version_max))
    if new is None:
        return answer(m.VOTER_NOT_FOUND)
    if new != ms.voters():
        node.append_voters(new, now_ms)
        node.counters["voters_updated"] += 1
    answer(m.NONE)


def maybe_send_update(node, state, now_ms: int) -> None:
    """A following voter: every 3 x fetch timeout, if its entry in the voter set is stale, ask the leader."""
    if not node.membership.dynamic or not node.quorum.is_voter:
        return
    if state.update_voter_at_ms == 0:
        state.update_voter_at_ms = now_ms + 3 * node.config.fetch_timeout_ms
        return
    if now_ms < state.update_voter_at_ms:
        return
    state.update_voter_at_ms = now_ms + 3 * node.config.fetch_timeout_ms
    ms = node.membership
    if not ms.needs_update() or node.has_outstanding(m.UpdateRaftVoterRequest):
        return
    local = ms.local_node()
    node.counters["update_voter_requests"] += 1
    node.send_request(
        lambda cid: m.UpdateRaftVoterRequest(
            node.local_id, state.leader_id, cid, node.config.cluster_id, current_leader_epoch=node.epoch,
            voter_key=local.key, endpoints=local.endpoints, kraft_version_min=local.kraft_version_min,
            kraft_version_max=local.kraft_version_max),
        state.leader_id, now_ms)


def handle_update_response(node, resp: m.UpdateRaftVoterResponse, out, now_ms: int) -> None:
    """Nothing to do: an epoch in the answer was already taken by the dispatcher; the leader's VotersRecord arrives
    by Fetch; a refusal is tried again after the next period."""
    if resp.error != m.NONE:
        node.counters["update_voter_refused"] += 1


def answer_pending(node, error: int, message: str | None = None) -> None:
    """Answer the pending change (committed, timed out, or leadership lost) and forget it."""
    pending = node.membership.pending
    if pending is None:
        return
    node.membership.pending = None
    if pending.answered:
        return
    req = pending.request
    cls = m.AddRaftVoterResponse if pending.kind == "add" else m.RemoveRaftVoterResponse
    node.reply(cls(node.local_id, req.src, req.correlation_id, error, node.quorum.leader_id, node.epoch,
                   error_message=message))


def maybe_complete(node, leader: LeaderState, now_ms: int) -> bool:
    """Answer the pending change once committed (or timed out). True if the leader must now resign: it is not in
    the committed voter set (it removed itself, whether or not the request that did so is still waiting)."""
    pending = node.membership.pending
    hw = leader.high_watermark
    if pending is not None:
        if hw is not None and hw > pending.offset:
            answer_pending(node, m.NONE)
        elif now_ms >= pending.deadline_ms:
            node.counters["voter_change_timeouts"] += 1
            what = "add" if pending.kind == "add" else "remove"
            answer_pending(node, m.REQUEST_TIMED_OUT,
                           f"Timed out waiting for the {what} voter operation for {_key(pending.key)} to commit")
    ms = node.membership
    return ms.dynamic and not ms.uncommitted_change(hw) and not ms.is_local_voter()


def _key(key) -> str:
    return replica_key_text(key.id, key.directory_id)


def _keys(voters) -> str:
    return "[" + ", ".join(_key(k) for k in voters.keys) + "]"
