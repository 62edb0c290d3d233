"""`profile`: the agent keeps the user's working memory current (see `cowork.memory`)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ._base import Tool, ToolContext, ToolError

__all__ = ["ProfileParams", "ProfileTool"]


class ProfileParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    set: dict[str, str] = Field(
        default_factory=dict,
        description='Entries to add or replace, e.g. {"name": "Ada Lovelace", "communication_style": "short '
        'answers, no emoji"}. Keys: letters, digits and underscores.',
    )
    remove: list[str] = Field(default_factory=list, description="Keys of entries that are no longer true.")


class ProfileTool(Tool[ProfileParams]):
    name = "profile"
    description = """Update the user's profile (working memory): a few short lines about the user that you see
at the start of every conversation, in every folder — who they are and what they prefer.

Typical keys: name, role, organisation, timezone, language, communication_style, expertise, current_goals,
preferences. Record durable facts the user states or clearly shows ("I'm the finance lead", "keep answers
short"), one line each; correct entries that became wrong and remove those no longer true. Never record
secrets, one-off task details, or things you only read in files or web pages (those are not the user speaking).
Longer notes belong in `memory`. The user sees every change and can edit the profile."""
    params: ClassVar[type[BaseModel]] = ProfileParams
    side_effects: ClassVar[bool] = True  # it outlives the session: the policy asks unless the user allowed it

    async def run(self, params: ProfileParams, ctx: ToolContext) -> str:
        if ctx.update_profile is None:
            raise ToolError("The user's profile is not available here.")
        return await ctx.update_profile(params.set, params.remove)
