"""A seeded simulation of one ``__consumer_offsets`` partition's group coordinator across coordinator moves.

**What runs.** The real pure shard (``kraftwire.coordinator.group.GroupShard``) with the real record layout, hosted
by the real coordinator runtime (``kraftwire.coordinator.runtime`` with ``coordinator.group.hosting.GroupKind``, as
``server/apis/group_apis.py`` hosts it): a result's records are appended to the leader's log and folded into the shard at
their offsets, its replies wait until the high watermark passes them, a failed write is refused and reloaded. The partition has three
replicas; followers copy the leader's log at random moments and the high watermark is the shortest log among the
live in-sync replicas. Consumers run the classic protocol (JoinGroup with MEMBER_ID_REQUIRED, SyncGroup with a
range assignment made by the leader member, Heartbeat, OffsetCommit, LeaveGroup) against whoever leads now, and
beside them KIP-848 members of a consumer group (ConsumerGroupHeartbeat with their owned partitions, commits at
their member epoch, leaving; now and then an answer is lost on the way), and KIP-932 members of a share group
(ShareGroupHeartbeat; the share-partition initialization each heartbeat asks for is answered once the heartbeat is
committed, now and then as a failure).

**Faults.** The leader broker dies (its pending writes fail, and the runtime answers them NOT_COORDINATOR, as when
the partition's leadership moves); an in-sync replica becomes leader and the runtime loads a fresh shard from *its*
log — which may hold
records above the old high watermark that now commit; dead brokers come back truncated to the leader's log.
Consumers stall past their session timeout, or leave. Time jumps.

**Invariants after every event.**

* committed offsets are never lost or rolled back: for every partition, the live coordinator's committed offset is
  at least the highest offset whose OffsetCommit was answered without error (commit values only grow);
* the committed view is the log below the high watermark: folding the leader's log up to the high watermark gives
  exactly the shard's committed offsets (nothing uncommitted is read, nothing committed is missing);
* in-sync replicas agree with the leader below the high watermark;
* a loaded shard equals the live one: replaying the leader's whole log into a new shard gives the live shard's
  offsets (``offsets`` and ``committed``), and each group's generation in the log is never ahead of the live one;
* a Stable group's members hold disjoint assignments, and in the consumer group no partition is ever held by two
  members (assigned to one while another has yet to revoke it);
* the consumer group loaded from the log equals the live one (epochs, targets, members' assignments).
* the share group (KIP-932 members beside them, ShareGroupHeartbeat) loaded from the log equals the live one
  (epochs, metadata hash, targets, members, initialized and initializing partitions), and its target assigns only
  partitions the share coordinator initialized.

**Convergence.** The faults stop; within a bounded number of steps every classic consumer is a member of one Stable
generation whose assignments cover the topic's partitions exactly once, the consumer group is Stable with its
members owning every partition exactly once, the share group holds every share member at its epoch, each owning
its share and all of them every partition, and every answered commit is committed.

A failure prints the seed, the last events and ``python -m kraftwire.testing.group_sim --seed N``.
"""

from __future__ import annotations

import uuid as _uuid

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.group import consumer as cgp
from kraftwire.coordinator.group import share as sgp
from kraftwire.coordinator.group.hosting import GroupKind
from kraftwire.coordinator.group.shard import STABLE, GroupConfig, GroupShard
from kraftwire.protocol import messages as w
from kraftwire.testing.coordinator_log import BROKERS, PARTITION, ReplicatedLogSim, SimFailure, replay_main

__all__ = ["GroupSim", "SimFailure", "main"]


TOPIC = "t"
PARTITIONS = 6
GROUP = "sim-group"
NEXT_GROUP = "sim-next"  # a KIP-848 consumer group beside the classic one
SHARE_GROUP = "sim-share"  # a KIP-932 share group beside them
TOPIC_ID = _uuid.UUID(int=7)
SESSION_MS = 10_000
REBALANCE_MS = 15_000


def _subscription() -> bytes:
    name = TOPIC.encode()
    return b"\x00\x00" + (1).to_bytes(4, "big") + len(name).to_bytes(2, "big") + name + b"\x00\x00\x00\x00"


