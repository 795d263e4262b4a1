"""TLS for listeners and outbound connections, configured with Kafka's ``ssl.*`` keys.

Keys are read per listener: ``listener.name.<listener lowercased>.ssl.X`` wins over ``ssl.X`` (Kafka's rule).
Keystores and truststores are PEM, as Kafka takes them with ``ssl.keystore.type=PEM`` / ``ssl.truststore.type=PEM``:

* keystore: ``ssl.keystore.location`` (one PEM file holding the private key and the certificate chain), or inline
  ``ssl.keystore.key`` (PKCS#8 PEM, encrypted if ``ssl.key.password`` is set) with ``ssl.keystore.certificate.chain``;
* truststore: ``ssl.truststore.location`` (PEM certificates) or inline ``ssl.truststore.certificates``.

JKS and PKCS12 stores are Java formats the standard library cannot read: such a type is a configuration error that
says how to convert. Other keys: ``ssl.client.auth`` (none, requested, required), ``ssl.enabled.protocols`` (TLSv1.2,
TLSv1.3), ``ssl.cipher.suites`` (IANA names as Kafka takes them, for TLS 1.2; OpenSSL picks among TLS 1.3's own),
``ssl.endpoint.identification.algorithm`` (``https``: outbound connections check the peer's host name; empty: they
do not). Every error names the key and the value.
"""

from __future__ import annotations

import os
import re
import ssl
import tempfile
from dataclasses import dataclass

from kraftwire.errors import ConfigError
from kraftwire.security.principal import parse_rules

CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
DEFAULT_ENABLED_PROTOCOLS = ("TLSv1.2", "TLSv1.3")

#: the keys this module reads (without a listener prefix)
KEYS = ("ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.key",
        "ssl.keystore.certificate.chain", "ssl.key.password", "ssl.truststore.type", "ssl.truststore.location",
        "ssl.truststore.password", "ssl.truststore.certificates", "ssl.client.auth", "ssl.enabled.protocols",
        "ssl.protocol", "ssl.cipher.suites", "ssl.endpoint.identification.algorithm", "ssl.principal.mapping.rules")


@dataclass(frozen=True, slots=True)
class SslSettings:
    """One listener's TLS settings, validated. ``*_pem`` hold inline PEM text; ``*_location`` a file path."""

    listener: str
    keystore_location: str | None = None
    keystore_key_pem: str | None = None
    keystore_chain_pem: str | None = None
    key_password: str | None = None
    truststore_location: str | None = None
    truststore_pem: str | None = None
    client_auth: str = "none"
    enabled_protocols: tuple[str, ...] = DEFAULT_ENABLED_PROTOCOLS
    cipher_suites: tuple[str, ...] = ()
    endpoint_identification: str = "https"
    principal_mapping_rules: str = "DEFAULT"

    @property
    def has_keystore(self) -> bool:
        return self.keystore_location is not None or self.keystore_key_pem is not None


def listener_value(props: dict[str, str], listener: str, key: str) -> tuple[str, str | None]:
    """(the key actually set, its value): ``listener.name.<l>.<key>`` first, then ``<key>``."""
    prefixed = f"listener.name.{listener.lower()}.{key}"
    if prefixed in props:
        return prefixed, props[prefixed]
    return key, props.get(key)


