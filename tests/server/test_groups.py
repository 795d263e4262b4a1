"""The group coordinator on KRaft brokers, in-process on real sockets and files: ``__consumer_offsets`` is created
on first use, a group's coordinator is the leader of its partition, commits are Kafka's records in that partition,
and they survive a restart and a coordinator move. The pure rules: ``tests/coordinator``."""

from __future__ import annotations

import asyncio

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from kraftwire import error_codes as ec
from kraftwire.coordinator import records as cr
from kraftwire.coordinator.partitioning import GROUP_TOPIC, partition_for
from kraftwire.protocol import messages as w
from kraftwire.records import read_batches
from kraftwire.server.edge.client import KafkaConnection
from server.test_kraft_node import Combined, _create, _online
from server.test_replication import CT, Cluster, _until

GROUP_PROPS = ("offsets.topic.replication.factor=1\noffsets.topic.num.partitions=5\n"
               "group.initial.rebalance.delay.ms=0\n")


def _produce(port: int, topic: str, n: int) -> None:
    p = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "acks": "all", "linger.ms": 5})
    for i in range(n):
        p.produce(topic, key=str(i).encode(), value=f"v{i}".encode(), partition=i % 3)
    assert p.flush(30) == 0


def _consume(port: int, topic: str, group: str, want: int, *, commit: bool = True, timeout_s: float = 30.0):
    """Read ``want`` records in ``group`` (or until the time is up) and commit synchronously; the values."""
    import time

    c = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
    got = []
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + timeout_s
        while len(got) < want and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None or m.error():
                continue
            got.append(m.value())
        if commit and got:
            c.commit(asynchronous=False)
        return got
    finally:
        c.close()


def _committed(port: int, group: str, topic: str) -> list[int]:
    c = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": group})
    try:
        return [tp.offset for tp in c.committed([TopicPartition(topic, i) for i in range(3)], timeout=20)]
    finally:
        c.close()


def _offsets_records(node, group: str):
    """The records of the group's ``__consumer_offsets`` partition on ``node``, decoded with Kafka's layout."""
    p = partition_for(group, 5)
    hp = node.replicas.get(GROUP_TOPIC, p)
    data = hp.log.read(hp.log.start_offset(), 1 << 24).records
    return [cr.decode(r.key, r.value) for b in read_batches(data) if not b.is_control for r in b]


