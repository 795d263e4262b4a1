"""Bad input: every malformed frame is a clear ProtocolError naming what was wrong — never another exception,
never an allocation sized by an unchecked length. Includes a mutation fuzz over the request decoder."""

from __future__ import annotations

import random
import struct
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftwire.errors import ProtocolError
from kraftwire.protocol import codec, framing, messages as m
from kraftwire.protocol import wire_types as wt


def _filled(info, version, depth=0):
    """A message with every present field non-default: arrays of one element, strings, records."""
    kw = {}
    for f in info.fields:
        if not f.present(version):
            continue
        if f.struct is not None:
            item = _filled(f.struct, version, depth + 1)
        else:
            item = {"string": "xy", "bytes": b"b", "records": b"rec", "bool": True, "float64": 1.5,
                    "uuid": __import__("uuid").UUID(int=7)}.get(f.type, 3)
        kw[f.attr] = [item] if f.is_array else item
    return info.cls(**kw)


def _corpus() -> list[bytes]:
    frames = []
    for info in m.APIS.values():
        lo, hi = info.valid_versions
        for v in range(lo, hi + 1):
            for body in (info.request(), _filled(info.request._info, v)):
                frames.append(b"".join(framing.encode_request(body, v, 11, "fuzz"))[4:])
    return frames


CORPUS = _corpus()


def _decode_only_protocol_errors(data: bytes) -> None:
    try:
        framing.decode_request(data)
    except ProtocolError:
        pass


