"""Model providers: presets and catalog, provider/model resolution, adapters, normalised streaming with retries,
provider errors as stable codes, prices.

Streaming and the provider errors are pydantic-ai's model layer, a few hundred milliseconds to import: their names
load `_stream` and `_errors` on first use (`cowork.lazy`), so resolving a model (all start-up needs) does not.
"""

from typing import TYPE_CHECKING

from ._catalog import TIER_ORDER, CatalogModel, Family, Probe, ProviderPreset, presets
from ._cost import Cost, cost_of, estimate_cost, price_per_mtok
from ._factories import Built, ModelCache, family_factory, preload, register_family
from ._memo import history_chars, message_chars
from ._resolve import KeySource, ModelSelector, ModelTarget, connect_hint, no_provider_message

if TYPE_CHECKING:
    from ._errors import RETRYABLE, map_provider_error, retry_after_of
    from ._stream import (
        Finished,
        ReasoningDelta,
        RetryNotice,
        RetryPolicy,
        StreamEvent,
        TextDelta,
        stream_model,
        stream_with_retries,
        with_instructions,
    )
else:
    from cowork.lazy import lazy_exports

    _ERRORS = ("RETRYABLE", "map_provider_error", "retry_after_of")
    _STREAM = ("Finished", "ReasoningDelta", "RetryNotice", "RetryPolicy", "StreamEvent", "TextDelta")
    _STREAM += ("stream_model", "stream_with_retries", "with_instructions")
    __getattr__ = lazy_exports(__name__, dict.fromkeys(_ERRORS, "._errors") | dict.fromkeys(_STREAM, "._stream"))

__all__ = [
    "RETRYABLE",
    "TIER_ORDER",
    "Built",
    "CatalogModel",
    "Cost",
    "Family",
    "Finished",
    "KeySource",
    "ModelCache",
    "ModelSelector",
    "ModelTarget",
    "Probe",
    "ProviderPreset",
    "ReasoningDelta",
    "RetryNotice",
    "RetryPolicy",
    "StreamEvent",
    "TextDelta",
    "connect_hint",
    "cost_of",
    "estimate_cost",
    "family_factory",
    "history_chars",
    "map_provider_error",
    "message_chars",
    "no_provider_message",
    "preload",
    "presets",
    "price_per_mtok",
    "register_family",
    "retry_after_of",
    "stream_model",
    "stream_with_retries",
    "with_instructions",
]
