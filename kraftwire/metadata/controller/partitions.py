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

Reassignment (KIP-455): the change may also set the target replicas, adding and removing replicas. Whatever the
change, an ongoing reassignment whose adding replicas are all in the target ISR (and that keeps one member after
the removing replicas leave) completes in the same record, as Kafka's builder completes it on every change: the
removing replicas leave the replicas and the ISR, adding/removing are cleared, and the leader is elected over the
remaining replicas. A change whose replicas no longer hold all the old ones bumps the leader epoch (a removed
replica must stop fetching). Directories are written with the replicas from 3.7-IV2: each kept replica's, and
``default_dir(broker)`` for a new one.

Eligible leader replicas (KIP-966, ``eligible.leader.replicas.version`` 1, ``elr=True``): while the target ISR is
smaller than ``min_isr`` (the topic's effective min.insync.replicas), every member of the current ISR or ELR that
leaves the ISR joins the ELR, except the ``unclean_shutdown`` replicas (a broker that restarted without its clean
shutdown marker); an ISR of at least ``min_isr`` empties the ELR. The ISR may then be written empty (its last member
fenced): the leader goes to -1 and ``LastKnownElr`` keeps that last leader. While the ISR is empty an acceptable ELR
member is a valid leader; elected, it becomes the ISR alone and leaves the ELR (a clean election). With ISR and ELR
both empty, the last known leader (the only member of ``LastKnownElr``) is elected if acceptable, as an unclean
election (RECOVERING). An unclean election clears ELR and LastKnownElr; a partition that has or gets a leader has its
LastKnownElr cleared. Kafka's controller always keeps the last known leader in ``LastKnownElr`` (its builder's
``useLastKnownLeaderInBalancedRecovery``), so that is the only mode here.