def test_a_group_commits_and_resumes_after_a_restart(tmp_path):
    c = Combined(tmp_path, extra=GROUP_PROPS)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                assert (await conn.request(_create("t"), 7)).topics[0].error_code == ec.NONE
                F = w.FindCoordinatorRequest
                first = await conn.request(F(key_type=0, coordinator_keys=["g1"]), 4)
                assert first.coordinators[0].error_code == ec.COORDINATOR_NOT_AVAILABLE  # creates the topic
                await _until("offsets topic", lambda: node.metadata.image.topic(GROUP_TOPIC))
                topic = node.metadata.image.topic(GROUP_TOPIC)
                assert len(topic.partitions) == 5
                cfg = node.metadata.image.configs.get((2, GROUP_TOPIC), {})
                assert cfg.get("cleanup.policy") == "compact"
                for _ in range(200):
                    found = await conn.request(F(key_type=0, coordinator_keys=["g1", "g2"]), 4)
                    if all(x.error_code == 0 for x in found.coordinators):
                        break
                    await asyncio.sleep(0.05)
                assert [(x.node_id, x.port) for x in found.coordinators] == [(1, c.bport)] * 2
                txn = await conn.request(F(key_type=1, coordinator_keys=["tx"]), 4)
                assert txn.coordinators[0].error_code == ec.COORDINATOR_NOT_AVAILABLE
                P = w.ProduceRequest
                refused = await conn.request(P(acks=-1, timeout_ms=1000, topic_data=[P.TopicProduceData(
                    name=GROUP_TOPIC, partition_data=[P.PartitionProduceData(index=0, records=None)])]), 9)
                assert refused.responses[0].partition_responses[0].error_code == ec.INVALID_TOPIC_EXCEPTION
            finally:
                await conn.close()
            await asyncio.to_thread(_produce, c.bport, "t", 30)
            got = await asyncio.to_thread(_consume, c.bport, "t", "g1", 30)
            assert sorted(got) == sorted(f"v{i}".encode() for i in range(30))
            assert await asyncio.to_thread(_committed, c.bport, "g1", "t") == [10, 10, 10]
            recs = _offsets_records(node, "g1")
            commits = {(r.key.topic, r.key.partition): r.value.offset for r in recs if r.record_type == 1}
            assert commits == {("t", 0): 10, ("t", 1): 10, ("t", 2): 10}
            groups = [r for r in recs if r.record_type == 2 and r.key.group == "g1"]
            assert groups and groups[-1].value.protocol_type == "consumer"
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                listed = await conn.request(w.ListGroupsRequest(states_filter=[]), 4)
                assert [(g.group_id, g.group_state) for g in listed.groups] == [("g1", "Empty")]
                described = await conn.request(w.DescribeGroupsRequest(groups=["g1", "nope"]), 5)
                assert [(g.group_id, g.group_state) for g in described.groups] == [("g1", "Empty"), ("nope", "Dead")]
            finally:
                await conn.close()
        finally:
            await node.shutdown()
        node = c.node()  # a restart: the partition is loaded from its log
        await node.start()
        try:
            await _online(node)
            await _until("offsets loaded", lambda: node.group_apis.shards and all(
                s.shard is not None and s.shard.live for s in node.group_apis.shards.values()))
            assert await asyncio.to_thread(_committed, c.bport, "g1", "t") == [10, 10, 10]
            loading = node.group_apis.shards[partition_for("g1", 5)]
            loading.loading = True  # while a partition loads, its groups are answered as Kafka answers then
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                OF = w.OffsetFetchRequest
                fetched = await conn.request(OF(group_id="g1", topics=None), 7)
                assert fetched.error_code == ec.COORDINATOR_LOAD_IN_PROGRESS
                listed = await conn.request(w.ListGroupsRequest(states_filter=[]), 4)
                assert listed.error_code == ec.COORDINATOR_LOAD_IN_PROGRESS
            finally:
                loading.loading = False
                await conn.close()
            await asyncio.to_thread(_produce, c.bport, "t", 3)
            got = await asyncio.to_thread(_consume, c.bport, "t", "g1", 3)
            assert sorted(got) == [b"v0", b"v1", b"v2"]  # only what came after the commit
            assert await asyncio.to_thread(_committed, c.bport, "g1", "t") == [11, 11, 11]
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                deleted = await conn.request(w.DeleteGroupsRequest(groups_names=["g1", "g1-none"]), 2)
                # in the order of Kafka's HashSet of the group ids (the conformance run, #36)
                assert [(r.group_id, r.error_code) for r in deleted.results] == [
                    ("g1-none", ec.GROUP_ID_NOT_FOUND), ("g1", 0)]
            finally:
                await conn.close()
            assert await asyncio.to_thread(_committed, c.bport, "g1", "t") == [-1001, -1001, -1001]
        finally:
            await node.shutdown()

    asyncio.run(main())


def test_committed_offsets_survive_a_coordinator_move(tmp_path):
    """Three brokers, ``__consumer_offsets`` with 3 replicas: the coordinator broker stops, another replica leads
    the partition, loads it, and answers the same committed offsets; the group goes on committing there."""
    cluster = Cluster(tmp_path)

    async def main():
        await cluster.start()
        try:
            for b in cluster.nodes.values():  # the group keys on every broker (the Cluster harness has none)
                b.group_apis.config = b.group_apis.config.__class__(initial_rebalance_delay_ms=0)
            conn = await KafkaConnection.open("127.0.0.1", cluster.port(1))
            try:
                created = await conn.request(CT(topics=[CT.CreatableTopic(
                    name="t", num_partitions=3, replication_factor=3, assignments=[], configs=[])],
                    timeout_ms=5000, validate_only=False), 7)
                assert created.topics[0].error_code == ec.NONE
                F = w.FindCoordinatorRequest
                for _ in range(300):
                    found = await conn.request(F(key_type=0, coordinator_keys=["moving"]), 4)
                    if found.coordinators[0].error_code == 0:
                        break
                    await asyncio.sleep(0.05)
                coordinator = found.coordinators[0].node_id
                assert coordinator in (1, 2, 3)
            finally:
                await conn.close()
            p = partition_for("moving", 50)
            assert cluster.partition(GROUP_TOPIC, p).leader == coordinator
            assert len(cluster.partition(GROUP_TOPIC, p).replicas) == 3
            other = next(b for b in (1, 2, 3) if b != coordinator)
            await asyncio.to_thread(_produce, cluster.port(other), "t", 30)
            got = await asyncio.to_thread(_consume, cluster.port(other), "t", "moving", 30)
            assert len(got) == 30
            assert await asyncio.to_thread(_committed, cluster.port(other), "moving", "t") == [10, 10, 10]
            await _until("ISR full", lambda: len(cluster.partition(GROUP_TOPIC, p).isr) == 3)
            await cluster.nodes.pop(coordinator).shutdown()
            await _until("new leader", lambda: cluster.partition(GROUP_TOPIC, p).leader not in (coordinator, -1))
            assert await asyncio.to_thread(_committed, cluster.port(other), "moving", "t") == [10, 10, 10]
            await asyncio.to_thread(_produce, cluster.port(other), "t", 3)
            got = await asyncio.to_thread(_consume, cluster.port(other), "t", "moving", 3)
            assert sorted(got) == [b"v0", b"v1", b"v2"]
            assert await asyncio.to_thread(_committed, cluster.port(other), "moving", "t") == [11, 11, 11]
        finally:
            await cluster.stop()

    asyncio.run(main())


