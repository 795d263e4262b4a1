"""Group configs (KIP-848, ConfigResource type 32), pure: the controller's validation against the broker bounds,
DescribeConfigs' entries, the value the coordinator uses, and IncrementalAlterConfigs on a group. The messages and
the described entries are a Kafka 4.4 broker's (checked on a running one). Mirrors Kafka's GroupConfigTest
(testInvalidProps, testFromPropsWithDefaultValue, testEvaluate...) and ConfigurationControlManagerTest's group cases."""

from __future__ import annotations

from harness.metadata import replay

from kraftwire import error_codes as ec
from kraftwire.kafka_configs import BrokerConfigs
from kraftwire.metadata import group_configs as gc
from kraftwire.metadata.controller.configs import APPEND, DELETE, SET, ConfigControl
from kraftwire.metadata.describe_configs import describe_configs
from kraftwire.metadata.image import MetadataImage
from kraftwire.protocol import messages as m

DEFAULTS = BrokerConfigs().value
IA = m.IncrementalAlterConfigsRequest
DC = m.DescribeConfigsRequest

#: a Kafka 4.4 broker's DescribeConfigs of a group without configs: (name, value, config type, synonym)
KAFKA_DESCRIBED = [
    ("consumer.session.timeout.ms", "45000", 3, "group.consumer.session.timeout.ms"),
    ("streams.assignor.name", "sticky", 2, "group.streams.assignors"),
    ("consumer.assignment.interval.ms", "1000", 3, "group.consumer.assignment.interval.ms"),
    ("errors.deadletterqueue.copy.record.enable", "false", 1, "errors.deadletterqueue.copy.record.enable"),
    ("share.auto.offset.reset", "latest", 2, "share.auto.offset.reset"),
    ("streams.rack.aware.assignment.tags", "", 7, "group.streams.rack.aware.assignment.tags"),
    ("share.renew.acknowledge.enable", "true", 1, "share.renew.acknowledge.enable"),
    ("streams.initial.rebalance.delay.ms", "3000", 3, "group.streams.initial.rebalance.delay.ms"),
    ("share.session.timeout.ms", "45000", 3, "group.share.session.timeout.ms"),
    ("streams.assignment.interval.ms", "1000", 3, "group.streams.assignment.interval.ms"),
    ("share.heartbeat.interval.ms", "5000", 3, "group.share.heartbeat.interval.ms"),
    ("streams.heartbeat.interval.ms", "5000", 3, "group.streams.heartbeat.interval.ms"),
    ("share.delivery.count.limit", "5", 3, "group.share.delivery.count.limit"),
    ("errors.deadletterqueue.topic.name", "", 2, "errors.deadletterqueue.topic.name"),
    ("consumer.heartbeat.interval.ms", "5000", 3, "group.consumer.heartbeat.interval.ms"),
    ("share.record.lock.duration.ms", "30000", 3, "group.share.record.lock.duration.ms"),
    ("share.assignment.interval.ms", "1000", 3, "group.share.assignment.interval.ms"),
    ("share.isolation.level", "read_uncommitted", 2, "share.isolation.level"),
    ("streams.session.timeout.ms", "45000", 3, "group.streams.session.timeout.ms"),
    ("share.partition.max.record.locks", "2000", 3, "group.share.partition.max.record.locks"),
    ("streams.num.standby.replicas", "0", 3, "group.streams.num.standby.replicas"),
]


