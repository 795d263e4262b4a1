"""``kraftwire reassign-partitions``: Kafka's ``kafka-reassign-partitions.sh``, its flags, JSON files and output, on
kraftwire's own protocol client (AlterPartitionReassignments v1 and ListPartitionReassignments v0 to any node, which
forwards them to the active controller; Metadata for the current replicas and the brokers).

Actions (exactly one):

* ``--generate --topics-to-move-json-file F --broker-list 1,2,3``: prints the current assignment (each replica's
  log directory, as Kafka 4.4's tool asks the brokers, ``any`` where none answers) of the topics in
  ``{"version": 1, "topics": [{"topic": "foo"}]}`` and a proposal over the listed brokers, by Kafka's rack-unaware
  ``AdminUtils.assignReplicasToBrokers`` (a random start, so each run may propose another one). With every broker
  in a rack Kafka places rack-aware, which kraftwire does not implement: it says so and asks for
  ``--disable-rack-aware``.
* ``--execute --reassignment-json-file F [--additional] [--disallow-replication-factor-change]``: prints the
  current assignment with its log directories (to save for a rollback), starts the moves, ``Successfully started
  partition reassignments for t-0,t-1``; refused while another reassignment runs unless ``--additional``. With
  ``--throttle B/s`` the moving replicas are throttled first, as Kafka's tool throttles them
  (``reassign_throttles``: the topics' leader/follower throttled replicas, the brokers' throttled rates).
* ``--verify`` / ``--cancel --reassignment-json-file F [--preserve-throttles]``: each partition's state, or the
  moves cancelled; then, unless ``--preserve-throttles`` (and for ``--verify`` only once nothing moves), the
  throttle configs Kafka's tool sets are deleted from the brokers and topics, as Kafka's does.
* ``--list``: the reassignments in progress.

The JSON file is Kafka's ``{"version": 1, "partitions": [{"topic": "foo", "partition": 0, "replicas": [1, 2],
"log_dirs": ["any", "/data/b"]}]}``. A log directory other than ``any`` moves that replica there (AlterReplicaLogDirs
to its broker, asked again every 100 ms while the broker answers REPLICA_NOT_AVAILABLE — the replica not there
yet — up to ``--timeout`` ms, 10 s by default), throttled by ``--replica-alter-log-dirs-throttle`` (the moving
brokers' ``replica.alter.log.dirs.io.max.bytes.per.second``); ``--verify`` reports each such replica's move and
``--cancel`` moves an active one back to its current directory, as Kafka's tool does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from dataclasses import dataclass

from kraftwire.java_order import hashmap_order, string_hash
from kraftwire.tools import reassign_throttles as throttles
from kraftwire.tools.admin import connect
from kraftwire.tools.reassign_client import Client, Failed, replica_key, replica_name

ANY_LOG_DIR = "any"
ACTIONS = ("generate", "execute", "verify", "cancel", "list")
BROKER_THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                    "replica.alter.log.dirs.io.max.bytes.per.second")
TOPIC_THROTTLES = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
EXISTING = ("Cannot execute because there is an existing partition assignment.  Use --additional to override this "
            "and create a new partition assignment in addition to the existing one. The --additional flag can also "
            "be used to change the throttle by resubmitting the current reassignment.")
#: each action's own options (beyond the connection ones), as Kafka's validateAndParseArgs permits them
PERMITTED = {
    "verify": {"reassignment_json_file", "preserve_throttles"},
    "generate": {"topics_to_move_json_file", "broker_list", "disable_rack_aware"},
    "execute": {"reassignment_json_file", "additional", "throttle", "replica_alter_log_dirs_throttle", "timeout",
                "disallow_replication_factor_change"},
    "cancel": {"reassignment_json_file", "preserve_throttles", "timeout"},
    "list": set(),
}
REQUIRED = {"verify": ("reassignment_json_file",), "generate": ("topics_to_move_json_file", "broker_list"),
            "execute": ("reassignment_json_file",), "cancel": ("reassignment_json_file",), "list": ()}
OPTION_NAMES = {"reassignment_json_file": "reassignment-json-file",
                "topics_to_move_json_file": "topics-to-move-json-file", "broker_list": "broker-list", "disable_rack_aware": "disable-rack-aware", "additional": "additional",
                "throttle": "throttle", "replica_alter_log_dirs_throttle": "replica-alter-log-dirs-throttle",
                "timeout": "timeout", "preserve_throttles": "preserve-throttles",
                "disallow_replication_factor_change": "disallow-replication-factor-change"}


class Usage(Exception):
    """A command line Kafka's tool refuses with its usage (exit 1)."""


