"""The fuzzer's own generator, without a node: its writer agrees with the codec wherever the values are legal (so
its hostile bytes are lies on purpose), every case is a pure function of (seed, stream, index), the schedule covers
every advertised API and version before repeating one, and a run holds each kind of hostility the brief asks for."""

from __future__ import annotations

import random
import struct
import uuid

from fuzz import generator as g
from kraftwire.protocol import framing
from kraftwire.protocol import messages as w

POOLS = g.Pools(topics={"fuzz-a": (uuid.UUID(int=7), 3), g.REDOS_TOPIC: (uuid.UUID(int=8), 1)},
                cluster_id="abc", node_ids=(1,))
EVERYTHING = {key: info.valid_versions for key, info in w.APIS.items()}


def _message(info, tree):
    """The codec's message object for a plausible tree."""
    kw = {}
    for f in info.fields:
        if f.attr in tree:
            value = tree[f.attr]
            if f.struct is not None and value is not None:
                value = [_message(f.struct, v) for v in value] if f.is_array else _message(f.struct, value)
            kw[f.attr] = value
    return info.cls(**kw)


def test_the_writer_writes_what_the_codec_writes_for_plausible_values():
    for key, info in sorted(w.APIS.items()):
        lo, hi = info.valid_versions
        for version in range(lo, hi + 1):
            for seed in range(3):
                tree = g.Generator(random.Random(seed), POOLS, 0.0).message(key, version)
                frame, _ = g.encode_frame(key, version, 7, "fuzz", tree)
                body = _message(info.request._info, tree)
                assert frame == b"".join(framing.encode_request(body, version, 7, "fuzz")), (info.name, version)


def test_a_case_is_a_pure_function_of_its_coordinates():
    whole = list(g.cases(5, "client", EVERYTHING, POOLS, 60))
    again = [g.make_case(5, "client", c.index, c.api_key, c.version, POOLS) for c in whole]
    assert [c.frame for c in whole] == [c.frame for c in again]
    assert [c.frame for c in g.cases(5, "client", EVERYTHING, POOLS, 60, start=42)] == [c.frame for c in whole[42:]]
    assert [c.frame for c in whole] != [c.frame for c in g.cases(6, "client", EVERYTHING, POOLS, 60)]


def test_the_schedule_fuzzes_every_advertised_version_before_any_twice():
    advertised = {0: (3, 9), 18: (0, 4), 52: (0, 2)}
    pairs = g.schedule(1, "controller", advertised)
    assert sorted(pairs) == [(0, v) for v in range(3, 10)] + [(18, v) for v in range(5)] + [(52, v) for v in range(3)]
    got = [(c.api_key, c.version) for c in g.cases(1, "controller", advertised, POOLS, 2 * len(pairs))]
    assert got == pairs + pairs


def test_a_run_holds_every_kind_of_hostility():
    cases = list(g.cases(1, "client", EVERYTHING, POOLS, 3000))
    notes = " | ".join(n for c in cases for n in c.notes)
    for wanted in ("count lie", "null array", "repeated item", "tagged fields", "bit flips", "truncated",
                   "extended", "length prefix", "size prefix", "two record batches", "header says api key"):
        assert wanted in notes, wanted
    strings = [v for c in cases for v in _values(c.tree) if isinstance(v, (str, bytes))]
    assert any(isinstance(s, str) and len(s.encode()) > 32767 for s in strings)  # beyond an int16 length
    assert any(isinstance(s, g.Raw) for s in strings)  # not UTF-8
    assert any(v in (2**31 - 1, -2**31, 2**63 - 1, -2**63) for c in cases for v in _values(c.tree))
    assert sum(c.mode == "mutation" for c in cases) > 500 and sum(c.incomplete for c in cases) > 10
    nulls = [c for c in cases if _null_where_not_nullable(c)]
    assert len(nulls) > 20


def _values(tree):
    if isinstance(tree, dict):
        for v in tree.values():
            yield from _values(v)
    elif isinstance(tree, (list, g.Lie)):
        for v in tree.items if isinstance(tree, g.Lie) else tree:
            yield from _values(v)
    else:
        yield tree


def _null_where_not_nullable(case) -> bool:
    """A string of the request body that is null where its version allows none (the frame still carries it)."""
    info = w.APIS[case.api_key].request._info
    return any(f.type == "string" and not f.is_array and not f.is_nullable(case.version) and f.present(case.version)
               and f.attr in case.tree and case.tree[f.attr] is None for f in info.fields)


def test_an_int16_length_of_a_huge_string_is_a_lie_the_writer_tells():
    info = w.APIS[w.api("DescribeGroups").key]
    frame, _ = g.encode_frame(info.key, 0, 1, "fuzz", {"groups": ["x" * 40_000]})
    body = frame[4:]
    pos = 8 + 2 + 4 + 4  # header (key, version, correlation id, client id "fuzz"), then the array count
    assert struct.unpack_from(">h", body, pos)[0] == 40_000 - 65536