async def _kw(*args: str) -> tuple[int, str, str]:
    import sys

    from harness import processes

    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "kraftwire", *args,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                env=processes.kraftwire_env())
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    return proc.returncode, out.decode(), err.decode()


def test_console_consumer_in_a_group_resumes_from_its_commits(tmp_path):
    c = Combined(tmp_path, extra=GROUP_PROPS)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                assert (await conn.request(_create("t"), 7)).topics[0].error_code == ec.NONE
            finally:
                await conn.close()
            await asyncio.to_thread(_produce, c.bport, "t", 6)
            server = f"127.0.0.1:{c.bport}"
            code, out, err = await _kw("console-consumer", "--bootstrap-server", server, "--topic", "t",
                                       "--group", "console", "--from-beginning", "--max-messages", "6")
            assert code == 0 and sorted(out.split()) == [f"v{i}" for i in range(6)], err[-2000:]
            assert "Processed a total of 6 messages" in err
            await asyncio.to_thread(_produce, c.bport, "t", 1)
            code, out, err = await _kw("console-consumer", "--bootstrap-server", server, "--topic", "t",
                                       "--group", "console", "--from-beginning", "--max-messages", "1")
            assert code == 0 and out.split() == ["v0"], err[-2000:]  # resumed after the committed offsets
            assert await asyncio.to_thread(_committed, c.bport, "console", "t") == [3, 2, 2]
            code, _out, err = await _kw("console-consumer", "--bootstrap-server", server, "--topic", "t",
                                        "--group", "console", "--partition", "0", "--offset", "1")
            assert code == 1 and "Options group and offset cannot be specified together." in err
        finally:
            await node.shutdown()

    asyncio.run(main())


def test_kip848_consumer_groups_with_librdkafka(tmp_path):
    """confluent-kafka (librdkafka) with ``group.protocol=consumer``: two members share a topic by the server-side
    assignor, every record is read once, commits carry the member epoch, and a new member resumes from them."""
    c = Combined(tmp_path, extra=GROUP_PROPS)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                assert (await conn.request(_create("t"), 7)).topics[0].error_code == ec.NONE
            finally:
                await conn.close()
            # produced once the two members share the partitions: a record read before a partition moves to the
            # other member would be read again there (no commits yet), which is Kafka's at-least-once, not a fault
            got = await asyncio.to_thread(_two_kip848_members, c.bport, 60,
                                          lambda: _produce(c.bport, "t", 60))
            assert sorted(got) == sorted(f"v{i}".encode() for i in range(60))
            assert await asyncio.to_thread(_committed, c.bport, "next-gen", "t") == [20, 20, 20]
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                listed = await conn.request(w.ListGroupsRequest(states_filter=[], types_filter=["consumer"]), 5)
                assert [(g.group_id, g.group_type, g.group_state) for g in listed.groups] == [
                    ("next-gen", "consumer", "Empty")]
                described = await conn.request(w.ConsumerGroupDescribeRequest(group_ids=["next-gen"]), 0)
                [g] = described.groups
                assert g.error_code == 0 and g.group_state == "Empty" and g.assignor_name == "uniform"
            finally:
                await conn.close()
            code, out, err = await _kw("consumer-groups", "--bootstrap-server", f"127.0.0.1:{c.bport}", "--describe",
                                       "--group", "next-gen")
            assert code == 0 and "Consumer group 'next-gen' has no active members." in err, (out, err)
            rows = [line.split() for line in out.strip().splitlines()[1:]]
            assert sorted((r[1], r[2], r[3]) for r in rows) == [("t", "0", "20"), ("t", "1", "20"), ("t", "2", "20")]
            await asyncio.to_thread(_produce, c.bport, "t", 3)
            got = await asyncio.to_thread(_kip848_read, c.bport, 3)
            assert sorted(got) == [b"v0", b"v1", b"v2"]  # resumed at the committed offsets
        finally:
            await node.shutdown()

    asyncio.run(main())


