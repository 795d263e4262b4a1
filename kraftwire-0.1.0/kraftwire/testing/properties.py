"""The simulation properties: each is a seeded scenario with faults, safety checked after every event, and a
liveness target (the committed offset must grow by a margin within a virtual deadline once the faults heal).

``PROPERTIES[name](seed, mutations)`` runs one seed and returns the ``Cluster`` (for counters), or raises
``SimulationFailure`` whose message ends with a one-line replay command.
"""

from __future__ import annotations

import random

from kraftwire.raft.config import Mutations
from kraftwire.raft.leader import LeaderState
from kraftwire.testing.sim import Cluster, NetworkFaults, SimulationFailure

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


# --- KIP-853 reconfiguration (kraft.version 1) ------------------------------------------------------------------------
def _await_changes(cluster: Cluster, ops, what: str) -> None:
    """The admin's operations complete (retrying through leader changes, lost requests and answers) within two
    phases; none fails."""
    try:
        cluster.run_until(lambda: all(op.finished() for op in ops), cluster.now + 2 * PHASE_DEADLINE_MS, what)
    except SimulationFailure as exc:
        raise SimulationFailure(f"{str(exc).split(chr(10))[0]}; admin: {'; '.join(op.describe() for op in ops)}",
                                cluster.replay) from exc
    failed = [op for op in ops if op.failed]
    if failed:
        raise SimulationFailure(f"seed {cluster.seed} at {cluster.now} ms: {what}: admin operation failed: "
                                f"{'; '.join(op.describe() for op in failed)}", cluster.replay)


def _disturb(cluster: Cluster, choice: random.Random) -> None:
    """Maybe a fault around a voter change: the leader killed, stopped or cut off, or another controller killed;
    everything is back when this returns (the admin keeps retrying meanwhile)."""
    action = choice.random()
    lead = cluster.leader()
    if lead is None or action < 0.2:
        return
    if action < 0.45:
        cluster.kill(lead.node_id)
        cluster.run_for(choice.randint(20, 300))
        cluster.restart(lead.node_id)
    elif action < 0.6:
        cluster.shutdown(lead.node_id)
        cluster.run_for(choice.randint(60, 200))
        cluster.restart(lead.node_id)
    elif action < 0.8:
        cluster.isolate(lead.node_id)
        cluster.run_for(choice.randint(100, 600))
        cluster.heal()
    else:
        other = choice.choice([i for i in cluster.controller_ids() if i != lead.node_id])
        cluster.kill(other)
        cluster.run_for(choice.randint(20, 300))
        cluster.restart(other)


def _change(cluster: Cluster, choice: random.Random, submit, what: str) -> None:
    """Submit voter changes (``submit()`` returns the admin's operations), maybe disturb the quorum while they are in
    flight, wait for all of them."""
    ops = submit()
    cluster.run_for(choice.randint(0, 40))
    _disturb(cluster, choice)
    _await_changes(cluster, ops, what)


def _check_membership(cluster: Cluster, expected_keys, what: str) -> None:
    """Every node, caught up, acts on the expected voter set: the committed history ends with it, each node's core
    holds it, exactly its members consider themselves voters, and the leader is one of them."""
    target = cluster.committed_offset()
    cluster.run_until(lambda: all(n.log.high_watermark() >= target for n in cluster.nodes.values() if n.running),
                      cluster.now + PHASE_DEADLINE_MS, f"{what}: every running node caught up")
    expected = set(expected_keys)
    problems = []
    committed = set(cluster.committed_voter_set().keys)
    if committed != expected:
        problems.append(f"committed voter set {cluster.committed_voter_set().describe()}")
    for node in cluster.nodes.values():
        raft = node.raft
        if raft is None or node.node_id < 0:
            continue
        if set(raft.membership.voters().keys) != expected:
            problems.append(f"node {node.node_id} holds {raft.membership.voters().describe()}")
        member = cluster.voter_key(node.node_id) in expected
        if raft.quorum.is_voter != member or raft.membership.is_local_voter() != member:
            problems.append(f"node {node.node_id} voter={raft.quorum.is_voter}, expected {member}")
        if isinstance(raft.quorum.state, LeaderState) and not member:
            problems.append(f"node {node.node_id} leads but is not a voter")
    if problems:
        keys = ", ".join(f"{k.id}:{str(k.directory_id)[:8]}" for k in sorted(expected, key=lambda k: k.id))
        raise SimulationFailure(f"seed {cluster.seed} at {cluster.now} ms: {what}: expected voters [{keys}]: "
                                + "; ".join(problems), cluster.replay)


