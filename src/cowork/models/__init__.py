"""Model providers: presets and catalog, provider/model resolution, adapters, normalised streaming with retries,
provider errors as stable codes, prices."""

from ._catalog import TIER_ORDER, CatalogModel, Family, Probe, ProviderPreset, presets
from ._cost import Cost, cost_of, estimate_cost, price_per_mtok
from ._errors import RETRYABLE, map_provider_error, retry_after_of
from ._factories import Built, ModelCache, family_factory, register_family
from ._memo import history_chars
from ._resolve import KeySource, ModelSelector, ModelTarget, no_provider_message
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
    "cost_of",
    "estimate_cost",
    "family_factory",
    "history_chars",
    "map_provider_error",
    "no_provider_message",
    "presets",
    "price_per_mtok",
    "register_family",
    "retry_after_of",
    "stream_model",
    "stream_with_retries",
    "with_instructions",
]
