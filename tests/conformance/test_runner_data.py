"""The conformance runner's rules for the data and coordinator scenarios, without nodes: values learned from one
side's answers and sent back (:class:`Learned`, :class:`Built`), record batches compared decoded, requests answered
in the background."""

from __future__ import annotations

import asyncio

from conformance.runner import (Built, Comparison, Learned, Mapping, Scenario, Step, instantiate, learn_values,
                                run_scenario, same_but_clocks, scoped)

from kraftwire.protocol import messages as w
from kraftwire.records import RecordBatchBuilder

JG = w.JoinGroupResponse
HB = w.HeartbeatRequest


def _joined(member: str, *others: str) -> JG:
    return JG(error_code=0, generation_id=1, member_id=member, leader=member,
              members=[JG.JoinGroupResponseMember(member_id=m) for m in (member, *others)])


def test_a_learned_value_is_the_newest_answers_first_one_or_a_given_steps():
    learned: dict = {}
    learn_values(_joined("m1", "m0"), "JoinGroup", learned)
    learn_values(_joined("m2"), "JoinGroup#2", learned)
    request = HB(group_id="{ns}.g", generation_id=Learned("generation_id"), member_id=Learned("member_id"))
    assert instantiate(request, "ns", {}, learned).member_id == "m2"
    request = HB(group_id="{ns}.g", member_id=Learned("member_id", at="JoinGroup"))
    sent = instantiate(request, "ns", {}, learned)
    assert (sent.group_id, sent.member_id) == ("ns.g", "m1")


def test_sentinels_are_not_learned_and_nothing_learned_is_the_fields_default():
    learned: dict = {}
    learn_values(_joined("m1"), "JoinGroup", learned)
    learn_values(JG(error_code=25, generation_id=-1, member_id=""), "JoinGroup#2", learned)
    assert learned[(None, "member_id")] == "m1" and learned[(None, "generation_id")] == 1
    assert ("JoinGroup#2", "member_id") not in learned
    sent = instantiate(HB(member_id=Learned("member_id", at="SyncGroup")), "ns", {}, learned)
    assert sent.member_id == ""
    assert instantiate(HB(member_id=Learned("member_id", at="SyncGroup", default="x")), "ns", {}, learned) \
        .member_id == "x"


def test_built_values_are_made_per_side_from_resolved_arguments():
    def tag(name, member):
        return f"{name}/{member}"

    request = HB(group_id=Built(tag, name="{ns}.g", member=Learned("member_id")))
    sides = [{(None, "member_id"): "kafka-1"}, {(None, "member_id"): "ours-7"}]
    assert [instantiate(request, "ns", {}, learned).group_id for learned in sides] == ["ns.g/kafka-1", "ns.g/ours-7"]


FR = w.FetchResponse


def _fetched(records: bytes) -> FR:
    return FR(responses=[FR.FetchableTopicResponse(topic="ns.a", partitions=[
        FR.PartitionData(partition_index=0, records=records)])])


def _batch(*, producer_id=-1, timestamp=1000, values=(b"v0", b"v1"), base_offset=0) -> bytes:
    builder = RecordBatchBuilder(base_offset=base_offset, producer_id=producer_id, producer_epoch=0,
                                 base_sequence=0 if producer_id >= 0 else -1)
    for i, value in enumerate(values):
        builder.append(b"k%d" % i, value, timestamp=timestamp + i)
    return builder.build()


def _compare_fetch(kafka: bytes, ours: bytes, mapping=None):
    return [(d.path, d.kafka, d.kraftwire) for d in
            Comparison(mapping or Mapping(), "ns", 12).run("Fetch", _fetched(kafka), _fetched(ours))]


def test_batches_compare_decoded_producer_ids_mapped_and_times_as_times():
    mapping = Mapping()
    assert _compare_fetch(_batch(producer_id=0), _batch(producer_id=1000, timestamp=5000), mapping) == []
    # the pairing holds across answers: Kafka's producer 0 must stay kraftwire's 1000
    diffs = _compare_fetch(_batch(producer_id=0), _batch(producer_id=1001), mapping)
    assert [d[0] for d in diffs] == ["Fetch.responses[{ns}.a].partitions[0].records[batch 0].producer_id"]


