"""Control records: Raft's own records (Kafka types 2-6) and kraftwire's state records, in control batches.

A control record's **key** is ``int16 version (0) | int16 type``; its **value** is a message from
:mod:`kraftwire.protocol.schemas` encoded in the flexible (compact, tagged) format at the value version,
whose first field is that same version as an int16. Control batches set the control bit in the batch
attributes, so Kafka consumers skip them.

==========================  =====  ===============================================================
type                        code   value message
==========================  =====  ===============================================================
LEADER_CHANGE               2      LeaderChangeMessage (Version, LeaderId, Voters[], GrantingVoters[])
SNAPSHOT_HEADER             3      SnapshotHeaderRecord (Version, LastContainedLogTimestamp)
SNAPSHOT_FOOTER             4      SnapshotFooterRecord (Version)
KRAFT_VERSION               5      KRaftVersionRecord (Version, KRaftVersion)
KRAFT_VOTERS                6      VotersRecord (Version, Voters[...])
KRAFTWIRE_GROUP_OFFSET      28672  KraftwireGroupOffsetRecord      (kraftwire-specific)
KRAFTWIRE_GROUP_GENERATION  28673  KraftwireGroupGenerationRecord  (kraftwire-specific)
KRAFTWIRE_BROKER_REGISTR.   28674  KraftwireBrokerRegistrationRecord (kraftwire-specific)
KRAFTWIRE_BROKER_STATE      28675  KraftwireBrokerStateRecord        (kraftwire-specific)
KRAFTWIRE_GROUP_RECORD      28676  KraftwireGroupRecord              (kraftwire-specific)
==========================  =====  ===============================================================

The test server's group coordinator writes ``KRAFTWIRE_GROUP_RECORD``: Kafka's ``__consumer_offsets`` key and value
(``kraftwire.coordinator.records``). ``KRAFTWIRE_GROUP_OFFSET`` and ``KRAFTWIRE_GROUP_GENERATION`` are what earlier
versions wrote; they are still read.

kraftwire's types sit at 0x7000 and up, far from Kafka's small numbers (0-6 today), so a future Kafka
type cannot collide. Producer state has no control record: it is rebuilt from data-batch headers.

Public API::

    control_record_key(ctype) -> bytes
    encode_control_value(ctype, message, version=0) -> bytes
    decode_control_value(ctype, value) -> message
    decode_control_record(key, value) -> (ctype, message)
    control_batch(records, *, epoch, base_offset=0, timestamp=None) -> bytes      # records: [(ctype, message)]
    leader_change_batch(leader_id, voters, granting_voters, *, epoch, base_offset=0, timestamp=None) -> bytes
    snapshot_header_batch(last_contained_log_timestamp, *, epoch, base_offset=0, timestamp=None,
                          kraft_version=None, voters=None) -> bytes
    snapshot_footer_batch(*, epoch, base_offset=0, timestamp=None) -> bytes
    kraft_version_batch(kraft_version, *, epoch, base_offset=0, timestamp=None) -> bytes
    voters_batch(voters, *, epoch, base_offset=0, timestamp=None) -> bytes
"""

from __future__ import annotations

from typing import Iterable

from kraftwire.errors import ProtocolError
from kraftwire.ids import ReplicaKey, ZERO_UUID
from kraftwire.protocol import codec
from kraftwire.protocol import messages as m
from kraftwire.records import RecordBatchBuilder
from kraftwire.records.api import (
    CONTROL_KEY_STRUCT,
    CONTROL_KEY_VERSION,
    CONTROL_KRAFT_VERSION,
    CONTROL_KRAFT_VOTERS,
    CONTROL_LEADER_CHANGE,
    CONTROL_SNAPSHOT_FOOTER,
    CONTROL_SNAPSHOT_HEADER,
)

