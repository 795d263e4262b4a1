"""A seeded simulation of topic partitions replicated with Kafka's ISR protocol: the real pure controller
(``BrokerControl``, ``ReplicationControl``), the real replica rules (``kraftwire.replica``: the leader's append plan,
the replica state) executed by the broker's own partition steps (``kraftwire.server.partition_runtime``, which the
replica manager and the replica fetchers run) on the real partition log in memory (``MemoryPartitionLog``) with a fake
clock, joined by a network that delays, reorders and drops every message.

The cluster: one controller (its failover is the Raft simulation's business) and ``brokers`` brokers hosting one topic
of ``partitions`` partitions at replication factor ``rf`` with ``min.insync.replicas`` set. Events, drawn from the
seed: producers write with acks=-1 and acks=1 (sometimes to a broker that only believes it leads), followers fetch,
messages are delivered or dropped, time passes (heartbeats, session expiry, ISR shrinks, request timeouts), brokers
are killed (their logs survive, as after SIGKILL; the high watermark restarts at the log start, a lower bound) and
restarted with a new incarnation, the active controller fails over, brokers are cut off from everyone or from one peer and healed, the operator runs
preferred elections and DeleteRecords, and retention (``retention.bytes``) deletes old segments (a batch is a
segment in memory) — followers behind a leader's log start restart their log there.

After every event (``check``):

* **one leader per epoch**: no two brokers ever lead one partition in one leader epoch;
* **committed data is never lost or changed**: every live leader's log below its high watermark extends what was
  committed before (batch for batch, byte for byte), and every replica's log below its own high watermark is a prefix
  of it; an acks=-1 answer is only given for a batch already committed at its offset;
* **acks=-1 means min.insync.replicas copies**: when it is answered, at least that many replicas hold the batch;
* **ISR replicas agree below the high watermark**: every member of a live leader's ISR holds the leader's log up to
  the leader's high watermark;
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
high watermark must be the log end, and every acknowledged batch must be there.

A failure raises ``SimulationFailure`` naming the seed and the last events; ``python -m
kraftwire.testing.partition_sim --seed N`` replays a seed and prints its whole trail.
"""

from __future__ import annotations

import argparse
import random
import uuid
from dataclasses import dataclass, field
from typing import Collection

from kraftwire import error_codes as ec
from kraftwire.log.memory import MemoryPartitionLog
from kraftwire.metadata.controller.brokers import BrokerControl
from kraftwire.metadata.controller.topic_configs import number as config_number
from kraftwire.metadata.controller.topics import TOPIC_RESOURCE, ReplicationControl, broker_configs
from kraftwire.metadata.image import MetadataDelta, MetadataImage, replay_all
from kraftwire.metadata.version import DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.replica.partition import FOLLOWER, LEADER, ReplicaState, check_fetch_position
from kraftwire.replica.retention import delete_records_offset, segments_to_delete
from kraftwire.replica.leader_append import AppendResult, plan_append, plan_marker
from kraftwire.replica.producers import ProducerTable, next_seq
from kraftwire.replica.transactions import PartitionTxns, fold_batch
from kraftwire.replica.verification import ProducerVerifications
from kraftwire.server import partition_runtime as runtime

__all__ = ["PartitionSim", "SimulationFailure", "main"]

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"
CONTROLLER = 0
TOPIC = "events"
SESSION_TIMEOUT_MS = 9_000
LAG_MS = 10_000
REQUEST_TIMEOUT_MS = 30_000
#: rounds of steady writes, once the faults stopped, within which every follower must be back in the ISR
REJOIN_ROUNDS = 120
#: the transactional producers' ids (each writes to every partition; one open transaction per producer)
TXN_PRODUCERS = (7001, 7002, 7003)


class SimulationFailure(AssertionError):
    pass


@dataclass
class Msg:
    kind: str
    src: int
    dst: int
    body: object
    incarnation: int  # of the broker end that waits for an answer (stale answers are dropped)
    request: object = None  # an answer's request


@dataclass
class Wait:
    partition: int
    end: int
    leader_epoch: int
    base: int
    data: bytes
    deadline_ms: int


