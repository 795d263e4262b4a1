"""The error-code table is well-formed and carries Kafka's well-known values."""

from __future__ import annotations

from kraftwire import error_codes as ec


def test_table_is_sorted_unique_and_complete_up_to_136():
    codes = [e.code for e in ec.TABLE]
    assert codes == sorted(codes) and len(set(codes)) == len(codes)
    assert codes == list(range(-1, 137))
    assert len({e.name for e in ec.TABLE}) == len(ec.TABLE)


def test_well_known_codes():
    expected = {
        "NONE": 0, "OFFSET_OUT_OF_RANGE": 1, "NOT_LEADER_OR_FOLLOWER": 6, "UNSUPPORTED_VERSION": 35,
        "INVALID_REQUEST": 42, "FENCED_LEADER_EPOCH": 74, "UNKNOWN_LEADER_EPOCH": 75, "SNAPSHOT_NOT_FOUND": 98,
        "POSITION_OUT_OF_RANGE": 99, "UNKNOWN_TOPIC_ID": 100, "INCONSISTENT_CLUSTER_ID": 104,
        "INVALID_VOTER_KEY": 125, "DUPLICATE_VOTER": 126, "VOTER_NOT_FOUND": 127, "INCONSISTENT_VOTER_SET": 94,
        "BROKER_NOT_AVAILABLE": 8, "COORDINATOR_NOT_AVAILABLE": 15, "UNKNOWN_SERVER_ERROR": -1,
    }
    for name, code in expected.items():
        assert getattr(ec, name) == code and ec.BY_NAME[name].code == code and ec.name_of(code) == name


def test_retriable_flags_and_unknown_codes():
    assert ec.is_retriable(ec.NOT_LEADER_OR_FOLLOWER) and ec.is_retriable(ec.UNKNOWN_LEADER_EPOCH)
    assert not ec.is_retriable(ec.UNSUPPORTED_VERSION) and not ec.is_retriable(ec.INVALID_REQUEST)
    assert not ec.is_retriable(4242) and ec.name_of(4242) == "UNKNOWN(4242)"


def test_every_module_constant_matches_the_table():
    for name in dir(ec):
        if name.isupper() and isinstance(getattr(ec, name), int):
            assert ec.BY_NAME[name].code == getattr(ec, name), name
