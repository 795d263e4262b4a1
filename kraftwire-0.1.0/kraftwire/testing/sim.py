"""A seeded, single-threaded simulation of a KRaft quorum: virtual clock, event queue, message router, drivers.

Every node is a ``RaftNode`` over a ``MemoryLog`` (which loses unflushed data on ``crash()``) plus a durable election
state, driven exactly as ``Ready`` prescribes: persist, log ops, flush (completing after a random delay, then the
gated messages leave and ``LogFlushed`` is reported), send, high watermark, wake-up. Faults: hard kill, graceful
shutdown, restart, wipe, full and one-way partitions, message drop, duplication, delay and reordering, and the
KAFKA-18723 "racy read" (a Fetch response gains a batch from a later epoch, or a flipped byte).

kraft.version 1 clusters (``kraft_version=1``, KIP-853): every node has its own metadata directory id (drawn from the
seed; a wipe draws a new one), voters ``1..voters`` form the bootstrap voter set, and ``joiners`` more controllers
(the next ids) start with that same set, so they are observers until an ``AddRaftVoter`` makes them voters.
``cluster.admin`` (``kraftwire.testing.admin``) sends those requests through the simulated network. A node that
starts with an empty log gets the committed voter set as its base (``RaftConfig.voter_set``: what the quorum would
answer it).

Everything random comes from one ``random.Random(seed)``, so a seed replays exactly. After every event the
``Invariants`` are checked; ``run_until`` fails with ``SimulationFailure`` (carrying a one-line replay command).
"""

from __future__ import annotations

import heapq
import random
import uuid
from collections import Counter
from dataclasses import dataclass, field, replace

from kraftwire.errors import NotLeaderError
from kraftwire.ids import NO_ID, ReplicaKey
from kraftwire.log.memory import MemoryLog
from kraftwire.raft import messages as m
from kraftwire.raft.config import Mutations, RaftConfig
from kraftwire.raft.election import ElectionState
from kraftwire.raft.events import Received, RequestFailed
from kraftwire.raft.execute import HostBase, ReadyExecutor
from kraftwire.raft.leader import LeaderState
from kraftwire.raft.node import RaftNode
from kraftwire.raft.ready import AppendAsFollower, CreateSnapshot, Ready
from kraftwire.raft.voter_set import VoterNode, VoterSet
from kraftwire.records import RecordBatchBuilder, validate_batches
from kraftwire.testing.admin import ADMIN_ID, SimAdmin
from kraftwire.testing.invariants import InvariantViolation, Invariants

OBSERVER_BASE_ID = 100


class SimulationFailure(AssertionError):
    def __init__(self, message: str, replay: str) -> None:
        super().__init__(f"{message}\nreplay: {replay}")
        self.replay = replay


@dataclass
class NetworkFaults:
    drop_rate: float = 0.0
    duplicate_rate: float = 0.0
    min_delay_ms: int = 1
    max_delay_ms: int = 5
    corrupt_rate: float = 0.0  # flip a byte in a Fetch response's records
    future_batch_rate: float = 0.0  # append a batch of a later epoch to a Fetch response (KAFKA-18723 race)


@dataclass
class SimNode:
    node_id: int
    config: RaftConfig
    log: MemoryLog = field(default_factory=MemoryLog)
    durable: ElectionState | None = None
    raft: RaftNode | None = None
    incarnation: int = 0
    next_poll_ms: int | None = None
    committed_values: list = field(default_factory=list)
    snapshot_loads: int = 0
    executor: ReadyExecutor | None = None

    @property
    def running(self) -> bool:
        return self.raft is not None


