"""Exactly-once consume-transform-produce through SIGKILLs, with real processes: three controllers and three brokers
(4, 5, 6), an input topic of 3 partitions and an output topic of 3 partitions (both replication factor 3,
min.insync.replicas=2), ``__transaction_state`` and ``__consumer_offsets`` at replication factor 3.

confluent-kafka runs the loop a real exactly-once application runs: a ``read_committed`` consumer in a group and a
transactional producer (fixed ``transactional.id``); each transaction consumes a batch, produces its records
transformed, adds the consumer's positions (``send_offsets_to_transaction``) and commits. An abortable error aborts
and rewinds the consumer to the group's committed offsets; a fatal one (fencing) recreates producer and consumer.
While it runs the brokers are SIGKILLed one at a time, each in the middle of a transaction, and restarted 1.5 s
later (the next kill once the victim is back in every ISR):

* the transaction coordinator of the ``transactional.id`` (FindCoordinator key type 1), records produced and the
  commit not yet sent;
* the leader of an output partition, records in flight;
* the leader of an input partition.

Then another instance starts with the same ``transactional.id`` while a transaction's records are written: it
fences the running one, whose open transaction is aborted and whose next call fails fatally (fenced); the
application recreates its producer and consumer and goes on from the committed offsets.

At the end a ``read_committed`` reader of the output sees every input record transformed exactly once (multisets
compared; a ``read_uncommitted`` one sees the aborted records too); a second producer with the same
``transactional.id`` fences the first, whose next transaction fails with a fatal fenced error and whose record is
never visible.

The group's coordinator is never killed: librdkafka (2.16) hangs in ``send_offsets_to_transaction`` when its cached
group coordinator leaves the Metadata response (librdkafka issue 5511), which a killed broker does.
"""

from __future__ import annotations

import asyncio
import collections
import os
import threading
import time

from harness import roles

N = 3000
BATCH = 100
TXN_ID = "eos-kills"
BROKERS = (4, 5, 6)
GROUP_PARTITIONS = 3
PROPS = (f"transaction.state.log.num.partitions=1\noffsets.topic.num.partitions={GROUP_PARTITIONS}\n"
         "group.initial.rebalance.delay.ms=0\nreplica.lag.time.max.ms=2000\n"
         "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000\n"
         # leaders go back to their preferred replicas once a restarted victim is in sync (Kafka's rebalance,
         # every second instead of every 300): the next kill finds leaders on more than one broker
         "leader.imbalance.check.interval.seconds=1\n")
DEADLINE_S = 90.0  # the loop's own bound; the whole test normally takes 25-40 s


def _value(i: int) -> bytes:
    return f"r{i:05d}".encode()


def _transform(value: bytes) -> bytes:
    return b"out-" + value


