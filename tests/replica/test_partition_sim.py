"""The seeded partition simulation (``kraftwire.testing.partition_sim``): the controller, the replica rules and the
partition log under kills, partitions, drops and reordering, with its invariants checked after every event, every
follower back in the ISR under steady writes once the faults stop, and then convergence. ``KRAFTWIRE_SIM_SEEDS``
seeds (default 100; ``--sim-seeds N``)."""

from __future__ import annotations

import os

import pytest

from kraftwire.replica import follower as rules
from kraftwire.replica import hosting
from kraftwire.replica import leader_fetch
from kraftwire.replica import partition as rp
from kraftwire.replica.leader_append import record_append, record_marker
from kraftwire.replica.partition import FOLLOWER
from kraftwire.server.runtime import partition_runtime as runtime
from kraftwire.server.runtime import replica_core as core
from kraftwire.testing import partition_sim as ps

SEEDS = int(os.environ.get("KRAFTWIRE_SIM_SEEDS", "100"))
EVENTS = 1500


@pytest.mark.parametrize("seed", range(SEEDS))
def test_partition_simulation(seed):
    ps.run_seed(seed, EVENTS)


def test_the_runs_reach_the_interesting_paths():
    totals: dict[str, int] = {}
    for seed in range(25):
        for k, v in ps.run_seed(10_000 + seed, EVENTS).counts.items():
            totals[k] = totals.get(k, 0) + v
    for path in ("acked", "produce_acks1", "truncated", "shrink_proposed", "alter_NONE", "alter_FENCED_LEADER_EPOCH",
                 "fetch_FENCED_LEADER_EPOCH", "fetch_answer_of_an_older_epoch", "leader_elected", "killed",
                 "isolated", "session_expired", "follower_appended", "ack_timed_out", "ack_not_leader",
                 "produce_NOT_ENOUGH_REPLICAS", "preferred_election", "delete_records", "delete_records_out_of_range",
                 "retention", "follower_log_start_moved", "out_of_range_restart", "fetch_OFFSET_OUT_OF_RANGE",
                 "controller_failover", "produce_txn", "produce_txn_marker", "last_stable_offset_moved",
                 "reassigned", "reassign_cancelled", "replica_deleted", "elr_joined", "isr_emptied",
                 "elected_from_elr"):
        assert totals.get(path, 0) > 0, (path, totals)


@pytest.mark.parametrize("seed", range(5))
def test_without_eligible_leader_replicas(seed):
    """The same invariants with eligible.leader.replicas.version 0: the ISR is never emptied."""
    sim = ps.run_seed(20_000 + seed, EVENTS, elr=False)
    assert sim.counts.get("isr_emptied", 0) == 0 and sim.counts.get("elected_from_elr", 0) == 0


def test_an_elr_holding_replicas_that_left_while_the_isr_held_min_isr_is_caught(monkeypatch):
    """KIP-966's rule that only replicas leaving the ISR below min ISR are eligible is what keeps an election from
    the ELR from losing acknowledged records: make every replica outside the ISR eligible and an invariant fails."""
    from kraftwire.metadata.controller import partitions as pc

    def everyone(p, isr, min_isr, unclean_shutdown=(), replicas=None):
        if len(isr) >= min_isr:
            return ()
        return tuple(sorted(b for b in p.replicas if b not in isr and b not in unclean_shutdown))

    monkeypatch.setattr(pc, "target_elr", everyone)
    message = _first_failure()
    assert "Error:" not in message, message


def _first_failure(seeds=range(20), events: int = 600) -> str:
    for seed in seeds:
        try:
            ps.run_seed(seed, events)
        except ps.SimulationFailure as exc:
            return str(exc)
    raise AssertionError("the broken rule went unnoticed")


def test_a_high_watermark_that_ignores_the_followers_is_caught(monkeypatch):
    def advance(self, log_end, min_insync_replicas, **_):
        if self.role == rp.LEADER and log_end > self.high_watermark:
            self.high_watermark = log_end
            return True
        return False

    monkeypatch.setattr(rp.ReplicaState, "advance_high_watermark", advance)
    message = _first_failure()
    assert "seed" in message and "replay: python -m kraftwire.testing.partition_sim --seed" in message
    assert "Error:" not in message, message  # caught by an invariant, not by a broken stand-in


