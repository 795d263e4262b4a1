"""metadata.version and the finalized features as Kafka 4.4 defines them (``kraftwire.metadata.version``,
``kraftwire.metadata.features``) and the active controller's UpdateFeatures (``metadata.controller.features``).

Mirrors Kafka's ``MetadataVersionTest``, ``FeatureTest`` and ``FeatureControlManagerTest``; the tables come from
Kafka 4.4.0's jars (``MetadataVersion`` and ``Feature`` read by reflection), and the answers were checked against a
real Kafka 4.4 node (``tests/kafka/test_features_oracle.py`` compares them live)."""

from __future__ import annotations

import uuid

import pytest

from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.metadata import features as ft
from kraftwire.metadata import version as mv
from kraftwire.metadata.controller import features as fc
from kraftwire.metadata.image import MetadataImage, replay_all
from kraftwire.protocol import messages as m

SUPPORTED = ft.supported_ranges()
ALL_FAILED = "The update failed for all features since the following feature had an error: "


# ---------------------------------------------------------------------------------------------- MetadataVersionTest
def test_the_levels_kafka_4_4_knows():
    """MetadataVersionTest.testFeatureLevel / testVersion: 3.3-IV3 (7) to 4.5-IV0 (34), 4.4-IV2 the latest
    production level."""
    known = [v for v in mv.ALL if v.level >= mv.KAFKA_MINIMUM.level]
    assert [(v.level, v.name) for v in known][:2] == [(7, "3.3-IV3"), (8, "3.4-IV0")]
    assert [(v.level, v.name) for v in known][-6:] == [(29, "4.2-IV1"), (30, "4.3-IV0"), (31, "4.4-IV0"),
                                                       (32, "4.4-IV1"), (33, "4.4-IV2"), (34, "4.5-IV0")]
    assert mv.LATEST_PRODUCTION.name == "4.4-IV2" and mv.LATEST_TESTING.name == "4.5-IV0"
    assert [v.name for v in known if not v.is_production] == ["4.5-IV0"]
    assert [v.name for v in known if v.did_metadata_change] == [
        "3.3-IV3", "3.4-IV0", "3.5-IV2", "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV2", "4.0-IV1", "4.3-IV0", "4.4-IV1",
        "4.4-IV2"]


@pytest.mark.parametrize("text, name", [
    ("3.7", "3.7-IV4"), ("3.7.1", "3.7-IV4"), ("3.7-IV2", "3.7-IV2"), ("4.0", "4.0-IV3"), ("4.4", "4.4-IV2"),
    ("4.4-IV0", "4.4-IV0"), ("3.3", "3.3-IV3"),
])
def test_from_version_string(text, name):
    """MetadataVersionTest.testFromVersionString: a release is its latest production step."""
    assert mv.lookup(text).name == name


@pytest.mark.parametrize("text", ["3.2", "3.3-IV2", "2.8", "4.5", "4.5-IV0", "x"])
def test_from_version_string_refuses_what_kafka_4_4_refuses(text):
    with pytest.raises(ValueError) as refused:
        mv.lookup(text)
    assert str(refused.value) == (f"Unknown metadata.version '{text}'. Supported metadata.version are: 3.3-IV3, "
                                  + mv.kafka_names().split("3.3-IV3, ", 1)[1])
    assert str(refused.value).endswith("4.4-IV0, 4.4-IV1, 4.4-IV2")


def test_unstable_levels_are_read_when_asked():
    """As Kafka's version-mapping reads them: a step, not a release (a release names its production steps)."""
    assert mv.lookup("4.5-IV0", unstable=True).level == 34
    with pytest.raises(ValueError, match="4.4-IV2, 4.5-IV0$"):
        mv.lookup("4.5", unstable=True)


