"""``kraftwire leader-election --bootstrap-server HOST:PORT --election-type PREFERRED|UNCLEAN (--all-topic-partitions
| --topic T --partition P | --path-to-json-file F) [--admin.config F]``: Kafka's ``kafka-leader-election.sh``, its
flags and its output, on kraftwire's own protocol client (ElectLeaders v2 to any node, which forwards it to the active
controller).

Output as Kafka's: ``Successfully completed leader election (PREFERRED) for partitions t-0, t-1``, ``Valid replica
already elected for partitions t-2``, and for each failure ``Error completing leader election (PREFERRED) for
partition: t-3: <ERROR>: <message>`` with exit status 1. The JSON file is Kafka's ``{"partitions": [{"topic": "foo",
"partition": 1}, ...]}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from kraftwire.error_codes import ELECTION_NOT_NEEDED, name_of
from kraftwire.tools.admin import connect, until_decided

TYPES = {"PREFERRED": 0, "UNCLEAN": 1}


class ElectionError(Exception):
    pass


#: a value that does not parse fails as Kafka's joptsimple tools fail (``kraftwire.cli.KafkaExitParser``)
BAD_VALUE = ("stderr", "")


def _election_type(text: str) -> str:
    """A name of ``TYPES`` in any case, as Kafka's tool takes it; else argparse's invalid-value failure."""
    if text.upper() not in TYPES:
        raise ValueError(text)
    return text.upper()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT[,HOST:PORT...]",
                        help="the server(s) to connect to")
    parser.add_argument("--admin.config", "--command-config", dest="command_config", metavar="FILE",
                        help="client properties for a secured listener")
    parser.add_argument("--election-type", required=True, type=_election_type, metavar="PREFERRED|UNCLEAN",
                        help="PREFERRED: elect the preferred replica where it is not the leader; UNCLEAN: elect any "
                             "replica where there is no leader")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--all-topic-partitions", action="store_true", help="every eligible partition")
    which.add_argument("--topic", help="the topic of the partition (with --partition)")
    which.add_argument("--path-to-json-file", metavar="FILE",
                       help='the partitions: {"partitions": [{"topic": "foo", "partition": 1}, ...]}')
    parser.add_argument("--partition", type=int, help="the partition id (with --topic)")
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    try:
        partitions = _partitions(args)
        tls, login = client_security(args.command_config)
        return asyncio.run(_run(args, tls, login, partitions))
    except (ElectionError, ConfigError, OSError, asyncio.TimeoutError) as exc:
        print(str(exc) or type(exc).__name__, file=sys.stderr)
        return 1


def _partitions(args) -> dict[str, list[int]] | None:
    if args.all_topic_partitions:
        if args.partition is not None:
            raise ElectionError("Option --partition is only allowed if --topic is used")
        return None
    if args.topic is not None:
        if args.partition is None:
            raise ElectionError("Missing required option(s): partition")
        return {args.topic: [args.partition]}
    if args.partition is not None:
        raise ElectionError("Option --partition is only allowed if --topic is used")
    try:
        with open(args.path_to_json_file, encoding="utf-8") as f:
            data = json.load(f)
        out: dict[str, list[int]] = {}
        for item in data["partitions"]:
            out.setdefault(str(item["topic"]), []).append(int(item["partition"]))
    except OSError as exc:
        raise ElectionError(f"cannot read {args.path_to_json_file}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ElectionError(f"Replica election data is not valid in {args.path_to_json_file}: {exc}") from None
    return out


async def _run(args, tls, login, partitions) -> int:
    from kraftwire.protocol import messages as w

    EL = w.ElectLeadersRequest
    body = EL(election_type=TYPES[args.election_type], timeout_ms=int(args.timeout * 1000),
              topic_partitions=None if partitions is None else [EL.TopicPartitions(topic=t, partitions=ps)
                                                                for t, ps in partitions.items()])
    conn = await connect(args, tls, login)
    try:
        answer = await until_decided(conn, body, 2, args.timeout, lambda a: [a.error_code])
    finally:
        await conn.close()
    if answer.error_code:
        raise ElectionError(f"Error while making request: {name_of(answer.error_code)}")
    succeeded, noop, failed = [], [], []
    for result in answer.replica_election_results:
        for p in result.partition_result:
            tp = f"{result.topic}-{p.partition_id}"
            if p.error_code == 0:
                succeeded.append(tp)
            elif p.error_code == ELECTION_NOT_NEEDED:
                noop.append(tp)
            else:
                failed.append((tp, f"{name_of(p.error_code)}: {p.error_message or ''}".rstrip(": ")))
    if succeeded:
        print(f"Successfully completed leader election ({args.election_type}) for partitions {', '.join(succeeded)}")
    if noop:
        print(f"Valid replica already elected for partitions {', '.join(noop)}")
    for tp, why in failed:
        print(f"Error completing leader election ({args.election_type}) for partition: {tp}: {why}")
    if failed:
        print(f"{len(failed)} replica(s) could not be elected", file=sys.stderr)
        return 1
    return 0
