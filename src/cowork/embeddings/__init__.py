"""Embedders: text to unit vectors, behind one registry (`make_embedder`).

- `local` (the default): all-MiniLM-L6-v2 run in numpy on this machine (`_minilm`); nothing leaves it.
- `ollama`: a model served by Ollama (`/api/embed`).
- `openai`: any OpenAI-compatible `/v1/embeddings` endpoint.

Every embedder is batched, returns L2-normalised float32 rows and names itself by an `id` that is stored with each
vector, so an index knows which model made it and re-embeds when the configured one changes. Remote embedders are
configured in the user's own config only (they send the folder's text off the machine).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np
import numpy.typing as npt

from cowork.config import EmbedderConfig

if TYPE_CHECKING:
    from ._minilm import MiniLM

__all__ = [
    "Embedder",
    "EmbedderError",
    "LocalEmbedder",
    "RemoteEmbedder",
    "Vectors",
    "make_embedder",
    "normalise",
]

Vectors = npt.NDArray[np.float32]
Provider = Literal["local", "ollama", "openai"]


class EmbedderError(Exception):
    """An embedder that cannot embed: its model is missing, its server refuses or answers nonsense."""


class Embedder(Protocol):
    id: str
    """Provider and model (`local:all-MiniLM-L6-v2`, `ollama:nomic-embed-text`): stored with every vector."""
    batch_size: int

    async def dimension(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit vector per text, in order."""
        ...

    def embed_blocking(self, texts: Sequence[str]) -> Vectors:
        """The same from a worker thread (ingestion runs there, never on the event loop)."""
        ...


def normalise(rows: Vectors) -> Vectors:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: Vectors = (rows / np.maximum(norms, 1e-12)).astype(np.float32)
    return out


QUERY_TEXTS = 4
"""Calls with at most this many texts are queries: they do not wait for a batch in progress."""


class LocalEmbedder:
    """all-MiniLM-L6-v2 in numpy, loaded on first use (about 0.5 s), one batch at a time."""

    batch_size = 16
    """Texts per forward pass: small enough that a call's batches spread evenly over the cores."""

    def __init__(self) -> None:
        from ._minilm import MODEL_NAME

        self.id = f"local:{MODEL_NAME}"
        self._model: MiniLM | None = None
        self._lock = threading.Lock()
        """Held while the model loads."""
        self._batches = threading.Lock()
        """Held while a batch (more than a query's few texts) is embedded."""

    def _loaded(self) -> MiniLM:
        from ._minilm import MiniLM

        with self._lock:
            if self._model is None:
                try:
                    self._model = MiniLM()
                except (OSError, RuntimeError, KeyError, ValueError) as error:
                    raise EmbedderError(f"the local embedding model cannot be loaded: {error}") from error
            return self._model

    async def dimension(self) -> int:
        return 384

    def embed_blocking(self, texts: Sequence[str]) -> Vectors:
        model = self._loaded()
        if len(texts) <= QUERY_TEXTS:
            # A search's query: never queued behind an indexing batch (seconds), it costs a few milliseconds.
            return model.encode(texts, batch_size=self.batch_size)
        with self._batches:  # two batches multiplying at once only fight over the same cores
            return model.encode(texts, batch_size=self.batch_size)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await asyncio.to_thread(self.embed_blocking, texts)


class RemoteEmbedder:
    """Ollama's `/api/embed` or an OpenAI-compatible `/v1/embeddings`, batched, over httpx."""

    def __init__(
        self, provider: Literal["ollama", "openai"], model: str, base_url: str, *, api_key: str | None, batch_size: int
    ) -> None:
        self.id = f"{provider}:{model}"
        self.batch_size = batch_size
        self._provider = provider
        self._model = model
        self._base = base_url.rstrip("/")
        self._api_key = api_key
        self._dimension: int | None = None

    async def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int((await self.embed(["dimension probe"])).shape[1])
        return self._dimension

    def _request(self, texts: Sequence[str]) -> tuple[str, dict[str, object], dict[str, str]]:
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        if self._provider == "ollama":
            return f"{self._base}/api/embed", {"model": self._model, "input": list(texts)}, headers
        return f"{self._base}/embeddings", {"model": self._model, "input": list(texts)}, headers

    def _parse(self, body: object, count: int) -> Vectors:
        rows: object
        if self._provider == "ollama":
            rows = body.get("embeddings") if isinstance(body, dict) else None
        else:
            data = body.get("data") if isinstance(body, dict) else None
            rows = (
                [item.get("embedding") for item in sorted(data, key=lambda d: d.get("index", 0))]
                if isinstance(data, list) and all(isinstance(d, dict) for d in data)
                else None
            )
        try:
            array = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError):
            array = np.zeros((0, 0), dtype=np.float32)
        if array.ndim != 2 or array.shape[0] != count or array.shape[1] == 0 or not np.isfinite(array).all():
            raise EmbedderError(f"{self.id} answered something that is not {count} embedding(s)")
        if self._dimension is not None and array.shape[1] != self._dimension:
            raise EmbedderError(f"{self.id} changed dimension from {self._dimension} to {array.shape[1]}")
        return normalise(array)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        import httpx

        out: list[Vectors] = []
        async with httpx.AsyncClient(timeout=120) as client:
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                url, body, headers = self._request(batch)
                try:
                    response = await client.post(url, json=body, headers=headers)
                    response.raise_for_status()
                    out.append(self._parse(response.json(), len(batch)))
                except (httpx.HTTPError, ValueError) as error:
                    raise EmbedderError(f"{self.id} at {self._base}: {error}") from error
        return np.concatenate(out) if out else np.zeros((0, self._dimension or 0), dtype=np.float32)

    def embed_blocking(self, texts: Sequence[str]) -> Vectors:
        return asyncio.run(self.embed(texts))


def make_embedder(settings: EmbedderConfig, environ: dict[str, str] | None = None) -> Embedder:
    """The embedder the user's `[memory.embedder]` names."""
    import os

    if settings.provider == "local":
        return LocalEmbedder()
    env = os.environ if environ is None else environ
    if not settings.model:
        raise EmbedderError(f"[memory.embedder] provider {settings.provider!r} needs a model")
    default = "http://127.0.0.1:11434" if settings.provider == "ollama" else "https://api.openai.com/v1"
    api_key = env.get(settings.api_key_env) if settings.api_key_env else None
    if settings.provider == "openai" and settings.api_key_env and not api_key:
        raise EmbedderError(f"[memory.embedder] api_key_env names {settings.api_key_env}, which is not set")
    return RemoteEmbedder(
        settings.provider,
        settings.model,
        settings.base_url or default,
        api_key=api_key,
        batch_size=settings.batch_size,
    )
