"""Kafka 4.4's finalized features besides ``metadata.version``, their levels and dependencies, as data; and which of
those levels kraftwire implements.

Each level of a feature has the metadata.version whose release turns it on by default (its *bootstrap* version:
``storage format --release-version`` and ``features upgrade --release-version`` pick, per feature, the highest level
whose bootstrap version the release has reached) and the feature levels it depends on (only
``eligible.leader.replicas.version`` 1 has one: metadata.version 23, ``4.0-IV1``). ``kraft.version`` is listed for
the tools; its level lives in the Raft log (KIP-853), not in FeatureLevelRecords.

kraftwire implements a level only with its semantics. ``REFUSED`` names what each missing level brings; such a level
is outside the supported range this node advertises (ApiVersions, broker registration), so UpdateFeatures refuses it
as Kafka refuses any level a controller does not support, and ``storage format`` refuses it by name. A release's
default for such a feature is lowered to the highest level kraftwire has (``kraftwire_defaults`` says which).
"""

from __future__ import annotations

from typing import NamedTuple

from kraftwire.metadata import version as mv


class FeatureLevel(NamedTuple):
    level: int
    bootstrap: str  # the metadata.version from which this level is the default
    dependencies: tuple[tuple[str, int], ...] = ()


class Feature(NamedTuple):
    name: str
    levels: tuple[FeatureLevel, ...]  # level 0 first
    implemented: int  # the highest level kraftwire implements

    @property
    def latest_production(self) -> int:
        return self.levels[-1].level

    def default_level(self, version: mv.MetadataVersion) -> int:
        """Kafka's Feature.defaultLevel: the highest level whose bootstrap version ``version`` has reached."""
        return max(f.level for f in self.levels if version.level >= mv.BY_NAME[f.bootstrap].level)

    def level(self, level: int) -> FeatureLevel | None:
        return next((f for f in self.levels if f.level == level), None)


KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
ELR_VERSION = "eligible.leader.replicas.version"
SHARE_VERSION = "share.version"
STREAMS_VERSION = "streams.version"

_BASE = FeatureLevel(0, "3.3-IV3")
#: Kafka 4.4's production features, in its order (Feature.PRODUCTION_FEATURES)
FEATURES: tuple[Feature, ...] = (
    Feature(KRAFT_VERSION, (_BASE, FeatureLevel(1, "3.9-IV0")), implemented=1),
    # TV1: flexible TransactionLogValue records; TV2: KIP-890 part 2 (an epoch bump per transaction end)
    Feature(TRANSACTION_VERSION, (_BASE, FeatureLevel(1, "4.0-IV2"), FeatureLevel(2, "4.0-IV2")), implemented=2),
    # GV1: the KIP-848 consumer group protocol (ConsumerGroupHeartbeat)
    Feature(GROUP_VERSION, (_BASE, FeatureLevel(1, "4.0-IV0")), implemented=1),
    Feature(ELR_VERSION, (_BASE, FeatureLevel(1, "4.1-IV0", (("metadata.version", 23),))), implemented=1),
    # SV1: share groups (KIP-932); SV2: their dead-letter queues (KIP-1191, ShareVersion.supportsShareGroupDLQ:
    # rejected and exhausted records written to the group's errors.deadletterqueue.topic.name), Kafka 4.4's default.
    # KIP-1222's RENEW is not gated by a feature level: Kafka 4.4 serves it from ShareFetch/ShareAcknowledge v2
    Feature(SHARE_VERSION, (_BASE, FeatureLevel(1, "4.2-IV0"), FeatureLevel(2, "4.4-IV0")), implemented=2),
    Feature(STREAMS_VERSION, (_BASE, FeatureLevel(1, "4.2-IV1")), implemented=0),
)
BY_NAME: dict[str, Feature] = {f.name: f for f in FEATURES}

#: what a level kraftwire refuses would bring, by (feature, level)
REFUSED: dict[tuple[str, int], str] = {
    (STREAMS_VERSION, 1): "streams groups (KIP-1071)",
}


