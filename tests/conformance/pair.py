"""The two nodes a conformance scenario talks to: Apache Kafka and kraftwire, started from the same
``server.properties`` keys, one pair per :class:`Configuration` for the whole pytest session.

What "the same configuration" means is checked, not assumed: after start-up :meth:`Pair.check_equivalent` compares
the two ``server.properties`` files key by key (the keys naming this machine — listeners, ports, directories — aside)
and the finalized ``metadata.version`` both report in ApiVersions.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import NamedTuple

from harness import processes, roles
from harness.kafka import KafkaNode

from kraftwire.protocol import messages as w
from kraftwire.server.client import request_once

KAFKA, KRAFTWIRE = "kafka", "kraftwire"
SIDES = (KAFKA, KRAFTWIRE)
#: what each node's harness writes itself (KafkaNode's fixed keys), so both files carry them
NODE_KEYS = ("offsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n"
             "transaction.state.log.min.isr=1\n")
#: keys whose values name this machine (ports, hosts, directories) and so differ between the two files
MACHINE_KEYS = frozenset({"listeners", "advertised.listeners", "controller.quorum.voters", "log.dirs"})
#: a request that gets no answer within this many seconds counts as a stall
REQUEST_TIMEOUT_S = 30.0


class Configuration(NamedTuple):
    """A node configuration: ``server.properties`` keys for both, and the ``storage format`` arguments."""

    name: str
    props: str = ""
    format_args: tuple[str, ...] = ("--release-version", "3.9")


#: the configurations scenarios may name (``Scenario.config``); a pair starts only when a selected scenario needs it
CONFIGURATIONS = {c.name: c for c in (
    # one combined node, Kafka's defaults (auto.create.topics.enable=true, num.partitions=1, ...), metadata.version
    # 3.9-IV0: the highest level kraftwire formats; at 4.x levels Kafka writes records (ELR, KIP-966) kraftwire lacks
    Configuration("single"),
    # the same with topic auto-creation off in the broker's file (Metadata before v4 cannot ask for it per request)
    Configuration("no-auto-create", "auto.create.topics.enable=false\n"),
    # the same node for the group and transaction scenarios: a group's first join completes at once instead of
    # after Kafka's 3 s initial rebalance delay, the internal topics have one partition each (created on the first
    # FindCoordinator; 50 would take both nodes many seconds), and the periodic clean-up that drops empty groups
    # without offsets does not run during a session (it would, at a moment of its own, make one node's group vanish)
    Configuration("coordinators", "group.initial.rebalance.delay.ms=0\noffsets.topic.num.partitions=1\n"
                                  "transaction.state.log.num.partitions=1\n"
                                  "offsets.retention.check.interval.ms=86400000\n"),
)}


class Failure(NamedTuple):
    """A request that got no decodable answer: the connection closed, or nothing came back in time."""

    what: str

    def __str__(self) -> str:
        return f"<no answer: {self.what}>"


def _properties(path: str) -> dict[str, str]:
    with open(path, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")]
    return dict(line.split("=", 1) for line in lines)


class Pair:
    """A started Kafka node and kraftwire node of one configuration. ``machine`` holds, per side, the values that
    name this machine (hosts, ports, log directories, cluster id), which the comparison maps onto each other."""

    def __init__(self, config: Configuration, base: str) -> None:
        self.config = config
        kafka_base, ours_base = os.path.join(base, KAFKA), os.path.join(base, KRAFTWIRE)
        os.makedirs(ours_base)
        built: dict[str, object] = {}

        def build(side, make):
            try:
                built[side] = make()
            except BaseException as exc:  # reported below, after both formats ended
                built[side] = exc

        threads = [threading.Thread(target=build, args=(KAFKA, lambda: KafkaNode(
                       kafka_base, config.props, format_args=config.format_args))),
                   threading.Thread(target=build, args=(KRAFTWIRE, lambda: processes.CombinedNode(
                       ours_base, NODE_KEYS + config.props, format_args=config.format_args)))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for exc in built.values():
            if isinstance(exc, BaseException):
                raise exc
        self.kafka, self.ours = built[KAFKA], built[KRAFTWIRE]
        with open(self.ours.config, "a", encoding="utf-8") as f:  # KafkaNode writes this key too
            f.write(f"advertised.listeners=PLAINTEXT://localhost:{self.ours.port}\n")
        self.ports = {KAFKA: self.kafka.port, KRAFTWIRE: self.ours.port}
        self._started = []

    def start(self) -> "Pair":
        for node in (self.kafka, self.ours):
            node.__enter__()
            self._started.append(node)
        for side in SIDES:
            roles.wait_until(lambda: roles.broker_ids(self.ports[side]) == [1], f"the {side} node online")
        self.check_equivalent()
        self.machine = {side: self._machine(side) for side in SIDES}
        return self

    def signal_stop(self) -> None:
        """Ask both to stop without waiting: Kafka is killed (its files are thrown away, and its orderly shutdown
        takes seconds), kraftwire gets SIGTERM."""
        for node, stop in ((self.kafka, "kill"), (self.ours, "terminate")):
            if node in self._started and node.proc.poll() is None:
                getattr(node.proc, stop)()

    def close(self) -> None:
        self.signal_stop()
        for node in reversed(self._started):
            node.__exit__(None, None, None)

    # ------------------------------------------------------------------------------------------------- requests
    async def ask(self, side: str, body, version: int, timeout: float = REQUEST_TIMEOUT_S):
        """The decoded answer of ``side`` to ``body`` at ``version`` (one connection per request), or a
        :class:`Failure`."""
        try:
            return await request_once("127.0.0.1", self.ports[side], body, version, timeout=timeout)
        except asyncio.TimeoutError:
            return Failure(f"no answer within {timeout:g} s")
        except (OSError, ConnectionError) as exc:
            return Failure(f"connection failed ({type(exc).__name__})")
        except Exception as exc:  # noqa: BLE001 - a closed connection or an undecodable answer is an outcome
            return Failure(f"{type(exc).__name__}: {exc}")

    def ask_both(self, body, version: int) -> dict:
        async def both():
            answers = await asyncio.gather(*(self.ask(side, body, version) for side in SIDES))
            return dict(zip(SIDES, answers))

        return asyncio.run(both())

    def _api_versions(self, side: str):
        answer = asyncio.run(self.ask(side, w.ApiVersionsRequest(client_software_name="kraftwire-conformance",
                                                                 client_software_version="1"), 3))
        assert not isinstance(answer, Failure) and answer.error_code == 0, f"{side} ApiVersions: {answer}"
        return answer

    def api_versions(self, side: str) -> dict[str, tuple[int, int]]:
        """{api name: (min, max)} as ``side`` advertises them (ApiVersions v3); unknown api keys by number."""
        return {(w.APIS[a.api_key].name if a.api_key in w.APIS else str(a.api_key)): (a.min_version, a.max_version)
                for a in self._api_versions(side).api_keys}

    # ----------------------------------------------------------------------------------------------------- health
    def log_size(self) -> int:
        return os.path.getsize(self.ours.log_path) if os.path.exists(self.ours.log_path) else 0

    def problems_since(self, offset: int) -> list[str]:
        """A traceback kraftwire logged after byte ``offset`` of its log, and either node having exited."""
        problems = []
        with open(self.ours.log_path, "rb") as f:
            f.seek(offset)
            text = f.read().decode("utf-8", "replace")
        at = text.find("Traceback (most recent call last)")
        if at >= 0:  # from the log line that carries it
            line_start = text.rfind("\n", 0, max(0, text.rfind("\n", 0, at))) + 1
            problems.append(text[line_start:line_start + 3000].strip())
        for side, node in ((KAFKA, self.kafka), (KRAFTWIRE, self.ours)):
            if node.proc.poll() is not None:
                problems.append(f"the {side} node exited with {node.proc.returncode}")
        return problems

    # ------------------------------------------------------------------------------------------------ equivalence
    def check_equivalent(self) -> None:
        """Both files carry the same keys and values (the values of the machine keys aside), and both nodes finalized
        the same metadata.version."""
        files = {KAFKA: _properties(self.kafka.config), KRAFTWIRE: _properties(self.ours.config)}
        for props in files.values():
            for key in MACHINE_KEYS:
                assert key in props, f"{key} missing from one server.properties: {files}"
                props.pop(key)
        assert files[KAFKA] == files[KRAFTWIRE], f"the two server.properties differ: {files}"
        levels = {side: [(f.name, f.min_version_level, f.max_version_level)
                         for f in self._api_versions(side).finalized_features if f.name == "metadata.version"]
                  for side in SIDES}
        assert levels[KAFKA] == levels[KRAFTWIRE] != [], f"finalized metadata.version differs: {levels}"

    def _machine(self, side: str) -> dict[str, list]:
        """The values naming ``side``'s machine, by kind, in the same order on both sides."""
        props = _properties(self.kafka.config if side == KAFKA else self.ours.config)
        listeners = dict(entry.split("://", 1) for entry in props["listeners"].split(","))
        endpoints = [listeners[name].rsplit(":", 1) for name in sorted(listeners)]
        cluster = asyncio.run(self.ask(side, w.DescribeClusterRequest(), 0)).cluster_id
        return {"host": sorted({host for host, _ in endpoints}), "port": [int(port) for _, port in endpoints],
                "path": [props["log.dirs"], os.path.dirname(props["log.dirs"])], "cluster": [cluster]}


class Pairs:
    """The session's pairs, each started when a scenario first needs it (one after the other: started side by side
    on two busy cores they took longer); a pair that failed to start fails every later use at once with the same
    error (instead of starting again for each scenario)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self._pairs: dict[str, Pair | BaseException] = {}

    def get(self, name: str) -> Pair:
        if name not in self._pairs:
            pair = None
            try:
                pair = Pair(CONFIGURATIONS[name], os.path.join(self.base, name))
                self._pairs[name] = pair.start()
            except BaseException as exc:  # kept: every scenario of this configuration reports it
                if pair is not None:
                    pair.close()
                self._pairs[name] = exc
        got = self._pairs[name]
        if isinstance(got, BaseException):
            raise AssertionError(f"the {name!r} pair did not start: {got!r}") from got
        return got

    def close(self) -> None:
        pairs = [pair for pair in self._pairs.values() if isinstance(pair, Pair)]
        for pair in pairs:  # every node stops at once, then each is waited for
            pair.signal_stop()
        for pair in pairs:
            pair.close()
