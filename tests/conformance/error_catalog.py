"""The error codes a client can cause, per API: what the conformance run should provoke at least once (issue #36).

Facts from Apache Kafka: each ``*Response.java`` of Kafka's ``clients`` module (``ListGroupsRequest.java`` for
ListGroups) lists the errors its API may answer with in a javadoc comment. Kept here, per API, are the ones a client
can bring about by what it sends (names as in ``kraftwire.error_codes``); the table (:mod:`conformance.table`)
lists those no scenario provoked. APIs whose Kafka class documents no errors are not listed (their observed codes
still show in the table).

Left out everywhere, with why (:data:`NOT_CLIENT_CAUSED`):

* a node's own fault or a moment of the cluster, which no request brings about on purpose and which a healthy pair
  never shows: ``UNKNOWN_SERVER_ERROR`` (a bug), ``KAFKA_STORAGE_ERROR`` (a failed log directory),
  ``REQUEST_TIMED_OUT`` and ``NOT_ENOUGH_REPLICAS_AFTER_APPEND`` (a replica falling behind mid-request),
  ``NOT_CONTROLLER`` (a controller election between forwarding and answering), ``BROKER_NOT_AVAILABLE``,
  ``REPLICA_NOT_AVAILABLE`` and ``LEADER_NOT_AVAILABLE`` (a partition between leaders);
* a coordinator loading or moving: ``COORDINATOR_LOAD_IN_PROGRESS``, ``COORDINATOR_NOT_AVAILABLE`` (named
  ``GROUP_COORDINATOR_NOT_AVAILABLE`` in older javadoc): both last only while a coordinator partition is being
  loaded, a window no scenario can hit deterministically;
* message formats Kafka 4 no longer has: ``UNSUPPORTED_FOR_MESSAGE_FORMAT`` (answered for v0/v1 message formats,
  which Kafka 4 cannot write);
* inter-broker requests: ``TRANSACTION_COORDINATOR_FENCED`` (a transaction coordinator's WriteTxnMarkers from an
  older epoch), and a Fetch ``CORRUPT_MESSAGE`` (a corrupted log on the broker, not a client's bytes);
* a plug-in: ``POLICY_VIOLATION`` needs a Java ``create.topic.policy.class.name``, which kraftwire cannot load.

ListGroups' javadoc names ``AUTHORIZATION_FAILED (29)``, an old name: code 29 is TOPIC_AUTHORIZATION_FAILED, which
ListGroups never answers (it leaves out the groups a client may not describe); not listed.

Of the pairs listed, :data:`NOT_PROVOKABLE` names those no test can provoke on purpose, each with why (a window of
a leader change, a code Kafka 4.4's code path for the API never answers although the javadoc names it, state
kraftwire does not keep): the table counts them apart, as "provoked / provokable / total".
"""

from __future__ import annotations

#: names left out of every API's list below, by group (see the module docstring for why)
NOT_CLIENT_CAUSED: dict[str, tuple[str, ...]] = {
    "node fault or cluster moment": ("UNKNOWN_SERVER_ERROR", "KAFKA_STORAGE_ERROR", "REQUEST_TIMED_OUT",
                                     "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "NOT_CONTROLLER", "BROKER_NOT_AVAILABLE",
                                     "REPLICA_NOT_AVAILABLE", "LEADER_NOT_AVAILABLE"),
    "coordinator loading": ("COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE"),
    "message formats before v2": ("UNSUPPORTED_FOR_MESSAGE_FORMAT",),
    "inter-broker only": ("TRANSACTION_COORDINATOR_FENCED",),
    "plug-in kraftwire cannot load": ("POLICY_VIOLATION",),
}

