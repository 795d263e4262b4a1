"""Finalized features: the active controller's FeatureControlManager, pure.

UpdateFeatures sets a feature's finalized level with one FeatureLevelRecord (level 0 removes a feature other than
``metadata.version``). Each update is checked as Kafka checks it, every refusal INVALID_UPDATE_VERSION with Kafka's
reason: an unknown upgrade type; a level below 0; a higher level asked as a downgrade, or a lower one asked as an
upgrade; a level some registered broker or the controllers do not support; ``metadata.version`` removed or
downgraded (kraftwire keeps no lossy downgrade path, so even a safe one is refused, as Kafka refuses one that might
lose metadata). ``kraft.version`` belongs to the quorum's own log, not to these records.

``supported`` is what the controllers support, ``{name: (min, max)}``; a broker that registered no range for a
feature supports level 0 only (``metadata.version``: level 1 only, as Kafka assumes).
"""

from __future__ import annotations

from kraftwire.error_codes import INVALID_UPDATE_VERSION, NONE
from kraftwire.metadata.controller.result import ControllerResult
from kraftwire.metadata.image import MetadataImage
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.metadata.version import FEATURE_NAME
from kraftwire.protocol import messages as m

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
KRAFT_VERSION = "kraft.version"


def update_features(image: MetadataImage, req, version: int, supported: dict[str, tuple[int, int]]) -> ControllerResult:
    R = m.UpdateFeaturesResponse
    records: list[ApiMessageAndVersion] = []
    results = []
    for u in req.feature_updates:
        upgrade_type = u.upgrade_type if version >= 1 else (SAFE_DOWNGRADE if u.allow_downgrade else UPGRADE)
        why = _refusal(image, u.feature, u.max_version_level, upgrade_type, supported)
        if why:
            results.append(R.UpdatableFeatureResult(feature=u.feature, error_code=INVALID_UPDATE_VERSION,
                                                    error_message=why))
            continue
        if image.features.get(u.feature, 0) != u.max_version_level:
            records.append(ApiMessageAndVersion(m.FeatureLevelRecord(name=u.feature,
                                                                     feature_level=u.max_version_level), 0))
        results.append(R.UpdatableFeatureResult(feature=u.feature, error_code=NONE, error_message=None))
    return ControllerResult(() if req.validate_only else tuple(records),
                            R(throttle_time_ms=0, error_code=NONE, error_message=None, results=results))


def _refusal(image: MetadataImage, name: str, level: int, upgrade_type: int,
             supported: dict[str, tuple[int, int]]) -> str:
    if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        return f"Unknown upgrade type {upgrade_type}"
    if level < 0:
        return "A feature version cannot be less than 0."
    if name == KRAFT_VERSION:
        return "kraft.version is finalized in the quorum's own log (KRaftVersionRecord), not by UpdateFeatures here."
    current = image.features.get(name, 0)
    if level > current and upgrade_type != UPGRADE:
        return "Can't downgrade to a newer version."
    if level < current and upgrade_type == UPGRADE:
        return ("Can't downgrade the version of this feature without setting the upgrade type to either safe or "
                "unsafe downgrade.")
    if name == FEATURE_NAME:
        if level < current:
            return ("Unsafe metadata.version downgrades are not supported." if upgrade_type == UNSAFE_DOWNGRADE else
                    "Refusing to perform the requested downgrade because it might delete metadata information.")
    if level == 0 and name != FEATURE_NAME:
        return ""  # removing a feature is always possible
    lo, hi = supported.get(name, (0, 0))
    if not lo <= level <= hi:
        return f"The controller only supports versions {lo}-{hi} of {name}"
    for b in sorted(image.brokers.values(), key=lambda b: b.id):
        ranges = {f.name: (f.min_version, f.max_version) for f in b.features}
        blo, bhi = ranges.get(name, (1, 1) if name == FEATURE_NAME else (0, 0))
        if not blo <= level <= bhi:
            return f"Broker {b.id} does not support the given version. It supports versions {blo}-{bhi} of {name}"
    return ""
