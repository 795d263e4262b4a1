"""Roles benchmark: 3 controllers + 2 brokers as real processes on this machine, with Kafka's default broker
heartbeat interval (2000 ms) and session timeout (9000 ms).

    python benchmarks/roles_bench.py [--rounds 3] [--json out.json]

Per round: time from a broker's process start to Online (the broker's own log line, measured inside the process),
and time from SIGKILL of the active controller until both brokers fetch from the new leader and are caught up to its
high watermark (DescribeQuorum at the new leader). Figures depend on the machine (2 shared cores); reported, never
asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time


# The shared test helpers (tests/harness) beside these benchmarks; kraftwire itself is whichever one is installed.
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from harness import processes, roles  # noqa: E402

DEFAULTS = "broker.heartbeat.interval.ms=2000\nbroker.session.timeout.ms=9000\n"




def one_round() -> dict:
    with tempfile.TemporaryDirectory() as base:
        cluster = roles.RolesCluster(base, controllers=3, brokers=2, extra_props=DEFAULTS)
        try:
            cluster.start_all()
            part = cluster.wait_for_leader()
            port = cluster.controllers[0].port
            roles.wait_until(lambda: roles.broker_ids(port) == [1, 2, 3, 4, 5], "brokers Online", cluster, timeout=60)
            online = []
            for b in cluster.brokers:
                m = roles.wait_until(lambda b=b: re.search(r"is Online \(epoch \d+\) ([0-9.]+) s after start", b.stderr()),
                                 "Online line", cluster)
                online.append(float(m.group(1)))
            leader = cluster.nodes[part.leader_id]
            leader.kill()
            t0 = time.monotonic()
            new = cluster.wait_for_leader(exclude=(leader.node_id,), min_epoch=part.leader_epoch + 1, timeout=60)
            elected = time.monotonic() - t0
            new_port = cluster.nodes[new.leader_id].port

            def following():
                p = processes.leader_view(new_port)
                if p is None or p.leader_id != new.leader_id:
                    return None
                obs = {o.replica_id: o for o in p.observers}
                return all(i in obs and obs[i].log_end_offset >= p.high_watermark for i in (4, 5))

            roles.wait_until(following, "brokers following", cluster, timeout=60)
            return {"online_s": online, "election_s": elected, "brokers_following_s": time.monotonic() - t0}
        finally:
            cluster.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    rounds = [one_round() for _ in range(args.rounds)]
    online = [t for r in rounds for t in r["online_s"]]
    follow = [r["brokers_following_s"] for r in rounds]
    summary = {"rounds": rounds, "online_s_median": statistics.median(online), "online_s_max": max(online),
               "brokers_following_s_median": statistics.median(follow), "brokers_following_s_max": max(follow)}
    for r in rounds:
        print(f"broker start -> Online {', '.join(f'{t:.2f}' for t in r['online_s'])} s; leader elected "
              f"{r['election_s']:.2f} s, brokers following the new leader {r['brokers_following_s']:.2f} s "
              "after SIGKILL")
    print(f"median: Online {summary['online_s_median']:.2f} s, following {summary['brokers_following_s_median']:.2f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