#: per API, the error codes (names) a client can cause, from Kafka's javadoc less :data:`NOT_CLIENT_CAUSED`
CLIENT_CAUSED: dict[str, tuple[str, ...]] = {
    "AddOffsetsToTxn": ("GROUP_AUTHORIZATION_FAILED", "INVALID_PRODUCER_EPOCH", "INVALID_PRODUCER_ID_MAPPING",
                        "INVALID_TXN_STATE", "NOT_COORDINATOR", "PRODUCER_FENCED",
                        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"),
    "AddPartitionsToTxn": ("INVALID_PRODUCER_EPOCH", "INVALID_PRODUCER_ID_MAPPING", "INVALID_TXN_STATE",
                           "NOT_COORDINATOR", "PRODUCER_FENCED", "TOPIC_AUTHORIZATION_FAILED",
                           "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "UNKNOWN_TOPIC_OR_PARTITION"),
    "ApiVersions": ("INVALID_REQUEST", "UNSUPPORTED_VERSION"),
    "ConsumerGroupDescribe": ("GROUP_AUTHORIZATION_FAILED", "GROUP_ID_NOT_FOUND", "INVALID_GROUP_ID",
                              "INVALID_REQUEST", "NOT_COORDINATOR"),
    "ConsumerGroupHeartbeat": ("FENCED_MEMBER_EPOCH", "GROUP_AUTHORIZATION_FAILED", "GROUP_MAX_SIZE_REACHED",
                               "INVALID_REGULAR_EXPRESSION", "INVALID_REQUEST", "NOT_COORDINATOR",
                               "UNKNOWN_MEMBER_ID", "UNRELEASED_INSTANCE_ID", "UNSUPPORTED_ASSIGNOR"),
    "CreateTopics": ("INVALID_CONFIG", "INVALID_PARTITIONS", "INVALID_REPLICATION_FACTOR",
                     "INVALID_REPLICA_ASSIGNMENT", "INVALID_REQUEST", "INVALID_TOPIC_EXCEPTION",
                     "TOPIC_ALREADY_EXISTS", "TOPIC_AUTHORIZATION_FAILED"),
    "DeleteGroups": ("GROUP_AUTHORIZATION_FAILED", "GROUP_ID_NOT_FOUND", "INVALID_GROUP_ID", "NON_EMPTY_GROUP",
                     "NOT_COORDINATOR"),
    "DeleteRecords": ("NOT_LEADER_OR_FOLLOWER", "OFFSET_OUT_OF_RANGE", "UNKNOWN_TOPIC_OR_PARTITION"),
    "DeleteTopics": ("INVALID_REQUEST", "INVALID_TOPIC_EXCEPTION", "TOPIC_AUTHORIZATION_FAILED",
                     "TOPIC_DELETION_DISABLED"),
    "DescribeQuorum": ("CLUSTER_AUTHORIZATION_FAILED", "NOT_LEADER_OR_FOLLOWER", "UNKNOWN_TOPIC_OR_PARTITION"),
    "EndTxn": ("INVALID_PRODUCER_EPOCH", "INVALID_PRODUCER_ID_MAPPING", "INVALID_TXN_STATE", "NOT_COORDINATOR",
               "PRODUCER_FENCED", "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"),
    "Fetch": ("FENCED_LEADER_EPOCH", "FETCH_SESSION_TOPIC_ID_ERROR", "INCONSISTENT_TOPIC_ID",
              "NOT_LEADER_OR_FOLLOWER", "OFFSET_OUT_OF_RANGE", "TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_LEADER_EPOCH",
              "UNKNOWN_TOPIC_ID", "UNKNOWN_TOPIC_OR_PARTITION", "UNSUPPORTED_COMPRESSION_TYPE"),
    "FindCoordinator": ("GROUP_AUTHORIZATION_FAILED", "INVALID_REQUEST", "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"),
    "Heartbeat": ("GROUP_AUTHORIZATION_FAILED", "ILLEGAL_GENERATION", "NOT_COORDINATOR", "REBALANCE_IN_PROGRESS",
                  "UNKNOWN_MEMBER_ID"),
    "InitProducerId": ("CLUSTER_AUTHORIZATION_FAILED", "INVALID_PRODUCER_EPOCH", "NOT_COORDINATOR",
                       "PRODUCER_FENCED", "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"),
    "LeaveGroup": ("FENCED_INSTANCE_ID", "GROUP_AUTHORIZATION_FAILED", "NOT_COORDINATOR", "UNKNOWN_MEMBER_ID"),
    "ListOffsets": ("FENCED_LEADER_EPOCH", "NOT_LEADER_OR_FOLLOWER", "OFFSET_NOT_AVAILABLE",
                    "TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_LEADER_EPOCH", "UNKNOWN_TOPIC_OR_PARTITION"),
    "OffsetCommit": ("GROUP_AUTHORIZATION_FAILED", "GROUP_ID_NOT_FOUND", "ILLEGAL_GENERATION",
                     "INVALID_COMMIT_OFFSET_SIZE", "INVALID_PRODUCER_ID_MAPPING", "INVALID_TXN_STATE",
                     "NOT_COORDINATOR", "OFFSET_METADATA_TOO_LARGE", "REBALANCE_IN_PROGRESS", "STALE_MEMBER_EPOCH",
                     "TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_MEMBER_ID", "UNKNOWN_TOPIC_OR_PARTITION"),
    "OffsetDelete": ("GROUP_AUTHORIZATION_FAILED", "GROUP_ID_NOT_FOUND", "GROUP_SUBSCRIBED_TO_TOPIC",
                     "INVALID_GROUP_ID", "NON_EMPTY_GROUP", "NOT_COORDINATOR", "TOPIC_AUTHORIZATION_FAILED",
                     "UNKNOWN_TOPIC_OR_PARTITION"),
    "OffsetFetch": ("GROUP_AUTHORIZATION_FAILED", "NOT_COORDINATOR", "STALE_MEMBER_EPOCH",
                    "TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_MEMBER_ID", "UNKNOWN_TOPIC_OR_PARTITION",
                    "UNSTABLE_OFFSET_COMMIT"),
    "OffsetForLeaderEpoch": ("FENCED_LEADER_EPOCH", "NOT_LEADER_OR_FOLLOWER", "TOPIC_AUTHORIZATION_FAILED",
                             "UNKNOWN_LEADER_EPOCH", "UNKNOWN_TOPIC_OR_PARTITION"),
    "Produce": ("CLUSTER_AUTHORIZATION_FAILED", "CORRUPT_MESSAGE", "INVALID_PRODUCER_EPOCH",
                "INVALID_PRODUCER_ID_MAPPING", "INVALID_RECORD", "INVALID_REQUIRED_ACKS", "INVALID_TOPIC_EXCEPTION",
                "INVALID_TXN_STATE", "MESSAGE_TOO_LARGE", "NOT_ENOUGH_REPLICAS", "NOT_LEADER_OR_FOLLOWER",
                "RECORD_LIST_TOO_LARGE", "TOPIC_AUTHORIZATION_FAILED", "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
                "UNKNOWN_TOPIC_OR_PARTITION"),
    "SaslAuthenticate": ("SASL_AUTHENTICATION_FAILED",),
    "SaslHandshake": ("ILLEGAL_SASL_STATE", "UNSUPPORTED_SASL_MECHANISM"),
    "TxnOffsetCommit": ("FENCED_INSTANCE_ID", "GROUP_AUTHORIZATION_FAILED", "ILLEGAL_GENERATION",
                        "INVALID_COMMIT_OFFSET_SIZE", "INVALID_PRODUCER_EPOCH", "NOT_COORDINATOR",
                        "OFFSET_METADATA_TOO_LARGE", "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "UNKNOWN_MEMBER_ID"),
    "UpdateFeatures": ("CLUSTER_AUTHORIZATION_FAILED", "FEATURE_UPDATE_FAILED", "INVALID_REQUEST"),
    "WriteTxnMarkers": ("CLUSTER_AUTHORIZATION_FAILED", "CORRUPT_MESSAGE", "INVALID_PRODUCER_EPOCH",
                        "INVALID_REQUIRED_ACKS", "MESSAGE_TOO_LARGE", "NOT_ENOUGH_REPLICAS",
                        "NOT_LEADER_OR_FOLLOWER", "RECORD_LIST_TOO_LARGE", "UNKNOWN_TOPIC_OR_PARTITION"),
}


#: (API, error code) pairs of :data:`CLIENT_CAUSED` that no scenario can provoke, with why
NOT_PROVOKABLE: dict[tuple[str, str], str] = {
    ("DeleteGroups", "INVALID_GROUP_ID"):
        "Kafka 4.4 answers an empty group id with GROUP_ID_NOT_FOUND (DeleteGroups-v*-empty-group-id), and no "
        "other group id is invalid",
    ("DescribeQuorum", "NOT_LEADER_OR_FOLLOWER"):
        "a broker forwards DescribeQuorum to the active controller, which leads the metadata quorum: only a "
        "leadership lost between forwarding and answering shows it",
    ("ListOffsets", "OFFSET_NOT_AVAILABLE"):
        "answered only in the window after a leader change before the new leader's high watermark reaches the "
        "start of its epoch, which no request can hold open",
    ("OffsetCommit", "INVALID_PRODUCER_ID_MAPPING"):
        "named by the javadoc, but only the transactional commit (TxnOffsetCommit's transaction verification) "
        "answers it in Kafka 4.4; OffsetCommit carries no producer",
    ("OffsetCommit", "INVALID_TXN_STATE"):
        "as INVALID_PRODUCER_ID_MAPPING: a transaction's state, which a plain OffsetCommit does not name",
    ("Fetch", "UNSUPPORTED_COMPRESSION_TYPE"):
        "Kafka 4.4 hands zstd records to a Fetch before v10 as they are, NONE (Fetch-v9-zstd-before-v10): the "
        "refusal went with the down-conversion of message formats before v2",
    ("Produce", "CLUSTER_AUTHORIZATION_FAILED"):
        "Kafka 4.4's KafkaApis.handleProduceRequest checks WRITE on the transactional id and on each topic only; the "
        "cluster's IDEMPOTENT_WRITE is checked by InitProducerId (provoked there), never by Produce",
    ("DeleteTopics", "INVALID_TOPIC_EXCEPTION"):
        "ControllerApis.deleteTopics never checks a name's form: an illegal name is looked up like any other and is "
        "UNKNOWN_TOPIC_OR_PARTITION (DeleteTopics-v6-invalid-names)",
    ("OffsetFetch", "UNKNOWN_TOPIC_OR_PARTITION"):
        "Kafka 4.4's group coordinator answers a partition it holds no offset of, of a topic that does not exist "
        "too, with offset -1 and NONE (OffsetFetch-v*-committed asks for one)",
    ("AddPartitionsToTxn", "INVALID_TXN_STATE"):
        "Kafka 4.4's TransactionCoordinator.handleAddPartitionsToTransaction answers CONCURRENT_TRANSACTIONS while a "
        "transaction ends and adds the partitions in any other state a client can leave it in; INVALID_TXN_STATE "
        "comes from EndTxn's state checks only (endTransaction, endTransactionWithTV1)",
    ("AddOffsetsToTxn", "INVALID_TXN_STATE"):
        "AddOffsetsToTxn adds the group's __consumer_offsets partition through the same "
        "handleAddPartitionsToTransaction as AddPartitionsToTxn (see there)",
    ("UpdateFeatures", "FEATURE_UPDATE_FAILED"):
        "no code of Kafka 4.4's broker or controller answers it (ControllerApis, QuorumController and "
        "FeatureControlManager refuse a feature update with INVALID_UPDATE_VERSION); it was the ZooKeeper "
        "controller's",
    ("UpdateFeatures", "INVALID_REQUEST"):
        "Kafka 4.4's ControllerApis.handleUpdateFeatures and FeatureControlManager refuse every bad update (an "
        "unknown upgrade type, a negative level, a downgrade without its type) with INVALID_UPDATE_VERSION",
    ("ConsumerGroupDescribe", "INVALID_REQUEST"):
        "Kafka 4.4's KafkaApis.handleConsumerGroupDescribe answers UNSUPPORTED_VERSION (the consumer protocol off) "
        "or GROUP_AUTHORIZATION_FAILED, its group coordinator INVALID_GROUP_ID or GROUP_ID_NOT_FOUND: no path of "
        "the API answers INVALID_REQUEST",
    ("OffsetCommit", "INVALID_COMMIT_OFFSET_SIZE"):
        "no code of Kafka 4.4's broker or coordinators answers it: a commit whose records exceed "
        "__consumer_offsets' batch limit fails with MESSAGE_TOO_LARGE or RECORD_LIST_TOO_LARGE, which the "
        "coordinator runtime (CoordinatorOperationExceptionHelper) answers as UNKNOWN_SERVER_ERROR",
    ("TxnOffsetCommit", "INVALID_COMMIT_OFFSET_SIZE"):
        "as OffsetCommit's: an oversized transactional commit is UNKNOWN_SERVER_ERROR in Kafka 4.4",
    ("WriteTxnMarkers", "CORRUPT_MESSAGE"):
        "a broker builds each marker's control batch itself (KafkaApis.handleWriteTxnMarkersRequest, "
        "MemoryRecords.withEndTransactionMarker): no record bytes of the request reach the log",
    ("WriteTxnMarkers", "INVALID_REQUIRED_ACKS"):
        "the request carries no acks: a broker appends each marker with acks -1 itself",
    ("WriteTxnMarkers", "RECORD_LIST_TOO_LARGE"):
        "answered for a batch above the topic's segment.bytes, whose least is 1 MiB: a marker is one control record "
        "of a few dozen bytes, the broker's own",
}
