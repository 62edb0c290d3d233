"""A scripted mock LLM server speaking the wire formats of the model providers Cowork talks to.

It stands in for real model providers in tests and benchmarks: the real SDKs and pydantic-ai adapters talk
to it over HTTP, and each model request gets the next scripted `MockResponse` (or a callback's answer).
Every format streams and not, with text, reasoning, tool calls, usage, errors in the provider's own shape,
delays, hangs, dropped streams and malformed stream events (`MockRequest.format` names the format):

- OpenAI Chat Completions (`openai`), `POST /v1/chat/completions`, at `openai_base_url`;
- OpenAI Responses (`responses`), `POST /v1/responses`, at `openai_base_url`;
- Anthropic Messages (`anthropic`), `POST /v1/messages`, at `anthropic_base_url`;
- Google Gemini (`gemini`), `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent`, at
  `google_base_url`;
- Ollama: its OpenAI-compatible API is the Chat Completions one at `openai_base_url`; its native model API
  (`/api/tags`, `/api/show`, `/api/version`), describing the `MockOllamaModel`s given, is at `ollama_base_url`.

`GET /v1/models` lists `models` (or the Ollama models), in Anthropic's shape when asked with `anthropic-version`;
`GET /v1beta/models` lists them in Google's shape (`{"models": [{"name": "models/<id>"}]}`). With `api_keys` set,
model requests and both listings carrying any other key get a 401 in their format's shape (real Gemini answers a
bad key with 400 `API_KEY_INVALID` instead).

    with MockLLMServer([MockResponse(text="Hi!")]) as mock:
        provider = OpenAIProvider(base_url=mock.openai_base_url, api_key="any")
        ...  # or AnthropicProvider(base_url=mock.anthropic_base_url), GoogleProvider(base_url=mock.google_base_url)
        assert mock.requests[0].last_user_text == "Hello"

Pass `ModelSettings(max_retries=0)` in tests that script errors: the SDKs otherwise retry 429 and 5xx.
Run it by hand with `python -m cowork.testing.mockllm --echo` (or `--script FILE`; see `--help`).
"""

from ._ollama import MockOllamaModel, load_ollama_models
from ._script import (
    MockError,
    MockRequest,
    MockResponse,
    MockToolCall,
    MockUsage,
    RequestFormat,
    Script,
    bash_step,
    echo_script,
    load_script,
    tool_step,
)
from ._server import DEFAULT_MODELS, MockLLMServer

__all__ = [
    "DEFAULT_MODELS",
    "MockError",
    "MockLLMServer",
    "MockOllamaModel",
    "MockRequest",
    "MockResponse",
    "MockToolCall",
    "MockUsage",
    "RequestFormat",
    "Script",
    "bash_step",
    "echo_script",
    "load_ollama_models",
    "load_script",
    "tool_step",
]
