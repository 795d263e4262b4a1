"""Which voter an observer fetches from while it knows no leader (or its leader went quiet).

A pick is random among the voters; ``unresponsive`` ones (a leader that went quiet, one whose request timed out)
are skipped until a fetch succeeds again (``reset``); ``skip`` (one that just answered without naming a leader)
only this once. A dead node's port may hang rather than refuse, so a live voter is always preferred; when every
voter is unresponsive, all are tried again.
"""

from __future__ import annotations


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
        alive = [v for v in self.voters if v not in self.quiet]
        if not alive:
            self.quiet.clear()
            alive = self.voters
        choices = [v for v in alive if v not in skip] or alive
        self.target = choices[self.rng.randrange(0, len(choices))]
        return self.target

    def fetched(self) -> None:
        """A fetch succeeded: follow the leader again and trust every voter."""
        self.target = None
        self.quiet.clear()
