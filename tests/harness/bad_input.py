"""Requests no well-behaved client sends, and what a node makes of them (issue #37): the same scenarios run against
a kraftwire node (``tests/server/test_bad_input_node.py``) and against Apache Kafka
(``tests/kafka/test_bad_input_oracle.py``). Each scenario takes a node's PLAINTEXT port and returns a plain,
comparable outcome: :data:`CLOSED` where the node closed the connection instead of answering, else the parts of the
answer that matter. A node that neither answers nor closes within the timeout fails the scenario (a stall).

Strings longer than 32,767 bytes cannot be written by kraftwire's encoder (nor Kafka's), so a request carrying one is
encoded with a placeholder that ``with_long_string`` then swaps for the long string, length included."""

from __future__ import annotations

import socket
import struct
import time

from kraftwire.protocol import framing, messages as w
from kraftwire.protocol import wire_types as wt
from kraftwire.records import RecordBatchBuilder

CLOSED = "closed"
MAX = wt.MAX_STRING_BYTES
#: node properties both nodes need for these scenarios (groups form at once)
PROPS = "group.initial.rebalance.delay.ms=0\n"
TIMEOUT_S = 20.0
CT, P, LO = w.CreateTopicsRequest, w.ProduceRequest, w.ListOffsetsRequest
OC, IP, FC = w.OffsetCommitRequest, w.InitProducerIdRequest, w.FindCoordinatorRequest
LG, DG, JG = w.ListGroupsRequest, w.DescribeGroupsRequest, w.JoinGroupRequest
IAC, AC = w.IncrementalAlterConfigsRequest, w.AlterConfigsRequest
#: coordinator errors a request meets while ``__consumer_offsets`` / ``__transaction_state`` are being created
NOT_YET = {14, 15, 16}
TOPIC_ALREADY_EXISTS = 36


# ---------------------------------------------------------------------------------------------- frames and answers
def frame(body, version: int, client_id: str = "bad-input") -> bytes:
    return b"".join(framing.encode_request(body, version, 7, client_id))


def with_long_string(data: bytes, placeholder: str, size: int) -> bytes:
    """``data`` (a framed request of a flexible version) with the compact string ``placeholder`` replaced by ``size``
    bytes of ``g`` (a classic string's int16 length cannot say more than 32,767)."""
    old = wt.uvarint_bytes(len(placeholder) + 1) + placeholder.encode()
    assert data.count(old) == 1, f"{placeholder!r} is not in the frame exactly once"
    body = data[4:].replace(old, wt.uvarint_bytes(size + 1) + b"g" * size)
    return struct.pack(">i", len(body)) + body


def exchange(port: int, data: bytes, response_cls, version: int):
    """Send one framed request; its decoded answer, or CLOSED when the node closed the connection instead."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S) as s:
        s.sendall(data)
        got = b""
        while len(got) < 4 or len(got) < 4 + struct.unpack_from(">i", got)[0]:
            try:
                chunk = s.recv(1 << 20)
            except ConnectionResetError:
                chunk = b""
            except socket.timeout:
                raise AssertionError(f"no answer and no close within {TIMEOUT_S} s: the node stalled") from None
            if not chunk:
                assert not got, f"the connection closed in the middle of an answer ({len(got)} bytes)"
                return CLOSED
            got += chunk
    return framing.decode_response(got[4:], response_cls.API_KEY, version)[1]


def ask(port: int, body, version: int, client_id: str = "bad-input"):
    return exchange(port, frame(body, version, client_id), w.api(body.API_KEY).response, version)


def ask_long(port: int, body, version: int, placeholder: str, size: int):
    """``body`` sent at a flexible ``version`` with its string ``placeholder`` made ``size`` bytes long."""
    assert type(body).is_flexible(version)
    return exchange(port, with_long_string(frame(body, version), placeholder, size), w.api(body.API_KEY).response,
                    version)


def alive(port: int) -> bool:
    """The node still answers (ListGroups v0)."""
    return ask(port, LG(states_filter=[], types_filter=[]), 0) is not CLOSED


def coordinator_ready(port: int, key_type: int, key: str) -> None:
    """FindCoordinator for ``key`` (0: a group, 1: a transactional id) until it names one: the first look creates
    the coordinator's internal topic."""
    deadline = time.monotonic() + 60
    while ask(port, FC(key="", key_type=key_type, coordinator_keys=[key]), 4).coordinators[0].error_code:
        assert time.monotonic() < deadline, f"no coordinator for {key[:20]!r} after 60 s"
        time.sleep(0.3)


