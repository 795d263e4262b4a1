"""``kraftwire share-groups --bootstrap-server HOST:PORT (--list | --describe | --reset-offsets | --delete |
--delete-offsets) ...``: Kafka's ``kafka-share-groups.sh`` (``ShareGroupCommand``), its flags and its output, on
kraftwire's own protocol client.

* ``--list [--state [S,...]]``: the share groups (ListGroups with the share type); with ``--state`` a
  ``GROUP``/``STATE`` table.
* ``--describe (--group G ... | --all-groups) [--offsets | --members | --state] [--verbose]``: per group, its
  share-partitions' ``START-OFFSET`` and ``LAG`` (DescribeShareGroupOffsets; ``LEADER-EPOCH`` too with
  ``--verbose``), its members (ShareGroupDescribe), or its coordinator, state and member count (and epochs with
  ``--verbose``). An empty group prints ``Share group 'G' has no active members.`` on standard error, as Kafka's.
* ``--reset-offsets --group G (--topic T[:P,...] ... | --all-topics) (--to-earliest | --to-latest | --to-datetime
  D | --to-offset N) (--dry-run | --execute)``: the new start offsets, written (AlterShareGroupOffsets) with
  ``--execute`` when the group is empty.
* ``--delete (--group G ... | --all-groups)`` (DeleteGroups of share groups, their share state with them) and
  ``--delete-offsets --group G --topic T ...`` (DeleteShareGroupOffsets).

The client, the topic arguments, the datetime and the reset table are ``consumer_groups``'. Usage errors exit 1;
errors of the cluster print ``Error: ...`` and exit 0, as Kafka's tool.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from kraftwire import error_codes as ec
from kraftwire.tools.admin import add_bootstrap_arguments, connect
from kraftwire.tools.consumer_groups import (MISSING, Admin, GroupError, UsageError, _error, parse_datetime,
                                             parse_topic_args, print_reset)

STATES = ("Unknown", "Stable", "Dead", "Empty")  # GroupState.groupStatesForType(SHARE), as Kafka prints them
SCENARIOS = ("to_earliest", "to_latest", "to_datetime", "to_offset")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_arguments(parser)
    for flag, text in (("--list", "List all share groups."),
                       ("--describe", "Describe share group, members and offset information."),
                       ("--delete", "Delete share group."), ("--reset-offsets", "Reset offsets of share group."),
                       ("--delete-offsets", "Delete offsets of share group.")):
        parser.add_argument(flag, action="store_true", help=text)
    parser.add_argument("--group", action="append", default=[], help="The share group id.")
    parser.add_argument("--all-groups", action="store_true", help="Apply to all share groups.")
    parser.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,...]",
                        help="The topic whose offset information should be deleted or reset.")
    parser.add_argument("--all-topics", action="store_true", help="Apply to all topics (reset-offsets).")
    parser.add_argument("--members", action="store_true", help="Describe members of the group.")
    parser.add_argument("--offsets", action="store_true", help="Describe the group's offsets (the default).")
    parser.add_argument("--verbose", action="store_true", help="Provide additional information when describing.")
    parser.add_argument("--state", nargs="?", const="", default=None, metavar="STATE[,STATE...]",
                        help="with --describe: the group state; with --list: filter by and show the states")
    parser.add_argument("--dry-run", action="store_true", help="with --reset-offsets: show, do not write")
    parser.add_argument("--execute", action="store_true", help="with --reset-offsets: write the new offsets")
    parser.add_argument("--export", action="store_true", help="with --reset-offsets: print the plan as CSV")
    parser.add_argument("--to-offset", type=int, dest="to_offset", help="reset to this offset")
    parser.add_argument("--to-datetime", dest="to_datetime", help="reset to the first offset at or after a time")
    parser.add_argument("--to-earliest", action="store_true", dest="to_earliest", help="reset to the log start")
    parser.add_argument("--to-latest", action="store_true", dest="to_latest", help="reset to the log end")
    parser.add_argument("--timeout", type=int, default=5000, help="milliseconds to wait for some answers")


# ==================================================================================================== argument checks
def check_args(args) -> None:
    """``ShareGroupCommandOptions.checkArgs`` and the tool's one-action check, in their order and words."""
    if args.describe:
        if not args.group and not args.all_groups:
            raise UsageError("Option [describe] takes one of these options: [all-groups], [group]")
        if sum(1 for x in (args.members, args.offsets, args.state is not None) if x) > 1:
            raise UsageError("Option [describe] takes at most one of these options: [members], [offsets], [state]")
        if args.state:
            raise UsageError("Option [describe] does not take a value for [state]")
    if args.delete:
        if not args.group and not args.all_groups:
            raise UsageError("Option [delete] takes the options [group] or [all-groups].")
        if args.group and args.all_groups:
            raise UsageError("Option [delete] takes either [group] or [all-groups], not both.")
        if args.topic:
            raise UsageError("Option [delete] does not take the option: [topic]")
    if args.delete_offsets and (not args.group or not args.topic):
        raise UsageError("Option [delete-offsets] takes the following options: [group], [topic]")
    if args.reset_offsets:
        if args.dry_run and args.execute:
            raise UsageError("Option [reset-offsets] only accepts one of [execute] and [dry-run]")
        if not args.dry_run and not args.execute:
            raise UsageError("Option [reset-offsets] takes the option: [execute] or [dry-run]")
        if not args.group:
            raise UsageError("Option [reset-offsets] takes the option: [group]")
        if not args.topic and not args.all_topics:
            raise UsageError("Option [reset-offsets] takes one of these options: [all-topics], [topic]")
        chosen = [s for s in SCENARIOS if getattr(args, s) not in (None, False)]
        if not chosen:
            raise UsageError("Option [reset-offsets] takes one of these options: [to-datetime], [to-earliest], "
                             "[to-latest], [to-offset]")
        if len(chosen) > 1:
            raise UsageError(f"Option [{chosen[0].replace('_', '-')}] can't be used with option "
                             f"[{chosen[1].replace('_', '-')}]")
    if args.group and args.all_groups:
        raise UsageError("Option [group] can't be used with option [all-groups]")
    if args.group and args.list:
        raise UsageError("Option [group] can't be used with option [list]")
    if args.topic and (args.list or args.describe):
        raise UsageError(f"Option [topic] can't be used with option [{'list' if args.list else 'describe'}]")
    actions = [a for a in ("list", "describe", "delete", "reset_offsets", "delete_offsets") if getattr(args, a)]
    if len(actions) != 1:
        raise UsageError("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, "
                         "--delete-offsets.")


