"""Finalized features: the active controller's FeatureControlManager, pure.

UpdateFeatures sets a feature's finalized level with one FeatureLevelRecord (level 0 removes a feature other than
``metadata.version``). The updates are checked one by one, in the order Kafka's controller walks them (a Java
``HashMap`` of the names), as Kafka 4.4 checks them; the first refusal fails the whole request, answered as Kafka
answers it: INVALID_UPDATE_VERSION at the top level with "The update failed for all features since the following
feature had an error: <reason>" and no per-feature results. The reasons:

* an unknown upgrade type; a level below 0;
* a level this controller does not support (``supported``: kraftwire's ranges, ``kraftwire.metadata.features``; a
  level kraftwire lacks the semantics of gets its reason added by name) or some registered broker does not (a
  broker that registered no range for a feature supports level 0 only; ``metadata.version``: level 1 only);
* a higher level asked as a downgrade, or a lower one asked as an upgrade;
* ``metadata.version`` lowered across a level that changed the metadata (Kafka implements no unsafe downgrade
  either); a downgrade across none is taken;
* a feature whose dependencies the request's outcome would not meet (``eligible.leader.replicas.version`` 1 needs
  metadata.version 4.0-IV1);
* ``kraft.version`` changed: it lives in the Raft log (KIP-853), and kraftwire does not upgrade a static quorum's
  kraft.version live yet (its current level passes, as ``upgrade --release-version`` sends it).

When every update passes, each gets a result with error NONE (Kafka's message text "NONE"), in the request's order.
"""

from __future__ import annotations

from typing import Mapping

from kraftwire.error_codes import INVALID_UPDATE_VERSION, NONE
from kraftwire.java_order import hashmap_order, string_hash
from kraftwire.metadata import features as ft
from kraftwire.metadata import version as mv
from kraftwire.metadata.controller import elr
from kraftwire.metadata.controller.result import ControllerResult
from kraftwire.metadata.image import MetadataImage
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.protocol import messages as m

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
ALL_FAILED = "The update failed for all features since the following feature had an error: "


def update_features(image: MetadataImage, req, version: int, supported: dict[str, tuple[int, int]],
                    node_id: int = -1, kraft_version: int = 0,
                    static_config: Mapping[str, str] | None = None) -> ControllerResult:
    """``supported`` and ``node_id``: this controller's ranges and id; ``kraft_version``: the Raft log's level;
    ``static_config``: its properties (the cluster-level min ISR written when ELR is turned on)."""
    R = m.UpdateFeaturesResponse
    updates: dict[str, tuple[int, int]] = {}
    for u in req.feature_updates:  # v0 has no upgrade type: Kafka 4.4 reads its default, never allow_downgrade
        updates[u.feature] = (u.max_version_level, u.upgrade_type if version >= 1 else UPGRADE)
    order = hashmap_order(updates, string_hash)
    current = {**image.features, ft.KRAFT_VERSION: kraft_version}
    proposed = {**current, **{name: level for name, (level, _) in updates.items()}}
    records: list[ApiMessageAndVersion] = []
    for name in order:
        level, upgrade_type = updates[name]
        why = _refusal(image, name, level, upgrade_type, supported, node_id, current, proposed)
        if why:
            return ControllerResult((), R(throttle_time_ms=0, error_code=INVALID_UPDATE_VERSION,
                                          error_message=ALL_FAILED + why, results=[]))
        if current.get(name, 0) != level and name != ft.KRAFT_VERSION:
            records.append(ApiMessageAndVersion(m.FeatureLevelRecord(name=name, feature_level=level), 0))
    if any(name == ft.ELR_VERSION and level > 0 for name, (level, _) in updates.items()):
        records.extend(elr.safety_records(image, static_config or {}))
    results = [R.UpdatableFeatureResult(feature=u.feature, error_code=NONE, error_message="NONE")
               for u in req.feature_updates]
    return ControllerResult(() if req.validate_only else tuple(records),
                            R(throttle_time_ms=0, error_code=NONE, error_message=None, results=results))


def _refusal(image: MetadataImage, name: str, level: int, upgrade_type: int, supported: dict[str, tuple[int, int]],
             node_id: int, finalized: dict[str, int], proposed: dict[str, int]) -> str:
    def invalid(reason: str) -> str:
        return f"Invalid update version {level} for feature {name}. {reason}"

    if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        return invalid("The controller does not support the given upgrade type.")
    if level < 0:
        return invalid("A feature version cannot be less than 0.")
    lo, hi = supported.get(name, (0, 0))
    if not lo <= level <= hi:
        why = _not_supported(f"Local controller {node_id}", lo, hi)
        kraftwire_why = ft.refusal(name, level)
        return invalid(f"{why} ({kraftwire_why})" if kraftwire_why else why)
    for b in sorted(image.brokers.values(), key=lambda b: b.id):
        ranges = {f.name: (f.min_version, f.max_version) for f in b.features}
        blo, bhi = ranges.get(name, (1, 1) if name == mv.FEATURE_NAME else (0, 0))
        if not blo <= level <= bhi:
            return invalid(_not_supported(f"Broker {b.id}", blo, bhi))
    current = finalized.get(name, 0)
    if level < current and upgrade_type == UPGRADE:
        return invalid("Can't downgrade the version of this feature without setting the upgrade type to either "
                       "safe or unsafe downgrade.")
    if level > current and upgrade_type != UPGRADE:
        return invalid("Can't downgrade to a newer version.")
    if name == mv.FEATURE_NAME:
        if level < current and mv.metadata_changed_between(mv.BY_LEVEL[current], mv.BY_LEVEL[level]):
            return (f"Unsupported metadata.version downgrade from {current} to {level}. "
                    + ("Unsafe metadata downgrade is not supported in this version." if upgrade_type == UNSAFE_DOWNGRADE
                       else "Refusing to perform the requested downgrade because it might delete metadata "
                            "information."))
        return ""
    if name == ft.KRAFT_VERSION:
        if level == current:
            return ""
        if upgrade_type != UPGRADE:
            return invalid("Can't downgrade the version of this feature.")
        return invalid("kraftwire does not upgrade kraft.version by UpdateFeatures yet: a static quorum stays at "
                       "kraft.version 0 (format with --standalone or --initial-controllers for a dynamic one).")
    if name not in ft.BY_NAME:
        return invalid(f"Feature {name} not found.")
    return invalid(why) if (why := ft.dependency_error(name, level, proposed)) else ""


def _not_supported(who: str, lo: int, hi: int) -> str:
    """Kafka's QuorumFeatures.reasonNotSupported."""
    return f"{who} does not support this feature." if hi == 0 else f"{who} only supports versions {lo}-{hi}"
