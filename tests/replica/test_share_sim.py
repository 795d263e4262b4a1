"""The seeded share-partition simulation (``kraftwire.testing.share_sim``): several share consumers on one
share-partition through leader changes, lost answers, members leaving and lock expiries, with Kafka's invariants
checked after every event and convergence required once the faults stop; and the planted bugs it must catch.
``KRAFTWIRE_SIM_SEEDS`` seeds (default 100)."""

from __future__ import annotations

import os

import pytest

from kraftwire.replica import share_partition as sp
from kraftwire.replica import share_sessions
from kraftwire.testing import share_sim

SEEDS = int(os.environ.get("KRAFTWIRE_SIM_SEEDS", "100"))
EVENTS = 1500


@pytest.mark.parametrize("seed", range(SEEDS))
def test_share_simulation(seed):
    share_sim.ShareSim(seed, EVENTS).run()


def test_the_runs_reach_the_interesting_paths():
    totals: dict[str, int] = {}
    for seed in range(10):
        for k, v in share_sim.ShareSim(5000 + seed, EVENTS).run().items():
            totals[k] = totals.get(k, 0) + v
    for path in ("acquired", "redelivered", "acks", "acks_refused", "releases", "renewals", "expiries", "leader_changes",
                 "lost_writes", "lost_fetches", "leaves", "archived_at_limit", "finished", "reload_checks",
                 "refused_writes", "renewals_refused", "dead_letters", "dlq_resumed"):
        assert totals[path] > 20, (path, totals)


def test_a_failure_names_the_seed_and_the_replay_command(monkeypatch, capsys):
    monkeypatch.setattr(sp.SharePartition, "expire_locks", _expire_every_lock)
    message = _first_failure()
    seed = int(message.split(" seed ")[1].split(":")[0])
    assert f"replay: python -m kraftwire.testing.share_sim --seed {seed}" in message
    assert share_sim.main(["--seed", str(seed), "--events", "800"]) == 1
    assert "replay: python -m kraftwire.testing.share_sim" in capsys.readouterr().err


def _first_failure(seeds=range(20)) -> str:
    for seed in seeds:
        try:
            share_sim.ShareSim(seed, 800).run()
        except share_sim.SimFailure as exc:
            return str(exc)
    raise AssertionError("the broken rule went unnoticed")


def _expire_every_lock(self, now_ms):
    return self._release(lambda r: True)


def test_a_lock_that_expires_before_its_deadline_is_caught(monkeypatch):
    monkeypatch.setattr(sp.SharePartition, "expire_locks", _expire_every_lock)
    assert "the oracle says acquired by" in _first_failure()


def test_an_acquisition_that_takes_an_acquired_record_is_caught(monkeypatch):
    """The planted bug: a fetch re-acquires records another member's live lock holds."""
    real = sp.SharePartition.acquire

    def acquire(self, member_id, first_offset, last_offset, max_records, now_ms):
        for o in range(max(first_offset, self.start_offset), min(last_offset + 1, self.fetched_end)):
            if self.records[o].state == sp.ACQUIRED:
                self.records[o].state = sp.AVAILABLE
        return real(self, member_id, first_offset, last_offset, max_records, now_ms)

    monkeypatch.setattr(sp.SharePartition, "acquire", acquire)
    assert "holds it" in _first_failure()


def test_a_redelivery_without_a_raised_delivery_count_is_caught(monkeypatch):
    real = sp.SharePartition.acquire

    def acquire(self, member_id, first_offset, last_offset, max_records, now_ms):
        got = real(self, member_id, first_offset, last_offset, max_records, now_ms)
        for a in got:
            if a.delivery_count > 1:
                for o in range(a.first_offset, a.last_offset + 1):
                    self.records[o].delivery_count -= 1
        return [sp.AcquiredRecords(a.first_offset, a.last_offset, max(a.delivery_count - 1, 1)) for a in got]

    monkeypatch.setattr(sp.SharePartition, "acquire", acquire)
    assert "delivered with count" in _first_failure()


def test_a_renewal_that_does_not_extend_the_lock_is_caught(monkeypatch):
    real = sp.SharePartition.acknowledge

    def acknowledge(self, member_id, batches, now_ms):
        deadlines = {o: r.deadline_ms for o, r in self.records.items()}
        answer = real(self, member_id, batches, now_ms)
        for o, r in self.records.items():
            if r.state == sp.ACQUIRED:
                r.deadline_ms = deadlines[o]
        return answer

    monkeypatch.setattr(sp.SharePartition, "acknowledge", acknowledge)
    # the leader lets the renewed record go (available again, or archived at the limit and passed by the start)
    message = _first_failure()
    assert "the oracle says acquired by" in message or "below the start offset" in message, message


def test_a_release_that_ignores_the_delivery_count_limit_is_caught(monkeypatch):
    def finish(self, r, state, cause=None, *, dlq=True):
        r.state, r.member_id, r.deadline_ms = state, "", 0

    monkeypatch.setattr(sp.SharePartition, "_finish_acquisition", finish)
    assert "on the leader" in _first_failure()  # the oracle archived it at the limit, the leader offers it again


def test_a_start_offset_that_skips_an_available_record_is_caught(monkeypatch):
    def advance(self):
        while self.start_offset < self.fetched_end and self.records[self.start_offset].state != sp.ACQUIRED:
            del self.records[self.start_offset]
            self.start_offset += 1

    monkeypatch.setattr(sp.SharePartition, "_advance_start", advance)
    assert "not finished" in _first_failure()


