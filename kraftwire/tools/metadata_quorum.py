"""``kraftwire metadata-quorum --bootstrap-server HOST:PORT describe --status | --replication [--human-readable]``:
what Kafka's ``kafka-metadata-quorum.sh`` prints (kraft-facts §11), from DescribeQuorum v2 and DescribeCluster; and
its KIP-853 commands:

* ``--command-config CONTROLLER.properties add-controller [--dry-run]`` adds the controller that file configures to
  the voters (AddRaftVoter): its ``node.id``, the directory id in the ``meta.properties`` of its ``metadata.log.dir``
  (else the first of ``log.dirs``) and its endpoint on each of ``controller.listener.names`` (``advertised.listeners``
  over ``listeners``, an empty host being ``localhost``), read as Kafka's MetadataQuorumCommand reads them; the file
  is also the admin connection's client config, as in Kafka. ``--controller.config F`` (kraftwire's) names the
  controller's file apart from a ``--command-config`` that only says how to connect. Prints ``Added controller N
  with directory id D and endpoints: NAME://host:port, ...``.
* ``remove-controller --controller-id N --controller-directory-id D [--dry-run] [--unregister]`` (RemoveRaftVoter)
  prints ``Removed KRaft controller N with directory id D`` (Kafka 4.4's ``"%sKRaft controller ..."`` over
  ``"Removed "``). With ``--unregister`` (KIP-1312) it then sends UnregisterController and prints ``Unregistered
  KRaft controller N``; a removal refused as UNSUPPORTED_VERSION or VOTER_NOT_FOUND, or a refused unregistration,
  prints Kafka's ``Failed to remove KRaft voter N: ...`` / ``Failed to unregister controller N: ...`` with its hint
  to run ``kafka-cluster.sh unregister-controller --id N``. ``--dry-run`` sends nothing and says both.

As Kafka's admin client, these go to the active controller when given ``--bootstrap-controller`` (DescribeCluster
names it) and to a broker, which forwards them, with ``--bootstrap-server``; the leader answers once the change is
committed. A refusal prints Kafka's ``org.apache.kafka.common.errors.<Name>Exception: <message>`` and exits 1; so do
Kafka's argument errors (its messages).

``--status``: aligned ``Key: value`` lines (ClusterId, LeaderId, LeaderEpoch, HighWatermark, MaxFollowerLag,
MaxFollowerLagTimeMs, CurrentVoters, CurrentObservers), values from column 24 as Kafka prints them. The two lists keep
Kafka's JSON objects (``id``, ``directoryId`` — null when unset —, ``endpoints`` only when the quorum reports some)
and add one key Kafka's objects do not have, ``lag``: the leader's log end offset minus the replica's, the same
number as the ``Lag`` column of ``--replication`` (issue #9). ``--replication``: the table NodeId, DirectoryId,
LogEndOffset, Lag, LastFetchTimestamp, LastCaughtUpTimestamp, Status — leader first, then voters, then observers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

from kraftwire.config import ControllerEndpointError
from kraftwire.config import controller_endpoints as config_controller_endpoints
from kraftwire.error_codes import NOT_LEADER_OR_FOLLOWER
from kraftwire.ids import ZERO_UUID, uuid_to_base64

DEFAULT_TOPIC = "__cluster_metadata"
_STATUS_VALUE_COLUMN = 24  # Kafka pads every --status key ("ClusterId:" .. "MaxFollowerLagTimeMs:") to 24 columns


def add_arguments(parser: argparse.ArgumentParser) -> None:
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--bootstrap-server", metavar="HOST:PORT[,HOST:PORT...]",
                        help="brokers to ask, tried in order until one answers")
    target.add_argument("--bootstrap-controller", metavar="HOST:PORT[,HOST:PORT...]",
                        help="controllers to ask, tried in order until one answers")
    parser.add_argument("--command-config", metavar="FILE",
                        help="client properties for a secured listener: security.protocol, ssl.truststore.*, "
                             "sasl.mechanism, sasl.jaas.config (as Kafka's tools take them); for add-controller, "
                             "the configuration file of the controller to add, as Kafka's tool reads it")
    parser.add_argument("--timeout", type=float, default=10.0, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="mq_command", metavar="{describe,add-controller,remove-controller}")
    sub.required = True
    describe = sub.add_parser("describe", help="describe the metadata quorum")
    what = describe.add_mutually_exclusive_group(required=True)
    what.add_argument("--status", action="store_true", help="the quorum status")
    what.add_argument("--replication", action="store_true", help="per-replica replication state")
    describe.add_argument("--human-readable", action="store_true", help="timestamps as '<n> ms ago'")
    add = sub.add_parser("add-controller", help="Add a controller to the KRaft controller cluster")
    add.add_argument("--dry-run", action="store_true",
                     help="True if we should print what would be done, but not do it.")
    add.add_argument("--controller.config", dest="controller_config", metavar="FILE",
                     help="the configuration file of the controller to add (kraftwire's; Kafka reads it from "
                          "--command-config, which is the default)")
    remove = sub.add_parser("remove-controller", help="Remove a controller from the KRaft controller cluster")
    remove.add_argument("--controller-id", "-i", type=int, required=True, help="The id of the controller to remove.")
    remove.add_argument("--controller-directory-id", "-d", required=True,
                        help="The directory ID of the controller to remove.")
    remove.add_argument("--dry-run", action="store_true",
                        help="True if we should print what would be done, but not do it.")
    remove.add_argument("--unregister", action="store_true",
                        help="If set, also unregister the controller after successfully removing it from the voter "
                             "set.")


class TerseError(Exception):
    """What Kafka's tool throws as a TerseException: its message alone is printed, exit code 1."""


