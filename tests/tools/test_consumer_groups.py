"""``kraftwire consumer-groups`` against a KRaft node in-process: Kafka's tables, the lag a live consumer reports,
offset resets (dry run, execute, export), offset and group deletion, and Kafka's usage errors."""

from __future__ import annotations

import asyncio
import sys
import threading
import time

from confluent_kafka import Consumer, TopicPartition

from harness import processes
from kraftwire import error_codes as ec
from kraftwire.server.edge.client import KafkaConnection
from kraftwire.tools import consumer_groups as cg
from server.test_groups import GROUP_PROPS, _committed, _produce
from server.test_kraft_node import Combined, _create, _online


async def _tool(port: int, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kraftwire", "consumer-groups", "--bootstrap-server", f"127.0.0.1:{port}", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=processes.kraftwire_env())
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.strip().splitlines()[1:]]


class LiveConsumer(threading.Thread):
    """A confluent-kafka group member that reads ``want`` records, commits, then stays in the group (polling
    nothing new) until told to stop; ``lag`` is what it reports per partition (high watermark - committed)."""

    def __init__(self, port: int, want: int) -> None:
        super().__init__(daemon=True)
        self.port, self.want = port, want
        self.ready, self.measure, self.stop = threading.Event(), threading.Event(), threading.Event()
        self.lag: dict[int, int] = {}
        self.member_count = 0
        self.error = None

    def run(self) -> None:
        try:
            c = Consumer({"bootstrap.servers": f"127.0.0.1:{self.port}", "group.id": "cg",
                          "client.id": "live-client", "auto.offset.reset": "earliest", "enable.auto.commit": False,
                          "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
            c.subscribe(["t"])
            got = 0
            deadline = time.monotonic() + 60
            while got < self.want and time.monotonic() < deadline:
                m = c.poll(0.2)
                if m is not None and not m.error():
                    got += 1
            c.commit(asynchronous=False)
            self.ready.set()
            self.measure.wait(60)
            for tp in c.committed([TopicPartition("t", i) for i in range(3)], timeout=20):
                low, high = c.get_watermark_offsets(tp, timeout=20)
                self.lag[tp.partition] = high - tp.offset
            self.ready.clear()
            self.ready.set()
            self.stop.wait(60)
            c.close()
        except Exception as exc:  # surfaced by the test
            self.error = exc
            self.ready.set()


def test_consumer_groups_tool(tmp_path):
    c = Combined(tmp_path, extra=GROUP_PROPS)

    async def main():
        node = c.node()
        await node.start()
        port = c.bport
        try:
            await _online(node)
            conn = await KafkaConnection.open("127.0.0.1", port)
            try:
                assert (await conn.request(_create("t"), 7)).topics[0].error_code == ec.NONE
            finally:
                await conn.close()
            await asyncio.to_thread(_produce, port, "t", 30)
            live = LiveConsumer(port, 30)
            live.start()
            assert await asyncio.to_thread(live.ready.wait, 60) and live.error is None
            await asyncio.to_thread(_produce, port, "t", 5)  # lag 2, 2, 1 by partition
            live.ready.clear()
            live.measure.set()
            assert await asyncio.to_thread(live.ready.wait, 60) and live.error is None

            code, out, err = await _tool(port, "--list")
            assert (code, out) == (0, "cg\n"), err
            code, out, err = await _tool(port, "--list", "--state", "stable")
            assert out.splitlines() == ["GROUP" + " " * 21 + "STATE" + " " * 15, "cg" + " " * 24 + "Stable" + " " * 14]

            code, out, err = await _tool(port, "--describe", "--group", "cg")
            assert code == 0 and out.startswith("\nGROUP ") and err == "", (out, err)
            header = out.splitlines()[1]
            assert header.split() == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                                      "CONSUMER-ID", "HOST", "CLIENT-ID"]
            assert header.index("TOPIC") == 16 and header.index("PARTITION") == 32  # Kafka's 15-wide columns
            rows = _rows(out)
            assert sorted((r[1], int(r[2]), int(r[3]), int(r[4]), int(r[5])) for r in rows) == [
                ("t", 0, 10, 12, 2), ("t", 1, 10, 12, 2), ("t", 2, 10, 11, 1)]
            assert {int(r[2]): int(r[5]) for r in rows} == live.lag  # the lag the consumer itself reports
            assert all(r[8] == "live-client" and r[7] == "/127.0.0.1" for r in rows)

            code, out, err = await _tool(port, "--describe", "--group", "cg", "--members", "--verbose")
            lines = out.strip().splitlines()
            assert lines[0].split() == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"]
            assert lines[1].split()[2:] == ["/127.0.0.1", "live-client", "3", "(0,1,2)"]
            code, out, err = await _tool(port, "--describe", "--group", "cg", "--state")
            head, row = out.strip().splitlines()
            assert head.split() == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"]
            assert row.split() == ["cg", f"127.0.0.1:{port}", "(1)", "range", "Stable", "1"]

            code, out, err = await _tool(port, "--reset-offsets", "--group", "cg", "--topic", "t", "--to-earliest",
                                         "--execute")
            assert "Assignments can only be reset if the group 'cg' is inactive, but the current state is Stable." \
                in out

            live.stop.set()
            await asyncio.to_thread(live.join, 30)
            code, out, err = await _tool(port, "--describe", "--group", "cg")
            assert "Consumer group 'cg' has no active members." in err
            assert [r[6:] for r in _rows(out)] == [["-", "-", "-"]] * 3

            code, out, err = await _tool(port, "--reset-offsets", "--group", "cg", "--topic", "t", "--to-earliest")
            assert "WARN: No action will be performed as the --execute option is missing." in err
            assert [r[1:] for r in _rows(out)] == [["t", "0", "0"], ["t", "1", "0"], ["t", "2", "0"]]
            assert await asyncio.to_thread(_committed, port, "cg", "t") == [10, 10, 10]  # a dry run writes nothing
            code, out, err = await _tool(port, "--reset-offsets", "--group", "cg", "--topic", "t:0,2", "--to-offset",
                                         "4", "--execute")
            assert [r[1:] for r in _rows(out)] == [["t", "0", "4"], ["t", "2", "4"]]
            assert await asyncio.to_thread(_committed, port, "cg", "t") == [4, 10, 4]
            code, out, err = await _tool(port, "--reset-offsets", "--group", "cg", "--all-topics", "--shift-by",
                                         "100", "--execute")
            assert await asyncio.to_thread(_committed, port, "cg", "t") == [12, 12, 11]  # clamped to the log end
            code, out, err = await _tool(port, "--reset-offsets", "--group", "cg", "--topic", "t", "--to-datetime",
                                         "2000-01-01T00:00:00.000Z", "--execute", "--export")
            assert out.strip().splitlines() == ["t,0,0", "t,1,0", "t,2,0"]
            code, out, err = await _tool(port, "--reset-offsets", "--group", "cg", "--topic", "t", "--to-latest",
                                         "--execute")
            assert await asyncio.to_thread(_committed, port, "cg", "t") == [12, 12, 11]

            code, out, err = await _tool(port, "--delete-offsets", "--group", "cg", "--topic", "t:1")
            assert out.splitlines()[0] == "Request succeed for deleting offsets with topic t:1 group cg"
            assert out.splitlines()[2].split() == ["TOPIC", "PARTITION", "STATUS"]
            assert out.splitlines()[3].split() == ["t", "1", "Successful"]
            assert await asyncio.to_thread(_committed, port, "cg", "t") == [12, -1001, 11]

            code, out, err = await _tool(port, "--delete", "--group", "cg")
            assert out == "Deletion of requested consumer groups ('cg') was successful.\n"
            code, out, err = await _tool(port, "--describe", "--group", "cg")
            assert out.strip() == "Error: Consumer group 'cg' does not exist."
            code, out, err = await _tool(port, "--delete", "--group", "cg")
            assert "* Group 'cg' could not be deleted due to: java.util.concurrent.ExecutionException: " \
                   "org.apache.kafka.common.errors.GroupIdNotFoundException" in out

            code, out, err = await _tool(port, "--describe")
            assert code == 1 and "Option [describe] takes one of these options: [group, all-groups]" in err
            code, out, err = await _tool(port)
            assert code == 1 and "Command must include exactly one action" in err
        finally:
            await node.shutdown()

    asyncio.run(main())


def test_time_and_duration_parsing_follow_java():
    assert cg.parse_datetime("2020-01-02T03:04:05.006Z") == 1577934245006
    assert cg.parse_datetime("2020-01-02T03:04:05.006+01:00") == 1577934245006 - 3_600_000
    assert cg.parse_duration("PT1H30M") == 5_400_000 and cg.parse_duration("P1D") == 86_400_000
    assert cg.assignment_partitions(bytes.fromhex("0000" "00000001" "0001" "74" "00000002" "00000000" "00000002"
                                                  "ffffffff")) == [("t", 0), ("t", 2)]
