"""The active controller's configs and producer-id decisions (``metadata.controller.configs``, ``producer_ids``;
its features: ``test_feature_control``), per request and error code, with the records replayed into the image."""

from __future__ import annotations

import uuid

import pytest

from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.metadata.controller import producer_ids
from kraftwire.metadata.controller.configs import APPEND, DELETE, SET, SUBTRACT, ConfigControl
from kraftwire.metadata.image import MetadataImage, replay_all
from kraftwire.metadata.version import DEFAULT, FEATURE_NAME, MAXIMUM, MINIMUM
from kraftwire.protocol import messages as m

IA = m.IncrementalAlterConfigsRequest
LA = m.AlterConfigsRequest


def apply(img: MetadataImage, result) -> MetadataImage:
    return replay(img, result.records)


def base(broker_mv=(MINIMUM.level, MAXIMUM.level)) -> MetadataImage:
    R = m.RegisterBrokerRecord
    return replay_all([
        m.FeatureLevelRecord(name=FEATURE_NAME, feature_level=DEFAULT.level),
        R(broker_id=1, incarnation_id=uuid.UUID(int=1), broker_epoch=7, end_points=[], rack=None,
          features=[R.BrokerFeature(name=FEATURE_NAME, min_supported_version=broker_mv[0],
                                    max_supported_version=broker_mv[1])]),
        m.TopicRecord(name="t", topic_id=uuid.UUID(int=5)),
        m.TopicRecord(name="u", topic_id=uuid.UUID(int=6)),
    ])


def inc(*resources, validate_only=False):
    return IA(resources=[IA.AlterConfigsResource(resource_type=rt, resource_name=rn, configs=[
        IA.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops]) for rt, rn, ops in resources],
        validate_only=validate_only)


def test_incremental_set_delete_append_subtract_on_a_topic():
    cc = ConfigControl()
    img = base()
    res = cc.incremental_alter(img, inc((2, "t", [("retention.ms", SET, "1000"),
                                                  ("cleanup.policy", APPEND, "compact")])))
    assert res.response.responses[0].error_code == ec.NONE
    img = apply(img, res)
    assert img.configs[(2, "t")] == {"retention.ms": "1000", "cleanup.policy": "delete,compact"}
    res = cc.incremental_alter(img, inc((2, "t", [("cleanup.policy", SUBTRACT, "delete"),
                                                  ("retention.ms", DELETE, None)])))
    img = apply(img, res)
    assert img.configs[(2, "t")] == {"cleanup.policy": "compact"}
    # setting a topic key to its current value writes nothing; validate_only writes nothing
    assert cc.incremental_alter(img, inc((2, "t", [("cleanup.policy", SET, "compact")]))).records == ()
    assert cc.incremental_alter(img, inc((2, "t", [("segment.ms", SET, "5")]), validate_only=True)).records == ()


def test_broker_keys_are_written_even_when_unchanged_and_checked_against_kafkas_table():
    cc = ConfigControl()
    img = base()
    res = cc.incremental_alter(img, inc((4, "1", [("log.retention.ms", SET, "5")]), (4, "", [("log.retention.ms",
                                                                                              SET, "6")])))
    assert [r.error_code for r in res.response.responses] == [ec.NONE, ec.NONE] and len(res.records) == 2
    img = apply(img, res)
    again = cc.incremental_alter(img, inc((4, "1", [("log.retention.ms", SET, "5")])))
    assert len(again.records) == 1
    bad = cc.incremental_alter(img, inc((4, "1", [("log.retention.ms", SET, "x")])))
    assert bad.response.responses[0].error_code == ec.INVALID_REQUEST and bad.records == ()
    assert bad.response.responses[0].error_message == \
        "Invalid value x for configuration log.retention.ms: Not a number of type LONG"


@pytest.mark.parametrize("resource, message", [
    ((4, "", [("num.io.threads", SET, "-5")]), "Invalid value -5 for configuration num.io.threads: Value must be at "
                                              "least 1"),
    ((4, "1", [("broker.id", SET, "7")]), "Cannot update these configs dynamically: [broker.id]"),
    ((4, "", [("log.retention.hours", SET, "5")]), "Cannot update these configs dynamically: [log.retention.hours]"),
    ((4, "", [("min.insync.replicas", SET, "0")]), "Invalid value 0 for configuration min.insync.replicas: Value "
                                                   "must be at least 1"),
    ((4, "", [("ssl.keystore.location", SET, "/tmp/x")]), "These security configs can be dynamically updated only "
                                                           "per-listener using the listener prefix: "
                                                           "[ssl.keystore.location]"),
    ((4, "", [("listeners", SET, "PLAINTEXT://127.0.0.1:1")]), "Cannot update these configs at default cluster "
                                                                "level, broker id must be specified: [listeners]"),
])
def test_dynamic_broker_configs_are_refused_as_kafka_4_4_refuses_them(resource, message):
    """Each refusal as a running Kafka 4.4 answered kafka-configs --alter --entity-type brokers (INVALID_REQUEST)."""
    res = ConfigControl().incremental_alter(base(), inc(resource))
    assert (res.response.responses[0].error_code, res.response.responses[0].error_message) == (
        ec.INVALID_REQUEST, message)
    assert res.records == ()


