"""`/undo` and `/rewind N` in the TUI: the server's preview in a dialog (the diff, files changed outside Cowork since),
then the restore the user chose. Each runs as a worker (a dialog is awaited)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from cowork.clients import format as fmt
from cowork.clients.connection import RpcError
from cowork.protocol import SessionRestoreResult, SessionRewindParams, SessionUndoParams

from .screens import RestoreScreen

if TYPE_CHECKING:
    from .app import CoworkApp

__all__ = ["rewind", "undo"]


async def undo(app: CoworkApp) -> None:
    """Take back the agent's last change to the folder's files, after the user saw the diff and pressed Undo."""
    if app.session is None:
        return
    params = SessionUndoParams(session_id=app.session.id)
    preview = await _preview(app, "session/undo", params)
    if preview is None:
        return
    screen = RestoreScreen(
        f"{fmt.undo_heading(preview)}. Undo it?",
        fmt.restore_diff(preview, 400),
        fmt.conflict_warning(preview, "undoing"),
        [("undo", "Undo")],
    )
    if await app.push_screen_wait(screen) != "undo":
        app.notify("Nothing was changed.")
        return
    # Forced only over the files the dialog warned about (a file changed since the preview still refuses it).
    apply = params.model_copy(update={"apply": True, "overwrite": preview.conflicts})
    done: SessionRestoreResult | None = await app.guarded(app.rpc_request("session/undo", apply))
    if done is not None:
        await app.chat.note(fmt.restored(done))


async def rewind(app: CoworkApp, number: int) -> None:
    """Go back to before the user's message `number`: the files, the conversation (a fork the TUI goes on in, the
    message in the prompt; this session stays), or both, as chosen in the dialog."""
    source = app.session
    if source is None:
        return
    params = SessionRewindParams(session_id=source.id, before_message=number, restore="files")
    preview = await _preview(app, "session/rewind", params)
    if preview is None:
        return
    said = app.state.messages[number - 1] if number <= len(app.state.messages) else None
    quoted = f" (“{fmt.clean(fmt.shorten(said, 50))}”)" if said else ""
    screen = RestoreScreen(
        f"Go back to before your message {number}{quoted}? Restoring the files changes:",
        fmt.restore_diff(preview, 400, empty="No file changes since then."),
        fmt.conflict_warning(preview, "restoring the files"),
        [("files", "Files"), ("conversation", "Conversation"), ("both", "Both")],
    )
    pressed = await app.push_screen_wait(screen)
    choice = fmt.rewind_choice(pressed or "")
    if choice is None:
        app.notify("Nothing was changed.")
        return
    files = choice != "conversation"
    apply = params.model_copy(
        update={"apply": True, "restore": choice, "overwrite": preview.conflicts if files else []}
    )
    done: SessionRestoreResult | None = await app.guarded(app.rpc_request("session/rewind", apply))
    if done is None:
        return
    if done.fork is None:
        await app.chat.note(fmt.restored(done))
        return
    await app.go_on_in(done.fork)
    # A notification, not a note: the new session's transcript is still being replayed into the chat.
    restored = fmt.restored(done).plain + " " if files else ""
    app.notify(
        f"{restored}Now in a new session holding {done.fork.messages} of your messages; “{fmt.clean(source.title)}” "
        f"stays as it was: /resume {source.id}",
        markup=False,
        timeout=15,
    )


async def _preview(
    app: CoworkApp, method: str, params: SessionUndoParams | SessionRewindParams
) -> SessionRestoreResult | None:
    """The server's preview, or None after saying why there is none (nothing to undo, no such message, an error)."""
    try:
        result: SessionRestoreResult = await app.rpc_request(method, params)
    except RpcError as exc:
        if exc.code == "nothing_to_undo":
            await app.chat.note(Text(exc.message, style="dim"))
        elif exc.code == "invalid_params" and isinstance(params, SessionRewindParams):
            await app.chat.note(fmt.rewind_help(app.state.messages, exc.message))
        else:
            app.notify(exc.message, title=exc.code, severity="error")
        return None
    except ConnectionError as exc:
        app.notify(str(exc), title="disconnected", severity="error")
        return None
    return result
