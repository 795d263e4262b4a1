"""``kraftwire consumer-groups --bootstrap-server HOST:PORT (--list | --describe | --reset-offsets | --delete |
--delete-offsets) ...``: Kafka's ``kafka-consumer-groups.sh``, its flags and its output, on kraftwire's own protocol
client.

* ``--list [--state [S,...]]``: the consumer groups (protocol type ``consumer`` or none) of every broker; with
  ``--state`` a ``GROUP``/``STATE`` table.
* ``--describe (--group G ... | --all-groups) [--offsets | --members [--verbose] | --state]``: per group, Kafka's
  table of ``CURRENT-OFFSET``, ``LOG-END-OFFSET`` and ``LAG`` per partition with the member that owns it (``-`` when
  none), its members, or its coordinator, assignor, state and member count. An empty group prints ``Consumer group
  'G' has no active members.`` and a rebalancing one a warning, on standard error, as Kafka's tool does.
* ``--reset-offsets (--group G | --all-groups) (--topic T[:P,...] ... | --all-topics) (--to-earliest | --to-latest |
  --to-current | --to-offset N | --shift-by N | --to-datetime YYYY-MM-DDTHH:mm:SS.sss | --by-duration PnDTnHnMnS)
  [--dry-run | --execute] [--export]``: the new offsets (clamped into each partition's range, as Kafka does); only an
  inactive group (Empty or Dead) is reset; without ``--execute`` nothing is written.
* ``--delete (--group G ... | --all-groups)`` and ``--delete-offsets --group G --topic T[:P,...]``.

Column widths, headers, messages and the blank lines between tables are Kafka's, so scripts written for Kafka's tool
read this one's output. Usage errors exit 1; group-level errors print ``Error: ...`` and exit 0, as Kafka's tool.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import re
import sys

from kraftwire import error_codes as ec
from kraftwire.tools.admin import add_bootstrap_arguments, connect

MISSING = "-"
RETRIABLE = (ec.COORDINATOR_NOT_AVAILABLE, ec.NOT_COORDINATOR, ec.COORDINATOR_LOAD_IN_PROGRESS)
RETRY_BACKOFF_S = 0.1
STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty", "Assigning", "Reconciling")
SCENARIOS = ("to_offset", "shift_by", "to_datetime", "by_duration", "to_earliest", "to_latest", "to_current",
             "from_file")


class UsageError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_arguments(parser)
    for flag, text in (("--list", "list all consumer groups"), ("--describe", "describe consumer group(s)"),
                       ("--delete", "delete consumer group(s)"), ("--reset-offsets", "reset a group's offsets"),
                       ("--delete-offsets", "delete a group's offsets")):
        parser.add_argument(flag, action="store_true", help=text)
    parser.add_argument("--group", action="append", default=[], help="the consumer group (repeatable)")
    parser.add_argument("--all-groups", action="store_true", help="every consumer group")
    parser.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,...]",
                        help="the topic, optionally with partitions (repeatable)")
    parser.add_argument("--all-topics", action="store_true", help="every topic the group has offsets for")
    parser.add_argument("--members", action="store_true", help="with --describe: the members")
    parser.add_argument("--verbose", action="store_true", help="with --describe --members: their partitions")
    parser.add_argument("--offsets", action="store_true", help="with --describe: the offsets (the default)")
    parser.add_argument("--state", nargs="?", const="", default=None, metavar="STATE[,STATE...]",
                        help="with --describe: the group state; with --list: filter by and show the states")
    parser.add_argument("--dry-run", action="store_true", help="with --reset-offsets: show, do not write")
    parser.add_argument("--execute", action="store_true", help="with --reset-offsets: write the new offsets")
    parser.add_argument("--export", action="store_true", help="with --reset-offsets: print the plan as CSV")
    parser.add_argument("--to-offset", type=int, dest="to_offset", help="reset to this offset")
    parser.add_argument("--shift-by", type=int, dest="shift_by", help="move the committed offsets by N")
    parser.add_argument("--to-datetime", dest="to_datetime", help="reset to the first offset at or after a time")
    parser.add_argument("--by-duration", dest="by_duration", help="reset to the offsets of this long ago")
    parser.add_argument("--to-earliest", action="store_true", dest="to_earliest", help="reset to the log start")
    parser.add_argument("--to-latest", action="store_true", dest="to_latest", help="reset to the log end")
    parser.add_argument("--to-current", action="store_true", dest="to_current", help="reset to the committed offsets")
    parser.add_argument("--from-file", dest="from_file", help="reset to the offsets of a CSV file")
    parser.add_argument("--timeout", type=int, default=5000, help="milliseconds to wait for some answers")


# ==================================================================================================== argument checks
def check_args(args) -> None:
    """Kafka's ``ConsumerGroupCommandOptions.checkArgs``: exactly one action and its options."""
    actions = [a for a in ("list", "describe", "delete", "reset_offsets", "delete_offsets") if getattr(args, a)]
    if len(actions) != 1:
        raise UsageError("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, "
                         "--delete-offsets")
    scope = "[group, all-groups]"
    if args.describe:
        if not args.group and not args.all_groups:
            raise UsageError(f"Option [describe] takes one of these options: {scope}")
        if sum(1 for x in (args.members, args.offsets, args.state is not None) if x) > 1:
            raise UsageError("Option [describe] takes at most one of these options: [members], [offsets], [state]")
        if args.state:
            raise UsageError("Option [describe] does not take a value for [state]")
    if args.delete:
        if not args.group and not args.all_groups:
            raise UsageError(f"Option [delete] takes one of these options: {scope}")
        if args.topic:
            raise UsageError("The consumer does not support topic-specific offset deletion from a consumer group.")
    if args.delete_offsets and (not args.group or not args.topic):
        raise UsageError("Option [delete-offsets] takes the following options: [group], [topic]")
    if args.reset_offsets:
        if args.dry_run and args.execute:
            raise UsageError("Option [reset-offsets] only accepts one of [execute] and [dry-run]")
        if not args.group and not args.all_groups:
            raise UsageError(f"Option [reset-offsets] takes one of these options: {scope}")
        chosen = [s for s in SCENARIOS if getattr(args, s) not in (None, False)]
        if len(chosen) > 1:
            raise UsageError(f"Option [{chosen[0].replace('_', '-')}] can't be used with option "
                             f"[{chosen[1].replace('_', '-')}]")
        if not chosen:
            raise UsageError("Option [reset-offsets] requires one of the following scenarios: "
                             "[to-offset, shift-by, to-datetime, by-duration, to-earliest, to-latest, to-current, "
                             "from-file]")
        if not args.topic and not args.all_topics and not args.from_file:
            raise UsageError("One of the reset scopes should be defined: --all-topics, --topic.")
    if args.group and args.all_groups:
        raise UsageError("Option [group] can't be used with option [all-groups]")
    if args.group and args.list:
        raise UsageError("Option [group] can't be used with option [list]")
    if args.topic and (args.list or args.describe):
        raise UsageError(f"Option [topic] can't be used with option [{'list' if args.list else 'describe'}]")