def test_per_broker_security_keys_outside_the_stores_go_bare():
    """librdkafka's 0081 sets sasl.kerberos.min.time.before.relogin on broker 1; Kafka 4.4 takes it (only the store
    keys of DynamicBrokerConfig.DYNAMIC_SECURITY_CONFIGS need a listener prefix)."""
    res = ConfigControl().incremental_alter(base(), inc((4, "1", [("sasl.kerberos.min.time.before.relogin", SET,
                                                                   "58000")])))
    assert res.response.responses[0].error_code == ec.NONE


def test_dynamic_broker_keys_kafka_takes_are_taken():
    """Unknown keys and cluster-wide keys go through, as in Kafka (foo.bar=1, log.cleaner.threads=2 accepted)."""
    res = ConfigControl().incremental_alter(base(), inc((4, "", [("foo.bar", SET, "1"), ("log.cleaner.threads", SET,
                                                                                          "2")])))
    assert res.response.responses[0].error_code == ec.NONE and len(res.records) == 2


@pytest.mark.parametrize("resource, code, needle", [
    ((2, "t", [("retention.ms", SET, "soon")]), ec.INVALID_CONFIG, "retention.ms"),
    ((2, "t", [("nope.key", SET, "1")]), ec.INVALID_CONFIG, "Unknown topic config name: nope.key"),
    ((2, "t", [("retention.ms", APPEND, "1")]), ec.INVALID_CONFIG, "Can't APPEND to key retention.ms because its type "
                                                                   "is not LIST."),
    ((2, "t", [("retention.ms", SET, None)]), ec.INVALID_REQUEST, "Null value not supported for : retention.ms"),
    ((2, "t", [("retention.ms", SET, "1"), ("retention.ms", DELETE, None)]), ec.INVALID_REQUEST,
     "Error due to duplicate config keys"),
    ((2, "missing", [("retention.ms", SET, "1")]), ec.UNKNOWN_TOPIC_OR_PARTITION, "does not exist"),
    ((2, "bad/name", [("retention.ms", SET, "1")]), ec.INVALID_TOPIC_EXCEPTION,
     "Topic name is invalid: 'bad/name' contains one or more characters"),
    ((4, "x", [("a", SET, "1")]), ec.INVALID_REQUEST, "Invalid broker name x"),
    ((4, "9", [("a", SET, "1")]), ec.BROKER_ID_NOT_REGISTERED, "No broker with id 9"),
    ((8, "1", [("kafka.server", SET, "DEBUG")]), ec.INVALID_REQUEST, "Unknown resource type 8"),
])
def test_incremental_refusals(resource, code, needle):
    """Each as Kafka 4.4 answered the same request (tests/conformance, IncrementalAlterConfigs scenarios)."""
    res = ConfigControl().incremental_alter(base(), inc(resource, (2, "u", [("segment.ms", SET, "9")])))
    first, second = res.response.responses
    assert first.error_code == code and needle in first.error_message
    assert second.error_code == ec.NONE  # the other resource still goes through
    assert [r.message.name for r in res.records] == ["segment.ms"]


def test_a_resource_named_twice_is_refused():
    res = ConfigControl().incremental_alter(base(), inc((2, "t", [("segment.ms", SET, "9")]),
                                                        (2, "t", [("segment.ms", SET, "8")])))
    assert [r.error_code for r in res.response.responses] == [ec.INVALID_REQUEST] * 2 and res.records == ()


def test_legacy_alter_replaces_the_whole_set():
    cc = ConfigControl()
    img = apply(base(), cc.incremental_alter(base(), inc((2, "t", [("retention.ms", SET, "1"),
                                                                   ("segment.ms", SET, "2")]))))
    req = LA(resources=[LA.AlterConfigsResource(resource_type=2, resource_name="t", configs=[
        LA.AlterableConfig(name="segment.ms", value="3")])], validate_only=False)
    res = cc.legacy_alter(img, req)
    assert res.response.responses[0].error_code == ec.NONE
    assert apply(img, res).configs[(2, "t")] == {"segment.ms": "3"}


def test_producer_id_blocks_are_consecutive_and_checked_against_the_broker_epoch():
    img = base()
    starts = []
    for _ in range(3):
        res = producer_ids.allocate(img, m.AllocateProducerIdsRequest(broker_id=1, broker_epoch=7))
        assert res.response.error_code == ec.NONE and res.response.producer_id_len == 1000
        starts.append(res.response.producer_id_start)
        img = apply(img, res)
    assert starts == [0, 1000, 2000] and img.producer_ids.next_producer_id == 3000
    assert replay_all(img.records()).producer_ids == img.producer_ids  # a snapshot keeps the next block
    stale = producer_ids.allocate(img, m.AllocateProducerIdsRequest(broker_id=1, broker_epoch=6))
    assert stale.response.error_code == ec.STALE_BROKER_EPOCH and stale.records == ()
    unknown = producer_ids.allocate(img, m.AllocateProducerIdsRequest(broker_id=2, broker_epoch=7))
    assert unknown.response.error_code == ec.STALE_BROKER_EPOCH


def test_an_unknown_operation_fails_as_kafkas_unhandled_exception():
    """Kafka 4.4 answers an operation outside SET/DELETE/APPEND/SUBTRACT with UNKNOWN_SERVER_ERROR and no message
    (its OpType.forId throws IllegalArgumentException); nothing changes."""
    res = ConfigControl().incremental_alter(base(), inc((2, "t", [("retention.ms", 7, "1")])))
    assert [(r.error_code, r.error_message) for r in res.response.responses] == [(ec.UNKNOWN_SERVER_ERROR, None)]
    assert res.records == ()
