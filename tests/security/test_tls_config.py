"""TLS settings from Kafka's ``ssl.*`` keys, and principals from certificates: every refusal names key and value."""

from __future__ import annotations

import ssl

import pytest

from kraftwire.errors import ConfigError
from kraftwire.security.principal import ANONYMOUS, NoMatchingRule, map_dn, parse_rules, subject_dn, tls_principal
from kraftwire.security.tls import client_context, openssl_cipher_name, server_context, ssl_settings
from kraftwire.server.node.settings import NodeSettings

from harness.certs import CA

BASE = ("node.id=1\nlisteners=SSL://localhost:9093\ncontroller.listener.names=SSL\n"
        "controller.quorum.voters=1@localhost:9093\nlog.dirs=/tmp/kraftwire-tls-unused\n")


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    return CA(str(tmp_path_factory.mktemp("ca")))


@pytest.fixture(scope="module")
def node_cert(ca):
    return ca.issue("node")


def _settings(text: str) -> NodeSettings:
    props = dict(line.split("=", 1) for line in text.strip().splitlines())
    return NodeSettings.from_properties(props)


def test_an_ssl_listener_with_a_pem_keystore_serves_tls_and_its_keys_are_not_reported_ignored(node_cert, ca):
    s = _settings(BASE + f"ssl.keystore.type=PEM\nssl.keystore.location={node_cert.bundle_path}\n"
                         f"ssl.truststore.type=PEM\nssl.truststore.location={ca.path}\nssl.client.auth=required\n")
    assert s.protocol_of("SSL") == "SSL"
    ctx = s.server_ssl_context("SSL")
    assert isinstance(ctx, ssl.SSLContext) and ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.minimum_version == ssl.TLSVersion.TLSv1_2 and ctx.maximum_version == ssl.TLSVersion.TLSv1_3
    peer = s.controller_ssl_context()  # the quorum's own connections are TLS too
    assert peer.check_hostname and peer.verify_mode == ssl.CERT_REQUIRED
    assert not [k for k in s.ignored_keys if k.startswith("ssl.")]


def test_inline_pem_keystore_and_truststore(node_cert, ca):
    props = {"ssl.keystore.type": "PEM", "ssl.keystore.key": node_cert.key_pem,
             "ssl.keystore.certificate.chain": node_cert.cert_pem, "ssl.truststore.type": "PEM",
             "ssl.truststore.certificates": ca.pem, "ssl.client.auth": "requested"}
    settings = ssl_settings(props, "SSL")
    assert server_context(settings).verify_mode == ssl.CERT_OPTIONAL
    client_context(settings)


def test_an_encrypted_key_needs_its_password(ca, tmp_path):
    issued = ca.issue("locked", key_password=b"s3cret")
    props = {"ssl.keystore.type": "PEM", "ssl.keystore.location": issued.bundle_path}
    with pytest.raises(ConfigError) as info:
        server_context(ssl_settings(props, "SSL"))
    assert info.value.key == "ssl.keystore.location"
    props["ssl.key.password"] = "s3cret"
    server_context(ssl_settings(props, "SSL"))


def test_the_listener_prefix_wins(node_cert, ca, tmp_path):
    props = {"ssl.client.auth": "nonsense", "listener.name.ssl.ssl.client.auth": "required",
             "ssl.keystore.type": "PEM", "ssl.keystore.location": node_cert.bundle_path,
             "ssl.truststore.type": "PEM", "ssl.truststore.location": ca.path}
    assert ssl_settings(props, "SSL").client_auth == "required"
    with pytest.raises(ConfigError) as info:
        ssl_settings(props, "OTHER")
    assert (info.value.key, info.value.value) == ("ssl.client.auth", "nonsense")


@pytest.mark.parametrize("extra, key, value", [
    ("", "ssl.keystore.location", "(missing)"),
    ("ssl.keystore.type=JKS\nssl.keystore.location=/x.jks\n", "ssl.keystore.type", "JKS"),
    ("ssl.keystore.type=PEM\nssl.keystore.location=/no/such/file.pem\n", "ssl.keystore.location", "/no/such/file.pem"),
    ("ssl.keystore.type=PEM\nssl.keystore.key=-----BEGIN PRIVATE KEY-----\n", "ssl.keystore.certificate.chain",
     "(missing)"),
    ("ssl.keystore.type=PEM\nssl.keystore.location=@BUNDLE@\nssl.client.auth=always\n", "ssl.client.auth", "always"),
    ("ssl.keystore.type=PEM\nssl.keystore.location=@BUNDLE@\nssl.enabled.protocols=TLSv1.1\n",
     "ssl.enabled.protocols", "TLSv1.1"),
    ("ssl.keystore.type=PEM\nssl.keystore.location=@BUNDLE@\nssl.cipher.suites=TLS_FOO_WITH_BAR\n",
     "ssl.cipher.suites", "TLS_FOO_WITH_BAR"),
    ("ssl.keystore.type=PEM\nssl.keystore.location=@BUNDLE@\nssl.endpoint.identification.algorithm=ldap\n",
     "ssl.endpoint.identification.algorithm", "ldap"),
    ("ssl.keystore.type=PEM\nssl.keystore.location=@BUNDLE@\nssl.principal.mapping.rules=RULE:^CN=(.*$/$1/\n",
     "ssl.principal.mapping.rules", "RULE:^CN=(.*$/$1/"),
    ("ssl.keystore.type=PEM\nssl.keystore.location=@BUNDLE@\nssl.truststore.type=PEM\nssl.truststore.password=x\n",
     "ssl.truststore.password", "(hidden)"),
    ("listener.name.ssl.ssl.keystore.type=PKCS12\n", "listener.name.ssl.ssl.keystore.type", "PKCS12"),
])
def test_bad_tls_settings_name_key_and_value(node_cert, extra, key, value):
    with pytest.raises(ConfigError) as info:
        _settings(BASE + extra.replace("@BUNDLE@", node_cert.bundle_path))
    assert (info.value.key, info.value.value) == (key, value)


