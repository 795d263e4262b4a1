"""Frames, headers, correlation ids, and the ApiVersions builder (KIP-511 fallback, Produce from v0)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import example, given, settings, strategies as st

from kraftwire import error_codes as ec
from kraftwire.errors import ProtocolError, UnsupportedVersionError
from kraftwire.ids import METADATA_TOPIC_ID
from kraftwire.protocol import codec, framing, messages as m
from kraftwire.protocol.api_versions import (Features, advertised_ranges, answer_frame, api_versions_response,
                                            encode_api_versions_response)


def J(chunks) -> bytes:
    return b"".join(chunks)


# ---- frame splitter ------------------------------------------------------------------------------

def test_splitter_handles_byte_by_byte_and_coalesced_input():
    frames = [b"a", b"", b"hello" * 100]
    stream = b"".join(struct.pack(">i", len(f)) + f for f in frames)
    s = framing.FrameSplitter()
    out = []
    for i in range(len(stream)):
        out += s.feed(stream[i:i + 1])
    assert out == frames and s.buffered == 0
    assert framing.FrameSplitter().feed(stream) == frames


@settings(max_examples=300)
@example(frames=[b"hello world"], cuts=[5, 9], kinds=["bytes", "bytearray"] + ["bytes"] * 11)
@example(frames=[b"hello world"], cuts=[5, 9], kinds=["bytes", "memoryview"] + ["bytes"] * 11)
@given(frames=st.lists(st.binary(max_size=300), max_size=8), cuts=st.lists(st.integers(0, 3000), max_size=12),
       kinds=st.lists(st.sampled_from(["bytes", "bytearray", "memoryview"]), min_size=13, max_size=13))
def test_splitter_returns_the_frames_whatever_the_chunking_and_buffer_type(frames, cuts, kinds):
    stream = b"".join(struct.pack(">i", len(f)) + f for f in frames)
    bounds = sorted({0, len(stream), *(c for c in cuts if c <= len(stream))})
    s = framing.FrameSplitter()
    out = []
    for (a, b), kind in zip(zip(bounds, bounds[1:]), kinds):
        chunk = stream[a:b]
        if kind != "bytes":
            chunk = bytearray(chunk) if kind == "bytearray" else memoryview(bytearray(chunk))
        got = s.feed(chunk)
        if kind != "bytes":
            chunk[:] = b"\xee" * len(chunk)  # a caller reusing its buffer must not change what was buffered
        out += got
    assert out == frames and all(type(f) is bytes for f in out)
    assert s.buffered == 0
    s.check_eof()


@pytest.mark.parametrize("prefix,problem", [(b"\xff\xff\xff\xff", "negative"), (struct.pack(">i", 101), "exceeds")])
def test_splitter_rejects_bad_sizes_before_buffering(prefix, problem):
    s = framing.FrameSplitter(max_size=100)
    with pytest.raises(ProtocolError, match=problem):
        s.feed(prefix)


def test_default_max_is_socket_request_max_bytes():
    assert framing.DEFAULT_MAX_FRAME == 104857600
    with pytest.raises(ProtocolError, match="socket.request.max.bytes"):
        framing.FrameSplitter().feed(struct.pack(">i", 104857601))
    assert framing.FrameSplitter().feed(struct.pack(">i", 104857600)) == []  # allowed, waiting for data


def test_truncated_frame_at_eof():
    s = framing.FrameSplitter()
    assert s.feed(b"\x00\x00\x00\x05abc") == []
    with pytest.raises(ProtocolError, match="partial frame"):
        s.check_eof()
    s = framing.FrameSplitter()
    assert s.feed(b"\x00\x00\x00\x05") == [] and s.buffered == 4  # the size prefix alone
    with pytest.raises(ProtocolError, match="4 bytes of a partial frame"):
        s.check_eof()


# ---- headers -----------------------------------------------------------------------------------------

def test_request_header_versions_follow_flexibility():
    req = m.MetadataRequest(topics=None)
    v8 = J(framing.encode_request(req, 8, 7, "cli"))
    # size | key 3 | version 8 | correlation 7 | client id "cli" (int16 length) | body
    assert v8[4:17] == bytes.fromhex("0003 0008 00000007 0003 636c69")
    v9 = J(framing.encode_request(req, 9, 7, "cli"))
    # header v2: same fields, ClientId stays int16-length, then an empty tag section
    assert v9[4:18] == bytes.fromhex("0003 0009 00000007 0003 636c69 00")
    r = framing.decode_request(v9[4:])
    assert r.header.client_id == "cli" and r.version == 9 and r.body.topics is None


def test_response_header_versions_and_api_versions_exception():
    flex = J(framing.encode_response(m.MetadataResponse(), 9, 5))
    assert flex[4:9] == bytes.fromhex("00000005 00")  # header v1: correlation id + tags
    classic = J(framing.encode_response(m.MetadataResponse(), 8, 5))
    assert classic[4:8] == bytes.fromhex("00000005") and len(classic) == len(codec.encode(m.MetadataResponse(), 8)) + 8
    av = J(framing.encode_response(m.ApiVersionsResponse(), 3, 5))  # flexible body, but header v0
    assert av[4:8] == bytes.fromhex("00000005") and av[8:] == codec.encode(m.ApiVersionsResponse(), 3)
    assert m.api("ApiVersions").response_header_version(4) == 0


def test_unknown_api_and_version_carry_the_correlation_id():
    frame = struct.pack(">hhih", 999, 0, 42, -1)
    with pytest.raises(UnsupportedVersionError) as info:
        framing.decode_request(frame)
    assert info.value.api_key == 999 and info.value.correlation_id == 42
    frame = struct.pack(">hhih", 18, 9, 43, -1) + b"\x00" + b"\x01\x01\x00"  # ApiVersions v9 (future)
    with pytest.raises(UnsupportedVersionError) as info:
        framing.decode_request(frame)
    assert info.value.api_version == 9 and info.value.correlation_id == 43


def test_topic_ids_in_metadata_and_fetch():
    R = m.MetadataResponse
    meta = R(topics=[R.MetadataResponseTopic(name="__cluster_metadata", topic_id=METADATA_TOPIC_ID)])
    assert codec.decode(R, codec.encode(meta, 10), 10).topics[0].topic_id == METADATA_TOPIC_ID
    assert codec.decode(R, codec.encode(meta, 9), 9).topics[0].topic_id != METADATA_TOPIC_ID  # v9: no ids
    F = m.FetchRequest
    fetch = F(topics=[F.FetchTopic(topic="x", topic_id=METADATA_TOPIC_ID, partitions=[F.FetchPartition(partition=0)])])
    back = codec.decode(F, codec.encode(fetch, 13), 13).topics[0]
    assert back.topic_id == METADATA_TOPIC_ID and back.topic == ""  # v13 addresses topics by id only
    assert codec.decode(F, codec.encode(fetch, 12), 12).topics[0].topic == "x"


# ---- outbound correlation ids ------------------------------------------------------------------------

def _respond(cid, body, version):
    return J(framing.encode_response(body, version, cid))[4:]


def test_outbound_requests_match_responses_by_correlation_id():
    out = framing.OutboundRequests(client_id="node-1")
    c1, chunks1 = out.encode(m.VoteRequest(), 1, context="vote")
    c2, _ = out.encode(m.FetchRequest(), 13, context="fetch")
    assert (c1, c2) == (0, 1) and len(out) == 2
    req = framing.decode_request(J(chunks1)[4:])
    assert req.header.correlation_id == 0 and req.header.client_id == "node-1"
    pending, body = out.on_response(_respond(1, m.FetchResponse(session_id=9), 13))
    assert pending.context == "fetch" and pending.version == 13 and body.session_id == 9
    with pytest.raises(ProtocolError, match="no pending"):
        out.on_response(_respond(1, m.FetchResponse(), 13))
    assert [p.correlation_id for p in out.fail_all()] == [0] and len(out) == 0


def test_correlation_ids_wrap():
    out = framing.OutboundRequests(first_correlation_id=0x7FFFFFFF)
    assert out.encode(m.ApiVersionsRequest(), 0)[0] == 0x7FFFFFFF
    assert out.encode(m.ApiVersionsRequest(), 0)[0] == 0


def test_api_versions_error_response_decodes_as_v0_whatever_was_asked():
    out = framing.OutboundRequests()
    cid, _ = out.encode(m.ApiVersionsRequest(client_software_name="k", client_software_version="1"), 4)
    reply = J(encode_api_versions_response({18: (0, 3)}, 4, cid))[4:]
    pending, body = out.on_response(reply)
    assert body.error_code == ec.UNSUPPORTED_VERSION and body.api_keys[0].max_version == 3


def test_api_versions_invalid_request_decodes_at_the_version_asked():
    """Only UNSUPPORTED_VERSION comes in the v0 layout; Kafka 4.4 answers INVALID_REQUEST at the request's version
    (seen on the wire: error 42, an empty compact array, throttle 0, no tags)."""
    out = framing.OutboundRequests()
    cid, _ = out.encode(m.ApiVersionsRequest(client_software_name="-bad", client_software_version="1"), 3)
    reply = bytes.fromhex("%08x" % cid) + bytes.fromhex("002a010000000000")
    _, body = out.on_response(reply)
    assert body.error_code == ec.INVALID_REQUEST and body.api_keys == [] and body.throttle_time_ms == 0


# ---- ApiVersions builder -------------------------------------------------------------------------------

REGISTERED = {18: (0, 4), 3: (0, 12), 0: (3, 11), 1: (4, 17), 52: (0, 2)}


def test_api_versions_lists_exactly_the_registered_handlers_with_produce_from_zero():
    body, version = api_versions_response(REGISTERED, 3)
    assert version == 3 and body.error_code == 0
    assert [(k.api_key, k.min_version, k.max_version) for k in body.api_keys] == [
        (0, 0, 11), (1, 4, 17), (3, 0, 12), (18, 0, 4), (52, 0, 2)]
    assert advertised_ranges({53: (0, 1)}) == {53: (0, 1)}  # never the schema list


def test_kip_511_fallback_is_a_v0_body_with_error_35_listing_api_versions_own_range():
    """Kafka 4.4 lists ApiVersions' range only beside UNSUPPORTED_VERSION (conformance:
    ApiVersions-v4-unknown-version)."""
    wire = J(encode_api_versions_response(REGISTERED, 7, correlation_id=9))
    # size | correlation id 9 (header v0) | error 35 | int32 count 1 | (key, min, max) — v0 layout
    assert wire[4:8] == bytes.fromhex("00000009")
    assert wire[8:10] == bytes.fromhex("0023")
    assert wire[10:14] == bytes.fromhex("00000001")
    assert wire[14:20] == bytes.fromhex("0012 0000 0004")  # ApiVersions 0-4
    assert len(wire) == 4 + 4 + 2 + 4 + 6
    body = codec.decode(m.ApiVersionsResponse, wire[8:], 0)
    assert body.error_code == 35 and len(body.api_keys) == 1


def test_kip_511_fallback_is_readable_by_kafka_python():
    from kafka.protocol.metadata import ApiVersionsResponse as Theirs

    wire = J(encode_api_versions_response(REGISTERED, 5, correlation_id=1))
    theirs = Theirs.decode(wire[8:], version=4)  # kafka-python sent v4; it reads any error body as v0
    assert theirs.error_code == 35 and [tuple(k) for k in theirs.api_keys] == [(18, 0, 4)]


def test_api_versions_without_its_own_handler_still_answers_with_the_fallback():
    body, version = api_versions_response({3: (0, 12)}, 0)
    assert body.error_code == 35 and version == 0


def test_bytes_after_a_request_body_are_ignored_as_kafka_does_but_a_short_body_is_not():
    """librdkafka 2.x's all-topics Metadata v12: the topic array as a 4-byte 0 (librdkafka #5049). Kafka decodes the
    first byte as the null compact array, the next ones as the two flags and the tag buffer, and ignores the rest."""
    header = struct.pack(">hhih", 3, 12, 77, 7) + b"rdkafka" + b"\x00"  # Metadata v12, request header v2
    sent = header + b"\x00\x00\x00\x00" + b"\x00\x00\x00"
    req = framing.decode_request(sent)
    assert (req.api.name, req.version, req.header.correlation_id) == ("Metadata", 12, 77)
    assert req.body.topics is None
    with pytest.raises(ProtocolError, match="3 unexpected trailing bytes"):
        framing.decode_request(sent, exact=True)
    with pytest.raises(ProtocolError):
        framing.decode_request(header + b"\x02")  # one topic announced, none there


def test_api_versions_carries_features_from_v3_only():
    from kraftwire.protocol.api_versions import Features

    features = Features({"metadata.version": (7, 21)}, {"metadata.version": 21}, 42)
    body, version = api_versions_response({18: (0, 4)}, 3, features=features)
    decoded = codec.decode(m.ApiVersionsResponse, codec.encode(body, version), version)
    assert [(f.name, f.min_version, f.max_version) for f in decoded.supported_features] == [("metadata.version", 7, 21)]
    assert [(f.name, f.min_version_level, f.max_version_level) for f in decoded.finalized_features] == [
        ("metadata.version", 21, 21)]
    assert decoded.finalized_features_epoch == 42
    old, v2 = api_versions_response({18: (0, 4)}, 2, features=features)
    assert v2 == 2 and not old.supported_features and old.finalized_features_epoch == -1


@pytest.mark.parametrize("name, version, valid", [
    ("librdkafka", "2.10.0", True), ("a", "1", True), ("apache-kafka-java", "4.4.0-SNAPSHOT", True),
    ("", "1", False), ("client", "", False), ("-bad", "1", False), ("bad-", "1", False), ("a b", "1", False),
    ("client", "1.0 beta", False), ("client", "1_0", False)])
def test_kip_511_software_name_and_version_are_checked_from_v3(name, version, valid):
    """Kafka's ApiVersionsRequest.isValid (core ApiVersionsRequestTest.testApiVersionsRequestValidationV3)."""
    request = m.ApiVersionsRequest(client_software_name=name, client_software_version=version)
    body, at = api_versions_response(REGISTERED, 3, request=request)
    assert at == 3
    if valid:
        assert body.error_code == 0 and len(body.api_keys) == len(REGISTERED)
    else:
        assert body.error_code == ec.INVALID_REQUEST and body.api_keys == []
    body, _ = api_versions_response(REGISTERED, 2, request=request)
    assert body.error_code == 0  # no such fields below v3