def test_invalid_props():
    """GroupConfigTest.testInvalidProps, with Kafka 4.4's messages and the broker's bounds."""
    v = lambda **kw: gc.validate({k.replace("_", "."): s for k, s in kw.items()}, DEFAULTS)  # noqa: E731
    assert v(consumer_session_timeout_ms="50000", consumer_heartbeat_interval_ms="6000") == ""
    assert v(consumer_session_timeout_ms="30000") == \
        "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive."
    assert v(consumer_session_timeout_ms="70000") == \
        "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive."
    assert v(consumer_heartbeat_interval_ms="1000") == \
        "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive."
    assert v(consumer_session_timeout_ms="abc") == \
        "Invalid value abc for configuration consumer.session.timeout.ms: Not a number of type INT"
    assert gc.validate({"no.such.key": "1"}, DEFAULTS) == "Unknown group config name: no.such.key"
    assert gc.validate({"share.auto.offset.reset": "bogus"}, DEFAULTS) == (
        "Invalid value bogus for configuration share.auto.offset.reset: Invalid value `bogus` for configuration "
        "share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format "
        "'by_duration:<PnDTnHnMn.nS>'.")
    assert gc.validate({"share.auto.offset.reset": "by_duration:PT1H"}, DEFAULTS) == ""
    assert gc.validate({"streams.num.standby.replicas": "3"}, DEFAULTS) == \
        "streams.num.standby.replicas must be less than or equal to 2"
    assert gc.validate({"streams.assignor.name": "other"}, DEFAULTS) == \
        "streams.assignor.name 'other' is not a registered task assignor. Registered assignors are: [sticky]."
    assert gc.validate({"streams.rack.aware.assignment.tags": "a,b,a"}, DEFAULTS) == \
        "streams.rack.aware.assignment.tags must not contain duplicate tag keys."
    assert gc.validate({"errors.deadletterqueue.topic.name": "__dlq"}, DEFAULTS) == \
        "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'"
    # the session must exceed the heartbeat, the broker's value standing in for the one the group leaves out
    wide = BrokerConfigs(static={"group.consumer.min.session.timeout.ms": "1000",
                                 "group.consumer.max.heartbeat.interval.ms": "60000"}).value
    assert gc.validate({"consumer.session.timeout.ms": "5000"}, wide) == \
        "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms"
    assert gc.validate({"consumer.session.timeout.ms": "6000"}, wide) == ""


def test_from_props_with_default_value():
    """A group without configs is described with the broker's values, in Kafka's order, as Kafka 4.4 answers."""
    got = gc.describe({}, BrokerConfigs())
    assert [(k, v, t, syn[0][0]) for k, v, _s, syn, t in got] == KAFKA_DESCRIBED
    assert {s for _k, _v, s, _syn, _t in got} == {5}
    static = BrokerConfigs(static={"group.consumer.session.timeout.ms": "50000"})
    [session] = [e for e in gc.describe({"consumer.heartbeat.interval.ms": "6000"}, static)
                 if e[0] == "consumer.session.timeout.ms"]
    assert session[1:4] == ("50000", 4, [("group.consumer.session.timeout.ms", "50000", 4),
                                         ("group.consumer.session.timeout.ms", "45000", 5)])
    [hb] = [e for e in gc.describe({"consumer.heartbeat.interval.ms": "6000"}, static)
            if e[0] == "consumer.heartbeat.interval.ms"]
    assert hb[1:4] == ("6000", 8, [("consumer.heartbeat.interval.ms", "6000", 8),
                                   ("group.consumer.heartbeat.interval.ms", "5000", 5)])


def test_evaluate_clamps_a_group_value_into_the_current_bounds():
    assert gc.effective_ms(gc.SESSION, {}, DEFAULTS) == 45000
    assert gc.effective_ms(gc.SESSION, {gc.SESSION: "50000"}, DEFAULTS) == 50000
    assert gc.effective_ms(gc.SESSION, {gc.SESSION: "90000"}, DEFAULTS) == 60000  # bounds narrowed since
    assert gc.effective_ms(gc.HEARTBEAT, {gc.HEARTBEAT: "1000"}, DEFAULTS) == 5000
    low = BrokerConfigs(static={"group.consumer.session.timeout.ms": "6000"}).value
    assert gc.effective_ms(gc.SESSION, {}, low) == 6000  # the broker's own value is used as it is


def _alter(cc, img, name, ops):
    req = IA(resources=[IA.AlterConfigsResource(resource_type=32, resource_name=name, configs=[
        IA.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops])], validate_only=False)
    res = cc.incremental_alter(img, req)
    r = res.response.responses[0]
    return (r.error_code, r.error_message), replay(img, res.records)


def test_incremental_alter_configs_of_a_group():
    cc = ConfigControl()
    img = MetadataImage()
    answer, img = _alter(cc, img, "g", [("consumer.session.timeout.ms", SET, "50000"),
                                        ("consumer.heartbeat.interval.ms", SET, "6000")])
    assert answer == (ec.NONE, None)  # any group name: the group need not exist
    assert img.configs[(32, "g")] == {"consumer.session.timeout.ms": "50000", "consumer.heartbeat.interval.ms": "6000"}
    answer, img2 = _alter(cc, img, "g", [("consumer.session.timeout.ms", SET, "30000")])
    assert answer == (ec.INVALID_CONFIG, "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.")
    assert img2 is img or img2.configs == img.configs
    assert _alter(cc, img, "g", [("nope", SET, "1")])[0] == (ec.INVALID_CONFIG, "Unknown group config name: nope")
    assert _alter(cc, img, "g", [("consumer.session.timeout.ms", APPEND, "1")])[0] == (
        ec.INVALID_CONFIG, "Can't APPEND to key consumer.session.timeout.ms because its type is not LIST.")
    assert _alter(cc, img, "", [("consumer.session.timeout.ms", SET, "50000")])[0] == (
        ec.INVALID_REQUEST, "Default group resources are not allowed.")
    # the controller checks against its own broker bounds
    wide = ConfigControl(broker_value=BrokerConfigs(static={"group.consumer.min.session.timeout.ms": "1000"}).value)
    assert _alter(wide, img, "g", [("consumer.session.timeout.ms", SET, "30000")])[0] == (ec.NONE, None)
    answer, img = _alter(cc, img, "g", [("consumer.session.timeout.ms", DELETE, None),
                                        ("consumer.heartbeat.interval.ms", DELETE, None)])
    assert answer == (ec.NONE, None) and not img.configs.get((32, "g"))