def _dynamic_cluster(name: str, seed: int, mutations: Mutations, choice: random.Random, joiners: int,
                     **kwargs) -> Cluster:
    faults = NetworkFaults(drop_rate=choice.choice([0.0, 0.0, 0.02]), duplicate_rate=choice.choice([0.0, 0.05]),
                           max_delay_ms=choice.choice([5, 10]))
    return _cluster(name, seed, mutations, voters=1, joiners=joiners, kraft_version=1, faults=faults,
                    observers=choice.randint(0, 1), **kwargs)


def grow_and_shrink(seed: int, mutations: Mutations = Mutations()) -> Cluster:
    """KIP-853: a standalone voter (1) and four controllers that start as observers; the admin grows the quorum to
    3 and then 5 voters, one change at a time (sometimes asking for two at once: the leader must refuse the second
    until the first commits), shrinks it back to 3 (removing the leader too, when chosen) and then to 1 voter, with
    leader kills, graceful stops and partitions around the changes while the workload keeps committing."""
    choice = random.Random(f"grow_and_shrink:{seed}")
    cluster = _dynamic_cluster("grow_and_shrink", seed, mutations, choice, joiners=4)
    cluster.start_workload()
    _commit_more(cluster, "first commits")
    joiners = [2, 3, 4, 5]
    choice.shuffle(joiners)
    keys = [cluster.voter_key(1)]
    for step in (joiners[:2], joiners[2:]):  # 1 -> 3 -> 5
        together = choice.random() < 0.5
        if together:
            _change(cluster, choice, lambda step=step: [cluster.add_voter(i) for i in step], f"adding {step}")
        else:
            for i in step:
                _change(cluster, choice, lambda i=i: [cluster.add_voter(i)], f"adding {i}")
        keys += [cluster.voter_key(i) for i in step]
        _commit_more(cluster, f"commits with {len(keys)} voters")
    _check_membership(cluster, keys, "grown to five voters")
    for size in (3, 1):  # 5 -> 3 -> 1
        leaving = choice.sample(keys, len(keys) - size)
        if choice.random() < 0.5:
            _change(cluster, choice, lambda leaving=leaving: [cluster.remove_voter(k) for k in leaving],
                    f"removing {[k.id for k in leaving]}")
        else:
            for k in leaving:
                _change(cluster, choice, lambda k=k: [cluster.remove_voter(k)], f"removing {k.id}")
        keys = [k for k in keys if k not in leaving]
        _commit_more(cluster, f"commits with {len(keys)} voters")
    _all_caught_up(cluster, "everyone caught up")
    _check_membership(cluster, keys, "shrunk to one voter")
    return cluster


