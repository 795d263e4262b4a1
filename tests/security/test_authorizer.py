"""The ACL matcher against Kafka's StandardAuthorizer rules: one test per rule, Kafka's own unit-test cases
re-expressed (AuthorizerTest, BaseAuthorizerTest, StandardAuthorizerTest), and properties against naive models."""

from __future__ import annotations

import itertools
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftwire.metadata.image import AclEntry
from kraftwire.security import authorizer as authz
from kraftwire.security.authorizer import (
    CLUSTER_NAME,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclOperation as Op,
    AclPermissionType as Perm,
    Authorizer,
    PatternType as Pat,
    ResourceType as Res,
    filter_matches,
    parse_super_users,
    validate_filter,
)

ALICE, BOB = "User:alice", "User:bob"
H1, H2 = "192.168.1.1", "192.168.1.2"
LIT, PRE = Pat.LITERAL, Pat.PREFIXED
ALLOW, DENY = Perm.ALLOW, Perm.DENY
CONCRETE_OPS = [op for op in Op if op not in (Op.UNKNOWN, Op.ANY, Op.ALL)]


def acl(name, op, perm=ALLOW, principal=ALICE, host=WILDCARD, pattern=LIT, rtype=Res.TOPIC) -> AclEntry:
    return AclEntry(int(rtype), name, int(pattern), principal, host, int(op), int(perm))


def build(*acls, super_users=frozenset(), allow_everyone=False) -> Authorizer:
    return Authorizer({uuid.UUID(int=i + 1): a for i, a in enumerate(acls)}, super_users, allow_everyone)


def can(a: Authorizer, op, name="foo", principal=ALICE, host=H1, rtype=Res.TOPIC) -> bool:
    return a.authorize(principal, host, int(rtype), name, int(op))


def by_type(a: Authorizer, op, rtype=Res.TOPIC, principal=ALICE, host=H1) -> bool:
    return a.authorize_by_resource_type(principal, host, int(rtype), int(op))


# ---------------------------------------------------------------------------------------------------- constants


def test_codes_and_names_are_kafkas():
    assert [(t.name, t.value) for t in Res] == [("UNKNOWN", 0), ("ANY", 1), ("TOPIC", 2), ("GROUP", 3),
                                                ("CLUSTER", 4), ("TRANSACTIONAL_ID", 5), ("DELEGATION_TOKEN", 6),
                                                ("USER", 7)]
    assert [(t.name, t.value) for t in Pat] == [("UNKNOWN", 0), ("ANY", 1), ("MATCH", 2), ("LITERAL", 3),
                                                ("PREFIXED", 4)]
    assert [(t.name, t.value) for t in Perm] == [("UNKNOWN", 0), ("ANY", 1), ("DENY", 2), ("ALLOW", 3)]
    assert Op.ALL == 2 and Op.READ == 3 and Op.DESCRIBE == 8 and Op.IDEMPOTENT_WRITE == 12
    assert Op.DESCRIBE_TOKENS == 14 and len(Op) == 15
    assert (CLUSTER_NAME, WILDCARD, WILDCARD_PRINCIPAL) == ("kafka-cluster", "*", "User:*")


def test_super_users_parse_as_kafka_configures_them():
    assert parse_super_users("") == frozenset()
    assert parse_super_users(" ") == frozenset()
    assert parse_super_users("User:bob;User:alice ") == {"User:bob", "User:alice"}
    assert parse_super_users(";  User:bob  ;  User:alice ") == {"User:bob", "User:alice"}
    with pytest.raises(ValueError, match="bob"):
        parse_super_users("bob;:alice")
    assert parse_super_users(":alice") == {":alice"}  # an empty type still splits in two: Kafka accepts it


# ------------------------------------------------------------------------------------------------ one per rule


def test_a_super_user_is_allowed_whatever_the_acls():
    a = build(acl(WILDCARD, Op.ALL, DENY, principal=WILDCARD_PRINCIPAL), super_users=frozenset({"User:root"}))
    assert can(a, Op.WRITE, principal="User:root")
    assert can(a, Op.CLUSTER_ACTION, CLUSTER_NAME, principal="User:root", rtype=Res.CLUSTER)  # no ACLs there
    assert not can(a, Op.WRITE)


def test_a_matching_deny_wins_over_any_allow():
    a = build(acl("foo", Op.READ), acl("fo", Op.ALL, pattern=PRE), acl(WILDCARD, Op.READ),
              acl("foo", Op.READ, DENY, host=H1))
    assert not can(a, Op.READ, host=H1)
    assert can(a, Op.READ, host=H2)  # the DENY is for H1 only
    # Kafka's testDenyTakesPrecedence: ALLOW and DENY READ for the same principal and host
    assert not can(build(acl("foo", Op.READ, host=H1), acl("foo", Op.READ, DENY, host=H1)), Op.READ)


@pytest.mark.parametrize("granted", [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER])
def test_allow_of_read_write_delete_alter_implies_describe(granted):
    a = build(acl("foo", granted))
    for op in CONCRETE_OPS:
        assert can(a, op) == (op in (granted, Op.DESCRIBE)), op


def test_allow_of_alter_configs_implies_describe_configs():
    a = build(acl("foo", Op.ALTER_CONFIGS))
    for op in CONCRETE_OPS:
        assert can(a, op) == (op in (Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS)), op


