"""Moving hosted partitions between the broker's log directories (AlterReplicaLogDirs), the file work of the rules in
``kraftwire.replica.log_dir_moves``; mixed into ``ReplicaManager`` beside ``LogDirs``.

* **The future replica.** ``<target>/<topic>-<p>.<hex>-future`` is a partition log of its own, started at the current
  log's start; a task on the event loop copies the current log's batches into it as they are (bounded reads,
  ``replica.alter.log.dirs.io.max.bytes.per.second``), cutting it back when the current log was truncated and
  moving its log start up with the current one's (retention, DeleteRecords), as Kafka's future log follows its
  "leader".
* **The swap.** Once caught up and (with directory assignment) the controller accepted its new directory, the swap
  runs in one turn of the event loop, so no append lands between: the future log is flushed and closed, the old
  directory renamed ``-delete`` (fsync of its root), then the future directory renamed to ``<topic>-<p>`` (fsync of
  the target root), and the partition reopened there. A crash between the two renames leaves only the future
  directory, which the next start promotes because the image already names its directory.
* **Start.** Future directories found at start are promoted or resumed when their partition is hosted
  (``restart_action``); a future directory of a partition no longer hosted goes with it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid

from kraftwire import error_codes as ec
from kraftwire.errors import LogIOError
from kraftwire.log.checkpoint import fsync_dir
from kraftwire.log.partition_log import PartitionLog
from kraftwire.metadata.controller.topics import replica_dir
from kraftwire.replica import log_dir_moves as rules
from kraftwire.replica import replication_quota as rq
from kraftwire.server.runtime.clocks import monotonic_ms
from kraftwire.server.runtime.hosted import Hosted

__all__ = ["IO_MAX_BYTES", "LogDirMoves", "Move"]

log = logging.getLogger("kraftwire.replicas")

IO_MAX_BYTES = "replica.alter.log.dirs.io.max.bytes.per.second"
#: bytes one copy step reads at most (Kafka's replica.fetch.max.bytes default)
COPY_BYTES = 1024 * 1024
#: how long the copy task waits when a step found nothing to copy
IDLE_S = 0.01


class Move:
    """One partition's future replica: its directory's root, its log, its promotion state."""

    __slots__ = ("hp", "root", "log", "state", "truncations")

    def __init__(self, hp: Hosted, root: str, lg: PartitionLog) -> None:
        self.hp = hp
        self.root = root
        self.log = lg
        self.state = rules.NONE
        self.truncations = hp.log.truncations


class LogDirMoves:
    """AlterReplicaLogDirs' moves; mixed into ``ReplicaManager`` (its ``roots``, ``offline_roots``, ``partitions``,
    ``dir_ids``, ``assign``, ``_open``, ``_log_settings``, ``_remove_dir``, ``dir_failed``, ``cleaning``)."""

    def _init_moves(self) -> None:
        self.moves: dict[tuple[str, int], Move] = {}
        self._preferred: dict[tuple[str, int], str] = {}  # targets of partitions not hosted yet
        self._found_future: dict[tuple[str, int], tuple[str, str]] = {}  # at start: key -> (root, directory)
        self._mover: asyncio.Task | None = None
        self.alter_dirs_quota = rq.ReplicationQuota()

    # ------------------------------------------------------------------------------------------------ the request
    def alter_log_dirs(self, wanted: dict[tuple[str, int], str], image) -> dict[tuple[str, int], int]:
        """Move each partition to its log directory (``wanted``: (topic, index) -> path); the error code of each."""
        out = {}
        for key, path in wanted.items():
            hp = self.partitions.get(key)
            topic = image.topic(key[0])
            known = topic is not None and key[1] in topic.partitions
            error = rules.alter_error(key[0], key[1], path, self.roots, self.offline_roots, hp is not None,
                                      hp is not None and hp.failed, known)
            if error in (ec.REPLICA_NOT_AVAILABLE, ec.UNKNOWN_TOPIC_OR_PARTITION):
                self._preferred[key] = path  # created there when it comes (Kafka's preferredLogDirs)
            elif error == ec.NONE:
                error = self._alter_one(hp, path)
            out[key] = error
        return out

    def _alter_one(self, hp: Hosted, path: str) -> int:
        key = (hp.topic, hp.index)
        move = self.moves.get(key)
        action = rules.move_action(path, hp.root, move.root if move is not None else None)
        if action == rules.CANCEL or (action == rules.START and move is not None):
            self._cancel_move(key, "another log directory was asked")
        if action != rules.START:
            return ec.NONE
        directory = os.path.join(path, rules.future_dir_name(hp.topic, hp.index, uuid.uuid4().hex))
        try:
            lg = self._open(directory, path, hp.topic_id, self._log_settings(hp.config))
            fsync_dir(path)
        except (OSError, LogIOError) as exc:
            self.dir_failed(path, exc)
            return ec.KAFKA_STORAGE_ERROR
        self._adopt(hp, path, lg)
        log.info("moving %s-%d from %s to %s", hp.topic, hp.index, hp.root, path)
        return ec.NONE

    def _adopt(self, hp: Hosted, root: str, lg: PartitionLog) -> None:
        self.moves[(hp.topic, hp.index)] = Move(hp, root, lg)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # tests driving the manager without a loop step the moves themselves
            return
        if self._mover is None or self._mover.done():
            self._mover = loop.create_task(self._move_loop())

    def _cancel_move(self, key: tuple[str, int], why: str, *, files: bool = True) -> None:
        """Drop a future replica (its directory removed unless ``files`` is False: its directory failed); an
        assignment the controller may already hold for it is reverted to the current directory, as Kafka does."""
        move = self.moves.pop(key, None)
        if move is None:
            return
        log.info("cancelling the move of %s-%d to %s: %s", key[0], key[1], move.root, why)
        if move.state != rules.NONE and self.assign is not None and move.hp.root in self.dir_ids:
            self.assign({self.dir_ids[move.hp.root]: {move.hp.topic_id: [move.hp.index]}}, lambda error: None)
        if not files:
            return
        try:
            move.log.close()
        except LogIOError as exc:
            log.warning("closing the future replica of %s-%d: %s", key[0], key[1], exc)
        self.roots[move.root].forget(key)
        self._remove_dir(move.log.directory, move.root)

    def close_moves(self) -> None:
        """At shutdown: the future logs closed where they are (resumed at the next start)."""
        if self._mover is not None:
            self._mover.cancel()
            self._mover = None
        for move in self.moves.values():
            try:
                move.log.close()
            except LogIOError as exc:
                log.error("closing the future replica of %s-%d: %s", move.hp.topic, move.hp.index, exc)
        self.moves.clear()

    def future_of(self, hp: Hosted) -> Move | None:
        return self.moves.get((hp.topic, hp.index))

    def _placed_root(self, hp: Hosted) -> str:
        """Where the controller should place ``hp``'s replica: its future replica's directory once the controller
        was told it (AssignReplicasToDirs on its way or accepted), else where it lives."""
        move = self.moves.get((hp.topic, hp.index))
        return move.root if move is not None and move.state != rules.NONE else hp.root

    # ------------------------------------------------------------------------------------------------ copying
    async def _move_loop(self) -> None:
        while self.moves:
            worked = self.step_moves()
            await asyncio.sleep(0 if worked else IDLE_S)

    def step_moves(self, now_ms: int | None = None) -> bool:
        """One copy step of every move; whether any copied bytes."""
        worked = False
        for key, move in list(self.moves.items()):
            if self.moves.get(key) is not move:
                continue
            hp = move.hp
            if hp.failed or self.partitions.get(key) is not hp:
                self._cancel_move(key, "the partition is no longer served here", files=not hp.failed)
                continue
            try:
                worked |= self._step(move, monotonic_ms() if now_ms is None else now_ms)
            except Exception:  # a bug must not stop every other move: this one ends, its files go
                log.exception("the move of %s-%d to %s failed", key[0], key[1], move.root)
                self._cancel_move(key, "it failed")
        return worked

    def _step(self, move: Move, now_ms: int) -> bool:
        """Copy what the future replica lacks (a bounded read), then promote it when due; whether bytes moved. An
        I/O error of the future log takes its directory offline (the move ends), one of the current log's its own."""
        try:
            data = self._missing(move, now_ms)
        except LogIOError as exc:
            self.dir_failed(move.hp.root, exc)
            return False
        fut = move.log
        try:
            if data:
                fut.append_as_follower(data, move.hp.log.last_fetched_epoch())
                self.alter_dirs_quota.record(len(data), now_ms)
            fut.update_high_watermark(min(move.hp.log.high_watermark(), fut.end_offset()))
            fut.follow_log_start(move.hp.log.start_offset())  # retention and DeleteRecords reach it too
        except LogIOError as exc:
            self._cancel_move((move.hp.topic, move.hp.index), "its directory failed", files=False)
            self.dir_failed(move.root, exc)
            return False
        step = rules.next_promotion(move.state, fut.end_offset() == move.hp.log.end_offset(), self._assigns_dirs(),
                                    self.cleaning is not None)
        if step == rules.TELL:
            self._tell(move)
        elif step == rules.SWAP:
            self._swap(move)
        return bool(data)

    def _missing(self, move: Move, now_ms: int):
        """The current log's batches from the future replica's end (None: nothing, or held back by the
        throttle), after cutting the future replica back to what it shares with the current log."""
        cur, fut = move.hp.log, move.log
        if cur.truncations != move.truncations:
            move.truncations = cur.truncations
            epochs = fut.epoch_entries()
            common = None
            if epochs:
                common = min(cur.end_offset_for_epoch(epochs[-1].epoch).offset, cur.end_offset())
            cut = rules.future_truncation(fut.end_offset(), common)
            if cut is not None:
                fut.truncate_to(max(cut, fut.start_offset()))
                move.state = rules.NONE  # the controller is told again once it has caught up
        if fut.end_offset() < cur.start_offset() or fut.end_offset() > cur.end_offset():
            fut.restart_at(cur.start_offset())
        if fut.end_offset() >= cur.end_offset():
            return None
        bound = rq.parse_rate(self.broker_configs().value(IO_MAX_BYTES))
        if not rules.copy_allowed(self.alter_dirs_quota.exceeded(bound, now_ms)):
            return None
        return cur.read(fut.end_offset(), COPY_BYTES).records

    def _assigns_dirs(self) -> bool:
        version = self.node.metadata.image.metadata_version
        return self.assign is not None and bool(self.dir_ids) and version is not None and version.at_least("3.7-IV2")

    def _tell(self, move: Move) -> None:
        hp = move.hp
        move.state = rules.QUEUED

        def answered(error: int) -> None:
            if self.moves.get((hp.topic, hp.index)) is move and move.state == rules.QUEUED:
                move.state = rules.NONE if error else rules.ACCEPTED

        self.assign({self.dir_ids[move.root]: {hp.topic_id: [hp.index]}}, answered)

    def _swap(self, move: Move) -> None:
        """Make the caught-up future replica the partition's log (see the module's docstring), in this turn of the
        event loop."""
        hp, key = move.hp, (move.hp.topic, move.hp.index)
        old, old_root = hp.log, hp.root
        cur_epochs, fut_epochs = old.epoch_entries(), move.log.epoch_entries()
        high_watermark = old.high_watermark()
        try:
            if cur_epochs and (not fut_epochs or fut_epochs[-1].epoch != cur_epochs[-1].epoch):
                move.log.initialize_leader_epoch(cur_epochs[-1].epoch)  # a leader epoch begun without a batch yet
            move.log.flush()
            move.log.close()
        except LogIOError as exc:
            self._cancel_move(key, "its directory failed", files=False)
            self.dir_failed(move.root, exc)
            return
        del self.moves[key]
        try:
            old.close()
        except LogIOError as exc:
            log.warning("closing %s-%d before its move: %s", hp.topic, hp.index, exc)
        self.roots[old_root].forget(key)
        self._remove_dir(old.directory, old_root)
        live = os.path.join(move.root, f"{hp.topic}-{hp.index}")
        try:
            os.rename(move.log.directory, live)
            fsync_dir(move.root)
            lg = self._open(live, move.root, hp.topic_id, self._log_settings(hp.config))
        except (OSError, LogIOError) as exc:
            hp.root = move.root
            self.dir_failed(move.root, exc)
            return
        lg.update_high_watermark(min(high_watermark, lg.end_offset()))
        hp.log, hp.root = lg, move.root
        lg.on_roll = hp.write_producer_snapshot
        hp.truncations = lg.truncations
        try:
            if hp.txns is not None:
                hp.sync_txn_index()
            hp.write_producer_snapshot()
        except OSError as exc:
            log.warning("no producer snapshot for %s-%d after its move: %s", hp.topic, hp.index, exc)
        log.info("%s-%d now lives in %s (moved from %s)", hp.topic, hp.index, move.root, old_root)

    # ------------------------------------------------------------------------------------------------ start
    def _future_at_start(self, key: tuple[str, int], topic_id, index: int) -> str | None:
        """Before hosting ``key``: a future directory found at start is promoted now (its root returned: the
        partition opens there) when the image already assigns it, else kept for ``_resume_future``."""
        found = self._found_future.get(key)
        if found is None:
            return None
        root, directory = found
        image = self._image_to_apply
        topic = image.topics.get(topic_id) if image is not None else None
        reg = topic.partitions.get(index) if topic is not None else None
        assigned = replica_dir(reg, self.broker_id) if reg is not None else None
        if rules.restart_action(self.dir_ids.get(root), assigned) != rules.PROMOTE:
            return None
        del self._found_future[key]
        current = self._found.pop(key, None)
        if current is not None:
            self._remove_dir(os.path.join(current, f"{key[0]}-{key[1]}"), current)
        live = os.path.join(root, f"{key[0]}-{key[1]}")
        try:
            os.rename(directory, live)
            fsync_dir(root)
        except OSError as exc:
            self.dir_failed(root, exc)
            return None
        log.info("%s-%d: promoted the future replica left in %s by an unfinished move", key[0], key[1], root)
        return root

    def _resume_future(self, hp: Hosted) -> None:
        """After hosting ``hp``: resume the copy into a future directory found at start."""
        found = self._found_future.pop((hp.topic, hp.index), None)
        if found is None:
            return
        root, directory = found
        if root == hp.root or root in self.offline_roots:
            self._remove_dir(directory, root)
            return
        try:
            lg = self._open(directory, root, hp.topic_id, self._log_settings(hp.config))
        except (OSError, LogIOError) as exc:
            self.dir_failed(root, exc)
            return
        log.info("%s-%d: resuming its move to %s", hp.topic, hp.index, root)
        self._adopt(hp, root, lg)
