"""The answer to a controller request refused as a whole (Kafka's ``AbstractRequest.getErrorResponse``), pure.

``refusal(api, request, version, code, message)`` is the response every part of ``request`` gets when it is not
decided at all: NOT_CONTROLLER on a node that is not the active controller (or that lost the leadership before the
records committed), REQUEST_TIMED_OUT when they did not commit in time. Per-entry answers (CreateTopics, DeleteTopics,
CreatePartitions, the two AlterConfigs, ElectLeaders, UpdateFeatures, CreateAcls, DeleteAcls,
AlterPartitionReassignments) carry the code on every entry named, as Kafka's do; the others carry it at the top.
(SECURITY_DISABLED "No Authorizer is configured." for CreateAcls/DeleteAcls on a node without an authorizer is such
an answer too.)
"""

from __future__ import annotations

from kraftwire.error_codes import (CLUSTER_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED,
                                   default_message)
from kraftwire.ids import ZERO_UUID
from kraftwire.protocol import messages as m

#: the codes of an item Kafka's ControllerApis refuses by its ACLs
ACL_CODES = frozenset({TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED})


def refusal(api: str, request, version: int, code: int, message: str | None = None):
    build = _BUILDERS.get(api)
    if build is None:
        raise KeyError(f"no refusal for {api}")
    return build(request, version, code, message)


def acl_message(api: str, code: int) -> str | None:
    """The message of an item Kafka's ControllerApis refuses with ``code``: CreateTopics says "Authorization
    failed.", CreatePartitions sets no message, the others answer an ``ApiError`` of the code alone, which carries the
    code's default text ("Topic authorization failed."); other codes (an id the principal may not see) none. A
    broker's configs are refused by the broker a client asks, before it forwards the rest (its ConfigAdminManager),
    without a message."""
    if code not in ACL_CODES or api == "CreatePartitions":
        return None
    if code == CLUSTER_AUTHORIZATION_FAILED and api in ("AlterConfigs", "IncrementalAlterConfigs"):
        return None
    return "Authorization failed." if api == "CreateTopics" else default_message(code)


def _registration(req, version, code, message):
    return m.BrokerRegistrationResponse(throttle_time_ms=0, error_code=code, broker_epoch=-1)


def _controller_registration(req, version, code, message):
    return m.ControllerRegistrationResponse(throttle_time_ms=0, error_code=code,
                                            error_message=message or default_message(code))


def _heartbeat(req, version, code, message):
    return m.BrokerHeartbeatResponse(throttle_time_ms=0, error_code=code, is_caught_up=False, is_fenced=True,
                                     should_shut_down=False)


def _create_topics(req, version, code, message):
    R = m.CreateTopicsResponse
    return R(throttle_time_ms=0, topics=[
        R.CreatableTopicResult(name=t.name, topic_id=ZERO_UUID, error_code=code, error_message=message,
                               topic_config_error_code=0, num_partitions=-1, replication_factor=-1, configs=[])
        for t in req.topics])


def _delete_topics(req, version, code, message):
    R = m.DeleteTopicsResponse
    if version >= 6:
        wanted = [(t.name, t.topic_id) for t in req.topics]
    else:
        wanted = [(name, ZERO_UUID) for name in req.topic_names]
    return R(throttle_time_ms=0, responses=[R.DeletableTopicResult(name=name, topic_id=tid, error_code=code,
                                                                   error_message=message)
                                            for name, tid in wanted])


def _create_partitions(req, version, code, message):
    R = m.CreatePartitionsResponse
    return R(throttle_time_ms=0, results=[R.CreatePartitionsTopicResult(name=t.name, error_code=code,
                                                                        error_message=message)
                                          for t in req.topics])


def _alter_partition(req, version, code, message):
    return m.AlterPartitionResponse(throttle_time_ms=0, error_code=code, topics=[])


def _elect_leaders(req, version, code, message):
    R = m.ElectLeadersResponse
    results = [R.ReplicaElectionResult(topic=tp.topic, partition_result=[
        R.PartitionResult(partition_id=p, error_code=code, error_message=message) for p in tp.partitions])
        for tp in (req.topic_partitions or [])]
    return R(throttle_time_ms=0, error_code=code if version >= 1 else 0, replica_election_results=results)


def _alter_configs(cls):
    def build(req, version, code, message):
        return cls(throttle_time_ms=0, responses=[
            cls.AlterConfigsResourceResponse(error_code=code, error_message=message, resource_type=r.resource_type,
                                             resource_name=r.resource_name)
            for r in req.resources])
    return build


def _update_features(req, version, code, message):
    # UpdateFeaturesResponse.createWithErrors: an error at the top names no feature
    return m.UpdateFeaturesResponse(throttle_time_ms=0, error_code=code, error_message=message, results=[])


def _unregister_broker(req, version, code, message):
    return m.UnregisterBrokerResponse(throttle_time_ms=0, error_code=code, error_message=message)


def _unregister_controller(req, version, code, message):
    return m.UnregisterControllerResponse(throttle_time_ms=0, error_code=code, error_message=message)


