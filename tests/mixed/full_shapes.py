"""Issue #44's four shapes of a cluster mixing Apache Kafka 4.4 and kraftwire nodes, full size, as a script (the test
command runs their minimal forms in ``test_mixed_quorum.py``; this is not collected by pytest):

1. three kraftwire controllers, a Kafka broker and a kraftwire broker side by side (every ISR holds both kinds);
   the kraftwire broker restarts under load;
2. three Kafka controllers with two kraftwire brokers; the leading Kafka controller stops and comes back;
3. a mixed quorum changed by KIP-853 both ways: a quorum of one Kafka controller, kraftwire controllers
   added to it, the Kafka leader removed, a Kafka controller added to the kraftwire-led quorum, a kraftwire voter
   removed;
4. a rolling replacement: a Kafka cluster (three controllers, two brokers) becomes all-kraftwire one node at a time
   (format, join, reassign, remove) and then all-Kafka again the same way.

Each runs an idempotent acks=all producer and a consumer group throughout, and a transactional producer (committed
and aborted transactions, read back read_committed) before and after its changes; it prints the records
acknowledged, read, lost and duplicated, whether the metadata logs hold the same records at equal offsets on every
node, and whether each partition's replicas hold the same batches below the high watermark. Run from the clone
(Kafka's jars come from ``tests/kafka/fetch.sh``; a few minutes a shape)::

    PYTHONPATH=.:tests python tests/mixed/full_shapes.py [SHAPE ...]      # 1 2 3 4 unless told

It exits 1 when a shape lost, duplicated or diverged anything.
"""

from __future__ import annotations

import os
import pathlib
import sys
import tempfile
import time
from dataclasses import dataclass, field

from confluent_kafka import Consumer, TopicPartition

from harness import mixed, processes
from harness.kafka import free_ports, stop_java, storage_tool, until_broker_answers
from harness.roles import broker_ids, metadata, wait_until
from kraftwire.records import read_batches

TOPIC, TXN_TOPIC = "shapes", "shapes-txn"
METADATA = "__cluster_metadata-0"


@dataclass
class Node:
    id: int
    kind: str  # "kafka" or "kraftwire"
    role: str  # "controller" or "broker"
    port: int
    config: str
    dir: str
    log: str
    proc: object = None


