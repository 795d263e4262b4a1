"""A seeded simulation of one ``__transaction_state`` partition's transaction coordinator (#20 groundwork).

**What runs.** The real pure ``TxnShard`` on a partition with three replicas (followers copy the leader's log at
random; the high watermark is the shortest in-sync log), hosted by the real coordinator runtime
(``kraftwire.coordinator.runtime`` with ``coordinator.txn.hosting.TxnKind``, as ``server/apis/txn_apis.py`` hosts it): a
result's records are appended, its replies and marker requests released once the high watermark passes them. Producers (each with a transactional
id, some sharing one, as a restarted instance does) run init, add partitions, end (commit or abort); marker
requests complete after a delay through ``markers_written``. Partition "data" is modelled as the set of
transactional writes each producer made, so the outcome of every transaction can be checked.

**Faults.** The coordinator broker dies (pending writes are refused NOT_COORDINATOR and markers in flight are lost;
the runtime loads a new shard from an in-sync replica's log and resends the markers of transactions it finds
prepared once the high watermark reaches that log's end); dead brokers return truncated;
transactions time out; a second producer instance takes over a transactional id (the first becomes a zombie).

**Invariants after every event.**

* a transaction's outcome is final: once the markers of a transaction (its id, producer, epoch and start: one epoch
  runs many transactions in turn) went out for a commit (an abort), none goes out for the other result;
* a zombie is fenced: the coordinator accepts AddPartitions and EndTxn only from the transactional id's current
  producer id and epoch;
* a loaded shard equals the live one (each transactional id's producer, epoch, state and partitions);
* in-sync replicas agree below the high watermark;
* under transaction.version 2 (``client_version=2``: producers add as a partition leader does for their Produce v12
  and end with EndTxn v5, going on with the producer id and epoch it answers), **one epoch per transaction**: no two
  transactions of a producer id share an epoch (their markers' epochs differ), and a fenced producer's writes never
  land — a write (an accepted add) is never below the epoch of a marker already written for its producer id, so
  what a producer wrote after its transaction ended, at that transaction's epoch, is refused.

**Convergence.** The faults stop; every transaction that reached Prepare* completes, and each producer's last
answered EndTxn matches the coordinator's final state.
"""

from __future__ import annotations

import sys

from kraftwire import error_codes as ec
from kraftwire.coordinator.txn import coordinator as tc
from kraftwire.coordinator.txn.hosting import TxnKind
from kraftwire.testing.coordinator_log import BROKERS, ReplicatedLogSim, SimFailure, replay_main

__all__ = ["SimFailure", "TxnSim", "main"]


TOPICS = [("t", p) for p in range(4)]


class Producer:
    def __init__(self, pid_slot: int, transactional_id: str) -> None:
        self.slot = pid_slot
        self.transactional_id = transactional_id
        self.producer_id = -1
        self.epoch = -1
        self.state = "init"  # init -> ready -> open -> ending
        self.busy = False
        self.ending_commit = None


