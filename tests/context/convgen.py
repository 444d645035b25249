"""Conversation builders, hypothesis strategies (valid conversations, and conversations
with the defects C12 must repair), and the C12 checks (``mnemo.context.validate_c12``).

Shared by the context tests (imported as ``convgen``: pytest puts this folder on
``sys.path`` because it has no ``__init__.py``).
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from mnemo.context import SUMMARY_PREFIX, is_summary_message, still_present, validate_c12
from mnemo.context.boundaries import latest_user_index
from mnemo.context.markers import PRUNED_TOOL_PLACEHOLDER, SUMMARY_END_MARKER, summary_content
from mnemo.messages import content_text

Msg = dict[str, Any]


def system(text: str = "You are a helpful coding agent.") -> Msg:
    return {"role": "system", "content": text}


def user(text: str) -> Msg:
    return {"role": "user", "content": text}


def assistant(text: str | None = "", calls: Sequence[Msg] = ()) -> Msg:
    message: Msg = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def call(call_id: str, name: str = "read_file", **args: Any) -> Msg:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}


def tool(call_id: str, text: str) -> Msg:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def agent_turns(count: int, *, output_chars: int = 1200, start: int = 0) -> list[Msg]:
    """``count`` turns of: user ask, assistant tool call, tool result, assistant answer."""
    out: list[Msg] = []
    for t in range(start, start + count):
        cid = f"call_{t}"
        out += [
            user(f"Turn {t}: please look at src/module_{t}.py and fix the handler."),
            assistant("Let me read it.", [call(cid, path=f"src/module_{t}.py")]),
            tool(cid, f"# module {t}\n" + "def handler():\n    return 1\n" * (output_chars // 30)),
            assistant(f"Fixed the handler in src/module_{t}.py."),
        ]
    return out


# -- the C12 checks (one definition: mnemo.context.validate_c12) -------------------------


def sample_log(seed: int, lines: int = 400) -> str:
    """A pytest-like log of ``lines`` lines with the odd traceback, failure, ``raise`` in
    a listing and compiler error, the same for the same ``seed`` (error-line tests)."""
    r = random.Random(seed)
    out = []
    for i in range(lines):
        roll = r.random()
        if roll < 0.02:
            out += ["Traceback (most recent call last):", '  File "app.py", line 3',
                    "    main()", f"KeyError: 'tenant_{i}'"]
        elif roll < 0.04:
            out.append(f"FAILED tests/test_x.py::test_{i} - AssertionError: assert {i} == 1")
        elif roll < 0.05:
            out.append('    raise ValueError("empty order")')
        elif roll < 0.06:
            out.append("error[E0382]: borrow of moved value")
        else:
            out.append(f"tests/test_x.py::test_{i} PASSED")
    return "\n".join(out)


def c12_violations(output: Sequence[Msg], source: Sequence[Msg]) -> list[str]:
    """Every way ``output`` breaks C12 (a)–(e); empty when it is valid."""
    return validate_c12(output, source)  # type: ignore[arg-type]


def corresponds(original: Msg, produced: Msg) -> bool:
    """True when ``produced`` is ``original`` as the compressor may legitimately keep it."""
    if produced == original:
        return True
    if produced.get("role") != original.get("role"):
        return False
    text, before = content_text(produced), content_text(original)
    if original.get("role") == "tool":
        return (produced.get("tool_call_id") == original.get("tool_call_id")
                and text.startswith(PRUNED_TOOL_PLACEHOLDER))
    if original.get("role") == "system":
        return text.startswith(before)
    # The summary merged into the first tail message (C12 c).
    return (text.startswith(SUMMARY_PREFIX) and SUMMARY_END_MARKER in text
            and text.endswith(before) and produced.get("tool_calls") == original.get(
                "tool_calls"))


def kept_in_order(output: Sequence[Msg], source: Sequence[Msg], removed: Sequence[int]) -> bool:
    """Every input message not removed appears in the output, in order."""
    gone = set(removed)
    j = 0
    for i, original in enumerate(source):
        if i in gone:
            continue
        while j < len(output) and not corresponds(original, output[j]):
            j += 1
        if j == len(output):
            return False
        j += 1
    return True


# -- hypothesis: random valid conversations ------------------------------------------------

_WORDS = ("fix the bug", "why does it fail?", "see src/app.py", "use tabs", "ok",
          "Error: boom", "https://example.com/x", "", "never push to main", "done.")
_SIZES = (0, 0, 0, 120, 600, 50, 300, 1500)
_NAMES = ("read_file", "terminal", "search")


class _Code:
    """Reads small choices out of one drawn integer: one draw per message keeps
    generation fast, and shrinking the integer towards 0 still simplifies the shape."""

    def __init__(self, value: int) -> None:
        self.value = value

    def pick(self, n: int) -> int:
        self.value, choice = divmod(self.value, n)
        return choice


def _text(code: _Code, *, big: bool = False) -> str:
    base = _WORDS[code.pick(len(_WORDS))]
    size = _SIZES[code.pick(4) + (4 if big else 0)]
    return base + "x" * size


def _user_message(code: _Code, index: int) -> Msg:
    text = f"ask {index}: " + _text(code)
    if code.pick(6) == 5:  # multimodal list content
        return {"role": "user", "content": [
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}
    return user(text)


def _tool_group(code: _Code, prefix: str) -> list[Msg]:
    count = 1 + code.pick(3)  # parallel calls
    ids = [f"{prefix}_{k}" for k in range(count)]
    calls = [call(cid, _NAMES[code.pick(3)], path=f"src/{cid}.py") for cid in ids]
    text = ("", None, "Checking.")[code.pick(3)]
    results = [tool(cid, _text(code, big=True)) for cid in ids]
    if code.pick(2):
        results.reverse()  # results may come back in any order
    if code.pick(6) == 5:
        results[0] = dict(results[0], content="same output\n" + "y" * 400)  # duplicates
    return [assistant(text, calls), *results]


_CODE = st.integers(0, 2**40)


@st.composite
def conversations(draw: st.DrawFn) -> list[Msg]:
    """A valid conversation: optional system message, optional resumed summary, turns."""
    out: list[Msg] = []
    head = _Code(draw(_CODE))
    if head.pick(2):
        out.append({"role": "system", "content": [{"type": "text", "text": "sys"}]}
                   if head.pick(5) == 4 else system())
    if head.pick(5) == 4:  # a resumed session starts with the old summary
        out.append({"role": ("assistant", "user")[head.pick(2)],
                    "content": summary_content("## Goal\n- an earlier goal")})
    for t in range(draw(st.integers(1, 12))):
        code = _Code(draw(_CODE))
        if out and out[-1]["role"] == "user":
            out.append(assistant("ok"))
        out.append(_user_message(code, t))
        for g in range(code.pick(4)):
            out += _tool_group(_Code(draw(_CODE)), f"c{t}_{g}")
        if code.pick(5) != 4:
            out.append(assistant(f"answer {t} " + _text(code)))
    return out


def latest_user(messages: Sequence[Msg]) -> Msg | None:
    index = latest_user_index(messages)  # type: ignore[arg-type]
    return None if index is None else messages[index]


def survives(message: Msg, output: Sequence[Msg]) -> bool:
    """``message`` still reaches the model: as it was, behind a summary, or merged."""
    return still_present(message, output)  # type: ignore[arg-type]


# -- hypothesis: conversations with every shape C12 must repair -------------------------------


def _same_role_neighbour(code: _Code, out: list[Msg], k: int) -> None:
    """A second user (or assistant) message right after one, as a crashed agent or a
    hand-edited transcript leaves them."""
    spots = [i for i, m in enumerate(out) if m["role"] == "user"
             or (m["role"] == "assistant" and not m.get("tool_calls"))]
    if spots:
        i = spots[code.pick(len(spots))]
        role = out[i]["role"]
        extra: Msg = ({"role": "user", "content": [{"type": "text", "text": f"also {k}"}]}
                      if role == "user" and code.pick(3) == 2
                      else {"role": role, "content": f"and {k}: " + _text(code)})
        out.insert(i + 1, extra)


def _break(code: _Code, out: list[Msg], k: int) -> None:
    """One defect: a stray result, a duplicate result, a missing result, a result moved
    out of its group, or same-role neighbours."""
    first = 1 if out and out[0]["role"] == "system" else 0
    results = [i for i, m in enumerate(out) if m["role"] == "tool"]
    kind = code.pick(5)
    if kind == 0 or (kind in (1, 2, 3) and not results):
        at = first + code.pick(len(out) - first + 1)
        out.insert(at, tool(f"ghost_{k}", "stray " + _text(code, big=True)))
    elif kind == 1:
        i = results[code.pick(len(results))]
        out.insert(i + 1, dict(out[i]))
    elif kind == 2:
        del out[results[code.pick(len(results))]]
    elif kind == 3:
        i = results[code.pick(len(results))]
        moved = out.pop(i)
        later = [j for j in range(i, len(out)) if out[j]["role"] != "tool"]
        out.insert((later[0] + 1) if later else len(out), moved)
    else:
        _same_role_neighbour(code, out, k)


@st.composite
def messy_conversations(draw: st.DrawFn) -> list[Msg]:
    """A conversation with one to four defects C12 must repair (see ``_break``); it
    always keeps at least one user message, so there is something to return."""
    out = list(draw(conversations()))
    for k in range(draw(st.integers(1, 4))):
        _break(_Code(draw(_CODE)), out, k)
    return out


def check_compression(engine: Any, conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Compress with ``engine`` and check what every engine's output must satisfy:
    the input untouched, C12 (a)–(e), kept messages in order, the latest user message
    kept, at most one summary and none nested, a summary only when it saved tokens, and a
    report that matches the output."""
    before = copy.deepcopy(conversation)
    output: list[dict[str, Any]] = engine.compress(conversation)
    report = engine.last_report
    assert report is not None
    assert conversation == before, "the input list was modified"
    assert not c12_violations(output, conversation), c12_violations(output, conversation)
    assert kept_in_order(output, conversation, report.removed)
    expected = latest_user(conversation)
    if expected is not None:
        assert survives(expected, output), "the latest user message was lost"
    assert sum(1 for m in output if is_summary_message(m)) <= 1
    for message in output:
        assert content_text(message).count(SUMMARY_PREFIX) <= 1, "a summary was nested"
    if report.summary is not None:
        assert report.removed, "a summary replaced nothing"
        assert report.tokens_after < report.tokens_before
    assert report.messages_after == len(output)
    return output