@dataclass
class Cluster:
    """Nodes of both kinds in one cluster with a KIP-853 (dynamic) quorum, in ``base``. ``controllers``: the ids of
    every controller it will ever have; their ports are chosen up front and every node's
    ``controller.quorum.bootstrap.servers`` names them all, as an operator who rolls the controllers lists the old
    and the new ones (a broker whose bootstrap list names only controllers that are gone cannot find the quorum's
    leader again once the leader it fetched from leaves: Kafka's observers look for it through that list)."""
    base: pathlib.Path
    controllers: tuple = ()
    cluster_id: str = field(default_factory=lambda: processes.kw("storage", "random-uuid").stdout.strip())
    nodes: dict = field(default_factory=dict)
    voters: list = field(default_factory=list)  # ids of the controllers in the quorum

    def __post_init__(self) -> None:
        self.ports = dict(zip(self.controllers, free_ports(len(self.controllers))))

    def _bootstrap_controllers(self) -> str:
        return ",".join(f"127.0.0.1:{self.ports[i]}" for i in self.controllers)

    def controller_ports(self) -> list[int]:
        return [self.nodes[i].port for i in self.voters if self.nodes[i].proc is not None]

    def brokers(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.nodes.values()
                        if n.role == "broker" and n.proc is not None)

    def broker_port(self) -> int:
        return next(n.port for n in self.nodes.values() if n.role == "broker" and n.proc is not None)

    def add(self, node_id: int, kind: str, role: str) -> tuple[Node, str]:
        """A node's listener port (a controller's chosen up front) and paths; (node, the name of its listener)."""
        port = self.ports[node_id] if node_id in self.ports else free_ports(1)[0]
        listener = "CONTROLLER" if role == "controller" else "PLAINTEXT"
        node = Node(node_id, kind, role, port, str(self.base / f"node-{node_id}.properties"),
                    str(self.base / f"node-{node_id}"), str(self.base / f"node-{node_id}.log"))
        self.nodes[node_id] = node
        return node, listener

    def format_all(self, specs) -> None:
        """``specs``: (id, kind, role) of the first nodes; every controller among them is an initial voter."""
        made = [self.add(i, kind, role) for i, kind, role in specs]
        controllers = [n for n, _ in made if n.role == "controller"]
        dirs = {n.id: mixed.directory_id() for n in controllers}
        self.voters = [n.id for n in controllers]
        initial = ",".join(f"{n.id}@127.0.0.1:{n.port}:{dirs[n.id]}" for n in controllers)
        self.directory_ids = dirs
        for node, listener in made:
            self._write_config(node, listener)
            args = ("--initial-controllers", initial) if node.role == "controller" else ()
            self._format(node, *args)

    def join(self, node_id: int, kind: str, role: str) -> Node:
        node, listener = self.add(node_id, kind, role)
        self._write_config(node, listener)
        self._format(node, *(("--no-initial-controllers",) if role == "controller" else ()))
        return node

    def _write_config(self, node: Node, listener: str) -> None:
        lines = {"process.roles": node.role, "node.id": node.id,
                 "controller.quorum.bootstrap.servers": self._bootstrap_controllers(),
                 "listeners": f"{listener}://127.0.0.1:{node.port}",
                 "advertised.listeners": f"{listener}://127.0.0.1:{node.port}",
                 "controller.listener.names": "CONTROLLER", "log.dirs": node.dir}
        if node.role == "broker":
            lines.update({"listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                          "offsets.topic.replication.factor": 2, "offsets.topic.num.partitions": 3,
                          "transaction.state.log.replication.factor": 2, "transaction.state.log.num.partitions": 2,
                          "transaction.state.log.min.isr": 1})
        mixed.properties(node.config, lines)

    def _format(self, node: Node, *args: str) -> None:
        if node.kind == "kafka":
            storage_tool("format", "-t", self.cluster_id, "-c", node.config, *args, *mixed.FORMAT)
        else:
            processes.kw("storage", "format", "-t", self.cluster_id, "-c", node.config, *args, *mixed.FORMAT)

    def start(self, node_id: int) -> None:
        node = self.nodes[node_id]
        if node.kind == "kafka":
            node.proc = mixed.start_kafka(node.config, node.log)
        else:
            node.proc = processes.start_server(node.config, [], node.log, {})

    def stop(self, node_id: int) -> None:
        node = self.nodes[node_id]
        if node.kind == "kafka":
            stop_java(node.proc)
        else:
            processes.stop_all([node.proc])
        node.proc = None

    def close(self) -> None:
        for node in self.nodes.values():
            if node.proc is not None:
                self.stop(node.id)

    # --- KIP-853 and the partitions
    def add_controller(self, node_id: int) -> None:
        """Start a controller formatted to join, wait until it observes the quorum and has caught up (the leader
        refuses a voter that lags, Kafka's and kraftwire's alike), add it as a voter."""
        self.start(node_id)
        wait_until(lambda: processes.status_replicas(processes.quorum_status(self.controller_ports()),
                                                     "CurrentObservers").get(node_id, {}).get("lag") == 0,
                   f"controller {node_id} observes and has caught up", timeout=120)
        voters = ",".join(f"127.0.0.1:{self.nodes[i].port}" for i in self.voters)
        processes.kw("metadata-quorum", "--command-config", self.nodes[node_id].config, "--bootstrap-controller",
                     voters, "add-controller", timeout=120)
        self.voters.append(node_id)

    def remove_controller(self, node_id: int) -> str:
        """Remove a voter (``remove-controller``) and stop it; the tool's answer."""
        directory = self.voter_directory(node_id)
        others = ",".join(f"127.0.0.1:{self.nodes[i].port}" for i in self.voters if i != node_id)
        done = processes.kw("metadata-quorum", "--bootstrap-controller", others, "remove-controller",
                            "--controller-id", str(node_id), "--controller-directory-id", directory,
                            timeout=120, check=False)
        self.voters.remove(node_id)
        wait_until(lambda: node_id not in processes.status_replicas(
            processes.quorum_status(self.controller_ports()), "CurrentVoters"), f"controller {node_id} removed",
            timeout=120)
        self.stop(node_id)
        return (done.stdout + done.stderr).strip()

    def voter_directory(self, node_id: int) -> str:
        voters = processes.status_replicas(processes.quorum_status(self.controller_ports()), "CurrentVoters")
        return voters[node_id]["directoryId"]

    def replace_broker(self, old: int, new: int) -> None:
        """A new broker takes every partition of ``old``, which is shut down and unregistered."""
        self.start(new)
        until_broker_answers(self.nodes[new].port, timeout=120)
        port = next(n.port for n in self.nodes.values()
                    if n.role == "broker" and n.proc is not None and n.id not in (old, new))
        mixed.reassign_away(port, old, new, self.base)
        self.stop(old)
        processes.kw("cluster", "unregister", "--bootstrap-server", f"127.0.0.1:{port}", "--id", str(old))
        wait_until(lambda: old not in (broker_ids(port) or [old]), f"broker {old} unregistered", timeout=120)

    def leader(self) -> int | None:
        return mixed.leader(self.controller_ports())


