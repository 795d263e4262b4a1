"""Vote (API 52) with KIP-996 PreVote: granting rules, sending vote requests, counting answers.

As Kafka's raft client does since KIP-996:

* a prospective asks with its **current** epoch and PreVote=true (a candidate with the epoch it just started);
* the receiver refuses a request whose last epoch is not below the candidate's epoch (real vote) or is above it
  (pre-vote: the prospective may hold records of its own epoch) with INVALID_REQUEST, and an older epoch with
  FENCED_LEADER_EPOCH;
* a request in a higher epoch first moves the receiver to Unattached(epoch) (durable), pre-vote or not: the epoch is
  a fact the sender has seen. A granted real vote moves it to Voted (durable), so the grant only leaves the node
  after it is persisted (``Ready.persist`` precedes ``send``). A granted pre-vote changes nothing;
* a pre-vote is granted when the prospective's log is at least as up to date, except by a leader, and by a follower
  that has fetched from its leader within the fetch timeout (a resigned leader grants it, as Kafka's does; so does an
  observer whose leader went quiet: with kraft.version 1 it may be a voter that has not fetched its VotersRecord yet,
  whose vote the quorum needs). One deliberate
  difference: a follower its leader told it resigned (EndQuorumEpoch) grants pre-votes too, so the successor wins in
  one round even when its pre-vote reaches that follower before the leader's EndQuorumEpoch does;
* a peer that answers UNSUPPORTED_VERSION (an older Kafka without Vote v2) makes a prospective a candidate at once.
"""

from __future__ import annotations

from kraftwire.ids import NO_ID, OffsetAndEpoch
from kraftwire.raft import messages as m
from kraftwire.raft.leader import LeaderState
from kraftwire.raft.states import CandidateState, FollowerState, ProspectiveState, ResignedState, UnattachedState


def _log_is_up_to_date(node, req: m.VoteRequest) -> bool:
    ours = OffsetAndEpoch(node.log.end_offset(), node.log.last_fetched_epoch())
    return OffsetAndEpoch(req.last_offset, req.last_offset_epoch).is_at_least(ours)


def can_grant_vote(node, req: m.VoteRequest, now_ms: int) -> bool:
    """The receiver's rule for a request in its own epoch (real vote) or for a pre-vote."""
    state = node.quorum.state
    if req.pre_vote:
        if isinstance(state, LeaderState):
            return False
        if (isinstance(state, FollowerState) and state.last_fetch_success_ms >= 0 and not state.leader_resigned
                and now_ms < state.last_fetch_success_ms + node.config.fetch_timeout_ms):
            return False  # it fetched from its leader within the fetch timeout (Kafka's fetch timer)
        return _log_is_up_to_date(node, req)
    if isinstance(state, (LeaderState, CandidateState, ResignedState, FollowerState)):
        return False
    assert isinstance(state, (UnattachedState, ProspectiveState))
    if state.voted_key is not None:
        if state.voted_key.matches(req.candidate_key):
            return True
        if not node.config.mutations.grant_two_votes:
            return False
    if isinstance(state, ProspectiveState) and state.leader_id != NO_ID:
        return False
    return _log_is_up_to_date(node, req)