def parse_states(text: str) -> set[str]:
    """Kafka's ``groupStatesFromString`` for share groups (case-insensitive, Kafka's spelling kept)."""
    states = set()
    for s in text.split(","):
        match = next((x for x in STATES if x.lower() == s.strip().lower()), None)
        if match is None:
            raise UsageError(f"Invalid state list '{text}'. Valid states are: " + ", ".join(STATES))
        states.add(match)
    return states


# ==================================================================================================== the client
class ShareAdmin(Admin):
    """``consumer_groups.Admin`` with the share-group requests."""

    async def list_share_groups(self, states: set[str] | None = None) -> list[tuple[str, str]]:
        """(group id, state) of every share group of every broker (ListGroups v5, the share type)."""
        from kraftwire.protocol import messages as w

        md = await self.metadata([])
        out: dict[str, str] = {}
        body = w.ListGroupsRequest(states_filter=sorted(states or ()), types_filter=["share"])
        for b in md.brokers:
            answer = await (await self.broker(b.node_id)).request(body, 5, timeout=self.timeout)
            if answer.error_code:
                raise GroupError(ec.java_exception(answer.error_code))
            for g in answer.groups:
                out[g.group_id] = g.group_state
        return [(g, out[g]) for g in sorted(out)]

    async def describe_share(self, group: str):
        from kraftwire.protocol import messages as w

        error, answer = await self.on_coordinator(group, w.ShareGroupDescribeRequest(group_ids=[group]), 1,
                                                  lambda a: a.groups[0].error_code)
        if error:
            message = answer.groups[0].error_message if answer is not None else None
            raise GroupError(_exception(error, message))
        return answer.groups[0]

    async def share_offsets(self, group: str) -> list:
        """The group's share-partitions: (topic, partition, start offset or None, leader epoch or None, lag or
        None), as ``Admin.listShareGroupOffsets`` reads DescribeShareGroupOffsets."""
        from kraftwire.protocol import messages as w

        Q = w.DescribeShareGroupOffsetsRequest
        body = Q(groups=[Q.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=None)])
        error, answer = await self.on_coordinator(group, body, 1, lambda a: a.groups[0].error_code)
        if error:
            raise GroupError(_exception(error, answer.groups[0].error_message if answer is not None else None))
        out = []
        for t in answer.groups[0].topics:
            for p in t.partitions:
                if p.error_code:
                    continue
                known = p.start_offset >= 0
                out.append((t.topic_name, p.partition_index, p.start_offset if known else None,
                            p.leader_epoch if known and p.leader_epoch >= 0 else None,
                            p.lag if known and p.lag >= 0 else None))
        return sorted(out)

    async def alter_share_offsets(self, group: str, offsets: dict) -> None:
        from kraftwire.protocol import messages as w

        A = w.AlterShareGroupOffsetsRequest
        topics: dict[str, list] = {}
        for (t, p), off in sorted(offsets.items()):
            topics.setdefault(t, []).append(A.AlterShareGroupOffsetsRequestPartition(partition_index=p,
                                                                                      start_offset=off))
        body = A(group_id=group, topics=[A.AlterShareGroupOffsetsRequestTopic(topic_name=t, partitions=ps)
                                         for t, ps in topics.items()])
        error, answer = await self.on_coordinator(group, body, 0, lambda a: a.error_code)
        if error:
            raise GroupError(_exception(error, answer.error_message if answer is not None else None))
        for t in answer.responses:
            for p in t.partitions:
                if p.error_code:
                    raise GroupError(_exception(p.error_code, p.error_message))

    async def delete_share_offsets(self, group: str, topics: list[str]):
        """(top-level error, its message, topic -> (error, message))."""
        from kraftwire.protocol import messages as w

        D = w.DeleteShareGroupOffsetsRequest
        body = D(group_id=group, topics=[D.DeleteShareGroupOffsetsRequestTopic(topic_name=t) for t in topics])
        error, answer = await self.on_coordinator(group, body, 0, lambda a: a.error_code)
        if error:
            return error, answer.error_message if answer is not None else None, {}
        return 0, None, {t.topic_name: (t.error_code, t.error_message) for t in answer.responses}