@pytest.mark.parametrize("name, register_broker, partition, registration_change", [
    ("3.3-IV3", 1, 0, 1), ("3.4-IV0", 2, 0, 1), ("3.7-IV2", 3, 1, 2), ("3.9-IV0", 3, 1, 2), ("4.0-IV1", 3, 2, 2),
    ("4.2-IV1", 3, 2, 2), ("4.3-IV0", 4, 2, 2), ("4.4-IV0", 4, 2, 2),
])
def test_record_versions(name, register_broker, partition, registration_change):
    """MetadataVersionTest.testRegisterBrokerRecordVersion / testPartitionRecordVersion /
    testPartitionChangeRecordVersion."""
    v = mv.BY_NAME[name]
    assert (v.register_broker_record_version, v.partition_record_version,
            v.broker_registration_change_record_version) == (register_broker, partition, registration_change)


@pytest.mark.parametrize("a, b, changed", [
    ("3.9-IV0", "3.8-IV0", False), ("4.0-IV0", "3.7-IV3", False), ("4.0-IV1", "4.0-IV0", True),
    ("4.2-IV1", "4.0-IV1", False), ("4.4-IV0", "4.3-IV0", False), ("4.4-IV0", "4.2-IV1", True),
    ("3.7-IV2", "3.7-IV2", False),
])
def test_metadata_changed_between(a, b, changed):
    """MetadataVersionTest.testIsMetadataChanged (checkIfMetadataChanged), both ways round."""
    assert mv.metadata_changed_between(mv.BY_NAME[a], mv.BY_NAME[b]) is changed
    assert mv.metadata_changed_between(mv.BY_NAME[b], mv.BY_NAME[a]) is changed


def test_kraftwire_runs_up_to_kafkas_latest_production_level_4_4_iv2():
    """4.4-IV1 (CIDR ACL hosts, KIP-1276) and 4.4-IV2 (controller unregistration, KIP-1312) are implemented; only
    Kafka 4.5's unstable 4.5-IV0 is refused by name."""
    assert (mv.MINIMUM.name, mv.MAXIMUM.name, mv.DEFAULT) == ("3.3-IV3", "4.4-IV2", mv.MAXIMUM)
    assert mv.MAXIMUM == mv.LATEST_PRODUCTION
    assert mv.parse("4.3").name == "4.3-IV0" and mv.parse("4.4").name == "4.4-IV2"
    assert mv.from_level(32).supports_cidr_acls and not mv.from_level(32).supports_controller_unregistration
    assert mv.from_level(33).supports_controller_unregistration and not mv.BY_NAME["4.4-IV0"].supports_cidr_acls
    with pytest.raises(ValueError, match=r"4\.5-IV0 \(level 34\) needs Kafka 4\.5's unstable metadata"):
        mv.check_supported(mv.LATEST_TESTING)


# ---------------------------------------------------------------------------------------------------- FeatureTest
#: Kafka 4.4's Feature.defaultLevel of each feature at these metadata versions (read from its jar)
DEFAULTS = {
    "3.3-IV3": (0, 0, 0, 0, 0, 0), "3.9-IV0": (1, 0, 0, 0, 0, 0), "4.0-IV0": (1, 0, 1, 0, 0, 0),
    "4.0-IV1": (1, 0, 1, 0, 0, 0), "4.0-IV2": (1, 2, 1, 0, 0, 0), "4.1-IV0": (1, 2, 1, 1, 0, 0),
    "4.2-IV0": (1, 2, 1, 1, 1, 0), "4.2-IV1": (1, 2, 1, 1, 1, 1), "4.3-IV0": (1, 2, 1, 1, 1, 1),
    "4.4-IV0": (1, 2, 1, 1, 2, 1), "4.4-IV2": (1, 2, 1, 1, 2, 1), "4.5-IV0": (1, 2, 1, 1, 2, 1),
}


@pytest.mark.parametrize("version", sorted(DEFAULTS))
def test_default_levels(version):
    """FeatureTest.testDefaultLevelAllFeatures, in Kafka's feature order (Feature.PRODUCTION_FEATURES)."""
    assert list(ft.release_defaults(mv.BY_NAME[version]).items()) == list(zip(
        ["kraft.version", "transaction.version", "group.version", "eligible.leader.replicas.version",
         "share.version", "streams.version"], DEFAULTS[version]))