@pytest.mark.parametrize("granted", [Op.CREATE, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.CLUSTER_ACTION,
                                     Op.IDEMPOTENT_WRITE, Op.CREATE_TOKENS, Op.DESCRIBE_TOKENS])
def test_other_allows_imply_nothing_more(granted):
    a = build(acl("foo", granted))
    assert [op for op in CONCRETE_OPS if can(a, op)] == [granted]


@pytest.mark.parametrize("denied", [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER, Op.ALTER_CONFIGS, Op.DESCRIBE,
                                    Op.DESCRIBE_CONFIGS])
def test_deny_implies_nothing_extra(denied):
    """Kafka's testImplicationsOfDeny: DENY op + ALLOW ALL denies op alone (a DENY READ leaves DESCRIBE)."""
    a = build(acl(CLUSTER_NAME, denied, DENY, rtype=Res.CLUSTER), acl(CLUSTER_NAME, Op.ALL, rtype=Res.CLUSTER))
    for op in CONCRETE_OPS:
        assert can(a, op, CLUSTER_NAME, rtype=Res.CLUSTER) == (op != denied), op


def test_all_matches_every_operation_for_allow_and_for_deny():
    allow_all = build(acl("foo", Op.ALL))
    assert all(can(allow_all, op) for op in CONCRETE_OPS)
    deny_all = build(acl("foo", Op.ALL, DENY), acl("foo", Op.ALL), acl("f", Op.READ, pattern=PRE))
    assert not any(can(deny_all, op) for op in CONCRETE_OPS)


def test_wildcard_principal_matches_every_principal_and_only_user_star_is_a_wildcard():
    a = build(acl("foo", Op.READ, principal=WILDCARD_PRINCIPAL), acl("bar", Op.READ, principal="Group:*"))
    assert can(a, Op.READ, principal=BOB) and can(a, Op.READ, principal="User:anyone")
    assert not can(a, Op.READ, "bar", principal=BOB)
    assert not can(build(acl("foo", Op.READ, principal=BOB)), Op.READ, principal=ALICE)


def test_wildcard_host_matches_every_host_and_other_hosts_match_exactly():
    a = build(acl("foo", Op.READ, host=WILDCARD), acl("bar", Op.READ, host=H2))
    assert can(a, Op.READ, host=H1) and can(a, Op.READ, host="::1")
    assert can(a, Op.READ, "bar", host=H2) and not can(a, Op.READ, "bar", host=H1)


def test_wildcard_resource_matches_every_name_of_its_type():
    a = build(acl(WILDCARD, Op.READ))
    assert can(a, Op.READ, "anything") and can(a, Op.READ, "")
    assert not can(a, Op.READ, "anything", rtype=Res.GROUP)


def test_a_literal_acl_matches_only_its_own_name():
    a = build(acl("f", Op.READ))  # Kafka's testSingleCharacterResourceAcls
    assert can(a, Op.READ, "f") and not can(a, Op.READ, "foo") and not can(a, Op.READ, "")


def test_a_prefixed_acl_matches_names_starting_with_it():
    a = build(acl("_", Op.READ, pattern=PRE))
    assert can(a, Op.READ, "_foo") and can(a, Op.READ, "_") and not can(a, Op.READ, "foo_")
    b = build(acl("foo-", Op.READ, DENY, pattern=PRE), acl(WILDCARD, Op.READ))
    assert not can(b, Op.READ, "foo-1") and can(b, Op.READ, "foo") and can(b, Op.READ, "fo")


def test_a_prefixed_acl_named_star_is_a_plain_prefix_not_a_wildcard():
    a = build(acl("*", Op.READ, pattern=PRE))
    assert can(a, Op.READ, "*x") and not can(a, Op.READ, "x")


@pytest.mark.parametrize("allow_everyone", [False, True])
def test_no_acl_at_all_for_the_resource_falls_back_to_allow_everyone(allow_everyone):
    a = build(acl("other", Op.READ, principal=BOB), acl("oth", Op.READ, pattern=PRE), allow_everyone=allow_everyone)
    assert can(a, Op.READ, "foo") is allow_everyone
    assert can(a, Op.WRITE, "fo") is allow_everyone
    assert can(build(allow_everyone=allow_everyone), Op.CREATE, CLUSTER_NAME, rtype=Res.CLUSTER) is allow_everyone


@pytest.mark.parametrize("other", [
    acl("foo", Op.READ, principal=BOB),                  # literal, another principal
    acl("foo", Op.WRITE),                                # literal, another operation
    acl("foo", Op.READ, host=H2),                        # literal, another host
    acl("foo", Op.CREATE, DENY),                         # a DENY of another operation
    acl(WILDCARD, Op.READ, principal=BOB),               # the wildcard
    acl("fo", Op.READ, principal=BOB, pattern=PRE),      # a prefix
])
def test_any_acl_on_the_resource_stops_the_fallback(other):
    """Kafka's testAllowEveryoneIfNoAclFoundConfigEnabled: an ACL for Alice on topic1 denies Bob there."""
    a = build(other, allow_everyone=True)
    assert not can(a, Op.READ, "foo")
    assert can(a, Op.READ, "zzz") is (other.resource_name != WILDCARD)  # the wildcard applies to zzz too


