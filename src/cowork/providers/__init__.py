"""Provider connections: saving keys (credential store) and base URLs, probing providers for their status,
what local servers serve, the local-model preflight (does an Ollama model fit in memory?), and model choice
(what can be chosen, with prices, and switching a session's model)."""

from ._choices import ModelChoices, SessionRows, TurnRouting
from ._preflight import ModelFacts, facts_from_ollama, fit, kv_cache_bytes, preflight_ollama
from ._probe import ProbeResult, native_ollama_url, probe
from ._service import LocalState, ProviderService

__all__ = [
    "LocalState",
    "ModelChoices",
    "ModelFacts",
    "ProbeResult",
    "ProviderService",
    "SessionRows",
    "TurnRouting",
    "facts_from_ollama",
    "fit",
    "kv_cache_bytes",
    "native_ollama_url",
    "preflight_ollama",
    "probe",
]