def _metadata_records(directory: str) -> dict[int, bytes]:
    """offset -> record value of a node's metadata log (its first segment; data and control records alike)."""
    path = os.path.join(directory, METADATA, "00000000000000000000.log")
    out = {}
    if os.path.exists(path):
        with open(path, "rb") as f:
            for batch in read_batches(f.read()):
                for rec in batch:
                    out[rec.offset] = bytes(rec.value or b"")
    return out


def _equal_metadata(cluster: Cluster) -> tuple[int, int, bool]:
    """(nodes, offsets compared, equal): every pair of nodes agrees on the records at the offsets both hold."""
    logs = [_metadata_records(n.dir) for n in cluster.nodes.values()]
    logs = [log for log in logs if log]
    reference: dict[int, bytes] = {}
    equal = True
    for log in logs:
        for offset, value in log.items():
            if reference.setdefault(offset, value) != value:
                equal = False
    return len(logs), len(reference), equal


def _equal_replicas(cluster: Cluster, topics) -> tuple[int, bool]:
    """(partitions compared, equal): each partition's current replicas hold the same batches below its HW."""
    port = cluster.broker_port()
    consumer = Consumer({"bootstrap.servers": cluster.brokers(), "group.id": "shapes-watermarks"})
    compared, equal = 0, True
    for t in metadata(port).topics:
        if t.name not in topics:
            continue
        for p in t.partitions:
            _low, hw = consumer.get_watermark_offsets(TopicPartition(t.name, p.partition_index), timeout=30)
            copies = []
            for r in p.replica_nodes:
                path = os.path.join(cluster.nodes[r].dir, f"{t.name}-{p.partition_index}", "00000000000000000000.log")
                with open(path, "rb") as f:
                    copies.append([bytes(b.buffer) for b in read_batches(f.read()) if b.last_offset < hw])
            compared += 1
            equal &= all(c == copies[0] for c in copies)
    consumer.close()
    return compared, equal


def _report(name: str, cluster: Cluster, workload: mixed.Workload, txns) -> bool:
    bootstrap = cluster.brokers()
    read = mixed.read_all(bootstrap, TOPIC, len(workload.acked))
    acked = set(workload.acked)
    lost = len(acked - set(read))
    duplicated = len(read) - len(set(read))
    committed, aborted = txns
    txn_read = mixed.read_all(bootstrap, TXN_TOPIC, len(committed))
    txn_ok = sorted(txn_read) == sorted(committed) and not set(txn_read) & aborted
    nodes, offsets, metadata_equal = _equal_metadata(cluster)
    partitions, replicas_equal = _equal_replicas(cluster, {TOPIC, TXN_TOPIC})
    group_ok = acked <= set(workload.seen)
    print(f"shape {name}: acknowledged {len(acked)}, read {len(read)}, lost {lost}, duplicated {duplicated}; "
          f"producer errors {len(workload.failed)}; the group read every acknowledged record: {group_ok}; "
          f"transactions: {len(committed)} committed records read, {len(aborted)} aborted unseen: {txn_ok}; "
          f"metadata logs of {nodes} nodes equal at {offsets} offsets: {metadata_equal}; "
          f"replicas of {partitions} partitions equal below the HW: {replicas_equal}", flush=True)
    return (lost == 0 and duplicated == 0 and not workload.failed and group_ok and txn_ok and metadata_equal
            and replicas_equal)


def _begin(cluster: Cluster):
    port = cluster.broker_port()
    brokers = sorted(n.id for n in cluster.nodes.values() if n.role == "broker" and n.proc is not None)
    wait_until(lambda: broker_ids(port) == brokers, f"brokers {brokers} registered", timeout=120)
    pairs = ",".join(f"{brokers[i % 2]}:{brokers[(i + 1) % 2]}" for i in range(4))
    processes.kw("topics", "--bootstrap-server", f"127.0.0.1:{port}", "--create", "--topic", TOPIC,
                 "--replica-assignment", pairs)
    processes.kw("topics", "--bootstrap-server", f"127.0.0.1:{port}", "--create", "--topic", TXN_TOPIC,
                 "--replica-assignment", ",".join(pairs.split(",")[:2]))
    workload = mixed.Workload(cluster.brokers(), TOPIC, "shapes-group").start()
    txns = mixed.transactions(cluster.brokers(), TXN_TOPIC, 0)
    return workload, txns


def _end(name: str, cluster: Cluster, workload, txns) -> bool:
    committed, aborted = mixed.transactions(cluster.brokers(), TXN_TOPIC, 3)
    time.sleep(2)
    workload.stop()
    return _report(name, cluster, workload, (txns[0] | committed, txns[1] | aborted))


