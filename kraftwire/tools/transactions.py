"""``kraftwire transactions --bootstrap-server HOST:PORT COMMAND``: Kafka's ``kafka-transactions.sh``
(``TransactionsCommand``), its commands, flags, tables and error messages, on kraftwire's own client.

* ``list [--duration-filter MS]``: ListTransactions to every broker (each answers for the ``__transaction_state``
  partitions it leads); Kafka's table ``TransactionalId Coordinator ProducerId TransactionState``, by broker id.
* ``describe --transactional-id X``: FindCoordinator (key type 1), then DescribeTransactions at the coordinator;
  Kafka's table ``CoordinatorId TransactionalId ProducerId ProducerEpoch TransactionState TransactionTimeoutMs
  CurrentTransactionStartTimeMs TransactionDurationMs TopicPartitions`` (``None`` for a transaction not started).
* ``describe-producers --topic T --partition P [--broker-id B]``: DescribeProducers to the partition's leader (or to
  broker B, any replica); Kafka's table ``ProducerId ProducerEpoch LatestCoordinatorEpoch LastSequence LastTimestamp
  CurrentTransactionStartOffset`` (``-1`` for no marker yet, ``None`` for no open transaction).
* ``abort --topic T --partition P (--start-offset O | --producer-id I --producer-epoch E --coordinator-epoch C)``:
  Kafka's ``Admin.abortTransaction``, an ABORT marker (WriteTxnMarkers, which needs ALTER or CLUSTER_ACTION on the
  cluster) sent to the partition's leader; with ``--start-offset`` the producer whose open transaction starts there
  is found with DescribeProducers first (its coordinator epoch, or 0 when it has none). Prints nothing on success.
* ``find-hanging (--broker-id B | --topic T [--partition P]) [--max-transaction-timeout MIN]``: the open
  transactions (DescribeProducers over the partitions: the one named, the topic's, or every partition with a replica
  on B, in batches of 500) whose last write is older than the timeout (minutes, 15 by default), less those the
  coordinator still expects to end — their producer id is listed (ListTransactions with a producer id filter) and its
  transaction (DescribeTransactions) still names the partition. Kafka's table ``Topic Partition ProducerId
  ProducerEpoch CoordinatorEpoch StartOffset LastTimestamp Duration(min)``.
* ``forceTerminateTransaction --transactionalId X`` (KIP-939, Kafka 4.1; the name and flag as Kafka's PR #19276
  has them): Kafka's ``Admin.fenceProducers`` — FindCoordinator, then InitProducerId for X without a producer id or
  epoch, so the coordinator bumps the epoch and aborts X's open transaction. Prints nothing on success; the failure
  messages are ``FenceProducersHandler``'s after a ``Failed to force terminate transactionalId `X``` prefix (the
  prefix is kraftwire's wording: the stored Kafka source predates the command).

As Kafka's admin client, a request for a partition is sent again (its leader looked up again) while it is answered
NOT_LEADER_OR_FOLLOWER or UNKNOWN_TOPIC_OR_PARTITION, until ``--timeout`` (kraftwire's; Kafka's tool waits for
``default.api.timeout.ms``). Tables are ``ToolsUtils.prettyPrintTable``'s: each cell padded to its column's width and
followed by a tab. A failure prints Kafka's ``Failed to ...: <message>. Enable debug logging for additional detail.``
(or, for a usage error, Kafka's bare message) on standard error and exits 1. ``--list``, ``--describe`` and
``--abort`` are accepted as spellings of the subcommands (issue #20 names them so).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

from kraftwire import error_codes as ec
from kraftwire.java_order import hashmap_order, topic_partition_hash
from kraftwire.tools.admin import add_bootstrap_arguments, connect

RETRIABLE = (ec.COORDINATOR_NOT_AVAILABLE, ec.NOT_COORDINATOR, ec.COORDINATOR_LOAD_IN_PROGRESS)
RETRY_BACKOFF_S = 0.1
#: find-hanging asks for at most this many topics or partitions at once (Kafka's MAX_BATCH_SIZE)
MAX_BATCH_SIZE = 500
COMMANDS = ("list", "describe", "describe-producers", "abort", "find-hanging", "forceTerminateTransaction")
#: the transaction timeout a fencing InitProducerId carries (Kafka's admin: its request.timeout.ms default)
FENCE_TXN_TIMEOUT_MS = 30_000
LIST_HEADERS = ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
DESCRIBE_HEADERS = ["CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
                    "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs",
                    "TopicPartitions"]
PRODUCERS_HEADERS = ["ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp",
                     "CurrentTransactionStartOffset"]
HANGING_HEADERS = ["Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                   "LastTimestamp", "Duration(min)"]
#: WriteTxnMarkers answers after which Kafka's AbortTransactionHandler looks the leader up again
ABORT_RETRIABLE = (ec.NOT_LEADER_OR_FOLLOWER, ec.REPLICA_NOT_AVAILABLE, ec.BROKER_NOT_AVAILABLE,
                   ec.UNKNOWN_TOPIC_OR_PARTITION)
#: Metadata partition errors Kafka's PartitionLeaderStrategy retries
LOOKUP_RETRIABLE = (ec.NOT_LEADER_OR_FOLLOWER, ec.REPLICA_NOT_AVAILABLE, ec.LEADER_NOT_AVAILABLE,
                    ec.BROKER_NOT_AVAILABLE, ec.KAFKA_STORAGE_ERROR, ec.UNKNOWN_TOPIC_OR_PARTITION)


class ToolError(Exception):
    """A failure printed as Kafka's ``printErrorAndExit(message, cause)``: the message, then the debug hint."""

    hint = True


