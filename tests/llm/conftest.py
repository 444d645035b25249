"""Fixtures of the llm tests: the shared fake OpenAI server (see tests/support)."""

from support.fixtures import fake_openai

__all__ = ["fake_openai"]
