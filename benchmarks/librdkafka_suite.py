"""librdkafka's own integration tests (its tests/ test-runner) against a one-node kraftwire (issue #35).

    python benchmarks/librdkafka_suite.py [--source GITDIR|TREE] [--ref v2.15.0] [--tests 0011,0082,0081]
                                          [--keep [CACHEDIR]] [--timeout 900] [--kafka-version 4.0.0]

librdkafka's source is never part of this repository: the script exports ``--ref`` from ``--source`` (a git
directory, ``git archive``; or an unpacked source tree, copied) into a build directory outside the repo, runs
``./configure`` with the optional dependencies it does not need turned off (GSSAPI, libcurl, external LZ4; zlib,
OpenSSL and zstd are used when their headers are there), builds the library and ``tests/test-runner``, then:

* formats and starts one combined kraftwire node (broker + controller) in a temp dir on free 127.0.0.1 ports, set
  up as librdkafka's test clusters are (auto-created topics with 4 partitions, an ACL authorizer allowing what no
  ACL names),
* writes a ``test.conf`` with its ``bootstrap.servers`` and the timeout multiplier librdkafka's CI uses (3:
  0081 alone takes ~181 s against Apache Kafka 4.4 itself, past its 1x budget of 180 s) (``RDKAFKA_TEST_CONF``),
* runs each selected test alone (``TESTS=0nnn ./test-runner -p1``, ``TEST_KAFKA_VERSION`` set) with a bounded
  timeout; a failed check ends the test, so for a test that fails, each sub-test the run did not finish (found
  from the ``SUB_TEST`` calls in its source) is run again by itself (``SUBTESTS=func:line``),
* runs the sub-tests that skipped for want of an authenticated principal again on a second node whose client
  listener is SASL_PLAINTEXT (PLAIN),
* prints test/sub-test -> passed/failed/skipped with the failing checks, stops the nodes, exits 1 unless every
  test passed.

Without ``--keep`` the build lives in the run's temp dir and is removed afterwards (a full build takes ~10 min on 2
cores); ``--keep`` builds in (and on later runs reuses) ``~/.cache/kraftwire/librdkafka-<ref>``, ``--keep DIR`` in
DIR. The build needs a C and C++ compiler, make, git and tar (Debian/Ubuntu: ``apt-get install build-essential
git``; optionally ``libssl-dev zlib1g-dev libzstd-dev``); the script says so and stops when they are missing. The
default ``--ref`` is v2.15.0, the newest release tag of librdkafka's repository and the closest release to the 2.16.0
the confluent-kafka wheel bundles.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# The shared test helpers (tests/harness) beside these benchmarks; kraftwire itself is whichever one is installed.
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from harness import processes  # noqa: E402

DEFAULT_SOURCE = "/work/.mirror/confluentinc+librdkafka/repo"
CONFIGURE_ARGS = ("--disable-gssapi", "--disable-curl", "--disable-lz4-ext")
#: the optional dependencies ./configure picks up when their headers are there
OPTIONAL_HEADERS = ("zstd.h", "zlib.h", "openssl/ssl.h")
# The broker librdkafka's test clusters run (tests/scenarios/default.json, trivup): topics auto-created with 4
# partitions; an ACL authorizer (the ACL admin sub-tests need one) that allows what no ACL names, as those clusters do;
# one replica of everything on this single node.
#: as librdkafka's CI runs its tests (1 + 2 for test_on_ci)
TIMEOUT_MULTIPLIER = 3
NODE_PROPS = ("auto.create.topics.enable=true\nnum.partitions=4\ndefault.replication.factor=1\n"
              "offsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n"
              "transaction.state.log.min.isr=1\n"
              "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"
              "allow.everyone.if.no.acl.found=true\n")
# Sub-tests that need an authenticated principal (test_needs_auth(): security.protocol is not plaintext) run again on
# a node whose client listener is SASL_PLAINTEXT with PLAIN (librdkafka's sasl_test.py user).
SASL_USER, SASL_PASSWORD = "testuser", "testpass"
C_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def say(msg: str) -> None:
    print(f"[librdkafka_suite] {msg}", flush=True)


# ---------------------------------------------------------------------------------------------------- build
def check_tools() -> None:
    missing = [t for t in ("cc", "c++", "make", "bash", "git", "tar") if shutil.which(t) is None]
    if missing:
        sys.exit(f"librdkafka_suite: missing build tools {missing}; on Debian/Ubuntu run:\n"
                 "    apt-get update && apt-get install -y build-essential git\n"
                 "(optional, for SSL/compression: libssl-dev zlib1g-dev libzstd-dev)")


def source_id(source: str, ref: str) -> str:
    """The commit ``ref`` names in git dir ``source``; for a plain source tree, its path."""
    if os.path.isdir(source) and not os.path.exists(os.path.join(source, "configure")):
        out = subprocess.run(["git", "--git-dir", source, "rev-parse", f"{ref}^{{commit}}"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"librdkafka_suite: {ref!r} is not a commit of {source}: {out.stderr.strip()}")
        return out.stdout.strip()
    return "tree:" + os.path.abspath(source)


def export(source: str, ref: str, dest: str) -> None:
    os.makedirs(dest)
    if source_id(source, ref).startswith("tree:"):
        shutil.copytree(source, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".git"))
        return
    archive = subprocess.Popen(["git", "--git-dir", source, "archive", "--format=tar", ref], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", dest], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        sys.exit(f"librdkafka_suite: git archive {ref} failed")


def run_logged(cmd: list[str], cwd: str, log: str, what: str) -> None:
    # The log lives outside the tree: mklove takes any ./configure.<name> in the tree for one of its modules.
    say(f"{what} ({' '.join(cmd)}; log {log})")
    with open(log, "ab") as f:
        done = subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        with open(log, encoding="utf-8", errors="replace") as f:
            tail = f.read()[-3000:]
        sys.exit(f"librdkafka_suite: {what} failed (exit {done.returncode}); end of {log}:\n{tail}")


def build(source: str, ref: str, tree: str, logdir: str) -> str:
    """Export and build librdkafka and its test-runner in ``tree`` (reused when its stamp matches); returns
    tree/tests. The stamp names the optional headers found, so that installing one (libzstd-dev: tests that set
    ``compression.type=zstd`` fail in the client without it) rebuilds."""
    stamp = os.path.join(tree, ".kraftwire-build-stamp")
    found = [h for h in OPTIONAL_HEADERS if os.path.exists(os.path.join("/usr/include", h))]
    want = f"{source_id(source, ref)} {' '.join(CONFIGURE_ARGS)} with {','.join(found) or 'none'}\n"
    tests = os.path.join(tree, "tests")
    if os.path.exists(stamp) and open(stamp).read() == want and os.access(os.path.join(tests, "test-runner"),
                                                                          os.X_OK):
        say(f"reusing the build in {tree}")
        return tests
    check_tools()
    if os.path.exists(tree):
        shutil.rmtree(tree)
    say(f"exporting {ref} of {source} to {tree}")
    export(source, ref, tree)
    jobs = str(max(1, min(4, os.cpu_count() or 1)))
    run_logged(["./configure", *CONFIGURE_ARGS], tree, os.path.join(logdir, "configure.out"), "configure")
    run_logged(["make", "-j", jobs, "libs"], tree, os.path.join(logdir, "make-libs.out"), "building librdkafka")
    run_logged(["make", "-j", jobs, "test-runner"], tests, os.path.join(logdir, "make-tests.out"),
               "building tests/test-runner")
    with open(stamp, "w") as f:
        f.write(want)
    return tests


# ---------------------------------------------------------------------------------------------------- node
class Node:
    """One combined kraftwire node (broker + controller, harness's pre-bound 127.0.0.1 sockets) formatted in
    ``base``; its client listener PLAINTEXT or, with ``sasl``, SASL_PLAINTEXT/PLAIN; output in base/node.log.
    ``extra_props`` are more ``server.properties`` lines, ``format_args`` more ``storage format`` arguments (e.g.
    ``--feature share.version=1``)."""

    def __init__(self, base: str, sasl: bool, extra_props: str = "", format_args: tuple[str, ...] = ()) -> None:
        self.base, self.sasl = base, sasl
        self.listener = "SASL_PLAINTEXT" if sasl else "PLAINTEXT"
        self.broker, self.controller = processes.bind_listener(), processes.bind_listener()
        self.port, cport = self.broker.getsockname()[1], self.controller.getsockname()[1]
        self.config, self.log = os.path.join(base, "server.properties"), os.path.join(base, "node.log")
        props = (f"process.roles=broker,controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:{cport}\n"
                 f"listeners={self.listener}://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{cport}\n"
                 f"advertised.listeners={self.listener}://127.0.0.1:{self.port}\n"
                 "controller.listener.names=CONTROLLER\n"
                 f"listener.security.protocol.map={self.listener}:{self.listener},CONTROLLER:PLAINTEXT\n"
                 f"log.dirs={os.path.join(base, 'logs')}\n" + NODE_PROPS + extra_props)
        if sasl:
            props += ("sasl.enabled.mechanisms=PLAIN\nlistener.name.sasl_plaintext.plain.sasl.jaas.config="
                      "org.apache.kafka.common.security.plain.PlainLoginModule required "
                      f'user_{SASL_USER}="{SASL_PASSWORD}";\n')
        with open(self.config, "w", encoding="utf-8") as f:
            f.write(props)
        processes.kw("storage", "format", "-t", processes.kw("storage", "random-uuid").stdout.strip(),
                     "-c", self.config, *format_args)
        self.proc: subprocess.Popen | None = None

    def client_conf(self) -> str:
        # librdkafka's own CI runs its tests with the timeout multiplier raised by 2 (test_on_ci); 0081 needs it:
        # against Apache Kafka 4.4 itself it takes 181 s here and hits its 180 s budget in UserScramCredentials
        conf = (f"bootstrap.servers=127.0.0.1:{self.port}\nbroker.address.family=v4\n"
                f"test.timeout.multiplier={TIMEOUT_MULTIPLIER}\n")
        if self.sasl:
            conf += (f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.username={SASL_USER}\n"
                     f"sasl.password={SASL_PASSWORD}\n")
        return conf

    def __enter__(self) -> "Node":
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kraftwire", "server-start", "--config", self.config,
             "--listener-fd", f"{self.listener}={self.broker.fileno()}",
             "--listener-fd", f"CONTROLLER={self.controller.fileno()}"],
            stdout=open(self.log, "ab"), stderr=subprocess.STDOUT,
            pass_fds=(self.broker.fileno(), self.controller.fileno()), env=processes.kraftwire_env())
        # Serving once the quorum has a leader (asked on the controller listener, always plaintext) and the broker
        # has read the metadata log (until then ACL checks fail closed).
        cport, deadline = self.controller.getsockname()[1], time.monotonic() + 60
        while processes.quorum_status([cport]).get("LeaderId", "-1") in ("-1", ""):
            if self.proc.poll() is not None:
                raise SystemExit(f"librdkafka_suite: kraftwire exited {self.proc.returncode}; see {self.log}")
            if time.monotonic() > deadline:
                raise SystemExit(f"librdkafka_suite: kraftwire has no leader after 60 s; see {self.log}")
            time.sleep(0.5)
        time.sleep(2.0)
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            processes.stop_all([self.proc])
        self.broker.close()
        self.controller.close()


# ---------------------------------------------------------------------------------------------------- tests
def test_source(tests_dir: str, num: str) -> str | None:
    for name in sorted(os.listdir(tests_dir)):
        if name.startswith(num + "-") and name.endswith((".c", ".cpp")):
            return os.path.join(tests_dir, name)
    return None


def sub_tests(path: str) -> list[str]:
    """``func:line`` of every SUB_TEST/SUB_TEST_QUICK call in a test's source: the prefix of the sub-test names
    test-runner prints (``func:line[: params]``), a function being where a line at column 0 opens one."""
    found, func = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            m = re.match(r"^(?:[A-Za-z_][\w \t\*:<>,]*?[\s\*:])?([A-Za-z_]\w*)\s*\(", line)
            if m and m.group(1) not in C_KEYWORDS and not line.rstrip().endswith(";"):
                func = m.group(1)
            if func and re.search(r"\bSUB_TEST(_QUICK)?\s*\(", line) and "#define" not in line:
                found.append(f"{func}:{lineno}")
    return found


def run_runner(tests_dir: str, env: dict, timeout: float, out_path: str) -> tuple[str, bool]:
    """One ``./test-runner -p1`` in its own process group; (output without colours, timed out)."""
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(["./test-runner", "-p1"], cwd=tests_dir, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            timed_out = True
    with open(out_path, encoding="utf-8", errors="replace") as f:
        return ANSI.sub("", f.read()), timed_out


SUB_PASS = re.compile(r"\[ (.+?): PASS \([\d.]+s\) \]$")
SUB_SKIP = re.compile(r"\[ (.+?): SKIP: (.*) \]$")
SUB_START = re.compile(r"\[ ([A-Za-z_]\w*:\d+(?:: .*)?) \]$")
FAILED_AT = re.compile(r'### Test "(\S+?)(?: \((.*)\))?" failed at (\S+?):(\d+):\S+ at .*###')


def parse(text: str, num: str) -> tuple[list[list], list[str], str]:
    """(sub-tests as [name, passed|failed|skipped|unfinished, detail lines] in the order they started, the test's
    failure lines, its verdict passed|failed|skipped)."""
    subs: list[list] = []
    failures: list[str] = []
    main_failures: list[str] = []
    verdict = None
    lines = text.splitlines()

    def last(name: str) -> list | None:
        return next((e for e in reversed(subs) if e[0] == name), None)

    for i, line in enumerate(lines):
        line = line.rstrip()
        if m := SUB_PASS.search(line):
            if (e := last(m.group(1))) is not None and e[1] == "unfinished":
                e[1] = "passed"
        elif m := SUB_SKIP.search(line):
            if (e := last(m.group(1))) is not None:
                e[1], e[2] = "skipped", [m.group(2)]
        elif m := SUB_START.search(line):
            subs.append([m.group(1), "unfinished", []])
        elif m := FAILED_AT.search(line):
            msg = lines[i + 1].strip() if i + 1 < len(lines) else ""
            where = f"{m.group(3)}:{m.group(4)}: {msg}"
            if m.group(1) == "<MAIN>":  # the runner's own checks once the test thread has died (leftover threads)
                main_failures.append(where)
                continue
            failures.append(where)
            if m.group(2) and (e := last(m.group(2))) is not None:
                e[1] = "failed"
                e[2].append(where)
        elif m := re.search(rf"Test ({num}_\S+) (PASSED|FAILED|SKIPPED)\b", line):
            verdict = m.group(2).lower()
        elif (m := re.search(r"^\|\s*(\d{4}_\S+)\s*\|\s*(\w+)\s*\|", line)) and m.group(1).startswith(num + "_"):
            verdict = m.group(2).lower()
    if failures or verdict is None:
        verdict = "failed"
        failures = failures or main_failures or ["test-runner gave no verdict"]
    for e in subs:  # a sub-test that started and never ended died with the test
        if e[1] == "unfinished" and verdict == "failed":
            e[1] = "failed"
            e[2] = e[2] or ["did not finish (the test stopped here)"]
    return subs, failures, verdict


def prefix_of(name: str) -> str:
    return ":".join(name.split(":")[:2])


def needs_auth(entry: list) -> bool:
    return entry[1] == "skipped" and any(re.search(r"authori[sz]ation|SASL", d) for d in entry[2])


def run_subtests(num: str, prefixes: list[str], tests_dir: str, env: dict, timeout: float, outdir: str,
                 label: str) -> tuple[list[tuple], bool]:
    """Each sub-test ``prefixes`` names run alone (SUBTESTS=func:line): rows, and whether all passed."""
    rows, ok = [], True
    for prefix in prefixes:
        out_path = os.path.join(outdir, f"{num}-{label}-{prefix.replace(':', '-')}.out")
        say(f"  {num} sub-test {prefix} alone ({label}; output {out_path})")
        text, timed_out = run_runner(tests_dir, dict(env, SUBTESTS=prefix), timeout, out_path)
        subs, failures, verdict = parse(text, num)
        ran = [e for e in subs if prefix_of(e[0]) == prefix]
        if timed_out:
            ok = False
            rows.append(("failed", label, prefix, [f"timed out after {timeout:.0f} s"]))
        elif not ran:
            rows.append(("skipped" if verdict != "failed" else "failed", label, prefix,
                         failures if verdict == "failed" else ["not run (quick mode or a version gate)"]))
            ok = ok and verdict != "failed"
        for name, state, detail in ran:
            if state == "unfinished":
                state, detail = "failed", failures
            rows.append((state, label, name, detail))
            ok = ok and state != "failed"
        if verdict == "failed" and ran and all(e[1] != "failed" for e in ran):
            ok = False
            rows.append(("failed", label, prefix + " (outside its sub-tests)", failures))
    return rows, ok


def run_test(num: str, tests_dir: str, env: dict, timeout: float, outdir: str) -> tuple[list[tuple], bool, list]:
    """Test ``num`` on a plaintext node: (rows (result, run, name, detail lines), passed, the sub-test prefixes
    skipped for want of an authenticated principal)."""
    out_path = os.path.join(outdir, f"{num}.out")
    say(f"running {num} (timeout {timeout:.0f} s, output {out_path})")
    text, timed_out = run_runner(tests_dir, dict(env, TESTS=num), timeout, out_path)
    subs, failures, verdict = parse(text, num)
    if timed_out:
        verdict = "failed"
        failures.append(f"timed out after {timeout:.0f} s")
    rows = [(verdict, "full", num, failures if verdict == "failed" else [])]
    rows += [(state, "full", name, detail) for name, state, detail in subs]
    auth = list(dict.fromkeys(prefix_of(e[0]) for e in subs if needs_auth(e)))
    if verdict == "failed":
        # A failed check ends the test's thread: run each sub-test the full run did not finish alone.
        src = test_source(tests_dir, num)
        done = {prefix_of(e[0]) for e in subs if e[1] in ("passed", "skipped", "failed")
                and not (e[1] == "failed" and e[2] == ["did not finish (the test stopped here)"])}
        todo = [p for p in (sub_tests(src) if src else []) if p not in done]
        more, _ = run_subtests(num, todo, tests_dir, dict(env, TESTS=num), timeout, outdir, "alone")
        rows += more
        auth = list(dict.fromkeys(auth + [prefix_of(r[2]) for r in more if r[0] == "skipped" and any(
            re.search(r"authori[sz]ation|SASL", d) for d in r[3])]))
    return rows, verdict == "passed", auth


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", default=DEFAULT_SOURCE, help="librdkafka git dir or source tree")
    ap.add_argument("--ref", default="v2.15.0", help="git ref to build (ignored for a source tree)")
    ap.add_argument("--tests", default="0011,0082,0081", help="comma-separated test numbers")
    ap.add_argument("--keep", nargs="?", const="", default=None, metavar="CACHEDIR",
                    help="build in (and reuse) CACHEDIR, default ~/.cache/kraftwire/librdkafka-<ref>")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per test-runner run")
    ap.add_argument("--kafka-version", default="4.0.0", help="TEST_KAFKA_VERSION for the tests' version gates")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="kraftwire-librdkafka-")
    safe_ref = re.sub(r"[^\w.-]", "_", args.ref)
    if args.keep is None:
        tree = os.path.join(work, f"librdkafka-{safe_ref}")
    else:
        tree = args.keep or os.path.expanduser(f"~/.cache/kraftwire/librdkafka-{safe_ref}")
        os.makedirs(os.path.dirname(os.path.abspath(tree)), exist_ok=True)
    say(f"work dir {work}")
    tests_dir = build(args.source, args.ref, tree, work)
    env = dict(os.environ, TEST_KAFKA_VERSION=args.kafka_version,
               LD_LIBRARY_PATH=os.pathsep.join(filter(None, [os.path.join(tree, "src"), os.path.join(tree, "src-cpp"),
                                                             os.environ.get("LD_LIBRARY_PATH")])))
    for k in ("TESTS", "SUBTESTS", "TESTS_SKIP", "TEST_DEBUG"):
        env.pop(k, None)

    def node(name: str, sasl: bool) -> tuple[Node, dict]:
        base = os.path.join(work, name)
        os.makedirs(base)
        n = Node(base, sasl)
        conf = os.path.join(base, "test.conf")
        with open(conf, "w") as f:
            f.write(n.client_conf())
        return n, dict(env, RDKAFKA_TEST_CONF=conf)

    results: dict[str, tuple[list, bool]] = {}
    auth: dict[str, list] = {}
    n, nenv = node("node", sasl=False)
    with n:
        say(f"kraftwire serving PLAINTEXT on 127.0.0.1:{n.port} (log {n.log})")
        for num in [t.strip().zfill(4) for t in args.tests.split(",") if t.strip()]:
            rows, ok, auth[num] = run_test(num, tests_dir, nenv, args.timeout, work)
            results[num] = (rows, ok)
    if any(auth.values()):
        n, nenv = node("node-sasl", sasl=True)
        with n:
            say(f"kraftwire serving SASL_PLAINTEXT (PLAIN) on 127.0.0.1:{n.port} (log {n.log})")
            for num, prefixes in auth.items():
                if prefixes:
                    rows, ok = run_subtests(num, prefixes, tests_dir, dict(nenv, TESTS=num), args.timeout, work,
                                            "sasl")
                    results[num] = (results[num][0] + rows, results[num][1] and ok)

    print(f"\nlibrdkafka {args.ref} tests against one kraftwire node (TEST_KAFKA_VERSION={args.kafka_version}); "
          "run: full = the whole test, alone = a sub-test the full run did not reach, run by itself (SUBTESTS), "
          "sasl = a sub-test that needs an authenticated principal, on a SASL_PLAINTEXT node\n")
    for num, (rows, ok) in results.items():
        print(f"{'PASSED' if ok else 'FAILED'}  {num}")
        for result, run, name, detail in rows[1:] if ok else rows:
            print(f"  {result:<10} {run:<6} {name}")
            for line in dict.fromkeys(detail):
                print(f"  {'':<17}   {line}")
    print(f"\noutputs and node logs in {work}")
    if args.keep is None:
        shutil.rmtree(tree, ignore_errors=True)
    return 0 if all(ok for _, ok in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