def test_resource_types_are_kept_apart():
    a = build(acl("foo", Op.ALL, rtype=Res.GROUP), acl(WILDCARD, Op.ALL, rtype=Res.TRANSACTIONAL_ID),
              acl("f", Op.ALL, pattern=PRE, rtype=Res.USER), allow_everyone=False)
    assert can(a, Op.READ, "foo", rtype=Res.GROUP)
    assert not can(a, Op.READ, "foo", rtype=Res.TOPIC)
    assert not can(a, Op.READ, "foo", rtype=Res.CLUSTER)
    # and the fallback is per type: GROUP ACLs do not stop the fallback for the TOPIC of the same name
    b = build(acl("foo", Op.READ, DENY, rtype=Res.GROUP), allow_everyone=True)
    assert can(b, Op.READ, "foo", rtype=Res.TOPIC) and not can(b, Op.READ, "foo", rtype=Res.GROUP)


def test_the_mapping_it_was_built_from_is_kept():
    acls = {uuid.UUID(int=1): acl("foo", Op.READ)}
    assert Authorizer(acls).acls is acls


# ---------------------------------------------------------------------------- Kafka's StandardAuthorizerTest cases


def test_kafka_deny_precedence_with_operation_all():
    a = build(acl("foo", Op.ALL, DENY), acl("foo", Op.READ, pattern=PRE),
              acl("foo", Op.ALL, DENY, principal=WILDCARD_PRINCIPAL),
              acl("foo", Op.DESCRIBE, pattern=PRE, principal=WILDCARD_PRINCIPAL))
    assert [can(a, op, name) for op, name in [(Op.WRITE, "foo"), (Op.READ, "foo"), (Op.DESCRIBE, "foo"),
                                              (Op.READ, "foobar")]] == [False, False, False, True]
    assert [can(a, op, name, principal=BOB) for op, name in [
        (Op.DESCRIBE, "foo"), (Op.READ, "foo"), (Op.WRITE, "foo"), (Op.DESCRIBE, "foobaz"), (Op.READ, "foobaz")
    ]] == [False, False, False, True, False]


def test_kafka_topic_acls_with_operation_all():
    a = build(acl("foo", Op.ALL, principal=WILDCARD_PRINCIPAL), acl("bar", Op.ALL, pattern=PRE),
              acl("baz", Op.ALL, principal=BOB))
    assert [can(a, Op.WRITE, "foo"), can(a, Op.DESCRIBE_CONFIGS, "bar"), can(a, Op.DESCRIBE, "baz")] == \
        [True, True, False]
    assert [can(a, Op.WRITE, "foo", principal=BOB), can(a, Op.READ, "bar", principal=BOB),
            can(a, Op.DESCRIBE, "baz", principal=BOB)] == [True, False, True]
    m = "User:malory"
    assert [can(a, Op.DESCRIBE, "foo", principal=m), can(a, Op.WRITE, "bar", principal=m),
            can(a, Op.READ, "baz", principal=m)] == [True, False, False]


def test_kafka_host_address_cases():
    local = "127.0.0.1"
    a = build(acl("foo", Op.READ, DENY, host=H1), acl("foo", Op.READ),
              acl("bar", Op.READ, principal=BOB, host=H2),
              acl("bar", Op.DESCRIBE, principal=WILDCARD_PRINCIPAL, host=local))
    checks = [(Op.READ, "foo"), (Op.READ, "bar"), (Op.DESCRIBE, "bar")]
    expected = {(ALICE, local): [True, False, True], (ALICE, H1): [False, False, False],
                (ALICE, H2): [True, False, False], (BOB, local): [False, False, True],
                (BOB, H1): [False, False, False], (BOB, H2): [False, True, True]}
    for (who, host), want in expected.items():
        assert [can(a, op, name, principal=who, host=host) for op, name in checks] == want, (who, host)


def test_kafka_many_acls_case():
    a = build(acl("green2", Op.READ, principal=WILDCARD_PRINCIPAL), acl("green", Op.READ, principal=BOB, pattern=PRE),
              acl("betamax4", Op.READ, principal=BOB), acl("betamax", Op.READ, principal=BOB),
              acl("beta", Op.READ, principal=WILDCARD_PRINCIPAL, pattern=PRE),
              acl("alpha", Op.READ, principal=WILDCARD_PRINCIPAL, pattern=PRE),
              acl("alp", Op.READ, DENY, principal=BOB, pattern=PRE),
              acl(WILDCARD, Op.WRITE, principal=BOB, rtype=Res.GROUP),
              acl("wheel", Op.WRITE, DENY, principal=WILDCARD_PRINCIPAL, rtype=Res.GROUP))
    assert can(a, Op.READ, "green1", principal=BOB)
    assert not can(a, Op.WRITE, "wheel", principal=BOB, rtype=Res.GROUP)
    assert not can(a, Op.READ, "alpha", principal=BOB)
    assert can(a, Op.WRITE, "arbitrary", principal=BOB, rtype=Res.GROUP)
    assert not can(a, Op.READ, "ala", principal=BOB)