def test_a_write_that_leaves_out_released_records_is_caught(monkeypatch):
    """The planted bug: only finished records are written, so a new leader redelivers released records with the
    count they had before their last delivery."""
    real = sp.SharePartition._write

    def write(self, changed, pending=False):
        w = real(self, changed, pending)
        kept = tuple(b for b in w.state_batches if b.delivery_state != sp.AVAILABLE)
        return sp.ShareWrite(w.leader_epoch, w.start_offset, w.delivery_complete_count, kept, w.pending)

    monkeypatch.setattr(sp.SharePartition, "_write", write)
    assert "loads from the durable state as" in _first_failure()


def test_an_acknowledgement_by_a_member_that_does_not_hold_the_records_is_caught(monkeypatch):
    real = sp.SharePartition.acknowledge

    def acknowledge(self, member_id, batches, now_ms):
        owner = next((self.records[o].member_id for b in batches
                      for o in range(b.first_offset, b.last_offset + 1)
                      if o in self.records and self.records[o].state == sp.ACQUIRED), member_id)
        return real(self, owner, batches, now_ms)

    monkeypatch.setattr(sp.SharePartition, "acknowledge", acknowledge)
    assert "the oracle expected a refusal" in _first_failure()


def test_a_closed_connection_that_releases_nobody_is_caught(monkeypatch):
    """The planted bug: the session cache ends a closed connection's session but names no member to release."""
    real = share_sessions.ShareSessionCache.connection_closed

    def connection_closed(self, connection_id):
        gone = real(self, connection_id)
        return None if gone is None else share_sessions.Departure(gone.group_id, None, gone.group_empty)

    monkeypatch.setattr(share_sessions.ShareSessionCache, "connection_closed", connection_closed)
    assert "connection closed: the session cache released" in _first_failure()


def test_a_session_epoch_that_does_not_move_on_is_caught(monkeypatch):
    """The planted bug: an incremental fetch leaves the session's epoch where it was; the consumer's next fetch,
    carrying the epoch it was told, is then refused."""
    monkeypatch.setattr(share_sessions, "next_epoch", lambda epoch: 1 if epoch == 0 else epoch)
    assert "refused INVALID_SHARE_SESSION_EPOCH" in _first_failure()


def test_a_refused_write_that_is_not_rolled_back_is_caught(monkeypatch):
    """The planted bug (issue #43's first difference from Kafka): the share coordinator refused an acknowledgement's
    write, yet the leader keeps the records acknowledged — finished on the leader, never durably."""
    real = sp.SharePartition.complete

    def complete(self, write, durable, now_ms):
        return real(self, write, True, now_ms)

    monkeypatch.setattr(sp.SharePartition, "complete", complete)
    # the leader's start offset passes records the oracle has back with their member
    assert "is below the start offset" in _first_failure()


def test_a_rollback_that_ignores_an_expired_lock_is_caught(monkeypatch):
    """The planted bug: a rolled-back record goes back ACQUIRED to its member even though its lock ran out while the
    write was on its way (Kafka 4.4's ``completeStateTransition`` releases it)."""
    real = sp.SharePartition.complete

    def complete(self, write, durable, now_ms):
        return real(self, write, durable, -1)

    monkeypatch.setattr(sp.SharePartition, "complete", complete)
    message = _first_failure()  # the record is acquired on the leader, the oracle has it back (or archived)
    assert "the oracle says" in message or "on the leader" in message, message


def test_a_reject_that_skips_the_dead_letter_queue_is_caught(monkeypatch):
    finish = sp.SharePartition._finish_acquisition

    def straight_to_archived(self, r, state, cause=None, *, dlq=True):
        finish(self, r, sp.ARCHIVED if state == sp.ARCHIVING else state, cause, dlq=dlq)

    monkeypatch.setattr(sp.SharePartition, "_finish_acquisition", straight_to_archived)
    assert "the oracle says ARCHIVING" in _first_failure()


def test_dead_letters_handed_out_twice_are_caught(monkeypatch):
    take = sp.SharePartition.dead_letters

    def again(self):
        letters = take(self)
        for r in self.records.values():
            r.dlq_started = False
        return letters

    monkeypatch.setattr(sp.SharePartition, "dead_letters", again)
    assert "handed out for the DLQ twice" in _first_failure()


def test_an_archiving_that_leaves_records_behind_is_caught(monkeypatch):
    archive = sp.SharePartition.archive_dead_letters

    def first_only(self, letter):
        return archive(self, sp.DeadLetter(letter.first_offset, letter.first_offset, letter.delivery_count,
                                           letter.cause))

    monkeypatch.setattr(sp.SharePartition, "archive_dead_letters", first_only)
    message = _first_failure()
    assert "on the leader" in message or "no convergence" in message, message


def test_a_new_leader_that_forgets_archiving_records_is_caught(monkeypatch):
    initialize = sp.SharePartition.initialize.__func__

    def forgetful(cls, config, durable, **kw):
        part = initialize(cls, config, durable, **kw)
        for r in part.records.values():
            r.dlq_started = r.dlq_started or r.state == sp.ARCHIVING
        return part

    monkeypatch.setattr(sp.SharePartition, "initialize", classmethod(forgetful))
    message = _first_failure()
    assert "still ARCHIVING" in message or "no convergence" in message, message