#: the exceptions Kafka's admin client makes of the errors an AddRaftVoter / RemoveRaftVoter can meet, with the
#: default message (``Errors``) used when the answer carries none
JAVA_ERRORS = {
    6: ("NotLeaderOrFollowerException", "For requests intended only for the leader, this error indicates that the "
                                        "broker is not the current leader. For requests intended for any replica, "
                                        "this error indicates that the broker is not a replica of the topic "
                                        "partition."),
    7: ("TimeoutException", "The request timed out."),
    8: ("BrokerNotAvailableException", "The broker is not available."),
    31: ("ClusterAuthorizationException", "Cluster authorization failed."),
    35: ("UnsupportedVersionException", "The version of API is not supported."),
    41: ("NotControllerException", "This is not the correct controller for this cluster."),
    42: ("InvalidRequestException", "This most likely occurs because of a request being malformed by the client "
                                    "library or the message was sent to an incompatible broker. See the broker logs "
                                    "for more details."),
    74: ("FencedLeaderEpochException", "The leader epoch in the request is older than the epoch on the broker."),
    75: ("UnknownLeaderEpochException", "The leader epoch in the request is newer than the epoch on the broker."),
    104: ("InconsistentClusterIdException", "The clusterId in the request does not match that found on the server."),
    125: ("InvalidVoterKeyException", "The voter key doesn't match the receiving replica's key."),
    126: ("DuplicateVoterException", "The voter is already part of the set of voters."),
    127: ("VoterNotFoundException", "The voter is not part of the set of voters."),
}


def java_error(code: int, message: str | None) -> str:
    """``org.apache.kafka.common.errors.<Name>: <message>``, as the tool prints the admin client's exception."""
    from kraftwire.error_codes import name_of

    name, default = JAVA_ERRORS.get(code, (None, None))
    if name is None:
        return f"{name_of(code)}: {message}" if message else name_of(code)
    return f"org.apache.kafka.common.errors.{name}: {default if message is None else message}"


def exception_message(code: int, message: str | None) -> str:
    """The admin client's exception's own message (``getMessage``): the answer's, else the error's default."""
    from kraftwire.error_codes import default_message, name_of

    if message is not None:
        return message
    return JAVA_ERRORS[code][1] if code in JAVA_ERRORS else default_message(code) or name_of(code)


#: RemoveRaftVoter refusals after which ``--unregister`` hints at unregistering by hand (Kafka's tool)
_HINTED_REMOVALS = frozenset({35, 127})  # UNSUPPORTED_VERSION, VOTER_NOT_FOUND


