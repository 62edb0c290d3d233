"""Documents the agent made, for people to see and save: `document/preview`, `document/content`.

The path comes from a `tool_result` the model influenced, so it is resolved and checked like the file tools do
(symbolic links and `..` resolved first, Cowork's secrets and credential stores denied, multiply hard-linked files
refused), and then held to the session's own folder only: never the other places tools may read.
"""

from __future__ import annotations

import base64
import stat
from dataclasses import replace
from pathlib import Path

import anyio

from cowork.core import Core
from cowork.documents import MAX_PREVIEW_BYTES, PREVIEW_KINDS, DocumentError, Preview, build_preview, preview_kind
from cowork.policy import PathDenied, PathPolicy
from cowork.protocol import (
    DocumentContent,
    DocumentPreview,
    DocumentRef,
    ErrorCode,
    PagePreviewInfo,
    ProtocolError,
    SheetPreviewInfo,
    SlidePreviewInfo,
)

from .._peer import Peer

__all__ = ["MAX_CONTENT_BYTES", "document_content", "document_preview"]

MAX_CONTENT_BYTES = 20 * 1024 * 1024
"""The largest file `document/content` sends (base64 makes it a third larger on the wire)."""

_MIME_TYPES = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "csv": "text/csv",
}
_XLSM = "application/vnd.ms-excel.sheet.macroEnabled.12"


def _checked(workspace: Path, home: Path, raw: str) -> tuple[Path, int]:
    """The resolved file and its size, or the refusal a client is told. Touches the disk: run it in a thread."""
    if preview_kind(raw) is None:
        known = ", ".join(PREVIEW_KINDS)
        raise ProtocolError(ErrorCode.INVALID_PARAMS, f"{raw} is not a document Cowork previews ({known}).")
    policy = PathPolicy.build(workspace, home=home)
    policy = replace(policy, read_roots=(policy.workspace,))  # the session's folder only, not tool output or skills
    try:
        path = policy.check_read(raw)
    except PathDenied as exc:
        raise ProtocolError(ErrorCode.PATH_DENIED, f"Refusing {raw}: {exc}") from None
    if preview_kind(path) is None:  # a link inside the folder to a file of another kind
        raise ProtocolError(ErrorCode.PATH_DENIED, f"Refusing {raw}: it resolves to {path.name}, not a document.")
    try:
        info = path.stat()
    except OSError:
        raise ProtocolError(ErrorCode.DOCUMENT_NOT_FOUND, f"{raw} does not exist in the session's folder.") from None
    if not stat.S_ISREG(info.st_mode):
        raise ProtocolError(ErrorCode.DOCUMENT_NOT_FOUND, f"{raw} is not a file.")
    return path, info.st_size


async def _resolve(core: Core, params: DocumentRef) -> tuple[Path, int]:
    row = await core.sessions.get_row(params.session_id)
    return await anyio.to_thread.run_sync(_checked, Path(row.workspace), core.paths.home, params.path)


def _wire(path: str, preview: Preview) -> DocumentPreview:
    return DocumentPreview(
        path=path,
        kind=preview.kind,
        size_bytes=preview.size_bytes,
        summary=preview.summary,
        sheets=[
            SheetPreviewInfo(name=s.name, range=s.range, rows=[list(r) for r in s.rows], truncated=s.truncated)
            for s in preview.sheets
        ]
        or None,
        markdown=preview.markdown,
        pages=[
            PagePreviewInfo(number=p.number, image="data:image/png;base64," + base64.b64encode(p.png).decode("ascii"))
            for p in preview.pages
        ]
        or None,
        slides=[SlidePreviewInfo(number=s.number, title=s.title, text=s.text, notes=s.notes) for s in preview.slides]
        or None,
        note=preview.note,
    )


async def document_preview(core: Core, peer: Peer | None, params: DocumentRef) -> DocumentPreview:
    path, size = await _resolve(core, params)
    if size > MAX_PREVIEW_BYTES:
        raise ProtocolError(
            ErrorCode.LIMIT_EXCEEDED,
            f"{params.path} is {size / 1024 / 1024:,.1f} MB; previews are made of files up to "
            f"{MAX_PREVIEW_BYTES // 1024 // 1024} MB.",
        )
    try:
        preview = await anyio.to_thread.run_sync(build_preview, path)
    except DocumentError as exc:
        raise ProtocolError(ErrorCode.DOCUMENT_UNREADABLE, str(exc)) from None
    except OSError as exc:
        raise ProtocolError(
            ErrorCode.DOCUMENT_UNREADABLE, f"{params.path} could not be read: {exc.strerror}."
        ) from None
    return _wire(params.path, preview)


def _read(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(MAX_CONTENT_BYTES + 1)


async def document_content(core: Core, peer: Peer | None, params: DocumentRef) -> DocumentContent:
    path, size = await _resolve(core, params)
    if size > MAX_CONTENT_BYTES:
        raise ProtocolError(
            ErrorCode.LIMIT_EXCEEDED,
            f"{params.path} is {size / 1024 / 1024:,.1f} MB; files up to {MAX_CONTENT_BYTES // 1024 // 1024} MB are "
            "sent (open it from the folder instead).",
        )
    try:
        data = await anyio.to_thread.run_sync(_read, path)
    except OSError as exc:
        raise ProtocolError(
            ErrorCode.DOCUMENT_UNREADABLE, f"{params.path} could not be read: {exc.strerror}."
        ) from None
    if len(data) > MAX_CONTENT_BYTES:
        raise ProtocolError(ErrorCode.LIMIT_EXCEEDED, f"{params.path} grew past {MAX_CONTENT_BYTES:,} bytes.")
    kind = preview_kind(path)
    mime = _XLSM if path.suffix.lower() == ".xlsm" else _MIME_TYPES[kind or "pdf"]
    return DocumentContent(
        path=params.path,
        name=path.name,
        mime_type=mime,
        size_bytes=len(data),
        data=base64.b64encode(data).decode("ascii"),
    )
