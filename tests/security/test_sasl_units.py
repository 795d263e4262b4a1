"""SASL's pure parts: Kafka's JAAS option syntax, PLAIN's rules, the exchange's states, and the listener settings
(each refusal names the key)."""

from __future__ import annotations

import pytest

from kraftwire import error_codes as ec
from kraftwire.errors import ConfigError
from kraftwire.security.sasl import plain
from kraftwire.security.sasl.exchange import AUTHENTICATE, DONE, FAILED, SaslExchange
from kraftwire.security.sasl.jaas import JaasError, parse_jaas_config
from kraftwire.security.sasl.settings import sasl_settings

MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
USERS = {"alice": "alice-secret", "bob": 'p"w\\d'}


def test_jaas_entries_as_kafka_writes_them():
    entry = parse_jaas_config(f'{MODULE} required username="admin" password="admin-secret" '
                              f'user_admin="admin-secret" user_alice=alice-secret user_bob="p\\"w\\\\d";')
    assert entry.class_name == MODULE and entry.flag == "required"
    assert entry.options["user_bob"] == 'p"w\\d' and entry.options["user_alice"] == "alice-secret"
    assert plain.users_from_options(entry.options) == {"admin": "admin-secret", "alice": "alice-secret",
                                                       "bob": 'p"w\\d'}


@pytest.mark.parametrize("text, reason", [
    (f'{MODULE} required user_a="x"', "ends with ';'"),
    (f'{MODULE} required user_a="x"; {MODULE} required;', "exactly one login module"),
    (f'{MODULE} mandatory user_a="x";', "not one of"),
    (f'{MODULE} required user_a;', "key=value"),
    ('required;', "class and a flag"),
])
def test_bad_jaas_entries_say_why(text, reason):
    with pytest.raises(JaasError, match=reason):
        parse_jaas_config(text)


INVALID = "Authentication failed: Invalid username or password"
OTHER_AUTHZID = "Authentication failed: Client requested an authorization id that is different from username"