@dataclass
class Replica:
    log: MemoryPartitionLog
    state: ReplicaState
    fetch_in_flight: bool = False
    fetch_token: int = 0  # of the request in flight: an answer to an abandoned one is dropped, as a closed
    # connection drops it
    fenced: bool = False  # the leader fenced our epoch: wait for the image to move
    #: the replica's producers and transactions, folded from its log as a broker's ``Hosted`` folds them, or
    #: recorded as it appends as leader (``producer_state``)
    producers: ProducerTable | None = None
    txns: PartitionTxns | None = None
    txn_end: int = 0  # the log end they were folded to
    txn_truncations: int = 0
    verifications: ProducerVerifications = field(default_factory=ProducerVerifications)


@dataclass
class Broker:
    id: int
    alive: bool = True
    incarnation: int = 0
    epoch: int = -1
    image: MetadataImage = field(default_factory=lambda: MetadataImage(offset=-1))
    replicas: dict[int, Replica] = field(default_factory=dict)
    waits: list[Wait] = field(default_factory=list)


class PartitionSim:
    def __init__(self, seed: int, *, brokers: int = 4, partitions: int = 2, rf: int = 3, min_isr: int = 2,
                 drop: float = 0.05) -> None:
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
        self.image = replay_all([m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level)], offset=0)
        self.brokers = {b: Broker(b) for b in range(1, brokers + 1)}
        self.logs: dict[tuple[int, int], MemoryPartitionLog] = {}  # survive a kill
        self.net: list[Msg] = []
        self.cut: set[frozenset] = set()  # links that drop everything
        self.isolated: set[int] = set()
        #: per partition, every committed batch: base offset -> (last offset, bytes); and where committed data ends
        self.committed: dict[int, dict[int, tuple[int, bytes]]] = {p: {} for p in range(partitions)}
        self.committed_end: dict[int, int] = {p: 0 for p in range(partitions)}
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
        delta = MetadataDelta(self.image)
        for r in records:
            delta.replay(r.message)
        self.image = delta.apply(self.image.offset + len(records))
        for b in self.brokers.values():
            self.send_image(b)

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
                                                  max_supported_version=DEFAULT.level)],
                rack=None, log_dirs=[uuid.UUID(int=5000 + b.id)])
        res = self.bc.register(self.image, req, next_offset=self.image.offset + 1, now_ms=self.now)
        if res.response.error_code == ec.NONE:
            self._commit(res.records)
            b.epoch = res.response.broker_epoch

    @staticmethod
    def topic_config(b: Broker) -> dict:
        """The topic's effective configuration on broker ``b`` (its image's settings, else Kafka's defaults)."""
        image = b.image
        return broker_configs(image, b.id, {}).topic_config(image.configs.get((TOPIC_RESOURCE, TOPIC), {}))

    def min_isr_of(self, image: MetadataImage) -> int:
        return config_number(image.configs.get((TOPIC_RESOURCE, TOPIC), {}), "min.insync.replicas")

    # ------------------------------------------------------------------------------------------------ broker: image
    def apply_image(self, b: Broker, image: MetadataImage) -> None:
        if image.offset <= b.image.offset:
            return
        b.image = image
        topic = image.topics.get(self.topic_id)
        if topic is None:
            return
        for index, reg in topic.partitions.items():
            if b.id not in reg.replicas:
                continue
            r = b.replicas.get(index)
            if r is None:
                lg = self.logs.setdefault((b.id, index), MemoryPartitionLog())
                state = ReplicaState(b.id, TOPIC, index)
                state.log_high_watermark(lg.high_watermark())
                r = b.replicas[index] = Replica(lg, state)
            change = runtime.apply_registration(r.state, r.log, reg, self.now)
            if change is None:
                continue
            self.event(f"b{b.id} applies p{index} leader={reg.leader} isr={list(reg.isr)} "
                       f"epochs={reg.leader_epoch}/{reg.partition_epoch}")
            r.fenced = False
            if change.role == LEADER and change.new_leader_epoch:
                self.event(f"b{b.id} leads p{index} epoch {reg.leader_epoch} from {r.state.epoch_start_offset} "
                           f"isr={list(reg.isr)}")
                self.count("leader_elected")
            self.advance(b, index)

    # ------------------------------------------------------------------------------------------------ broker: leader
    def produce(self, b: Broker, index: int, acks: int) -> None:
        r = b.replicas.get(index)
        if r is None:
            self.count("produce_not_hosted")
            return
        error, _ = r.state.produce_error(acks, self.min_isr_of(b.image))
        if error:
            self.count(f"produce_{ec.name_of(error)}")
            return
        self.sequence += 1
        kind, n = "", self.rng.randrange(1, 4)
        txn_rng = self.txn_rng  # its own draws: the other events run as they did before transactions came
        table, txns = self.producer_state(r)
        marker = None
        if txn_rng.random() < 0.4:  # a transactional producer: its data, or the marker ending its transaction
            pid = txn_rng.choice(TXN_PRODUCERS)
            if pid in txns.ongoing and txn_rng.random() < 0.5:
                marker = (pid, txn_rng.random() < 0.7)
                kind = f" {'commit' if marker[1] else 'abort'} of {pid}"
            else:  # a producer in step with the leader's table (a real one bumps its epoch after a gap)
                kind = f" txn of {pid}"
                entry = table.get(pid)
                builder = RecordBatchBuilder(base_offset=0, partition_leader_epoch=-1, is_transactional=True,
                                             producer_id=pid, producer_epoch=0,
                                             base_sequence=0 if entry is None else next_seq(entry.last_seq, 1))
        else:
            builder = RecordBatchBuilder(base_offset=0, partition_leader_epoch=-1)
        if marker is None:
            for k in range(n):
                builder.append(None, f"v{self.sequence}.{k}".encode(), timestamp=self.now)
        result = self.append(b, r, index, builder.build() if marker is None else marker)
        if result.error:
            self.count(f"produce_{ec.name_of(result.error)}")
            self.event(f"b{b.id} refuses p{index}{kind}: {ec.name_of(result.error)} {result.message}")
            return
        first, last = result.base_offset, result.end - 1
        data = self.batch_at(r.log, first)
        self.event(f"b{b.id} appends p{index}@{first}..{last} acks={acks}{kind}")
        self.count("produce_txn_marker" if marker else "produce_txn" if kind else "produce_plain")
        self.count(f"produce_acks{acks}")
        if acks == -1:
            b.waits.append(Wait(index, last + 1, r.state.leader_epoch, first, data, self.now + REQUEST_TIMEOUT_MS))
        self.advance(b, index)

    def append(self, b: Broker, r: Replica, index: int, what) -> AppendResult:
        """What the broker's replica manager does with a Produce (``what``: its records) or a WriteTxnMarkers
        (``what``: (producer id, commit)) as leader: the leader's append plan (``kraftwire.replica.leader_append``)
        and the partition runtime's append, recording the producer state as the broker does."""
        producers = (lambda: self.producer_state(r))
        if isinstance(what, tuple):
            plan = plan_marker(r.producers, what[0], 0, 0, what[1], base_offset=r.log.end_offset(),
                               leader_epoch=r.state.leader_epoch, wall_ms=self.now)
            if isinstance(plan, AppendResult):
                return plan
            result, _entry = runtime.append_marker_planned(r.state, r.log, plan, r.producers, r.txns,
                                                           r.verifications)
        else:
            plan = plan_append(what, topic=TOPIC, index=index, config=self.topic_config(b),
                               max_batch_size=r.log.max_batch_size, log_start=r.log.start_offset(),
                               producers=producers, verifications=r.verifications, wall_ms=self.now)
            if isinstance(plan, AppendResult):
                return plan
            result = runtime.append_planned(r.state, r.log, plan, lambda: (r.producers, r.txns), r.verifications)
        r.txn_end = r.log.end_offset()  # recorded as appended, not folded again (as the broker's ``Hosted``)
        return result

    def advance(self, b: Broker, index: int) -> None:
        r = b.replicas[index]
        runtime.advance(r.state, r.log, self.min_isr_of(b.image), now_ms=self.now, lag_ms=LAG_MS,
                        brokers=b.image.brokers)
        self.check_waits(b)

    def check_waits(self, b: Broker) -> None:
        keep = []
        for w in b.waits:
            r = b.replicas.get(w.partition)
            if r is None or r.state.role != LEADER or r.state.leader_epoch != w.leader_epoch:
                self.count("ack_not_leader")
            elif r.log.high_watermark() >= w.end:
                if r.state.ack_error(self.min_isr_of(b.image)) != ec.NONE:
                    self.count("ack_not_enough_replicas_after_append")
                    continue
                self.acknowledged(b, w)
            elif self.now >= w.deadline_ms:
                self.count("ack_timed_out")
            else:
                keep.append(w)
        b.waits = keep

    def acknowledged(self, b: Broker, w: Wait) -> None:
        self.count("acked")
        self.event(f"b{b.id} acks p{w.partition}@{w.base}")
        self.note_committed(b, w.partition)
        if self.committed[w.partition].get(w.base, (0, None))[1] != w.data:
            self.fail(f"b{b.id} acknowledged p{w.partition}@{w.base}, which is not committed")
        holders = [broker for (broker, index), lg in self.logs.items()
                   if index == w.partition and self.holds(lg, w.base, w.data)]
        if len(holders) < self.min_isr_of(b.image):
            self.fail(f"b{b.id} acknowledged p{w.partition}@{w.base} held by {holders} only, fewer than "
                      f"min.insync.replicas")
        self.acked.append((w.partition, w.base, w.data))

    def on_fetch(self, b: Broker, msg: Msg) -> None:
        parts = []
        for index, fetch_offset, last_epoch, current_epoch, broker_epoch, token in msg.body:
            r = b.replicas.get(index)
            if r is None:
                parts.append((index, ec.NOT_LEADER_OR_FOLLOWER, None, None, -1, 0, token))
                continue
            reg = b.image.brokers.get(msg.src)
            error = r.state.replica_fetch_error(current_epoch, msg.src, broker_epoch,
                                                None if reg is None else reg.epoch)
            if error:
                parts.append((index, error, None, None, -1, 0, token))
                continue
            lg = r.log
            error, diverging = check_fetch_position(fetch_offset, last_epoch, lg.start_offset(), lg.end_offset(),
                                                    lg.leader_epoch_end)
            if error or diverging:
                parts.append((index, error, diverging, None, lg.high_watermark(), lg.start_offset(), token))
                continue
            pending = runtime.leader_saw_fetch(r.state, lg, msg.src, fetch_offset, broker_epoch, reg, self.now)
            if pending is not None:
                self.event(f"b{b.id} proposes isr {list(pending.isr)} for p{index}")
                self.send_alter(b, index)
            self.advance(b, index)
            records = None
            if fetch_offset < lg.end_offset():
                records = lg.read(fetch_offset, self.rng.choice([1, 200, 100_000])).records
            parts.append((index, ec.NONE, None, records, lg.high_watermark(), lg.start_offset(), token))
        self.send("fetch_response", b.id, msg.src, parts, msg.incarnation, request=msg.body)

    def send_alter(self, b: Broker, index: int) -> None:
        r = b.replicas[index]
        pending = r.state.alter_to_send()
        if pending is None:
            return
        A = m.AlterPartitionRequest
        req = A(broker_id=b.id, broker_epoch=b.epoch, topics=[A.TopicData(
            topic_id=self.topic_id, partitions=[A.PartitionData(
                partition_index=index, leader_epoch=r.state.leader_epoch, new_isr=list(pending.isr),
                new_isr_with_epochs=[A.BrokerState(broker_id=i, broker_epoch=-1) for i in pending.isr],
                leader_recovery_state=0, partition_epoch=r.state.partition_epoch)])])
        self.event(f"b{b.id} sends AlterPartition p{index} isr={list(pending.isr)} "
                   f"epochs={r.state.leader_epoch}/{r.state.partition_epoch}")
        self.send("alter", b.id, CONTROLLER, req, b.incarnation, request=pending)

    def on_alter_response(self, b: Broker, resp, proposal) -> None:
        error = resp.error_code
        for t in resp.topics:
            for pd in t.partitions:
                r = b.replicas.get(pd.partition_index)
                if r is None:
                    continue
                code = error or pd.error_code
                again = r.state.isr_answered(proposal, code, leader_epoch=pd.leader_epoch, partition_epoch=pd.partition_epoch,
                                             isr=tuple(pd.isr or ()))
                self.event(f"b{b.id} alter p{pd.partition_index} answered {ec.name_of(code)} isr={pd.isr} "
                           f"epochs={pd.leader_epoch}/{pd.partition_epoch}: isr now {list(r.state.isr)}")
                self.count(f"alter_{ec.name_of(code)}")
                if again:
                    self.send_alter(b, pd.partition_index)
                self.advance(b, pd.partition_index)

    # ------------------------------------------------------------------------------------------------ broker: follower
    def fetch(self, b: Broker, partitions: Collection[int] | None = None) -> None:
        """``b`` fetches every partition it follows (of ``partitions``, if given) that has no fetch in flight."""
        by_leader: dict[int, list] = {}
        for index, r in b.replicas.items():
            if partitions is not None and index not in partitions:
                continue
            if r.state.role == FOLLOWER and r.state.leader >= 0 and not r.fetch_in_flight and not r.fenced:
                lg = r.log
                last = lg.latest_epoch()
                r.fetch_token += 1
                by_leader.setdefault(r.state.leader, []).append(
                    (index, lg.end_offset(), last, r.state.leader_epoch, b.epoch, r.fetch_token))
                r.fetch_in_flight = True
        for leader, parts in by_leader.items():
            self.send("fetch", b.id, leader, parts, b.incarnation)
            self.count("fetch")

    def on_fetch_response(self, b: Broker, msg: Msg) -> None:
        asked = {p[0]: p[3] for p in msg.request}
        for index, error, diverging, records, hw, log_start, token in msg.body:
            r = b.replicas.get(index)
            if r is None or not r.fetch_in_flight or token != r.fetch_token:
                continue
            r.fetch_in_flight = False
            if r.state.role != FOLLOWER or r.state.leader != msg.src or r.state.leader_epoch != asked[index]:
                self.count("fetch_answer_of_an_older_epoch")
                continue  # asked in an older leader epoch: as Kafka's fetcher, drop it and ask again
            lg = r.log
            if error == ec.NONE and diverging is not None:
                end = lg.end_offset()
                target = runtime.follower_diverged(lg, diverging[0], diverging[1])
                self.event(f"b{b.id} p{index} diverges at epoch {diverging[0]}: truncates {end} -> {target}")
                self.count("truncated" if target < end else "diverging_no_truncation")
                if runtime.follow_log_start(r.state, lg, log_start):
                    self.count("follower_log_start_moved")
            elif error == ec.NONE:
                if records:
                    runtime.follower_append(r.state, lg, records)
                    self.count("follower_appended")
                if runtime.follower_caught_up(r.state, lg, hw, log_start):
                    self.count("follower_log_start_moved")
            elif error == ec.OFFSET_OUT_OF_RANGE:
                r.fetch_token += 1
                r.fetch_in_flight = True
                self.send("list_offsets", b.id, msg.src, (index, r.fetch_token), b.incarnation)
            elif error == ec.FENCED_LEADER_EPOCH:
                r.fenced = True
            self.count(f"fetch_{ec.name_of(error)}")

    def on_list_offsets(self, b: Broker, msg: Msg) -> None:
        index, token = msg.body
        r = b.replicas.get(index)
        answer = None
        if r is not None and r.state.role == LEADER:
            answer = (r.log.end_offset(), r.log.start_offset())
        self.send("list_offsets_response", b.id, msg.src, (index, token, answer), msg.incarnation)

    def on_list_offsets_response(self, b: Broker, msg: Msg) -> None:
        index, token, answer = msg.body
        r = b.replicas.get(index)
        if r is None or not r.fetch_in_flight or token != r.fetch_token:
            return
        r.fetch_in_flight = False
        if answer is None or r.state.role != FOLLOWER or r.state.leader != msg.src:
            return
        action, offset = runtime.follower_out_of_range(r.log, answer[0], answer[1])
        self.event(f"b{b.id} p{index} out of range: {action} {offset}")
        self.count(f"out_of_range_{action}")

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
            for index, r in b.replicas.items():
                if r.state.role == LEADER:
                    pending = r.state.propose_shrink(self.now, LAG_MS, r.log.end_offset())
                    if pending is not None:
                        self.event(f"b{b.id} proposes shrinking p{index} to {list(pending.isr)}")
                        self.count("shrink_proposed")
                    self.send_alter(b, index)
                    self.advance(b, index)
                elif r.fetch_in_flight and self.rng.random() < 0.3:
                    r.fetch_in_flight = False  # the request timed out
            self.check_waits(b)

    def kill(self, b: Broker) -> None:
        self.event(f"kill b{b.id}")
        self.count("killed")
        b.alive = False
        b.replicas.clear()
        b.waits.clear()
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

    def delete_records(self, index: int) -> None:
        """DeleteRecords on the partition's leader (as the image says), at -1, inside or past the high watermark."""
        reg = self.image.topics[self.topic_id].partitions[index]
        b = self.brokers.get(reg.leader)
        r = b.replicas.get(index) if b is not None and b.alive else None
        if r is None or r.state.role != LEADER:
            return
        lg = r.log
        asked = self.rng.choice([-1, lg.start_offset(), (lg.start_offset() + lg.high_watermark()) // 2,
                                 lg.high_watermark() + 1])
        target = delete_records_offset(asked, lg.high_watermark())
        if target is None:
            self.count("delete_records_out_of_range")
            return
        if lg.increment_log_start(target):
            self.event(f"b{b.id} deletes p{index} records below {target}")
            self.count("delete_records")

    def retention(self, retention_bytes: int) -> None:
        """A retention pass on every live replica with ``retention.bytes``."""
        for b in self.brokers.values():
            if not b.alive:
                continue
            for index, r in b.replicas.items():
                lg = r.log
                deletion = segments_to_delete(lg.segment_infos(), log_start=lg.start_offset(),
                                              log_end=lg.end_offset(), high_watermark=lg.high_watermark(),
                                              now_ms=self.now, retention_ms=-1, retention_bytes=retention_bytes)
                if deletion is not None:
                    start = lg.delete_oldest_segments(deletion.count)
                    self.event(f"b{b.id} p{index} retention: {deletion.count} batches go, log start {start}")
                    self.count("retention")

    # ------------------------------------------------------------------------------------------------ transactions
    @staticmethod
    def producer_state(r: Replica) -> tuple[ProducerTable, PartitionTxns]:
        """``r``'s producers and transactions as a broker's ``Hosted`` keeps them: folded from scratch after a
        truncation (or a restart), then each batch appended (``fold_batch``; a leader records its own appends
        instead); told the high watermark before each fold and each read."""
        lg = r.log
        if r.txns is None or r.txn_truncations != lg.truncations or r.txn_end > lg.end_offset():
            r.producers, r.txns, r.txn_end, r.txn_truncations = ProducerTable(), PartitionTxns(), -1, lg.truncations
        r.txns.on_high_watermark(lg.high_watermark())
        if r.txn_end != lg.end_offset():
            for _base, last, _epoch, data in lg.batches():
                if last >= r.txn_end:
                    for batch in read_batches(data):
                        fold_batch(r.producers, r.txns, batch)
            r.txn_end = lg.end_offset()
        if lg.start_offset() > 0:
            r.txns.delete_before(lg.start_offset())
        return r.producers, r.txns

    def check_last_stable_offset(self, b: Broker, index: int, r: Replica) -> None:
        lg = r.log
        hw = lg.high_watermark()
        lso = self.producer_state(r)[1].last_stable_offset(hw, lg.start_offset())
        if lso > hw:
            self.fail(f"leader b{b.id} of p{index} serves a last stable offset {lso} past its high watermark {hw}")
        if any(x.start_offset() > 0 for (_, i), x in self.logs.items() if i == index):
            self.start_moved.add(index)
        if index in self.start_moved:
            return
        best, best_hw = self.stable.get(index, (0, 0))
        if hw >= best_hw and lso < best:
            self.fail(f"leader b{b.id} of p{index} serves a last stable offset {lso} (high watermark {hw}) below "
                      f"{best}, which a leader served with high watermark {best_hw}")
        if lso > best:
            self.stable[index] = (lso, hw)
            self.count("last_stable_offset_moved")

    # ------------------------------------------------------------------------------------------------ invariants
    @staticmethod
    def batch_at(lg: MemoryPartitionLog, base: int) -> bytes:
        for b_base, _, _, data in lg.batches():
            if b_base == base:
                return data
        raise AssertionError(f"no batch at {base}")

    @staticmethod
    def holds(lg: MemoryPartitionLog, base: int, data: bytes) -> bool:
        return any(b_base == base and b_data == data for b_base, _, _, b_data in lg.batches())

    @staticmethod
    def prefix(lg: MemoryPartitionLog, end: int) -> list[tuple[int, int, bytes]]:
        """(base, last, bytes) of the batches wholly below ``end``. ``end`` (a high watermark) is a batch boundary
        unless it sits on a log start inside a batch (DeleteRecords; a follower restarted there reports that end;
        a restart brings the high watermark down to the log start): the batch around it is left out."""
        return [(base, last, data) for base, last, _, data in lg.batches() if last < end]

    def disagreement(self, batches, index: int) -> int | None:
        """The base of the first of ``batches`` below the committed end that is not the committed batch there."""
        committed, end = self.committed[index], self.committed_end[index]
        for base, last, data in batches:
            if base < end and committed.get(base) != (last, data):
                return base
        return None

    def note_committed(self, b: Broker, index: int) -> None:
        """A live leader's log below its high watermark must extend what was committed; it becomes committed."""
        r = b.replicas[index]
        mine = self.prefix(r.log, r.log.high_watermark())
        bad = self.disagreement(mine, index)
        if bad is not None:
            self.fail(f"leader b{b.id} of p{index} holds a different batch at offset {bad} below its high "
                      f"watermark {r.log.high_watermark()} than was committed")
        for base, last, data in mine:
            if base >= self.committed_end[index]:
                self.committed[index][base] = (last, data)
                self.committed_end[index] = last + 1

    def check(self) -> None:
        topic = self.image.topics[self.topic_id]
        for index, reg in topic.partitions.items():
            if not (reg.leader == -1 or reg.leader in reg.isr) or not set(reg.isr) <= set(reg.replicas):
                self.fail(f"p{index} registration {reg}")
        for b in self.brokers.values():
            if not b.alive:
                continue
            for index, r in b.replicas.items():
                st = r.state
                if st.role != LEADER:
                    continue
                key = (index, st.leader_epoch)
                if self.epoch_leaders.setdefault(key, b.id) != b.id:
                    self.fail(f"p{index} epoch {st.leader_epoch} has two leaders: b{self.epoch_leaders[key]} and "
                              f"b{b.id}")
                hw_key = (b.id, b.incarnation, index, st.leader_epoch)
                if st.high_watermark < self.leader_hw.get(hw_key, 0):
                    self.fail(f"b{b.id} p{index} high watermark went back to {st.high_watermark}")
                self.leader_hw[hw_key] = st.high_watermark
                self.note_committed(b, index)
                self.check_last_stable_offset(b, index, r)
                hw = r.log.high_watermark()
                mine = self.prefix(r.log, hw)
                for member in st.isr:
                    lg = self.logs.get((member, index))
                    if member == b.id:
                        continue
                    if lg is None:
                        held = hw == 0
                    else:
                        start = max(lg.start_offset(), r.log.start_offset())
                        held = lg.end_offset() >= hw and ([x for x in self.prefix(lg, hw) if x[0] >= start]
                                                          == [x for x in mine if x[0] >= start])
                    if not held:
                        self.fail(f"ISR member b{member} of p{index} does not hold leader b{b.id}'s log up to its "
                                  f"high watermark {hw} (its log: {lg!r})")
        for (broker, index), lg in self.logs.items():
            mine = self.prefix(lg, lg.high_watermark())
            if self.disagreement(mine, index) is not None or (mine and mine[-1][1] >= self.committed_end[index]):
                self.fail(f"b{broker} p{index} holds uncommitted or changed data below its high watermark "
                          f"{lg.high_watermark()}")

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

    def rejoin(self, limit: int) -> None:
        """Liveness under steady writes: with the faults stopped and every broker alive, every partition's ISR is
        every replica again within ``limit`` rounds while the leaders keep appending. In a round every leader
        appends a batch, the followers fetch, and the network delivers everything; a follower outside an ISR is
        slower there (it fetches every other round, after the others): alive, only slower than the ISR.

        Such a follower keeps pace, yet at each fetch it reports an end just below the high watermark the faster
        ISR member has moved it to since: it can reach the high watermark only because the leader waits for it
        (``ReplicaState.advance_high_watermark``, Kafka's ``maybeIncrementLeaderHW``); counting the ISR alone, it
        never rejoins."""
        topic = self.image.topics[self.topic_id]
        slow = {(b, index) for index, reg in topic.partitions.items() for b in reg.replicas if b not in reg.isr}
        self.event(f"settle: steady writes; slower followers {sorted(slow)}")
        for k in range(limit):
            if k % 4 == 0:
                self.tick(500)
            for index, reg in topic.partitions.items():
                b = self.brokers.get(reg.leader)
                if b is not None:
                    self.produce(b, index, self.rng.choice([-1, -1, 1]))
            for b in self.brokers.values():
                self.fetch(b, [index for index in b.replicas if (b.id, index) not in slow])
            self.drain()
            if k % 2 == 0:
                for b in self.brokers.values():
                    self.fetch(b, [index for index in b.replicas if (b.id, index) in slow])
                self.drain()
            topic = self.image.topics[self.topic_id]
            if all(set(reg.isr) == set(reg.replicas) for reg in topic.partitions.values()):
                self.count("rejoined")
                return
        out = []
        for index, reg in topic.partitions.items():
            if set(reg.isr) != set(reg.replicas):
                leader = self.brokers[reg.leader].replicas.get(index) if reg.leader in self.brokers else None
                out.append(f"p{index} isr={list(reg.isr)} replicas={list(reg.replicas)} leader: "
                           f"{None if leader is None else (leader.state, list(leader.state.followers.values()))}")
        self.fail(f"under steady writes, no full ISR within {limit} rounds once the faults stopped: " + "; ".join(out))

    def settle(self, limit: int = 6000, rejoin_limit: int = REJOIN_ROUNDS) -> None:
        """Stop the faults; under steady writes every follower must rejoin the ISR (``rejoin``); then the writes
        stop and the cluster must converge."""
        self.event("settle: heal everything, restart every broker")
        self.cut.clear()
        self.isolated.clear()
        self.drop = 0.0
        for b in self.brokers.values():
            if not b.alive:
                self.restart(b)
        self.rejoin(rejoin_limit)
        self.event("settle: the writes stop")
        for i in range(limit):
            if i % 20 == 0:
                self.tick(500)
            elif i % 5 == 0:
                for b in self.brokers.values():
                    self.fetch(b)
            elif self.net:
                self.deliver(self.rng.randrange(len(self.net)))
            self.check()
            if i % 10 == 9 and self.converged():  # (the catching up is mostly done under the writes: look often)
                break
        else:
            where = [f"b{b.id} p{i}: {r.state} fetching={r.fetch_in_flight} fenced={r.fenced} {r.log!r}"
                     for b in self.brokers.values() for i, r in b.replicas.items()]
            self.fail(f"no convergence after {limit} steps once the faults stopped: " + "; ".join(where))
        for index, base, data in self.acked:
            if self.committed[index].get(base, (0, None))[1] != data:
                self.fail(f"acknowledged batch p{index}@{base} is gone")
            reg = self.image.topics[self.topic_id].partitions[index]
            lg = self.logs[(reg.leader, index)]
            if base >= lg.start_offset() and not self.holds(lg, base, data):
                self.fail(f"acknowledged batch p{index}@{base} is not on the leader above its log start "
                          f"{lg.start_offset()}")

    def converged(self) -> bool:
        topic = self.image.topics[self.topic_id]
        for index, reg in topic.partitions.items():
            if reg.leader < 0 or set(reg.isr) != set(reg.replicas):
                return False
            leader = self.brokers[reg.leader].replicas.get(index)
            if leader is None or leader.state.role != LEADER or leader.state.leader_epoch != reg.leader_epoch:
                return False
            end = leader.log.end_offset()
            if leader.log.high_watermark() != end:
                return False
            for member in reg.replicas:
                lg = self.logs[(member, index)]
                if lg.end_offset() != end:
                    return False
                start = max(lg.start_offset(), leader.log.start_offset())
                if ([b for b in lg.batches() if b[1] >= start] != [b for b in leader.log.batches() if b[1] >= start]):
                    return False
        return True


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
