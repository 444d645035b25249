"""Which summary lines are searched for secrets (``summary/secrets.py``): every line
that holds one, and, in ASCII text, only lines that hold a hint of one."""

from __future__ import annotations

from mnemo.context.summary.secrets import may_hold_secrets, redact_secrets

_LINES = [
    "Command: pytest -q tests/test_token.py",
    "Config: API_KEY=abcd1234efgh",
    "Config: timeout=30",
    "curl -H 'Authorization: Bearer abcdefghijklmnop123' https://x",
    "ghp_" + "a" * 36,
    "the worker retries three times",
    "PASSWORD: hunter2hunter2",
    "multi\nline with sk-" + "b" * 24,
    "nothing to see",
]


def test_lines_with_secrets_are_flagged_and_clean_ones_are_not() -> None:
    flags = may_hold_secrets(_LINES)
    assert flags == [True, True, False, True, True, False, True, True, False]
    for line, flag in zip(_LINES, flags, strict=True):
        if redact_secrets(line) != line:
            assert flag, line
    assert redact_secrets(_LINES[1]) == "Config: API_KEY=[REDACTED]"


def test_text_outside_ascii_is_searched_line_by_line() -> None:
    # re.IGNORECASE folds "ſ" into "s": the literal scan would miss "paſsword=…".
    lines = ["paſsword=hunter2hunter2", "plain", "read_file ×3 → fine", "token ×2"]
    assert may_hold_secrets(lines) == [True, False, False, True]
    assert may_hold_secrets([]) == []
