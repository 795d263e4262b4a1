"""``metadata.version``: Kafka 4.4's metadata versions as data, and the record versions a level implies.

Each level is a Kafka release's inter-broker protocol step (``3.9-IV0`` is level 21, ``4.4-IV2`` level 33). A
cluster's level, kept as the ``metadata.version`` FeatureLevelRecord, decides which record versions the controller
writes (Kafka 4.4's ``MetadataVersion``):

* RegisterBrokerRecord v1 from 3.3-IV3 (InControlledShutdown), v2 from 3.4-IV0, v3 from 3.7-IV2 (LogDirs), v4 from
  4.3-IV0 (CordonedLogDirs, KIP-1066);
* PartitionRecord / PartitionChangeRecord v1 from 3.7-IV2 (Directories), v2 from 4.0-IV1 (EligibleLeaderReplicas,
  LastKnownElr: written only when ``eligible.leader.replicas.version`` is enabled, ``controller.elr``);
* BrokerRegistrationChangeRecord v1 from 3.3-IV3, v2 from 3.7-IV2 (v3's CordonedLogDirs is never needed here);
* metadata transactions (Begin/End/AbortTransactionRecord, KIP-868) from 3.6-IV1.

Kafka 4.4 knows levels 7 (``3.3-IV3``) to 34 (``4.5-IV0``, not production); ``LATEST_PRODUCTION`` (``4.4-IV2``) is
what its ``kafka-storage format`` picks by default. kraftwire reads and writes ``MINIMUM`` through ``MAXIMUM``:
the levels above it bring semantics kraftwire does not have yet (``UNIMPLEMENTED`` says which), so they are refused
by name rather than advertised. A level whose ``did_metadata_change`` is set changed what the metadata log may hold,
so a downgrade across it could lose metadata (Kafka refuses one; a downgrade across none is safe).
"""

from __future__ import annotations

from typing import NamedTuple

FEATURE_NAME = "metadata.version"


class MetadataVersion(NamedTuple):
    name: str  # "3.9-IV0"
    level: int  # the FeatureLevelRecord value
    did_metadata_change: bool  # Kafka's didMetadataChange: a downgrade across this level may lose metadata

    @property
    def release(self) -> str:
        return self.name.split("-", 1)[0]

    @property
    def is_production(self) -> bool:
        return self.level <= LATEST_PRODUCTION_LEVEL

    def at_least(self, name: str) -> bool:
        return self.level >= BY_NAME[name].level

    # ------------------------------------------------------------------------------------------------ versions
    @property
    def register_broker_record_version(self) -> int:
        for name, version in (("4.3-IV0", 4), ("3.7-IV2", 3), ("3.4-IV0", 2), ("3.3-IV3", 1)):
            if self.at_least(name):
                return version
        return 0

    @property
    def partition_record_version(self) -> int:
        """PartitionRecord and PartitionChangeRecord."""
        return 2 if self.at_least("4.0-IV1") else 1 if self.at_least("3.7-IV2") else 0

    @property
    def broker_registration_change_record_version(self) -> int:
        """v3 adds only CordonedLogDirs (KIP-1066), which Kafka writes when a heartbeat reports cordoned
        directories; kraftwire brokers cordon none, so they never need it."""
        return 2 if self.at_least("3.7-IV2") else 1 if self.at_least("3.3-IV3") else 0

    @property
    def uses_metadata_transactions(self) -> bool:
        return self.at_least("3.6-IV1")

    @property
    def uses_fence_records(self) -> bool:
        """Below 3.3-IV2 fencing is Fence/UnfenceBrokerRecord; from it, BrokerRegistrationChangeRecord."""
        return not self.at_least("3.3-IV2")

    @property
    def supports_elr(self) -> bool:
        """Kafka's isElrSupported: ``eligible.leader.replicas.version`` 1 depends on this level."""
        return self.at_least("4.0-IV1")

    @property
    def supports_cidr_acls(self) -> bool:
        """Kafka's isCidrAclSupported: CreateAcls takes CIDR host patterns (KIP-1276)."""
        return self.at_least("4.4-IV1")

    @property
    def supports_controller_unregistration(self) -> bool:
        """Kafka's isControllerUnregistrationSupported: UnregisterController writes UnregisterControllerRecord
        (KIP-1312)."""
        return self.at_least("4.4-IV2")

    def __str__(self) -> str:
        return self.name


#: (name, didMetadataChange) by level from 1; Kafka 4.4 knows 7 onwards, kraftwire reads the older ones in old logs
_LEVELS = (("3.0-IV1", True), ("3.1-IV0", False), ("3.2-IV0", True), ("3.3-IV0", False), ("3.3-IV1", True),
           ("3.3-IV2", True), ("3.3-IV3", True), ("3.4-IV0", True), ("3.5-IV0", False), ("3.5-IV1", False),
           ("3.5-IV2", True), ("3.6-IV0", False), ("3.6-IV1", True), ("3.6-IV2", True), ("3.7-IV0", True),
           ("3.7-IV1", False), ("3.7-IV2", True), ("3.7-IV3", False), ("3.7-IV4", False), ("3.8-IV0", False),
           ("3.9-IV0", False), ("4.0-IV0", False), ("4.0-IV1", True), ("4.0-IV2", False), ("4.0-IV3", False),
           ("4.1-IV0", False), ("4.1-IV1", False), ("4.2-IV0", False), ("4.2-IV1", False), ("4.3-IV0", True),
           ("4.4-IV0", False), ("4.4-IV1", True), ("4.4-IV2", True), ("4.5-IV0", False))
