"""The ``kraftwire`` command: argparse front door. It builds configuration and calls into tools/ or server/.

Each subcommand lives in its own module exposing ``add_arguments(parser)`` and ``run(args) -> int``;
the table below is the only place that names them, and modules load only when their command runs.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import re
import ssl
import sys

# (command, module, one-line help). Nested commands ("storage format") are handled inside their module.
COMMANDS: list[tuple[str, str, str]] = [
    ("quickstart", "kraftwire.tools.quickstart", "run a local KRaft cluster and a produce/consume workload through it (--raft: the test-server workload)"),
    ("storage", "kraftwire.tools.storage", "format log directories, show their state, make cluster ids (like kafka-storage.sh)"),
    ("server-start", "kraftwire.tools.server_start", "run a KRaft node from a Kafka properties file"),
    ("server-stop", "kraftwire.tools.server_stop", "stop running server-start nodes, all or by role or node id (like kafka-server-stop.sh)"),
    ("test-server", "kraftwire.tools.test_server", "run a node with Kafka's TestRaftServer workload (commit latency, throughput)"),
    ("metadata-quorum", "kraftwire.tools.metadata_quorum", "describe the quorum, add and remove controllers (like kafka-metadata-quorum.sh)"),
    ("topics", "kraftwire.tools.topics", "create, list, describe, alter and delete topics (like kafka-topics.sh)"),
    ("configs", "kraftwire.tools.configs", "describe and alter topic, broker, group and broker-logger configs and SCRAM users (like kafka-configs.sh)"),
    ("leader-election", "kraftwire.tools.leader_election", "elect preferred or unclean leaders (like kafka-leader-election.sh)"),
    ("reassign-partitions", "kraftwire.tools.reassign_partitions", "move partitions between brokers (like kafka-reassign-partitions.sh)"),
    ("delete-records", "kraftwire.tools.delete_records", "delete a partition's records below an offset (like kafka-delete-records.sh)"),
    ("consumer-groups", "kraftwire.tools.consumer_groups", "list, describe, reset and delete consumer groups (like kafka-consumer-groups.sh)"),
    ("share-groups", "kraftwire.tools.share_groups", "list, describe, reset and delete share groups and their offsets (like kafka-share-groups.sh)"),
    ("log-dirs", "kraftwire.tools.log_dirs", "describe the brokers' log directories (like kafka-log-dirs.sh)"),
    ("features", "kraftwire.tools.features", "describe and change finalized features (like kafka-features.sh)"),
    ("cluster", "kraftwire.tools.cluster", "print the cluster id, list the endpoints, unregister a broker (like kafka-cluster.sh)"),
    ("acls", "kraftwire.tools.acls", "add, remove and list ACLs (like kafka-acls.sh)"),
    ("transactions", "kraftwire.tools.transactions", "list, describe, describe-producers, abort and find hanging transactions (like kafka-transactions.sh)"),
    ("console-producer", "kraftwire.tools.console_producer", "produce lines of standard input (like kafka-console-producer.sh)"),
    ("console-consumer", "kraftwire.tools.console_consumer", "print a topic's records (like kafka-console-consumer.sh)"),
    ("console-share-consumer", "kraftwire.tools.console_share_consumer", "print a topic's records read in a share group, each acknowledged (like kafka-console-share-consumer.sh)"),
    ("dump-log", "kraftwire.tools.dump_log", "print the batches of log segments and snapshots (like kafka-dump-log)"),
    ("metadata-shell", "kraftwire.tools.metadata_shell", "browse a metadata snapshot or log (like kafka-metadata-shell.sh)"),
    ("audit", "kraftwire.tools.audit", "compare replicas' Raft logs offset by offset with Spark (corruption, gaps, epochs, divergence)"),
    ("producer-perf-test", "kraftwire.tools.producer_perf_test", "Kafka's kafka-producer-perf-test.sh (options and output)"),
    ("consumer-perf-test", "kraftwire.tools.consumer_perf_test", "Kafka's kafka-consumer-perf-test.sh (options and output)"),
    ("verifiable-consumer", "kraftwire.tools.verifiable_consumer", "Kafka's VerifiableConsumer (options and JSON lines)"),
    ("replica-verification", "kraftwire.tools.replica_verification", "check that every replica holds the same batches (like kafka-replica-verification.sh)"),
    ("e2e-latency", "kraftwire.tools.e2e_latency", "Kafka's kafka-e2e-latency.sh: produce one record at a time and time its arrival"),
    ("verifiable-producer", "kraftwire.tools.verifiable_producer", "Kafka's VerifiableProducer (options and JSON lines)"),
    ("broker-api-versions", "kraftwire.tools.broker_api_versions", "print the API versions each broker serves (like kafka-broker-api-versions.sh)"),
    ("get-offsets", "kraftwire.tools.get_offsets", "print the offsets of topic partitions at a time (like kafka-get-offsets.sh)"),
]


class KafkaExitParser(argparse.ArgumentParser):
    """argparse with Kafka's exit code for a usage error: every Kafka 4.4 tool exits 1 on a flag it does not take or a
    missing or conflicting one (joptsimple's ``printUsageAndExit`` and argparse4j's ``handleError`` alike; checked per
    tool in ``tests/kafka_software/test_exits_and_errors.py``), where argparse exits 2. Subcommand parsers inherit it.

    A tool whose module sets ``BAD_VALUE = (stream, heading)`` fails on a value that does not parse as Kafka's
    joptsimple tool does: ``Cannot parse argument 'V' of option NAME`` after the heading on that stream, no usage."""

    bad_value: tuple[str, str] | None = None

    def error(self, message: str):
        unparsed = re.fullmatch(r"argument ([^:]+): invalid .* value: '(.*)'", message, re.S)
        if self.bad_value is not None and unparsed:
            stream, heading = self.bad_value
            names = unparsed.group(1).split("/")
            name = next((n for n in names if n.startswith("--")), names[0]).lstrip("-")
            print(f"{heading}Cannot parse argument '{unparsed.group(2)}' of option {name}",
                  file=getattr(sys, stream))
            self.exit(1)
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = KafkaExitParser(prog="kraftwire", description="A KRaft quorum node that speaks the Kafka protocol.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module, help_text in COMMANDS:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        p.bad_value = getattr(_load(module), "BAD_VALUE", None)
        _load(module).add_arguments(p)
    return parser


def _load(module: str):
    return importlib.import_module(module)


def _version() -> str:
    from kraftwire import __version__

    return f"kraftwire {__version__}"


def main(argv: list[str] | None = None) -> int:
    """Run one command. A failure the user can cause (a file, a flag, a server that cannot be reached or refuses
    the login) ends with one line on standard error naming it and what to do, and exit code 1, as Kafka's tools
    end; a reader that stops reading (``| head``) ends the command quietly with 0, as Kafka's tools do (the JVM's
    standard output ignores the closed pipe)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(_load(args._module).run(args) or 0)
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - only the failures failure_line knows are turned into one line
        line = failure_line(exc, getattr(args, "bootstrap_server", None) or getattr(args, "bootstrap_controller",
                                                                                    None))
        if line is None:
            raise
        print(f"kraftwire {args.command}: {line}", file=sys.stderr)
        return 1