def unregister_hint(controller_id: int) -> str:
    return (f"To unregister the controller from the cluster, run `kafka-cluster.sh unregister-controller --id "
            f"{controller_id}`.")


def unregistered_line(node_id: int, *, dry_run: bool = False) -> str:
    return f"{'DRY RUN of unregistering ' if dry_run else 'Unregistered '}KRaft controller {node_id}"


async def fetch_quorum(host: str, port: int, *, timeout: float = 10.0, topic: str = DEFAULT_TOPIC, ssl_context=None,
                       sasl=None, controllers: bool = False):
    """(DescribeQuorum v2 response, DescribeCluster response) from the node at host:port (a controller with
    ``controllers``)."""
    from kraftwire.server.edge.client import describe_quorum

    return await describe_quorum(host, port, timeout=timeout, topic=topic, ssl_context=ssl_context, sasl=sasl,
                                 controllers=controllers)


def active_controller(quorum, cluster) -> tuple[str, int] | None:
    """Where to ask again when a controller that does not lead answered NOT_LEADER_OR_FOLLOWER (a Kafka controller
    does; kraftwire's answer from any voter): the active controller its DescribeCluster names, as Kafka's admin
    client sends DescribeQuorum to the active controller. None when the answer needs no second ask."""
    part = quorum.topics[0].partitions[0] if quorum.topics and quorum.topics[0].partitions else None
    error = quorum.error_code or (part.error_code if part is not None else 0)
    if error != NOT_LEADER_OR_FOLLOWER or cluster.error_code:
        return None
    return next(((b.host, b.port) for b in cluster.brokers if b.broker_id == cluster.controller_id), None)


def _dir(value) -> str | None:
    return None if value == ZERO_UUID else uuid_to_base64(value)


def endpoint_text(name: str, host: str, port: int) -> str:
    """Kafka's ``RaftVoterEndpoint.toString()``: ``NAME://host:port``, an IPv6 host in square brackets."""
    return f"{name}://{'[' + host + ']' if ':' in host else host}:{port}"


def _endpoints(quorum, node_id: int) -> list[str]:
    for node in quorum.nodes:
        if node.node_id == node_id:
            return [endpoint_text(listener.name, listener.host, listener.port) for listener in node.listeners]
    return []


def _leader(part):
    return next((v for v in part.current_voters if v.replica_id == part.leader_id), None)


def _lag(leader, replica) -> int | None:
    """Kafka's --replication ``Lag``: leader log end offset minus the replica's (never below 0); None without a leader."""
    return None if leader is None else max(0, leader.log_end_offset - replica.log_end_offset)


def _replicas_json(quorum, replicas, leader) -> str:
    items = []
    for r in replicas:
        item = {"id": r.replica_id, "directoryId": _dir(r.replica_directory_id)}
        endpoints = _endpoints(quorum, r.replica_id)
        if endpoints:  # Kafka leaves the key out when the quorum knows no endpoint (observers, old voters)
            item["endpoints"] = endpoints
        item["lag"] = _lag(leader, r)
        items.append(item)
    return "[" + ", ".join(json.dumps(i, separators=(", ", ": ")) for i in items) + "]"


def status_lines(quorum, cluster) -> list[str]:
    part = quorum.topics[0].partitions[0]
    leader = _leader(part)
    max_lag, max_lag_time = 0, -1
    if leader is not None and part.current_voters:
        lagging = min(part.current_voters, key=lambda v: v.log_end_offset)
        max_lag = leader.log_end_offset - lagging.log_end_offset
        if lagging.replica_id == leader.replica_id:
            max_lag_time = 0
        elif leader.last_caught_up_timestamp >= 0 and lagging.last_caught_up_timestamp >= 0:
            max_lag_time = leader.last_caught_up_timestamp - lagging.last_caught_up_timestamp
    rows = [
        ("ClusterId", cluster.cluster_id),
        ("LeaderId", part.leader_id),
        ("LeaderEpoch", part.leader_epoch),
        ("HighWatermark", part.high_watermark),
        ("MaxFollowerLag", max_lag),
        ("MaxFollowerLagTimeMs", max_lag_time),
        ("CurrentVoters", _replicas_json(quorum, part.current_voters, leader)),
        ("CurrentObservers", _replicas_json(quorum, part.observers, leader)),
    ]
    return [f"{(k + ':').ljust(_STATUS_VALUE_COLUMN)}{v}" for k, v in rows]


