"""Safety invariants of a simulated quorum, checked after every simulator event.

Each check raises ``InvariantViolation(name, detail)``. The rules (Kafka's RaftEventSimulationTest plus what issue 5
adds):

* single-leader      — at most one leader per epoch, across every election state ever persisted or held in memory.
* monotonic-epoch    — a node's persisted epoch never decreases (a wiped node starts over).
* monotonic-hw       — a leader's high watermark never decreases within its epoch, and once a leader of a later
                       epoch knows its high watermark it is at least every earlier leader's.
* majority-hw        — a majority of voters have *flushed* their logs up to the highest committed offset.
* no-double-vote     — a voter grants at most one candidate per epoch (a candidate votes for itself).
* durable-before-send — a granted vote, a candidacy, a BeginQuorumEpoch leave only after the election state saying
                       so is persisted; a Fetch never asks from past the sender's flushed offset; a leader never
                       sends records past its flushed offset.
* leader-restart     — a node never becomes leader again in an epoch it led before a restart.
* snapshot-at-log-start — a log that starts above 0 starts exactly at its earliest snapshot's end offset.
* leader-never-loads-snapshot, listener-order — checked by the simulator's state machine.
* committed-data     — the state machines of all nodes apply the same value sequence; and every batch below any node's high watermark is byte-identical to the batch first committed
                       at that offset anywhere; committed data is never lost or rewritten.

kraft.version 1 clusters (KIP-853, ``enable_dynamic``) replace majority-hw, whose fixed voter set no longer exists,
with two rules over the voter set in force, which each check reads from the leader's *log* (its newest VotersRecord,
else the committed history's, else the bootstrap set), not from the core's own bookkeeping:

* majority-of-voter-set — whenever a leader's high watermark advances to ``h``, a majority of the voter set in force
                       in that leader's log holds ``[0, h)`` durably: each counted voter is the exact ``ReplicaKey``
                       (id *and* directory id: a wiped node's new disk is not the voter its old one was), has flushed
                       past ``h - 1``, and holds the leader's batch at ``h - 1``. A voter whose disk was wiped counts
                       with what that disk held when it was destroyed (a fetch it sent before is what the leader saw).
                       Checked when the watermark moves, not continuously: a single-server change legitimately leaves
                       a committed offset on fewer than a majority of the *next* set until that set commits.
* one-voter-change   — a leader's log never holds two VotersRecords above the committed offset (Kafka's one
                       uncommitted change at a time).
"""

from __future__ import annotations

import bisect

from kraftwire.errors import ProtocolError
from kraftwire.ids import NO_ID
from kraftwire.raft import messages as m
from kraftwire.raft.election import ElectionState
from kraftwire.raft.voter_set import VoterSet
from kraftwire.records import read_batches, validate_batches
from kraftwire.records.control import KRAFT_VOTERS, decode_control_record

#: the control flag in a batch's attributes (the low byte of the int16 at byte 21 of the batch header)
_CONTROL_FLAG = 0x20
_ATTRIBUTES_LOW_BYTE = 22


def voter_records(data) -> list[tuple[int, VoterSet]]:
    """(offset, voter set) of every VotersRecord in the batches of ``data`` (control batches only are decoded)."""
    found = []
    for info in validate_batches(data, check_records=False).batches:
        if not data[info.position + _ATTRIBUTES_LOW_BYTE] & _CONTROL_FLAG:
            continue
        for batch in read_batches(bytes(data[info.position:info.position + info.size])):
            for record in batch:
                try:
                    ctype, value = decode_control_record(record.key, record.value)
                except ProtocolError:
                    continue
                if ctype == KRAFT_VOTERS:
                    found.append((record.offset, VoterSet.from_record(value)))
    return found


class InvariantViolation(AssertionError):
    def __init__(self, name: str, detail: str) -> None:
        super().__init__(f"invariant {name} violated: {detail}")
        self.name = name
        self.detail = detail