def failure_line(exc: BaseException, servers: str | None) -> str | None:
    """What a user caused, in one line naming it and the fix; None for anything else (a bug: its traceback)."""
    from kraftwire.errors import ConfigError, KraftwireError, ProtocolError
    from kraftwire.server.edge.client import SaslLoginError

    secured = ("if its listener is SSL or SASL, give --command-config FILE with security.protocol and its "
               "ssl.truststore.location, sasl.mechanism and sasl.jaas.config")
    where = servers or "the server"
    if isinstance(exc, ConfigError):
        return str(exc)
    if isinstance(exc, SaslLoginError):
        return (f"login to {where} failed: {exc} (check sasl.mechanism and the username and password in "
                "sasl.jaas.config)")
    if isinstance(exc, ssl.SSLError):
        return (f"the TLS handshake with {where} failed: {exc.reason or exc} (check security.protocol and "
                "ssl.truststore.location)")
    if isinstance(exc, ProtocolError) and "closed" in str(exc):
        return f"{where} closed the connection before answering: {secured}"
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"{exc.filename}: no such file"
    if isinstance(exc, (ConnectionError, asyncio.TimeoutError, TimeoutError)) or (
            isinstance(exc, OSError) and exc.errno is not None):
        return f"cannot reach {where}: {exc.strerror or type(exc).__name__} (is it running? {secured})"
    if isinstance(exc, KraftwireError):
        return str(exc)
    return None


def _silence_stdout() -> None:
    """Standard output is a closed pipe: point it at /dev/null so the interpreter's last flush stays quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