def _exception(code: int, message: str | None) -> str:
    """``<exception class>: <message>`` as Java prints the error the admin client raised (the broker's message when
    it sent one)."""
    cls = ec.java_exception_class(code)
    if cls is None:
        return ec.name_of(code)
    return f"{cls}: {message or ec.java_exception(code).split(': ', 1)[-1]}"


# ==================================================================================================== the actions
def _empty_state(group: str, state: str, rows: int) -> bool:
    """Kafka's ``maybePrintEmptyGroupState``: the notes it prints, and whether to print the table."""
    if state == "Dead":
        _error(f"Share group '{group}' does not exist.")
    elif state == "Empty":
        print(f"\nShare group '{group}' has no active members.", file=sys.stderr)
    return state != "Dead" and rows > 0


async def list_groups(admin: ShareAdmin, args) -> None:
    if args.state is None:
        for g, _s in await admin.list_share_groups():
            print(g)
        return
    groups = await admin.list_share_groups(parse_states(args.state) if args.state else None)
    width = max([15] + [len(g) for g, _s in groups])
    print(f"{'GROUP':<{width}} STATE")
    for g, s in groups:
        print(f"{g:<{width}} {s}")


async def describe_offsets(admin: ShareAdmin, group: str, verbose: bool) -> None:
    await admin.describe_share(group)
    rows = await admin.share_offsets(group)
    if not rows:
        print(f"\nShare group '{group}' has no offset information.")
        return
    group_w = max(15, len(group))
    topic_w = max([15] + [len(r[0]) for r in rows])

    def shown(value) -> str:
        return MISSING if value is None else str(value)

    if verbose:
        fmt = f"\n{{:<{group_w}}} {{:<{topic_w}}} {{:<10}} {{:<13}} {{:<13}} {{}}"
        out = [fmt.format("GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET", "LAG")]
        out += [fmt.format(group, t, p, shown(epoch), shown(start), shown(lag)) for t, p, start, epoch, lag in rows]
    else:
        fmt = f"\n{{:<{group_w}}} {{:<{topic_w}}} {{:<10}} {{:<13}} {{}}"
        out = [fmt.format("GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG")]
        out += [fmt.format(group, t, p, shown(start), shown(lag)) for t, p, start, _epoch, lag in rows]
    print("".join(out))


def _assignment(member) -> str:
    """Kafka's ``getAssignmentString``: ``topic:p,p;topic:p`` sorted."""
    return ";".join(sorted(f"{tp.topic_name}:" + ",".join(str(p) for p in sorted(tp.partitions))
                           for tp in member.assignment.topic_partitions))