def _kip848_consumer(port: int):
    return Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "next-gen", "group.protocol": "consumer",
                     "auto.offset.reset": "earliest", "enable.auto.commit": False})


def _two_kip848_members(port: int, want: int, produce) -> list[bytes]:
    import time

    members = [_kip848_consumer(port) for _ in range(2)]
    got: list[bytes] = []
    try:
        for m in members:
            m.subscribe(["t"])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the server-side assignor gives each member its share
            for m in members:
                msg = m.poll(0.1)
                assert msg is None or msg.error() is not None, "a record before anything was produced"
            owned = [{tp.partition for tp in m.assignment()} for m in members]
            if all(owned) and not (owned[0] & owned[1]) and owned[0] | owned[1] == {0, 1, 2}:
                break
        produce()
        while time.monotonic() < deadline:
            for m in members:
                msg = m.poll(0.1)
                if msg is not None and msg.error() is None:
                    got.append(msg.value())
            owned = [{tp.partition for tp in m.assignment()} for m in members]
            if len(got) >= want and all(owned) and not (owned[0] & owned[1]) and owned[0] | owned[1] == {0, 1, 2}:
                break
        assert len(got) == want, f"read {len(got)} of {want}"
        owned = [{tp.partition for tp in m.assignment()} for m in members]
        assert all(owned) and not (owned[0] & owned[1]) and owned[0] | owned[1] == {0, 1, 2}, owned
        for m in members:
            m.commit(asynchronous=False)
    finally:
        for m in members:
            m.close()
    return got


def _kip848_read(port: int, want: int) -> list[bytes]:
    import time

    m = _kip848_consumer(port)
    got: list[bytes] = []
    try:
        m.subscribe(["t"])
        deadline = time.monotonic() + 60
        while len(got) < want and time.monotonic() < deadline:
            msg = m.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
        m.commit(asynchronous=False)
    finally:
        m.close()
    return got


def test_kip848_regex_subscription_with_librdkafka(tmp_path):
    """A ``group.protocol=consumer`` member subscribing with a regular expression gets every matching topic from the
    server (SubscribedTopicRegex), and not the others."""
    c = Combined(tmp_path, extra=GROUP_PROPS)

    async def main():
        node = c.node()
        await node.start()
        try:
            await _online(node)
            conn = await KafkaConnection.open("127.0.0.1", c.bport)
            try:
                for name in ("orders-eu", "orders-us", "payments"):
                    assert (await conn.request(_create(name), 7)).topics[0].error_code == ec.NONE
            finally:
                await conn.close()
            for name in ("orders-eu", "orders-us", "payments"):
                await asyncio.to_thread(_produce, c.bport, name, 3)

            def read() -> set[tuple[str, bytes]]:
                import time

                m = Consumer({"bootstrap.servers": f"127.0.0.1:{c.bport}", "group.id": "by-regex",
                              "group.protocol": "consumer", "auto.offset.reset": "earliest",
                              "topic.metadata.refresh.interval.ms": 500})
                got: set[tuple[str, bytes]] = set()
                try:
                    m.subscribe(["^orders-.*"])
                    deadline = time.monotonic() + 60
                    while len(got) < 6 and time.monotonic() < deadline:
                        msg = m.poll(0.2)
                        if msg is not None and msg.error() is None:
                            got.add((msg.topic(), msg.value()))
                    end = time.monotonic() + 1  # nothing from payments arrives either
                    while time.monotonic() < end:
                        msg = m.poll(0.2)
                        if msg is not None and msg.error() is None:
                            got.add((msg.topic(), msg.value()))
                finally:
                    m.close()
                return got

            got = await asyncio.to_thread(read)
            assert got == {(t, f"v{i}".encode()) for t in ("orders-eu", "orders-us") for i in range(3)}
        finally:
            await node.shutdown()

    asyncio.run(main())


def _static_member_consumes_and_closes(port: int, topic: str, group: str) -> None:
    """librdkafka's test 0081 (DescribeConsumerGroups): a static member (group.instance.id, session.timeout.ms
    5000) reads, then closes without leaving."""
    import time

    c = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": group, "group.instance.id": f"{group}-i0",
                  "client.id": "client_id_0", "session.timeout.ms": 5000, "auto.offset.reset": "earliest"})
    try:
        c.subscribe([topic])
        got, deadline = 0, time.monotonic() + 30
        while got < 10 and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got += 1
        assert got == 10
    finally:
        c.close()


