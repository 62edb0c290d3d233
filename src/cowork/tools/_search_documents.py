"""`searchDocuments`: the folder's documents searched by meaning and by keywords (the hybrid index)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ._base import Tool, ToolContext, ToolError
from ._untrusted import untrusted_block

__all__ = ["SearchDocumentsParams", "SearchDocumentsTool"]


class SearchDocumentsParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1,
        max_length=2000,
        description="What you are looking for, in plain words (a question or a description works better than "
        "a single keyword).",
    )
    limit: int = Field(default=6, ge=1, le=20, description="How many passages to return.")


class SearchDocumentsTool(Tool[SearchDocumentsParams]):
    name = "searchDocuments"
    description = """Search the documents of the session's folder by meaning as well as by keywords.

The folder's files (PDF, Word, Excel, PowerPoint, HTML, markdown, text, code, notebooks) are indexed in
passages; this returns the passages that best match the query, each with its file and the heading it sits
under, best first. It finds text that says the same thing in other words, which grep cannot.

Use it for questions about what the folder's documents say ("what did the contract say about termination?",
"where do we describe the deployment process?"). Use grep for an exact string or symbol, glob for file names,
read to see a whole file once you know which. Cite the files you used. Web pages the user indexed into the folder's
index show their URL (http:// or https://) where a file's path would be: cite the URL, and read the whole page with
webFetch, never with read. The first search in a folder never indexed starts indexing it in the background; until
it is done, results are partial and the answer says so."""
    params: ClassVar[type[BaseModel]] = SearchDocumentsParams

    async def run(self, params: SearchDocumentsParams, ctx: ToolContext) -> str:
        if ctx.search_documents is None:
            raise ToolError("Document search is not available here; use grep and read instead.")
        answer = await ctx.search_documents(params.query, params.limit)
        status = f"{answer.sources} file(s) indexed"
        if answer.indexing is not None:
            job = answer.indexing
            progress = f"{job.done} of {job.total} files" if job.total else "listing files"
            status += f"; indexing is in progress ({progress}), so results are partial — search again later"
        if not answer.hits:
            if answer.sources == 0:
                return f"Nothing is indexed in this folder yet ({status}). Use grep and read meanwhile."
            return f"No passage matches ({status}). Try other words, or grep for an exact string."
        lines = [f"{len(answer.hits)} passage(s), best first ({status}):", ""]
        for number, hit in enumerate(answer.hits, 1):
            where = f" — {hit.heading}" if hit.heading else ""
            lines.append(f"[{number}] {hit.uri}{where}")
            lines.append(untrusted_block(hit.uri, hit.text))
            lines.append("")
        return "\n".join(lines).rstrip()
