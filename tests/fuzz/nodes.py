"""The node configurations the fuzzer runs against, each a real ``server-start`` process (or two) on loopback:

* ``open``: one combined node (``broker,controller``), PLAINTEXT, no authorizer; its client and controller
  listeners are fuzzed.
* ``authorizer``: the same with SASL_PLAINTEXT listeners and ``StandardAuthorizer``; ``admin`` is the super user
  (the node's own links log in as it), ``alice`` has no ACLs — she is fuzzed on both listeners, and a SASL listener
  is also fuzzed before any login.
* ``split``: a controller and a separate broker (which forwards the controller's APIs to it).

Set-up common to all: topics with a few partitions and records, one named for the catastrophic regexes
(``generator.REDOS_TOPIC``), the internal topics created up front (FindCoordinator) so that nothing the fuzzer
does creates them later. Automatic topic creation is off: it happens after its Metadata request has been
answered, which would blur which request changed the metadata. Group session timeouts are short
(``group.min/max.session.timeout.ms`` 100..2000 ms, no initial rebalance delay) so that a join waiting for members
who never come back waits seconds, not minutes, and a hang stays distinguishable.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from fuzz.client import RawConnection, advertised
from fuzz.generator import REDOS_TOPIC, Pools
from fuzz.runner import ANSWER_TIMEOUT_S, Stream, Target
from harness.roles import RolesCluster
from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder

FUZZ_PROPS = ("auto.create.topics.enable=false\noffsets.topic.num.partitions=2\n"
              "offsets.topic.replication.factor=1\ntransaction.state.log.num.partitions=2\n"
              "transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n"
              "group.min.session.timeout.ms=100\ngroup.max.session.timeout.ms=2000\n"
              "group.initial.rebalance.delay.ms=0\n")
ADMIN, ALICE = ("admin", "admin-secret"), ("alice", "alice-secret")
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
SASL_PROPS = ("listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT,BROKER:SASL_PLAINTEXT\n"
              "inter.broker.listener.name=BROKER\nsasl.enabled.mechanisms=PLAIN\n"
              "sasl.mechanism.controller.protocol=PLAIN\nsasl.mechanism.inter.broker.protocol=PLAIN\n"
              f"listener.name.controller.plain.sasl.jaas.config={JAAS}\n"
              f"listener.name.broker.plain.sasl.jaas.config={JAAS}\n"
              "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"
              "super.users=User:admin\n")
TOPICS = {"fuzz-a": (3, {}), "fuzz-b": (1, {"cleanup.policy": "compact"}), REDOS_TOPIC: (1, {})}
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state")


@dataclass
class Running:
    """A started configuration: the cluster (for its processes and log dirs), the target and its streams."""

    cluster: RolesCluster
    target: Target
    streams: dict[str, Stream]
    advertised: dict[str, dict[int, tuple[int, int]]]


def start(kind: str, base: str) -> Running:
    if kind == "split":
        cluster = RolesCluster(base, controllers=1, brokers=1, kraft=True, extra_props=FUZZ_PROPS)
        controller, broker = cluster.controllers[0], cluster.brokers[0]
    else:
        cluster = RolesCluster(base, controllers=1, brokers=0, combined=True, kraft=True,
                               extra_props=FUZZ_PROPS + (SASL_PROPS if kind == "authorizer" else ""))
        controller = broker = cluster.controllers[0]
    try:
        for node in cluster.nodes.values():
            node.start()
        login = ADMIN if kind == "authorizer" else None
        client_port, controller_port = broker.port_of("BROKER"), controller.port_of("CONTROLLER")
        pools = prepare(client_port, login, cluster.cluster_id)
        pools.node_ids = tuple(sorted(cluster.nodes))
        target = Target(kind, list(cluster.nodes.values()), controller_port, login, pools,
                        authorizer=kind == "authorizer", frozen=kind == "authorizer",
                        restore=lambda: restore(client_port, login, pools))
        fuzzed, acls = (ALICE, True) if kind == "authorizer" else (None, False)
        streams = {"client": Stream("client", client_port, fuzzed, plausible_first=acls),
                   "controller": Stream("controller", controller_port, fuzzed, controller=True,
                                        plausible_first=acls)}
        if kind == "authorizer":
            streams["before-login"] = Stream("before-login", client_port, None, before_login=True)
        ads = {name: advertised(s.port, ANSWER_TIMEOUT_S, s.login) for name, s in streams.items()}
        return Running(cluster, target, streams, ads)
    except BaseException:
        cluster.close()
        raise


def _until(what: str, attempt, timeout_s: float = 60.0):
    """``attempt()``'s first value that is not None, retried on connection errors; AssertionError naming ``what``."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        try:
            got = attempt()
            if got is not None:
                return got
        except (OSError, ConnectionError, AssertionError) as exc:
            last = exc
        time.sleep(0.1)
    raise AssertionError(f"{what} not within {timeout_s} s (last: {last!r})")


