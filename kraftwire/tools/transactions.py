"""``kraftwire transactions --bootstrap-server HOST:PORT (list [--duration-filter MS] | describe --transactional-id X)``:
Kafka's ``kafka-transactions.sh`` (``TransactionsCommand``), its flags and its output, on kraftwire's own client.

* ``list``: ListTransactions to every broker (each answers for the ``__transaction_state`` partitions it leads);
  Kafka's table ``TransactionalId Coordinator ProducerId TransactionState``, by broker id.
* ``describe --transactional-id X``: FindCoordinator (key type 1), then DescribeTransactions at the coordinator;
  Kafka's table ``CoordinatorId TransactionalId ProducerId ProducerEpoch TransactionState TransactionTimeoutMs
  CurrentTransactionStartTimeMs TransactionDurationMs TopicPartitions`` (``None`` for a transaction not started).

Tables are ``ToolsUtils.prettyPrintTable``'s: each cell padded to its column's width and followed by a tab. A
failure prints Kafka's ``Failed to ...: <message>. Enable debug logging for additional detail.`` on standard error
and exits 1. ``--list`` and ``--describe`` are accepted as spellings of the subcommands (issue #20 names them so).
Not here: ``describe-producers``, ``abort``, ``find-hanging`` (they need DescribeProducers, which is not served).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from kraftwire import error_codes as ec
from kraftwire.tools.admin import add_bootstrap_arguments, connect

RETRIABLE = (ec.COORDINATOR_NOT_AVAILABLE, ec.NOT_COORDINATOR, ec.COORDINATOR_LOAD_IN_PROGRESS)
RETRY_BACKOFF_S = 0.1
LIST_HEADERS = ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
DESCRIBE_HEADERS = ["CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
                    "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs",
                    "TopicPartitions"]


class ToolError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_arguments(parser)
    parser.add_argument("--timeout", type=int, default=10_000, help="milliseconds to wait for the answers")
    parser.add_argument("--list", action="store_true", help="the same as the list command")
    parser.add_argument("--describe", action="store_true", help="the same as the describe command")
    parser.add_argument("--transactional-id", dest="transactional_id", help="with --describe: the transactional id")
    parser.add_argument("--duration-filter", dest="duration_filter", type=int, default=None,
                        help="with --list: only transactions running longer than this many milliseconds")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    lister = sub.add_parser("list", help="list transactions")
    lister.add_argument("--duration-filter", dest="duration_filter", type=int, default=argparse.SUPPRESS,
                        help="Duration (in millis) to filter by: if < 0, all transactions will be returned; "
                             "otherwise, only transactions running longer than this duration will be returned")
    describer = sub.add_parser("describe", help="describe the state of an active transactional-id")
    describer.add_argument("--transactional-id", dest="transactional_id", required=True, help="transactional id")


def pretty_table(headers: list[str], rows: list[list[str]]) -> str:
    """Kafka's ``ToolsUtils.prettyPrintTable``."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w_, len(cell)) for w_, cell in zip(widths, row)]
    return "".join("".join(cell.ljust(w_) + "\t" for cell, w_ in zip(row, widths)) + "\n"
                   for row in [headers, *rows])


def _message(error: int) -> str:
    return ec.java_exception(error).split(": ", 1)[-1]


async def _retry(make, timeout_s: float):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        error, value = await make()
        if error not in RETRIABLE or loop.time() + RETRY_BACKOFF_S > deadline:
            return error, value
        await asyncio.sleep(RETRY_BACKOFF_S)


async def _brokers(conn, timeout_s: float) -> dict[int, tuple[str, int]]:
    from kraftwire.protocol import messages as w

    md = await conn.request(w.MetadataRequest(topics=[], allow_auto_topic_creation=False), 12, timeout=timeout_s)
    return {b.node_id: (b.host, b.port) for b in md.brokers}


async def _open(host: str, port: int, tls, login, timeout_s: float):
    from kraftwire.server.client import KafkaConnection

    return await KafkaConnection.open(host, port, timeout=timeout_s, client_id="transactions", ssl_context=tls,
                                      sasl=login)


