"""The configuration schema. Defaults here are the built-in layer.

Long because it is the whole schema in one place: each section is a short model, and the loader, the trust
rules and `docs/configuration.md` read them together.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "AgentConfig",
    "BashConfig",
    "BudgetsConfig",
    "CaptureConfig",
    "CheckpointsConfig",
    "CommandsConfig",
    "CoworkConfig",
    "CredentialsConfig",
    "EnvironmentConfig",
    "LocalModelsConfig",
    "LogsConfig",
    "McpConfig",
    "NotificationsConfig",
    "PermissionsConfig",
    "PriceOverride",
    "ProviderSettings",
    "RouterConfig",
    "RouterTier",
    "SandboxConfig",
    "ServerConfig",
    "ToolboxConfig",
    "ToolsConfig",
    "TracingConfig",
    "WebConfig",
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerConfig(_Section):
    host: str = Field(default="127.0.0.1", description="Address to bind. Non-loopback needs a token.")
    port: int = Field(default=0, ge=0, le=65535, description="Port to bind; 0 picks a free one.")
    max_frame_bytes: int = Field(default=1 << 20, ge=1024, description="Largest accepted request frame.")
    max_inflight_requests: int = Field(default=32, ge=1, description="Requests one connection may have running.")
    outbound_queue_limit: int = Field(
        default=2000, ge=16, description="Messages queued for a slow connection before stream deltas are dropped."
    )
    allowed_origins: list[str] = Field(
        default_factory=list, description="Extra browser origins allowed on /ws (the server's own is always allowed)."
    )
    idle_exit_seconds: float | None = Field(
        default=None, gt=0, description="Exit after this long with no connection and no running turn."
    )
    reuse_port: bool = Field(
        default=False,
        description="Bind with SO_REUSEPORT, so several replicas listen on one port and the kernel shares "
        "connections between them (see docs/scale-out.md).",
    )


class ProviderSettings(_Section):
    base_url: str | None = None
    api_key_env: str | None = Field(default=None, description="Environment variable holding the API key.")
    default_model: str | None = None
    api: Literal["chat", "responses"] | None = Field(
        default=None, description="OpenAI wire API: Chat Completions or Responses."
    )


class AgentConfig(_Section):
    max_steps: int = Field(
        default=50, ge=1, le=10_000, description="Model calls per turn before it pauses to ask whether to go on."
    )
    user_name: str = ""
    output_directory: str | None = None
    knowledge_cutoff: str = "unknown"
    request_timeout_seconds: float = Field(default=600, gt=0)
    provider_max_retries: int = Field(
        default=3,
        ge=0,
        le=10,
        description="Retries of a model request that failed before streaming anything (429, 5xx, timeouts, "
        "connection errors) before the turn fails.",
    )
    retry_base_seconds: float = Field(
        default=1.0, gt=0, le=60, description="First retry delay; doubles each attempt, with jitter."
    )
    retry_max_seconds: float = Field(default=30, gt=0, le=600, description="Longest delay between two attempts.")
    max_retry_after_seconds: float = Field(
        default=120,
        ge=0,
        le=3600,
        description="A provider's retry-after longer than this fails the turn at once (rate_limited) instead of "
        "waiting.",
    )
    reasoning_effort: Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"] | None = Field(
        default=None, description="Default reasoning (thinking) effort; unset: the model's own default."
    )
    stuck_repeats: int = Field(
        default=3, ge=2, le=100, description="The same tool with the same input this many times in a row: pause."
    )
    cost_cap_usd: float = Field(default=1.0, ge=0, description="Spend within cost_window_seconds that pauses a turn.")
    cost_window_seconds: float = Field(default=600, gt=0)
    checkin_seconds: float = Field(default=300, gt=0, description="Wall time after which a turn asks to go on.")
    error_rate_threshold: float = Field(
        default=0.5, gt=0, le=1, description="Share of failing recent tool calls above which a turn stops."
    )
    error_rate_window: int = Field(default=10, ge=2, description="How many recent tool calls the error rate covers.")
    error_rate_min_calls: int = Field(default=4, ge=1, description="Fewer recent calls than this never trip it.")
    context_window: int | None = Field(
        default=None, ge=1000, description="Tokens the model accepts; default: the catalog's figure, else 128000."
    )
    compress_at: float = Field(
        default=0.8, gt=0.1, lt=1, description="Compress history when a request would fill this share of the window."
    )
    keep_recent: float = Field(
        default=0.3, gt=0.05, lt=0.9, description="Share of the window kept verbatim (newest) when compressing."
    )
    max_agent_depth: int = Field(default=1, ge=0, le=5, description="How deep sub-agents may nest (0: none).")
    max_concurrent_agents: int = Field(default=4, ge=1, le=64, description="Sub-agents one operation may run at once.")


class WebConfig(_Section):
    allow_private_addresses: bool = Field(
        default=False, description="Let webFetch reach loopback, private and link-local addresses."
    )
    fetch_max_bytes: int = Field(default=5 << 20, ge=1024, description="Largest page webFetch downloads.")
    fetch_timeout_seconds: float = Field(default=30, gt=0)
    search_backend: str | None = Field(
        default=None, description="brave, tavily, exa or duckduckgo; default: the first with a key, else duckduckgo."
    )
    search_endpoints: dict[str, str] = Field(
        default_factory=dict, description="Override a search backend's URL (self-hosted proxies, tests)."
    )


class BashConfig(_Section):
    default_timeout_seconds: float = Field(default=120, gt=0)
    max_timeout_seconds: float = Field(default=600, gt=0)


class SandboxConfig(_Section):
    enabled: bool = Field(default=True, description="Run bash under bubblewrap when it is available.")
    bwrap_path: str | None = Field(default=None, description="bubblewrap binary (default: /usr/bin/bwrap, /bin/bwrap).")
    network: bool = Field(default=False, description="Whether new sessions start with network access for bash.")
    extra_writable: list[str] = Field(default_factory=list, description="More folders bash may write to.")


class ToolboxConfig(_Section):
    enabled: bool = Field(
        default=True,
        description="Give shell commands Cowork's document toolbox (python3 with openpyxl, python-docx, python-pptx, "
        "pypdf, pdfplumber, reportlab, matplotlib, pillow) once it is installed.",
    )
    install: Literal["background", "never"] = Field(
        default="background",
        description="background: installed after the server starts (never blocking it); never: only by "
        "`cowork toolbox install`.",
    )


class EnvironmentConfig(_Section):
    allow: list[str] = Field(
        default_factory=list,
        description='Variables (names or globs, e.g. "JAVA_HOME", "NODE_*") passed from the server\'s environment to '
        "shell commands and stdio MCP servers, beyond the built-in minimal set (PATH, HOME, LANG, TERM, TZ, ...).",
    )
    set: dict[str, str] = Field(
        default_factory=dict, description="Variables given to shell commands and stdio MCP servers with these values."
    )


class CommandsConfig(_Section):
    allow: list[str] = Field(
        default_factory=list,
        description='Shell command patterns treated as safe (e.g. "npm test", "make *"); never overrides dangerous.',
    )
    deny: list[str] = Field(
        default_factory=list, description='Shell command patterns always treated as dangerous (e.g. "git push *").'
    )


class PermissionsConfig(_Section):
    extra_read_roots: list[str] = Field(default_factory=list)
    extra_write_roots: list[str] = Field(default_factory=list)
    deny: list[str] = Field(
        default_factory=list, description="More paths no tool may read or write, even when auto-run allows it."
    )


class ToolsConfig(_Section):
    output_limit_chars: int = Field(
        default=30_000,
        ge=1000,
        description="Any tool's output kept inline (built-in and MCP); the full text goes to a file the model can read.",
    )
    web: WebConfig = Field(default_factory=WebConfig)
    bash: BashConfig = Field(default_factory=BashConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    toolbox: ToolboxConfig = Field(default_factory=ToolboxConfig)
    permissions: PermissionsConfig = Field(default_factory=PermissionsConfig)
    commands: CommandsConfig = Field(default_factory=CommandsConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    approval_mode: Literal["manual", "auto-run"] = Field(
        default="manual",
        description="manual: risky calls ask; auto-run: they run (dangerous ones, and risky shell commands without "
        "a sandbox, still ask).",
    )
    auto_approve: list[str] = Field(
        default_factory=list,
        description="Tools (with side effects) that run without asking. Read-only tools always do.",
    )
    plugins: list[str] = Field(
        default_factory=list,
        description='Extra tools: "module:function" paths, each called with the tool registry to register into.',
    )


class PriceOverride(_Section):
    input_per_mtok: float = Field(ge=0, description="USD per million input tokens.")
    output_per_mtok: float = Field(ge=0, description="USD per million output tokens.")
    cached_input_per_mtok: float | None = Field(default=None, ge=0)


class BudgetsConfig(_Section):
    per_interaction_usd: float | None = Field(
        default=0.50, ge=0, description="Spend one user request may cause (its turn and sub-agents); unset: no cap."
    )
    daily_usd: float | None = Field(default=10.0, ge=0, description="Spend per calendar day (local time).")
    weekly_usd: float | None = Field(default=50.0, ge=0, description="Spend per week, Monday to Sunday.")
    monthly_usd: float | None = Field(default=200.0, ge=0, description="Spend per calendar month.")
    warn_at: float = Field(
        default=0.8, gt=0, lt=1, description="Share of a cap at which a budget_warning event is sent."
    )
    estimated_output_tokens: int = Field(
        default=1024, ge=0, description="Output tokens assumed when estimating what a model call will cost."
    )


class RouterTier(_Section):
    name: str = Field(min_length=1, max_length=40)
    provider: str = Field(min_length=1, max_length=100)
    model: str = Field(min_length=1, max_length=200)


class RouterConfig(_Section):
    enabled: bool = Field(
        default=False, description="Route each turn of sessions without an explicit model (or with model auto)."
    )
    preference: Literal["local", "cloud"] = Field(
        default="cloud", description="local: simple requests go to the local model; cloud: always cloud."
    )
    local: str | None = Field(
        default=None, description='The local model as "provider:model" (e.g. "ollama:qwen3:8b"); unset: none.'
    )
    tiers: list[RouterTier] = Field(
        default_factory=list,
        description="Cloud tiers, weakest first; unset: the default provider's catalog tiers (fast, strong, max).",
    )
    local_max_tokens: int = Field(default=8000, ge=500, description="Prompt size the local model handles.")
    simple_max_tokens: int = Field(default=500, ge=1, description="Up to this size a request counts as simple.")


class LocalModelsConfig(_Section):
    preflight: bool = Field(default=True, description="Check that a local (Ollama) model fits in memory first.")
    reserve_gb: float = Field(default=3.0, ge=0, description="Memory kept free for the system and Cowork itself.")
    context_tokens: int = Field(
        default=8192, ge=512, description="Context the local model is run with (sizes its KV cache)."
    )
    probe_timeout_seconds: float = Field(default=2.0, gt=0, le=60, description="How long to wait for a local server.")


class CredentialsConfig(_Section):
    store: Literal["auto", "keyring", "file"] = Field(
        default="auto", description="auto: the OS keyring when one works, else a 0600 file under COWORK_HOME/auth."
    )


class McpConfig(_Section):
    connect_timeout_seconds: float = Field(
        default=30.0, gt=0, le=600, description="How long an MCP server may take to start and answer `initialize`."
    )
    call_timeout_seconds: float | None = Field(
        default=None, gt=0, description="Longest an MCP tool call may run; none by default (cancel the turn)."
    )
    max_restarts: int = Field(
        default=5, ge=0, description="Reconnect attempts after an MCP server crashes, before it stays in error."
    )
    backoff_base_seconds: float = Field(default=1.0, gt=0, description="First reconnect delay; doubles each time.")
    backoff_max_seconds: float = Field(default=60.0, gt=0, description="Longest reconnect delay.")
    stop_grace_seconds: float = Field(
        default=3.0, gt=0, le=60, description="Time between SIGTERM and SIGKILL when an MCP server is stopped."
    )
    ping_idle_seconds: float = Field(
        default=60.0, ge=0, description="A client idle longer than this is pinged before it is reused."
    )


class CheckpointsConfig(_Section):
    enabled: bool = Field(
        default=True, description="Keep the folder's state before every tool call that changes it (/undo, /rewind)."
    )
    max_file_mb: float = Field(
        default=16, gt=0, description="A file larger than this is not kept (its change cannot be taken back)."
    )
    max_folder_files: int = Field(
        default=100_000,
        ge=1,
        description="In a folder with more files than this (outside the exclusions' folders too), shell commands are "
        "not checkpointed (snapshotting it would take long and much space); edits and writes still are.",
    )
    keep_days: float = Field(default=30, gt=0, description="Checkpoints older than this are pruned.")
    max_total_mb: float = Field(
        default=2048, gt=0, description="Past this much kept content, the oldest checkpoints are pruned first."
    )
    exclude: list[str] = Field(
        default_factory=lambda: [
            "node_modules/",
            ".venv/",
            "venv/",
            "__pycache__/",
            ".mypy_cache/",
            ".pytest_cache/",
            ".ruff_cache/",
            ".tox/",
            ".cache/",
            "target/",
            "dist/",
            "build/",
            ".next/",
            "*.pyc",
        ],
        description="Paths (gitignore patterns) that shell-command checkpoints leave out; files an edit or write "
        "changes are always kept. The folder's own .gitignore files apply too.",
    )


class TracingConfig(_Section):
    enabled: bool = Field(
        default=True,
        description="Record a trace of every turn (steps, model calls, tool calls, MCP calls) in the local database.",
    )
    keep_days: float = Field(default=7, gt=0, description="Spans older than this are pruned.")
    max_spans: int = Field(default=200_000, ge=1000, description="Past this many stored spans, the oldest go first.")
    otlp_endpoint: str | None = Field(
        default=None,
        description="Also send spans to this OTLP/HTTP traces endpoint (e.g. http://localhost:4318/v1/traces for a "
        "local collector, or Langfuse's /api/public/otel/v1/traces). Nothing leaves the machine unless set.",
    )
    otlp_headers: dict[str, str] = Field(
        default_factory=dict, description="Headers sent with every OTLP export (e.g. Authorization for Langfuse)."
    )


class LogsConfig(_Section):
    max_mb: float = Field(
        default=10, gt=0, le=10_000, description="The server log is rotated once it would grow past this size (MB)."
    )
    backups: int = Field(
        default=5, ge=1, le=100, description="Rotated server logs kept (server.log.1 … .N); the oldest is deleted."
    )


class EmbedderConfig(_Section):
    provider: Literal["local", "ollama", "openai"] = Field(
        default="local",
        description="Which embedder indexes documents: `local` (all-MiniLM-L6-v2 on this machine; nothing leaves it), "
        "`ollama`, or `openai` (any OpenAI-compatible /v1/embeddings endpoint). Changing it re-embeds what is "
        "indexed the next time each folder is indexed.",
    )
    model: str | None = Field(
        default=None, description="The embedding model (ollama and openai), e.g. nomic-embed-text."
    )
    base_url: str | None = Field(
        default=None,
        description="The server (ollama: http://127.0.0.1:11434; openai: https://api.openai.com/v1 by default).",
    )
    api_key_env: str | None = Field(
        default=None, description="The environment variable holding the API key (openai-compatible servers)."
    )
    batch_size: int = Field(default=32, ge=1, le=512, description="Texts per embedding request.")


class MemoryConfig(_Section):
    embedder: EmbedderConfig = Field(default_factory=EmbedderConfig)
    auto_index: bool = Field(
        default=True,
        description="Index a session's folder in the background the first time the agent searches its documents "
        "(`searchDocuments`); otherwise only `ingest/add` (or `cowork index`) indexes.",
    )
    max_file_mb: float = Field(default=20, gt=0, le=1000, description="Files larger than this are not indexed.")
    min_similarity: float = Field(
        default=0.25,
        ge=-1,
        le=1,
        description="Relevance floor of searches: passages less similar to the query than this (cosine) are left out, "
        "unless they are among the best three keyword matches.",
    )
    working: bool = Field(
        default=True,
        description="Put the user's profile (working memory: `profile` tool, `memory/profile`) in every prompt.",
    )
    recall: Literal["off", "tool", "auto"] = Field(
        default="tool",
        description="Semantic recall over the folder's past conversations: `tool` indexes finished turns in quiet "
        "moments and gives the agent the `recall` tool; `auto` also puts the best matches from other conversations "
        "in each turn's prompt; `off` indexes nothing.",
    )
    recall_quiet_seconds: float = Field(
        default=20, ge=0, le=3600, description="Finished turns are indexed once the server has been quiet this long."
    )
    recall_passages: int = Field(default=3, ge=1, le=20, description="Past turns `auto` recall puts in a prompt.")
    recall_min_similarity: float = Field(
        default=0.4, ge=-1, le=1, description="How similar (cosine) a past turn must be for `auto` recall to use it."
    )
    observe: bool = Field(
        default=True,
        description="Observational memory: once a conversation has been idle for `observe_idle_minutes`, the model "
        "notes dated observations of its new turns (one request, budgets apply), indexed for `recall`.",
    )
    observe_idle_minutes: float = Field(
        default=60, ge=0, le=100_000, description="How long a conversation rests before it is observed."
    )
    observe_min_messages: int = Field(
        default=6,
        ge=1,
        le=10_000,
        description="Messages (with tool calls and results) a conversation must have "
        "gained since it was last observed.",
    )
    context: Literal["off", "auto"] = Field(
        default="off",
        description="`auto`: before each turn, search the folder's index for the user's message and put the best "
        "passages (and, for a follow-up, the passages earlier answers were given) in the system prompt. `off`: the "
        "agent searches when it decides to (`searchDocuments`).",
    )
    grounded: Literal["never", "no-context"] = Field(
        default="never",
        description="`no-context`: answer only from the folder's documents — when the index is empty, or nothing "
        "relevant is found for a message, say so without asking the model (implies context = auto).",
    )
    refusal: str = Field(
        default="There is no relevant information in this folder's documents to answer that.",
        max_length=2000,
        description="What a grounded refusal says.",
    )
    context_passages: int = Field(default=6, ge=1, le=50, description="Passages a turn's own search contributes.")
    backfill_passages: int = Field(
        default=4,
        ge=0,
        le=50,
        description="When a turn's search finds fewer passages than this, earlier answers' passages fill up to it.",
    )
    context_tokens: int = Field(
        default=3000, ge=100, le=100_000, description="Token budget of the passages put in the prompt."
    )
    stale_hours: float = Field(
        default=24,
        gt=0,
        description="An indexing job a stopped server left running resumes at start-up, unless it was last "
        "touched longer ago than this (then it is marked failed).",
    )


class CaptureConfig(_Section):
    """Activity capture (docs/capture.md). User-level only: a workspace's config can never turn it on or widen it."""

    enabled: bool = Field(
        default=True,
        description="Capture what the user works on (the active window's application and title, idle time) where a "
        "source works here (an X11 display). Consent per stream, pausing and exclusions are set from a client "
        "(`cowork capture`, the web UI's Context view) and kept in the database; false turns capture off entirely.",
    )
    poll_seconds: float = Field(
        default=5.0,
        ge=0.2,
        le=60,
        description="The longest wait between two looks at the active window (a window or title change is seen at "
        "once; this bounds how late idleness is noticed).",
    )
    idle_seconds: float = Field(
        default=180.0, ge=10, le=3600, description="No keyboard or mouse input for this long counts as away."
    )
    focus_minutes: float = Field(
        default=10.0, ge=1, le=240, description="This long in one application is a focus session (deep work)."
    )
    flush_seconds: float = Field(
        default=30.0, ge=1, le=600, description="Captured activity is written to the database at least this often."
    )
    min_span_seconds: float = Field(
        default=1.0, ge=0, le=60, description="Windows passed through faster than this (alt-tab) are not recorded."
    )
    exclude_apps: list[str] = Field(
        default_factory=list,
        description="Applications never captured (glob patterns, any case), besides the built-in ones and the lists "
        "set from a client.",
    )
    exclude_titles: list[str] = Field(
        default_factory=list, description="Window titles never captured (glob patterns, any case), likewise."
    )
    index: bool = Field(
        default=True,
        description="Index captured activity by meaning (the `activity` index), with the local embedder only: when "
        "`memory.embedder.provider` is not `local`, activity is searched by words alone, so nothing leaves the "
        "machine.",
    )


