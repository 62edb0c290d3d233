"""Layered configuration and the state directory."""

from ._loader import ConfigError, ConfigProblem, LoadedConfig, load_config
from ._model import (
    AgentConfig,
    BashConfig,
    BudgetsConfig,
    CommandsConfig,
    CoworkConfig,
    CredentialsConfig,
    LocalModelsConfig,
    McpConfig,
    PermissionsConfig,
    PriceOverride,
    ProviderSettings,
    RouterConfig,
    RouterTier,
    SandboxConfig,
    ServerConfig,
    ToolsConfig,
    WebConfig,
)
from ._paths import CoworkPaths, resolve_home

__all__ = [
    "AgentConfig",
    "BashConfig",
    "BudgetsConfig",
    "CommandsConfig",
    "ConfigError",
    "ConfigProblem",
    "CoworkConfig",
    "CoworkPaths",
    "CredentialsConfig",
    "LoadedConfig",
    "LocalModelsConfig",
    "McpConfig",
    "PermissionsConfig",
    "PriceOverride",
    "ProviderSettings",
    "RouterConfig",
    "RouterTier",
    "SandboxConfig",
    "ServerConfig",
    "ToolsConfig",
    "WebConfig",
    "load_config",
    "resolve_home",
]
