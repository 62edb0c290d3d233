"""Provider connections: saving keys (credential store) and base URLs, probing providers for their status,
what local servers serve, and the local-model preflight (does an Ollama model fit in memory?)."""

from ._preflight import ModelFacts, facts_from_ollama, fit, kv_cache_bytes, preflight_ollama
from ._probe import ProbeResult, native_ollama_url, probe
from ._service import LocalState, ProviderService

__all__ = [
    "LocalState",
    "ModelFacts",
    "ProbeResult",
    "ProviderService",
    "facts_from_ollama",
    "fit",
    "kv_cache_bytes",
    "native_ollama_url",
    "preflight_ollama",
    "probe",
]
