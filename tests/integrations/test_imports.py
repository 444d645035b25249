"""The integrations stay out of the way: nothing imports a framework until asked."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

FRAMEWORKS = {  # integration module -> (framework module, extra named in the hint)
    "mnemo.integrations.pydantic_ai": ("pydantic_ai", "mnemo[pydantic-ai]"),
    "mnemo.integrations.openai_agents": ("agents", "mnemo[openai-agents]"),
    "mnemo.integrations.langgraph": ("langchain_core", "mnemo[langgraph]"),
}


def test_importing_mnemo_imports_no_framework() -> None:
    code = ("import sys, mnemo, mnemo.integrations, mnemo.integrations.runtime; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pydantic_ai', 'agents', 'langchain', 'langchain_core', 'langgraph')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("module", sorted(FRAMEWORKS))
def test_a_missing_framework_names_the_extra(module: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    framework, extra = FRAMEWORKS[module]
    for name in [framework, *(m for m in sys.modules if m.startswith(framework + "."))]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed
    for name in [m for m in sys.modules if m.startswith("mnemo.integrations.")
                 and m != "mnemo.integrations.runtime" and not m.endswith("_carry")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ImportError, match=extra.replace("[", r"\[").replace("]", r"\]")):
        importlib.import_module(module)
