"""Keeping the conversation inside the model's window: context engines and compression.

``ContextEngine`` is the interface the agent loop drives; ``ContextCompressor`` is the
built-in engine (prune old tool output, protect head and tail, summarise the middle into
a structured handoff, keep the list valid for the API). ``create_engine`` picks the
engine ``context.engine`` names, from entry points or ``$MNEMO_HOME/plugins``.
``validate_c12`` checks that a message list is one a chat API accepts.
"""

from mnemo.context.compressor import (
    SUMMARY_FAILURE_COOLDOWN_SECONDS,
    SUMMARY_TOKENS_CEILING,
    ContextCompressor,
)
from mnemo.context.engine import CompressionReport, ContextEngine, PreCompressHook, Summarizer
from mnemo.context.local_summary import summarize_locally
from mnemo.context.markers import (
    COMPACTION_NOTE,
    FALLBACK_NOTICE,
    MISSING_RESULT_STUB,
    PRUNED_TOOL_PLACEHOLDER,
    SUMMARY_END_MARKER,
    SUMMARY_PREFIX,
    is_summary_message,
)
from mnemo.context.prompt import TEMPLATE_SECTIONS, build_summary_prompt
from mnemo.context.registry import (
    ENTRY_POINT_GROUP,
    available_engines,
    create_engine,
    default_context_length,
    load_engine_class,
)
from mnemo.context.validity import still_present, validate_c12
from mnemo.tokens import estimate_messages_tokens_rough, estimate_tokens_rough
from mnemo.transcripts import parse_transcript

__all__ = [
    "COMPACTION_NOTE",
    "ENTRY_POINT_GROUP",
    "FALLBACK_NOTICE",
    "MISSING_RESULT_STUB",
    "PRUNED_TOOL_PLACEHOLDER",
    "SUMMARY_END_MARKER",
    "SUMMARY_FAILURE_COOLDOWN_SECONDS",
    "SUMMARY_PREFIX",
    "SUMMARY_TOKENS_CEILING",
    "TEMPLATE_SECTIONS",
    "CompressionReport",
    "ContextCompressor",
    "ContextEngine",
    "PreCompressHook",
    "Summarizer",
    "available_engines",
    "build_summary_prompt",
    "create_engine",
    "default_context_length",
    "estimate_messages_tokens_rough",
    "estimate_tokens_rough",
    "is_summary_message",
    "load_engine_class",
    "parse_transcript",
    "still_present",
    "summarize_locally",
    "validate_c12",
]