class Invariants:
    def __init__(self, voters: frozenset[int], *, relaxed_for_wipe: bool = False) -> None:
        self.voters = voters
        self.relaxed = relaxed_for_wipe
        self.leaders: dict[int, int] = {}  # epoch -> leader id
        self.votes: dict[tuple[int, int], int] = {}  # (voter, epoch) -> candidate id
        self.persisted_epoch: dict[int, int] = {}
        self.leader_hw: dict[int, int] = {}  # epoch -> highest HW its leader reported
        self.led: dict[tuple[int, int], int] = {}  # (node, epoch) -> incarnation that led it
        self.committed: dict[int, tuple[int, bytes]] = {}  # base offset -> (last offset, batch bytes)
        self.committed_bases: list[int] = []
        self.max_committed = 0
        self.checked_upto: dict[int, int] = {}
        self.checks = 0
        # kraft.version 1 (enable_dynamic): the bootstrap voter set, the VotersRecords of the committed history,
        # the disks that were wiped (directory id -> their log as it was), the highest HW checked per epoch
        self.dynamic_base: VoterSet | None = None
        self.committed_voters: list[tuple[int, VoterSet]] = []
        self.lost_disks: dict = {}
        self.justified_hw: dict[int, int] = {}
        self._tail_cache: dict[int, tuple] = {}

    def enable_dynamic(self, base: VoterSet) -> None:
        self.dynamic_base = base

    @property
    def dynamic(self) -> bool:
        return self.dynamic_base is not None

    def fail(self, name: str, detail: str) -> None:
        raise InvariantViolation(name, detail)

    # --- election state -------------------------------------------------------------------------------------------
    def lose_disk(self, directory_id, log) -> None:
        """A disk (metadata directory) was wiped: remember what it held, for the acknowledgements already sent."""
        if directory_id is not None:
            self.lost_disks[directory_id] = log

    def forget(self, node_id: int) -> None:
        """A node's disk was wiped: its votes and epochs start over."""
        self.persisted_epoch.pop(node_id, None)
        for key in [k for k in self.votes if k[0] == node_id]:
            del self.votes[key]
        self.checked_upto.pop(node_id, None)

    def on_persist(self, node_id: int, state: ElectionState) -> None:
        previous = self.persisted_epoch.get(node_id, 0)
        if state.epoch < previous:
            self.fail("monotonic-epoch", f"node {node_id} persisted epoch {state.epoch} after {previous}")
        self.persisted_epoch[node_id] = state.epoch
        if state.leader_id != NO_ID:
            self._leader(state.epoch, state.leader_id, f"persisted by node {node_id}")
        if state.voted_key is not None:
            self._vote(node_id, state.epoch, state.voted_key.id)

    def _leader(self, epoch: int, leader_id: int, where: str) -> None:
        known = self.leaders.setdefault(epoch, leader_id)
        if known != leader_id:
            self.fail("single-leader", f"epoch {epoch} has leaders {known} and {leader_id} ({where})")

    def _vote(self, voter: int, epoch: int, candidate: int) -> None:
        known = self.votes.setdefault((voter, epoch), candidate)
        if known != candidate and not self.relaxed:
            self.fail("no-double-vote", f"voter {voter} voted for {known} and {candidate} in epoch {epoch}")

    def on_leader(self, node_id: int, epoch: int, incarnation: int, high_watermark: int | None) -> None:
        self._leader(epoch, node_id, f"node {node_id} is leader")
        first = self.led.setdefault((node_id, epoch), incarnation)
        if first != incarnation:
            self.fail("leader-restart", f"node {node_id} led epoch {epoch} again after a restart")
        if high_watermark is None:
            return
        before = self.leader_hw.get(epoch, -1)
        if high_watermark < before:
            self.fail("monotonic-hw", f"leader {node_id} epoch {epoch} high watermark {high_watermark} after {before}")
        earlier = max((hw for e, hw in self.leader_hw.items() if e < epoch), default=-1)
        if high_watermark < earlier:
            self.fail("monotonic-hw", f"leader {node_id} epoch {epoch} high watermark {high_watermark} < {earlier}")
        self.leader_hw[epoch] = high_watermark

    # --- messages -------------------------------------------------------------------------------------------------
    def on_send(self, msg: m.Message, durable: ElectionState | None, flushed_offset: int) -> None:
        src = msg.src
        if isinstance(msg, m.VoteResponse) and msg.vote_granted and not msg.pre_vote:
            self._vote(src, msg.leader_epoch, msg.dst)
            if durable is None or durable.epoch != msg.leader_epoch or durable.voted_key is None or (
                durable.voted_key.id != msg.dst
            ):
                self.fail("durable-before-send", f"node {src} granted {msg.dst} in epoch {msg.leader_epoch} "
                          f"but persisted {durable}")
        elif isinstance(msg, m.VoteRequest) and not msg.pre_vote:
            if durable is None or durable.epoch != msg.candidate_epoch or durable.voted_key is None or (
                durable.voted_key.id != src
            ):
                self.fail("durable-before-send", f"candidate {src} asked for votes in {msg.candidate_epoch} "
                          f"but persisted {durable}")
            if msg.last_offset > flushed_offset:
                self.fail("durable-before-send", f"candidate {src} claims offset {msg.last_offset}, "
                          f"flushed {flushed_offset}")
        elif isinstance(msg, m.BeginQuorumEpochRequest):
            if durable is None or durable.epoch != msg.new_leader_epoch or durable.leader_id != src:
                self.fail("durable-before-send", f"leader {src} began epoch {msg.new_leader_epoch} "
                          f"but persisted {durable}")
        elif isinstance(msg, m.FetchRequest):
            if msg.fetch_offset > flushed_offset:
                self.fail("durable-before-send", f"node {src} fetches from {msg.fetch_offset} but flushed only "
                          f"{flushed_offset}")
        elif isinstance(msg, m.FetchResponse) and msg.records:
            last = validate_batches(msg.records, check_records=False).last_offset
            if last >= flushed_offset:
                self.fail("durable-before-send", f"leader {src} sent records up to {last}, flushed {flushed_offset}")

    # --- logs -----------------------------------------------------------------------------------------------------
    def check_committed(self, node_id: int, log) -> None:
        """Compare the batches below this node's high watermark with what was committed first."""
        hw = log.high_watermark()
        start = log.start_offset()
        checked = max(min(self.checked_upto.get(node_id, start), hw), start)
        if hw <= checked:
            self.checked_upto[node_id] = hw
            return
        for base, last, _epoch, data in log.batches():
            if last < checked:
                continue
            if base >= hw:
                break
            known = self.committed.get(base)
            if known is None:
                if last >= hw:
                    self.fail("committed-data", f"node {node_id} high watermark {hw} splits batch {base}..{last}")
                self._check_no_overlap(node_id, base, last)
                self.committed[base] = (last, data)
                bisect.insort(self.committed_bases, base)
                self.max_committed = max(self.max_committed, last + 1)
                if self.dynamic and data[_ATTRIBUTES_LOW_BYTE] & _CONTROL_FLAG:
                    for entry in voter_records(data):
                        bisect.insort(self.committed_voters, entry, key=lambda e: e[0])
            elif known != (last, data):
                self.fail("committed-data", f"node {node_id} holds a different committed batch at offset {base} "
                          f"(epoch {_epoch}) than was committed before")
        self.checked_upto[node_id] = hw

    def _check_no_overlap(self, node_id: int, base: int, last: int) -> None:
        i = bisect.bisect_left(self.committed_bases, base)
        if i > 0:
            prev = self.committed_bases[i - 1]
            if self.committed[prev][0] >= base:
                self.fail("committed-data", f"node {node_id} batch {base}..{last} overlaps committed batch at {prev}")
        if i < len(self.committed_bases) and self.committed_bases[i] <= last:
            self.fail("committed-data", f"node {node_id} batch {base}..{last} overlaps committed batch at "
                      f"{self.committed_bases[i]}")

    def check_snapshot_at_log_start(self, node_id: int, log) -> None:
        start = log.start_offset()
        earliest = log.earliest_snapshot_id()
        if earliest is None:
            if start != 0:
                self.fail("snapshot-at-log-start", f"node {node_id} log starts at {start} without a snapshot")
            return
        if start > earliest.end_offset or (start > 0 and start != earliest.end_offset):
            self.fail("snapshot-at-log-start", f"node {node_id} log start {start}, earliest snapshot {earliest}")

    def check_majority(self, flushed_by_voter: dict[int, int]) -> None:
        if self.relaxed or self.max_committed == 0:
            return
        holding = sum(1 for v in self.voters if flushed_by_voter.get(v, 0) >= self.max_committed)
        if holding < len(self.voters) // 2 + 1:
            self.fail("majority-hw", f"only {holding} of {len(self.voters)} voters flushed up to committed offset "
                      f"{self.max_committed}: {flushed_by_voter}")

    # --- kraft.version 1: the voter set in force ---------------------------------------------------------------------
    def committed_voter_set(self, below: int | None = None) -> VoterSet:
        """The voter set of the committed history (as of offset ``below``, exclusive, when given)."""
        found = self.dynamic_base
        for offset, voters in self.committed_voters:
            if below is not None and offset >= below:
                break
            found = voters
        return found

    def _tail_voters(self, node_id: int, log) -> tuple[int, list[tuple[int, VoterSet]]]:
        """(start, VotersRecords at or above start) of ``log`` from its high watermark, which the committed-data check
        has matched with the committed history below. Cached: a leader's tail only grows."""
        start = max(log.high_watermark(), log.start_offset())
        key = (id(log), start, log.end_offset(), log.last_fetched_epoch())
        cached = self._tail_cache.get(node_id)
        if cached is not None and cached[0] == key:
            return start, cached[1]
        found = voter_records(log.read(start, 1 << 30).records) if start < log.end_offset() else []
        found = [e for e in found if e[0] >= start]
        self._tail_cache[node_id] = (key, found)
        return start, found

    def check_leader_voters(self, node_id: int, epoch: int, log, high_watermark: int | None, holds) -> None:
        """One-voter-change, and majority-of-voter-set when this leader's high watermark moved. ``holds(key)`` is
        the log that is that ``ReplicaKey``'s disk (None: no such disk)."""
        start, tail = self._tail_voters(node_id, log)
        committed = max(self.max_committed, high_watermark if high_watermark is not None else -1)
        above = [offset for offset, _ in tail if offset >= committed]
        if len(above) > 1:
            self.fail("one-voter-change", f"leader {node_id} of epoch {epoch} holds uncommitted VotersRecords at "
                      f"offsets {above} (committed up to {committed})")
        if high_watermark is None or high_watermark <= self.justified_hw.get(epoch, -1):
            return
        self.justified_hw[epoch] = high_watermark
        voters = tail[-1][1] if tail else self.committed_voter_set(below=start)
        last = high_watermark - 1
        mine = _batch_at(log, last)
        holding = []
        for voter in voters.nodes:
            disk = holds(voter.key)
            if disk is None or disk.flushed_offset() < high_watermark or _batch_at(disk, last) != mine:
                continue
            holding.append(voter.id)
        if len(holding) < voters.majority:
            self.fail("majority-of-voter-set", f"leader {node_id} of epoch {epoch} advanced its high watermark to "
                      f"{high_watermark}, but only voters {holding} of the set in force {voters.describe()} hold it")


def _batch_at(log, offset: int):
    """(base offset, bytes) of the batch holding ``offset`` in ``log``, or None."""
    if offset < log.start_offset() or offset >= log.end_offset():
        return None
    data = log.read(offset, 1).records
    info = validate_batches(data, check_records=False).batches
    if not info:
        return None
    return info[0].base_offset, bytes(data[info[0].position:info[0].position + info[0].size])
