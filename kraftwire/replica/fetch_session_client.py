"""A fetcher's side of a fetch session (KIP-227), as Kafka's ``FetchSessionHandler`` (clients) keeps it for a
replica fetcher: which partitions the next Fetch names, under which (session id, epoch), and what an answer means.

* **Building** (``build``): given every partition the fetcher wants now (an ordered map key -> request entry), a
  full request (epoch 0, or after any trouble) names them all and becomes the session's content; an incremental one
  names only the partitions added or whose entry changed (fetch offset, log start, max bytes, leader epochs) and
  forgets those no longer wanted. An entry whose topic id changed is forgotten under the old id and sent under the
  new one.
* **Answers** (``handle_response``): a top-level error ends the session — FETCH_SESSION_ID_NOT_FOUND starts over
  with a new one (id 0, epoch 0), any other closes this one and asks for a new one (the id, epoch 0); a full
  answer must list exactly the session's partitions, an incremental one none outside it, otherwise the same; id 0
  in an answer means the broker keeps no session (full requests from now on, still asking for one); otherwise the
  next request is the next epoch of the session the answer names. A failed exchange (``handle_error``) closes the
  session and asks for a new one.

Pure: no I/O. Keys are whatever identifies a partition to the caller ((topic, partition)); entries are
(topic id, request entry) pairs, compared with ``==``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.error_codes import FETCH_SESSION_ID_NOT_FOUND
from kraftwire.ids import ZERO_UUID
from kraftwire.replica.fetch_sessions import INITIAL_EPOCH, INVALID_SESSION_ID, next_epoch

__all__ = ["FetchPlan", "FetchSessionHandler"]


@dataclass(frozen=True, slots=True)
class FetchPlan:
    """One request to send: the session metadata, the entries to name (key -> entry, in order) and the keys to
    forget (each with the entry it was last sent as, for its topic id)."""
    session_id: int
    epoch: int
    to_send: dict
    to_forget: list

    @property
    def full(self) -> bool:
        return self.epoch in (INITIAL_EPOCH, -1)


def _replaced(before, after) -> bool:
    """Whether a partition's topic id changed (the topic was recreated): both known and different."""
    return before[0] != after[0] and ZERO_UUID not in (before[0], after[0])


class FetchSessionHandler:
    """The session with one broker (``FetchSessionHandler``)."""

    def __init__(self) -> None:
        self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
        self.session: dict = {}  # key -> entry last sent, in the session's order

    def build(self, wanted: dict) -> FetchPlan:
        if self.epoch == INITIAL_EPOCH:
            self.session = dict(wanted)
            return FetchPlan(self.session_id, self.epoch, dict(wanted), [])
        to_send, forget, changed = {}, [], []
        for key, before in list(self.session.items()):
            after = wanted.get(key)
            if after is None:
                del self.session[key]
                forget.append((key, before))
            elif after != before:
                if _replaced(before, after):
                    forget.append((key, before))
                self.session[key] = after
                changed.append(key)
        for key, entry in wanted.items():
            if key not in self.session:
                self.session[key] = entry
                to_send[key] = entry
        for key in changed:  # as Kafka's builder: added partitions first, then the altered ones
            to_send[key] = self.session[key]
        return FetchPlan(self.session_id, self.epoch, to_send, forget)

    def handle_response(self, plan: FetchPlan, error: int, session_id: int, listed) -> bool:
        """Take an answer to ``plan``: its top-level error, session id and the keys it lists. Whether its partitions
        may be used."""
        listed = set(listed)
        if error:
            self._restart(error == FETCH_SESSION_ID_NOT_FOUND)
            return False
        if plan.full:
            if listed != set(self.session):
                self._restart(True)
                return False
            if session_id == INVALID_SESSION_ID:
                self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
            else:
                self.session_id, self.epoch = session_id, next_epoch(INITIAL_EPOCH)
            return True
        if not listed <= set(self.session):
            self._restart(False)
            return False
        if session_id == INVALID_SESSION_ID:  # the broker closed the session
            self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
        else:
            self.epoch = next_epoch(self.epoch)
        return True

    def handle_error(self) -> None:
        """The exchange failed (no answer): close the session, ask for a new one."""
        self._restart(False)

    def _restart(self, forget_id: bool) -> None:
        if forget_id:
            self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH
