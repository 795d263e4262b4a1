"""AlterClientQuotas and DescribeClientQuotas (KIP-546): quotas set, changed, removed and looked at with every match
type and ``strict``, ``validate_only``, and the refusals of Kafka's ClientQuotaControlManager and ClientQuotasImage
(bad entities, keys, values and filters). Client quotas are cluster-wide: a scenario names its own users and client
ids (``{ns}``), and one that sets a default entity's quota removes it before it ends."""

from __future__ import annotations

from conformance.runner import Scenario, Step, versions

from kraftwire.protocol import messages as w

AQ, DQ = w.AlterClientQuotasRequest, w.DescribeClientQuotasRequest
USER, CLIENT = "{ns}.u", "{ns}.c"
EXACT, DEFAULT, ANY = 0, 1, 2


def entry(entity: list[tuple[str, str | None]], *ops: tuple[str, float | None]) -> AQ.EntryData:
    """One alteration: ``entity`` as (type, name) pairs, ``ops`` as (key, value or None to remove)."""
    return AQ.EntryData(entity=[AQ.EntityData(entity_type=t, entity_name=n) for t, n in entity],
                        ops=[AQ.OpData(key=k, value=0.0 if v is None else v, remove=v is None) for k, v in ops])


def alter(version: int, *entries: AQ.EntryData, validate_only: bool = False) -> Step:
    return Step(AQ(entries=list(entries), validate_only=validate_only), version)


def describe(version: int, *components: tuple[str, int, str | None], strict: bool = False,
             settled: int | None = None) -> Step:
    """DescribeClientQuotas; ``settled``: after an alteration, repeated until it lists that many entities (a broker
    answers from its metadata image, which follows the controller's commit a moment later, Kafka's as kraftwire's)."""
    until = None if settled is None else (lambda answer: len(answer.entries or []) == settled)
    return Step(DQ(components=[DQ.ComponentData(entity_type=t, match_type=mt, match=m) for t, mt, m in components],
                   strict=strict), version, until=until)


