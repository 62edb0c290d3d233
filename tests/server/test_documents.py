"""`document/preview` and `document/content` through a real server: what they send, and every path they refuse."""

from __future__ import annotations

import base64
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from cowork.clients.connection import RpcError
from cowork.testing.client import EventClient
from cowork.testing.server import ServerProcess
from tests.documents.files import pdf_bytes, write_xlsx

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("documents")
    ws = root / "ws"
    (ws / "out").mkdir(parents=True)
    write_xlsx(ws / "out" / "budget.xlsx")
    (ws / "report.pdf").write_bytes(pdf_bytes([["Hello"], ["Two"]]))
    (root / "secret.pdf").write_bytes(pdf_bytes([["Secret"]]))
    (ws / "link.pdf").symlink_to(root / "secret.pdf")
    (ws / "notes.txt").write_text("not a document", encoding="utf-8")
    (ws / "looks.pdf").symlink_to(ws / "notes.txt")
    (ws / "folder.pdf").mkdir()
    (ws / "broken.xlsx").write_bytes(b"PK\x03\x04 not really a zip")
    with ServerProcess(root / "home", ws) as proc:
        yield proc


@pytest.fixture
async def client(server: ServerProcess) -> AsyncIterator[EventClient]:
    c = await EventClient.connect(server.address)
    yield c
    await c.close()


async def _session(client: EventClient) -> str:
    session = await client.call("session/create", {})
    return str(session["id"])


async def test_preview_of_a_workbook(client: EventClient) -> None:
    sid = await _session(client)
    preview = await client.call("document/preview", {"sessionId": sid, "path": "out/budget.xlsx"})
    assert preview["kind"] == "xlsx"
    assert preview["summary"] == "2 sheets: Budget (A1:C5), Notes (B2:D4)"
    assert preview["sizeBytes"] > 0
    budget = preview["sheets"][0]
    assert budget["name"] == "Budget" and budget["range"] == "A1:C5" and budget["truncated"] is False
    assert budget["rows"][1] == ["Item", "Cost", "When"]
    assert budget["rows"][2] == ["Rent", "1200", "2024-03-01"]


async def test_preview_of_a_pdf_draws_its_pages(client: EventClient) -> None:
    sid = await _session(client)
    preview = await client.call("document/preview", {"sessionId": sid, "path": "report.pdf"})
    assert preview["summary"] == "2 pages"
    assert [p["number"] for p in preview["pages"]] == [1, 2]
    image = preview["pages"][0]["image"]
    assert image.startswith("data:image/png;base64,")
    assert base64.b64decode(image.split(",", 1)[1]).startswith(b"\x89PNG\r\n\x1a\n")


async def test_content_sends_the_bytes(client: EventClient, server: ServerProcess) -> None:
    sid = await _session(client)
    content = await client.call("document/content", {"sessionId": sid, "path": "report.pdf"})
    assert content["name"] == "report.pdf" and content["mimeType"] == "application/pdf"
    assert base64.b64decode(content["data"]) == (server.workspace / "report.pdf").read_bytes()
    assert content["sizeBytes"] == (server.workspace / "report.pdf").stat().st_size


@pytest.mark.parametrize("method", ["document/preview", "document/content"])
async def test_paths_outside_the_folder_are_refused(client: EventClient, server: ServerProcess, method: str) -> None:
    sid = await _session(client)
    outside = str(server.workspace.parent / "secret.pdf")
    for path in ["../secret.pdf", outside, "link.pdf", "out/../../secret.pdf", "looks.pdf"]:
        with pytest.raises(RpcError) as info:
            await client.call(method, {"sessionId": sid, "path": path})
        assert info.value.code == "path_denied", path
        assert "Refusing" in info.value.message


@pytest.mark.parametrize("method", ["document/preview", "document/content"])
async def test_missing_other_kinds_and_folders(client: EventClient, method: str) -> None:
    sid = await _session(client)
    cases = {"gone.pdf": "document_not_found", "folder.pdf": "document_not_found", "notes.txt": "invalid_params"}
    for path, code in cases.items():
        with pytest.raises(RpcError) as info:
            await client.call(method, {"sessionId": sid, "path": path})
        assert info.value.code == code, path
    with pytest.raises(RpcError) as info:
        await client.call(method, {"sessionId": "nope", "path": "report.pdf"})
    assert info.value.code == "session_not_found"


async def test_a_broken_file_is_unreadable_not_a_crash(client: EventClient) -> None:
    sid = await _session(client)
    with pytest.raises(RpcError) as info:
        await client.call("document/preview", {"sessionId": sid, "path": "broken.xlsx"})
    assert info.value.code == "document_unreadable"
    assert "Excel" in info.value.message


def test_the_symlink_really_points_out(server: ServerProcess) -> None:
    # Guards the refusal test: the link exists and leads outside the folder.
    assert os.path.realpath(server.workspace / "link.pdf") == str((server.workspace.parent / "secret.pdf").resolve())
    assert Path(server.workspace / "link.pdf").is_symlink()