class NotificationsConfig(_Section):
    """Proactive notifications and their six gates (docs/automations.md). User-level only."""

    desktop: bool = Field(
        default=True,
        description="Also show notifications on the desktop where a notification daemon runs (freedesktop D-Bus "
        "interface, Linux).",
    )
    urgent_per_hour: int = Field(default=10, ge=0, le=1000, description="At most this many urgent ones an hour.")
    helpful_per_hour: int = Field(default=4, ge=0, le=1000, description="At most this many helpful ones an hour.")
    informational_per_hour: int = Field(
        default=2, ge=0, le=1000, description="At most this many informational ones an hour (0: none)."
    )
    bundle_seconds: float = Field(
        default=30, gt=0, le=3600, description="Helpful and informational ones wait this long for related ones."
    )
    cooldown_minutes: float = Field(
        default=30, gt=0, le=7 * 24 * 60, description="After a dismissal, that kind is quiet this long."
    )


class ReplicasConfig(_Section):
    lease_seconds: float = Field(
        default=15,
        ge=0.5,
        le=600,
        description="How long a replica's hold on a running operation lasts unrenewed; after a replica dies, "
        "another takes its operations over within about this long.",
    )


DATABASE_URL_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://", "sqlite:///")
"""What `database_url` may start with: the PostgreSQL forms the store opens with psycopg 3, or a SQLite file."""