def parse_states(text: str) -> set[str]:
    states = set()
    for s in text.split(","):
        match = next((x for x in STATES if x.lower() == s.strip().lower()), None)
        if match is None:
            raise UsageError(f"Invalid state list '{text}'. Valid states are: " + ", ".join(STATES))
        states.add(match)
    return states


def parse_topic_args(topic_args: list[str]) -> tuple[list[tuple[str, int]], list[str]]:
    """``t:0,1`` -> explicit partitions; ``t`` -> a topic whose partitions are looked up."""
    explicit, whole = [], []
    for arg in topic_args:
        if ":" not in arg:
            whole.append(arg)
            continue
        parts = arg.split(":")
        if len(parts) != 2:
            raise UsageError(f"Invalid topic arg '{arg}', expected topic name and partitions")
        for p in parts[1].split(","):
            try:
                explicit.append((parts[0], int(p)))
            except ValueError:
                raise UsageError(f"Invalid partition '{p}' specified in topic arg '{arg}''") from None
    return explicit, whole


def parse_datetime(text: str) -> int:
    """Kafka's ``Utils.getDateTime``: ``yyyy-MM-dd'T'HH:mm:ss.SSS`` with an optional ``Z`` or ``±hh:mm`` zone
    (local time without one); milliseconds since the epoch."""
    m = re.fullmatch(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,3})?(Z|[+-]\d{2}:?\d{2})?", text)
    if m is None:
        raise UsageError(f"Error parsing timestamp '{text}': expected yyyy-MM-dd'T'HH:mm:ss.SSS[Z|+hh:mm]")
    base = dt.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")
    millis = int((m.group(2) or ".0")[1:].ljust(3, "0"))
    zone = m.group(3)
    if zone is None:
        stamp = base.astimezone()  # the local time zone
    else:
        if zone == "Z":
            tz = dt.timezone.utc
        else:
            sign = -1 if zone[0] == "-" else 1
            digits = zone[1:].replace(":", "")
            tz = dt.timezone(sign * dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
        stamp = base.replace(tzinfo=tz)
    return int(stamp.timestamp()) * 1000 + millis


def parse_duration(text: str) -> int:
    """Java's ``Duration.parse`` for ``PnDTnHnMn.nS``: milliseconds."""
    m = re.fullmatch(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?", text.upper())
    if m is None or text.upper() in ("P", "PT"):
        raise UsageError(f"Text cannot be parsed to a Duration: {text}")
    d, h, mi, s = (m.group(i) for i in range(1, 5))
    return int(((int(d or 0) * 24 + int(h or 0)) * 60 + int(mi or 0)) * 60_000 + float(s or 0) * 1000)


def assignment_partitions(data: bytes) -> list[tuple[str, int]]:
    """The partitions of a consumer-protocol assignment (int16 version, [topic, [partition]], user data)."""
    out = []
    try:
        if len(data) < 6:
            return out
        pos = 2
        (count,) = (int.from_bytes(data[pos:pos + 4], "big", signed=True),)
        pos += 4
        for _ in range(max(count, 0)):
            n = int.from_bytes(data[pos:pos + 2], "big", signed=True)
            topic = bytes(data[pos + 2:pos + 2 + n]).decode()
            pos += 2 + n
            k = int.from_bytes(data[pos:pos + 4], "big", signed=True)
            pos += 4
            for _ in range(max(k, 0)):
                out.append((topic, int.from_bytes(data[pos:pos + 4], "big", signed=True)))
                pos += 4
    except (UnicodeDecodeError, ValueError):
        return out
    return out


# ==================================================================================================== the client
class Admin:
    def __init__(self, conn, tls, login, timeout_s: float) -> None:
        self.conn, self.tls, self.login, self.timeout = conn, tls, login, timeout_s
        self._conns: dict[int, object] = {}
        self._brokers: dict[int, tuple[str, int]] = {}
        self._coordinators: dict[str, tuple] = {}

    async def close(self) -> None:
        await self.close_brokers()
        await self.conn.close()

    async def close_brokers(self) -> None:
        """Close the connections this opened to brokers, not the bootstrap one."""
        for c in self._conns.values():
            await c.close()
        self._conns.clear()

    async def metadata(self, topics: list[str] | None):
        from kraftwire.ids import ZERO_UUID
        from kraftwire.protocol import messages as w

        M = w.MetadataRequest
        body = M(topics=None if topics is None else [M.MetadataRequestTopic(topic_id=ZERO_UUID, name=t)
                                                     for t in topics], allow_auto_topic_creation=False)
        md = await self.conn.request(body, 12, timeout=self.timeout)
        self._brokers = {b.node_id: (b.host, b.port) for b in md.brokers}
        return md

    async def broker(self, node_id: int):
        from kraftwire.server.edge.client import KafkaConnection

        conn = self._conns.get(node_id)
        if conn is None:
            if node_id not in self._brokers:
                await self.metadata([])
            host, port = self._brokers[node_id]
            conn = self._conns[node_id] = await KafkaConnection.open(
                host, port, timeout=self.timeout, client_id="consumer-groups", ssl_context=self.tls, sasl=self.login)
        return conn

    async def _retry(self, make):
        """``make()`` -> (error, value), again while the error is a coordinator one that clears, until the timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        while True:
            error, value = await make()
            if error not in RETRIABLE or loop.time() + RETRY_BACKOFF_S > deadline:
                return error, value
            self._coordinators.clear()
            await asyncio.sleep(RETRY_BACKOFF_S)

    async def coordinator(self, group: str):
        """(error, (node id, host, port, connection))."""
        from kraftwire.protocol import messages as w

        async def find():
            found = await self.conn.request(w.FindCoordinatorRequest(key=group, key_type=0), 3, timeout=self.timeout)
            if found.error_code:
                return found.error_code, None
            return 0, (found.node_id, found.host, found.port, await self.broker(found.node_id))

        cached = self._coordinators.get(group)
        if cached is not None:
            return 0, cached
        error, value = await self._retry(find)
        if not error:
            self._coordinators[group] = value
        return error, value

    async def on_coordinator(self, group: str, body, version: int, code_of):
        """Send ``body`` to the group's coordinator, again while it answers a coordinator error."""
        async def send():
            error, coord = await self.coordinator(group)
            if error:
                return error, None
            answer = await coord[3].request(body, version, timeout=self.timeout)
            return code_of(answer), answer

        return await self._retry(send)

    async def list_groups(self) -> list[tuple[str, str, str]]:
        from kraftwire.protocol import messages as w

        md = await self.metadata([])
        out: dict[str, tuple[str, str, str]] = {}
        for b in md.brokers:
            answer = await (await self.broker(b.node_id)).request(w.ListGroupsRequest(states_filter=[]), 4,
                                                                  timeout=self.timeout)
            for g in answer.groups:
                if g.protocol_type in ("consumer", ""):
                    out[g.group_id] = (g.group_id, g.protocol_type, g.group_state)
        return [out[k] for k in sorted(out)]

    async def describe(self, group: str):
        """The group as DescribeGroups answers it; a KIP-848 consumer group (which DescribeGroups does not describe,
        as in Kafka) through ConsumerGroupDescribe, in the same shape."""
        from kraftwire.protocol import messages as w

        error, answer = await self.on_coordinator(group, w.DescribeGroupsRequest(groups=[group]), 5,
                                                  lambda a: a.groups[0].error_code)
        if error == ec.GROUP_ID_NOT_FOUND:
            error, answer = await self.on_coordinator(group, w.ConsumerGroupDescribeRequest(group_ids=[group]), 0,
                                                      lambda a: a.groups[0].error_code)
            if not error:
                return _classic_view(answer.groups[0])
        if error:
            raise GroupError(f"The group '{group}' could not be described: {ec.java_exception(error)}")
        return answer.groups[0]

    async def committed(self, group: str) -> dict[tuple[str, int], int]:
        from kraftwire.protocol import messages as w

        error, answer = await self.on_coordinator(group, w.OffsetFetchRequest(group_id=group, topics=None,
                                                                              require_stable=True), 7,
                                                  lambda a: a.error_code)
        if error:
            raise GroupError(f"The offsets of '{group}' could not be fetched: {ec.java_exception(error)}")
        return {(t.name, p.partition_index): p.committed_offset for t in answer.topics for p in t.partitions
                if p.committed_offset >= 0}

    async def list_offsets(self, tps, timestamp: int) -> dict[tuple[str, int], int]:
        """ListOffsets at each partition's leader: -1 latest, -2 earliest, else the first offset at or after a
        timestamp (-1 when none)."""
        from kraftwire.protocol import messages as w

        tps = list(tps)
        if not tps:
            return {}
        md = await self.metadata(sorted({t for t, _ in tps}))
        leaders = {(t.name, p.partition_index): p.leader_id for t in md.topics for p in t.partitions}
        by_leader: dict[int, list[tuple[str, int]]] = {}
        for tp in tps:
            if leaders.get(tp, -1) >= 0:
                by_leader.setdefault(leaders[tp], []).append(tp)
        L = w.ListOffsetsRequest
        out = {}
        for leader, items in by_leader.items():
            topics: dict[str, list] = {}
            for t, p in items:
                topics.setdefault(t, []).append(L.ListOffsetsPartition(partition_index=p, current_leader_epoch=-1,
                                                                       timestamp=timestamp))
            answer = await (await self.broker(leader)).request(L(replica_id=-1, isolation_level=0, topics=[
                L.ListOffsetsTopic(name=t, partitions=ps) for t, ps in topics.items()]), 7, timeout=self.timeout)
            for t in answer.topics:
                for p in t.partitions:
                    if p.error_code == 0:
                        out[(t.name, p.partition_index)] = p.offset
        return out

    async def partitions_of(self, topics: list[str]) -> list[tuple[str, int]]:
        if not topics:
            return []
        md = await self.metadata(topics)
        out = []
        for t in md.topics:
            if t.error_code:
                raise UsageError(f"Error getting partitions of topic {t.name}: {ec.java_exception(t.error_code)}")
            out.extend((t.name, p.partition_index) for p in t.partitions)
        return sorted(out)

    async def commit(self, group: str, offsets: dict[tuple[str, int], int]) -> int:
        from kraftwire.protocol import messages as w

        C = w.OffsetCommitRequest
        topics: dict[str, list] = {}
        for (t, p), off in sorted(offsets.items()):
            topics.setdefault(t, []).append(C.OffsetCommitRequestPartition(
                partition_index=p, committed_offset=off, committed_leader_epoch=-1, committed_metadata=""))
        body = C(group_id=group, generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
                 topics=[C.OffsetCommitRequestTopic(name=t, partitions=ps) for t, ps in topics.items()])
        error, answer = await self.on_coordinator(
            group, body, 8, lambda a: next((p.error_code for t in a.topics for p in t.partitions if p.error_code), 0))
        return error

    async def delete_groups(self, groups: list[str]) -> dict[str, int]:
        from kraftwire.protocol import messages as w

        out = {}
        for g in groups:
            error, _ = await self.on_coordinator(g, w.DeleteGroupsRequest(groups_names=[g]), 2,
                                                 lambda a: a.results[0].error_code)
            out[g] = error
        return out

    async def delete_offsets(self, group: str, tps) -> tuple[int, dict[tuple[str, int], int]]:
        from kraftwire.protocol import messages as w

        D = w.OffsetDeleteRequest
        topics: dict[str, list] = {}
        for t, p in sorted(tps):
            topics.setdefault(t, []).append(D.OffsetDeleteRequestPartition(partition_index=p))
        body = D(group_id=group, topics=[D.OffsetDeleteRequestTopic(name=t, partitions=ps) for t, ps in topics.items()])
        error, answer = await self.on_coordinator(group, body, 0, lambda a: a.error_code)
        per = {} if answer is None else {(t.name, p.partition_index): p.error_code
                                         for t in answer.topics for p in t.partitions}
        return error, per


def _classic_view(g):
    """A ConsumerGroupDescribe group in DescribeGroups' shape (assignments as consumer-protocol bytes)."""
    from types import SimpleNamespace

    def encoded(assignment) -> bytes:
        out = [b"\x00\x00", len(assignment.topic_partitions).to_bytes(4, "big")]
        for tp in assignment.topic_partitions:
            name = tp.topic_name.encode()
            out += [len(name).to_bytes(2, "big"), name, len(tp.partitions).to_bytes(4, "big")]
            out += [p.to_bytes(4, "big") for p in tp.partitions]
        out.append(b"\xff\xff\xff\xff")
        return b"".join(out)

    members = [SimpleNamespace(member_id=m.member_id, group_instance_id=m.instance_id, client_id=m.client_id,
                               client_host=m.client_host, member_assignment=encoded(m.assignment))
               for m in g.members]
    return SimpleNamespace(group_id=g.group_id, group_state=g.group_state, protocol_data=g.assignor_name,
                           members=members)


class GroupError(Exception):
    pass


# ==================================================================================================== the actions
def _error(text: str) -> None:
    print(f"\nError: {text}")


def _member_state(group: str, state: str | None, rows: int | None) -> bool:
    """Kafka's ``shouldPrintMemberState``: the notes it prints, and whether to print the table."""
    if rows is None:
        _error(f"The consumer group '{group}' does not exist.")
        return False
    if state == "Dead":
        _error(f"Consumer group '{group}' does not exist.")
    elif state == "Empty":
        print(f"\nConsumer group '{group}' has no active members.", file=sys.stderr)
    elif state in ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"):
        print(f"\nWarning: Consumer group '{group}' is rebalancing.", file=sys.stderr)
    return state != "Dead" and rows > 0


async def describe_offsets(admin: Admin, group: str) -> None:
    d = await admin.describe(group)
    committed = await admin.committed(group)
    members = [(m, assignment_partitions(bytes(m.member_assignment))) for m in d.members]
    members = [x for x in members if x[1]]
    members.sort(key=lambda x: -len(x[1]))  # Kafka: the members with the most partitions first (a stable sort)
    assigned = {tp for _m, parts in members for tp in parts}
    unassigned = sorted(tp for tp in committed if tp not in assigned)
    ends = await admin.list_offsets(list(assigned) + unassigned, -1)
    rows = []
    for m, parts in members:
        for tp in sorted(parts, key=lambda x: x[1]):
            rows.append((tp, m.member_id, m.client_host, m.client_id))
    for tp in unassigned:
        rows.append((tp, MISSING, MISSING, MISSING))
    if not _member_state(group, d.group_state, len(rows)):
        return
    group_w = max([15] + [len(group)])
    topic_w = max([15] + [len(tp[0]) for tp, *_ in rows])
    consumer_w = max([15] + [len(r[1]) for r in rows])
    host_w = max([15] + [len(r[2]) for r in rows])
    fmt = f"\n{{:<{group_w}}} {{:<{topic_w}}} {{:<10}} {{:<15}} {{:<15}} {{:<15}} {{:<{consumer_w}}} {{:<{host_w}}} {{}}"
    out = [fmt.format("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                      "CLIENT-ID")]
    for tp, consumer, host, client in rows:
        offset = committed.get(tp)
        end = ends.get(tp)
        lag = end - offset if offset is not None and end is not None else None
        out.append(fmt.format(group, tp[0], tp[1], MISSING if offset is None else offset,
                              MISSING if end is None else end, MISSING if lag is None else lag, consumer, host,
                              client))
    print("".join(out))


async def describe_members(admin: Admin, group: str, verbose: bool) -> None:
    d = await admin.describe(group)
    rows = [(m.member_id, m.group_instance_id or "", m.client_host, m.client_id,
             assignment_partitions(bytes(m.member_assignment))) for m in d.members]
    show = _member_state(group, d.group_state, len(rows))
    widths = [15, 15, 17, 15, 15]
    with_instance = False
    if show:
        for cid, inst, host, client, _parts in rows:
            widths = [max(widths[0], len(group)), max(widths[1], len(cid)), max(widths[2], len(inst)),
                      max(widths[3], len(host)), max(widths[4], len(client))]
            with_instance = with_instance or bool(inst)
    g, c, i, h, cl = widths
    fmt0 = f"{{:<{g}}} {{:<{c}}} {{:<{i}}} {{:<{h}}} {{:<{cl}}} {{:<15}} "
    fmt1 = f"{{:<{g}}} {{:<{c}}} {{:<{h}}} {{:<{cl}}} {{:<15}} "
    head = (fmt0.format("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
            if with_instance else fmt1.format("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"))
    print("\n" + head + ("ASSIGNMENT" if verbose else ""))
    if not show:
        return
    for cid, inst, host, client, parts in rows:
        line = (fmt0.format(group, cid, inst, host, client, len(parts)) if with_instance
                else fmt1.format(group, cid, host, client, len(parts)))
        if verbose:
            if not parts:
                line += MISSING
            else:
                by_topic: dict[str, list[int]] = {}
                for t, p in parts:
                    by_topic.setdefault(t, []).append(p)
                line += ", ".join(sorted("(" + ",".join(sorted(str(p) for p in ps)) + ")"
                                         for ps in by_topic.values()))
        print(line)


async def describe_state(admin: Admin, group: str) -> None:
    d = await admin.describe(group)
    error, coord = await admin.coordinator(group)
    if not _member_state(group, d.group_state, 1):
        return
    coordinator = f"{coord[1]}:{coord[2]}  ({coord[0]})" if not error else MISSING
    width = max(25, len(coordinator))
    fmt = f"\n{{:<{width}}} {{:<25}} {{:<20}} {{:<15}} {{}}"
    print(fmt.format("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
          + fmt.format(group, coordinator, d.protocol_data, d.group_state, len(d.members)))


async def list_groups(admin: Admin, args) -> None:
    groups = await admin.list_groups()
    if args.state is None:
        for g, _t, _s in groups:
            print(g)
        return
    wanted = parse_states(args.state) if args.state else set()
    groups = [x for x in groups if not wanted or x[2] in wanted]
    width = max([15] + [len(g) for g, _t, _s in groups]) + 10
    print(f"{'GROUP':<{width}} {'STATE':<20}")
    for g, _t, s in groups:
        print(f"{g:<{width}} {s:<20}")


async def reset_offsets(admin: Admin, args, groups: list[str]) -> dict[str, dict[tuple[str, int], int]]:
    result: dict[str, dict[tuple[str, int], int]] = {}
    plan_file = _read_plan(args.from_file, groups) if args.from_file else None
    for group in groups:
        d = await admin.describe(group)
        if d.group_state not in ("Empty", "Dead"):
            _error(f"Assignments can only be reset if the group '{group}' is inactive, but the current state is "
                   f"{d.group_state}.")
            result[group] = {}
            continue
        committed = await admin.committed(group)
        if plan_file is not None:
            if group not in plan_file:
                _error(f"No reset plan for group {group} found")
                result[group] = {}
                continue
            offsets = await _clamp(admin, plan_file[group])
        else:
            if args.all_topics:
                tps = sorted(committed)
            else:
                explicit, whole = parse_topic_args(args.topic)
                tps = explicit + await admin.partitions_of(whole)
            offsets = await _prepare(admin, args, tps, committed)
        if args.execute:
            error = await admin.commit(group, offsets)
            if error:
                raise GroupError(f"The offsets of '{group}' could not be reset: {ec.java_exception(error)}")
        result[group] = offsets
    return result


def _read_plan(path: str, groups: list[str]) -> dict[str, dict[tuple[str, int], int]]:
    with open(path, encoding="utf-8") as f:
        lines = [ln.strip() for ln in f.read().split("\n") if ln.strip()]
    plan: dict[str, dict[tuple[str, int], int]] = {}
    for line in lines:
        cols = line.split(",")
        if len(cols) == 3 and len(groups) == 1:
            plan.setdefault(groups[0], {})[(cols[0], int(cols[1]))] = int(cols[2])
        elif len(cols) == 4:
            plan.setdefault(cols[0], {})[(cols[1], int(cols[2]))] = int(cols[3])
        else:
            raise UsageError(f"Invalid reset plan line: {line}")
    return plan


async def _clamp(admin: Admin, wanted: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
    """Kafka's ``checkOffsetsRange``: an offset past the log end becomes the end, one before the start the start."""
    starts = await admin.list_offsets(wanted, -2)
    ends = await admin.list_offsets(wanted, -1)
    out = {}
    for tp, off in wanted.items():
        if tp in ends and off > ends[tp]:
            out[tp] = ends[tp]
        elif tp in starts and off < starts[tp]:
            out[tp] = starts[tp]
        else:
            out[tp] = off
    return out


async def _prepare(admin: Admin, args, tps, committed) -> dict[tuple[str, int], int]:
    if args.to_offset is not None:
        return await _clamp(admin, {tp: args.to_offset for tp in tps})
    if args.to_earliest or args.to_latest:
        found = await admin.list_offsets(tps, -2 if args.to_earliest else -1)
        missing = [tp for tp in tps if tp not in found]
        if missing:
            which = "starting" if args.to_earliest else "ending"
            raise UsageError(f"Error getting {which} offset of topic partition: {missing[0][0]}-{missing[0][1]}")
        return {tp: found[tp] for tp in tps}
    if args.shift_by is not None:
        wanted = {}
        for tp in tps:
            if tp not in committed:
                raise UsageError(f"Cannot shift offset for partition {tp[0]}-{tp[1]} since there is no current "
                                 "committed offset")
            wanted[tp] = committed[tp] + args.shift_by
        return await _clamp(admin, wanted)
    if args.to_datetime is not None or args.by_duration is not None:
        import time

        stamp = (parse_datetime(args.to_datetime) if args.to_datetime is not None
                 else int(time.time() * 1000) - parse_duration(args.by_duration))
        found = await admin.list_offsets(tps, stamp)
        empty = [tp for tp in tps if found.get(tp, -1) < 0]
        for t, p in empty:
            print(f"\nWarn: Partition {p} from topic {t} is empty. Falling back to latest known offset.")
        ends = await admin.list_offsets(empty, -1)
        return {tp: found[tp] if found.get(tp, -1) >= 0 else ends[tp] for tp in tps}
    if args.to_current:
        ends = await admin.list_offsets([tp for tp in tps if tp not in committed], -1)
        return {tp: committed[tp] if tp in committed else ends[tp] for tp in tps}
    raise UsageError("no reset scenario")  # check_args made sure there is one


def print_reset(result: dict[str, dict[tuple[str, int], int]], export: bool, single: bool) -> None:
    if export:
        lines = []
        for group, offsets in result.items():
            for (t, p), off in offsets.items():
                lines.append(f"{t},{p},{off}" if single else f"{group},{t},{p},{off}")
        print("".join(line + "\n" for line in lines))
        return
    fmt = "\n{:<30} {:<30} {:<10} {:<15}"
    out = [fmt.format("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")] if result else []
    for group, offsets in result.items():
        for (t, p), off in offsets.items():
            out.append(fmt.format(group, t, p, off))
    print("".join(out))


async def delete_groups(admin: Admin, groups: list[str]) -> None:
    results = await admin.delete_groups(groups)
    ok = [g for g, e in results.items() if not e]
    failed = {g: e for g, e in results.items() if e}
    if not failed:
        print("Deletion of requested consumer groups (" + "'" + ", ".join(ok) + "'" + ") was successful.")
        return
    _error("Deletion of some consumer groups failed:")
    for g, e in failed.items():
        print(f"* Group '{g}' could not be deleted due to: java.util.concurrent.ExecutionException: "
              f"{ec.java_exception(e)}")
    if ok:
        print("\nThese consumer groups were deleted successfully: '" + "'".join(ok) + "', '")


async def delete_offsets(admin: Admin, group: str, topic_args: list[str]) -> None:
    explicit, whole = parse_topic_args(topic_args)
    tps = sorted(set(explicit + await admin.partitions_of(whole)))
    top, per = await admin.delete_offsets(group, tps)
    if top == 0 and any(per.values()):
        top = next(e for e in per.values() if e)
    messages = {
        ec.NONE: None,
        ec.INVALID_GROUP_ID: f"'{group}' is not valid.",
        ec.GROUP_ID_NOT_FOUND: f"'{group}' does not exist.",
        ec.GROUP_AUTHORIZATION_FAILED: f"Access to '{group}' is not authorized.",
        ec.NON_EMPTY_GROUP: f"Deleting offsets of a consumer group '{group}' is forbidden if the group is not empty.",
        ec.GROUP_SUBSCRIBED_TO_TOPIC: "Encounter some partition level error, see the follow-up details:",
        ec.TOPIC_AUTHORIZATION_FAILED: "Encounter some partition level error, see the follow-up details:",
        ec.UNKNOWN_TOPIC_OR_PARTITION: "Encounter some partition level error, see the follow-up details:",
    }
    if top == ec.NONE:
        print(f"Request succeed for deleting offsets with topic {', '.join(topic_args)} group {group}")
    else:
        _error(messages.get(top) or f"Encounter some unknown error: {ec.name_of(top)}")
    fmt = "\n{:<30} {:<15} {:<15}"
    out = [fmt.format("TOPIC", "PARTITION", "STATUS")]
    for t, p in sorted(tps, key=lambda tp: tp[0] + str(tp[1])):
        error = per.get((t, p), top if top else 0)
        status = "Successful" if not error else f"Error: :{ec.java_exception(error).split(': ', 1)[-1]}"
        out.append(fmt.format(t, p, status))
    print("".join(out))


# ==================================================================================================== entry
def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    try:
        check_args(args)
        if args.list and args.state:
            parse_states(args.state)
        if args.command_config is not None and not os.access(args.command_config, os.R_OK):
            # Kafka's tool fails as it fails on the cluster: its line on standard output, and exit 0
            _error("Executing consumer group command failed due to java.nio.file.NoSuchFileException: "
                   f"{args.command_config}")
            return 0
        tls, login = client_security(args.command_config)
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    if args.reset_offsets and not args.dry_run and not args.execute:
        print("WARN: No action will be performed as the --execute option is missing.In a future major release, "
              "the default behavior of this command will be to prompt the user before executing the reset rather "
              "than doing a dry run. You should add the --dry-run option explicitly if you are scripting this "
              "command and want to keep the current default behavior without prompting.", file=sys.stderr)
    try:
        return asyncio.run(_run(args, tls, login))
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except (GroupError, OSError, asyncio.TimeoutError) as exc:
        _error(f"Executing consumer group command failed due to {exc or type(exc).__name__}")
        return 0


async def _run(args, tls, login) -> int:
    args.timeout_s = max(args.timeout / 1000.0, 1.0)
    conn = await connect(argparse.Namespace(bootstrap_server=args.bootstrap_server, timeout=args.timeout_s),
                         tls, login)
    admin = Admin(conn, tls, login, args.timeout_s)
    try:
        if args.list:
            await list_groups(admin, args)
            return 0
        groups = sorted(g for g, _t, _s in await admin.list_groups()) if args.all_groups else list(args.group)
        if args.describe:
            for group in sorted(set(groups)):
                if args.members:
                    await describe_members(admin, group, args.verbose)
                elif args.state is not None:
                    await describe_state(admin, group)
                else:
                    await describe_offsets(admin, group)
        elif args.delete:
            await delete_groups(admin, groups)
        elif args.reset_offsets:
            result = await reset_offsets(admin, args, groups)
            print_reset(result, args.export, len(args.group) == 1)
        elif args.delete_offsets:
            await delete_offsets(admin, args.group[0], args.topic)
        return 0
    finally:
        await admin.close()