def until_coordinated(call, error_of):
    """``call()`` again while its answer is a coordinator error (the coordinator is still loading)."""
    deadline = time.monotonic() + 60
    while True:
        answer = call()
        if answer is CLOSED or error_of(answer) not in NOT_YET:
            return answer
        assert time.monotonic() < deadline, "the coordinator did not load within 60 s"
        time.sleep(0.3)


def create_topic(port: int, name: str, partitions: int) -> None:
    """Topic ``name`` exists (it may already) and its partitions have leaders."""
    answer = ask(port, CT(topics=[CT.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1,
                                                    assignments=[], configs=[])],
                          timeout_ms=15000, validate_only=False), 7)
    assert answer.topics[0].error_code in (0, TOPIC_ALREADY_EXISTS), answer.topics[0].error_message
    deadline = time.monotonic() + 30
    while end_offsets(port, name, partitions) is None:  # the partitions have leaders
        assert time.monotonic() < deadline, f"{name} has no leaders after 30 s"
        time.sleep(0.2)


def end_offsets(port: int, topic: str, partitions: int) -> list[int] | None:
    """Each partition's log end offset, or None while one has no leader yet."""
    answer = ask(port, LO(replica_id=-1, isolation_level=0, topics=[LO.ListOffsetsTopic(name=topic, partitions=[
        LO.ListOffsetsPartition(partition_index=i, timestamp=-1, current_leader_epoch=-1)
        for i in range(partitions)])]), 7)
    parts = sorted(answer.topics[0].partitions, key=lambda p: p.partition_index)
    return None if any(p.error_code for p in parts) else [p.offset for p in parts]


# ---------------------------------------------------------------------------------------------- Produce
def batch(*values: bytes, compression: str = "none") -> bytes:
    b = RecordBatchBuilder(compression=compression)
    for v in values:
        b.append(b"k", v)
    return b.build()


def _produce(port: int, topic: str, records: list, version: int = 9, acks: int = -1):
    """A Produce of ``records[i]`` to partition ``i``; per partition (error, message), or CLOSED."""
    answer = ask(port, P(transactional_id=None, acks=acks, timeout_ms=5000, topic_data=[P.TopicProduceData(
        name=topic, partition_data=[P.PartitionProduceData(index=i, records=r) for i, r in enumerate(records)])]),
        version)
    if answer is CLOSED:
        return CLOSED
    return sorted((p.index, p.error_code, p.error_message) for p in answer.responses[0].partition_responses)


def produce_shapes(port: int) -> dict:
    """Kafka's ProduceRequest.validateRecords (one magic-2 batch per partition, no zstd below v7) and its look at
    every first batch: partition 0 always gets one good batch, partition 1 the case; then what each log holds."""
    topic = "shapes"
    create_topic(port, topic, 2)
    one = batch(b"a")
    magic = one[:16] + b"\x01" + one[17:]
    bad_magic = one[:16] + b"\x05" + one[17:]
    tiny = struct.pack(">qi", 0, 5) + bytes(5)
    out = {
        "two batches v3": _produce(port, topic, [one, one + batch(b"b", b"c")], version=3),
        "two batches v9": _produce(port, topic, [one, one + one]),
        "two batches v11": _produce(port, topic, [one, batch(b"x", compression="gzip") + one], version=11),
        "no batch": _produce(port, topic, [one, b""]),
        "magic 1": _produce(port, topic, [one, magic]),
        "zstd v6": _produce(port, topic, [one, batch(b"z", compression="zstd")], version=6),
        "zstd v7": _produce(port, topic, [one, batch(b"z", compression="zstd")], version=7),
        "a second batch too small": _produce(port, topic, [one, one + tiny]),
        "a second batch of magic 7": _produce(port, topic, [one, one + one[:16] + b"\x07" + one[17:]]),
        # a first batch the record iterator refuses fails every partition, with the iterator's text
        "a first batch of magic 5": _produce(port, topic, [one, bad_magic]),
        "a first batch too small": _produce(port, topic, [one, tiny]),
        "acks=0, a first batch of magic 5": _produce(port, topic, [one, bad_magic], acks=0),
    }
    out["end offsets"] = end_offsets(port, topic, 2)
    return out