async def list_transactions(conn, tls, login, timeout_s: float, duration: int | None) -> str:
    from kraftwire.protocol import messages as w

    rows = []
    body = w.ListTransactionsRequest(state_filters=[], producer_id_filters=[],
                                     duration_filter=-1 if duration is None else duration)
    for broker, (host, port) in sorted((await _brokers(conn, timeout_s)).items()):
        other = await _open(host, port, tls, login, timeout_s)
        try:
            async def ask():
                answer = await other.request(body, 1, timeout=timeout_s)
                return answer.error_code, answer
            error, answer = await _retry(ask, timeout_s)
        finally:
            await other.close()
        if error:
            raise ToolError(f"Failed to list transactions: {_message(error)}")
        for s in answer.transaction_states:
            rows.append([s.transactional_id, str(broker), str(s.producer_id), s.transaction_state])
    return pretty_table(LIST_HEADERS, rows)


async def describe_transaction(conn, tls, login, timeout_s: float, tid: str, now_ms: int) -> str:
    from kraftwire.protocol import messages as w

    failed = f"Failed to describe transaction state of transactional-id `{tid}`"
    brokers: dict[int, tuple[str, int]] = {}

    async def ask():
        found = await conn.request(w.FindCoordinatorRequest(key=tid, key_type=1), 3, timeout=timeout_s)
        if found.error_code:
            return found.error_code, None
        if found.node_id not in brokers:
            brokers.update(await _brokers(conn, timeout_s))
        host, port = brokers.get(found.node_id, (found.host, found.port))
        coord = await _open(host, port, tls, login, timeout_s)
        try:
            answer = await coord.request(w.DescribeTransactionsRequest(transactional_ids=[tid]), 0,
                                         timeout=timeout_s)
        finally:
            await coord.close()
        state = answer.transaction_states[0]
        return state.error_code, (found.node_id, state)

    error, value = await _retry(ask, timeout_s)
    if error == ec.TRANSACTIONAL_ID_NOT_FOUND:
        raise ToolError(f"{failed}: DescribeTransactions request for transactionalId `{tid}` failed because the ID "
                        "could not be found")
    if error == ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
        raise ToolError(f"{failed}: DescribeTransactions request for transactionalId `{tid}` failed due to "
                        "authorization failure")
    if error:
        raise ToolError(f"{failed}: {_message(error)}")
    coordinator, s = value
    started = s.transaction_start_time_ms
    start_cell, duration_cell = ("None", "None") if started < 0 else (str(started), str(now_ms - started))
    parts = ",".join(f"{t.topic}-{p}" for t in s.topics for p in t.partitions)
    return pretty_table(DESCRIBE_HEADERS, [[str(coordinator), tid, str(s.producer_id), str(s.producer_epoch),
                                            s.transaction_state, str(s.transaction_timeout_ms), start_cell,
                                            duration_cell, parts]])


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    command = args.command or ("list" if args.list else "describe" if args.describe else None)
    if command is None or (args.list and args.describe):
        print("kafka-transactions.sh: error: one command of list, describe is required", file=sys.stderr)
        return 1
    if command == "describe" and not args.transactional_id:
        print("kafka-transactions.sh: error: argument --transactional-id is required", file=sys.stderr)
        return 1
    try:
        tls, login = client_security(args.command_config)
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    try:
        out = asyncio.run(_run(args, command, tls, login))
    except ToolError as exc:
        print(f"{exc}. Enable debug logging for additional detail.", file=sys.stderr)
        return 1
    except (OSError, asyncio.TimeoutError) as exc:
        print(f"Failed to {command} transactions: {exc or type(exc).__name__}. Enable debug logging for additional "
              "detail.", file=sys.stderr)
        return 1
    sys.stdout.write(out)
    return 0


async def _run(args, command: str, tls, login) -> str:
    timeout_s = max(args.timeout / 1000.0, 1.0)
    conn = await connect(argparse.Namespace(bootstrap_server=args.bootstrap_server, timeout=timeout_s), tls, login)
    try:
        if command == "list":
            return await list_transactions(conn, tls, login, timeout_s, args.duration_filter)
        return await describe_transaction(conn, tls, login, timeout_s, args.transactional_id,
                                          int(time.time() * 1000))
    finally:
        await conn.close()