def test_a_high_watermark_counting_the_isr_only_starves_a_follower_and_is_caught(monkeypatch):
    # kraftwire's rule before it waited, as Kafka's leader does, for caught-up followers outside the ISR: a slower
    # follower keeping pace under steady writes never reaches the high watermark, so never rejoins
    def isr_only(self, log_end, min_insync_replicas, **_):
        if self.role != rp.LEADER or len(self.isr) < self.min_isr(min_insync_replicas):
            return False
        hw = min([log_end] + [self.followers[b].end_offset for b in self.maximal_isr() if b != self.broker_id])
        if hw > self.high_watermark:
            self.high_watermark = hw
            return True
        return False

    monkeypatch.setattr(rp.ReplicaState, "advance_high_watermark", isr_only)
    message = _first_failure()
    assert "under steady writes, no full ISR within" in message, message


def test_an_isr_that_takes_a_lagging_follower_is_caught(monkeypatch):
    def expand(self, replica, eligible):
        if (self.role != rp.LEADER or self.pending is not None or replica in self.isr or replica not in self.followers
                or not eligible):  # only the lag is ignored (eligibility has its own mutant)
            return None
        self.pending = rp.PendingIsr(tuple(self.isr) + (replica,), True)
        return self.pending

    monkeypatch.setattr(rp.ReplicaState, "propose_expansion", expand)
    message = _first_failure()
    assert "ISR member" in message or "acknowledged" in message or "committed" in message, message


def test_an_isr_shrunk_without_alter_partition_is_caught(monkeypatch):
    original = rp.ReplicaState.propose_shrink

    def shrink_locally(self, now_ms, lag_ms, leader_end):
        pending = original(self, now_ms, lag_ms, leader_end)
        if pending is not None:
            self.isr, self.pending = pending.isr, None  # the leader drops members on its own word
        return None

    monkeypatch.setattr(rp.ReplicaState, "propose_shrink", shrink_locally)
    # (the ISR the controller never hears of also stops followers from rejoining, which the liveness check under
    # steady writes reports first: set aside here, to see the safety invariants catch it)
    monkeypatch.setattr(ps.PartitionSim, "rejoin", lambda self, limit: None)
    message = _first_failure()
    assert "acknowledged" in message or "committed" in message or "ISR member" in message, message


def test_acks_without_min_insync_replicas_copies_are_caught(monkeypatch):
    monkeypatch.setattr(rp.ReplicaState, "min_isr", lambda self, n: 1)
    assert "fewer than min.insync.replicas" in _first_failure()


def test_a_last_stable_offset_released_at_the_marker_is_caught(monkeypatch):
    # kraftwire's rule before issue #35 item 4: a completed transaction stopped holding the last stable offset when
    # its marker was appended, not when the high watermark passed it; a leader change losing the marker then
    # reopened the transaction below what the old leader had served (seed 4 at 1500 events then, among others)
    from kraftwire.replica.transactions import PartitionTxns

    monkeypatch.setattr(PartitionTxns, "first_unstable_offset", PartitionTxns.first_undecided_offset)
    for seed in range(100):
        try:
            ps.run_seed(seed, EVENTS)
        except ps.SimulationFailure as exc:
            assert "last stable offset" in str(exc) and "below" in str(exc), str(exc)
            return
    raise AssertionError("the broken rule went unnoticed")


def test_a_follower_that_never_truncates_is_caught(monkeypatch):
    monkeypatch.setattr(rules, "truncation_offset", lambda epoch, end, local, log_end: log_end)
    _first_failure()


def test_seed_130_an_old_leader_serving_stale_records_below_the_log_start():
    """Seed 130 (with the reassignment events): b4, leader of p1 in epoch 0, is killed holding 67..89, never
    committed (their acks=-1 waited for b2, dead); b2 leads epoch 1 from 67, and retention moves its log start to 90,
    its epoch cache to [(1, 90)]. b4 restarts and fetches at 90 in epoch 0: answered (0, 90), not diverging, as
    Kafka 4.4 answers (tests/kafka/test_epoch_cache_oracle.py); it joins the ISR, acts on no answer (one timed out,
    two lost, two came after its leader epoch moved on: Kafka's fetcher drops those too), is the last ISR member when
    every session expires, and leads epoch 5 with its own 67..89 below its high watermark. The invariant leaves the
    records below the highest leader log start alone (Kafka deleted them) on a replica no fetch answer told so, and
    holds everywhere above it. (Without eligible leader replicas, as the seed was found: with them the last ISR
    member's fencing empties the ISR instead.)"""
    sim = ps.run_seed(130, EVENTS, elr=False)
    assert "t=69100 b4 leads p1 epoch 5 from 90 isr=[4]" in sim.trail  # the run still reaches the case
    assert sim.deleted_below[1] >= 90 and sim.disagreement([(67, 67, b"stale")], 1) is None
    assert sim.disagreement([(67, 67, b"stale")], 1, told=90) is not None  # told it is deleted, yet holding it
    assert sim.disagreement([(sim.deleted_below[1], sim.deleted_below[1], b"stale")], 1) is not None


