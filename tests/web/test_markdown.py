"""The web UI's markdown, through markdown-it: the cases the hand-written renderer got wrong, and untrusted HTML."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import BrowserContext, expect

from cowork.testing.mockllm import MockLLMServer, MockResponse
from cowork.testing.server import ServerProcess

from .conftest import open_ui

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ANSWER = """Edit `src/__init__.py` and __init__.py too; see https://example.com/a_x_b and [docs](javascript:alert(1)).
Wrote todo.md and setup.py, mailed ops@example.com.

1. first
2. second
   - nested one
     - deeper
   - nested two

```sh
make check
```

3. third, numbered on after the code

<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">

| a | b |
| - | - |
| 1 | 2 |
"""


async def test_markdown_cases(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, artifacts: Path
) -> None:
    mock_llm.set_script([MockResponse(text=ANSWER, chunk_size=7)])
    page = await open_ui(context, server)
    await page.get_by_test_id("composer").fill("show me")
    await page.get_by_test_id("send").click()
    answer = page.get_by_test_id("assistant-message").last
    await expect(answer).not_to_have_class("streaming")
    await expect(answer.locator("code").first).to_have_text("src/__init__.py")
    await expect(answer).to_contain_text("__init__.py too")  # not bold "init"
    assert await answer.locator("strong").count() == 0
    link = answer.locator('a[href="https://example.com/a_x_b"]')
    await expect(link).to_have_text("https://example.com/a_x_b")  # no <em> inside the URL
    assert await link.get_attribute("target") == "_blank"
    assert await answer.locator('a[href^="javascript"]').count() == 0  # not a link at all
    assert await answer.locator("a").count() == 1  # file names (todo.md: Moldova's domain) are not links
    await expect(answer.locator("ol > li > ul > li > ul > li")).to_have_text("deeper")  # nesting kept
    await expect(answer.locator("ol").nth(1)).to_have_attribute("start", "3")  # numbering goes on
    await expect(answer.locator("pre.code code")).to_have_text("make check")
    await expect(answer).to_contain_text("<script>window.pwned = 1</script>")  # shown as text
    assert await page.evaluate("window.pwned === undefined")
    await expect(answer.locator("table td")).to_have_text(["1", "2"])
    await page.screenshot(path=str(artifacts / "markdown.png"), full_page=True)
    assert page.errors == []  # type: ignore[attr-defined]
