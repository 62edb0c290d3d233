"""The numpy all-MiniLM-L6-v2 equals sentence-transformers' own embeddings (the reference, made with torch)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cowork.embeddings import LocalEmbedder
from cowork.embeddings._minilm import MiniLM

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM()


def test_every_reference_text_embeds_to_the_reference_vector(model: MiniLM) -> None:
    """300 fixed texts (queries, paragraphs, texts past the 256-token cut, unicode, code, "", special-token
    strings) against vectors sentence-transformers computed with torch (`scripts/make_embedding_reference.py`)."""
    texts = json.loads((DATA / "minilm_reference_texts.json").read_text(encoding="utf-8"))
    reference = np.load(DATA / "minilm_reference.npy")
    assert reference.shape == (len(texts), 384)
    ours = model.encode(texts)
    cosines = np.sum(ours * reference, axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= 0.999, f"text {worst} ({texts[worst][:60]!r}) has cosine {cosines[worst]:.6f}"
    assert float(np.median(cosines)) > 0.99999
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_batching_and_order_do_not_change_a_vector(model: MiniLM) -> None:
    texts = ["a short one", "a somewhat longer sentence about the quarterly budget " * 8, "", "中文 text"]
    together = model.encode(texts, batch_size=4)
    alone = np.stack([model.encode([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=2e-6)
    reversed_order = model.encode(texts[::-1], batch_size=3)[::-1]
    np.testing.assert_allclose(together, reversed_order, atol=2e-6)


def test_no_text_gives_an_empty_matrix(model: MiniLM) -> None:
    assert model.encode([]).shape == (0, 384)


def test_the_local_embedder_names_its_model_and_runs_off_the_event_loop() -> None:
    import asyncio

    embedder = LocalEmbedder()
    assert embedder.id == "local:all-MiniLM-L6-v2"
    vectors = asyncio.run(embedder.embed(["where is the budget spreadsheet", "budget spreadsheet location"]))
    assert vectors.shape == (2, 384)
    assert float(vectors[0] @ vectors[1]) > 0.6  # paraphrases land close


def test_torch_is_not_installed() -> None:
    """The default install stays free of torch and sentence-transformers (pyproject excludes them)."""
    import importlib.util

    assert importlib.util.find_spec("torch") is None
    assert importlib.util.find_spec("sentence_transformers") is None


def test_a_query_is_not_queued_behind_a_batch_in_progress() -> None:
    """A search embeds its query while an indexing batch holds the embedder (here: the batch lock, held)."""
    import threading

    embedder = LocalEmbedder()
    embedder.embed_blocking(["load the model"])
    done = threading.Event()

    def query() -> None:
        embedder.embed_blocking(["where is the budget"])
        done.set()

    with embedder._batches:  # a batch in progress
        worker = threading.Thread(target=query)
        worker.start()
        assert done.wait(60), "the query waited for the batch"
    worker.join()
