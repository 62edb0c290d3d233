"""Shared figures for the provider tests: a mock Ollama model with qwen3:8b's real metadata, and a closed port."""

from __future__ import annotations

import socket
from typing import Any

from cowork.testing.mockllm import MockOllamaModel

GIB = 1024**3

QWEN3_8B_SIZE = 5_225_387_923
"""qwen3:8b's Q4_K_M weights on disk, as Ollama's /api/tags reports them."""

QWEN3_8B_KV_8K = 36 * 8192 * 8 * (128 + 128) * 2
"""Its f16 KV cache at 8,192 tokens: 36 layers x 8,192 tokens x 8 KV heads x (128 + 128) dims x 2 bytes."""


def ollama_model(**changes: Any) -> MockOllamaModel:
    """qwen3:8b as Ollama describes it (`/api/show`'s model_info), with `changes` applied."""
    fields: dict[str, Any] = {
        "name": "qwen3:8b",
        "size": QWEN3_8B_SIZE,
        "parameter_size": "8.2B",
        "architecture": "qwen3",
        "context_length": 40960,
        "block_count": 36,
        "head_count": 32,
        "head_count_kv": 8,
        "embedding_length": 4096,
        "key_length": 128,
        "value_length": 128,
    }
    return MockOllamaModel(**(fields | changes))


def closed_port_url() -> str:
    """An http:// URL on this machine where nothing listens (a port just bound and released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
