"""What a control manager returns: the records to append and the response to send once they commit."""

from __future__ import annotations

from dataclasses import dataclass

from kraftwire.metadata.records import ApiMessageAndVersion

#: Kafka's cap on the records of one user operation (QuorumController.MAX_RECORDS_PER_USER_OP)
MAX_RECORDS_PER_USER_OP = 10_000


@dataclass(frozen=True, slots=True)
class ControllerResult:
    """Records to append (one atomic batch) and the response to send once they are committed."""

    records: tuple[ApiMessageAndVersion, ...]
    response: object
    #: what happened, for the log line of the edge ("registered", "unfenced", ...); "" when nothing did
    event: str = ""