class App:
    """The exactly-once application: one consumer, one transactional producer, recreated together when fatal."""

    def __init__(self, bootstrap: str, group: str) -> None:
        self.bootstrap = bootstrap
        self.group = group
        self.consumer = self.producer = None
        self.recreated = self.aborts = self.commits = 0
        self.errors: list[str] = []
        self.fatal: list = []  # the fatal errors that made it recreate producer and consumer
        self.open()

    def open(self) -> None:
        """A consumer and a producer (``EOS_DEBUG=eos,cgrp,protocol`` in the environment: librdkafka's debug log)."""
        from confluent_kafka import Consumer, Producer

        self.consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.group,
                                  "isolation.level": "read_committed", "enable.auto.commit": False,
                                  "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
                                  "heartbeat.interval.ms": 500, "topic.metadata.refresh.interval.ms": 2000,
                                  **({"debug": os.environ["EOS_DEBUG"]} if os.environ.get("EOS_DEBUG") else {})})
        self.consumer.subscribe(["in"])
        self.producer = Producer({"bootstrap.servers": self.bootstrap, "transactional.id": TXN_ID,
                                  "transaction.timeout.ms": 20000, "message.timeout.ms": 20000, "linger.ms": 5,
                                  "topic.metadata.refresh.interval.ms": 2000,
                                  **({"debug": os.environ["EOS_DEBUG"]} if os.environ.get("EOS_DEBUG") else {})})
        self._retry(lambda: self.producer.init_transactions(10), "init_transactions", deadline_s=60)

    def close(self) -> None:
        try:
            self.consumer.close()
        except Exception as e:  # noqa: BLE001 - a consumer of a dead coordinator may fail to leave
            self.errors.append(f"consumer close: {e}")
        self.consumer = self.producer = None

    def recreate(self) -> None:
        self.recreated += 1
        self.close()
        self.open()

    def _retry(self, call, what: str, deadline_s: float = 45) -> None:
        """``call`` retried while its error is retriable (a timeout while the coordinator moves)."""
        from confluent_kafka import KafkaException

        end = time.monotonic() + deadline_s
        while True:
            try:
                return call()
            except KafkaException as e:
                err = e.args[0]
                if not err.retriable() or time.monotonic() > end:
                    raise
                self.errors.append(f"{what} retried: {err}")

    def rewind(self) -> None:
        """Back to the group's committed offsets (the beginning where none is committed). librdkafka's consumer
        can stay without a coordinator after brokers left and came back into the Metadata response (its issues
        5456, 5511): the committed offsets then time out, and the caller starts a new consumer instead."""
        from confluent_kafka import OFFSET_BEGINNING

        assignment = self.consumer.assignment()
        if not assignment:
            return
        for tp in self.consumer.committed(assignment, timeout=10):
            if tp.offset < 0:
                tp.offset = OFFSET_BEGINNING
            self.consumer.seek(tp)

    def transaction(self, mid=None) -> int:
        """One consume-transform-produce transaction; the number of input records it committed (0 when aborted or
        nothing was read). ``mid(phase)`` is called after the records are produced ("produced") and after they
        are flushed ("flushed")."""
        from confluent_kafka import KafkaException

        msgs = [m for m in self.consumer.consume(BATCH, 0.3) if m.error() is None]
        if not msgs:
            return 0
        try:
            self.producer.begin_transaction()
            for m in msgs:
                self.producer.produce("out", value=_transform(m.value()), partition=m.partition())
            if mid is not None:
                mid("produced")
            self._retry(lambda: self._flush(), "flush")
            if mid is not None:
                mid("flushed")
            positions = self.consumer.position(self.consumer.assignment())
            self._retry(lambda: self.producer.send_offsets_to_transaction(
                positions, self.consumer.consumer_group_metadata(), 10), "send_offsets_to_transaction")
            self._retry(lambda: self.producer.commit_transaction(10), "commit_transaction")
            self.commits += 1
            return len(msgs)
        except KafkaException as e:
            err = e.args[0]
            self.errors.append(f"transaction: {err}")
            if err.txn_requires_abort():
                self.aborts += 1
                try:
                    self._retry(lambda: self.producer.abort_transaction(10), "abort_transaction")
                except KafkaException as e2:
                    self.errors.append(f"abort: {e2.args[0]}")
                    self.fatal.append(e2.args[0])
                    self.recreate()
                    return 0
                try:
                    self.rewind()
                except KafkaException as e2:  # the consumer lost its coordinator (see ``rewind``): start afresh
                    self.errors.append(f"rewind: {e2.args[0]}")
                    self.recreate()
            else:
                self.fatal.append(err)
                self.recreate()
            return 0

    def _flush(self) -> None:
        from confluent_kafka import KafkaError, KafkaException

        if self.producer.flush(10) != 0:
            raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "flush timed out", retriable=True))


def _coordinator(port: int, key: str = TXN_ID, key_type: int = 1) -> int | None:
    """The coordinator of ``key`` (FindCoordinator: key type 1 a transactional id, 0 a group)."""
    from kraftwire.protocol import messages as w
    from kraftwire.server.edge.client import request_once

    try:
        r = asyncio.run(request_once("127.0.0.1", port, w.FindCoordinatorRequest(key_type=key_type,
                                                                                 coordinator_keys=[key]), 4,
                                     timeout=3))
    except Exception:  # noqa: BLE001 - the node may be down or starting
        return None
    c = r.coordinators[0]
    return c.node_id if c.error_code == 0 else None


def _leaders(port: int) -> dict[tuple[str, int], tuple[int, list[int]]] | None:
    """(topic, partition) -> (leader, ISR) of every topic, from the broker on ``port``."""
    try:
        md = roles.metadata(port)
    except Exception:  # noqa: BLE001
        return None
    return {(t.name, p.partition_index): (p.leader_id, sorted(p.isr_nodes))
            for t in md.topics if t.error_code == 0 for p in t.partitions}


def _healthy(ports, topics=("in", "out", "__transaction_state", "__consumer_offsets")) -> bool:
    """Every partition of ``topics`` led and with its full ISR, as every broker sees it."""
    for port in ports:
        parts = _leaders(port)
        if parts is None or not all(any(t == name for t, _ in parts) for name in topics):
            return False
        if any(leader < 0 or isr != list(BROKERS) for (t, _), (leader, isr) in parts.items() if t in topics):
            return False
    return True


def _fill(bootstrap: str) -> None:
    from confluent_kafka import Producer

    failed = []
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5})
    for i in range(N):
        p.produce("in", value=_value(i), partition=i % 3,
                  on_delivery=lambda err, _m: failed.append(err) if err else None)
        p.poll(0)
    assert p.flush(60) == 0 and not failed, failed[:3]


def _read_output(bootstrap: str, isolation: str, want: int, quiet_s: float = 1.5) -> list[bytes]:
    """Every record of ``out`` visible at ``isolation``: read until ``want`` are seen, then ``quiet_s`` more."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{isolation}", "enable.auto.commit": False,
                  "isolation.level": isolation, "auto.offset.reset": "earliest"})
    got: list[bytes] = []
    try:
        c.assign([TopicPartition("out", p, 0) for p in range(3)])
        deadline = time.monotonic() + 30
        while len(got) < want and time.monotonic() < deadline:
            got.extend(m.value() for m in c.consume(500, 0.3) if m.error() is None)
        quiet = time.monotonic() + quiet_s
        while time.monotonic() < quiet:
            got.extend(m.value() for m in c.consume(500, 0.3) if m.error() is None)
    finally:
        c.close()
    return got


def _differences(got: list[bytes], want: list[bytes]) -> str:
    have, expected = collections.Counter(got), collections.Counter(want)
    missing = sorted((expected - have).elements())
    extra = sorted((have - expected).elements())
    return (f"{len(got)} records read, {len(want)} expected; missing {len(missing)}: {missing[:20]}; "
            f"duplicated/unexpected {len(extra)}: {extra[:20]}")


def test_exactly_once_through_coordinator_and_leader_kills(make_roles_cluster):
    from confluent_kafka import KafkaError, Producer
    from kafka.admin import KafkaAdminClient, NewTopic

    started = time.monotonic()
    cluster = make_roles_cluster(controllers=3, brokers=3, kraft=True, extra_props=PROPS)
    for node in cluster.nodes.values():
        node.start()
    cluster.wait_for_leader()
    brokers = {n.node_id: n for n in cluster.brokers}
    ports = {b: brokers[b].port_of("BROKER") for b in BROKERS}
    bootstrap = ",".join(f"127.0.0.1:{p}" for p in ports.values())
    roles.wait_until(lambda: all(roles.broker_ids(p) == list(BROKERS) for p in ports.values()),
                     "three brokers in every broker's image", cluster)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=20000)
    try:
        admin.create_topics([NewTopic(t, num_partitions=3, replication_factor=3,
                                      topic_configs={"min.insync.replicas": "2"}) for t in ("in", "out")])
    finally:
        admin.close()
    # the coordinators' internal topics are created on the first FindCoordinator
    coordinator = roles.wait_until(lambda: _coordinator(ports[4]), "a transaction coordinator", cluster)
    roles.wait_until(lambda: _healthy(ports.values(), ("in", "out", "__transaction_state")),
                     "every partition led, full ISRs", cluster)
    group, group_coordinator = _group_away_from(ports[4], coordinator, cluster)
    _fill(bootstrap)

    app = App(bootstrap, group)
    kills: list[tuple[str, int, float]] = []  # (what, broker, progress fraction)
    plan = ["coordinator", "output leader", "input leader"]
    down: dict = {}  # the broker killed last until it is back in every ISR: {"node": node, "timer": its restart}
    done = 0
    deadline = time.monotonic() + DEADLINE_S

    def alive_port() -> int:
        return next(ports[b] for b in BROKERS if brokers[b].running)

    def victim(what: str) -> int | None:
        """The broker to kill; never the group's coordinator (librdkafka issue 5511: a producer whose cached group
        coordinator left the Metadata response hangs in send_offsets_to_transaction)."""
        port = alive_port()
        if what == "coordinator":
            b = _coordinator(port)
            return b if b != group_coordinator else None
        topic = "out" if what == "output leader" else "in"
        parts = _leaders(port) or {}
        previous = {b for _, b, _ in kills}
        leaders = [parts[(topic, p)][0] for p in range(3) if (topic, p) in parts]
        leaders = [b for b in leaders if b in BROKERS and b != group_coordinator]
        fresh = [b for b in leaders if b not in previous]
        return (fresh or leaders or [None])[0]

    def kill(what: str) -> None:
        b = victim(what)
        if b is None:
            return  # no leader off the group coordinator yet (the rebalance moves one back): the next transaction
        brokers[b].kill()
        kills.append((what, b, done / N))
        # restarted in 1.5 s whatever the loop is doing: the harness keeps the listening socket open (so the node
        # restarts on its port), and a client connecting meanwhile waits in its backlog instead of being refused
        restart = threading.Timer(1.5, brokers[b].start)
        restart.start()
        down.update(node=brokers[b], timer=restart)

    zombies = []

    def maybe_kill(phase: str) -> None:
        if not plan and not down and not zombies and done >= 4 * N // 5 and phase == "flushed":
            # another instance of the application starts: its producer fences this one, whose open transaction
            # (records written, offsets and commit not yet sent) is aborted; this one's next call fails, fatally
            successor = Producer({"bootstrap.servers": bootstrap, "transactional.id": TXN_ID})
            app._retry(lambda: successor.init_transactions(10), "successor init_transactions")
            zombies.append((successor, done / N))
        # the coordinator dies with the records written and the commit not sent; a leader with records in flight
        if plan and not down and done >= (len(kills) + 1) * N // 5:
            if (plan[0] == "coordinator") == (phase == "flushed"):
                before = len(kills)
                kill(plan[0])
                if len(kills) > before:
                    plan.pop(0)

    try:
        while done < N:
            assert time.monotonic() < deadline, (
                f"the loop made {done}/{N} in {DEADLINE_S} s; kills {kills}; {app.commits} commits, "
                f"{app.aborts} aborts, {app.recreated} recreations; errors {app.errors[-10:]}\n"
                + cluster.diagnostics())
            # as the other brokers see it: a restarted broker may answer from the image it had when it was killed
            if down and down["node"].running and _healthy([ports[b] for b in BROKERS if b != down["node"].node_id]):
                down.clear()  # back in every ISR: the next kill may come
            if plan and down and done >= (len(kills) + 1) * N // 5:
                # the next kill waits for the last victim to be back; the loop waits at the kill's mark
                time.sleep(0.1)
                continue
            if not plan and down and not zombies and done >= 4 * N // 5:
                # so does the successor instance: faster transactions can otherwise finish the run first
                time.sleep(0.1)
                continue
            done += app.transaction(maybe_kill)
        assert not plan, f"kills not done: {plan}; done {kills}"
        assert zombies and [e for e in app.fatal if e.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED)
                            and e.fatal()], (
            f"the fenced instance saw no fenced error: {app.fatal} {app.errors[-10:]}")
        if down:
            down["timer"].join(5)
            roles.wait_until(lambda: _healthy(ports.values()), "the last victim back in every ISR", cluster)

        want = [_transform(_value(i)) for i in range(N)]
        committed = _read_output(bootstrap, "read_committed", N)
        assert collections.Counter(committed) == collections.Counter(want), (
            f"read_committed output is not every input once: {_differences(committed, want)}; kills {kills}; "
            f"{app.commits} commits, {app.aborts} aborts, {app.recreated} recreations; errors {app.errors[-10:]}\n"
            + cluster.diagnostics())
        uncommitted = _read_output(bootstrap, "read_uncommitted", N + BATCH, quiet_s=0.5)
        # the fenced instance's transaction had its records written: aborted, they are in the log all the same
        assert len(uncommitted) > N and set(uncommitted) == set(want), _differences(uncommitted, want)

        _zombie_is_fenced(app, bootstrap)
        after = _read_output(bootstrap, "read_committed", N, quiet_s=1.0)
        assert collections.Counter(after) == collections.Counter(want), _differences(after, want)
        print(f"exactly once through {kills}: {app.commits} commits, {app.aborts} aborts, {app.recreated} "
              f"recreations, {len(uncommitted) - N} aborted records in the log, "
              f"{time.monotonic() - started:.1f} s; client errors {app.errors}")
    finally:
        if app.consumer is not None:
            app.close()
    assert coordinator in BROKERS


def _group_away_from(port: int, txn_coordinator: int, cluster) -> tuple[str, int]:
    """A group name coordinated by another broker than the transaction coordinator, and that broker."""
    from kraftwire.coordinator.partitioning import GROUP_TOPIC, partition_for

    roles.wait_until(lambda: _coordinator(port, "probe", 0), "a group coordinator", cluster)
    parts = roles.wait_until(lambda: (lambda p: p if p is not None and all(
        (GROUP_TOPIC, i) in p and p[(GROUP_TOPIC, i)][0] in BROKERS for i in range(GROUP_PARTITIONS)) else None)(
        _leaders(port)), "__consumer_offsets led", cluster)
    for k in range(100):
        name = f"eos-app-{k}"
        leader = parts[(GROUP_TOPIC, partition_for(name, GROUP_PARTITIONS))][0]
        if leader != txn_coordinator:
            return name, leader
    raise AssertionError(f"every __consumer_offsets partition is led by the transaction coordinator: {parts}")


def _zombie_is_fenced(app: App, bootstrap: str) -> None:
    """A second producer with the same transactional.id fences the first: the first's next transactional
    operation fails with a fatal fenced error and its record is never visible."""
    from confluent_kafka import KafkaError, KafkaException, Producer

    zombie = app.producer
    successor = Producer({"bootstrap.servers": bootstrap, "transactional.id": TXN_ID,
                          "transaction.timeout.ms": 20000, "message.timeout.ms": 20000})
    app._retry(lambda: successor.init_transactions(10), "successor init_transactions")
    zombie.begin_transaction()
    zombie.produce("out", value=b"zombie", partition=0)
    try:
        zombie.commit_transaction(15)
        raise AssertionError("the fenced producer committed a transaction")
    except KafkaException as e:
        err = e.args[0]
        assert err.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED), err
        assert err.fatal(), err
    successor.begin_transaction()
    successor.produce("out", value=_transform(b"successor"), partition=1)
    successor.abort_transaction(15)  # the successor works; what it aborts is never visible either
