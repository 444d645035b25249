"""The shape of ``config.yaml``: one pydantic model per section, typos forbidden.

Every number the spec calls a default lives here as a field default, so a user can change
it in one place. Models forbid unknown keys: a misspelt key is an error, never a silently
ignored setting. Cross-field rules (a platform must be known, ratios in range) are
validators here too, so every check runs on every load.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from mnemo.security.patterns import PATTERN_IDS

__all__ = [
    "CONFIG_VERSION",
    "KNOWN_PLATFORMS",
    "AgentConfig",
    "AuxiliaryConfig",
    "CompressionConfig",
    "ContextConfig",
    "LocalModelConfig",
    "LoggingConfig",
    "MemoryConfig",
    "MnemoConfig",
    "ModelConfig",
    "PlatformHintConfig",
    "PromptConfig",
    "SecurityConfig",
    "SkillsConfig",
    "StorageConfig",
    "SubscriptionConfig",
]

# Bumped whenever a layout change needs a migration step (see ``migrations.py``).
CONFIG_VERSION = 2

KNOWN_PLATFORMS = ("cli", "telegram", "weixin", "cron", "sms", "email", "api")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ModelConfig(_Section):
    """The main chat model. Empty ``name`` and ``base_url`` mean "use the local model"."""

    name: str = ""
    base_url: str = ""
    # Name of the environment variable holding the key (the key itself never goes here).
    api_key_env: str = ""
    # Which wire format the endpoint speaks; ``anthropic`` needs ``mnemo[anthropic]``.
    api: Literal["openai", "anthropic"] = "openai"
    context_length: int | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=10)
    # A GGUF file for the embedded local model; empty = the default model (mnemo[local]).
    path: str = ""


class AuxiliaryConfig(_Section):
    """The summariser model. Empty ``name`` and ``base_url`` mean "same as the main model"."""

    name: str = ""
    base_url: str = ""
    api_key_env: str = ""
    timeout: float = Field(default=120.0, gt=0)
    # The summariser's window; None = the compressor's own context length.
    context_length: int | None = Field(default=None, gt=0)


class LocalModelConfig(_Section):
    """Knobs of the embedded llama.cpp server (``mnemo[local]``)."""

    context_length: int = Field(default=8192, ge=512)
    threads: int = Field(default=0, ge=0)  # 0 = one per core
    startup_timeout: float = Field(default=120.0, gt=0)


class MemoryConfig(_Section):
    memory_enabled: bool = True
    user_profile_enabled: bool = True
    memory_char_limit: int = Field(default=2200, ge=100)
    user_char_limit: int = Field(default=1375, ge=100)
    nudge_interval: int = Field(default=10, ge=0)
    flush_min_turns: int = Field(default=6, ge=0)
    overflow: Literal["reject", "archive"] = "reject"
    # M9: model writes must be supported by what the user or a tool said. None = strict
    # with the embedded local model, lenient with a hosted one.
    grounding: Literal["strict", "lenient", "off"] | None = None
    # One external provider by name (``mnemo memory providers`` lists them); "" = none.
    provider: str = ""
    # Settings handed to providers, by provider name (free-form: each provider validates).
    providers: dict[str, dict[str, Any]] = Field(default_factory=dict)


class ContextConfig(_Section):
    engine: str = "compressor"
    threshold_percent: float = Field(default=0.50, gt=0, le=1)
    protect_first_n: int = Field(default=3, ge=0)
    protect_last_n: int = Field(default=20, ge=1)
    summary_target_ratio: float = Field(default=0.20, gt=0, le=1)
    summary_model_override: str = ""
    quiet_mode: bool = False
    # Tokens kept free for the reply (C19); None: model.max_tokens, else 1/8 of the window.
    reply_reserve_tokens: int | None = Field(default=None, gt=0)


class CompressionConfig(_Section):
    enabled: bool = True
    # C17: prepare the next summary in the background (false: summarise at the threshold).
    background: bool = True
    prepare_at: float = Field(default=0.5, ge=0, le=1)  # share of the threshold to wait for
    max_wait_s: float = Field(default=0.0, ge=0)  # wait at the swap for a model update


class SkillsConfig(_Section):
    external_dirs: list[str] = Field(default_factory=list)


class PlatformHintConfig(_Section):
    """Extra or replacement text for one platform's hint (B3)."""

    text: str
    mode: Literal["append", "replace"] = "append"