def test_kafka_prefix_acls_case():
    a = build(acl("fooa", Op.ALL, pattern=PRE), acl("foobar", Op.ALL, principal=BOB),
              acl("f", Op.ALL, principal=BOB, pattern=PRE))
    assert [can(a, Op.WRITE, "foobarr", principal=BOB), can(a, Op.READ, "goobar", principal=BOB),
            can(a, Op.READ, "fooa", principal=BOB)] == [True, False, True]
    assert [can(a, Op.DESCRIBE, "fooa"), can(a, Op.WRITE, "bar"), can(a, Op.READ, "baz")] == [True, False, False]


def test_kafka_prefixed_allow_among_unrelated_prefixed_denies():
    denies = ["a_other", "foo-1", "foo-2", "foo-3-zzz", "fooo-4", "fo-5", "fop-6", "fon-7", "fon-", "z_other"]
    a = build(acl("a_other", Op.READ, DENY), acl("z_other", Op.READ, DENY),
              *[acl(n, Op.READ, DENY, pattern=PRE) for n in denies], acl("foo", Op.READ, pattern=PRE))
    assert can(a, Op.READ, "foo")


# ---------------------------------------------------------------- the naive model of authorize, and the memo


def naive_applies(a: AclEntry, rtype: int, name: str) -> bool:
    if a.resource_type != rtype:
        return False
    if a.pattern_type == Pat.LITERAL:
        return a.resource_name == name or a.resource_name == "*"
    return a.pattern_type == Pat.PREFIXED and name.startswith(a.resource_name)


def naive_op_matches(a: AclEntry, op: int) -> bool:
    if a.operation in (Op.ALL, op):
        return True
    if a.permission_type != Perm.ALLOW:
        return False
    return (op == Op.DESCRIBE and a.operation in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER)) or \
        (op == Op.DESCRIBE_CONFIGS and a.operation == Op.ALTER_CONFIGS)


def naive_authorize(acls, supers, allow_everyone, principal, host, rtype, name, op) -> bool:
    if principal in supers:
        return True
    applying = [a for a in acls if naive_applies(a, rtype, name)]
    matching = [a for a in applying if a.principal in (principal, "User:*") and a.host in (host, "*")
                and naive_op_matches(a, op)]
    if any(a.permission_type == Perm.DENY for a in matching):
        return False
    if any(a.permission_type == Perm.ALLOW for a in matching):
        return True
    return allow_everyone if not applying else False


NAMES = st.text(alphabet="ab", min_size=1, max_size=3)
ACLS = st.lists(st.builds(
    AclEntry,
    resource_type=st.sampled_from([int(Res.TOPIC), int(Res.GROUP)]),
    resource_name=st.one_of(NAMES, st.just("*")),
    pattern_type=st.sampled_from([int(LIT), int(PRE)]),
    principal=st.sampled_from([ALICE, BOB, WILDCARD_PRINCIPAL]),
    host=st.sampled_from([H1, H2, WILDCARD]),
    operation=st.sampled_from([int(o) for o in Op if o >= Op.ALL]),
    permission_type=st.sampled_from([int(ALLOW), int(DENY)]),
), max_size=12)
QUERIES = st.lists(st.tuples(
    st.sampled_from([ALICE, BOB, "User:carol", "User:root"]),
    st.sampled_from([H1, H2]),
    st.sampled_from([int(Res.TOPIC), int(Res.GROUP), int(Res.CLUSTER)]),
    st.text(alphabet="ab*", max_size=4),
    st.sampled_from([int(o) for o in Op if o >= Op.ALL]),
), min_size=1, max_size=20)


@settings(max_examples=300, deadline=None)
@given(acls=ACLS, queries=QUERIES, allow_everyone=st.booleans(), root_is_super=st.booleans())
def test_authorize_equals_the_naive_model_and_memoized_answers_equal_fresh_ones(acls, queries, allow_everyone,
                                                                                root_is_super):
    supers = frozenset({"User:root"}) if root_is_super else frozenset()
    a = build(*acls, super_users=supers, allow_everyone=allow_everyone)
    first = [a.authorize(*q) for q in queries]
    assert first == [naive_authorize(acls, supers, allow_everyone, *q) for q in queries]
    assert [a.authorize(*q) for q in reversed(queries)] == first[::-1]  # from the memo
    fresh = build(*acls, super_users=supers, allow_everyone=allow_everyone)
    assert [fresh.authorize(*q) for q in reversed(queries)] == first[::-1]


def test_the_memo_is_bounded_and_answers_survive_its_clearing():
    a = build(acl("t", Op.READ, pattern=PRE))
    names = [f"t{i}" for i in range(authz.MEMO_LIMIT + 100)] + ["x"]
    assert all(can(a, Op.READ, n) for n in names[:-1]) and not can(a, Op.READ, "x")
    assert len(a._memo) <= authz.MEMO_LIMIT
    assert can(a, Op.READ, "t0") and not can(a, Op.READ, "x")


# ------------------------------------------------------------------------------------ authorize_by_resource_type


def test_by_type_no_acl_and_allow_everyone():
    """Kafka's testAuthorizeByResourceTypeNoAclFoundOverride, and its converse with the default config."""
    assert by_type(build(allow_everyone=True), Op.READ) and by_type(build(allow_everyone=True), Op.WRITE)
    assert not by_type(build(), Op.READ)


