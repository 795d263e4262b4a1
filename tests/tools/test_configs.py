"""``kraftwire configs --entity-type users``: the arguments Kafka's kafka-configs.sh takes for SCRAM credentials, the
AlterUserScramCredentials request it builds (salted here, as Kafka's admin client salts), and its output lines and
exit codes, without a server (the end-to-end run is ``tests/security/test_scram_admin.py``)."""

from __future__ import annotations

import argparse

import pytest

from kraftwire import error_codes as ec
from kraftwire.cli import main
from kraftwire.metadata.controller import scram as scram_control
from kraftwire.metadata.image import replay_all
from kraftwire.metadata.version import DEFAULT, FEATURE_NAME
from kraftwire.protocol import codec
from kraftwire.protocol import messages as m
from kraftwire.security.sasl import scram
from kraftwire.tools import configs

BOOT = ["configs", "--bootstrap-server", "localhost:1"]


def args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    configs.add_arguments(p)
    ns = p.parse_args(["--bootstrap-server", "localhost:1", *argv])
    configs.resolve_entity(ns)
    return ns


def test_add_and_delete_configs_of_a_user():
    adds, deletes = configs.user_alterations(args(
        "--entity-type", "users", "--entity-name", "alice", "--alter", "--add-config",
        "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=a,b=c]"))
    assert adds == {"SCRAM-SHA-256": "iterations=8192,password=alice-secret", "SCRAM-SHA-512": "password=a,b=c"}
    assert deletes == []
    adds, deletes = configs.user_alterations(args("--entity-type", "users", "--entity-name", "alice", "--alter",
                                                  "--delete-config", "SCRAM-SHA-512, SCRAM-SHA-256"))
    assert (adds, deletes) == ({}, ["SCRAM-SHA-512", "SCRAM-SHA-256"])


def test_credential_settings_as_kafkas_tool_reads_them():
    parse = configs.parse_scram_credential
    assert parse("SCRAM-SHA-256", "password=pw") == (4096, "pw")
    assert parse("SCRAM-SHA-256", "iterations=-1,password=pw") == (4096, "pw")
    assert parse("SCRAM-SHA-512", "iterations=8192,password=p,w=x") == (8192, "p,w=x")
    assert parse("SCRAM-SHA-512", "iterations=99999,password=pw") == (99999, "pw")  # the controller refuses it
    assert parse("SCRAM-SHA-512", "password=") == (4096, "")
    for text, message in (("pw", "Invalid credential property SCRAM_SHA_256=pw"),
                          ("iterations=100,password=pw",
                           "Iterations 100 is less than the minimum 4096 required for SCRAM-SHA-256"),
                          ("iterations=,password=pw", 'For input string: ""'),
                          ("iterations=99999999999,password=pw", 'For input string: "99999999999"')):
        with pytest.raises(configs.ConfigArgumentError) as e:
            parse("SCRAM-SHA-256", text)
        assert str(e.value) == message
    # "password=x,iterations=8192" is a password "x,iterations=8192" (the regex takes the rest): no error
    assert parse("SCRAM-SHA-256", "password=x,iterations=8192") == (4096, "x,iterations=8192")


def test_the_request_salts_like_kafkas_admin_client_and_the_controller_derives_the_login_credential():
    body = configs.scram_request("alice", {"SCRAM-SHA-512": "iterations=8192,password=alice-secret"},
                                 ["SCRAM-SHA-256"], new_salt=lambda: b"fixedsalt")
    codec.encode(body, 0)
    assert [(d.name, d.mechanism) for d in body.deletions] == [("alice", 1)]
    [u] = body.upsertions
    assert (u.name, u.mechanism, u.iterations, u.salt) == ("alice", 2, 8192, b"fixedsalt")
    assert u.salted_password == scram.salted_password("SCRAM-SHA-512", "alice-secret", b"fixedsalt", 8192)
    # one mechanism per request: the controller turns the upsertion into the credential a login derives
    only = m.AlterUserScramCredentialsRequest(deletions=[], upsertions=[u])
    img = replay_all([m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level)])
    res = scram_control.alter_credentials(img, only)
    cred = replay_all(res.records, img).scram[(2, "alice")]
    assert (cred.salt, cred.stored_key, cred.server_key, cred.iterations) == scram.credential(
        "SCRAM-SHA-512", "alice-secret", b"fixedsalt", 8192)
    # deleting a credential alice lacks: the deletion decides, the upsertion of the same request is not looked at
    refused = scram_control.alter_credentials(img, body)
    with pytest.raises(configs.ServerRefusal, match="ResourceNotFoundException: Attempt to delete a user credential "
                                                    "that does not exist$"):
        configs.alter_outcome("alice", refused.response)
    assert refused.records == ()
    # both mechanisms of alice in one --add-config, sent in one request as the tool sends them: refused as Kafka's
    both = configs.scram_request("alice", {"SCRAM-SHA-256": "password=a", "SCRAM-SHA-512": "password=b"}, [])
    assert [u.mechanism for u in both.upsertions] == [1, 2]
    res = scram_control.alter_credentials(img, both)
    with pytest.raises(configs.ServerRefusal) as e:
        configs.alter_outcome("alice", res.response)
    assert str(e.value) == ("java.util.concurrent.ExecutionException: org.apache.kafka.common.errors."
                            "DuplicateResourceException: A user credential cannot be altered twice in the same request")
    with pytest.raises(configs.ServerRefusal, match="UnacceptableCredentialException: Password must not be empty"):
        configs.scram_request("alice", {"SCRAM-SHA-256": "password="}, [])


