"""``kraftwire broker-api-versions --bootstrap-server HOST:PORT [--command-config F]``: Kafka's
``kafka-broker-api-versions.sh``, its output, on kraftwire's own protocol client.

For each broker of the Metadata answer, its ApiVersions answer as Kafka's ``NodeApiVersions`` prints it::

    localhost:9092 (id: 1 rack: null isFenced: false) -> (
    	Produce(0): 0 to 12 [usable: 12],
    	...
    	CreateDelegationToken(38): UNSUPPORTED,
    	...
    )

every API a Kafka 4.4 client may send to a broker (``CLIENT_APIS``) and every other one the broker lists, by key;
``usable`` is the newest version both sides speak (the client's newest is the version kraftwire's declarations,
generated from Kafka's, end at), or ``[unusable: node too old/new]``. A broker that does not answer prints
``-> ERROR: <why>``; a failure to reach the cluster prints the reason on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from kraftwire.tools.admin import add_bootstrap_arguments, connect

#: the API keys of Kafka 4.4's broker listener (ApiKeys with ListenerType.BROKER): what its client lists
CLIENT_APIS = (0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
               31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 55, 57, 60, 61, 64,
               65, 66, 68, 69, 71, 72, 74, 75, 76, 77, 78, 79, 80, 81, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94)
#: Kafka's names of the APIs above that kraftwire declares no messages for (the others come from its declarations)
UNDECLARED_NAMES = {
    34: "AlterReplicaLogDirs", 38: "CreateDelegationToken", 39: "RenewDelegationToken", 40: "ExpireDelegationToken",
    41: "DescribeDelegationToken", 45: "AlterPartitionReassignments", 46: "ListPartitionReassignments",
    48: "DescribeClientQuotas", 49: "AlterClientQuotas", 71: "GetTelemetrySubscriptions", 72: "PushTelemetry",
    74: "ListConfigResources", 76: "ShareGroupHeartbeat", 77: "ShareGroupDescribe", 78: "ShareFetch",
    79: "ShareAcknowledge", 83: "InitializeShareGroupState", 84: "ReadShareGroupState", 85: "WriteShareGroupState",
    86: "DeleteShareGroupState", 87: "ReadShareGroupStateSummary", 88: "StreamsGroupHeartbeat",
    89: "StreamsGroupDescribe", 90: "DescribeShareGroupOffsets", 91: "AlterShareGroupOffsets",
    92: "DeleteShareGroupOffsets", 93: "StreamsGroupTopologyDescriptionUpdate", 94: "UnregisterController"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_arguments(parser)
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)


def _client_api(key: int):
    """(name, client's (oldest, newest) or None) of ``key`` as Kafka's client knows it; None when it does not."""
    from kraftwire.errors import ProtocolError
    from kraftwire.protocol import messages as w

    try:
        info = w.api(key)
    except ProtocolError:
        return (UNDECLARED_NAMES[key], None) if key in UNDECLARED_NAMES else None
    return (info.name, info.valid_versions) if key in CLIENT_APIS else None


def api_text(key: int, node_range: tuple[int, int] | None) -> str:
    """One API's entry, as Kafka's NodeApiVersions writes it."""
    known = _client_api(key)
    name = known[0] if known else "UNKNOWN"
    if node_range is None:
        return f"{name}({key}): UNSUPPORTED"
    lo, hi = node_range
    text = f"{name}({key}): {lo if lo == hi else f'{lo} to {hi}'}"
    if known is None or known[1] is None:
        return text
    oldest, newest = known[1]
    if newest < lo:
        return text + " [unusable: node too new]"
    if hi < oldest:
        return text + " [unusable: node too old]"
    return text + f" [usable: {min(newest, hi)}]"


def node_text(host: str, port: int, node_id: int, rack, answer) -> str:
    ranges = {a.api_key: (a.min_version, a.max_version) for a in answer.api_keys}
    keys = sorted(set(ranges) | set(CLIENT_APIS))
    body = ",\n\t".join(api_text(k, ranges.get(k)) for k in keys)
    return f"{host}:{port} (id: {node_id} rack: {rack or 'null'} isFenced: false) -> (\n\t{body}\n)"


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError, ProtocolError
    from kraftwire.tools.command_config import client_security

    try:
        tls, login = client_security(args.command_config)
        asyncio.run(_run(args, tls, login))
    except (ConfigError, ProtocolError, OSError, asyncio.TimeoutError) as exc:
        print(str(exc) or type(exc).__name__, file=sys.stderr)
        return 1
    return 0


async def _run(args, tls, login) -> None:
    from kraftwire.errors import ProtocolError
    from kraftwire.protocol import messages as w
    from kraftwire.tools.consumer_groups import Admin

    admin = Admin(await connect(args, tls, login), tls, login, args.timeout)
    try:
        md = await admin.metadata(None)
        for b in md.brokers:
            try:
                answer = await (await admin.broker(b.node_id)).request(
                    w.ApiVersionsRequest(client_software_name="kraftwire-broker-api-versions",
                                         client_software_version="1"), 3, timeout=args.timeout)
                print(node_text(b.host, b.port, b.node_id, b.rack, answer))
            except (ProtocolError, OSError, asyncio.TimeoutError) as exc:
                print(f"{b.host}:{b.port} (id: {b.node_id} rack: {b.rack or 'null'} isFenced: false) -> ERROR: "
                      f"{exc or type(exc).__name__}")
    finally:
        await admin.close()