def test_by_type_add_and_remove():
    """testAuthorizeByResourceTypeMultipleAddAndRemove, its steps as ACL sets."""
    allow = acl("sb1", Op.READ, principal="User:user1", host=H1)
    deny = acl("sb1", Op.READ, DENY, principal="User:user1", host=H1)
    assert not by_type(build(), Op.READ, principal="User:user1")
    assert by_type(build(allow), Op.READ, principal="User:user1")
    assert not by_type(build(allow, deny), Op.READ, principal="User:user1")


def test_by_type_unrelated_deny_does_not_dominate_allow():
    u1, u2 = "User:user1", "User:user2"
    a = build(acl("sb1", Op.READ, DENY, principal=u1, host=H1), acl("sb1", Op.READ, DENY, principal=u2, host=H1),
              acl("sb1", Op.WRITE, DENY, principal=u1, host=H2), acl("sb1", Op.READ, DENY, principal=u2, host=H2),
              acl("sb1", Op.READ, principal=u1, host=H2), acl("sb2", Op.READ, DENY, principal=u1, host=H2),
              acl("s", Op.READ, DENY, principal=u1, host=H2, pattern=PRE, rtype=Res.GROUP))
    for rtype in (Res.TOPIC, Res.GROUP, Res.TRANSACTIONAL_ID, Res.CLUSTER):
        assert not by_type(a, Op.READ, rtype, principal=u1, host=H1)
    assert by_type(a, Op.READ, Res.TOPIC, principal=u1, host=H2)


def test_by_type_deny_takes_precedence():
    allow = acl("sb1", Op.WRITE, host=H1)
    assert by_type(build(allow), Op.WRITE)
    assert not by_type(build(allow, acl("sb1", Op.WRITE, DENY, host=H1)), Op.WRITE)


def test_by_type_prefixed_deny_dominates():
    """testAuthorizeByResourceTypePrefixedResourceDenyDominate: ACLs added one by one on GROUP a..abcde."""
    steps = [(acl("abcde", Op.READ, pattern=PRE, rtype=Res.GROUP), True),
             (acl("abcd", Op.READ, DENY, pattern=PRE, rtype=Res.GROUP), False),
             (acl("abc", Op.READ, pattern=PRE, rtype=Res.GROUP), True),
             (acl("a", Op.READ, DENY, pattern=PRE, rtype=Res.GROUP), False),
             (acl("ab", Op.READ, pattern=PRE, rtype=Res.GROUP), False)]
    added = []
    for entry, want in steps:
        added.append(entry)
        assert by_type(build(*added), Op.READ, Res.GROUP) is want, entry


def test_by_type_wildcard_deny_dominates():
    steps = [(acl("hello", Op.WRITE, pattern=PRE, rtype=Res.GROUP), True),
             (acl(WILDCARD, Op.WRITE, DENY, rtype=Res.GROUP), False),
             (acl(WILDCARD, Op.WRITE, rtype=Res.GROUP), False),
             (acl("aloha", Op.WRITE, rtype=Res.GROUP), False)]
    added = []
    for entry, want in steps:
        added.append(entry)
        assert by_type(build(*added), Op.WRITE, Res.GROUP) is want, entry


def test_by_type_with_operation_all():
    deny_write, allow_all, deny_all = (acl("sb1", Op.WRITE, DENY, host=H1), acl("sb1", Op.ALL, host=H1),
                                       acl("sb1", Op.ALL, DENY, host=H1))
    assert not by_type(build(), Op.READ)
    assert by_type(build(deny_write, allow_all), Op.READ)
    assert not by_type(build(deny_write, allow_all, deny_all), Op.READ)


def test_by_type_with_wildcard_host():
    allow_h1, deny_h1 = acl("sb1", Op.READ, host=H1), acl("sb2", Op.READ, DENY, host=H1)
    deny_any_1, allow_any_2, deny_any_2 = (acl("sb1", Op.READ, DENY), acl("sb2", Op.READ), acl("sb2", Op.READ, DENY))
    assert by_type(build(allow_h1), Op.READ, host=H1)
    assert not by_type(build(allow_h1, deny_any_1), Op.READ, host=H1)
    assert not by_type(build(allow_h1, deny_any_1, deny_h1), Op.READ, host=H1)
    assert not by_type(build(allow_h1, deny_any_1, deny_h1), Op.READ, host=H2)
    assert by_type(build(allow_h1, deny_any_1, deny_h1, allow_any_2), Op.READ, host=H2)
    assert not by_type(build(allow_h1, deny_any_1, deny_h1, allow_any_2, deny_any_2), Op.READ, host=H2)


def test_by_type_with_wildcard_principal():
    u1, u2 = "User:user1", "User:user2"
    allow_u1, deny_u1 = acl("sb1", Op.READ, principal=u1, host=H1), acl("sb2", Op.READ, DENY, principal=u1, host=H1)
    deny_all_1 = acl("sb1", Op.READ, DENY, principal=WILDCARD_PRINCIPAL, host=H1)
    allow_all_2 = acl("sb2", Op.READ, principal=WILDCARD_PRINCIPAL, host=H1)
    deny_all_2 = acl("sb2", Op.READ, DENY, principal=WILDCARD_PRINCIPAL, host=H1)
    assert by_type(build(allow_u1), Op.READ, principal=u1)
    assert not by_type(build(allow_u1, deny_all_1), Op.READ, principal=u1)
    assert not by_type(build(allow_u1, deny_all_1, deny_u1), Op.READ, principal=u1)
    assert not by_type(build(allow_u1, deny_all_1, deny_u1), Op.READ, principal=u2)
    assert by_type(build(allow_u1, deny_all_1, deny_u1, allow_all_2), Op.READ, principal=u2)
    assert not by_type(build(allow_u1, deny_all_1, deny_u1, allow_all_2, deny_all_2), Op.READ, principal=u2)


