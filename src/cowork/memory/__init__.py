"""The memory layers beyond the document index (DESIGN §8): working memory, a structured profile of the user that
is in every prompt (`WorkingMemory`). The hot cache and the deep store are the `memory` tool's files
(`cowork.tools`); the document and conversation indexes are `cowork.retrieval`'s."""

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

__all__ = [
    "MAX_ENTRIES",
    "MAX_KEY_CHARS",
    "MAX_TOTAL_CHARS",
    "MAX_VALUE_CHARS",
    "ProfileEntry",
    "ProfileError",
    "WorkingMemory",
    "normalize_key",
    "render_profile",
]