def test_a_seed_replays_with_its_trail(capsys):
    assert ps.main(["--seed", "7", "--events", "200"]) == 0
    out = capsys.readouterr().out
    assert "settle: heal everything" in out and "leads p" in out


# ------------------------------------------------------------------------------------------------ the real runtime
# The simulation runs the broker's own partition steps (``kraftwire.server.runtime.partition_runtime``, which the replica
# manager and the replica fetchers run) and the leader's append plan (``kraftwire.replica.leader_append``): a step
# broken there is a broker broken, and the simulation sees it (issue #39: it no longer checks a copy).


def test_a_leader_recording_a_transaction_at_its_last_offset_is_caught(monkeypatch):
    # the leader records what it appended (``leader_append.record_append``) instead of folding it again: a wrong
    # first offset makes its last stable offset differ from the one a new leader folds from the same log
    def at_last(plan, first_offset, last_offset, table, txns, verifications):
        record_append(plan, last_offset, last_offset, table, txns, verifications)

    monkeypatch.setattr(runtime, "record_append", at_last)
    message = _first_failure(range(25), 1500)
    assert "last stable offset" in message, message


def test_a_leader_marker_releasing_the_last_stable_offset_at_once_is_caught(monkeypatch):
    # ``leader_append.record_marker`` as the leader runs it: the transaction must stay unstable until the high
    # watermark passes its marker, on the leader that appended it as on one that folds it
    def released(plan, first_offset, last_offset, table, txns, verifications, high_watermark):
        return record_marker(plan, first_offset, last_offset, table, txns, verifications, 1 << 62)

    monkeypatch.setattr(runtime, "record_marker", released)
    message = _first_failure(range(25), 1500)
    assert "last stable offset" in message, message


def test_a_log_high_watermark_not_the_replica_states_is_caught(monkeypatch):
    def to_the_end(state, lg, min_insync_replicas, *, now_ms, lag_ms, brokers):
        moved = state.advance_high_watermark(lg.end_offset(), min_insync_replicas, now_ms=now_ms, lag_ms=lag_ms,
                                             brokers=brokers)
        if moved:
            lg.update_high_watermark(lg.end_offset())
        return moved

    monkeypatch.setattr(runtime, "advance", to_the_end)
    message = _first_failure()
    assert "acknowledged" in message or "committed" in message, message


def test_a_leader_taking_a_followers_fetch_for_its_log_end_is_caught(monkeypatch):
    def at_the_end(state, lg, replica, fetch_offset, *rest):
        return original(state, lg, replica, lg.end_offset(), *rest)

    original = runtime.leader_saw_fetch
    monkeypatch.setattr(runtime, "leader_saw_fetch", at_the_end)
    message = _first_failure()
    assert "acknowledged" in message or "committed" in message or "ISR member" in message, message


def test_a_follower_that_does_not_execute_its_truncation_is_caught(monkeypatch):
    monkeypatch.setattr(runtime, "follower_diverged", lambda lg, epoch, end_offset: lg.end_offset())
    _first_failure()


def test_a_follower_whose_log_start_stays_is_caught(monkeypatch):
    monkeypatch.setattr(runtime, "follow_log_start", lambda state, lg, leader_start: False)
    message = _first_failure()
    assert "below its high watermark" in message or "converge" in message, message


def test_a_follower_restarting_at_the_leaders_end_when_out_of_range_is_caught(monkeypatch):
    def restart(lg, leader_end, leader_start):
        lg.restart_at(leader_end)
        return "restart", leader_end

    monkeypatch.setattr(runtime, "follower_out_of_range", restart)
    message = _first_failure()
    assert "acknowledged" in message or "committed" in message or "ISR member" in message, message


def test_a_lost_alter_partition_that_is_never_sent_again_is_caught(monkeypatch):
    monkeypatch.setattr(rp.ReplicaState, "alter_lost", lambda self, proposal: None)
    assert "under steady writes, no full ISR within" in _first_failure()


def test_a_leader_serving_a_follower_without_its_last_fetched_epoch_is_caught(monkeypatch):
    """The leader's fetch checks (``replica.leader_fetch``, shared with the Fetch handler) run in the simulation:
    a leader that never answers DivergingEpoch leaves a follower's stale suffix in place."""
    def without_epoch(fetch_offset, last_fetched_epoch, log_start, log_end, epoch_end):
        return original(fetch_offset, -1, log_start, log_end, epoch_end)

    original = leader_fetch.check_fetch_position
    monkeypatch.setattr(leader_fetch, "check_fetch_position", without_epoch)
    message = _first_failure()
    assert "acknowledged" in message or "committed" in message or "ISR member" in message, message