# ---------------------------------------------------------------------------------------------- long strings
def _commit(group: str, instance: str | None = None):
    return OC(group_id=group, generation_id_or_member_epoch=-1, member_id="", group_instance_id=instance,
              retention_time_ms=-1, topics=[OC.OffsetCommitRequestTopic(name="ids", partitions=[
                  OC.OffsetCommitRequestPartition(partition_index=0, committed_offset=1, committed_leader_epoch=-1,
                                                  committed_metadata="")])])


def _init_pid(tid: str):
    return IP(transactional_id=tid, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1)


def _commit_error(answer) -> int:
    return answer.topics[0].partitions[0].error_code


def _groups(answer):
    return CLOSED if answer is CLOSED else (answer.error_code, sorted((len(g.group_id), g.group_id[:1])
                                                                      for g in answer.groups))


def oversized_strings(port: int) -> dict:
    """Strings over 32,767 bytes (compact ones: a classic int16 length cannot say more) and an array counting more
    items than bytes remain: Kafka's parser refuses the request and closes the connection. Nothing is kept: no group
    appears, and ListGroups keeps answering at every version."""
    create_topic(port, "ids", 1)
    coordinator_ready(port, 0, "warm-up")
    coordinator_ready(port, 1, "warm-up")
    until_coordinated(lambda: ask(port, _commit("warm-up"), 8), _commit_error)
    md = frame(w.MetadataRequest(topics=[], allow_auto_topic_creation=False,
                                 include_topic_authorized_operations=False), 12)
    topics = 4 + framing.decode_request_header(md[4:])[1]  # the body starts with the topics' compact count
    huge_count = md[:topics] + wt.uvarint_bytes(100_001) + md[topics + 1:]
    out = {f"OffsetCommit v8, a group id of {n} bytes": ask_long(port, _commit("PLACEHOLDER"), 8, "PLACEHOLDER", n)
           for n in (MAX + 1, 40_000, 65_000)}
    out["OffsetCommit v8, a group instance id of 40000 bytes"] = ask_long(
        port, _commit("g", "PLACEHOLDER"), 8, "PLACEHOLDER", 40_000)
    out.update({f"InitProducerId v{v}, a transactional id of {n} bytes": ask_long(
        port, _init_pid("PLACEHOLDER"), v, "PLACEHOLDER", n) for v in (2, 4) for n in (MAX + 1, 40_000)})
    out["Metadata v12, 100000 topics in 3 bytes"] = exchange(port, huge_count, w.MetadataResponse, 12)
    # a negative length other than -1 is null to Kafka's readers: an idempotent producer's InitProducerId
    classic = frame(_init_pid("PLACEHOLDER"), 1)
    old = struct.pack(">h", len("PLACEHOLDER")) + b"PLACEHOLDER"
    for n in (-2, -32768):
        body = classic[4:].replace(old, struct.pack(">h", n))
        data = struct.pack(">i", len(body)) + body
        # Kafka answers COORDINATOR_LOAD_IN_PROGRESS until its broker holds a block of producer ids
        answer = until_coordinated(lambda: exchange(port, data, w.InitProducerIdResponse, 1), lambda a: a.error_code)
        out[f"InitProducerId v1, a transactional id of length {n}"] = CLOSED if answer is CLOSED else (
            answer.error_code, answer.producer_id >= 0)
    out["ListGroups"] = [_groups(ask(port, LG(states_filter=[], types_filter=[]), v)) for v in range(6)]
    return out


def max_size_ids(port: int) -> dict:
    """Ids of exactly 32,767 bytes are accepted, kept and written back: a group committed with one is listed by
    ListGroups and described by DescribeGroups at every version; InitProducerId takes such a transactional id."""
    create_topic(port, "ids", 1)
    group = "g" * MAX
    coordinator_ready(port, 0, group)
    coordinator_ready(port, 1, "t" * MAX)
    out = {"OffsetCommit v8": until_coordinated(lambda: ask(port, _commit(group), 8), _commit_error)}
    out["OffsetCommit v8"] = _commit_error(out["OffsetCommit v8"])
    out["OffsetCommit v7"] = _commit_error(ask(port, _commit(group), 7))
    out["ListGroups"] = [_groups(ask(port, LG(states_filter=[], types_filter=[]), v)) for v in range(6)]
    described = []
    for v in range(6):
        answer = ask(port, DG(groups=[group], include_authorized_operations=False), v)
        described.append(CLOSED if answer is CLOSED else [(len(g.group_id), g.error_code, g.group_state)
                                                          for g in answer.groups])
    out["DescribeGroups"] = described
    for v in (0, 4):
        answer = until_coordinated(lambda: ask(port, _init_pid("t" * MAX), v), lambda a: a.error_code)
        out[f"InitProducerId v{v}"] = CLOSED if answer is CLOSED else answer.error_code
    return out


