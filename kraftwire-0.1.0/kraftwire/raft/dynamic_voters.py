"""KIP-853's initial voter set: ``--initial-controllers`` / ``--standalone`` at format time, and the bootstrap
snapshot that carries it (``00000000000000000000-0000000000.checkpoint``).

* ``parse_voter("1@host:9093:DIRECTORY_ID")`` and ``parse_voters("1@...,2@...")`` take Kafka's
  ``DynamicVoter``/``DynamicVoters`` syntax, with its checks and messages (``ValueError``): a node id, ``@``, a host
  (``[...]`` for IPv6), ``:port:``, and the voter's metadata directory id in base64url; ids unique, at least one.
* ``voters_record(voters, listener)`` is the ``VotersRecord`` of that set, each voter with one endpoint on the
  controller listener and kraft.version support 0..1, as Kafka's ``DynamicVoters.toVoterSet`` makes it.
* ``bootstrap_snapshot(record, timestamp)`` is the checkpoint ``kafka-storage format`` writes into a dynamic
  metadata voter directory: a control batch with SnapshotHeaderRecord, KRaftVersionRecord (kraft.version 1) and the
  VotersRecord, then the footer batch. Nothing else: the metadata records come from ``bootstrap.checkpoint``.
* ``read_voter_set(data)`` finds the kraft.version and VotersRecord in a snapshot's header batch (a node writes
  them into every snapshot it takes when it runs kraft.version 1, so the set outlives the bootstrap checkpoint).

The voter set is what the quorum starts with; AddRaftVoter, RemoveRaftVoter and UpdateRaftVoter change it later
(``kraftwire.raft.membership``, ``kraftwire.raft.handlers.reconfig``).

Pure: no I/O; the edge reads and writes the files.
"""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.ids import UUID, uuid_from_base64
from kraftwire.protocol import messages as m
from kraftwire.records import read_batches
from kraftwire.records.control import (
    KRAFT_VERSION,
    KRAFT_VOTERS,
    decode_control_record,
    snapshot_footer_batch,
    snapshot_header_batch,
)

#: the bootstrap snapshot's name: end offset 0, epoch 0 (Kafka's Snapshots.BOOTSTRAP_SNAPSHOT_ID)
BOOTSTRAP_SNAPSHOT = "00000000000000000000-0000000000.checkpoint"
#: the kraft.version levels this build supports (0: static voters; 1: KIP-853)
KRAFT_VERSION_RANGE = (0, 1)


@dataclass(frozen=True, slots=True)
class DynamicVoter:
    node_id: int
    host: str
    port: int
    directory_id: UUID


def parse_voter(text: str) -> DynamicVoter:
    """One ``id@host:port:directory`` entry; ``ValueError`` with Kafka's message."""
    at = text.find("@")
    if at < 0:
        raise ValueError("No @ found in dynamic voter string.")
    if at == 0:
        raise ValueError("Invalid @ at beginning of dynamic voter string.")
    try:
        node_id = int(text[:at])
    except ValueError:
        raise ValueError("Failed to parse node id in dynamic voter string.") from None
    if node_id < 0:
        raise ValueError(f"Invalid negative node id {node_id} in dynamic voter string.")
    rest = text[at + 1:]
    if not rest:
        raise ValueError("No hostname found after node id.")
    if rest.startswith("["):
        end = rest.find("]")
        if end < 0:
            raise ValueError("Hostname began with left bracket, but no right bracket was found.")
        host, rest = rest[1:end], rest[end + 1:]
    else:
        colon = rest.find(":")
        if colon < 0:
            raise ValueError("No colon following hostname could be found.")
        host, rest = rest[:colon], rest[colon:]
    if not rest.startswith(":"):
        raise ValueError("Port section must start with a colon.")
    rest = rest[1:]
    colon = rest.find(":")
    if colon < 0:
        raise ValueError("No colon following port could be found.")
    try:
        port = int(rest[:colon])
    except ValueError:
        raise ValueError("Failed to parse port in dynamic voter string.") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"Invalid port {port} in dynamic voter string.")
    try:
        directory_id = uuid_from_base64(rest[colon + 1:])
    except ValueError:
        raise ValueError("Failed to parse directory ID in dynamic voter string.") from None
    return DynamicVoter(node_id, host, port, directory_id)


def parse_voters(text: str) -> tuple[DynamicVoter, ...]:
    """``--initial-controllers``: comma-separated entries, sorted by node id."""
    voters: dict[int, DynamicVoter] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        voter = parse_voter(item.strip())
        if voter.node_id in voters:
            raise ValueError(f"Node id {voter.node_id} was specified more than once.")
        voters[voter.node_id] = voter
    if not voters:
        raise ValueError("No voters given.")
    return tuple(voters[i] for i in sorted(voters))


def voters_record(voters, listener: str) -> m.VotersRecord:
    R = m.VotersRecord
    return R(version=0, voters=[
        R.Voter(voter_id=v.node_id, voter_directory_id=v.directory_id,
                endpoints=[R.Endpoint(name=listener, host=v.host, port=v.port)],
                kraft_version_feature=R.KRaftVersionFeature(min_supported_version=KRAFT_VERSION_RANGE[0],
                                                            max_supported_version=KRAFT_VERSION_RANGE[1]))
        for v in voters])


def bootstrap_snapshot(record: m.VotersRecord, timestamp: int, kraft_version: int = 1) -> bytes:
    """The bytes of the bootstrap checkpoint (epoch 0, offsets from 0)."""
    return (snapshot_header_batch(timestamp, epoch=0, base_offset=0, timestamp=timestamp, kraft_version=kraft_version,
                                  voters=record)
            + snapshot_footer_batch(epoch=0, base_offset=3, timestamp=timestamp))


def read_voter_set(data: bytes) -> tuple[int, m.VotersRecord | None]:
    """(kraft.version, VotersRecord or None) from a snapshot's control batches; kraft.version 0 when absent."""
    kraft_version, record = 0, None
    for batch in read_batches(data):
        if not batch.is_control:
            continue
        for r in batch:
            ctype, value = decode_control_record(r.key, r.value)
            if ctype == KRAFT_VERSION:
                kraft_version = value.kraft_version
            elif ctype == KRAFT_VOTERS:
                record = value
    return kraft_version, record


def endpoints_on(record: m.VotersRecord, listener: str) -> dict[int, tuple[str, int]]:
    """Each voter's (host, port) on ``listener`` (the first endpoint when none has that name)."""
    out = {}
    for v in record.voters:
        ep = next((e for e in v.endpoints if e.name == listener), v.endpoints[0] if v.endpoints else None)
        if ep is not None:
            out[v.voter_id] = (ep.host, ep.port)
    return out
