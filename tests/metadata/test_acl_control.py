"""The active controller's ACL decisions (``metadata.controller.acls``), with the request layers Kafka puts in front of
them (request parsing, AclApis, AclControlManager). Each error is checked with its code and message, and the records
are replayed into an image to check the round trips. Kafka's sources: ``AclControlManager``, ``AclApis``,
``Create/Delete/DescribeAclsRequest``, ``ResourcePatternFilter``, ``AccessControlEntryFilter``."""

from __future__ import annotations

import uuid

import pytest

from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.metadata import records as serde
from kraftwire.metadata.controller import acls
from kraftwire.metadata.controller.refusals import refusal
from kraftwire.metadata.image import AclEntry, MetadataImage, replay_all
from kraftwire.metadata.version import BY_NAME, DEFAULT, FEATURE_NAME
from kraftwire.protocol import codec
from kraftwire.protocol import messages as m

CA, DA, DS = m.CreateAclsRequest, m.DeleteAclsRequest, m.DescribeAclsRequest
# resource types, pattern types, operations, permissions (Kafka's codes)
ANY = 1
TOPIC, GROUP, CLUSTER, TXN = 2, 3, 4, 5
MATCH, LITERAL, PREFIXED = 2, 3, 4
ALL, READ, WRITE, CREATE, DESCRIBE, ALTER = 2, 3, 4, 5, 8, 7
DENY, ALLOW = 2, 3


class Ids:
    """``new_uuid``: 1, 2, 3, ... as UUIDs."""

    def __init__(self, start: int = 1) -> None:
        self.n = start - 1

    def __call__(self) -> uuid.UUID:
        self.n += 1
        return uuid.UUID(int=self.n)


def base() -> MetadataImage:
    return replay_all([m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level)])


def creation(rtype=TOPIC, name="foo", pattern=LITERAL, principal="User:alice", host="*", op=READ, perm=ALLOW):
    return CA.AclCreation(resource_type=rtype, resource_name=name, resource_pattern_type=pattern, principal=principal,
                          host=host, operation=op, permission_type=perm)


def entry(rtype=TOPIC, name="foo", pattern=LITERAL, principal="User:alice", host="*", op=READ, perm=ALLOW):
    return AclEntry(rtype, name, pattern, principal, host, op, perm)


def dfilter(rtype=ANY, name=None, pattern=ANY, principal=None, host=None, op=ANY, perm=ANY):
    return DA.DeleteAclsFilter(resource_type_filter=rtype, resource_name_filter=name, pattern_type_filter=pattern,
                               principal_filter=principal, host_filter=host, operation=op, permission_type=perm)


def describe(rtype=ANY, name=None, pattern=ANY, principal=None, host=None, op=ANY, perm=ANY):
    return DS(resource_type_filter=rtype, resource_name_filter=name, pattern_type_filter=pattern,
              principal_filter=principal, host_filter=host, operation=op, permission_type=perm)


def create(img, *creations, version=3, new_uuid=None, **kw):
    return acls.create_acls(img, CA(creations=list(creations)), version, new_uuid or Ids(), **kw)


def results(result) -> list[tuple[int, str | None]]:
    return [(r.error_code, r.error_message) for r in result.response.results]


def with_acls(*entries: AclEntry) -> MetadataImage:
    """An image holding ``entries``, with ids 101, 102, ... in that order."""
    return replay_all([m.AccessControlEntryRecord(
        id=uuid.UUID(int=101 + i), resource_type=e.resource_type, resource_name=e.resource_name,
        pattern_type=e.pattern_type, principal=e.principal, host=e.host, operation=e.operation,
        permission_type=e.permission_type) for i, e in enumerate(entries)], base())


def listed(resp) -> list[tuple]:
    """A DescribeAcls answer as (type, name, pattern, principal, host, op, permission) rows."""
    return [(r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation, a.permission_type)
            for r in resp.resources for a in r.acls]


def row(e: AclEntry) -> tuple:
    return (e.resource_type, e.resource_name, e.pattern_type, e.principal, e.host, e.operation, e.permission_type)