LEADER_CHANGE = CONTROL_LEADER_CHANGE
SNAPSHOT_HEADER = CONTROL_SNAPSHOT_HEADER
SNAPSHOT_FOOTER = CONTROL_SNAPSHOT_FOOTER
KRAFT_VERSION = CONTROL_KRAFT_VERSION
KRAFT_VOTERS = CONTROL_KRAFT_VOTERS
KRAFTWIRE_GROUP_OFFSET = 0x7000
KRAFTWIRE_GROUP_GENERATION = 0x7001
KRAFTWIRE_BROKER_REGISTRATION = 0x7002
KRAFTWIRE_BROKER_STATE = 0x7003
KRAFTWIRE_GROUP_RECORD = 0x7004

#: control type -> (name, value message class)
CONTROL_MESSAGES: dict[int, tuple[str, type]] = {
    LEADER_CHANGE: ("LEADER_CHANGE", m.LeaderChangeMessage),
    SNAPSHOT_HEADER: ("SNAPSHOT_HEADER", m.SnapshotHeaderRecord),
    SNAPSHOT_FOOTER: ("SNAPSHOT_FOOTER", m.SnapshotFooterRecord),
    KRAFT_VERSION: ("KRAFT_VERSION", m.KRaftVersionRecord),
    KRAFT_VOTERS: ("KRAFT_VOTERS", m.VotersRecord),
    KRAFTWIRE_GROUP_OFFSET: ("KRAFTWIRE_GROUP_OFFSET", m.KraftwireGroupOffsetRecord),
    KRAFTWIRE_GROUP_GENERATION: ("KRAFTWIRE_GROUP_GENERATION", m.KraftwireGroupGenerationRecord),
    KRAFTWIRE_BROKER_REGISTRATION: ("KRAFTWIRE_BROKER_REGISTRATION", m.KraftwireBrokerRegistrationRecord),
    KRAFTWIRE_BROKER_STATE: ("KRAFTWIRE_BROKER_STATE", m.KraftwireBrokerStateRecord),
    KRAFTWIRE_GROUP_RECORD: ("KRAFTWIRE_GROUP_RECORD", m.KraftwireGroupRecord),
}
#: The value version kraftwire writes (Kafka's current versions for its own types).
VALUE_VERSION = 0


def _message_class(ctype: int) -> type:
    try:
        return CONTROL_MESSAGES[ctype][1]
    except KeyError:
        raise ProtocolError(f"unknown control record type {ctype}") from None


def control_record_key(ctype: int) -> bytes:
    """``int16 version (0) | int16 type``."""
    return CONTROL_KEY_STRUCT.pack(CONTROL_KEY_VERSION, ctype)


def encode_control_value(ctype: int, message, version: int = VALUE_VERSION) -> bytes:
    """Encode *message* as the value of a control record of type *ctype* (its Version field is set)."""
    cls = _message_class(ctype)
    if type(message) is not cls:
        raise ProtocolError(f"control type {ctype} carries {cls.NAME}, not {type(message).__name__}")
    if hasattr(message, "version"):
        message.version = version
    return codec.encode(message, version)


def decode_control_value(ctype: int, value) -> object:
    """Decode a control record value; the version is the value's leading int16 (its Version field)."""
    cls = _message_class(ctype)
    if value is None or len(value) < 2:
        raise ProtocolError(f"control record value of type {ctype} is {'null' if value is None else 'too short'}")
    version = int.from_bytes(bytes(value[:2]), "big", signed=True)
    lo, hi = cls.VALID_VERSIONS
    if not lo <= version <= hi:
        raise ProtocolError(f"{cls.NAME}: unsupported value version {version} (known: {lo}-{hi})")
    return codec.decode(cls, value, version)


def decode_control_record(key, value) -> tuple[int, object]:
    """``(type, message)`` of a control record; ProtocolError for a bad key, unknown type or bad value."""
    if key is None or len(key) < CONTROL_KEY_STRUCT.size:
        raise ProtocolError("control record key is null or shorter than 4 bytes")
    _key_version, ctype = CONTROL_KEY_STRUCT.unpack_from(bytes(key[:4]))
    return ctype, decode_control_value(ctype, value)