def test_answer_frame_reads_the_request_body_for_the_check():
    bad = J(framing.encode_request(m.ApiVersionsRequest(client_software_name="!", client_software_version="1"), 3,
                                   5, "c"))[4:]
    body = codec.decode(m.ApiVersionsResponse, J(answer_frame(bad, REGISTERED))[8:], 3)
    assert body.error_code == ec.INVALID_REQUEST
    unsupported = J(framing.encode_request(m.ApiVersionsRequest(), 4, 6, "c"))[4:]
    body = codec.decode(m.ApiVersionsResponse, J(answer_frame(unsupported, {18: (0, 3)}))[8:], 0)
    assert body.error_code == ec.UNSUPPORTED_VERSION


def test_supported_features_starting_at_zero_appear_from_v4_only():
    """KAFKA-17492 (Kafka 4.4 at ApiVersions v3 lists metadata.version but not kraft.version, at v4 both)."""
    features = Features(supported={"metadata.version": (7, 21), "kraft.version": (0, 1)},
                        finalized={"metadata.version": 21}, epoch=5)
    names = {v: [f.name for f in api_versions_response(REGISTERED, v, features=features)[0].supported_features]
             for v in (3, 4)}
    assert names == {3: ["metadata.version"], 4: ["kraft.version", "metadata.version"]}