class _Recorder:
    """The replicated state machine of the simulation: the list of committed values, in order. It can snapshot
    itself, and every node's list must be a prefix of (or extend) the same global history."""

    def __init__(self, node: SimNode, history: list) -> None:
        self.node = node
        self.history = history  # shared by all nodes: the longest committed value sequence seen
        self.next_offset = None
        node.committed_values = []

    def _check_from(self, start: int) -> None:
        values, history = self.node.committed_values, self.history
        for i in range(start, len(values)):
            if i < len(history):
                if history[i] != values[i]:
                    raise InvariantViolation("committed-data", f"node {self.node.node_id} applied {values[i]!r} as "
                                             f"value #{i}, others applied {history[i]!r}")
            else:
                history.append(values[i])

    def handle_commit(self, batches) -> None:
        start = len(self.node.committed_values)
        for b in batches:
            if self.next_offset is not None and b.base_offset != self.next_offset:
                raise InvariantViolation("listener-order", f"node {self.node.node_id} got {b.base_offset}, "
                                         f"expected {self.next_offset}")
            self.next_offset = b.last_offset + 1
            self.node.committed_values.extend(b.records)
        self._check_from(start)

    def handle_load_snapshot(self, reader) -> None:
        if self.node.raft is not None and self.node.raft.is_leader():
            raise InvariantViolation("leader-never-loads-snapshot", f"node {self.node.node_id}")
        self.node.committed_values = list(reader.records)
        self.next_offset = reader.snapshot_id.end_offset
        self.node.snapshot_loads += 1
        self._check_from(0)

    def snapshot_records(self) -> list:
        return list(self.node.committed_values)

    def handle_leader_change(self, leader) -> None:
        pass


class _SimHost(HostBase):
    """One node incarnation's surroundings: a durable election state, the simulated network, a disk whose flush
    completes after a random delay, and the cluster's event queue for wake-ups."""

    def __init__(self, cluster: "Cluster", node: SimNode) -> None:
        self.cluster = cluster
        self.node = node
        self.incarnation = node.incarnation

    def persist(self, state: ElectionState) -> None:
        self.node.durable = state
        self.cluster.invariants.on_persist(self.node.node_id, state)

    def send(self, message: m.Message) -> None:
        self.cluster._send(self.node, message)

    def flush(self) -> int | None:
        cluster = self.cluster
        delay = cluster.rng.randint(0, cluster.max_flush_delay_ms)
        cluster._at(cluster.now + delay, cluster._flushed, self.node.node_id, self.incarnation)
        return None

    def high_watermark_advanced(self) -> None:
        # as the driver does: the listeners get the new commits right after this Ready, without a step of their own
        self.cluster._at(self.cluster.now, self.cluster._deliver_committed, self.node.node_id, self.incarnation)

    def arm_timer(self, wake_ms: int) -> None:
        cluster, node = self.cluster, self.node
        wake = max(wake_ms, cluster.now)
        if node.next_poll_ms is None or wake < node.next_poll_ms:
            node.next_poll_ms = wake
            cluster._at(wake, cluster._scheduled_poll, node.node_id, self.incarnation, wake)


