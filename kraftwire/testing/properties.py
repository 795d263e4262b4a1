"""The simulation properties: each is a seeded scenario with faults, safety checked after every event, and a
liveness target (the committed offset must grow by a margin within a virtual deadline once the faults heal).

``PROPERTIES[name](seed, mutations)`` runs one seed and returns the ``Cluster`` (for counters), or raises
``SimulationFailure`` whose message ends with a one-line replay command.
"""

from __future__ import annotations

import random

from kraftwire.raft.config import Mutations
from kraftwire.testing.sim import Cluster, NetworkFaults

COMMIT_STEP = 10  # records the workload must get committed per phase
PHASE_DEADLINE_MS = 4000  # virtual time a phase may take once faults heal


def _replay(name: str, seed: int, mutations: Mutations) -> str:
    on = [f for f in mutations.__slots__ if getattr(mutations, f)]
    extra = "".join(f" --mutation {f}" for f in on)
    return f"python -m kraftwire.testing.replay {name} --seed {seed}{extra}"


def _cluster(name: str, seed: int, mutations: Mutations, **kwargs) -> Cluster:
    return Cluster(seed, mutations=mutations, replay=_replay(name, seed, mutations), **kwargs)


def _commit_more(cluster: Cluster, what: str, amount: int = COMMIT_STEP) -> None:
    target = cluster.committed_offset() + amount
    cluster.run_until(lambda: cluster.committed_offset() >= target, cluster.now + PHASE_DEADLINE_MS, what)


def _all_caught_up(cluster: Cluster, what: str) -> None:
    """Every node (all are restarted first) reaches the committed offset as of now."""
    cluster.run_for(60)  # let pending graceful shutdowns finish before restarting everyone
    for node_id in cluster.nodes:
        cluster.restart(node_id)
    target = cluster.committed_offset()
    cluster.run_until(
        lambda: all(n.log.high_watermark() >= target for n in cluster.nodes.values()),
        cluster.now + PHASE_DEADLINE_MS, what,
    )


def _leader_id(cluster: Cluster, what: str) -> int:
    cluster.run_until(lambda: cluster.leader() is not None, cluster.now + PHASE_DEADLINE_MS, what)
    return cluster.leader().node_id


def elect_initial_leader(seed: int, mutations: Mutations = Mutations()) -> Cluster:
    choice = random.Random(f"elect_initial_leader:{seed}")
    cluster = _cluster(
        "elect_initial_leader", seed, mutations, voters=choice.randint(1, 5), observers=choice.randint(0, 2),
        anonymous_observer=choice.random() < 0.3,
    )
    cluster.start_workload()
    _commit_more(cluster, "first commits")
    _all_caught_up(cluster, "everyone caught up")
    return cluster


def leader_failover(seed: int, mutations: Mutations = Mutations()) -> Cluster:
    choice = random.Random(f"leader_failover:{seed}")
    cluster = _cluster("leader_failover", seed, mutations, voters=choice.randint(3, 5),
                          observers=choice.randint(0, 2))
    cluster.start_workload()
    _commit_more(cluster, "first commits")
    for _ in range(2):
        old = _leader_id(cluster, "a leader")
        if choice.random() < 0.5:
            cluster.kill(old)
        else:
            cluster.shutdown(old)
        _commit_more(cluster, f"commits after leader {old} stopped")
        cluster.run_for(60)
        cluster.restart(old)
        _commit_more(cluster, f"commits after {old} restarted")
    _all_caught_up(cluster, "everyone caught up")
    return cluster