def test_a_leader_proposing_an_ineligible_follower_for_the_isr_is_caught(monkeypatch):
    """KIP-903 (``may_join_isr``, run in ``partition_runtime.leader_saw_fetch``): a fenced broker or an older
    incarnation of one that keeps fetching is not proposed for the ISR."""
    monkeypatch.setattr(runtime, "may_join_isr", lambda registration, broker_epoch: True)
    assert "for the ISR though its image shows it ineligible" in _first_failure()


def test_several_alter_partitions_in_flight_at_once_are_caught(monkeypatch):
    """``ReplicaState.alter_to_send``: one AlterPartition at a time per partition."""
    def send_whenever_pending(self):
        if self.pending is not None:
            self.in_flight = True
        return self.pending

    monkeypatch.setattr(rp.ReplicaState, "alter_to_send", send_whenever_pending)
    assert "sends a second AlterPartition" in _first_failure()


# ------------------------------------------------------------------------------------------------ the replica manager
# The brokers of the simulation run the replica manager's own decisions (``kraftwire.server.runtime.replica_core``,
# which ``ReplicaManager`` runs on files and the event loop): a decision broken there is a broker broken, and the
# simulation sees it.


def test_a_broker_hosting_a_partition_the_image_does_not_place_on_it_is_caught(monkeypatch):
    def place_everywhere(self, topic_id, topic, index, reg, cfg, may_create=lambda: True):
        hp = self.by_id.get((topic_id, index))  # the replica check forgotten
        if hp is None:
            hp = self._host(topic_id, topic, index, cfg)
        else:
            self._configure(hp, cfg)
        return hp, self.apply_registration(hp, reg)

    monkeypatch.setattr(core.ReplicaCore, "place", place_everywhere)
    message = _first_failure()
    assert "though its image places" in message, message
    assert "replay: python -m kraftwire.testing.partition_sim --seed" in message


def test_a_follower_not_fetched_after_it_stops_leading_is_caught(monkeypatch):
    """``ReplicaCore.apply_registration`` runs ``hosting.fetcher_action``: a partition that becomes a follower must
    be handed to a fetcher of its new leader."""
    monkeypatch.setattr(hosting, "fetcher_action",
                        lambda role, new_leader_epoch, followed: hosting.KEEP if role == FOLLOWER else hosting.UNFOLLOW)
    assert "under steady writes, no full ISR within" in _first_failure()


def test_an_acks_all_wait_ending_one_offset_early_is_caught(monkeypatch):
    real = core.ReplicaCore.wait_committed

    def early(self, hp, end, callback, timeout_ms):
        real(self, hp, end - 1, callback, timeout_ms)

    monkeypatch.setattr(core.ReplicaCore, "wait_committed", early)
    message = _first_failure()
    assert "acknowledged" in message and "not committed" in message, message


def test_a_follower_ignoring_the_leaders_diverging_epoch_is_caught(monkeypatch):
    real = core.ReplicaCore.follower_fetched

    def no_divergence(self, hp, error, diverging, records, high_watermark, log_start):
        return real(self, hp, error, None, records, high_watermark, log_start)

    monkeypatch.setattr(core.ReplicaCore, "follower_fetched", no_divergence)
    message = _first_failure()
    assert "below its high watermark" in message or "committed" in message, message


def test_a_follower_whose_high_watermark_stays_behind_the_leaders_is_caught(monkeypatch):
    real = core.ReplicaCore.follower_fetched

    def without_high_watermark(self, hp, error, diverging, records, high_watermark, log_start):
        return real(self, hp, error, diverging, records, -1, log_start)

    monkeypatch.setattr(core.ReplicaCore, "follower_fetched", without_high_watermark)
    assert "no convergence after" in _first_failure()


def test_a_leader_not_raising_its_high_watermark_on_a_followers_fetch_is_caught(monkeypatch):
    def without_advance(self, hp, replica, fetch_offset, broker_epoch):
        pending = runtime.leader_saw_fetch(hp.state, hp.log, replica, fetch_offset, broker_epoch,
                                           self.image_brokers().get(replica), self.now_ms())
        if pending is not None:
            self._send_alter(hp)
        return pending  # the high watermark left for a later event to raise

    monkeypatch.setattr(core.ReplicaCore, "replica_fetched", without_advance)
    assert "after a follower's fetch though its followers allow" in _first_failure()