async def describe_members(admin: ShareAdmin, group: str, verbose: bool) -> None:
    d = await admin.describe_share(group)
    members = sorted(d.members, key=lambda m: m.member_id)
    if not _empty_state(group, d.group_state, len(members)):
        return
    g = max(15, len(group))
    c = max([15] + [len(m.member_id) for m in members])
    h = max([15] + [len(m.client_host) for m in members])
    cl = max([15] + [len(m.client_id) for m in members])

    def count(m) -> int:
        return sum(len(tp.partitions) for tp in m.assignment.topic_partitions)

    if verbose:
        fmt = f"\n{{:<{g}}} {{:<{c}}} {{:<{h}}} {{:<{cl}}} {{:<12}} {{:<13}} {{}}"
        out = [fmt.format("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "MEMBER-EPOCH", "ASSIGNMENT")]
        out += [fmt.format(group, m.member_id, m.client_host, m.client_id, count(m), m.member_epoch, _assignment(m))
                for m in members]
    else:
        fmt = f"\n{{:<{g}}} {{:<{c}}} {{:<{h}}} {{:<{cl}}} {{:<12}} {{}}"
        out = [fmt.format("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT")]
        out += [fmt.format(group, m.member_id, m.client_host, m.client_id, count(m), _assignment(m))
                for m in members]
    print("".join(out))


async def describe_state(admin: ShareAdmin, group: str, verbose: bool) -> None:
    d = await admin.describe_share(group)
    _empty_state(group, d.group_state, 1)
    error, coord = await admin.coordinator(group)
    coordinator = f"{coord[1]}:{coord[2]}  ({coord[0]})" if not error else MISSING
    g, cw = max(15, len(group)), max(25, len(coordinator))
    if verbose:
        fmt = f"\n{{:<{g}}} {{:<{cw}}} {{:<15}} {{:<12}} {{:<17}} {{}}"
        print(fmt.format("GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "#MEMBERS")
              + fmt.format(group, coordinator, d.group_state, d.group_epoch, d.assignment_epoch, len(d.members)))
    else:
        fmt = f"\n{{:<{g}}} {{:<{cw}}} {{:<15}} {{}}"
        print(fmt.format("GROUP", "COORDINATOR (ID)", "STATE", "#MEMBERS")
              + fmt.format(group, coordinator, d.group_state, len(d.members)))


async def delete_groups(admin: ShareAdmin, args) -> None:
    """Kafka's ``deleteShareGroups``: a group not listed as a share group, or not Empty, is refused before asking."""
    listed = dict(await admin.list_share_groups())
    wanted = sorted(listed) if args.all_groups else list(dict.fromkeys(args.group))
    failed: dict[str, str] = {}
    for g in wanted:
        if g not in listed:
            failed[g] = f"org.apache.kafka.common.errors.GroupIdNotFoundException: Group '{g}' is not a share group."
        elif listed[g] == "Dead":
            failed[g] = f"java.lang.IllegalStateException: Share group '{g}' group state is DEAD."
        elif listed[g] != "Empty":
            failed[g] = f"org.apache.kafka.common.errors.GroupNotEmptyException: Share group '{g}' is not EMPTY."
    ok = []
    for g, error in (await admin.delete_groups([g for g in wanted if g not in failed])).items():
        if error:
            failed[g] = ec.java_exception(error)
        else:
            ok.append(g)
    if not failed:
        print("Deletion of requested share groups (" + ", ".join(f"'{g}'" for g in ok) + ") was successful.")
        return
    _error("Deletion of some share groups failed:")
    for g, e in failed.items():
        print(f"* Group '{g}' could not be deleted due to: {e}")
    if ok:
        print("\nThese share groups were deleted successfully: " + ", ".join(f"'{g}'" for g in ok))


async def delete_offsets(admin: ShareAdmin, group: str, topics: list[str]) -> None:
    topics = sorted(set(topics))
    top, message, per = await admin.delete_share_offsets(group, topics)
    if top in (ec.INVALID_GROUP_ID, ec.GROUP_ID_NOT_FOUND, ec.GROUP_AUTHORIZATION_FAILED, ec.NON_EMPTY_GROUP):
        _error(message or ec.java_exception(top).split(": ", 1)[-1])
    elif top and top not in (ec.TOPIC_AUTHORIZATION_FAILED, ec.UNKNOWN_TOPIC_OR_PARTITION):
        _error(f"Encounter some unknown error: {_exception(top, message)}")
    if top:
        per = {t: (top, message) for t in topics}
    if per:
        width = max([15] + [len(t) for t in per])
        fmt = f"\n{{:<{width}}} {{}}"
        out = [fmt.format("TOPIC", "STATUS")]
        for t in sorted(per):
            code, text = per[t]
            out.append(fmt.format(t, "Successful" if not code else
                                  f"Error: {text or ec.java_exception(code).split(': ', 1)[-1]}"))
        sys.stdout.write("".join(out))
    print()


async def reset_offsets(admin: ShareAdmin, args) -> dict:
    group = args.group[0]
    d = await admin.describe_share(group)
    if d.group_state not in ("Empty", "Dead"):
        raise UsageError(f"Share group '{group}' is not empty.")
    current = await admin.share_offsets(group)
    if args.all_topics:
        tps = sorted({(t, p) for t, p, *_ in current})
    else:
        explicit, whole = parse_topic_args(args.topic)
        tps = explicit + await admin.partitions_of(whole)
    if args.to_offset is not None:
        offsets = {tp: args.to_offset for tp in tps}
    elif args.to_earliest or args.to_latest:
        found = await admin.list_offsets(tps, -2 if args.to_earliest else -1)
        offsets = {tp: found[tp] for tp in tps if tp in found}
    else:
        found = await admin.list_offsets(tps, parse_datetime(args.to_datetime))
        ends = await admin.list_offsets([tp for tp in tps if found.get(tp, -1) < 0], -1)
        offsets = {tp: found[tp] if found.get(tp, -1) >= 0 else ends[tp] for tp in tps if tp in found or tp in ends}
    if args.execute:
        await admin.alter_share_offsets(group, offsets)
    return {group: offsets}


def print_new_offsets(result: dict) -> None:
    """The reset's table as Kafka 4.4's share tool prints it: columns as wide as the group and topic names need (15
    at least), a blank line before each line."""
    rows = [(g, t, p, off) for g, offsets in result.items() for (t, p), off in sorted(offsets.items())]
    gw = max([15] + [len(g) for g, *_ in rows])
    tw = max([15] + [len(t) for _g, t, *_ in rows])
    fmt = f"\n{{:<{gw}}} {{:<{tw}}} {{:<10}} {{}}"
    print("".join([fmt.format("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")]
                  + [fmt.format(g, t, p, off) for g, t, p, off in rows]))


# ==================================================================================================== entry
def run(args: argparse.Namespace) -> int:
    from kraftwire.errors import ConfigError
    from kraftwire.tools.command_config import client_security

    try:
        check_args(args)
        if args.list and args.state:
            parse_states(args.state)
        if args.command_config is not None and not os.access(args.command_config, os.R_OK):
            _error("Executing share group command failed due to java.nio.file.NoSuchFileException: "
                   f"{args.command_config}")
            return 0
        tls, login = client_security(args.command_config)
    except (UsageError, ConfigError) as exc:
        print(str(exc), file=sys.stderr)
        return 1
    try:
        return asyncio.run(_run(args, tls, login))
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except (GroupError, OSError, asyncio.TimeoutError) as exc:
        _error(f"Executing share group command failed due to {exc or type(exc).__name__}")
        return 0


async def _run(args, tls, login) -> int:
    args.timeout_s = max(args.timeout / 1000.0, 1.0)
    conn = await connect(argparse.Namespace(bootstrap_server=args.bootstrap_server, timeout=args.timeout_s),
                         tls, login)
    admin = ShareAdmin(conn, tls, login, args.timeout_s)
    try:
        if args.list:
            await list_groups(admin, args)
        elif args.describe:
            groups = [g for g, _s in await admin.list_share_groups()] if args.all_groups else args.group
            for group in sorted(set(groups)):
                if args.members:
                    await describe_members(admin, group, args.verbose)
                elif args.state is not None:
                    await describe_state(admin, group, args.verbose)
                else:
                    await describe_offsets(admin, group, args.verbose)
        elif args.delete:
            await delete_groups(admin, args)
        elif args.reset_offsets:
            result = await reset_offsets(admin, args)
            if args.export:
                print_reset(result, True, True)
            else:
                print_new_offsets(result)
        elif args.delete_offsets:
            await delete_offsets(admin, args.group[0], args.topic)
        return 0
    finally:
        await admin.close()