def test_a_sasl_listener_without_a_supported_mechanism_is_refused_clearly():
    """SASL is served now; Kafka's default mechanism (GSSAPI) is not, and the refusal names the key."""
    with pytest.raises(ConfigError) as info:
        _settings(BASE.replace("SSL", "SASL_SSL"))
    assert info.value.key == "sasl.enabled.mechanisms" and "GSSAPI" in str(info.value)


def test_a_client_auth_listener_needs_a_truststore(node_cert):
    props = {"ssl.keystore.type": "PEM", "ssl.keystore.location": node_cert.bundle_path, "ssl.client.auth": "required"}
    with pytest.raises(ConfigError) as info:
        server_context(ssl_settings(props, "SSL"))
    assert info.value.key == "ssl.client.auth"


def test_iana_cipher_names_become_openssl_names():
    assert openssl_cipher_name("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256") == "ECDHE-RSA-AES128-GCM-SHA256"
    assert openssl_cipher_name("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384") == "ECDHE-ECDSA-AES256-GCM-SHA384"
    assert openssl_cipher_name("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256") == "ECDHE-RSA-CHACHA20-POLY1305"
    assert openssl_cipher_name("TLS_RSA_WITH_AES_128_CBC_SHA") == "AES128-SHA"
    assert openssl_cipher_name("TLS_AES_128_GCM_SHA256") == "TLS_AES_128_GCM_SHA256"
    assert openssl_cipher_name("SSL_RSA_WITH_RC4_128_MD5") is None
    # every translated TLS 1.2 name is one this OpenSSL knows
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.set_ciphers("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305")


def test_a_cipher_suite_list_restricts_tls12(node_cert):
    props = {"ssl.keystore.type": "PEM", "ssl.keystore.location": node_cert.bundle_path,
             "ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}
    ctx = server_context(ssl_settings(props, "SSL"))
    tls12 = {c["name"] for c in ctx.get_ciphers() if c["protocol"] == "TLSv1.2"}
    assert tls12 == {"ECDHE-ECDSA-AES256-GCM-SHA384"}


# ------------------------------------------------------------------------------------------------ principals
PEERCERT = {"subject": ((("countryName", "US"),), (("organizationName", "acme"),),
                        (("organizationalUnitName", "ServiceUsers"),), (("commonName", "alice"),))}


def test_subject_is_printed_most_specific_first_as_rfc2253():
    assert subject_dn(PEERCERT) == "CN=alice,OU=ServiceUsers,O=acme,C=US"
    odd = {"subject": ((("commonName", "a,b+c"),), (("organizationName", " lead"),))}
    assert subject_dn(odd) == "O=\\ lead,CN=a\\,b\\+c"


def test_default_rule_keeps_the_dn_and_no_certificate_is_anonymous():
    rules = parse_rules("DEFAULT")
    assert tls_principal(PEERCERT, rules) == "User:CN=alice,OU=ServiceUsers,O=acme,C=US"
    assert tls_principal(None, rules) == ANONYMOUS
    assert tls_principal({}, rules) == ANONYMOUS


def test_mapping_rules_first_match_wins_with_groups_and_case():
    rules = parse_rules("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/U, RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/L,DEFAULT")
    assert map_dn("CN=alice,OU=ServiceUsers,O=acme,C=US", rules) == "ALICE"
    assert map_dn("CN=Bob,OU=Admins,O=acme", rules) == "bob@admins"
    assert map_dn("O=acme", rules) == "O=acme"
    only = parse_rules("RULE:^CN=([a-z]+)$/svc-$1/")
    assert map_dn("CN=kafka", only) == "svc-kafka"
    with pytest.raises(NoMatchingRule):
        map_dn("CN=Kafka,O=x", only)
    escaped = parse_rules(r"RULE:^CN=(.*)\/x$/$1/")
    assert map_dn("CN=a/x", escaped) == "a"


@pytest.mark.parametrize("text", ["", "RULE:abc", "RULE:^(.*$/$1/", "NOPE", "DEFAULT RULE:a/b/"])
def test_bad_rules_are_refused(text):
    with pytest.raises(ValueError):
        parse_rules(text)