class UsageError(ToolError):
    """Kafka's ``printErrorAndExit(message)``: the message alone."""

    hint = False


class Failed(Exception):
    """A partition's request failed for good: the message of Kafka's exception."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_arguments(parser)
    parser.add_argument("--timeout", type=int, default=10_000, help="milliseconds to wait for the answers")
    parser.add_argument("--list", action="store_true", help="the same as the list command")
    parser.add_argument("--describe", action="store_true", help="the same as the describe command")
    parser.add_argument("--abort", action="store_true", help="the same as the abort command")
    parser.add_argument("--transactional-id", dest="transactional_id", help="with --describe: the transactional id")
    parser.add_argument("--duration-filter", dest="duration_filter", type=int, default=None,
                        help="with --list: only transactions running longer than this many milliseconds")
    for flag, kind in (("--topic", str), ("--partition", int), ("--start-offset", int), ("--producer-id", int),
                       ("--producer-epoch", int), ("--coordinator-epoch", int)):
        parser.add_argument(flag, type=kind, default=None, help=f"with --abort: as {flag} of the abort command")
    parser.set_defaults(broker_id=None, max_transaction_timeout=15)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    keep = argparse.SUPPRESS  # a subcommand's flag left out keeps what the top level says
    lister = sub.add_parser("list", help="list transactions")
    lister.add_argument("--duration-filter", dest="duration_filter", type=int, default=keep,
                        help="Duration (in millis) to filter by: if < 0, all transactions will be returned; "
                             "otherwise, only transactions running longer than this duration will be returned")
    describer = sub.add_parser("describe", help="describe the state of an active transactional-id",
                               description="Describe the state of an active transactional-id.")
    describer.add_argument("--transactional-id", dest="transactional_id", required=True, help="transactional id")
    producers = sub.add_parser("describe-producers",
                               help="describe the states of active producers for a topic partition")
    producers.add_argument("--broker-id", type=int, default=keep,
                           help="optional broker id to describe the producer state on a specific replica")
    producers.add_argument("--topic", required=True, help="topic name")
    producers.add_argument("--partition", type=int, required=True, help="partition number")
    abort = sub.add_parser("abort", help="abort a hanging transaction (requires administrative privileges)")
    abort.add_argument("--topic", required=True, help="topic name")
    abort.add_argument("--partition", type=int, required=True, help="partition number")
    newer = abort.add_argument_group("Brokers on versions 3.0 and above", "For newer brokers, only the start offset "
                                     "of the transaction to be aborted is required")
    newer.add_argument("--start-offset", type=int, default=keep, help="start offset of the transaction to abort")
    older = abort.add_argument_group("Brokers on versions older than 3.0",
                                     "For older brokers, you must provide all of these arguments")
    older.add_argument("--producer-id", type=int, default=keep, help="producer id")
    older.add_argument("--producer-epoch", type=int, default=keep, help="producer epoch")
    older.add_argument("--coordinator-epoch", type=int, default=keep, help="coordinator epoch")
    hanging = sub.add_parser("find-hanging", help="find hanging transactions")
    hanging.add_argument("--broker-id", type=int, default=keep, help="broker id to search for hanging transactions")
    hanging.add_argument("--max-transaction-timeout", type=int, default=keep,
                         help="maximum transaction timeout in minutes to limit the scope of the search (15 minutes "
                              "by default)")
    hanging.add_argument("--topic", default=keep,
                         help="topic name to limit search to (required if --partition is specified)")
    hanging.add_argument("--partition", type=int, default=keep, help="partition number")
    terminate = sub.add_parser("forceTerminateTransaction",
                               help="Force abort an ongoing transaction on transactionalId")
    terminate.add_argument("--transactionalId", dest="terminate_id", required=True,
                           help="transactional id of the transaction to terminate")


def pretty_table(headers: list[str], rows: list[list[str]]) -> str:
    """Kafka's ``ToolsUtils.prettyPrintTable``."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w_, len(cell)) for w_, cell in zip(widths, row)]
    return "".join("".join(cell.ljust(w_) + "\t" for cell, w_ in zip(row, widths)) + "\n"
                   for row in [headers, *rows])


