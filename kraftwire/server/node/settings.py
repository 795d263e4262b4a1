"""What a node needs from its properties file, checked once at start-up: ``NodeSettings.from_properties``.

``kraftwire.config.Config`` parses Kafka's keys with their defaults; this module adds the node's own rules:

* listeners (``NAME://host:port``, empty host = every interface) resolved through
  ``listener.security.protocol.map`` (PLAINTEXT and SSL are served, SSL with the ``ssl.*`` keys of
  ``kraftwire.security.tls``, per listener through ``listener.name.<l>.``); the controller listener is the first of
  ``controller.listener.names`` (Kafka maps controller listener names missing from the map to PLAINTEXT);
* ``controller.quorum.voters`` (``id@host:port``), ``process.roles`` (none means controller, as the seed files);
* the old raft README's keys are refused with their replacements named; Kafka keys kraftwire does not use are
  reported once as ignored; other unknown keys are warned about;
* kraftwire's own keys: ``kraftwire.metrics.port`` (Prometheus endpoint, off unless set),
  ``kraftwire.metadata.log.topic``, ``kraftwire.quorum.high.watermark.linger.ms`` (how long the leader holds a
  follower's Fetch whose only news is a new high watermark, so that the next data carries it; 0 answers at once, as
  Kafka does). Their old names in Kafka's namespaces (``metrics.port``, ``controller.quorum.high.watermark...``)
  still work, with a warning (``kraftwire.config.RENAMED_KEYS``).

Every refusal raises ``ConfigError(key, value, reason)``.
"""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass, field

from kraftwire import kafka_configs
from kraftwire.config import RENAMED_KEYS, Config, default, parse_properties
from kraftwire.errors import ConfigError
from kraftwire.ids import Endpoint
from kraftwire.raft.config import RaftConfig
from kraftwire.security.sasl.client import SaslLogin
from kraftwire.security.sasl.settings import (SaslSettings, controller_login, inter_broker_login, login_jaas_key,
                                              sasl_settings)
from kraftwire.security.principal import parse_rules
from kraftwire.security.tls import (SslSettings, client_context, listener_value, server_context, ssl_settings,
                                    used_keys)

#: Keys of the old raft README / ZooKeeper era, with what replaces them.
RETIRED_KEYS = {
    "broker.id": "node.id",
    "quorum.bootstrap.servers": "controller.quorum.bootstrap.servers (or controller.quorum.voters)",
    "quorum.bootstrap.voters": "controller.quorum.voters (id@host:port,...)",
    "verbose": "nothing: kraftwire logs state transitions at INFO; use --log-level DEBUG for more",
    "zookeeper.connect": "nothing: KRaft has no ZooKeeper; set process.roles, controller.quorum.voters and "
                         "controller.listener.names",
}

#: Kafka keys that are not in the broker table but that a server.properties may carry (per-listener and
#: per-mechanism forms, client-side keys some operators leave in); reported as not used unless a reader takes them
_KAFKA_PREFIXES = ("ssl.", "sasl.", "listener.name.", "log.cleaner.", "offsets.", "transaction.", "group.",
                   "replica.", "quota.", "metric.reporters", "metrics.num.samples", "metrics.recording.level",
                   "metrics.sample.window.ms", "confluent.", "kafka.metrics.", "share.", "remote.log.")

#: Kafka keys whose bounds kraftwire's Config checks itself: metadata.log.segment.bytes may go below Kafka's 8 MiB
#: down to metadata.log.segment.min.bytes (Kafka 3.x's internal key, which tests and small clusters use)
_OWN_BOUNDS = frozenset({"metadata.log.segment.bytes"})

SUPPORTED_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
#: what a node can dial (quorum peers, a broker's controller link); SASL with PLAIN
DIALED_PROTOCOLS = SUPPORTED_PROTOCOLS
TLS_PROTOCOLS = ("SSL", "SASL_SSL")
_DEFAULT_PROTOCOL_MAP = {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT",
                         "SASL_SSL": "SASL_SSL"}


@dataclass(frozen=True, slots=True)
class Voter:
    node_id: int
    host: str
    port: int


