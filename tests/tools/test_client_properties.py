"""Kafka's client properties through the one translation every tool uses (``command_config``): the keys a Kafka user
writes in ``--command-config`` / ``--producer.config`` / ``--consumer.config`` become librdkafka's for the console,
perf and verifiable clients — PEM stores, PlainLoginModule/ScramLoginModule credentials, assignor classes, renamed
producer keys — and Java-only forms are refused naming the key (JKS stores, other login modules)."""

from __future__ import annotations

import pytest

from kraftwire.errors import ConfigError
from kraftwire.tools.command_config import kafka_client, librdkafka_config, parse_pairs, read_client_properties


def _ca(tmp_path) -> str:
    path = tmp_path / "ca.pem"
    path.write_text("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    return str(path)


def test_sasl_ssl_with_pem_truststore_and_scram_login(tmp_path):
    notes = []
    conf = librdkafka_config({
        "bootstrap.servers": "h:1", "security.protocol": "SASL_SSL", "ssl.truststore.type": "PEM",
        "ssl.truststore.location": _ca(tmp_path), "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" '
                            'password="alice-secret";',
        "key.serializer": "org.apache.kafka.common.serialization.StringSerializer", "delivery.timeout.ms": "5000",
        "acks": "all"}, note=notes.append)
    assert conf == {"security.protocol": "sasl_ssl", "ssl.ca.location": str(tmp_path / "ca.pem"),
                    "ssl.endpoint.identification.algorithm": "https", "sasl.mechanism": "SCRAM-SHA-512",
                    "sasl.username": "alice", "sasl.password": "alice-secret", "bootstrap.servers": "h:1",
                    "message.timeout.ms": "5000", "acks": "all"}
    assert notes == ["key.serializer applies to the Java client only; ignored"]


def test_mutual_tls_keystore_without_host_name_check(tmp_path):
    bundle = tmp_path / "client.pem"
    bundle.write_text("key and chain")
    conf = librdkafka_config({"security.protocol": "SSL", "ssl.keystore.type": "PEM",
                              "ssl.keystore.location": str(bundle), "ssl.truststore.location": _ca(tmp_path),
                              "ssl.endpoint.identification.algorithm": ""})
    assert conf["ssl.certificate.location"] == conf["ssl.key.location"] == str(bundle)
    assert conf["ssl.endpoint.identification.algorithm"] == "none"


def test_plain_login_and_assignor_classes():
    conf = librdkafka_config({
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="bob" '
                            'password="bob-secret";',
        "partition.assignment.strategy": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"})
    assert (conf["sasl.username"], conf["sasl.password"]) == ("bob", "bob-secret")
    assert conf["partition.assignment.strategy"] == "cooperative-sticky"


@pytest.mark.parametrize("props, key", [
    ({"security.protocol": "SSL", "ssl.truststore.type": "JKS", "ssl.truststore.location": "/etc/hosts"},
     "ssl.truststore.type"),
    ({"security.protocol": "SSL", "ssl.truststore.location": "/nonexistent/ca.pem"}, "ssl.truststore.location"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI"}, "sasl.mechanism"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
      "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"}, "sasl.jaas.config"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "sasl.jaas.config"),
    ({"security.protocol": "TLS"}, "security.protocol"),
    ({"partition.assignment.strategy": "org.apache.kafka.clients.consumer.StickyAssignor"},
     "partition.assignment.strategy"),
])
def test_java_only_forms_are_refused_naming_the_key(props, key):
    with pytest.raises(ConfigError) as info:
        librdkafka_config(props)
    assert info.value.key == key


def test_a_key_librdkafka_does_not_know_is_named():
    with pytest.raises(ConfigError) as info:
        kafka_client("Producer", librdkafka_config({"bootstrap.servers": "127.0.0.1:1", "foo.bar": "1"}))
    assert info.value.key == "foo.bar" and 'No such configuration property: "foo.bar"' in str(info.value)


def test_files_and_pairs_name_the_flag(tmp_path):
    with pytest.raises(ConfigError) as info:
        read_client_properties(str(tmp_path / "missing.properties"), "--consumer.config")
    assert info.value.key == "--consumer.config" and "No such file or directory" in str(info.value)
    (tmp_path / "c.properties").write_text("sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
                                           "required \\\n    username=\"u\" password=\"p\";\nacks: all\n")
    assert read_client_properties(str(tmp_path / "c.properties")) == {
        "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" '
                            'password="p";', "acks": "all"}
    with pytest.raises(ConfigError) as info:
        parse_pairs(["acks"], "--producer-property")
    assert info.value.key == "--producer-property"
