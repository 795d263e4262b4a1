"""The conformance runner's rules for the data and coordinator scenarios, without nodes: values learned from one
side's answers and sent back (:class:`Learned`, :class:`Built`)."""

from __future__ import annotations

from conformance.runner import Built, Learned, instantiate, learn_values

from kraftwire.protocol import messages as w

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
