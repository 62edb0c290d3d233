"""Files as text for the index: a title and markdown-ish text (headings as `#` lines) per supported format.

PDF, Word, Excel and PowerPoint go through `cowork.documents` (the same conversion the `read` tool shows, with its
zip-bomb and size limits; bytes that did not come from a file, a downloaded page, go through a temporary file); HTML through trafilatura (main content to markdown, navigation dropped); notebooks through
nbformat (markdown cells as they are, code cells fenced); markdown, text and source code as they are. Blocking:
call from a worker thread.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TEXT_EXTENSIONS", "ConvertError", "Converted", "convert_bytes", "convert_file", "indexable"]

DOCUMENT_EXTENSIONS = frozenset({".pdf", ".docx", ".xlsx", ".xlsm", ".pptx"})
HTML_EXTENSIONS = frozenset({".html", ".htm", ".xhtml"})
TEXT_EXTENSIONS = frozenset(
    {
        ".md", ".markdown", ".txt", ".rst", ".org", ".adoc", ".csv", ".tsv", ".json", ".yaml", ".yml", ".toml",
        ".ini", ".cfg", ".py", ".js", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".kt", ".c", ".h", ".cpp",
        ".hpp", ".cs", ".rb", ".php", ".swift", ".scala", ".sh", ".bash", ".zsh", ".sql", ".css", ".scss", ".lua",
        ".r", ".jl", ".tex", ".xml",
    }
)  # fmt: skip
MAX_TEXT_BYTES = 2 * 1024 * 1024
"""A text file past this is not indexed whole (logs, data dumps): its first 2 MB are."""

_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|])")
_EMPHASIS = re.compile(r"(?<![\w*])\*{1,2}([^*\n]+?)\*{1,2}(?![\w*])")


class ConvertError(Exception):
    """A file that cannot be read as text for the index (the message says why)."""


@dataclass(frozen=True, slots=True)
class Converted:
    title: str
    text: str


def indexable(path: Path) -> bool:
    suffix = path.suffix.lower()
    return suffix in DOCUMENT_EXTENSIONS or suffix in HTML_EXTENSIONS or suffix in TEXT_EXTENSIONS or suffix == ".ipynb"


def _plain(markdown: str) -> str:
    """Markdown's escapes and emphasis markers out (they are noise to both the embedder and BM25)."""
    return _EMPHASIS.sub(r"\1", _ESCAPE.sub(r"\1", markdown.replace("¶", "")))


def _html(data: bytes, name: str, charset: str | None = None) -> Converted:
    import trafilatura

    html = _decode(data, charset)
    text = trafilatura.extract(
        html, output_format="markdown", include_tables=True, include_comments=False, favor_recall=True
    )
    title = ""
    match = re.search(r"<title[^>]*>(.*?)</title>", html, re.IGNORECASE | re.DOTALL)
    if match:
        import html as html_lib

        title = " ".join(html_lib.unescape(match.group(1)).replace("¶", "").split())
    return Converted(title or name, _plain(text or ""))


def _decode(data: bytes, charset: str | None) -> str:
    """Text in the charset a server declared (when Python knows it), else UTF-8, never failing."""
    if charset:
        import codecs

        try:
            codecs.lookup(charset)
        except LookupError:
            pass
        else:
            return data.decode(charset, errors="replace")
    return data.decode("utf-8", errors="replace")


def _notebook(data: bytes, name: str) -> Converted:
    try:
        notebook = json.loads(data)
        cells = notebook.get("cells", []) if isinstance(notebook, dict) else []
    except ValueError as error:
        raise ConvertError(f"not a valid notebook: {error}") from None
    parts: list[str] = []
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        if not text.strip():
            continue
        parts.append(text if cell.get("cell_type") == "markdown" else f"```\n{text}\n```")
    return Converted(name, "\n\n".join(parts))


def convert_file(path: Path) -> Converted:
    """The file's title and text; `ConvertError` when it cannot be read as one of the supported formats."""
    suffix = path.suffix.lower()
    if suffix in DOCUMENT_EXTENSIONS:
        return _document(path, path.name)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_TEXT_BYTES)
    except OSError as error:
        raise ConvertError(f"cannot be read: {error.strerror}") from None
    return _from_bytes(data, suffix, path.name, None)


def convert_bytes(data: bytes, suffix: str, name: str, *, charset: str | None = None) -> Converted:
    """`data` read as a file of that `suffix` (`.html`, `.pdf`...) named `name` (the title when it has none);
    `charset` is how text was declared to be encoded. `ConvertError` as `convert_file`."""
    suffix = suffix.lower()
    if suffix in DOCUMENT_EXTENSIONS:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="cowork-page-") as folder:
            path = Path(folder) / f"page{suffix}"
            path.write_bytes(data)
            return _document(path, name)
    return _from_bytes(data[:MAX_TEXT_BYTES], suffix, name, charset)


def _document(path: Path, name: str) -> Converted:
    from cowork.documents import DocumentError, convert

    try:
        document = convert(path)
    except DocumentError as error:
        raise ConvertError(str(error)) from None
    return Converted(document.meta.title or name, document.text)


def _from_bytes(data: bytes, suffix: str, name: str, charset: str | None) -> Converted:
    if suffix in HTML_EXTENSIONS:
        return _html(data, name, charset)
    if suffix == ".ipynb":
        return _notebook(data, name)
    if b"\x00" in data[:8192]:
        raise ConvertError("looks binary")
    text = _decode(data, charset)
    if suffix in (".md", ".markdown"):
        heading = re.search(r"^#\s+(.+)$", text, re.MULTILINE)
        return Converted(heading.group(1).strip() if heading else name, text)
    if suffix in (".txt", ".rst", ".org", ".adoc", ".tex"):
        return Converted(name, text)
    return Converted(name, f"```\n{text}\n```")  # fenced: a `# comment` is not a heading
