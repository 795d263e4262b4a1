"""The records payload is never copied: decode yields a view of the frame, encode hands back the caller's object."""

from __future__ import annotations

from kraftwire.protocol import codec, framing, messages as m

RECORDS = bytes(range(256)) * 4096  # 1 MiB


def _produce_frame(version):
    P = m.ProduceRequest
    body = P(acks=-1, timeout_ms=1000, topic_data=[P.TopicProduceData(name="t", partition_data=[
        P.PartitionProduceData(index=0, records=RECORDS)])])
    return b"".join(framing.encode_request(body, version, 1, "c"))[4:]


def test_decoded_records_are_a_view_of_the_frame():
    for version in (3, 9, 11):
        frame = _produce_frame(version)
        req = framing.decode_request(frame)
        view = req.body.topic_data[0].partition_data[0].records
        assert type(view) is memoryview and view.obj is frame and view == RECORDS
        # a memoryview of a bytearray frame works the same way
        ba = bytearray(frame)
        view2 = framing.decode_request(memoryview(ba)).body.topic_data[0].partition_data[0].records
        assert view2.obj is ba


def test_encoded_records_are_the_callers_object():
    F = m.FetchResponse
    for records in (RECORDS, memoryview(RECORDS)[10:]):
        resp = F(responses=[F.FetchableTopicResponse(topic="t", partitions=[F.PartitionData(records=records)])])
        for version in (4, 12, 16):
            chunks = framing.encode_response(resp, version, 1)
            assert sum(1 for c in chunks if c is records) == 1
            assert sum(len(c) for c in chunks) < len(records) + 200


def test_bytes_fields_decode_to_bytes_and_records_to_views():
    J = m.JoinGroupRequest
    req = J(group_id="g", member_id="", protocol_type="consumer",
            protocols=[J.JoinGroupRequestProtocol(name="range", metadata=b"\x00\x01")])
    back = codec.decode(J, codec.encode(req, 6), 6)
    assert type(back.protocols[0].metadata) is bytes


def test_framed_output_is_few_chunks_with_records_by_reference():
    F = m.FetchResponse
    resp = F(responses=[F.FetchableTopicResponse(topic="t", partitions=[
        F.PartitionData(partition_index=i, records=RECORDS if i == 1 else b"small") for i in range(3)])])
    chunks = framing.encode_response(resp, 12, 1)
    assert len(chunks) == 3 and chunks[1] is RECORDS  # [size+header+fields, records, trailing fields]
    assert b"".join(chunks) == b"".join(framing.frame(codec.encode_chunks(m.ResponseHeader(correlation_id=1), 1)
                                                      + codec.encode_chunks(resp, 12)))
    assert len(framing.encode_response(m.FetchResponse(), 12, 1)) == 1