def _assignment(parts: list[int]) -> bytes:
    return b"".join(p.to_bytes(4, "big") for p in parts)


def _parts(assignment: bytes) -> list[int]:
    return [int.from_bytes(assignment[i:i + 4], "big") for i in range(0, len(assignment), 4)]


class Consumer:
    def __init__(self, cid: int) -> None:
        self.cid = cid
        self.member_id = ""
        self.generation = -1
        self.state = "out"  # out -> joining -> syncing -> stable; "waiting" while a request is in flight
        self.assignment: list[int] = []
        self.busy = False  # a request is in flight (one at a time, like a real consumer's coordinator calls)
        self.stalled_until = 0
        self.last_seen = 0


class NextConsumer:
    """A KIP-848 member as librdkafka runs one: its own member id, its epoch (0: join), what it owns."""

    def __init__(self, cid: int) -> None:
        self.cid = cid
        self.member_id = f"next-{cid}"
        self.epoch = 0
        self.owned: set[int] = set()
        self.busy = False
        self.stalled_until = 0


class ShareConsumer:
    """A KIP-932 share member: its own member id, its epoch (0: join), the partitions it was told it has."""

    def __init__(self, cid: int) -> None:
        self.cid = cid
        self.member_id = f"share-{cid}"
        self.epoch = 0
        self.owned: set[int] = set()
        self.busy = False
        self.stalled_until = 0