@dataclass(frozen=True)
class NodeSettings:
    config: Config
    node_id: int
    roles: tuple[str, ...]
    listeners: tuple[Endpoint, ...]  # bind addresses (host "" = all interfaces)
    advertised: tuple[Endpoint, ...]
    controller_listener: str
    voters: tuple[Voter, ...]
    metrics_port: int = default("kraftwire.metrics.port")
    metrics_host: str = default("kraftwire.metrics.host")
    max_frame_bytes: int = default("socket.request.max.bytes")
    ignored_keys: tuple[str, ...] = ()
    unknown_keys: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    controller_listener_names: tuple[str, ...] = ()
    broker_heartbeat_interval_ms: int = default("broker.heartbeat.interval.ms")
    broker_session_timeout_ms: int = default("broker.session.timeout.ms")
    #: ``controller.quorum.bootstrap.servers`` as (host, port); a broker without ``voters`` learns them from these
    bootstrap_servers: tuple[tuple[str, int], ...] = ()
    high_watermark_linger_ms: int = default("kraftwire.quorum.high.watermark.linger.ms")
    #: security protocol of every listener this node serves or dials (its own and the controller listener)
    listener_protocols: tuple[tuple[str, str], ...] = ()
    #: TLS settings of the SSL and SASL_SSL listeners among them
    ssl_listeners: tuple[tuple[str, SslSettings], ...] = ()
    #: SASL settings of the SASL_PLAINTEXT and SASL_SSL listeners
    sasl_listeners: tuple[tuple[str, SaslSettings], ...] = ()
    #: how this node logs in to a SASL controller listener (None: it is PLAINTEXT or SSL)
    controller_sasl: SaslLogin | None = None
    #: the listener brokers replicate over (a broker's replica fetchers dial it on the leader); None on a controller
    inter_broker_listener: str | None = None
    #: how this broker logs in to a SASL inter-broker listener
    inter_broker_sasl: SaslLogin | None = None

    # ------------------------------------------------------------------------------------------------ building
    @classmethod
    def from_file(cls, path: str) -> "NodeSettings":
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise ConfigError("--config", path, f"cannot read the file: {exc.strerror or exc}") from None
        return cls.from_properties(parse_properties(text))

    @classmethod
    def from_properties(cls, props: dict[str, str]) -> "NodeSettings":
        for key, replacement in RETIRED_KEYS.items():
            if key in props:
                raise ConfigError(key, props[key], f"this key is no longer read; use {replacement}")
        for key, value in props.items():  # every Kafka key is checked as Kafka checks it at start-up
            fact = kafka_configs.BROKER.get(key)
            if fact is not None and key not in _OWN_BOUNDS:
                why = kafka_configs.check(fact, value)
                if why:
                    raise ConfigError(key, value, why.split(": ", 1)[-1])
        config = Config.from_properties(props).validate()
        ignored, unknown, unsupported = [], [], []
        for key in config.unknown:
            fact = kafka_configs.BROKER.get(key)
            if fact is None:
                (ignored if key.startswith(_KAFKA_PREFIXES) else unknown).append(key)
            elif fact.kraftwire == kafka_configs.MEANINGLESS:
                ignored.append(key)
            elif fact.kraftwire == kafka_configs.UNSUPPORTED and props[key].strip() != (fact.default or ""):
                unsupported.append(key)
            # honoured keys are read where they act: topic defaults through their synonyms (kafka_configs),
            # listener security by kraftwire.security
        warnings: list[str] = [f"{old} is deprecated: it is kraftwire's own key, now {RENAMED_KEYS[old]}"
                               for old in config.deprecated]
        warnings += [f"{key}={props[key]} has no effect: kraftwire does not implement this Kafka setting "
                     f"(Kafka's default is {kafka_configs.BROKER[key].default})" for key in unsupported]
        roles = config.process_roles or ("controller",)
        for role in roles:
            if role not in ("controller", "broker"):
                raise ConfigError("process.roles", ",".join(config.process_roles), f"unknown role {role!r}")
        if len(set(roles)) != len(roles):
            raise ConfigError("process.roles", ",".join(roles), "a role appears twice")
        if config.node_id < 0:
            raise ConfigError("node.id", props.get("node.id", "(missing)"), "a node id >= 0 is required")
        protocol_map = _parse_protocol_map(config.listener_security_protocol_map)
        listeners = tuple(_parse_listener("listeners", item) for item in config.listeners)
        if not listeners:
            raise ConfigError("listeners", props.get("listeners", ""), "at least one listener NAME://host:port is required")
        names = [e.name for e in listeners]
        if len(set(names)) != len(names):
            raise ConfigError("listeners", ",".join(config.listeners), "listener names must be unique")
        if not config.controller_listener_names:
            raise ConfigError("controller.listener.names", props.get("controller.listener.names", "(missing)"),
                              "name the listener the quorum uses, e.g. controller.listener.names=" + names[0])
        controller_listener = config.controller_listener_names[0]
        broker_only = "controller" not in roles
        if broker_only and set(config.controller_listener_names) & set(names):
            raise ConfigError("process.roles", ",".join(roles),
                              "a broker-only node must not list a controller listener (controller.listener.names) "
                              "in 'listeners'; it reaches the quorum through controller.quorum.voters")
        if not broker_only and controller_listener not in names:
            raise ConfigError("controller.listener.names", ",".join(config.controller_listener_names),
                              f"{controller_listener} is not one of the listeners ({', '.join(names)})")
        protocols: dict[str, str] = {}
        for ep in listeners:
            protocol = protocol_map.get(ep.name)
            if protocol is None:
                if ep.name in config.controller_listener_names and not config.listener_security_protocol_map:
                    protocol = "PLAINTEXT"
                else:
                    raise ConfigError("listener.security.protocol.map", ",".join(config.listener_security_protocol_map),
                                      f"no security protocol for listener {ep.name}")
            if protocol not in SUPPORTED_PROTOCOLS:
                raise ConfigError("listener.security.protocol.map", f"{ep.name}:{protocol}",
                                  f"not a security protocol ({', '.join(SUPPORTED_PROTOCOLS)})")
            protocols[ep.name] = protocol
        if controller_listener not in protocols:  # a broker-only node dials the controller listener
            protocol = protocol_map.get(controller_listener, "PLAINTEXT" if not config.listener_security_protocol_map
                                        else None)
            if protocol is None:
                raise ConfigError("listener.security.protocol.map", ",".join(config.listener_security_protocol_map),
                                  f"no security protocol for the controller listener {controller_listener}")
            if protocol not in DIALED_PROTOCOLS:
                raise ConfigError("listener.security.protocol.map", f"{controller_listener}:{protocol}",
                                  "kraftwire dials PLAINTEXT and SSL listeners (SASL is not supported yet)")
            protocols[controller_listener] = protocol
        ssl_listeners = {name: ssl_settings(props, name) for name, p in protocols.items() if p in TLS_PROTOCOLS}
        served = {ep.name for ep in listeners}
        sasl_listeners = {name: sasl_settings(props, name) for name, p in protocols.items()
                          if p.startswith("SASL_") and name in served}
        controller_sasl = (controller_login(props, controller_listener)
                           if protocols[controller_listener].startswith("SASL_") else None)
        if controller_sasl is not None:
            for key in ("sasl.mechanism.controller.protocol",
                        login_jaas_key(controller_listener, controller_sasl.mechanism)):
                if key in ignored:
                    ignored.remove(key)
        inter_broker, inter_broker_sasl = _inter_broker(props, roles, listeners, config, protocols, warnings)
        if inter_broker is not None:
            used = ["inter.broker.listener.name", "security.inter.broker.protocol"]
            if inter_broker_sasl is not None:
                used += ["sasl.mechanism.inter.broker.protocol",
                         login_jaas_key(inter_broker, inter_broker_sasl.mechanism)]
            for key in used:
                if key in ignored:
                    ignored.remove(key)
        for ep in listeners:
            tls = ssl_listeners.get(ep.name)
            if tls is not None and not tls.has_keystore:
                raise ConfigError(listener_value(props, ep.name, "ssl.keystore.location")[0], "(missing)",
                                  f"the SSL listener {ep.name} needs a keystore: ssl.keystore.type=PEM with "
                                  "ssl.keystore.location, or ssl.keystore.key and ssl.keystore.certificate.chain")
        for name in ssl_listeners:
            for key in used_keys(props, name):
                if key in ignored:
                    ignored.remove(key)
        for name, sasl in sasl_listeners.items():
            for key in sasl.used_keys() | {"sasl.enabled.mechanisms", f"listener.name.{name.lower()}.sasl.enabled.mechanisms"}:
                if key in ignored:
                    ignored.remove(key)
        advertised = tuple(_parse_listener("advertised.listeners", item) for item in config.advertised_listeners)
        by_name = {e.name: e for e in advertised}
        advertised = tuple(by_name.get(ep.name) or Endpoint(ep.name, ep.host or "localhost", ep.port)
                           for ep in listeners)
        voters = tuple(_parse_voter(item) for item in config.controller_quorum_voters)
        bootstrap = tuple(_parse_bootstrap(item) for item in config.controller_quorum_bootstrap_servers)
        if not voters:
            # a controller given only controller.quorum.bootstrap.servers takes its voters from the voter set that
            # storage format --standalone/--initial-controllers wrote into the metadata log (KIP-853), else asks
            # the bootstrap servers as a broker does (a controller to be added later: an observer meanwhile)
            if not bootstrap:
                raise ConfigError("controller.quorum.voters", props.get("controller.quorum.voters", "(missing)"),
                                  "list the voters as id@host:port,... (a broker may instead name "
                                  "controller.quorum.bootstrap.servers=host:port,...)")
        ids = [v.node_id for v in voters]
        if len(set(ids)) != len(ids):
            raise ConfigError("controller.quorum.voters", ",".join(config.controller_quorum_voters),
                              "a voter id appears twice")
        if broker_only and config.node_id in ids:
            raise ConfigError("process.roles", ",".join(roles), f"node.id {config.node_id} is in "
                              "controller.quorum.voters; a broker-only node must not be (it fetches the log as an "
                              "observer)")
        if voters and config.node_id not in ids and not broker_only:
            warnings.append(f"node.id {config.node_id} is not in controller.quorum.voters: this node is an observer")
        heartbeat_ms, session_ms = config.broker_heartbeat_interval_ms, config.broker_session_timeout_ms
        if heartbeat_ms <= 0 or session_ms <= heartbeat_ms:
            raise ConfigError("broker.session.timeout.ms", props.get("broker.session.timeout.ms", session_ms),
                              f"must be greater than broker.heartbeat.interval.ms ({heartbeat_ms}), both > 0")
        metrics_port = config.metrics_port
        if not 0 <= metrics_port <= 65535:
            raise ConfigError("kraftwire.metrics.port", props.get("kraftwire.metrics.port", metrics_port), "must be a port number (0 = off)")
        hw_linger = config.kraftwire_quorum_high_watermark_linger_ms
        if not 0 <= hw_linger <= 60_000:
            raise ConfigError("kraftwire.quorum.high.watermark.linger.ms",
                              props.get("kraftwire.quorum.high.watermark.linger.ms", hw_linger),
                              "must be between 0 (answer at once) and 60000 ms")
        max_frame = config.socket_request_max_bytes
        if max_frame < 1024:
            raise ConfigError("socket.request.max.bytes", props.get("socket.request.max.bytes", max_frame), "must be at least 1024")
        return cls(config=config, node_id=config.node_id, roles=roles, listeners=listeners, advertised=advertised,
                   controller_listener=controller_listener, voters=voters, metrics_port=metrics_port,
                   metrics_host=config.metrics_host, max_frame_bytes=max_frame, ignored_keys=tuple(ignored),
                   unknown_keys=tuple(unknown), warnings=tuple(warnings),
                   controller_listener_names=tuple(config.controller_listener_names),
                   broker_heartbeat_interval_ms=heartbeat_ms, broker_session_timeout_ms=session_ms,
                   bootstrap_servers=bootstrap, high_watermark_linger_ms=hw_linger,
                   listener_protocols=tuple(protocols.items()), ssl_listeners=tuple(ssl_listeners.items()),
                   sasl_listeners=tuple(sasl_listeners.items()), controller_sasl=controller_sasl,
                   inter_broker_listener=inter_broker, inter_broker_sasl=inter_broker_sasl)

    # ------------------------------------------------------------------------------------------------ derived
    @property
    def metadata_dir(self) -> str:
        return self.config.metadata_dir()

    @property
    def partition_dir(self) -> str:
        return self.config.metadata_partition_dir()

    @property
    def topic(self) -> str:
        return self.config.metadata_log_topic

    def voter(self, node_id: int) -> Voter | None:
        for v in self.voters:
            if v.node_id == node_id:
                return v
        return None

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles

    def client_listeners(self) -> tuple[Endpoint, ...]:
        """Listeners that serve client APIs: those not named in controller.listener.names, or, when the only
        listener is the controller listener (the seed configs), that one."""
        names = set(self.controller_listener_names or (self.controller_listener,))
        own = tuple(ep for ep in self.listeners if ep.name not in names)
        return own or tuple(ep for ep in self.listeners if ep.name == self.controller_listener)

    def advertised_client_listeners(self) -> tuple[Endpoint, ...]:
        names = {ep.name for ep in self.client_listeners()}
        return tuple(ep for ep in self.advertised if ep.name in names)

    def controller_endpoint(self) -> Endpoint | None:
        for ep in self.listeners:
            if ep.name == self.controller_listener:
                return ep
        return None  # a broker-only node has no controller listener

    def protocol_of(self, listener: str) -> str:
        return dict(self.listener_protocols).get(listener, "PLAINTEXT")

    def server_ssl_context(self, listener: str) -> ssl.SSLContext | None:
        """The TLS context a listener serves with (None for PLAINTEXT); ``ConfigError`` when its keys are wrong."""
        settings = dict(self.ssl_listeners).get(listener)
        return server_context(settings) if settings is not None else None

    def sasl_of(self, listener: str) -> SaslSettings | None:
        return dict(self.sasl_listeners).get(listener)

    def principal_rules(self, listener: str) -> tuple:
        """``ssl.principal.mapping.rules`` of a listener, parsed (``DEFAULT`` unless it is an SSL listener)."""
        settings = dict(self.ssl_listeners).get(listener)
        return parse_rules(settings.principal_mapping_rules if settings is not None else "DEFAULT")

    def inter_broker_ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context of a replica fetcher's connections to the leaders' inter-broker listener."""
        settings = dict(self.ssl_listeners).get(self.inter_broker_listener or "")
        return client_context(settings) if settings is not None else None

    def controller_ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context of connections to the controller listener (quorum peers, a broker's controller link)."""
        settings = dict(self.ssl_listeners).get(self.controller_listener)
        return client_context(settings) if settings is not None else None

    def raft_config(self, cluster_id: str) -> RaftConfig:
        c = self.config
        return RaftConfig(
            node_id=self.node_id, voters=frozenset(v.node_id for v in self.voters), cluster_id=cluster_id,
            election_timeout_ms=c.controller_quorum_election_timeout_ms,
            election_backoff_max_ms=c.controller_quorum_election_backoff_max_ms,
            fetch_timeout_ms=c.controller_quorum_fetch_timeout_ms,
            request_timeout_ms=c.controller_quorum_request_timeout_ms,
            retry_backoff_ms=c.controller_quorum_retry_backoff_ms,
            append_linger_ms=c.controller_quorum_append_linger_ms,
            snapshot_max_bytes_between=c.metadata_log_max_record_bytes_between_snapshots,
            snapshot_interval_ms=c.metadata_log_max_snapshot_interval_ms,
            high_watermark_linger_ms=self.high_watermark_linger_ms,
        ).validate()


