"""A seeded simulation of topic partitions replicated with Kafka's ISR protocol: the real pure controller
(``BrokerControl``, ``ReplicationControl``), each broker running the replica manager's own decisions
(``kraftwire.server.runtime.replica_core.ReplicaCore``: hosting from the image, appends as leader, followers'
fetches, its own fetches' answers, ISR changes, AlterPartition, the acks=-1 waits; the rules are
``kraftwire.replica``'s, executed by ``kraftwire.server.runtime.partition_runtime``) on ``Hosted`` partitions over
the real partition log in memory (``MemoryPartitionLog``) with a fake clock and timers, joined by a network that
delays, reorders and drops every message.

The cluster: one controller (its failover is the Raft simulation's business) and ``brokers`` brokers hosting one topic
of ``partitions`` partitions at replication factor ``rf`` with ``min.insync.replicas`` set, with eligible leader
replicas on (KIP-966, Kafka 4.4's default; ``elr=False`` turns them off): an ISR member that leaves while the ISR is
below min ISR stays eligible, the last one fenced leaves the ISR empty, an eligible replica that comes back is
elected, and a killed broker (no clean shutdown marker) registers again as an unclean shutdown, which takes it out
of every ELR. The invariants below then say what KIP-966 promises: an ELR member elected after the last ISR member
crashed loses no committed record. Events, drawn from the
seed: producers write with acks=-1 and acks=1 (sometimes to a broker that only believes it leads), followers fetch,
messages are delivered or dropped, time passes (heartbeats, session expiry, ISR shrinks, request timeouts), brokers
are killed (their logs survive, as after SIGKILL; the high watermark restarts at the log start, a lower bound) and
restarted with a new incarnation, the active controller fails over, brokers are cut off from everyone or from one peer and healed, the operator runs
preferred elections, DeleteRecords and partition reassignments (a partition moved to other brokers, or a move
cancelled: the invariants below hold across them, the acknowledged records included), and retention
(``retention.bytes``) deletes old segments (a batch is a segment in memory) — followers behind a leader's log start restart their log there.

After every event (``check``):

* **one leader per epoch**: no two brokers ever lead one partition in one leader epoch;
* **hosting follows the image**: after each image a broker hosts exactly the partitions it places on the broker;
* **committed data is never lost or changed**: every live leader's log below its high watermark extends what was
  committed before (batch for batch, byte for byte), and every replica's log below its own high watermark is a prefix
  of it; an acks=-1 answer is only given for a batch already committed at its offset. Below the highest log start a
  leader of the partition has had (retention, DeleteRecords) the records are deleted and Kafka promises nothing: a
  replica that no fetch answer has told of that log start may still hold stale records there, never committed, that
  no divergence check sees (``partition_checks.disagreement``);
* **acks=-1 means min.insync.replicas copies**: when it is answered, at least that many replicas hold the batch;
* **ISR replicas agree below the high watermark**: every member of a live leader's ISR holds the leader's log up to
  the leader's high watermark;
* **only eligible followers are proposed for the ISR**: a leader proposes an expansion only to a broker its image
  shows registered, unfenced, not shutting down and fetching with its current broker epoch (KIP-903);
* **one AlterPartition at a time**: a leader sends none for a partition while one it sent for the same leader and
  partition epoch is still on its way to the controller;
* **the high watermark follows the fetches**: once a leader has taken a follower's fetch, its high watermark is as
  high as its replica state allows;
* a leader's high watermark never goes back within its epoch; the image's leader is in its ISR, inside the replicas;
* **the last stable offset** (producers also write transactions and their COMMIT / ABORT markers; each replica
  folds them as a broker does, ``kraftwire.replica.transactions``) never exceeds a leader's high watermark, and never
  goes back across leaders: a leader whose high watermark is at least that of an earlier one serves at least its last
  stable offset (checked while no log start of the partition has moved: a replica that restarts its log past a
  transaction's start sees only the rest of it, in Kafka too).

Then the faults stop (``settle``): every broker comes back and the network heals. Under steady writes every follower
must be back in the ISR within a bounded number of rounds (``rejoin``: liveness of ISR expansion, with the followers
that were out of an ISR fetching more slowly than its members). Then the writes stop, and within a bounded number of
steps every partition must have a leader whose ISR is every replica, every replica's log must equal the leader's, the
high watermark must be the log end (every replica's: a follower's follows the leader's), and every acknowledged batch
must be there.

A failure raises ``SimulationFailure`` naming the seed and the last events; ``python -m
kraftwire.testing.partition_sim --seed N`` replays a seed and prints its whole trail.
"""