def test_finalized_features_are_listed_in_kafkas_order():
    """Kafka 4.4 at metadata.version 4.4-IV0 (transaction.version 2, group.version 1) lists group.version,
    transaction.version, metadata.version (seen by the conformance run's ApiVersions v3/v4 scenarios): a HashMap copy
    of the other features with metadata.version put last, not the names sorted."""
    features = Features(supported={}, finalized={"metadata.version": 31, "transaction.version": 2,
                                                 "group.version": 1}, epoch=5)
    body = api_versions_response(REGISTERED, 4, features=features)[0]
    assert [f.name for f in body.finalized_features] == ["group.version", "transaction.version", "metadata.version"]
    assert [f.max_version_level for f in body.finalized_features] == [1, 2, 31]


def test_an_api_versions_error_other_than_unsupported_version_decodes_at_the_version_asked():
    """A malformed ApiVersions v1..v4 gets INVALID_REQUEST at its own version (throttle time and all), which a
    client must read at that version, falling back to v0 only when that fails (Kafka's ApiVersionsResponse.parse).
    Found by the fuzzer (tests/fuzz): reading every error answer as v0 called Kafka's own answer malformed."""
    for version in range(1, 5):
        reply = J(framing.encode_response(m.ApiVersionsResponse(error_code=ec.INVALID_REQUEST, throttle_time_ms=7),
                                          version, 9))[4:]
        cid, body = framing.decode_response(reply, 18, version)
        assert (cid, body.error_code, body.throttle_time_ms) == (9, ec.INVALID_REQUEST, 7)


def test_a_header_may_name_a_version_the_body_is_not_encoded_at():
    """A client newer than the server names an ApiVersions version the server does not know over a body it can
    parse (the conformance run's ApiVersions-v4-unknown-version): the header says 99, the server answers
    UNSUPPORTED_VERSION with its own ApiVersions range, in the v0 layout."""
    frame = J(framing.encode_request(m.ApiVersionsRequest(client_software_name="c", client_software_version="1"), 4,
                                     6, "c", header_version=99))[4:]
    assert struct.unpack_from(">hh", frame, 0) == (18, 99)
    body = codec.decode(m.ApiVersionsResponse, J(answer_frame(frame, REGISTERED))[8:], 0)
    assert body.error_code == ec.UNSUPPORTED_VERSION and [(k.api_key, k.min_version, k.max_version)
                                                          for k in body.api_keys] == [(18, 0, 4)]