#: features kraftwire implements but does not turn on by default yet: the level ``storage format`` writes unless
#: ``--feature`` names it, and why (none now: share groups are on at Kafka's default levels)
OFF_BY_DEFAULT: dict[str, tuple[int, str]] = {}


def supported_ranges() -> dict[str, tuple[int, int]]:
    """What this build supports, ``{name: (min, max)}``: metadata.version and every feature (what a node advertises
    and registers with, and what UpdateFeatures may set)."""
    ranges = {mv.FEATURE_NAME: (mv.MINIMUM.level, mv.MAXIMUM.level)}
    ranges.update((f.name, (0, f.implemented)) for f in FEATURES)
    return ranges


def refusal(name: str, level: int) -> str:
    """Why kraftwire refuses ``name`` at ``level`` ("" when it implements it)."""
    if name == mv.FEATURE_NAME:
        return mv.unsupported_reason(mv.BY_LEVEL[level]) if level in mv.BY_LEVEL else ""
    feature = BY_NAME.get(name)
    if feature is None or level <= feature.implemented or feature.level(level) is None:
        return ""
    return (f"{name}={level} needs {REFUSED[(name, level)]}, which kraftwire does not implement yet; kraftwire "
            f"supports {name} up to level {feature.implemented}")


def dependency_error(name: str, level: int, proposed: dict[str, int]) -> str:
    """Kafka's Feature.validateVersion: "" when every dependency of ``name`` at ``level`` is met by ``proposed``
    (the finalized levels with the requested ones applied, metadata.version among them), else its message. (Its
    other rule, every level above 0 needs metadata.version 3.3-IV0, always holds here: kraftwire starts at
    3.3-IV3.)"""
    feature = BY_NAME[name]
    found = feature.level(level)
    deps = found.dependencies if found is not None else ()
    for dep, dep_level in deps:
        if proposed.get(dep, 0) < dep_level:
            return f"{name} could not be set to {level} because it depends on {dep} level {dep_level}"
    return ""


def release_defaults(version: mv.MetadataVersion) -> dict[str, int]:
    """Kafka's default level of every feature at ``version`` (``version-mapping``; kraft.version included)."""
    return {f.name: f.default_level(version) for f in FEATURES}


def kraftwire_defaults(version: mv.MetadataVersion) -> tuple[dict[str, int], dict[str, str]]:
    """The feature levels ``storage format`` writes at ``version`` (kraft.version aside): Kafka's defaults, each
    lowered to the highest level kraftwire implements; and, by feature, why a default was lowered."""
    levels: dict[str, int] = {}
    lowered: dict[str, str] = {}
    for f in FEATURES:
        if f.name == KRAFT_VERSION:
            continue
        default = f.default_level(version)
        cap, why = OFF_BY_DEFAULT.get(f.name, (f.implemented, ""))
        levels[f.name] = min(default, f.implemented, cap)
        if default > cap and why:
            lowered[f.name] = why
        elif default > f.implemented:
            lowered[f.name] = refusal(f.name, default)
    return levels, lowered


def share_groups_enabled(finalized) -> bool:
    """Whether share groups (KIP-932) are served: ``share.version`` 1 or above (Kafka's
    ``ShareVersion.supportsShareGroups``); below it Kafka answers ShareGroupHeartbeat and ShareGroupDescribe
    UNSUPPORTED_VERSION."""
    return finalized.get(SHARE_VERSION, 0) >= 1


def share_dlq_enabled(finalized) -> bool:
    """Whether a share group's rejected and exhausted records go to its dead-letter topic: ``share.version`` 2 or
    above (Kafka's ``ShareVersion.supportsShareGroupDLQ``, KIP-1191)."""
    return finalized.get(SHARE_VERSION, 0) >= 2


def consumer_protocol_enabled(finalized) -> bool:
    """Whether the KIP-848 consumer group protocol is served: ``group.version`` 1 or above, as Kafka 4.4 gates
    ConsumerGroupHeartbeat and ConsumerGroupDescribe (UNSUPPORTED_VERSION below it)."""
    return finalized.get(GROUP_VERSION, 0) >= 1