def test_dependencies():
    """FeatureTest.testValidateWithMVDependency: only eligible.leader.replicas.version 1 has one (4.0-IV1)."""
    deps = {(f.name, lvl.level): lvl.dependencies for f in ft.FEATURES for lvl in f.levels if lvl.dependencies}
    assert deps == {("eligible.leader.replicas.version", 1): (("metadata.version", 23),)}
    assert ft.dependency_error("eligible.leader.replicas.version", 1, {"metadata.version": 22}) == (
        "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23")
    assert ft.dependency_error("eligible.leader.replicas.version", 1, {"metadata.version": 23}) == ""
    assert ft.dependency_error("eligible.leader.replicas.version", 0, {"metadata.version": 7}) == ""


def test_what_kraftwire_implements_and_advertises():
    assert SUPPORTED == {"metadata.version": (7, 33), "kraft.version": (0, 1), "transaction.version": (0, 2),
                         "group.version": (0, 1), "eligible.leader.replicas.version": (0, 1),
                         "share.version": (0, 2), "streams.version": (0, 0)}
    assert ft.refusal("share.version", 2) == ""  # share groups' dead-letter queues (KIP-1191)
    assert ft.refusal("share.version", 1) == ""  # share groups (KIP-932), on by default as in Kafka
    assert ft.refusal("transaction.version", 1) == "" and ft.refusal("group.version", 1) == ""
    assert ft.refusal("transaction.version", 2) == ""  # KIP-890 part 2
    assert ft.refusal("eligible.leader.replicas.version", 1) == ""  # KIP-966
    assert "KIP-1071" in ft.refusal("streams.version", 1)


def test_a_releases_defaults_are_lowered_to_what_kraftwire_implements():
    levels, lowered = ft.kraftwire_defaults(mv.BY_NAME["4.3-IV0"])
    assert levels == {"transaction.version": 2, "group.version": 1, "eligible.leader.replicas.version": 1,
                      "share.version": 1, "streams.version": 0}
    assert sorted(lowered) == ["streams.version"]
    assert ft.kraftwire_defaults(mv.BY_NAME["4.4-IV0"])[0]["share.version"] == 2  # Kafka 4.4's default
    assert ft.kraftwire_defaults(mv.BY_NAME["3.9-IV0"]) == ({name: 0 for name in levels}, {})


def test_the_consumer_protocol_needs_group_version_1():
    assert not ft.consumer_protocol_enabled({"metadata.version": 21})
    assert ft.consumer_protocol_enabled({"metadata.version": 21, "group.version": 1})


# ------------------------------------------------------------------------------------------ FeatureControlManagerTest
def base(level: int = mv.MAXIMUM.level, features=(), broker=None) -> MetadataImage:
    R = m.RegisterBrokerRecord
    ranges = SUPPORTED if broker is None else broker
    return replay_all([
        m.FeatureLevelRecord(name=mv.FEATURE_NAME, feature_level=level),
        *(m.FeatureLevelRecord(name=n, feature_level=lvl) for n, lvl in features),
        R(broker_id=1, incarnation_id=uuid.UUID(int=1), broker_epoch=7, end_points=[], rack=None,
          features=[R.BrokerFeature(name=n, min_supported_version=lo, max_supported_version=hi)
                    for n, (lo, hi) in ranges.items()]),
    ])


def upd(*updates, validate_only=False):
    U = m.UpdateFeaturesRequest
    return U(timeout_ms=1, validate_only=validate_only, feature_updates=[
        U.FeatureUpdateKey(feature=name, max_version_level=level, allow_downgrade=kind != fc.UPGRADE,
                           upgrade_type=kind) for name, level, kind in updates])


def update(img, *updates, version=1, kraft_version=0, validate_only=False):
    return fc.update_features(img, upd(*updates, validate_only=validate_only), version, SUPPORTED, 1, kraft_version)


def refusal(img, *updates, **kw) -> str:
    res = update(img, *updates, **kw)
    r = res.response
    assert (r.error_code, r.results, res.records) == (ec.INVALID_UPDATE_VERSION, [], ())
    assert r.error_message.startswith(ALL_FAILED)
    return r.error_message[len(ALL_FAILED):]


