"""``kraftwire transactions`` (kafka-transactions.sh): ``list`` and ``describe --transactional-id`` against a KRaft
broker in-process, as a subprocess; the table layout is ``ToolsUtils.prettyPrintTable``'s (cells padded to the
column's width, each followed by a tab)."""

from __future__ import annotations

import asyncio
import sys

from harness import processes
from kraftwire import error_codes as ec
from kraftwire.server.client import KafkaConnection
from kraftwire.tools.transactions import pretty_table
from server.test_kraft_node import Combined, _create, _online
from server.test_txn_coordinator import PROPS, FakeLeaders, _add, _coordinator, _init


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
            assert int(cells[6]) > 0 and int(cells[7]) >= 0 and cells[8] == "t-0,t-2"
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
