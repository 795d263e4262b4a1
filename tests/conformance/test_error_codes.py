"""The error-code coverage of the conformance run, without nodes: which codes an answer carries, per API of each
step, the catalog's names, and the table's "not provoked" section (issue #36)."""

from __future__ import annotations

from conformance import error_catalog, table
from conformance.runner import KAFKA, KRAFTWIRE, Exchange, Outcome, Scenario, carried_error_codes

from kraftwire import error_codes as ec
from kraftwire.protocol import messages as w

PR = w.ProduceResponse
TP = PR.TopicProduceResponse


def _produced(*codes) -> PR:
    return PR(throttle_time_ms=0, responses=[TP(name="t", partition_responses=[
        PR.PartitionProduceResponse(index=i, error_code=c) for i, c in enumerate(codes)])])


def test_nested_error_codes_are_found():
    assert carried_error_codes(_produced(0, 3, 10)) == {0, 3, 10}


def test_top_level_error_codes_are_found():
    assert carried_error_codes(w.HeartbeatResponse(throttle_time_ms=0, error_code=25)) == {25}


def test_codes_are_kafkas_and_counted_per_step_api():
    outcome = Outcome(Scenario("Heartbeat", 4, "x", []))
    outcome.exchanges += [
        Exchange("Produce", None, {KAFKA: _produced(3), KRAFTWIRE: _produced(10)}),
        Exchange("Heartbeat#2", None, {KAFKA: w.HeartbeatResponse(error_code=25),
                                       KRAFTWIRE: w.HeartbeatResponse(error_code=0)})]
    assert outcome.error_codes() == {"Produce": {3}, "Heartbeat": {25}}


def test_the_catalog_names_kafka_error_codes_a_client_can_cause():
    left_out = {name for names in error_catalog.NOT_CLIENT_CAUSED.values() for name in names}
    for api, names in error_catalog.CLIENT_CAUSED.items():
        assert set(names) <= set(ec.BY_NAME), api
        assert not set(names) & left_out, api
        assert w.api(api).name == api  # raises for a name the protocol does not know
    assert left_out <= set(ec.BY_NAME)
    for api, code in error_catalog.NOT_PROVOKABLE:  # a pair marked not provokable is one the catalog lists
        assert code in error_catalog.CLIENT_CAUSED[api], (api, code)


def test_the_table_lists_codes_not_provoked():
    scenario = {"id": "s", "api": "Heartbeat", "version": 4, "name": "s", "config": "single", "status": "match",
                "differences": [], "error_codes": {"Heartbeat": ["NONE", "UNKNOWN_MEMBER_ID"]}}
    text = table.render({"kafka_version": "4.4.0", "generated": "now", "collected": 1, "metadata_version": "x",
                         "scenarios": [scenario]})
    provoked = text.split("### Error codes provoked", 1)[1].split("###", 1)[0]
    assert "| Heartbeat | NONE, UNKNOWN_MEMBER_ID |" in provoked
    missing = text.split("### Error codes not provoked", 1)[1]
    heartbeat = next(line for line in missing.splitlines() if line.startswith("| Heartbeat |"))
    assert "UNKNOWN_MEMBER_ID" not in heartbeat and "ILLEGAL_GENERATION" in heartbeat


def test_error_codes_under_other_names_are_found():
    AP = w.AddPartitionsToTxnResponse
    answer = AP(error_code=0, results_by_topic_v3_and_below=[AP.AddPartitionsToTxnTopicResult(name="t", results_by_partition=[
        AP.AddPartitionsToTxnPartitionResult(partition_index=0, partition_error_code=3)])])
    assert carried_error_codes(answer) == {0, 3}


def test_the_table_counts_pairs_marked_not_provokable_apart():
    scenario = {"id": "s", "api": "Fetch", "version": 4, "name": "s", "config": "single", "status": "match",
                "differences": [], "error_codes": {"Fetch": ["NONE"]}}
    text = table.render({"kafka_version": "4.4.0", "generated": "now", "collected": 1, "metadata_version": "x",
                         "scenarios": [scenario]})
    missing = text.split("### Error codes not provoked", 1)[1]
    fetch = next(line for line in missing.splitlines() if line.startswith("| Fetch |"))
    assert "UNSUPPORTED_COMPRESSION_TYPE" not in fetch and "OFFSET_OUT_OF_RANGE" in fetch
    assert "| Fetch | UNSUPPORTED_COMPRESSION_TYPE |" in missing  # listed with its reason instead
    caused = sum(len(names) for names in error_catalog.CLIENT_CAUSED.values())
    provokable = caused - len(error_catalog.NOT_PROVOKABLE)
    assert f"0 / {provokable} / {caused} (provoked / provokable / total)" in missing
