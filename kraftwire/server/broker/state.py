"""The state rebuilt from the log, in one place: producer state (idempotence) from data-batch headers, committed
group offsets and last group generations from kraftwire control records. ``apply(batch)`` folds one batch in;
``image()``/``load()`` turn the whole state into snapshot records and back.

Snapshot image format (kraftwire's own; one JSON object per record value, ``"kw"`` names the kind):
``{"kw":"producer","id":P,"epoch":E,"batches":[[first seq, last seq, first offset, last offset], ...]}``,
``{"kw":"offset","group":G,"topic":T,"partition":N,"offset":O,"leader_epoch":L,"metadata":M}``,
``{"kw":"generation","group":G,"generation":N}``. Values of any other shape are ignored on load.
"""

from __future__ import annotations

import json
from collections import deque

from kraftwire.errors import KraftwireError
from kraftwire.records.control import KRAFTWIRE_GROUP_GENERATION, KRAFTWIRE_GROUP_OFFSET, decode_control_record
from kraftwire.replica.producers import ProducerEntry, ProducerTable

class LogState:
    """``track_pending``: remember what each group offset record replaced until ``commit_to`` passes it, for a
    state folded from uncommitted data (the leader's scan) that must still answer with committed offsets."""

    def __init__(self, *, track_pending: bool = False) -> None:
        self.track_pending = track_pending
        self.producers = ProducerTable()
        #: (group, topic, partition) -> (offset, leader epoch, metadata)
        self.offsets: dict[tuple[str, str, int], tuple[int, int, str | None]] = {}
        self.generations: dict[str, int] = {}
        #: group offset writes not known to be committed yet, oldest first: (log offset of the record, key, the
        #: value the key had before it, or None). ``committed_offsets`` reads through them; ``commit_to`` drops
        #: the ones the high watermark has passed.
        self.pending: deque[tuple[int, tuple[str, str, int], tuple[int, int, str | None] | None]] = deque()
        #: partition leader epoch of the last batch folded in (-1: none)
        self.last_epoch = -1

    def clear(self) -> None:
        self.producers.clear()
        self.offsets.clear()
        self.generations.clear()
        self.pending.clear()
        self.last_epoch = -1

    # ------------------------------------------------------------------------------------------------ folding
    def apply(self, b) -> None:
        self.last_epoch = b.partition_leader_epoch
        if b.is_control:
            self._apply_control(b)
        elif b.producer_id >= 0:
            self.apply_producer(b.producer_id, b.producer_epoch, b.base_sequence, b.last_offset_delta + 1,
                                b.base_offset, b.last_offset)

    def apply_producer(self, pid: int, epoch: int, first_seq: int, count: int, first_offset: int,
                       last_offset: int) -> None:
        self.producers.apply(pid, epoch, first_seq, count, first_offset, last_offset)

    def _apply_control(self, b) -> None:
        for r in b:
            try:
                ctype, msg = decode_control_record(r.key, r.value)
            except KraftwireError:
                continue  # Raft's own control records (LeaderChange...) and unknown kinds
            if ctype == KRAFTWIRE_GROUP_OFFSET:
                key = (msg.group_id, msg.topic, msg.partition)
                if self.track_pending:
                    self.pending.append((r.offset, key, self.offsets.get(key)))
                if msg.offset < 0:
                    self.offsets.pop(key, None)
                else:
                    self.offsets[key] = (msg.offset, msg.leader_epoch, msg.metadata)
            elif ctype == KRAFTWIRE_GROUP_GENERATION:
                self.generations[msg.group_id] = max(self.generations.get(msg.group_id, 0), msg.generation_id)

    # ------------------------------------------------------------------------------------------------ committed view
    def commit_to(self, high_watermark: int) -> None:
        """Offsets below ``high_watermark`` are committed: forget what their group offset records replaced."""
        pending = self.pending
        while pending and pending[0][0] < high_watermark:
            pending.popleft()

    def committed_offsets(self, high_watermark: int) -> dict[tuple[str, str, int], tuple[int, int, str | None]]:
        """The group offsets as the log holds them below ``high_watermark``: a write at or above it is replaced by
        the value it overwrote (a leader may still lose what it has not committed; Kafka's coordinator likewise
        serves a commit only once its append completed)."""
        self.commit_to(high_watermark)
        out = dict(self.offsets)
        undone = set()
        for _offset, key, previous in self.pending:
            if key in undone:
                continue
            undone.add(key)  # the oldest uncommitted write of a key holds its committed value
            if previous is None:
                out.pop(key, None)
            else:
                out[key] = previous
        return out

    # ------------------------------------------------------------------------------------------------ image
    def image(self) -> list[bytes]:
        out = []
        for pid, e in sorted(self.producers.items()):
            out.append({"kw": "producer", "id": pid, "epoch": e.epoch, "batches": [list(x) for x in e.batches]})
        for (group, topic, part), (offset, epoch, meta) in sorted(self.offsets.items()):
            out.append({"kw": "offset", "group": group, "topic": topic, "partition": part, "offset": offset,
                        "leader_epoch": epoch, "metadata": meta})
        for group, generation in sorted(self.generations.items()):
            out.append({"kw": "generation", "group": group, "generation": generation})
        return [json.dumps(o, separators=(",", ":")).encode() for o in out]

    def load(self, values) -> bool:
        """Replace the state by a snapshot image; False (state left empty) if a value is not kraftwire's."""
        self.clear()
        for value in values:
            try:
                o = json.loads(value)
                kind = o["kw"]
            except (ValueError, TypeError, KeyError):
                self.clear()
                return False
            if kind == "producer":
                e = self.producers[o["id"]] = ProducerEntry(o["epoch"])
                for first_seq, last_seq, first_off, last_off in o["batches"]:
                    e.batches.append((first_seq, last_seq, first_off, last_off))
                    e.last_seq = last_seq
            elif kind == "offset":
                self.offsets[(o["group"], o["topic"], o["partition"])] = (o["offset"], o["leader_epoch"],
                                                                          o["metadata"])
            elif kind == "generation":
                self.generations[o["group"]] = o["generation"]
        return True
