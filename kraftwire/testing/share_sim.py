"""A seeded simulation of one share-partition (``kraftwire.replica.share_partition``) with several share consumers.

**What runs.** The real pure :class:`~kraftwire.replica.share_partition.SharePartition` on the partition leader and,
as the share coordinator keeps it, the durable :class:`~kraftwire.replica.share_partition.ShareState` that its writes
fold into. As the runtime must, an acknowledgement's answer waits until its write is durable: writes queue and are
made durable at random moments, in order, and only then is the consumer answered. A producer appends records to the
log; consumers fetch (acquiring from ``next_fetch_offset()``) and acknowledge what they hold — mostly ACCEPT, some
RELEASE, REJECT, GAP or RENEW, sometimes only part of it, sometimes records whose lock they do not know has expired.

Each consumer fetches inside its share session on the leader (the real
:class:`~kraftwire.replica.share_sessions.ShareSessionCache`): its first fetch opens one (epoch 0) on its connection,
every later one carries the session's epoch.

**Faults.** The leader dies: its queued writes are lost, their consumers are answered with an error and forget what
they held, and the new leader loads the durable state. A fetch answer is lost on its way (its records stay acquired
until their locks expire). A consumer leaves — its connection closes, which ends its session, and the member the
session cache names is the one whose records are released — and comes back as a new member. Time jumps past lock
deadlines.

**Invariants after every event**, checked against an oracle that follows the rules independently:

* every fetch carrying its session's epoch is accepted, and a closed connection releases exactly its own member;
* a record is held by at most one consumer at a time, and is acquired only when AVAILABLE: never while another
  consumer's lock is live, never once finished;
* a record is redelivered only after a lock expiry, a RELEASE (or its member leaving) or a leader change, each time
  with its delivery count raised — by one over the previous delivery on the same leader, by one over the last
  durable count after a leader change (KIP-932 does not persist acquisitions) — and never beyond
  ``share.delivery.count.limit``;
* an acknowledgement succeeds exactly when the oracle says the consumer still holds every record in it (and, for
  one with a RENEW, when the group's ``share.renew.acknowledge.enable``, which flips now and then, is true); a
  renewed record stays with its consumer until its new lock runs out;
* nothing is lost: every offset below the log end is below the start offset only if it is finished, and otherwise
  has the oracle's state (finished, held by the oracle's holder with its count, or available);
* a record ends ACKNOWLEDGED (or ARCHIVED) exactly once in the durable state, and a durable end is never undone;
* with every write durable, a leader loading the durable state gets the live state (acquired records as AVAILABLE
  with their previous count); the in-flight window never exceeds ``share.partition.max.record.locks``.

**Convergence.** The faults stop and consumers accept everything they get: within a bounded number of steps every
produced record is finished durably and the start offset (the leader's, and the one a leader loading the durable
state gets) is the log end.

A write of an acknowledgement can also be refused by the share coordinator: the acknowledgement is rolled back —
the records go back to their member under the lock they had, or are released if it ran out meanwhile.

**The dead-letter queue** (odd seeds: the group names a DLQ topic, share.version 2). A REJECT, and a delivery-count
limit reached on a release, an expiry or a member leaving, go to ARCHIVING; once a write is durable the runtime takes
the leader's dead letters (``SharePartition.dead_letters``) and, at random moments, writes each run to the DLQ — or
fails to (5 %) — and archives it (``archive_dead_letters``), a write of its own. Invariants: a run handed out is
ARCHIVING in the oracle with the oracle's cause and count, and is handed out once per leader; a record is
written to the DLQ (or tried) only if it went through ARCHIVING — never one accepted — and every record that ended
through ARCHIVING had its DLQ write tried before it ended; a new leader sends again the durable ARCHIVING runs.

A failure prints the seed, the last events and ``python -m kraftwire.testing.share_sim --seed N``.
"""

from __future__ import annotations

