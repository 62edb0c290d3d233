"""An Anthropic client that sends pydantic-ai's request bodies as they are (see `_raw` for the OpenAI ones).

The Anthropic SDK walks the body in another place: before sending, `_copy_and_prepare` copies the whole body
(`copy_tree`: every container, to drop omitted entries, dump pydantic models and read file inputs). pydantic-ai
sends plain dicts and lists with base64 data already inlined, so `RawAsyncAnthropic` drops the omitted top-level
arguments and sends the rest as given; a body it cannot vouch for (extra body, query parameters, anything but a
dict) takes the SDK's own path. `tests/models/test_wire_equivalence.py` checks it against the stock client.
"""

from __future__ import annotations

from anthropic import AsyncAnthropic
from anthropic import NotGiven as AnthropicNotGiven
from anthropic import Omit as AnthropicOmit
from anthropic._compat import model_copy
from anthropic._models import FinalRequestOptions

__all__ = ["RawAsyncAnthropic"]


class RawAsyncAnthropic(AsyncAnthropic):
    """`AsyncAnthropic` that sends a plain request body without copying it first."""

    async def _copy_and_prepare(self, options: FinalRequestOptions) -> FinalRequestOptions:
        body = options.json_data
        if (
            type(body) is not dict
            or options.extra_json is not None
            or options.params
            or options.method.lower() != "post"
        ):
            return await super()._copy_and_prepare(options)
        options = model_copy(options)
        options.json_data = {
            key: value for key, value in body.items() if not isinstance(value, AnthropicNotGiven | AnthropicOmit)
        }
        return options
