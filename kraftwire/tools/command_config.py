"""Kafka's client properties, read once for every tool: ``--command-config F`` of the admin tools (a TLS context and
a SASL login for kraftwire's own client), and ``--producer.config`` / ``--consumer.config`` / ``--command-config`` /
``--producer-property`` / ``--consumer-property`` of the console, perf and verifiable clients (translated to
librdkafka's configuration by ``librdkafka_config``). The keys a Kafka user writes:

* ``security.protocol``: PLAINTEXT (default), SSL, SASL_PLAINTEXT or SASL_SSL;
* TLS: ``ssl.truststore.location`` / ``ssl.truststore.certificates`` (PEM), ``ssl.keystore.*`` for mutual TLS,
  ``ssl.endpoint.identification.algorithm``;
* SASL: ``sasl.mechanism`` (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; Kafka's default GSSAPI is refused) and
  ``sasl.jaas.config`` with ``username`` and ``password``.

``ConfigError`` names the key and the value. Java-only forms are translated where librdkafka has the same thing
(PEM stores, PlainLoginModule/ScramLoginModule credentials, assignor class names, renamed producer keys) and refused
by name where it has not (JKS/PKCS12 stores, other login modules); keys meaning something only to the Java client
(serializers, buffer sizes...) are dropped with a note on standard error.
"""

from __future__ import annotations

from kraftwire.config import load_properties
from kraftwire.errors import ConfigError
from kraftwire.security.sasl import plain, scram
from kraftwire.security.sasl.client import SaslLogin
from kraftwire.security.sasl.jaas import JaasError, parse_jaas_config
from kraftwire.security.tls import client_context, ssl_settings

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MODULES = {"PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
           "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
           "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule"}


def read_client_properties(path: str, flag: str = "--command-config") -> dict[str, str]:
    """A client properties file; ``ConfigError`` naming ``flag`` and the file when it cannot be read."""
    try:
        return load_properties(path)
    except OSError as exc:
        raise ConfigError(flag, path, f"cannot read the file: {exc.strerror or exc}") from None