def _allocate_producer_ids(req, version, code, message):
    return m.AllocateProducerIdsResponse(throttle_time_ms=0, error_code=code, producer_id_start=-1,
                                         producer_id_len=0)


def _assign_replicas_to_dirs(req, version, code, message):
    return m.AssignReplicasToDirsResponse(throttle_time_ms=0, error_code=code, directories=[])


def _create_acls(req, version, code, message):
    R = m.CreateAclsResponse
    return R(throttle_time_ms=0, results=[R.AclCreationResult(error_code=code, error_message=message)
                                          for _ in (req.creations or [])])


def _delete_acls(req, version, code, message):
    R = m.DeleteAclsResponse
    return R(throttle_time_ms=0, filter_results=[
        R.DeleteAclsFilterResult(error_code=code, error_message=message, matching_acls=[])
        for _ in (req.filters or [])])


def _alter_user_scram_credentials(req, version, code, message):
    # every user the request names, once, sorted by name (AlterUserScramCredentialsRequest.getErrorResponse)
    R = m.AlterUserScramCredentialsResponse
    users = sorted({d.name for d in req.deletions} | {u.name for u in req.upsertions},
                   key=lambda u: u.encode("utf-16-be", "surrogatepass"))  # Java's String order
    return R(throttle_time_ms=0, results=[R.AlterUserScramCredentialsResult(user=u, error_code=code,
                                                                            error_message=message) for u in users])


def _describe_user_scram_credentials(req, version, code, message):
    # DescribeUserScramCredentialsRequest.getErrorResponse: the code at the top, and one result per user named that
    # leaves the user's name out (empty)
    R = m.DescribeUserScramCredentialsResponse
    return R(throttle_time_ms=0, error_code=code, error_message=message, results=[
        R.DescribeUserScramCredentialsResult(user="", error_code=code, error_message=message, credential_infos=[])
        for _ in req.users or []])


def _alter_partition_reassignments(req, version, code, message):
    # AlterPartitionReassignmentsRequest.getErrorResponse: the code at the top and on every partition named
    R = m.AlterPartitionReassignmentsResponse
    return R(throttle_time_ms=0, allow_replication_factor_change=True, error_code=code, error_message=message,
             responses=[R.ReassignableTopicResponse(name=t.name, partitions=[
                 R.ReassignablePartitionResponse(partition_index=p.partition_index, error_code=code,
                                                 error_message=message) for p in t.partitions])
                 for t in req.topics])


def _list_partition_reassignments(req, version, code, message):
    # ListPartitionReassignmentsRequest.getErrorResponse: the code at the top, each partition named with empty lists
    R = m.ListPartitionReassignmentsResponse
    return R(throttle_time_ms=0, error_code=code, error_message=message, topics=[
        R.OngoingTopicReassignment(name=t.name, partitions=[
            R.OngoingPartitionReassignment(partition_index=i, replicas=[], adding_replicas=[], removing_replicas=[])
            for i in t.partition_indexes]) for t in req.topics or []])


def _alter_client_quotas(req, version, code, message):
    # AlterClientQuotasRequest.getErrorResponse: every entry with its entity as listed
    R = m.AlterClientQuotasResponse
    return R(throttle_time_ms=0, entries=[R.EntryData(error_code=code, error_message=message, entity=[
        R.EntityData(entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity])
        for entry in req.entries])


def _describe_client_quotas(req, version, code, message):
    # DescribeClientQuotasRequest.getErrorResponse: the code at the top, entries null
    return m.DescribeClientQuotasResponse(throttle_time_ms=0, error_code=code, error_message=message, entries=None)


_BUILDERS = {
    "ControllerRegistration": _controller_registration,
    "BrokerRegistration": _registration,
    "BrokerHeartbeat": _heartbeat,
    "CreateTopics": _create_topics,
    "DeleteTopics": _delete_topics,
    "CreatePartitions": _create_partitions,
    "AlterPartition": _alter_partition,
    "ElectLeaders": _elect_leaders,
    "IncrementalAlterConfigs": _alter_configs(m.IncrementalAlterConfigsResponse),
    "AlterConfigs": _alter_configs(m.AlterConfigsResponse),
    "UpdateFeatures": _update_features,
    "AllocateProducerIds": _allocate_producer_ids,
    "UnregisterBroker": _unregister_broker,
    "UnregisterController": _unregister_controller,
    "AssignReplicasToDirs": _assign_replicas_to_dirs,
    "CreateAcls": _create_acls,
    "DeleteAcls": _delete_acls,
    "AlterUserScramCredentials": _alter_user_scram_credentials,
    "DescribeUserScramCredentials": _describe_user_scram_credentials,
    "AlterPartitionReassignments": _alter_partition_reassignments,
    "ListPartitionReassignments": _list_partition_reassignments,
    "AlterClientQuotas": _alter_client_quotas,
    "DescribeClientQuotas": _describe_client_quotas,
}

#: every api the controller decides has a refusal, and DescribeUserScramCredentials and DescribeClientQuotas (refused
#: on the cluster's ACLs)
APIS = frozenset(_BUILDERS)
