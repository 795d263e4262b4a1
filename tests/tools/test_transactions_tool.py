"""``kraftwire transactions`` (kafka-transactions.sh) as a subprocess: ``list`` and ``describe --transactional-id``
against a KRaft broker in-process; ``describe-producers``, ``find-hanging`` and ``abort`` against a controller and
three brokers in-process (real sockets and files), on a hanging transaction a raw client leaves open — a
transactional batch the coordinator never heard of (partition verification off, as before KIP-890) — next to one the
coordinator knows; after ``abort`` the last stable offset moves past it and a confluent-kafka ``read_committed``
consumer reads on. The table layout is ``ToolsUtils.prettyPrintTable``'s (cells padded to the column's width, each
followed by a tab); the messages are Kafka's."""

from __future__ import annotations

import asyncio
import sys
import time


from harness import clients, processes
from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder
from kraftwire.server.edge.client import KafkaConnection
from kraftwire.tools.transactions import pretty_table
from server.test_kraft_node import Combined, _create, _online
from server.test_replication import Cluster, _until
from server.test_txn_coordinator import PROPS, FakeLeaders, _add, _coordinator, _init
from server.test_txn_partitions import _pids


async def _tool(port: int, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kraftwire", "transactions", "--bootstrap-server", f"127.0.0.1:{port}", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=processes.kraftwire_env())
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


def test_pretty_table_is_kafkas():
    assert pretty_table(["A", "Bee"], [["xyz", "1"]]) == "A  \tBee\t\nxyz\t1  \t\n"


def test_list_and_describe(tmp_path):
    c = Combined(tmp_path, extra=PROPS)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            node.txn_apis.markers.call = FakeLeaders().call
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                assert (await conn.request(_create("t"), 7)).topics[0].error_code == ec.NONE
                await _coordinator(conn, "tx-a")
                a = await _init(conn, "tx-a")
                b = await _init(conn, "tx-b")
                r = await conn.request(_add("tx-a", a.producer_id, 0, [("t", 0), ("t", 2)]), 3)
                assert r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0
            finally:
                await conn.close()
            code, out, err = await _tool(c.bport, "list")
            assert code == 0, err
            lines = out.splitlines()
            assert lines[0].split() == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
            assert [line.split() for line in lines[1:]] == [["tx-a", "1", str(a.producer_id), "Ongoing"],
                                                           ["tx-b", "1", str(b.producer_id), "Empty"]]
            assert lines[0].startswith("TransactionalId\t")
            code, out, err = await _tool(c.bport, "describe", "--transactional-id", "tx-a")
            assert code == 0, err
            head, row = [line.split("\t")[:-1] for line in out.splitlines()]
            assert [h.strip() for h in head] == ["CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch",
                                                 "TransactionState", "TransactionTimeoutMs",
                                                 "CurrentTransactionStartTimeMs", "TransactionDurationMs",
                                                 "TopicPartitions"]
            cells = [x.strip() for x in row]
            assert cells[:6] == ["1", "tx-a", str(a.producer_id), "0", "Ongoing", "60000"]
            # the partitions in the order of the HashSet Kafka's admin client puts them in
            assert int(cells[6]) > 0 and int(cells[7]) >= 0 and cells[8] == "t-2,t-0"
            code, out, err = await _tool(c.bport, "describe", "--transactional-id", "tx-b")
            assert code == 0 and out.splitlines()[1].split()[6:8] == ["None", "None"]
            code, out, err = await _tool(c.bport, "describe", "--transactional-id", "nope")
            assert code == 1 and err.strip() == (
                "Failed to describe transaction state of transactional-id `nope`: DescribeTransactions request for "
                "transactionalId `nope` failed because the ID could not be found. Enable debug logging for "
                "additional detail.")
            code, out, err = await _tool(c.bport, "--list")
            assert code == 0 and len(out.splitlines()) == 3
        finally:
            await node.shutdown()

    asyncio.run(main())


# ---------------------------------------------------------------------------------------------------- hanging
HANG_PROPS = ("transaction.state.log.replication.factor=3\ntransaction.state.log.min.isr=2\n"
              "transaction.state.log.num.partitions=3\noffsets.topic.replication.factor=3\n"
              "offsets.topic.num.partitions=3\ntransaction.partition.verification.enable=false\n")
CT = w.CreateTopicsRequest
P = w.ProduceRequest
L = w.ListOffsetsRequest


class TxnCluster(Cluster):
    def _common(self) -> str:
        return super()._common() + HANG_PROPS


def _topics(*specs):
    return CT(topics=[CT.CreatableTopic(name=n, num_partitions=parts, replication_factor=rf, assignments=[],
                                        configs=[]) for n, parts, rf in specs], timeout_ms=5000, validate_only=False)


def _batch(values, *, pid=-1, epoch=-1, seq=-1, transactional=False) -> bytes:
    b = RecordBatchBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=transactional)
    now = int(time.time() * 1000)
    for v in values:
        b.append(b"k", v, timestamp=now)
    return b.build()