def test_by_type_super_user_has_access_despite_deny_all():
    rtypes = (Res.TOPIC, Res.CLUSTER, Res.GROUP, Res.TRANSACTIONAL_ID)
    a = build(*[acl(WILDCARD, Op.ALL, DENY, principal=WILDCARD_PRINCIPAL, rtype=t) for t in rtypes],
              super_users=parse_super_users("User:superuser1; User:superuser2"))
    for rtype in rtypes:
        assert by_type(a, Op.READ, rtype, principal="User:superuser1")
        assert not by_type(a, Op.READ, rtype)


def test_by_type_uses_no_implication_and_literal_deny_does_not_dominate_a_prefixed_allow():
    assert not by_type(build(acl("foo", Op.READ)), Op.DESCRIBE)  # authorize would allow DESCRIBE on foo
    assert by_type(build(acl("foo", Op.READ, pattern=PRE), acl("foo", Op.READ, DENY)), Op.READ)  # foo1 is readable
    assert not by_type(build(acl("foo", Op.READ), acl("foo", Op.READ, DENY)), Op.READ)


def test_by_type_asks_about_the_name_hardcode_first():
    # With allow.everyone.if.no.acl.found, a caller with no ACL at all is allowed unless some ACL applies to the
    # literal name "hardcode" (here: a prefix "h" for someone else), in which case only the scan decides.
    other = acl("foo", Op.READ, principal=BOB)
    assert by_type(build(other, allow_everyone=True), Op.WRITE)
    assert not by_type(build(other, acl("h", Op.READ, principal=BOB, pattern=PRE), allow_everyone=True), Op.WRITE)
    assert by_type(build(acl("hardcode", Op.WRITE)), Op.WRITE)


@pytest.mark.parametrize("rtype, op", [(Res.ANY, Op.READ), (Res.UNKNOWN, Op.READ), (Res.TOPIC, Op.ANY),
                                       (Res.TOPIC, Op.UNKNOWN), (99, Op.READ)])
def test_by_type_refuses_filter_values(rtype, op):
    with pytest.raises(ValueError):
        build().authorize_by_resource_type(ALICE, H1, int(rtype), int(op))


TYPE_ACLS = st.lists(st.builds(
    AclEntry,
    resource_type=st.sampled_from([int(Res.TOPIC), int(Res.GROUP)]),
    resource_name=st.one_of(NAMES, st.just("*")),
    pattern_type=st.sampled_from([int(LIT), int(PRE)]),
    principal=st.sampled_from([ALICE, BOB, WILDCARD_PRINCIPAL]),
    host=st.sampled_from([H1, H2, WILDCARD]),
    operation=st.sampled_from([int(Op.ALL), int(Op.READ), int(Op.WRITE), int(Op.DESCRIBE)]),
    permission_type=st.sampled_from([int(ALLOW), int(DENY)]),
), max_size=10)


@settings(max_examples=300, deadline=None)
@given(acls=TYPE_ACLS, principal=st.sampled_from([ALICE, BOB]), host=st.sampled_from([H1, H2]),
       rtype=st.sampled_from([int(Res.TOPIC), int(Res.GROUP)]),
       op=st.sampled_from([int(Op.READ), int(Op.WRITE), int(Op.DESCRIBE)]))
def test_by_type_agrees_with_some_resource_being_authorized(acls, principal, host, rtype, op):
    """Without the no-ACL default, "allowed on some resource of the type" is exactly "``authorize`` allows some
    name": the ACLs' own names, each extended by a character no ACL uses, and names no ACL mentions.

    Kafka's scan ignores ALLOW implications, but its first step (``authorize`` on the name "hardcode") does not:
    for DESCRIBE the answer is "some name allowed by the ALLOWs of DESCRIBE or ALL alone, or 'hardcode' allowed".
    """
    a = build(*acls)
    names = {x.resource_name for x in acls}
    candidates = names | {n + "~" for n in names} | {"~", "hardcode"}
    some = any(a.authorize(principal, host, rtype, n, op) for n in candidates)
    answer = a.authorize_by_resource_type(principal, host, rtype, op)
    if answer:
        assert some
    if op != Op.DESCRIBE:
        assert answer == some
    else:
        exact = build(*[x for x in acls if x.operation in (op, Op.ALL) or x.permission_type == DENY])
        assert answer == (any(exact.authorize(principal, host, rtype, n, op) for n in candidates)
                          or a.authorize(principal, host, rtype, "hardcode", op))
    assert a.authorize_by_resource_type(principal, host, rtype, op) == answer  # memoized


# ---------------------------------------------------------------------------------------------- filter_matches


LIT_FOO = acl("foo", Op.READ)
LIT_STAR = acl("*", Op.READ)
PRE_FO = acl("fo", Op.READ, pattern=PRE)
PRE_BAR = acl("bar", Op.READ, pattern=PRE)
GROUP_FOO = acl("foo", Op.READ, rtype=Res.GROUP)
ENTRIES = [LIT_FOO, LIT_STAR, PRE_FO, PRE_BAR, GROUP_FOO]


