"""Tool schemas fitted to the provider once per tool set, not on every request (see `_adapters` for the why)."""

from __future__ import annotations

from typing import Any

from pydantic_ai.models import ModelRequestParameters

__all__ = ["SchemasOnce"]


class SchemasOnce:
    """Mixin for a pydantic-ai `Model`: `customize_request_parameters` remembers its last answer."""

    _last_schemas: tuple[ModelRequestParameters, ModelRequestParameters] | None = None

    def customize_request_parameters(self, model_request_parameters: ModelRequestParameters) -> ModelRequestParameters:
        last = self._last_schemas
        if last is not None and last[0] == model_request_parameters:
            return last[1]
        parent: Any = super()
        customized: ModelRequestParameters = parent.customize_request_parameters(model_request_parameters)
        self._last_schemas = (model_request_parameters, customized)
        return customized