def control_batch(records: Iterable[tuple[int, object]], *, epoch: int, base_offset: int = 0,
                  timestamp: int | None = None) -> bytes:
    """One control batch holding *records* ``[(ctype, message), ...]`` stamped with leader *epoch*."""
    builder = RecordBatchBuilder(base_offset=base_offset, partition_leader_epoch=epoch, is_control=True)
    n = 0
    for ctype, message in records:
        builder.append(control_record_key(ctype), encode_control_value(ctype, message), timestamp=timestamp)
        n += 1
    if not n:
        raise ProtocolError("a control batch needs at least one record")
    return builder.build()


def _voter(v) -> object:
    V = m.LeaderChangeMessage.Voter
    if isinstance(v, V):
        return v
    if isinstance(v, ReplicaKey):
        return V(voter_id=v.id, voter_directory_id=v.directory_id or ZERO_UUID)
    return V(voter_id=int(v))


def leader_change_message(leader_id: int, voters: Iterable, granting_voters: Iterable) -> object:
    """A LeaderChangeMessage. Voters may be ints or ReplicaKeys."""
    return m.LeaderChangeMessage(leader_id=leader_id, voters=[_voter(v) for v in voters],
                                 granting_voters=[_voter(v) for v in granting_voters])


def kraft_version_record(kraft_version: int) -> object:
    return m.KRaftVersionRecord(kraft_version=kraft_version)


def leader_change_batch(leader_id: int, voters: Iterable, granting_voters: Iterable, *, epoch: int,
                        base_offset: int = 0, timestamp: int | None = None) -> bytes:
    """The control batch a new leader writes first in its epoch. Voters may be ints or ReplicaKeys."""
    msg = leader_change_message(leader_id, voters, granting_voters)
    return control_batch([(LEADER_CHANGE, msg)], epoch=epoch, base_offset=base_offset, timestamp=timestamp)


def snapshot_header_batch(last_contained_log_timestamp: int, *, epoch: int, base_offset: int = 0,
                          timestamp: int | None = None, kraft_version: int | None = None,
                          voters=None) -> bytes:
    """The first batch of a snapshot: SnapshotHeaderRecord, then (KIP-853, kraft.version 1+) the
    KRaftVersionRecord and the VotersRecord (*voters*: a ``VotersRecord``) when given."""
    records: list[tuple[int, object]] = [
        (SNAPSHOT_HEADER, m.SnapshotHeaderRecord(last_contained_log_timestamp=last_contained_log_timestamp))]
    if kraft_version is not None:
        records.append((KRAFT_VERSION, m.KRaftVersionRecord(kraft_version=kraft_version)))
    if voters is not None:
        records.append((KRAFT_VOTERS, voters))
    return control_batch(records, epoch=epoch, base_offset=base_offset, timestamp=timestamp)


def snapshot_footer_batch(*, epoch: int, base_offset: int = 0, timestamp: int | None = None) -> bytes:
    """The last batch of a snapshot: one SnapshotFooterRecord."""
    return control_batch([(SNAPSHOT_FOOTER, m.SnapshotFooterRecord())], epoch=epoch, base_offset=base_offset,
                         timestamp=timestamp)


def kraft_version_batch(kraft_version: int, *, epoch: int, base_offset: int = 0, timestamp: int | None = None) -> bytes:
    return control_batch([(KRAFT_VERSION, m.KRaftVersionRecord(kraft_version=kraft_version))], epoch=epoch,
                         base_offset=base_offset, timestamp=timestamp)


def voters_batch(voters, *, epoch: int, base_offset: int = 0, timestamp: int | None = None) -> bytes:
    """A control batch with one VotersRecord (*voters*: a ``VotersRecord`` message)."""
    return control_batch([(KRAFT_VOTERS, voters)], epoch=epoch, base_offset=base_offset, timestamp=timestamp)
