"""``kraftwire acls`` (kafka-acls.sh), no server: Kafka's option checks and their messages (AclCommandTest), the
ACLs each option set stands for (--producer, --consumer, --idempotent, hosts, pattern types), the requests built,
and the exact output lines of AclCommand."""

from __future__ import annotations

import io

import pytest

from kraftwire import error_codes as ec
from kraftwire.cli import build_parser
from kraftwire.tools import acls as tool
from kraftwire.tools.acls import AclCommandError, Entry, Pattern, UsageError

BOOT = ["--bootstrap-server", "localhost:9092"]
TOPIC, GROUP, CLUSTER, TXN, TOKEN, USER = 2, 3, 4, 5, 6, 7
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 2, 3, 4, 5, 6, 7, 8
IDEMPOTENT_WRITE = 12
DENY, ALLOW = 2, 3


def parse(*argv: str):
    return build_parser().parse_args(["acls", *argv])


def check(*argv: str):
    tool.check_args(parse(*argv))


# ================================================================================================================
# option checks (AclCommandOptions.checkArgs)
# ================================================================================================================
@pytest.mark.parametrize("argv, message", [
    ([*BOOT, "--bootstrap-controller", "localhost:9092"],
     "Only one of --bootstrap-server or --bootstrap-controller must be specified"),
    ([], "One of --bootstrap-server or --bootstrap-controller must be specified"),
    ([*BOOT], "Command must include exactly one action: --list, --add, --remove. "),
    ([*BOOT, "--add", "--list"], "Command must include exactly one action: --list, --add, --remove. "),
    ([*BOOT, "--add", "--list", "--remove"], "Command must include exactly one action: --list, --add, --remove. "),
    ([*BOOT, "--list", "--producer"], 'Option "[list]" can\'t be used with option "[producer]"'),
    ([*BOOT, "--list", "--allow-host", "h"], 'Option "[list]" can\'t be used with option "[allow-host]"'),
    ([*BOOT, "--list", "--deny-principal", "User:a"], 'Option "[list]" can\'t be used with option "[deny-principal]"'),
    ([*BOOT, "--add", "--producer", "--operation", "Read"],
     'Option "[producer]" can\'t be used with option "[operation]"'),
    ([*BOOT, "--add", "--consumer", "--operation", "Read", "--topic", "test-topic", "--group", "test-group"],
     'Option "[consumer]" can\'t be used with option "[operation]"'),
    ([*BOOT, "--add", "--consumer", "--deny-host", "h", "--topic", "t", "--group", "g"],
     'Option "[consumer]" can\'t be used with option "[deny-host]"'),
    ([*BOOT, "--add", "--principal", "User:CN=client"], "The --principal option is only available if --list is set"),
    ([*BOOT, "--add", "--producer"], "With --producer you must specify a --topic"),
    ([*BOOT, "--add", "--idempotent"], "The --idempotent option is only available if --producer is set"),
    ([*BOOT, "--add", "--consumer"],
     "With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should "
     "be specified."),
    ([*BOOT, "--add", "--consumer", "--topic", "t", "--group", "g", "--cluster"],
     "With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should "
     "be specified."),
])
def test_misused_options_get_kafkas_message(argv, message):
    with pytest.raises(UsageError) as info:
        check(*argv)
    assert str(info.value) == message


@pytest.mark.parametrize("argv", [
    [*BOOT, "--add", "--consumer", "--topic", "test-topic", "--group", "test-group"],
    [*BOOT, "--add", "--consumer", "--producer", "--topic", "t", "--group", "g", "--transactional-id", "x"],
    ["--bootstrap-controller", "localhost:9093", "--list", "--principal", "User:a"],
    [*BOOT, "--remove", "--topic", "t", "--force"],
])
def test_well_formed_option_sets_pass(argv):
    check(*argv)


def test_a_misused_option_exits_1_with_the_message_and_the_usage_on_stderr(capsys):
    assert tool.run(parse(*BOOT, "--add", "--idempotent")) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("The --idempotent option is only available if --producer is set\nusage: kraftwire acls")