def matching(rtype=Res.ANY, name=None, pattern=Pat.ANY, principal=None, host=None, op=Op.ANY, perm=Perm.ANY):
    return [e for e in ENTRIES if filter_matches(e, int(rtype), name, int(pattern), principal, host, int(op),
                                                 int(perm))]


def test_filter_any_matches_everything():
    assert matching() == ENTRIES


def test_filter_pattern_any_is_the_exact_name_on_any_pattern_type():
    assert matching(name="foo") == [LIT_FOO, GROUP_FOO]
    assert matching(name="fo") == [PRE_FO]
    assert matching(name="foobar") == []
    assert matching(Res.TOPIC, "foo") == [LIT_FOO]


def test_filter_match_is_every_acl_that_applies_to_the_name():
    assert matching(Res.TOPIC, "foo", Pat.MATCH) == [LIT_FOO, LIT_STAR, PRE_FO]
    assert matching(Res.TOPIC, "football", Pat.MATCH) == [LIT_STAR, PRE_FO]
    assert matching(Res.TOPIC, "bar-1", Pat.MATCH) == [LIT_STAR, PRE_BAR]
    assert matching(Res.ANY, "foo", Pat.MATCH) == [LIT_FOO, LIT_STAR, PRE_FO, GROUP_FOO]
    assert matching(Res.TOPIC, None, Pat.MATCH) == [LIT_FOO, LIT_STAR, PRE_FO, PRE_BAR]


def test_filter_literal_and_prefixed_are_that_type_and_the_exact_name():
    assert matching(Res.TOPIC, "foo", Pat.LITERAL) == [LIT_FOO]
    assert matching(Res.TOPIC, "*", Pat.LITERAL) == [LIT_STAR]
    assert matching(Res.TOPIC, "fooz", Pat.LITERAL) == []
    assert matching(Res.TOPIC, "fo", Pat.PREFIXED) == [PRE_FO]
    assert matching(Res.TOPIC, "foo", Pat.PREFIXED) == []
    assert matching(Res.ANY, None, Pat.PREFIXED) == [PRE_FO, PRE_BAR]
    assert matching(Res.ANY, None, Pat.LITERAL) == [LIT_FOO, LIT_STAR, GROUP_FOO]


def test_filter_entry_fields():
    a = acl("foo", Op.WRITE, DENY, principal=BOB, host=H1)
    assert filter_matches(a, Res.TOPIC, "foo", Pat.LITERAL, BOB, H1, Op.WRITE, Perm.DENY)
    assert filter_matches(a, Res.ANY, None, Pat.ANY, None, None, Op.ANY, Perm.ANY)
    assert not filter_matches(a, Res.ANY, None, Pat.ANY, ALICE, None, Op.ANY, Perm.ANY)
    assert not filter_matches(a, Res.ANY, None, Pat.ANY, WILDCARD_PRINCIPAL, None, Op.ANY, Perm.ANY)  # no wildcard
    assert not filter_matches(a, Res.ANY, None, Pat.ANY, None, "*", Op.ANY, Perm.ANY)
    assert not filter_matches(a, Res.ANY, None, Pat.ANY, None, None, Op.ALL, Perm.ANY)  # ALL is a value here
    assert not filter_matches(a, Res.ANY, None, Pat.ANY, None, None, Op.ANY, Perm.ALLOW)
    assert not filter_matches(a, Res.GROUP, None, Pat.ANY, None, None, Op.ANY, Perm.ANY)


def test_kafka_acls_filter_case():
    """Kafka's testAclsFilter: MATCH over ANY type finds the literal ACL and the covering prefixed one."""
    acl1, acl2 = acl("foo-1", Op.READ), acl("foo-1", Op.WRITE, host="192.168.0.1")
    acl3, acl4 = acl("bar-1", Op.DESCRIBE), acl("bar-", Op.READ, principal=WILDCARD_PRINCIPAL, pattern=PRE)
    every = [acl1, acl2, acl3, acl4]

    def find(rtype, name, pattern):
        return [x for x in every if filter_matches(x, rtype, name, pattern, None, None, Op.ANY, Perm.ANY)]

    assert find(Res.TOPIC, "foo-1", Pat.LITERAL) == [acl1, acl2]
    assert find(Res.TOPIC, "bar-", Pat.PREFIXED) == [acl4]
    assert find(Res.ANY, "bar-1", Pat.MATCH) == [acl3, acl4]
    assert find(Res.TOPIC, "baz", Pat.ANY) == []


@settings(max_examples=200, deadline=None)
@given(acls=ACLS, rtype=st.sampled_from([int(Res.TOPIC), int(Res.GROUP)]), name=NAMES)
def test_filter_match_selects_exactly_the_acls_that_apply(acls, rtype, name):
    for a in acls:
        assert filter_matches(a, rtype, name, Pat.MATCH, None, None, Op.ANY, Perm.ANY) == \
            naive_applies(a, rtype, name)


def test_validate_filter():
    ok = dict(resource_type=Res.ANY, resource_name=None, pattern_type=Pat.ANY, principal=None, host=None,
              operation=Op.ANY, permission_type=Perm.ANY)
    assert validate_filter(**ok) is None
    for field, value in itertools.product(["resource_type", "pattern_type", "operation", "permission_type"],
                                          [0, 99]):
        reason = validate_filter(**{**ok, field: value})
        assert reason is not None and "unknown" in reason, (field, value)
    assert validate_filter(**{**ok, "pattern_type": Pat.MATCH, "resource_name": "x"}) is None


