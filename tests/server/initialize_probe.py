"""Run as a script: what `cowork serve` has imported by the time it has answered its first `initialize`.

It takes the serve path without a socket: the command line parsed by `cowork.__main__`'s parser, the config, home
and token prepared by `cowork.server._main.prepare`, the core and the app built as `serve` builds them
(`build_app`), the app's lifespan started (the core's start: migrations, recovery, MCP), and one `initialize`
posted to `/rpc` through the ASGI interface. Prints the `initialize` result and the sorted module names, as JSON.

    python tests/server/initialize_probe.py WORKSPACE
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from cowork.__main__ import _parser
from cowork.server._main import ServeOptions, build_app, prepare

PORT = 8765


async def post(app: Any, body: bytes, token: str | None) -> dict[str, Any]:
    headers = [(b"host", f"127.0.0.1:{PORT}".encode()), (b"content-type", b"application/json")]
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/rpc",
        "raw_path": b"/rpc",
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", PORT),
    }
    requests = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return requests.pop(0) if requests else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    payload = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert status == 200, (status, payload)
    answer: dict[str, Any] = json.loads(payload)
    return answer


async def main(workspace: str) -> None:
    args = _parser().parse_args(["serve", "--workspace", workspace, "--port", str(PORT), "--quiet"])
    options = ServeOptions(workspace=args.workspace, port=args.port, quiet=args.quiet)
    loaded, _host, port, token = prepare(options)
    _state, app = build_app(loaded, token, port)
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "probe"}}}
    async with app.router.lifespan_context(app):
        answer = await post(app, json.dumps(request).encode(), token)
        modules = sorted(sys.modules)
    print(json.dumps({"initialize": answer, "modules": modules}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
