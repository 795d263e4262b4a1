"""The SASL settings of one listener, from Kafka's keys.

* ``sasl.enabled.mechanisms`` (or ``listener.name.<l>.sasl.enabled.mechanisms``): Kafka's default is GSSAPI, which
  kraftwire does not implement, so a SASL listener names its mechanisms; PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 are
  served (SCRAM credentials are UserScramCredentialRecords: ``storage format --add-scram``).
* ``listener.name.<l>.<mechanism>.sasl.jaas.config``: the login module and its options; for PLAIN the
  ``user_<name>="<password>"`` options are the accounts.
* ``connections.max.reauth.ms`` (KIP-368; a long, default 0 = off): the SASL session lifetime of each mechanism,
  as Kafka's SaslChannelBuilder resolves it — ``listener.name.<l>.<mechanism>.connections.max.reauth.ms`` first, then
  ``listener.name.<l>.connections.max.reauth.ms``, then the plain key (listener and mechanism in lower case). A value
  of 0 or less means no session limit.

``ConfigError`` names the key and the value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kraftwire.config import default
from kraftwire.errors import ConfigError
from kraftwire.security.sasl import plain, scram
from kraftwire.security.sasl.client import SaslLogin
from kraftwire.security.sasl.jaas import JaasError, parse_jaas_config
from kraftwire.security.tls import listener_value

SUPPORTED = (plain.MECHANISM, *scram.MECHANISMS)
REAUTH_KEY = "connections.max.reauth.ms"
PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


@dataclass(frozen=True)
class SaslSettings:
    listener: str
    mechanisms: tuple[str, ...]
    plain_users: dict[str, str] = field(default_factory=dict, repr=False)  # never printed: passwords
    #: mechanism -> ``connections.max.reauth.ms`` (ms; <= 0: sessions never expire)
    max_reauth_ms: dict[str, int] = field(default_factory=dict)

    def used_keys(self) -> set[str]:
        prefix = f"listener.name.{self.listener.lower()}."
        return ({f"{prefix}{m.lower()}.sasl.jaas.config" for m in self.mechanisms}
                | {f"{prefix}{m.lower()}.{REAUTH_KEY}" for m in self.mechanisms} | {prefix + REAUTH_KEY})


def reauth_ms(props: dict[str, str], listener: str, mechanism: str) -> int:
    """``connections.max.reauth.ms`` of ``mechanism`` on ``listener``: the listener-and-mechanism key, else the
    listener key, else the plain key, else Kafka's default (0)."""
    prefix = f"listener.name.{listener.lower()}."
    for key in (f"{prefix}{mechanism.lower()}.{REAUTH_KEY}", prefix + REAUTH_KEY, REAUTH_KEY):
        raw = props.get(key)
        if raw is not None:
            try:
                value = int(raw.strip())
            except ValueError:
                raise ConfigError(key, raw, "expected an integer number of milliseconds (0: no re-authentication)") \
                    from None
            if not -2**63 <= value < 2**63:
                raise ConfigError(key, raw, "must fit in a long")
            return value
    return default(REAUTH_KEY)


def _jaas(jaas_key: str, text: str, login_module: str | None = None, what: str = ""):
    """Parse a JAAS entry of Kafka's properties; ``ConfigError`` names the key, never the text (it holds
    passwords), and refuses another login module than ``login_module`` when one is given (``what`` names it)."""
    try:
        module = parse_jaas_config(text)
    except JaasError as exc:
        raise ConfigError(jaas_key, "(hidden: it holds passwords)", str(exc)) from None
    if login_module is not None and module.class_name != login_module:
        raise ConfigError(jaas_key, module.class_name, f"the {what} login module is {login_module}")
    return module


def sasl_settings(props: dict[str, str], listener: str) -> SaslSettings:
    key, raw = listener_value(props, listener, "sasl.enabled.mechanisms")
    mechanisms = tuple(m.strip().upper() for m in (raw if raw is not None else "GSSAPI").split(",") if m.strip())
    if not mechanisms:
        raise ConfigError(key, raw, f"the SASL listener {listener} needs at least one mechanism, e.g. PLAIN")
    for mech in mechanisms:
        if mech not in SUPPORTED:
            shown = raw if raw is not None else "GSSAPI (Kafka's default)"
            raise ConfigError(key, shown, f"kraftwire serves SASL {', '.join(SUPPORTED)}; {mech} is not supported "
                                          f"(set {key}=PLAIN)")
    users: dict[str, str] = {}
    if plain.MECHANISM in mechanisms:
        jaas_key = f"listener.name.{listener.lower()}.plain.sasl.jaas.config"
        text = props.get(jaas_key)
        if text is None:
            raise ConfigError(jaas_key, "(missing)", f"PLAIN on listener {listener} needs its accounts: {jaas_key}="
                                                    f'{PLAIN_MODULE} required user_<name>="<password>";')
        module = _jaas(jaas_key, text, PLAIN_MODULE, "PLAIN")
        users = plain.users_from_options(module.options)
        if not users:
            raise ConfigError(jaas_key, "(hidden: it holds passwords)", 'no account: list them as user_<name>="<password>"')
    for mech in mechanisms:
        if mech in scram.MECHANISMS:  # the accounts are credentials in the metadata log; the entry is optional
            jaas_key = f"listener.name.{listener.lower()}.{mech.lower()}.sasl.jaas.config"
            text = props.get(jaas_key)
            if text is not None:
                _jaas(jaas_key, text, SCRAM_MODULE, "SCRAM")
    return SaslSettings(listener, mechanisms, users, {m: reauth_ms(props, listener, m) for m in mechanisms})