# ================================================================================================================
# CreateAcls
# ================================================================================================================
def test_a_created_acl_is_one_record_and_replays_into_the_image():
    img = base()
    result = create(img, creation(principal="User:alice", host="10.0.0.1", op=WRITE, perm=DENY))
    assert results(result) == [(ec.NONE, "")]  # a success keeps Kafka's default message, ""
    [rec] = result.records
    assert rec.version == 0
    assert rec.message == m.AccessControlEntryRecord(
        id=uuid.UUID(int=1), resource_type=TOPIC, resource_name="foo", pattern_type=LITERAL,
        principal="User:alice", host="10.0.0.1", operation=WRITE, permission_type=DENY)
    after = replay(img, result.records)
    assert dict(after.acls) == {uuid.UUID(int=1): entry(host="10.0.0.1", op=WRITE, perm=DENY)}


def test_several_creations_in_one_request_get_one_record_each_with_its_own_id():
    img = base()
    result = create(img, creation(name="a"), creation(name="b", pattern=PREFIXED),
                    creation(rtype=CLUSTER, name="kafka-cluster", op=ALTER),
                    creation(rtype=GROUP, name="g", principal="User:*"),
                    creation(rtype=TXN, name="tx", op=WRITE))
    assert results(result) == [(ec.NONE, "")] * 5
    assert [r.message.id for r in result.records] == [uuid.UUID(int=i) for i in range(1, 6)]
    after = replay(img, result.records)
    assert sorted(row(e) for e in after.acls.values()) == sorted([
        row(entry(name="a")), row(entry(name="b", pattern=PREFIXED)),
        row(entry(rtype=CLUSTER, name="kafka-cluster", op=ALTER)), row(entry(rtype=GROUP, name="g", principal="User:*")),
        row(entry(rtype=TXN, name="tx", op=WRITE))])


def test_an_acl_already_there_or_twice_in_a_request_succeeds_without_a_second_record():
    img = replay(base(), create(base(), creation()).records)
    again = create(img, creation(), creation(op=WRITE), creation(op=WRITE), new_uuid=Ids(50))
    assert results(again) == [(ec.NONE, "")] * 3
    assert [r.message.operation for r in again.records] == [WRITE]  # READ was there; WRITE is written once
    after = replay(img, again.records)
    assert sorted(e.operation for e in after.acls.values()) == [READ, WRITE]
    # a different host, principal, pattern or permission is another ACL
    more = create(after, creation(host="h"), creation(principal="User:bob"), creation(pattern=PREFIXED),
                  creation(perm=DENY), new_uuid=Ids(60))
    assert len(more.records) == 4


def test_an_id_already_taken_is_drawn_again():
    img = replay(base(), create(base(), creation(name="x")).records)  # holds id 1
    result = create(img, creation(name="y"), new_uuid=Ids(1))
    assert [r.message.id for r in result.records] == [uuid.UUID(int=2)]


