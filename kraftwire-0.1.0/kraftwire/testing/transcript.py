"""Golden transcripts: a text scenario in, a stable rendering out.

A transcript file interleaves commands (lines starting with ``> ``) with the output expected after each; ``#`` lines
and blank lines are kept as they are. ``run_transcript(text)`` replays the commands and returns the same file with
fresh outputs, so a test compares it with the file and ``KRAFTWIRE_REWRITE_GOLDEN=1`` rewrites it.

Commands::

    cluster voters=3 [observers=0] [prevote=on|off] [seed=1] [snapshot_bytes=0]   start a quorum (timeouts: election 1000, fetch 3000)
    timeout N          expire node N's election/fetch timer now
    run MS             advance virtual time
    append K           the leader schedules K records
    kill N | restart N | shutdown N | isolate N | heal
    snapshots N        node N's log start, snapshot ids and what its state machine loaded
    state              one line per node: state, epoch, leader, log end, high watermark
    log N              node N's batches: base..last, epoch, control or data
"""

from __future__ import annotations

from kraftwire.raft.leader import LeaderState
from kraftwire.raft.states import CandidateState, FollowerState, ProspectiveState, ResignedState, UnattachedState
from kraftwire.records import read_batches
from kraftwire.testing.sim import Cluster


def render_state(cluster: Cluster) -> list[str]:
    out = []
    for node_id, node in sorted(cluster.nodes.items()):
        if node.raft is None:
            out.append(f"node {node_id}: down leo={node.log.end_offset()}")
            continue
        raft = node.raft
        leader = raft.leader_and_epoch().leader_id
        out.append(
            f"node {node_id}: {raft.state_name} epoch={raft.epoch} leader={leader} "
            f"leo={node.log.end_offset()} hw={node.log.high_watermark()}"
        )
    return out


def render_log(cluster: Cluster, node_id: int) -> list[str]:
    log = cluster.nodes[node_id].log
    if log.end_offset() == log.start_offset():
        return ["(empty)"]
    data = log.read(log.start_offset(), 1 << 30).records
    parts = [f"(log starts at {log.start_offset()})"] if log.start_offset() else []
    for b in read_batches(data, validate=False):
        kind = "control" if b.is_control else "data " + ",".join(r.value.decode() for r in b)
        parts.append(f"{b.base_offset}..{b.last_offset} epoch={b.partition_leader_epoch} {kind}")
    return parts


def _expire(cluster: Cluster, node_id: int) -> None:
    node = cluster.nodes[node_id]
    state = node.raft.quorum.state
    now = cluster.now
    if isinstance(state, FollowerState):
        state.fetch_deadline_ms = now
    elif isinstance(state, (UnattachedState, ProspectiveState, ResignedState)):
        state.election_deadline_ms = now
    elif isinstance(state, CandidateState):
        state.backoff_until_ms = now
    elif isinstance(state, LeaderState):
        state.check_quorum_deadline_ms = now
    cluster._poll(node_id, node.incarnation)


def run_transcript(text: str) -> str:
    cluster: Cluster | None = None
    out: list[str] = []
    values = 0
    for line in text.splitlines():
        if not line.startswith("> "):
            if not line.strip() or line.startswith("#"):
                out.append(line)
            continue  # old output is replaced
        out.append(line)
        words = line[2:].split()
        cmd, args = words[0], words[1:]
        if cmd == "cluster":
            opts = dict(a.split("=") for a in args)
            cluster = Cluster(
                int(opts.get("seed", 1)), voters=int(opts.get("voters", 3)), observers=int(opts.get("observers", 0)),
                pre_vote=opts.get("prevote", "on") == "on", election_timeout_ms=1000, fetch_timeout_ms=3000,
                snapshot_bytes=int(opts.get("snapshot_bytes", 0)),
            )
            continue
        assert cluster is not None, "the first command must be 'cluster'"
        if cmd == "run":
            cluster.run_for(int(args[0]))
        elif cmd == "timeout":
            _expire(cluster, int(args[0]))
        elif cmd == "append":
            leader = cluster.leader()
            if leader is None:
                out.append("error: no leader")
                continue
            batch = []
            for _ in range(int(args[0])):
                batch.append(f"v{values}".encode())
                values += 1
            last = leader.raft.schedule_append(batch, cluster.now)
            cluster._poll(leader.node_id, leader.incarnation)
            out.append(f"appended on node {leader.node_id} up to offset {last}")
        elif cmd in ("kill", "restart", "shutdown", "isolate"):
            getattr(cluster, cmd)(int(args[0]))
        elif cmd == "heal":
            cluster.heal()
        elif cmd == "state":
            out.extend(render_state(cluster))
        elif cmd == "log":
            out.extend(render_log(cluster, int(args[0])))
        elif cmd == "snapshots":
            node = cluster.nodes[int(args[0])]
            ids = [f"{s.end_offset}@{s.epoch}" for s in node.log.snapshot_ids()]
            out.append(f"log start {node.log.start_offset()}, snapshots [{', '.join(ids)}], "
                       f"state machine loaded {node.snapshot_loads} snapshot(s), holds {len(node.committed_values)} values")
        else:
            raise ValueError(f"unknown command {cmd!r}")
    return "\n".join(out) + "\n"