def _alter_cases(v: int) -> dict[str, list[Step]]:
    u, c = ("user", USER), ("client-id", CLIENT)
    d = versions("DescribeClientQuotas")[-1]
    return {
        "set-change-remove": [
            alter(v, entry([u], ("producer_byte_rate", 1024.0), ("consumer_byte_rate", 2048.0))),
            describe(d, ("user", EXACT, USER), settled=1),
            alter(v, entry([u], ("producer_byte_rate", 4096.0), ("consumer_byte_rate", 2048.0),
                           ("request_percentage", 12.5))),
            Step(DQ(components=[DQ.ComponentData(entity_type="user", match_type=EXACT, match=USER)], strict=False), d,
                 until=lambda answer: len(answer.entries) == 1 and len(answer.entries[0].values) == 3),
            alter(v, entry([u], ("producer_byte_rate", None), ("controller_mutation_rate", None))),
            Step(DQ(components=[DQ.ComponentData(entity_type="user", match_type=EXACT, match=USER)], strict=False), d,
                 until=lambda answer: len(answer.entries) == 1 and len(answer.entries[0].values) == 2),
            alter(v, entry([u], ("consumer_byte_rate", None), ("request_percentage", None))),
            describe(d, ("user", EXACT, USER), settled=0),
        ],
        "user-and-client": [
            alter(v, entry([u, c], ("producer_byte_rate", 100.0)), entry([c], ("request_percentage", 200.0)),
                  entry([u], ("controller_mutation_rate", 0.5)), entry([("user", USER + "2")],
                                                                        ("consumer_byte_rate", 5.0))),
            describe(d, ("user", EXACT, USER), settled=2),
            describe(d, ("user", EXACT, USER), strict=True),
            describe(d, ("user", EXACT, USER), ("client-id", ANY, None)),
            describe(d, ("client-id", EXACT, CLIENT)),
            describe(d, ("client-id", EXACT, CLIENT), strict=True),
            alter(v, entry([u, c], ("producer_byte_rate", None)), entry([c], ("request_percentage", None)),
                  entry([u], ("controller_mutation_rate", None)), entry([("user", USER + "2")],
                                                                         ("consumer_byte_rate", None))),
            describe(d, ("user", EXACT, USER), settled=0),
        ],
        "validate-only": [
            alter(v, entry([u], ("producer_byte_rate", 1024.0)), validate_only=True),
            describe(d, ("user", EXACT, USER)),
            alter(v, entry([u], ("producer_byte_rate", 1.5)), validate_only=True),
        ],
        "ip": [
            alter(v, entry([("ip", "127.0.0.7")], ("connection_creation_rate", 10.0))),
            describe(d, ("ip", EXACT, "127.0.0.7"), settled=1),
            alter(v, entry([("ip", "127.0.0.7")], ("connection_creation_rate", 2.0 ** 31))),
            alter(v, entry([("ip", "127.0.0.7")], ("connection_creation_rate", 1.25))),
            alter(v, entry([("ip", "127.0.0.7")], ("producer_byte_rate", 1.0))),
            alter(v, entry([("ip", "127.0.0.7")], ("connection_creation_rate", None))),
            describe(d, ("ip", EXACT, "127.0.0.7"), settled=0),
        ],
        "bad-values": [
            alter(v, entry([u], ("producer_byte_rate", 0.0)), entry([c], ("consumer_byte_rate", -1.0)),
                  entry([("user", USER + "2")], ("producer_byte_rate", 10.5)),
                  entry([("user", USER + "3")], ("producer_byte_rate", 1e20)),
                  entry([("client-id", CLIENT + "2")], ("no_such_quota", 1.0)),
                  entry([("client-id", CLIENT + "3")], ("connection_creation_rate", 1.0)),
                  entry([("user", USER + "4")], ("request_percentage", float("nan"))),
                  entry([("user", USER + "5")], ("producer_byte_rate", float("inf")))),
            describe(d, ("user", EXACT, USER)),
        ],
        "bad-entities": [
            alter(v, entry([], ("producer_byte_rate", 1.0)), entry([("group", "{ns}.g")], ("producer_byte_rate", 1.0)),
                  entry([("user", "")], ("producer_byte_rate", 1.0)),
                  entry([("ip", "127.0.0.8"), u], ("connection_creation_rate", 1.0))),
        ],
        "duplicates": [
            alter(v, entry([u], ("producer_byte_rate", 1.0), ("producer_byte_rate", 2.0)),
                  entry([c], ("consumer_byte_rate", 3.0)), entry([c], ("consumer_byte_rate", 4.0))),
            describe(d, ("client-id", EXACT, CLIENT), settled=1),
            alter(v, entry([c], ("consumer_byte_rate", None))),
            describe(d, ("client-id", EXACT, CLIENT), settled=0),
        ],
        "default-entities": [
            alter(v, entry([("user", None)], ("producer_byte_rate", 1e9)),
                  entry([("user", None), ("client-id", None)], ("consumer_byte_rate", 2e9)),
                  entry([u, ("client-id", None)], ("request_percentage", 300.0))),
            describe(d, ("user", DEFAULT, None), settled=2),
            describe(d, ("user", DEFAULT, None), strict=True),
            describe(d, ("user", DEFAULT, None), ("client-id", DEFAULT, None)),
            describe(d, ("user", EXACT, USER), ("client-id", DEFAULT, None)),
            alter(v, entry([("user", None)], ("producer_byte_rate", None)),
                  entry([("user", None), ("client-id", None)], ("consumer_byte_rate", None)),
                  entry([u, ("client-id", None)], ("request_percentage", None))),
            describe(d, ("user", DEFAULT, None), settled=0),
        ],
    }


def _describe_cases(v: int) -> dict[str, list[Step]]:
    return {
        "bad-filters": [
            describe(v, ("", EXACT, "x")),
            describe(v, ("user", EXACT, USER), ("user", ANY, None)),
            describe(v, ("group", EXACT, "x")),
            describe(v, ("user", EXACT, None)),
            describe(v, ("user", DEFAULT, USER)),
            describe(v, ("client-id", ANY, CLIENT)),
            describe(v, ("user", 7, None)),
            describe(v, ("ip", ANY, None), ("user", EXACT, USER)),
        ],
        "nothing-matches": [
            describe(v, ("user", EXACT, USER), strict=True),
            describe(v, ("client-id", EXACT, CLIENT), ("user", EXACT, USER)),
        ],
    }


SCENARIOS = [Scenario("AlterClientQuotas", v, name, steps)
             for v in versions("AlterClientQuotas") for name, steps in _alter_cases(v).items()]
SCENARIOS += [Scenario("DescribeClientQuotas", v, name, steps)
              for v in versions("DescribeClientQuotas") for name, steps in _describe_cases(v).items()]