class SubscriptionConfig(_Section):
    """What the user's model provider or subscription adds (the B1 subscription block)."""

    name: str = ""
    capabilities: list[str] = Field(default_factory=list)


class PromptConfig(_Section):
    # Model names containing one of these (case-insensitive) get the execution guidance (B6).
    execution_guidance_models: list[str] = Field(
        default_factory=lambda: ["gpt", "codex", "o1", "o3", "o4"]
    )
    subscription: SubscriptionConfig = Field(default_factory=SubscriptionConfig)


class SecurityConfig(_Section):
    # file name → threat pattern ids accepted in that file (S2), e.g.
    # {"AGENTS.md": ["prompt_injection"]} for a document that describes injections.
    allow_patterns: dict[str, list[str]] = Field(default_factory=dict)

    @field_validator("allow_patterns")
    @classmethod
    def _known_pattern_ids(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for filename, ids in value.items():
            unknown = [i for i in ids if i not in PATTERN_IDS]
            if unknown:
                raise ValueError(
                    f"{filename!r} names unknown pattern(s) {', '.join(unknown)}; "
                    f"known: {', '.join(PATTERN_IDS)}"
                )
        return value


class AgentConfig(_Section):
    max_tool_iterations: int = Field(default=25, ge=1)
    # Debugging aid: check every request against C12 and log a violation's shape.
    validate_requests: bool = False


class LoggingConfig(_Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    max_bytes: int = Field(default=5_000_000, ge=10_000)
    backup_count: int = Field(default=3, ge=0)


class StorageConfig(_Section):
    """Where sessions and memory live (SPEC D4); ``MNEMO_STORAGE_URL`` overrides ``url``."""

    # "" = state.db and the memory files in the home; "postgresql://…" = PostgreSQL.
    url: str = ""
    # Hosts that share a namespace share MEMORY and USER.
    namespace: str = Field(default="default", min_length=1, max_length=200)

    @field_validator("url")
    @classmethod
    def _postgres_url(cls, value: str) -> str:
        if value and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("must be empty (SQLite in the home) or a postgresql:// URL")
        return value


class MnemoConfig(_Section):
    """The whole of ``config.yaml``."""

    version: int = CONFIG_VERSION
    model: ModelConfig = Field(default_factory=ModelConfig)
    auxiliary: AuxiliaryConfig = Field(default_factory=AuxiliaryConfig)
    local: LocalModelConfig = Field(default_factory=LocalModelConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    context: ContextConfig = Field(default_factory=ContextConfig)
    compression: CompressionConfig = Field(default_factory=CompressionConfig)
    context_file_max_chars: int = Field(default=20_000, ge=1_000)
    skills: SkillsConfig = Field(default_factory=SkillsConfig)
    # ``platforms`` comes before ``platform`` so the platform check can see custom ones.
    platforms: dict[str, PlatformHintConfig] = Field(default_factory=dict)
    platform: str = "cli"
    prompt: PromptConfig = Field(default_factory=PromptConfig)
    security: SecurityConfig = Field(default_factory=SecurityConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)

    @field_validator("platform")
    @classmethod
    def _platform_is_known(cls, value: str, info: ValidationInfo) -> str:
        known = (*KNOWN_PLATFORMS, *info.data.get("platforms", {}))
        if value not in known:
            raise ValueError(
                f"unknown platform {value!r}; use one of {', '.join(known)} "
                "or describe it under 'platforms'"
            )
        return value
