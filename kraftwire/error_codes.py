"""Kafka's wire error codes as data: (code, name, retriable). A leaf module (layer 0).

The numbers and names are Kafka's (``org.apache.kafka.common.protocol.Errors``); ``retriable`` says
whether a client may retry the same request unchanged. Every name is also a module constant::

    from kraftwire import error_codes as ec
    ec.NOT_LEADER_OR_FOLLOWER            # 6
    ec.BY_CODE[6].name                   # "NOT_LEADER_OR_FOLLOWER"
    ec.is_retriable(6)                   # True
    ec.name_of(999)                      # "UNKNOWN(999)"
"""

from __future__ import annotations

from typing import NamedTuple


class ErrorCode(NamedTuple):
    code: int
    name: str
    retriable: bool


#: (code, name, retriable), ascending by code.
TABLE: tuple[ErrorCode, ...] = tuple(ErrorCode(*row) for row in (
    (-1, 'UNKNOWN_SERVER_ERROR', False),
    (0, 'NONE', False),
    (1, 'OFFSET_OUT_OF_RANGE', False),
    (2, 'CORRUPT_MESSAGE', True),
    (3, 'UNKNOWN_TOPIC_OR_PARTITION', True),
    (4, 'INVALID_FETCH_SIZE', False),
    (5, 'LEADER_NOT_AVAILABLE', True),
    (6, 'NOT_LEADER_OR_FOLLOWER', True),
    (7, 'REQUEST_TIMED_OUT', True),
    (8, 'BROKER_NOT_AVAILABLE', False),
    (9, 'REPLICA_NOT_AVAILABLE', True),
    (10, 'MESSAGE_TOO_LARGE', False),
    (11, 'STALE_CONTROLLER_EPOCH', False),
    (12, 'OFFSET_METADATA_TOO_LARGE', False),
    (13, 'NETWORK_EXCEPTION', True),
    (14, 'COORDINATOR_LOAD_IN_PROGRESS', True),
    (15, 'COORDINATOR_NOT_AVAILABLE', True),
    (16, 'NOT_COORDINATOR', True),
    (17, 'INVALID_TOPIC_EXCEPTION', False),
    (18, 'RECORD_LIST_TOO_LARGE', False),
    (19, 'NOT_ENOUGH_REPLICAS', True),
    (20, 'NOT_ENOUGH_REPLICAS_AFTER_APPEND', True),
    (21, 'INVALID_REQUIRED_ACKS', False),
    (22, 'ILLEGAL_GENERATION', False),
    (23, 'INCONSISTENT_GROUP_PROTOCOL', False),
    (24, 'INVALID_GROUP_ID', False),
    (25, 'UNKNOWN_MEMBER_ID', False),
    (26, 'INVALID_SESSION_TIMEOUT', False),
    (27, 'REBALANCE_IN_PROGRESS', False),
    (28, 'INVALID_COMMIT_OFFSET_SIZE', False),
    (29, 'TOPIC_AUTHORIZATION_FAILED', False),
    (30, 'GROUP_AUTHORIZATION_FAILED', False),
    (31, 'CLUSTER_AUTHORIZATION_FAILED', False),
    (32, 'INVALID_TIMESTAMP', False),
    (33, 'UNSUPPORTED_SASL_MECHANISM', False),
    (34, 'ILLEGAL_SASL_STATE', False),
    (35, 'UNSUPPORTED_VERSION', False),
    (36, 'TOPIC_ALREADY_EXISTS', False),
    (37, 'INVALID_PARTITIONS', False),
    (38, 'INVALID_REPLICATION_FACTOR', False),
    (39, 'INVALID_REPLICA_ASSIGNMENT', False),
    (40, 'INVALID_CONFIG', False),
    (41, 'NOT_CONTROLLER', True),
    (42, 'INVALID_REQUEST', False),
    (43, 'UNSUPPORTED_FOR_MESSAGE_FORMAT', False),
    (44, 'POLICY_VIOLATION', False),
    (45, 'OUT_OF_ORDER_SEQUENCE_NUMBER', False),
    (46, 'DUPLICATE_SEQUENCE_NUMBER', False),
    (47, 'INVALID_PRODUCER_EPOCH', False),
    (48, 'INVALID_TXN_STATE', False),
    (49, 'INVALID_PRODUCER_ID_MAPPING', False),
    (50, 'INVALID_TRANSACTION_TIMEOUT', False),
    (51, 'CONCURRENT_TRANSACTIONS', True),
    (52, 'TRANSACTION_COORDINATOR_FENCED', False),
    (53, 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED', False),
    (54, 'SECURITY_DISABLED', False),
    (55, 'OPERATION_NOT_ATTEMPTED', False),
    (56, 'KAFKA_STORAGE_ERROR', True),
    (57, 'LOG_DIR_NOT_FOUND', False),
    (58, 'SASL_AUTHENTICATION_FAILED', False),
    (59, 'UNKNOWN_PRODUCER_ID', False),
    (60, 'REASSIGNMENT_IN_PROGRESS', False),
    (61, 'DELEGATION_TOKEN_AUTH_DISABLED', False),
    (62, 'DELEGATION_TOKEN_NOT_FOUND', False),
    (63, 'DELEGATION_TOKEN_OWNER_MISMATCH', False),
    (64, 'DELEGATION_TOKEN_REQUEST_NOT_ALLOWED', False),
    (65, 'DELEGATION_TOKEN_AUTHORIZATION_FAILED', False),
    (66, 'DELEGATION_TOKEN_EXPIRED', False),
    (67, 'INVALID_PRINCIPAL_TYPE', False),
    (68, 'NON_EMPTY_GROUP', False),
    (69, 'GROUP_ID_NOT_FOUND', False),
    (70, 'FETCH_SESSION_ID_NOT_FOUND', True),
    (71, 'INVALID_FETCH_SESSION_EPOCH', True),
    (72, 'LISTENER_NOT_FOUND', True),
    (73, 'TOPIC_DELETION_DISABLED', False),
    (74, 'FENCED_LEADER_EPOCH', True),
    (75, 'UNKNOWN_LEADER_EPOCH', True),
    (76, 'UNSUPPORTED_COMPRESSION_TYPE', False),
    (77, 'STALE_BROKER_EPOCH', False),
    (78, 'OFFSET_NOT_AVAILABLE', True),
    (79, 'MEMBER_ID_REQUIRED', False),
    (80, 'PREFERRED_LEADER_NOT_AVAILABLE', True),
    (81, 'GROUP_MAX_SIZE_REACHED', False),
    (82, 'FENCED_INSTANCE_ID', False),
    (83, 'ELIGIBLE_LEADERS_NOT_AVAILABLE', True),
    (84, 'ELECTION_NOT_NEEDED', True),
    (85, 'NO_REASSIGNMENT_IN_PROGRESS', False),
    (86, 'GROUP_SUBSCRIBED_TO_TOPIC', False),
    (87, 'INVALID_RECORD', False),
    (88, 'UNSTABLE_OFFSET_COMMIT', True),
    (89, 'THROTTLING_QUOTA_EXCEEDED', True),
    (90, 'PRODUCER_FENCED', False),
    (91, 'RESOURCE_NOT_FOUND', False),
    (92, 'DUPLICATE_RESOURCE', False),
    (93, 'UNACCEPTABLE_CREDENTIAL', False),
    (94, 'INCONSISTENT_VOTER_SET', False),
    (95, 'INVALID_UPDATE_VERSION', False),
    (96, 'FEATURE_UPDATE_FAILED', False),
    (97, 'PRINCIPAL_DESERIALIZATION_FAILURE', False),
    (98, 'SNAPSHOT_NOT_FOUND', False),
    (99, 'POSITION_OUT_OF_RANGE', False),
    (100, 'UNKNOWN_TOPIC_ID', True),
    (101, 'DUPLICATE_BROKER_REGISTRATION', False),
    (102, 'BROKER_ID_NOT_REGISTERED', False),
    (103, 'INCONSISTENT_TOPIC_ID', True),
    (104, 'INCONSISTENT_CLUSTER_ID', False),
    (105, 'TRANSACTIONAL_ID_NOT_FOUND', False),
    (106, 'FETCH_SESSION_TOPIC_ID_ERROR', True),
    (107, 'INELIGIBLE_REPLICA', False),
    (108, 'NEW_LEADER_ELECTED', False),
    (109, 'OFFSET_MOVED_TO_TIERED_STORAGE', False),
    (110, 'FENCED_MEMBER_EPOCH', False),
    (111, 'UNRELEASED_INSTANCE_ID', False),
    (112, 'UNSUPPORTED_ASSIGNOR', False),
    (113, 'STALE_MEMBER_EPOCH', False),
    (114, 'MISMATCHED_ENDPOINT_TYPE', False),
    (115, 'UNSUPPORTED_ENDPOINT_TYPE', False),
    (116, 'UNKNOWN_CONTROLLER_ID', False),
    (117, 'UNKNOWN_SUBSCRIPTION_ID', False),
    (118, 'TELEMETRY_TOO_LARGE', False),
    (119, 'INVALID_REGISTRATION', False),
    (120, 'TRANSACTION_ABORTABLE', False),
    (121, 'INVALID_RECORD_STATE', False),
    (122, 'SHARE_SESSION_NOT_FOUND', True),
    (123, 'INVALID_SHARE_SESSION_EPOCH', True),
    (124, 'FENCED_STATE_EPOCH', False),
    (125, 'INVALID_VOTER_KEY', False),
    (126, 'DUPLICATE_VOTER', False),
    (127, 'VOTER_NOT_FOUND', False),
    (128, 'INVALID_REGULAR_EXPRESSION', False),
    (129, 'REBOOTSTRAP_REQUIRED', False),
    (130, 'STREAMS_INVALID_TOPOLOGY', False),
    (131, 'STREAMS_INVALID_TOPOLOGY_EPOCH', False),
    (132, 'STREAMS_TOPOLOGY_FENCED', False),
    (133, 'SHARE_SESSION_LIMIT_REACHED', True),
    (134, 'GROUP_DELETION_FAILED', False),
    (135, 'STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED', False),
    (136, 'CONTROLLER_ID_NOT_REGISTERED', False),
))

BY_CODE: dict[int, ErrorCode] = {e.code: e for e in TABLE}
BY_NAME: dict[str, ErrorCode] = {e.name: e for e in TABLE}
globals().update({e.name: e.code for e in TABLE})

# Explicit names for the codes kraftwire itself returns (so linters and readers see them).
UNKNOWN_SERVER_ERROR = -1
NONE = 0
OFFSET_OUT_OF_RANGE = 1
CORRUPT_MESSAGE = 2
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
NOT_LEADER_OR_FOLLOWER = 6
REQUEST_TIMED_OUT = 7
BROKER_NOT_AVAILABLE = 8
MESSAGE_TOO_LARGE = 10
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
INVALID_TOPIC_EXCEPTION = 17
RECORD_LIST_TOO_LARGE = 18
NOT_ENOUGH_REPLICAS = 19
NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
INVALID_REQUIRED_ACKS = 21
ILLEGAL_GENERATION = 22
INCONSISTENT_GROUP_PROTOCOL = 23
INVALID_GROUP_ID = 24
TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30
UNKNOWN_MEMBER_ID = 25
INVALID_SESSION_TIMEOUT = 26
REBALANCE_IN_PROGRESS = 27
CLUSTER_AUTHORIZATION_FAILED = 31
UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
UNSUPPORTED_VERSION = 35
NOT_CONTROLLER = 41
INVALID_REQUEST = 42
POLICY_VIOLATION = 44
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
DUPLICATE_SEQUENCE_NUMBER = 46
INVALID_PRODUCER_EPOCH = 47
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
SECURITY_DISABLED = 54
OPERATION_NOT_ATTEMPTED = 55
KAFKA_STORAGE_ERROR = 56
SASL_AUTHENTICATION_FAILED = 58
UNKNOWN_PRODUCER_ID = 59
NON_EMPTY_GROUP = 68
GROUP_ID_NOT_FOUND = 69
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
UNSUPPORTED_COMPRESSION_TYPE = 76
STALE_BROKER_EPOCH = 77
MEMBER_ID_REQUIRED = 79
FENCED_INSTANCE_ID = 82
GROUP_SUBSCRIBED_TO_TOPIC = 86
FENCED_MEMBER_EPOCH = 110
UNSUPPORTED_ASSIGNOR = 112
UNRELEASED_INSTANCE_ID = 111
STALE_MEMBER_EPOCH = 113
INVALID_REGULAR_EXPRESSION = 128
REBOOTSTRAP_REQUIRED = 129
CONTROLLER_ID_NOT_REGISTERED = 136
INVALID_RECORD = 87
THROTTLING_QUOTA_EXCEEDED = 89
PRODUCER_FENCED = 90
PREFERRED_LEADER_NOT_AVAILABLE = 80
ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
ELECTION_NOT_NEEDED = 84
INCONSISTENT_VOTER_SET = 94
NO_REASSIGNMENT_IN_PROGRESS = 85
INVALID_UPDATE_VERSION = 95
SNAPSHOT_NOT_FOUND = 98
POSITION_OUT_OF_RANGE = 99
UNKNOWN_TOPIC_ID = 100
BROKER_ID_NOT_REGISTERED = 102
INCONSISTENT_CLUSTER_ID = 104
INELIGIBLE_REPLICA = 107
INVALID_REPLICATION_FACTOR = 38
INVALID_REPLICA_ASSIGNMENT = 39
NEW_LEADER_ELECTED = 108
FENCED_STATE_EPOCH = 124
INVALID_RECORD_STATE = 121
SHARE_SESSION_NOT_FOUND = 122
INVALID_SHARE_SESSION_EPOCH = 123
SHARE_SESSION_LIMIT_REACHED = 133
INVALID_VOTER_KEY = 125
DUPLICATE_VOTER = 126
VOTER_NOT_FOUND = 127
MISMATCHED_ENDPOINT_TYPE = 114
UNSUPPORTED_ENDPOINT_TYPE = 115

def name_of(code: int) -> str:
    e = BY_CODE.get(code)
    return e.name if e else f"UNKNOWN({code})"


#: What Kafka's Java clients name an error and say about it (its ``Errors`` table), for tools that print as Kafka's
#: do (``kafka-delete-records.sh``, ``kafka-log-dirs.sh``); the codes those tools can meet.
JAVA_EXCEPTIONS: dict[int, tuple[str, str]] = {
    CONTROLLER_ID_NOT_REGISTERED: ("ControllerIdNotRegisteredException", "The given controller ID was not registered."),
    OFFSET_OUT_OF_RANGE: ("OffsetOutOfRangeException",
                          "The requested offset is not within the range of offsets maintained by the server."),
    UNKNOWN_TOPIC_OR_PARTITION: ("UnknownTopicOrPartitionException",
                                 "This server does not host this topic-partition."),
    UNKNOWN_TOPIC_ID: ("UnknownTopicIdException", "This server does not host this topic ID."),
    NOT_LEADER_OR_FOLLOWER: ("NotLeaderOrFollowerException",
                             "For requests intended only for the leader, this error indicates that the broker is not "
                             "the current leader. For requests intended for any replica, this error indicates that "
                             "the broker is not a replica of the topic partition."),
    POLICY_VIOLATION: ("PolicyViolationException", "Request parameters do not satisfy the configured policy."),
    KAFKA_STORAGE_ERROR: ("KafkaStorageException", "Disk error when trying to access log file on the disk."),
    REQUEST_TIMED_OUT: ("TimeoutException", "The request timed out."),
    COORDINATOR_LOAD_IN_PROGRESS: ("CoordinatorLoadInProgressException",
                                   "The coordinator is loading and hence can't process requests."),
    COORDINATOR_NOT_AVAILABLE: ("CoordinatorNotAvailableException", "The coordinator is not available."),
    NOT_COORDINATOR: ("NotCoordinatorException", "This is not the correct coordinator."),
    INVALID_GROUP_ID: ("InvalidGroupIdException", "The configured groupId is invalid."),
    TOPIC_AUTHORIZATION_FAILED: ("TopicAuthorizationException", "Topic authorization failed."),
    GROUP_AUTHORIZATION_FAILED: ("GroupAuthorizationException", "Group authorization failed."),
    CLUSTER_AUTHORIZATION_FAILED: ("ClusterAuthorizationException", "Cluster authorization failed."),
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED: ("TransactionalIdAuthorizationException",
                                            "Transactional Id authorization failed."),
    NON_EMPTY_GROUP: ("GroupNotEmptyException", "The group is not empty."),
    GROUP_ID_NOT_FOUND: ("GroupIdNotFoundException", "The group id does not exist."),
    GROUP_SUBSCRIBED_TO_TOPIC: ("GroupSubscribedToTopicException", "Deleting offsets of a topic is forbidden while the "
                                                                   "consumer group is actively subscribed to it."),
    PREFERRED_LEADER_NOT_AVAILABLE: ("PreferredLeaderNotAvailableException", "The preferred leader was not available."),
    ELIGIBLE_LEADERS_NOT_AVAILABLE: ("EligibleLeadersNotAvailableException",
                                     "Eligible topic partition leaders are not available."),
    ELECTION_NOT_NEEDED: ("ElectionNotNeededException", "Leader election not needed for topic partition."),
    NO_REASSIGNMENT_IN_PROGRESS: ("NoReassignmentInProgressException", "No partition reassignment is in progress."),
    INVALID_REPLICA_ASSIGNMENT: ("InvalidReplicaAssignmentException", "Replica assignment is invalid."),
    INVALID_REPLICATION_FACTOR: ("InvalidReplicationFactorException",
                                 "Replication factor is below 1 or larger than the number of available brokers."),
    FENCED_LEADER_EPOCH: ("FencedLeaderEpochException",
                          "The leader epoch in the request is older than the epoch on the broker."),
    FENCED_STATE_EPOCH: ("FencedStateEpochException",
                         "The coordinator rejected the request because the state epoch did not match."),
    INVALID_REQUEST: ("InvalidRequestException",
                      "This most likely occurs because of a request being malformed by the client library or the "
                      "message was sent to an incompatible broker. See the broker logs for more details."),
    THROTTLING_QUOTA_EXCEEDED: ("ThrottlingQuotaExceededException", "The throttling quota has been exceeded."),
}


def default_message(code: int) -> str | None:
    """The message Kafka's answers carry for an error raised without one of its own (its ``Errors`` default), when
    this table has it."""
    known = JAVA_EXCEPTIONS.get(code)
    return None if known is None else known[1]


def java_exception(code: int) -> str:
    """``org.apache.kafka.common.errors.<Name>Exception: <message>`` as Kafka's tools print an error; the error's
    name for a code this table lacks."""
    known = JAVA_EXCEPTIONS.get(code)
    if known is None:
        return name_of(code)
    return f"org.apache.kafka.common.errors.{known[0]}: {known[1]}"


def java_exception_class(code: int) -> str | None:
    known = JAVA_EXCEPTIONS.get(code)
    return None if known is None else f"org.apache.kafka.common.errors.{known[0]}"


def is_retriable(code: int) -> bool:
    e = BY_CODE.get(code)
    return bool(e and e.retriable)
