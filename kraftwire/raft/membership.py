"""The core's view of quorum membership (KIP-853): kraft.version, the voter set history, the pending change.

kraft.version 0 (static ``controller.quorum.voters``): the set is fixed and nothing in the log changes it — exactly
the behaviour before KIP-853. kraft.version 1: the base set comes from the newest snapshot carrying a VotersRecord (the
bootstrap checkpoint ``storage format --standalone``/``--initial-controllers`` wrote, or any later snapshot), or —
for a controller formatted with ``--no-initial-controllers`` that has nothing yet — from the quorum itself (the edge
asks it, and passes the set in ``RaftConfig.voter_set``); every KRaftVersionRecord/VotersRecord in the log then moves
it, at its offset, from the moment the record is appended (``scan``), and a truncation takes it back.

The leader's single pending change (AddRaftVoter or RemoveRaftVoter) lives here too: Kafka allows one at a time, and
only once the last change is committed.
"""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.errors import ProtocolError
from kraftwire.ids import ReplicaKey
from kraftwire.raft.voter_set import BEFORE_LOG, VoterHistory, VoterNode, VoterSet
from kraftwire.records import read_batches
from kraftwire.records.control import KRAFT_VERSION, KRAFT_VOTERS, decode_control_record

#: the control flag in a batch's attributes (the low byte of the int16 at byte 21 of the batch header)
_CONTROL_FLAG = 0x20
_ATTRIBUTES_LOW_BYTE = 22


@dataclass(slots=True)
class PendingChange:
    """An AddRaftVoter/RemoveRaftVoter the leader has accepted: answered once ``offset`` (its VotersRecord) is
    committed, or with REQUEST_TIMED_OUT at ``deadline_ms`` — unless ``answered`` already (AddRaftVoter v1 with
    AckWhenCommitted false, answered at the append): it still blocks another change until then, as Kafka's
    ``ChangeVoterHandlerState`` does."""

    kind: str  # "add" | "remove"
    request: object  # the core request to answer
    key: ReplicaKey
    offset: int = -1  # the VotersRecord's offset, -1 until appended
    deadline_ms: int = 0
    answered: bool = False


class Membership:
    def __init__(self, config, log) -> None:
        self.config = config
        self.dynamic = config.kraft_version >= 1
        self.kraft_version = config.kraft_version
        self.local_key = ReplicaKey(config.node_id, config.directory_id)
        self.pending: PendingChange | None = None
        #: bumped whenever ``voters()`` may have changed (the edge re-reads endpoints when it moves)
        self.version = 0
        self.history = VoterHistory(self._fallback_base())
        self.rebuild(log)

    def _fallback_base(self) -> VoterSet:
        if self.config.voter_set is not None:
            return self.config.voter_set
        return VoterSet.from_ids(self.config.voters)

    # --- reading -------------------------------------------------------------------------------------------------
    def voters(self) -> VoterSet:
        return self.history.last()

    def is_local_voter(self) -> bool:
        return self.config.node_id >= 0 and self.voters().is_voter(self.local_key)

    def acts_as_voter(self, high_watermark: int) -> bool:
        """A voter of the newest set; or one the newest set removed, while that record may still be uncommitted (at
        or above ``high_watermark``): it stays a voter of the set before it, though its own vote no longer counts.
        Else a leader that removed itself from two voters and lost leadership before the other voter fetched the
        record holds the longest log, which the remaining voter needs to be elected, and would never run itself: no
        leader ever again (the sim's grow_and_shrink found it; openraft#2091 is the same)."""
        if self.is_local_voter():
            return True
        last = self.history.last_offset()
        if not self.dynamic or self.config.node_id < 0 or last == BEFORE_LOG or last < high_watermark:
            return False
        return self.history.at(last - 1).is_voter(self.local_key)

    def local_node(self) -> VoterNode:
        """This node as a voter entry: its key, its controller endpoints, the kraft.version range it supports."""
        from kraftwire.raft.dynamic_voters import KRAFT_VERSION_RANGE

        return VoterNode(self.local_key, tuple(self.config.local_endpoints), *KRAFT_VERSION_RANGE)

    def needs_update(self) -> bool:
        """Kafka's ``voterNodeNeedsUpdate``: this voter's entry in the set in force differs from what it is now."""
        if not self.dynamic or self.kraft_version < 1 or not self.config.local_endpoints:
            return False
        entry = self.voters().node(self.config.node_id)
        return entry is not None and entry.is_voter(self.local_key) and entry != self.local_node()

    def uncommitted_change(self, high_watermark: int | None) -> bool:
        """The newest voter set's record is not committed yet (or the high watermark is unknown)."""
        last = self.history.last_offset()
        return high_watermark is None or (last != BEFORE_LOG and last >= high_watermark)

    # --- following the log ---------------------------------------------------------------------------------------
    def rebuild(self, log) -> None:
        """From scratch: the newest snapshot naming voters, then the log's control records (kraft.version 1)."""
        self.version += 1
        if not self.dynamic:
            return
        kraft_version, history = read_log_voters(log, self._fallback_base())
        self.kraft_version = max(self.kraft_version, kraft_version)
        self.history = history if history is not None else VoterHistory(self._fallback_base())

    def scan(self, data, batches) -> int:
        """Take the KRaftVersion/Voters records of the batches in ``data`` (``batches``: their ``BatchInfo``s when
        known, so data batches are skipped without decoding). Returns the last offset seen (-1 for none)."""
        last = -1
        if batches is not None:
            for info in batches:
                last = info.last_offset
                if not self.dynamic:
                    continue
                if data[info.position + _ATTRIBUTES_LOW_BYTE] & _CONTROL_FLAG:
                    self._control_batch(bytes(data[info.position:info.position + info.size]))
            return last
        for batch in read_batches(data):
            last = batch.last_offset
            if self.dynamic and batch.is_control:
                self._take(batch)
        return last

    def _control_batch(self, raw: bytes) -> None:
        for batch in read_batches(raw):
            self._take(batch)

    def _take(self, batch) -> None:
        before = self.history.last_offset()
        self.kraft_version = _take_batch(batch, self.history, self.kraft_version)
        if self.history.last_offset() != before:
            self.version += 1

    def append(self, offset: int, voters: VoterSet) -> None:
        """The leader appended a VotersRecord at ``offset``."""
        self.history.add(offset, voters)
        self.version += 1

    def truncate(self, end_offset: int) -> bool:
        changed = self.history.truncate(end_offset)
        if changed:
            self.version += 1
        return changed


