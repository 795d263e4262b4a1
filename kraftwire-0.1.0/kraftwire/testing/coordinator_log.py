"""What the coordinator simulations share: one internal-topic partition on three replicas, seeded, hosted by the
real coordinator runtime (``kraftwire.coordinator.runtime``) through an in-memory partition writer.

Followers copy the leader's log at random; the high watermark is the shortest in-sync log and never goes back; a
follower whose log reaches the leader's end is in sync again; a dead broker returns truncated to the high watermark
(or empty if it disagrees below it). The leader broker dying fails the writes waiting for their commit (as a
partition that loses its leadership does) and an in-sync replica is elected: the runtime loads a fresh shard from
*its* log. The simulation's own code only plays the clients and the replicas; what is appended, folded, answered,
refused and reloaded is the runtime's doing. Failures raise ``SimFailure`` with the seed, the last events and the
replay command; ``replay_main`` is that command's body.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import deque
from typing import NamedTuple

from kraftwire import error_codes as ec
from kraftwire.coordinator.runtime import Appended, CoordinatorRuntime, Hosted

BROKERS = (1, 2, 3)
#: the partition the simulations host
PARTITION = 0


class SimFailure(AssertionError):
    pass


class SimRecord(NamedTuple):
    offset: int
    key: bytes
    value: bytes | None


class SimBatch:
    """One log entry as the runtime reads a batch (the coordinators' own writes: data, not transactional)."""

    is_control = False
    is_transactional = False
    producer_id = -1

    def __init__(self, offset: int, records: list[SimRecord]) -> None:
        self.base_offset = self.last_offset = offset
        self.records = records

    def __iter__(self):
        return iter(self.records)


class MemoryPartition:
    """``PartitionWriter`` over the simulation's log of ``broker``, leading in ``epoch``. A log entry is one record
    (``sim.whole_batches`` False: a write may be replicated in part) or one write's records (True: replicated
    whole or not at all); its offset is its index."""

    def __init__(self, sim: "ReplicatedLogSim", broker: int, epoch: int) -> None:
        self.sim, self.broker, self.epoch = sim, broker, epoch

    def leading(self) -> bool:
        return self.sim.leader == self.broker and self.broker in self.sim.alive

    def append(self, records: list, now_ms: int, producer=None, guard=None) -> Appended:
        if not self.leading():
            return Appended(ec.NOT_LEADER_OR_FOLLOWER)
        log = self.sim.logs[self.broker]
        base = len(log)
        if self.sim.whole_batches:
            log.append(tuple(records))
        else:
            log.extend(records)
        return Appended(ec.NONE, base, len(log))

    def when_committed(self, end: int, done) -> None:
        self.sim.pending.append((end, done))

    def high_watermark(self) -> int:
        return self.sim.hw

    def start_offset(self) -> int:
        return 0

    def end_offset(self) -> int:
        return len(self.sim.logs[self.broker])

    def read(self, position: int) -> list:
        log = self.sim.logs[self.broker]
        return [SimBatch(i, [SimRecord(i, k, v) for k, v in (log[i] if self.sim.whole_batches else (log[i],))])
                for i in range(position, len(log))]


class ReplicatedLogSim:
    #: "group simulation", and the module ``python -m`` replays a seed with
    title = ""
    module = ""
    #: whether a write is one log entry (see ``MemoryPartition``)
    whole_batches = False

    def __init__(self, seed: int, events: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.events = events
        self.now = 1_000_000
        self.logs: dict[int, list] = {b: [] for b in BROKERS}
        self.alive = set(BROKERS)
        self.isr = set(BROKERS)  # live replicas holding the leader's log up to the high watermark
        self.leader = BROKERS[0]
        self.epoch = 0
        self.hw = 0
        self.pending: deque = deque()  # (end offset, done) of the writes waiting for the high watermark
        self.trail: deque = deque(maxlen=40)
        self.failing = False  # the writes waiting are being failed (the leader died)
        self.runtime: CoordinatorRuntime | None = None  # ``start`` makes it once the subclass is ready

    def start(self) -> None:
        """The runtime, hosting the partition on the first leader."""
        self.runtime = CoordinatorRuntime(self.kind(), self.answered, lambda h: self._load_now(self.runtime, h))
        self.elect()

    # ------------------------------------------------------------------------------------------------ subclass
    def kind(self, *, oracle: bool = False):
        """The shard kind the runtime hosts (``oracle``: for a load the checks compare with, which sends
        nothing)."""
        raise NotImplementedError

    def answered(self, reply, body) -> None:
        """The runtime answers ``reply`` with ``body``."""
        raise NotImplementedError

    def lost(self) -> None:
        """The leader broker died (after its waiting writes failed, before the next leader loads): what else dies
        with it."""

    # ------------------------------------------------------------------------------------------------ plumbing
    @property
    def hosted(self) -> Hosted:
        return self.runtime.hosted[PARTITION]

    @property
    def shard(self):
        return self.hosted.shard

    def elect(self) -> Hosted:
        return self.runtime.elect(PARTITION, MemoryPartition(self, self.leader, self.epoch))

    def _load_now(self, runtime: CoordinatorRuntime, h: Hosted) -> None:
        """A simulation loads at once: chunk after chunk until the runtime says the load is over."""
        for _ in range(len(self.logs[self.leader]) + 2):
            if runtime.load_chunk(h, self.now):
                return
        self.fail("the load did not end")

    def load_fresh(self):
        """A shard loaded from the leader's log by a runtime of its own: what the live one must equal."""
        oracle = CoordinatorRuntime(self.kind(oracle=True), lambda reply, body: None,
                                    lambda h: self._load_now(oracle, h))
        return oracle.elect(PARTITION, MemoryPartition(self, self.leader, self.epoch)).shard

    def write(self, result) -> None:
        """What a request does: the runtime writes the result; then the followers may copy some of it."""
        self.runtime.write(PARTITION, result, self.now)
        if result.records:
            self._replicate(force=False)

    def note(self, what: str) -> None:
        self.trail.append(f"t={self.now} {what}")

    def fail(self, why: str) -> None:
        trail = "\n  ".join(self.trail)
        raise SimFailure(f"{self.title} seed {self.seed}: {why}\n  last events:\n  {trail}\n"
                         f"replay: python -m {self.module} --seed {self.seed}")

    def _committed(self, hw: int) -> None:
        """The high watermark reached ``hw``: the runtime hears of it, then the writes up to it are committed."""
        h = self.runtime.hosted.get(PARTITION)
        if h is not None:
            self.runtime.high_watermark_moved(PARTITION, h.writer)
        while self.pending and self.pending[0][0] <= hw:
            _end, done = self.pending.popleft()
            done(ec.NONE)

    def _replicate(self, *, force: bool) -> None:
        """Followers copy some (``force``: all) of the leader's log; then the high watermark moves."""
        lead = self.logs[self.leader]
        for b in self.alive:
            if b != self.leader and (force or self.rng.random() < 0.5):
                log = self.logs[b]
                take = len(lead) - len(log) if force else self.rng.randint(0, len(lead) - len(log))
                log.extend(lead[len(log):len(log) + take])
        self._advance_hw()

    def _advance_hw(self) -> None:
        lead = len(self.logs[self.leader])
        for b in self.alive - self.isr:
            if len(self.logs[b]) == lead:
                self.isr.add(b)  # caught up to the leader's log end: back in sync
        hw = min(len(self.logs[b]) for b in self.isr)
        if hw < self.hw:
            self.fail(f"the high watermark went back from {self.hw} to {hw}")
        self.hw = hw
        self._committed(hw)

    def move(self) -> bool:
        """The leader broker dies and an in-sync replica leads: the writes waiting fail as on a partition that
        lost its leadership, the old coordinator resigns, the runtime loads the new leader's log. False when no
        replica could take over."""
        candidates = [b for b in self.isr if b != self.leader]
        if not candidates:
            return False
        old, new = self.leader, self.rng.choice(candidates)
        self.note(f"broker {old} dies; broker {new} leads (log {len(self.logs[new])}, hw {self.hw})")
        self.alive.discard(old)
        self.isr.discard(old)
        waiting, self.pending = list(self.pending), deque()
        self.failing = True
        try:
            for _end, done in waiting:
                done(ec.NOT_LEADER_OR_FOLLOWER)
            self.runtime.resign(PARTITION)
        finally:
            self.failing = False
        self.lost()
        self.leader = new
        self.epoch += 1
        lead = self.logs[new]
        if len(lead) < self.hw:
            self.fail(f"the new leader's log ({len(lead)}) ends below the high watermark {self.hw}")
        for b in self.alive:
            if b != new and len(self.logs[b]) > len(lead):
                del self.logs[b][len(lead):]
        self.elect()
        return True

    def _revive(self) -> None:
        dead = [b for b in BROKERS if b not in self.alive]
        if not dead:
            return
        b = self.rng.choice(dead)
        lead = self.logs[self.leader]
        keep = min(len(self.logs[b]), self.hw)
        if self.logs[b][:keep] != lead[:keep]:
            keep = 0
        del self.logs[b][keep:]
        self.alive.add(b)
        self.note(f"broker {b} is back with {keep} records")


def replay_main(sim_class, argv: list[str] | None, *, events: int = 1500) -> int:
    """Replay one seed of ``sim_class`` and print its trail and counts (the command a failure names)."""
    parser = argparse.ArgumentParser(prog=f"python -m {sim_class.module}",
                                     description=f"replay one seed of the {sim_class.title}")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--events", type=int, default=events)
    args = parser.parse_args(argv)
    sim = sim_class(args.seed, args.events)
    try:
        counts = sim.run()
    except SimFailure as exc:
        print(exc, file=sys.stderr)
        return 1
    print("\n".join(sim.trail))
    print(f"seed {args.seed}: ok {counts}")
    return 0
