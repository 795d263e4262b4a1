"""The ``quorum-state`` file: the persisted election state, in Kafka's JSON layout (data_version 0 and 1).

One line of JSON, no spaces, camelCase keys in schema order, ``data_version`` last (facts: FileQuorumStateStore /
QuorumStateData.json)::

    v0: {"clusterId":"","leaderId":L,"leaderEpoch":E,"votedId":V,"appliedOffset":0,
         "currentVoters":[{"voterId":n},...],"data_version":0}
    v1: {"leaderId":L,"leaderEpoch":E,"votedId":V,"votedDirectoryId":"<base64 uuid>","data_version":1}

-1 means "none" for ids; an unknown voted directory id is written as the zero UUID. Written with
tmp + fsync + rename + fsync dir; readers reject data_version outside 0..1.

``QuorumStateData`` is a plain value; the Raft layer converts its own ElectionState to and from it.
``MemoryQuorumStateStore`` (in ``kraftwire.log.memory``) is the simulation twin of ``FileQuorumStateStore``.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass

from kraftwire.errors import LogError
from kraftwire.ids import NO_ID, ZERO_UUID, uuid_from_base64, uuid_to_base64
from kraftwire.log.checkpoint import read_file_or_none, write_atomic

__all__ = [
    "QuorumStateData",
    "FileQuorumStateStore",
    "MemoryQuorumStateStore",
    "QuorumStateFormatError",
    "encode_quorum_state",
    "decode_quorum_state",
]

FILE_NAME = "quorum-state"
DATA_VERSION_KEY = "data_version"
SUPPORTED_VERSIONS = (0, 1)


class QuorumStateFormatError(LogError):
    """The quorum-state file cannot be parsed (bad JSON, unsupported data_version, missing field)."""


@dataclass(frozen=True, slots=True)
class QuorumStateData:
    """The persisted election state. ``voted_directory_id`` None means unknown (written as the zero UUID).

    ``current_voters``, ``cluster_id`` and ``applied_offset`` exist only in data_version 0 (``current_voters``
    None is written as JSON null).
    """

    leader_epoch: int = 0
    leader_id: int = NO_ID
    voted_id: int = NO_ID
    voted_directory_id: uuid.UUID | None = None
    current_voters: tuple[int, ...] | None = None
    cluster_id: str = ""
    applied_offset: int = 0
    data_version: int = 1


def encode_quorum_state(state: QuorumStateData) -> str:
    """Kafka's exact JSON text for ``state`` at ``state.data_version`` (no trailing newline)."""
    if state.data_version == 0:
        doc: dict[str, object] = {
            "clusterId": state.cluster_id,
            "leaderId": state.leader_id,
            "leaderEpoch": state.leader_epoch,
            "votedId": state.voted_id,
            "appliedOffset": state.applied_offset,
            "currentVoters": None
            if state.current_voters is None
            else [{"voterId": v} for v in state.current_voters],
        }
    elif state.data_version == 1:
        doc = {
            "leaderId": state.leader_id,
            "leaderEpoch": state.leader_epoch,
            "votedId": state.voted_id,
            "votedDirectoryId": uuid_to_base64(state.voted_directory_id or ZERO_UUID),
        }
    else:
        raise ValueError(f"unsupported quorum-state data_version {state.data_version}")
    doc[DATA_VERSION_KEY] = state.data_version
    return json.dumps(doc, separators=(",", ":"))


def _int_field(doc: dict, key: str) -> int:
    value = doc.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise QuorumStateFormatError(f"quorum-state field {key!r} is missing or not an integer: {value!r}")
    return value


def decode_quorum_state(text: str) -> QuorumStateData:
    """Parse the first line of a quorum-state file."""
    line = text.split("\n", 1)[0]
    try:
        doc = json.loads(line)
    except ValueError as exc:
        raise QuorumStateFormatError(f"quorum-state is not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise QuorumStateFormatError("quorum-state is not a JSON object")
    if DATA_VERSION_KEY not in doc:
        raise QuorumStateFormatError("quorum-state has no data_version")
    version = doc[DATA_VERSION_KEY]
    if not isinstance(version, int) or version not in SUPPORTED_VERSIONS:
        raise QuorumStateFormatError(f"unsupported quorum-state data_version {version!r}")
    leader_id = _int_field(doc, "leaderId")
    leader_epoch = _int_field(doc, "leaderEpoch")
    voted_id = _int_field(doc, "votedId")
    if version == 0:
        voters = doc.get("currentVoters")
        current: tuple[int, ...] | None = None
        if voters is not None:
            try:
                current = tuple(int(v["voterId"]) for v in voters)
            except (TypeError, KeyError, ValueError):
                raise QuorumStateFormatError(f"malformed currentVoters {voters!r}") from None
        return QuorumStateData(
            leader_epoch=leader_epoch,
            leader_id=leader_id,
            voted_id=voted_id,
            current_voters=current,
            cluster_id=str(doc.get("clusterId", "")),
            applied_offset=int(doc.get("appliedOffset", 0)),
            data_version=0,
        )
    raw_dir = doc.get("votedDirectoryId", uuid_to_base64(ZERO_UUID))
    try:
        directory = uuid_from_base64(raw_dir)
    except (ValueError, TypeError):
        raise QuorumStateFormatError(f"malformed votedDirectoryId {raw_dir!r}") from None
    return QuorumStateData(
        leader_epoch=leader_epoch,
        leader_id=leader_id,
        voted_id=voted_id,
        voted_directory_id=None if directory == ZERO_UUID else directory,
        data_version=1,
    )


class FileQuorumStateStore:
    """Reads and atomically writes ``<partition dir>/quorum-state``."""

    def __init__(self, directory: str) -> None:
        self.path = os.path.join(directory, FILE_NAME)

    def read(self) -> QuorumStateData | None:
        """The stored state, or None if the file does not exist."""
        text = read_file_or_none(self.path)
        return None if text is None else decode_quorum_state(text)

    def write(self, state: QuorumStateData) -> None:
        """Durably replace the file (raises ``LogIOError`` on an I/O error)."""
        write_atomic(self.path, encode_quorum_state(state))

    def clear(self) -> None:
        for path in (self.path, self.path + ".tmp"):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


class MemoryQuorumStateStore:
    """The simulation twin of ``FileQuorumStateStore``: keeps the encoded JSON text (so encoding errors surface in
    simulation too); ``write`` is durable when it returns, as the file store's fsync makes it."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.writes = 0

    def read(self) -> QuorumStateData | None:
        return None if self.text is None else decode_quorum_state(self.text)

    def write(self, state: QuorumStateData) -> None:
        self.text = encode_quorum_state(state)
        self.writes += 1

    def clear(self) -> None:
        self.text = None