def _delete_groups(port: int, groups: list[str]) -> dict:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
    out = {}
    for g, f in admin.delete_consumer_groups(groups, request_timeout=10).items():
        try:
            f.result()
            out[g] = None
        except Exception as exc:  # noqa: BLE001 - the KafkaException's error is the answer
            out[g] = exc.args[0].name()
    return out


def test_a_classic_group_is_deletable_once_its_members_are_gone(tmp_path):
    """librdkafka's test 0081 clean-up: DeleteGroups once the static member's session timed out (its close sends no
    LeaveGroup), and at once after a dynamic member's LeaveGroup (Kafka's coordinator empties the group in the
    LeaveGroup handling: GroupMetadataManagerTest's leave-group and delete-group tests)."""
    c = Combined(tmp_path, extra=GROUP_PROPS + "group.min.session.timeout.ms=1000\n")

    async def scenario(node, conn):
        assert (await conn.request(_create("t"), 7)).topics[0].error_code == ec.NONE
        await asyncio.to_thread(_produce, c.bport, "t", 10)
        await asyncio.to_thread(_static_member_consumes_and_closes, c.bport, "t", "static")
        await asyncio.to_thread(_consume, c.bport, "t", "dynamic", 10)
        assert await asyncio.to_thread(_delete_groups, c.bport, ["dynamic"]) == {"dynamic": None}
        await asyncio.sleep(6)  # the static member's session timeout, and a second
        assert await asyncio.to_thread(_delete_groups, c.bport, ["static"]) == {"static": None}

    c.run(scenario)


def test_the_group_timers_wake_at_the_earliest_session_deadline(monkeypatch):
    """librdkafka's 0081 deletes its groups exactly one session timeout after the members' last commit: a member
    must expire at its deadline, as Kafka's timer expires it, not up to a tick later."""
    from types import SimpleNamespace as NS

    from kraftwire.server.apis import group_apis

    now = 1_700_000_000_000
    monkeypatch.setattr(group_apis, "_now_ms", lambda: now)
    shard = lambda deadline: NS(shard=NS(live=True, next_deadline_ms=lambda: deadline))  # noqa: E731
    wait = group_apis.GroupApis._until_next_deadline_s
    assert wait(NS(shards={0: shard(now + 50), 1: shard(None)})) == pytest.approx(0.051)
    assert wait(NS(shards={0: shard(now + 60_000)})) == group_apis.TICK_S
    assert wait(NS(shards={0: shard(now - 5)})) == 0.01  # overdue: looked at again soon, never a busy loop


def test_a_request_sees_no_session_that_has_already_ended(tmp_path):
    """However late the timer loop wakes on a busy node, a group request runs the shard's due timers first: a
    DeleteGroups right after the only member's session ended deletes the group (librdkafka's 0081 deletes its
    static groups one session after their members closed, and under load the loop woke a few ms late)."""
    c = Combined(tmp_path, extra=GROUP_PROPS + "group.min.session.timeout.ms=1000\n")

    async def scenario(node, conn):
        J = w.JoinGroupRequest
        join = J(group_id="late", session_timeout_ms=1000, rebalance_timeout_ms=1000, member_id="",
                 group_instance_id="i0", protocol_type="consumer",
                 protocols=[J.JoinGroupRequestProtocol(name="range", metadata=b"")])
        F = w.FindCoordinatorRequest
        for _ in range(250):  # the first FindCoordinator creates __consumer_offsets
            found = await conn.request(F(key_type=0, coordinator_keys=["late"]), 4)
            if found.coordinators[0].error_code == ec.NONE:
                break
            await asyncio.sleep(0.02)
        for _ in range(250):
            r = await conn.request(join, 5)
            if r.error_code not in (ec.COORDINATOR_NOT_AVAILABLE, ec.NOT_COORDINATOR, ec.COORDINATOR_LOAD_IN_PROGRESS):
                break
            await asyncio.sleep(0.02)
        assert r.error_code == ec.NONE
        apis = node.group_apis
        apis._until_next_deadline_s = lambda: 3600.0  # the loop sleeps through the deadline, as on a stalled node
        await asyncio.sleep(1.2)
        d = await conn.request(w.DeleteGroupsRequest(groups_names=["late"]), 2)
        assert [(g.group_id, g.error_code) for g in d.results] == [("late", ec.NONE)]

    c.run(scenario)
