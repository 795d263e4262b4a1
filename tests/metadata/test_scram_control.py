"""SCRAM credentials on the controller (``metadata.controller.scram``): AlterUserScramCredentials per user and error
code as Kafka's ScramControlManager decides it (the cases of Kafka's AlterUserScramCredentialsRequestTest among
them), the records replayed into the image (through the serde), DescribeUserScramCredentials answered from the image,
and a credential written from a client's salted password that a SCRAM login accepts."""

from __future__ import annotations

import random
import uuid

import pytest

from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.metadata.controller import scram as sc
from kraftwire.metadata.controller.quorum import QuorumController
from kraftwire.metadata.image import MetadataImage, replay_all
from kraftwire.metadata.version import BY_NAME, DEFAULT, FEATURE_NAME, MAXIMUM, MINIMUM
from kraftwire.protocol import codec
from kraftwire.protocol import messages as m
from kraftwire.security.sasl import scram
from tests.security.test_scram import _client

A = m.AlterUserScramCredentialsRequest
D = m.DescribeUserScramCredentialsRequest
SHA256, SHA512 = 1, 2
NAMES = {SHA256: "SCRAM-SHA-256", SHA512: "SCRAM-SHA-512"}


def image(mv=DEFAULT) -> MetadataImage:
    return replay_all([m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=mv.level)])


def up(name, mechanism=SHA256, iterations=4096, password="pw", salt=b"salt", salted=None):
    if salted is None:
        salted = scram.salted_password(NAMES[mechanism], password, salt, iterations) if mechanism in NAMES else b"x"
    return A.ScramCredentialUpsertion(name=name, mechanism=mechanism, iterations=iterations, salt=salt,
                                      salted_password=salted)


def dl(name, mechanism=SHA256):
    return A.ScramCredentialDeletion(name=name, mechanism=mechanism)


def alter(img, deletions=(), upsertions=()):
    return sc.alter_credentials(img, A(deletions=list(deletions), upsertions=list(upsertions)))


def results(res) -> list[tuple[str, int, str | None]]:
    return [(r.user, r.error_code, r.error_message) for r in res.response.results]


def describe(img, *users, null=False):
    body = sc.describe_credentials(img, D(users=None if null else [D.UserName(name=u) for u in users]))
    codec.encode(body, 0)
    assert body.error_code == ec.NONE
    return [(r.user, r.error_code, r.error_message, [(c.mechanism, c.iterations) for c in r.credential_infos])
            for r in body.results]


def as_tuple(c) -> tuple:
    return (c.salt, c.stored_key, c.server_key, c.iterations)


def with_credentials(*upsertions) -> MetadataImage:
    img = image()
    for u in upsertions:  # one user per request, as Kafka requires
        res = alter(img, upsertions=[u])
        assert results(res) == [(u.name, ec.NONE, None)]
        img = replay(img, res.records)
    return img


# ------------------------------------------------------------------------------------------------ round trips
@pytest.mark.parametrize("mechanism", [SHA256, SHA512])
def test_an_upserted_credential_is_what_a_password_login_derives_and_logs_in(mechanism):
    name = NAMES[mechanism]
    res = alter(image(), upsertions=[up("alice", mechanism, 8192, "alice-secret", b"pepper")])
    assert results(res) == [("alice", ec.NONE, None)] and res.event
    codec.encode(res.response, 0)
    [rec] = res.records
    assert isinstance(rec.message, m.UserScramCredentialRecord) and rec.version == 0
    img = replay(image(), res.records)
    stored = img.scram[(mechanism, "alice")]
    assert as_tuple(stored) == scram.credential(name, "alice-secret", b"pepper", 8192)
    # the image's credential behind a SCRAM server: the right password logs in, a wrong one does not
    source = lambda user: img.scram.get((mechanism, user))  # noqa: E731
    server = lambda: scram.ScramServer(name, source, lambda: "servernonce")  # noqa: E731
    assert _client(name, "alice", "alice-secret", server()).principal == "User:alice"
    assert _client(name, "alice", "nope", server()).principal is None
    # a snapshot of the image holds the credential and replays to the same image
    assert replay_all(img.records()).scram == img.scram