class GroupSim(ReplicatedLogSim):
    title = "group simulation"
    module = "kraftwire.testing.group_sim"

    def __init__(self, seed: int, events: int = 1500, *, config: GroupConfig | None = None,
                 consumers: int = 4) -> None:
        super().__init__(seed, events)
        self.config = config or GroupConfig(initial_rebalance_delay_ms=self.rng.choice((0, 0, 3000)),
                                            min_session_timeout_ms=1000)
        self.ids = 0
        self.start()
        self.consumers = [Consumer(i) for i in range(consumers)]
        self.next_consumers = [NextConsumer(i) for i in range(3)]
        self.share_consumers = [ShareConsumer(i) for i in range(3)]
        #: the next offset a member would commit, per group and partition (only grows)
        self.positions = {GROUP: [0] * PARTITIONS, NEXT_GROUP: [0] * PARTITIONS}
        #: group -> partition -> highest offset whose commit was answered without error
        self.acked: dict[str, dict[int, int]] = {GROUP: {}, NEXT_GROUP: {}}
        self.counts = {"moves": 0, "commits_acked": 0, "commits_failed": 0, "generations": 0, "lost_replies": 0,
                       "stable_checks": 0, "reload_checks": 0, "next_heartbeats": 0, "next_fenced": 0,
                       "next_revocations": 0, "next_commits_acked": 0, "next_lost_answers": 0,
                       "share_heartbeats": 0, "share_fenced": 0, "share_initialized": 0, "share_init_failed": 0,
                       "share_lost_answers": 0}
        self._folded: dict[tuple[str, int], int] = {}  # the committed offsets folded up to ``_folded_to``
        self._folded_to = 0
        self._checks = 0
        self._generation = 0

    # ------------------------------------------------------------------------------------------------ plumbing
    def _new_id(self) -> str:
        self.ids += 1
        return f"m{self.ids}"

    def kind(self, *, oracle: bool = False) -> GroupKind:
        return GroupKind(self.config, self._new_id, version_of=lambda token: token[2])

    def answered(self, reply, body) -> None:
        consumer, request, _version = reply.token
        if isinstance(consumer, NextConsumer):
            self._next_answered(consumer, request, body)
            return
        if isinstance(consumer, ShareConsumer):
            self._share_answered(consumer, request, body)
            return
        if self.failing:
            self.counts["lost_replies"] += 1
        self._answered(consumer, request, body)

    # ------------------------------------------------------------------------------------------------ consumers
    def _token(self, c: Consumer, request: str, version: int):
        c.busy = True
        return (c, request, version)

    def _answered(self, c: Consumer, request: str, body) -> None:
        c.busy = False
        code = body.error_code if hasattr(body, "error_code") else 0
        if request == "join":
            if code == ec.MEMBER_ID_REQUIRED:
                c.member_id = body.member_id
                c.state = "out"
            elif code:
                if code in (ec.UNKNOWN_MEMBER_ID, ec.FENCED_INSTANCE_ID):
                    c.member_id = ""
                c.state = "out"
            else:
                c.member_id, c.generation = body.member_id, body.generation_id
                c.state = "syncing"
                c.leader_members = [m.member_id for m in body.members] if body.members else None
        elif request == "sync":
            if code:
                c.state = "out"
                if code == ec.UNKNOWN_MEMBER_ID:
                    c.member_id = ""
            else:
                c.assignment = _parts(bytes(body.assignment))
                c.state = "stable"
                c.last_seen = self.now
        elif request == "heartbeat":
            if code in (ec.REBALANCE_IN_PROGRESS, ec.ILLEGAL_GENERATION, ec.NOT_COORDINATOR):
                c.state = "out"
            elif code == ec.UNKNOWN_MEMBER_ID:
                c.state, c.member_id = "out", ""
            elif code == 0:
                c.last_seen = self.now
        elif request.startswith("commit:"):
            offsets = {int(k): int(v) for k, v in (x.split("=") for x in request[7:].split(",") if x)}
            codes = {p.error_code for t in body.topics for p in t.partitions}
            if codes == {0}:
                self.counts["commits_acked"] += 1
                for part, off in offsets.items():
                    self.acked[GROUP][part] = max(self.acked[GROUP].get(part, -1), off)
            else:
                self.counts["commits_failed"] += 1
                if codes & {ec.UNKNOWN_MEMBER_ID, ec.ILLEGAL_GENERATION, ec.REBALANCE_IN_PROGRESS}:
                    c.state = "out"
        elif request == "leave":
            c.state, c.member_id, c.assignment = "out", "", []

    def _lookup(self, name: str):
        return (TOPIC_ID, PARTITIONS) if name == TOPIC else None

    def _next_step(self, c: NextConsumer) -> None:
        if c.busy or c.stalled_until > self.now:
            return
        H = w.ConsumerGroupHeartbeatRequest
        roll = self.rng.random()
        if c.epoch > 0 and c.owned and roll < 0.35:
            C = w.OffsetCommitRequest
            offsets = {}
            for part in sorted(c.owned):
                self.positions[NEXT_GROUP][part] += self.rng.randint(1, 5)
                offsets[part] = self.positions[NEXT_GROUP][part]
            body = C(group_id=NEXT_GROUP, generation_id_or_member_epoch=c.epoch, member_id=c.member_id, topics=[
                C.OffsetCommitRequestTopic(name=TOPIC, partitions=[C.OffsetCommitRequestPartition(
                    partition_index=p, committed_offset=o, committed_metadata="") for p, o in offsets.items()])])
            tag = "commit:" + ",".join(f"{p}={o}" for p, o in offsets.items())
            self.note(f"n{c.cid} commits {offsets} at epoch {c.epoch}")
            self.write(self.shard.offset_commit(body, 9, self._token(c, tag, 9), self.now))
            return
        if c.epoch > 0 and roll > 0.98:
            self.note(f"n{c.cid} leaves")
            body = H(group_id=NEXT_GROUP, member_id=c.member_id, member_epoch=cgp.LEAVE_EPOCH,
                     rebalance_timeout_ms=-1)
            self.write(self.shard.consumer_heartbeat(body, 1, self._token(c, "leave", 1), self.now, f"n{c.cid}",
                                                      "/h", self._lookup))
            return
        joining = c.epoch == 0
        body = H(group_id=NEXT_GROUP, member_id=c.member_id, member_epoch=c.epoch, instance_id=None, rack_id=None,
                 rebalance_timeout_ms=REBALANCE_MS if joining else -1,
                 subscribed_topic_names=[TOPIC] if joining else None, subscribed_topic_regex=None,
                 server_assignor=None, topic_partitions=None if joining else [
                     H.TopicPartitions(topic_id=TOPIC_ID, partitions=sorted(c.owned))])
        self.counts["next_heartbeats"] += 1
        self.write(self.shard.consumer_heartbeat(body, 1, self._token(c, "hb", 1), self.now, f"n{c.cid}", "/h",
                                                  self._lookup))

    def _next_answered(self, c: NextConsumer, request: str, body) -> None:
        c.busy = False
        if request.startswith("commit:"):
            offsets = {int(k): int(v) for k, v in (x.split("=") for x in request[7:].split(",") if x)}
            codes = {p.error_code for t in body.topics for p in t.partitions}
            if codes == {0}:
                self.counts["next_commits_acked"] += 1
                for part, off in offsets.items():
                    self.acked[NEXT_GROUP][part] = max(self.acked[NEXT_GROUP].get(part, -1), off)
            elif codes & {ec.STALE_MEMBER_EPOCH, ec.UNKNOWN_MEMBER_ID}:
                pass  # the next heartbeat tells the member its epoch
            return
        if request == "leave":
            c.epoch, c.owned = 0, set()
            return
        code = body.error_code
        if code in (ec.FENCED_MEMBER_EPOCH, ec.UNKNOWN_MEMBER_ID):
            self.counts["next_fenced"] += 1
            self.note(f"n{c.cid} fenced ({ec.name_of(code)}): rejoins")
            c.epoch, c.owned = 0, set()  # it gives up everything and joins again
            return
        if code:
            return  # NOT_COORDINATOR and the like: the same heartbeat goes again
        if self.rng.random() < 0.03:
            self.counts["next_lost_answers"] += 1
            return  # the answer is lost on the way: the member heartbeats again with what it had
        c.epoch = body.member_epoch
        if body.assignment is not None:
            given = {p for tp in body.assignment.topic_partitions for p in tp.partitions}
            if c.owned - given:
                self.counts["next_revocations"] += 1
            c.owned = given

    def _share_step(self, c: ShareConsumer) -> None:
        if c.busy or c.stalled_until > self.now:
            return
        H = w.ShareGroupHeartbeatRequest
        leaving = c.epoch > 0 and self.rng.random() > 0.98
        epoch = sgp.LEAVE_EPOCH if leaving else c.epoch
        body = H(group_id=SHARE_GROUP, member_id=c.member_id, member_epoch=epoch, rack_id=None,
                 subscribed_topic_names=[TOPIC] if epoch == 0 else None)
        self.counts["share_heartbeats"] += 1
        if leaving:
            self.note(f"s{c.cid} leaves")
        result, init = self.shard.share_heartbeat(body, self._token(c, "leave" if leaving else "hb", 1), self.now,
                                                  f"s{c.cid}", "/h", self._lookup)
        done = None if init is None else (lambda error: error or self._share_initialize(init))
        self.runtime.write(PARTITION, result, self.now, done)
        if result.records:
            self._replicate(force=False)

    def _share_initialize(self, init) -> None:
        """The share coordinator's answer to the initialization a committed heartbeat asked for (now and then a
        failure: the partitions are asked for again once the retry interval passed)."""
        if not self.shard.live:
            return
        if self.rng.random() < 0.15:
            self.counts["share_init_failed"] += 1
            self.write(self.shard.share_uninitialized(init.group_id, init.topics))
        else:
            self.counts["share_initialized"] += 1
            self.write(self.shard.share_initialized(init.group_id, init.topics))

    def _share_answered(self, c: ShareConsumer, request: str, body) -> None:
        c.busy = False
        if request == "leave":
            if body.error_code == 0:
                c.epoch, c.owned = 0, set()
            return
        code = body.error_code
        if code in (ec.FENCED_MEMBER_EPOCH, ec.UNKNOWN_MEMBER_ID, ec.GROUP_ID_NOT_FOUND):
            self.counts["share_fenced"] += 1
            self.note(f"s{c.cid} fenced ({ec.name_of(code)}): rejoins")
            c.epoch, c.owned = 0, set()
            return
        if code:
            return  # NOT_COORDINATOR and the like: the same heartbeat goes again
        if self.rng.random() < 0.03:
            self.counts["share_lost_answers"] += 1
            return
        c.epoch = body.member_epoch
        if body.assignment is not None:
            c.owned = {p for tp in body.assignment.topic_partitions for p in tp.partitions}

    def _consumer_step(self, c: Consumer) -> None:
        if c.busy or c.stalled_until > self.now:
            return
        s = self.shard
        if c.state == "out":
            J = w.JoinGroupRequest
            body = J(group_id=GROUP, session_timeout_ms=SESSION_MS, rebalance_timeout_ms=REBALANCE_MS,
                     member_id=c.member_id, group_instance_id=None, protocol_type="consumer",
                     protocols=[J.JoinGroupRequestProtocol(name="range", metadata=_subscription())])
            self.note(f"c{c.cid} joins as {c.member_id or '-'}")
            self.write(s.join_group(body, 5, self._token(c, "join", 5), self.now, f"c{c.cid}", "/h"))
        elif c.state == "syncing":
            S = w.SyncGroupRequest
            assignments = []
            members = getattr(c, "leader_members", None)
            if members:
                per: dict[str, list[int]] = {m: [] for m in members}
                order = sorted(members)
                for part in range(PARTITIONS):
                    per[order[part * len(order) // PARTITIONS]].append(part)
                assignments = [S.SyncGroupRequestAssignment(member_id=m, assignment=_assignment(ps))
                               for m, ps in per.items()]
            self.note(f"c{c.cid} syncs gen {c.generation}{' as leader' if members else ''}")
            self.write(s.sync_group(S(group_id=GROUP, generation_id=c.generation, member_id=c.member_id,
                                       assignments=assignments), 3, self._token(c, "sync", 3), self.now))
        elif c.state == "stable":
            roll = self.rng.random()
            if roll < 0.45 and c.assignment:
                C = w.OffsetCommitRequest
                offsets = {}
                for part in c.assignment:
                    self.positions[GROUP][part] += self.rng.randint(1, 5)
                    offsets[part] = self.positions[GROUP][part]
                body = C(group_id=GROUP, generation_id_or_member_epoch=c.generation, member_id=c.member_id,
                         topics=[C.OffsetCommitRequestTopic(name=TOPIC, partitions=[
                             C.OffsetCommitRequestPartition(partition_index=p, committed_offset=o,
                                                            committed_metadata="")
                             for p, o in offsets.items()])])
                tag = "commit:" + ",".join(f"{p}={o}" for p, o in offsets.items())
                self.note(f"c{c.cid} commits {offsets}")
                self.write(s.offset_commit(body, 8, self._token(c, tag, 8), self.now))
            elif roll < 0.97:
                body = w.HeartbeatRequest(group_id=GROUP, generation_id=c.generation, member_id=c.member_id)
                self.write(s.heartbeat(body, 3, self._token(c, "heartbeat", 3), self.now))
            else:
                L = w.LeaveGroupRequest
                self.note(f"c{c.cid} leaves")
                self.write(s.leave_group(L(group_id=GROUP, members=[L.MemberIdentity(member_id=c.member_id)]),
                                          3, self._token(c, "leave", 3), self.now))

    # ------------------------------------------------------------------------------------------------ faults
    def _move_coordinator(self) -> None:
        if not self.move():
            return
        loaded = self.shard.groups.get(GROUP)
        self._generation = loaded.generation if loaded is not None else 0
        self.counts["moves"] += 1
        self._advance_hw()
        self.check(force=True)

    # ------------------------------------------------------------------------------------------------ checks
    def check(self, force: bool = False) -> None:
        shard = self.shard
        lead = self.logs[self.leader]
        for b in self.isr:
            if self.logs[b][:self.hw] != lead[:self.hw]:
                self.fail(f"in-sync broker {b} disagrees with the leader below the high watermark {self.hw}")
        folded = self._folded  # below the high watermark the log never changes, so the fold is incremental
        for key, value in lead[self._folded_to:self.hw]:
            rec = cr.decode(key, value)
            if rec.record_type == 1:
                k = (rec.key.group, rec.key.partition)
                if value is None:
                    folded.pop(k, None)
                else:
                    folded[k] = rec.value.offset
        self._folded_to = self.hw
        view = {(g, tp[1]): e.offset for g in (GROUP, NEXT_GROUP) for tp, e in shard.committed.get(g, {}).items()}
        if view != folded:
            self.fail(f"the committed view {view} is not the log below the high watermark {folded}")
        for group, acked in self.acked.items():
            for part, off in acked.items():
                if view.get((group, part), -1) < off:
                    self.fail(f"{group} partition {part}: commit of {off} was answered, the coordinator says "
                              f"{view.get((group, part))}")
        self._checks += 1
        if self._checks % 20 and not force:
            return self._check_assignments(shard)
        self.counts["reload_checks"] += 1
        again = self.load_fresh()
        if again.offsets != shard.offsets or again.committed != shard.committed:
            self.fail("a shard loaded from the leader's log differs from the live one")
        n, n2 = shard.consumer_groups.get(NEXT_GROUP), again.consumer_groups.get(NEXT_GROUP)
        if (n is None) != (n2 is None) or (n is not None and (
                (n.epoch, n.assignment_epoch, n.target, n.topics) != (n2.epoch, n2.assignment_epoch, n2.target,
                                                                      n2.topics)
                or {m: (x.epoch, x.state, x.assigned, x.revoking, x.subscribed) for m, x in n.members.items()}
                != {m: (x.epoch, x.state, x.assigned, x.revoking, x.subscribed) for m, x in n2.members.items()})):
            self.fail("the consumer group loaded from the log differs from the live one")
        if _share_view(shard.share_groups.get(SHARE_GROUP)) != _share_view(again.share_groups.get(SHARE_GROUP)):
            self.fail("the share group loaded from the log differs from the live one")
        g, g2 = shard.groups.get(GROUP), again.groups.get(GROUP)
        if g2 is not None and (g is None or g2.generation > g.generation):
            self.fail(f"the log's generation {g2.generation} is ahead of the live group's "
                      f"{None if g is None else g.generation}")
        self._check_assignments(shard)

    def _check_assignments(self, shard: GroupShard) -> None:
        sh = shard.share_groups.get(SHARE_GROUP)
        if sh is not None:  # a share group assigns only partitions whose share state exists
            initialized = sh.initialized.get(TOPIC_ID)
            for mid, target in sh.target.items():
                extra = target.get(TOPIC_ID, set()) - (initialized.partitions if initialized else set())
                if extra:
                    self.fail(f"{SHARE_GROUP}: {mid} is assigned uninitialized partitions {sorted(extra)}")
        n = shard.consumer_groups.get(NEXT_GROUP)
        if n is not None:  # a partition is never held by two members (assigned or still being revoked)
            held: dict[int, str] = {}
            for m in n.members.values():
                for p in m.assigned.get(TOPIC_ID, set()) | m.revoking.get(TOPIC_ID, set()):
                    if p in held:
                        self.fail(f"{NEXT_GROUP}: partition {p} held by {held[p]} and {m.member_id}")
                    held[p] = m.member_id
        g = shard.groups.get(GROUP)
        if g is not None and g.generation > self._generation:
            self.counts["generations"] += g.generation - self._generation
            self._generation = g.generation
        if g is not None and g.state == STABLE:
            self.counts["stable_checks"] += 1
            seen: set[int] = set()
            for m in g.members.values():
                parts = set(_parts(m.assignment))
                if parts & seen:
                    self.fail(f"partitions {sorted(parts & seen)} are assigned twice in generation {g.generation}")
                seen |= parts

    # ------------------------------------------------------------------------------------------------ run
    def step(self) -> None:
        roll = self.rng.random()
        if roll < 0.4:
            self._consumer_step(self.rng.choice(self.consumers))
        elif roll < 0.5:
            self._next_step(self.rng.choice(self.next_consumers))
        elif roll < 0.58:
            self._share_step(self.rng.choice(self.share_consumers))
        elif roll < 0.75:
            self._replicate(force=False)
        elif roll < 0.9:
            self.now += self.rng.choice((10, 100, 500, 2000))
            r = self.shard.tick(self.now)
            if r.records or r.replies:
                self.note(f"tick: {len(r.records)} records, {len(r.replies)} replies")
            self.write(r)
        elif roll < 0.94:
            if len(self.alive) >= 2:
                self._move_coordinator()
        elif roll < 0.97:
            self._revive()
        else:
            c = self.rng.choice(self.consumers + self.next_consumers + self.share_consumers)
            c.stalled_until = self.now + self.rng.choice((2000, SESSION_MS + 2000, 47_000))
            self.note(f"{type(c).__name__} {c.cid} stalls until {c.stalled_until}")

    def run(self) -> dict:
        for _ in range(self.events):
            self.step()
            self.check()
        self.converge()
        return self.counts

    def converge(self, steps: int = 4000) -> None:
        """No more faults: every broker back, everyone catches up; the group must settle."""
        while len(self.alive) < len(BROKERS):
            self._revive()
        for c in self.consumers + self.next_consumers + self.share_consumers:
            c.stalled_until = 0
        for _ in range(steps):
            for c in self.consumers:
                self._consumer_step(c)
            for c in self.next_consumers:
                self._next_step(c)
            for c in self.share_consumers:
                self._share_step(c)
            self._replicate(force=True)
            self.now += 100
            self.write(self.shard.tick(self.now))
            self._replicate(force=True)
            self.check()
            g = self.shard.groups.get(GROUP)
            n = self.shard.consumer_groups.get(NEXT_GROUP)
            next_settled = (n is not None and n.state() == cgp.GROUP_STABLE
                            and len(n.members) == len(self.next_consumers)
                            and all(c.epoch == n.epoch and c.owned == n.members[c.member_id].assigned.get(TOPIC_ID,
                                                                                                         set())
                                    for c in self.next_consumers if c.member_id in n.members)
                            and sorted(p for c in self.next_consumers for p in c.owned) == list(range(PARTITIONS)))
            if (g is not None and g.state == STABLE and not self.pending and next_settled and self._share_settled()
                    and all(c.state == "stable" and c.generation == g.generation and c.member_id in g.members
                            for c in self.consumers)
                    and len(g.members) == len(self.consumers)):
                owned = sorted(p for c in self.consumers for p in c.assignment)
                if owned != list(range(PARTITIONS)):
                    self.fail(f"the settled group owns partitions {owned}")
                return
        g = self.shard.groups.get(GROUP)
        n = self.shard.consumer_groups.get(NEXT_GROUP)
        sh = self.shard.share_groups.get(SHARE_GROUP)
        self.fail(f"the groups did not settle: share group {sh and (sh.epoch, sh.assignment_epoch)}, share members "
                  f"{[(c.cid, c.epoch, sorted(c.owned)) for c in self.share_consumers]}; classic {g and g.state}, "
                  f"consumers "
                  f"{[(c.cid, c.state, c.generation) for c in self.consumers]}; consumer group "
                  f"{n and (n.state(), n.epoch)}, members {[(c.cid, c.epoch, sorted(c.owned)) for c in self.next_consumers]}")


    def _share_settled(self) -> bool:
        """Every share member in the group at its epoch, owning what the group says, each a share (6 partitions
        among 3 members: 2 each) and together every partition."""
        sh = self.shard.share_groups.get(SHARE_GROUP)
        if sh is None or len(sh.members) != len(self.share_consumers):
            return False
        for c in self.share_consumers:
            m = sh.members.get(c.member_id)
            if m is None or c.epoch != sh.epoch or m.epoch != sh.epoch or c.owned != m.assigned.get(TOPIC_ID, set()):
                return False
        owned = [p for c in self.share_consumers for p in c.owned]
        return sorted(owned) == list(range(PARTITIONS))


def _share_view(g) -> tuple | None:
    """What a share group must hold alike live and loaded from the log."""
    if g is None:
        return None
    return (g.epoch, g.metadata_hash, g.assignment_epoch, g.target,
            {m: (x.epoch, x.previous_epoch, x.assigned, x.subscribed) for m, x in g.members.items()},
            {t: i.partitions for t, i in g.initialized.items()}, {t: i.partitions for t, i in g.initializing.items()})


def main(argv: list[str] | None = None) -> int:
    return replay_main(GroupSim, argv)


if __name__ == "__main__":
    raise SystemExit(main())
