"""One partition's next state, as Kafka's PartitionChangeBuilder decides it, pure.

``partition_change(p, ...)`` takes a partition's registration, the ISR it should have and which brokers may lead,
and returns the PartitionChangeRecord that gets it there, or None when nothing changes (no record is written then).

Leader election:

* a valid leader is in the target ISR and acceptable (active: registered, unfenced, not in controlled shutdown; a
  broker being fenced or shut down is never acceptable, one being unfenced is);
* ONLINE (the default): the current leader if still valid, else the first valid replica in replica order;
* PREFERRED: the first replica if valid, else the current leader if valid, else the first valid replica;
* UNCLEAN (the topic's ``unclean.leader.election.enable``, or ElectLeaders UNCLEAN): when no replica is valid, the
  first acceptable replica leads with ISR = [it] and the leader recovery state RECOVERING;
* nobody: leader -1.

The ISR is never written empty (kraftwire's metadata versions have no eligible leader replicas): a change that
would remove its last member leaves the ISR as it is and only the leader goes to -1. A new leader bumps the leader
epoch (``Leader`` set in the record); below metadata.version 3.6-IV0 an ISR shrink also does (the leader rewritten
as itself). Every record bumps the partition epoch (the image's replay does both).
"""

from __future__ import annotations

from typing import Callable

from kraftwire.metadata.image import NO_LEADER, NO_LEADER_CHANGE, PartitionRegistration
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.metadata.version import MetadataVersion
from kraftwire.protocol import messages as m

ONLINE, PREFERRED, UNCLEAN = "online", "preferred", "unclean"
RECOVERED, RECOVERING = 0, 1


def elect(p: PartitionRegistration, isr: tuple[int, ...], acceptable: Callable[[int], bool],
          election: str = ONLINE) -> tuple[int, bool]:
    """``(leader, unclean)`` for ``p`` with target ISR ``isr``."""

    def valid(r: int) -> bool:
        return r in isr and acceptable(r)

    if election == PREFERRED and p.replicas and valid(p.replicas[0]):
        return p.replicas[0], False
    if valid(p.leader):
        return p.leader, False
    for r in p.replicas:
        if valid(r):
            return r, False
    if election == UNCLEAN:
        for r in p.replicas:
            if acceptable(r):
                return r, True
    return NO_LEADER, False


def partition_change(mv: MetadataVersion, topic_id, partition_id: int, p: PartitionRegistration, *,
                     acceptable: Callable[[int], bool], isr: tuple[int, ...] | None = None,
                     election: str = ONLINE,
                     recovery_state: int | None = None) -> ApiMessageAndVersion | None:
    """The PartitionChangeRecord moving ``p`` to target ISR ``isr`` (default: unchanged) with a leader chosen by
    ``election``, or None when that changes nothing."""
    target_isr = p.isr if isr is None else tuple(isr)
    leader, unclean = elect(p, target_isr, acceptable, election)
    record = m.PartitionChangeRecord(partition_id=partition_id, topic_id=topic_id, leader=NO_LEADER_CHANGE,
                                     isr=None, leader_recovery_state=-1)
    if leader != p.leader:
        record.leader = leader
        if unclean:
            record.isr = [leader]
            if p.leader_recovery_state != RECOVERING:
                record.leader_recovery_state = RECOVERING
    if record.isr is None and target_isr and target_isr != p.isr:
        record.isr = list(target_isr)
    # before 3.6-IV0 brokers learn of an ISR shrink only through a new leader epoch
    if (not mv.at_least("3.6-IV0") and record.leader == NO_LEADER_CHANGE and record.isr is not None
            and not set(p.isr) <= set(record.isr)):
        record.leader = p.leader
    if recovery_state is not None and recovery_state != p.leader_recovery_state and record.leader_recovery_state == -1:
        record.leader_recovery_state = recovery_state
    if record.leader == NO_LEADER_CHANGE and record.isr is None and record.leader_recovery_state == -1:
        return None
    return ApiMessageAndVersion(record, mv.partition_record_version)