def test_update_features_writes_one_record_per_change():
    """FeatureControlManagerTest.testUpdateFeatures / testCreateFeatureLevelRecords."""
    img = base(mv.BY_NAME["3.9-IV0"].level)
    res = update(img, ("metadata.version", 31, fc.UPGRADE), ("group.version", 1, fc.UPGRADE),
                 ("transaction.version", 0, fc.UPGRADE))
    assert [(r.feature, r.error_code, r.error_message) for r in res.response.results] == [
        ("metadata.version", 0, "NONE"), ("group.version", 0, "NONE"), ("transaction.version", 0, "NONE")]
    assert sorted((r.message.name, r.message.feature_level) for r in res.records) == [
        ("group.version", 1), ("metadata.version", 31)]
    after = replay(img, res.records)
    assert after.metadata_version.name == "4.4-IV0" and after.features["group.version"] == 1
    assert update(img, ("group.version", 1, fc.UPGRADE), validate_only=True).records == ()
    removed = update(after, ("group.version", 0, fc.SAFE_DOWNGRADE))
    assert "group.version" not in replay(after, removed.records).features


def test_a_safe_downgrade_is_taken_when_no_level_between_changed_the_metadata():
    """FeatureControlManagerTest.testCanUseSafeDowngradeIfMetadataDidNotChange: 3.9-IV0 to 3.8-IV0, 4.4-IV0 to
    4.3-IV0."""
    for start, target in ((21, 20), (31, 30)):
        for kind in (fc.SAFE_DOWNGRADE, fc.UNSAFE_DOWNGRADE):
            res = update(base(start), ("metadata.version", target, kind))
            assert res.response.error_code == ec.NONE and res.records[0].message.feature_level == target


@pytest.mark.parametrize("updates, kraft_version, message", [
    ([("metadata.version", 29, fc.SAFE_DOWNGRADE)], 0, "Unsupported metadata.version downgrade from 33 to 29. "
     "Refusing to perform the requested downgrade because it might delete metadata information."),
    ([("metadata.version", 22, fc.UNSAFE_DOWNGRADE)], 0, "Unsupported metadata.version downgrade from 33 to 22. "
     "Unsafe metadata downgrade is not supported in this version."),
    ([("metadata.version", 30, fc.UPGRADE)], 0, "Invalid update version 30 for feature metadata.version. Can't "
     "downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."),
    ([("transaction.version", 1, fc.SAFE_DOWNGRADE)], 0,
     "Invalid update version 1 for feature transaction.version. Can't downgrade to a newer version."),
    ([("group.version", -1, fc.UPGRADE)], 0,
     "Invalid update version -1 for feature group.version. A feature version cannot be less than 0."),
    ([("group.version", 1, 0)], 0,
     "Invalid update version 1 for feature group.version. The controller does not support the given upgrade type."),
    ([("group.version", 2, fc.UPGRADE)], 0,
     "Invalid update version 2 for feature group.version. Local controller 1 only supports versions 0-1"),
    ([("metadata.version", 0, fc.SAFE_DOWNGRADE)], 0,
     "Invalid update version 0 for feature metadata.version. Local controller 1 only supports versions 7-33"),
    ([("foo.bar", 1, fc.UPGRADE)], 0,
     "Invalid update version 1 for feature foo.bar. Local controller 1 does not support this feature."),
    ([("foo", 0, fc.UPGRADE)], 0, "Invalid update version 0 for feature foo. Feature foo not found."),
    ([("kraft.version", 1, fc.UPGRADE)], 0, "Invalid update version 1 for feature kraft.version. kraftwire does "
     "not upgrade kraft.version by UpdateFeatures yet"),
    ([("kraft.version", 0, fc.SAFE_DOWNGRADE)], 1,
     "Invalid update version 0 for feature kraft.version. Can't downgrade the version of this feature."),
])
def test_update_features_error_cases(updates, kraft_version, message):
    """FeatureControlManagerTest.testUpdateFeaturesErrorCases / testCannotDowngradeToHigherVersion /
    testCannotUnsafeDowngradeToHigherVersion / testCannotUseUnsafeDowngrade, with Kafka 4.4's messages."""
    assert refusal(base(features=[("group.version", 1)]), *updates, kraft_version=kraft_version).startswith(message)


