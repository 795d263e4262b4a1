"""Which voter an observer fetches from while it knows no leader (or its leader went quiet).

A pick is random among the voters; ``unresponsive`` ones (a leader that went quiet, one whose request timed out)
are skipped until a fetch succeeds again (``reset``); ``skip`` (one that just answered without naming a leader)
only this once. A dead node's port may hang rather than refuse, so a live voter is always preferred; when every
voter is unresponsive, or the only one left is the one to skip, all are tried again (else an observer whose leader
went quiet once - a lost answer - and whose one responsive voter keeps naming that leader asks it forever).
"""

from __future__ import annotations

from kraftwire.ids import NO_ID


class ObserverTarget:
    def __init__(self, voters, rng) -> None:
        self.voters = sorted(voters)
        self.rng = rng
        #: the voter to fetch from, None: the known leader (or pick one when there is none)
        self.target: int | None = None
        #: voters given up on since the last successful fetch
        self.quiet: set[int] = set()

    def pick(self, *, unresponsive=(), skip=()) -> int:
        self.quiet.update(v for v in unresponsive if v is not None)
        choices = [v for v in self.voters if v not in self.quiet and v not in skip]
        if not choices:  # every voter unresponsive, or the one to skip is the only one left: all are tried again
            self.quiet.clear()
            choices = [v for v in self.voters if v not in skip] or self.voters
        self.target = choices[self.rng.randrange(0, len(choices))]
        return self.target

    def refused(self, src: int, named: int, leader: int | None) -> None:
        """``src`` answered this observer's Fetch or FetchSnapshot with an error naming ``named`` as the leader;
        ``leader`` is the one it follows (None: none). The answer confirms that leader, which has not gone quiet:
        fetch from it; else ask another voter."""
        if leader is not None and named == leader and named not in (NO_ID, src) and named not in self.quiet:
            self.target = None
        else:
            self.pick(skip=(src,))

    def fetched(self) -> None:
        """A fetch succeeded: follow the leader again and trust every voter."""
        self.target = None
        self.quiet.clear()
