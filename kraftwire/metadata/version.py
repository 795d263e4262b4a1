"""``metadata.version``: Kafka's metadata versions as data, and the record versions a level implies.

Each level is a Kafka release's inter-broker protocol step (``3.9-IV0`` is level 21). A cluster's level, kept as the
``metadata.version`` FeatureLevelRecord, decides which record versions the controller writes:

* RegisterBrokerRecord v1 from 3.3-IV3 (InControlledShutdown), v2 from 3.4-IV0, v3 from 3.7-IV2 (LogDirs);
* PartitionRecord / PartitionChangeRecord v1 from 3.7-IV2 (Directories), v2 from 4.0-IV1 (ELR);
* BrokerRegistrationChangeRecord v1 from 3.3-IV3, v2 from 3.7-IV2;
* metadata transactions (Begin/End/AbortTransactionRecord, KIP-868) from 3.6-IV1.

kraftwire reads and writes ``MINIMUM`` through ``MAXIMUM``; ``DEFAULT`` is what ``storage format`` picks without
``--release-version``. Levels above ``MAXIMUM`` (Kafka 4.0's ELR, group and transaction versions) are refused by
name until kraftwire implements what they imply.
"""

from __future__ import annotations

from typing import NamedTuple

FEATURE_NAME = "metadata.version"


class MetadataVersion(NamedTuple):
    name: str  # "3.9-IV0"
    level: int  # the FeatureLevelRecord value

    @property
    def release(self) -> str:
        return self.name.split("-", 1)[0]

    def at_least(self, name: str) -> bool:
        return self.level >= BY_NAME[name].level

    # ------------------------------------------------------------------------------------------------ versions
    @property
    def register_broker_record_version(self) -> int:
        return 3 if self.at_least("3.7-IV2") else 2 if self.at_least("3.4-IV0") else 1 if self.at_least("3.3-IV3") else 0

    @property
    def partition_record_version(self) -> int:
        """PartitionRecord and PartitionChangeRecord."""
        return 2 if self.at_least("4.0-IV1") else 1 if self.at_least("3.7-IV2") else 0

    @property
    def broker_registration_change_record_version(self) -> int:
        return 2 if self.at_least("3.7-IV2") else 1 if self.at_least("3.3-IV3") else 0

    @property
    def uses_metadata_transactions(self) -> bool:
        return self.at_least("3.6-IV1")

    @property
    def uses_fence_records(self) -> bool:
        """Below 3.3-IV2 fencing is Fence/UnfenceBrokerRecord; from it, BrokerRegistrationChangeRecord."""
        return not self.at_least("3.3-IV2")

    def __str__(self) -> str:
        return self.name


_NAMES = ("3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0", "3.5-IV0",
          "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3",
          "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2", "4.0-IV3")
ALL: tuple[MetadataVersion, ...] = tuple(MetadataVersion(name, level) for level, name in enumerate(_NAMES, 1))
BY_NAME: dict[str, MetadataVersion] = {v.name: v for v in ALL}
BY_LEVEL: dict[int, MetadataVersion] = {v.level: v for v in ALL}

MINIMUM = BY_NAME["3.3-IV3"]
MAXIMUM = BY_NAME["3.9-IV0"]
DEFAULT = MAXIMUM


def supported() -> tuple[MetadataVersion, ...]:
    return tuple(v for v in ALL if MINIMUM.level <= v.level <= MAXIMUM.level)


def parse(text: str) -> MetadataVersion:
    """A release (``3.7``: its latest step, ``3.7-IV4``) or a step (``3.7-IV2``), as Kafka's tools take it;
    ``ValueError`` names the supported range."""
    text = text.strip()
    found = BY_NAME.get(text)
    if found is None:
        steps = [v for v in ALL if v.release == text]
        found = steps[-1] if steps else None
    if found is None:
        raise ValueError(f"unknown metadata.version {text!r} (known: {ALL[0].name} to {ALL[-1].name})")
    return check_supported(found)


def from_level(level: int) -> MetadataVersion:
    found = BY_LEVEL.get(level)
    if found is None:
        raise ValueError(f"unknown metadata.version level {level} (known: 1 to {ALL[-1].level})")
    return check_supported(found)


def check_supported(version: MetadataVersion) -> MetadataVersion:
    if not MINIMUM.level <= version.level <= MAXIMUM.level:
        raise ValueError(f"metadata.version {version.name} (level {version.level}) is not supported by kraftwire; "
                         f"supported: {MINIMUM.name} (level {MINIMUM.level}) to {MAXIMUM.name} "
                         f"(level {MAXIMUM.level})")
    return version
