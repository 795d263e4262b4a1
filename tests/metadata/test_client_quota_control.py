"""Client quotas on the controller (``metadata.controller.client_quotas``): AlterClientQuotas as Kafka's
ClientQuotaControlManager decides it (the cases of Kafka's ClientQuotaControlManagerTest, named per test), the
records replayed into the image (through the serde) and written back by a snapshot, and DescribeClientQuotas
answered from the image with every match type and ``strict`` (Kafka's ClientQuotasImageTest and
ClientQuotasRequestTest). The answers' orders are checked against Kafka itself by the conformance scenarios
(``tests/conformance/scenarios/client_quotas.py``)."""

from __future__ import annotations

import math
import random
import uuid

import pytest

from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.metadata.controller import client_quotas as cq
from kraftwire.metadata.controller.quorum import QuorumController
from kraftwire.metadata.image import MetadataImage, replay_all
from kraftwire.metadata.version import DEFAULT, FEATURE_NAME
from kraftwire.protocol import messages as m

AQ, DQ = m.AlterClientQuotasRequest, m.DescribeClientQuotasRequest
EXACT, DEFAULT_MATCH, ANY = cq.MATCH_EXACT, cq.MATCH_DEFAULT, cq.MATCH_SPECIFIED
PRODUCE, CONSUME, REQUEST, MUTATION = ("producer_byte_rate", "consumer_byte_rate", "request_percentage",
                                       "controller_mutation_rate")


def image() -> MetadataImage:
    return replay_all([m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level)])


def entry(entity, ops) -> AQ.EntryData:
    """``entity``: [(type, name)], ``ops``: {key: value or None to remove}."""
    return AQ.EntryData(entity=[AQ.EntityData(entity_type=t, entity_name=n) for t, n in entity],
                        ops=[AQ.OpData(key=k, value=0.0 if v is None else v, remove=v is None) for k, v in ops.items()])


def alter(img, *entries, validate_only=False):
    return cq.alter_client_quotas(img, AQ(entries=list(entries), validate_only=validate_only))


def applied(img, *entries):
    """The image after the alterations, which must all succeed (Kafka's ``alterQuotas`` helper)."""
    result = alter(img, *entries)
    assert [e.error_code for e in result.response.entries] == [ec.NONE] * len(result.response.entries)
    return replay(img, result.records)


def errors(result) -> dict:
    return {tuple(sorted((e.entity_type, e.entity_name) for e in r.entity)): (r.error_code, r.error_message)
            for r in result.response.entries}


def user(name):
    return [("user", name)]


def user_client(u, c):
    return [("user", u), ("client-id", c)]


def assert_invalid(entity, ops, message=None):
    """Kafka's ``assertInvalidQuota``: INVALID_REQUEST for the entity and no records."""
    result = alter(image(), entry(entity, ops))
    (code, got), = errors(result).values()
    assert code == ec.INVALID_REQUEST
    if message is not None:
        assert got == message
    assert result.records == ()


# ------------------------------------------------------------------------------------------------ alter
def test_invalid_entity_types():
    """ClientQuotaControlManagerTest.testInvalidEntityTypes."""
    assert_invalid([("foo", "bar")], {PRODUCE: 10000.0}, "Unhandled client quota entity type: foo")
    assert_invalid([("user", "user-1"), ("foo", "bar")], {PRODUCE: 10000.0})
    assert_invalid([("foo", "bar"), ("ip", "1.2.3.4")], {PRODUCE: 10000.0})
    combination = "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"
    assert_invalid([("user", "user-1"), ("ip", "1.2.3.4")], {PRODUCE: 10000.0}, combination)
    assert_invalid([("client-id", "user-1"), ("ip", "1.2.3.4")], {PRODUCE: 10000.0}, combination)
    assert_invalid([], {PRODUCE: 10000.0}, "Invalid empty client quota entity")
    assert_invalid(user(""), {PRODUCE: 10000.0}, "Empty user not supported")


def test_invalid_quota_keys():
    """ClientQuotaControlManagerTest.testInvalidQuotaKeys: an unknown key beside a valid one, in either order."""
    assert_invalid(user("user-1"), {"not.a.quota.key": 0.0, REQUEST: 99.9})
    assert_invalid(user("user-1"), {REQUEST: 99.9, "not.a.quota.key": 0.0})
    assert_invalid(user("user-1"), {"not.a.quota.key": 5.0}, "Invalid configuration key not.a.quota.key")
    assert_invalid([("ip", "1.2.3.4")], {PRODUCE: 5.0}, "Invalid configuration key producer_byte_rate")
    assert_invalid(user("u"), {"connection_creation_rate": 5.0}, "Invalid configuration key connection_creation_rate")