def replace_wiped_voter(seed: int, mutations: Mutations = Mutations()) -> Cluster:
    """KIP-853: a voter of a 3- or 5-voter quorum loses its disk and comes back with a new directory id. It must not
    act as the voter it was: it is an observer, and the leader does not count its fetches - with the other voters
    stopped down to one short of a majority, nothing commits even though it fetches everything. The admin then
    removes the old voter key and adds the new one; the quorum ends with the same ids, the victim on its new disk.
    In half the seeds nodes snapshot every ~5 KB and drop the log below, so the victim starts from a snapshot that
    carries the voter set (and every VotersRecord before it is gone from the logs). The snapshot is downloaded in
    2 KB chunks: it grows with the run, and one replaced faster than a replica can download it is never installed."""
    choice = random.Random(f"replace_wiped_voter:{seed}")
    size = choice.choice([3, 5])
    cluster = _dynamic_cluster("replace_wiped_voter", seed, mutations, choice, joiners=size - 1,
                               snapshot_bytes=choice.choice([0, 5000]), snapshot_chunk_bytes=2000)
    cluster.start_workload()
    _commit_more(cluster, "first commits")
    for i in range(2, size + 1):
        _change(cluster, choice, lambda i=i: [cluster.add_voter(i)], f"adding {i}")
    _commit_more(cluster, f"commits with {size} voters")
    voters = list(range(1, size + 1))
    victim = choice.choice(voters)
    old_key = cluster.voter_key(victim)
    cluster.wipe(victim)
    cluster.run_for(choice.randint(0, 100))
    cluster.restart(victim)
    _commit_more(cluster, "commits after a voter lost its disk")
    target = cluster.committed_offset()
    cluster.run_until(lambda: cluster.nodes[victim].log.high_watermark() >= target, cluster.now + PHASE_DEADLINE_MS,
                      "the wiped voter catches up as an observer")
    lead = cluster.leader()
    raft = cluster.nodes[victim].raft
    new_key = cluster.voter_key(victim)
    if raft.quorum.is_voter or raft.membership.is_local_voter() or (
            lead is not None and lead.raft.quorum.state.is_voter_key(victim, new_key.directory_id)):
        raise SimulationFailure(f"seed {seed} at {cluster.now} ms: the wiped node {victim} acts as the voter it was "
                                f"(is_voter={raft.quorum.is_voter})", cluster.replay)
    # the quorum one short of a majority without the victim: its fetches must not commit anything
    lead = cluster.leader()
    if lead is not None and lead.node_id != victim:
        others = [v for v in voters if v not in (victim, lead.node_id)]
        choice.shuffle(others)
        majority = len(voters) // 2 + 1
        stopped = others[: len(others) - (majority - 2)]  # left running: the leader and majority - 2 others
        for v in stopped:
            cluster.kill(v)
        # What the stopped voters (and the victim's old disk) had flushed may still commit, from fetches they sent
        # before: the most a majority of the old keys can justify. The victim's new disk must not add to it.
        held = [cluster.nodes[v].log.flushed_offset() for v in stopped]
        held.append(cluster.invariants.lost_disks[old_key.directory_id].flushed_offset())
        held += [1 << 62] * (len(voters) - len(held))
        ceiling = sorted(held, reverse=True)[majority - 1]
        cluster.run_for(300)
        if cluster.committed_offset() > ceiling:
            raise SimulationFailure(f"seed {seed} at {cluster.now} ms: committed {cluster.committed_offset()} with "
                                    f"voters {stopped} down, more than the old voters hold ({ceiling}): the wiped "
                                    f"voter {victim}'s fetches were counted", cluster.replay)
        if cluster.nodes[victim].log.end_offset() > ceiling:
            cluster.counters["stalled_without_wiped_voter"] += 1  # its fetches would have committed more
        for v in stopped:
            cluster.restart(v)
        _commit_more(cluster, "commits once the stopped voters are back")
    _change(cluster, choice, lambda: [cluster.remove_voter(old_key)], f"removing the old key of {victim}")
    _commit_more(cluster, f"commits with {size - 1} voters")
    _change(cluster, choice, lambda: [cluster.add_voter(victim)], f"adding {victim} on its new disk")
    _commit_more(cluster, f"commits with {size} voters again")
    _all_caught_up(cluster, "everyone caught up")
    _check_membership(cluster, [cluster.voter_key(v) for v in voters], "the wiped voter replaced")
    return cluster


def voter_moves_while_leaderless(seed: int, mutations: Mutations = Mutations()) -> Cluster:
    """KIP-853, issue #35 item 13: a two-voter quorum whose follower stops long enough for the leader to resign at
    check-quorum (with records the follower never fetched), and comes back on another port. The voter set still
    names its old address, so the other voter cannot dial it until an UpdateRaftVoter (or the moved voter's own
    start-of-epoch record as leader) commits; the moved voter can still reach the other one. Once it is back a leader
    must be elected, commit, and the committed voter set name the new address."""
    choice = random.Random(f"voter_moves_while_leaderless:{seed}")
    cluster = _cluster("voter_moves_while_leaderless", seed, mutations, voters=2, kraft_version=1,
                       faults=NetworkFaults(max_delay_ms=choice.choice([5, 10])))
    cluster.start_workload()
    _commit_more(cluster, "first commits")
    mover = 3 - _leader_id(cluster, "a leader")
    (cluster.kill if choice.random() < 0.5 else cluster.shutdown)(mover)
    cluster.run_until(lambda: cluster.leader() is None, cluster.now + PHASE_DEADLINE_MS,
                      "the leader resigns at check-quorum")
    cluster.run_for(60)  # a graceful stop completes
    cluster.move(mover)
    cluster.run_for(choice.randint(0, 500))
    cluster.restart(mover)
    _leader_id(cluster, "a leader after the voter moved")
    _commit_more(cluster, "commits after the voter moved")
    moved = cluster.endpoints(mover)
    cluster.run_until(lambda: cluster.committed_voter_set().node(mover).endpoints == moved,
                      cluster.now + PHASE_DEADLINE_MS, "the committed voter set names the new address")
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
        grow_and_shrink,
        replace_wiped_voter,
        voter_moves_while_leaderless,
    )
}