def test_upsert_replaces_and_delete_removes_through_the_image():
    img = with_credentials(up("alice", SHA256, 4096, "one"), up("alice", SHA512, 8192, "two"), up("bob", SHA512))
    assert describe(img, "alice") == [("alice", ec.NONE, "", [(SHA256, 4096), (SHA512, 8192)])]
    img = replay(img, alter(img, upsertions=[up("alice", SHA256, 16384, "three", b"s2")]).records)
    assert as_tuple(img.scram[(SHA256, "alice")]) == scram.credential("SCRAM-SHA-256", "three", b"s2", 16384)
    res = alter(img, deletions=[dl("alice", SHA256), dl("bob", SHA512)])
    assert sorted(results(res)) == [("alice", ec.NONE, None), ("bob", ec.NONE, None)]
    assert [type(r.message) for r in res.records] == [m.RemoveUserScramCredentialRecord] * 2
    img = replay(img, res.records)
    assert set(img.scram) == {(SHA512, "alice")}
    assert describe(img, null=True) == [("alice", ec.NONE, "", [(SHA512, 8192)])]
    img = replay(img, alter(img, deletions=[dl("alice", SHA512)]).records)
    assert img.scram == {} and describe(img, null=True) == [] and describe(img) == []


def test_the_quorum_controller_routes_the_request_here():
    c = QuorumController(1, "MkU3OEVBNTcwNTJENDM2Qg", rng=random.Random(1), new_uuid=lambda: uuid.UUID(int=1),
                         supported_features={FEATURE_NAME: (MINIMUM.level, MAXIMUM.level)})
    c.load_snapshot(0, [m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level)])
    c.activate(0)
    res = c.handle("AlterUserScramCredentials", A(deletions=[], upsertions=[up("carol")]), 0, now_ms=0,
                   next_offset=1)
    assert results(res) == [("carol", ec.NONE, None)]
    c.write(res.records, 1)
    assert (SHA256, "carol") in c.latest.scram


# ------------------------------------------------------------------------------------------------ refusals
def test_a_user_named_twice_in_one_request_is_a_duplicate_whatever_the_mechanisms():
    img = with_credentials(up("user1"), up("user2"))
    # Kafka's testAlterSameThingTwice: two results, both DUPLICATE_RESOURCE, no records
    for deletions, upsertions in (([dl("user1"), dl("user1")], [up("user2"), up("user2")]),
                                  ([dl("user1"), dl("user2")], [up("user1"), up("user2")])):
        res = alter(img, deletions, upsertions)
        assert sorted(results(res)) == [("user1", ec.DUPLICATE_RESOURCE, sc.DUPLICATE),
                                        ("user2", ec.DUPLICATE_RESOURCE, sc.DUPLICATE)]
        assert res.records == () and res.event == ""
    # two mechanisms of one user in one request, as kafka-configs.sh --alter sends them: refused
    res = alter(image(), upsertions=[up("alice", SHA256), up("alice", SHA512), up("alice", SHA256)])
    assert results(res) == [("alice", ec.DUPLICATE_RESOURCE, sc.DUPLICATE)] and res.records == ()


def test_metadata_version_below_3_5_iv2_does_not_support_scram():
    old = image(BY_NAME["3.5-IV1"])
    res = alter(old, [dl("bob")], [up("alice"), up("")])
    assert sorted(results(res)) == [("", ec.UNSUPPORTED_VERSION, sc.UNSUPPORTED),
                                    ("alice", ec.UNSUPPORTED_VERSION, sc.UNSUPPORTED),
                                    ("bob", ec.UNSUPPORTED_VERSION, sc.UNSUPPORTED)]
    assert res.records == ()
    assert results(alter(image(BY_NAME["3.5-IV2"]), upsertions=[up("alice")])) == [("alice", ec.NONE, None)]
    assert results(alter(MetadataImage(), upsertions=[up("alice")]))[0][1] == ec.UNSUPPORTED_VERSION


def test_empty_users_and_iterations_out_of_range_are_unacceptable():
    # Kafka's testAlterEmptyUser: however often the empty name comes, one result
    for deletions, upsertions in (([dl("")], []), ([], [up("")]), ([dl(""), dl("")], [up("")])):
        assert results(alter(image(), deletions, upsertions)) == [("", ec.UNACCEPTABLE_CREDENTIAL, sc.EMPTY_USER)]
    for mechanism in (SHA256, SHA512):
        for iterations, message in ((1, sc.TOO_FEW), (4095, sc.TOO_FEW), (16385, sc.TOO_MANY),
                                    (2**31 - 1, sc.TOO_MANY)):
            res = alter(image(), upsertions=[up("u", mechanism, iterations, salted=b"k" * 32)])
            assert results(res) == [("u", ec.UNACCEPTABLE_CREDENTIAL, message)] and res.records == ()
        for iterations in (4096, 16384):
            assert results(alter(image(), upsertions=[up("u", mechanism, iterations, salted=b"k" * 32)])) == [
                ("u", ec.NONE, None)]