def test_alter_and_remove():
    """ClientQuotaControlManagerTest.testAlterAndRemove."""
    key = (("user", "user-1"),)
    img = applied(image(), entry(user("user-1"), {PRODUCE: 10000.0}))
    assert dict(img.client_quotas[key]) == {PRODUCE: 10000.0}
    img = applied(img, entry(user("user-1"), {PRODUCE: 10001.0, CONSUME: 20000.0}))
    assert dict(img.client_quotas[key]) == {PRODUCE: 10001.0, CONSUME: 20000.0}
    img = applied(img, entry(user("user-1"), {PRODUCE: None}))
    assert dict(img.client_quotas[key]) == {CONSUME: 20000.0}
    result = alter(img, entry(user("user-1"), {REQUEST: None}))  # removing what is not there writes nothing
    assert result.records == () and errors(result) == {key: (ec.NONE, None)}
    img = applied(img, entry(user("user-1"), {CONSUME: None}))
    assert key not in img.client_quotas
    assert alter(img, entry(user("user-1"), {CONSUME: None})).records == ()
    img = applied(img, entry(user("user-1"), {REQUEST: 99.0, MUTATION: None, PRODUCE: 10002.0, CONSUME: 20001.0}))
    assert dict(img.client_quotas[key]) == {REQUEST: 99.0, PRODUCE: 10002.0, CONSUME: 20001.0}


def test_unchanged_values_write_no_record():
    img = applied(image(), entry(user("u"), {PRODUCE: 5.0}))
    result = alter(img, entry(user("u"), {PRODUCE: 5.0, CONSUME: 6.0}))
    assert [r.message.key for r in result.records] == [CONSUME]


def test_entity_types():
    """ClientQuotaControlManagerTest.testEntityTypes: every combination of users, client ids and their defaults."""
    cases = {
        (("user", "user-1"), ("client-id", "client-id-1")): 50.50, (("user", "user-2"), ("client-id", "client-id-1")): 51.51,
        (("user", "user-3"), ("client-id", "client-id-2")): 52.52, (("user", None), ("client-id", "client-id-1")): 53.53,
        (("user", "user-1"), ("client-id", None)): 54.54, (("user", "user-3"), ("client-id", None)): 55.55,
        (("user", "user-1"),): 56.56, (("user", "user-2"),): 57.57, (("user", "user-3"),): 58.58,
        (("user", None),): 59.59, (("client-id", "client-id-2"),): 60.60,
    }
    result = alter(image(), *(entry(list(e), {REQUEST: v}) for e, v in cases.items()))
    assert {r.message.key for r in result.records} == {REQUEST}
    got = {tuple(sorted((d.entity_type, d.entity_name) for d in r.message.entity)): r.message.value
           for r in result.records}
    assert got == {tuple(sorted(e)): v for e, v in cases.items()}
    img = replay(image(), result.records)
    assert {k: dict(v) for k, v in img.client_quotas.items()} == {tuple(sorted(e)): {REQUEST: v}
                                                                  for e, v in cases.items()}


def test_record_lists_entity_types_in_kafkas_order():
    # Kafka's test above sorts the records before comparing; the log holds them as its validated HashMap iterates
    # (a java.util.HashMap<>(3) of "user" and "client-id" lists client-id first, whatever the put order)
    for listed in (user_client("u", "c"), user_client("u", "c")[::-1]):
        result = alter(image(), entry(listed, {PRODUCE: 1.0}))
        assert [d.entity_type for d in result.records[0].message.entity] == ["client-id", "user"]


@pytest.mark.parametrize("name, valid", [(None, True), ("1.2.3.4", True), ("::1", True), ("not a host", False),
                                         ("300.1.1.1", False)])
def test_is_valid_ip_entity(name, valid):
    """ClientQuotaControlManagerTest.testIsValidIpEntityWithNull / ...WithUnresolvableHostname. Kafka resolves host
    names (``localhost`` passes there); the controller here does no DNS lookup and takes IP literals only."""
    assert cq.is_ip_literal(name) is valid


def test_config_keys_for_entity_types():
    """ClientQuotaControlManagerTest.testConfigKeysForEntityTypeWith{User,ClientId,UserAndClientId,Ip} and
    testConfigKeysForUnresolvableIpEntity."""
    for entity in (user("u"), [("client-id", "c")], user_client("u", "c"), [("ip", None)]):
        keys = cq.IP_KEYS if entity[0][0] == "ip" else cq.USER_CLIENT_KEYS
        result = alter(image(), entry(entity, {k: 1.0 for k in keys}))
        assert list(errors(result).values()) == [(ec.NONE, None)]
        assert {r.message.key for r in result.records} == set(keys)
    assert_invalid([("ip", "no.such.host.invalid")], {"connection_creation_rate": 1.0},
                   "no.such.host.invalid is not a valid IP or resolvable host.")