def _produce(topic: str, index: int, records: bytes, tid: str | None = None):
    return P(transactional_id=tid, acks=-1, timeout_ms=5000, topic_data=[P.TopicProduceData(
        name=topic, partition_data=[P.PartitionProduceData(index=index, records=records)])])


async def _written(conn, request) -> int:
    r = (await conn.request(request, 9)).responses[0].partition_responses[0]
    assert r.error_code == ec.NONE, ec.name_of(r.error_code)
    return r.base_offset


def _rows(out: str) -> list[list[str]]:
    """A prettyPrintTable's rows (the header first), cells stripped; every line ends with a tab."""
    lines = out.splitlines()
    assert lines and all(line.endswith("\t") for line in lines), out
    return [[c.strip() for c in line.split("\t")[:-1]] for line in lines]


def test_describe_producers_find_hanging_and_abort(tmp_path):
    cluster = TxnCluster(tmp_path)

    async def main():
        await cluster.start()
        try:
            boot = cluster.port(1)
            conn = await KafkaConnection.open("127.0.0.1", boot)
            try:
                created = await conn.request(_topics(("hang", 2, 3), ("single", 1, 1)), 7)
                assert [t.error_code for t in created.topics] == [ec.NONE, ec.NONE]
                await _coordinator(conn, "tx-known")  # __transaction_state is created and loaded
            finally:
                await conn.close()
            await _until("leaders", lambda: all(
                cluster.nodes[cluster.partition(t, i).leader].replicas.get(t, i) is not None
                and cluster.nodes[cluster.partition(t, i).leader].replicas.get(t, i).state.role == "leader"
                for t, i in (("hang", 0), ("hang", 1), ("single", 0))))
            lead0, lead1 = cluster.partition("hang", 0).leader, cluster.partition("hang", 1).leader
            follower0 = next(b for b in (1, 2, 3) if b != lead0)
            outside = next(b for b in (1, 2, 3) if b not in cluster.partition("single", 0).replicas)

            conn = await KafkaConnection.open("127.0.0.1", cluster.port(lead0))
            try:
                # hang-0: a plain record, a transaction the coordinator never heard of, a plain record
                [ghost] = await _pids(conn, 1)
                assert await _written(conn, _produce("hang", 0, _batch([b"before"]))) == 0
                start = await _written(conn, _produce("hang", 0, _batch(
                    [b"ghost-1", b"ghost-2"], pid=ghost, epoch=0, seq=0, transactional=True), "ghost-app"))
                assert start == 1
                assert await _written(conn, _produce("hang", 0, _batch([b"after"]))) == 3
            finally:
                await conn.close()
            # hang-1: a transaction its coordinator knows (AddPartitionsToTxn first)
            conn = await KafkaConnection.open("127.0.0.1", boot)
            try:
                found = await _coordinator(conn, "tx-known")
                coord = await KafkaConnection.open("127.0.0.1", cluster.port(found.node_id))
                try:
                    known = await _init(coord, "tx-known")
                    added = await coord.request(_add("tx-known", known.producer_id, known.producer_epoch,
                                                     [("hang", 1)]), 3)
                    assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0
                finally:
                    await coord.close()
            finally:
                await conn.close()
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(lead1))
            try:
                assert await _written(conn, _produce("hang", 1, _batch(
                    [b"known"], pid=known.producer_id, epoch=known.producer_epoch, seq=0, transactional=True),
                    "tx-known")) == 0
            finally:
                await conn.close()
            # the open transaction holds the last stable offset at 1
            assert await asyncio.to_thread(clients.read_committed_to_end, boot, "hang", 0, "hang-reader") == [b"before"]

            headers = ["ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp",
                       "CurrentTransactionStartOffset"]
            code, out, err = await _tool(boot, "describe-producers", "--topic", "hang", "--partition", "0")
            assert code == 0, err
            rows = _rows(out)
            assert rows[0] == headers
            [ghost_row] = [r for r in rows[1:] if r[0] == str(ghost)]
            assert ghost_row[:4] == [str(ghost), "0", "-1", "1"] and ghost_row[5] == "1"
            written_at = int(ghost_row[4])
            assert abs(written_at - time.time() * 1000) < 60_000
            # a follower answers from its own replica of the log
            code, out, err = await _tool(boot, "describe-producers", "--topic", "hang", "--partition", "0",
                                         "--broker-id", str(follower0))
            assert code == 0 and _rows(out) == rows, (err, out)
            code, out, err = await _tool(boot, "describe-producers", "--topic", "single", "--partition", "0",
                                         "--broker-id", str(outside))
            assert (code, out) == (1, "") and err.strip() == (
                f"Failed to describe producers for partition single-0 on broker {outside}: Failed to describe active "
                f"producers for partition single-0 on brokerId {outside}. Enable debug logging for additional detail.")

            # Kafka's admin client looks an unknown topic up again until its timeout
            code, out, err = await _tool(boot, "--timeout", "1000", "describe-producers", "--topic", "nope",
                                         "--partition", "0")
            assert (code, out) == (1, "") and err.strip() == (
                "Failed to describe producers for partition nope-0 on leader: Timed out waiting for a node "
                "assignment. Call: describeProducers(api=METADATA). Enable debug logging for additional detail.")

            hanging_headers = ["Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                               "LastTimestamp", "Duration(min)"]
            # within the default 15 minutes nothing is hanging yet
            code, out, err = await _tool(boot, "find-hanging", "--topic", "hang")
            assert code == 0 and _rows(out) == [hanging_headers], (err, out)
            # older than 0 minutes: the ghost's transaction hangs; tx-known's is named by its coordinator
            code, out, err = await _tool(boot, "find-hanging", "--broker-id", str(lead0),
                                         "--max-transaction-timeout", "0")
            assert code == 0, err
            assert _rows(out) == [hanging_headers, ["hang", "0", str(ghost), "0", "-1", "1", str(written_at), "0"]]
            # the usage errors and a start offset no transaction starts at, all at once: Kafka's bare messages
            abort = ("abort", "--topic", "hang", "--partition", "0")
            refusals = {
                ("find-hanging", "--broker-id", "1", "--partition", "0"):
                    "The --partition argument requires --topic to be provided",
                ("find-hanging",): "The `find-hanging` command requires either --topic or --broker-id to limit the "
                                   "scope of the search",
                abort: "The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or "
                       "above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)",
                (*abort, "--producer-id", "7"): "Missing required argument --producer-epoch",
                (*abort, "--producer-id", "7", "--producer-epoch", "0"): "Missing required argument --coordinator-epoch",
                (*abort, "--start-offset", "3"): "Could not find any open transactions starting at offset 3 on "
                                                 "partition hang-0",
            }
            answers = await asyncio.gather(*(_tool(boot, *args) for args in refusals))
            assert [(code, out, err) for code, out, err in answers] == [(1, "", m + "\n") for m in refusals.values()]
            code, out, err = await _tool(boot, "abort", "--topic", "hang", "--partition", "0", "--start-offset", "1")
            assert (code, out, err) == (0, "", "")

            # the ABORT marker is at 4: the last stable offset is the high watermark, the ghost's records are skipped
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(lead0))
            try:
                r = await conn.request(L(replica_id=-1, isolation_level=1, topics=[L.ListOffsetsTopic(
                    name="hang", partitions=[L.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1,
                                                                    timestamp=-1)])]), 5)
                assert r.topics[0].partitions[0].offset == 5
            finally:
                await conn.close()
            assert await asyncio.to_thread(clients.read_committed_to_end, boot, "hang", 0, "hang-reader") == [b"before", b"after"]
            code, out, err = await _tool(boot, "describe-producers", "--topic", "hang", "--partition", "0")
            [ghost_row] = [r for r in _rows(out)[1:] if r[0] == str(ghost)]
            assert ghost_row[1:4] == ["0", "0", "1"] and ghost_row[5] == "None"  # coordinator epoch 0 from the abort
            code, out, err = await _tool(boot, "find-hanging", "--topic", "hang", "--max-transaction-timeout", "0")
            assert code == 0 and _rows(out) == [hanging_headers], (err, out)

            # the older brokers' form: producer id, epoch and coordinator epoch; a stale epoch is refused by the leader
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(lead0))
            try:
                assert await _written(conn, _produce("hang", 0, _batch(
                    [b"ghost-3"], pid=ghost, epoch=0, seq=2, transactional=True), "ghost-app")) == 5
            finally:
                await conn.close()
            code, out, err = await _tool(boot, "abort", "--topic", "hang", "--partition", "0", "--producer-id",
                                         str(ghost), "--producer-epoch", "-1", "--coordinator-epoch", "-1")
            spec = f"AbortTransactionSpec(topicPartition=hang-0, producerId={ghost}, producerEpoch=-1, coordinatorEpoch=0)"
            assert (code, err.strip()) == (1, f"Failed to abort transaction {spec}: WriteTxnMarkers request with "
                                              f"{spec} failed due an invalid producer epoch. Enable debug logging for "
                                              "additional detail.")
            code, out, err = await _tool(boot, "--abort", "--topic", "hang", "--partition", "0", "--producer-id",
                                         str(ghost), "--producer-epoch", "0", "--coordinator-epoch", "0")
            assert (code, out, err) == (0, "", "")
            assert await asyncio.to_thread(clients.read_committed_to_end, boot, "hang", 0, "hang-reader") == [b"before", b"after"]
            # tx-known is untouched: still open at its coordinator and in hang-1
            code, out, err = await _tool(boot, "describe-producers", "--topic", "hang", "--partition", "1")
            assert [r[5] for r in _rows(out)[1:] if r[0] == str(known.producer_id)] == ["0"], out
            # KIP-939's forceTerminateTransaction fences the id: its coordinator aborts the transaction in hang-1
            code, out, err = await _tool(boot, "forceTerminateTransaction", "--transactionalId", "tx-known")
            assert (code, out, err) == (0, "", "")
            code, out, err = await _tool(boot, "describe-producers", "--topic", "hang", "--partition", "1")
            [known_row] = [r for r in _rows(out)[1:] if r[0] == str(known.producer_id)]
            assert int(known_row[1]) > known.producer_epoch and known_row[5] == "None", out
            code, out, err = await _tool(boot, "describe", "--transactional-id", "tx-known")
            assert code == 0 and _rows(out)[1][4] in ("CompleteAbort", "Empty"), (out, err)
        finally:
            await cluster.stop()

    asyncio.run(main())
