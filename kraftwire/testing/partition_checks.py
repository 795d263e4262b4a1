"""The invariants and the liveness of the partition simulation (``kraftwire.testing.partition_sim``; the list is in
its docstring): checked after every event, on every acknowledgement, and once the faults stop."""

from __future__ import annotations

from kraftwire.log.memory import MemoryPartitionLog
from kraftwire.replica.partition import LEADER
from kraftwire.testing.partition_broker import Broker, Replica, Wait

__all__ = ["PartitionChecks", "REJOIN_ROUNDS"]

#: rounds of steady writes, once the faults stopped, within which every follower must be back in the ISR
REJOIN_ROUNDS = 120


class PartitionChecks:
    """The checks, mixed into ``PartitionSim`` (its brokers, logs, image and record of what was committed)."""

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

    def check_expansion(self, b: Broker, index: int, replica: int, broker_epoch: int) -> None:
        """A leader proposes a follower for the ISR only when its image shows that broker registered, unfenced, not
        shutting down, and fetching with its current broker epoch (KIP-903, Kafka's ``isReplicaIsrEligible``)."""
        reg = b.image.brokers.get(replica)
        if reg is None or reg.fenced or reg.in_controlled_shutdown or broker_epoch not in (-1, reg.epoch):
            self.fail(f"leader b{b.id} of p{index} proposes b{replica} (fetching with broker epoch {broker_epoch}) "
                      f"for the ISR though its image shows it ineligible: {reg}")

    def check_one_alter_in_flight(self, b: Broker, index: int, leader_epoch: int, partition_epoch: int) -> None:
        """A leader sends one AlterPartition at a time for a partition state (leader and partition epoch): when it
        sends one, none it sent earlier for that state is still on its way to the controller."""
        for msg in self.net:
            if msg.kind == "alter" and msg.src == b.id and msg.incarnation == b.incarnation:
                for t in msg.body.topics:
                    for pd in t.partitions:
                        if (pd.partition_index, pd.leader_epoch, pd.partition_epoch) == (index, leader_epoch,
                                                                                          partition_epoch):
                            self.fail(f"b{b.id} sends a second AlterPartition for p{index} at epochs "
                                      f"{leader_epoch}/{partition_epoch} while {list(pd.new_isr)} is in flight")

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

    def checked(self, batches, index: int, told: int = 0) -> list:
        """``batches`` (of a replica the last fetch answer it acted on told that its leader's log starts at
        ``told``) less those wholly below the partition's deleted mark (``deleted_below``: the highest log start a
        leader of it has had) but not below ``told``.

        Kafka deleted those records, and a replica no answer has told so can hold stale ones there that it wrote as
        leader and were never committed, which no divergence check reaches. Retention or DeleteRecords trim the
        leader's epoch cache to its log start (``LeaderEpochFileCache.truncateFromStart``), so for an epoch older than
        every entry left ``endOffsetFor`` answers the log start; a restarted old leader fetching there with that
        epoch is not diverging (``Partition.readRecords`` answers DivergingEpoch only when that answer's epoch or end
        is below the fetch's), counts toward the ISR (``isFollowerInSync``: at the high watermark and past the leader
        epoch's start) and, leading before any answer moved its log start up
        (``ReplicaFetcherThread.processPartitionData``), serves its own records there below its high watermark, which
        its followers then copy (seed 130). At and above the mark every check holds in full: the same answer
        truncates any stale record from the log start on; and a replica told of a log start holds nothing below it
        (kraftwire follows it on every answer, ``follower.py``)."""
        deleted = self.deleted_below[index]
        return [x for x in batches if not told <= x[1] < deleted]

    def disagreement(self, batches, index: int, told: int = 0) -> int | None:
        """The base of the first of ``batches`` (``checked``) below the committed end that is not the committed batch
        there."""
        committed, end = self.committed[index], self.committed_end[index]
        for base, last, data in self.checked(batches, index, told):
            if base < end and committed.get(base) != (last, data):
                return base
        return None

    def told_log_start(self, broker: int, index: int) -> int:
        """What fetch answers told ``broker``'s live replica of ``index`` of its leader's log start (0: none)."""
        b = self.brokers.get(broker)
        r = b.replicas.get(index) if b is not None and b.alive else None
        return 0 if r is None else r.told_log_start

    def note_committed(self, b: Broker, index: int) -> None:
        """A live leader's log below its high watermark must extend what was committed; it becomes committed."""
        r = b.replicas[index]
        mine = self.prefix(r.log, r.log.high_watermark())
        bad = self.disagreement(mine, index, r.told_log_start)
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
                self.deleted_below[index] = max(self.deleted_below[index], r.log.start_offset())
                self.note_committed(b, index)
                self.check_last_stable_offset(b, index, r)
                hw = r.log.high_watermark()
                mine = self.prefix(r.log, hw)
                assigned = self.image.topics[self.topic_id].partitions[index].replicas
                for member in st.isr:
                    lg = self.logs.get((member, index))
                    # a member a completed reassignment removed has deleted its copy: the leader's ISR is stale
                    # until it applies that image (and holds its high watermark back meanwhile)
                    if member == b.id or member not in assigned:
                        continue
                    if lg is None:
                        held = hw == 0
                    else:
                        start = max(lg.start_offset(), r.log.start_offset())
                        theirs = self.checked(self.prefix(lg, hw), index, self.told_log_start(member, index))
                        ours = self.checked(mine, index, r.told_log_start)
                        held = lg.end_offset() >= hw and ([x for x in theirs if x[0] >= start]
                                                          == [x for x in ours if x[0] >= start])
                    if not held:
                        self.fail(f"ISR member b{member} of p{index} does not hold leader b{b.id}'s log up to its "
                                  f"high watermark {hw} (its log: {lg!r})")
        for (broker, index), lg in self.logs.items():
            mine = self.prefix(lg, lg.high_watermark())
            bad = self.disagreement(mine, index, self.told_log_start(broker, index))
            if bad is not None or (mine and mine[-1][1] >= self.committed_end[index]):
                self.fail(f"b{broker} p{index} holds uncommitted or changed data below its high watermark "
                          f"{lg.high_watermark()}")

    # ------------------------------------------------------------------------------------------------ liveness
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
            last, deleted = self.committed[index][base][0], self.deleted_below[index]
            if base >= lg.start_offset() and last >= deleted and not self.holds(lg, base, data):
                self.fail(f"acknowledged batch p{index}@{base} is not on the leader above its log start "
                          f"{lg.start_offset()} (the partition's records are deleted below {deleted})")

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