def _start_all(cluster: Cluster) -> None:
    for node in cluster.nodes.values():
        cluster.start(node.id)
    wait_until(cluster.leader, "a quorum leader", timeout=120)
    for node in cluster.nodes.values():
        if node.role == "broker":
            until_broker_answers(node.port, timeout=120)


#: every controller each shape will have (their ports are chosen before the first node starts)
CONTROLLERS = {"1": (1, 2, 3), "2": (1, 2, 3), "3": (1, 2, 3, 6), "4": (1, 2, 3, 11, 12, 13, 21, 22, 23)}


def shape_1(cluster: Cluster) -> bool:
    cluster.format_all([(1, "kraftwire", "controller"), (2, "kraftwire", "controller"), (3, "kraftwire", "controller"),
                        (4, "kafka", "broker"), (5, "kraftwire", "broker")])
    _start_all(cluster)
    workload, txns = _begin(cluster)
    cluster.stop(5)
    time.sleep(3)
    cluster.start(5)
    until_broker_answers(cluster.nodes[5].port, timeout=120)
    time.sleep(5)
    return _end("1 (three kraftwire controllers, a Kafka and a kraftwire broker)", cluster, workload, txns)


def shape_2(cluster: Cluster) -> bool:
    cluster.format_all([(1, "kafka", "controller"), (2, "kafka", "controller"), (3, "kafka", "controller"),
                        (4, "kraftwire", "broker"), (5, "kraftwire", "broker")])
    _start_all(cluster)
    workload, txns = _begin(cluster)
    first = cluster.leader()
    cluster.stop(first)
    wait_until(lambda: (lambda x: x if x not in (None, first) else None)(cluster.leader()), "a new Kafka leader",
               timeout=120)
    cluster.start(first)
    time.sleep(5)
    return _end("2 (three Kafka controllers, two kraftwire brokers)", cluster, workload, txns)


def shape_3(cluster: Cluster) -> bool:
    cluster.format_all([(1, "kafka", "controller"), (4, "kraftwire", "broker"), (5, "kafka", "broker")])
    _start_all(cluster)
    workload, txns = _begin(cluster)
    for i in (2, 3):
        cluster.join(i, "kraftwire", "controller")
        cluster.add_controller(i)
    print(f"  voters {sorted(cluster.voters)}, leader {cluster.leader()}", flush=True)
    said = cluster.remove_controller(1)  # the Kafka controller, leading since the start
    print(f"  removing the leading Kafka controller 1: {said!r}; leader now {cluster.leader()}", flush=True)
    cluster.join(6, "kafka", "controller")
    cluster.add_controller(6)
    said = cluster.remove_controller(2)
    print(f"  added Kafka controller 6 and removed kraftwire controller 2: {said!r}; voters {sorted(cluster.voters)}, "
          f"leader {cluster.leader()}", flush=True)
    return _end("3 (a mixed quorum, add/remove-controller both ways)", cluster, workload, txns)


def shape_4(cluster: Cluster) -> bool:
    cluster.format_all([(1, "kafka", "controller"), (2, "kafka", "controller"), (3, "kafka", "controller"),
                        (4, "kafka", "broker"), (5, "kafka", "broker")])
    _start_all(cluster)
    workload, txns = _begin(cluster)
    for kind, controllers, brokers in (("kraftwire", (11, 12, 13), (14, 15)), ("kafka", (21, 22, 23), (24, 25))):
        old_controllers = [i for i in cluster.voters]
        for old, new in zip(old_controllers, controllers):
            cluster.join(new, kind, "controller")
            cluster.add_controller(new)
            cluster.remove_controller(old)
        old_brokers = sorted(n.id for n in cluster.nodes.values() if n.role == "broker" and n.proc is not None)
        for old, new in zip(old_brokers, brokers):
            cluster.join(new, kind, "broker")
            cluster.replace_broker(old, new)
        print(f"  now all {kind}: controllers {sorted(cluster.voters)} (leader {cluster.leader()}), brokers "
              f"{broker_ids(cluster.broker_port())}", flush=True)
    return _end("4 (Kafka to all-kraftwire one node at a time, and back)", cluster, workload, txns)


def main(shapes: list[str]) -> int:
    ok = True
    for shape in shapes or ["1", "2", "3", "4"]:
        base = pathlib.Path(tempfile.mkdtemp(prefix=f"shape-{shape}-"))
        cluster = Cluster(base, CONTROLLERS[shape])
        started = time.monotonic()
        try:
            ok &= globals()[f"shape_{shape}"](cluster)
        except Exception as exc:  # noqa: BLE001 - report the shape and go on with the next
            print(f"shape {shape}: FAILED: {type(exc).__name__}: {exc} (logs in {base})", flush=True)
            ok = False
        finally:
            cluster.close()
        print(f"  ({time.monotonic() - started:.0f} s, {base})", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
