"""`MockLLMServer(history_tail=N)`: the mock reads only the last N messages of a request's history, in every format."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from cowork.testing.mockllm import MockLLMServer, MockResponse

TURNS = 6  # user/assistant pairs: twelve messages of history


def openai_body() -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}]
    for n in range(TURNS):
        messages += [{"role": "user", "content": f"q{n}"}, {"role": "assistant", "content": f"a{n}"}]
    return {"model": "m", "messages": [*messages, {"role": "user", "content": "last"}]}


def anthropic_body() -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for n in range(TURNS):
        messages += [{"role": "user", "content": f"q{n}"}, {"role": "assistant", "content": f"a{n}"}]
    return {"model": "m", "max_tokens": 10, "messages": [*messages, {"role": "user", "content": "last"}]}


def gemini_body() -> dict[str, Any]:
    contents: list[dict[str, Any]] = []
    for n in range(TURNS):
        contents += [{"role": "user", "parts": [{"text": f"q{n}"}]}, {"role": "model", "parts": [{"text": f"a{n}"}]}]
    return {"contents": [*contents, {"role": "user", "parts": [{"text": "last"}]}]}


def responses_body() -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for n in range(TURNS):
        items += [{"role": "user", "content": f"q{n}"}, {"role": "assistant", "content": f"a{n}"}]
    return {"model": "m", "input": [*items, {"role": "user", "content": "last"}]}


CASES = {
    "openai": ("/v1/chat/completions", openai_body),
    "anthropic": ("/v1/messages", anthropic_body),
    "gemini": ("/v1beta/models/mock-model:generateContent", gemini_body),
    "responses": ("/v1/responses", responses_body),
}


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_only_the_last_messages_are_read(fmt: str) -> None:
    path, body = CASES[fmt]
    with MockLLMServer([MockResponse(text="ok")] * 2, history_tail=3) as mock:
        answer = httpx.post(mock.url + path, json=body(), headers={"authorization": "Bearer k"}, timeout=30)
        assert answer.status_code == 200, answer.text
        (request,) = mock.requests
    assert [m["content"] for m in request.messages] == ["q5", "a5", "last"]
    assert request.system is None  # the system prompt went with the rest of the head


def test_without_a_tail_the_whole_history_is_read() -> None:
    with MockLLMServer([MockResponse(text="ok")]) as mock:
        httpx.post(mock.url + "/v1/chat/completions", json=openai_body(), timeout=30).raise_for_status()
        (request,) = mock.requests
    assert len(request.messages) == 2 * TURNS + 1 and request.system == "be brief"


def test_a_tail_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="history_tail"):
        MockLLMServer(history_tail=0)