def prepare(port: int, login, cluster_id: str) -> Pools:
    """Topics, records and the internal topics, created through the client listener as a super user; the pools
    the generator draws plausible values from."""
    def admin():
        return RawConnection(port, ANSWER_TIMEOUT_S, login)

    def broker_up():
        conn = admin()
        try:
            return conn.request(w.MetadataRequest(topics=[]), 12).brokers or None
        finally:
            conn.close()

    _until("a broker online", broker_up)
    conn = admin()
    try:
        created = _create(conn, TOPICS)
        assert all(t.error_code == 0 for t in created.topics), created
        for key_type, key in ((0, "fuzz-group"), (1, "fuzz-txn")):
            _until(f"the coordinator of {key}", lambda: _coordinator(conn, key_type, key))
        for p in range(TOPICS["fuzz-a"][0]):
            _until(f"a record in fuzz-a-{p}", lambda: _produce(conn, "fuzz-a", p))
        md = conn.request(w.MetadataRequest(topics=None), 12)
    finally:
        conn.close()
    return Pools(topics=_pool_topics(md), cluster_id=cluster_id, node_ids=())


def restore(port: int, login, pools: Pools) -> None:
    """Create the set-up topics a fuzzed DeleteTopics removed (empty; a refusal is left for the next time) and
    point ``pools`` at the topics there are now."""
    conn = RawConnection(port, ANSWER_TIMEOUT_S, login)
    try:
        there = {t.name for t in conn.request(w.MetadataRequest(topics=None), 12).topics}
        missing = {name: spec for name, spec in TOPICS.items() if name not in there}
        if missing:
            _create(conn, missing)
        md = conn.request(w.MetadataRequest(topics=None), 12)
    finally:
        conn.close()
    pools.topics = {**pools.topics, **_pool_topics(md)}  # (a topic gone meanwhile keeps its last id)


def _pool_topics(md) -> dict:
    """The set-up and internal topics of a Metadata answer, by name: always the same names (those the fuzzer creates
    come and go), so that a case draws the same choices whatever ran before it — only the ids differ."""
    found = {t.name: (t.topic_id, len(t.partitions)) for t in md.topics}
    return {name: found[name] for name in sorted(set(TOPICS) | set(INTERNAL_TOPICS)) if name in found}


def _create(conn: RawConnection, topics: dict):
    CT = w.CreateTopicsRequest
    return conn.request(CT(timeout_ms=10_000, topics=[
        CT.CreatableTopic(name=name, num_partitions=n, replication_factor=1, configs=[
            CT.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()])
        for name, (n, configs) in topics.items()]), 7)


def _coordinator(conn: RawConnection, key_type: int, key: str):
    F = w.FindCoordinatorRequest
    answer = conn.request(F(key_type=key_type, coordinator_keys=[key]), 4)
    return answer if answer.coordinators[0].error_code == 0 else None


def _produce(conn: RawConnection, topic: str, partition: int):
    P = w.ProduceRequest
    b = RecordBatchBuilder()
    b.append(b"k", b"fuzz set-up")
    answer = conn.request(P(acks=-1, timeout_ms=5000, topic_data=[P.TopicProduceData(name=topic, partition_data=[
        P.PartitionProduceData(index=partition, records=b.build())])]), 9)
    return answer if answer.responses[0].partition_responses[0].error_code == 0 else None