def _mutate(rng: random.Random, frame: bytes) -> bytes:
    b = bytearray(frame)
    op = rng.randrange(6)
    if op == 0 and b:  # flip bits
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif op == 1:  # truncate
        del b[rng.randrange(len(b) + 1):]
    elif op == 2 and len(b) > 8:  # huge / negative length-ish values at a random spot past the api key/version
        i = rng.randrange(4, len(b) - 3)
        b[i:i + 4] = rng.choice([b"\x7f\xff\xff\xff", b"\xff\xff\xff\xfe", b"\x80\x00\x00\x00", b"\xff\xff\xff\xff"])
    elif op == 3:  # insert random bytes
        i = rng.randrange(len(b) + 1)
        b[i:i] = rng.randbytes(rng.randint(1, 8))
    elif op == 4 and b:  # unterminated varints
        i = rng.randrange(len(b))
        b[i:] = b"\xff" * rng.randint(1, 12)
    else:  # random byte replacement
        for _ in range(rng.randint(1, 8)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


def test_corpus_decodes_cleanly():
    assert len(CORPUS) > 150
    for frame in CORPUS:
        framing.decode_request(frame)


def test_mutation_fuzz_only_protocol_errors_escape():
    rng = random.Random(20261122)
    n = 0
    for _ in range(20):
        for frame in CORPUS:
            _decode_only_protocol_errors(_mutate(rng, frame))
            n += 1
    assert n >= 5000


@settings(max_examples=1500)
@given(st.binary(max_size=64))
def test_random_bytes_only_protocol_errors(data):
    _decode_only_protocol_errors(data)


@settings(max_examples=300)
@given(st.binary(min_size=4, max_size=64))
def test_random_bytes_after_a_valid_header_only_protocol_errors(tail):
    for key, version in ((1, 17), (0, 9), (52, 2), (3, 12), (18, 4), (59, 1)):
        _decode_only_protocol_errors(struct.pack(">hhi", key, version, 1) + b"\xff\xff" + b"\x00" + tail)
        _decode_only_protocol_errors(struct.pack(">hhi", key, version, 1) + b"\xff\xff" + tail)


@settings(max_examples=300)
@given(st.lists(st.binary(max_size=40), max_size=6))
def test_splitter_only_protocol_errors(chunks):
    s = framing.FrameSplitter(max_size=1000)
    try:
        for c in chunks:
            s.feed(c)
    except ProtocolError:
        pass


# ---- clear messages -------------------------------------------------------------------------------

def _vote_v0_prefix() -> bytes:
    return b"\x04abc"  # ClusterId


@pytest.mark.parametrize("body,version,problem", [
    (b"", 0, r"VoteRequest\.cluster_id: varint runs past the end"),
    (b"\x04ab", 0, r"VoteRequest\.cluster_id: length 3 runs past the end"),
    (b"\xff\xff\xff\xff\xff\xff", 0, r"malformed varint: longer than 5 bytes"),
    (b"\xff\xff\xff\xff\x7f", 0, r"malformed varint: more than 32 bits"),
    (b"\x04abc\x7f", 0, r"VoteRequest\.topics: length 126 runs past the end"),
    (b"\x04abc\x02\x02x\x02\x00\x00", 0, r"VoteRequest\.TopicData\.PartitionData\.partition_index.*truncated"),
    (b"\x04\xff\xfe\xfd\x01\x00", 0, r"not valid UTF-8"),
    (b"\x04abc\x01\x00\x00", 0, r"trailing bytes"),
    (b"\x04abc\x01\x05\x00\x00", 0, r"tag count 5 exceeds"),
    (b"\x04abc\x01\x01\x00\x09\x00", 0, r"tagged field 0 of 9 bytes runs past"),
])
def test_malformed_bodies_name_the_problem(body, version, problem):
    with pytest.raises(ProtocolError, match=problem):
        codec.decode(m.VoteRequest, body, version)


def test_classic_negative_and_oversized_lengths():
    # BeginQuorumEpochRequest v0: ClusterId (a nullable string) int16 length, then int32 array count
    assert codec.decode(m.BeginQuorumEpochRequest, b"\xff\xfe\x00\x00\x00\x00", 0).cluster_id is None
    with pytest.raises(ProtocolError, match=r"topics: length 2147483647 runs past"):
        codec.decode(m.BeginQuorumEpochRequest, b"\xff\xff\x7f\xff\xff\xff", 0)
    with pytest.raises(ProtocolError, match=r"null array in a non-nullable field"):
        codec.decode(m.BeginQuorumEpochRequest, b"\xff\xff\xff\xff\xff\xff", 0)


def test_huge_counts_do_not_allocate():
    # []int32 with a claimed 500M elements in a 20-byte frame: refused before any list is built
    body = b"\xff\xff" + b"\x00\x00\x00\x01" + b"\x00\x00" + b"\x00\x00\x00\x01" + b"\x00" * 12 + b"\x1d\xcd\x65\x00"
    tracemalloc.start()
    try:
        with pytest.raises(ProtocolError):
            codec.decode(m.EndQuorumEpochRequest, body, 0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def test_unknown_version_and_unknown_message():
    from kraftwire.errors import UnsupportedVersionError

    with pytest.raises(UnsupportedVersionError):
        codec.decode(m.VoteRequest, b"", 9)
    with pytest.raises(UnsupportedVersionError):
        codec.encode(m.VoteRequest(), -1)
    with pytest.raises(ProtocolError, match="unknown message"):
        codec.decode("NoSuchRequest", b"", 0)
    with pytest.raises(ProtocolError, match="unknown api"):
        m.api(4242)


def test_encoding_bad_values_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="non-nullable"):
        codec.encode(m.VoteRequest(topics=[m.VoteRequest.TopicData(topic_name=None)]), 0)
    with pytest.raises(ProtocolError, match="VoteRequest"):
        codec.encode(m.VoteRequest(voter_id=2**40), 1)
    with pytest.raises(ProtocolError):
        codec.encode(m.VoteRequest(topics=[m.VoteRequest.TopicData(partitions=[m.VoteRequest.PartitionData(
            replica_directory_id="not-a-uuid")])]), 1)
    with pytest.raises(ProtocolError, match="string of 40000 bytes is too long to be written"):
        codec.encode(m.BeginQuorumEpochRequest(cluster_id="x" * 40000), 0)


# ---- strings hold at most 32,767 bytes, compact ones too (Kafka's generated readers and writers) -------------------

def _compact(n: int) -> bytes:
    return wt.uvarint_bytes(n + 1) + b"s" * n


@pytest.mark.parametrize("nullable", [False, True])
def test_a_compact_string_over_32767_bytes_is_refused_at_decode(nullable):
    read = wt.string_reader(True, nullable)
    data = _compact(wt.MAX_STRING_BYTES)
    assert read(data, 0, len(data), "f") == ("s" * wt.MAX_STRING_BYTES, len(data))
    for n in (wt.MAX_STRING_BYTES + 1, 40_000, 65_000, 2**31 - 2):
        data = _compact(n) if n < 1 << 20 else wt.uvarint_bytes(n + 1)
        with pytest.raises(ProtocolError, match=f"f: invalid length {n}: a string holds at most 32767 bytes"):
            read(data, 0, len(data), "f")


def test_a_classic_string_cannot_say_more_than_32767_bytes():
    """Its int16 length reads a larger unsigned value as negative, which is null (next test)."""
    read = wt.string_reader(False, True)
    data = struct.pack(">h", wt.MAX_STRING_BYTES) + b"s" * wt.MAX_STRING_BYTES
    assert read(data, 0, len(data), "f")[0] == "s" * wt.MAX_STRING_BYTES
    assert read(struct.pack(">H", 32768) + b"s" * 32768, 0, 32770, "f") == (None, 2)


@pytest.mark.parametrize("short,wide,compact", [
    (struct.pack(">h", -2), struct.pack(">i", -2), False),
    (struct.pack(">h", -32768), struct.pack(">i", -2**31), False),
    (wt.uvarint_bytes(0xFFFFFFFF), wt.uvarint_bytes(0xFFFFFFFF), True),  # as a Java int -1, less one: -2
    (wt.uvarint_bytes(2**31 + 1), wt.uvarint_bytes(2**31 + 1), True)])
def test_any_negative_length_is_null_as_kafka_reads_it(short, wide, compact):
    """Kafka 4.4 answers an InitProducerId whose transactional id has length -2, -32768 (v1) or the varint
    0xffffffff (v4) as one without a transactional id: its readers take any negative int as null. A non-nullable
    field refuses it. (``short``: a string's length; ``wide``: that of bytes and arrays.)"""
    assert wt.string_reader(compact, True)(short + b"rest", 0, len(short) + 4, "f") == (None, len(short))
    assert wt.bytes_reader(compact, True, False)(wide + b"rest", 0, len(wide) + 4, "f") == (None, len(wide))
    assert wt.read_array_length(wide + b"rest", 0, len(wide) + 4, "f", compact, True) == (-1, len(wide))
    with pytest.raises(ProtocolError, match="f: null string in a non-nullable field"):
        wt.string_reader(compact, False)(short + b"rest", 0, len(short) + 4, "f")
    with pytest.raises(ProtocolError, match="f: null array in a non-nullable field"):
        wt.read_array_length(wide + b"rest", 0, len(wide) + 4, "f", compact, False)


def test_a_compact_length_wraps_as_a_java_int():
    """The varint 0x80000000 is Integer.MIN_VALUE; less one it wraps to Integer.MAX_VALUE: too long, not null."""
    data = wt.uvarint_bytes(2**31) + b"rest"
    with pytest.raises(ProtocolError, match="f: invalid length 2147483647"):
        wt.string_reader(True, True)(data, 0, len(data), "f")
    with pytest.raises(ProtocolError, match="f: length 2147483647 runs past the end"):
        wt.bytes_reader(True, True, False)(data, 0, len(data), "f")


def _oversized(body, version: int, placeholder: str, size: int) -> bytes:
    """``body`` encoded with the compact string ``placeholder`` swapped for ``size`` bytes."""
    data = codec.encode(body, version)
    old = wt.uvarint_bytes(len(placeholder) + 1) + placeholder.encode()
    assert data.count(old) == 1
    return data.replace(old, _compact(size))


@pytest.mark.parametrize("cls,body,version,field", [
    (m.OffsetCommitRequest, m.OffsetCommitRequest(group_id="PLACEHOLDER"), 8, "OffsetCommitRequest.group_id"),
    (m.OffsetCommitRequest, m.OffsetCommitRequest(group_id="g", group_instance_id="PLACEHOLDER"), 8,
     "OffsetCommitRequest.group_instance_id"),
    (m.InitProducerIdRequest, m.InitProducerIdRequest(transactional_id="PLACEHOLDER"), 4,
     "InitProducerIdRequest.transactional_id"),
    (m.ListGroupsRequest, m.ListGroupsRequest(states_filter=["PLACEHOLDER"]), 4, "ListGroupsRequest.states_filter"),
])
def test_every_string_of_a_flexible_request_is_limited(cls, body, version, field):
    data = _oversized(body, version, "PLACEHOLDER", wt.MAX_STRING_BYTES)
    assert "PLACEHOLDER" not in repr(codec.decode(cls, data, version))
    with pytest.raises(ProtocolError, match=f"{field}: invalid length 40000"):
        codec.decode(cls, _oversized(body, version, "PLACEHOLDER", 40_000), version)


def test_a_tagged_string_is_limited_too():
    data = codec.encode(m.FetchRequest(cluster_id=None), 12)
    assert data[-1] == 0  # no tagged fields

    def tagged(size: int) -> bytes:  # the top level's tagged fields: one, tag 0 (ClusterId), holding the string
        value = _compact(size)
        return data[:-1] + b"\x01\x00" + wt.uvarint_bytes(len(value)) + value

    assert codec.decode(m.FetchRequest, tagged(wt.MAX_STRING_BYTES), 12).cluster_id == "s" * wt.MAX_STRING_BYTES
    with pytest.raises(ProtocolError, match=r"FetchRequest\.cluster_id: invalid length 40000"):
        codec.decode(m.FetchRequest, tagged(40_000), 12)


def test_the_limit_is_checked_before_the_bytes_are_looked_for():
    """A claimed length over the limit is refused as such even when the data ends right after it."""
    data = codec.encode(m.InitProducerIdRequest(transactional_id=""), 4)
    with pytest.raises(ProtocolError, match="invalid length 40000"):
        codec.decode(m.InitProducerIdRequest, wt.uvarint_bytes(40_001) + data[1:], 4)


def test_a_flexible_array_counting_more_items_than_bytes_is_refused():
    """Kafka's readers refuse a collection whose count exceeds the remaining bytes before allocating it."""
    data = codec.encode(m.MetadataRequest(topics=[]), 12)
    assert data[0] == 1  # the topics' compact count: 0 items
    with pytest.raises(ProtocolError, match=r"MetadataRequest\.topics: length 100000 runs past the end"):
        codec.decode(m.MetadataRequest, wt.uvarint_bytes(100_001) + data[1:], 12)


@pytest.mark.parametrize("value", ["x" * (wt.MAX_STRING_BYTES + 1), "\u00e9" * 16_384])
@pytest.mark.parametrize("version", [3, 5])  # classic and compact
def test_a_string_over_32767_bytes_is_never_written(value, version):
    """Bytes of UTF-8 count, not characters: 16,384 two-byte characters are one byte too many."""
    with pytest.raises(ProtocolError, match=r"ListGroupsResponse\.ListedGroup\.group_id: a string of 32768 bytes is "
                                            r"too long to be written \(at most 32767\)"):
        codec.encode(m.ListGroupsResponse(groups=[m.ListGroupsResponse.ListedGroup(group_id=value)]), version)


def test_every_string_field_round_trips_32767_bytes_and_refuses_one_more():
    """At every version of every message, each top-level string field holds 32,767 bytes of UTF-8 and no more."""
    checked = 0
    for cls in m.MESSAGES.values():
        lo, hi = cls.VALID_VERSIONS
        for f in cls._info.fields:
            if f.type != "string" or f.is_array or f.struct is not None:
                continue
            for v in range(lo, hi + 1):
                if not f.present(v):
                    continue
                body = cls(**{f.attr: "\u00e9" * 16_383 + "x"})
                decoded = codec.decode(cls, codec.encode(body, v), v)
                assert getattr(decoded, f.attr) == getattr(body, f.attr)
                with pytest.raises(ProtocolError, match="too long to be written"):
                    codec.encode(cls(**{f.attr: "x" * (wt.MAX_STRING_BYTES + 1)}), v)
                checked += 1
    assert checked > 350


def test_varint_primitives():
    for n in (0, 1, -1, 63, -64, 2**31 - 1, -(2**31)):
        enc = wt.varint_bytes(n)
        assert wt.read_varint(enc, 0, len(enc), "x") == (n, len(enc))
    for n in (0, 2**63 - 1, -(2**63)):
        enc = wt.varlong_bytes(n)
        assert wt.read_varlong(enc, 0, len(enc), "x") == (n, len(enc))
    assert wt.varint_bytes(-1) == b"\x01" and wt.varint_bytes(1) == b"\x02" and wt.uvarint_bytes(128) == b"\x80\x01"
    with pytest.raises(ProtocolError):
        wt.read_varlong(b"\xff" * 11, 0, 11, "x")
    with pytest.raises(ProtocolError):
        wt.varint_bytes(2**31)


@settings(max_examples=500)
@given(st.binary(max_size=48), st.sampled_from([(1, 12), (1, 4), (52, 1), (18, 3), (18, 0), (3, 12), (59, 1)]))
def test_random_response_frames_only_protocol_errors(tail, api_version):
    key, version = api_version
    out = framing.OutboundRequests()
    cid, _ = out.encode(m.api(key).request(), version)
    try:
        out.on_response(struct.pack(">i", cid) + tail)
    except ProtocolError:
        pass


@settings(max_examples=500)
@given(st.binary(max_size=6), st.binary(max_size=48))
def test_random_control_records_only_protocol_errors(key, value):
    from kraftwire.records import control

    for k in (key, b"\x00\x00\x00\x02" + key, b"\x00\x00\x00\x06"):
        try:
            control.decode_control_record(k, value)
        except ProtocolError:
            pass
