"""DescribeConfigs of BROKER_LOGGER resources (``kraftwire.metadata.broker_loggers``): kraftwire's own loggers with
Kafka's refusals and shape (Kafka's ConfigHelper; the conformance scenarios DescribeConfigs-v*-broker-logger)."""

from __future__ import annotations

from kraftwire import error_codes as ec
from kraftwire.metadata import broker_loggers as bl
from kraftwire.metadata.describe_configs import describe_configs
from kraftwire.metadata.image import MetadataImage
from kraftwire.protocol import codec
from kraftwire.protocol import messages as m

DC = m.DescribeConfigsRequest
LOGGERS = {"root": "INFO", "kraftwire.server": "WARN", "kraftwire.raft": "DEBUG"}


def _ask(name, keys=None, version=4):
    body = describe_configs(MetadataImage(), DC(resources=[DC.DescribeConfigsResource(
        resource_type=bl.BROKER_LOGGER, resource_name=name, configuration_keys=keys)], include_synonyms=True,
        include_documentation=True), version, node_id=1, static=[], loggers=LOGGERS)
    codec.encode(body, version)
    return body.results[0]


def test_a_brokers_loggers_and_their_levels():
    r = _ask("1")
    assert r.error_code == ec.NONE
    assert sorted((c.name, c.value) for c in r.configs) == sorted(LOGGERS.items())
    c = r.configs[0]
    assert (c.config_source, c.read_only, c.is_sensitive, c.synonyms) == (bl.DYNAMIC_BROKER_LOGGER_CONFIG, False,
                                                                          False, [])
    assert [c.name for c in _ask("1", ["kraftwire.raft", "kafka.controller"]).configs] == ["kraftwire.raft"]
    assert _ask("1", ["kafka.controller"]).configs == []  # Kafka's answer to a logger it does not have


def test_kafkas_refusals_of_the_resource_name():
    for name, message in (("", "Broker id must not be empty"),
                          ("2", "Unexpected broker id, expected 1 but received 2"),
                          ("x", "Broker id must be an integer, but it is: x")):
        r = _ask(name)
        assert (r.error_code, r.error_message, r.configs) == (ec.INVALID_REQUEST, message, [])


def test_python_levels_in_kafkas_words():
    assert [bl.kafka_level(n) for n in (1, 5, 10, 20, 30, 40, 50)] == ["TRACE", "TRACE", "DEBUG", "INFO", "WARN",
                                                                       "ERROR", "FATAL"]


IA = m.IncrementalAlterConfigsRequest


def _resource(kind, name, *ops):
    return IA.AlterConfigsResource(resource_type=kind, resource_name=name, configs=[
        IA.AlterableConfig(name=n, config_operation=op, value=v) for n, op, v in ops])


def test_the_receiving_broker_decides_its_loggers_and_other_brokers_names():
    """Kafka's ConfigAdminManager.preprocess, as the conformance scenarios IncrementalAlterConfigs-v*-broker-logger
    ("Logger kafka.controller does not exist!") and -broker-other-id found it."""
    resources = [
        _resource(bl.BROKER_LOGGER, "1", ("kafka.controller", bl.SET, "DEBUG")),
        _resource(bl.BROKER, "2", ("message.max.bytes", bl.SET, "400000")),
        _resource(bl.BROKER, "", ("message.max.bytes", bl.SET, "400000")),  # the controller's
        _resource(bl.BROKER, "1", ("message.max.bytes", bl.SET, "400000")),  # the controller's
        _resource(bl.BROKER_LOGGER, "1", ("kraftwire.raft", bl.SET, "TRACE"), ("root", bl.SET, "WARN")),
        _resource(bl.BROKER_LOGGER, "", ("root", bl.SET, "WARN")),
        _resource(bl.BROKER_LOGGER, "1", ("root", bl.DELETE, None)),
        _resource(bl.BROKER_LOGGER, "1", ("root", bl.SET, "LOUD")),
        _resource(bl.BROKER_LOGGER, "1", ("root", bl.APPEND, "INFO")),
        _resource(bl.BROKER_LOGGER, "1", ("root", bl.SET, None)),
        _resource(bl.BROKER_LOGGER, "1", ("root", bl.SET, "INFO"), ("root", bl.DELETE, None)),
    ]
    got = {i: bl.preprocess([r], 1, LOGGERS)[0] for i, r in enumerate(resources) if bl.preprocess([r], 1, LOGGERS)}
    assert bl.preprocess(resources[:2], 1, LOGGERS) == {i: got[i] for i in (0, 1)}  # several at once
    assert got == {
        0: (ec.INVALID_CONFIG, "Logger kafka.controller does not exist!"),
        1: (ec.INVALID_REQUEST, "Unexpected broker id, expected 1, but received 2"),
        4: (ec.NONE, None),
        5: (ec.INVALID_REQUEST, "Node id must be an integer, but it is: "),
        6: (ec.INVALID_REQUEST, "Removing the log level of the root logger is not allowed"),
        7: (ec.INVALID_CONFIG, "Cannot set the log level of root to LOUD as it is not a supported log level. Valid "
                               "log levels are FATAL, ERROR, WARN, INFO, DEBUG, TRACE"),
        8: (ec.INVALID_REQUEST, "APPEND operation is not allowed for the BROKER_LOGGER resource"),
        9: (ec.INVALID_REQUEST, "Null value not supported for : root"),
        10: (ec.INVALID_REQUEST, "Error due to duplicate config keys"),
    }
    assert bl.level_changes(resources[4].configs) == {"kraftwire.raft": 5, "root": 30}
    unknown_op = _resource(bl.BROKER_LOGGER, "1", ("root", 7, "INFO"))
    assert bl.preprocess([unknown_op], 1, LOGGERS) == {0: (ec.UNKNOWN_SERVER_ERROR, None)}
    twice = _resource(bl.BROKER_LOGGER, "1", ("root", bl.SET, "INFO"))
    assert bl.preprocess([twice, twice], 1, LOGGERS) == {}  # the controller refuses both
    assert bl.level_changes(resources[6].configs) == {"root": None}
