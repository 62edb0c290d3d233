"""Choosing provider and model from the session, the configuration and the environment; building adapters."""

from __future__ import annotations

import pytest
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

from cowork.config import CoworkConfig, ProviderSettings
from cowork.models import ModelSelector, ModelTarget, family_factory, presets
from cowork.protocol import ErrorCode, ProtocolError


def selector(env: dict[str, str], **config: object) -> ModelSelector:
    return ModelSelector(CoworkConfig.model_validate(config), env)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"OPENAI_API_KEY": "k"}, ("openai", "gpt-6.1-sol", "openai")),
        ({"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}, ("openai", "gpt-6.1-sol", "openai-chat")),
        ({"ANTHROPIC_API_KEY": "k"}, ("anthropic", "claude-sonnet-5-5", "anthropic")),
        ({"GEMINI_API_KEY": "k"}, ("google", "gemini-3.8-flash", "google")),
        ({"OPENROUTER_API_KEY": "k"}, ("openrouter", "anthropic/claude-sonnet-4.6", "openai-chat")),
        ({"ANTHROPIC_API_KEY": "k", "GOOGLE_API_KEY": "g"}, ("anthropic", "claude-sonnet-5-5", "anthropic")),
    ],
)
def test_auto_detection_from_the_environment(env: dict[str, str], expected: tuple[str, str, str]) -> None:
    target = selector(env).resolve(None, None)
    assert (target.provider, target.model, target.family) == expected


def test_configured_provider_and_model_win() -> None:
    s = selector({"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "a"}, provider="anthropic", model="claude-x")
    target = s.resolve(None, None)
    assert (target.provider, target.model, target.api_key) == ("anthropic", "claude-x", "a")
    # A session's own choice beats configuration; the configured model belongs to the configured provider only.
    assert s.resolve("openai", None).model == "gpt-6.1-sol"
    assert s.resolve("openai", "gpt-5.6-luna").model == "gpt-5.6-luna"


def test_local_provider_needs_no_key() -> None:
    target = selector({}, provider="ollama").resolve(None, None)
    assert (target.base_url, target.family, target.api_key) == ("http://127.0.0.1:11434/v1", "openai-chat", None)
    moved = selector({"OLLAMA_BASE_URL": "http://gpu-box:11434/v1"}, provider="ollama").resolve(None, None)
    assert moved.base_url == "http://gpu-box:11434/v1"


def test_provider_overrides_from_config() -> None:
    s = selector(
        {"MY_KEY": "secret"},
        provider="openai",
        providers={"openai": ProviderSettings(api_key_env="MY_KEY", base_url="https://gw.example/v1", api="responses")},
    )
    target = s.resolve(None, None)
    assert (target.api_key, target.base_url, target.family) == ("secret", "https://gw.example/v1", "openai")


def test_no_provider_names_what_to_set() -> None:
    with pytest.raises(ProtocolError) as info:
        selector({}).resolve(None, None)
    assert info.value.code == ErrorCode.NO_PROVIDER
    for hint in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "OPENAI_BASE_URL", "Ollama", "config.toml"):
        assert hint in info.value.message


def test_chosen_provider_without_key_and_unknown_provider() -> None:
    with pytest.raises(ProtocolError) as info:
        selector({"OPENAI_API_KEY": "k"}).resolve("anthropic", None)
    assert info.value.code == ErrorCode.NO_PROVIDER and "ANTHROPIC_API_KEY" in info.value.message
    with pytest.raises(ProtocolError) as info:
        selector({"OPENAI_API_KEY": "k"}).resolve("acme", None)
    assert info.value.code == ErrorCode.UNKNOWN_PROVIDER


def test_provider_prefixed_model_ids() -> None:
    s = selector({})
    assert s.split("anthropic:claude-x", None) == ("anthropic", "claude-x")
    assert s.split("qwen3:8b", "ollama") == ("ollama", "qwen3:8b")  # a colon inside a model id stays
    assert s.split("qwen3:8b", None) == (None, "qwen3:8b")


@pytest.mark.parametrize(
    ("family", "cls"),
    [
        ("openai", OpenAIResponsesModel),
        ("openai-chat", OpenAIChatModel),
        ("anthropic", AnthropicModel),
        ("google", GoogleModel),
    ],
)
def test_every_family_builds_its_adapter_without_network(family: str, cls: type) -> None:
    built = family_factory(family)(ModelTarget("p", "some-model", family, None, "key"))  # type: ignore[arg-type]
    assert isinstance(built.model, cls) and built.model.model_name == "some-model"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("profile", "provider_cls"),
    [
        ("deepseek", "DeepSeekProvider"),
        ("ollama", "OllamaProvider"),
        ("together", "TogetherProvider"),
        (None, "OpenAIProvider"),
    ],
)
async def test_compatible_providers_get_pydantic_ai_s_named_provider_for_its_profiles(
    profile: str | None, provider_cls: str
) -> None:
    target = ModelTarget("p", "deepseek-v4-pro", "openai-chat", "http://127.0.0.1:1/v1", "key", profile=profile)
    built = family_factory("openai-chat")(target)
    try:
        assert type(built.model._provider).__name__ == provider_cls
        # The base URL is ours (tests, gateways), whatever the named provider's default.
        assert built.model.base_url == "http://127.0.0.1:1/v1/"
    finally:
        for close in built.closers:
            await close()


def test_saved_keys_win_over_the_environment_and_say_where_they_came_from() -> None:
    s = ModelSelector(CoworkConfig(), {"ANTHROPIC_API_KEY": "from-env"}, stored_keys={"openai": "saved"})
    anthropic, openai, ollama, google = (s.preset(p) for p in ("anthropic", "openai", "ollama", "google"))
    assert (s.key_source(anthropic), s.key_source(openai), s.key_source(ollama), s.key_source(google)) == (
        "env",
        "store",
        "not_needed",
        "none",
    )
    assert s.default_provider() == "openai"  # a saved key counts as connected, in the detection order
    s.set_stored_key("anthropic", "saved-too")
    assert s.resolve("anthropic", None).api_key == "saved-too"
    s.set_stored_key("anthropic", None)
    assert s.resolve("anthropic", None).api_key == "from-env"


def test_a_saved_base_url_makes_openai_speak_chat_completions() -> None:
    s = ModelSelector(CoworkConfig(), {"OPENAI_API_KEY": "k"})
    assert s.resolve("openai", None).family == "openai"
    s.set_stored_base_url("openai", "http://127.0.0.1:9/v1")
    target = s.resolve("openai", None)
    assert (target.family, target.base_url) == ("openai-chat", "http://127.0.0.1:9/v1")


def test_missing_key_message_says_where_to_get_one_and_how_to_connect() -> None:
    with pytest.raises(ProtocolError) as raised:
        ModelSelector(CoworkConfig(), {}).resolve("deepseek", None)
    assert raised.value.code == ErrorCode.NO_PROVIDER
    assert "/connect deepseek" in raised.value.message and "DEEPSEEK_API_KEY" in raised.value.message
    assert "platform.deepseek.com" in raised.value.message


def test_every_preset_is_well_formed() -> None:
    for preset in presets().values():
        assert preset.name and preset.family in {"openai", "openai-chat", "anthropic", "google"}
        assert preset.requires_key == bool(preset.key_env) or not preset.requires_key
        if preset.local:
            assert preset.base_url and preset.base_url.startswith("http://127.0.0.1")
