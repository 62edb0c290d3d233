"""Sessions and their append-only event log: the journal (write before tell), the bus, the service, the settings
(`session/update` and the live switches runners read), the todo list, and the checkpoints that let a change to
the folder be taken back."""

from ._bus import EventBus, Subscriber
from ._checkpoints import Checkpoints, Pending, RestorePlan
from ._export import EXPORT_FORMAT
from ._journal import Journal, Mutation
from ._service import AUTO_MODEL, SessionService, event_from_row, new_id, session_not_found
from ._settings import SessionFlags, SessionSettings
from ._todos import TodoList

__all__ = [
    "AUTO_MODEL",
    "EXPORT_FORMAT",
    "Checkpoints",
    "EventBus",
    "Journal",
    "Mutation",
    "Pending",
    "RestorePlan",
    "SessionFlags",
    "SessionService",
    "SessionSettings",
    "Subscriber",
    "TodoList",
    "event_from_row",
    "new_id",
    "session_not_found",
]
