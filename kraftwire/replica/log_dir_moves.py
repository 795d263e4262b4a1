"""Moving a hosted partition between a broker's log directories (AlterReplicaLogDirs, JBOD), pure: Kafka's
``ReplicaManager.alterReplicaLogDirs``, ``LogManager`` future logs and ``ReplicaAlterLogDirsThread``'s promotion.
The replica manager's moves (``kraftwire.server.runtime.log_dir_moves``) do the file work these rules decide.

* **The answer** (``alter_error``), per partition, in Kafka's order: a topic name too long for its future directory's
  name INVALID_TOPIC_EXCEPTION; a path that is not one of the broker's log directories (exactly as configured,
  absolute) LOG_DIR_NOT_FOUND; an offline target, or a partition whose directory is offline, KAFKA_STORAGE_ERROR; a
  partition this broker does not host UNKNOWN_TOPIC_OR_PARTITION when the image does not know it, else
  REPLICA_NOT_AVAILABLE (Kafka keeps that code for this API) — the target is remembered all the same and the
  partition is created there when it comes (``remember_preferred``).
* **What to do** (``move_action``): nothing when the partition already lives in the target (a future replica
  elsewhere is cancelled) or its future replica is already there; otherwise a future replica in the target, replacing
  one under way elsewhere.
* **Copying**: the future replica copies the current log's batches from its own log end, a bounded read per step,
  held back while ``replica.alter.log.dirs.io.max.bytes.per.second`` is exceeded (``copy_allowed``); after the
  current log was truncated it first cuts itself to their common prefix (``future_truncation``).
* **Promotion** (KIP-858): once the future replica has caught up (same log end) the controller is told its new
  directory (AssignReplicasToDirs, QUEUED); once it accepted (ACCEPTED), the next time the future replica has caught
  up the two are swapped (``next_promotion``). Without directory assignment (metadata before 3.7-IV2) the swap comes
  as soon as it has caught up, as Kafka's thread does without a directory event handler.
* **Restart** (``restart_action``): a future directory found at start is promoted when the image already names its
  directory for this broker (the controller accepted, the swap did not finish: Kafka's
  ``recoverAbandonedFutureLogs``), and otherwise resumed.
"""

from __future__ import annotations

from kraftwire import error_codes as ec

__all__ = ["ACCEPTED", "CANCEL", "NONE", "NOTHING", "PROMOTE", "QUEUED", "RESUME", "START", "SWAP", "TELL",
           "alter_error", "copy_allowed", "future_dir_name", "future_offset_lag", "future_truncation", "move_action",
           "next_promotion", "remember_preferred", "restart_action"]

#: promotion states of a move (Kafka's ReassignmentState): nothing asked, AssignReplicasToDirs on its way, accepted
NONE, QUEUED, ACCEPTED = "none", "queued", "accepted"
#: move_action's answers
NOTHING, CANCEL, START = "nothing", "cancel", "start"
#: next_promotion's answers (and NOTHING)
TELL, SWAP = "tell", "swap"
#: restart_action's answers
PROMOTE, RESUME = "promote", "resume"

FUTURE_SUFFIX = "-future"
#: the longest file name a log directory takes
MAX_NAME = 255


def future_dir_name(topic: str, index: int, unique_hex: str) -> str:
    """``<topic>-<partition>.<32 hex digits>-future``, the future replica's directory (Kafka's logFutureDirName)."""
    return f"{topic}-{index}.{unique_hex}{FUTURE_SUFFIX}"


def alter_error(topic: str, index: int, path: str, roots, offline, hosted: bool, hosted_failed: bool,
                known: bool) -> int:
    """The error code AlterReplicaLogDirs answers for moving ``topic``-``index`` to ``path`` (0: accepted).
    ``roots``: this broker's log directories, ``offline`` the failed ones; ``hosted``: this broker hosts the
    partition (``hosted_failed``: in a failed directory); ``known``: the metadata image has the partition."""
    if len(future_dir_name(topic, index, "0" * 32)) > MAX_NAME:
        return ec.INVALID_TOPIC_EXCEPTION
    if path not in roots:
        return ec.LOG_DIR_NOT_FOUND
    if path in offline or (hosted and hosted_failed):
        return ec.KAFKA_STORAGE_ERROR
    if not hosted:
        return ec.REPLICA_NOT_AVAILABLE if known else ec.UNKNOWN_TOPIC_OR_PARTITION
    return ec.NONE


def remember_preferred(target: str, current: str | None, future: str | None) -> bool:
    """Whether the target directory is remembered for the partition's next creation (Kafka's
    maybeUpdatePreferredLogDir): unless its current or future replica already lives there."""
    return target != current and target != future


def move_action(target: str, current: str, future: str | None) -> str:
    """What an accepted move of a hosted partition (in ``current``, its future replica in ``future`` or None) to
    ``target`` does: NOTHING, CANCEL the future replica (the partition already lives in the target), or START a
    future replica in the target (replacing one under way elsewhere)."""
    if target == current:
        return CANCEL if future is not None else NOTHING
    if target == future:
        return NOTHING
    return START


def copy_allowed(exceeded: bool) -> bool:
    """A copy step reads only while the alter-log-dirs rate is within ``replica.alter.log.dirs.io.max.bytes.per.second``
    (Kafka's quota check before each fetch: the first read of a window may overshoot, as in Kafka)."""
    return not exceeded


def future_truncation(future_end: int, common: int | None) -> int | None:
    """Where the future replica cuts itself after the current log was truncated: ``common`` is the end of the
    current log's range for the future replica's latest epoch (None: the current log does not know that epoch, so
    nothing is shared: 0). None when the future replica keeps all it has."""
    cut = 0 if common is None else common
    return cut if cut < future_end else None


def next_promotion(state: str, caught_up: bool, assigns_dirs: bool, cleaning: bool) -> str:
    """The promotion's next step: TELL the controller the future replica's directory, SWAP the replicas, or
    NOTHING yet. ``caught_up``: the future log ends where the current one does; ``assigns_dirs``: directory
    assignment is in use (metadata version 3.7-IV2+); ``cleaning``: a compaction of the current log is running (its
    files must not change under it)."""
    if not caught_up:
        return NOTHING
    if not assigns_dirs:
        return NOTHING if cleaning else SWAP
    if state == NONE:
        return TELL
    if state == ACCEPTED and not cleaning:
        return SWAP
    return NOTHING


def future_offset_lag(current_end: int, future_end: int) -> int:
    """DescribeLogDirs' offset lag of a future replica: how far its log end is behind the current replica's."""
    return current_end - future_end


def restart_action(future_dir_id, assigned_dir_id) -> str:
    """A future directory found at start: PROMOTE it when the image already assigns this broker's replica to its
    directory (the swap was accepted but did not finish), else RESUME the copy."""
    return PROMOTE if future_dir_id is not None and future_dir_id == assigned_dir_id else RESUME
