"""kraftwire's compact declarations of the Kafka messages it speaks, as data.

Every message the protocol layer can encode or decode is declared here once: its kind (request,
response, header, data, metadata — Kafka's metadata records, whose api key is the record type), api key, valid and flexible version ranges, and its fields. Nothing else in
the package knows a field layout; the codec compiles encoders and decoders from these tuples.

``F(name, type, versions, nullable=, tag=, tagged=, flexible=, default=, fields=)`` declares a field:

* ``name`` is Kafka's CamelCase field name; Python attributes use its snake_case form.
* ``type`` is a primitive (int8/16/32/64, uint16, uint32, float64, bool, string, bytes, uuid,
  records), a struct name (with ``fields``), or ``[]`` followed by either (an array).
* version ranges are Kafka's notation: ``"3"``, ``"1-4"``, ``"2+"``, ``"none"``.
* ``tag``/``tagged``: a tagged field (only in flexible versions), written only when not default.
* ``flexible="none"`` keeps a string in the classic int16-length form even in flexible versions
  (RequestHeader.ClientId).
* ``default``: the value of an absent field (otherwise 0, "", b"", [], False, the zero uuid,
  None for records, or a struct of defaults).

``M(name, kind, api_key, valid, flexible, fields)`` declares a message and registers it in
:data:`MESSAGES`.

The regions between the GENERATED markers (messages; metadata records; coordinator records) are written by
``python -m kraftwire.tools.generate_schemas`` from the JSON specs inside the pinned Kafka release's jars (names, types,
versions, tags, defaults only); a test checks they are current. The declarations after them are hand-written: the
versions Kafka 4.0 removed that kraftwire still serves, and kraftwire's own state records, marked ``kraftwire=True``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

UNSET: Any = type("Unset", (), {"__repr__": lambda self: "UNSET"})()


class Field(NamedTuple):
    name: str
    type: str
    versions: str
    nullable: str = "none"
    tag: int | None = None
    tagged: str = "none"
    flexible: str | None = None
    default: Any = UNSET
    fields: tuple | None = None


class Message(NamedTuple):
    name: str
    kind: str  # "request" | "response" | "header" | "data" | "metadata" (a record of __cluster_metadata)
    #            | "coordinator" (a key or value of __consumer_offsets / __transaction_state)
    api_key: int | None
    valid: str
    flexible: str
    fields: tuple
    kraftwire: bool = False  # True for kraftwire's own records (not part of Kafka)


MESSAGES: dict[str, Message] = {}


def F(name, type, versions, *, nullable="none", tag=None, tagged="none", flexible=None, default=UNSET, fields=None):
    return Field(name, type, versions, nullable, tag, tagged, flexible, default, None if fields is None else tuple(fields))


def M(name, kind, api_key, valid, flexible, fields, *, kraftwire=False):
    MESSAGES[name] = Message(name, kind, api_key, valid, flexible, tuple(fields), kraftwire)
    return MESSAGES[name]


# fmt: off
# ---- BEGIN GENERATED (python -m kraftwire.tools.generate_schemas) ----
M('AddOffsetsToTxnRequest', 'request', 25, '0-4', '3+', [
    F('TransactionalId', 'string', '0+'),
    F('ProducerId', 'int64', '0+'),
    F('ProducerEpoch', 'int16', '0+'),
    F('GroupId', 'string', '0+'),
])
M('AddOffsetsToTxnResponse', 'response', 25, '0-4', '3+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
])
M('AddPartitionsToTxnRequest', 'request', 24, '0-5', '3+', [
    F('Transactions', '[]AddPartitionsToTxnTransaction', '4+', fields=[
        F('TransactionalId', 'string', '4+'),
        F('ProducerId', 'int64', '4+'),
        F('ProducerEpoch', 'int16', '4+'),
        F('VerifyOnly', 'bool', '4+', default=False),
        F('Topics', '[]AddPartitionsToTxnTopic', '4+', fields=[
            F('Name', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
        ]),
    ]),
    F('V3AndBelowTransactionalId', 'string', '0-3'),
    F('V3AndBelowProducerId', 'int64', '0-3'),
    F('V3AndBelowProducerEpoch', 'int16', '0-3'),
    F('V3AndBelowTopics', '[]AddPartitionsToTxnTopic', '0-3', fields=[
        F('Name', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
    ]),
])
M('AddPartitionsToTxnResponse', 'response', 24, '0-5', '3+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '4+'),
    F('ResultsByTransaction', '[]AddPartitionsToTxnResult', '4+', fields=[
        F('TransactionalId', 'string', '4+'),
        F('TopicResults', '[]AddPartitionsToTxnTopicResult', '4+', fields=[
            F('Name', 'string', '0+'),
            F('ResultsByPartition', '[]AddPartitionsToTxnPartitionResult', '0+', fields=[
                F('PartitionIndex', 'int32', '0+'),
                F('PartitionErrorCode', 'int16', '0+'),
            ]),
        ]),
    ]),
    F('ResultsByTopicV3AndBelow', '[]AddPartitionsToTxnTopicResult', '0-3', fields=[
        F('Name', 'string', '0+'),
        F('ResultsByPartition', '[]AddPartitionsToTxnPartitionResult', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('PartitionErrorCode', 'int16', '0+'),
        ]),
    ]),
])
M('AddRaftVoterRequest', 'request', 80, '0-1', '0+', [
    F('ClusterId', 'string', '0+', nullable='0+'),
    F('TimeoutMs', 'int32', '0+'),
    F('VoterId', 'int32', '0+'),
    F('VoterDirectoryId', 'uuid', '0+'),
    F('Listeners', '[]Listener', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Host', 'string', '0+'),
        F('Port', 'uint16', '0+'),
    ]),
    F('AckWhenCommitted', 'bool', '1+', default=True),
])
M('AddRaftVoterResponse', 'response', 80, '0-1', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+'),
])
M('AllocateProducerIdsRequest', 'request', 67, '0', '0+', [
    F('BrokerId', 'int32', '0+'),
    F('BrokerEpoch', 'int64', '0+', default=-1),
])
M('AllocateProducerIdsResponse', 'response', 67, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ProducerIdStart', 'int64', '0+'),
    F('ProducerIdLen', 'int32', '0+'),
])
M('AlterClientQuotasRequest', 'request', 49, '0-1', '1+', [
    F('Entries', '[]EntryData', '0+', fields=[
        F('Entity', '[]EntityData', '0+', fields=[
            F('EntityType', 'string', '0+'),
            F('EntityName', 'string', '0+', nullable='0+'),
        ]),
        F('Ops', '[]OpData', '0+', fields=[
            F('Key', 'string', '0+'),
            F('Value', 'float64', '0+'),
            F('Remove', 'bool', '0+'),
        ]),
    ]),
    F('ValidateOnly', 'bool', '0+'),
])
M('AlterClientQuotasResponse', 'response', 49, '0-1', '1+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Entries', '[]EntryData', '0+', fields=[
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+'),
        F('Entity', '[]EntityData', '0+', fields=[
            F('EntityType', 'string', '0+'),
            F('EntityName', 'string', '0+', nullable='0+'),
        ]),
    ]),
])
M('AlterConfigsRequest', 'request', 33, '0-2', '2+', [
    F('Resources', '[]AlterConfigsResource', '0+', fields=[
        F('ResourceType', 'int8', '0+'),
        F('ResourceName', 'string', '0+'),
        F('Configs', '[]AlterableConfig', '0+', fields=[
            F('Name', 'string', '0+'),
            F('Value', 'string', '0+', nullable='0+'),
        ]),
    ]),
    F('ValidateOnly', 'bool', '0+'),
])
M('AlterConfigsResponse', 'response', 33, '0-2', '2+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Responses', '[]AlterConfigsResourceResponse', '0+', fields=[
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+'),
        F('ResourceType', 'int8', '0+'),
        F('ResourceName', 'string', '0+'),
    ]),
])
M('AlterPartitionReassignmentsRequest', 'request', 45, '0-1', '0+', [
    F('TimeoutMs', 'int32', '0+', default=60000),
    F('AllowReplicationFactorChange', 'bool', '1+', default=True),
    F('Topics', '[]ReassignableTopic', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Partitions', '[]ReassignablePartition', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('Replicas', '[]int32', '0+', nullable='0+', default=None),
        ]),
    ]),
])
M('AlterPartitionReassignmentsResponse', 'response', 45, '0-1', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('AllowReplicationFactorChange', 'bool', '1+', default=True),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+'),
    F('Responses', '[]ReassignableTopicResponse', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Partitions', '[]ReassignablePartitionResponse', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('ErrorMessage', 'string', '0+', nullable='0+'),
        ]),
    ]),
])
M('AlterPartitionRequest', 'request', 56, '2-3', '0+', [
    F('BrokerId', 'int32', '0+'),
    F('BrokerEpoch', 'int64', '0+', default=-1),
    F('Topics', '[]TopicData', '0+', fields=[
        F('TopicId', 'uuid', '2+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '0+'),
            F('NewIsr', '[]int32', '0-2'),
            F('NewIsrWithEpochs', '[]BrokerState', '3+', fields=[
                F('BrokerId', 'int32', '3+'),
                F('BrokerEpoch', 'int64', '3+', default=-1),
            ]),
            F('LeaderRecoveryState', 'int8', '1+', default=0),
            F('PartitionEpoch', 'int32', '0+'),
        ]),
    ]),
])
M('AlterPartitionResponse', 'response', 56, '2-3', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('Topics', '[]TopicData', '0+', fields=[
        F('TopicId', 'uuid', '2+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('LeaderId', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '0+'),
            F('Isr', '[]int32', '0+'),
            F('LeaderRecoveryState', 'int8', '1+', default=0),
            F('PartitionEpoch', 'int32', '0+'),
        ]),
    ]),
])
M('AlterReplicaLogDirsRequest', 'request', 34, '1-2', '2+', [
    F('Dirs', '[]AlterReplicaLogDir', '0+', fields=[
        F('Path', 'string', '0+'),
        F('Topics', '[]AlterReplicaLogDirTopic', '0+', fields=[
            F('Name', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
        ]),
    ]),
])
M('AlterReplicaLogDirsResponse', 'response', 34, '1-2', '2+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Results', '[]AlterReplicaLogDirTopicResult', '0+', fields=[
        F('TopicName', 'string', '0+'),
        F('Partitions', '[]AlterReplicaLogDirPartitionResult', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
        ]),
    ]),
])
M('AlterShareGroupOffsetsRequest', 'request', 91, '0', '0+', [
    F('GroupId', 'string', '0+'),
    F('Topics', '[]AlterShareGroupOffsetsRequestTopic', '0+', fields=[
        F('TopicName', 'string', '0+'),
        F('Partitions', '[]AlterShareGroupOffsetsRequestPartition', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('StartOffset', 'int64', '0+'),
        ]),
    ]),
])
M('AlterShareGroupOffsetsResponse', 'response', 91, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
    F('Responses', '[]AlterShareGroupOffsetsResponseTopic', '0+', fields=[
        F('TopicName', 'string', '0+'),
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]AlterShareGroupOffsetsResponsePartition', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
        ]),
    ]),
])
M('AlterUserScramCredentialsRequest', 'request', 51, '0', '0+', [
    F('Deletions', '[]ScramCredentialDeletion', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Mechanism', 'int8', '0+'),
    ]),
    F('Upsertions', '[]ScramCredentialUpsertion', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Mechanism', 'int8', '0+'),
        F('Iterations', 'int32', '0+'),
        F('Salt', 'bytes', '0+'),
        F('SaltedPassword', 'bytes', '0+'),
    ]),
])
M('AlterUserScramCredentialsResponse', 'response', 51, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Results', '[]AlterUserScramCredentialsResult', '0+', fields=[
        F('User', 'string', '0+'),
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+'),
    ]),
])
M('ApiVersionsRequest', 'request', 18, '0-5', '3+', [
    F('ClientSoftwareName', 'string', '3+'),
    F('ClientSoftwareVersion', 'string', '3+'),
    F('ClusterId', 'string', '5+', nullable='5+', default=None),
    F('NodeId', 'int32', '5+', default=-1),
])
M('ApiVersionsResponse', 'response', 18, '0-5', '3+', [
    F('ErrorCode', 'int16', '0+'),
    F('ApiKeys', '[]ApiVersion', '0+', fields=[
        F('ApiKey', 'int16', '0+'),
        F('MinVersion', 'int16', '0+'),
        F('MaxVersion', 'int16', '0+'),
    ]),
    F('ThrottleTimeMs', 'int32', '1+'),
    F('SupportedFeatures', '[]SupportedFeatureKey', '3+', tag=0, tagged='3+', fields=[
        F('Name', 'string', '3+'),
        F('MinVersion', 'int16', '3+'),
        F('MaxVersion', 'int16', '3+'),
    ]),
    F('FinalizedFeaturesEpoch', 'int64', '3+', tag=1, tagged='3+', default=-1),
    F('FinalizedFeatures', '[]FinalizedFeatureKey', '3+', tag=2, tagged='3+', fields=[
        F('Name', 'string', '3+'),
        F('MaxVersionLevel', 'int16', '3+'),
        F('MinVersionLevel', 'int16', '3+'),
    ]),
    F('ZkMigrationReady', 'bool', '3+', tag=3, tagged='3+', default=False),
])
M('AssignReplicasToDirsRequest', 'request', 73, '0', '0+', [
    F('BrokerId', 'int32', '0+'),
    F('BrokerEpoch', 'int64', '0+', default=-1),
    F('Directories', '[]DirectoryData', '0+', fields=[
        F('Id', 'uuid', '0+'),
        F('Topics', '[]TopicData', '0+', fields=[
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]PartitionData', '0+', fields=[
                F('PartitionIndex', 'int32', '0+'),
            ]),
        ]),
    ]),
])
M('AssignReplicasToDirsResponse', 'response', 73, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('Directories', '[]DirectoryData', '0+', fields=[
        F('Id', 'uuid', '0+'),
        F('Topics', '[]TopicData', '0+', fields=[
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]PartitionData', '0+', fields=[
                F('PartitionIndex', 'int32', '0+'),
                F('ErrorCode', 'int16', '0+'),
            ]),
        ]),
    ]),
])
M('BeginQuorumEpochRequest', 'request', 53, '0-1', '1+', [
    F('ClusterId', 'string', '0+', nullable='0+', default=None),
    F('VoterId', 'int32', '1+', default=-1),
    F('Topics', '[]TopicData', '0+', fields=[
        F('TopicName', 'string', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('VoterDirectoryId', 'uuid', '1+'),
            F('LeaderId', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '0+'),
        ]),
    ]),
    F('LeaderEndpoints', '[]LeaderEndpoint', '1+', fields=[
        F('Name', 'string', '1+'),
        F('Host', 'string', '1+'),
        F('Port', 'uint16', '1+'),
    ]),
])
M('BeginQuorumEpochResponse', 'response', 53, '0-1', '1+', [
    F('ErrorCode', 'int16', '0+'),
    F('Topics', '[]TopicData', '0+', fields=[
        F('TopicName', 'string', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('LeaderId', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '0+'),
        ]),
    ]),
    F('NodeEndpoints', '[]NodeEndpoint', '1+', tag=0, tagged='1+', fields=[
        F('NodeId', 'int32', '1+'),
        F('Host', 'string', '1+'),
        F('Port', 'uint16', '1+'),
    ]),
])
M('BrokerHeartbeatRequest', 'request', 63, '0-2', '0+', [
    F('BrokerId', 'int32', '0+'),
    F('BrokerEpoch', 'int64', '0+', default=-1),
    F('CurrentMetadataOffset', 'int64', '0+'),
    F('WantFence', 'bool', '0+'),
    F('WantShutDown', 'bool', '0+'),
    F('OfflineLogDirs', '[]uuid', '1+', tag=0, tagged='1+'),
    F('CordonedLogDirs', '[]uuid', '2+', nullable='2+', tag=1, tagged='2+', default=None),
])
M('BrokerHeartbeatResponse', 'response', 63, '0-2', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('IsCaughtUp', 'bool', '0+', default=False),
    F('IsFenced', 'bool', '0+', default=True),
    F('ShouldShutDown', 'bool', '0+'),
])
M('BrokerRegistrationRequest', 'request', 62, '0-4', '0+', [
    F('BrokerId', 'int32', '0+'),
    F('ClusterId', 'string', '0+'),
    F('IncarnationId', 'uuid', '0+'),
    F('Listeners', '[]Listener', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Host', 'string', '0+'),
        F('Port', 'uint16', '0+'),
        F('SecurityProtocol', 'int16', '0+'),
    ]),
    F('Features', '[]Feature', '0+', fields=[
        F('Name', 'string', '0+'),
        F('MinSupportedVersion', 'int16', '0+'),
        F('MaxSupportedVersion', 'int16', '0+'),
    ]),
    F('Rack', 'string', '0+', nullable='0+'),
    F('IsMigratingZkBroker', 'bool', '1+', default=False),
    F('LogDirs', '[]uuid', '2+'),
    F('PreviousBrokerEpoch', 'int64', '3+', default=-1),
])
M('BrokerRegistrationResponse', 'response', 62, '0-4', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('BrokerEpoch', 'int64', '0+', default=-1),
])
M('ConsumerGroupDescribeRequest', 'request', 69, '0-1', '0+', [
    F('GroupIds', '[]string', '0+'),
    F('IncludeAuthorizedOperations', 'bool', '0+'),
])
M('ConsumerGroupDescribeResponse', 'response', 69, '0-1', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Groups', '[]DescribedGroup', '0+', fields=[
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
        F('GroupId', 'string', '0+'),
        F('GroupState', 'string', '0+'),
        F('GroupEpoch', 'int32', '0+'),
        F('AssignmentEpoch', 'int32', '0+'),
        F('AssignorName', 'string', '0+'),
        F('Members', '[]Member', '0+', fields=[
            F('MemberId', 'string', '0+'),
            F('InstanceId', 'string', '0+', nullable='0+', default=None),
            F('RackId', 'string', '0+', nullable='0+', default=None),
            F('MemberEpoch', 'int32', '0+'),
            F('ClientId', 'string', '0+'),
            F('ClientHost', 'string', '0+'),
            F('SubscribedTopicNames', '[]string', '0+'),
            F('SubscribedTopicRegex', 'string', '0+', nullable='0+', default=None),
            F('Assignment', 'Assignment', '0+', fields=[
                F('TopicPartitions', '[]TopicPartitions', '0+', fields=[
                    F('TopicId', 'uuid', '0+'),
                    F('TopicName', 'string', '0+'),
                    F('Partitions', '[]int32', '0+'),
                ]),
            ]),
            F('TargetAssignment', 'Assignment', '0+', fields=[
                F('TopicPartitions', '[]TopicPartitions', '0+', fields=[
                    F('TopicId', 'uuid', '0+'),
                    F('TopicName', 'string', '0+'),
                    F('Partitions', '[]int32', '0+'),
                ]),
            ]),
            F('MemberType', 'int8', '1+', default=-1),
        ]),
        F('AuthorizedOperations', 'int32', '0+', default=-2147483648),
    ]),
])
M('ConsumerGroupHeartbeatRequest', 'request', 68, '0-1', '0+', [
    F('GroupId', 'string', '0+'),
    F('MemberId', 'string', '0+'),
    F('MemberEpoch', 'int32', '0+'),
    F('InstanceId', 'string', '0+', nullable='0+', default=None),
    F('RackId', 'string', '0+', nullable='0+', default=None),
    F('RebalanceTimeoutMs', 'int32', '0+', default=-1),
    F('SubscribedTopicNames', '[]string', '0+', nullable='0+', default=None),
    F('SubscribedTopicRegex', 'string', '1+', nullable='1+', default=None),
    F('ServerAssignor', 'string', '0+', nullable='0+', default=None),
    F('TopicPartitions', '[]TopicPartitions', '0+', nullable='0+', default=None, fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
    ]),
])
M('ConsumerGroupHeartbeatResponse', 'response', 68, '0-1', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
    F('MemberId', 'string', '0+', nullable='0+', default=None),
    F('MemberEpoch', 'int32', '0+'),
    F('HeartbeatIntervalMs', 'int32', '0+'),
    F('Assignment', 'Assignment', '0+', nullable='0+', default=None, fields=[
        F('TopicPartitions', '[]TopicPartitions', '0+', fields=[
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]int32', '0+'),
        ]),
    ]),
])
M('ControllerRegistrationRequest', 'request', 70, '0', '0+', [
    F('ControllerId', 'int32', '0+'),
    F('IncarnationId', 'uuid', '0+'),
    F('ZkMigrationReady', 'bool', '0+'),
    F('Listeners', '[]Listener', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Host', 'string', '0+'),
        F('Port', 'uint16', '0+'),
        F('SecurityProtocol', 'int16', '0+'),
    ]),
    F('Features', '[]Feature', '0+', fields=[
        F('Name', 'string', '0+'),
        F('MinSupportedVersion', 'int16', '0+'),
        F('MaxSupportedVersion', 'int16', '0+'),
    ]),
])
M('ControllerRegistrationResponse', 'response', 70, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+'),
])
M('CreateAclsRequest', 'request', 30, '1-3', '2+', [
    F('Creations', '[]AclCreation', '0+', fields=[
        F('ResourceType', 'int8', '0+'),
        F('ResourceName', 'string', '0+'),
        F('ResourcePatternType', 'int8', '1+', default=3),
        F('Principal', 'string', '0+'),
        F('Host', 'string', '0+'),
        F('Operation', 'int8', '0+'),
        F('PermissionType', 'int8', '0+'),
    ]),
])
M('CreateAclsResponse', 'response', 30, '1-3', '2+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Results', '[]AclCreationResult', '0+', fields=[
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+'),
    ]),
])
M('CreatePartitionsRequest', 'request', 37, '0-3', '2+', [
    F('Topics', '[]CreatePartitionsTopic', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Count', 'int32', '0+'),
        F('Assignments', '[]CreatePartitionsAssignment', '0+', nullable='0+', fields=[
            F('BrokerIds', '[]int32', '0+'),
        ]),
    ]),
    F('TimeoutMs', 'int32', '0+'),
    F('ValidateOnly', 'bool', '0+'),
])
M('CreatePartitionsResponse', 'response', 37, '0-3', '2+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Results', '[]CreatePartitionsTopicResult', '0+', fields=[
        F('Name', 'string', '0+'),
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
    ]),
])
M('CreateTopicsRequest', 'request', 19, '2-7', '5+', [
    F('Topics', '[]CreatableTopic', '0+', fields=[
        F('Name', 'string', '0+'),
        F('NumPartitions', 'int32', '0+'),
        F('ReplicationFactor', 'int16', '0+'),
        F('Assignments', '[]CreatableReplicaAssignment', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('BrokerIds', '[]int32', '0+'),
        ]),
        F('Configs', '[]CreatableTopicConfig', '0+', fields=[
            F('Name', 'string', '0+'),
            F('Value', 'string', '0+', nullable='0+'),
        ]),
    ]),
    F('timeoutMs', 'int32', '0+', default=60000),
    F('validateOnly', 'bool', '1+', default=False),
])
M('CreateTopicsResponse', 'response', 19, '2-7', '5+', [
    F('ThrottleTimeMs', 'int32', '2+'),
    F('Topics', '[]CreatableTopicResult', '0+', fields=[
        F('Name', 'string', '0+'),
        F('TopicId', 'uuid', '7+'),
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '1+', nullable='0+'),
        F('TopicConfigErrorCode', 'int16', '5+', tag=0, tagged='5+'),
        F('NumPartitions', 'int32', '5+', default=-1),
        F('ReplicationFactor', 'int16', '5+', default=-1),
        F('Configs', '[]CreatableTopicConfigs', '5+', nullable='5+', fields=[
            F('Name', 'string', '5+'),
            F('Value', 'string', '5+', nullable='5+'),
            F('ReadOnly', 'bool', '5+'),
            F('ConfigSource', 'int8', '5+', default=-1),
            F('IsSensitive', 'bool', '5+'),
        ]),
    ]),
])
M('DefaultPrincipalData', 'data', None, '0', '0+', [
    F('Type', 'string', '0+'),
    F('Name', 'string', '0+'),
    F('TokenAuthenticated', 'bool', '0+'),
])
M('DeleteAclsRequest', 'request', 31, '1-3', '2+', [
    F('Filters', '[]DeleteAclsFilter', '0+', fields=[
        F('ResourceTypeFilter', 'int8', '0+'),
        F('ResourceNameFilter', 'string', '0+', nullable='0+'),
        F('PatternTypeFilter', 'int8', '1+', default=3),
        F('PrincipalFilter', 'string', '0+', nullable='0+'),
        F('HostFilter', 'string', '0+', nullable='0+'),
        F('Operation', 'int8', '0+'),
        F('PermissionType', 'int8', '0+'),
    ]),
])
M('DeleteAclsResponse', 'response', 31, '1-3', '2+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('FilterResults', '[]DeleteAclsFilterResult', '0+', fields=[
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+'),
        F('MatchingAcls', '[]DeleteAclsMatchingAcl', '0+', fields=[
            F('ErrorCode', 'int16', '0+'),
            F('ErrorMessage', 'string', '0+', nullable='0+'),
            F('ResourceType', 'int8', '0+'),
            F('ResourceName', 'string', '0+'),
            F('PatternType', 'int8', '1+', default=3),
            F('Principal', 'string', '0+'),
            F('Host', 'string', '0+'),
            F('Operation', 'int8', '0+'),
            F('PermissionType', 'int8', '0+'),
        ]),
    ]),
])
M('DeleteGroupsRequest', 'request', 42, '0-3', '2+', [
    F('GroupsNames', '[]string', '0+'),
])
M('DeleteGroupsResponse', 'response', 42, '0-3', '2+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Results', '[]DeletableGroupResult', '0+', fields=[
        F('GroupId', 'string', '0+'),
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '3+', nullable='3+', default=None),
    ]),
])
M('DeleteRecordsRequest', 'request', 21, '0-2', '2+', [
    F('Topics', '[]DeleteRecordsTopic', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Partitions', '[]DeleteRecordsPartition', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('Offset', 'int64', '0+'),
        ]),
    ]),
    F('TimeoutMs', 'int32', '0+'),
])
M('DeleteRecordsResponse', 'response', 21, '0-2', '2+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Topics', '[]DeleteRecordsTopicResult', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Partitions', '[]DeleteRecordsPartitionResult', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('LowWatermark', 'int64', '0+'),
            F('ErrorCode', 'int16', '0+'),
        ]),
    ]),
])
M('DeleteShareGroupOffsetsRequest', 'request', 92, '0', '0+', [
    F('GroupId', 'string', '0+'),
    F('Topics', '[]DeleteShareGroupOffsetsRequestTopic', '0+', fields=[
        F('TopicName', 'string', '0+'),
    ]),
])
M('DeleteShareGroupOffsetsResponse', 'response', 92, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
    F('Responses', '[]DeleteShareGroupOffsetsResponseTopic', '0+', fields=[
        F('TopicName', 'string', '0+'),
        F('TopicId', 'uuid', '0+'),
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
    ]),
])
M('DeleteShareGroupStateRequest', 'request', 86, '0', '0+', [
    F('GroupId', 'string', '0+'),
    F('Topics', '[]DeleteStateData', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('Partition', 'int32', '0+'),
        ]),
    ]),
])
M('DeleteShareGroupStateResponse', 'response', 86, '0', '0+', [
    F('Results', '[]DeleteStateResult', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]PartitionResult', '0+', fields=[
            F('Partition', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
        ]),
    ]),
])
M('DeleteTopicsRequest', 'request', 20, '1-6', '4+', [
    F('Topics', '[]DeleteTopicState', '6+', fields=[
        F('Name', 'string', '6+', nullable='6+', default=None),
        F('TopicId', 'uuid', '6+'),
    ]),
    F('TopicNames', '[]string', '0-5'),
    F('TimeoutMs', 'int32', '0+'),
])
M('DeleteTopicsResponse', 'response', 20, '1-6', '4+', [
    F('ThrottleTimeMs', 'int32', '1+'),
    F('Responses', '[]DeletableTopicResult', '0+', fields=[
        F('Name', 'string', '0+', nullable='6+'),
        F('TopicId', 'uuid', '6+'),
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '5+', nullable='5+', default=None),
    ]),
])
M('DescribeAclsRequest', 'request', 29, '1-3', '2+', [
    F('ResourceTypeFilter', 'int8', '0+'),
    F('ResourceNameFilter', 'string', '0+', nullable='0+'),
    F('PatternTypeFilter', 'int8', '1+', default=3),
    F('PrincipalFilter', 'string', '0+', nullable='0+'),
    F('HostFilter', 'string', '0+', nullable='0+'),
    F('Operation', 'int8', '0+'),
    F('PermissionType', 'int8', '0+'),
])
M('DescribeAclsResponse', 'response', 29, '1-3', '2+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+'),
    F('Resources', '[]DescribeAclsResource', '0+', fields=[
        F('ResourceType', 'int8', '0+'),
        F('ResourceName', 'string', '0+'),
        F('PatternType', 'int8', '1+', default=3),
        F('Acls', '[]AclDescription', '0+', fields=[
            F('Principal', 'string', '0+'),
            F('Host', 'string', '0+'),
            F('Operation', 'int8', '0+'),
            F('PermissionType', 'int8', '0+'),
        ]),
    ]),
])
M('DescribeClientQuotasRequest', 'request', 48, '0-1', '1+', [
    F('Components', '[]ComponentData', '0+', fields=[
        F('EntityType', 'string', '0+'),
        F('MatchType', 'int8', '0+'),
        F('Match', 'string', '0+', nullable='0+'),
    ]),
    F('Strict', 'bool', '0+'),
])
M('DescribeClientQuotasResponse', 'response', 48, '0-1', '1+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+'),
    F('Entries', '[]EntryData', '0+', nullable='0+', fields=[
        F('Entity', '[]EntityData', '0+', fields=[
            F('EntityType', 'string', '0+'),
            F('EntityName', 'string', '0+', nullable='0+'),
        ]),
        F('Values', '[]ValueData', '0+', fields=[
            F('Key', 'string', '0+'),
            F('Value', 'float64', '0+'),
        ]),
    ]),
])
M('DescribeClusterRequest', 'request', 60, '0-2', '0+', [
    F('IncludeClusterAuthorizedOperations', 'bool', '0+'),
    F('EndpointType', 'int8', '1+', default=1),
    F('IncludeFencedBrokers', 'bool', '2+'),
])
M('DescribeClusterResponse', 'response', 60, '0-2', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
    F('EndpointType', 'int8', '1+', default=1),
    F('ClusterId', 'string', '0+'),
    F('ControllerId', 'int32', '0+', default=-1),
    F('Brokers', '[]DescribeClusterBroker', '0+', fields=[
        F('BrokerId', 'int32', '0+'),
        F('Host', 'string', '0+'),
        F('Port', 'int32', '0+'),
        F('Rack', 'string', '0+', nullable='0+', default=None),
        F('IsFenced', 'bool', '2+'),
    ]),
    F('ClusterAuthorizedOperations', 'int32', '0+', default=-2147483648),
])
M('DescribeConfigsRequest', 'request', 32, '1-4', '4+', [
    F('Resources', '[]DescribeConfigsResource', '0+', fields=[
        F('ResourceType', 'int8', '0+'),
        F('ResourceName', 'string', '0+'),
        F('ConfigurationKeys', '[]string', '0+', nullable='0+'),
    ]),
    F('IncludeSynonyms', 'bool', '1+', default=False),
    F('IncludeDocumentation', 'bool', '3+', default=False),
])
M('DescribeConfigsResponse', 'response', 32, '1-4', '4+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Results', '[]DescribeConfigsResult', '0+', fields=[
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+'),
        F('ResourceType', 'int8', '0+'),
        F('ResourceName', 'string', '0+'),
        F('Configs', '[]DescribeConfigsResourceResult', '0+', fields=[
            F('Name', 'string', '0+'),
            F('Value', 'string', '0+', nullable='0+'),
            F('ReadOnly', 'bool', '0+'),
            F('ConfigSource', 'int8', '1+', default=-1),
            F('IsSensitive', 'bool', '0+'),
            F('Synonyms', '[]DescribeConfigsSynonym', '1+', fields=[
                F('Name', 'string', '1+'),
                F('Value', 'string', '1+', nullable='0+'),
                F('Source', 'int8', '1+'),
            ]),
            F('ConfigType', 'int8', '3+', default=0),
            F('Documentation', 'string', '3+', nullable='0+'),
        ]),
    ]),
])
M('DescribeGroupsRequest', 'request', 15, '0-6', '5+', [
    F('Groups', '[]string', '0+'),
    F('IncludeAuthorizedOperations', 'bool', '3+'),
])
M('DescribeGroupsResponse', 'response', 15, '0-6', '5+', [
    F('ThrottleTimeMs', 'int32', '1+'),
    F('Groups', '[]DescribedGroup', '0+', fields=[
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '6+', nullable='6+', default=None),
        F('GroupId', 'string', '0+'),
        F('GroupState', 'string', '0+'),
        F('ProtocolType', 'string', '0+'),
        F('ProtocolData', 'string', '0+'),
        F('Members', '[]DescribedGroupMember', '0+', fields=[
            F('MemberId', 'string', '0+'),
            F('GroupInstanceId', 'string', '4+', nullable='4+', default=None),
            F('ClientId', 'string', '0+'),
            F('ClientHost', 'string', '0+'),
            F('MemberMetadata', 'bytes', '0+'),
            F('MemberAssignment', 'bytes', '0+'),
        ]),
        F('AuthorizedOperations', 'int32', '3+', default=-2147483648),
    ]),
])
M('DescribeLogDirsRequest', 'request', 35, '1-5', '2+', [
    F('Topics', '[]DescribableLogDirTopic', '0+', nullable='0+', fields=[
        F('Topic', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
    ]),
])
M('DescribeLogDirsResponse', 'response', 35, '1-5', '2+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '3+'),
    F('Results', '[]DescribeLogDirsResult', '0+', fields=[
        F('ErrorCode', 'int16', '0+'),
        F('LogDir', 'string', '0+'),
        F('Topics', '[]DescribeLogDirsTopic', '0+', fields=[
            F('Name', 'string', '0+'),
            F('Partitions', '[]DescribeLogDirsPartition', '0+', fields=[
                F('PartitionIndex', 'int32', '0+'),
                F('PartitionSize', 'int64', '0+'),
                F('OffsetLag', 'int64', '0+'),
                F('IsFutureKey', 'bool', '0+'),
            ]),
        ]),
        F('TotalBytes', 'int64', '4+', default=-1),
        F('UsableBytes', 'int64', '4+', default=-1),
        F('IsCordoned', 'bool', '5+', default=False),
    ]),
])
M('DescribeProducersRequest', 'request', 61, '0', '0+', [
    F('Topics', '[]TopicRequest', '0+', fields=[
        F('Name', 'string', '0+'),
        F('PartitionIndexes', '[]int32', '0+'),
    ]),
])
M('DescribeProducersResponse', 'response', 61, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Topics', '[]TopicResponse', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Partitions', '[]PartitionResponse', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
            F('ActiveProducers', '[]ProducerState', '0+', fields=[
                F('ProducerId', 'int64', '0+'),
                F('ProducerEpoch', 'int32', '0+'),
                F('LastSequence', 'int32', '0+', default=-1),
                F('LastTimestamp', 'int64', '0+', default=-1),
                F('CoordinatorEpoch', 'int32', '0+'),
                F('CurrentTxnStartOffset', 'int64', '0+', default=-1),
            ]),
        ]),
    ]),
])
M('DescribeQuorumRequest', 'request', 55, '0-2', '0+', [
    F('Topics', '[]TopicData', '0+', fields=[
        F('TopicName', 'string', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
        ]),
    ]),
])
M('DescribeQuorumResponse', 'response', 55, '0-2', '0+', [
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '2+', nullable='2+'),
    F('Topics', '[]TopicData', '0+', fields=[
        F('TopicName', 'string', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('ErrorMessage', 'string', '2+', nullable='2+'),
            F('LeaderId', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '0+'),
            F('HighWatermark', 'int64', '0+'),
            F('CurrentVoters', '[]ReplicaState', '0+', fields=[
                F('ReplicaId', 'int32', '0+'),
                F('ReplicaDirectoryId', 'uuid', '2+'),
                F('LogEndOffset', 'int64', '0+'),
                F('LastFetchTimestamp', 'int64', '1+', default=-1),
                F('LastCaughtUpTimestamp', 'int64', '1+', default=-1),
            ]),
            F('Observers', '[]ReplicaState', '0+', fields=[
                F('ReplicaId', 'int32', '0+'),
                F('ReplicaDirectoryId', 'uuid', '2+'),
                F('LogEndOffset', 'int64', '0+'),
                F('LastFetchTimestamp', 'int64', '1+', default=-1),
                F('LastCaughtUpTimestamp', 'int64', '1+', default=-1),
            ]),
        ]),
    ]),
    F('Nodes', '[]Node', '2+', fields=[
        F('NodeId', 'int32', '2+'),
        F('Listeners', '[]Listener', '2+', fields=[
            F('Name', 'string', '2+'),
            F('Host', 'string', '2+'),
            F('Port', 'uint16', '2+'),
        ]),
    ]),
])
M('DescribeShareGroupOffsetsRequest', 'request', 90, '0-1', '0+', [
    F('Groups', '[]DescribeShareGroupOffsetsRequestGroup', '0+', fields=[
        F('GroupId', 'string', '0+'),
        F('Topics', '[]DescribeShareGroupOffsetsRequestTopic', '0+', nullable='0+', fields=[
            F('TopicName', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
        ]),
    ]),
])
M('DescribeShareGroupOffsetsResponse', 'response', 90, '0-1', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Groups', '[]DescribeShareGroupOffsetsResponseGroup', '0+', fields=[
        F('GroupId', 'string', '0+'),
        F('Topics', '[]DescribeShareGroupOffsetsResponseTopic', '0+', fields=[
            F('TopicName', 'string', '0+'),
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]DescribeShareGroupOffsetsResponsePartition', '0+', fields=[
                F('PartitionIndex', 'int32', '0+'),
                F('StartOffset', 'int64', '0+'),
                F('LeaderEpoch', 'int32', '0+'),
                F('Lag', 'int64', '1+', default=-1),
                F('ErrorCode', 'int16', '0+'),
                F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
            ]),
        ]),
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
    ]),
])
M('DescribeTopicPartitionsRequest', 'request', 75, '0', '0+', [
    F('Topics', '[]TopicRequest', '0+', fields=[
        F('Name', 'string', '0+'),
    ]),
    F('ResponsePartitionLimit', 'int32', '0+', default=2000),
    F('Cursor', 'Cursor', '0+', nullable='0+', default=None, fields=[
        F('TopicName', 'string', '0+'),
        F('PartitionIndex', 'int32', '0+'),
    ]),
])
M('DescribeTopicPartitionsResponse', 'response', 75, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Topics', '[]DescribeTopicPartitionsResponseTopic', '0+', fields=[
        F('ErrorCode', 'int16', '0+'),
        F('Name', 'string', '0+', nullable='0+'),
        F('TopicId', 'uuid', '0+'),
        F('IsInternal', 'bool', '0+', default=False),
        F('Partitions', '[]DescribeTopicPartitionsResponsePartition', '0+', fields=[
            F('ErrorCode', 'int16', '0+'),
            F('PartitionIndex', 'int32', '0+'),
            F('LeaderId', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '0+', default=-1),
            F('ReplicaNodes', '[]int32', '0+'),
            F('IsrNodes', '[]int32', '0+'),
            F('EligibleLeaderReplicas', '[]int32', '0+', nullable='0+', default=None),
            F('LastKnownElr', '[]int32', '0+', nullable='0+', default=None),
            F('OfflineReplicas', '[]int32', '0+'),
        ]),
        F('TopicAuthorizedOperations', 'int32', '0+', default=-2147483648),
    ]),
    F('NextCursor', 'Cursor', '0+', nullable='0+', default=None, fields=[
        F('TopicName', 'string', '0+'),
        F('PartitionIndex', 'int32', '0+'),
    ]),
])
M('DescribeTransactionsRequest', 'request', 65, '0', '0+', [
    F('TransactionalIds', '[]string', '0+'),
])
M('DescribeTransactionsResponse', 'response', 65, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('TransactionStates', '[]TransactionState', '0+', fields=[
        F('ErrorCode', 'int16', '0+'),
        F('TransactionalId', 'string', '0+'),
        F('TransactionState', 'string', '0+'),
        F('TransactionTimeoutMs', 'int32', '0+'),
        F('TransactionStartTimeMs', 'int64', '0+'),
        F('ProducerId', 'int64', '0+'),
        F('ProducerEpoch', 'int16', '0+'),
        F('Topics', '[]TopicData', '0+', fields=[
            F('Topic', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
        ]),
    ]),
])
M('DescribeUserScramCredentialsRequest', 'request', 50, '0', '0+', [
    F('Users', '[]UserName', '0+', nullable='0+', fields=[
        F('Name', 'string', '0+'),
    ]),
])
M('DescribeUserScramCredentialsResponse', 'response', 50, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+'),
    F('Results', '[]DescribeUserScramCredentialsResult', '0+', fields=[
        F('User', 'string', '0+'),
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+'),
        F('CredentialInfos', '[]CredentialInfo', '0+', fields=[
            F('Mechanism', 'int8', '0+'),
            F('Iterations', 'int32', '0+'),
        ]),
    ]),
])
M('ElectLeadersRequest', 'request', 43, '0-2', '2+', [
    F('ElectionType', 'int8', '1+'),
    F('TopicPartitions', '[]TopicPartitions', '0+', nullable='0+', fields=[
        F('Topic', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
    ]),
    F('TimeoutMs', 'int32', '0+', default=60000),
])
M('ElectLeadersResponse', 'response', 43, '0-2', '2+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '1+'),
    F('ReplicaElectionResults', '[]ReplicaElectionResult', '0+', fields=[
        F('Topic', 'string', '0+'),
        F('PartitionResult', '[]PartitionResult', '0+', fields=[
            F('PartitionId', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('ErrorMessage', 'string', '0+', nullable='0+'),
        ]),
    ]),
])
M('EndQuorumEpochRequest', 'request', 54, '0-1', '1+', [
    F('ClusterId', 'string', '0+', nullable='0+', default=None),
    F('Topics', '[]TopicData', '0+', fields=[
        F('TopicName', 'string', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('LeaderId', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '0+'),
            F('PreferredSuccessors', '[]int32', '0'),
            F('PreferredCandidates', '[]ReplicaInfo', '1+', fields=[
                F('CandidateId', 'int32', '1+'),
                F('CandidateDirectoryId', 'uuid', '1+'),
            ]),
        ]),
    ]),
    F('LeaderEndpoints', '[]LeaderEndpoint', '1+', fields=[
        F('Name', 'string', '1+'),
        F('Host', 'string', '1+'),
        F('Port', 'uint16', '1+'),
    ]),
])
M('EndQuorumEpochResponse', 'response', 54, '0-1', '1+', [
    F('ErrorCode', 'int16', '0+'),
    F('Topics', '[]TopicData', '0+', fields=[
        F('TopicName', 'string', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('LeaderId', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '0+'),
        ]),
    ]),
    F('NodeEndpoints', '[]NodeEndpoint', '1+', tag=0, tagged='1+', fields=[
        F('NodeId', 'int32', '1+'),
        F('Host', 'string', '1+'),
        F('Port', 'uint16', '1+'),
    ]),
])
M('EndTxnRequest', 'request', 26, '0-5', '3+', [
    F('TransactionalId', 'string', '0+'),
    F('ProducerId', 'int64', '0+'),
    F('ProducerEpoch', 'int16', '0+'),
    F('Committed', 'bool', '0+'),
])
M('EndTxnResponse', 'response', 26, '0-5', '3+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ProducerId', 'int64', '5+', default=-1),
    F('ProducerEpoch', 'int16', '5+', default=-1),
])
M('EnvelopeRequest', 'request', 58, '0', '0+', [
    F('RequestData', 'bytes', '0+'),
    F('RequestPrincipal', 'bytes', '0+', nullable='0+'),
    F('ClientHostAddress', 'bytes', '0+'),
])
M('EnvelopeResponse', 'response', 58, '0', '0+', [
    F('ResponseData', 'bytes', '0+', nullable='0+', default=None),
    F('ErrorCode', 'int16', '0+'),
])
M('FetchRequest', 'request', 1, '4-18', '12+', [
    F('ClusterId', 'string', '12+', nullable='12+', tag=0, tagged='12+', default=None),
    F('ReplicaId', 'int32', '0-14', default=-1),
    F('ReplicaState', 'ReplicaState', '15+', tag=1, tagged='15+', fields=[
        F('ReplicaId', 'int32', '15+', default=-1),
        F('ReplicaEpoch', 'int64', '15+', default=-1),
    ]),
    F('MaxWaitMs', 'int32', '0+'),
    F('MinBytes', 'int32', '0+'),
    F('MaxBytes', 'int32', '3+', default=2147483647),
    F('IsolationLevel', 'int8', '4+', default=0),
    F('SessionId', 'int32', '7+', default=0),
    F('SessionEpoch', 'int32', '7+', default=-1),
    F('Topics', '[]FetchTopic', '0+', fields=[
        F('Topic', 'string', '0-12'),
        F('TopicId', 'uuid', '13+'),
        F('Partitions', '[]FetchPartition', '0+', fields=[
            F('Partition', 'int32', '0+'),
            F('CurrentLeaderEpoch', 'int32', '9+', default=-1),
            F('FetchOffset', 'int64', '0+'),
            F('LastFetchedEpoch', 'int32', '12+', default=-1),
            F('LogStartOffset', 'int64', '5+', default=-1),
            F('PartitionMaxBytes', 'int32', '0+'),
            F('ReplicaDirectoryId', 'uuid', '17+', tag=0, tagged='17+'),
            F('HighWatermark', 'int64', '18+', tag=1, tagged='18+', default=9223372036854775807),
        ]),
    ]),
    F('ForgottenTopicsData', '[]ForgottenTopic', '7+', fields=[
        F('Topic', 'string', '7-12'),
        F('TopicId', 'uuid', '13+'),
        F('Partitions', '[]int32', '7+'),
    ]),
    F('RackId', 'string', '11+', default=''),
])
M('FetchResponse', 'response', 1, '4-18', '12+', [
    F('ThrottleTimeMs', 'int32', '1+'),
    F('ErrorCode', 'int16', '7+'),
    F('SessionId', 'int32', '7+', default=0),
    F('Responses', '[]FetchableTopicResponse', '0+', fields=[
        F('Topic', 'string', '0-12'),
        F('TopicId', 'uuid', '13+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('HighWatermark', 'int64', '0+'),
            F('LastStableOffset', 'int64', '4+', default=-1),
            F('LogStartOffset', 'int64', '5+', default=-1),
            F('DivergingEpoch', 'EpochEndOffset', '12+', tag=0, tagged='12+', fields=[
                F('Epoch', 'int32', '12+', default=-1),
                F('EndOffset', 'int64', '12+', default=-1),
            ]),
            F('CurrentLeader', 'LeaderIdAndEpoch', '12+', tag=1, tagged='12+', fields=[
                F('LeaderId', 'int32', '12+', default=-1),
                F('LeaderEpoch', 'int32', '12+', default=-1),
            ]),
            F('SnapshotId', 'SnapshotId', '12+', tag=2, tagged='12+', fields=[
                F('EndOffset', 'int64', '0+', default=-1),
                F('Epoch', 'int32', '0+', default=-1),
            ]),
            F('AbortedTransactions', '[]AbortedTransaction', '4+', nullable='4+', fields=[
                F('ProducerId', 'int64', '4+'),
                F('FirstOffset', 'int64', '4+'),
            ]),
            F('PreferredReadReplica', 'int32', '11+', default=-1),
            F('Records', 'records', '0+', nullable='0+'),
        ]),
    ]),
    F('NodeEndpoints', '[]NodeEndpoint', '16+', tag=0, tagged='16+', fields=[
        F('NodeId', 'int32', '16+'),
        F('Host', 'string', '16+'),
        F('Port', 'int32', '16+'),
        F('Rack', 'string', '16+', nullable='16+', default=None),
    ]),
])
M('FetchSnapshotRequest', 'request', 59, '0-1', '0+', [
    F('ClusterId', 'string', '0+', nullable='0+', tag=0, tagged='0+', default=None),
    F('ReplicaId', 'int32', '0+', default=-1),
    F('MaxBytes', 'int32', '0+', default=2147483647),
    F('Topics', '[]TopicSnapshot', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Partitions', '[]PartitionSnapshot', '0+', fields=[
            F('Partition', 'int32', '0+'),
            F('CurrentLeaderEpoch', 'int32', '0+'),
            F('SnapshotId', 'SnapshotId', '0+', fields=[
                F('EndOffset', 'int64', '0+'),
                F('Epoch', 'int32', '0+'),
            ]),
            F('Position', 'int64', '0+'),
            F('ReplicaDirectoryId', 'uuid', '1+', tag=0, tagged='1+'),
        ]),
    ]),
])
M('FetchSnapshotResponse', 'response', 59, '0-1', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('Topics', '[]TopicSnapshot', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Partitions', '[]PartitionSnapshot', '0+', fields=[
            F('Index', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('SnapshotId', 'SnapshotId', '0+', fields=[
                F('EndOffset', 'int64', '0+'),
                F('Epoch', 'int32', '0+'),
            ]),
            F('CurrentLeader', 'LeaderIdAndEpoch', '0+', tag=0, tagged='0+', fields=[
                F('LeaderId', 'int32', '0+'),
                F('LeaderEpoch', 'int32', '0+'),
            ]),
            F('Size', 'int64', '0+'),
            F('Position', 'int64', '0+'),
            F('UnalignedRecords', 'records', '0+'),
        ]),
    ]),
    F('NodeEndpoints', '[]NodeEndpoint', '1+', tag=0, tagged='1+', fields=[
        F('NodeId', 'int32', '1+'),
        F('Host', 'string', '1+'),
        F('Port', 'uint16', '1+'),
    ]),
])
M('FindCoordinatorRequest', 'request', 10, '0-6', '3+', [
    F('Key', 'string', '0-3'),
    F('KeyType', 'int8', '1+', default=0),
    F('CoordinatorKeys', '[]string', '4+'),
])
M('FindCoordinatorResponse', 'response', 10, '0-6', '3+', [
    F('ThrottleTimeMs', 'int32', '1+'),
    F('ErrorCode', 'int16', '0-3'),
    F('ErrorMessage', 'string', '1-3', nullable='1-3'),
    F('NodeId', 'int32', '0-3'),
    F('Host', 'string', '0-3'),
    F('Port', 'int32', '0-3'),
    F('Coordinators', '[]Coordinator', '4+', fields=[
        F('Key', 'string', '4+'),
        F('NodeId', 'int32', '4+'),
        F('Host', 'string', '4+'),
        F('Port', 'int32', '4+'),
        F('ErrorCode', 'int16', '4+'),
        F('ErrorMessage', 'string', '4+', nullable='4+'),
    ]),
])
M('HeartbeatRequest', 'request', 12, '0-4', '4+', [
    F('GroupId', 'string', '0+'),
    F('GenerationId', 'int32', '0+'),
    F('MemberId', 'string', '0+'),
    F('GroupInstanceId', 'string', '3+', nullable='3+', default=None),
])
M('HeartbeatResponse', 'response', 12, '0-4', '4+', [
    F('ThrottleTimeMs', 'int32', '1+'),
    F('ErrorCode', 'int16', '0+'),
])
M('IncrementalAlterConfigsRequest', 'request', 44, '0-1', '1+', [
    F('Resources', '[]AlterConfigsResource', '0+', fields=[
        F('ResourceType', 'int8', '0+'),
        F('ResourceName', 'string', '0+'),
        F('Configs', '[]AlterableConfig', '0+', fields=[
            F('Name', 'string', '0+'),
            F('ConfigOperation', 'int8', '0+'),
            F('Value', 'string', '0+', nullable='0+'),
        ]),
    ]),
    F('ValidateOnly', 'bool', '0+'),
])
M('IncrementalAlterConfigsResponse', 'response', 44, '0-1', '1+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Responses', '[]AlterConfigsResourceResponse', '0+', fields=[
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+'),
        F('ResourceType', 'int8', '0+'),
        F('ResourceName', 'string', '0+'),
    ]),
])
M('InitProducerIdRequest', 'request', 22, '0-6', '2+', [
    F('TransactionalId', 'string', '0+', nullable='0+'),
    F('TransactionTimeoutMs', 'int32', '0+'),
    F('ProducerId', 'int64', '3+', default=-1),
    F('ProducerEpoch', 'int16', '3+', default=-1),
    F('Enable2Pc', 'bool', '6+', default=False),
    F('KeepPreparedTxn', 'bool', '6+', default=False),
])
M('InitProducerIdResponse', 'response', 22, '0-6', '2+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ProducerId', 'int64', '0+', default=-1),
    F('ProducerEpoch', 'int16', '0+'),
    F('OngoingTxnProducerId', 'int64', '6+', default=-1),
    F('OngoingTxnProducerEpoch', 'int16', '6+', default=-1),
])
M('InitializeShareGroupStateRequest', 'request', 83, '0', '0+', [
    F('GroupId', 'string', '0+'),
    F('Topics', '[]InitializeStateData', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('Partition', 'int32', '0+'),
            F('StateEpoch', 'int32', '0+'),
            F('StartOffset', 'int64', '0+'),
        ]),
    ]),
])
M('InitializeShareGroupStateResponse', 'response', 83, '0', '0+', [
    F('Results', '[]InitializeStateResult', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]PartitionResult', '0+', fields=[
            F('Partition', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
        ]),
    ]),
])
M('JoinGroupRequest', 'request', 11, '0-9', '6+', [
    F('GroupId', 'string', '0+'),
    F('SessionTimeoutMs', 'int32', '0+'),
    F('RebalanceTimeoutMs', 'int32', '1+', default=-1),
    F('MemberId', 'string', '0+'),
    F('GroupInstanceId', 'string', '5+', nullable='5+', default=None),
    F('ProtocolType', 'string', '0+'),
    F('Protocols', '[]JoinGroupRequestProtocol', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Metadata', 'bytes', '0+'),
    ]),
    F('Reason', 'string', '8+', nullable='8+', default=None),
])
M('JoinGroupResponse', 'response', 11, '0-9', '6+', [
    F('ThrottleTimeMs', 'int32', '2+'),
    F('ErrorCode', 'int16', '0+'),
    F('GenerationId', 'int32', '0+', default=-1),
    F('ProtocolType', 'string', '7+', nullable='7+', default=None),
    F('ProtocolName', 'string', '0+', nullable='7+'),
    F('Leader', 'string', '0+'),
    F('SkipAssignment', 'bool', '9+', default=False),
    F('MemberId', 'string', '0+'),
    F('Members', '[]JoinGroupResponseMember', '0+', fields=[
        F('MemberId', 'string', '0+'),
        F('GroupInstanceId', 'string', '5+', nullable='5+', default=None),
        F('Metadata', 'bytes', '0+'),
    ]),
])
M('KRaftVersionRecord', 'data', None, '0', '0+', [
    F('Version', 'int16', '0+'),
    F('KRaftVersion', 'int16', '0+'),
])
M('LeaderChangeMessage', 'data', None, '0-1', '0+', [
    F('Version', 'int16', '0+'),
    F('LeaderId', 'int32', '0+'),
    F('Voters', '[]Voter', '0+', fields=[
        F('VoterId', 'int32', '0+'),
        F('VoterDirectoryId', 'uuid', '1+'),
    ]),
    F('GrantingVoters', '[]Voter', '0+', fields=[
        F('VoterId', 'int32', '0+'),
        F('VoterDirectoryId', 'uuid', '1+'),
    ]),
])
M('LeaveGroupRequest', 'request', 13, '0-5', '4+', [
    F('GroupId', 'string', '0+'),
    F('MemberId', 'string', '0-2'),
    F('Members', '[]MemberIdentity', '3+', fields=[
        F('MemberId', 'string', '3+'),
        F('GroupInstanceId', 'string', '3+', nullable='3+', default=None),
        F('Reason', 'string', '5+', nullable='5+', default=None),
    ]),
])
M('LeaveGroupResponse', 'response', 13, '0-5', '4+', [
    F('ThrottleTimeMs', 'int32', '1+'),
    F('ErrorCode', 'int16', '0+'),
    F('Members', '[]MemberResponse', '3+', fields=[
        F('MemberId', 'string', '3+'),
        F('GroupInstanceId', 'string', '3+', nullable='3+'),
        F('ErrorCode', 'int16', '3+'),
    ]),
])
M('ListGroupsRequest', 'request', 16, '0-5', '3+', [
    F('StatesFilter', '[]string', '4+'),
    F('TypesFilter', '[]string', '5+'),
])
M('ListGroupsResponse', 'response', 16, '0-5', '3+', [
    F('ThrottleTimeMs', 'int32', '1+'),
    F('ErrorCode', 'int16', '0+'),
    F('Groups', '[]ListedGroup', '0+', fields=[
        F('GroupId', 'string', '0+'),
        F('ProtocolType', 'string', '0+'),
        F('GroupState', 'string', '4+'),
        F('GroupType', 'string', '5+'),
    ]),
])
M('ListOffsetsRequest', 'request', 2, '1-11', '6+', [
    F('ReplicaId', 'int32', '0+'),
    F('IsolationLevel', 'int8', '2+'),
    F('Topics', '[]ListOffsetsTopic', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Partitions', '[]ListOffsetsPartition', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('CurrentLeaderEpoch', 'int32', '4+', default=-1),
            F('Timestamp', 'int64', '0+'),
        ]),
    ]),
    F('TimeoutMs', 'int32', '10+'),
])
M('ListOffsetsResponse', 'response', 2, '1-11', '6+', [
    F('ThrottleTimeMs', 'int32', '2+'),
    F('Topics', '[]ListOffsetsTopicResponse', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Partitions', '[]ListOffsetsPartitionResponse', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('Timestamp', 'int64', '1+', default=-1),
            F('Offset', 'int64', '1+', default=-1),
            F('LeaderEpoch', 'int32', '4+', default=-1),
        ]),
    ]),
])
M('ListPartitionReassignmentsRequest', 'request', 46, '0', '0+', [
    F('TimeoutMs', 'int32', '0+', default=60000),
    F('Topics', '[]ListPartitionReassignmentsTopics', '0+', nullable='0+', default=None, fields=[
        F('Name', 'string', '0+'),
        F('PartitionIndexes', '[]int32', '0+'),
    ]),
])
M('ListPartitionReassignmentsResponse', 'response', 46, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+'),
    F('Topics', '[]OngoingTopicReassignment', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Partitions', '[]OngoingPartitionReassignment', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('Replicas', '[]int32', '0+'),
            F('AddingReplicas', '[]int32', '0+'),
            F('RemovingReplicas', '[]int32', '0+'),
        ]),
    ]),
])
M('ListTransactionsRequest', 'request', 66, '0-2', '0+', [
    F('StateFilters', '[]string', '0+'),
    F('ProducerIdFilters', '[]int64', '0+'),
    F('DurationFilter', 'int64', '1+', default=-1),
    F('TransactionalIdPattern', 'string', '2+', nullable='2+', default=None),
])
M('ListTransactionsResponse', 'response', 66, '0-2', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('UnknownStateFilters', '[]string', '0+'),
    F('TransactionStates', '[]TransactionState', '0+', fields=[
        F('TransactionalId', 'string', '0+'),
        F('ProducerId', 'int64', '0+'),
        F('TransactionState', 'string', '0+'),
    ]),
])
M('MetadataRequest', 'request', 3, '0-13', '9+', [
    F('Topics', '[]MetadataRequestTopic', '0+', nullable='1+', fields=[
        F('TopicId', 'uuid', '10+'),
        F('Name', 'string', '0+', nullable='10+'),
    ]),
    F('AllowAutoTopicCreation', 'bool', '4+', default=True),
    F('IncludeClusterAuthorizedOperations', 'bool', '8-10'),
    F('IncludeTopicAuthorizedOperations', 'bool', '8+'),
])
M('MetadataResponse', 'response', 3, '0-13', '9+', [
    F('ThrottleTimeMs', 'int32', '3+'),
    F('Brokers', '[]MetadataResponseBroker', '0+', fields=[
        F('NodeId', 'int32', '0+'),
        F('Host', 'string', '0+'),
        F('Port', 'int32', '0+'),
        F('Rack', 'string', '1+', nullable='1+', default=None),
    ]),
    F('ClusterId', 'string', '2+', nullable='2+', default=None),
    F('ControllerId', 'int32', '1+', default=-1),
    F('Topics', '[]MetadataResponseTopic', '0+', fields=[
        F('ErrorCode', 'int16', '0+'),
        F('Name', 'string', '0+', nullable='12+'),
        F('TopicId', 'uuid', '10+'),
        F('IsInternal', 'bool', '1+', default=False),
        F('Partitions', '[]MetadataResponsePartition', '0+', fields=[
            F('ErrorCode', 'int16', '0+'),
            F('PartitionIndex', 'int32', '0+'),
            F('LeaderId', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '7+', default=-1),
            F('ReplicaNodes', '[]int32', '0+'),
            F('IsrNodes', '[]int32', '0+'),
            F('OfflineReplicas', '[]int32', '5+'),
        ]),
        F('TopicAuthorizedOperations', 'int32', '8+', default=-2147483648),
    ]),
    F('ClusterAuthorizedOperations', 'int32', '8-10', default=-2147483648),
    F('ErrorCode', 'int16', '13+'),
])
M('OffsetCommitRequest', 'request', 8, '2-10', '8+', [
    F('GroupId', 'string', '0+'),
    F('GenerationIdOrMemberEpoch', 'int32', '1+', default=-1),
    F('MemberId', 'string', '1+'),
    F('GroupInstanceId', 'string', '7+', nullable='7+', default=None),
    F('RetentionTimeMs', 'int64', '2-4', default=-1),
    F('Topics', '[]OffsetCommitRequestTopic', '0+', fields=[
        F('Name', 'string', '0-9'),
        F('TopicId', 'uuid', '10+'),
        F('Partitions', '[]OffsetCommitRequestPartition', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('CommittedOffset', 'int64', '0+'),
            F('CommittedLeaderEpoch', 'int32', '6+', default=-1),
            F('CommittedMetadata', 'string', '0+', nullable='0+'),
        ]),
    ]),
])
M('OffsetCommitResponse', 'response', 8, '2-10', '8+', [
    F('ThrottleTimeMs', 'int32', '3+'),
    F('Topics', '[]OffsetCommitResponseTopic', '0+', fields=[
        F('Name', 'string', '0-9'),
        F('TopicId', 'uuid', '10+'),
        F('Partitions', '[]OffsetCommitResponsePartition', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
        ]),
    ]),
])
M('OffsetDeleteRequest', 'request', 47, '0', 'none', [
    F('GroupId', 'string', '0+'),
    F('Topics', '[]OffsetDeleteRequestTopic', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Partitions', '[]OffsetDeleteRequestPartition', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
        ]),
    ]),
])
M('OffsetDeleteResponse', 'response', 47, '0', 'none', [
    F('ErrorCode', 'int16', '0+'),
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Topics', '[]OffsetDeleteResponseTopic', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Partitions', '[]OffsetDeleteResponsePartition', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
        ]),
    ]),
])
M('OffsetFetchRequest', 'request', 9, '1-10', '6+', [
    F('GroupId', 'string', '0-7'),
    F('Topics', '[]OffsetFetchRequestTopic', '0-7', nullable='2-7', fields=[
        F('Name', 'string', '0-7'),
        F('PartitionIndexes', '[]int32', '0-7'),
    ]),
    F('Groups', '[]OffsetFetchRequestGroup', '8+', fields=[
        F('GroupId', 'string', '8+'),
        F('MemberId', 'string', '9+', nullable='9+', default=None),
        F('MemberEpoch', 'int32', '9+', default=-1),
        F('Topics', '[]OffsetFetchRequestTopics', '8+', nullable='8+', fields=[
            F('Name', 'string', '8-9'),
            F('TopicId', 'uuid', '10+'),
            F('PartitionIndexes', '[]int32', '8+'),
        ]),
    ]),
    F('RequireStable', 'bool', '7+', default=False),
])
M('OffsetFetchResponse', 'response', 9, '1-10', '6+', [
    F('ThrottleTimeMs', 'int32', '3+'),
    F('Topics', '[]OffsetFetchResponseTopic', '0-7', fields=[
        F('Name', 'string', '0-7'),
        F('Partitions', '[]OffsetFetchResponsePartition', '0-7', fields=[
            F('PartitionIndex', 'int32', '0-7'),
            F('CommittedOffset', 'int64', '0-7'),
            F('CommittedLeaderEpoch', 'int32', '5-7', default=-1),
            F('Metadata', 'string', '0-7', nullable='0-7'),
            F('ErrorCode', 'int16', '0-7'),
        ]),
    ]),
    F('ErrorCode', 'int16', '2-7', default=0),
    F('Groups', '[]OffsetFetchResponseGroup', '8+', fields=[
        F('GroupId', 'string', '8+'),
        F('Topics', '[]OffsetFetchResponseTopics', '8+', fields=[
            F('Name', 'string', '8-9'),
            F('TopicId', 'uuid', '10+'),
            F('Partitions', '[]OffsetFetchResponsePartitions', '8+', fields=[
                F('PartitionIndex', 'int32', '8+'),
                F('CommittedOffset', 'int64', '8+'),
                F('CommittedLeaderEpoch', 'int32', '8+', default=-1),
                F('Metadata', 'string', '8+', nullable='8+'),
                F('ErrorCode', 'int16', '8+'),
            ]),
        ]),
        F('ErrorCode', 'int16', '8+', default=0),
    ]),
])
M('OffsetForLeaderEpochRequest', 'request', 23, '2-4', '4+', [
    F('ReplicaId', 'int32', '3+', default=-2),
    F('Topics', '[]OffsetForLeaderTopic', '0+', fields=[
        F('Topic', 'string', '0+'),
        F('Partitions', '[]OffsetForLeaderPartition', '0+', fields=[
            F('Partition', 'int32', '0+'),
            F('CurrentLeaderEpoch', 'int32', '2+', default=-1),
            F('LeaderEpoch', 'int32', '0+'),
        ]),
    ]),
])
M('OffsetForLeaderEpochResponse', 'response', 23, '2-4', '4+', [
    F('ThrottleTimeMs', 'int32', '2+'),
    F('Topics', '[]OffsetForLeaderTopicResult', '0+', fields=[
        F('Topic', 'string', '0+'),
        F('Partitions', '[]EpochEndOffset', '0+', fields=[
            F('ErrorCode', 'int16', '0+'),
            F('Partition', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '1+', default=-1),
            F('EndOffset', 'int64', '0+', default=-1),
        ]),
    ]),
])
M('ProduceRequest', 'request', 0, '3-13', '9+', [
    F('TransactionalId', 'string', '3+', nullable='3+', default=None),
    F('Acks', 'int16', '0+'),
    F('TimeoutMs', 'int32', '0+'),
    F('TopicData', '[]TopicProduceData', '0+', fields=[
        F('Name', 'string', '0-12'),
        F('TopicId', 'uuid', '13+'),
        F('PartitionData', '[]PartitionProduceData', '0+', fields=[
            F('Index', 'int32', '0+'),
            F('Records', 'records', '0+', nullable='0+'),
        ]),
    ]),
])
M('ProduceResponse', 'response', 0, '3-13', '9+', [
    F('Responses', '[]TopicProduceResponse', '0+', fields=[
        F('Name', 'string', '0-12'),
        F('TopicId', 'uuid', '13+'),
        F('PartitionResponses', '[]PartitionProduceResponse', '0+', fields=[
            F('Index', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('BaseOffset', 'int64', '0+'),
            F('LogAppendTimeMs', 'int64', '2+', default=-1),
            F('LogStartOffset', 'int64', '5+', default=-1),
            F('RecordErrors', '[]BatchIndexAndErrorMessage', '8+', fields=[
                F('BatchIndex', 'int32', '8+'),
                F('BatchIndexErrorMessage', 'string', '8+', nullable='8+', default=None),
            ]),
            F('ErrorMessage', 'string', '8+', nullable='8+', default=None),
            F('CurrentLeader', 'LeaderIdAndEpoch', '10+', tag=0, tagged='10+', fields=[
                F('LeaderId', 'int32', '10+', default=-1),
                F('LeaderEpoch', 'int32', '10+', default=-1),
            ]),
        ]),
    ]),
    F('ThrottleTimeMs', 'int32', '1+', default=0),
    F('NodeEndpoints', '[]NodeEndpoint', '10+', tag=0, tagged='10+', fields=[
        F('NodeId', 'int32', '10+'),
        F('Host', 'string', '10+'),
        F('Port', 'int32', '10+'),
        F('Rack', 'string', '10+', nullable='10+', default=None),
    ]),
])
M('QuorumStateData', 'data', None, '0-1', '0+', [
    F('ClusterId', 'string', '0'),
    F('LeaderId', 'int32', '0+', default=-1),
    F('LeaderEpoch', 'int32', '0+', default=-1),
    F('VotedId', 'int32', '0+', default=-1),
    F('VotedDirectoryId', 'uuid', '1+'),
    F('AppliedOffset', 'int64', '0'),
    F('CurrentVoters', '[]Voter', '0', nullable='0', fields=[
        F('VoterId', 'int32', '0'),
    ]),
])
M('ReadShareGroupStateRequest', 'request', 84, '0', '0+', [
    F('GroupId', 'string', '0+'),
    F('Topics', '[]ReadStateData', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('Partition', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '0+'),
        ]),
    ]),
])
M('ReadShareGroupStateResponse', 'response', 84, '0', '0+', [
    F('Results', '[]ReadStateResult', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]PartitionResult', '0+', fields=[
            F('Partition', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
            F('StateEpoch', 'int32', '0+'),
            F('StartOffset', 'int64', '0+'),
            F('StateBatches', '[]StateBatch', '0+', fields=[
                F('FirstOffset', 'int64', '0+'),
                F('LastOffset', 'int64', '0+'),
                F('DeliveryState', 'int8', '0+'),
                F('DeliveryCount', 'int16', '0+'),
            ]),
        ]),
    ]),
])
M('ReadShareGroupStateSummaryRequest', 'request', 87, '0-1', '0+', [
    F('GroupId', 'string', '0+'),
    F('Topics', '[]ReadStateSummaryData', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('Partition', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '0+'),
        ]),
    ]),
])
M('ReadShareGroupStateSummaryResponse', 'response', 87, '0-1', '0+', [
    F('Results', '[]ReadStateSummaryResult', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]PartitionResult', '0+', fields=[
            F('Partition', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
            F('StateEpoch', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '0+'),
            F('StartOffset', 'int64', '0+'),
            F('DeliveryCompleteCount', 'int32', '1+', default=-1),
        ]),
    ]),
])
M('RemoveRaftVoterRequest', 'request', 81, '0', '0+', [
    F('ClusterId', 'string', '0+', nullable='0+'),
    F('VoterId', 'int32', '0+'),
    F('VoterDirectoryId', 'uuid', '0+'),
])
M('RemoveRaftVoterResponse', 'response', 81, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+'),
])
M('RequestHeader', 'header', None, '1-2', '2+', [
    F('RequestApiKey', 'int16', '0+'),
    F('RequestApiVersion', 'int16', '0+'),
    F('CorrelationId', 'int32', '0+'),
    F('ClientId', 'string', '1+', nullable='1+', flexible='none'),
])
M('ResponseHeader', 'header', None, '0-1', '1+', [
    F('CorrelationId', 'int32', '0+'),
])
M('SaslAuthenticateRequest', 'request', 36, '0-2', '2+', [
    F('AuthBytes', 'bytes', '0+'),
])
M('SaslAuthenticateResponse', 'response', 36, '0-2', '2+', [
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+'),
    F('AuthBytes', 'bytes', '0+'),
    F('SessionLifetimeMs', 'int64', '1+', default=0),
])
M('SaslHandshakeRequest', 'request', 17, '0-1', 'none', [
    F('Mechanism', 'string', '0+'),
])
M('SaslHandshakeResponse', 'response', 17, '0-1', 'none', [
    F('ErrorCode', 'int16', '0+'),
    F('Mechanisms', '[]string', '0+'),
])
M('ShareAcknowledgeRequest', 'request', 79, '1-2', '0+', [
    F('GroupId', 'string', '0+', nullable='0+', default=None),
    F('MemberId', 'string', '0+', nullable='0+'),
    F('ShareSessionEpoch', 'int32', '0+'),
    F('IsRenewAck', 'bool', '2+', default=False),
    F('Topics', '[]AcknowledgeTopic', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]AcknowledgePartition', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('AcknowledgementBatches', '[]AcknowledgementBatch', '0+', fields=[
                F('FirstOffset', 'int64', '0+'),
                F('LastOffset', 'int64', '0+'),
                F('AcknowledgeTypes', '[]int8', '0+'),
            ]),
        ]),
    ]),
])
M('ShareAcknowledgeResponse', 'response', 79, '1-2', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
    F('AcquisitionLockTimeoutMs', 'int32', '2+'),
    F('Responses', '[]ShareAcknowledgeTopicResponse', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
            F('CurrentLeader', 'LeaderIdAndEpoch', '0+', fields=[
                F('LeaderId', 'int32', '0+'),
                F('LeaderEpoch', 'int32', '0+'),
            ]),
        ]),
    ]),
    F('NodeEndpoints', '[]NodeEndpoint', '0+', fields=[
        F('NodeId', 'int32', '0+'),
        F('Host', 'string', '0+'),
        F('Port', 'int32', '0+'),
        F('Rack', 'string', '0+', nullable='0+', default=None),
    ]),
])
M('ShareFetchRequest', 'request', 78, '1-2', '0+', [
    F('GroupId', 'string', '0+', nullable='0+', default=None),
    F('MemberId', 'string', '0+', nullable='0+'),
    F('ShareSessionEpoch', 'int32', '0+'),
    F('MaxWaitMs', 'int32', '0+'),
    F('MinBytes', 'int32', '0+'),
    F('MaxBytes', 'int32', '0+', default=2147483647),
    F('MaxRecords', 'int32', '1+'),
    F('BatchSize', 'int32', '1+'),
    F('ShareAcquireMode', 'int8', '2+', default=0),
    F('IsRenewAck', 'bool', '2+', default=False),
    F('Topics', '[]FetchTopic', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]FetchPartition', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('PartitionMaxBytes', 'int32', '0'),
            F('AcknowledgementBatches', '[]AcknowledgementBatch', '0+', fields=[
                F('FirstOffset', 'int64', '0+'),
                F('LastOffset', 'int64', '0+'),
                F('AcknowledgeTypes', '[]int8', '0+'),
            ]),
        ]),
    ]),
    F('ForgottenTopicsData', '[]ForgottenTopic', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
    ]),
])
M('ShareFetchResponse', 'response', 78, '1-2', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
    F('AcquisitionLockTimeoutMs', 'int32', '1+'),
    F('Responses', '[]ShareFetchableTopicResponse', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
            F('AcknowledgeErrorCode', 'int16', '0+'),
            F('AcknowledgeErrorMessage', 'string', '0+', nullable='0+', default=None),
            F('CurrentLeader', 'LeaderIdAndEpoch', '0+', fields=[
                F('LeaderId', 'int32', '0+'),
                F('LeaderEpoch', 'int32', '0+'),
            ]),
            F('Records', 'records', '0+', nullable='0'),
            F('AcquiredRecords', '[]AcquiredRecords', '0+', fields=[
                F('FirstOffset', 'int64', '0+'),
                F('LastOffset', 'int64', '0+'),
                F('DeliveryCount', 'int16', '0+'),
            ]),
        ]),
    ]),
    F('NodeEndpoints', '[]NodeEndpoint', '0+', fields=[
        F('NodeId', 'int32', '0+'),
        F('Host', 'string', '0+'),
        F('Port', 'int32', '0+'),
        F('Rack', 'string', '0+', nullable='0+', default=None),
    ]),
])
M('ShareGroupDescribeRequest', 'request', 77, '1', '0+', [
    F('GroupIds', '[]string', '0+'),
    F('IncludeAuthorizedOperations', 'bool', '0+'),
])
M('ShareGroupDescribeResponse', 'response', 77, '1', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Groups', '[]DescribedGroup', '0+', fields=[
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
        F('GroupId', 'string', '0+'),
        F('GroupState', 'string', '0+'),
        F('GroupEpoch', 'int32', '0+'),
        F('AssignmentEpoch', 'int32', '0+'),
        F('AssignorName', 'string', '0+'),
        F('Members', '[]Member', '0+', fields=[
            F('MemberId', 'string', '0+'),
            F('RackId', 'string', '0+', nullable='0+', default=None),
            F('MemberEpoch', 'int32', '0+'),
            F('ClientId', 'string', '0+'),
            F('ClientHost', 'string', '0+'),
            F('SubscribedTopicNames', '[]string', '0+'),
            F('Assignment', 'Assignment', '0+', fields=[
                F('TopicPartitions', '[]TopicPartitions', '0+', fields=[
                    F('TopicId', 'uuid', '0+'),
                    F('TopicName', 'string', '0+'),
                    F('Partitions', '[]int32', '0+'),
                ]),
            ]),
        ]),
        F('AuthorizedOperations', 'int32', '0+', default=-2147483648),
    ]),
])
M('ShareGroupHeartbeatRequest', 'request', 76, '1', '0+', [
    F('GroupId', 'string', '0+'),
    F('MemberId', 'string', '0+'),
    F('MemberEpoch', 'int32', '0+'),
    F('RackId', 'string', '0+', nullable='0+', default=None),
    F('SubscribedTopicNames', '[]string', '0+', nullable='0+', default=None),
])
M('ShareGroupHeartbeatResponse', 'response', 76, '1', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
    F('MemberId', 'string', '0+', nullable='0+', default=None),
    F('MemberEpoch', 'int32', '0+'),
    F('HeartbeatIntervalMs', 'int32', '0+'),
    F('Assignment', 'Assignment', '0+', nullable='0+', default=None, fields=[
        F('TopicPartitions', '[]TopicPartitions', '0+', fields=[
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]int32', '0+'),
        ]),
    ]),
])
M('SnapshotFooterRecord', 'data', None, '0', '0+', [
    F('Version', 'int16', '0+'),
])
M('SnapshotHeaderRecord', 'data', None, '0', '0+', [
    F('Version', 'int16', '0+'),
    F('LastContainedLogTimestamp', 'int64', '0+'),
])
M('SyncGroupRequest', 'request', 14, '0-5', '4+', [
    F('GroupId', 'string', '0+'),
    F('GenerationId', 'int32', '0+'),
    F('MemberId', 'string', '0+'),
    F('GroupInstanceId', 'string', '3+', nullable='3+', default=None),
    F('ProtocolType', 'string', '5+', nullable='5+', default=None),
    F('ProtocolName', 'string', '5+', nullable='5+', default=None),
    F('Assignments', '[]SyncGroupRequestAssignment', '0+', fields=[
        F('MemberId', 'string', '0+'),
        F('Assignment', 'bytes', '0+'),
    ]),
])
M('SyncGroupResponse', 'response', 14, '0-5', '4+', [
    F('ThrottleTimeMs', 'int32', '1+'),
    F('ErrorCode', 'int16', '0+'),
    F('ProtocolType', 'string', '5+', nullable='5+', default=None),
    F('ProtocolName', 'string', '5+', nullable='5+', default=None),
    F('Assignment', 'bytes', '0+'),
])
M('TxnOffsetCommitRequest', 'request', 28, '0-6', '3+', [
    F('TransactionalId', 'string', '0+'),
    F('GroupId', 'string', '0+'),
    F('ProducerId', 'int64', '0+'),
    F('ProducerEpoch', 'int16', '0+'),
    F('GenerationIdOrMemberEpoch', 'int32', '3+', default=-1),
    F('MemberId', 'string', '3+', default=''),
    F('GroupInstanceId', 'string', '3+', nullable='3+', default=None),
    F('Topics', '[]TxnOffsetCommitRequestTopic', '0+', fields=[
        F('Name', 'string', '0-5'),
        F('TopicId', 'uuid', '6+'),
        F('Partitions', '[]TxnOffsetCommitRequestPartition', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('CommittedOffset', 'int64', '0+'),
            F('CommittedLeaderEpoch', 'int32', '2+', default=-1),
            F('CommittedMetadata', 'string', '0+', nullable='0+'),
        ]),
    ]),
])
M('TxnOffsetCommitResponse', 'response', 28, '0-6', '3+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('Topics', '[]TxnOffsetCommitResponseTopic', '0+', fields=[
        F('Name', 'string', '0-5'),
        F('TopicId', 'uuid', '6+'),
        F('Partitions', '[]TxnOffsetCommitResponsePartition', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
        ]),
    ]),
])
M('UnregisterBrokerRequest', 'request', 64, '0', '0+', [
    F('BrokerId', 'int32', '0+'),
])
M('UnregisterBrokerResponse', 'response', 64, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+'),
])
M('UnregisterControllerRequest', 'request', 94, '0', '0+', [
    F('ControllerId', 'int32', '0+'),
])
M('UnregisterControllerResponse', 'response', 94, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+'),
])
M('UpdateFeaturesRequest', 'request', 57, '0-2', '0+', [
    F('timeoutMs', 'int32', '0+', default=60000),
    F('FeatureUpdates', '[]FeatureUpdateKey', '0+', fields=[
        F('Feature', 'string', '0+'),
        F('MaxVersionLevel', 'int16', '0+'),
        F('AllowDowngrade', 'bool', '0'),
        F('UpgradeType', 'int8', '1+', default=1),
    ]),
    F('ValidateOnly', 'bool', '1+', default=False),
])
M('UpdateFeaturesResponse', 'response', 57, '0-2', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('ErrorMessage', 'string', '0+', nullable='0+'),
    F('Results', '[]UpdatableFeatureResult', '0-1', fields=[
        F('Feature', 'string', '0+'),
        F('ErrorCode', 'int16', '0+'),
        F('ErrorMessage', 'string', '0+', nullable='0+'),
    ]),
])
M('UpdateRaftVoterRequest', 'request', 82, '0', '0+', [
    F('ClusterId', 'string', '0+', nullable='0+'),
    F('CurrentLeaderEpoch', 'int32', '0+'),
    F('VoterId', 'int32', '0+'),
    F('VoterDirectoryId', 'uuid', '0+'),
    F('Listeners', '[]Listener', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Host', 'string', '0+'),
        F('Port', 'uint16', '0+'),
    ]),
    F('KRaftVersionFeature', 'KRaftVersionFeature', '0+', fields=[
        F('MinSupportedVersion', 'int16', '0+'),
        F('MaxSupportedVersion', 'int16', '0+'),
    ]),
])
M('UpdateRaftVoterResponse', 'response', 82, '0', '0+', [
    F('ThrottleTimeMs', 'int32', '0+'),
    F('ErrorCode', 'int16', '0+'),
    F('CurrentLeader', 'CurrentLeader', '0+', tag=0, tagged='0+', fields=[
        F('LeaderId', 'int32', '0+', default=-1),
        F('LeaderEpoch', 'int32', '0+', default=-1),
        F('Host', 'string', '0+'),
        F('Port', 'int32', '0+'),
    ]),
])
M('VoteRequest', 'request', 52, '0-2', '0+', [
    F('ClusterId', 'string', '0+', nullable='0+', default=None),
    F('VoterId', 'int32', '1+', default=-1),
    F('Topics', '[]TopicData', '0+', fields=[
        F('TopicName', 'string', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ReplicaEpoch', 'int32', '0+'),
            F('ReplicaId', 'int32', '0+'),
            F('ReplicaDirectoryId', 'uuid', '1+'),
            F('VoterDirectoryId', 'uuid', '1+'),
            F('LastOffsetEpoch', 'int32', '0+'),
            F('LastOffset', 'int64', '0+'),
            F('PreVote', 'bool', '2+'),
        ]),
    ]),
])
M('VoteResponse', 'response', 52, '0-2', '0+', [
    F('ErrorCode', 'int16', '0+'),
    F('Topics', '[]TopicData', '0+', fields=[
        F('TopicName', 'string', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('PartitionIndex', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('LeaderId', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '0+'),
            F('VoteGranted', 'bool', '0+'),
        ]),
    ]),
    F('NodeEndpoints', '[]NodeEndpoint', '1+', tag=0, tagged='1+', fields=[
        F('NodeId', 'int32', '1+'),
        F('Host', 'string', '1+'),
        F('Port', 'uint16', '1+'),
    ]),
])
M('VotersRecord', 'data', None, '0', '0+', [
    F('Version', 'int16', '0+'),
    F('Voters', '[]Voter', '0+', fields=[
        F('VoterId', 'int32', '0+'),
        F('VoterDirectoryId', 'uuid', '0+'),
        F('Endpoints', '[]Endpoint', '0+', fields=[
            F('Name', 'string', '0+'),
            F('Host', 'string', '0+'),
            F('Port', 'uint16', '0+'),
        ]),
        F('KRaftVersionFeature', 'KRaftVersionFeature', '0+', fields=[
            F('MinSupportedVersion', 'int16', '0+'),
            F('MaxSupportedVersion', 'int16', '0+'),
        ]),
    ]),
])
M('WriteShareGroupStateRequest', 'request', 85, '0-1', '0+', [
    F('GroupId', 'string', '0+'),
    F('Topics', '[]WriteStateData', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]PartitionData', '0+', fields=[
            F('Partition', 'int32', '0+'),
            F('StateEpoch', 'int32', '0+'),
            F('LeaderEpoch', 'int32', '0+'),
            F('StartOffset', 'int64', '0+'),
            F('DeliveryCompleteCount', 'int32', '1+', default=-1),
            F('StateBatches', '[]StateBatch', '0+', fields=[
                F('FirstOffset', 'int64', '0+'),
                F('LastOffset', 'int64', '0+'),
                F('DeliveryState', 'int8', '0+'),
                F('DeliveryCount', 'int16', '0+'),
            ]),
        ]),
    ]),
])
M('WriteShareGroupStateResponse', 'response', 85, '0-1', '0+', [
    F('Results', '[]WriteStateResult', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]PartitionResult', '0+', fields=[
            F('Partition', 'int32', '0+'),
            F('ErrorCode', 'int16', '0+'),
            F('ErrorMessage', 'string', '0+', nullable='0+', default=None),
        ]),
    ]),
])
M('WriteTxnMarkersRequest', 'request', 27, '1-2', '1+', [
    F('Markers', '[]WritableTxnMarker', '0+', fields=[
        F('ProducerId', 'int64', '0+'),
        F('ProducerEpoch', 'int16', '0+'),
        F('TransactionResult', 'bool', '0+'),
        F('Topics', '[]WritableTxnMarkerTopic', '0+', fields=[
            F('Name', 'string', '0+'),
            F('PartitionIndexes', '[]int32', '0+'),
        ]),
        F('CoordinatorEpoch', 'int32', '0+'),
        F('TransactionVersion', 'int8', '2+', default=0),
    ]),
])
M('WriteTxnMarkersResponse', 'response', 27, '1-2', '1+', [
    F('Markers', '[]WritableTxnMarkerResult', '0+', fields=[
        F('ProducerId', 'int64', '0+'),
        F('Topics', '[]WritableTxnMarkerTopicResult', '0+', fields=[
            F('Name', 'string', '0+'),
            F('Partitions', '[]WritableTxnMarkerPartitionResult', '0+', fields=[
                F('PartitionIndex', 'int32', '0+'),
                F('ErrorCode', 'int16', '0+'),
            ]),
        ]),
    ]),
])
# ---- END GENERATED ----
# ---- BEGIN GENERATED METADATA RECORDS (python -m kraftwire.tools.generate_schemas) ----
M('AbortTransactionRecord', 'metadata', 25, '0', '0+', [
    F('Reason', 'string', '0+', nullable='0+', tag=0, tagged='0+', default=None),
])
M('AccessControlEntryRecord', 'metadata', 18, '0', '0+', [
    F('Id', 'uuid', '0+'),
    F('ResourceType', 'int8', '0+'),
    F('ResourceName', 'string', '0+'),
    F('PatternType', 'int8', '0+'),
    F('Principal', 'string', '0+'),
    F('Host', 'string', '0+'),
    F('Operation', 'int8', '0+'),
    F('PermissionType', 'int8', '0+'),
])
M('BeginTransactionRecord', 'metadata', 23, '0', '0+', [
    F('Name', 'string', '0+', nullable='0+', tag=0, tagged='0+', default=None),
])
M('BrokerRegistrationChangeRecord', 'metadata', 17, '0-3', '0+', [
    F('BrokerId', 'int32', '0+'),
    F('BrokerEpoch', 'int64', '0+'),
    F('Fenced', 'int8', '0+', tag=0, tagged='0+'),
    F('InControlledShutdown', 'int8', '1+', tag=1, tagged='1+'),
    F('LogDirs', '[]uuid', '2+', tag=2, tagged='2+'),
    F('CordonedLogDirs', '[]uuid', '3+', nullable='3+', tag=3, tagged='3+', default=None),
])
M('ClearElrRecord', 'metadata', 28, '0', '0+', [
    F('TopicName', 'string', '0+'),
])
M('ClientQuotaRecord', 'metadata', 14, '0', '0+', [
    F('Entity', '[]EntityData', '0+', fields=[
        F('EntityType', 'string', '0+'),
        F('EntityName', 'string', '0+', nullable='0+'),
    ]),
    F('Key', 'string', '0+'),
    F('Value', 'float64', '0+'),
    F('Remove', 'bool', '0+'),
])
M('ConfigRecord', 'metadata', 4, '0', '0+', [
    F('ResourceType', 'int8', '0+'),
    F('ResourceName', 'string', '0+'),
    F('Name', 'string', '0+'),
    F('Value', 'string', '0+', nullable='0+'),
])
M('DelegationTokenRecord', 'metadata', 10, '0', '0+', [
    F('Owner', 'string', '0+'),
    F('Requester', 'string', '0+'),
    F('Renewers', '[]string', '0+'),
    F('IssueTimestamp', 'int64', '0+'),
    F('MaxTimestamp', 'int64', '0+'),
    F('ExpirationTimestamp', 'int64', '0+'),
    F('TokenId', 'string', '0+'),
])
M('EndTransactionRecord', 'metadata', 24, '0', '0+', [
])
M('FeatureLevelRecord', 'metadata', 12, '0', '0+', [
    F('Name', 'string', '0+'),
    F('FeatureLevel', 'int16', '0+'),
])
M('FenceBrokerRecord', 'metadata', 7, '0', '0+', [
    F('Id', 'int32', '0+'),
    F('Epoch', 'int64', '0+'),
])
M('NoOpRecord', 'metadata', 20, '0', '0+', [
])
M('PartitionChangeRecord', 'metadata', 5, '0-2', '0+', [
    F('PartitionId', 'int32', '0+', default=-1),
    F('TopicId', 'uuid', '0+'),
    F('Isr', '[]int32', '0+', nullable='0+', tag=0, tagged='0+', default=None),
    F('Leader', 'int32', '0+', tag=1, tagged='0+', default=-2),
    F('Replicas', '[]int32', '0+', nullable='0+', tag=2, tagged='0+', default=None),
    F('RemovingReplicas', '[]int32', '0+', nullable='0+', tag=3, tagged='0+', default=None),
    F('AddingReplicas', '[]int32', '0+', nullable='0+', tag=4, tagged='0+', default=None),
    F('LeaderRecoveryState', 'int8', '0+', tag=5, tagged='0+', default=-1),
    F('Directories', '[]uuid', '1+', nullable='1+', tag=8, tagged='1+', default=None),
    F('EligibleLeaderReplicas', '[]int32', '2+', nullable='2+', tag=6, tagged='2+', default=None),
    F('LastKnownElr', '[]int32', '2+', nullable='2+', tag=7, tagged='2+', default=None),
])
M('PartitionRecord', 'metadata', 3, '0-2', '0+', [
    F('PartitionId', 'int32', '0+', default=-1),
    F('TopicId', 'uuid', '0+'),
    F('Replicas', '[]int32', '0+'),
    F('Isr', '[]int32', '0+'),
    F('RemovingReplicas', '[]int32', '0+'),
    F('AddingReplicas', '[]int32', '0+'),
    F('Leader', 'int32', '0+', default=-1),
    F('LeaderRecoveryState', 'int8', '0+', tag=0, tagged='0+', default=0),
    F('LeaderEpoch', 'int32', '0+', default=-1),
    F('PartitionEpoch', 'int32', '0+', default=-1),
    F('Directories', '[]uuid', '1+'),
    F('EligibleLeaderReplicas', '[]int32', '2+', nullable='2+', tag=1, tagged='2+', default=None),
    F('LastKnownElr', '[]int32', '2+', nullable='2+', tag=2, tagged='2+', default=None),
])
M('ProducerIdsRecord', 'metadata', 15, '0', '0+', [
    F('BrokerId', 'int32', '0+'),
    F('BrokerEpoch', 'int64', '0+', default=-1),
    F('NextProducerId', 'int64', '0+'),
])
M('RegisterBrokerRecord', 'metadata', 0, '0-4', '0+', [
    F('BrokerId', 'int32', '0+'),
    F('IsMigratingZkBroker', 'bool', '2+', default=False),
    F('IncarnationId', 'uuid', '0+'),
    F('BrokerEpoch', 'int64', '0+'),
    F('EndPoints', '[]BrokerEndpoint', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Host', 'string', '0+'),
        F('Port', 'uint16', '0+'),
        F('SecurityProtocol', 'int16', '0+'),
    ]),
    F('Features', '[]BrokerFeature', '0+', fields=[
        F('Name', 'string', '0+'),
        F('MinSupportedVersion', 'int16', '0+'),
        F('MaxSupportedVersion', 'int16', '0+'),
    ]),
    F('Rack', 'string', '0+', nullable='0+'),
    F('Fenced', 'bool', '0+', default=True),
    F('InControlledShutdown', 'bool', '1+', default=False),
    F('LogDirs', '[]uuid', '3+', tag=0, tagged='3+'),
    F('CordonedLogDirs', '[]uuid', '4+', nullable='4+', tag=1, tagged='4+', default=None),
])
M('RegisterControllerRecord', 'metadata', 27, '0', '0+', [
    F('ControllerId', 'int32', '0+'),
    F('IncarnationId', 'uuid', '0+'),
    F('ZkMigrationReady', 'bool', '0+'),
    F('EndPoints', '[]ControllerEndpoint', '0+', fields=[
        F('Name', 'string', '0+'),
        F('Host', 'string', '0+'),
        F('Port', 'uint16', '0+'),
        F('SecurityProtocol', 'int16', '0+'),
    ]),
    F('Features', '[]ControllerFeature', '0+', fields=[
        F('Name', 'string', '0+'),
        F('MinSupportedVersion', 'int16', '0+'),
        F('MaxSupportedVersion', 'int16', '0+'),
    ]),
])
M('RemoveAccessControlEntryRecord', 'metadata', 19, '0', '0+', [
    F('Id', 'uuid', '0+'),
])
M('RemoveDelegationTokenRecord', 'metadata', 26, '0', '0+', [
    F('TokenId', 'string', '0+'),
])
M('RemoveTopicRecord', 'metadata', 9, '0', '0+', [
    F('TopicId', 'uuid', '0+'),
])
M('RemoveUserScramCredentialRecord', 'metadata', 22, '0', '0+', [
    F('Name', 'string', '0+'),
    F('Mechanism', 'int8', '0+'),
])
M('TopicRecord', 'metadata', 2, '0', '0+', [
    F('Name', 'string', '0+'),
    F('TopicId', 'uuid', '0+'),
])
M('UnfenceBrokerRecord', 'metadata', 8, '0', '0+', [
    F('Id', 'int32', '0+'),
    F('Epoch', 'int64', '0+'),
])
M('UnregisterBrokerRecord', 'metadata', 1, '0', '0+', [
    F('BrokerId', 'int32', '0+'),
    F('BrokerEpoch', 'int64', '0+'),
])
M('UnregisterControllerRecord', 'metadata', 29, '0', '0+', [
    F('ControllerId', 'int32', '0+'),
])
M('UserScramCredentialRecord', 'metadata', 11, '0', '0+', [
    F('Name', 'string', '0+'),
    F('Mechanism', 'int8', '0+'),
    F('Salt', 'bytes', '0+'),
    F('StoredKey', 'bytes', '0+'),
    F('ServerKey', 'bytes', '0+'),
    F('Iterations', 'int32', '0+'),
])
M('ZkMigrationStateRecord', 'metadata', 21, '0', '0+', [
    F('ZkMigrationState', 'int8', '0+'),
])
# ---- END GENERATED METADATA RECORDS ----
# ---- BEGIN GENERATED COORDINATOR RECORDS (python -m kraftwire.tools.generate_schemas) ----
M('ConsumerGroupCurrentMemberAssignmentKey', 'coordinator', 8, '0', 'none', [
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
])
M('ConsumerGroupCurrentMemberAssignmentValue', 'coordinator', 8, '0', '0+', [
    F('MemberEpoch', 'int32', '0+'),
    F('PreviousMemberEpoch', 'int32', '0+'),
    F('State', 'int8', '0+'),
    F('AssignedPartitions', '[]TopicPartitions', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
        F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tag=0, tagged='0+', default=None),
    ]),
    F('PartitionsPendingRevocation', '[]TopicPartitions', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
        F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tag=0, tagged='0+', default=None),
    ]),
])
M('ConsumerGroupMemberMetadataKey', 'coordinator', 5, '0', 'none', [
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
])
M('ConsumerGroupMemberMetadataValue', 'coordinator', 5, '0', '0+', [
    F('InstanceId', 'string', '0+', nullable='0+'),
    F('RackId', 'string', '0+', nullable='0+'),
    F('ClientId', 'string', '0+'),
    F('ClientHost', 'string', '0+'),
    F('SubscribedTopicNames', '[]string', '0+'),
    F('SubscribedTopicRegex', 'string', '0+', nullable='0+'),
    F('RebalanceTimeoutMs', 'int32', '0+', default=-1),
    F('ServerAssignor', 'string', '0+', nullable='0+'),
    F('ClassicMemberMetadata', 'ClassicMemberMetadata', '0+', nullable='0+', tag=0, tagged='0+', default=None, fields=[
        F('SessionTimeoutMs', 'int32', '0+'),
        F('SupportedProtocols', '[]ClassicProtocol', '0+', fields=[
            F('Name', 'string', '0+'),
            F('Metadata', 'bytes', '0+'),
        ]),
    ]),
])
M('ConsumerGroupMetadataKey', 'coordinator', 3, '0', 'none', [
    F('GroupId', 'string', '0'),
])
M('ConsumerGroupMetadataValue', 'coordinator', 3, '0', '0+', [
    F('Epoch', 'int32', '0+'),
    F('MetadataHash', 'int64', '0+', tag=0, tagged='0+', default=0),
])
M('ConsumerGroupPartitionMetadataKey', 'coordinator', 4, '0', 'none', [
    F('GroupId', 'string', '0'),
])
M('ConsumerGroupPartitionMetadataValue', 'coordinator', 4, '0', '0+', [
    F('Topics', '[]TopicMetadata', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('TopicName', 'string', '0+'),
        F('NumPartitions', 'int32', '0+'),
        F('PartitionMetadata', '[]PartitionMetadata', '0+', fields=[
            F('Partition', 'int32', '0+'),
            F('Racks', '[]string', '0+'),
        ]),
    ]),
])
M('ConsumerGroupRegularExpressionKey', 'coordinator', 16, '0', 'none', [
    F('GroupId', 'string', '0'),
    F('RegularExpression', 'string', '0'),
])
M('ConsumerGroupRegularExpressionValue', 'coordinator', 16, '0', '0+', [
    F('Topics', '[]string', '0+'),
    F('Version', 'int64', '0+'),
    F('Timestamp', 'int64', '0+'),
])
M('ConsumerGroupTargetAssignmentMemberKey', 'coordinator', 7, '0', 'none', [
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
])
M('ConsumerGroupTargetAssignmentMemberValue', 'coordinator', 7, '0', '0+', [
    F('TopicPartitions', '[]TopicPartition', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
    ]),
])
M('ConsumerGroupTargetAssignmentMetadataKey', 'coordinator', 6, '0', 'none', [
    F('GroupId', 'string', '0'),
])
M('ConsumerGroupTargetAssignmentMetadataValue', 'coordinator', 6, '0', '0+', [
    F('AssignmentEpoch', 'int32', '0+'),
    F('AssignmentTimestamp', 'int64', '0+', tag=0, tagged='0+', default=0),
])
M('GroupMetadataKey', 'coordinator', 2, '0', 'none', [
    F('group', 'string', '0'),
])
M('GroupMetadataValue', 'coordinator', 2, '0-4', '4+', [
    F('protocolType', 'string', '0+'),
    F('generation', 'int32', '0+'),
    F('protocol', 'string', '0+', nullable='0+'),
    F('leader', 'string', '0+', nullable='0+'),
    F('currentStateTimestamp', 'int64', '2+', default=-1),
    F('members', '[]MemberMetadata', '0+', fields=[
        F('memberId', 'string', '0+'),
        F('groupInstanceId', 'string', '3+', nullable='3+', default=None),
        F('clientId', 'string', '0+'),
        F('clientHost', 'string', '0+'),
        F('rebalanceTimeout', 'int32', '1+', default=-1),
        F('sessionTimeout', 'int32', '0+'),
        F('subscription', 'bytes', '0+'),
        F('assignment', 'bytes', '0+'),
    ]),
])
M('LegacyOffsetCommitKey', 'coordinator', 0, '0', 'none', [
    F('group', 'string', '0'),
    F('topic', 'string', '0'),
    F('partition', 'int32', '0'),
])
M('LegacyOffsetCommitValue', 'coordinator', 0, '0', 'none', [
    F('offset', 'int64', '0'),
    F('metadata', 'string', '0'),
    F('commitTimestamp', 'int64', '0'),
])
M('OffsetCommitKey', 'coordinator', 1, '0', 'none', [
    F('group', 'string', '0'),
    F('topic', 'string', '0'),
    F('partition', 'int32', '0'),
])
M('OffsetCommitValue', 'coordinator', 1, '0-4', '4+', [
    F('offset', 'int64', '0+'),
    F('leaderEpoch', 'int32', '3+', default=-1),
    F('metadata', 'string', '0+'),
    F('commitTimestamp', 'int64', '0+'),
    F('expireTimestamp', 'int64', '1', default=-1),
    F('topicId', 'uuid', '4+', tag=0, tagged='4+'),
])
M('ShareGroupCurrentMemberAssignmentKey', 'coordinator', 14, '0', 'none', [
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
])
M('ShareGroupCurrentMemberAssignmentValue', 'coordinator', 14, '0', '0+', [
    F('MemberEpoch', 'int32', '0+'),
    F('PreviousMemberEpoch', 'int32', '0+'),
    F('State', 'int8', '0+'),
    F('AssignedPartitions', '[]TopicPartitions', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
    ]),
])
M('ShareGroupMemberMetadataKey', 'coordinator', 10, '0', 'none', [
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
])
M('ShareGroupMemberMetadataValue', 'coordinator', 10, '0', '0+', [
    F('RackId', 'string', '0+', nullable='0+'),
    F('ClientId', 'string', '0+'),
    F('ClientHost', 'string', '0+'),
    F('SubscribedTopicNames', '[]string', '0+'),
])
M('ShareGroupMetadataKey', 'coordinator', 11, '0', 'none', [
    F('GroupId', 'string', '0'),
])
M('ShareGroupMetadataValue', 'coordinator', 11, '0', '0+', [
    F('Epoch', 'int32', '0+'),
    F('MetadataHash', 'int64', '0+'),
])
M('ShareGroupStatePartitionMetadataKey', 'coordinator', 15, '0', 'none', [
    F('GroupId', 'string', '0'),
])
M('ShareGroupStatePartitionMetadataValue', 'coordinator', 15, '0', '0+', [
    F('InitializingTopics', '[]TopicPartitionsInfo', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('TopicName', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
    ]),
    F('InitializedTopics', '[]TopicPartitionsInfo', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('TopicName', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
    ]),
    F('DeletingTopics', '[]TopicInfo', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('TopicName', 'string', '0+'),
    ]),
])
M('ShareGroupTargetAssignmentMemberKey', 'coordinator', 13, '0', 'none', [
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
])
M('ShareGroupTargetAssignmentMemberValue', 'coordinator', 13, '0', '0+', [
    F('TopicPartitions', '[]TopicPartition', '0+', fields=[
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
    ]),
])
M('ShareGroupTargetAssignmentMetadataKey', 'coordinator', 12, '0', 'none', [
    F('GroupId', 'string', '0'),
])
M('ShareGroupTargetAssignmentMetadataValue', 'coordinator', 12, '0', '0+', [
    F('AssignmentEpoch', 'int32', '0+'),
    F('AssignmentTimestamp', 'int64', '0+', tag=0, tagged='0+', default=0),
])
M('ShareSnapshotKey', 'coordinator', 0, '0', 'none', [
    F('GroupId', 'string', '0'),
    F('TopicId', 'uuid', '0'),
    F('Partition', 'int32', '0'),
])
M('ShareSnapshotValue', 'coordinator', 0, '0', '0+', [
    F('SnapshotEpoch', 'int32', '0+'),
    F('StateEpoch', 'int32', '0+'),
    F('LeaderEpoch', 'int32', '0+'),
    F('StartOffset', 'int64', '0+'),
    F('DeliveryCompleteCount', 'int32', '0+', tag=0, tagged='0+', default=-1),
    F('CreateTimestamp', 'int64', '0+'),
    F('WriteTimestamp', 'int64', '0+'),
    F('StateBatches', '[]StateBatch', '0+', fields=[
        F('FirstOffset', 'int64', '0+'),
        F('LastOffset', 'int64', '0+'),
        F('DeliveryState', 'int8', '0+'),
        F('DeliveryCount', 'int16', '0+'),
    ]),
])
M('ShareUpdateKey', 'coordinator', 1, '0', 'none', [
    F('GroupId', 'string', '0'),
    F('TopicId', 'uuid', '0'),
    F('Partition', 'int32', '0'),
])
M('ShareUpdateValue', 'coordinator', 1, '0', '0+', [
    F('SnapshotEpoch', 'int32', '0+'),
    F('LeaderEpoch', 'int32', '0+'),
    F('StartOffset', 'int64', '0+'),
    F('DeliveryCompleteCount', 'int32', '0+', tag=0, tagged='0+', default=-1),
    F('StateBatches', '[]StateBatch', '0+', fields=[
        F('FirstOffset', 'int64', '0+'),
        F('LastOffset', 'int64', '0+'),
        F('DeliveryState', 'int8', '0+'),
        F('DeliveryCount', 'int16', '0+'),
    ]),
])
M('StreamsGroupCurrentMemberAssignmentKey', 'coordinator', 22, '0', 'none', [
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
])
M('StreamsGroupCurrentMemberAssignmentValue', 'coordinator', 22, '0', '0+', [
    F('MemberEpoch', 'int32', '0+'),
    F('PreviousMemberEpoch', 'int32', '0+'),
    F('State', 'int8', '0+'),
    F('ActiveTasks', '[]TaskIds', '0+', fields=[
        F('SubtopologyId', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
        F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tag=0, tagged='0+', default=None),
    ]),
    F('StandbyTasks', '[]TaskIds', '0+', fields=[
        F('SubtopologyId', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
        F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tag=0, tagged='0+', default=None),
    ]),
    F('WarmupTasks', '[]TaskIds', '0+', fields=[
        F('SubtopologyId', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
        F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tag=0, tagged='0+', default=None),
    ]),
    F('ActiveTasksPendingRevocation', '[]TaskIds', '0+', fields=[
        F('SubtopologyId', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
        F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tag=0, tagged='0+', default=None),
    ]),
    F('StandbyTasksPendingRevocation', '[]TaskIds', '0+', fields=[
        F('SubtopologyId', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
        F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tag=0, tagged='0+', default=None),
    ]),
    F('WarmupTasksPendingRevocation', '[]TaskIds', '0+', fields=[
        F('SubtopologyId', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
        F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tag=0, tagged='0+', default=None),
    ]),
])
M('StreamsGroupMemberMetadataKey', 'coordinator', 19, '0', 'none', [
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
])
M('StreamsGroupMemberMetadataValue', 'coordinator', 19, '0', '0+', [
    F('InstanceId', 'string', '0+', nullable='0+'),
    F('RackId', 'string', '0+', nullable='0+'),
    F('ClientId', 'string', '0+'),
    F('ClientHost', 'string', '0+'),
    F('RebalanceTimeoutMs', 'int32', '0+', default=-1),
    F('TopologyEpoch', 'int32', '0+'),
    F('ProcessId', 'string', '0+'),
    F('UserEndpoint', 'Endpoint', '0+', nullable='0+', default=None, fields=[
        F('Host', 'string', '0+'),
        F('Port', 'uint16', '0+'),
    ]),
    F('ClientTags', '[]KeyValue', '0+', fields=[
        F('Key', 'string', '0+'),
        F('Value', 'string', '0+'),
    ]),
])
M('StreamsGroupMetadataKey', 'coordinator', 17, '0', 'none', [
    F('GroupId', 'string', '0'),
])
M('StreamsGroupMetadataValue', 'coordinator', 17, '0', '0+', [
    F('Epoch', 'int32', '0+'),
    F('MetadataHash', 'int64', '0+'),
    F('ValidatedTopologyEpoch', 'int32', '0+', tag=0, tagged='0+', default=-1),
    F('LastAssignmentConfigs', '[]LastAssignmentConfig', '0+', nullable='0+', tag=1, tagged='0+', default=None, fields=[
        F('Key', 'string', '0+'),
        F('Value', 'string', '0+'),
    ]),
    F('StoredDescriptionTopologyEpoch', 'int32', '0+', tag=2, tagged='0+', default=-1),
    F('FailedDescriptionTopologyEpoch', 'int32', '0+', tag=3, tagged='0+', default=-1),
])
M('StreamsGroupTargetAssignmentMemberKey', 'coordinator', 21, '0', 'none', [
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
])
M('StreamsGroupTargetAssignmentMemberValue', 'coordinator', 21, '0', '0+', [
    F('ActiveTasks', '[]TaskIds', '0+', fields=[
        F('SubtopologyId', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
    ]),
    F('StandbyTasks', '[]TaskIds', '0+', fields=[
        F('SubtopologyId', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
    ]),
    F('WarmupTasks', '[]TaskIds', '0+', fields=[
        F('SubtopologyId', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
    ]),
])
M('StreamsGroupTargetAssignmentMetadataKey', 'coordinator', 20, '0', 'none', [
    F('GroupId', 'string', '0'),
])
M('StreamsGroupTargetAssignmentMetadataValue', 'coordinator', 20, '0', '0+', [
    F('AssignmentEpoch', 'int32', '0+'),
    F('AssignmentTimestamp', 'int64', '0+', tag=0, tagged='0+', default=0),
])
M('StreamsGroupTopologyKey', 'coordinator', 23, '0', 'none', [
    F('GroupId', 'string', '0'),
])
M('StreamsGroupTopologyValue', 'coordinator', 23, '0', '0+', [
    F('Epoch', 'int32', '0+'),
    F('Subtopologies', '[]Subtopology', '0+', fields=[
        F('SubtopologyId', 'string', '0+'),
        F('SourceTopics', '[]string', '0+'),
        F('SourceTopicRegex', '[]string', '0+'),
        F('StateChangelogTopics', '[]TopicInfo', '0+', fields=[
            F('Name', 'string', '0+'),
            F('Partitions', 'int32', '0+'),
            F('ReplicationFactor', 'int16', '0+'),
            F('TopicConfigs', '[]TopicConfig', '0+', fields=[
                F('key', 'string', '0+'),
                F('value', 'string', '0+'),
            ]),
        ]),
        F('RepartitionSinkTopics', '[]string', '0+'),
        F('RepartitionSourceTopics', '[]TopicInfo', '0+', fields=[
            F('Name', 'string', '0+'),
            F('Partitions', 'int32', '0+'),
            F('ReplicationFactor', 'int16', '0+'),
            F('TopicConfigs', '[]TopicConfig', '0+', fields=[
                F('key', 'string', '0+'),
                F('value', 'string', '0+'),
            ]),
        ]),
        F('CopartitionGroups', '[]CopartitionGroup', '0+', fields=[
            F('SourceTopics', '[]int16', '0+'),
            F('SourceTopicRegex', '[]int16', '0+'),
            F('RepartitionSourceTopics', '[]int16', '0+'),
        ]),
    ]),
])
M('TransactionLogKey', 'coordinator', 0, '0', 'none', [
    F('TransactionalId', 'string', '0'),
])
M('TransactionLogValue', 'coordinator', 0, '0-1', '1+', [
    F('ProducerId', 'int64', '0+'),
    F('PreviousProducerId', 'int64', '1+', tag=0, tagged='1+', default=-1),
    F('NextProducerId', 'int64', '1+', tag=1, tagged='1+', default=-1),
    F('ProducerEpoch', 'int16', '0+'),
    F('NextProducerEpoch', 'int16', '1+', tag=3, tagged='1+', default=-1),
    F('TransactionTimeoutMs', 'int32', '0+'),
    F('TransactionStatus', 'int8', '0+'),
    F('TransactionPartitions', '[]PartitionsSchema', '0+', nullable='0+', fields=[
        F('Topic', 'string', '0+'),
        F('PartitionIds', '[]int32', '0+'),
    ]),
    F('TransactionLastUpdateTimestampMs', 'int64', '0+'),
    F('TransactionStartTimestampMs', 'int64', '0+'),
    F('ClientTransactionVersion', 'int16', '1+', tag=2, tagged='1+', default=0),
])
# ---- END GENERATED COORDINATOR RECORDS ----
# fmt: on


# ---------------------------------------------------------------------------------------------
# Hand-declared additions
# ---------------------------------------------------------------------------------------------

#: APIs whose versions below Kafka 4.4.0's lowest kraftwire still serves (kraftwire.protocol.served), by the lowest
#: version it declares. Kafka 4.0 removed Produce v0-2 (KIP-896) but still advertises them, as librdkafka needs them
#: listed (KAFKA-18659), and refuses them per partition; kraftwire does the same. A test checks that every version
#: Kafka 4.4.0 has is left exactly as its spec declares it.
RETAINED_FROM: dict[str, int] = {"Produce": 0}


def _retain(message: str, lowest: int) -> None:
    """Re-declare *message* from version *lowest* on (its fields' versions already reach back to 0)."""
    m = MESSAGES[message]
    MESSAGES[message] = m._replace(valid=f"{lowest}-{m.valid.split('-')[-1]}")


for _api, _lowest in RETAINED_FROM.items():
    _retain(f"{_api}Request", _lowest)
    _retain(f"{_api}Response", _lowest)

# kraftwire's own state records. They travel as values of control records with kraftwire's control
# types (kraftwire.records.control) and in snapshots. Producer state has no record: it is rebuilt
# from the producer id / epoch / sequence in data-batch headers.

M("KraftwireGroupOffsetRecord", "data", None, "0", "0+", [
    F("Version", "int16", "0+"),  # the value version, first like Kafka's control values
    F("GroupId", "string", "0+"),
    F("Topic", "string", "0+"),
    F("Partition", "int32", "0+"),
    F("Offset", "int64", "0+", default=-1),  # -1 deletes the committed offset
    F("LeaderEpoch", "int32", "0+", default=-1),
    F("Metadata", "string", "0+", nullable="0+", default=None),
    F("CommitTimestamp", "int64", "0+", default=-1),
], kraftwire=True)

# The test server's group coordinator state: one record of Kafka's __consumer_offsets layout (the same keys and
# values a KRaft broker writes to that topic), carried inside a control record of the Raft log.
M("KraftwireGroupRecord", "data", None, "0", "0+", [
    F("Version", "int16", "0+"),  # the value version, first like Kafka's control values
    F("Key", "bytes", "0+"),
    F("Value", "bytes", "0+", nullable="0+", default=None),  # null: a tombstone
], kraftwire=True)

M("KraftwireGroupGenerationRecord", "data", None, "0", "0+", [
    F("Version", "int16", "0+"),  # the value version, first like Kafka's control values
    F("GroupId", "string", "0+"),
    F("GenerationId", "int32", "0+"),
    F("ProtocolType", "string", "0+", nullable="0+", default=None),
    F("ProtocolName", "string", "0+", nullable="0+", default=None),
    F("Leader", "string", "0+", nullable="0+", default=None),
    F("Members", "[]Member", "0+", fields=[
        F("MemberId", "string", "0+"),
        F("GroupInstanceId", "string", "0+", nullable="0+", default=None),
        F("ClientId", "string", "0+"),
        F("ClientHost", "string", "0+"),
        F("RebalanceTimeoutMs", "int32", "0+", default=-1),
        F("SessionTimeoutMs", "int32", "0+"),
        F("Subscription", "bytes", "0+"),
        F("Assignment", "bytes", "0+"),
    ]),
], kraftwire=True)

M("KraftwireBrokerRegistrationRecord", "data", None, "0", "0+", [
    F("Version", "int16", "0+"),  # the value version, first like Kafka's control values
    F("BrokerId", "int32", "0+"),
    F("IncarnationId", "uuid", "0+"),
    F("BrokerEpoch", "int64", "0+", default=-1),
    F("Rack", "string", "0+", nullable="0+", default=None),
    F("Fenced", "bool", "0+", default=False),
    F("Endpoints", "[]Endpoint", "0+", fields=[
        F("Name", "string", "0+"),
        F("Host", "string", "0+"),
        F("Port", "uint16", "0+"),
        F("SecurityProtocol", "int16", "0+"),
    ]),
], kraftwire=True)

# A registered broker's lifecycle state after its registration (1 Fenced, 2 Online, 3 Stopping = controlled
# shutdown, 4 Offline); BrokerEpoch names the registration it applies to.
M("KraftwireBrokerStateRecord", "data", None, "0", "0+", [
    F("Version", "int16", "0+"),  # the value version, first like Kafka's control values
    F("BrokerId", "int32", "0+"),
    F("BrokerEpoch", "int64", "0+"),
    F("State", "int8", "0+"),
], kraftwire=True)
