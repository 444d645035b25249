"""Reading tool output for what went wrong (``failures.py``), and keeping it when the
output itself is cleared."""

from __future__ import annotations

from convgen import agent_turns, assistant, call, system, tool, user

from mnemo.context import PRUNED_TOOL_PLACEHOLDER, ContextCompressor
from mnemo.context.failures import (
    best_error_lines,
    error_lines,
    error_shape,
    failure_lines,
    keep_failure_lines,
    tool_kind,
)

_TRACEBACK = """collected 3 items
Traceback (most recent call last):
  File "/srv/app/jobs.py", line 12, in run
    raise QuotaExceeded("tenant acme used 120%")
app.jobs.QuotaExceeded: tenant acme used 120%
FAILED tests/test_jobs.py::test_run - app.jobs.QuotaExceeded
==== 1 failed, 2 passed in 0.4s ===="""


def test_error_lines_find_the_exception_line_of_a_traceback() -> None:
    lines = error_lines(_TRACEBACK)
    assert lines == ["app.jobs.QuotaExceeded: tenant acme used 120%",
                     "FAILED tests/test_jobs.py::test_run - app.jobs.QuotaExceeded",
                     "1 failed, 2 passed in 0.4s"]
    assert error_lines("all 12 tests passed\n" * 1000) == []


def test_the_raised_line_ranks_above_summaries_and_tallies() -> None:
    lines = error_lines(_TRACEBACK)
    assert best_error_lines(lines, 1) == ["app.jobs.QuotaExceeded: tenant acme used 120%"]
    assert best_error_lines(lines, 2) == lines[:2]  # kept in their order
    assert error_shape("E assert 3 == 27") == error_shape("E assert 14 == 2")


def test_reads_report_only_first_line_failures_and_logged_errors() -> None:
    code = "def f():\n    raise ValueError('bad input')\n" * 20
    assert failure_lines(code, "read") == []
    assert failure_lines(code, "run") == ["raise ValueError('bad input')"]
    assert failure_lines("Error: no such file: a.py", "read") == ["Error: no such file: a.py"]
    log = "INFO start\n" * 50 + "KeyError: 'tenant_7'\n" + "INFO stop\n" * 50
    assert failure_lines(log, "read") == ["KeyError: 'tenant_7'"]


def test_tool_kind_by_name() -> None:
    assert tool_kind("write_file", {}) == "write"
    assert tool_kind("read_file", {}) == "read"
    assert tool_kind("terminal", {"command": "ls"}) == "run"
    assert tool_kind("vision", {}) == "other"


def test_a_cleared_output_in_the_context_keeps_its_failure_lines() -> None:
    # The failing run sits in the tail but outside the newest tail budget: its output is
    # cleared, the lines saying what failed stay, and reach the summary later.
    messages = [system(), *agent_turns(20), user("run the jobs tests"),
                assistant("", [call("t1", "terminal", command="pytest tests/test_jobs.py")]),
                tool("t1", "x\n" * 400 + _TRACEBACK),
                assistant("", [call("t2", "read_file", path="README.md")]),
                tool("t2", "r" * 6000), assistant("Looking at it.")]
    engine = ContextCompressor(context_length=12_000)
    out = engine.compress(messages)
    cleared = next(m for m in out if m.get("tool_call_id") == "t1")
    text = str(cleared["content"])
    assert text.startswith(PRUNED_TOOL_PLACEHOLDER)
    assert "terminal command=pytest tests/test_jobs.py" in text
    assert text.endswith("app.jobs.QuotaExceeded: tenant acme used 120%\n"
                         "FAILED tests/test_jobs.py::test_run - app.jobs.QuotaExceeded")
    later = engine.compress(out + agent_turns(20, start=50))
    assert later and engine.last_report is not None and engine.last_report.summary
    assert "app.jobs.QuotaExceeded: tenant acme used 120%" in engine.last_report.summary


def test_error_lines_are_the_same_when_lowering_changes_the_text_length() -> None:
    # "İ" lowers to two characters: positions in the lowered text would be off.
    padding = "İstanbul " * 40 + "\n"
    text = padding + "ok\nKeyError: 'x'\n" + padding + "exit code 3\n"
    assert error_lines(text) == ["KeyError: 'x'", "exit code 3"]



def test_every_form_of_an_error_line_is_found_by_its_hint() -> None:
    """Each branch of the error pattern is found through the (long) hint that stands for
    it in the lowered text, in any case, and a read keeps each form a log prints."""
    from mnemo.context.summary.reading import _read_result

    forms = ["Traceback (most recent call last):\n  File \"a.py\", line 1\nQuota: over",
             "KeyError: 'x'", "Exception in thread main", "error[E0382]: moved value",
             "ERROR root: down", "fatal: not a git repository", "FATAL disk full",
             "FAILED tests/t.py::t", "panic: nil map", "sh: Permission denied",
             "cat: x: No such file or directory", "sh: foo: command not found",
             "3 failed in 1s", "2 errors during collection", "Process exit code 2"]
    padding = "\n".join(f"line {i} is fine" for i in range(50))
    for form in forms:
        text = f"{padding}\n{form}\n{padding}"
        assert error_lines(text), form
    clean = f"{padding}\nraise ValueError('x')  # code, not a log\nwarnings = []\n{padding}"
    assert _read_result(clean, "read").keep == ()
    for logged in ("app.KeyError: 'tenant_9'", "error: linker failed", "error[E1]: bad",
                   "UserWarning: retried after an Error", "RuntimeWarning[x]: 1 failed",
                   "db.Exception: gone", "ERROR boot", "FAILED x", "FATAL y",
                   "fatal: bad ref", "panic: oops"):
        read = _read_result(f"{padding}\n{logged}\n{padding}", "read")
        assert read.keep == (logged,), logged


def test_a_short_output_that_is_mostly_its_error_stays_whole() -> None:
    # Found by the second-compression property test: the cleared form with the error
    # line under it was longer than the output, so a compaction grew the context.
    short = {"role": "tool", "tool_call_id": "c1", "content": "Error: boom " + "x" * 200}
    long = {"role": "tool", "tool_call_id": "c2",
            "content": "Error: boom\n" + "all good here\n" * 400}
    originals = [assistant(None, [call("c1", "terminal"), call("c2", "terminal")]),
                 short, long]
    cleared = [originals[0], {**short, "content": PRUNED_TOOL_PLACEHOLDER},
               {**long, "content": PRUNED_TOOL_PLACEHOLDER}]
    tokens = [0, 0, 0]
    keep_failure_lines(originals, cleared, tokens, [1, 2])
    assert cleared[1] == short and cleared[1] is not short
    assert cleared[2]["content"].startswith(PRUNED_TOOL_PLACEHOLDER)
    assert "Error: boom" in cleared[2]["content"]
    assert len(cleared[2]["content"]) < len(long["content"])
