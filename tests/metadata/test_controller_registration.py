"""Controller registrations (KIP-919, ``metadata.controller.controllers``): the active controller's decision, the
image it leads to, and when a controller sends its own. Mirrors Kafka's ``ClusterControlManagerTest``
(testRegisterControllerWithUnsupportedMetadataVersion / testRegisterController...) and
``ControllerRegistrationManagerTest`` (sending until the registration is in the log, resending after a failure), and
for KIP-1312's unregistration ClusterControlManager.unregisterController / QuorumController's checks as Kafka 4.4
answered them."""

from __future__ import annotations

import uuid

import pytest
from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.metadata import answers
from kraftwire.metadata.controller import controllers
from kraftwire.metadata.image import MetadataReplayError, replay_all
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.metadata.version import FEATURE_NAME, lookup
from kraftwire.protocol import messages as m

Q = m.ControllerRegistrationRequest
ME = uuid.UUID(int=0xABC)


def image(release: str = "3.9-IV0"):
    return replay_all([m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=lookup(release).level)])


def request(controller_id: int = 3000, incarnation=ME, listeners=(("CONTROLLER", "c1", 9093, 0),)):
    return Q(controller_id=controller_id, incarnation_id=incarnation, zk_migration_ready=False,
             listeners=[Q.Listener(name=n, host=h, port=p, security_protocol=sp) for n, h, p, sp in listeners],
             features=[Q.Feature(name=FEATURE_NAME, min_supported_version=7, max_supported_version=27)])


def test_registration_writes_one_record_and_the_image_lists_the_controller():
    result = controllers.register(image(), request(listeners=(("CONTROLLER", "c1", 9093, 0), ("SECURE", "c1", 9094, 1))))
    assert result.response.error_code == ec.NONE and result.response.error_message is None
    [record] = result.records
    assert record.version == 0 and isinstance(record.message, m.RegisterControllerRecord)
    assert record.message.zk_migration_ready is False
    after = replay(image(), result.records)
    c = after.controllers[3000]
    assert c.incarnation_id == ME and [(e.name, e.host, e.port, e.security_protocol) for e in c.listeners] == [
        ("CONTROLLER", "c1", 9093, 0), ("SECURE", "c1", 9094, 1)]
    assert [(f.name, f.min_version, f.max_version) for f in c.features] == [(FEATURE_NAME, 7, 27)]
    # the snapshot of the image writes it back as it was
    assert replay_all([r.message for r in after.records()]).controllers == after.controllers


def test_a_new_incarnation_replaces_the_old_registration():
    first = replay(image(), controllers.register(image(), request()).records)
    other = uuid.UUID(int=0xDEF)
    second = replay(first, controllers.register(first, request(incarnation=other)).records)
    assert second.controllers[3000].incarnation_id == other and len(second.controllers) == 1


def test_refused_before_3_7_iv0_with_kafkas_message():
    result = controllers.register(image("3.6-IV2"), request())
    assert (result.records, result.response.error_code) == ((), ec.UNSUPPORTED_VERSION)
    assert result.response.error_message == "The current MetadataVersion is too old to support controller registrations."
    assert controllers.register(image("3.7-IV0"), request()).response.error_code == ec.NONE


def test_an_unknown_security_protocol_is_refused_and_named():
    result = controllers.register(image(), request(listeners=(("CONTROLLER", "c1", 9093, 9),)))
    assert (result.records, result.response.error_code) == ((), ec.UNKNOWN_SERVER_ERROR)
    assert result.response.error_message == "Unknown security protocol 9 in listener CONTROLLER"


def test_a_listener_named_twice_keeps_its_last_entry():
    result = controllers.register(image(), request(listeners=(("CONTROLLER", "a", 1, 0), ("CONTROLLER", "b", 2, 0))))
    assert [(e.host, e.port) for e in result.records[0].message.end_points] == [("b", 2)]


def test_describe_cluster_lists_controllers_with_an_endpoint_on_the_listener_asked():
    img = image()
    for cid, listeners in ((3001, (("CONTROLLER", "c2", 9093, 0),)), (3000, (("CONTROLLER", "c1", 9093, 0),)),
                           (3002, (("OTHER", "c3", 9095, 0),))):
        img = replay(img, controllers.register(img, request(cid, uuid.UUID(int=cid), listeners)).records)
    listed = answers.describe_cluster_controllers(img, "CONTROLLER")
    assert [(b.broker_id, b.host, b.port, b.rack) for b in listed] == [(3000, "c1", 9093, None), (3001, "c2", 9093, None)]
    assert answers.describe_cluster_controllers(img, "NONE") == []


def test_the_sender_sends_until_its_own_registration_is_in_the_image():
    sender = controllers.RegistrationSender(3000, ME, settle_ms=5000)
    img = image()
    assert sender.due(img, 0)
    sender.sent()
    assert not sender.due(img, 1)  # one request at a time
    sender.answered(ec.NONE, 10, 0.5)
    assert not sender.due(img, 4000)  # accepted: waits for the record
    registered = replay(img, controllers.register(img, sender.request([("CONTROLLER", "h", 1, "PLAINTEXT")],
                                                                        {FEATURE_NAME: (7, 27)})).records)
    assert sender.registered_in(registered) and not sender.due(registered, 10_000)
    # the record never came (a failover lost it): sent again once settle_ms passed
    assert sender.due(img, 5010)
    # another process's registration of this id is not ours
    assert controllers.RegistrationSender(3000, uuid.UUID(int=1)).due(registered, 0)