class CoworkConfig(_Section):
    database_url: str | None = Field(
        default=None,
        description="PostgreSQL URL (postgresql://user@host:port/db) shared by several replicas; unset, the SQLite "
        "file in Cowork's home (COWORK_DATABASE_URL or `cowork serve --database-url`).",
    )
    provider: str | None = Field(default=None, description="Provider id, e.g. openai, anthropic, google, ollama.")
    model: str | None = Field(default=None, description="Model id; defaults to the provider's default model.")
    server: ServerConfig = Field(default_factory=ServerConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    prices: dict[str, PriceOverride] = Field(
        default_factory=dict, description='Prices by "provider:model" (or "model"), over the built-in price table.'
    )
    budgets: BudgetsConfig = Field(default_factory=BudgetsConfig)
    router: RouterConfig = Field(default_factory=RouterConfig)
    local_models: LocalModelsConfig = Field(default_factory=LocalModelsConfig)
    credentials: CredentialsConfig = Field(default_factory=CredentialsConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    checkpoints: CheckpointsConfig = Field(default_factory=CheckpointsConfig)
    logs: LogsConfig = Field(default_factory=LogsConfig)
    tracing: TracingConfig = Field(default_factory=TracingConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    capture: CaptureConfig = Field(default_factory=CaptureConfig)
    notifications: NotificationsConfig = Field(default_factory=NotificationsConfig)
    replicas: ReplicasConfig = Field(default_factory=ReplicasConfig)

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, url: str | None) -> str | None:
        # Checked here rather than when the store opens, so a typo is a configuration error naming its source (the
        # file, the variable or `--database-url`) and the server exits 2 before it binds. Only the scheme is quoted:
        # the rest of a URL may hold a password.
        if not url:
            return None
        if url.startswith(DATABASE_URL_SCHEMES) and url.split("://", 1)[1]:
            return url
        scheme = url.split("://", 1)[0] + "://…" if "://" in url else "no scheme"
        raise ValueError(
            f"not a database URL Cowork can use ({scheme}): give postgresql://user@host:port/db (also postgres:// or "
            "postgresql+psycopg://), or sqlite:///path/to/cowork.db"
        )
