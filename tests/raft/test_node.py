"""RaftNode rules, one node at a time (the simulation covers them in combination)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kraftwire.errors import NotLeaderError, RecordTooLargeError
from kraftwire.ids import NO_ID, OffsetAndEpoch, ReplicaKey
from kraftwire.log.memory import MemoryLog
from kraftwire.raft import messages as m
from kraftwire.raft.election import ElectionState
from kraftwire.raft.events import Received
from kraftwire.records import RecordBatchBuilder, read_batches, validate_batches

from harness.raft import NodeHarness


def vote_request(epoch, cand=2, dst=1, last_epoch=0, last=0, pre=False, cid=77):
    return m.VoteRequest(cand, dst, cid, "kraftwire", candidate_epoch=epoch, candidate_key=ReplicaKey(cand),
                         voter_id=dst, last_offset_epoch=last_epoch, last_offset=last, pre_vote=pre)


def fetch(src, offset, last_epoch, epoch, cid=5, wait=0, dst=1):
    return m.FetchRequest(src, dst, cid, "kraftwire", replica_id=src, replica_epoch=-1, current_leader_epoch=epoch,
                          fetch_offset=offset, last_fetched_epoch=last_epoch, max_wait_ms=wait, max_bytes=1 << 20)


def make_leader(voters=(1, 2, 3), **kw):
    h = NodeHarness(voters=voters, pre_vote=False, **kw)
    sent = h.poll(at=250)  # election timeout -> candidate epoch 1
    for req in [s for s in sent if isinstance(s, m.VoteRequest)]:
        h.deliver(m.VoteResponse(req.dst, 1, req.correlation_id, m.NONE, NO_ID, 1, vote_granted=True))
    assert h.node.is_leader()
    return h


def test_single_voter_elects_itself_and_commits_leader_change():
    h = NodeHarness(voters=(1,))
    h.poll(at=250)
    assert h.node.is_leader() and h.node.epoch == 1
    h.poll()
    assert h.log.high_watermark() == 1
    [batch] = list(read_batches(h.log.read(0, 1 << 20).records))
    assert batch.is_control and batch.partition_leader_epoch == 1


def test_granted_vote_is_persisted_in_the_same_ready_that_sends_it():
    h = NodeHarness(node_id=1)
    ready = h.node.handle(Received(vote_request(3)), 0)
    [resp] = ready.send
    assert resp.vote_granted and resp.leader_epoch == 3
    assert ready.persist == ElectionState(3, NO_ID, ReplicaKey(2))  # the driver persists before sending


def test_no_second_vote_in_an_epoch_even_after_restart():
    h = NodeHarness(node_id=1)
    h.deliver(vote_request(3, cand=2))
    restarted = NodeHarness(node_id=1, stored=h.persisted, log=h.log)
    ready = restarted.node.handle(Received(vote_request(3, cand=3)), 0)
    assert not ready.send[0].vote_granted
    ready = restarted.node.handle(Received(vote_request(3, cand=2, cid=78)), 0)
    assert ready.send[0].vote_granted  # the same candidate may ask again


def test_vote_rejected_for_a_shorter_log():
    h = NodeHarness(node_id=1)
    h.log.append_as_leader(_batch(), 2)
    ready = h.node.handle(Received(vote_request(3, last_epoch=1, last=5)), 0)
    assert not ready.send[0].vote_granted


def _batch(n=1):
    b = RecordBatchBuilder()
    for i in range(n):
        b.append(None, f"x{i}".encode(), timestamp=0)
    return b.build()


def test_invalid_vote_requests():
    h = NodeHarness(node_id=1)
    ready = h.node.handle(Received(vote_request(3, last_epoch=3)), 0)
    assert ready.send[0].error == m.INVALID_REQUEST
    bad_key = replace(vote_request(3), voter_id=9)
    assert h.node.handle(Received(bad_key), 0).send[0].error == m.INVALID_VOTER_KEY


def test_pre_vote_changes_nothing_and_follower_with_live_leader_rejects():
    """A prospective asks with its current epoch (KIP-996 as Kafka sends it): granting it changes nothing."""
    h = NodeHarness(node_id=1)
    ready = h.node.handle(Received(vote_request(0, pre=True)), 0)
    assert ready.send[0].vote_granted and ready.persist is None and h.node.epoch == 0
    sent = h.deliver(m.BeginQuorumEpochRequest(3, 1, 9, "kraftwire", voter_id=1, new_leader_id=3, new_leader_epoch=1))
    assert h.node.state_name == "Follower"
    ready = h.node.handle(Received(vote_request(1, pre=True, cid=79)), h.now)
    assert ready.send[0].vote_granted  # a follower that has not fetched from its leader yet grants it
    [f] = [s for s in sent if isinstance(s, m.FetchRequest)]
    h.deliver(m.FetchResponse(3, 1, f.correlation_id, m.NONE, 3, 1, high_watermark=0))
    ready = h.node.handle(Received(vote_request(1, pre=True, cid=80)), h.now)
    assert not ready.send[0].vote_granted and h.node.state_name == "Follower"


def test_leader_writes_leader_change_then_commits_on_majority_flush():
    h = make_leader()
    assert h.persisted == ElectionState(1, 1, ReplicaKey(1))
    assert h.log.end_offset() == 1 and h.log.epoch_entries()[0].epoch == 1
    assert h.node.high_watermark == 0
    h.deliver(fetch(2, 1, 1, 1))
    assert h.node.high_watermark == 1 and h.log.high_watermark() == 1


def test_leader_answers_diverging_epoch():
    h = make_leader()
    sent = h.deliver(fetch(2, 5, 0, 1))  # claims 5 records of epoch 0 the leader never had
    [resp] = [s for s in sent if isinstance(s, m.FetchResponse)]
    assert resp.diverging_epoch is not None and resp.diverging_epoch.offset == 0


def test_fetch_epoch_errors():
    h = make_leader()
    assert h.deliver(fetch(2, 0, 0, 0))[0].error == m.FENCED_LEADER_EPOCH
    assert h.deliver(fetch(2, 0, 0, 2))[0].error == m.UNKNOWN_LEADER_EPOCH
    assert h.deliver(fetch(2, 0, 2, 1))[0].error == m.INVALID_REQUEST


def test_parked_fetch_completes_on_new_data_and_fails_on_resign():
    h = make_leader(high_watermark_linger_ms=0)  # Kafka's way: high-watermark news is answered at once
    h.deliver(fetch(2, 1, 1, 1))
    assert h.deliver(fetch(2, 1, 1, 1, cid=6, wait=500)) == []  # nothing new: parked
    h.node.schedule_append([b"a"], h.now)
    sent = h.poll()
    [resp] = [s for s in sent if isinstance(s, m.FetchResponse)]
    assert resp.correlation_id == 6 and resp.records
    [first] = h.deliver(fetch(3, 2, 1, 1, cid=7, wait=500))
    assert first.high_watermark == 2  # replica 3 had not heard this high watermark yet: answered at once
    assert h.deliver(fetch(3, 2, 1, 1, cid=8, wait=500)) == []
    assert h.node.counters["purgatory_completions"] == 1
    h.node.resign(h.now)
    sent = h.poll()
    [resp] = [s for s in sent if isinstance(s, m.FetchResponse)]
    assert resp.error == m.NOT_LEADER_OR_FOLLOWER and resp.correlation_id == 8  # as Kafka answers on resigning
    ends = [s for s in sent if isinstance(s, m.EndQuorumEpochRequest)]
    assert {e.dst for e in ends} == {2, 3} and ends[0].preferred_candidates[0].id == 3  # most caught up first


def test_high_watermark_news_alone_waits_for_the_linger_and_data_carries_it_sooner():
    """A follower that has not heard the latest high watermark, fetching with nothing new to read, is answered once
    that news is ``high_watermark_linger_ms`` old, unless data comes first and carries it. The wake-up is set."""
    h = make_leader(high_watermark_linger_ms=10)
    h.deliver(fetch(2, 1, 1, 1))
    assert h.log.high_watermark() == 1  # replica 2 now holds the LeaderChange: committed
    # replica 3 has not heard high watermark 1: parked, its answer due 10 ms later
    assert h.deliver(fetch(3, 1, 1, 1, cid=7, wait=500)) == []
    assert h.node.poll(h.now).next_wakeup_ms == h.now + 10
    assert h.poll(at=h.now + 9) == []
    [news] = h.poll(at=h.now + 1)
    assert news.correlation_id == 7 and news.high_watermark == 1 and not news.records
    # replica 2 acknowledged offset 1 itself: it heard nothing yet either; data arrives within the linger
    assert h.deliver(fetch(2, 1, 1, 1, cid=8, wait=500)) == []
    h.now += 3
    h.node.schedule_append([b"a"], h.now)
    [data] = [s for s in h.poll() if isinstance(s, m.FetchResponse)]
    assert data.correlation_id == 8 and data.records and data.high_watermark == 1
    # a follower that knows the high watermark waits for data or MaxWaitMs, as before
    assert h.deliver(fetch(3, 2, 1, 1, cid=9, wait=500)) == []  # it made the record committed: news for it
    [hw2] = h.poll(at=h.now + 10)
    assert hw2.correlation_id == 9 and hw2.high_watermark == 2
    assert h.deliver(fetch(3, 2, 1, 1, cid=10, wait=100)) == []
    assert h.poll(at=h.now + 99) == []
    [timeout] = h.poll(at=h.now + 1)
    assert timeout.correlation_id == 10 and not timeout.records


def test_a_fetch_that_says_its_high_watermark_is_parked_against_it():
    """KIP-1166: a follower's Fetch v18 carries the high watermark it knows; the leader parks against that one, not
    against its own guess (the one it last sent). Behind: answered at once (linger 0, Kafka's way); current: parked
    until data or MaxWaitMs."""
    from dataclasses import replace

    h = make_leader(high_watermark_linger_ms=0)
    h.deliver(fetch(2, 1, 1, 1))
    assert h.node.high_watermark == 1
    # replica 2 was just sent high watermark 1, but its fetch says it knows 0 (that answer was lost): answered now
    [behind] = h.deliver(replace(fetch(2, 1, 1, 1, cid=11, wait=500), high_watermark=0))
    assert behind.correlation_id == 11 and behind.high_watermark == 1
    # replica 3 never fetched (the leader's guess: it knows nothing) but says it knows 1: parked
    assert h.deliver(replace(fetch(3, 1, 1, 1, cid=12, wait=500), high_watermark=1)) == []
    # the high watermark moves (replica 3's own fetch made offset 1 durable on a majority already): data answers it
    h.node.schedule_append([b"a"], h.now)
    [data] = [s for s in h.poll() if isinstance(s, m.FetchResponse)]
    assert data.correlation_id == 12 and data.records


def test_a_follower_sends_the_high_watermark_it_knows():
    f = NodeHarness(node_id=2, stored=ElectionState(1, 1, None))
    [req] = [s for s in f.poll(at=1) if isinstance(s, m.FetchRequest)]
    assert req.high_watermark == 0


def test_leader_never_replicates_past_its_flushed_offset():
    h = make_leader()
    h.deliver(fetch(2, 1, 1, 1))
    h.node.schedule_append([b"a"], h.now)
    h.poll(flush=False)  # appended but not yet durable
    assert h.log.end_offset() == 2 and h.log.flushed_offset() == 1
    [resp] = h.deliver(fetch(2, 1, 1, 1, cid=9))
    assert resp.records == b""


def test_anonymous_observer_gets_data_but_no_state():
    h = make_leader()
    sent = h.deliver(fetch(NO_ID, 0, 0, 1, cid=11))
    assert sent[0].records
    assert NO_ID not in h.node.state.observer_states and NO_ID not in h.node.state.voter_states


def test_append_api_requires_leadership_and_limits_size():
    h = NodeHarness()
    with pytest.raises(NotLeaderError):
        h.node.schedule_append([b"x"], 0)
    h = make_leader()
    with pytest.raises(RecordTooLargeError):
        h.node.schedule_append([b"x" * (9 << 20)], h.now)
    first, last = h.node.append_batch(_batch(3), h.now)
    assert (first, last) == (1, 3)
    h.poll()
    assert h.log.end_offset() == 4
    assert validate_batches(h.log.read(1, 1 << 20).records).batches[0].partition_leader_epoch == 1


def test_follower_truncates_before_applying_the_leader_high_watermark():
    log = MemoryLog()
    for epoch in (1, 1, 2):
        log.append_as_leader(_batch(), epoch)
    log.flush()
    h = NodeHarness(node_id=2, voters=(1, 2, 3), stored=ElectionState(3, 1, None), log=log)
    [f] = [s for s in h.poll() if isinstance(s, m.FetchRequest)]
    assert (f.fetch_offset, f.last_fetched_epoch) == (3, 2)
    resp = m.FetchResponse(1, 2, f.correlation_id, m.NONE, 1, 3, high_watermark=3,
                           diverging_epoch=OffsetAndEpoch(2, 1))
    ready = h.node.handle(Received(resp), 0)
    assert [type(op).__name__ for op in ready.log_ops] == ["TruncateTo"]
    assert ready.log_ops[0].offset == 2 and ready.high_watermark == 2  # min(truncated end, leader HW)
    assert h.node.counters["truncations"] == 1


def test_stale_fetch_response_is_ignored():
    h = NodeHarness(node_id=2, stored=ElectionState(1, 1, None))
    [f] = [s for s in h.poll() if isinstance(s, m.FetchRequest)]
    b = RecordBatchBuilder(base_offset=0, partition_leader_epoch=1)
    b.append(None, b"x", timestamp=0)
    stale = m.FetchResponse(1, 2, f.correlation_id + 1000, m.NONE, 1, 1, high_watermark=1, records=b.build())
    ready = h.node.handle(Received(stale), 0)
    assert not ready.log_ops and h.node.counters["stale_responses"] == 1


def test_late_listener_is_told_the_current_leader_and_gets_commits():
    h = make_leader()
    h.deliver(fetch(2, 1, 1, 1))
    h.node.schedule_append([b"a", b"b"], h.now)
    h.poll()
    h.deliver(fetch(2, 3, 1, 1, cid=12))

    class L:
        def __init__(self):
            self.leaders, self.batches = [], []

        def handle_leader_change(self, le):
            self.leaders.append(le)

        def handle_commit(self, batches):
            self.batches.extend(batches)

        def handle_load_snapshot(self, reader):
            raise AssertionError

    listener = L()
    h.node.register(listener)
    assert listener.leaders and listener.leaders[0].leader_id == 1 and listener.leaders[0].epoch == 1
    h.poll()
    assert [b.records for b in listener.batches] == [(), (b"a", b"b")]
    assert listener.batches[0].is_control


def test_restarted_leader_comes_back_resigned():
    h = make_leader()
    again = NodeHarness(stored=h.persisted, log=h.log)
    assert again.node.state_name == "Resigned" and again.node.epoch == 1
    with pytest.raises(NotLeaderError):
        again.node.schedule_append([b"x"], 0)


def test_truncating_below_the_high_watermark_is_fatal():
    from kraftwire.errors import RaftFatalError

    log = MemoryLog()
    for _ in range(3):
        log.append_as_leader(_batch(), 1)
    log.flush()
    log.update_high_watermark(3)
    h = NodeHarness(node_id=2, stored=ElectionState(2, 1, None), log=log)
    [f] = [s for s in h.poll() if isinstance(s, m.FetchRequest)]
    resp = m.FetchResponse(1, 2, f.correlation_id, m.NONE, 1, 2, high_watermark=3,
                           diverging_epoch=OffsetAndEpoch(1, 1))
    with pytest.raises(RaftFatalError):
        h.node.handle(Received(resp), 0)


def test_rejected_candidate_does_not_restart_the_voters_election_timer():
    log = MemoryLog()
    log.append_as_leader(_batch(), 1)
    log.flush()
    h = NodeHarness(node_id=1, stored=ElectionState(1), log=log)
    deadline = h.node.state.election_deadline_ms
    ready = h.node.handle(Received(vote_request(5, last_epoch=0, last=0)), 10)  # a stale log: rejected
    assert not ready.send[0].vote_granted and h.node.epoch == 5
    assert h.node.state.election_deadline_ms == deadline
    ready = h.node.handle(Received(vote_request(6, last_epoch=1, last=1, cid=90)), 20)  # up to date: granted
    assert ready.send[0].vote_granted and h.node.state.election_deadline_ms != deadline


def test_describe_quorum_from_leader_and_non_leader():
    h = make_leader()
    h.deliver(fetch(2, 1, 1, 1))
    h.deliver(fetch(42, 1, 1, 1, cid=13))
    [resp] = h.deliver(m.DescribeQuorumRequest(99, 1, 21))
    assert resp.error == m.NONE and resp.high_watermark == 1 and resp.leader_id == 1
    assert [(v.replica_id, v.log_end_offset) for v in resp.current_voters] == [(1, 1), (2, 1), (3, -1)]
    assert [o.replica_id for o in resp.observers] == [42]
    follower = NodeHarness(node_id=2)
    [resp] = follower.deliver(m.DescribeQuorumRequest(99, 2, 22))
    assert resp.error == m.NOT_LEADER_OR_FOLLOWER


def test_fetch_snapshot_served_in_chunks():
    from kraftwire.ids import SnapshotId

    h = make_leader()
    h.deliver(fetch(2, 1, 1, 1))
    writer = h.log.create_new_snapshot(SnapshotId(1, 1))
    writer.append(b"x" * 250)
    writer.freeze()

    def ask(position, epoch=1, sid=SnapshotId(1, 1), cid=30):
        [resp] = h.deliver(m.FetchSnapshotRequest(2, 1, cid, "kraftwire", replica_id=2, current_leader_epoch=epoch,
                                                  snapshot_id=sid, position=position, max_bytes=100))
        return resp

    first = ask(0)
    assert (first.error, first.size, first.position, len(first.unaligned_records)) == (m.NONE, 250, 0, 100)
    assert len(ask(200).unaligned_records) == 50
    assert ask(250).error == m.POSITION_OUT_OF_RANGE
    assert ask(0, sid=SnapshotId(7, 1)).error == m.SNAPSHOT_NOT_FOUND
    assert ask(0, epoch=0).error == m.FENCED_LEADER_EPOCH


def test_linger_expiry_is_a_wakeup_even_without_more_appends():
    h = NodeHarness(voters=(1,), append_linger_ms=25)
    h.poll(at=250)
    h.poll()
    h.node.schedule_append([b"a"], 300)
    ready = h.node.poll(300)
    assert not ready.log_ops and ready.next_wakeup_ms == 325
    h.apply(ready)
    ready = h.node.poll(325)
    assert [type(op).__name__ for op in ready.log_ops] == ["AppendAsLeader"] and ready.flush


def test_several_listeners_each_get_every_commit():
    h = NodeHarness(voters=(1,))
    h.poll(at=250)

    class L:
        def __init__(self):
            self.values = []

        def handle_leader_change(self, le):
            pass

        def handle_commit(self, batches):
            self.values += [r for b in batches for r in b.records]

        def handle_load_snapshot(self, reader):
            raise AssertionError

    a, b = L(), L()
    h.node.register(a)
    h.node.schedule_append([b"x"], h.now)
    h.poll()
    h.node.register(b)
    h.node.schedule_append([b"y", b"z"], h.now)
    h.poll()
    h.poll()
    assert a.values == b.values == [b"x", b"y", b"z"]


def test_begin_quorum_epoch_is_resent_only_to_voters_that_did_not_acknowledge():
    h = NodeHarness(voters=(1, 2, 3), pre_vote=False)
    sent = h.poll(at=250)
    for req in [s for s in sent if isinstance(s, m.VoteRequest)]:
        h.deliver(m.VoteResponse(req.dst, 1, req.correlation_id, m.NONE, NO_ID, 1, vote_granted=True))
    begins = {s.dst: s for r in h.readies for s in r.send if isinstance(s, m.BeginQuorumEpochRequest)}
    assert set(begins) == {2, 3}
    h.deliver(m.BeginQuorumEpochResponse(2, 1, begins[2].correlation_id, m.NONE, 1, 1))
    resent = [s for s in h.poll(at=h.now + 301) if isinstance(s, m.BeginQuorumEpochRequest)]
    assert [s.dst for s in resent] == [3]


def test_check_quorum_resigns_a_leader_nobody_fetches_from():
    h = make_leader()
    start = h.now
    h.poll(at=start + 449)
    assert h.node.is_leader()
    sent = h.poll(at=start + 450)  # 1.5 x fetch timeout (300 ms)
    assert h.node.state_name == "Resigned" and h.node.counters["check_quorum_resignations"] == 1
    assert {s.dst for s in sent if isinstance(s, m.EndQuorumEpochRequest)} == {2, 3}



# --- split votes after a leader died ---------------------------------------------------------------------------------
def _split_candidate(**kw):
    """Node 1 of three runs for epoch 1 (no pre-vote; starts at 2500 ms): node 2 runs in epoch 1 too."""
    from kraftwire.raft.states import CandidateState

    h = NodeHarness(voters=(1, 2, 3), pre_vote=False, **kw)
    sent = h.poll(at=2500)
    assert isinstance(h.node.state, CandidateState) and h.node.epoch == 1
    return h, {s.dst: s for s in sent if isinstance(s, m.VoteRequest)}


def test_a_rival_candidate_in_our_epoch_shortens_the_election_to_half_its_timeout():
    for seed in range(20):
        h, _ = _split_candidate(election_timeout_ms=1000, seed=seed)
        deadline = h.node.state.election_deadline_ms
        assert 2500 + 1000 <= deadline < 2500 + 2000  # the usual randomised election timeout
        [resp] = h.deliver(vote_request(1, cand=2, last_epoch=0, last=0))
        assert not resp.vote_granted  # we voted for ourselves
        state = h.node.state
        assert state.rival_seen and h.node.counters["split_votes"] == 1
        assert h.now <= state.election_deadline_ms <= h.now + 500
        h.deliver(vote_request(1, cand=2, last_epoch=0, last=0, cid=78))  # a retry changes nothing more
        assert h.node.counters["split_votes"] == 1


def test_a_split_candidate_still_wins_with_the_vote_that_arrives_in_time():
    h, requests = _split_candidate(election_timeout_ms=1000)
    h.deliver(vote_request(1, cand=2, last_epoch=0, last=0))
    h.deliver(m.VoteResponse(2, 1, requests[2].correlation_id, m.NONE, NO_ID, 1, vote_granted=False))
    h.deliver(m.VoteResponse(3, 1, requests[3].correlation_id, m.NONE, NO_ID, 1, vote_granted=True))
    assert h.node.is_leader()


def test_a_split_candidate_backs_off_at_its_shortened_deadline_then_runs_again():
    from kraftwire.raft.states import CandidateState

    h, _ = _split_candidate(election_timeout_ms=1000, election_backoff_max_ms=1000)
    h.deliver(vote_request(1, cand=2, last_epoch=0, last=0))
    deadline = h.node.state.election_deadline_ms
    h.poll(at=deadline)
    assert h.node.state.backoff_until_ms is not None and h.node.state.backoff_until_ms - deadline in (0, 100)
    sent = h.poll(at=h.node.state.backoff_until_ms)
    assert isinstance(h.node.state, CandidateState) and h.node.epoch == 2  # no pre-vote in this harness
    assert {s.dst for s in sent if isinstance(s, m.VoteRequest)} == {2, 3}
    assert h.now - 2500 < 1000  # the next round began before the first election timeout could have ended


def test_vote_requests_from_older_epochs_are_no_split():
    h, _ = _split_candidate(election_timeout_ms=1000)
    h.deliver(vote_request(0, cand=2, last_epoch=0, last=0))
    assert not h.node.state.rival_seen and h.node.counters["split_votes"] == 0


def test_an_observer_whose_leader_went_quiet_asks_the_other_voters():
    """Fetch timeout on an observer: it gives up on the quiet leader at once (its pending Fetch too: a dead node's
    port may hang rather than refuse) and asks the other voters, in turn while they answer without a leader (an
    election is running), never the quiet one until a fetch succeeds; the voter that names the new leader sends it
    there."""
    for seed in range(20):
        h = NodeHarness(node_id=42, voters=(1, 2, 3), seed=seed, fetch_timeout_ms=2000, request_timeout_ms=2000)
        [first] = [s for s in h.poll(at=1) if isinstance(s, m.FetchRequest)]
        sent = h.deliver(m.FetchResponse(first.dst, 42, first.correlation_id, m.NONE, 1, 1, high_watermark=0))
        assert h.node.quorum.leader_id == 1
        [to_leader] = [s for s in sent + h.poll() if isinstance(s, m.FetchRequest)]
        assert to_leader.dst == 1
        targets, pending, gave_up_at = [], [], None
        for _ in range(400):
            pending += [s for s in h.poll(at=h.now + 10) if isinstance(s, m.FetchRequest)]
            while pending and len(targets) < 7:
                req = pending.pop(0)
                targets.append(req.dst)
                gave_up_at = gave_up_at or h.now
                # mid-election voters know no leader; the sixth answer names leader 3, elected in epoch 2
                leader, epoch = (NO_ID, 1) if len(targets) < 6 else (3, 2)
                pending += [s for s in h.deliver(m.FetchResponse(req.dst, 42, req.correlation_id,
                                                                 m.NOT_LEADER_OR_FOLLOWER, leader, epoch,
                                                                 high_watermark=-1))
                            if isinstance(s, m.FetchRequest)]
            if len(targets) == 7:
                break
        assert gave_up_at <= 2300, (seed, gave_up_at)  # at the fetch timeout, not the pending Fetch's own timeout
        assert 1 not in targets[:6] and all(a != b for a, b in zip(targets[:5], targets[1:6])), (seed, targets)
        assert h.node.quorum.leader_id == 3 and targets[6] == 3, (seed, targets)


def test_a_quorum_request_naming_no_replica_is_invalid_and_moves_nothing():
    """Kafka's validateVoterOnlyRequest: a Vote, BeginQuorumEpoch or EndQuorumEpoch (of a current or newer epoch) whose
    candidate or leader id is negative is INVALID_REQUEST. The fuzzer (tests/fuzz) found an EndQuorumEpoch with
    LeaderId -1 and the largest epoch stopping a leader: following "leader -1" is an illegal transition, which
    fails the node."""
    h = NodeHarness(voters=(1,))
    h.poll(at=250)
    assert h.node.is_leader() and h.node.epoch == 1
    top = 2**31 - 1
    for request in (m.EndQuorumEpochRequest(-1, 1, 5, "kraftwire", resigned_leader_id=-1, resigned_leader_epoch=top,
                                            preferred_candidates=()),
                    m.BeginQuorumEpochRequest(-1, 1, 6, "kraftwire", voter_id=1, new_leader_id=-1,
                                              new_leader_epoch=top),
                    vote_request(top, cand=-1, last_epoch=1, last=1, cid=7)):
        [answer] = [s for s in h.deliver(request) if s.correlation_id == request.correlation_id]
        assert answer.error == m.INVALID_REQUEST, (request, answer)
        assert h.node.is_leader() and h.node.epoch == 1
