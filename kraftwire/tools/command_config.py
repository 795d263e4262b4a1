"""``--command-config F`` of the admin tools, as Kafka's: a client properties file saying how to reach a secured
listener.

* ``security.protocol``: PLAINTEXT (default), SSL, SASL_PLAINTEXT or SASL_SSL;
* TLS: ``ssl.truststore.location`` / ``ssl.truststore.certificates`` (PEM), ``ssl.keystore.*`` for mutual TLS,
  ``ssl.endpoint.identification.algorithm``;
* SASL: ``sasl.mechanism`` (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; Kafka's default GSSAPI is refused) and
  ``sasl.jaas.config`` with ``username`` and ``password``.

``ConfigError`` names the key and the value.
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


def client_security(path: str | None):
    """(TLS context or None, SaslLogin or None) from a ``--command-config`` file (None: plaintext)."""
    if path is None:
        return None, None
    try:
        props = load_properties(path)
    except OSError as exc:
        raise ConfigError("--command-config", path, f"cannot read the file: {exc.strerror or exc}") from None
    return security_from(props)


def security_from(props: dict):
    """(TLS context or None, SaslLogin or None) from client properties (a ``--command-config`` file's, or the
    ``kafka.*`` options of the Spark source with the prefix taken off); ``ConfigError`` names the key."""
    protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise ConfigError("security.protocol", protocol, f"one of {', '.join(PROTOCOLS)}")
    tls = client_context(ssl_settings(props, "client")) if protocol in ("SSL", "SASL_SSL") else None
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
    return tls, login