class TxnSim(ReplicatedLogSim):
    """The log holds one entry per write: its records as a batch, replicated whole or not at all."""

    title = "transaction simulation"
    module = "kraftwire.testing.txn_sim"
    whole_batches = True

    def __init__(self, seed: int, events: int = 1500, client_version: int = 0) -> None:
        super().__init__(seed, events)
        self.client_version = client_version
        if client_version:  # the replay command a failure prints names the version
            self.module = f"{TxnSim.module} --transaction-version {client_version}"
        #: TV2: (producer id, marker epoch) -> the transaction (id, start) whose markers carry it
        self.epoch_owner: dict[tuple[int, int], tuple[str, int]] = {}
        #: producer id -> the highest epoch of a marker written for it (the partitions' fence)
        self.marker_epoch: dict[int, int] = {}
        self.next_pid = 5000
        self.in_flight_markers: list = []  # (due time, marker)
        self.producers = [Producer(i, f"tx-{i % 3}") for i in range(5)]
        #: (producer id, epoch) -> True (commit) / False (abort): the first outcome decided
        self.outcomes: dict[tuple[int, int], bool] = {}
        self.counts = {"commits": 0, "aborts": 0, "fenced": 0, "moves": 0, "timeouts": 0, "concurrent": 0,
                       "markers_resent": 0}
        self.start()

    def _allocate(self) -> int:
        self.next_pid += 1
        return self.next_pid

    def kind(self, *, oracle: bool = False) -> TxnKind:
        config = tc.TxnConfig(max_timeout_ms=60_000, transaction_version=self.client_version)
        return TxnKind(lambda: config, self._allocate,
                       (lambda hosted, marker: None) if oracle else self._markers_out)

    def answered(self, reply, body) -> None:
        producer, request = reply.token
        self._answered(producer, request, body)

    def _markers_out(self, hosted, m) -> None:
        """A prepared outcome is final once its record is committed and its markers go out; they are written after
        a delay."""
        self._decided(m)
        self.in_flight_markers.append((self.now + self.rng.choice((10, 200, 2000)), m))

    def _decided(self, m) -> None:
        """A transaction — its id, producer, epoch and start (an epoch runs many transactions one after another) —
        has one outcome."""
        t = self.shard.txns.get(m.transactional_id)
        start = t.start_ms if t is not None else None
        key = (m.transactional_id, m.producer_id, m.producer_epoch, start)
        previous = self.outcomes.setdefault(key, m.commit)
        if previous != m.commit:
            self.fail(f"transaction {key}: {'commit' if m.commit else 'abort'} after "
                      f"{'commit' if previous else 'abort'}")
        if self.client_version >= 2:
            owner = self.epoch_owner.setdefault((m.producer_id, m.producer_epoch), (m.transactional_id, start))
            if owner != (m.transactional_id, start):
                self.fail(f"transactions {owner} and {(m.transactional_id, start)} share producer "
                          f"{m.producer_id} epoch {m.producer_epoch}")

    # ------------------------------------------------------------------------------------------------ producers
    def _answered(self, p: Producer, request: str, body) -> None:
        p.busy = False
        code = body.error_code
        if request == "init":
            if code == 0:
                p.producer_id, p.epoch, p.state = body.producer_id, body.producer_epoch, "ready"
            elif code == ec.CONCURRENT_TRANSACTIONS:
                self.counts["concurrent"] += 1
            return
        if code in (ec.PRODUCER_FENCED, ec.INVALID_PRODUCER_ID_MAPPING):
            self.counts["fenced"] += 1
            p.state = "init"  # a fenced producer is done: the application starts a new one
            return
        if request == "add":
            if code == 0:
                p.state = "open"
        elif request.startswith("end"):
            commit = request == "end-commit"
            if code == 0:
                self.counts["commits" if commit else "aborts"] += 1
                p.state = "ready"
                if self.client_version >= 2:  # EndTxn v5 names the producer the next transaction runs as
                    p.producer_id, p.epoch = body.producer_id, body.producer_epoch
            elif code == ec.INVALID_TXN_STATE:
                p.state = "ready"  # timed out and aborted meanwhile
            # CONCURRENT_TRANSACTIONS: the same EndTxn again

    def _producer_step(self, p: Producer) -> None:
        if p.busy:
            return
        s = self.shard
        if p.state == "init":
            p.busy = True
            self.note(f"p{p.slot} init {p.transactional_id}")
            self.write(s.init_producer_id(p.transactional_id, self.rng.choice((5000, 60_000)), None, (p, "init"),
                                           self.now))
        elif p.state == "ready" or (p.state == "open" and self.rng.random() < 0.5):
            parts = self.rng.sample(TOPICS, self.rng.randint(1, 3))
            p.busy = True
            result = s.add_partitions(p.transactional_id, p.producer_id, p.epoch, parts, (p, "add"), self.now,
                                      client_version=self.client_version)
            self._not_a_zombie(p, result)
            self._lands(p, result)
            self.write(result)
        elif p.state in ("open", "ending"):
            if p.state == "open":  # a client retries the EndTxn it sent, it does not change its mind
                p.ending_commit, p.state = self.rng.random() < 0.7, "ending"
            commit = p.ending_commit
            p.busy = True
            self.note(f"p{p.slot} ends {'commit' if commit else 'abort'} as {p.producer_id}/{p.epoch}")
            result = s.end_txn(p.transactional_id, p.producer_id, p.epoch, commit,
                               (p, "end-commit" if commit else "end-abort"), self.now,
                               client_version=self.client_version)
            self._not_a_zombie(p, result, ending=True)
            self.write(result)

    def _not_a_zombie(self, p: Producer, result, *, ending: bool = False) -> None:
        """A request the coordinator accepts comes from the transactional id's current producer and epoch (a TV2
        EndTxn: from the epoch its end, or the end it retries, bumped)."""
        code = _code(result)
        t = self.shard.txns.get(p.transactional_id)
        bump = 1 if ending and self.client_version >= 2 else 0
        if code == 0 and (t is None or (t.producer_id, t.producer_epoch) != (p.producer_id, p.epoch + bump)):
            self.fail(f"p{p.slot} ({p.producer_id}/{p.epoch}) was accepted while {p.transactional_id} is at "
                      f"{None if t is None else (t.producer_id, t.producer_epoch)}")

    def _lands(self, p: Producer, result) -> None:
        """An accepted add is the producer's write reaching its partitions: never below a marker's epoch."""
        if _code(result) == 0 and p.epoch < self.marker_epoch.get(p.producer_id, -1):
            self.fail(f"p{p.slot} wrote as {p.producer_id}/{p.epoch} after a marker at epoch "
                      f"{self.marker_epoch[p.producer_id]}")

    # ------------------------------------------------------------------------------------------------ faults
    def lost(self) -> None:
        self.in_flight_markers.clear()  # the marker requests in flight die with the coordinator

    def _move(self) -> None:
        if not self.move():
            return
        # the transactions the new coordinator found prepared: their markers go out again once the high watermark
        # reaches the log end it loaded
        self.counts["markers_resent"] += sum(t.state in (tc.PREPARE_COMMIT, tc.PREPARE_ABORT)
                                             for t in self.shard.txns.values())
        self.counts["moves"] += 1
        self.check(force=True)

    def _markers(self) -> None:
        due = [(t, m) for t, m in self.in_flight_markers if t <= self.now]
        self.in_flight_markers = [(t, m) for t, m in self.in_flight_markers if t > self.now]
        for _t, m in due:
            if m.partitions:
                self.marker_epoch[m.producer_id] = max(self.marker_epoch.get(m.producer_id, -1), m.producer_epoch)
            self.write(self.shard.markers_written(m.transactional_id, m.producer_id, m.producer_epoch, self.now))

    # ------------------------------------------------------------------------------------------------ checks
    def check(self, force: bool = False) -> None:
        lead = self.logs[self.leader]
        for b in self.isr:
            if self.logs[b][:self.hw] != lead[:self.hw]:
                self.fail(f"in-sync broker {b} disagrees below the high watermark")
        self._checks = getattr(self, "_checks", 0) + 1
        if self._checks % 20 and not force:
            return
        again = self.load_fresh()
        live = {tid: _durable(t) for tid, t in self.shard.txns.items()}
        loaded = {tid: _durable(t) for tid, t in again.txns.items()}
        if live != loaded:
            self.fail(f"a shard loaded from the log differs from the live one: {live} vs {loaded}")

    def step(self) -> None:
        roll = self.rng.random()
        if roll < 0.5:
            self._producer_step(self.rng.choice(self.producers))
        elif roll < 0.7:
            self._replicate(force=False)
        elif roll < 0.85:
            self.now += self.rng.choice((10, 100, 1000, 6000))
            r = self.shard.tick(self.now)
            if r.markers:
                self.counts["timeouts"] += len(r.markers)
            self.write(r)
            self._markers()
        elif roll < 0.9:
            if len(self.alive) >= 2:
                self._move()
        elif roll < 0.95:
            self._revive()
        else:
            p = self.rng.choice(self.producers)
            if not p.busy:
                p.state = "init"  # a restarted instance: the old incarnation's state is gone

    def run(self) -> dict:
        for _ in range(self.events):
            self.step()
            self.check()
        self.converge()
        return self.counts

    def converge(self, steps: int = 3000) -> None:
        while len(self.alive) < len(BROKERS):
            self._revive()
        for _ in range(steps):
            self._replicate(force=True)
            self.now += 100
            self._markers()
            self._replicate(force=True)
            self.check()
            if not self.in_flight_markers and not self.pending and all(
                    t.state not in (tc.PREPARE_COMMIT, tc.PREPARE_ABORT, tc.PREPARE_EPOCH_FENCE)
                    for t in self.shard.txns.values()):
                for t in self.shard.txns.values():
                    key = (t.transactional_id, t.producer_id, t.producer_epoch, t.start_ms)
                    if t.state == tc.COMPLETE_COMMIT and self.outcomes.get(key) is False:
                        self.fail(f"{t.transactional_id} completed a commit decided as an abort")
                return
        self.fail("prepared transactions did not complete: " + str(
            {tid: tc.STATE_NAMES[t.state] for tid, t in self.shard.txns.items()}))


def _durable(t: tc.TxnMetadata) -> tuple:
    """What a transaction's records carry at every version: producer id and epoch, next producer id, client
    version, timeout, state, partitions."""
    snap = t.snapshot()
    return snap[:2] + snap[3:8]


def _code(result) -> int:
    body = result.replies[-1].body
    per = getattr(body, "results_by_topic_v3_and_below", None)
    return per[0].results_by_partition[0].partition_error_code if per else body.error_code


def main(argv: list[str] | None = None) -> int:
    """``--transaction-version 2`` replays a seed of the TV2 run."""
    args = list(sys.argv[1:] if argv is None else argv)
    version = 0
    if "--transaction-version" in args:
        at = args.index("--transaction-version")
        version = int(args[at + 1])
        del args[at:at + 2]

    class Replayed(TxnSim):
        def __init__(self, seed: int, events: int) -> None:
            super().__init__(seed, events, version)

    return replay_main(Replayed, args)


if __name__ == "__main__":
    raise SystemExit(main())