def _inter_broker(props, roles, listeners, config, protocols,
                  warnings: list[str]) -> tuple[str | None, SaslLogin | None]:
    """Kafka's rule for the listener brokers replicate over: ``inter.broker.listener.name``, else the first listener
    whose protocol is ``security.inter.broker.protocol`` (PLAINTEXT by default); never a controller listener. Only
    one of the two keys may be set. Where neither is set and no listener is PLAINTEXT, Kafka refuses to start;
    kraftwire takes the first client listener with a warning (a single broker never dials it)."""
    if "broker" not in roles:
        return None, None
    candidates = [ep.name for ep in listeners if ep.name not in config.controller_listener_names]
    if not candidates:
        return None, None
    name = (props.get("inter.broker.listener.name") or "").strip()
    protocol = (props.get("security.inter.broker.protocol") or "").strip()
    if name and protocol:
        raise ConfigError("security.inter.broker.protocol", protocol,
                          "set inter.broker.listener.name or security.inter.broker.protocol, not both")
    if name:
        if name not in candidates:
            raise ConfigError("inter.broker.listener.name", name,
                              f"must be one of this broker's listeners that is not a controller listener "
                              f"({', '.join(candidates)})")
    else:
        wanted = (protocol or "PLAINTEXT").upper()
        matching = [n for n in candidates if protocols.get(n) == wanted]
        if matching:
            name = matching[0]
        elif protocol:
            raise ConfigError("security.inter.broker.protocol", protocol,
                              f"no listener of this broker uses {wanted} (listeners: {', '.join(candidates)})")
        else:
            name = candidates[0]
            warnings.append(f"no PLAINTEXT listener and no inter.broker.listener.name: brokers replicate over "
                            f"{name} ({protocols.get(name)}); Kafka would refuse this configuration")
    sasl = protocols.get(name, "").startswith("SASL_")
    if sasl and not (props.get("inter.broker.listener.name") or protocol) \
            and "sasl.mechanism.inter.broker.protocol" not in props:
        warnings.append(f"replica fetchers dial the SASL listener {name} without a login: set "
                        "sasl.mechanism.inter.broker.protocol (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512) and its "
                        "username/password JAAS entry")
        return name, None
    return name, inter_broker_login(props, name) if sasl else None