def replication_lines(quorum, *, human_readable: bool = False, now_ms: int | None = None) -> list[str]:
    part = quorum.topics[0].partitions[0]
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    leader = _leader(part)
    others = [v for v in part.current_voters if v.replica_id != part.leader_id]
    ordered = ([(leader, "Leader")] if leader else []) + [(v, "Follower") for v in others] + \
              [(o, "Observer") for o in part.observers]

    def ts(value: int) -> str:
        if value < 0:
            return "-1"
        return f"{max(0, now_ms - value)} ms ago" if human_readable else str(value)

    header = ["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status"]
    rows = [[str(r.replica_id), uuid_to_base64(r.replica_directory_id), str(r.log_end_offset),
             str(_lag(leader, r) or 0), ts(r.last_fetch_timestamp), ts(r.last_caught_up_timestamp),
             status] for r, status in ordered]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return ["\t".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in [header, *rows]]


# ===================================================================================================================
# add-controller, remove-controller: what Kafka's MetadataQuorumCommand reads from a controller's configuration
# ===================================================================================================================
_INVALID = "Is this a valid controller configuration file?"


def controller_id(props: dict[str, str]) -> int:
    if "node.id" not in props:
        raise TerseError(f"node.id not found in configuration file. {_INVALID}")
    try:
        node_id = int(props["node.id"].strip())
    except ValueError:
        raise TerseError(f'For input string: "{props["node.id"].strip()}"') from None
    if node_id < 0:
        raise TerseError(f"node.id was negative in configuration file. {_INVALID}")
    if "controller" not in props.get("process.roles", ""):
        raise TerseError(f"process.roles did not contain 'controller' in configuration file. {_INVALID}")
    return node_id


def metadata_directory(props: dict[str, str]) -> str:
    if "metadata.log.dir" in props:
        return props["metadata.log.dir"]
    if "log.dirs" in props:
        return props["log.dirs"].strip().split(",")[0]
    raise TerseError(f"Neither metadata.log.dir nor log.dirs were found. {_INVALID}")


def metadata_directory_id(directory: str):
    from kraftwire.errors import KraftwireError
    from kraftwire.log.meta_properties import read_meta_properties

    try:
        meta = read_meta_properties(directory)
    except (OSError, KraftwireError, ValueError):
        meta = None
    if meta is None:
        raise TerseError(f"Unable to read meta.properties from {directory}")
    if meta.directory_id is None:
        raise TerseError(f"No directory id found in {directory}")
    return meta.directory_id


def controller_endpoints(props: dict[str, str]) -> list[tuple[str, str, int]]:
    """(listener, host, port) of each controller listener: ``advertised.listeners`` over ``listeners``."""
    try:
        return config_controller_endpoints(props)
    except ControllerEndpointError as exc:
        raise TerseError(str(exc)) from None


def parse_directory_id(text: str):
    """Kafka's ``Uuid.fromString`` with its messages, as ``--controller-directory-id`` is parsed."""
    import base64
    import binascii
    import uuid

    if len(text) > 24:
        raise TerseError(f"Failed to parse --controller-directory-id: Input string with prefix `{text[:24]}` is too "
                         "long to be decoded as a base64 UUID")
    bad = next((c for c in text if c not in _B64URL), None)
    if bad is not None:
        raise TerseError(f"Failed to parse --controller-directory-id: Illegal base64 character {ord(bad):x}")
    try:
        raw = base64.urlsafe_b64decode(text.rstrip("=") + "=" * (-len(text.rstrip("=")) % 4))
    except (binascii.Error, ValueError) as exc:
        raise TerseError(f"Failed to parse --controller-directory-id: {exc}") from None
    if len(raw) != 16:
        raise TerseError(f"Failed to parse --controller-directory-id: Input string `{text}` decoded as {len(raw)} "
                         "bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID")
    return uuid.UUID(bytes=raw)


