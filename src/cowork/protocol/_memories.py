"""The written memories on the wire (`memory/list|get|update|delete`): the hot cache (`AGENT.md`) and the deep
store's notes, per folder (`project`) and for the user everywhere (`user`), as the `memory` tool keeps them; and
the user's profile, the working memory (`memory/profile`, `memory/profile/set|delete`), as the `profile` tool
keeps it."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from ._base import Params, WireModel

__all__ = [
    "MemoryContent",
    "MemoryDeleteResult",
    "MemoryFileInfo",
    "MemoryListParams",
    "MemoryListResult",
    "MemoryRef",
    "MemoryScope",
    "MemoryUpdateParams",
    "ObservationDeleteParams",
    "ObservationInfo",
    "ObservationListResult",
    "ObserveParams",
    "ProfileDeleteParams",
    "ProfileEntryInfo",
    "ProfileInfo",
    "ProfileSetParams",
]

MemoryScope = Literal["project", "user"]
MAX_MEMORY_CHARS = 200_000


class MemoryListParams(Params):
    session_id: str | None = Field(default=None, max_length=200, description="This session's folder's memories.")
    workspace: str | None = Field(default=None, max_length=4096, description="Or this folder's (an absolute path).")


class MemoryRef(MemoryListParams):
    scope: MemoryScope
    key: str = Field(
        min_length=1,
        max_length=500,
        description="`AGENT.md` for the hot cache, or a note of the deep store (`people/sarah`; `.md` optional). "
        "Keys that leave the store (`..`, an absolute path) are `invalid_params`.",
    )


class MemoryUpdateParams(MemoryRef):
    content: str = Field(max_length=MAX_MEMORY_CHARS, description="The whole new text (created when missing).")


class MemoryFileInfo(WireModel):
    scope: MemoryScope
    key: str
    path: str = Field(description="Where the file is.")
    size_bytes: int
    lines: int
    hot: bool = Field(description="The hot cache, loaded into every conversation.")
    updated_at: datetime


class MemoryListResult(WireModel):
    memories: list[MemoryFileInfo] = Field(description="Project memories first (the hot cache first), then user.")


class MemoryContent(WireModel):
    memory: MemoryFileInfo
    content: str


class MemoryDeleteResult(WireModel):
    deleted: MemoryFileInfo


class ProfileEntryInfo(WireModel):
    key: str
    value: str
    source: Literal["user", "agent"] = Field(description="Who wrote it last: the user (a client) or the agent.")
    updated_at: datetime


class ProfileInfo(WireModel):
    entries: list[ProfileEntryInfo] = Field(description="By key. All of them are in every main agent's prompt.")
    max_entries: int
    max_value_chars: int


class ProfileSetParams(Params):
    key: str = Field(
        min_length=1,
        max_length=100,
        description="`name`, `role`, `communication_style`…: letters, digits and underscores (spaces become "
        "underscores, capitals small letters).",
    )
    value: str = Field(min_length=1, max_length=2000, description="One line (longer is `invalid_params`).")


class ProfileDeleteParams(Params):
    key: str = Field(min_length=1, max_length=100)


class ObserveParams(Params):
    session_id: str = Field(min_length=1, max_length=200)


class ObservationInfo(WireModel):
    id: str = Field(description="`<session>/<operation>`: the conversation and the `observe` operation that noted it.")
    title: str
    text: str = Field(description="Dated observations, one per line (`- 2026-11-27: …`).")
    noted_at: datetime


class ObservationListResult(WireModel):
    observations: list[ObservationInfo] = Field(description="Newest first.")


class ObservationDeleteParams(MemoryListParams):
    id: str = Field(min_length=1, max_length=500)