class Terse(Exception):
    """An outcome Kafka's tool prints as it is (its TerseException), exit 1."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT[,HOST:PORT...]", help="the server(s) to connect to")
    parser.add_argument("--command-config", metavar="FILE", help="client properties for a secured listener")
    for action in ACTIONS:
        parser.add_argument(f"--{action}", action="store_true", help=f"the {action} action")
    parser.add_argument("--reassignment-json-file", metavar="FILE", help="the partition reassignment JSON")
    parser.add_argument("--topics-to-move-json-file", metavar="FILE", help="the topics to move (--generate)")
    parser.add_argument("--broker-list", metavar="1,2,3", help="the brokers to move the topics to (--generate)")
    parser.add_argument("--disable-rack-aware", action="store_true", default=None, help="place without racks")
    parser.add_argument("--additional", action="store_true", default=None,
                        help="execute while other reassignments are in progress")
    parser.add_argument("--disallow-replication-factor-change", action="store_true", default=None,
                        help="refuse moves that change a partition's replica count (KIP-860)")
    parser.add_argument("--throttle", type=int, metavar="B/s",
                        help="throttle the moving replicas' replication to this many bytes per second")
    parser.add_argument("--replica-alter-log-dirs-throttle", type=int, metavar="B/s",
                        help="throttle the moves of replicas between log directories to this many bytes per second")
    parser.add_argument("--timeout", type=int, metavar="MS", help="how long to wait for log-dir moves to start")
    parser.add_argument("--preserve-throttles", action="store_true", default=None,
                        help="leave the throttle configs in place")


def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    try:
        action = _validate(args)
        tls, login = client_security(args.command_config)
        asyncio.run(_run(action, args, tls, login))
        return 0
    except Usage as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except Terse as exc:
        print(str(exc))
        return 1
    except (Failed, ConfigError, OSError, asyncio.TimeoutError) as exc:
        print(f"Error: {str(exc) or type(exc).__name__}")  # a timeout's text is empty
        return 1


def _validate(args) -> str:
    chosen = [a for a in ACTIONS if getattr(args, a)]
    if len(chosen) != 1:
        raise Usage("Command must include exactly one action: " + ", ".join(f"--{a}" for a in ACTIONS))
    action = chosen[0]
    if not args.bootstrap_server:
        raise Usage("Please specify either --bootstrap-server or --bootstrap-controller")
    missing = [OPTION_NAMES[o] for o in REQUIRED[action] if getattr(args, o) is None]
    if missing:
        raise Usage(f"Missing required argument \"[{missing[0]}]\"")
    for option, name in OPTION_NAMES.items():
        if getattr(args, option) is not None and option not in PERMITTED[action]:
            raise Usage(f'Option "[{name}]" can\'t be used with action "[{action}]"')
    return action


# ================================================================================================================
# JSON files
# ================================================================================================================
def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise Failed(f"{path} ({exc.strerror or exc})") from None


def _load(text: str):
    try:
        return json.loads(text)
    except ValueError:
        raise Failed("The input string is not a valid JSON") from None


def parse_topics(text: str) -> list[str]:
    """The topics of a ``--topics-to-move-json-file`` (version 1)."""
    data = _load(text)
    version = data.get("version", 1) if isinstance(data, dict) else None
    if version != 1:
        raise Failed(f"Not supported version field value {version}")
    try:
        return [str(t["topic"]) for t in data.get("topics", [])]
    except (KeyError, TypeError) as exc:
        raise Failed(f"The input JSON is not valid: {exc}") from None


@dataclass(frozen=True)
class Target:
    topic: str
    partition: int
    replicas: list[int]
    log_dirs: list[str]

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"


def log_dir_moves(targets: list[Target]) -> dict[tuple[str, int, int], str]:
    """(topic, partition, broker) -> the log directory the file asks for that replica (``any`` left out)."""
    return {(t.topic, t.partition, broker): d for t in targets for broker, d in zip(t.replicas, t.log_dirs)
            if d != ANY_LOG_DIR}


def move_states_text(targets: dict[tuple[str, int, int], str], found: dict[tuple[str, int, int], tuple]) -> tuple[str, bool]:
    """Kafka's replicaMoveStatesToString over findLogDirMoveStates: each replica's move (``found``: replica ->
    (current dir or None, future dir or None) from the brokers' DescribeLogDirs; absent: its broker did not answer),
    and whether any is not done."""
    lines, ongoing = [], False
    for replica in sorted(targets, key=replica_key):
        target = targets[replica]
        topic, partition, broker = replica
        if replica not in found:
            ongoing = True
            lines.append(f"Partition {topic}-{partition} cannot be found in any live log directory on broker {broker}.")
            continue
        current, future = found[replica]
        if current is None:
            ongoing = True
            lines.append(f"Partition {topic}-{partition} is not found in any live log dir on broker {broker}. There is "
                         "likely an offline log directory on the broker.")
        elif future is None:
            lines.append(f"Reassignment of replica {replica_name(replica)} completed successfully." if current == target
                         else f"Partition {topic}-{partition} on broker {broker} is not being moved from log dir "
                              f"{current} to {target}.")
        else:
            ongoing = True
            lines.append(f"Reassignment of replica {replica_name(replica)} is still in progress." if future == target
                         else f"Partition {topic}-{partition} on broker {broker} is being moved to log dir {future} "
                              f"instead of {target}.")
    return "\n".join(lines), ongoing


def parse_reassignment(text: str) -> list[Target]:
    """The partitions of a ``--reassignment-json-file`` (version 1), in file order, duplicates kept (the caller
    refuses them as Kafka does)."""
    data = _load(text)
    version = data.get("version", 1) if isinstance(data, dict) else None
    if version != 1:
        raise Failed(f"Not supported version field value {version}")
    out = []
    try:
        for p in data.get("partitions", []):
            replicas = [int(r) for r in p["replicas"]]
            dirs = [str(d) for d in p.get("log_dirs", [ANY_LOG_DIR] * len(replicas))]
            if len(dirs) != len(replicas):
                raise Failed(f"Size of replicas list {_java_list(replicas)} is different from size of log dirs list "
                             f"{_java_list(dirs)} for partition {p['topic']}-{p['partition']}")
            out.append(Target(str(p["topic"]), int(p["partition"]), replicas, dirs))
    except (KeyError, TypeError, ValueError) as exc:
        raise Failed(f"The input JSON is not valid: {exc}") from None
    return out


def _java_list(items) -> str:
    return "[" + ", ".join(str(i) for i in items) + "]"


def _key(tp: tuple[str, int]):
    return tp[0], tp[1]


def reassignment_json(assignment: dict[tuple[str, int], list[int]],
                      dirs: dict[tuple[str, int, int], str] | None = None) -> str:
    """Kafka's formatAsReassignmentJson: compact, partitions by topic then index, each replica's log directory from
    ``dirs`` ((topic, partition, broker) -> path), ``any`` where it names none."""
    dirs = dirs or {}
    partitions = [{"topic": t, "partition": p, "replicas": r,
                   "log_dirs": [dirs.get((t, p, b), ANY_LOG_DIR) for b in r]}
                  for (t, p), r in sorted(assignment.items(), key=lambda kv: _key(kv[0]))]
    return json.dumps({"version": 1, "partitions": partitions}, separators=(",", ":"), ensure_ascii=False)


# ================================================================================================================
# placement (--generate): Kafka's AdminUtils.assignReplicasToBrokersRackUnaware
# ================================================================================================================
def assign_rack_unaware(partitions: int, replication_factor: int, brokers: list[int],
                        rng: random.Random) -> dict[int, list[int]]:
    """Partition -> replicas over ``brokers`` (sorted): the first replica round-robin from a random broker, the
    others shifted by a random amount that grows by one every full round."""
    if replication_factor <= 0:
        raise Failed("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise Failed(f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}.")
    brokers = sorted(brokers)
    n = len(brokers)
    start = rng.randrange(n)
    shift = rng.randrange(n)
    out = {}
    for partition in range(partitions):
        if partition > 0 and partition % n == 0:
            shift += 1
        first = (partition + start) % n
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        out[partition] = replicas
    return out


# ================================================================================================================
# the actions
# ================================================================================================================
def _names(parts) -> str:
    return ",".join(f"{t}-{p}" for t, p in sorted(parts, key=_key))


async def _run(action: str, args, tls, login) -> None:
    args.timeout_s = 30.0
    conn = await connect(argparse.Namespace(bootstrap_server=args.bootstrap_server, timeout=args.timeout_s),
                         tls, login)
    try:
        client = Client(conn, args.timeout_s, tls, login)
        await {"generate": _generate, "execute": _execute, "verify": _verify, "cancel": _cancel,
               "list": _list}[action](client, args)
    finally:
        await conn.close()


async def _generate(client: Client, args) -> None:
    try:
        brokers = [int(b) for b in args.broker_list.split(",")]
    except ValueError as exc:
        raise Failed(f"For input string: {str(exc).rsplit(':', 1)[-1].strip()}") from None
    twice = sorted({b for b in brokers if brokers.count(b) > 1})
    if twice:
        raise Failed(f"Broker list contains duplicate entries: {_java_list(twice)}")
    topics = parse_topics(_read(args.topics_to_move_json_file))
    again = sorted({t for t in topics if topics.count(t) > 1})
    if again:
        raise Failed(f"List of topics to reassign contains duplicate entries: {_java_list(again)}")
    current = await client.assignments(topics)
    racks = {b: r for b, r in (await client.brokers()).items() if b in brokers}
    if not args.disable_rack_aware and any(r is not None for r in racks.values()):
        if any(r is None for r in racks.values()):
            raise Failed("Not all brokers have rack information. Add --disable-rack-aware in command line to make "
                         "replica assignment without rack information.")
        raise Failed("kraftwire does not implement Kafka's rack-aware assignment yet: add --disable-rack-aware")
    rng = random.Random()
    proposed = {}
    for topic in sorted({t for t, _ in current}):
        parts = sorted(p for t, p in current if t == topic)
        placed = assign_rack_unaware(len(parts), len(current[(topic, parts[0])]), list(racks), rng)
        proposed.update({(topic, p): r for p, r in placed.items()})
    print(f"Current partition replica assignment\n{reassignment_json(current, await client.replica_dirs(current))}\n")
    print(f"Proposed partition reassignment configuration\n{reassignment_json(proposed)}")


def _checked_targets(text: str) -> dict[tuple[str, int], list[int]]:
    """Kafka's parseExecuteAssignmentArgs: not empty, no empty replica list, no partition twice, no broker twice."""
    targets = parse_reassignment(text)
    if not targets:
        raise Failed("Partition reassignment list cannot be empty")
    if any(not t.replicas for t in targets):
        raise Failed("Partition replica list cannot be empty")
    keys = [(t.topic, t.partition) for t in targets]
    twice = [k for i, k in enumerate(keys) if k in keys[:i]]
    if twice:
        raise Failed(f"Partition reassignment contains duplicate topic partitions: {_names(dict.fromkeys(twice))}")
    repeated = [(t, sorted({r for r in t.replicas if t.replicas.count(r) > 1})) for t in targets]
    repeated = [(t, rs) for t, rs in repeated if rs]
    if repeated:
        raise Failed("Partition replica lists may not contain duplicate entries: " + ". ".join(
            f"{t.name} contains multiple entries for {','.join(map(str, rs))}" for t, rs in repeated))
    return dict(zip(keys, (t.replicas for t in targets)))


async def _execute(client: Client, args) -> None:
    text = _read(args.reassignment_json_file)
    targets = _checked_targets(text)
    moves = log_dir_moves(parse_reassignment(text))
    if not args.additional and await client.reassigning():
        raise Terse(EXISTING)
    known = await client.brokers()
    unknown = [b for r in targets.values() for b in r if b not in known]
    if unknown:
        raise Failed(f"Unknown broker id {unknown[0]}")
    current = await client.assignments(t for t, _ in targets)
    missing = [k for k in targets if k not in current]
    if missing:
        raise Failed("org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Unable to find partition: "
                     + ", ".join(f"{t}-{p}" for t, p in missing))
    now = {k: current[k] for k in targets}
    print("Current partition replica assignment\n\n"
          f"{reassignment_json(now, await client.replica_dirs(now))}\n\n"
          "Save this to use as the --reassignment-json-file option during rollback")
    inter_broker = -1 if args.throttle is None else args.throttle
    log_dirs = -1 if args.replica_alter_log_dirs_throttle is None else args.replica_alter_log_dirs_throttle
    if inter_broker >= 0 or log_dirs >= 0:
        print(throttles.VERIFY_PERIODICALLY)
    if inter_broker >= 0:
        move_map = throttles.move_map(await client.reassigning(), targets, current)
        leader, follower = throttles.leader_throttles(move_map), throttles.follower_throttles(move_map)
        await client.set_configs([(2, topic, {TOPIC_THROTTLES[0]: leader[topic], TOPIC_THROTTLES[1]: follower[topic]})
                                  for topic in move_map])
        rate = str(inter_broker)
        await client.on_each(throttles.reassigning_brokers(move_map), lambda broker, conn: client.set_configs(
            [(4, str(broker), {BROKER_THROTTLES[0]: rate, BROKER_THROTTLES[1]: rate})], conn))
        print(f"The inter-broker throttle limit was set to {inter_broker} B/s")
    if log_dirs >= 0:
        await client.on_each(sorted({b for _, _, b in moves}), lambda broker, conn: client.set_configs(
            [(4, str(broker), {BROKER_THROTTLES[2]: str(log_dirs)})], conn))
        print(f"The replica-alter-dir throttle limit was set to {log_dirs} B/s")
    errors = await client.alter(targets, allow_rf_change=not args.disallow_replication_factor_change)
    if errors:
        raise Terse("Error reassigning partition(s):\n" + "\n".join(
            f"{t}-{p}: {errors[(t, p)]}" for t, p in sorted(errors, key=_key)))
    print(f"Successfully started partition reassignment{'' if len(targets) == 1 else 's'} for {_names(targets)}")
    if moves:
        await _execute_moves(client, moves, 10_000 if args.timeout is None else args.timeout)


async def _execute_moves(client: Client, moves: dict[tuple[str, int, int], str], timeout_ms: int) -> None:
    """Kafka's executeMoves: AlterReplicaLogDirs for every pending replica, again every 100 ms for those whose broker
    does not have them yet (REPLICA_NOT_AVAILABLE), until all started or ``timeout_ms`` passed."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_ms / 1000
    pending = dict(moves)
    while pending:
        started = await client.alter_log_dirs(pending)
        for replica in sorted(started, key=replica_key):
            print(f"Successfully started moving log directory to {pending[replica]} for replica "
                  f"{replica[0]}-{replica[1]} with broker {replica[2]} ")
            del pending[replica]
        if not pending:
            return
        if loop.time() >= deadline:
            raise Terse(f"Timed out before log directory move{'' if len(pending) == 1 else 's'} could be started "
                        f"for: {','.join(replica_name(r) for r in sorted(pending, key=replica_key))}")
        await asyncio.sleep(0.1)


async def _verify(client: Client, args) -> None:
    targets = parse_reassignment(_read(args.reassignment_json_file))
    ongoing = await client.reassigning()
    current = await _current_replicas(client, [(t.topic, t.partition) for t in targets if
                                               (t.topic, t.partition) not in ongoing])
    lines = ["Status of partition reassignment:"]
    for t in sorted(targets, key=lambda t: (t.topic, t.partition)):
        key = (t.topic, t.partition)
        if key in ongoing:
            lines.append(f"Reassignment of partition {t.name} is still in progress.")
        elif current.get(key, []) == t.replicas:
            lines.append(f"Reassignment of partition {t.name} is completed.")
        else:
            lines.append(f"There is no active reassignment of partition {t.name}, but replica set is "
                         f"{','.join(map(str, current.get(key, [])))} rather than {','.join(map(str, t.replicas))}.")
    print("\n".join(lines))
    moves = log_dir_moves(targets)
    states, moving = move_states_text(moves, await client.replica_log_dirs(moves) if moves else {})
    print(states)
    if not ongoing and not moving and not args.preserve_throttles:
        await _clear_throttles(client, targets)


async def _current_replicas(client: Client, parts) -> dict[tuple[str, int], list[int]]:
    """The replicas of ``parts`` that exist (an unknown topic's partitions are left out, as Kafka's tool treats
    them: an empty replica set)."""
    if not parts:
        return {}
    answer = await client.metadata(sorted({t for t, _ in parts}))
    return {(t.name, p.partition_index): list(p.replica_nodes) for t in answer.topics if not t.error_code
            for p in t.partitions}


async def _clear_throttles(client: Client, targets: list[Target]) -> None:
    """Kafka's clearAllThrottles: the broker-level throttle rates of every broker (and any a target names), the
    topic-level throttled replica lists of every topic named."""
    brokers = sorted(set(await client.brokers()) | {r for t in targets for r in t.replicas})
    print(f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'} "
          f"{','.join(map(str, brokers))}")
    await client.delete_broker_configs(brokers, BROKER_THROTTLES)
    topics = hashmap_order(dict.fromkeys(t.topic for t in targets), string_hash)
    print(f"Clearing topic-level throttles on topic{'' if len(topics) == 1 else 's'} {','.join(topics)}")
    await client.delete_configs([(2, t, TOPIC_THROTTLES) for t in topics])


async def _cancel(client: Client, args) -> None:
    targets = parse_reassignment(_read(args.reassignment_json_file))
    wanted = {(t.topic, t.partition) for t in targets}
    ongoing = await client.reassigning()
    # as Kafka's tool: a partition only gaining replicas (adding, nothing removing) is left to complete
    cancelling = sorted((k for k, r in ongoing.items() if k in wanted
                         and (not r.adding_replicas or r.removing_replicas)), key=_key)
    if cancelling:
        errors = await client.alter(dict.fromkeys(cancelling))
        if errors:
            raise Terse(f"Error cancelling partition reassignment{'' if len(errors) == 1 else 's'} for:\n"
                        + "\n".join(f"{t}-{p}: {errors[(t, p)]}" for t, p in sorted(errors, key=_key)))
        print(f"Successfully cancelled partition reassignment{'' if len(cancelling) == 1 else 's'} for: "
              f"{_names(cancelling)}")
    else:
        print("None of the specified partition reassignments are active.")
    moves = log_dir_moves(targets)
    found = await client.replica_log_dirs(moves) if moves else {}
    active = {r: found[r][0] for r in moves if r in found and found[r][0] is not None and found[r][1] is not None}
    if active:
        await _execute_moves(client, active, 10_000 if args.timeout is None else args.timeout)
    else:
        sys.stdout.write("None of the specified partition moves are active.")
        sys.stdout.flush()
    if not args.preserve_throttles:
        await _clear_throttles(client, targets)


async def _list(client: Client, args) -> None:
    ongoing = await client.reassigning()
    if not ongoing:
        print("No partition reassignments found.")
        return
    lines = []
    for (t, p) in sorted(ongoing, key=_key):
        r = ongoing[(t, p)]
        line = f"{t}-{p}: replicas: {','.join(map(str, r.replicas))}."
        if r.adding_replicas:
            line += f" adding: {','.join(map(str, r.adding_replicas))}."
        if r.removing_replicas:
            line += f" removing: {','.join(map(str, r.removing_replicas))}."
        lines.append(line)
    print("Current partition reassignments:\n" + "\n".join(lines))
