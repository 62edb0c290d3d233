"""Ollama's native model API (`/api/tags`, `/api/show`, `/api/version`) and the models it describes."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

OLLAMA_VERSION = "0.12.6"
_SIZE = re.compile(r"(\d+(?:\.\d+)?)([KMBT])")
_SCALE = {"K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}
_MODIFIED = datetime(2025, 1, 1, tzinfo=UTC)


class MockOllamaModel(BaseModel):
    """One model a mock Ollama has pulled, with the metadata `/api/tags` and `/api/show` report for it.

    `size` is the weights' size in bytes; `parameter_size` is Ollama's label (`8.2B`, `494.03M`), from which
    `general.parameter_count` is derived unless `parameter_count` gives it exactly. `family` defaults to the
    architecture. `parameters` are the Modelfile's `PARAMETER` lines (`{"temperature": 0.6}`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    size: int = Field(ge=0)
    parameter_size: str = Field(pattern=_SIZE.pattern)
    architecture: str = Field(min_length=1)
    context_length: int = Field(ge=1)
    block_count: int = Field(ge=1)
    head_count: int = Field(ge=1)
    head_count_kv: int = Field(ge=1)
    embedding_length: int = Field(ge=1)
    key_length: int | None = Field(default=None, ge=1)
    value_length: int | None = Field(default=None, ge=1)
    quantization_level: str = "Q4_K_M"
    family: str | None = None
    parameter_count: int | None = Field(default=None, ge=0)
    capabilities: list[str] = Field(default_factory=lambda: ["completion"])
    parameters: dict[str, str | int | float | list[str]] = Field(default_factory=dict)
    template: str = "{{ .Prompt }}"
    modified_at: datetime = _MODIFIED

    @property
    def tagged_name(self) -> str:
        """The name with its tag, as Ollama lists it: `qwen3` is `qwen3:latest`."""
        return tagged(self.name)

    @property
    def digest(self) -> str:
        """A stable stand-in for the manifest's sha256 digest."""
        return hashlib.sha256(self.tagged_name.encode()).hexdigest()

    @property
    def total_parameters(self) -> int:
        """`general.parameter_count`: `parameter_count`, or the count `parameter_size` stands for."""
        if self.parameter_count is not None:
            return self.parameter_count
        match = _SIZE.fullmatch(self.parameter_size)
        assert match is not None  # the field's pattern
        return round(float(match[1]) * _SCALE[match[2]])


_MODELS = TypeAdapter(list[MockOllamaModel])


def load_ollama_models(path: str | Path) -> list[MockOllamaModel]:
    """Read a JSON list of `MockOllamaModel`s."""
    try:
        return _MODELS.validate_json(Path(path).read_bytes())
    except (OSError, ValidationError) as e:
        raise ValueError(f"bad Ollama models file {path}: {e}") from e


def tagged(name: str) -> str:
    """A model name with its tag; Ollama reads an untagged name as `:latest`."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def find(models: Sequence[MockOllamaModel], name: str) -> MockOllamaModel | None:
    """The model `name` refers to, tagged or not."""
    wanted = tagged(name)
    return next((model for model in models if model.tagged_name == wanted), None)


def _timestamp(moment: datetime) -> str:
    # Go's RFC 3339 spells UTC `Z`.
    return moment.isoformat().replace("+00:00", "Z")


def _details(model: MockOllamaModel) -> dict[str, Any]:
    family = model.family or model.architecture
    return {
        "parent_model": "",
        "format": "gguf",
        "family": family,
        "families": [family],
        "parameter_size": model.parameter_size,
        "quantization_level": model.quantization_level,
    }


def tags_body(models: Sequence[MockOllamaModel]) -> dict[str, Any]:
    """The `/api/tags` body: every pulled model."""
    return {
        "models": [
            {
                "name": model.tagged_name,
                "model": model.tagged_name,
                "modified_at": _timestamp(model.modified_at),
                "size": model.size,
                "digest": model.digest,
                "details": _details(model),
            }
            for model in models
        ]
    }


def openai_models_body(models: Sequence[MockOllamaModel]) -> dict[str, Any]:
    """The body of Ollama's OpenAI-compatible `GET /v1/models`; `user/model` is owned by `user`, the rest `library`."""
    data = [
        {
            "id": model.tagged_name,
            "object": "model",
            "created": int(model.modified_at.timestamp()),
            "owned_by": model.name.split("/")[0] if "/" in model.name else "library",
        }
        for model in models
    ]
    return {"object": "list", "data": data}


def _parameter_lines(parameters: dict[str, str | int | float | list[str]]) -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    for key, value in parameters.items():
        for one in value if isinstance(value, list) else [value]:
            lines.append((key, json.dumps(one) if isinstance(one, str) else f"{one:g}"))
    return lines


def _modelfile(model: MockOllamaModel, lines: list[tuple[str, str]]) -> str:
    blob = hashlib.sha256(f"weights of {model.tagged_name}".encode()).hexdigest()
    return "".join(
        [
            '# Modelfile generated by "ollama show"\n',
            "# To build a new Modelfile based on this, replace FROM with:\n",
            f"# FROM {model.tagged_name}\n\n",
            f"FROM /root/.ollama/models/blobs/sha256-{blob}\n",
            f'TEMPLATE """{model.template}"""\n',
            *(f"PARAMETER {key} {value}\n" for key, value in lines),
        ]
    )


def _model_info(model: MockOllamaModel) -> dict[str, Any]:
    arch = model.architecture
    info: dict[str, Any] = {
        "general.architecture": arch,
        "general.parameter_count": model.total_parameters,
        f"{arch}.attention.head_count": model.head_count,
        f"{arch}.attention.head_count_kv": model.head_count_kv,
        f"{arch}.block_count": model.block_count,
        f"{arch}.context_length": model.context_length,
        f"{arch}.embedding_length": model.embedding_length,
    }
    if model.key_length is not None:
        info[f"{arch}.attention.key_length"] = model.key_length
    if model.value_length is not None:
        info[f"{arch}.attention.value_length"] = model.value_length
    return dict(sorted(info.items()))


def show_body(model: MockOllamaModel) -> dict[str, Any]:
    """The `/api/show` body for one model."""
    lines = _parameter_lines(model.parameters)
    body: dict[str, Any] = {"modelfile": _modelfile(model, lines)}
    if lines:  # Ollama leaves out an empty `parameters`
        body["parameters"] = "\n".join(f"{key:<30} {value}" for key, value in lines)
    body |= {
        "template": model.template,
        "details": _details(model),
        "model_info": _model_info(model),
        "capabilities": list(model.capabilities),
        "modified_at": _timestamp(model.modified_at),
    }
    return body