_B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=")


def added_line(node_id: int, directory_id, endpoints, *, dry_run: bool = False) -> str:
    return (f"{'DRY RUN of adding' if dry_run else 'Added'} controller {node_id} with directory id "
            f"{uuid_to_base64(directory_id)} and endpoints: " + ", ".join(endpoint_text(*ep) for ep in endpoints))


def removed_line(node_id: int, directory_id, *, dry_run: bool = False) -> str:
    return (f"{'DRY RUN of removing ' if dry_run else 'Removed '}KRaft controller {node_id} with directory id "
            f"{uuid_to_base64(directory_id)}")


def add_voter_request(node_id: int, directory_id, endpoints, timeout_ms: int):
    from kraftwire.protocol import messages as w

    R = w.AddRaftVoterRequest
    return R(cluster_id=None, timeout_ms=timeout_ms, voter_id=node_id, voter_directory_id=directory_id,
             listeners=[R.Listener(name=n, host=h, port=p) for n, h, p in endpoints])


def remove_voter_request(node_id: int, directory_id):
    from kraftwire.protocol import messages as w

    return w.RemoveRaftVoterRequest(cluster_id=None, voter_id=node_id, voter_directory_id=directory_id)


#: Kafka's admin ``request.timeout.ms``: the TimeoutMs an AddRaftVoter carries
ADD_TIMEOUT_MS = 30_000


async def send_voter_change(servers, body, *, controllers: bool, timeout: float, ssl_context=None, sasl=None):
    """The answer to ``body`` (AddRaftVoter or RemoveRaftVoter v0): through the first bootstrap server that answers;
    with ``controllers`` (``--bootstrap-controller``), to the active controller it names (DescribeCluster with
    endpoint type 2, KIP-919, as Kafka's admin client finds it), else to that server itself."""
    from kraftwire.errors import KraftwireError
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import KafkaConnection

    failures = []
    for host, port in servers:
        try:
            conn = await KafkaConnection.open(host, port, timeout=timeout, ssl_context=ssl_context, sasl=sasl)
        except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
            failures.append(f"{host}:{port}: {exc or type(exc).__name__}")
            continue
        try:
            target = None
            if controllers:
                cluster = await conn.request(w.DescribeClusterRequest(include_cluster_authorized_operations=False,
                                                                      endpoint_type=2), 1, timeout=timeout)
                active = next((b for b in cluster.brokers if b.broker_id == cluster.controller_id), None)
                if cluster.error_code == 0 and active is not None and (active.host, active.port) != (host, port):
                    target = (active.host, active.port)
            if target is None:
                return await conn.request(body, 0, timeout=timeout)
        except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
            failures.append(f"{host}:{port}: {exc or type(exc).__name__}")
            continue
        finally:
            await conn.close()
        try:
            conn = await KafkaConnection.open(*target, timeout=timeout, ssl_context=ssl_context, sasl=sasl)
            try:
                return await conn.request(body, 0, timeout=timeout)
            finally:
                await conn.close()
        except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
            failures.append(f"{target[0]}:{target[1]} (the active controller): {exc or type(exc).__name__}")
    raise TerseError("org.apache.kafka.common.errors.TimeoutException: cannot reach the cluster via "
                     + "; ".join(failures))