def parse_pairs(pairs: list[str], flag: str = "--property") -> dict[str, str]:
    """``KEY=VALUE`` items of a repeatable flag; ``ConfigError`` naming the flag for an item without ``=``."""
    out = {}
    for item in pairs or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(flag, item, "expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def client_security(path: str | None):
    """(TLS context or None, SaslLogin or None) from a ``--command-config`` file (None: plaintext)."""
    if path is None:
        return None, None
    return security_from(read_client_properties(path))


def security_from(props: dict):
    """(TLS context or None, SaslLogin or None) from client properties (a ``--command-config`` file's, or the
    ``kafka.*`` options of the Spark source with the prefix taken off); ``ConfigError`` names the key."""
    _, settings, login = _security(props)
    return (client_context(settings) if settings is not None else None), login


def _security(props: dict):
    """(security.protocol, SslSettings or None, SaslLogin or None), validated; ``ConfigError`` names the key."""
    protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise ConfigError("security.protocol", protocol, f"one of {', '.join(PROTOCOLS)}")
    settings = ssl_settings(props, "client") if protocol in ("SSL", "SASL_SSL") else None
    login = None
    if protocol.startswith("SASL_"):
        mechanism = props.get("sasl.mechanism", "GSSAPI").strip().upper()
        if mechanism not in (plain.MECHANISM, *scram.MECHANISMS):
            raise ConfigError("sasl.mechanism", props.get("sasl.mechanism", "GSSAPI (Kafka's default)"),
                              "kraftwire logs in with PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
        text = props.get("sasl.jaas.config")
        if text is None:
            raise ConfigError("sasl.jaas.config", "(missing)", f'{MODULES[mechanism]} required username="<name>" '
                                                                'password="<password>";')
        try:
            module = parse_jaas_config(text)
        except JaasError as exc:
            raise ConfigError("sasl.jaas.config", "(hidden: it holds a password)", str(exc)) from None
        if module.class_name != MODULES[mechanism]:
            raise ConfigError("sasl.jaas.config", module.class_name, f"{mechanism} logs in with {MODULES[mechanism]}")
        user, password = module.options.get("username"), module.options.get("password")
        if not user or not password:
            raise ConfigError("sasl.jaas.config", "(hidden: it holds a password)", "username=... and password=...")
        login = SaslLogin(mechanism, user, password)
    return protocol, settings, login


#: keys of the Java clients only, dropped with a note
JAVA_ONLY = frozenset({
    "key.serializer", "value.serializer", "key.deserializer", "value.deserializer", "buffer.memory", "max.block.ms",
    "partitioner.class", "interceptor.classes", "metric.reporters", "metrics.sample.window.ms", "metrics.num.samples",
    "send.buffer.bytes", "receive.buffer.bytes", "max.poll.records", "default.api.timeout.ms",
    "ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites",
    "ssl.client.auth", "ssl.principal.mapping.rules"})
#: Java producer keys librdkafka spells differently
RENAMED = {"delivery.timeout.ms": "message.timeout.ms", "retries": "message.send.max.retries"}
#: the Java consumer's assignor classes and librdkafka's names for the same assignors
ASSIGNORS = {"org.apache.kafka.clients.consumer.RangeAssignor": "range",
             "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
             "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky"}
_SECURITY_KEYS = frozenset({"security.protocol", "ssl.truststore.type", "ssl.keystore.type", "sasl.mechanism", "sasl.jaas.config", "ssl.keystore.location",
                            "ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.key.password",
                            "ssl.truststore.location", "ssl.truststore.certificates", "ssl.keystore.password",
                            "ssl.truststore.password", "ssl.endpoint.identification.algorithm"})


def librdkafka_config(props: dict[str, str], note=None) -> dict[str, str]:
    """Kafka (Java) client properties as librdkafka's configuration: TLS stores and SASL credentials through the
    same validation as the admin tools (``ConfigError`` names the key), other keys passed on (librdkafka shares
    most names) or renamed; ``note(text)`` is told of each Java-only key dropped (default: standard error)."""
    import sys

    note = note or (lambda text: print(f"note: {text}", file=sys.stderr))
    protocol, settings, login = _security(props)
    conf = {"security.protocol": protocol.lower()}
    if settings is not None:
        if settings.truststore_location:
            conf["ssl.ca.location"] = settings.truststore_location
        if settings.truststore_pem:
            conf["ssl.ca.pem"] = settings.truststore_pem
        if settings.keystore_location:  # one PEM file holding the key and its chain
            conf["ssl.certificate.location"] = conf["ssl.key.location"] = settings.keystore_location
        if settings.keystore_key_pem:
            conf["ssl.key.pem"] = settings.keystore_key_pem
            conf["ssl.certificate.pem"] = settings.keystore_chain_pem
        if settings.key_password:
            conf["ssl.key.password"] = settings.key_password
        conf["ssl.endpoint.identification.algorithm"] = settings.endpoint_identification or "none"
    if login is not None:
        conf.update({"sasl.mechanism": login.mechanism, "sasl.username": login.username, "sasl.password": login.password})
    for key, value in props.items():
        if key in _SECURITY_KEYS:
            continue
        if key in JAVA_ONLY:
            note(f"{key} applies to the Java client only; ignored")
        elif key == "partition.assignment.strategy":
            names = [ASSIGNORS.get(c.strip(), c.strip()) for c in value.split(",") if c.strip()]
            unknown = [n for n in names if n not in ASSIGNORS.values()]
            if unknown:
                raise ConfigError(key, value, "RangeAssignor, RoundRobinAssignor or CooperativeStickyAssignor "
                                  "(org.apache.kafka.clients.consumer.*)")
            conf[key] = ",".join(names)
        else:
            conf[RENAMED.get(key, key)] = value
    return conf


def kafka_client(kind: str, conf: dict):
    """A confluent-kafka ``Producer`` or ``Consumer`` (``kind``) on ``conf``; librdkafka's refusal of a key (an
    unknown or misspelt property, a value it cannot take) becomes a ``ConfigError`` naming it."""
    import confluent_kafka

    try:
        return getattr(confluent_kafka, kind)(conf)
    except confluent_kafka.KafkaException as exc:
        error = exc.args[0]
        text = error.str() if hasattr(error, "str") else str(error)
        key = text.split('"')[1] if text.count('"') >= 2 else "(client configuration)"
        raise ConfigError(key, conf.get(key, ""), text) from None