def test_aclapis_checks_the_cluster_name_and_an_empty_name_per_creation():
    result = create(base(), creation(rtype=CLUSTER, name="other"), creation(rtype=CLUSTER, name=""),
                    creation(name=""), creation(name="ok"))
    assert results(result) == [
        (ec.INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster"),
        (ec.INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster"),
        (ec.INVALID_REQUEST, "Invalid empty resource name"),
        (ec.NONE, "")]
    assert [r.message.resource_name for r in result.records] == ["ok"]


@pytest.mark.parametrize("fields, message", [
    (dict(rtype=99), "Invalid resourceType UNKNOWN"),  # a code Kafka does not know is UNKNOWN
    (dict(rtype=-1), "Invalid resourceType UNKNOWN"),
    (dict(pattern=9), "Invalid patternType UNKNOWN"),
    (dict(op=15), "Invalid operation UNKNOWN"),
    (dict(perm=4), "Invalid permissionType UNKNOWN"),
    (dict(rtype=99, op=15), "Invalid resourceType UNKNOWN"),  # checked in Kafka's order
    (dict(pattern=9, perm=4), "Invalid patternType UNKNOWN"),
])
def test_the_controller_refuses_unknown_codes_per_creation(fields, message):
    result = create(base(), creation(**fields), creation(name="fine"))
    assert results(result) == [(ec.INVALID_REQUEST, message), (ec.NONE, "")]
    assert len(result.records) == 1


@pytest.mark.parametrize("acl, message", [
    (entry(rtype=0), "Invalid resourceType UNKNOWN"),
    (entry(rtype=ANY), "Invalid resourceType ANY"),
    (entry(pattern=0), "Invalid patternType UNKNOWN"),
    (entry(pattern=ANY), "Invalid patternType ANY"),
    (entry(pattern=MATCH), "Invalid patternType MATCH"),
    (entry(op=0), "Invalid operation UNKNOWN"),
    (entry(op=ANY), "Invalid operation ANY"),
    (entry(perm=0), "Invalid permissionType UNKNOWN"),
    (entry(perm=ANY), "Invalid permissionType ANY"),
    (entry(name=""), "Resource name should not be empty"),
    (entry(rtype=ANY, pattern=MATCH, op=ANY, perm=ANY, name=""), "Invalid resourceType ANY"),
    (entry(), None),
    (entry(rtype=7, name="User:bob", op=13), None),  # USER, CREATE_TOKENS
    (entry(op=ALL, pattern=PREFIXED), None),
])
def test_validate_new_acl_is_kafkas(acl, message):
    assert acls.validate_new_acl(acl) == (None if message is None else (ec.INVALID_REQUEST, message))


def at_level(name: str) -> MetadataImage:
    return replay_all([m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=BY_NAME[name].level)])


CIDR_NEEDS_LEVEL = (ec.UNSUPPORTED_VERSION, "CIDR-based ACL host patterns require metadata version 4.4-IV1 or higher.")


@pytest.mark.parametrize("host", ["10.0.0.0/8", "2001:db8::/32", "10.0.0.0/33", "bad/cidr", "::ffff:10.0.0.0/104"])
def test_a_cidr_host_below_4_4_iv1_is_unsupported_version_whether_or_not_it_parses(host):
    """Kafka 4.4 at 4.4-IV0 answered each of these hosts so (the level is checked before the notation); the
    other creations of the request are made."""
    result = create(at_level("4.4-IV0"), creation(host=host), creation(name="fine", host="1.2.3.4"))
    assert results(result) == [CIDR_NEEDS_LEVEL, (ec.NONE, "")]
    assert [r.message.host for r in result.records] == ["1.2.3.4"]


@pytest.mark.parametrize("level", ["4.4-IV1", "4.4-IV2"])
def test_from_4_4_iv1_a_cidr_host_is_created_as_written(level):
    result = create(at_level(level), creation(host="10.0.0.0/8"), creation(host="2001:db8::/32"))
    assert results(result) == [(ec.NONE, "")] * 2
    assert [r.message.host for r in result.records] == ["10.0.0.0/8", "2001:db8::/32"]
    assert {a.host for a in replay(at_level(level), result.records).acls.values()} == {"10.0.0.0/8", "2001:db8::/32"}


@pytest.mark.parametrize("host, reason", [
    ("10.0.0.0/33", "Value [33] not in range [0,32]"),
    ("bad/cidr", "Could not parse [bad/cidr]"),
    ("::ffff:10.0.0.0/104", "Could not parse [::ffff:10.0.0.0] - not an IPv6 address"),
    ("2001:db8::/129", "Could not parse [2001:db8::/129] - prefix length must be between 0 and 128"),
])
def test_a_malformed_cidr_host_is_invalid_request_with_the_parsers_reason(host, reason):
    """The messages are the ones Kafka 4.4 answered at 4.4-IV1 (a running node, the same CreateAcls)."""
    result = create(at_level("4.4-IV1"), creation(host=host))
    assert results(result) == [(ec.INVALID_REQUEST, f"Invalid CIDR notation '{host}': {reason}")]
    assert result.records == ()


@pytest.mark.parametrize("level", ["4.4-IV0", "4.4-IV1"])
def test_an_empty_host_is_refused_at_every_level(level):
    result = create(at_level(level), creation(host=""))
    assert results(result) == [(ec.INVALID_REQUEST, "Host pattern cannot be null or empty")]


@pytest.mark.parametrize("bad", [dict(rtype=ANY), dict(pattern=ANY), dict(pattern=MATCH), dict(op=ANY),
                                 dict(perm=ANY)])
def test_an_any_in_one_creation_fails_the_whole_request_without_a_message(bad):
    """Kafka cannot make an AclBinding of it (IllegalArgumentException): the handler fails, and every creation
    answers UNKNOWN_SERVER_ERROR with no message."""
    result = create(base(), creation(name="fine"), creation(**bad), creation(rtype=CLUSTER, name="x"))
    assert results(result) == [(ec.UNKNOWN_SERVER_ERROR, None)] * 3
    assert result.records == ()


@pytest.mark.parametrize("bad", [dict(rtype=0), dict(pattern=0), dict(op=0), dict(perm=0)])
def test_an_unknown_zero_code_is_a_request_kafka_cannot_parse(bad):
    req = CA(creations=[creation(name="fine"), creation(**bad)])
    assert acls.request_error("CreateAcls", req, 3) == "CreatableAcls contain unknown elements"
    result = acls.create_acls(base(), req, 3, Ids())
    assert results(result) == [(ec.INVALID_REQUEST, "CreatableAcls contain unknown elements")] * 2
    assert result.records == ()


def test_without_an_authorizer_every_creation_is_security_disabled_as_kafkas_refusal():
    req = CA(creations=[creation(name="a"), creation(name="b")])
    result = acls.create_acls(base(), req, 3, Ids(), enabled=False)
    assert results(result) == [(ec.SECURITY_DISABLED, "No Authorizer is configured.")] * 2
    assert result.records == ()
    assert result.response == refusal("CreateAcls", req, 3, ec.SECURITY_DISABLED, acls.NO_AUTHORIZER)


def test_more_new_acls_than_one_operation_may_write_is_a_policy_violation(monkeypatch):
    assert acls.MAX_RECORDS_PER_USER_OP == 10_000  # QuorumController.MAX_RECORDS_PER_USER_OP
    monkeypatch.setattr(acls, "MAX_RECORDS_PER_USER_OP", 3)
    img = replay(base(), create(base(), creation(name="old")).records)
    fits = create(img, *[creation(name=n) for n in ("a", "b", "c", "old")], new_uuid=Ids(10))
    assert results(fits) == [(ec.NONE, "")] * 4 and len(fits.records) == 3  # "old" is no new record
    over = create(img, creation(rtype=CLUSTER, name="x"), *[creation(name=n) for n in "abcd"],
                  creation(op=15), new_uuid=Ids(10))
    assert over.records == ()
    assert results(over) == [
        (ec.INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster"),  # AclApis answered it
        *[(ec.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")] * 5]


# ================================================================================================================
# filters: DescribeAcls and DeleteAcls
# ================================================================================================================
FOO = entry(name="foo")
STAR = entry(name="*", principal="User:bob", op=WRITE)
FO_PREFIX = entry(name="fo", pattern=PREFIXED, principal="User:carol", perm=DENY)
FOO_PREFIX = entry(name="foo", pattern=PREFIXED, host="10.0.0.1", op=DESCRIBE)
FOOBAR = entry(name="foobar")
BAR_PREFIX = entry(name="bar", pattern=PREFIXED)
GROUP_FOO = entry(rtype=GROUP, name="foo")
CLUSTER_ALTER = entry(rtype=CLUSTER, name="kafka-cluster", op=ALTER, principal="User:bob")
EVERY = (FOO, STAR, FO_PREFIX, FOO_PREFIX, FOOBAR, BAR_PREFIX, GROUP_FOO, CLUSTER_ALTER)


@pytest.mark.parametrize("filt, want", [
    (describe(), EVERY),
    (describe(rtype=TOPIC), (FOO, STAR, FO_PREFIX, FOO_PREFIX, FOOBAR, BAR_PREFIX)),
    # ANY: the exact name, whatever the pattern type
    (describe(rtype=TOPIC, name="foo", pattern=ANY), (FOO, FOO_PREFIX)),
    (describe(name="foo", pattern=ANY), (FOO, FOO_PREFIX, GROUP_FOO)),
    # MATCH: every ACL that applies to the name: equal literal, literal *, a prefix of it
    (describe(rtype=TOPIC, name="foo", pattern=MATCH), (FOO, STAR, FO_PREFIX, FOO_PREFIX)),
    (describe(rtype=TOPIC, name="foobar", pattern=MATCH), (STAR, FO_PREFIX, FOO_PREFIX, FOOBAR)),
    (describe(rtype=TOPIC, name=None, pattern=MATCH), (FOO, STAR, FO_PREFIX, FOO_PREFIX, FOOBAR, BAR_PREFIX)),
    # LITERAL / PREFIXED: that pattern type and the exact name (no wildcard expansion)
    (describe(rtype=TOPIC, name="foo", pattern=LITERAL), (FOO,)),
    (describe(rtype=TOPIC, name="*", pattern=LITERAL), (STAR,)),
    (describe(rtype=TOPIC, name="foo", pattern=PREFIXED), (FOO_PREFIX,)),
    (describe(rtype=TOPIC, name=None, pattern=PREFIXED), (FO_PREFIX, FOO_PREFIX, BAR_PREFIX)),
    # the entry filter: exact principal (no User:* expansion), exact host, operation, permission
    (describe(principal="User:bob"), (STAR, CLUSTER_ALTER)),
    (describe(principal="User:*"), ()),
    (describe(host="10.0.0.1"), (FOO_PREFIX,)),
    (describe(op=DESCRIBE), (FOO_PREFIX,)),
    (describe(op=ALL), ()),
    (describe(perm=DENY), (FO_PREFIX,)),
    (describe(rtype=GROUP, name="foo", pattern=LITERAL, principal="User:alice", host="*", op=READ, perm=ALLOW),
     (GROUP_FOO,)),
    # a code Kafka does not know is UNKNOWN, which matches nothing
    (describe(rtype=99), ()),
    (describe(op=99), ()),
])
def test_describe_filters(filt, want):
    resp = acls.describe_acls(with_acls(*EVERY), filt, 3, enabled=True)
    assert (resp.error_code, resp.error_message) == (ec.NONE, "")
    assert sorted(listed(resp)) == sorted(row(e) for e in want)


def test_describe_groups_by_resource_pattern_and_lists_an_entry_once():
    img = with_acls(FOO, entry(name="foo", op=WRITE), entry(name="foo", principal="User:bob"), FOO_PREFIX,
                    FOO)  # the last one repeats the first under another id
    assert len(img.acls) == 5
    resp = acls.describe_acls(img, describe(), 3, enabled=True)
    assert [(r.resource_type, r.resource_name, r.pattern_type) for r in resp.resources] == [
        (TOPIC, "foo", LITERAL), (TOPIC, "foo", PREFIXED)]
    assert [(a.principal, a.host, a.operation, a.permission_type) for a in resp.resources[0].acls] == [
        ("User:alice", "*", READ, ALLOW), ("User:alice", "*", WRITE, ALLOW), ("User:bob", "*", READ, ALLOW)]
    for version in range(1, 4):
        codec.encode(resp, version)


def test_describe_without_an_authorizer_is_security_disabled():
    resp = acls.describe_acls(with_acls(FOO), describe(), 2, enabled=False)
    assert (resp.error_code, resp.error_message, resp.resources) == (
        ec.SECURITY_DISABLED, "No Authorizer is configured on the broker", [])


def test_describe_refuses_unknown_codes():
    img = with_acls(*EVERY)
    for bad in (dict(rtype=0), dict(pattern=0), dict(op=0), dict(perm=0)):
        resp = acls.describe_acls(img, describe(**bad), 3, enabled=True)
        assert (resp.error_code, resp.error_message) == (ec.INVALID_REQUEST,
                                                         "DescribeAclsRequest contains UNKNOWN elements")


# ================================================================================================================
# DeleteAcls
# ================================================================================================================
def delete(img, *filters, version=3, **kw):
    return acls.delete_acls(img, DA(filters=list(filters)), version, **kw)


def matched(filter_result) -> list[tuple]:
    return [(a.resource_type, a.resource_name, a.pattern_type, a.principal, a.host, a.operation, a.permission_type)
            for a in filter_result.matching_acls]


def test_delete_lists_the_matching_acls_and_removes_each_with_one_record():
    img = with_acls(*EVERY)
    result = delete(img, dfilter(rtype=TOPIC, name="foo", pattern=MATCH))
    [fr] = result.response.filter_results
    assert (fr.error_code, fr.error_message) == (ec.NONE, None)  # Kafka's ApiError.NONE: a null message
    assert sorted(matched(fr)) == sorted(row(e) for e in (FOO, STAR, FO_PREFIX, FOO_PREFIX))
    assert all((a.error_code, a.error_message) == (ec.NONE, None) for a in fr.matching_acls)
    assert all(r.version == 0 and isinstance(r.message, m.RemoveAccessControlEntryRecord) for r in result.records)
    assert sorted(r.message.id.int for r in result.records) == [101, 102, 103, 104]
    after = replay(img, result.records)
    assert sorted(row(e) for e in after.acls.values()) == sorted(row(e) for e in (FOOBAR, BAR_PREFIX, GROUP_FOO,
                                                                                  CLUSTER_ALTER))
    assert delete(after, dfilter(rtype=TOPIC, name="foo", pattern=MATCH)).records == ()


@pytest.mark.parametrize("filt, want", [
    (dfilter(rtype=TOPIC, name="foo", pattern=ANY), (FOO, FOO_PREFIX)),
    (dfilter(rtype=TOPIC, name="foo", pattern=LITERAL), (FOO,)),
    (dfilter(rtype=TOPIC, name="foo", pattern=PREFIXED), (FOO_PREFIX,)),
    (dfilter(rtype=TOPIC, name="foobar", pattern=MATCH), (STAR, FO_PREFIX, FOO_PREFIX, FOOBAR)),
    (dfilter(), EVERY),
    (dfilter(principal="User:bob", op=WRITE), (STAR,)),
    (dfilter(rtype=CLUSTER, name="kafka-cluster", pattern=LITERAL, principal="User:bob", host="*", op=ALTER,
             perm=ALLOW), (CLUSTER_ALTER,)),
    (dfilter(rtype=TXN), ()),
])
def test_delete_filters_and_the_image_after_them(filt, want):
    img = with_acls(*EVERY)
    result = delete(img, filt)
    assert sorted(matched(result.response.filter_results[0])) == sorted(row(e) for e in want)
    after = replay(img, result.records)
    assert sorted(row(e) for e in after.acls.values()) == sorted(row(e) for e in EVERY if e not in want)


def test_an_acl_two_filters_match_is_listed_under_both_and_removed_once():
    img = with_acls(*EVERY)
    result = delete(img, dfilter(rtype=TOPIC, name="foo", pattern=LITERAL), dfilter(principal="User:alice",
                                                                                    op=READ, perm=ALLOW),
                    dfilter(rtype=TXN))
    first, second, third = result.response.filter_results
    assert matched(first) == [row(FOO)]
    assert sorted(matched(second)) == sorted(row(e) for e in (FOO, FOOBAR, BAR_PREFIX, GROUP_FOO))
    assert matched(third) == [] and third.error_code == ec.NONE
    assert sorted(r.message.id.int for r in result.records) == [101, 105, 106, 107]
    replay(img, result.records)  # each id removed once: a second removal would not replay


@pytest.mark.parametrize("bad, message", [
    (dict(rtype=99), "Unknown patternFilter."),
    (dict(pattern=9), "Unknown patternFilter."),
    (dict(op=15), "Unknown entryFilter."),
    (dict(perm=-3), "Unknown entryFilter."),
    (dict(rtype=99, op=15), "Unknown patternFilter."),
])
def test_the_controller_refuses_a_filter_with_a_code_it_does_not_know(bad, message):
    img = with_acls(*EVERY)
    result = delete(img, dfilter(**bad), dfilter(rtype=GROUP))
    bad_result, good = result.response.filter_results
    assert (bad_result.error_code, bad_result.error_message, bad_result.matching_acls) == (
        ec.INVALID_REQUEST, message, [])
    assert matched(good) == [row(GROUP_FOO)] and [r.message.id.int for r in result.records] == [107]


@pytest.mark.parametrize("bad", [dict(rtype=0), dict(pattern=0), dict(op=0), dict(perm=0)])
def test_a_delete_filter_with_an_unknown_zero_code_is_a_request_kafka_cannot_parse(bad):
    req = DA(filters=[dfilter(), dfilter(**bad)])
    assert acls.request_error("DeleteAcls", req, 3) == "Filters contain UNKNOWN elements"
    result = acls.delete_acls(with_acls(*EVERY), req, 3)
    assert result.records == ()
    assert [(r.error_code, r.error_message) for r in result.response.filter_results] == [
        (ec.INVALID_REQUEST, "Filters contain UNKNOWN elements")] * 2


def test_delete_without_an_authorizer_is_security_disabled_as_kafkas_refusal():
    req = DA(filters=[dfilter(), dfilter(rtype=TOPIC)])
    result = acls.delete_acls(with_acls(*EVERY), req, 2, enabled=False)
    assert result.records == ()
    assert result.response == refusal("DeleteAcls", req, 2, ec.SECURITY_DISABLED, acls.NO_AUTHORIZER)
    assert [(r.error_code, r.error_message) for r in result.response.filter_results] == [
        (ec.SECURITY_DISABLED, "No Authorizer is configured.")] * 2


def test_removing_more_acls_than_one_operation_may_write_fails_every_filter(monkeypatch):
    """Kafka's controller collects the removals, then refuses the oversized atomic batch: UNKNOWN_SERVER_ERROR for
    every filter, nothing removed."""
    img = with_acls(*EVERY)
    monkeypatch.setattr(acls, "MAX_RECORDS_PER_USER_OP", 4)
    fits = delete(img, dfilter(rtype=TOPIC, name="foo", pattern=MATCH), dfilter(rtype=TOPIC, name="foo"))
    assert len(fits.records) == 4  # FOO and FOO_PREFIX counted once
    over = delete(img, dfilter(rtype=TOPIC, name="foo", pattern=MATCH), dfilter(rtype=GROUP), dfilter(op=15))
    assert over.records == ()
    assert [(r.error_code, r.error_message, r.matching_acls) for r in over.response.filter_results] == [
        (ec.UNKNOWN_SERVER_ERROR, None, [])] * 3


# ================================================================================================================
# the records: as Kafka writes them, in a snapshot
# ================================================================================================================
ACL_ID = uuid.UUID("00010203-0405-0607-0809-0a0b0c0d0e0f")


def s(text: str) -> str:
    raw = text.encode()
    return f"{len(raw) + 1:02x}" + raw.hex()


def test_access_control_entry_record_golden():
    record = m.AccessControlEntryRecord(id=ACL_ID, resource_type=TOPIC, resource_name="foo", pattern_type=PREFIXED,
                                        principal="User:alice", host="*", operation=READ, permission_type=ALLOW)
    wire = bytes.fromhex("".join([
        "01", "12", "00",  # frame version 1, api key 18, record version 0
        ACL_ID.hex,  # Id
        "02",  # ResourceType TOPIC
        s("foo"),  # ResourceName (compact string: length + 1)
        "04",  # PatternType PREFIXED
        s("User:alice"), s("*"),  # Principal, Host
        "03", "03",  # Operation READ, PermissionType ALLOW
        "00"]))  # no tagged fields
    assert wire == bytes.fromhex("01120000010203040506070809 0a0b0c0d0e0f 02 04666f6f 04 0b557365723a616c696365 022a 03 03 00"
                                 .replace(" ", ""))
    assert serde.encode(record, 0) == wire
    assert serde.decode(wire) == (record, 0)
    remove = m.RemoveAccessControlEntryRecord(id=ACL_ID)
    assert serde.encode(remove, 0) == bytes.fromhex("011300" + ACL_ID.hex + "00")


def test_acls_in_a_snapshot_replay_to_the_same_acls():
    img = replay(base(), create(base(), creation(name="a"), creation(name="b", pattern=PREFIXED, perm=DENY),
                                creation(rtype=CLUSTER, name="kafka-cluster", op=ALTER)).records)
    snapshot = img.records()
    written = [r.message for r in snapshot if isinstance(r.message, m.AccessControlEntryRecord)]
    assert sorted(r.id.int for r in written) == [1, 2, 3]
    assert dict(replay_all(snapshot).acls) == dict(img.acls)
