"""Sessions and their append-only event log: the journal (write before tell), the bus, the service."""

from ._bus import EventBus, Subscriber
from ._journal import Journal, Mutation
from ._service import AUTO_MODEL, SessionService, event_from_row, new_id, session_not_found

__all__ = [
    "AUTO_MODEL",
    "EventBus",
    "Journal",
    "Mutation",
    "SessionService",
    "Subscriber",
    "event_from_row",
    "new_id",
    "session_not_found",
]
