"""Follower fetching (KIP-392): the leader's choice of a replica for a consumer, ``kraftwire.replica.read_replica``.
Mirrors Kafka's ``ReplicaSelectorTest`` (the rack-aware selector) and ``ReplicaManagerTest``'s preferred read replica
cases (``testReplicaSelector``, ``testPreferredReplicaAsFollower``, ``testPreferredReplicaAsLeader``,
``testPreferredReplicaAsLeaderWhenSameRackFollowerIsOutOfIsr``, ``testFetchFromFollowerShouldNotRunPreferLeaderSelect``,
``testDefaultReplicaSelector``, ``testUnknownReplicaSelector``)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kraftwire.config import Config
from kraftwire.errors import ConfigError
from kraftwire.replica.partition import ReplicaState
from kraftwire.replica.read_replica import (
    NO_PREFERENCE,
    RACK_AWARE_SELECTOR,
    ReplicaView,
    has_client_metadata,
    preferred_read_replica,
    select_rack_aware,
)

RACKS = {0: "rack-a", 1: "rack-b", 2: "rack-c"}


def state(me=0, leader=0, replicas=(0, 1, 2), isr=(0, 1, 2)) -> ReplicaState:
    s = ReplicaState(me, "t", 0)
    s.apply(SimpleNamespace(leader=leader, replicas=replicas, isr=isr, leader_epoch=1, partition_epoch=1),
            log_end=10, now_ms=1000)
    return s


def fetched(s: ReplicaState, follower: int, end: int, start: int = 0, now_ms: int = 1000, leader_end: int = 10):
    s.follower_fetched(follower, end, -1, now_ms, leader_end, start)


def choose(s: ReplicaState, rack="rack-b", offset=5, racks=RACKS, selector=RACK_AWARE_SELECTOR, now_ms=1000):
    return preferred_read_replica(s, selector=selector, client_rack=rack, fetch_offset=offset, log_end=10,
                                  racks=racks, now_ms=now_ms)


# ------------------------------------------------------------------------------------------ the rack-aware selector
def view(broker, rack, end=10, since=0):
    return ReplicaView(broker, rack, end, since)


def test_same_rack_selects_the_most_caught_up_replica():  # ReplicaSelectorTest.testSameRackSelector
    leader = view(0, "rack-a")
    replicas = [leader, view(1, "rack-b", end=8), view(2, "rack-b", end=9), view(3, "rack-c")]
    assert select_rack_aware("rack-b", replicas, leader).broker_id == 2


def test_the_leader_is_chosen_when_it_is_in_the_clients_rack():
    leader = view(0, "rack-b", end=10)
    assert select_rack_aware("rack-b", [leader, view(1, "rack-b", end=10)], leader) is leader


def test_no_replica_in_the_clients_rack_or_no_rack_at_all_is_the_leader():  # testSameRackSelector, "no rack"
    leader = view(0, "rack-a")
    replicas = [leader, view(1, "rack-b")]
    assert select_rack_aware("rack-z", replicas, leader) is leader
    assert select_rack_aware("", replicas, leader) is leader
    assert select_rack_aware(None, replicas, leader) is leader


def test_ties_go_to_the_least_time_since_caught_up_then_the_largest_id():  # ReplicaView.comparator
    leader = view(0, "rack-a")
    assert select_rack_aware("rack-b", [leader, view(1, "rack-b", since=50), view(2, "rack-b", since=10)],
                             leader).broker_id == 2
    assert select_rack_aware("rack-b", [leader, view(2, "rack-b"), view(1, "rack-b")], leader).broker_id == 2


def test_a_replica_without_an_endpoint_on_the_listener_matches_no_rack():  # Node.noNode() has no rack
    leader = view(0, "rack-a")
    assert select_rack_aware("rack-b", [leader, ReplicaView(1, "rack-b", 10, 0, has_endpoint=False)],
                             leader) is leader


# ------------------------------------------------------------------------------------------ the leader's answer
def test_a_follower_in_the_clients_rack_is_preferred():  # testFetchShouldReturnImmediatelyWhenPreferredReadReplicaIsDefined
    s = state()
    fetched(s, 1, 10)
    fetched(s, 2, 10)
    assert choose(s) == 1
    assert choose(s, rack="rack-c") == 2


def test_the_leader_in_the_clients_rack_is_no_preference():  # testReplicaSelector, testPreferredReplicaAsLeader
    s = state()
    fetched(s, 1, 10)
    assert choose(s, rack="rack-a") == NO_PREFERENCE
    assert choose(s, rack="") == NO_PREFERENCE


def test_a_follower_out_of_the_isr_is_never_preferred():  # testPreferredReplicaAsLeaderWhenSameRackFollowerIsOutOfIsr
    s = state(isr=(0, 2))
    fetched(s, 1, 10)
    assert choose(s) == NO_PREFERENCE


def test_a_follower_whose_log_does_not_cover_the_offset_is_never_preferred():
    s = state()
    fetched(s, 1, 4)  # its log ends below the fetch offset 5
    assert choose(s) == NO_PREFERENCE
    fetched(s, 1, 10, start=6)  # its log starts above it
    assert choose(s) == NO_PREFERENCE
    fetched(s, 1, 10, start=5)
    assert choose(s) == 1


def test_a_follower_not_heard_from_in_this_epoch_has_an_unknown_end():  # Replica.resetReplicaState on a new leader
    s = state()
    assert choose(s, offset=0) == NO_PREFERENCE
    fetched(s, 1, 0)
    assert choose(s, offset=0) == 1


def test_a_fenced_or_unlisted_replica_is_never_sent_to():  # getPartitionReplicaEndpoints: unfenced, on the listener
    s = state()
    fetched(s, 1, 10)
    assert choose(s, racks={0: "rack-a", 2: "rack-c"}) == NO_PREFERENCE


def test_only_the_leader_selects():  # testPreferredReplicaAsFollower, testFetchFromFollowerShouldNotRunPreferLeaderSelect
    assert choose(state(me=1, leader=0)) == NO_PREFERENCE


def test_without_a_selector_nothing_is_preferred():  # testDefaultReplicaSelector
    s = state()
    fetched(s, 1, 10)
    assert choose(s, selector="") == NO_PREFERENCE


def test_client_metadata_comes_with_a_consumers_fetch_from_v11():  # KafkaApis: ClientMetadata from v11
    assert has_client_metadata(11, -1) and has_client_metadata(18, -1) and has_client_metadata(17, -2)
    assert not has_client_metadata(10, -1)
    assert not has_client_metadata(18, 2)  # a replica broker's fetch: FetchRequest.isValidBrokerId


# ------------------------------------------------------------------------------------------ the setting
def test_the_selector_setting_takes_kafkas_class_name_or_nothing():  # testUnknownReplicaSelector
    assert Config.from_properties({}).replica_selector_class == ""
    assert Config.from_properties({"replica.selector.class": RACK_AWARE_SELECTOR}).replica_selector_class \
        == RACK_AWARE_SELECTOR
    with pytest.raises(ConfigError, match="the only replica selector is"):
        Config.from_properties({"replica.selector.class": "non-a-class"})
