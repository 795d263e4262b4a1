"""Replay one simulation seed: ``python -m kraftwire.testing.replay <property> --seed N [--mutation NAME]... [--trace]``."""

from __future__ import annotations

import argparse
import sys

from kraftwire.raft.config import Mutations
from kraftwire.testing.properties import PROPERTIES
from kraftwire.testing.sim import SimulationFailure


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kraftwire.testing.replay")
    parser.add_argument("property", choices=sorted(PROPERTIES))
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--mutation", action="append", default=[], choices=list(Mutations.__slots__))
    args = parser.parse_args(argv)
    mutations = Mutations(**{name: True for name in args.mutation})
    try:
        cluster = PROPERTIES[args.property](args.seed, mutations)
    except SimulationFailure as exc:
        print(f"FAILED: {exc}")
        return 1
    print(f"ok: {cluster.events} events, {cluster.now} virtual ms, committed {cluster.committed_offset()}")
    print(" ".join(f"{k}={v}" for k, v in sorted(cluster.node_counters().items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