Without ELR the ISR is never written empty: a change that would remove its last member leaves the ISR as it is and
only the leader goes to -1. A new leader bumps the leader epoch (``Leader`` set in the record); below
metadata.version 3.6-IV0 an ISR shrink also does (the leader rewritten as itself). Every record bumps the partition
epoch (the image's replay does both).
"""

from __future__ import annotations

from typing import Callable

from kraftwire.ids import UUID
from kraftwire.metadata.image import NO_LEADER, NO_LEADER_CHANGE, UNASSIGNED_DIR, PartitionRegistration
from kraftwire.metadata.records import ApiMessageAndVersion
from kraftwire.metadata.version import MetadataVersion
from kraftwire.protocol import messages as m

ONLINE, PREFERRED, UNCLEAN = "online", "preferred", "unclean"
RECOVERED, RECOVERING = 0, 1


def elect(p: PartitionRegistration, isr: tuple[int, ...], acceptable: Callable[[int], bool],
          election: str = ONLINE, replicas: tuple[int, ...] | None = None, *, elr: tuple[int, ...] = (),
          elr_enabled: bool = False) -> tuple[int, bool]:
    """``(leader, unclean)`` for ``p`` with target ISR ``isr`` and target ELR ``elr`` over the target ``replicas``
    (default: p's); ``elr_enabled``: the last known leader may be elected when ISR and ELR are empty."""
    replicas = p.replicas if replicas is None else replicas

    def valid(r: int) -> bool:
        return (r in isr or (not isr and r in elr)) and acceptable(r)

    if election == PREFERRED and replicas and valid(replicas[0]):
        return replicas[0], False
    if valid(p.leader):
        return p.leader, False
    for r in replicas:
        if valid(r):
            return r, False
    last_known = p.last_known_elr
    if elr_enabled and not isr and not elr and len(last_known) == 1 and acceptable(last_known[0]):
        return last_known[0], True
    if election == UNCLEAN:
        for r in replicas:
            if acceptable(r):
                return r, True
    return NO_LEADER, False


def target_elr(p: PartitionRegistration, isr: tuple[int, ...], min_isr: int,
               unclean_shutdown: tuple[int, ...] = (), replicas: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """Kafka's maybePopulateTargetElr: the ELR once the ISR is ``isr``. Empty when ``isr`` holds at least
    ``min_isr`` members; else the current ISR and ELR members outside ``isr``, less ``unclean_shutdown``
    (ascending, the order Kafka's set of small broker ids gives).

    One deviation from Kafka 4.4: only members of the target ``replicas`` (default: p's) stay eligible. Kafka's
    builder keeps a replica that a reassignment (or its cancellation) removes from the assignment in the ELR,
    where it can never be elected and, non-empty, blocks the election of the last known leader: the partition
    simulation found a partition left leaderless for good that way (seed 32)."""
    if len(isr) >= min_isr:
        return ()
    keep = set(p.replicas if replicas is None else replicas)
    candidates = set(p.elr) | set(p.isr)
    return tuple(sorted(b for b in candidates if b not in isr and b not in unclean_shutdown and b in keep))


def completed(replicas: tuple[int, ...], adding: tuple[int, ...], removing: tuple[int, ...],
              isr: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """``(replicas, isr)`` once a reassignment is complete (Kafka's ``maybeCompleteReassignment``), else None: none
    in progress, every adding replica not in ``isr`` yet, or nothing would be left without the removing ones."""
    if not adding and not removing:
        return None
    if removing:
        isr = tuple(b for b in isr if b not in removing)
        replicas = tuple(b for b in replicas if b not in removing)
        if not isr or not replicas:
            return None
    if not set(replicas) <= set(isr):
        return None
    return replicas, isr


def partition_change(mv: MetadataVersion, topic_id, partition_id: int, p: PartitionRegistration, *,
                     acceptable: Callable[[int], bool], isr: tuple[int, ...] | None = None,
                     election: str = ONLINE, recovery_state: int | None = None,
                     replicas: tuple[int, ...] | None = None, adding: tuple[int, ...] | None = None,
                     removing: tuple[int, ...] | None = None,
                     default_dir: Callable[[int], UUID] = lambda b: UNASSIGNED_DIR, elr: bool = False,
                     min_isr: int = 1, unclean_shutdown: tuple[int, ...] = ()) -> ApiMessageAndVersion | None:
    """The PartitionChangeRecord moving ``p`` to target ISR ``isr``, replicas ``replicas``, ``adding`` and
    ``removing`` replicas (each default: unchanged) with a leader chosen by ``election``, or None when that changes
    nothing. ``elr``: eligible leader replicas are on, with the topic's effective ``min_isr``; ``unclean_shutdown``:
    replicas that may not stay in the ELR."""
    target_isr = p.isr if isr is None else tuple(isr)
    target_replicas = p.replicas if replicas is None else tuple(replicas)
    target_adding = p.adding_replicas if adding is None else tuple(adding)
    target_removing = p.removing_replicas if removing is None else tuple(removing)
    done = completed(target_replicas, target_adding, target_removing, target_isr)
    if done is not None:
        (target_replicas, target_isr), target_adding, target_removing = done, (), ()
    current_elr = p.elr
    new_elr = target_elr(p, target_isr, min_isr, unclean_shutdown, target_replicas) if elr else current_elr
    leader, unclean = elect(p, target_isr, acceptable, election, target_replicas, elr=new_elr, elr_enabled=elr)
    record = m.PartitionChangeRecord(partition_id=partition_id, topic_id=topic_id, leader=NO_LEADER_CHANGE,
                                     isr=None, leader_recovery_state=-1)
    if leader != p.leader:
        if leader in new_elr:  # a clean election from the ELR: the new leader is the whole ISR
            target_isr = (leader,)
            new_elr = tuple(b for b in new_elr if b != leader)
        record.leader = leader
        if unclean:
            record.isr = [leader]
            if p.leader_recovery_state != RECOVERING:
                record.leader_recovery_state = RECOVERING
    # a replica leaving the assignment must learn it through a new leader epoch
    if record.leader == NO_LEADER_CHANGE and not set(p.replicas) <= set(target_replicas):
        record.leader = p.leader
    if record.isr is not None or not elr:  # an unclean election (or ELR off) leaves no eligible leader replicas
        new_elr = ()
    if new_elr != current_elr:
        record.eligible_leader_replicas = list(new_elr)
    # with ELR the ISR may be written empty; without it, never
    if record.isr is None and (target_isr or elr) and target_isr != p.isr:
        record.isr = list(target_isr)
    # before 3.6-IV0 brokers learn of an ISR shrink only through a new leader epoch
    if (not mv.at_least("3.6-IV0") and record.leader == NO_LEADER_CHANGE and record.isr is not None
            and not set(p.isr) <= set(record.isr)):
        record.leader = p.leader
    if elr:
        _last_known_leader(p, record)
    if target_replicas:
        if mv.at_least("3.7-IV2"):
            current = (p.directories if len(p.directories) == len(p.replicas)
                       else (UNASSIGNED_DIR,) * len(p.replicas))
            old = dict(zip(p.replicas, current))
            directories = [old[b] if b in old else default_dir(b) for b in target_replicas]
            if tuple(directories) != current:
                record.directories = directories
        if target_replicas != p.replicas:
            record.replicas = list(target_replicas)
    if target_removing != p.removing_replicas:
        record.removing_replicas = list(target_removing)
    if target_adding != p.adding_replicas:
        record.adding_replicas = list(target_adding)
    if recovery_state is not None and recovery_state != p.leader_recovery_state and record.leader_recovery_state == -1:
        record.leader_recovery_state = recovery_state
    if (record.leader == NO_LEADER_CHANGE and record.isr is None and record.leader_recovery_state == -1
            and record.replicas is None and record.directories is None and record.adding_replicas is None
            and record.removing_replicas is None and record.eligible_leader_replicas is None
            and record.last_known_elr is None):
        return None
    return ApiMessageAndVersion(record, mv.partition_record_version)


def _last_known_leader(p: PartitionRegistration, record) -> None:
    """Kafka's maybeUpdateLastKnownLeader: the leader a partition had when its ISR first became empty is kept in
    LastKnownElr; once the partition has (or keeps) a leader, LastKnownElr is cleared."""
    last_known = p.last_known_elr
    if record.isr == [] and last_known != (p.leader,):
        record.last_known_elr = [p.leader]
    elif (record.leader >= 0 or (p.leader != NO_LEADER and record.leader != NO_LEADER)) and last_known:
        record.last_known_elr = []