class Cluster:
    def __init__(
        self,
        seed: int,
        *,
        voters: int = 3,
        observers: int = 0,
        mutations: Mutations = Mutations(),
        faults: NetworkFaults | None = None,
        relaxed_invariants: bool = False,
        replay: str = "",
        pre_vote: bool = True,
        election_timeout_ms: int = 100,
        fetch_timeout_ms: int = 300,
        max_flush_delay_ms: int = 3,
        trace: bool = False,
        snapshot_bytes: int = 0,
        anonymous_observer: bool = False,
        kraft_version: int = 0,
        joiners: int = 0,
        snapshot_chunk_bytes: int = 200,
    ) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.now = 0
        self.events = 0
        self._queue: list = []
        self._seq = 0
        self.faults = faults or NetworkFaults()
        self.blocked: set[tuple[int, int]] = set()  # (src, dst) pairs whose messages are dropped
        #: controllers that moved (``move``): node id -> the port it listens on now (every other one: 9093)
        self.ports: dict[int, int] = {}
        self.max_flush_delay_ms = max_flush_delay_ms
        self.replay = replay or f"python -m kraftwire.testing.replay --seed {seed}"
        self.counters: Counter[str] = Counter()
        self.retired_counters: Counter[str] = Counter()  # counters of node incarnations that stopped
        self.trace_lines: list[str] | None = [] if trace else None
        voter_ids = frozenset(range(1, voters + 1))
        self.voter_ids = voter_ids
        self.invariants = Invariants(voter_ids, relaxed_for_wipe=relaxed_invariants)
        base = RaftConfig(
            node_id=1, voters=voter_ids, election_timeout_ms=election_timeout_ms, election_backoff_max_ms=100,
            fetch_timeout_ms=fetch_timeout_ms, request_timeout_ms=fetch_timeout_ms, retry_backoff_ms=10,
            append_linger_ms=0, fetch_max_wait_ms=50, pre_vote=pre_vote, mutations=mutations,
            snapshot_max_bytes_between=snapshot_bytes, snapshot_interval_ms=0, fetch_snapshot_max_bytes=snapshot_chunk_bytes,
            advance_log_start_on_snapshot=True,
            # both ways of answering high-watermark news: at once (Kafka's) and after a linger
            high_watermark_linger_ms=(seed % 3) * 3,
        )
        self.history: list = []
        self.cluster_id = base.cluster_id
        joiner_ids = list(range(voters + 1, voters + 1 + joiners))
        ids = sorted(voter_ids) + joiner_ids + [OBSERVER_BASE_ID + i for i in range(observers)]
        if anonymous_observer:
            ids.append(NO_ID)  # a replica without an id (a debugging tool): the leader keeps no state for it
        self.dynamic = kraft_version >= 1
        self.admin: SimAdmin | None = None
        if self.dynamic:
            # its own generator, so that drawing directory ids moves nothing else a seed decides
            self._directory_rng = random.Random(f"directory-ids:{seed}")
            directories = {i: self.new_directory_id() for i in ids}
            bootstrap = VoterSet.of(VoterNode(ReplicaKey(i, directories[i]), self.endpoints(i), 0, 1)
                                    for i in sorted(voter_ids))
            self.invariants.enable_dynamic(bootstrap)
            base = replace(base, kraft_version=1, voter_set=bootstrap, voters=bootstrap.ids)
            self.nodes = {i: SimNode(i, replace(base, node_id=i, directory_id=directories[i])) for i in ids}
            self.admin = SimAdmin(self)
        else:
            self.nodes = {i: SimNode(i, replace(base, node_id=i)) for i in ids}
        self.next_value = 0
        for node in self.nodes.values():
            self.start(node.node_id)

    # --- scheduling -----------------------------------------------------------------------------------------------
    def _at(self, time_ms: int, fn, *args) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (time_ms, self._seq, fn, args))

    def trace(self, text: str) -> None:
        if self.trace_lines is not None:
            self.trace_lines.append(f"{self.now:>6} {text}")

    def step(self) -> bool:
        if not self._queue:
            return False
        time_ms, _, fn, args = heapq.heappop(self._queue)
        self.now = max(self.now, time_ms)
        fn(*args)
        self.events += 1
        self.check()
        return True

    def run_until(self, done, deadline_ms: int, what: str = "condition") -> None:
        try:
            while not done():
                if self.now > deadline_ms or not self._queue:
                    raise SimulationFailure(
                        f"liveness: {what} not reached by {deadline_ms} ms (now {self.now}, "
                        f"committed {self.committed_offset()}, states {self.describe_states()})",
                        self.replay,
                    )
                self.step()
        except InvariantViolation as exc:
            raise SimulationFailure(f"seed {self.seed} at {self.now} ms after {self.events} events: {exc}",
                                    self.replay) from exc
        except SimulationFailure:
            raise
        except Exception as exc:  # a crash of the core or the driver is a failure too
            raise SimulationFailure(f"seed {self.seed} at {self.now} ms: {type(exc).__name__}: {exc}",
                                    self.replay) from exc

    def run_for(self, duration_ms: int) -> None:
        end = self.now + duration_ms
        self._at(end, lambda: None)
        self.run_until(lambda: self.now >= end, end + 1, "time")

    # --- node lifecycle -------------------------------------------------------------------------------------------
    def start(self, node_id: int) -> None:
        node = self.nodes[node_id]
        assert node.raft is None
        if self.dynamic and node.log.end_offset() == 0 and node.log.latest_snapshot_id() is None:
            # an empty controller learns the voter set from the quorum (kafka-storage --no-initial-controllers)
            learned = self.committed_voter_set()
            node.config = replace(node.config, voter_set=learned, voters=learned.ids)
        node.incarnation += 1
        node_rng = random.Random(self.rng.getrandbits(64))
        node.raft = RaftNode(node.config, node.log, node.durable, node_rng, self.now)
        node.executor = ReadyExecutor(node.log, _SimHost(self, node))
        node.raft.register(_Recorder(node, self.history))
        self.trace(f"node {node_id} starts as {node.raft.state_name} in epoch {node.raft.epoch}")
        self._poll(node_id, node.incarnation)

    def kill(self, node_id: int) -> None:
        """Hard kill: unflushed data, gated messages and in-flight flushes are lost."""
        node = self.nodes[node_id]
        if node.raft is None:
            return
        self.counters["hard_kills"] += 1
        self.trace(f"node {node_id} killed")
        self.retired_counters.update(node.raft.counters)
        node.raft = None
        node.next_poll_ms = None
        node.log.crash()
        node.committed_values.clear()

    def shutdown(self, node_id: int, grace_ms: int = 50) -> None:
        """Graceful: a leader resigns (EndQuorumEpoch), the log is flushed, then the node stops."""
        node = self.nodes[node_id]
        if node.raft is None:
            return
        self.counters["graceful_shutdowns"] += 1
        node.raft.resign(self.now)
        self._poll(node_id, node.incarnation)
        incarnation = node.incarnation

        def stop() -> None:
            if node.raft is not None and node.incarnation == incarnation:
                node.log.flush()
                self.retired_counters.update(node.raft.counters)
                node.raft = None
                node.next_poll_ms = None
                node.log.crash()  # nothing unflushed remains, so nothing is lost
                node.committed_values.clear()
                self.trace(f"node {node_id} stopped")

        self._at(self.now + grace_ms, stop)

    def restart(self, node_id: int) -> None:
        if self.nodes[node_id].raft is None:
            self.start(node_id)

    def wipe(self, node_id: int) -> None:
        """Kill a node and delete its disk (log and election state); it restarts empty."""
        self.kill(node_id)
        node = self.nodes[node_id]
        if self.dynamic:  # a new disk is a new metadata directory: the voter the old one was is gone with it
            self.invariants.lose_disk(node.config.directory_id, node.log)
            node.config = replace(node.config, directory_id=self.new_directory_id())
        node.log = MemoryLog()
        node.durable = None
        self.invariants.forget(node_id)
        self.counters["wipes"] += 1

    # --- kraft.version 1 membership -----------------------------------------------------------------------------
    def new_directory_id(self) -> uuid.UUID:
        return uuid.UUID(int=self._directory_rng.getrandbits(128), version=4)

    def endpoints(self, node_id: int) -> tuple:
        """A controller's endpoints now (port 9093 until it ``move``s)."""
        return (("CONTROLLER", f"node{node_id}", self.ports.get(node_id, 9093)),)

    def move(self, node_id: int) -> None:
        """A stopped controller comes back on another port: its old address is gone (a request sent there is
        refused, as by a closed port), and it advertises the new one (``local_endpoints``), which the other nodes
        only learn from the voter set once an UpdateRaftVoter (or its own start-of-epoch record as leader) commits."""
        node = self.nodes[node_id]
        assert node.raft is None, "only a stopped controller moves"
        self.ports[node_id] = self.ports.get(node_id, 9093) + 1
        node.config = replace(node.config, local_endpoints=self.endpoints(node_id))
        self.counters["moves"] += 1

    def voter_key(self, node_id: int) -> ReplicaKey:
        """The key this node would be added under now (its id and current directory id)."""
        return ReplicaKey(node_id, self.nodes[node_id].config.directory_id)

    def controller_ids(self) -> list[int]:
        return sorted(i for i in self.nodes if 0 <= i < OBSERVER_BASE_ID)

    def committed_voter_set(self) -> VoterSet:
        """The voter set of the committed history (the bootstrap set until a VotersRecord commits)."""
        return self.invariants.committed_voter_set()

    def add_voter(self, node_id: int):
        return self.admin.add_voter(self.voter_key(node_id), self.endpoints(node_id))

    def remove_voter(self, key: ReplicaKey):
        return self.admin.remove_voter(key)

    def _disk_of(self, key: ReplicaKey):
        """The log that is this voter key's disk: the node's, if its directory is the key's; a wiped one's old log."""
        node = self.nodes.get(key.id)
        if node is not None and key.directory_id in (None, node.config.directory_id):
            return node.log
        return self.invariants.lost_disks.get(key.directory_id)

    # --- driver -----------------------------------------------------------------------------------------------------
    def _poll(self, node_id: int, incarnation: int) -> None:
        node = self.nodes[node_id]
        if node.raft is None or node.incarnation != incarnation:
            return
        node.next_poll_ms = None
        self._execute(node, node.raft.poll(self.now))

    def _deliver_committed(self, node_id: int, incarnation: int) -> None:
        node = self.nodes[node_id]
        if node.raft is not None and node.incarnation == incarnation:
            node.raft.deliver_committed()

    def _scheduled_poll(self, node_id: int, incarnation: int, at_ms: int) -> None:
        node = self.nodes[node_id]
        if node.next_poll_ms == at_ms:
            self._poll(node_id, incarnation)

    def _execute(self, node: SimNode, ready: Ready) -> None:
        for op in ready.log_ops:
            if isinstance(op, AppendAsFollower):
                above = [b.partition_leader_epoch for b in validate_batches(op.records, check_records=False).batches
                         if b.partition_leader_epoch > op.epoch]
                if above:
                    self.invariants.fail("epoch-filter", f"node {node.node_id} in epoch {op.epoch} appends batches "
                                         f"of epochs {above}")
        # Checked before the Ready runs, so the invariant (not the log's own refusal) names the fault. The same
        # Ready's log ops cannot change the answer: they append above the high watermark, which a snapshot is below.
        for sop in ready.snapshot_ops:
            if isinstance(sop, CreateSnapshot):
                end = sop.snapshot_id.end_offset
                if any(base < end <= last for base, last, _, _ in node.log.batches()):
                    self.invariants.fail("snapshot-on-batch-boundary", f"node {node.node_id} snapshot at {end}")
        assert node.executor is not None
        node.executor.execute(ready)  # a simulated flush is never inline: it completes in _flushed

    def _flushed(self, node_id: int, incarnation: int) -> None:
        node = self.nodes[node_id]
        if node.raft is None or node.incarnation != incarnation:
            return
        offset = node.log.flush()
        node.executor.flushed(offset)
        ready = node.raft.on_flushed(offset, self.now)
        if ready is not None:
            self._execute(node, ready)

    # --- network ----------------------------------------------------------------------------------------------------
    def _send(self, node: SimNode, msg: m.Message) -> None:
        self.invariants.on_send(msg, node.durable, node.log.flushed_offset())
        if self.ports and m.is_request(msg) and msg.dst in self.ports and self._dials_old_address(node, msg.dst):
            self.counters["stale_endpoint"] += 1
            self._refuse(msg)
            return
        self._route(msg)

    def _dials_old_address(self, node: SimNode, dst: int) -> bool:
        """The sender reaches a voter where the edge dials it: its leader where the leader said it listens
        (BeginQuorumEpoch), any other voter where the sender's voter set says - a moved one's old address, until the
        set names the new one."""
        raft = node.raft
        if raft is None:
            return False
        told = raft.leader_endpoints()
        if told is not None and told[0] == dst:
            return tuple(told[1]) != self.endpoints(dst)
        entry = raft.membership.voters().node(dst)
        return entry is not None and bool(entry.endpoints) and tuple(entry.endpoints) != self.endpoints(dst)

    def _route(self, msg: m.Message) -> None:
        self.counters["messages"] += 1
        if (msg.src, msg.dst) in self.blocked:
            self.counters["blocked"] += 1
            return
        f = self.faults
        if f.drop_rate and self.rng.random() < f.drop_rate:
            self.counters["dropped"] += 1
            return
        copies = 2 if f.duplicate_rate and self.rng.random() < f.duplicate_rate else 1
        if copies == 2:
            self.counters["duplicated"] += 1
        for _ in range(copies):
            delay = self.rng.randint(f.min_delay_ms, f.max_delay_ms)
            self._at(self.now + delay, self._deliver, self._maybe_tamper(msg))

    def _maybe_tamper(self, msg: m.Message) -> m.Message:
        if not isinstance(msg, m.FetchResponse) or not msg.records:
            return msg
        f = self.faults
        if f.corrupt_rate and self.rng.random() < f.corrupt_rate:
            data = bytearray(msg.records)
            # Any byte but a batch's PartitionLeaderEpoch (bytes 12..15): that field is outside the CRC by design
            # (leaders rewrite it), so no receiver could detect a flip there; TCP's checksum is what guards it.
            while True:
                i = self.rng.randrange(len(data))
                starts = [b.position for b in validate_batches(msg.records, check_records=False).batches]
                if not any(p + 12 <= i < p + 16 for p in starts):
                    break
            data[i] ^= 1 << self.rng.randrange(8)
            self.counters["corrupted"] += 1
            return replace(msg, records=bytes(data))
        if f.future_batch_rate and self.rng.random() < f.future_batch_rate:
            last = validate_batches(msg.records, check_records=False).last_offset
            builder = RecordBatchBuilder(base_offset=last + 1, partition_leader_epoch=msg.leader_epoch + 1)
            builder.append(None, b"future", timestamp=self.now)
            self.counters["future_batches"] += 1
            return replace(msg, records=msg.records + builder.build())
        return msg

    def _deliver(self, msg: m.Message) -> None:
        if msg.dst == ADMIN_ID and self.admin is not None:
            self.trace(f"{msg.src}->admin {describe_message(msg)}")
            self.admin.on_response(msg)
            return
        node = self.nodes.get(msg.dst)
        if node is None or node.raft is None:
            self.counters["undeliverable"] += 1
            if m.is_request(msg):
                self._refuse(msg)
            return
        if self.trace_lines is not None:
            self.trace(f"{msg.src}->{msg.dst} {describe_message(msg)}")
        self._execute(node, node.raft.handle(Received(msg), self.now))

    def _refuse(self, request: m.Message) -> None:
        """A request to a node that is down fails at the transport, as TCP answers a closed port (connection
        refused): the sender learns it after a network delay. A partition, by contrast, stays silent."""
        if request.src == ADMIN_ID and self.admin is not None:
            delay = self.rng.randint(self.faults.min_delay_ms, self.faults.max_delay_ms)
            self._at(self.now + delay, self.admin.on_refused, request.correlation_id)
            return
        sender = self.nodes.get(request.src)
        if sender is None or sender.raft is None:
            return
        incarnation = sender.incarnation
        failed = RequestFailed(request.dst, request.correlation_id)

        def refuse() -> None:
            if sender.raft is not None and sender.incarnation == incarnation:
                self.counters["refused"] += 1
                self._execute(sender, sender.raft.handle(failed, self.now))

        self._at(self.now + self.rng.randint(self.faults.min_delay_ms, self.faults.max_delay_ms), refuse)

    def partition(self, group_a, group_b, *, one_way: bool = False) -> None:
        """Drop messages from every node of ``group_a`` to every node of ``group_b`` (and back unless one_way)."""
        self.counters["partitions"] += 1
        for a in group_a:
            for b in group_b:
                self.blocked.add((a, b))
                if not one_way:
                    self.blocked.add((b, a))

    def isolate(self, node_id: int) -> None:
        others = [n for n in self.nodes if n != node_id]
        self.partition([node_id], others)

    def heal(self) -> None:
        self.blocked.clear()

    # --- workload ---------------------------------------------------------------------------------------------------
    def start_workload(self, interval_ms: int = 10, records: int = 1) -> None:
        def tick() -> None:
            leader = self.leader()
            if leader is not None:
                try:
                    values = []
                    for _ in range(records):
                        values.append(f"v{self.next_value}".encode())
                        self.next_value += 1
                    leader.raft.schedule_append(values, self.now)
                    self._poll(leader.node_id, leader.incarnation)
                except NotLeaderError:
                    pass
            self._at(self.now + interval_ms, tick)

        self._at(self.now + interval_ms, tick)

    # --- observation ------------------------------------------------------------------------------------------------
    def leader(self) -> SimNode | None:
        best = None
        for node in self.nodes.values():
            if node.raft is not None and node.raft.is_leader():
                if best is None or node.raft.epoch > best.raft.epoch:
                    best = node
        return best

    def committed_offset(self) -> int:
        return self.invariants.max_committed

    def check(self) -> None:
        inv = self.invariants
        for node in self.nodes.values():
            raft = node.raft
            if raft is not None:
                state = raft.quorum.state
                if isinstance(state, LeaderState):
                    inv.on_leader(node.node_id, state.epoch, node.incarnation, state.high_watermark)
                if node.durable is not None and node.durable.epoch != raft.epoch and not raft.config.mutations.any():
                    if raft.quorum.pending_persist is None:
                        inv.fail("monotonic-epoch", f"node {node.node_id} runs epoch {raft.epoch}, persisted "
                                 f"{node.durable.epoch}")
            inv.check_committed(node.node_id, node.log)
            inv.check_snapshot_at_log_start(node.node_id, node.log)
        if not self.dynamic:
            inv.check_majority({v: self.nodes[v].log.flushed_offset() for v in self.voter_ids})
            return
        for node in self.nodes.values():  # after every log was matched with the committed history
            state = node.raft.quorum.state if node.raft is not None else None
            if isinstance(state, LeaderState):
                inv.check_leader_voters(node.node_id, state.epoch, node.log, state.high_watermark, self._disk_of)

    def describe_states(self) -> str:
        parts = []
        for node in self.nodes.values():
            if node.raft is None:
                parts.append(f"{node.node_id}:down")
            else:
                parts.append(f"{node.node_id}:{node.raft.state_name}@{node.raft.epoch}"
                             f"[leo={node.log.end_offset()},hw={node.log.high_watermark()}]")
        return " ".join(parts)

    def node_counters(self) -> Counter:
        total: Counter = Counter(self.counters)
        total.update(self.retired_counters)
        for node in self.nodes.values():
            if node.raft is not None:
                total.update(node.raft.counters)
        return total