def ssl_settings(props: dict[str, str], listener: str) -> SslSettings:
    """The TLS settings of ``listener`` from Kafka properties; ``ConfigError`` names the offending key and value."""

    def get(key: str) -> tuple[str, str | None]:
        name, value = listener_value(props, listener, key)
        return name, (value.strip() if value is not None else None)

    for kind in ("keystore", "truststore"):
        name, value = get(f"ssl.{kind}.type")
        if value is not None and value.upper() != "PEM":
            raise ConfigError(name, value, f"kraftwire reads PEM {kind}s only: set {name}=PEM and convert the store "
                              "(e.g. keytool -importkeystore to PKCS12, then openssl pkcs12 -nodes)")
        name, value = get(f"ssl.{kind}.password")
        if value:
            raise ConfigError(name, "(hidden)", f"a PEM {kind} takes no password (for an encrypted key use "
                              "ssl.key.password)")

    loc_key, location = get("ssl.keystore.location")
    key_key, key_pem = get("ssl.keystore.key")
    chain_key, chain_pem = get("ssl.keystore.certificate.chain")
    _, key_password = get("ssl.key.password")
    if location and (key_pem or chain_pem):
        raise ConfigError(loc_key, location, f"give the keystore either as a file or inline ({key_key} and "
                          f"{chain_key}), not both")
    if bool(key_pem) != bool(chain_pem):
        missing = chain_key if key_pem else key_key
        raise ConfigError(missing, "(missing)", f"an inline PEM keystore needs both {key_key} and {chain_key}")
    if location and not os.path.isfile(location):
        raise ConfigError(loc_key, location, "no such file")

    trust_key, truststore = get("ssl.truststore.location")
    certs_key, trust_pem = get("ssl.truststore.certificates")
    if truststore and trust_pem:
        raise ConfigError(trust_key, truststore, f"give the truststore either as a file or inline ({certs_key}), "
                          "not both")
    if truststore and not os.path.isfile(truststore):
        raise ConfigError(trust_key, truststore, "no such file")

    auth_key, auth = get("ssl.client.auth")
    auth = (auth or "none").lower()
    if auth not in CLIENT_AUTH:
        raise ConfigError(auth_key, auth, "expected none, requested or required")

    proto_key, protocols_text = get("ssl.enabled.protocols")
    protocols = tuple(p.strip() for p in (protocols_text or ",".join(DEFAULT_ENABLED_PROTOCOLS)).split(",")
                      if p.strip())
    for p in protocols:
        if p not in PROTOCOLS:
            raise ConfigError(proto_key, protocols_text, f"{p} is not supported (TLSv1.2, TLSv1.3)")
    if not protocols:
        raise ConfigError(proto_key, protocols_text, "at least one of TLSv1.2, TLSv1.3")

    suites_key, suites_text = get("ssl.cipher.suites")
    suites = tuple(s.strip() for s in (suites_text or "").split(",") if s.strip())
    for s in suites:
        if openssl_cipher_name(s) is None:
            raise ConfigError(suites_key, suites_text, f"unknown cipher suite {s} (IANA names, e.g. "
                              "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384)")

    algo_key, algo = get("ssl.endpoint.identification.algorithm")
    algo = "https" if algo is None else algo
    if algo not in ("https", ""):
        raise ConfigError(algo_key, algo, "expected https or empty (no host name check)")

    rules_key, rules = get("ssl.principal.mapping.rules")
    rules = rules or "DEFAULT"
    try:
        parse_rules(rules)
    except ValueError as exc:
        raise ConfigError(rules_key, rules, str(exc)) from None

    return SslSettings(listener=listener, keystore_location=location or None, keystore_key_pem=key_pem or None,
                       keystore_chain_pem=chain_pem or None, key_password=key_password or None,
                       truststore_location=truststore or None, truststore_pem=trust_pem or None, client_auth=auth,
                       enabled_protocols=protocols, cipher_suites=suites, endpoint_identification=algo,
                       principal_mapping_rules=rules)


def used_keys(props: dict[str, str], listener: str) -> set[str]:
    """The property keys ``ssl_settings`` read for ``listener`` (so they are not reported as ignored)."""
    return {name for name in (listener_value(props, listener, k)[0] for k in KEYS) if name in props}


# ------------------------------------------------------------------------------------------------ contexts
def server_context(settings: SslSettings) -> ssl.SSLContext:
    """The context a TLS listener serves with. A listener needs a keystore; ``ssl.client.auth`` other than none
    needs a truststore to verify client certificates with."""
    if not settings.has_keystore:
        raise ConfigError(f"listener.name.{settings.listener.lower()}.ssl.keystore.location", "(missing)",
                          f"the TLS listener {settings.listener} needs a keystore (ssl.keystore.location or "
                          "ssl.keystore.key + ssl.keystore.certificate.chain)")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _common(ctx, settings)
    _load_keystore(ctx, settings)
    ctx.verify_mode = CLIENT_AUTH[settings.client_auth]
    if ctx.verify_mode != ssl.CERT_NONE:
        if not (settings.truststore_location or settings.truststore_pem):
            raise ConfigError("ssl.client.auth", settings.client_auth,
                              f"listener {settings.listener} verifies client certificates but has no truststore "
                              "(ssl.truststore.location or ssl.truststore.certificates)")
        _load_truststore(ctx, settings)
    return ctx