def test_the_sender_backs_off_exponentially_after_refusals_and_waits_for_3_7():
    assert not controllers.RegistrationSender(3000, ME).due(image("3.6-IV2"), 0)
    sender = controllers.RegistrationSender(3000, ME)
    waits = []
    now = 0
    for _ in range(13):
        sender.sent()
        sender.answered(ec.UNKNOWN_SERVER_ERROR, now, 0.5)  # jitter 0.5: no spread
        waits.append(sender.next_ms - now)
        now = sender.next_ms
    assert waits[:5] == [100, 200, 400, 800, 1600] and waits[-1] == 120_000
    sender.sent()
    sender.answered(None, now, 1.0)  # no answer counts as a failure, the jitter at most +2 %
    assert sender.next_ms - now == int(120_000 * 1.02)
    sender.sent()
    sender.answered(ec.NONE, now, 0.0)
    assert sender.failures == 0


def test_the_request_carries_listeners_and_features():
    body = controllers.RegistrationSender(3000, ME).request(
        [("CONTROLLER", "h", 9093, "SASL_SSL")], {"kraft.version": (0, 1), FEATURE_NAME: (7, 27)})
    assert [(x.name, x.host, x.port, x.security_protocol) for x in body.listeners] == [("CONTROLLER", "h", 9093, 3)]
    assert [(f.name, f.min_supported_version, f.max_supported_version) for f in body.features] == [
        ("kraft.version", 0, 1), (FEATURE_NAME, 7, 27)]


# ------------------------------------------------------------------------------ unregistration (KIP-1312, 4.4-IV2)
U = m.UnregisterControllerRequest
ACTIVE = 3000


def registered(release: str = "4.4-IV2", *ids: int):
    img = image(release)
    for controller_id in ids or (ACTIVE, 3001):
        img = replay(img, controllers.register(img, request(controller_id=controller_id)).records)
    return img


def answer(result):
    return result.response.error_code, result.response.error_message


def test_unregistering_writes_one_record_and_the_controller_leaves_the_image():
    before = registered()
    result = controllers.unregister(before, U(controller_id=3001), ACTIVE)
    assert answer(result) == (ec.NONE, None)
    [record] = result.records
    assert record.version == 0 and record.message == m.UnregisterControllerRecord(controller_id=3001)
    after = replay(before, result.records)
    assert sorted(after.controllers) == [ACTIVE]
    assert replay_all([r.message for r in after.records()]).controllers == after.controllers


def test_the_active_controller_may_not_unregister_itself_whatever_the_level():
    """Kafka's QuorumController checks this first: at 4.4-IV0 too Kafka 4.4 answered it so."""
    for release in ("4.4-IV0", "4.4-IV2"):
        result = controllers.unregister(registered(release), U(controller_id=ACTIVE), ACTIVE)
        assert (result.records, answer(result)) == ((), (ec.INVALID_REQUEST, controllers.UNREGISTER_SELF))
    assert controllers.UNREGISTER_SELF == "Controller cannot unregister itself while it is active."


def test_refused_below_4_4_iv2_with_kafkas_message():
    """ClusterControlManager.unregisterController's level check;
    Kafka 4.4 at 4.4-IV0 and 4.4-IV1 answered an unknown id so, before looking it up."""
    for release in ("4.4-IV0", "4.4-IV1"):
        result = controllers.unregister(registered(release), U(controller_id=3001), ACTIVE)
        assert (result.records, answer(result)) == (
            (), (ec.UNSUPPORTED_VERSION, "The current MetadataVersion is too old to support controller "
                                         "unregistration."))


def test_an_id_without_a_registration_is_controller_id_not_registered():
    result = controllers.unregister(registered(), U(controller_id=5), ACTIVE)
    assert (result.records, answer(result)) == (
        (), (ec.CONTROLLER_ID_NOT_REGISTERED, "Controller ID 5 is not currently registered."))
    assert ec.CONTROLLER_ID_NOT_REGISTERED == 136


def test_replaying_an_unregistration_of_an_unknown_controller_is_an_error():
    """Kafka's ClusterControlManager.replay refuses it too (no controller registration found for that id)."""
    with pytest.raises(MetadataReplayError, match="no controller registration found"):
        replay(registered(), [ApiMessageAndVersion(m.UnregisterControllerRecord(controller_id=9), 0)])


def test_an_unregistered_controller_still_running_registers_again():
    """Kafka's ControllerRegistrationManager: once its registration leaves the image it is no longer registered in
    the log, so it sends ControllerRegistration again."""
    sender = controllers.RegistrationSender(3001, ME)
    before = registered()
    assert not sender.due(before, 0)
    after = replay(before, controllers.unregister(before, U(controller_id=3001), ACTIVE).records)
    assert sender.due(after, 0)
