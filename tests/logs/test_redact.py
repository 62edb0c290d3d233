"""Redaction: every credential shape the log can meet is hidden, and ordinary text that looks a little like one is
left exactly as it was."""

from __future__ import annotations

import pytest

from cowork.logs import REDACTED, redact, redact_value

COWORK_TOKEN = "cw_" + "Zx9-_aB3" * 5 + "q7K"  # the shape of "cw_" + secrets.token_urlsafe(32): 43 URL-safe chars

HITS = [
    ("using sk-abcdefghij0123456789ABCDEFGHIJ now", "using sk-…[redacted] now"),
    ("sk-proj-abcdefghij0123456789_ABCDEFGHIJ-xyz", "sk-proj-…[redacted]"),
    ("key=sk-svcacct-abcdefghij0123456789ABCDEF", "key=sk-svcacct-…[redacted]"),
    ("anthropic sk-ant-api03-abcDEF0123456789_ghiJKL-mno", "anthropic sk-ant-…[redacted]"),
    ("google AIzaSyA0123456789abcdefghijklmnopqrstuv.", "google AIza…[redacted]."),
    ("gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gh ghp_…[redacted]"),
    ("gh gho_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "gh gho_…[redacted]"),
    ("pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "pat github_pat_…[redacted]"),
    (f"server token {COWORK_TOKEN}", "server token cw_…[redacted]"),
    (f"ws://127.0.0.1:8765/ws?token={COWORK_TOKEN}&x=1", "ws://127.0.0.1:8765/ws?token=[redacted]&x=1"),
    ("GET /search?q=cats&api_key=abc123def&page=2", "GET /search?q=cats&api_key=[redacted]&page=2"),
    ("password=hunter2 user=max", "password=[redacted] user=max"),
    ("COWORK_TOKEN=abc123", "COWORK_TOKEN=[redacted]"),
    ("client_secret = 's3cr3t-value'", "client_secret = '[redacted]'"),
    ('body {"api_key": "hunter2hunter2", "model": "gpt"}', 'body {"api_key": "[redacted]", "model": "gpt"}'),
    ("{'access_token': 'ya29.a0AfH6SM', 'n': 1}", "{'access_token': '[redacted]', 'n': 1}"),
    ("Authorization: Bearer abc.def.ghi123", "Authorization: Bearer [redacted]"),
    ("{'Authorization': 'Basic dXNlcjpwYXNz'}", "{'Authorization': 'Basic [redacted]'}"),
    ("authorization=opaque-value-without-scheme", "authorization=[redacted]"),
    ("Proxy-Authorization: Digest xyz", "Proxy-Authorization: Digest [redacted]"),
    ("sent Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "sent Bearer [redacted]"),
    ("sent bearer test-key-1", "sent bearer [redacted]"),
]

NON_HITS = [
    "task-force risk-free desk-top whisk-ing sk-learn",
    "max_tokens=1024 input_tokens=5 token_count=3 tokenizer=bpe",
    "secrets=3 passwords_checked=2",
    "token=None api_key=null password=''",
    "Bearer authentication is required",
    "the bearer of bad news",
    "Authorization failed for user max",
    "key=tools.sandbox.enabled value=false",
    "cw_short and my_cw_variable_name_that_is_long",
    "session ses_01HZX3Q8 operation op_7 tool call call_abc",
    "AIza is how Google keys start",
    "ghp_ is a GitHub prefix",
    "the token: expired",
    "provider stack warmed in 0.52 s (openai:mock-model)",
    "Ignored in /home/max/.cowork/config.toml: tools.sandbox.enabled",
    "https://api.openai.com/v1/chat/completions returned 429",
    "sha 3f2a9c4e1b7d8a6f5e4d3c2b1a0f9e8d7c6b5a4f",
]


@pytest.mark.parametrize(("text", "expected"), HITS)
def test_secrets_are_redacted_keeping_at_most_a_prefix(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("text", NON_HITS)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(("text", "expected"), HITS)
def test_redacting_twice_changes_nothing_more(text: str, expected: str) -> None:
    assert redact(redact(text)) == expected


def test_the_real_server_token_shape_is_caught() -> None:
    import secrets

    token = "cw_" + secrets.token_urlsafe(32)  # as cowork.server._auth.load_or_create_token makes it
    assert token[3:] not in redact(f"token {token} and --token {token}")


def test_values_are_redacted_through_containers() -> None:
    value = {"headers": {"Authorization": "Bearer abcdefgh1234"}, "keys": ["sk-abcdefghijklmnop1234", 3], "n": 1.5}
    assert redact_value(value) == {
        "headers": {"Authorization": f"Bearer {REDACTED}"},
        "keys": [f"sk-…{REDACTED}", 3],
        "n": 1.5,
    }