def _parse_protocol_map(items: tuple[str, ...]) -> dict[str, str]:
    if not items:
        return dict(_DEFAULT_PROTOCOL_MAP)
    out = {}
    for item in items:
        name, sep, protocol = item.partition(":")
        if not sep or not name.strip() or not protocol.strip():
            raise ConfigError("listener.security.protocol.map", ",".join(items),
                              f"entry {item!r} is not LISTENER_NAME:SECURITY_PROTOCOL")
        out[name.strip().upper()] = protocol.strip().upper()
    return out


def _parse_listener(key: str, item: str) -> Endpoint:
    name, sep, rest = item.partition("://")
    if not sep or not name:
        raise ConfigError(key, item, "expected NAME://host:port")
    host, colon, port_text = rest.rpartition(":")
    if not colon:
        raise ConfigError(key, item, "expected NAME://host:port (the port is missing)")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    port = _port(key, item, port_text)
    return Endpoint(name.strip().upper(), host.strip(), port)


def _port(key: str, item: str, text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise ConfigError(key, item, f"port {text!r} is not a number") from None
    if not 0 <= port <= 65535:
        raise ConfigError(key, item, f"port {port} is out of range")
    return port


def _parse_bootstrap(item: str) -> tuple[str, int]:
    host, colon, port_text = item.strip().rpartition(":")
    if not colon or not host or not port_text.isdigit() or not 0 < int(port_text) <= 65535:
        raise ConfigError("controller.quorum.bootstrap.servers", item, "expected host:port")
    return host.strip("[]"), int(port_text)


def _parse_voter(item: str) -> Voter:
    key = "controller.quorum.voters"
    ident, at, addr = item.partition("@")
    if not at:
        raise ConfigError(key, item, "expected id@host:port")
    try:
        node_id = int(ident)
    except ValueError:
        raise ConfigError(key, item, f"voter id {ident!r} is not a number") from None
    if node_id < 0:
        raise ConfigError(key, item, "voter ids are >= 0")
    host, colon, port_text = addr.rpartition(":")
    if not colon or not host:
        raise ConfigError(key, item, "expected id@host:port")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host == "0.0.0.0":
        raise ConfigError(key, item, "0.0.0.0 is not a routable voter address")
    port = _port(key, item, port_text)
    if port == 0:
        raise ConfigError(key, item, "a voter needs a real port")
    return Voter(node_id, host, port)


def describe_paths(settings: NodeSettings) -> str:
    return os.path.abspath(settings.partition_dir)