def controller_login(props: dict[str, str], listener: str) -> "SaslLogin":
    """How this node logs in to the SASL controller listener: ``sasl.mechanism.controller.protocol`` (PLAIN; Kafka's
    default GSSAPI is not supported) with ``username``/``password`` from that listener's PLAIN JAAS entry.

    SCRAM is refused here: its credentials are records of the metadata log, which the controllers replicate among
    themselves, so they cannot be what lets a controller reach the others. Kafka 4.4 accepts the setting without a
    word; a lone controller then works (its image holds the bootstrap credentials before anyone dials it), but
    several never elect a leader — every Vote fails with "Authentication failed during authentication due to invalid
    credentials with SASL mechanism SCRAM-SHA-512", logged at ERROR for ever. kraftwire says so at start instead."""
    key = "sasl.mechanism.controller.protocol"
    mechanism = props.get(key, "GSSAPI").strip().upper()
    if mechanism != plain.MECHANISM:
        why = ("SCRAM credentials live in the metadata log, so controllers cannot check each other's logins before "
               "they have elected a leader" if mechanism in scram.MECHANISMS else f"{mechanism} is not supported")
        raise ConfigError(key, props.get(key, "GSSAPI (Kafka's default)"),
                          f"the nodes log in to the controller listener {listener} with PLAIN ({why}): set {key}=PLAIN "
                          "or secure the controller listener with mutual TLS")
    return _login(props, listener, mechanism, "the controller listener")


def inter_broker_login(props: dict[str, str], listener: str) -> "SaslLogin":
    """How a broker logs in to the other brokers' SASL inter-broker listener (its replica fetchers, the transaction
    coordinator's and verifier's links): ``sasl.mechanism.inter.broker.protocol`` (PLAIN, SCRAM-SHA-256 or
    SCRAM-SHA-512), which must be one of that listener's ``sasl.enabled.mechanisms`` as Kafka requires, with
    ``username``/``password`` from that listener's JAAS entry for the mechanism
    (``listener.name.<l>.<mechanism>.sasl.jaas.config``), as Kafka's broker takes its own client login from it.

    A SCRAM login is checked against the credentials of the other broker's metadata image (``storage format
    --add-scram`` puts them in the log), so it is refused until that image holds them: the links try again after
    their backoff, as Kafka's do."""
    key = "sasl.mechanism.inter.broker.protocol"
    mechanism = props.get(key, "GSSAPI").strip().upper()
    if mechanism not in SUPPORTED:
        raise ConfigError(key, props.get(key, "GSSAPI (Kafka's default)"),
                          f"the brokers log in to each other with {', '.join(SUPPORTED)}: set {key}=PLAIN or "
                          f"{key}=SCRAM-SHA-512")
    enabled_key, enabled = listener_value(props, listener, "sasl.enabled.mechanisms")
    if mechanism not in {m.strip().upper() for m in (enabled or "GSSAPI").split(",")}:
        raise ConfigError(key, props[key].strip(),
                          f"{key} must be included in sasl.enabled.mechanisms when SASL is used for inter-broker "
                          f"communication ({enabled_key}={enabled if enabled is not None else 'GSSAPI (default)'})")
    return _login(props, listener, mechanism, "the inter-broker listener")


def login_jaas_key(listener: str, mechanism: str) -> str:
    """The key a node's own login to ``listener`` with ``mechanism`` is read from."""
    return f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"


def _login(props: dict[str, str], listener: str, mechanism: str, what: str) -> "SaslLogin":
    """``username``/``password`` of the JAAS entry ``listener.name.<l>.<mechanism>.sasl.jaas.config``. Kafka's
    server side reads no other key: an unprefixed ``sasl.jaas.config`` (or ``listener.name.<l>.sasl.jaas.config``)
    is ignored with a warning ("should be prefixed with SASL mechanism name") and the JAAS file is read instead,
    which kraftwire does not; such a key is refused here with the one to use."""
    module_class = SCRAM_MODULE if mechanism in scram.MECHANISMS else PLAIN_MODULE
    jaas_key = login_jaas_key(listener, mechanism)
    text = props.get(jaas_key)
    if text is None:
        for stray in (f"listener.name.{listener.lower()}.sasl.jaas.config", "sasl.jaas.config"):
            if stray in props:
                raise ConfigError(stray, "(hidden: it holds passwords)",
                                  f"a node's login to {what} is read from {jaas_key}, the entry of its mechanism; "
                                  f"Kafka ignores {stray} on a server (it should be prefixed with SASL mechanism name)")
        raise ConfigError(jaas_key, "(missing)", f'the login of this node: {module_class} required '
                                                 f'username="<name>" password="<password>";')
    module = _jaas(jaas_key, text, module_class if mechanism in scram.MECHANISMS else None, mechanism)
    user, password = module.options.get("username"), module.options.get("password")
    if not user or not password:
        raise ConfigError(jaas_key, "(hidden: it holds passwords)",
                          f"username=... and password=... say how this node logs in to {what}")
    return SaslLogin(mechanism, user, password)
