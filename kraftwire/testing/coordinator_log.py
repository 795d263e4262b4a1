"""What the coordinator simulations share: one internal-topic partition on three replicas, seeded.

Followers copy the leader's log at random; the high watermark is the shortest in-sync log and never goes back; a
follower whose log reaches the leader's end is in sync again; a dead broker returns truncated to the high watermark
(or empty if it disagrees below it). A subclass appends what its shard decides, keeps ``pending`` as
``(end offset, *payload)`` and releases each payload in ``_committed`` once the high watermark passes its end.
Failures raise ``SimFailure`` with the seed, the last events and the replay command; ``replay_main`` is that
command's body.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import deque

BROKERS = (1, 2, 3)


class SimFailure(AssertionError):
    pass


class ReplicatedLogSim:
    #: "group simulation", and the module ``python -m`` replays a seed with
    title = ""
    module = ""

    def __init__(self, seed: int, events: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.events = events
        self.now = 1_000_000
        self.logs: dict[int, list] = {b: [] for b in BROKERS}
        self.alive = set(BROKERS)
        self.isr = set(BROKERS)  # live replicas holding the leader's log up to the high watermark
        self.leader = BROKERS[0]
        self.hw = 0
        self.pending: deque = deque()  # (end offset, *payload) waiting for the high watermark
        self.trail: deque = deque(maxlen=40)

    def note(self, what: str) -> None:
        self.trail.append(f"t={self.now} {what}")

    def fail(self, why: str) -> None:
        trail = "\n  ".join(self.trail)
        raise SimFailure(f"{self.title} seed {self.seed}: {why}\n  last events:\n  {trail}\n"
                         f"replay: python -m {self.module} --seed {self.seed}")

    def _committed(self, hw: int) -> None:
        """The high watermark reached ``hw``: release what ``pending`` holds up to it."""
        raise NotImplementedError

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
