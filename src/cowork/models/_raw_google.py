"""A Gemini API client that converts each history content to its wire form once (see `_raw` for the OpenAI clients).

On every `generate_content_stream` call google-genai validates the whole `contents` into its pydantic types
(`_GenerateContentParameters`), converts them back to the REST form field by field in Python
(`_GenerateContentParameters_to_mldev`: a `getv`/`setv` per field of every part), dumps them (`convert_to_dict`)
and base64-encodes their bytes (`encode_unserializable_types`): about 0.15 ms per history message per request,
120 ms for a history of 800 messages, so a request's cost grew with the session's length. Each step takes the
contents item by item, so a content's wire form depends on that content alone (`t_contents` regroups bare parts
into contents, which pydantic-ai never sends: every item is a whole content, and anything else takes the SDK's
path). Here it is worked out once:

- `WireContent` is a content dict, as pydantic-ai's `GoogleModel` builds it, that keeps its wire form once
  converted. `_google.GoogleModel` hands out the same `WireContent` objects for a history message on every request,
  and nothing changes them afterwards.
- `raw_client` gives a client's `aio.models` a `_generate_content_stream` (the streamed request Cowork makes;
  `generate_content` is left as it is) that, when every content is a `WireContent` (and the client speaks the
  Gemini API, with no `extra_body` to merge into the body), lets the SDK build the request around a one-part
  stand-in for the contents and puts the remembered wire forms in its place as the body goes to the SDK's HTTP
  layer. The body is still serialised whole by the SDK (`json.dumps`, about 2 ms at 800 messages), as every client
  does. Everything else (the config, URL, headers, auth, retries, errors, streaming
  and the parsing of the response) is the SDK's own code. Any other request is the SDK's as it was.

`tests/models/test_wire_equivalence.py` checks the request bodies against the stock client's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import Any, cast

from google.genai import Client, types
from google.genai._api_client import BaseApiClient
from google.genai._common import convert_to_dict, encode_unserializable_types
from google.genai.models import AsyncModels, _GenerateContentParameters_to_mldev

__all__ = ["WireContent", "raw_client", "wire_form"]

_STAND_IN: list[types.ContentUnionDict] = [{"role": "user", "parts": [{"text": ""}]}]
_STAND_IN_WIRE = [{"parts": [{"text": ""}], "role": "user"}]
"""What the SDK makes of `_STAND_IN`: the contents of the body it builds, before the real ones replace them."""


class WireContent(dict[str, Any]):
    """A content dict (`role`, `parts`) that remembers its wire form; it must not be changed once sent."""

    __slots__ = ("wire",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.wire: dict[str, Any] | None = None
        """The wire form once worked out (`wire_form`), else None."""


def wire_form(api_client: BaseApiClient, content: WireContent) -> dict[str, Any] | None:
    """The Gemini API's form of `content`, as the SDK converts it in a request (the same calls, on this content
    alone); None if the SDK would not take it as one whole content."""
    if content.wire is None:
        try:
            params = types._GenerateContentParameters(model="m", contents=[content])
            if not isinstance(params.contents, list) or [type(item) for item in params.contents] != [types.Content]:
                return None
            request = _GenerateContentParameters_to_mldev(api_client, params, None, params)
            body: dict[str, Any] = encode_unserializable_types(convert_to_dict(request))
            content.wire = body["contents"][0]
        except ValueError:  # pydantic's ValidationError too: the SDK's own path then raises it as it always did
            return None
    return content.wire


def _extra_body(options: object) -> bool:
    if isinstance(options, dict):
        return bool(options.get("extra_body"))
    return bool(getattr(options, "extra_body", None))


def _wire_contents(api_client: BaseApiClient, contents: object, config: object) -> list[dict[str, Any]] | None:
    """The wire forms of `contents` if the request may send them as they are, else None.

    Not on Google Cloud (another conversion), nor with an `extra_body`, which the SDK merges into the body in place.
    """
    if api_client.vertexai or type(contents) is not list or not contents:
        return None
    config_options = config.get("http_options") if isinstance(config, dict) else getattr(config, "http_options", None)
    if _extra_body(api_client._http_options) or _extra_body(config_options):
        return None
    out = []
    for content in contents:
        wire = wire_form(api_client, content) if type(content) is WireContent else None
        if wire is None:
            return None
        out.append(wire)
    return out


class _WithContents:
    """The SDK's API client for one request, sending `contents` in place of the converted stand-in."""

    def __init__(self, client: BaseApiClient, contents: list[dict[str, Any]]) -> None:
        self._client = client
        self._contents = contents

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def async_request_streamed(
        self, http_method: str, path: str, request_dict: dict[str, object], http_options: Any = None
    ) -> Any:
        if request_dict.get("contents") != _STAND_IN_WIRE:
            raise RuntimeError("google-genai built the request's contents differently than Cowork expects")
        request_dict["contents"] = self._contents
        return await self._client.async_request_streamed(http_method, path, request_dict, http_options)


class _RawAsyncModels(AsyncModels):
    async def _generate_content_stream(
        self,
        *,
        model: str,
        contents: types.ContentListUnion | types.ContentListUnionDict,
        config: types.GenerateContentConfigOrDict | None = None,
    ) -> Awaitable[AsyncIterator[types.GenerateContentResponse]]:
        wire = _wire_contents(self._api_client, contents, config)
        if wire is None:
            return await super()._generate_content_stream(model=model, contents=contents, config=config)
        # A stock resource per request, over a client that knows this request's contents.
        resource = AsyncModels(cast(BaseApiClient, _WithContents(self._api_client, wire)))
        return await resource._generate_content_stream(model=model, contents=_STAND_IN, config=config)


def raw_client(client: Client) -> Client:
    """`client`, its `aio.models` sending remembered wire forms (see the module's docstring)."""
    client.aio._models = _RawAsyncModels(client._api_client)
    return client
