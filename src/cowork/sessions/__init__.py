"""Sessions and their append-only event log: the journal (write before tell), the bus, the service, the settings
(`session/update` and the live switches runners read), the todo list, and the checkpoints that let a change to
the folder be taken back."""

from ._bus import EventBus, Subscriber
from ._checkpoints import Checkpoints, Pending
from ._export import EXPORT_FORMAT
from ._fanout import CHANNEL, EventFanout
from ._journal import Journal, Mutation
from ._restore import RestorePlan
from ._service import AUTO_MODEL, SessionService, event_from_row, new_id, session_not_found
from ._settings import SessionFlags, SessionSettings
from ._shadow import GIT_MISSING, git_path
from ._todos import TodoList

__all__ = [
    "AUTO_MODEL",
    "CHANNEL",
    "EXPORT_FORMAT",
    "GIT_MISSING",
    "Checkpoints",
    "EventBus",
    "EventFanout",
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
    "git_path",
    "new_id",
    "session_not_found",
]