def handle_request(node, req: m.VoteRequest, now_ms: int) -> None:
    def answer(error: int, granted: bool = False) -> None:
        node.reply(
            m.VoteResponse(
                node.local_id, req.src, req.correlation_id, error, node.quorum.leader_id, node.epoch,
                vote_granted=granted, pre_vote=req.pre_vote,
            )
        )

    if req.voter_id not in (node.local_id, NO_ID) or (
            req.voter_directory_id is not None and node.config.directory_id is not None
            and req.voter_directory_id != node.config.directory_id):
        return answer(m.INVALID_VOTER_KEY)  # meant for another replica (KIP-853: another disk under our id)
    last_epoch, epoch = req.last_offset_epoch, req.candidate_epoch
    if req.last_offset < 0 or last_epoch < 0 or (last_epoch > epoch if req.pre_vote else last_epoch >= epoch):
        return answer(m.INVALID_REQUEST)
    if epoch < node.epoch:
        return answer(m.FENCED_LEADER_EPOCH)
    if req.candidate_key.id < 0:  # Kafka's validateVoterOnlyRequest
        return answer(m.INVALID_REQUEST)
    if not node.membership.dynamic and (not node.quorum.is_voter or req.candidate_key.id not in node.quorum.voters):
        return answer(m.NONE)  # static voters: a non-voter's request moves nothing and its answer counts nowhere
    if epoch > node.epoch:
        # the election timer keeps running (only a granted vote restarts it, in become_voted)
        node.become_unattached(epoch, now_ms, keep_timer=True)
    if req.pre_vote:
        granted = can_grant_vote(node, req, now_ms)
        if not granted:
            node.counters["prevote_rejections"] += 1
        return answer(m.NONE, granted)
    granted = can_grant_vote(node, req, now_ms)
    if not granted and isinstance(node.quorum.state, CandidateState) and req.candidate_epoch == node.epoch:
        node.note_rival_candidate(now_ms)
    if granted:
        state = node.quorum.state
        already = getattr(state, "voted_key", None)
        if already is None or not already.matches(req.candidate_key):
            node.become_voted(req.candidate_epoch, req.candidate_key, now_ms)
            node.defer_vote_persist = node.config.mutations.reply_vote_before_persist
        node.counters["votes_granted"] += 1
    answer(m.NONE, granted)


def handle_response(node, resp: m.VoteResponse, out, now_ms: int) -> None:
    state = node.quorum.state
    if resp.error == m.UNSUPPORTED_VERSION and isinstance(state, ProspectiveState):
        node.counters["prevote_unsupported"] += 1
        node.become_candidate(now_ms)  # a voter without Vote v2 cannot answer a pre-vote: run for real, as Kafka does
        return
    if resp.error != m.NONE:
        node.retry_after[resp.src] = now_ms + node.config.retry_backoff_ms
        return
    if resp.pre_vote:
        if not isinstance(state, ProspectiveState):
            return
    elif not isinstance(state, CandidateState) or state.backoff_until_ms is not None:
        return
    state.tally.record(resp.src, resp.vote_granted)
    if not resp.vote_granted:
        node.counters["prevote_rejected" if resp.pre_vote else "vote_rejected"] += 1
    if state.tally.won():
        node.maybe_win_election(now_ms)
    elif state.tally.lost():
        if isinstance(state, ProspectiveState):
            node.lose_prevote(now_ms)
        else:
            node.start_backoff(state, now_ms)


def _directory_of(node, voter: int):
    found = node.membership.voters().node(voter)
    return found.key.directory_id if found is not None else None


def send_vote_requests(node, now_ms: int) -> None:
    state = node.quorum.state
    if isinstance(state, CandidateState) and state.backoff_until_ms is not None:
        return
    pre_vote = isinstance(state, ProspectiveState)
    log = node.log
    needs_flush = log.end_offset() > node.flushed_offset
    for voter in sorted(state.tally.unrecorded()):
        if voter == node.local_id or node.has_outstanding(m.VoteRequest, voter):
            continue
        if node.retry_after.get(voter, 0) > now_ms:
            continue
        if needs_flush:
            node.step.flush = True
        node.send_request(
            lambda cid, voter=voter: m.VoteRequest(
                node.local_id, voter, cid, node.config.cluster_id,
                candidate_epoch=state.epoch,
                candidate_key=node.membership.local_key, voter_id=voter,
                last_offset_epoch=log.last_fetched_epoch(), last_offset=log.end_offset(), pre_vote=pre_vote,
                voter_directory_id=_directory_of(node, voter),
            ),
            voter, now_ms, after_flush=needs_flush,
        )
