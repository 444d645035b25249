"""Platform hints (SPEC B3): how to write for the place the conversation happens.

A terminal does not render Markdown, an SMS must stay short, a scheduled job has nobody
to answer questions. Platforms that can deliver files say so with the ``MEDIA:/path``
convention: a line ``MEDIA:/absolute/path`` in the reply is turned into an attachment by
the platform's adapter.

Users change a hint in ``config.yaml`` under ``platforms.<name>`` with ``text`` and
``mode`` (``append`` adds the text after the built-in hint, ``replace`` uses it
instead); a platform mnemo does not know gets its hint only from there.
"""

from __future__ import annotations

from collections.abc import Mapping

from mnemo.config.schema import PlatformHintConfig
from mnemo.errors import UsageError

__all__ = ["PLATFORM_HINTS", "SMS_MAX_CHARS", "platform_hint"]

SMS_MAX_CHARS = 1_600

PLATFORM_HINTS: dict[str, str] = {
    "cli": (
        "You are talking with the user in a terminal, where Markdown is shown as raw "
        "symbols. Write plain text that reads well in a console: short paragraphs, simple "
        "dashes for lists, commands and code on their own lines. Files you create are "
        "already on the user's machine, so refer to them by their path."
    ),
    "telegram": (
        "You are chatting on Telegram, which does not render Markdown: write plain text. "
        "Keep messages conversational and easy to read on a phone. You can send files "
        "natively: put MEDIA:/absolute/path/to/file on a line of its own and it is "
        "delivered as a photo, voice message, video or document according to its type. "
        "Send long output as a file rather than a wall of text."
    ),
    "weixin": (
        "You are chatting on Weixin (WeChat). Basic Markdown is rendered, but messages are "
        "read on a phone, so keep them short and well spaced. To send an image or a file, "
        "put MEDIA:/absolute/path/to/file on a line of its own."
    ),
    "cron": (
        "This is a scheduled job: no user is present and nobody can answer a question. "
        "Never ask for confirmation or clarification. Choose sensible defaults, carry the "
        "task through to the end, and state any assumptions in your final answer, which "
        "is delivered as the job's result. Attach files with MEDIA:/absolute/path/to/file "
        "on a line of its own if the result should include them."
    ),
    "sms": (
        "You are replying by SMS. Use plain text only: no Markdown, tables or code blocks. "
        f"Keep each reply under {SMS_MAX_CHARS:,} characters; if more is needed, send the "
        "essentials and offer to continue. Where the carrier supports MMS, an image can be "
        "attached with MEDIA:/absolute/path/to/file on a line of its own."
    ),
    "email": (
        "You are replying by email. Write a clear, well-organised message: the answer "
        "first, then the details in short paragraphs. Use plain text with light structure "
        "instead of Markdown syntax, and do not write a subject line. Attach files with "
        "MEDIA:/absolute/path/to/file on a line of its own."
    ),
    "api": (
        "You are answering a program through an API. Return what was asked without "
        "greetings or small talk, in the format the request asks for (Markdown if none is "
        "named). The caller receives text only, so refer to files by their path."
    ),
}


def platform_hint(platform: str, overrides: Mapping[str, PlatformHintConfig]) -> str:
    """The hint for ``platform``, with the user's ``platforms.<name>`` text applied."""
    builtin = PLATFORM_HINTS.get(platform)
    override = overrides.get(platform)
    if builtin is None and override is None:
        known = sorted({*PLATFORM_HINTS, *overrides})
        raise UsageError(
            f"unknown platform {platform!r}; use one of {', '.join(known)} "
            "or describe it under 'platforms' in config.yaml"
        )
    if override is None:
        return builtin or ""
    text = override.text.strip()
    if override.mode == "replace" or builtin is None:
        return text
    return f"{builtin}\n\n{text}" if text else builtin