def recover_after_all_killed(seed: int, mutations: Mutations = Mutations()) -> Cluster:
    choice = random.Random(f"recover_after_all_killed:{seed}")
    voters = choice.randint(3, 5)
    cluster = _cluster("recover_after_all_killed", seed, mutations, voters=voters, observers=choice.randint(0, 1))
    cluster.start_workload()
    _commit_more(cluster, "first commits")
    cluster.run_for(choice.randint(0, 30))
    for node_id in list(cluster.nodes):
        cluster.kill(node_id)
    cluster.run_for(choice.randint(1, 200))
    majority = sorted(cluster.voter_ids)
    choice.shuffle(majority)
    for node_id in majority[: voters // 2 + 1]:
        cluster.restart(node_id)
    _commit_more(cluster, "commits with a restarted majority")
    for node_id in cluster.nodes:
        cluster.restart(node_id)
    _all_caught_up(cluster, "everyone caught up")
    return cluster


def leader_partitioned(seed: int, mutations: Mutations = Mutations()) -> Cluster:
    choice = random.Random(f"leader_partitioned:{seed}")
    cluster = _cluster("leader_partitioned", seed, mutations, voters=choice.randint(3, 5),
                          observers=choice.randint(0, 2))
    cluster.start_workload()
    _commit_more(cluster, "first commits")
    for _ in range(choice.randint(1, 2)):
        old = _leader_id(cluster, "a leader")
        cluster.isolate(old)
        cluster.run_until(
            lambda: cluster.leader() is not None and cluster.leader().node_id != old,
            cluster.now + PHASE_DEADLINE_MS, "a new leader while the old one is cut off",
        )
        _commit_more(cluster, "commits while the old leader is partitioned")
        cluster.heal()
        _commit_more(cluster, "commits after the partition healed")
    _all_caught_up(cluster, "everyone caught up")
    return cluster


def majority_reachable(seed: int, mutations: Mutations = Mutations()) -> Cluster:
    """Five voters; {1,2} cannot reach {3,4,5} in one direction; the quorum must still make progress."""
    choice = random.Random(f"majority_reachable:{seed}")
    cluster = _cluster("majority_reachable", seed, mutations, voters=5, observers=choice.randint(0, 2))
    cluster.start_workload()
    _commit_more(cluster, "first commits")
    cluster.partition([1, 2], [3, 4, 5], one_way=True)
    _commit_more(cluster, "commits with a one-way partition")
    cluster.heal()
    _commit_more(cluster, "commits after healing")
    _all_caught_up(cluster, "everyone caught up")
    return cluster


def back_to_back_failures(seed: int, mutations: Mutations = Mutations()) -> Cluster:
    choice = random.Random(f"back_to_back_failures:{seed}")
    cluster = _cluster("back_to_back_failures", seed, mutations, voters=choice.randint(3, 5),
                       pre_vote=choice.random() < 0.5)
    cluster.start_workload()
    _commit_more(cluster, "first commits")
    first = _leader_id(cluster, "a leader")
    cluster.kill(first)
    second = _leader_id(cluster, "a second leader")
    cluster.run_for(choice.randint(0, 20))
    cluster.kill(second)
    cluster.run_for(choice.randint(0, 50))
    cluster.restart(first)
    _commit_more(cluster, "commits after two leader failures")
    cluster.restart(second)
    _all_caught_up(cluster, "everyone caught up")
    return cluster


def wipe_one_node(seed: int, mutations: Mutations = Mutations()) -> Cluster:
    """A voter loses its disk (relaxed invariants, as in Kafka's canRecoverFromSingleNodeCommittedDataLoss).

    As there, the wiped voter returns only once a leader other than it is established (known to every running voter
    and committing in its epoch): Raft cannot keep committed data if an empty voter, which remembers neither its log
    nor its vote, helps elect a candidate that lacks it — the loss KIP-853's directory ids exist to prevent."""
    choice = random.Random(f"wipe_one_node:{seed}")
    cluster = _cluster("wipe_one_node", seed, mutations, voters=choice.randint(3, 5),
                          observers=choice.randint(0, 2), relaxed_invariants=True)
    cluster.start_workload()
    _commit_more(cluster, "first commits")
    victim = choice.choice(sorted(cluster.voter_ids))
    cluster.wipe(victim)

    def leader_established() -> bool:
        lead = cluster.leader()
        if lead is None or lead.node_id == victim:
            return False
        state = lead.raft.quorum.state
        if state.high_watermark is None or state.high_watermark <= state.epoch_start_offset:
            return False
        return all(n.raft.quorum.leader_id == lead.node_id for i, n in cluster.nodes.items()
                   if i in cluster.voter_ids and n.raft is not None)

    cluster.run_until(leader_established, cluster.now + PHASE_DEADLINE_MS,
                      "a leader other than the wiped voter, committing, before it returns")
    cluster.run_for(choice.randint(0, 100))
    cluster.restart(victim)
    _commit_more(cluster, "commits after a wiped voter returned")
    _all_caught_up(cluster, "everyone caught up")
    return cluster


def chaos(seed: int, mutations: Mutations = Mutations()) -> Cluster:
    """Lossy, duplicating, reordering network with corrupt and future-epoch batches, random kills, restarts and
    partitions; then everything heals and the quorum must commit again."""
    choice = random.Random(f"chaos:{seed}")
    faults = NetworkFaults(
        drop_rate=choice.choice([0.0, 0.02, 0.1]), duplicate_rate=choice.choice([0.0, 0.05]), max_delay_ms=20,
        corrupt_rate=0.05, future_batch_rate=0.05,
    )
    cluster = _cluster("chaos", seed, mutations, voters=choice.randint(3, 5), observers=choice.randint(0, 1),
                          faults=faults, anonymous_observer=choice.random() < 0.3, pre_vote=choice.random() < 0.7)
    cluster.start_workload()
    for _ in range(choice.randint(3, 6)):
        cluster.run_for(choice.randint(50, 400))
        victim = choice.choice(sorted(cluster.nodes))
        action = choice.random()
        if action < 0.35:
            cluster.kill(victim)
        elif action < 0.5:
            cluster.shutdown(victim)
        elif action < 0.75:
            cluster.isolate(victim)
        else:
            cluster.heal()
            for node_id in cluster.nodes:
                if choice.random() < 0.7:
                    cluster.restart(node_id)
    cluster.heal()
    cluster.faults = NetworkFaults(corrupt_rate=0.02, future_batch_rate=0.02)
    for node_id in cluster.nodes:
        cluster.restart(node_id)
    _commit_more(cluster, "commits after the chaos healed")
    _all_caught_up(cluster, "everyone caught up")
    return cluster


def snapshots(seed: int, mutations: Mutations = Mutations()) -> Cluster:
    """Nodes snapshot every ~1.5 KiB of committed data and drop the log below; a node that was down (or wiped) must
    catch up by downloading the leader's snapshot in chunks (FetchSnapshot) and installing it."""
    choice = random.Random(f"snapshots:{seed}")
    voters, observers = choice.randint(3, 5), choice.randint(0, 1)
    lagging = choice.choice(list(range(1, voters + 1)) + [100 + i for i in range(observers)])
    wipe = choice.random() < 0.3
    cluster = _cluster("snapshots", seed, mutations, voters=voters, observers=observers, snapshot_bytes=1500,
                          relaxed_invariants=wipe)
    cluster.start_workload(records=choice.randint(1, 3))
    _commit_more(cluster, "first commits")
    cluster.wipe(lagging) if wipe else cluster.kill(lagging)
    _commit_more(cluster, "commits past a snapshot while one node is down", amount=60)
    cluster.restart(lagging)
    _all_caught_up(cluster, "the lagging node installed a snapshot and caught up")
    return cluster


PROPERTIES = {
    f.__name__: f
    for f in (
        elect_initial_leader,
        leader_failover,
        recover_after_all_killed,
        leader_partitioned,
        majority_reachable,
        back_to_back_failures,
        wipe_one_node,
        chaos,
        snapshots,
    )
}