import random
import sys
from collections import deque
from dataclasses import replace

from kraftwire import error_codes as ec
from kraftwire.replica import share_partition as sp
from kraftwire.replica.share_partition import AckBatch, ShareConfig, SharePartition, ShareState
from kraftwire.replica.share_sessions import INITIAL_EPOCH, ShareSessionCache
from kraftwire.testing.coordinator_log import SimFailure, replay_main

__all__ = ["ShareSim", "SimFailure", "main"]

CONFIG = ShareConfig(record_lock_duration_ms=1_000, delivery_count_limit=3, max_record_locks=24,
                     auto_offset_reset="earliest")
CONSUMERS = 4
MAX_RECORDS = 6
GROUP, PARTITION = "g", ("topic", 0)


class Consumer:
    def __init__(self, cid: int) -> None:
        self.cid, self.incarnation = cid, 0
        self.held: dict[int, int] = {}  # offset -> delivery count, as the consumer believes
        self.epoch: int | None = None  # its share session's next epoch; None: no session

    @property
    def member_id(self) -> str:
        return f"c{self.cid}.{self.incarnation}"

    @property
    def connection(self) -> str:
        return f"conn-{self.member_id}"


class ShareSim:
    title = "share-partition simulation"
    module = "kraftwire.testing.share_sim"

    def __init__(self, seed: int, events: int = 1500, *, config: ShareConfig = CONFIG) -> None:
        if seed % 2 and config is CONFIG:
            config = replace(config, dlq_enabled=True)
        self.seed, self.events, self.config = seed, events, config
        self.rng = random.Random(seed)
        self.now = 0
        self.log_end = 0
        self.epoch = 0
        self.durable = ShareState(start_offset=-1)
        self.part = SharePartition.initialize(config, self.durable, leader_epoch=0, log_start_offset=0,
                                              log_end_offset=0)
        self.pending: deque = deque()  # (write, consumer, offsets finished by it, answer)
        self.consumers = [Consumer(i) for i in range(CONSUMERS)]
        self.sessions = ShareSessionCache(max_sessions=CONSUMERS)
        self.trail: deque = deque(maxlen=40)
        self.counts = {k: 0 for k in ("acquired", "redelivered", "acks", "acks_refused", "releases", "renewals", "expiries",
                                      "leader_changes", "lost_writes", "lost_fetches", "leaves", "archived_at_limit",
                                      "finished", "reload_checks",
                                      "refused_writes", "renewals_refused", "dead_letters", "dlq_failed",
                                      "dlq_resumed")}
        # the oracle
        self.holder: dict[int, tuple[str, int]] = {}  # offset -> (member, lock deadline)
        self.count: dict[int, int] = {}  # offset -> delivery count on the live leader
        self.durable_count: dict[int, int] = {}  # offset -> delivery count last made durable
        self.finished: set[int] = set()  # finished on the live leader
        self.finished_durable: set[int] = set()
        self.low = 0  # every offset below it was checked finished on the live leader
        self.archiving: dict[int, str] = {}  # offset -> its DLQ cause, ARCHIVING on the live leader
        self.archiving_durable: set[int] = set()
        self.letters: deque = deque()  # DLQ writes the leader handed out, not done yet
        self.handed: set[int] = set()  # offsets handed out for the DLQ by the live leader
        self.dlq_tried: dict[int, int] = {}  # offset -> DLQ writes tried

    # -- helpers ---------------------------------------------------------------------------------------------

    def note(self, what: str) -> None:
        self.trail.append(f"t={self.now} {what}")

    def fail(self, why: str) -> None:
        trail = "\n  ".join(self.trail)
        raise SimFailure(f"{self.title} seed {self.seed}: {why}\n  last events:\n  {trail}\n"
                         f"replay: python -m {self.module} --seed {self.seed}")

    def _write(self, write, consumer: Consumer | None = None, answer=None, before=None) -> None:
        """Queue a state write; the consumer's answer (if any) waits until it is durable. ``before``: an
        acknowledgement's oracle entries as they were, for the rollback if the write fails."""
        if write is not None or answer is not None:
            returned = {o: self.count[o] for o in self._written_offsets(write)}
            self.pending.append((write, consumer, returned, answer, before))

    @staticmethod
    def _written_offsets(write) -> list[int]:
        return [] if write is None else [o for b in write.state_batches
                                         for o in range(b.first_offset, b.last_offset + 1)]

    def _return(self, offset: int, dlq: bool = True) -> None:
        """The oracle: a held record comes back (released, expired, its member gone); at the limit it ends, through
        the DLQ when the group has one (``dlq``: not when a refused write's rollback finds the lock expired)."""
        del self.holder[offset]
        if self.count[offset] >= self.config.delivery_count_limit:
            if dlq and self.config.dlq_enabled:
                self.archiving[offset] = sp.DELIVERY_COUNT_EXCEEDED
            else:
                self.finished.add(offset)
            self.counts["archived_at_limit"] += 1

    # -- events ----------------------------------------------------------------------------------------------

    def produce(self) -> None:
        n = self.rng.randint(1, 8)
        self.log_end += n
        self.note(f"produce {n} -> log end {self.log_end}")

    def _session_step(self, c: Consumer) -> None:
        """The fetch's share-session step: open a session, or move it on with the epoch it expects."""
        epoch = INITIAL_EPOCH if c.epoch is None else c.epoch
        ctx = self.sessions.new_fetch_context(GROUP, c.member_id, epoch, [PARTITION] if c.epoch is None else [],
                                              [], False, c.connection)
        if ctx.error != ec.NONE or ctx.partitions != (PARTITION,):
            self.fail(f"{c.member_id} fetch at session epoch {epoch} refused {ec.name_of(ctx.error)} "
                      f"({ctx.partitions})")
        c.epoch = 1 if c.epoch is None else c.epoch + 1  # the client counts its epochs itself

    def fetch(self, c: Consumer) -> None:
        self._session_step(c)
        first = self.part.next_fetch_offset()
        if first >= self.log_end or not self.part.can_acquire():
            return
        got = self.part.acquire(c.member_id, first, self.log_end - 1, MAX_RECORDS, self.now)
        lost = self.rng.random() < 0.05
        self.note(f"{c.member_id} fetch from {first}: {[(a.first_offset, a.last_offset, a.delivery_count) for a in got]}"
                  f"{' (answer lost)' if lost else ''}")
        for a in got:
            for o in range(a.first_offset, a.last_offset + 1):
                self._check_acquisition(c.member_id, o, a.delivery_count)
                if not lost:
                    c.held[o] = a.delivery_count
        self.counts["lost_fetches"] += lost

    def _check_acquisition(self, member: str, offset: int, count: int) -> None:
        if offset in self.holder:
            self.fail(f"offset {offset} acquired by {member} while {self.holder[offset][0]} holds it "
                      f"(lock until {self.holder[offset][1]})")
        if offset in self.finished:
            self.fail(f"offset {offset} acquired by {member} after it was finished")
        expected = self.count.get(offset, 0) + 1
        if count != expected:
            self.fail(f"offset {offset} delivered with count {count}, expected {expected}")
        if count > self.config.delivery_count_limit:
            self.fail(f"offset {offset} delivered {count} times, beyond the limit")
        self.counts["redelivered" if count > 1 else "acquired"] += 1
        self.holder[offset] = (member, self.now + self.config.record_lock_duration_ms)
        self.count[offset] = count

    def acknowledge(self, c: Consumer, accept_only: bool = False) -> None:
        if not c.held:
            return
        offsets = sorted(c.held)
        if accept_only:
            types = [sp.ACCEPT] * len(offsets)
        else:
            if self.rng.random() < 0.3:
                offsets = offsets[:self.rng.randint(1, len(offsets))]
            types = [self.rng.choices((sp.ACCEPT, sp.RELEASE, sp.REJECT, sp.GAP, sp.RENEW), (75, 12, 5, 3, 5))[0]
                     for _ in offsets]
        batches = self._batches(offsets, types)
        # a RENEW on an offset already finished is skipped with it (the leader acknowledges from its start offset)
        renewing = any(t == sp.RENEW and o >= self._first_unfinished() for o, t in zip(offsets, types))
        expect_ok = self._acceptable(c.member_id, batches) and (self.config.renew_enabled or not renewing)
        error, message, write = self.part.acknowledge(c.member_id, batches, self.now)
        self.note(f"{c.member_id} ack {list(zip(offsets, types))}: {error} {message or ''}")
        held = {o: c.held.pop(o) for o in offsets}
        before = {o: self.holder[o] for o in offsets if o in self.holder}
        if (error == ec.NONE) != expect_ok:
            self.fail(f"acknowledgement by {c.member_id} answered {error} ({message}), the oracle expected "
                      f"{'success' if expect_ok else 'a refusal'}")
        if error != ec.NONE:
            self.counts["acks_refused"] += 1
            if renewing and not self.config.renew_enabled:
                self.counts["renewals_refused"] += 1
            return
        self.counts["acks"] += 1
        first = self._first_unfinished()
        for o, t in zip(offsets, types):
            if o < first:
                continue
            if t == sp.RENEW:
                self.counts["renewals"] += 1
                self.holder[o] = (c.member_id, self.now + self.config.record_lock_duration_ms)
                c.held[o] = held[o]
            elif t == sp.RELEASE:
                self.counts["releases"] += 1
                self._return(o)
            elif t == sp.REJECT and self.config.dlq_enabled:
                del self.holder[o]
                self.archiving[o] = sp.CLIENT_REJECT
            else:
                del self.holder[o]
                self.finished.add(o)
        self._write(write, c, answer=(c.member_id, tuple(offsets)), before=before)

    def toggle_renew(self) -> None:
        """The group's ``share.renew.acknowledge.enable`` flips: the leader applies it to the next acknowledgement
        (a RENEW is refused whole while it is false) and a new leader loads with it."""
        self.config = replace(self.config, renew_enabled=not self.config.renew_enabled)
        self.part.config = replace(self.part.config, renew_enabled=self.config.renew_enabled)
        self.note(f"share.renew.acknowledge.enable={str(self.config.renew_enabled).lower()}")

    def _first_unfinished(self) -> int:
        """The first offset not finished for good: an acknowledgement whose write is on its way has finished its
        records only once the write is durable (the leader's start offset does not pass them before)."""
        waiting = {o for entry in self.pending if entry[0] is not None for o in entry[0].pending}
        o = self.low
        while o in self.finished and o not in waiting:
            o += 1
        return o

    def _acceptable(self, member: str, batches: list[AckBatch]) -> bool:
        """The oracle: every batch reaches the first unfinished offset, and from there on the member holds every
        offset in it (those below were finished and are skipped)."""
        first = self._first_unfinished()
        return all(b.last_offset >= first and all(self.holder.get(o, ("", 0))[0] == member
                                                  for o in range(max(b.first_offset, first), b.last_offset + 1))
                   for b in batches)

    @staticmethod
    def _batches(offsets: list[int], types: list[int]) -> list[AckBatch]:
        out: list[AckBatch] = []
        for o, t in zip(offsets, types):
            if out and out[-1].last_offset + 1 == o:
                out[-1] = AckBatch(out[-1].first_offset, o, out[-1].acknowledge_types + (t,))
            else:
                out.append(AckBatch(o, o, (t,)))
        return out

    def flush(self, faults: bool = True) -> None:
        """The oldest queued write becomes durable — or the share coordinator refuses it — then its consumer is
        answered."""
        if not self.pending:
            return
        write, _consumer, returned, answer, before = self.pending.popleft()
        if write is not None and write.pending and faults and self.rng.random() < 0.08:
            self._refused(write, answer, before)
            return
        if write is not None and write.pending and self.part.complete(write, True, self.now) is not None:
            self.fail("a durable acknowledgement asked for another write")
        if write is not None:
            passed = range(max(self.durable.start_offset, 0), write.start_offset)
            self.durable = self.durable.apply(write)
            for o, count in returned.items():
                self.durable_count[o] = count
            for o in passed:  # the start moved past them: finished, if no earlier write said so
                if o not in self.finished:
                    self.fail(f"the durable start offset moved past {o}, which is not finished")
                if o in self.finished_durable:
                    continue
                self.finished_durable.add(o)
                self.counts["finished"] += 1
            for b in write.state_batches:
                if b.delivery_state == sp.ARCHIVING:
                    self.archiving_durable.update(range(b.first_offset, b.last_offset + 1))
                elif b.delivery_state in sp.FINISHED:
                    self.archiving_durable.difference_update(range(b.first_offset, b.last_offset + 1))
                if b.delivery_state in sp.FINISHED:
                    for o in range(b.first_offset, b.last_offset + 1):
                        if o in self.finished_durable:
                            self.fail(f"offset {o} finished durably a second time")
                        self.finished_durable.add(o)
                        self.counts["finished"] += 1
        self.note(f"write durable: start {self.durable.start_offset}")
        self._take_letters()

    # -- the dead-letter queue -------------------------------------------------------------------------------

    def _take_letters(self) -> None:
        """A write came back: the runtime takes the leader's dead letters, each checked against the oracle."""
        for letter in self.part.dead_letters():
            for o in range(letter.first_offset, letter.last_offset + 1):
                if o not in self.archiving:
                    self.fail(f"offset {o} handed out for the DLQ, the oracle says it is not ARCHIVING")
                if (letter.cause, letter.delivery_count) != (self.archiving[o], self.count.get(o, 0)):
                    self.fail(f"offset {o} handed out for the DLQ as ({letter.cause}, {letter.delivery_count}), the "
                              f"oracle says ({self.archiving[o]}, {self.count.get(o, 0)})")
                if o in self.handed:
                    self.fail(f"offset {o} handed out for the DLQ twice by one leader")
                self.handed.add(o)
            self.letters.append(letter)
            self.note(f"dead letter {letter.first_offset}-{letter.last_offset} ({letter.cause})")

    def dead_letter(self, faults: bool = True) -> None:
        """The oldest dead letter is written to the DLQ — or the write fails — and archived either way."""
        if not self.letters:
            return
        letter = self.letters.popleft()
        failed = faults and self.rng.random() < 0.05
        for o in range(letter.first_offset, letter.last_offset + 1):
            self.dlq_tried[o] = self.dlq_tried.get(o, 0) + 1
        write = self.part.archive_dead_letters(letter)
        for o in range(letter.first_offset, letter.last_offset + 1):
            if self.archiving.pop(o, None) is not None:
                self.finished.add(o)
        self.counts["dlq_failed" if failed else "dead_letters"] += 1
        self.note(f"DLQ {'write failed' if failed else 'written'}: {letter.first_offset}-{letter.last_offset}, "
                  "archived")
        self._write(write)

    def _refused(self, write, answer, before: dict) -> None:
        """The share coordinator refused an acknowledgement's write: the consumer is answered with an error and
        forgets the records, which go back to it under the lock they had — or, when that lock ran out meanwhile,
        come back as an expiry returns them (written in turn)."""
        again = self.part.complete(write, False, self.now)
        for o in write.pending:
            self.finished.discard(o)
            self.archiving.pop(o, None)
            if o in self.holder:  # a RELEASE had returned it; the lock it had decides again
                del self.holder[o]
            member, deadline = before[o]
            self.holder[o] = (member, deadline)
            if deadline <= self.now:
                self._return(o, dlq=False)
        self.counts["refused_writes"] += 1
        self.note(f"{answer[0]} ack of {list(write.pending)} refused by the share coordinator (rolled back)")
        self._write(again)

    def expire(self) -> None:
        self.now += self.rng.choice((100, 400, 1_100))
        write = self.part.expire_locks(self.now)
        due = sorted(o for o, (_m, deadline) in self.holder.items() if deadline <= self.now)
        for o in due:
            self._return(o)
        self.counts["expiries"] += len(due)
        if due:
            self.note(f"locks expire: {due}")
        self._write(write)

    def leader_change(self) -> None:
        lost = len(self.pending)
        for _write, consumer, _returned, answer, _before in self.pending:
            if consumer is not None and answer is not None:
                self.note(f"{answer[0]} ack answered NOT_LEADER (write lost)")
        self.pending.clear()
        for c in self.consumers:
            c.held.clear()
        self.epoch += 1
        self.part = SharePartition.initialize(self.config, self.durable, leader_epoch=self.epoch,
                                              log_start_offset=0, log_end_offset=self.log_end)
        self.holder.clear()
        self.finished = set(self.finished_durable)
        self.letters.clear()
        self.handed.clear()
        # the durable ARCHIVING runs are sent again, their cause told by the count
        self.archiving = {o: sp.DELIVERY_COUNT_EXCEEDED if self.durable_count.get(o, 0) >=
                          self.config.delivery_count_limit else sp.CLIENT_REJECT
                          for o in self.archiving_durable if o >= max(self.durable.start_offset, 0)}
        self.low = min(self.low, max(self.durable.start_offset, 0))
        self.count = dict(self.durable_count)
        self.counts["leader_changes"] += 1
        self.counts["lost_writes"] += lost
        self.note(f"leader change to epoch {self.epoch}: {lost} writes lost, start {self.part.start_offset}")
        self.counts["dlq_resumed"] += len(self.archiving)
        self._take_letters()

    def leave(self, c: Consumer) -> None:
        gone = self.sessions.connection_closed(c.connection)
        released = gone.member_id if gone is not None else None
        if released != (c.member_id if c.epoch is not None else None):
            self.fail(f"{c.member_id}'s connection closed: the session cache released {gone}")
        write = self.part.release_member(released) if released else None
        c.epoch = None
        for o in sorted(o for o, (m, _d) in self.holder.items() if m == c.member_id):
            self._return(o)
        self.note(f"{c.member_id} leaves")
        c.held.clear()
        c.incarnation += 1
        self.counts["leaves"] += 1
        self._write(write)

    # -- invariants ------------------------------------------------------------------------------------------

    def check(self) -> None:
        part = self.part
        if part.fetched_end - part.start_offset > self.config.max_record_locks:
            self.fail(f"in-flight window {part.start_offset}..{part.fetched_end} exceeds the record locks")
        for o in range(self.low, part.start_offset):
            if o not in self.finished:
                self.fail(f"offset {o} is below the start offset {part.start_offset} but not finished")
        self.low = part.start_offset
        for o in range(part.start_offset, part.fetched_end):
            state = part.state_of(o)
            if o in self.finished:
                if state is None or state[0] not in sp.FINISHED:
                    self.fail(f"finished offset {o} is {state} on the leader")
            elif o in self.archiving:
                if state != (sp.ARCHIVING, self.count.get(o, 0), ""):
                    self.fail(f"offset {o} is {state} on the leader, the oracle says ARCHIVING "
                              f"count {self.count.get(o, 0)}")
            elif o in self.holder:
                member, _deadline = self.holder[o]
                if state != (sp.ACQUIRED, self.count[o], member):
                    self.fail(f"offset {o} is {state}, the oracle says acquired by {member} count {self.count[o]}")
            elif state is None or state[:2] != (sp.AVAILABLE, self.count.get(o, 0)):
                self.fail(f"offset {o} is {state}, the oracle says available with count {self.count.get(o, 0)}")
        beyond = [o for o in (*self.holder, *self.finished, *self.archiving) if o >= part.fetched_end]
        if beyond:
            self.fail(f"offsets {sorted(beyond)[:5]} are held or finished past the leader's window end "
                      f"{part.fetched_end}: lost")
        if not self.pending:
            self._check_reload()

    def _check_dead_letters(self) -> None:
        """Converged: every record that went through ARCHIVING had its DLQ write tried, and no other was."""
        through = {o for o in self.dlq_tried}
        if self.config.dlq_enabled and self.archiving:
            self.fail(f"offsets {sorted(self.archiving)[:5]} still ARCHIVING after convergence")
        if not self.config.dlq_enabled and through:
            self.fail(f"offsets {sorted(through)[:5]} written to a DLQ the group does not have")

    def _loaded_start(self) -> int:
        """Where a leader loading the durable state starts (its written start offset lags one write behind the
        finished records it carries, as Kafka's does)."""
        return SharePartition.initialize(self.config, self.durable, leader_epoch=self.epoch, log_start_offset=0,
                                         log_end_offset=self.log_end).start_offset

    def _check_reload(self) -> None:
        loaded = SharePartition.initialize(self.config, self.durable, leader_epoch=self.epoch,
                                           log_start_offset=0, log_end_offset=self.log_end)
        if loaded.start_offset != self.part.start_offset:
            self.fail(f"the durable state starts at {loaded.start_offset}, the leader at {self.part.start_offset}")
        for o in range(self.part.start_offset, self.part.fetched_end):
            state, count, _member = self.part.state_of(o)
            want = (sp.AVAILABLE, count - 1) if state == sp.ACQUIRED else (state, count)
            got = loaded.state_of(o)
            got = (sp.AVAILABLE, 0) if got is None else got[:2]
            if got != want:
                self.fail(f"offset {o} loads from the durable state as {got}, the leader has {want}")
        self.counts["reload_checks"] += 1

    # -- driving ---------------------------------------------------------------------------------------------

    def step(self, faults: bool = True) -> None:
        r = self.rng.random()
        c = self.rng.choice(self.consumers)
        if r < 0.15:
            self.produce()
        elif r < 0.45:
            self.fetch(c)
        elif r < 0.70:
            self.acknowledge(c)
        elif r < 0.80:
            self.flush()
        elif r < 0.85:
            self.dead_letter()
        elif r < 0.865:
            self.toggle_renew()
        elif r < 0.93:
            self.expire()
        elif not faults:
            self.flush(faults=False)
        elif r < 0.96:
            self.leave(c)
        else:
            self.leader_change()
        self.check()

    def run(self) -> dict:
        for _ in range(self.events):
            self.step()
        self.converge()
        return self.counts

    def converge(self, steps: int = 20_000) -> None:
        """No more faults or rejections: fetch, accept and flush until every produced record is finished durably."""
        for _ in range(steps):
            if not self.pending and not self.letters and self.part.start_offset == self.log_end and \
                    self._loaded_start() == self.log_end:
                self._check_dead_letters()
                return
            c = self.rng.choice(self.consumers)
            action = self.rng.random()
            if action < 0.4:
                self.fetch(c)
            elif action < 0.7:
                self.acknowledge(c, accept_only=True)
            elif action < 0.8:
                self.flush(faults=False)
            elif action < 0.9:
                self.dead_letter(faults=False)
            else:
                self.expire()
            self.check()
        self.fail(f"no convergence: durable start {self._loaded_start()}, leader start "
                  f"{self.part.start_offset}, log end {self.log_end}")


def main(argv: list[str] | None = None) -> int:
    return replay_main(ShareSim, argv)


if __name__ == "__main__":
    sys.exit(main())