ALL: tuple[MetadataVersion, ...] = tuple(MetadataVersion(name, level, changed)
                                         for level, (name, changed) in enumerate(_LEVELS, 1))
BY_NAME: dict[str, MetadataVersion] = {v.name: v for v in ALL}
BY_LEVEL: dict[int, MetadataVersion] = {v.level: v for v in ALL}

LATEST_PRODUCTION_LEVEL = 33
#: the levels Kafka 4.4 knows (its MetadataVersion enum)
KAFKA_MINIMUM = BY_NAME["3.3-IV3"]
LATEST_PRODUCTION = BY_LEVEL[LATEST_PRODUCTION_LEVEL]
LATEST_TESTING = ALL[-1]

#: what the levels above kraftwire's MAXIMUM bring that kraftwire lacks (why they are refused)
UNIMPLEMENTED: dict[str, str] = {
    "4.5-IV0": "Kafka 4.5's unstable metadata",
}

MINIMUM = KAFKA_MINIMUM
MAXIMUM = LATEST_PRODUCTION
#: what ``storage format`` picks without ``--release-version`` (the suite's clusters run at it): the newest level
DEFAULT = MAXIMUM


def supported() -> tuple[MetadataVersion, ...]:
    return tuple(v for v in ALL if MINIMUM.level <= v.level <= MAXIMUM.level)


def kafka_names(last: MetadataVersion = LATEST_PRODUCTION) -> str:
    """Kafka's list of the versions it accepts, ``3.3-IV3, ..., last`` (its ``metadataVersionsToString``)."""
    return ", ".join(v.name for v in ALL if KAFKA_MINIMUM.level <= v.level <= last.level)


def lookup(text: str, *, unstable: bool = False) -> MetadataVersion:
    """A version string as Kafka 4.4's ``fromVersionString`` reads it: a step (``3.7-IV2``), or a release (``3.7``,
    ``3.7.1``: the release's latest production step); with ``unstable`` the non-production levels too. The
    ``ValueError`` is Kafka's message. Whether kraftwire implements the level is ``check_supported``'s question."""
    parts = text.split(".")
    key = text if len(parts) <= 2 else ".".join(parts[:2])
    found = BY_NAME.get(key)
    if found is None:
        steps = [v for v in ALL if v.release == key and v.is_production]
        found = steps[-1] if steps else None
    if found is None or found.level < KAFKA_MINIMUM.level or (not unstable and not found.is_production):
        raise ValueError(f"Unknown metadata.version '{text}'. Supported metadata.version are: "
                         + kafka_names(LATEST_TESTING if unstable else LATEST_PRODUCTION))
    return found


def parse(text: str) -> MetadataVersion:
    """``lookup`` then ``check_supported``: a level kraftwire can run at, or a ``ValueError`` saying why not."""
    return check_supported(lookup(text.strip()))


def from_level(level: int) -> MetadataVersion:
    found = BY_LEVEL.get(level)
    if found is None:
        raise ValueError(f"unknown metadata.version level {level} (known: 1 to {ALL[-1].level})")
    return check_supported(found)


def unsupported_reason(version: MetadataVersion) -> str:
    """Why kraftwire cannot run at ``version`` ("" when it can)."""
    if MINIMUM.level <= version.level <= MAXIMUM.level:
        return ""
    supported_range = (f"kraftwire supports {MINIMUM.name} (level {MINIMUM.level}) to {MAXIMUM.name} "
                       f"(level {MAXIMUM.level})")
    missing = [UNIMPLEMENTED[v.name] for v in ALL if MAXIMUM.level < v.level <= version.level
               and v.name in UNIMPLEMENTED]
    if missing:
        return (f"metadata.version {version.name} (level {version.level}) needs {', '.join(missing)}, which "
                f"kraftwire does not implement yet; {supported_range}")
    return f"metadata.version {version.name} (level {version.level}) is not supported: {supported_range}"


def check_supported(version: MetadataVersion) -> MetadataVersion:
    why = unsupported_reason(version)
    if why:
        raise ValueError(why)
    return version


def metadata_changed_between(a: MetadataVersion, b: MetadataVersion) -> bool:
    """Kafka's checkIfMetadataChanged: whether some level in ``(low, high]`` changed the metadata."""
    low, high = sorted((a.level, b.level))
    return any(BY_LEVEL[level].did_metadata_change for level in range(low + 1, high + 1))