def client_context(settings: SslSettings) -> ssl.SSLContext:
    """The context of an outbound connection to a TLS listener: the peer is verified against the truststore (the
    system's when none is set) and, with ``ssl.endpoint.identification.algorithm=https``, its host name; the
    keystore, when set, is the certificate presented for mutual TLS."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _common(ctx, settings)
    ctx.check_hostname = settings.endpoint_identification == "https"
    ctx.verify_mode = ssl.CERT_REQUIRED
    if settings.truststore_location or settings.truststore_pem:
        _load_truststore(ctx, settings)
    else:
        ctx.load_default_certs()
    if settings.has_keystore:
        _load_keystore(ctx, settings)
    return ctx


def _common(ctx: ssl.SSLContext, settings: SslSettings) -> None:
    versions = sorted(PROTOCOLS[p] for p in settings.enabled_protocols)
    ctx.minimum_version, ctx.maximum_version = versions[0], versions[-1]
    if settings.cipher_suites:
        tls12 = [openssl_cipher_name(s) for s in settings.cipher_suites]
        tls12 = [n for n in tls12 if n and not n.startswith("TLS_")]
        if tls12:
            try:
                ctx.set_ciphers(":".join(tls12))
            except ssl.SSLError:
                raise ConfigError("ssl.cipher.suites", ",".join(settings.cipher_suites),
                                  "none of these suites is available in this OpenSSL") from None
        elif ssl.TLSVersion.TLSv1_2 in (ctx.minimum_version, ctx.maximum_version):
            ctx.minimum_version = ssl.TLSVersion.TLSv1_3  # only TLS 1.3 suites were named


def _load_keystore(ctx: ssl.SSLContext, settings: SslSettings) -> None:
    key = "ssl.keystore.location" if settings.keystore_location else "ssl.keystore.key"
    # Never OpenSSL's terminal prompt: an encrypted key without ssl.key.password fails to load.
    password = settings.key_password or (lambda: b"")
    try:
        if settings.keystore_location:
            ctx.load_cert_chain(settings.keystore_location, password=password)
        else:
            # The standard library loads keys from files only: a private temporary file, removed at once.
            with _private_file(settings.keystore_key_pem + "\n" + settings.keystore_chain_pem) as path:
                ctx.load_cert_chain(path, password=password)
    except (ssl.SSLError, OSError) as exc:
        raise ConfigError(key, settings.keystore_location or "(inline PEM)",
                          f"cannot load the key and certificate chain: {getattr(exc, 'reason', None) or exc}"
                          + ("" if settings.key_password else " (an encrypted key also needs ssl.key.password)")) from None


def _load_truststore(ctx: ssl.SSLContext, settings: SslSettings) -> None:
    try:
        if settings.truststore_location:
            ctx.load_verify_locations(cafile=settings.truststore_location)
        else:
            ctx.load_verify_locations(cadata=settings.truststore_pem)
    except (ssl.SSLError, ValueError) as exc:
        raise ConfigError("ssl.truststore.location" if settings.truststore_location else "ssl.truststore.certificates",
                          settings.truststore_location or "(inline PEM)",
                          f"cannot load the trusted certificates: {getattr(exc, 'reason', None) or exc}") from None


class _private_file:
    def __init__(self, text: str) -> None:
        self.text = text
        self.path = ""

    def __enter__(self) -> str:
        fd, self.path = tempfile.mkstemp(prefix="kraftwire-tls-", suffix=".pem")  # mode 0600
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(self.text)
        return self.path

    def __exit__(self, *exc) -> None:
        os.unlink(self.path)


# ------------------------------------------------------------------------------------------------ cipher names
_TLS13 = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
          "TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256"}
_IANA = re.compile(r"^TLS_(?:(?P<kx>ECDHE_ECDSA|ECDHE_RSA|DHE_RSA|RSA)_WITH_)"
                   r"(?P<cipher>AES_128_GCM|AES_256_GCM|CHACHA20_POLY1305|AES_128_CBC|AES_256_CBC)_(?P<mac>SHA256|SHA384|SHA)$")
_KX = {"ECDHE_ECDSA": "ECDHE-ECDSA-", "ECDHE_RSA": "ECDHE-RSA-", "DHE_RSA": "DHE-RSA-", "RSA": ""}
_CIPHER = {"AES_128_GCM": "AES128-GCM", "AES_256_GCM": "AES256-GCM", "CHACHA20_POLY1305": "CHACHA20-POLY1305",
           "AES_128_CBC": "AES128", "AES_256_CBC": "AES256"}


def openssl_cipher_name(iana: str) -> str | None:
    """OpenSSL's name of an IANA (Java) cipher suite name; TLS 1.3 suites keep theirs; None when unknown."""
    if iana in _TLS13:
        return iana
    m = _IANA.match(iana)
    if m is None:
        return None
    kx, cipher, mac = m.group("kx"), m.group("cipher"), m.group("mac")
    if cipher == "CHACHA20_POLY1305":
        return None if kx == "RSA" else f"{_KX[kx]}{_CIPHER[cipher]}"
    return f"{_KX[kx]}{_CIPHER[cipher]}-{mac}"