# ---------------------------------------------------------------------------------------------- answers too long
def _join(group: str, instance: str | None = None):
    return JG(group_id=group, session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
              group_instance_id=instance, protocol_type="consumer",
              protocols=[JG.JoinGroupRequestProtocol(name="range", metadata=b"")], reason=None)


def _results(answer, items: str):
    """(the first bytes of its name, error, message) of each item of ``answer``."""
    if answer is CLOSED:
        return CLOSED
    return [((i.name if hasattr(i, "name") else i.resource_name)[:8], i.error_code, i.error_message)
            for i in getattr(answer, items)]


def unwritable_answers(port: int) -> dict:
    """Accepted requests whose answer would hold a string over 32,767 bytes: an error message quoting a 32,767-byte
    topic name, config name or value; a member id made of a 32,767-byte client id (or group instance id) and a UUID.
    Kafka cannot write such an answer and sends the request's error answer with UNKNOWN_SERVER_ERROR instead."""
    long_name = CT(topics=[CT.CreatableTopic(name="fine", num_partitions=1, replication_factor=1, assignments=[],
                                             configs=[]),
                           CT.CreatableTopic(name="a" * MAX, num_partitions=1, replication_factor=1, assignments=[],
                                             configs=[])], timeout_ms=15000, validate_only=False)
    long_config = CT(topics=[CT.CreatableTopic(name="t2", num_partitions=1, replication_factor=1, assignments=[],
                                               configs=[CT.CreatableTopicConfig(name="x" * MAX, value="1")])],
                     timeout_ms=15000, validate_only=False)
    out = {f"CreateTopics v{v}, a long name": _results(ask(port, long_name, v), "topics") for v in (4, 7)}
    out["CreateTopics v7, a long config name"] = _results(ask(port, long_config, 7), "topics")
    create_topic(port, "configured", 1)

    def alter(key: str, value: str):
        return IAC(resources=[IAC.AlterConfigsResource(resource_type=2, resource_name="configured", configs=[
            IAC.AlterableConfig(name=key, config_operation=0, value=value)])], validate_only=False)

    out["IncrementalAlterConfigs, a long config name"] = _results(ask(port, alter("y" * MAX, "1"), 1), "responses")
    out["IncrementalAlterConfigs, a long value"] = _results(ask(port, alter("retention.ms", "z" * MAX), 1),
                                                            "responses")
    legacy = AC(resources=[AC.AlterConfigsResource(resource_type=2, resource_name="configured", configs=[
        AC.AlterableConfig(name="q" * MAX, value="1")])], validate_only=False)
    out["AlterConfigs v2, a long config name"] = _results(ask(port, legacy, 2), "responses")
    coordinator_ready(port, 0, "joined")
    coordinator_ready(port, 0, "static")
    for v in (3, 5, 7):  # v3: the member joins at once and is answered when the join completes
        answer = until_coordinated(lambda: ask(port, _join("joined"), v, client_id="c" * MAX), lambda a: a.error_code)
        out[f"JoinGroup v{v}, a long client id"] = CLOSED if answer is CLOSED else (answer.error_code,
                                                                                     answer.member_id)
    answer = until_coordinated(lambda: ask(port, _join("static", "i" * MAX), 7), lambda a: a.error_code)
    out["JoinGroup v7, a long group instance id"] = CLOSED if answer is CLOSED else (answer.error_code,
                                                                                      answer.member_id)
    for v in (0, 5):
        answer = ask(port, DG(groups=["joined", "other"], include_authorized_operations=False), v)
        out[f"DescribeGroups v{v}"] = CLOSED if answer is CLOSED else [
            (g.group_id, g.error_code, g.group_state, len(g.members)) for g in answer.groups]
    out["the node still answers"] = alive(port)
    return out