@pytest.mark.parametrize("token, told", [
    (b"\x00alice\x00alice-secret", None),
    (b"alice\x00alice-secret", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"),
    (b"no separators", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"),
    (b"a\x00b\x00c\x00d\x00e", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"),  # Kafka counts to 4
    (b"alice\x00alice\x00alice-secret", None),  # authzid = the user
    (b"bob\x00alice\x00alice-secret", OTHER_AUTHZID),
    (b"bob\x00alice\x00wrong", INVALID),  # the password is checked before the authorization id
    (b"\x00alice\x00wrong", INVALID),
    (b"\x00carol\x00alice-secret", INVALID),  # unknown user: the same message
    (b"\x00\x00alice-secret", "Authentication failed: username not specified"),
    (b"\x00alice\x00", "Authentication failed: password not specified"),
    (b"\x00alice\x00alice-secret\x00", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"),
    (b"\xff\x00alice\x00alice-secret", OTHER_AUTHZID),  # not UTF-8: Java reads U+FFFD, not the user
])
def test_plain_follows_kafkas_rules(token, told):
    """PlainSaslServerTest and the messages Kafka 4.4's PlainSaslServer tells the client (seen by the conformance
    run, SaslAuthenticate-v*-plain-*)."""
    outcome = plain.authenticate(token, USERS)
    assert outcome.principal == (None if told else "User:alice")
    assert (outcome.message or None) == told and (told is None or outcome.reason)


def test_the_exchange_moves_handshake_authenticate_done():
    ex = SaslExchange({"PLAIN": lambda: plain.PlainServer(USERS)})
    assert ex.handshake("PLAIN") == (ec.NONE, ["PLAIN"]) and ex.state == AUTHENTICATE
    answer = ex.authenticate(b"\x00alice\x00alice-secret")
    assert answer.error == ec.NONE and ex.state == DONE and ex.principal == "User:alice"


def test_the_exchange_refuses_what_kafka_refuses():
    ex = SaslExchange({"PLAIN": lambda: plain.PlainServer(USERS)})
    answer = ex.authenticate(b"\x00alice\x00alice-secret")  # before the handshake: Kafka closes, answering nothing
    assert answer.error == ec.ILLEGAL_SASL_STATE and not answer.answered and ex.state == FAILED
    ex = SaslExchange({"PLAIN": lambda: plain.PlainServer(USERS)})
    assert ex.handshake("GSSAPI").error == ec.UNSUPPORTED_SASL_MECHANISM and ex.state == FAILED
    ex = SaslExchange({"PLAIN": lambda: plain.PlainServer(USERS)})
    ex.handshake("PLAIN")
    answer = ex.authenticate(b"\x00alice\x00nope")  # PLAIN's own message reaches the client
    assert (answer.error, answer.message) == (ec.SASL_AUTHENTICATION_FAILED, INVALID)
    assert ex.principal is None and ex.state == FAILED and "alice" in answer.reason


JAAS_KEY = "listener.name.sasl_plaintext.plain.sasl.jaas.config"
SCRAM_KEY = "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config"


@pytest.mark.parametrize("props, key", [
    ({}, "sasl.enabled.mechanisms"),  # Kafka's default is GSSAPI
    ({"sasl.enabled.mechanisms": "PLAIN,GSSAPI"}, "sasl.enabled.mechanisms"),
    ({"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "OAUTHBEARER"},
     "listener.name.sasl_plaintext.sasl.enabled.mechanisms"),
    ({"sasl.enabled.mechanisms": "PLAIN"}, JAAS_KEY),
    ({"sasl.enabled.mechanisms": "PLAIN", JAAS_KEY: f'{MODULE} required username="a" password="b";'}, JAAS_KEY),
    ({"sasl.enabled.mechanisms": "PLAIN", JAAS_KEY: 'com.example.Other required user_a="b";'}, JAAS_KEY),
    ({"sasl.enabled.mechanisms": "PLAIN", JAAS_KEY: f'{MODULE} required user_a="b"'}, JAAS_KEY),
    ({"sasl.enabled.mechanisms": "SCRAM-SHA-256", SCRAM_KEY: f"{MODULE} required;"}, SCRAM_KEY),
])
def test_listener_settings_name_the_key(props, key):
    with pytest.raises(ConfigError) as info:
        sasl_settings(props, "SASL_PLAINTEXT")
    assert info.value.key == key
    assert "secret" not in str(info.value)


def test_listener_settings():
    s = sasl_settings({"sasl.enabled.mechanisms": "plain", JAAS_KEY: f'{MODULE} required user_alice="alice-secret";'},
                      "SASL_PLAINTEXT")
    assert s.mechanisms == ("PLAIN",) and s.plain_users == {"alice": "alice-secret"}
    assert "alice-secret" not in repr(s)


@pytest.mark.parametrize("text, key", [
    ("security.protocol=SASL_PLAINTEXT\n", "sasl.mechanism"),  # Kafka's default GSSAPI
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n", "sasl.jaas.config"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config="
     f'{MODULE} required username="a" password="b";\n', "sasl.jaas.config"),  # PLAIN's module for SCRAM
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
     f'{MODULE} required username="a";\n', "sasl.jaas.config"),
    ("security.protocol=KERBEROS\n", "security.protocol"),
])
def test_command_config_errors_name_the_key(tmp_path, text, key):
    from kraftwire.tools.command_config import client_security

    path = tmp_path / "c.properties"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        client_security(str(path))
    assert info.value.key == key


def test_command_config_logins(tmp_path):
    from kraftwire.tools.command_config import client_security

    path = tmp_path / "c.properties"
    path.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config="
                    'org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="pw";\n')
    tls, login = client_security(str(path))
    assert tls is None and (login.mechanism, login.username, login.password) == ("SCRAM-SHA-512", "bob", "pw")
    assert client_security(None) == (None, None)