def _run_voter_change(args, servers, tls, login) -> int:
    from kraftwire.config import load_properties

    if args.mq_command == "add-controller":
        path = args.controller_config or args.command_config
        if path is None:
            raise TerseError("You must supply the configuration file of the controller you are adding when using "
                             "add-controller.")
        try:
            props = load_properties(path)
        except FileNotFoundError:
            raise TerseError(f"Properties file {path} does not exist.") from None
        except OSError as exc:
            raise TerseError(f"{path}: {exc.strerror or exc}") from None
        node_id = controller_id(props)
        directory_id = metadata_directory_id(metadata_directory(props))
        endpoints = controller_endpoints(props)
        body = add_voter_request(node_id, directory_id, endpoints, ADD_TIMEOUT_MS)
        done = added_line(node_id, directory_id, endpoints, dry_run=args.dry_run)
        timeout = max(args.timeout, ADD_TIMEOUT_MS / 1000 + 5)
    else:
        if args.controller_id < 0:
            raise TerseError(f"Invalid negative --controller-id: {args.controller_id}")
        directory_id = parse_directory_id(args.controller_directory_id)
        body = remove_voter_request(args.controller_id, directory_id)
        done = removed_line(args.controller_id, directory_id, dry_run=args.dry_run)
        timeout = max(args.timeout, 35.0)
    unregister = args.mq_command == "remove-controller" and args.unregister

    def send(request):
        return asyncio.run(send_voter_change(servers, request, controllers=args.bootstrap_controller is not None,
                                             timeout=timeout, ssl_context=tls, sasl=login))

    if not args.dry_run:
        response = send(body)
        if response.error_code:
            if unregister and response.error_code in _HINTED_REMOVALS:
                raise TerseError(f"Failed to remove KRaft voter {args.controller_id}: "
                                 f"{exception_message(response.error_code, response.error_message)}. "
                                 + unregister_hint(args.controller_id))
            raise TerseError(java_error(response.error_code, response.error_message))
    print(done)
    if unregister:
        from kraftwire.protocol import messages as w

        if not args.dry_run:
            response = send(w.UnregisterControllerRequest(controller_id=args.controller_id))
            if response.error_code:
                raise TerseError(f"Failed to unregister controller {args.controller_id}: "
                                 f"{exception_message(response.error_code, response.error_message)}. "
                                 + unregister_hint(args.controller_id))
        print(unregistered_line(args.controller_id, dry_run=args.dry_run))
    return 0


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import KraftwireError
    from kraftwire.server.edge.client import parse_host_port

    try:
        servers = [parse_host_port(item.strip())
                   for item in (args.bootstrap_server or args.bootstrap_controller).split(",") if item.strip()]
    except ValueError as exc:
        print(f"kraftwire metadata-quorum: {exc}", file=sys.stderr)
        return 1
    if not servers:
        print("kraftwire metadata-quorum: no bootstrap server given", file=sys.stderr)
        return 1
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    if args.command_config is not None and not os.path.exists(args.command_config):
        print(f"Properties file {args.command_config} does not exist.", file=sys.stderr)
        return 1
    try:
        tls, login = client_security(args.command_config)
    except ConfigError as exc:
        print(f"kraftwire metadata-quorum: {exc}", file=sys.stderr)
        return 1
    if args.mq_command in ("add-controller", "remove-controller"):
        try:
            return _run_voter_change(args, servers, tls, login)
        except TerseError as exc:
            print(str(exc), file=sys.stderr)
            return 1
    failures = []
    for host, port in servers:
        try:
            quorum, cluster = asyncio.run(fetch_quorum(host, port, timeout=args.timeout, ssl_context=tls, sasl=login,
                                                       controllers=args.bootstrap_controller is not None))
            break
        except (OSError, asyncio.TimeoutError, KraftwireError) as exc:
            failures.append(f"{host}:{port}: {exc or type(exc).__name__}")
    else:
        print(f"kraftwire metadata-quorum: cannot describe the quorum via {'; '.join(failures)}", file=sys.stderr)
        return 1
    active = active_controller(quorum, cluster) if args.bootstrap_controller is not None else None
    if active is not None and active != (host, port):
        quorum, cluster = asyncio.run(fetch_quorum(*active, timeout=args.timeout, ssl_context=tls, sasl=login,
                                                   controllers=True))
    part = quorum.topics[0].partitions[0] if quorum.topics and quorum.topics[0].partitions else None
    error = quorum.error_code or (part.error_code if part is not None else 0)
    if error:
        from kraftwire.error_codes import name_of  # type: ignore[attr-defined]

        print(f"kraftwire metadata-quorum: the quorum answered {name_of(error)} ({error})", file=sys.stderr)
        return 1
    lines = status_lines(quorum, cluster) if args.status else replication_lines(quorum,
                                                                                 human_readable=args.human_readable)
    print("\n".join(lines))
    return 0