@pytest.mark.parametrize("key, value, message", [
    ("not_a_quota", 1.0, "Invalid configuration key not_a_quota"),  # ...ForUnknownQuota
    (CONSUME, 0.0, "Quota consumer_byte_rate must be greater than 0"),  # ...ForZeroQuota
    (CONSUME, -2.0, "Quota consumer_byte_rate must be greater than 0"),  # ...ForNegativeQuota
    (CONSUME, 1e20, "Proposed value for consumer_byte_rate is too large for a LONG."),  # ...ConsumerByteRateTooLarge
    (CONSUME, 1234.5, "consumer_byte_rate cannot be a fractional value."),  # ...ForFractionalConsumerByteRate
    (CONSUME, 1234.0, None),  # ...ForValidConsumerByteRate
    (CONSUME, 1234.0000001, None),  # ...ForValidConsumerByteRate2 (a remainder below 1e-6)
    (REQUEST, 56.62, None),  # ...ForValidRequestPercentage
    (MUTATION, 1e300, None),
    (PRODUCE, 1e300, "Proposed value for producer_byte_rate is too large for a LONG."),
])
def test_validate_quota_key_value(key, value, message):
    """ClientQuotaControlManagerTest.testValidateQuotaKeyValue*."""
    result = alter(image(), entry(user("u"), {key: value}))
    (code, got), = errors(result).values()
    assert (code, got) == ((ec.NONE, None) if message is None else (ec.INVALID_REQUEST, message))
    assert len(result.records) == (message is None)


def test_ip_quota_is_an_int():
    ip = [("ip", "10.0.0.1")]
    assert_invalid(ip, {"connection_creation_rate": 2.0 ** 31},
                   "Proposed value for connection_creation_rate is too large for an INT.")
    assert_invalid(ip, {"connection_creation_rate": 1.5}, "connection_creation_rate cannot be a fractional value.")
    assert len(alter(image(), entry(ip, {"connection_creation_rate": 2.0 ** 31 - 1})).records) == 1


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_quota_must_be_finite(value):
    """Kafka 4.4 refuses NaN and infinities before the other value checks (seen from its kafka-configs.sh)."""
    for key in (PRODUCE, REQUEST):
        assert_invalid(user("u"), {key: value}, f"Quota {key} must be a finite number")


def test_duplicate_entity_and_duplicate_key():
    """The second alteration of an entity is refused and the first one's records stay (Kafka's loop); a key named
    twice refuses its entity with the same message (the duplicate-key error is overwritten by it)."""
    result = alter(image(), entry(user("a"), {PRODUCE: 1.0}), entry(user("a"), {PRODUCE: 2.0}),
                   entry(user("b"), {PRODUCE: 1.0}))
    assert errors(result)[(("user", "a"),)] == (
        ec.INVALID_REQUEST, "Ignoring duplicate entity ClientQuotaEntity(entries={user=a})")
    assert errors(result)[(("user", "b"),)] == (ec.NONE, None)
    assert [(r.message.entity[0].entity_name, r.message.value) for r in result.records] == [("a", 1.0), ("b", 1.0)]
    dup_key = AQ.EntryData(entity=[AQ.EntityData(entity_type="user", entity_name=None)],
                           ops=[AQ.OpData(key=PRODUCE, value=1.0, remove=False)] * 2)
    result = cq.alter_client_quotas(image(), AQ(entries=[dup_key], validate_only=False))
    assert errors(result) == {(("user", None),): (
        ec.INVALID_REQUEST, "Ignoring duplicate entity ClientQuotaEntity(entries={user=null})")}
    assert result.records == ()


def test_validate_only_writes_nothing():
    result = alter(image(), entry(user("u"), {PRODUCE: 1.0}), validate_only=True)
    assert errors(result) == {(("user", "u"),): (ec.NONE, None)} and result.records == ()


def test_quorum_controller_serves_alter_client_quotas():
    qc = QuorumController(1, "cluster", rng=random.Random(0), new_uuid=lambda: uuid.uuid4().bytes)
    qc.load_snapshot(0, [m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level)])
    qc.activate(0)
    result = qc.handle("AlterClientQuotas", AQ(entries=[entry(user("u"), {PRODUCE: 9.0})], validate_only=False), 1,
                       now_ms=0, next_offset=1)
    qc.write(result.records, 1)
    assert dict(qc.latest.client_quotas[(("user", "u"),)]) == {PRODUCE: 9.0}


