"""The web UI's markdown, through markdown-it: the cases the hand-written renderer got wrong, untrusted HTML, and code
blocks highlighted by highlight.js."""

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


PYTHON = '''@dataclass
class Point:
    x: int = 0

def norm(p: Point) -> float:
    """Length of p, never negative."""
    html = "</code><script>alert(1)</script>"
    return math.sqrt(p.x ** 2) + 1.5  # the answer'''

DIFF = """--- a/point.py
+++ b/point.py
@@ -1,2 +1,2 @@
 class Point:
-    x = 0
+    x: int = 0"""

PLAIN = """a <b> & "c" </code><script>alert(1)</script>"""

HIGHLIGHTED = f"""Three blocks:

```python
{PYTHON}
```

```diff
{DIFF}
```

```nosuchlang
{PLAIN}
```
"""


async def test_code_blocks_are_highlighted_by_highlight_js(
    context: BrowserContext, server: ServerProcess, mock_llm: MockLLMServer, artifacts: Path
) -> None:
    mock_llm.set_script([MockResponse(text=HIGHLIGHTED, chunk_size=9)])
    page = await open_ui(context, server)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    await page.get_by_test_id("composer").fill("show me code")
    await page.get_by_test_id("send").click()
    answer = page.get_by_test_id("assistant-message").last
    await expect(answer).not_to_have_class("streaming")
    python, diff, plain = (answer.locator("pre.code code").nth(i) for i in range(3))

    await expect(python.locator(".hljs-keyword").filter(has_text="def")).to_have_count(1)
    await expect(python.locator(".hljs-keyword").filter(has_text="return")).to_have_count(1)
    await expect(python.locator(".hljs-comment")).to_have_text("# the answer")
    assert await python.text_content() == PYTHON  # highlighting adds spans, never text
    await expect(answer.locator(".code-lang")).to_have_text(["python", "diff", "nosuchlang"])

    await expect(diff.locator(".hljs-deletion")).to_have_text("-    x = 0")
    await expect(diff.locator(".hljs-addition")).to_have_text("+    x: int = 0")
    assert await diff.text_content() == DIFF

    assert await plain.locator("*").count() == 0  # an unknown language: no guessing, just the text
    assert await plain.text_content() == PLAIN

    assert await answer.locator("script").count() == 0
    assert dialogs == []
    await expect(answer.get_by_test_id("copy-code")).to_have_count(3)

    # Streaming re-renders the whole message each frame, often inside a fence that is not closed yet: a 300-line
    # block must stay cheap (highlight.js takes a few milliseconds; guessing the language would not).
    timing = await page.evaluate(
        """async () => {
          const { renderMarkdown } = await import("/static/js/markdown.js");
          const open = renderMarkdown("```python\\ndef f(x):\\n    return '''unfinished");
          const line = "    total = sum(x for x in range(10) if x % 2)  # odd ones";
          const source = "```python\\n" + Array.from({ length: 300 }, () => line).join("\\n");
          const runs = [];
          for (let i = 0; i < 9; i++) {
            const start = performance.now();
            renderMarkdown(source);
            runs.push(performance.now() - start);
          }
          runs.sort((a, b) => a - b);
          return { open, median: runs[4] };
        }"""
    )
    assert '<span class="hljs-keyword">def</span>' in timing["open"] and "unfinished" in timing["open"]
    assert timing["median"] < 100, timing

    for width in (1400, 420):
        await page.set_viewport_size({"width": width, "height": 900})
        await answer.scroll_into_view_if_needed()
        await page.screenshot(path=str(artifacts / f"markdown-code-{width}.png"))
        assert await page.evaluate("document.documentElement.scrollWidth") <= width  # long lines scroll in the block
    await page.emulate_media(color_scheme="dark")
    await page.set_viewport_size({"width": 1400, "height": 900})
    await page.screenshot(path=str(artifacts / "markdown-code-dark.png"))
    assert page.errors == []  # type: ignore[attr-defined]
