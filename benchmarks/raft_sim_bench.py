"""Raft core benchmark (pure Python, no I/O): simulated events per second, and the leader's CPU cost per committed
batch (time spent inside the leader's ``RaftNode.handle``/``poll``, divided by the batches it committed).

    PYTHONPATH=. python benchmarks/raft_sim_bench.py [--seeds 20]

Figures depend on the machine; they are reported, never asserted.
"""

from __future__ import annotations

import argparse
import time

from kraftwire.raft.node import RaftNode
from kraftwire.testing.properties import PROPERTIES
from kraftwire.testing.sim import Cluster


def events_per_second(seeds: int) -> list[tuple[str, int, float]]:
    rows = []
    for name, prop in PROPERTIES.items():
        start = time.perf_counter()
        events = sum(prop(seed).events for seed in range(seeds))
        rows.append((name, events, events / (time.perf_counter() - start)))
    return rows


def leader_cost_per_batch(voters: int, records_per_batch: int, duration_ms: int = 5000) -> tuple[float, int]:
    spent: dict[int, float] = {}
    original_handle, original_poll = RaftNode.handle, RaftNode.poll

    def timed(fn):
        def wrapper(self, *args):
            t = time.perf_counter()
            try:
                return fn(self, *args)
            finally:
                spent[self.local_id] = spent.get(self.local_id, 0.0) + time.perf_counter() - t
        return wrapper

    RaftNode.handle, RaftNode.poll = timed(original_handle), timed(original_poll)
    try:
        cluster = Cluster(1, voters=voters, election_timeout_ms=1000, fetch_timeout_ms=3000)
        cluster.run_until(lambda: cluster.leader() is not None, 10_000, "a leader")
        leader = cluster.leader().node_id
        spent.clear()
        before = cluster.committed_offset()
        cluster.start_workload(interval_ms=2, records=records_per_batch)
        cluster.run_for(duration_ms)
        batches = (cluster.committed_offset() - before) // records_per_batch
    finally:
        RaftNode.handle, RaftNode.poll = original_handle, original_poll
    return spent[leader] / max(batches, 1) * 1e6, batches


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    print(f"| property | events ({args.seeds} seeds) | simulated events/s |")
    print("|---|---:|---:|")
    for name, events, rate in events_per_second(args.seeds):
        print(f"| {name} | {events} | {rate:,.0f} |")
    print()
    print("| voters | records/batch | committed batches | leader µs per committed batch |")
    print("|---:|---:|---:|---:|")
    for voters in (1, 3, 5):
        for per_batch in (1, 10):
            cost, batches = leader_cost_per_batch(voters, per_batch)
            print(f"| {voters} | {per_batch} | {batches} | {cost:,.0f} |")


if __name__ == "__main__":
    main()