@pytest.mark.parametrize("argv, message", [
    ([*BOOT, "--add", "--allow-principal", "User:a"],
     "You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token "
     "<Delegation Token ID>"),
    ([*BOOT, "--add", "--topic", "t"],
     "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs."),
    ([*BOOT, "--add", "--topic", "t", "--allow-principal", "User:a", "--resource-pattern-type", "match"],
     "A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls."),
    ([*BOOT, "--add", "--topic", "t", "--allow-principal", "User:a", "--resource-pattern-type", "Any"],
     "A '--resource-pattern-type' value of 'ANY' is not valid when adding acls."),
    ([*BOOT, "--add", "--topic", "t", "--allow-principal", "User:a", "--operation", "ClusterAction"],
     "ResourceType TOPIC only supports operations Read, Write, Create, Describe, Delete, Alter, DescribeConfigs, "
     "AlterConfigs, All"),
    ([*BOOT, "--add", "--group", "g", "--allow-principal", "User:a", "--operation", "Write"],
     "ResourceType GROUP only supports operations Read, Describe, Delete, DescribeConfigs, AlterConfigs, All"),
    ([*BOOT, "--add", "--cluster", "--allow-principal", "User:a", "--operation", "Any"],
     "ResourceType CLUSTER only supports operations Create, ClusterAction, DescribeConfigs, AlterConfigs, "
     "IdempotentWrite, Alter, Describe, All"),
    ([*BOOT, "--add", "--topic", "t", "--allow-principal", "User:a", "--operation", "Nope"],
     "ResourceType TOPIC only supports operations Read, Write, Create, Describe, Delete, Alter, DescribeConfigs, "
     "AlterConfigs, All"),
    ([*BOOT, "--add", "--cluster", "--allow-principal", "User:a", "--resource-pattern-type", "prefixed"],
     "You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token "
     "<Delegation Token ID>"),  # --cluster counts with LITERAL only
])
def test_what_add_refuses_before_connecting(argv, message, capsys):
    args = parse(*argv)
    tool.check_args(args)
    with pytest.raises(UsageError) as info:
        tool.resource_to_acls(args, tool.parse_pattern_type(args.resource_pattern_type))
    assert str(info.value) == message
    assert tool.run(parse(*argv)) == 1  # and no connection is tried
    assert capsys.readouterr().err.startswith(message + "\n")


def test_a_bad_principal_is_an_execution_error_on_stdout(capsys):
    assert tool.run(parse(*BOOT, "--add", "--topic", "t", "--allow-principal", "alice")) == 1
    out, err = capsys.readouterr()
    assert out == "Error while executing ACL command: expected a string in format principalType:principalName " \
                  "but got alice\n"
    assert err == ""


@pytest.mark.parametrize("text, code", [(None, LITERAL), ("LITERAL", LITERAL), ("literal", LITERAL),
                                        ("Prefixed", PREFIXED), ("any", ANY), ("MATCH", MATCH)])
def test_pattern_types(text, code):
    assert tool.parse_pattern_type(text) == code


def test_bad_pattern_types():
    with pytest.raises(UsageError, match="^Unknown resource-pattern-type: unknown$"):
        tool.parse_pattern_type("unknown")
    with pytest.raises(UsageError, match=r"Cannot parse argument 'glob' of option resource-pattern-type"):
        tool.parse_pattern_type("glob")


@pytest.mark.parametrize("text, code", [("All", ALL), ("Read", READ), ("READ", READ), ("read", READ),
                                        ("DescribeConfigs", 10), ("DESCRIBECONFIGS", 10), ("describeConfigs", 10),
                                        ("IdempotentWrite", IDEMPOTENT_WRITE), ("ClusterAction", 9),
                                        ("DESCRIBE_CONFIGS", 0), ("Any", ANY), ("nope", 0)])
def test_operation_names_as_security_utils_reads_them(text, code):
    assert tool.parse_operation(text) == code


def test_principals_as_kafka_parses_them():
    assert tool.parse_principal(" User:alice ") == "User:alice"
    assert tool.parse_principal("User:CN=a:b,O=c") == "User:CN=a:b,O=c"  # split at the first colon only
    assert tool.parse_principal("User:") == "User:"
    for bad in ("alice", ""):
        with pytest.raises(AclCommandError):
            tool.parse_principal(bad)