def test_the_random_salt_is_130_bits_in_base_36():
    salts = {configs.random_salt() for _ in range(50)}
    assert len(salts) == 50
    for salt in salts:
        text = salt.decode("ascii")
        assert 0 < len(text) <= 26 and set(text) <= set("0123456789abcdefghijklmnopqrstuvwxyz")
        assert int(text, 36) < 2**130


def test_describe_lines_as_kafkas_tool_prints_them():
    R = m.DescribeUserScramCredentialsResponse
    answer = R(throttle_time_ms=0, error_code=0, error_message=None, results=[
        R.DescribeUserScramCredentialsResult(user="alice", error_code=0, error_message=None, credential_infos=[
            R.CredentialInfo(mechanism=1, iterations=8192), R.CredentialInfo(mechanism=2, iterations=4096)]),
        R.DescribeUserScramCredentialsResult(user="ghost", error_code=ec.RESOURCE_NOT_FOUND, error_message="no",
                                             credential_infos=[]),
        R.DescribeUserScramCredentialsResult(user="twice", error_code=ec.DUPLICATE_RESOURCE, error_message="dup",
                                             credential_infos=[])])
    assert configs.describe_lines(answer) == [
        "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, "
        "SCRAM-SHA-512=iterations=4096",
        "Error retrieving SCRAM credential configs for user-principal 'twice': ExecutionException: "
        "org.apache.kafka.common.errors.DuplicateResourceException: dup"]
    with pytest.raises(configs.ServerRefusal, match="ClusterAuthorizationException: Cluster authorization failed."):
        configs.describe_lines(R(throttle_time_ms=0, error_code=ec.CLUSTER_AUTHORIZATION_FAILED, error_message=None,
                                 results=[]))


def test_alter_outcome_names_the_users_error():
    R = m.AlterUserScramCredentialsResponse
    ok = R(throttle_time_ms=0, results=[R.AlterUserScramCredentialsResult(user="alice", error_code=0,
                                                                          error_message=None)])
    configs.alter_outcome("alice", ok)
    too_many = R(throttle_time_ms=0, results=[R.AlterUserScramCredentialsResult(
        user="alice", error_code=ec.UNACCEPTABLE_CREDENTIAL, error_message="Too many iterations")])
    with pytest.raises(configs.ServerRefusal, match="UnacceptableCredentialException: Too many iterations$"):
        configs.alter_outcome("alice", too_many)
    with pytest.raises(configs.ServerRefusal, match="did not contain a result for user alice"):
        configs.alter_outcome("alice", R(throttle_time_ms=0, results=[]))


@pytest.mark.parametrize("argv, message", [
    (["--entity-type", "users", "--alter", "--add-config", "SCRAM-SHA-256=[password=x]"],
     "An entity-name or default entity must be specified with --alter of users, clients, brokers or ips"),
    (["--entity-type", "users", "--entity-name", "a", "--alter"],
     "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter"),
    (["--entity-type", "users", "--entity-name", "a", "--describe", "--delete-config", "SCRAM-SHA-256"],
     'Option "[describe]" can\'t be used with option "[delete-config]"'),
    (["--entity-type", "users", "--entity-name", "a", "--alter", "--add-config", "colour=blue"],
     "Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected "
     "config names: colour"),
    (["--entity-type", "users", "--entity-name", "a", "--alter", "--delete-config", "SCRAM-SHA-1"],
     "Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-server. Unexpected "
     "config names: SCRAM-SHA-1"),
    (["--entity-type", "users", "--entity-default", "--alter", "--add-config", "SCRAM-SHA-256=[password=x]"],
     "The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using "
     "--bootstrap-server."),
    (["--entity-type", "users", "--entity-name", "a", "--alter", "--add-config",
      "SCRAM-SHA-256=[password=x],consumer_byte_rate=10"],
     "Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server."),
    (["--entity-type", "users", "--entity-name", "a", "--alter", "--add-config",
      "SCRAM-SHA-256=[iterations=10,password=x]"],
     "Iterations 10 is less than the minimum 4096 required for SCRAM-SHA-256"),
])
def test_bad_arguments_print_kafkas_message_alone_and_exit_1(argv, message, capsys):
    assert main([*BOOT, *argv]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == message + "\n"