def _message(error: int) -> str:
    return ec.java_exception(error).split(": ", 1)[-1]


def _tp(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def _java_optional(value) -> str:
    return "Optional.empty" if value is None else f"Optional[{value}]"


def _minutes(ms: int) -> int:
    """Java's ``TimeUnit.MILLISECONDS.toMinutes`` (truncates toward zero)."""
    return ms // 60_000 if ms >= 0 else -((-ms) // 60_000)


async def _retry(make, timeout_s: float):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        error, value = await make()
        if error not in RETRIABLE or loop.time() + RETRY_BACKOFF_S > deadline:
            return error, value
        await asyncio.sleep(RETRY_BACKOFF_S)


class Admin:
    """The tool's client: the bootstrap connection, the brokers' endpoints and one connection per broker asked."""

    def __init__(self, conn, tls, login, timeout_s: float) -> None:
        self.conn, self.tls, self.login, self.timeout_s = conn, tls, login, timeout_s
        self.endpoints: dict[int, tuple[str, int]] = {}
        self.links: dict[int, object] = {}

    async def close(self) -> None:
        for link in self.links.values():
            try:
                await link.close()
            except OSError:
                pass
        self.links.clear()

    async def metadata(self, topics: list[str] | None):
        """Metadata v12 for ``topics`` (None: all topics, internal ones included; []: brokers only)."""
        from kraftwire.ids import ZERO_UUID
        from kraftwire.protocol import messages as w

        M = w.MetadataRequest
        body = M(topics=None if topics is None else [M.MetadataRequestTopic(topic_id=ZERO_UUID, name=t)
                                                     for t in topics], allow_auto_topic_creation=False)
        md = await self.conn.request(body, 12, timeout=self.timeout_s)
        self.endpoints.update({b.node_id: (b.host, b.port) for b in md.brokers})
        return md

    async def broker(self, broker_id: int):
        """A connection to ``broker_id`` (None when the metadata does not know it)."""
        from kraftwire.server.edge.client import KafkaConnection

        link = self.links.get(broker_id)
        if link is not None:
            return link
        if broker_id not in self.endpoints:
            await self.metadata([])
        if broker_id not in self.endpoints:
            return None
        host, port = self.endpoints[broker_id]
        link = await KafkaConnection.open(host, port, timeout=self.timeout_s, client_id="transactions",
                                          ssl_context=self.tls, sasl=self.login)
        self.links[broker_id] = link
        return link

    async def ask(self, broker_id: int, body, version: int):
        """``body`` to ``broker_id``; None when the broker is unknown or the exchange failed (asked again later)."""
        from kraftwire.errors import ProtocolError

        try:
            link = await self.broker(broker_id)
            if link is None:
                return None
            return await link.request(body, version, timeout=self.timeout_s)
        except (OSError, asyncio.TimeoutError, ProtocolError):
            stale = self.links.pop(broker_id, None)
            if stale is not None:
                try:
                    await stale.close()
                except OSError:
                    pass
            return None

    async def leaders(self, partitions: set[tuple[str, int]]) -> tuple[dict, dict]:
        """Kafka's ``PartitionLeaderStrategy``: (partition -> leader id for those with one, partition -> failure
        message for those that failed); the rest are looked up again."""
        md = await self.metadata(sorted({t for t, _ in partitions}))
        mapped, failed = {}, {}
        for t in md.topics:
            mine = sorted(p for p in partitions if p[0] == t.name)
            if t.error_code == ec.TOPIC_AUTHORIZATION_FAILED:
                failed.update({p: f"Failed to fetch metadata for partition {_tp(*p)} due to topic authorization "
                                  "failure" for p in mine})
            elif t.error_code == ec.INVALID_TOPIC_EXCEPTION:
                failed.update({p: f"Failed to fetch metadata for partition {_tp(*p)} due to invalid topic "
                                  f"`{t.name}`" for p in mine})
            elif t.error_code and t.error_code not in (ec.UNKNOWN_TOPIC_OR_PARTITION, ec.LEADER_NOT_AVAILABLE,
                                                       ec.BROKER_NOT_AVAILABLE):
                failed.update({p: f"Failed to fetch metadata for partition {_tp(*p)} due to unexpected error for "
                                  f"topic `{t.name}`" for p in mine})
            elif not t.error_code:
                for pm in t.partitions:
                    p = (t.name, pm.partition_index)
                    if p not in partitions:
                        continue
                    if pm.error_code and pm.error_code not in LOOKUP_RETRIABLE:
                        failed[p] = f"Unexpected error during metadata lookup for {_tp(*p)}"
                    elif not pm.error_code and pm.leader_id >= 0:
                        mapped[p] = pm.leader_id
        return mapped, failed

    # ------------------------------------------------------------------------------------------------ DescribeProducers
    async def describe_producers(self, partitions: list[tuple[str, int]], broker_id: int | None) -> dict:
        """Kafka's ``Admin.describeProducers``: partition -> its active producers (DescribeProducers' ProducerState);
        raises ``Failed`` (with the partition) for the first partition that fails for good or is still unanswered
        at the timeout."""
        from kraftwire.protocol import messages as w

        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        pending, done = set(partitions), {}
        while True:
            if broker_id is not None:
                routes = {p: broker_id for p in pending}
            else:
                routes, failed = await self.leaders(pending)
                for p, message in sorted(failed.items()):
                    raise Failed(p, message)
            by_broker: dict[int, list[tuple[str, int]]] = {}
            for p, b in routes.items():
                by_broker.setdefault(b, []).append(p)
            for b, parts in sorted(by_broker.items()):
                names: dict[str, list[int]] = {}
                for t, i in sorted(parts):
                    names.setdefault(t, []).append(i)
                R = w.DescribeProducersRequest
                answer = await self.ask(b, R(topics=[R.TopicRequest(name=t, partition_indexes=ix)
                                                     for t, ix in names.items()]), 0)
                if answer is None:
                    continue
                for t in answer.topics:
                    for pr in t.partitions:
                        p = (t.name, pr.partition_index)
                        if p not in pending:
                            continue
                        if pr.error_code == ec.NONE:
                            done[p] = pr.active_producers
                            pending.discard(p)
                            continue
                        message = _producers_failure(p, pr.error_code, pr.error_message, broker_id)
                        if message is not None:
                            raise Failed(p, message)
            if not pending:
                return done
            if loop.time() + RETRY_BACKOFF_S > deadline:
                api = "DESCRIBE_PRODUCERS" if broker_id is not None else "METADATA"
                raise Failed(min(pending), f"Timed out waiting for a node assignment. Call: "
                                           f"describeProducers(api={api})")
            await asyncio.sleep(RETRY_BACKOFF_S)

    # ------------------------------------------------------------------------------------------------ abort
    async def abort(self, topic: str, partition: int, producer_id: int, producer_epoch: int,
                    coordinator_epoch: int) -> None:
        """Kafka's ``Admin.abortTransaction``: an ABORT marker for the producer, WriteTxnMarkers v1 to the
        partition's leader; raises ``Failed`` with Kafka's message."""
        from kraftwire.protocol import messages as w

        spec = (f"AbortTransactionSpec(topicPartition={_tp(topic, partition)}, producerId={producer_id}, "
                f"producerEpoch={producer_epoch}, coordinatorEpoch={coordinator_epoch})")
        M = w.WriteTxnMarkersRequest
        body = M(markers=[M.WritableTxnMarker(producer_id=producer_id, producer_epoch=producer_epoch,
                                              transaction_result=False, coordinator_epoch=coordinator_epoch,
                                              topics=[M.WritableTxnMarkerTopic(name=topic,
                                                                               partition_indexes=[partition])])])
        p = (topic, partition)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        while True:
            mapped, failed = await self.leaders({p})
            if p in failed:
                raise Failed(p, failed[p])
            answer = None if p not in mapped else await self.ask(mapped[p], body, 1)
            if answer is not None:
                results = [(m.producer_id, t.name, x.partition_index, x.error_code)
                           for m in answer.markers for t in m.topics for x in t.partitions]
                if len(results) != 1 or results[0][:3] != (producer_id, topic, partition):
                    raise Failed(p, f"WriteTxnMarkers response included unexpected entries: {results} (expected to "
                                    f"find exactly one entry with producerId {producer_id} and topic partition "
                                    f"{_tp(topic, partition)})")
                error = results[0][3]
                if error == ec.NONE:
                    return
                if error not in ABORT_RETRIABLE:
                    raise Failed(p, _abort_failure(spec, error, coordinator_epoch))
            if loop.time() + RETRY_BACKOFF_S > deadline:
                raise Failed(p, "Timed out waiting for a node assignment. Call: abortTransaction(api=METADATA)")
            await asyncio.sleep(RETRY_BACKOFF_S)

    # ------------------------------------------------------------------------------------------------ transactions
    async def list_transactions(self, duration: int | None, producer_ids=()) -> dict[int, list]:
        """ListTransactions to every broker: broker id -> its TransactionState entries; raises ``Failed``."""
        from kraftwire.protocol import messages as w

        body = w.ListTransactionsRequest(state_filters=[], producer_id_filters=sorted(producer_ids),
                                         duration_filter=-1 if duration is None else duration)
        out = {}
        await self.metadata([])
        for broker in sorted(self.endpoints):
            link = await self.broker(broker)

            async def ask(link=link):
                answer = await link.request(body, 1, timeout=self.timeout_s)
                return answer.error_code, answer
            error, answer = await _retry(ask, self.timeout_s)
            if error:
                raise Failed(None, _message(error))
            out[broker] = answer.transaction_states
        return out

    async def fence(self, tid: str) -> tuple[int, int]:
        """Kafka's ``Admin.fenceProducers`` for one transactional id (``FenceProducersHandler``): InitProducerId at
        its coordinator, again while the coordinator loads, moves or finishes a transaction; (producer id, new
        epoch), or ``Failed``."""
        from kraftwire.protocol import messages as w

        again = (ec.COORDINATOR_LOAD_IN_PROGRESS, ec.CONCURRENT_TRANSACTIONS, ec.NOT_COORDINATOR,
                 ec.COORDINATOR_NOT_AVAILABLE)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        while True:
            found = await self.conn.request(w.FindCoordinatorRequest(key=tid, key_type=1), 3, timeout=self.timeout_s)
            error = found.error_code
            if not error:
                self.endpoints.setdefault(found.node_id, (found.host, found.port))
                answer = await self.ask(found.node_id, w.InitProducerIdRequest(
                    transactional_id=tid, transaction_timeout_ms=FENCE_TXN_TIMEOUT_MS, producer_id=-1,
                    producer_epoch=-1), 4)
                error = ec.COORDINATOR_NOT_AVAILABLE if answer is None else answer.error_code
                if not error:
                    return answer.producer_id, answer.producer_epoch
            if error == ec.CLUSTER_AUTHORIZATION_FAILED:
                raise Failed(error, f"InitProducerId request for transactionalId `{tid}` failed due to cluster "
                                    "authorization failure")
            if error == ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
                raise Failed(error, f"InitProducerId request for transactionalId `{tid}` failed due to "
                                    "transactional ID authorization failure")
            if error not in again:
                raise Failed(error, f"InitProducerId request for transactionalId `{tid}` failed due to unexpected "
                                    "error")
            if loop.time() + RETRY_BACKOFF_S > deadline:
                raise Failed(error, "Timed out waiting for a node assignment. Call: fenceProducer(api=FIND_COORDINATOR)")
            await asyncio.sleep(RETRY_BACKOFF_S)

    async def describe_transaction(self, tid: str):
        """(coordinator id, DescribeTransactions' TransactionState) of ``tid``; raises ``Failed``."""
        from kraftwire.protocol import messages as w

        async def ask():
            found = await self.conn.request(w.FindCoordinatorRequest(key=tid, key_type=1), 3, timeout=self.timeout_s)
            if found.error_code:
                return found.error_code, None
            if found.node_id not in self.endpoints:
                self.endpoints[found.node_id] = (found.host, found.port)
            link = await self.broker(found.node_id)
            answer = await link.request(w.DescribeTransactionsRequest(transactional_ids=[tid]), 0,
                                        timeout=self.timeout_s)
            state = answer.transaction_states[0]
            return state.error_code, (found.node_id, state)

        error, value = await _retry(ask, self.timeout_s)
        if error == ec.TRANSACTIONAL_ID_NOT_FOUND:
            raise Failed(ec.TRANSACTIONAL_ID_NOT_FOUND, f"DescribeTransactions request for transactionalId `{tid}` "
                                                        "failed because the ID could not be found")
        if error == ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
            raise Failed(error, f"DescribeTransactions request for transactionalId `{tid}` failed due to "
                                "authorization failure")
        if error:
            raise Failed(error, _message(error))
        return value


def _producers_failure(p, error: int, message: str | None, broker_id: int | None) -> str | None:
    """Kafka's ``DescribeProducersHandler`` for a partition's error: the failure's message, None to ask again."""
    if error == ec.NOT_LEADER_OR_FOLLOWER:
        if broker_id is None:
            return None
        return f"Failed to describe active producers for partition {_tp(*p)} on brokerId {broker_id}"
    if error == ec.UNKNOWN_TOPIC_OR_PARTITION:
        return None
    if error == ec.INVALID_TOPIC_EXCEPTION:
        return (f"Failed to fetch metadata for partition {_tp(*p)} due to invalid topic error: "
                f"{message if message else _message(error)}")
    if error == ec.TOPIC_AUTHORIZATION_FAILED:
        return (f"Failed to describe active producers for partition {_tp(*p)} due to authorization failure on topic "
                f"`{p[0]}`")
    return f"Failed to describe active producers for partition {_tp(*p)} due to unexpected error"


def _abort_failure(spec: str, error: int, coordinator_epoch: int) -> str:
    """Kafka's ``AbortTransactionHandler`` message for a WriteTxnMarkers error it does not retry."""
    if error == ec.CLUSTER_AUTHORIZATION_FAILED:
        return f"WriteTxnMarkers request with {spec} failed due to cluster authorization error"
    if error == ec.INVALID_PRODUCER_EPOCH:
        return f"WriteTxnMarkers request with {spec} failed due an invalid producer epoch"
    if error == ec.TRANSACTION_COORDINATOR_FENCED:
        return (f"WriteTxnMarkers request with {spec} failed since the provided coordinator epoch "
                f"{coordinator_epoch} has been fenced by the active coordinator")
    return f"WriteTxnMarkers request with {spec} failed due to unexpected error: {_message(error)}"


# ---------------------------------------------------------------------------------------------------- the commands
async def list_transactions(admin: Admin, duration: int | None) -> str:
    try:
        by_broker = await admin.list_transactions(duration)
    except Failed as exc:
        raise ToolError(f"Failed to list transactions: {exc.args[1]}") from None
    rows = [[s.transactional_id, str(broker), str(s.producer_id), s.transaction_state]
            for broker, states in by_broker.items() for s in states]
    return pretty_table(LIST_HEADERS, rows)


async def describe_transaction(admin: Admin, tid: str, now_ms: int) -> str:
    try:
        coordinator, s = await admin.describe_transaction(tid)
    except Failed as exc:
        raise ToolError(f"Failed to describe transaction state of transactional-id `{tid}`: {exc.args[1]}") from None
    started = s.transaction_start_time_ms
    start_cell, duration_cell = ("None", "None") if started < 0 else (str(started), str(now_ms - started))
    # Kafka's admin client collects them in a HashSet: its order, whatever the broker's
    parts = ",".join(f"{t}-{p}" for t, p in hashmap_order([(t.topic, p) for t in s.topics for p in t.partitions],
                                                          lambda tp: topic_partition_hash(*tp)))
    return pretty_table(DESCRIBE_HEADERS, [[str(coordinator), tid, str(s.producer_id), str(s.producer_epoch),
                                            s.transaction_state, str(s.transaction_timeout_ms), start_cell,
                                            duration_cell, parts]])


async def describe_producers(admin: Admin, topic: str, partition: int, broker_id: int | None) -> str:
    p = (topic, partition)
    try:
        producers = (await admin.describe_producers([p], broker_id))[p]
    except Failed as exc:
        where = "leader" if broker_id is None else f"broker {broker_id}"
        raise ToolError(f"Failed to describe producers for partition {_tp(*p)} on {where}: {exc.args[1]}") from None
    rows = [[str(s.producer_id), str(s.producer_epoch), str(s.coordinator_epoch if s.coordinator_epoch >= 0 else -1),
             str(s.last_sequence), str(s.last_timestamp),
             str(s.current_txn_start_offset) if s.current_txn_start_offset >= 0 else "None"] for s in producers]
    return pretty_table(PRODUCERS_HEADERS, rows)


async def abort_transaction(admin: Admin, args) -> str:
    topic, partition = args.topic, args.partition
    p = (topic, partition)
    if args.start_offset is None and args.producer_id is None:
        raise UsageError("The transaction to abort must be identified either with --start-offset (for brokers on 3.0 "
                         "or above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older "
                         "brokers)")
    if args.start_offset is None:
        if args.producer_epoch is None:
            raise UsageError("Missing required argument --producer-epoch")
        if args.coordinator_epoch is None:
            raise UsageError("Missing required argument --coordinator-epoch")
        # a transaction hanging before its producer's first marker has coordinator epoch -1 in DescribeProducers;
        # 0 is at or below any coordinator epoch (Kafka's rule)
        spec = (args.producer_id, args.producer_epoch, max(args.coordinator_epoch, 0))
    else:
        try:
            producers = (await admin.describe_producers([p], None))[p]
        except Failed as exc:
            raise ToolError(f"Failed to validate producer state for partition {_tp(*p)}: {exc.args[1]}") from None
        found = [s for s in producers if s.current_txn_start_offset >= 0
                 and s.current_txn_start_offset == args.start_offset]
        if not found:
            raise UsageError(f"Could not find any open transactions starting at offset {args.start_offset} on "
                             f"partition {_tp(*p)}")
        s = found[0]
        spec = (s.producer_id, _short(s.producer_epoch), max(s.coordinator_epoch, 0))
    try:
        await admin.abort(topic, partition, *spec)
    except Failed as exc:
        raise ToolError(f"Failed to abort transaction AbortTransactionSpec(topicPartition={_tp(*p)}, "
                        f"producerId={spec[0]}, producerEpoch={spec[1]}, coordinatorEpoch={spec[2]}): "
                        f"{exc.args[1]}") from None
    return ""


async def force_terminate(admin: Admin, tid: str) -> str:
    try:
        await admin.fence(tid)
    except Failed as exc:
        raise ToolError(f"Failed to force terminate transactionalId `{tid}`: {exc.args[1]}") from None
    return ""


def _short(value: int) -> int:
    """Java's ``(short)`` cast."""
    return ((value + (1 << 15)) % (1 << 16)) - (1 << 15)


async def find_hanging(admin: Admin, args, now=lambda: int(time.time() * 1000)) -> str:
    broker_id, topic, partition = args.broker_id, args.topic, args.partition
    if topic is None and broker_id is None:
        raise UsageError("The `find-hanging` command requires either --topic or --broker-id to limit the scope of "
                         "the search")
    if partition is not None and topic is None:
        raise UsageError("The --partition argument requires --topic to be provided")
    max_timeout_ms = args.max_transaction_timeout * 60_000
    partitions = await _partitions_to_search(admin, topic, partition, broker_id)
    candidates: list[tuple[tuple[str, int], object]] = []
    for i in range(0, len(partitions), MAX_BATCH_SIZE):
        batch = partitions[i:i + MAX_BATCH_SIZE]
        try:
            states = await admin.describe_producers(batch, broker_id)
        except Failed as exc:
            raise ToolError(f"Failed to describe producers for {len(batch)} partitions on broker "
                            f"{_java_optional(broker_id)}: {exc.args[1]}") from None
        now_ms = now()
        for p in batch:
            for s in states[p]:
                if s.current_txn_start_offset >= 0 and now_ms - s.last_timestamp > max_timeout_ms:
                    candidates.append((p, s))
    hanging = []
    if candidates:
        by_producer: dict[int, list] = {}
        for p, s in candidates:
            by_producer.setdefault(s.producer_id, []).append((p, s))
        try:
            listed = await admin.list_transactions(None, by_producer)
        except Failed as exc:
            raise ToolError(f"Failed to list transactions for {len(by_producer)} producers: {exc.args[1]}") from None
        tids = {s.producer_id: s.transactional_id for states in listed.values() for s in states
                if s.producer_id in by_producer}
        descriptions = {}
        for tid in sorted(set(tids.values())):
            try:
                descriptions[tid] = (await admin.describe_transaction(tid))[1]
            except Failed as exc:
                if exc.args[0] != ec.TRANSACTIONAL_ID_NOT_FOUND:
                    raise ToolError(f"Failed to describe {len(set(tids.values()))} transactions: "
                                    f"{exc.args[1]}") from None
                descriptions[tid] = None
        for pid, opened in sorted(by_producer.items()):
            described = descriptions.get(tids[pid]) if pid in tids else None
            if described is None:
                hanging.extend(opened)
                continue
            # the coordinator still expects to end the transaction in a partition it names (ongoing, or its marker
            # not yet written); any other open transaction of the producer is hanging
            named = {(t.topic, i) for t in described.topics for i in t.partitions}
            hanging.extend((p, s) for p, s in opened if p not in named)
    now_ms = now()
    rows = [[p[0], str(p[1]), str(s.producer_id), str(s.producer_epoch),
             str(s.coordinator_epoch if s.coordinator_epoch >= 0 else -1), str(s.current_txn_start_offset),
             str(s.last_timestamp), str(_minutes(now_ms - s.last_timestamp))] for p, s in hanging]
    return pretty_table(HANGING_HEADERS, rows)


async def _partitions_to_search(admin: Admin, topic: str | None, partition: int | None,
                                broker_id: int | None) -> list[tuple[str, int]]:
    if topic is not None and partition is not None:
        return [(topic, partition)]
    if topic is not None:
        topics = [topic]
    else:
        try:
            topics = sorted(t.name for t in (await admin.metadata(None)).topics if not t.error_code)
        except (OSError, asyncio.TimeoutError) as exc:
            raise ToolError(f"Failed to list topics: {exc or type(exc).__name__}") from None
    out = []
    for i in range(0, len(topics), MAX_BATCH_SIZE):
        batch = topics[i:i + MAX_BATCH_SIZE]
        md = await admin.metadata(batch)
        for t in md.topics:
            if t.error_code:
                raise ToolError(f"Failed to describe {len(batch)} topics: {_message(t.error_code)}")
            for pm in sorted(t.partitions, key=lambda pm: pm.partition_index):
                if broker_id is None or broker_id in pm.replica_nodes:
                    out.append((t.name, pm.partition_index))
    return out


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    flags = [c for c, on in (("list", args.list), ("describe", args.describe), ("abort", args.abort)) if on]
    command = args.command or (flags[0] if len(flags) == 1 else None)
    if command is None or len(flags) > 1 or (args.command and flags and flags != [args.command]):
        print(f"kafka-transactions.sh: error: one command of {', '.join(COMMANDS)} is required", file=sys.stderr)
        return 1
    if command == "describe" and not args.transactional_id:
        print("kafka-transactions.sh: error: argument --transactional-id is required", file=sys.stderr)
        return 1
    if command == "abort":
        for flag in ("topic", "partition"):
            if getattr(args, flag) is None:
                print(f"kafka-transactions.sh: error: argument --{flag} is required", file=sys.stderr)
                return 1
    if args.command_config is not None and not os.access(args.command_config, os.R_OK):
        print(f"Failed to load admin client properties: {args.command_config}. Enable debug logging for additional "
              "detail.", file=sys.stderr)  # Kafka's line for a file it cannot read
        return 1
    try:
        tls, login = client_security(args.command_config)
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    try:
        out = asyncio.run(_run(args, command, tls, login))
    except ToolError as exc:
        hint = ". Enable debug logging for additional detail." if exc.hint else ""
        print(f"{exc}{hint}", file=sys.stderr)
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
    admin = Admin(conn, tls, login, timeout_s)
    try:
        if command == "list":
            return await list_transactions(admin, args.duration_filter)
        if command == "describe":
            return await describe_transaction(admin, args.transactional_id, int(time.time() * 1000))
        if command == "describe-producers":
            return await describe_producers(admin, args.topic, args.partition, args.broker_id)
        if command == "abort":
            return await abort_transaction(admin, args)
        if command == "forceTerminateTransaction":
            return await force_terminate(admin, args.terminate_id)
        return await find_hanging(admin, args)
    finally:
        await admin.close()
        await conn.close()