def test_unknown_mechanisms_are_unsupported():
    # Kafka's testAlterUnknownMechanism: a user's first alteration decides; five users, five refusals
    res = alter(image(), [dl("user1", 0), dl("user1", SHA256), dl("user2", 10)],
                [up("user4", 0), up("user4", SHA256, 8192), up("user5", 10), up("user6", 0)])
    assert sorted(results(res)) == [(u, ec.UNSUPPORTED_SASL_MECHANISM, sc.UNKNOWN_MECHANISM)
                                    for u in ("user1", "user2", "user4", "user5", "user6")]
    assert res.records == ()


def test_deleting_a_missing_credential_is_not_found():
    img = with_credentials(up("alice", SHA512))
    assert results(alter(img, [dl("alice", SHA256)])) == [("alice", ec.RESOURCE_NOT_FOUND, sc.NOT_THERE)]
    assert results(alter(img, [dl("nobody", SHA512)])) == [("nobody", ec.RESOURCE_NOT_FOUND, sc.NOT_THERE)]


def test_an_empty_salted_password_is_an_unknown_server_error_without_a_message():
    res = alter(image(), upsertions=[up("alice", salted=b"")])
    assert results(res) == [("alice", ec.UNKNOWN_SERVER_ERROR, None)] and res.records == ()


def test_each_user_stands_alone_and_results_come_in_kafkas_order():
    img = with_credentials(up("dora", SHA512))
    res = alter(img, [dl("dora", SHA512), dl("zed")],
                [up("version"), up("brokers", SHA512), up("eve", 7), up("dup"), up("dup", SHA512),
                 up("nil", salted=b"")])
    # deletions, then upsertions, then refusals; each group in java.util.HashMap order ("brokers" before "version")
    assert results(res) == [
        ("dora", ec.NONE, None),
        ("brokers", ec.NONE, None), ("version", ec.NONE, None),
        ("nil", ec.UNKNOWN_SERVER_ERROR, None), ("eve", ec.UNSUPPORTED_SASL_MECHANISM, sc.UNKNOWN_MECHANISM),
        ("zed", ec.RESOURCE_NOT_FOUND, sc.NOT_THERE), ("dup", ec.DUPLICATE_RESOURCE, sc.DUPLICATE),
    ]
    assert [(type(r.message).__name__, r.message.name) for r in res.records] == [
        ("RemoveUserScramCredentialRecord", "dora"), ("UserScramCredentialRecord", "brokers"),
        ("UserScramCredentialRecord", "version")]
    img = replay(img, res.records)
    assert set(img.scram) == {(SHA256, "version"), (SHA512, "brokers")}
    assert sc.alter_credentials(image(), A(deletions=[], upsertions=[])).response.results == []


def test_java_hashmap_order_follows_the_largest_size_the_map_reached():
    names = [f"user{i}" for i in range(20)]
    res = alter(image(), upsertions=[up(n) for n in names])
    got = [r.user for r in res.response.results]
    assert sorted(got) == sorted(names) and got != names  # 32 buckets for 20 keys: not insertion order
    assert got == sc._bucket_order(names, 32)


# ------------------------------------------------------------------------------------------------ describe
def test_describe_all_some_unknown_and_duplicate_users():
    img = with_credentials(up("user1", SHA256), up("user1", SHA512, 8192), up("user2", SHA512, 8192),
                           up("user3@user3.com", SHA512, 8192))
    everyone = describe(img, null=True)
    assert [u for u, *_ in everyone] == ["user1", "user3@user3.com", "user2"]  # java.util.HashMap order
    assert describe(img) == everyone  # an empty list is every user too
    assert sorted(everyone) == [("user1", ec.NONE, "", [(SHA256, 4096), (SHA512, 8192)]),
                                ("user2", ec.NONE, "", [(SHA512, 8192)]),
                                ("user3@user3.com", ec.NONE, "", [(SHA512, 8192)])]
    assert describe(img, "user1", "unknownUser") == [
        ("user1", ec.NONE, "", [(SHA256, 4096), (SHA512, 8192)]),
        ("unknownUser", ec.RESOURCE_NOT_FOUND, sc.DESCRIBE_MISSING + "unknownUser", [])]
    assert describe(img, "user1", "user2", "user2") == [
        ("user1", ec.NONE, "", [(SHA256, 4096), (SHA512, 8192)]),
        ("user2", ec.DUPLICATE_RESOURCE, sc.DESCRIBE_DUPLICATE + "user2", [])]
    assert [u for u, *_ in describe(img, "version", "brokers")] == ["brokers", "version"]  # HashMap order
