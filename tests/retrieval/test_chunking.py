"""Structure-aware chunking: heading paths, sizes, small sections carried, code kept whole, titles embedded."""

from __future__ import annotations

from cowork.retrieval import chunk_text, embedding_text
from cowork.retrieval._chunking import LIMIT_CHARS


def test_chunks_know_the_headings_they_sit_under() -> None:
    text = (
        "# Guide\n\n"
        + "Intro paragraph. " * 20
        + "\n\n## Install\n\n"
        + "Run the installer. " * 30
        + "\n\n### Linux\n\n"
        + ("Use the package manager. " * 30)
    )
    chunks = chunk_text(text)
    headings = [c.heading for c in chunks]
    assert "Guide › Install" in headings
    assert "Guide › Install › Linux" in headings
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_no_chunk_is_longer_than_the_limit_even_for_one_huge_paragraph() -> None:
    sentence = "This sentence is part of a very long paragraph without breaks. "
    chunks = chunk_text(sentence * 200)
    assert len(chunks) > 5
    assert all(len(c.text) <= LIMIT_CHARS for c in chunks)
    assert "".join(c.text.replace(" ", "") for c in chunks) == (sentence * 200).replace(" ", "")


def test_one_word_longer_than_the_limit_is_cut_hard() -> None:
    chunks = chunk_text("x" * (LIMIT_CHARS * 3))
    assert [len(c.text) for c in chunks] == [LIMIT_CHARS] * 3


def test_small_sections_are_carried_into_the_next_with_their_heading_as_text() -> None:
    text = "# API\n\n## open\n\nOpens a file.\n\n## close\n\nCloses a file.\n\n## seek\n\nMoves the position."
    chunks = chunk_text(text)
    assert len(chunks) == 1
    assert chunks[0].heading == "API"  # what the carried sections share
    assert "close" in chunks[0].text and "Moves the position." in chunks[0].text


def test_a_fenced_code_block_stays_in_one_chunk() -> None:
    code = "```python\n" + "\n\n".join(f"def f{i}():\n    return {i}" for i in range(20)) + "\n```"
    chunks = chunk_text("# Code\n\n" + code)
    assert len(chunks) == 1 and chunks[0].text == code


def test_the_embedded_text_carries_the_title_and_path_once() -> None:
    chunk = chunk_text("# shutil — file operations\n\n## Copying\n\nCopy a tree.")[0]
    assert embedding_text("shutil — file operations", chunk).startswith("shutil — file operations › Copying\n\n")
    assert embedding_text("Notes", chunk).startswith("Notes › shutil — file operations › Copying\n\n")


def test_empty_and_blank_text_give_no_chunks() -> None:
    assert chunk_text("") == []
    assert chunk_text("\n\n   \n# Only a heading\n") == []


def test_source_code_is_cut_at_lines_and_its_comments_are_not_headings(tmp_path) -> None:
    from cowork.retrieval import convert_file

    source = tmp_path / "tool.py"
    lines = [f"value_{i} = compute({i})  # step {i}. Then the next one." for i in range(120)]
    source.write_text("# A comment, not a heading.\n" + "\n".join(lines) + "\n")
    chunks = chunk_text(convert_file(source).text)
    assert len(chunks) > 1 and all(c.heading == "" for c in chunks)
    assert all(len(c.text) <= LIMIT_CHARS for c in chunks)
    kept = [line for c in chunks for line in c.text.splitlines() if line.startswith("value_")]
    assert kept == lines  # every line whole, on its own line, in order (not cut at its ". ")
