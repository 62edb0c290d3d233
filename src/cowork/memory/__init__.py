"""The memory layers beyond the document index (DESIGN §8): working memory, a structured profile of the user that
is in every prompt (`WorkingMemory`), and semantic recall over a folder's past conversations (`ConversationRecall`).
The hot cache and the deep store are the `memory` tool's files (`cowork.tools`); the indexes themselves are
`cowork.retrieval`'s."""

from ._profile import (
    MAX_ENTRIES,
    MAX_KEY_CHARS,
    MAX_TOTAL_CHARS,
    MAX_VALUE_CHARS,
    ProfileEntry,
    ProfileError,
    WorkingMemory,
    normalize_key,
    render_profile,
)
from ._recall import ConversationRecall, render_recall

__all__ = [
    "MAX_ENTRIES",
    "MAX_KEY_CHARS",
    "MAX_TOTAL_CHARS",
    "MAX_VALUE_CHARS",
    "ConversationRecall",
    "ProfileEntry",
    "ProfileError",
    "WorkingMemory",
    "normalize_key",
    "render_profile",
    "render_recall",
]