def test_records_differences_name_the_batch_and_record():
    diffs = _compare_fetch(_batch(values=(b"v0", b"v1")), _batch(values=(b"v0", b"other")))
    assert diffs == [("Fetch.responses[{ns}.a].partitions[0].records[batch 0][record 1].value", "b'v1'", "b'other'")]
    diffs = _compare_fetch(_batch(), _batch(base_offset=3))
    assert {d[0].rsplit(".", 1)[1] for d in diffs} == {"base_offset", "offset"}


def test_batch_counts_and_partial_batches_are_compared():
    two = _batch() + _batch(base_offset=2)
    assert [d[0] for d in _compare_fetch(two, _batch())] == ["Fetch.responses[{ns}.a].partitions[0].records.<batches>"]
    cut = two[:len(two) - 5]
    assert _compare_fetch(cut, cut) == []
    assert _compare_fetch(cut, two[:len(two) - 6]) == [
        ("Fetch.responses[{ns}.a].partitions[0].records.<partial batch bytes>", str(len(two) // 2 - 5),
         str(len(two) // 2 - 6))]


def test_undecodable_records_are_a_difference():
    broken = bytearray(_batch())
    broken[-1] ^= 0xFF  # the CRC no longer holds
    diffs = _compare_fetch(_batch(), bytes(broken))
    assert len(diffs) == 1 and "undecodable" in diffs[0][2]


def test_scope_keeps_the_scenarios_own_groups_and_transactional_ids():
    LG, LT = w.ListGroupsResponse, w.ListTransactionsResponse
    groups = scoped(LG(groups=[LG.ListedGroup(group_id="ns.g"), LG.ListedGroup(group_id="other.g")]), "ns")
    assert [g.group_id for g in groups.groups] == ["ns.g"]
    txns = scoped(LT(transaction_states=[LT.TransactionState(transactional_id="other.t"),
                                         LT.TransactionState(transactional_id="ns.t")]), "ns")
    assert [t.transactional_id for t in txns.transaction_states] == ["ns.t"]


class _FakePair:
    """Both "nodes" answer at once, but a JoinGroup only after the side has seen a LeaveGroup (a join that waits for
    the group's other member), with a member id of its own side."""

    machine = {side: {} for side in ("kafka", "kraftwire")}

    def __init__(self) -> None:
        self.left: dict = {}
        self.seen: list = []

    async def ask(self, side, body, version, timeout=None, **_connection):
        self.seen.append((side, type(body).__name__, getattr(body, "member_id", None)))
        event = self.left.setdefault(side, asyncio.Event())
        if isinstance(body, w.LeaveGroupRequest):
            event.set()
            return w.LeaveGroupResponse(error_code=0)
        if isinstance(body, w.JoinGroupRequest):
            await event.wait()
            return _joined(f"{side}-member")
        return w.HeartbeatResponse(error_code=0)

    def log_size(self) -> int:
        return 0

    def problems_since(self, offset):
        return []


def test_a_background_request_is_answered_later_and_a_step_naming_it_waits_for_it():
    pair = _FakePair()
    scenario = Scenario("JoinGroup", 0, "background", [
        Step(w.JoinGroupRequest(group_id="{ns}.g"), 0, background=True),
        Step(w.LeaveGroupRequest(group_id="{ns}.g", member_id="other"), 0),
        Step(HB(group_id="{ns}.g", member_id=Learned("member_id", at="JoinGroup")), 0),
    ])
    outcome = run_scenario(scenario, pair)
    assert [ex.path for ex in outcome.exchanges] == ["LeaveGroup", "JoinGroup", "Heartbeat"]
    assert outcome.differences == []  # each side's member id is paired with the other's
    assert ("kafka", "HeartbeatRequest", "kafka-member") in pair.seen
    assert ("kraftwire", "HeartbeatRequest", "kraftwire-member") in pair.seen


def test_background_requests_nobody_names_are_compared_at_the_end():
    pair = _FakePair()
    outcome = run_scenario(Scenario("JoinGroup", 0, "background", [
        Step(w.JoinGroupRequest(group_id="{ns}.g"), 0, background=True),
        Step(w.LeaveGroupRequest(group_id="{ns}.g", member_id="other"), 0),
    ]), pair)
    assert [ex.path for ex in outcome.exchanges] == ["LeaveGroup", "JoinGroup"]


def test_the_clients_address_is_compared_as_it_is():
    DG = w.DescribeGroupsResponse
    mapping = Mapping()
    mapping.bind("host", "127.0.0.1", "localhost")  # the nodes' listener hosts

    def described(client_host):
        return DG(groups=[DG.DescribedGroup(group_id="ns.g", members=[
            DG.DescribedGroupMember(member_id="m", client_host=client_host)])])

    assert Comparison(mapping, "ns", 5).run("DescribeGroups", described("/127.0.0.1"), described("/127.0.0.1")) == []
    diffs = Comparison(mapping, "ns", 5).run("DescribeGroups", described("/127.0.0.1"), described("/localhost"))
    assert [d.path for d in diffs] == ["DescribeGroups.groups[{ns}.g].members[<member#1>].client_host"]


def test_members_match_through_the_mapping_whatever_their_order():
    JR = w.JoinGroupResponse

    def members(*ids):
        return JR(members=[JR.JoinGroupResponseMember(member_id=m, metadata=b"x") for m in ids])

    mapping = Mapping()
    # two new members, each node listing them in its own order: paired by position; later their order may differ
    # (Kafka's is a hash order of the random member ids: runner.ORDER_CARRIES_NOTHING), their pairing may not
    assert Comparison(mapping, "ns", 5).run("JoinGroup", members("k1", "k2"), members("o1", "o2")) == []
    assert Comparison(mapping, "ns", 5).run("JoinGroup", members("k2", "k1"), members("o1", "o2")) == []
    diffs = Comparison(mapping, "ns", 5).run("JoinGroup", members("k1"), members("o2"))
    assert [d.path for d in diffs] == ["JoinGroup.members[<member#1>]", "JoinGroup.members[<member#2>]"]


def test_session_id_zero_means_no_session_and_is_not_mapped():
    FR0 = w.FetchResponse
    diffs = Comparison(Mapping(), "ns", 12).run("Fetch", FR0(session_id=123456), FR0(session_id=0))
    assert [d.path for d in diffs] == ["Fetch.session_id"]
    assert Comparison(Mapping(), "ns", 12).run("Fetch", FR0(session_id=123456), FR0(session_id=99)) == []


def test_clock_readings_in_texts_compare_like_times():
    text = "Timestamp 1700000000000 of message with offset 0 is out of range. The timestamp should be within [{}, {}]"
    assert same_but_clocks(text.format(1795889563816, 1795893223816), text.format(1795889563819, 1795893223819))
    assert same_but_clocks(text.format(-9223370240965151871, 1), text.format(-9223370240965151894, 1))
    assert not same_but_clocks(text.format(1795889563816, 1), text.format(1795889663817, 1))  # a minute apart
    assert not same_but_clocks(text.format(5, 1), text.format(6, 1))  # small numbers are not clocks
    assert not same_but_clocks("offset 1700000000000", "offset 1700000000001 of")


def test_free_space_is_read_by_each_node_at_its_own_moment():
    DL = w.DescribeLogDirsResponse

    def dirs(usable):
        return DL(results=[DL.DescribeLogDirsResult(log_dir="/d", total_bytes=100, usable_bytes=usable)])

    assert Comparison(Mapping(), "ns", 4).run("DescribeLogDirs", dirs(77871693824), dirs(77871677440)) == []
    assert [d.path for d in Comparison(Mapping(), "ns", 4).run("DescribeLogDirs", dirs(-1), dirs(5))] == [
        "DescribeLogDirs.results[0].usable_bytes"]