def test_snapshot_round_trip():
    """ClientQuotasImageTest.testImage1RoundTrip: the image written as records replays to itself."""
    img = applied(image(), entry(user_client("u", None), {PRODUCE: 1.0, CONSUME: 2.0}), entry([("ip", None)], {
        "connection_creation_rate": 3.0}), entry([("client-id", "c")], {REQUEST: 4.5}))
    again = replay_all([r.message for r in img.records()])
    assert again.client_quotas == img.client_quotas


# ------------------------------------------------------------------------------------------------ describe
def describe(img, *components, strict=False):
    return cq.describe_client_quotas(img, DQ(components=[DQ.ComponentData(entity_type=t, match_type=mt, match=n)
                                                         for t, mt, n in components], strict=strict))


def described(answer) -> set:
    assert answer.error_code == ec.NONE
    return {(tuple(sorted((e.entity_type, e.entity_name) for e in r.entity)),
             tuple(sorted((v.key, v.value) for v in r.values))) for r in answer.entries}


@pytest.fixture
def populated():
    """ClientQuotasRequestTest.setupDescribeClientQuotasMatchTest's entities: users, client ids, their defaults and
    combinations, each with one distinct quota."""
    entities = [user_client("user-1", "client-1"), user_client("user-2", "client-1"), user_client("user-2", None),
                user_client(None, "client-2"), user_client(None, None), user("user-1"), user("user-3"), user(None),
                [("client-id", "client-1")], [("client-id", "client-3")], [("client-id", None)]]
    return applied(image(), *(entry(e, {REQUEST: float(i + 1)}) for i, e in enumerate(entities)))


def names(answer) -> set:
    return {e for e, _ in described(answer)}


def test_describe_match_types(populated):
    """ClientQuotasRequestTest.testDescribeClientQuotasMatchExact / MatchPartial: exact names, defaults, any."""
    assert names(describe(populated, ("user", EXACT, "user-1"))) == {
        (("client-id", "client-1"), ("user", "user-1")), (("user", "user-1"),)}
    assert names(describe(populated, ("user", EXACT, "user-1"), strict=True)) == {(("user", "user-1"),)}
    assert names(describe(populated, ("user", DEFAULT_MATCH, None))) == {
        (("client-id", "client-2"), ("user", None)), (("client-id", None), ("user", None)), (("user", None),)}
    assert names(describe(populated, ("user", DEFAULT_MATCH, None), ("client-id", ANY, None))) == {
        (("client-id", "client-2"), ("user", None)), (("client-id", None), ("user", None))}
    assert names(describe(populated, ("client-id", EXACT, "client-1"), strict=True)) == {(("client-id", "client-1"),)}
    assert names(describe(populated, ("user", ANY, None), ("client-id", DEFAULT_MATCH, None), strict=True)) == {
        (("client-id", None), ("user", "user-2")), (("client-id", None), ("user", None))}
    assert len(names(describe(populated, ("client-id", ANY, None)))) == 8
    assert names(describe(populated, ("user", EXACT, "nobody"))) == set()


def test_describe_everything_and_strict_nothing(populated):
    assert len(names(describe(populated))) == len(populated.client_quotas)
    assert names(describe(populated, strict=True)) == set()


def test_describe_values(populated):
    ((_, values),) = described(describe(populated, ("user", EXACT, "user-3"), strict=True))
    assert values == ((REQUEST, 7.0),)


@pytest.mark.parametrize("components, code, message", [
    ([("", EXACT, "x")], ec.INVALID_REQUEST, "Invalid empty entity type."),
    ([("user", EXACT, "a"), ("user", ANY, None)], ec.INVALID_REQUEST,
     "Entity type user cannot appear more than once in the filter."),
    ([("group", EXACT, "g")], ec.UNSUPPORTED_VERSION, "Unsupported entity type group"),
    ([("user", EXACT, None)], ec.INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, but set match string to null."),
    ([("user", DEFAULT_MATCH, "a")], ec.INVALID_REQUEST,
     "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."),
    ([("user", ANY, "a")], ec.INVALID_REQUEST, "Request specified MATCH_TYPE_SPECIFIED, but also specified a match "
                                               "string."),
    ([("user", 9, None)], ec.INVALID_REQUEST, "Unknown match type 9"),
    ([("ip", ANY, None), ("client-id", EXACT, "c")], ec.INVALID_REQUEST,
     "Invalid entity filter component combination. IP filter component should not be used with user or clientId "
     "filter component."),
])
def test_describe_bad_filters(populated, components, code, message):
    """ClientQuotasImageTest / ClientQuotasRequestTest.testClientQuotasBadFilters: the error at the top, no
    entries."""
    answer = describe(populated, *components)
    assert (answer.error_code, answer.error_message, answer.entries) == (code, message, None)
