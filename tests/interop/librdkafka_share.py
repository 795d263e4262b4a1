"""librdkafka's share consumer (KIP-932, a preview in its source) against kraftwire (issue #43); a script, not part
of the test command (a librdkafka build alone takes ~10 min on 2 cores).

    python tests/interop/librdkafka_share.py [--tests 0170,0171,...] [--ref v2.15.0] [--source GITDIR]
                                             [--target kraftwire|kafka] [--no-tests] [--no-mixed]
                                             [--timeout 900] [--records 400]

(``tests/interop/librdkafka_share.sh`` runs it with the repository's venv.)

1. Builds librdkafka and its ``tests/test-runner`` from its source, outside the tree, in
   ``~/.cache/kraftwire/librdkafka-<ref>`` (reused later), with ``benchmarks/librdkafka_suite.py``'s build. v2.15.0
   (the newest release tag; the newest commit after it only fixes 0184's flakiness) has the share consumer
   (``rd_kafka_share_consumer_new``, ``rd_kafka_share_consume_batch``, ``rd_kafka_share_acknowledge_type``, ...)
   and its tests 0170-0190. Build needs: ``apt-get install -y build-essential git libzstd-dev`` (optional
   ``libssl-dev zlib1g-dev``): without libzstd's headers at build time 0171's all-codecs sub-test fails on its own
   ``compression.type=zstd``, against any broker (the cached build is reused as is: remove it, or give ``--cache``,
   to rebuild after installing).
2. Starts one combined node with share groups on (``storage format --feature share.version=1``): kraftwire, or with
   ``--target kafka`` Apache Kafka 4.4 (``tests/harness/kafka.py``'s ``KafkaNode``) to tell a kraftwire fault from a
   limitation of librdkafka's preview; runs librdkafka's share tests that need a broker (the ``*_mock`` ones run on
   librdkafka's mock cluster and are not about the broker), each alone, ``TEST_KAFKA_VERSION=4.4.0`` (they are
   gated on >= 4.2), and prints each test and sub-test as passed/failed/skipped.
3. The mixed run: ``--records`` records on a topic of ``--partitions`` (default 1: the simple assignor gives the
   one partition to both members, which acquire its batches in turn); a small C share consumer on the librdkafka just
   built (``librdkafka_share_consumer.c`` beside this script: explicit acknowledgement, one
   ``rd_kafka_share_acknowledge`` per record, ``rd_kafka_share_commit_sync`` after each batch) and a Java
   ``KafkaShareConsumer`` (``tests/kafka/ShareMixed.java``: the same, ``acknowledge`` per record, ``commitSync``)
   read it together in one share group; both RELEASE a value v with v % 10 == 7 on its first delivery (it comes back
   to either) and ACCEPT every other delivery. Each prints one line per acknowledged record with its commit's
   outcome; the run checks every record was ACCEPTed exactly once across the two, none lost, and both took part,
   and prints the group's persisted start offsets (ListShareGroupOffsets through the Java Admin): Kafka 4.4 writes
   a start offset as it was before the acknowledgement being written, so they may stay short of the end (the same
   numbers on both targets).

Exits 1 unless every selected test passed and the mixed run held.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "benchmarks"), os.path.join(ROOT, "tests")]

import librdkafka_suite as suite  # noqa: E402
from harness import kafka  # noqa: E402

#: librdkafka's share tests that run against a broker (0182/0183 and 0155-0158 use its mock cluster)
SHARE_TESTS = "0170,0171,0172,0173,0174,0175,0176,0177,0178,0179,0180,0181,0184,0185,0186,0190"
#: one node's share-group topics with one replica of everything (as tests/server/test_share_fetch_node.py), and
#: record locks down to 1 s, as librdkafka's CI sets its brokers (tests/cluster_testing.py): its lock-expiry tests set
#: a group's share.record.lock.duration.ms to 3000, under the default floor of 15000
SHARE_PROPS = ("share.coordinator.state.topic.replication.factor=1\nshare.coordinator.state.topic.min.isr=1\n"
               "share.coordinator.state.topic.num.partitions=1\ngroup.share.min.record.lock.duration.ms=1000\n")
SHARE_FORMAT = ("--feature", "share.version=1")
KAFKA_FORMAT = ("--release-version", "4.4-IV0", *SHARE_FORMAT)


def say(msg: str) -> None:
    print(f"[librdkafka_share] {msg}", flush=True)


class KafkaTarget(kafka.KafkaNode):
    """Apache Kafka 4.4, set up as the kraftwire node is (librdkafka_suite's broker props plus share groups)."""

    def __init__(self, base: str) -> None:
        super().__init__(base, suite.NODE_PROPS.replace("offsets.topic.replication.factor=1\n", "")
                         .replace("transaction.state.log.replication.factor=1\n", "")
                         .replace("transaction.state.log.min.isr=1\n", "") + SHARE_PROPS,
                         format_args=KAFKA_FORMAT)
        self.log = os.path.join(base, "kafka.out")

    def client_conf(self) -> str:
        return (f"bootstrap.servers=127.0.0.1:{self.port}\nbroker.address.family=v4\n"
                f"test.timeout.multiplier={suite.TIMEOUT_MULTIPLIER}\n")


def start_target(target: str, base: str):
    os.makedirs(base)
    if target == "kafka":
        node = KafkaTarget(base).__enter__()
        kafka.until_broker_answers(node.port)
    else:
        node = suite.Node(base, sasl=False, extra_props=SHARE_PROPS, format_args=SHARE_FORMAT).__enter__()
    say(f"{target} serving PLAINTEXT on 127.0.0.1:{node.port} (log {node.log})")
    return node


# ---------------------------------------------------------------------------------------------------- mixed run
def build_consumer(tree: str, out: str) -> str:
    """Compile librdkafka_share_consumer.c against the librdkafka in ``tree``; the binary's path."""
    exe = os.path.join(out, "librdkafka_share_consumer")
    cmd = ["cc", "-O1", "-Wall", "-Werror", "-o", exe, os.path.join(HERE, "librdkafka_share_consumer.c"),
           "-I", os.path.join(tree, "src"), "-L", os.path.join(tree, "src"), "-lrdkafka", "-lpthread"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"librdkafka_share: compiling the C share consumer failed:\n{done.stderr}")
    return exe


def accepted(path: str) -> list[int]:
    """The values a consumer's output reports ACCEPTed with a successful commit (``ACKED v ACCEPT OK ...``)."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8", errors="replace") as f:
        return [int(parts[1]) for parts in (line.split() for line in f)
                if len(parts) > 3 and parts[0] == "ACKED" and parts[2:4] == ["ACCEPT", "OK"]]


def mixed_run(port: int, tree: str, env: dict, work: str, records: int, partitions: int,
              timeout: float) -> tuple[bool, list[str]]:
    """The C and the Java share consumer on one topic and group, until every record was ACCEPTed by one of them
    (then the file ``stop`` ends both) or ``timeout``; (held, report lines)."""
    exe = build_consumer(tree, work)
    bootstrap, topic, group = f"127.0.0.1:{port}", "mixed-share", "mixed-share-group"
    c_out, j_out = os.path.join(work, "mixed-c.out"), os.path.join(work, "mixed-java.out")
    ready, stop = os.path.join(work, "mixed-c.ready"), os.path.join(work, "mixed.stop")
    # The Java side creates the topic and sets share.auto.offset.reset=earliest ("SETUP"), then produces once the C
    # consumer is polling (its ``ready`` file) and both members have assignments.
    java = subprocess.Popen(["java", "-cp", os.path.join(kafka.kafka_libs(), "*"),
                             os.path.join(ROOT, "tests", "kafka", "ShareMixed.java"), bootstrap, topic, group,
                             str(records), ready, stop, str(int(timeout * 1000)), str(partitions)],
                            stdout=open(j_out, "wb"), stderr=subprocess.STDOUT)
    c = None
    deadline = time.monotonic() + timeout + 30
    try:
        while java.poll() is None and time.monotonic() < deadline:
            if c is None and "SETUP" in open(j_out, errors="replace").read():
                c = subprocess.Popen([exe, bootstrap, topic, group, ready, stop, str(int(timeout))],
                                     stdout=open(c_out, "wb"), stderr=subprocess.STDOUT, env=env)
            if set(accepted(c_out)) | set(accepted(j_out)) >= set(range(records)):
                open(stop, "w").close()
            time.sleep(0.5)
        open(stop, "w").close()
        java.wait(60)
        if c is not None:
            c.wait(60)
    except subprocess.TimeoutExpired:
        pass
    finally:
        for p in (java, c):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    by_c, by_j = accepted(c_out), accepted(j_out)
    counts: dict[int, int] = {}
    for v in by_c + by_j:
        counts[v] = counts.get(v, 0) + 1
    lost = sorted(set(range(records)) - set(counts))
    twice = sorted(v for v, n in counts.items() if n > 1)
    stranger = sorted(set(counts) - set(range(records)))
    with open(j_out, errors="replace") as f:
        tail = [line.strip() for line in f if line.startswith(("PRODUCED", "START_OFFSETS", "DONE", "TIMEOUT"))]
    released = sum(1 for path in (c_out, j_out) if os.path.exists(path)
                   for line in open(path, errors="replace") if line.startswith("ACKED ") and " RELEASE OK " in line)
    report = [f"records {records}; ACCEPTed by the C consumer {len(by_c)}, by the Java one {len(by_j)}; RELEASEs "
              f"{released}; java exit {java.returncode}, C exit {None if c is None else c.returncode}",
              f"lost {len(lost)} {lost[:20]}; ACCEPTed more than once {len(twice)} {twice[:20]}; "
              f"unknown values {stranger[:20]}", *tail, f"outputs: {c_out} {j_out}"]
    held = (not lost and not twice and not stranger and bool(by_c) and bool(by_j) and java.returncode == 0
            and c is not None and c.returncode == 0 and "DONE" in tail)
    return held, report


# ---------------------------------------------------------------------------------------------------- main
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", default=suite.DEFAULT_SOURCE, help="librdkafka git dir or source tree")
    ap.add_argument("--ref", default="v2.15.0", help="git ref to build (ignored for a source tree)")
    ap.add_argument("--cache", default="", help="build dir, default ~/.cache/kraftwire/librdkafka-<ref>")
    ap.add_argument("--tests", default=SHARE_TESTS, help="comma-separated librdkafka test numbers")
    ap.add_argument("--target", choices=("kraftwire", "kafka"), default="kraftwire")
    ap.add_argument("--no-tests", action="store_true", help="only the mixed run")
    ap.add_argument("--no-mixed", action="store_true", help="only librdkafka's tests")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per test-runner run")
    ap.add_argument("--records", type=int, default=400, help="records in the mixed run")
    ap.add_argument("--partitions", type=int, default=1,
                    help="partitions of the mixed run's topic (1: the two consumers share it)")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="kraftwire-librdkafka-share-")
    safe_ref = re.sub(r"[^\w.-]", "_", args.ref)
    tree = args.cache or os.path.expanduser(f"~/.cache/kraftwire/librdkafka-{safe_ref}")
    os.makedirs(os.path.dirname(os.path.abspath(tree)), exist_ok=True)
    say(f"work dir {work}")
    tests_dir = suite.build(args.source, args.ref, tree, work)
    env = dict(os.environ, TEST_KAFKA_VERSION="4.4.0",
               LD_LIBRARY_PATH=os.pathsep.join(filter(None, [os.path.join(tree, "src"), os.path.join(tree, "src-cpp"),
                                                             os.environ.get("LD_LIBRARY_PATH")])))
    for k in ("TESTS", "SUBTESTS", "TESTS_SKIP", "TEST_DEBUG"):
        env.pop(k, None)

    ok, results = True, []
    if not args.no_tests:
        node = start_target(args.target, os.path.join(work, "node"))
        try:
            conf = os.path.join(work, "test.conf")
            with open(conf, "w") as f:
                f.write(node.client_conf())
            for num in [t.strip().zfill(4) for t in args.tests.split(",") if t.strip()]:
                rows, _passed, _auth = suite.run_test(num, tests_dir, dict(env, RDKAFKA_TEST_CONF=conf),
                                                      args.timeout, work)
                results.append((num, rows, rows[0][0]))  # the test's verdict: passed, failed or skipped
                say(f"{num}: {rows[0][0]}")
        finally:
            node.__exit__(None, None, None)
    mixed = None
    if not args.no_mixed:
        node = start_target(args.target, os.path.join(work, "mixed-node"))
        try:
            mixed = mixed_run(node.port, tree, env, work, args.records, args.partitions, 180)
        finally:
            node.__exit__(None, None, None)

    print(f"\nlibrdkafka {args.ref} share tests against one {args.target} node (share.version=1, "
          "TEST_KAFKA_VERSION=4.4.0)\n")
    for num, rows, verdict in results:
        ok = ok and verdict != "failed"
        print(f"{verdict.upper():<8}{num}")
        for line in dict.fromkeys(rows[0][3]):
            print(f"  {'':<17}   {line}")
        for result, run, name, detail in rows[1:]:
            print(f"  {result:<10} {run:<6} {name}")
            for line in dict.fromkeys(detail):
                print(f"  {'':<17}   {line}")
    if results:
        tests = {s: sum(1 for *_x, v in results if v == s) for s in ("passed", "failed", "skipped")}
        subs = {s: sum(1 for _n, rows, _v in results for r in rows[1:] if r[0] == s)
                for s in ("passed", "failed", "skipped")}
        print(f"\ntests: {tests}; sub-test runs: {subs}")
    if mixed is not None:
        held, report = mixed
        ok = ok and held
        print(f"\nmixed run (C librdkafka + Java KafkaShareConsumer, one share group): "
              f"{'HELD' if held else 'FAILED'}")
        for line in report:
            print(f"  {line}")
    print(f"\noutputs and node logs in {work}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
