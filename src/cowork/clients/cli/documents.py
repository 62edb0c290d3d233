"""After a tool result that made or changed documents: one dim line per file, where it is and what is in it."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console

from cowork.clients.connection import RpcClient, RpcError
from cowork.clients.documents import document_files, document_line
from cowork.protocol import DocumentPreview, DocumentRef

__all__ = ["show_documents"]


async def show_documents(rpc: RpcClient, session_id: str, files: Iterable[str], console: Console) -> None:
    """Print the line of each document among `files`, asking the server for its summary."""
    for path in document_files(files):
        try:
            preview: DocumentPreview = await rpc.request(
                "document/preview", DocumentRef(session_id=session_id, path=path)
            )
        except RpcError as exc:
            console.print(document_line(path, None, exc.message))
            continue
        console.print(document_line(path, preview))