# ================================================================================================================
# the ACLs an option set stands for
# ================================================================================================================
def plan(*argv: str) -> dict[Pattern, list[Entry]]:
    args = parse(*BOOT, *argv)
    tool.check_args(args)
    pattern = tool.parse_pattern_type(args.resource_pattern_type)
    return tool.resource_to_acls(args, pattern) if args.add else tool.filter_to_acls(args, pattern)


def as_sets(p: dict[Pattern, list[Entry]]) -> dict[tuple, set[tuple]]:
    return {(k.resource_type, k.name, k.pattern_type): {(e.principal, e.host, e.operation, e.permission_type)
                                                        for e in v} for k, v in p.items()}


def test_principals_times_operations_times_hosts_for_every_resource():
    got = plan("--add", "--topic", "test-1", "--topic", " test-2 ", "--group", "g",
               "--allow-principal", "User:a", "--allow-principal", "User:b", "--allow-host", "host1",
               "--allow-host", "host2", "--deny-principal", "User:c", "--operation", "Read", "--operation", "Describe")
    acls = {(p, h, op, ALLOW) for p in ("User:a", "User:b") for h in ("host1", "host2") for op in (READ, DESCRIBE)}
    acls |= {("User:c", "*", op, DENY) for op in (READ, DESCRIBE)}  # --deny-host defaults to *
    assert as_sets(got) == {(TOPIC, "test-1", LITERAL): acls, (TOPIC, "test-2", LITERAL): acls,
                            (GROUP, "g", LITERAL): acls}
    assert list(got) == [Pattern(TOPIC, "test-1", LITERAL), Pattern(TOPIC, "test-2", LITERAL),
                         Pattern(GROUP, "g", LITERAL)]


def test_the_default_operation_is_all_and_every_resource_kind_has_its_option():
    got = plan("--add", "--allow-principal", "User:a", "--cluster", "--transactional-id", "t0",
               "--delegation-token", "token1", "--user-principal", "User:u", "--topic", "*")
    one = {("User:a", "*", ALL, ALLOW)}
    assert as_sets(got) == {(TOPIC, "*", LITERAL): one, (CLUSTER, "kafka-cluster", LITERAL): one,
                            (TXN, "t0", LITERAL): one, (TOKEN, "token1", LITERAL): one, (USER, "User:u", LITERAL): one}


def test_producer_acls():
    got = plan("--add", "--producer", "--allow-principal", "User:p", "--topic", "t", "--transactional-id", "x")
    assert as_sets(got) == {
        (TOPIC, "t", LITERAL): {("User:p", "*", op, ALLOW) for op in (WRITE, DESCRIBE, CREATE)},
        (TXN, "x", LITERAL): {("User:p", "*", op, ALLOW) for op in (WRITE, DESCRIBE)}}
    idempotent = plan("--add", "--producer", "--idempotent", "--allow-principal", "User:p", "--topic", "t")
    assert as_sets(idempotent)[(CLUSTER, "kafka-cluster", LITERAL)] == {("User:p", "*", IDEMPOTENT_WRITE, ALLOW)}
    prefixed = plan("--add", "--producer", "--idempotent", "--allow-principal", "User:p", "--topic", "Test-",
                    "--resource-pattern-type", "Prefixed")
    assert set(as_sets(prefixed)) == {(TOPIC, "Test-", PREFIXED), (CLUSTER, "kafka-cluster", LITERAL)}
    # --cluster without --idempotent adds nothing for a producer
    assert set(as_sets(plan("--add", "--producer", "--cluster", "--allow-principal", "User:p", "--topic", "t"))) == {
        (TOPIC, "t", LITERAL)}


