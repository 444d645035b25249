"""A pass over turns that begin with the turns of an earlier pass starts where that one
stopped (``summary/resume.py``): the same facts as a pass from the start, with the
earlier turns not walked again (counted, not timed)."""

from __future__ import annotations

import json

from mnemo.context.extract import RESUMES, extract_facts
from mnemo.context.local_summary import summarize_locally
from mnemo.context.summary.reading import CACHE
from mnemo.messages import Message


def _turns(steps: int) -> list[Message]:
    out: list[Message] = []
    for step in range(steps):
        call = {"id": f"call_{step}", "type": "function", "function": {
            "name": "read_file" if step % 3 else "terminal",
            "arguments": json.dumps({"path": f"src/m{step % 4}.py"} if step % 3 else
                                    {"command": f"pytest -q t{step}.py"})}}
        log = "\n".join(f"tests/t{step}.py::test_{i} PASSED" for i in range(30))
        if step % 4 == 0:
            log += f"\nE   KeyError: 'tenant_{step}'\nFAILED tests/t{step}.py::test_x"
        out += [{"role": "user", "content": f"Step {step}: fix m{step % 4}.py. Can you "
                 f"check tenant {step}? Never touch the API."},
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"call_{step}", "content": log},
                {"role": "assistant", "content": f"Tenant {step} loads in m{step % 4}.py; "
                 "next I will check the cache."}]
    return out  # type: ignore[return-value]


def _fresh(turns: list[Message], pending: list[str]) -> str:
    RESUMES.clear()
    CACHE.clear()
    return summarize_locally(turns, budget_tokens=3_000,
                             previous_summary=_previous(pending))


def _previous(pending: list[str]) -> str | None:
    if not pending:
        return None
    return "## Pending User Asks\n" + "".join(f"- {p}\n" for p in pending)


def test_a_grown_list_resumes_with_the_same_summary() -> None:
    turns = _turns(40)
    for pending in ([], ["Can you check tenant 3 too?"]):
        expected_short = _fresh(turns[:100], pending)
        expected_long = _fresh(turns, pending)
        RESUMES.clear()
        previous = _previous(pending)
        assert summarize_locally(turns[:100], budget_tokens=3_000,
                                 previous_summary=previous) == expected_short
        assert RESUMES.resumed == 0
        assert summarize_locally(turns, budget_tokens=3_000,
                                 previous_summary=previous) == expected_long
        assert RESUMES.resumed == 100  # the first hundred turns were not walked again
        # The kept states were not changed by the passes that went on from them.
        assert summarize_locally(turns[:100], budget_tokens=3_000,
                                 previous_summary=previous) == expected_short
        assert summarize_locally(turns, budget_tokens=3_000,
                                 previous_summary=previous) == expected_long
        assert RESUMES.resumed == 100 + 100 + 160


def test_other_turns_or_other_open_asks_do_not_resume() -> None:
    RESUMES.clear()
    turns = _turns(10)
    extract_facts(turns)
    changed: list[Message] = list(turns)
    changed[4] = {"role": "user", "content": "Step 1: fix m2.py instead."}
    assert extract_facts(changed).asks[1].text == "Step 1: fix m2.py instead."
    assert RESUMES.resumed == 0  # differs at turn 4: no state covers a prefix past it…
    extract_facts(turns, prior_pending=["Can you check tenant 3 too?"])
    assert RESUMES.resumed == 0  # … and a pass that starts from other open asks is new
    parts: list[Message] = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    extract_facts(turns + parts)
    extract_facts(turns + parts)
    # Both resume after the turns (40 each), neither after the message in parts.
    assert RESUMES.resumed == 2 * len(turns)