def test_describe_configs_of_a_group():
    img = MetadataImage()
    _answer, img = _alter(ConfigControl(), img, "g", [("consumer.session.timeout.ms", SET, "50000")])
    req = DC(resources=[DC.DescribeConfigsResource(resource_type=32, resource_name=n, configuration_keys=keys)
                        for n, keys in (("g", ["consumer.session.timeout.ms"]), ("other", None), ("", None))],
             include_synonyms=True, include_documentation=False)
    g, other, empty = describe_configs(img, req, 4, node_id=1, static=[]).results
    [c] = g.configs
    assert (c.name, c.value, c.config_source, c.read_only) == ("consumer.session.timeout.ms", "50000", 8, False)
    assert [(s.name, s.value, s.source) for s in c.synonyms] == [
        ("consumer.session.timeout.ms", "50000", 8), ("group.consumer.session.timeout.ms", "45000", 5)]
    assert other.error_code == 0 and [x.name for x in other.configs] == [k for k, *_ in KAFKA_DESCRIBED]
    assert not any(x.read_only for x in other.configs)
    assert (empty.error_code, empty.error_message) == (ec.INVALID_REQUEST, "Group name must not be empty")


def test_share_partition_config_checks():
    """Kafka 4.4's ShareGroupConfig constructor (ShareGroupConfigTest.testInvalidConfigs...): each broker share key
    bounded by its min/max key, checked in Kafka's order with its message; Kafka's defaults pass, and a key left
    unset counts at its default."""
    assert gc.share_partition_config_error(DEFAULTS) is None
    cases = [
        ({"group.share.delivery.count.limit": "11"}, "group.share.max.delivery.count.limit", 10),
        ({"group.share.delivery.count.limit": "1"}, "group.share.delivery.count.limit", 1),
        ({"group.share.partition.max.record.locks": "5000"}, "group.share.max.partition.max.record.locks", 4000),
        ({"group.share.partition.max.record.locks": "50"}, "group.share.partition.max.record.locks", 50),
        ({"group.share.record.lock.duration.ms": "1000"}, "group.share.record.lock.duration.ms", 1000),
        ({"group.share.record.lock.duration.ms": "70000"}, "group.share.max.record.lock.duration.ms", 60000),
        ({"group.share.max.size": "3000"}, "group.share.max.share.sessions", 2000),
    ]
    for broker, key, value in cases:
        other = dict(gc.SHARE_PARTITION_BOUNDS)[key]
        assert gc.share_partition_config_error(broker.get) == (
            key, value, f"{key} must be greater than or equal to {other}"), broker
    # the bounds move with the keys: a lower minimum admits a lower value
    assert gc.share_partition_config_error({"group.share.record.lock.duration.ms": "1000",
                                            "group.share.min.record.lock.duration.ms": "1000"}.get) is None


def test_share_partition_settings_default_to_the_broker_keys():
    """The share-partition settings of a group without configs are the broker's group.share.* values (each key on its
    own), a group's own config within the broker's bounds winning (GroupConfig.evaluate)."""
    from kraftwire.replica.share_fetch import share_config

    default = share_config({}, DEFAULTS)
    assert (default.record_lock_duration_ms, default.delivery_count_limit, default.max_record_locks) == (30000, 5, 2000)
    for key, field, value in (("group.share.record.lock.duration.ms", "record_lock_duration_ms", "20000"),
                              ("group.share.delivery.count.limit", "delivery_count_limit", "7"),
                              ("group.share.partition.max.record.locks", "max_record_locks", "300")):
        assert getattr(share_config({}, BrokerConfigs(static={key: value}).value), field) == int(value)
    assert share_config({"share.delivery.count.limit": "9"}, BrokerConfigs(
        static={"group.share.max.delivery.count.limit": "8"}).value).delivery_count_limit == 8