def test_consumer_acls_and_both_roles_at_once():
    got = plan("--add", "--consumer", "--allow-principal", "User:c", "--allow-host", "h", "--topic", "t",
               "--group", "g")
    assert as_sets(got) == {(TOPIC, "t", LITERAL): {("User:c", "h", op, ALLOW) for op in (READ, DESCRIBE)},
                            (GROUP, "g", LITERAL): {("User:c", "h", READ, ALLOW)}}
    both = plan("--add", "--consumer", "--producer", "--idempotent", "--allow-principal", "User:c", "--topic", "t",
                "--group", "g")
    assert as_sets(both) == {
        (TOPIC, "t", LITERAL): {("User:c", "*", op, ALLOW) for op in (READ, DESCRIBE, WRITE, CREATE)},
        (GROUP, "g", LITERAL): {("User:c", "*", READ, ALLOW)},
        (CLUSTER, "kafka-cluster", LITERAL): {("User:c", "*", IDEMPOTENT_WRITE, ALLOW)}}


def test_remove_without_principals_names_the_filters_only():
    got = plan("--remove", "--topic", "t", "--cluster", "--resource-pattern-type", "literal")
    assert got == {Pattern(TOPIC, "t", LITERAL): [], Pattern(CLUSTER, "kafka-cluster", LITERAL): []}
    matching = plan("--remove", "--topic", "t", "--cluster", "--resource-pattern-type", "match", "--operation",
                    "Nope")  # no principal: nothing to check the operation against
    assert matching == {Pattern(TOPIC, "t", MATCH): []}


# ================================================================================================================
# requests
# ================================================================================================================
def test_create_request_has_one_creation_per_acl():
    req = tool.create_request(Pattern(TOPIC, "t", PREFIXED), [Entry("User:a", "*", READ, ALLOW),
                                                               Entry("User:b", "h", WRITE, DENY)])
    assert [(c.resource_type, c.resource_name, c.resource_pattern_type, c.principal, c.host, c.operation,
             c.permission_type) for c in req.creations] == [(TOPIC, "t", PREFIXED, "User:a", "*", READ, ALLOW),
                                                            (TOPIC, "t", PREFIXED, "User:b", "h", WRITE, DENY)]


def test_delete_request_has_one_filter_per_acl_or_one_any_filter():
    everything = tool.delete_request(Pattern(TOPIC, "t", MATCH), [])
    [f] = everything.filters
    assert (f.resource_type_filter, f.resource_name_filter, f.pattern_type_filter, f.principal_filter,
            f.host_filter, f.operation, f.permission_type) == (TOPIC, "t", MATCH, None, None, ANY, ANY)
    named = tool.delete_request(Pattern(GROUP, "g", LITERAL), [Entry("User:a", "*", READ, ALLOW)])
    [f] = named.filters
    assert (f.principal_filter, f.host_filter, f.operation, f.permission_type) == ("User:a", "*", READ, ALLOW)


def test_describe_request_for_a_filter_or_everything():
    d = tool.describe_request(None)
    assert (d.resource_type_filter, d.resource_name_filter, d.pattern_type_filter, d.principal_filter,
            d.host_filter, d.operation, d.permission_type) == (ANY, None, ANY, None, None, ANY, ANY)
    d = tool.describe_request(Pattern(TOPIC, "t", LITERAL))
    assert (d.resource_type_filter, d.resource_name_filter, d.pattern_type_filter) == (TOPIC, "t", LITERAL)


# ================================================================================================================
# output
# ================================================================================================================
def test_resource_and_entry_text_as_kafkas_tostring():
    assert str(Pattern(TOPIC, "t", LITERAL)) == "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)"
    assert str(Pattern(TXN, "x", PREFIXED)) == \
        "ResourcePattern(resourceType=TRANSACTIONAL_ID, name=x, patternType=PREFIXED)"
    assert str(Entry("User:alice", "*", READ, ALLOW)) == \
        "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"
    assert str(Entry("User:b", "10.0.0.1", 10, DENY)) == \
        "(principal=User:b, host=10.0.0.1, operation=DESCRIBE_CONFIGS, permissionType=DENY)"
    assert str(Entry("User:b", "*", 99, 9)) == "(principal=User:b, host=*, operation=UNKNOWN, permissionType=UNKNOWN)"


def test_adding_block_is_kafkas_println():
    text = tool.adding(Pattern(TOPIC, "t", LITERAL), [Entry("User:alice", "*", READ, ALLOW),
                                                      Entry("User:alice", "*", WRITE, ALLOW)])
    assert text == ("Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`: \n"
                    " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n"
                    "\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW) \n")


