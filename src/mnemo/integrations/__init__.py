"""mnemo inside the agent frameworks people already use (SPEC I1–I4; docs/integrations.md).

One module per framework — ``pydantic_ai``, ``openai_agents``, ``langgraph`` — each an
extra (``pip install "mnemo[pydantic-ai]"`` …) and each importing its framework when it is
imported itself, never before: this package imports nothing, and the core of mnemo never
imports it. What they share (memory, archive, engine) is ``runtime.MnemoRuntime``.
"""
