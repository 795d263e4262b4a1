"""Security benchmark: what TLS and SASL cost, measured as ratios in one run on this machine.

    python benchmarks/security_bench.py [--records 100000] [--logins 200]

One combined node (broker,controller; fsync on) with three client listeners: PLAINTEXT, SASL_SSL with PLAIN, and
SASL_PLAINTEXT with SCRAM-SHA-512 (credentials added by ``storage format --add-scram``). Reported:

* confluent-kafka produce throughput (acks=all, 100-byte values) on PLAINTEXT and on SASL_SSL, and their ratio
  (the issue's goal: SASL_SSL >= 60 % of plaintext);
* SCRAM-SHA-512 logins per second (connect, SaslHandshake, two SaslAuthenticate round trips; 4096 iterations);
* acks=all latency at concurrency 1 of an authenticated producer, p99 with and without a storm of failed logins
  (bounded in count and time; ``--storm-connections`` at once, each retrying as soon as it is refused) running beside
  it (goal: <= 1.5x);
* what ACL checks cost (``--acls N``): a second, KRaft node (``server-start``) with
  ``authorizer.class.name=StandardAuthorizer`` and N unrelated ACLs besides the one that lets alice write; produce
  throughput to a 3-partition topic as alice (every batch checked against the ACLs) against the super user admin on
  the same node and listener (whose check is a set lookup), and their ratio.

Figures depend on the machine; they are reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import sys
import tempfile
import time

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from harness import roles  # noqa: E402
from harness.certs import CA  # noqa: E402

VALUE = b"x" * 100
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";')


def produce_throughput(conf: dict, n: int, topic: str = "roles") -> float:
    from confluent_kafka import Producer

    p = Producer({**conf, "acks": "all", "linger.ms": 5, "batch.size": 1_000_000,
                  "queue.buffering.max.messages": 1_000_000})
    start = time.perf_counter()
    for _ in range(n):
        while True:
            try:
                p.produce(topic, VALUE)
                break
            except BufferError:
                p.poll(0.005)
    assert p.flush(300) == 0
    return n / (time.perf_counter() - start)


def latency_p99(conf: dict, n: int) -> float:
    from confluent_kafka import Producer

    p = Producer({**conf, "acks": "all", "linger.ms": 0})
    samples = []
    for _ in range(n):
        done = []
        t0 = time.perf_counter()
        p.produce("roles", VALUE, on_delivery=lambda err, msg: done.append(err))
        while not done:
            p.poll(0.0005)
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    return samples[min(len(samples) - 1, int(0.99 * len(samples)))]


def scram_logins(port: int, n: int, password: str = "alice-secret", seconds: float = 120.0) -> tuple[float, int]:
    from kraftwire.security.sasl.client import SaslLogin
    from kraftwire.server.edge.client import KafkaConnection, SaslLoginError

    login = SaslLogin("SCRAM-SHA-512", "alice", password)

    async def run():
        failures = done = 0
        start = time.perf_counter()
        for _ in range(n):
            if time.perf_counter() - start > seconds:
                break
            done += 1
            try:
                conn = await KafkaConnection.open("127.0.0.1", port, timeout=10, sasl=login)
                await conn.close()
            except SaslLoginError:
                failures += 1
            except (OSError, asyncio.TimeoutError):
                failures += 1
        return done / (time.perf_counter() - start), failures

    return asyncio.run(run())


def failed_login_storm(port: int, connections: int, seconds: float, limit: int, count) -> None:
    """Failed SCRAM-SHA-512 logins on ``connections`` connections at once, each retrying as soon as its failure is
    answered (which Kafka's KIP-306 delay, 100 ms, holds back); bounded by ``seconds`` and ``limit`` logins.
    ``count`` (a shared int) counts the failures answered."""
    import functools

    from kraftwire.security.sasl import scram
    from kraftwire.security.sasl.client import SaslLogin
    from kraftwire.server.edge.client import KafkaConnection, SaslLoginError

    # an attacker's PBKDF2 is its own cost, not the node's: keep it off these 2 cores
    scram.salted_password = functools.lru_cache(maxsize=4)(scram.salted_password)
    login = SaslLogin("SCRAM-SHA-512", "alice", "wrong")
    deadline = time.monotonic() + seconds

    async def one() -> None:
        while time.monotonic() < deadline and count.value < limit:
            try:
                conn = await KafkaConnection.open("127.0.0.1", port, timeout=10, sasl=login)
                await conn.close()
            except (SaslLoginError, OSError, asyncio.TimeoutError):
                with count.get_lock():
                    count.value += 1

    async def run() -> None:
        await asyncio.gather(*(one() for _ in range(connections)))

    asyncio.run(run())


def acl_overhead(base: str, records: int, acl_count: int) -> None:
    """Produce as an ACL-checked principal and as a super user to the same KRaft node; prints the ratio."""

    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, AdminClient, NewTopic
    from confluent_kafka.admin import ResourcePatternType, ResourceType

    jaas = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
            'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
    props = ("listener.security.protocol.map=CONTROLLER:PLAINTEXT,BROKER:SASL_PLAINTEXT\n"
             "sasl.enabled.mechanisms=PLAIN\nsasl.mechanism.inter.broker.protocol=PLAIN\n"
             f"listener.name.broker.plain.sasl.jaas.config={jaas}\n"
             "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"
             "super.users=User:admin;User:ANONYMOUS\noffsets.topic.replication.factor=1\n")
    os.makedirs(os.path.join(base, "acl"), exist_ok=True)
    cluster = roles.RolesCluster(os.path.join(base, "acl"), controllers=1, brokers=0, combined=True, kraft=True,
                                 extra_props=props)
    node = cluster.nodes[1]
    try:
        cluster.start_all()
        common = {"bootstrap.servers": f"localhost:{node.port_of('BROKER')}", "security.protocol": "SASL_PLAINTEXT",
                  "sasl.mechanisms": "PLAIN"}
        admin_conf = {**common, "sasl.username": "admin", "sasl.password": "admin-secret"}
        alice_conf = {**common, "sasl.username": "alice", "sasl.password": "alice-secret"}
        admin = AdminClient(admin_conf)
        deadline = time.monotonic() + 60
        while True:
            try:
                admin.create_topics([NewTopic("bench", 3, 1)])["bench"].result(timeout=10)
                break
            except Exception as exc:  # the broker may still be fenced right after start
                if "already exists" in str(exc):  # an earlier attempt timed out after creating it
                    break
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        acls = [AclBinding(ResourceType.TOPIC, f"other-{i}", ResourcePatternType.LITERAL, f"User:user-{i % 50}", "*",
                           AclOperation.READ, AclPermissionType.ALLOW) for i in range(acl_count)]
        acls.append(AclBinding(ResourceType.TOPIC, "bench", ResourcePatternType.LITERAL, "User:alice", "*",
                               AclOperation.WRITE, AclPermissionType.ALLOW))
        for i in range(0, len(acls), 1000):
            for future in admin.create_acls(acls[i:i + 1000]).values():
                future.result(timeout=60)
        time.sleep(1)  # the broker's image has the ACLs
        produce_throughput(admin_conf, min(10_000, records), topic="bench")  # warm up
        t_admin = produce_throughput(admin_conf, records, topic="bench")
        t_alice = produce_throughput(alice_conf, records, topic="bench")
        print(f"produce with ACLs on ({acl_count + 1:,} ACLs), SASL_PLAINTEXT, acks=all, 100 B: super user "
              f"{t_admin:,.0f} records/s, ACL-checked user {t_alice:,.0f} records/s: {t_alice / t_admin:.0%}")
    finally:
        cluster.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--logins", type=int, default=200)
    parser.add_argument("--latency-records", type=int, default=2000)
    parser.add_argument("--acls", type=int, default=5000, help="unrelated ACLs on the ACL-checked node")
    parser.add_argument("--storm-connections", type=int, default=20, help="failed logins in flight at once")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as base:
        ca = CA(os.path.join(base, "ca"))
        cert = ca.issue("node")
        props = ("listener.security.protocol.map=CONTROLLER:PLAINTEXT,BROKER:PLAINTEXT,SECURE:SASL_SSL,"
                 "SCRAM:SASL_PLAINTEXT\n"
                 "listener.name.secure.sasl.enabled.mechanisms=PLAIN\n"
                 f"listener.name.secure.plain.sasl.jaas.config={JAAS}\n"
                 f"listener.name.secure.ssl.keystore.type=PEM\nlistener.name.secure.ssl.keystore.location="
                 f"{cert.bundle_path}\n"
                 "listener.name.scram.sasl.enabled.mechanisms=SCRAM-SHA-512\n")
        cluster = roles.RolesCluster(base, controllers=1, brokers=0, combined=True, extra_props=props,
                                     extra_listeners=("SECURE", "SCRAM"),
                                     format_args=("--add-scram", "SCRAM-SHA-512=[name=alice,password=alice-secret]"))
        node = cluster.nodes[1]
        try:
            cluster.start_all()
            cluster.wait_for_leader()
            plain = {"bootstrap.servers": f"localhost:{node.port_of('BROKER')}"}
            secure = {"bootstrap.servers": f"localhost:{node.port_of('SECURE')}", "security.protocol": "SASL_SSL",
                      "ssl.ca.location": ca.path, "sasl.mechanisms": "PLAIN", "sasl.username": "alice",
                      "sasl.password": "alice-secret"}
            produce_throughput(plain, min(10_000, args.records))  # warm up
            t_plain = produce_throughput(plain, args.records)
            t_secure = produce_throughput(secure, args.records)
            print(f"produce, acks=all, 100 B: PLAINTEXT {t_plain:,.0f} records/s, SASL_SSL (PLAIN) "
                  f"{t_secure:,.0f} records/s: {t_secure / t_plain:.0%}")
            rate, failures = scram_logins(node.port_of("SCRAM"), args.logins)
            print(f"SCRAM-SHA-512 logins (4096 iterations): {rate:,.1f}/s over {args.logins} ({failures} failed)")
            quiet = latency_p99(secure, args.latency_records)
            # the storm runs in its own process: in this one its SCRAM client work would hold the GIL the
            # measuring producer's callbacks need, and the figure would be the benchmark's, not the node's
            count = multiprocessing.Value("i", 0)
            storm = multiprocessing.Process(target=failed_login_storm,
                                            args=(node.port_of("SCRAM"), args.storm_connections, 60, 20_000, count),
                                            daemon=True)
            storm.start()
            time.sleep(1)  # the storm under way
            t0, before = time.perf_counter(), count.value
            stormy = latency_p99(secure, args.latency_records)
            storm_rate = (count.value - before) / (time.perf_counter() - t0)
            storm.terminate()
            storm.join(10)
            print(f"authenticated producer p99 (acks=all, one at a time): {quiet:.2f} ms quiet, {stormy:.2f} ms during "
                  f"a storm of failed SCRAM logins ({args.storm_connections} at a time, {storm_rate:,.0f} failed "
                  f"logins/s answered): {stormy / quiet:.2f}x")
        finally:
            cluster.close()
        acl_overhead(base, args.records, args.acls)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