def test_remove_questions():
    f = Pattern(TOPIC, "t", LITERAL)
    assert tool.remove_question(f, []) == ("Are you sure you want to delete all ACLs for resource filter "
                                           "`ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`? (y/n)")
    assert tool.remove_question(f, [Entry("User:a", "*", READ, ALLOW)]) == (
        "Are you sure you want to remove ACLs: \n \t(principal=User:a, host=*, operation=READ, permissionType=ALLOW) \n"
        " from resource filter `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`? (y/n)")


def test_the_answer_y_confirms_in_any_case_and_force_does_not_ask(monkeypatch, capsys):
    args = parse(*BOOT, "--remove", "--topic", "t")
    for answer, ok in (("y\n", True), ("Y\n", True), ("n\n", False), ("yes\n", False), ("", False)):
        monkeypatch.setattr("sys.stdin", io.StringIO(answer))
        assert tool._confirm(args, "sure? (y/n)") is ok
    assert capsys.readouterr().out == "sure? (y/n)\n" * 5
    assert tool._confirm(parse(*BOOT, "--remove", "--topic", "t", "--force"), "sure?") is True
    assert capsys.readouterr().out == ""


def test_listing_groups_by_resource_and_filters_by_principal():
    from kraftwire.protocol import messages as w

    R = w.DescribeAclsResponse
    resources = [
        R.DescribeAclsResource(resource_type=TOPIC, resource_name="t", pattern_type=LITERAL, acls=[
            R.AclDescription(principal="User:b", host="*", operation=READ, permission_type=ALLOW),
            R.AclDescription(principal="User:a", host="*", operation=WRITE, permission_type=ALLOW)]),
        R.DescribeAclsResource(resource_type=GROUP, resource_name="g", pattern_type=PREFIXED, acls=[
            R.AclDescription(principal="User:b", host="*", operation=READ, permission_type=ALLOW)]),
        # the same resource again (a second filter of the tool found it too)
        R.DescribeAclsResource(resource_type=TOPIC, resource_name="t", pattern_type=LITERAL, acls=[
            R.AclDescription(principal="User:a", host="*", operation=WRITE, permission_type=ALLOW)]),
    ]
    grouped = tool.group(resources)
    assert list(grouped) == [Pattern(TOPIC, "t", LITERAL), Pattern(GROUP, "g", PREFIXED)]
    assert tool.listing(grouped, []) == (
        "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`: \n"
        " \t(principal=User:a, host=*, operation=WRITE, permissionType=ALLOW)\n"
        "\t(principal=User:b, host=*, operation=READ, permissionType=ALLOW) \n\n"
        "Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=g, patternType=PREFIXED)`: \n"
        " \t(principal=User:b, host=*, operation=READ, permissionType=ALLOW) \n\n")
    assert tool.listing(grouped, ["User:a", "User:c"]) == (
        "ACLs for principal `User:a`\n"
        "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`: \n"
        " \t(principal=User:a, host=*, operation=WRITE, permissionType=ALLOW) \n\n"
        "ACLs for principal `User:c`\n")
    assert tool.listing({}, []) == ""


def test_errors_read_as_the_java_admin_client_reports_them():
    assert tool.java_error(ec.SECURITY_DISABLED, "No Authorizer is configured on the broker") == \
        "org.apache.kafka.common.errors.SecurityDisabledException: No Authorizer is configured on the broker"
    assert tool.java_error(ec.UNKNOWN_SERVER_ERROR, None) == ("org.apache.kafka.common.errors.UnknownServerException: "
                                                              "The server experienced an unexpected error when "
                                                              "processing the request.")
    assert tool.java_error(ec.INVALID_REQUEST, "Invalid empty resource name") == \
        "org.apache.kafka.common.errors.InvalidRequestException: Invalid empty resource name"
    assert tool.java_error(ec.CLUSTER_AUTHORIZATION_FAILED, None).endswith("Cluster authorization failed.")


def test_the_command_is_registered():
    from kraftwire.cli import COMMANDS

    assert ("acls", "kraftwire.tools.acls") in [(name, module) for name, module, _ in COMMANDS]
