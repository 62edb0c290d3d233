"""A fast, deterministic embedder for tests where the model is not what is tested (jobs, recovery, protocol).

`HashEmbedder` hashes each word into one of `dimension` buckets (a bag of words, L2-normalised): texts sharing
words are close, others are not. It can append the sha1 of every text it embeds to a log file (flushed and synced
before returning), so a test can prove across a SIGKILL that no chunk was embedded twice. Tests of the real model
use `cowork.embeddings.LocalEmbedder` (tests/embeddings).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cowork.embeddings import Vectors

__all__ = ["HashEmbedder"]

_WORD = re.compile(r"\w+")


class HashEmbedder:
    def __init__(self, dimension: int = 64, *, log: Path | None = None, delay: float = 0.0) -> None:
        self.id = f"test:hash-{dimension}"
        self.batch_size = 32
        self._dimension = dimension
        self._log = log
        self._delay = delay
        self.calls = 0
        self.texts = 0

    async def dimension(self) -> int:
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await asyncio.to_thread(self.embed_blocking, texts)

    def embed_blocking(self, texts: Sequence[str]) -> Vectors:
        import time

        if self._delay:
            time.sleep(self._delay)
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                out[row, int(hashlib.md5(word.encode()).hexdigest()[:8], 16) % self._dimension] += 1.0
            out[row, 0] += 1e-3  # never the zero vector
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        self.calls += 1
        self.texts += len(texts)
        if self._log is not None:
            with self._log.open("a", encoding="utf-8") as handle:
                handle.writelines(hashlib.sha1(t.encode()).hexdigest() + "\n" for t in texts)
                handle.flush()
                os.fsync(handle.fileno())
        return out