def _take_batch(batch, history: VoterHistory, kraft_version: int) -> int:
    """The KRaftVersion and Voters records of a control batch into ``history``; returns the kraft.version after."""
    for record in batch:
        try:
            ctype, value = decode_control_record(record.key, record.value)
        except ProtocolError:
            continue  # not ours to judge here: listeners see every record
        if ctype == KRAFT_VERSION:
            kraft_version = value.kraft_version
        elif ctype == KRAFT_VOTERS and record.offset > history.last_offset():
            history.add(record.offset, VoterSet.from_record(value))
    return kraft_version


def read_log_voters(log, base: VoterSet | None = None) -> tuple[int, VoterHistory | None]:
    """(kraft.version, voter history) a log names: its newest snapshot carrying a VotersRecord (at that snapshot's
    last offset; -1 for the bootstrap checkpoint), then every KRaftVersion/Voters record of the log after it. With
    no snapshot naming a set, the history starts from ``base`` (the set learned elsewhere), or from the log's first
    VotersRecord when ``base`` is None. None for the history when nothing names a voter set."""
    from kraftwire.raft.dynamic_voters import read_voter_set

    kraft_version, history = 0, None
    for sid in sorted(log.snapshot_ids(), reverse=True):
        reader = log.read_snapshot(sid)
        if reader is None:
            continue
        try:
            kraft_version, record = read_voter_set(reader.records())
        finally:
            reader.close()
        if record is not None:
            history = VoterHistory(VoterSet.from_record(record), sid.end_offset - 1)
            break
    offset, end = log.start_offset(), log.end_offset()
    while offset < end:
        data = log.read(offset, 1 << 20).records
        last = -1
        for batch in read_batches(data) if data else ():
            last = batch.last_offset
            if not batch.is_control:
                continue
            if history is None:  # no snapshot named a set: start from base, or from this batch's first set
                first = base if base is not None else _first_voters(batch)
                if first is None:
                    kraft_version = _take_batch(batch, VoterHistory(VoterSet(())), kraft_version)
                    continue
                history = VoterHistory(first)
            kraft_version = _take_batch(batch, history, kraft_version)
        if last < offset:
            break
        offset = last + 1
    return kraft_version, history


def _first_voters(batch) -> VoterSet | None:
    for record in batch:
        try:
            ctype, value = decode_control_record(record.key, record.value)
        except ProtocolError:
            continue
        if ctype == KRAFT_VOTERS:
            return VoterSet.from_record(value)
    return None