@pytest.mark.parametrize("name, level, needle", [
    ("streams.version", 1, "needs streams groups (KIP-1071)"),
    ("metadata.version", 34, "needs Kafka 4.5's unstable metadata"),
])
def test_a_level_kraftwire_lacks_is_refused_by_name(name, level, needle):
    why = refusal(base(), (name, level, fc.UPGRADE))
    assert why.startswith(f"Invalid update version {level} for feature {name}. Local controller 1 ")
    assert needle in why


def test_dependencies_are_checked_against_the_requests_outcome():
    """FeatureControlManagerTest.testUpdateFeaturesWithDependencies (Kafka 4.4's ELR on metadata.version 4.0-IV1),
    over a feature range as a broker of Kafka's would register it."""
    wide = {**SUPPORTED, "metadata.version": (7, 33), "eligible.leader.replicas.version": (0, 1)}
    img = base(mv.BY_NAME["3.9-IV0"].level, broker=wide)

    def ask(*updates):
        return fc.update_features(img, upd(*updates), 1, wide, 1)

    alone = ask(("eligible.leader.replicas.version", 1, fc.UPGRADE)).response
    assert alone.error_message == ALL_FAILED + (
        "Invalid update version 1 for feature eligible.leader.replicas.version. eligible.leader.replicas.version "
        "could not be set to 1 because it depends on metadata.version level 23")
    both = ask(("metadata.version", 23, fc.UPGRADE), ("eligible.leader.replicas.version", 1, fc.UPGRADE))
    assert both.response.error_code == ec.NONE and len(both.records) == 3
    # turning ELR on makes min.insync.replicas cluster-level (ConfigurationControlManager.maybeGenerateElrSafetyRecords)
    safety = both.records[2].message
    assert (safety.resource_type, safety.resource_name, safety.name, safety.value) == (4, "", "min.insync.replicas",
                                                                                       "1")


def test_a_broker_that_does_not_support_a_level_stops_it():
    """FeatureControlManagerTest.testUpdateFeaturesErrorCases (the broker half)."""
    narrow = {**SUPPORTED, "group.version": (0, 0)}
    assert refusal(base(broker=narrow), ("group.version", 1, fc.UPGRADE)) == (
        "Invalid update version 1 for feature group.version. Broker 1 does not support this feature.")


def test_the_first_refusal_in_kafkas_map_order_fails_every_update():
    """Kafka walks the updates as a HashMap of their names: group.version before foo.bar, whatever the request's
    order; nothing is written when one fails."""
    for updates in ([("foo.bar", 3, fc.UPGRADE), ("group.version", 7, fc.UPGRADE)],
                    [("group.version", 7, fc.UPGRADE), ("foo.bar", 3, fc.UPGRADE)]):
        assert refusal(base(), *updates).startswith("Invalid update version 7 for feature group.version.")
    assert refusal(base(features=[("group.version", 1)]), ("transaction.version", 1, fc.UPGRADE),
                   ("group.version", 0, fc.UPGRADE)).startswith("Invalid update version 0 for feature group.version")


def test_version_0_is_always_an_upgrade():
    """Kafka 4.4 reads a v0 update's upgrade type at its default (upgrade) and never its allow_downgrade."""
    img = base(mv.BY_NAME["3.9-IV0"].level)
    assert "without setting the upgrade type" in refusal(img, ("metadata.version", 20, fc.SAFE_DOWNGRADE), version=0)
    assert update(img, ("metadata.version", 22, fc.SAFE_DOWNGRADE), version=0).response.error_code == ec.NONE


def test_kraft_version_at_its_level_passes_as_kafka_upgrade_release_version_sends_it():
    res = update(base(), ("kraft.version", 1, fc.UPGRADE), ("group.version", 1, fc.UPGRADE), kraft_version=1)
    assert res.response.error_code == ec.NONE
    assert [(r.message.name, r.message.feature_level) for r in res.records] == [("group.version", 1)]
