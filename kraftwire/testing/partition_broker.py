"""The brokers of the partition simulation (``kraftwire.testing.partition_sim``): what each simulated broker does on
an image, a Produce, a replica Fetch and its answer, an AlterPartition answer and a ListOffsets — the broker's own
partition steps (``kraftwire.server.runtime.partition_runtime``) and the leader's append plan
(``kraftwire.replica.leader_append``) on in-memory logs, with the simulation's clock and network in place of the
event loop and the sockets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Collection

from kraftwire import error_codes as ec
from kraftwire.log.memory import MemoryPartitionLog
from kraftwire.metadata.controller.topic_configs import number as config_number
from kraftwire.metadata.controller.topics import TOPIC_RESOURCE, broker_configs
from kraftwire.metadata.image import MetadataImage
from kraftwire.protocol import messages as m
from kraftwire.records import RecordBatchBuilder, read_batches
from kraftwire.replica.leader_append import AppendResult, plan_append, plan_marker
from kraftwire.replica.leader_fetch import check_replica_fetch
from kraftwire.replica.partition import FOLLOWER, LEADER, ReplicaState
from kraftwire.replica.producers import ProducerTable, next_seq
from kraftwire.replica.transactions import PartitionTxns, fold_batch
from kraftwire.replica.verification import ProducerVerifications
from kraftwire.server.runtime import partition_runtime as runtime

__all__ = ["Broker", "CONTROLLER", "LAG_MS", "Msg", "REQUEST_TIMEOUT_MS", "Replica", "SimBrokers", "TOPIC",
           "TXN_PRODUCERS", "Wait"]

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
    told_log_start: int = 0  # the leader log start the last fetch answer it acted on carried (for the checks)


@dataclass
class Broker:
    id: int
    alive: bool = True
    incarnation: int = 0
    epoch: int = -1
    image: MetadataImage = field(default_factory=lambda: MetadataImage(offset=-1))
    replicas: dict[int, Replica] = field(default_factory=dict)
    waits: list[Wait] = field(default_factory=list)


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
        for index, reg in topic.partitions.items():
            if b.id not in reg.replicas:
                if b.replicas.pop(index, None) is not None:  # a reassignment moved it away: the log goes
                    self.logs.pop((b.id, index), None)
                    self.event(f"b{b.id} deletes p{index}: no longer a replica")
                    self.count("replica_deleted")
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
            pending = runtime.leader_saw_fetch(r.state, lg, msg.src, fetch_offset, broker_epoch, reg, self.now)
            if pending is not None:
                self.event(f"b{b.id} proposes isr {list(pending.isr)} for p{index}")
                self.check_expansion(b, index, msg.src, broker_epoch)
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
            if error == ec.NONE:
                r.told_log_start = log_start
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

    # ------------------------------------------------------------------------------------------------ broker: producer state
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
