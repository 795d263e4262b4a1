"""Kafka's clean shutdown marker (``CleanShutdownFileHandler``): ``.kafka_cleanshutdown`` in every log directory,
``{"version":0,"brokerEpoch":N}``, written when a broker stops in order (its logs flushed and closed) and read, then
removed, when it starts.

The epoch it names goes into BrokerRegistration's ``PreviousBrokerEpoch``; the controller treats a registration
whose previous epoch is not the one it knows as an unclean shutdown, and with eligible leader replicas on (KIP-966)
takes the broker out of every ELR, since its log may have lost acknowledged records. As Kafka's
``readBrokerEpochFromCleanShutdownFiles``, any directory without a readable marker, or two markers that disagree,
mean no clean shutdown (-1).
"""

from __future__ import annotations

import json
import os

from kraftwire.log.checkpoint import fsync_dir, read_file_or_none, write_atomic

FILE_NAME = ".kafka_cleanshutdown"
VERSION = 0
NO_EPOCH = -1


def write(root: str, broker_epoch: int) -> None:
    """Mark ``root`` as closed cleanly by the broker at ``broker_epoch`` (fsynced; LogIOError on failure)."""
    write_atomic(os.path.join(root, FILE_NAME),
                 json.dumps({"version": VERSION, "brokerEpoch": broker_epoch}, separators=(",", ":")))


def _read(root: str) -> int | None:
    try:
        text = read_file_or_none(os.path.join(root, FILE_NAME))
        epoch = None if text is None else json.loads(text).get("brokerEpoch")
    except (OSError, ValueError, AttributeError):  # unreadable, not UTF-8, not JSON, not an object
        return None
    return epoch if isinstance(epoch, int) else None


def previous_epoch(roots) -> int:
    """The broker epoch every directory of ``roots`` was closed at, else -1."""
    epochs = {_read(root) for root in roots}
    if not epochs or None in epochs or len(epochs) != 1:
        return NO_EPOCH
    return epochs.pop()


def clear(root: str) -> None:
    """Remove ``root``'s marker: from now on a crash must not look like a clean shutdown."""
    try:
        os.remove(os.path.join(root, FILE_NAME))
    except FileNotFoundError:
        return
    fsync_dir(root)
