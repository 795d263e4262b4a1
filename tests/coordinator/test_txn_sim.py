"""The seeded transaction coordinator simulation (``kraftwire.testing.txn_sim``): the pure transaction shard, hosted
by the real coordinator runtime, across coordinator moves, timeouts and zombie producers, with its invariants after every event and convergence.
``KRAFTWIRE_SIM_SEEDS`` / 2 seeds (default 50)."""

from __future__ import annotations

import os

from kraftwire.coordinator.txn import coordinator as tc
from kraftwire.testing import txn_sim

import pytest

SEEDS = max(1, int(os.environ.get("KRAFTWIRE_SIM_SEEDS", "100")) // 2)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_transaction_simulation(seed):
    txn_sim.TxnSim(seed, 1500).run()


def test_the_runs_reach_the_interesting_paths():
    totals: dict[str, int] = {}
    for seed in range(10):
        for k, v in txn_sim.TxnSim(7000 + seed, 1500).run().items():
            totals[k] = totals.get(k, 0) + v
    for path in ("commits", "aborts", "fenced", "moves", "timeouts", "concurrent", "markers_resent"):
        assert totals[path] > 10, (path, totals)


def _first_failure(seeds=range(30)) -> str:
    for seed in seeds:
        try:
            txn_sim.TxnSim(seed, 800).run()
        except txn_sim.SimFailure as exc:
            return str(exc)
    raise AssertionError("the broken rule went unnoticed")


def test_a_coordinator_that_does_not_check_the_epoch_is_caught(monkeypatch):
    monkeypatch.setattr(tc.TxnShard, "_check", lambda self, t, producer_id, epoch: 0 if t is not None else
                        tc.ec.INVALID_PRODUCER_ID_MAPPING)
    assert "was accepted while" in _first_failure()


def test_a_load_that_forgets_prepared_markers_is_caught(monkeypatch):
    monkeypatch.setattr(tc.TxnShard, "loaded", lambda self: [])
    assert "did not complete" in _first_failure()


def test_markers_sent_before_their_prepare_is_committed_are_caught(monkeypatch):
    """The simulation drives the runtime the broker runs: a runtime that does not wait for the commit sends a
    transaction's markers while its PrepareCommit can still be lost with the coordinator, and the next one decides
    the transaction the other way."""
    from kraftwire.coordinator import runtime as rt

    monkeypatch.setattr(rt.CoordinatorRuntime, "_await_commit", lambda self, h, end, done: done(tc.ec.NONE))
    message = _first_failure()
    assert "commit after abort" in message or "abort after commit" in message


@pytest.mark.parametrize("seed", range(SEEDS))
def test_transaction_simulation_at_transaction_version_2(seed):
    """The same run with KIP-890 part 2 clients: one epoch per transaction, and a fenced producer's writes never
    land (the epoch-bump and zombie-fencing rules of Kafka's TransactionsTest, as a property)."""
    txn_sim.TxnSim(seed, 1500, client_version=2).run()


def test_the_transaction_version_2_runs_reach_the_interesting_paths():
    totals: dict[str, int] = {}
    owners = 0
    for seed in range(10):
        sim = txn_sim.TxnSim(7000 + seed, 1500, client_version=2)
        for k, v in sim.run().items():
            totals[k] = totals.get(k, 0) + v
        owners += len(sim.epoch_owner)
    for path in ("commits", "aborts", "fenced", "moves", "timeouts", "markers_resent"):
        assert totals[path] > 10, (path, totals)
    assert owners > 100  # transactions whose epochs were checked apart


def _first_v2_failure(seeds=range(30)) -> str:
    for seed in seeds:
        try:
            txn_sim.TxnSim(seed, 800, client_version=2).run()
        except txn_sim.SimFailure as exc:
            return str(exc)
    raise AssertionError("the broken rule went unnoticed")


def test_an_end_that_does_not_bump_the_epoch_is_caught(monkeypatch):
    """A coordinator ending TV2 transactions as TV0 ones lets the next transaction reuse the epoch."""
    end_txn = tc.TxnShard.end_txn
    monkeypatch.setattr(tc.TxnShard, "end_txn", lambda self, *args, client_version=0: end_txn(self, *args))
    message = _first_v2_failure()
    assert "--transaction-version 2" in message  # the replay command names the run
    assert "share producer" in message or "was accepted while" in message  # the epoch it answered is not bumped


def test_a_write_below_a_markers_epoch_is_caught(monkeypatch):
    """A coordinator that accepts an add from the epoch before the bump (a zombie of the ended transaction)."""
    check = tc.TxnShard._check

    def lax(self, t, producer_id, epoch):
        return check(self, t, producer_id, epoch + 1 if t is not None and epoch + 1 == t.producer_epoch else epoch)

    monkeypatch.setattr(tc.TxnShard, "_check", lax)
    message = _first_v2_failure()
    assert "after a marker at epoch" in message or "was accepted while" in message
