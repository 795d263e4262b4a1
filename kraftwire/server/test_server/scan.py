"""One pass over the log in offset order feeding the state rebuilt from it (``state.LogState``: producer state,
group offsets and generations), on every replica alike.

``catch_up()`` reads from where it stopped to the log end. A truncation below that point (a follower dropping a
diverging tail), a log start moving past it (retention, an installed snapshot) or the first call starts again: from
the latest snapshot's image if there is one the log can continue from, else from the log start.

``StateImage`` is the Raft listener that makes that state part of the snapshots: the core asks it for its records at
its position (a batch boundary at or below the high watermark), and they are the state as of exactly that offset, so
the image never holds uncommitted entries. ``CommittedImage`` keeps that state between snapshots and folds in each
commit as it is delivered (a short read of data just written), so a snapshot costs the size of the state, not a
replay of everything committed since the previous snapshot — that replay, tens of MB on the event loop, stalled the
node every few seconds under load.
"""

from __future__ import annotations

import logging
from typing import Callable

from kraftwire.errors import KraftwireError
from kraftwire.log.api import Isolation, ValidationKind
from kraftwire.log.lookup import batches_between
from kraftwire.records import read_batches
from kraftwire.server.test_server.state import LogState

log = logging.getLogger("kraftwire.broker.scan")

SCAN_CHUNK = 8 * 1024 * 1024


def snapshot_values(lg, snapshot_id) -> list[bytes] | None:
    """The values of the data records in a snapshot (its kraftwire state image), or None if it is gone."""
    raw = lg.read_snapshot(snapshot_id)
    if raw is None:
        return None
    try:
        values = []
        for b in read_batches(raw.records(), validate=True):
            if not b.is_control:
                values.extend(r.value for r in b)
        return values
    finally:
        raw.close()


def replay(lg, state, start: int, end: int, isolation: Isolation) -> int:
    """Fold batches [start, end) into ``state`` (anything with ``apply(batch)``: the broker APIs' ``LogState``, the
    broker registry); returns the offset reached."""
    pos = start
    try:
        for b in batches_between(lg, start, end, isolation, first_chunk=SCAN_CHUNK, max_chunk=SCAN_CHUNK):
            state.apply(b)
            pos = b.last_offset + 1
    except KraftwireError:
        pass
    return pos


def base_image(lg, state: LogState, limit: int) -> int:
    """Load the image of the latest snapshot at or below ``limit`` that the log continues; returns where to scan
    from (the log start when there is none)."""
    start = lg.start_offset()
    latest = lg.latest_snapshot_id()
    if latest is not None and start <= latest.end_offset <= min(limit, lg.end_offset()):
        values = snapshot_values(lg, latest)
        if values is not None and state.load(values):
            log.info("broker state loaded from snapshot %d-%d: %d producers, %d committed group offsets",
                     latest.end_offset, latest.epoch, len(state.producers), len(state.offsets))
            state.last_epoch = latest.epoch
            return latest.end_offset
    state.clear()
    if start > 0:
        log.warning("no kraftwire state image at the log start %d: producer state and group offsets older than it "
                    "are unknown", start)
    return start


class LogScan:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.state = LogState(track_pending=True)
        self.scanned_to = -1  # nothing scanned yet (the log is opened by start())
        self._truncations = 0  # the log's truncation count when last checked
        #: set while a Produce appends: the batch is applied by ``appended`` (no read-back)
        self.hold = False
        ctx.watchers.append(self._watch)

    def _watch(self) -> None:
        if not self.hold:
            self.catch_up()

    def catch_up(self) -> None:
        lg = self.ctx.log
        if lg is None:
            return
        end = lg.end_offset()
        if end < self.scanned_to or self.scanned_to < lg.start_offset() or self._truncated_since(lg):
            self.scanned_to = base_image(lg, self.state, end)
        if self.scanned_to < end:
            self.scanned_to = replay(lg, self.state, self.scanned_to, end, Isolation.UNCOMMITTED)
        self.state.commit_to(lg.high_watermark())

    def _truncated_since(self, lg) -> bool:
        """Whether the log no longer holds what was scanned, even if it has grown back past it (a follower may
        truncate and append in one Ready). Looked at only after a truncation; by Raft's log matching, the entry
        before ``scanned_to`` is unchanged exactly when it still has the epoch the scan saw."""
        if lg.truncations == self._truncations:
            return False
        self._truncations = lg.truncations
        epoch = self.state.last_epoch
        if epoch < 0 or self.scanned_to <= lg.start_offset():
            return False
        return lg.validate_offset_and_epoch(self.scanned_to, epoch).kind is not ValidationKind.VALID

    def committed_offsets(self, group: str | None = None) -> dict:
        """The committed group offsets as of now, (group, topic, partition) -> (offset, leader epoch, metadata); with
        ``group``, that group's only, keyed (topic, partition)."""
        self.catch_up()
        view = self.state.committed_offsets(self.ctx.log.high_watermark())
        if group is None:
            return view
        return {(t, p): v for (g, t, p), v in view.items() if g == group}

    def appended(self, first_offset: int, last_offset: int, apply: Callable[[], None]) -> None:
        """This node has just appended offsets [first, last] (as leader): ``apply`` them now if the scan had
        reached them, so the next check does not have to read them back."""
        if self.scanned_to == first_offset:
            apply()
            self.scanned_to = last_offset + 1
            self.state.last_epoch = self.ctx.epoch()


class CommittedImage:
    """A state (anything with ``apply``/``load``/``clear``) folded from the committed log, kept between calls:
    ``advance(lg, position)`` replays only the batches committed since the previous call. It starts again from the
    latest snapshot's image when the log no longer continues from where it stopped (a snapshot was installed, the
    log start moved past it) or the position went back."""

    def __init__(self, make_state: Callable[[], object], base: Callable[..., int] | None = None) -> None:
        self._make = make_state
        self._base = base or base_image  # loads the latest snapshot's image into the state; where to replay from
        self.state = None
        self.offset = 0

    def advance(self, lg, position: int):
        if self.state is None or self.offset > position or self.offset < lg.start_offset():
            self.state = self._make()
            self.offset = self._base(lg, self.state, position)
        if self.offset < position:
            self.offset = replay(lg, self.state, self.offset, position, Isolation.COMMITTED)
        return self.state

    def fold(self, lg, batches) -> None:
        """Fold the committed batches a Raft listener was just handed (``Batch.source``: the codec's batches of the
        listener hub's one read) when they continue exactly where the image stopped; otherwise catch up through
        ``advance`` (the first call, a snapshot installed, the log start moved)."""
        if not batches:
            return
        if self.state is None or self.offset != batches[0].base_offset or self.offset < lg.start_offset():
            self.advance(lg, batches[-1].last_offset + 1)
            return
        state = self.state
        try:
            for b in batches:
                state.apply(b.source)
                self.offset = b.last_offset + 1
        except KraftwireError:
            pass  # as replay(): a batch whose records cannot be read ends the fold there


class StateImage:
    """Raft listener + snapshot source for the broker state (see the module docstring)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.position = 0
        self.image = CommittedImage(LogState)

    def handle_commit(self, batches) -> None:
        if batches:
            self.position = batches[-1].last_offset + 1
            if self.ctx.log is not None:
                self.image.fold(self.ctx.log, batches)

    def handle_load_snapshot(self, reader) -> None:
        self.position = reader.snapshot_id.end_offset

    def handle_leader_change(self, leader) -> None:
        pass

    def snapshot_records(self) -> list[bytes]:
        return self.image.advance(self.ctx.log, self.position).image()
