"""The brokers of the partition simulation (``kraftwire.testing.partition_sim``): each simulated broker runs the
replica manager's own decisions (``kraftwire.server.runtime.replica_core.ReplicaCore``: the image, appends as leader,
its followers' fetches, its own fetches' answers, the ISR, AlterPartition, the acks=-1 waits) on ``Hosted`` partitions
over in-memory logs, with the simulation's clock, timers and network in place of the event loop, the files and the
sockets. What stays here is what the broker's request handlers and fetchers carry (decoding, the leader's fetch
checks, which requests go where)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Collection

from kraftwire import error_codes as ec
from kraftwire import kafka_configs
from kraftwire.log.memory import MemoryPartitionLog
from kraftwire.metadata.controller.topic_configs import number as config_number
from kraftwire.metadata.controller.topics import TOPIC_RESOURCE, broker_configs
from kraftwire.metadata.image import MetadataImage
from kraftwire.protocol import messages as m
from kraftwire.records import RecordBatchBuilder
from kraftwire.replica.leader_append import AppendResult
from kraftwire.replica.leader_fetch import check_replica_fetch
from kraftwire.replica.partition import LEADER, ReplicaState
from kraftwire.replica.producers import ProducerTable, next_seq
from kraftwire.server.runtime import replica_core as core
from kraftwire.server.runtime.hosted import Hosted
from kraftwire.server.runtime.partition_cleaning import PartitionCleaning

__all__ = ["Broker", "CONTROLLER", "LAG_MS", "MemoryHosted", "Msg", "REQUEST_TIMEOUT_MS", "SimBrokers",
           "SimReplicas", "SimTimers", "TOPIC", "TXN_PRODUCERS", "Wait"]

CONTROLLER = 0
TOPIC = "events"
LAG_MS = 10_000
REQUEST_TIMEOUT_MS = 30_000
#: the transactional producers' ids (each writes to every partition; one open transaction per producer)
TXN_PRODUCERS = (7001, 7002, 7003)


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
    """An acks=-1 batch whose answer waits for the high watermark (what the invariants check once it is given)."""

    partition: int
    base: int
    data: bytes


class MemoryHosted(Hosted):
    """A hosted partition on a ``MemoryPartitionLog``: the broker's ``Hosted`` (its producers and transactions
    folded from the log as the broker folds them) with no files beside the log — no producer snapshots, no
    ``.txnindex`` — and the state of its replica fetcher (``followed``: a fetcher of its leader has it; the fetch in
    flight and its token: an answer to an abandoned one is dropped, as a closed connection drops it; for the checks,
    ``told_log_start``: the leader log start the last fetch answer it acted on carried)."""

    def __init__(self, topic_id, index: int, lg: MemoryPartitionLog, state: ReplicaState) -> None:
        super().__init__(topic_id, TOPIC, index, "memory", lg, state)
        self.followed = False
        self.fetch_in_flight = False
        self.fetch_token = 0
        self.told_log_start = 0

    def _latest_snapshot(self):
        return ProducerTable(), {}, self.log.start_offset()

    def _stored_aborted(self) -> list:
        return []

    def _txn_index_files(self) -> list[str]:
        return []

    def sync_txn_index(self) -> None:
        """No ``.txnindex`` files: the aborted transactions are the folded ones."""

    def _record_abort(self, entry) -> None:
        """No ``.txnindex`` files: the abort is in the folded transactions already."""


class SimTimer:
    __slots__ = ("at", "fn", "args", "cancelled")

    def __init__(self, at: int, fn, args) -> None:
        self.at, self.fn, self.args, self.cancelled = at, fn, args, False

    def cancel(self) -> None:
        self.cancelled = True


class SimTimers:
    """asyncio's ``call_later`` on the simulation's clock (the acks=-1 waits' timeouts); ``run(now)`` fires what is
    due."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self.timers: list[SimTimer] = []

    def call_later(self, delay_s: float, fn, *args) -> SimTimer:
        timer = SimTimer(self.clock() + round(delay_s * 1000), fn, args)
        self.timers.append(timer)
        return timer

    def run(self, now_ms: int) -> None:
        due = [t for t in self.timers if t.at <= now_ms and not t.cancelled]
        self.timers = [t for t in self.timers if t.at > now_ms and not t.cancelled]
        for t in due:
            t.fn(*t.args)


class SimReplicas(core.ReplicaCore, PartitionCleaning):
    """One broker incarnation's replica manager in the simulation: ``ReplicaCore`` (and the replica manager's
    retention and DeleteRecords) hosted on the simulation's memory logs (which survive a kill), clock and timers; its
    AlterPartitions go out on the simulated network."""

    def __init__(self, sim, broker: "Broker") -> None:
        self.sim, self.broker = sim, broker
        self.broker_id = broker.id
        self.lag_ms = LAG_MS
        self.partitions: dict[tuple[str, int], MemoryHosted] = {}
        self.by_id: dict = {}
        self.by_index: dict[int, MemoryHosted] = {}
        self.watchers: list = []
        self.alter = lambda hp, pending: sim.send_alter(broker, hp, pending)
        self._timers = SimTimers(self.now_ms)

    def now_ms(self) -> int:
        return self.sim.now

    def wall_ms(self) -> int:
        return self.sim.now

    def image_brokers(self):
        return self.broker.image.brokers

    def timers(self) -> SimTimers:
        return self._timers

    def verification_enabled(self) -> bool:
        return True

    def _host(self, topic_id, topic: str, index: int, cfg) -> MemoryHosted:
        lg = self.sim.logs.setdefault((self.broker_id, index), MemoryPartitionLog())
        hp = MemoryHosted(topic_id, index, lg, ReplicaState(self.broker_id, topic, index))
        hp.state.log_high_watermark(lg.high_watermark())
        self._configure(hp, cfg)
        self.partitions[(topic, index)] = self.by_index[index] = self.by_id[(topic_id, index)] = hp
        return hp

    def _configure(self, hp: MemoryHosted, cfg) -> None:
        hp.config = cfg
        hp.min_isr = kafka_configs.number(cfg["min.insync.replicas"])

    def _delete(self, hp: MemoryHosted, why: str) -> None:
        hp.followed = False
        for table, key in ((self.partitions, (hp.topic, hp.index)), (self.by_index, hp.index),
                           (self.by_id, (hp.topic_id, hp.index))):
            table.pop(key, None)
        hp.waits.leadership_lost()
        self.sim.logs.pop((self.broker_id, hp.index), None)  # the log goes (a reassignment moved it away)
        self.sim.event(f"b{self.broker_id} deletes p{hp.index}: {why}")
        self.sim.count("replica_deleted")

    def _maybe_flush(self, hp, now_ms: int | None = None) -> None:
        """flush.messages / flush.ms are Kafka's defaults (never): the memory log keeps what it has until a kill."""

    def dir_failed(self, root: str, exc: BaseException) -> None:
        raise AssertionError(f"b{self.broker_id}: the memory log failed: {exc}")

    def _follow(self, hp: MemoryHosted) -> None:
        leader = hp.state.leader
        hp.followed = leader >= 0 and leader != self.broker_id  # as ``ReplicaFetchers.follow``

    def _unfollow(self, hp: MemoryHosted) -> None:
        hp.followed = False

    def _followed(self, hp: MemoryHosted) -> bool:
        return hp.followed


@dataclass
class Broker:
    id: int
    alive: bool = True
    incarnation: int = 0
    epoch: int = -1
    image: MetadataImage = field(default_factory=lambda: MetadataImage(offset=-1))
    #: this incarnation's replica manager (None while dead)
    core: SimReplicas | None = None

    @property
    def replicas(self) -> dict[int, MemoryHosted]:
        """The partitions hosted, by index."""
        return {} if self.core is None else self.core.by_index


class SimBrokers:
    """The brokers' behaviour, mixed into ``PartitionSim`` (its network, clock, image, logs and invariants)."""

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
        if b.core is None:
            b.core = SimReplicas(self, b)
        cfg = self.topic_config(b)
        for index, reg in topic.partitions.items():
            hp, change = b.core.place(self.topic_id, TOPIC, index, reg, cfg)
            if change is None:
                continue
            self.event(f"b{b.id} applies p{index} leader={reg.leader} isr={list(reg.isr)} elr={list(reg.elr)} "
                       f"epochs={reg.leader_epoch}/{reg.partition_epoch}")
            if change.role == LEADER and change.new_leader_epoch:
                self.event(f"b{b.id} leads p{index} epoch {reg.leader_epoch} from {hp.state.epoch_start_offset} "
                           f"isr={list(reg.isr)}")
                self.count("leader_elected")
        self.check_hosting(b)

    # ------------------------------------------------------------------------------------------------ broker: leader
    def produce(self, b: Broker, index: int, acks: int) -> None:
        r = b.replicas.get(index)
        if r is None:
            self.count("produce_not_hosted")
            return
        error, _ = r.state.produce_error(acks, r.min_isr)
        if error:
            self.count(f"produce_{ec.name_of(error)}")
            return
        self.sequence += 1
        kind, n = "", self.rng.randrange(1, 4)
        txn_rng = self.txn_rng  # its own draws: the other events run as they did before transactions came
        table, txns = r.producer_table(), r.txn_state()
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
        result = self.append(b, r, builder.build() if marker is None else marker)
        if result.error:
            self.count(f"produce_{ec.name_of(result.error)}")
            self.event(f"b{b.id} refuses p{index}{kind}: {ec.name_of(result.error)} {result.message}")
            return
        first, last = result.base_offset, result.end - 1
        self.event(f"b{b.id} appends p{index}@{first}..{last} acks={acks}{kind}")
        self.count("produce_txn_marker" if marker else "produce_txn" if kind else "produce_plain")
        self.count(f"produce_acks{acks}")
        if acks == -1:
            wait = Wait(index, first, self.batch_at(r.log, first))
            b.core.wait_committed(r, last + 1, lambda error: self.answered(b, r, wait, error), REQUEST_TIMEOUT_MS)

    def append(self, b: Broker, r: MemoryHosted, what) -> AppendResult:
        """The replica manager's Produce (``what``: its records) or WriteTxnMarkers (``what``: (producer id,
        commit)) as leader."""
        if isinstance(what, tuple):
            return b.core.append_marker(r, what[0], 0, 0, what[1])
        return b.core.append(r, what, -1)

    def answered(self, b: Broker, r: MemoryHosted, wait: Wait, error: int) -> None:
        """The acks=-1 wait ended as the Produce handler ends it: once committed, the ISR must still hold
        min.insync.replicas (NOT_ENOUGH_REPLICAS_AFTER_APPEND otherwise)."""
        if error == ec.NONE:
            error = r.state.ack_error(r.min_isr)
            if error == ec.NONE:
                self.acknowledged(b, wait)
                return
        self.count({ec.NOT_LEADER_OR_FOLLOWER: "ack_not_leader",
                    ec.REQUEST_TIMED_OUT: "ack_timed_out"}.get(error, f"ack_{ec.name_of(error)}"))

    def on_fetch(self, b: Broker, msg: Msg) -> None:
        parts = []
        for index, fetch_offset, last_epoch, current_epoch, broker_epoch, token in msg.body:
            r = b.replicas.get(index)
            if r is None:
                parts.append((index, ec.NOT_LEADER_OR_FOLLOWER, None, None, -1, 0, token))
                continue
            reg, lg = b.image.brokers.get(msg.src), r.log
            check = check_replica_fetch(r.state, replica=msg.src, current_leader_epoch=current_epoch,
                                        broker_epoch=broker_epoch, registration=reg, fetch_offset=fetch_offset,
                                        last_fetched_epoch=last_epoch, log_start=lg.start_offset(),
                                        log_end=lg.end_offset(), epoch_end=lg.leader_epoch_end)
            if check.fenced:
                parts.append((index, check.error, None, None, -1, 0, token))
                continue
            if not check.accepted:
                parts.append((index, check.error, check.diverging, None, lg.high_watermark(), lg.start_offset(),
                              token))
                continue
            pending = b.core.replica_fetched(r, msg.src, fetch_offset, broker_epoch)
            if pending is not None:
                self.event(f"b{b.id} proposes isr {list(pending.isr)} for p{index}")
                self.check_expansion(b, index, msg.src, broker_epoch)
            self.check_high_watermark_after_fetch(b, r)
            records = None
            if fetch_offset < lg.end_offset():
                records = lg.read(fetch_offset, self.rng.choice([1, 200, 100_000])).records
            parts.append((index, ec.NONE, None, records, lg.high_watermark(), lg.start_offset(), token))
        self.send("fetch_response", b.id, msg.src, parts, msg.incarnation, request=msg.body)

    def send_alter(self, b: Broker, r: MemoryHosted, pending) -> None:
        """The replica manager's AlterPartition for ``r``'s ``pending`` ISR, to the controller."""
        index = r.index
        A = m.AlterPartitionRequest
        req = A(broker_id=b.id, broker_epoch=b.epoch, topics=[A.TopicData(
            topic_id=self.topic_id, partitions=[A.PartitionData(
                partition_index=index, leader_epoch=r.state.leader_epoch, new_isr=list(pending.isr),
                new_isr_with_epochs=[A.BrokerState(broker_id=i, broker_epoch=-1) for i in pending.isr],
                leader_recovery_state=0, partition_epoch=r.state.partition_epoch)])])
        self.event(f"b{b.id} sends AlterPartition p{index} isr={list(pending.isr)} "
                   f"epochs={r.state.leader_epoch}/{r.state.partition_epoch}")
        self.check_one_alter_in_flight(b, index, r.state.leader_epoch, r.state.partition_epoch)
        self.send("alter", b.id, CONTROLLER, req, b.incarnation, request=pending)

    def on_alter_response(self, b: Broker, resp, proposal) -> None:
        error = resp.error_code
        for t in resp.topics:
            for pd in t.partitions:
                r = b.replicas.get(pd.partition_index)
                if r is None:
                    continue
                code = error or pd.error_code
                b.core.alter_answered(r, proposal, code, pd)
                self.event(f"b{b.id} alter p{pd.partition_index} answered {ec.name_of(code)} isr={pd.isr} "
                           f"epochs={pd.leader_epoch}/{pd.partition_epoch}: isr now {list(r.state.isr)}")
                self.count(f"alter_{ec.name_of(code)}")

    # ------------------------------------------------------------------------------------------------ broker: follower
    def fetch(self, b: Broker, partitions: Collection[int] | None = None) -> None:
        """``b`` fetches every partition its fetchers have (of ``partitions``, if given) with no fetch in flight."""
        by_leader: dict[int, list] = {}
        for index, r in b.replicas.items():
            if partitions is not None and index not in partitions:
                continue
            if r.followed and not r.fetch_in_flight:
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
            if not r.followed or r.state.leader != msg.src or r.state.leader_epoch != asked[index]:
                self.count("fetch_answer_of_an_older_epoch")
                continue  # asked in an older leader epoch: as Kafka's fetcher, drop it and ask again
            lg = r.log
            end, start = lg.end_offset(), lg.start_offset()
            if error == ec.NONE:
                r.told_log_start = log_start
            step = b.core.follower_fetched(r, error, diverging, records, hw, log_start)
            if step == core.TRUNCATED:
                self.event(f"b{b.id} p{index} diverges at epoch {diverging[0]}: truncates {end} -> "
                           f"{lg.end_offset()}")
                self.count("truncated" if lg.end_offset() < end else "diverging_no_truncation")
            elif step == core.APPENDED and lg.end_offset() > end:
                self.count("follower_appended")
            elif step == core.OUT_OF_RANGE:
                r.fetch_token += 1
                r.fetch_in_flight = True
                self.send("list_offsets", b.id, msg.src, (index, r.fetch_token), b.incarnation)
            elif step == core.FENCED:
                r.followed = False  # as the fetcher drops it, until the image moves
            if lg.start_offset() > start:
                self.count("follower_log_start_moved")
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
        if answer is None or not r.followed or r.state.leader != msg.src:
            return
        action, offset = b.core.follower_out_of_range(r, answer[0], answer[1])
        self.event(f"b{b.id} p{index} out of range: {action} {offset}")
        self.count(f"out_of_range_{action}")