# ---------------------------------------------------------------------------------------------------- KIP-430


def test_authorized_operations_bit_fields():
    """Kafka's AuthHelper.authorizedOperations over AclEntry.supportedOperations: without an authorizer every
    supported operation (the values a Kafka 4.4 broker answers), else the allowed ones, implications included."""
    assert authz.authorized_operations(None, ALICE, H1, Res.CLUSTER, CLUSTER_NAME) == 8096
    assert authz.authorized_operations(None, ALICE, H1, Res.TOPIC, "t") == 3576
    assert authz.authorized_operations(None, ALICE, H1, Res.GROUP, "g") == 3400
    a = build(acl("t", Op.WRITE), acl("t", Op.ALTER_CONFIGS), acl("g", Op.DELETE, rtype=Res.GROUP),
              super_users=frozenset({BOB}))
    bits = lambda *ops: sum(1 << int(o) for o in ops)  # noqa: E731
    assert authz.authorized_operations(a, ALICE, H1, Res.TOPIC, "t") == bits(
        Op.WRITE, Op.DESCRIBE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS)
    assert authz.authorized_operations(a, ALICE, H1, Res.GROUP, "g") == bits(Op.DELETE, Op.DESCRIBE)
    assert authz.authorized_operations(a, ALICE, H1, Res.TOPIC, "other") == 0
    assert authz.authorized_operations(a, BOB, H1, Res.TOPIC, "other") == 3576


# ------------------------------------------------------------------------------ CIDR hosts (KIP-1276, 4.4-IV1)


@pytest.mark.parametrize("block, inside, outside", [
    ("192.168.1.0/24", ["192.168.1.1", "192.168.1.0", "192.168.1.255"], ["192.168.2.1", "10.0.0.1", "::1"]),
    ("10.0.0.0/8", ["10.1.2.3"], ["11.0.0.1"]),
    ("0.0.0.0/0", ["1.2.3.4", "255.255.255.255"], ["0.0.0.0", "::1"]),
    ("2001:db8::/32", ["2001:db8::1", "2001:db8:ffff::9"], ["2001:db9::1", "10.0.0.1"]),
    ("::1/128", ["::1", "0:0:0:0:0:0:0:1"], ["::2"]),
])
def test_an_acl_with_a_cidr_host_matches_the_clients_inside_the_block(block, inside, outside):
    """StandardAuthorizerData.findResult: a host that is neither ``*`` nor the client's address matches when the
    client's address is in the ACL's CIDR block (the by-rule case StandardAuthorizerTest would add for KIP-1276;
    Kafka 4.4's own CidrUtils decides the blocks alike, tests/security/test_cidr.py)."""
    a = build(acl("foo", Op.READ, host=block))
    assert [h for h in inside if not can(a, Op.READ, host=h)] == []
    assert [h for h in outside if can(a, Op.READ, host=h)] == []


def test_a_cidr_deny_beats_an_exact_host_allow_and_a_cidr_allow_yields_to_an_exact_deny():
    a = build(acl("foo", Op.READ, host=H1), acl("foo", Op.READ, DENY, host="192.168.0.0/16"))
    assert not can(a, Op.READ, host=H1)
    b = build(acl("foo", Op.READ, host="192.168.0.0/16"), acl("foo", Op.READ, DENY, host=H1))
    assert not can(b, Op.READ, host=H1) and can(b, Op.READ, host=H2)


def test_a_cidr_allow_implies_describe_as_any_allow_does():
    a = build(acl("foo", Op.WRITE, host="192.168.1.0/24"))
    assert can(a, Op.DESCRIBE, host=H1) and not can(a, Op.DESCRIBE, host="10.0.0.1")


def test_authorize_by_resource_type_matches_cidr_hosts_too():
    """Kafka's default Authorizer.authorizeByResourceType checks hosts with CidrUtils.isInRange as well."""
    a = build(acl("foo", Op.WRITE, host="192.168.1.0/24", rtype=Res.TRANSACTIONAL_ID))
    assert by_type(a, Op.WRITE, Res.TRANSACTIONAL_ID, host=H1)
    assert not by_type(a, Op.WRITE, Res.TRANSACTIONAL_ID, host="10.0.0.1")
    b = build(acl("foo", Op.WRITE, rtype=Res.TRANSACTIONAL_ID),
              acl("*", Op.WRITE, DENY, host="192.168.0.0/16", rtype=Res.TRANSACTIONAL_ID))
    assert not by_type(b, Op.WRITE, Res.TRANSACTIONAL_ID, host=H1)
    assert by_type(b, Op.WRITE, Res.TRANSACTIONAL_ID, host="10.0.0.1")


def test_a_malformed_cidr_host_in_the_image_matches_nobody():
    """Kafka never writes one (CreateAcls refuses it), but a host with ``/`` that does not parse holds nothing."""
    a = build(acl("foo", Op.READ, host="bad/cidr"))
    assert not can(a, Op.READ, host="bad/cidr".split("/")[0]) and not can(a, Op.READ, host=H1)
