"""One session across providers: each is sent the whole history in its own wire format; reasoning effort per session
becomes each provider's own thinking parameter."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from cowork.core import Core
from cowork.protocol import (
    ErrorCode,
    OperationStatus,
    ProtocolError,
    SessionUpdateParams,
    ToolCall,
)
from cowork.testing.core import CoreHarness
from cowork.testing.mockllm import MockLLMServer, MockRequest, MockResponse, MockToolCall

pytestmark = pytest.mark.anyio


def all_providers(mock: MockLLMServer) -> dict[str, str]:
    """The OpenAI provider on the Responses API (the harness's `responses`), plus Groq for Chat Completions,
    Anthropic and Google, all pointed at the mock."""
    return {
        "GROQ_API_KEY": "test-key",
        "GROQ_BASE_URL": mock.openai_base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": mock.anthropic_base_url,
        "GOOGLE_API_KEY": "test-key",
        "GOOGLE_GEMINI_BASE_URL": mock.google_base_url,
    }


async def run(harness: CoreHarness, core: Core, session_id: str, text: str) -> None:
    op = await harness.start(core, session_id, text)
    status = await harness.status(session_id, op, OperationStatus.DONE, OperationStatus.ERROR)
    assert status.status == OperationStatus.DONE, status.reason


# -- the history as each wire format carries it -----------------------------------------------------------------------
# Read from the raw request bodies, independently of the mock's own normalisation: ("user", text),
# ("assistant", text), ("call", id, name, arguments) and ("result", id, content).

Entry = tuple[Any, ...]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def _chat(body: dict[str, Any]) -> list[Entry]:
    out: list[Entry] = []
    for m in body["messages"]:
        if m["role"] == "user":
            out.append(("user", _text(m["content"])))
        elif m["role"] == "assistant":
            if m.get("content"):
                out.append(("assistant", _text(m["content"])))
            for call in m.get("tool_calls") or []:
                assert call["type"] == "function"
                fn = call["function"]
                out.append(("call", call["id"], fn["name"], json.loads(fn["arguments"])))
        elif m["role"] == "tool":
            out.append(("result", m["tool_call_id"], _text(m["content"])))
    return out


def _anthropic(body: dict[str, Any]) -> list[Entry]:
    out: list[Entry] = []
    for m in body["messages"]:
        blocks = [{"type": "text", "text": m["content"]}] if isinstance(m["content"], str) else m["content"]
        for b in blocks:
            if b["type"] == "text":
                out.append((m["role"], b["text"]))
            elif b["type"] == "tool_use":
                assert m["role"] == "assistant"
                out.append(("call", b["id"], b["name"], b["input"]))
            elif b["type"] == "tool_result":
                assert m["role"] == "user"
                out.append(("result", b["tool_use_id"], _text(b["content"])))
            else:
                raise AssertionError(f"unexpected block {b}")
    return out


def _gemini(body: dict[str, Any]) -> list[Entry]:
    out: list[Entry] = []
    roles = {"user": "user", "model": "assistant"}
    for content in body["contents"]:
        for part in content["parts"]:
            if "text" in part:
                out.append((roles[content["role"]], part["text"]))
            elif "functionCall" in part:
                assert content["role"] == "model"
                call = part["functionCall"]
                out.append(("call", call["id"], call["name"], call["args"]))
            elif "functionResponse" in part:
                assert content["role"] == "user"
                response = part["functionResponse"]
                out.append(("result", response["id"], response["response"]["return_value"]))
            else:
                raise AssertionError(f"unexpected part {part}")
    return out


def _responses(body: dict[str, Any]) -> list[Entry]:
    out: list[Entry] = []
    for item in body["input"]:
        kind = item.get("type", "message")
        if kind == "message":
            out.append((item["role"], _text(item["content"])))
        elif kind == "function_call":
            out.append(("call", item["call_id"], item["name"], json.loads(item["arguments"])))
        elif kind == "function_call_output":
            out.append(("result", item["call_id"], item["output"]))
        else:
            raise AssertionError(f"unexpected item {item}")
    return out


READERS = {"openai": _chat, "anthropic": _anthropic, "gemini": _gemini, "responses": _responses}


def wire_history(request: MockRequest) -> list[Entry]:
    return READERS[request.format](request.body)


def normalised(history: list[Entry]) -> list[dict[str, Any]]:
    """The same history the way `MockRequest.messages` shows it."""
    out: list[dict[str, Any]] = []
    for entry in history:
        if entry[0] == "call":
            out.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": entry[1], "name": entry[2], "arguments": entry[3]}],
                }
            )
        elif entry[0] == "result":
            out.append({"role": "tool", "content": entry[2], "tool_call_id": entry[1]})
        else:
            out.append({"role": entry[0], "content": entry[1]})
    return out


# (provider, wire format, the tool call id the provider gives; Gemini gives none, so pydantic-ai makes one up)
CHAIN = [
    ("groq", "openai", "call_chat_1"),
    ("anthropic", "anthropic", "toolu_anthropic_2"),
    ("google", "gemini", None),
    ("openai", "responses", "call_responses_4"),
]


async def test_each_provider_gets_the_whole_history_in_its_own_format(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    core = await harness.core("responses", env=all_providers(mock_llm))
    sid = await harness.session(core)
    history: list[Entry] = []
    for turn, (provider, wire, call_id) in enumerate(CHAIN, 1):
        mock_llm.reset()
        mock_llm.set_script(
            [
                MockResponse(tool_calls=[MockToolCall(name="peek", arguments={"label": f"p{turn}"}, id=call_id)]),
                MockResponse(text=f"Answer {turn}."),
            ]
        )
        info = await core.sessions.update_settings(sid, provider=provider, model="mock-model")
        assert (info.provider, info.model) == (provider, "mock-model")
        await run(harness, core, sid, f"Question {turn}?")

        first, second = mock_llm.requests
        assert (first.format, second.format) == (wire, wire)
        history.append(("user", f"Question {turn}?"))
        assert wire_history(first) == history
        assert first.messages == normalised(history)

        call = [c for c in (e.payload for e in harness.events[sid]) if isinstance(c, ToolCall)][-1]
        assert call.tool_call_id == (call_id or call.tool_call_id)
        history += [
            ("call", call.tool_call_id, "peek", {"label": f"p{turn}"}),
            ("result", call.tool_call_id, f"peeked p{turn}"),
        ]
        assert wire_history(second) == history
        assert second.messages == normalised(history)
        history.append(("assistant", f"Answer {turn}."))


async def test_a_tool_call_made_on_one_provider_in_each_others_raw_shape(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    core = await harness.core("responses", env=all_providers(mock_llm))
    sid = await harness.session(core)
    mock_llm.set_script(
        [
            MockResponse(tool_calls=[MockToolCall(name="peek", arguments={"label": "x"}, id="call_r1")]),
            MockResponse(text="Seen it."),
            MockResponse(text="From Claude."),
            MockResponse(text="From Gemini."),
            MockResponse(text="From Groq."),
        ]
    )
    await run(harness, core, sid, "Look.")
    await core.sessions.update_settings(sid, provider="anthropic", model="mock-model")
    await run(harness, core, sid, "Claude?")
    await core.sessions.update_settings(sid, provider="google", model="mock-model")
    await run(harness, core, sid, "Gemini?")
    await core.sessions.update_settings(sid, provider="groq", model="mock-model")
    await run(harness, core, sid, "Groq?")

    first, responses, anthropic, gemini, chat = mock_llm.requests
    assert [r.format for r in mock_llm.requests] == ["responses", "responses", "anthropic", "gemini", "openai"]
    assert first.body["input"] == [{"role": "user", "content": "Look."}]
    assert responses.body["input"] == [
        {"role": "user", "content": "Look."},
        {"type": "function_call", "call_id": "call_r1", "name": "peek", "arguments": '{"label":"x"}'},
        {"type": "function_call_output", "call_id": "call_r1", "output": "peeked x"},
    ]
    assert anthropic.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Look."}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "call_r1", "name": "peek", "input": {"label": "x"}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_r1",
                    "content": [{"type": "text", "text": "peeked x"}],
                    "is_error": False,
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Seen it."}]},
        {"role": "user", "content": [{"type": "text", "text": "Claude?"}]},
    ]
    assert gemini.body["contents"][1:4] == [
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {"id": "call_r1", "name": "peek", "args": {"label": "x"}},
                    # Gemini wants a thought signature on every call; one made elsewhere gets Google's documented
                    # "skip_thought_signature_validator".
                    "thoughtSignature": base64.b64encode(b"skip_thought_signature_validator").decode(),
                }
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"id": "call_r1", "name": "peek", "response": {"return_value": "peeked x"}}}
            ],
        },
        {"role": "model", "parts": [{"text": "Seen it."}]},
    ]
    assert [(e[0], e[1]) for e in wire_history(gemini)][-2:] == [("assistant", "From Claude."), ("user", "Gemini?")]
    assert [m for m in chat.body["messages"] if m["role"] != "system"][:4] == [
        {"role": "user", "content": "Look."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_r1", "type": "function", "function": {"name": "peek", "arguments": '{"label":"x"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_r1", "content": "peeked x"},
        {"role": "assistant", "content": "Seen it."},
    ]


# -- reasoning effort -------------------------------------------------------------------------------------------------


def thinking_of(request: MockRequest) -> Any:
    """The part of a raw request that carries the thinking setting, per wire format."""
    body = request.body
    if request.format == "openai":
        return body.get("reasoning_effort")
    if request.format == "responses":
        return body.get("reasoning", {}).get("effort")
    if request.format == "anthropic":
        return {key: body[key] for key in ("thinking", "output_config") if key in body}
    return body.get("generationConfig", {}).get("thinkingConfig")


@pytest.mark.parametrize(
    ("kind", "model", "high", "off"),
    [
        # A model that cannot stop thinking gets the lowest effort it takes for "off".
        ("openai", "gpt-6.1-sol", "high", "low"),
        ("openai", "gpt-6-luna", "high", "none"),
        ("responses", "gpt-6.1-sol", "high", "low"),
        ("responses", "gpt-5.6-luna", "high", "none"),
        (
            "anthropic",
            "claude-sonnet-5-5",
            {"thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}},
            # Sonnet 5.5 refuses {"type": "disabled"}; this is how it turns thinking off.
            {"thinking": {"type": "between_tools"}},
        ),
        (
            "anthropic",
            "claude-haiku-5-5",
            {"thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}},
            {"thinking": {"type": "disabled"}},
        ),
        # An unknown model may reason: older Claude-style budgets, and thinking is simply left off.
        ("anthropic", "mock-model", {"thinking": {"type": "enabled", "budget_tokens": 16384}}, {}),
        ("google", "gemini-3.8-flash", {"include_thoughts": True, "thinking_level": "HIGH"}, {"thinking_level": "LOW"}),
        ("google", "gemini-2.5-flash", {"include_thoughts": True, "thinking_budget": 24576}, {"thinking_budget": 0}),
    ],
)
async def test_reasoning_effort_becomes_the_providers_thinking_parameter(
    harness: CoreHarness, mock_llm: MockLLMServer, kind: str, model: str, high: Any, off: Any
) -> None:
    mock_llm.set_script([MockResponse(text="ok")] * 4)
    core = await harness.core(kind, env={"COWORK_MODEL": model})
    sid = await harness.session(core)
    unset: dict[str, Any] | None = {} if kind == "anthropic" else None

    await run(harness, core, sid, "as the model likes")
    for effort in ("high", "off", "default"):
        info = await core.settings.update(SessionUpdateParams(session_id=sid, reasoning_effort=effort))
        assert info.reasoning_effort == (None if effort == "default" else effort)
        await run(harness, core, sid, effort)

    sent = [thinking_of(r) for r in mock_llm.requests]
    assert sent == [unset, high, off, unset]
    assert [r.model for r in mock_llm.requests] == [model] * 4


async def test_reasoning_effort_is_refused_for_a_model_that_cannot_reason(
    harness: CoreHarness, mock_llm: MockLLMServer
) -> None:
    mock_llm.set_script([MockResponse(text="ok")])
    core = await harness.core("openai", env=all_providers(mock_llm))
    sid = await harness.session(core)
    await core.sessions.update_settings(sid, provider="groq", model="llama-3.3-70b-versatile")
    before = await core.sessions.get(sid)
    seen = len(harness.events[sid])

    with pytest.raises(ProtocolError) as info:
        await core.settings.update(SessionUpdateParams(session_id=sid, reasoning_effort="high"))
    assert info.value.code == ErrorCode.NOT_SUPPORTED
    assert "groq:llama-3.3-70b-versatile" in info.value.message

    assert await core.sessions.get(sid) == before
    assert harness.events[sid][seen:] == []
    # "off" and "default" ask nothing of the model, so they are accepted.
    for effort in ("off", "default"):
        await core.settings.update(SessionUpdateParams(session_id=sid, reasoning_effort=effort))
    await run(harness, core, sid, "hi")
    (request,) = mock_llm.requests
    assert (request.format, request.model) == ("openai", "llama-3.3-70b-versatile")
    assert "reasoning_effort" not in request.body