from __future__ import annotations

import argparse
import random
import uuid

from kraftwire import error_codes as ec
from kraftwire.log.memory import MemoryPartitionLog
from kraftwire.metadata.controller import reassignment
from kraftwire.metadata.features import ELR_VERSION
from kraftwire.metadata.controller.brokers import BrokerControl
from kraftwire.metadata.controller.topics import ReplicationControl
from kraftwire.metadata.image import MetadataDelta, MetadataImage, replay_all
from kraftwire.metadata.version import DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m
from kraftwire.replica.partition import LEADER
from kraftwire.testing.partition_broker import CONTROLLER, TOPIC, Broker, Msg, SimBrokers
from kraftwire.testing.partition_checks import PartitionChecks

__all__ = ["PartitionSim", "SimulationFailure", "main"]

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"
SESSION_TIMEOUT_MS = 9_000


class SimulationFailure(AssertionError):
    pass


class PartitionSim(SimBrokers, PartitionChecks):
    def __init__(self, seed: int, *, brokers: int = 4, partitions: int = 2, rf: int = 3, min_isr: int = 2,
                 drop: float = 0.05, elr: bool = True) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.txn_rng = random.Random(seed + 2)
        self.n_partitions, self.rf, self.min_isr, self.drop = partitions, rf, min_isr, drop
        self.now = 0
        self.trail: list[str] = []
        self.counts: dict[str, int] = {}
        ids = iter(range(1, 1_000_000))
        self.rc = ReplicationControl(rng=random.Random(seed + 1), new_topic_id=lambda: uuid.UUID(int=next(ids)))
        self.bc = BrokerControl(CLUSTER, SESSION_TIMEOUT_MS)
        features = [m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level)]
        if elr:
            features.append(m.FeatureLevelRecord(name=ELR_VERSION, feature_level=1))
        self.image = replay_all(features, offset=0)
        self.brokers = {b: Broker(b) for b in range(1, brokers + 1)}
        self.logs: dict[tuple[int, int], MemoryPartitionLog] = {}  # survive a kill
        self.net: list[Msg] = []
        self.cut: set[frozenset] = set()  # links that drop everything
        self.isolated: set[int] = set()
        #: per partition, every committed batch: base offset -> (last offset, bytes); and where committed data ends
        self.committed: dict[int, dict[int, tuple[int, bytes]]] = {p: {} for p in range(partitions)}
        self.committed_end: dict[int, int] = {p: 0 for p in range(partitions)}
        #: per partition, the highest log start a leader of it has had: below it the records are deleted
        self.deleted_below: dict[int, int] = {p: 0 for p in range(partitions)}
        self.epoch_leaders: dict[tuple[int, int], int] = {}
        self.leader_hw: dict[tuple[int, int, int, int], int] = {}  # (broker, incarnation, partition, epoch) -> hw
        self.acked: list[tuple[int, int, bytes]] = []
        self.sequence = 0
        #: per partition, the highest last stable offset a leader served and its high watermark then
        self.stable: dict[int, tuple[int, int]] = {}
        self.start_moved: set[int] = set()  # partitions where some replica's log start moved
        self.topic_id = None
        self._bootstrap()

    # ------------------------------------------------------------------------------------------------ helpers
    def fail(self, what: str) -> None:
        tail = "\n  ".join(self.trail[-30:])
        raise SimulationFailure(f"partition simulation seed {self.seed}: {what}\nlast events:\n  {tail}\n"
                                f"replay: python -m kraftwire.testing.partition_sim --seed {self.seed}")

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def event(self, what: str) -> None:
        self.trail.append(f"t={self.now} {what}")

    def _commit(self, records) -> None:
        if not records:
            return
        self._count_elr(records)
        delta = MetadataDelta(self.image)
        for r in records:
            delta.replay(r.message)
        self.image = delta.apply(self.image.offset + len(records))
        for b in self.brokers.values():
            self.send_image(b)

    def _count_elr(self, records) -> None:
        """Count the ELR paths the records take: an ISR emptied, a leader elected from the ELR."""
        for r in records:
            msg = r.message
            if not isinstance(msg, m.PartitionChangeRecord):
                continue
            p = self.image.topics[msg.topic_id].partitions[msg.partition_id]
            if msg.isr == []:
                self.count("isr_emptied")
            if not p.isr and msg.leader >= 0 and msg.leader in p.elr:
                self.event(f"controller: p{msg.partition_id} elects b{msg.leader} from the ELR {list(p.elr)}")
                self.count("elected_from_elr")
            if msg.eligible_leader_replicas:
                self.count("elr_joined")

    def send_image(self, b: Broker) -> None:
        """The latest image to ``b``: one image message in flight per broker, the newest (a broker observing the
        metadata log fetches whatever it has not seen, in one go)."""
        for msg in self.net:
            if msg.kind == "image" and msg.dst == b.id:
                msg.body, msg.incarnation = self.image, b.incarnation
                return
        self.send("image", CONTROLLER, b.id, self.image, b.incarnation)

    def send(self, kind: str, src: int, dst: int, body, incarnation: int, request=None) -> None:
        self.net.append(Msg(kind, src, dst, body, incarnation, request))

    def reachable(self, a: int, b: int) -> bool:
        return a not in self.isolated and b not in self.isolated and frozenset((a, b)) not in self.cut

    def _bootstrap(self) -> None:
        for b in self.brokers.values():
            self._register(b)
        for b in self.brokers.values():
            res = self.bc.heartbeat(self.image, m.BrokerHeartbeatRequest(
                broker_id=b.id, broker_epoch=b.epoch, current_metadata_offset=self.image.offset, want_fence=False,
                want_shut_down=False), now_ms=self.now)
            self._commit(res.records)
        CT = m.CreateTopicsRequest
        res = self.rc.create_topics(self.image, CT(topics=[CT.CreatableTopic(
            name=TOPIC, num_partitions=self.n_partitions, replication_factor=self.rf, assignments=[],
            configs=[CT.CreatableTopicConfig(name="min.insync.replicas", value=str(self.min_isr))])],
            timeout_ms=1, validate_only=False))
        assert res.response.topics[0].error_code == ec.NONE, res.response
        self._commit(res.records)
        self.topic_id = self.image.topic(TOPIC).id

    def _register(self, b: Broker) -> None:
        R = m.BrokerRegistrationRequest
        req = R(broker_id=b.id, cluster_id=CLUSTER, incarnation_id=uuid.UUID(int=b.id * 1000 + b.incarnation + 1),
                listeners=[], features=[R.Feature(name=FEATURE_NAME, min_supported_version=1,
                                                  max_supported_version=DEFAULT.level),
                                        R.Feature(name=ELR_VERSION, min_supported_version=0,
                                                  max_supported_version=1)],
                rack=None, log_dirs=[uuid.UUID(int=5000 + b.id)])
        res = self.bc.register(self.image, req, next_offset=self.image.offset + 1, now_ms=self.now)
        if res.response.error_code == ec.NONE:
            self._commit(res.records)
            b.epoch = res.response.broker_epoch

    # ------------------------------------------------------------------------------------------------ controller
    def on_controller(self, msg: Msg) -> None:
        b = self.brokers[msg.src]
        if msg.kind == "heartbeat":
            res = self.bc.heartbeat(self.image, msg.body, now_ms=self.now)
            if res.records:
                self.event(f"controller: b{msg.src} {res.event}")
        elif msg.kind == "alter":
            res = self.rc.alter_partition(self.image, msg.body, 3)
            for t in res.response.topics:
                for pd in t.partitions:
                    self.event(f"controller: AlterPartition from b{msg.src} p{pd.partition_index}: "
                               f"{ec.name_of(res.response.error_code or pd.error_code)} isr={pd.isr} "
                               f"epochs={pd.leader_epoch}/{pd.partition_epoch}")
        else:
            raise AssertionError(msg.kind)
        self._commit(res.records)
        if msg.kind == "alter":
            self.send("alter_response", CONTROLLER, b.id, res.response, msg.incarnation, request=msg.request)

    # ------------------------------------------------------------------------------------------------ events
    def deliver(self, i: int) -> None:
        msg = self.net.pop(i)
        if not self.reachable(msg.src, msg.dst) or (self.drop and self.rng.random() < self.drop):
            self.count("dropped")
            if msg.kind in ("fetch", "list_offsets", "fetch_response", "list_offsets_response", "alter",
                            "alter_response"):
                self.lost(msg)
            return
        if msg.dst == CONTROLLER:
            if self.brokers[msg.src].incarnation == msg.incarnation:
                self.on_controller(msg)
            return
        b = self.brokers[msg.dst]
        if not b.alive:
            return
        if msg.kind == "image":
            self.apply_image(b, msg.body)
        elif msg.kind == "fetch":
            self.on_fetch(b, msg)
        elif msg.kind == "list_offsets":
            self.on_list_offsets(b, msg)
        elif msg.incarnation != b.incarnation:
            return  # an answer to a request of an earlier incarnation
        elif msg.kind == "fetch_response":
            self.on_fetch_response(b, msg)
        elif msg.kind == "list_offsets_response":
            self.on_list_offsets_response(b, msg)
        elif msg.kind == "alter_response":
            self.on_alter_response(b, msg.body, msg.request)

    def lost(self, msg: Msg) -> None:
        """A request or its answer was lost: the requester's timeout frees it to send again."""
        requester = msg.src if msg.kind in ("fetch", "list_offsets", "alter") else msg.dst
        b = self.brokers.get(requester)
        if b is None or b.incarnation != msg.incarnation:
            return
        if msg.kind in ("alter", "alter_response"):
            for t in msg.body.topics:
                for pd in t.partitions:
                    r = b.replicas.get(pd.partition_index)
                    if r is not None:
                        r.state.alter_lost(msg.request)
            return
        if msg.kind in ("fetch", "fetch_response"):
            tokens = [(p[0], p[-1]) for p in msg.body]
        else:
            tokens = [msg.body[:2]]
        for index, token in tokens:
            r = b.replicas.get(index)
            if r is not None and r.fetch_token == token:
                r.fetch_in_flight = False

    def tick(self, ms: int) -> None:
        self.now += ms
        res = self.bc.expire(self.image, self.now)
        while res is not None:
            self.event(f"controller: {res.event}")
            self.count("session_expired")
            self._commit(res.records)
            res = self.bc.expire(self.image, self.now)
        for b in self.brokers.values():
            if not b.alive:
                continue
            if not any(msg.kind == "heartbeat" and msg.src == b.id for msg in self.net):
                self.send("heartbeat", b.id, CONTROLLER, m.BrokerHeartbeatRequest(
                    broker_id=b.id, broker_epoch=b.epoch, current_metadata_offset=b.image.offset, want_fence=False,
                    want_shut_down=False), b.incarnation)
            if b.image.offset < self.image.offset:
                self.send_image(b)
            for hp, pending in b.core.check_isr(self.now) if b.core is not None else ():
                self.event(f"b{b.id} proposes shrinking p{hp.index} to {list(pending.isr)}")
                self.count("shrink_proposed")
            for r in b.replicas.values():
                if r.state.role != LEADER and r.fetch_in_flight and self.rng.random() < 0.3:
                    r.fetch_in_flight = False  # the request timed out
            if b.core is not None:
                b.core.timers().run(self.now)

    def kill(self, b: Broker) -> None:
        self.event(f"kill b{b.id}")
        self.count("killed")
        b.alive = False
        b.core = None  # its partitions, waits and timers go with the process; the logs stay
        for index in range(self.n_partitions):
            lg = self.logs.get((b.id, index))
            if lg is not None:
                lg.flush()  # a process kill keeps the page cache
                lg.crash()  # the high watermark restarts at the log start (a lower bound)

    def restart(self, b: Broker) -> None:
        self.event(f"restart b{b.id}")
        self.count("restarted")
        b.alive = True
        b.incarnation += 1
        b.image = MetadataImage(offset=-1)
        self._register(b)
        self.send_image(b)

    def step(self) -> None:
        rng = self.rng
        roll = rng.random()
        alive = [b for b in self.brokers.values() if b.alive]
        if roll < 0.20:
            index = rng.randrange(self.n_partitions)
            reg = self.image.topics[self.topic_id].partitions[index]
            target = reg.leader if rng.random() < 0.8 else rng.choice(list(self.brokers))
            b = self.brokers.get(target)
            if b is not None and b.alive and target not in self.isolated:
                self.produce(b, index, rng.choice([-1, -1, -1, 1]))
        elif roll < 0.35:
            if alive:
                self.fetch(rng.choice(alive))
        elif roll < 0.85:
            if self.net:
                self.deliver(rng.randrange(len(self.net)))
        elif roll < 0.95:
            self.tick(rng.randrange(50, 1000))
        elif roll < 0.965:
            if len(alive) > 1 and rng.random() < 0.5:
                self.kill(rng.choice(alive))
            else:
                dead = [b for b in self.brokers.values() if not b.alive]
                if dead:
                    self.restart(rng.choice(dead))
        elif roll < 0.98:
            if rng.random() < 0.5 and (self.cut or self.isolated):
                self.event("heal the network")
                self.cut.clear()
                self.isolated.clear()
            elif rng.random() < 0.5:
                victim = rng.choice(list(self.brokers))
                self.event(f"isolate b{victim}")
                self.count("isolated")
                self.isolated.add(victim)
            else:
                a, c = rng.sample([CONTROLLER, *self.brokers], 2)
                self.event(f"cut b{a} <-> b{c}")
                self.count("cut")
                self.cut.add(frozenset((a, c)))
        elif roll < 0.99:
            self.delete_records(rng.randrange(self.n_partitions))
        elif roll < 0.995:
            self.retention(rng.choice([0, 200, 600]))
        elif roll < 0.9975:
            E = m.ElectLeadersRequest
            res = self.rc.elect_leaders(self.image, E(election_type=0, topic_partitions=None, timeout_ms=1), 2)
            if res.records:
                self.event("preferred election")
                self.count("preferred_election")
            self._commit(res.records)
        elif roll < 0.9985:
            self.reassign(rng.randrange(self.n_partitions))
        elif roll < 0.999:
            self.controller_failover()
        else:
            self.tick(rng.randrange(5_000, 15_000))

    def controller_failover(self) -> None:
        """Another controller becomes active on the same committed log (the Raft simulation's guarantee): requests
        in flight to the old one are lost (their senders time out and send again) and every registered broker gets
        a fresh session, as Kafka's new active controller gives them."""
        self.event("controller failover")
        self.count("controller_failover")
        for msg in [x for x in self.net if x.dst == CONTROLLER or x.src == CONTROLLER and x.kind != "image"]:
            self.net.remove(msg)
            if msg.kind in ("alter", "alter_response"):
                self.lost(msg)
        self.rc = ReplicationControl(rng=random.Random(self.rng.randrange(1 << 30)), new_topic_id=self.rc.new_topic_id)
        self.bc = BrokerControl(CLUSTER, SESSION_TIMEOUT_MS)
        self.bc.activate(self.image, self.now)

    def reassign(self, index: int) -> None:
        """The operator moves a partition to ``rf`` brokers drawn at random (in a random order), or cancels the
        move under way; the controller decides as it decides an AlterPartitionReassignments."""
        AR = m.AlterPartitionReassignmentsRequest
        reg = self.image.topics[self.topic_id].partitions[index]
        moving = bool(reg.adding_replicas or reg.removing_replicas)
        target = None if moving and self.rng.random() < 0.3 else self.rng.sample(sorted(self.brokers), self.rf)
        res = reassignment.alter(self.image, AR(timeout_ms=1, allow_replication_factor_change=True, topics=[
            AR.ReassignableTopic(name=TOPIC, partitions=[AR.ReassignablePartition(partition_index=index,
                                                                                   replicas=target)])]), 1)
        code = res.response.responses[0].partitions[0].error_code
        self.event(f"reassign p{index} {'cancel' if target is None else target}: {ec.name_of(code)}")
        self.count("reassign_cancelled" if target is None else "reassigned")
        self._commit(res.records)

    def delete_records(self, index: int) -> None:
        """DeleteRecords on the partition's leader (as the image says), at -1, inside or past the high watermark, as
        its replica manager runs it."""
        reg = self.image.topics[self.topic_id].partitions[index]
        b = self.brokers.get(reg.leader)
        r = b.replicas.get(index) if b is not None and b.alive else None
        if r is None or r.state.role != LEADER:
            return
        lg = r.log
        start = lg.start_offset()
        asked = self.rng.choice([-1, start, (start + lg.high_watermark()) // 2, lg.high_watermark() + 1])
        error = b.core.delete_records(r, asked)
        if error:
            self.count("delete_records_out_of_range" if error == ec.OFFSET_OUT_OF_RANGE
                       else f"delete_records_{ec.name_of(error)}")
        elif lg.start_offset() > start:
            self.event(f"b{b.id} deletes p{index} records below {lg.start_offset()}")
            self.count("delete_records")

    def retention(self, retention_bytes: int) -> None:
        """A retention pass of every live broker's replica manager, the operator having set ``retention.bytes`` for
        it (the partitions' configuration until the next image)."""
        for b in self.brokers.values():
            if not b.alive or b.core is None:
                continue
            starts = {}
            for index, r in b.replicas.items():
                r.config = dict(r.config, **{"retention.bytes": str(retention_bytes)})
                starts[index] = r.log.start_offset()
            b.core.retain(self.now)
            for index, r in b.replicas.items():
                if r.log.start_offset() > starts[index]:
                    self.event(f"b{b.id} p{index} retention: the log starts at {r.log.start_offset()}")
                    self.count("retention")

    # ------------------------------------------------------------------------------------------------ runs
    def run(self, events: int) -> None:
        try:
            for _ in range(events):
                self.step()
                self.check()
            self.settle()
        except SimulationFailure:
            raise
        except Exception as exc:  # noqa: BLE001 - any error is a failure of this seed, with its trail
            self.fail(f"{type(exc).__name__}: {exc}")

    def drain(self) -> None:
        """Deliver every message in flight, in order (a healthy network), and whatever they set off."""
        while self.net:
            self.deliver(0)
            self.check()



def run_seed(seed: int, events: int = 400, **options) -> PartitionSim:
    sim = PartitionSim(seed, **options)
    sim.run(events)
    return sim


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kraftwire.testing.partition_sim",
                                     description="replay one seed of the partition simulation and print its trail")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--events", type=int, default=400)
    args = parser.parse_args(argv)
    sim = PartitionSim(args.seed)
    try:
        sim.run(args.events)
    finally:
        print("\n".join(sim.trail))
        print(sorted(sim.counts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