def describe_message(msg: m.Message) -> str:
    name = type(msg).__name__
    if isinstance(msg, m.VoteRequest):
        return f"{'PreVote' if msg.pre_vote else 'Vote'}Request(epoch={msg.candidate_epoch}, last={msg.last_offset_epoch}:{msg.last_offset})"
    if isinstance(msg, m.VoteResponse):
        return f"{'PreVote' if msg.pre_vote else 'Vote'}Response(epoch={msg.leader_epoch}, granted={msg.vote_granted}, error={m.error_name(msg.error)})"
    if isinstance(msg, m.FetchRequest):
        return f"FetchRequest(epoch={msg.current_leader_epoch}, offset={msg.fetch_offset}, last_epoch={msg.last_fetched_epoch})"
    if isinstance(msg, m.FetchResponse):
        extra = ""
        if msg.diverging_epoch is not None:
            extra = f", diverging={msg.diverging_epoch.epoch}:{msg.diverging_epoch.offset}"
        if msg.records:
            r = validate_batches(msg.records, check_records=False, stop_at_corruption=True)
            extra += f", records={r.first_offset}..{r.last_offset}" + (", CORRUPT" if r.error else "")
        return f"FetchResponse(epoch={msg.leader_epoch}, error={m.error_name(msg.error)}, hw={msg.high_watermark}{extra})"
    if isinstance(msg, m.BeginQuorumEpochRequest):
        return f"BeginQuorumEpochRequest(epoch={msg.new_leader_epoch})"
    if isinstance(msg, m.EndQuorumEpochRequest):
        return f"EndQuorumEpochRequest(epoch={msg.resigned_leader_epoch}, preferred={[k.id for k in msg.preferred_candidates]})"
    if isinstance(msg, (m.AddRaftVoterRequest, m.RemoveRaftVoterRequest)):
        return f"{name}(voter={msg.voter_key.id}:{str(msg.voter_key.directory_id)[:8]})"
    if isinstance(msg, m.Response):
        return f"{name}(epoch={msg.leader_epoch}, error={m.error_name(msg.error)})"
    return name


__all__ = ["Cluster", "NetworkFaults", "SimulationFailure", "InvariantViolation", "OBSERVER_BASE_ID", "NO_ID",
           "ADMIN_ID"]
