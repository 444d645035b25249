"""C15: the local summariser fills the template from the turns, offline and deterministically."""

from __future__ import annotations

import re

from convgen import assistant, call, tool, user

from mnemo.context import TEMPLATE_SECTIONS, summarize_locally
from mnemo.context.local_summary import parse_summary_sections, redact_secrets
from mnemo.context.textscan import sentences
from mnemo.tokens import estimate_tokens_rough


def _turns() -> list[dict]:
    return [
        user("I want the billing service to retry failed webhooks. Please keep the public "
             "API unchanged. I prefer small commits."),
        assistant("Reading the webhook module.",
                  [call("c1", "read_file", path="services/billing/webhooks.py")]),
        tool("c1", "def deliver(event):\n    ...\n" * 20),
        assistant("", [call("c2", "terminal", command="pytest -q tests/test_webhooks.py")]),
        tool("c2", "collected 12 items\n...\nFAILED tests/test_webhooks.py::test_retry - "
                   "TimeoutError: webhook endpoint did not answer\n1 failed, 11 passed"),
        assistant("We decided to use exponential backoff instead of a fixed delay. "
                  "Next step I will add a retry counter.",
                  [call("c3", "write_file", path="services/billing/retry.py",
                        content="MAX_RETRIES = 5\n")]),
        tool("c3", "wrote 17 bytes"),
        user("Which queue do we use for the retries? Also, can you check whether the "
             "staging config sets WEBHOOK_TIMEOUT=30? Docs: https://docs.example.com/webhooks"),
        assistant("The retries go through the Redis queue named billing-retries."),
        user("Never deploy on Fridays. Run `git push origin feature/retries` when done."),
        assistant("Understood: no deploys on Fridays."),
    ]


def _sections(summary: str) -> dict[str, list[str]]:
    return parse_summary_sections(summary)


def test_all_ten_sections_in_order() -> None:
    summary = summarize_locally(_turns(), budget_tokens=2_000)
    assert re.findall(r"^## (.+)$", summary, flags=re.MULTILINE) == list(TEMPLATE_SECTIONS)
    assert summary.index("### Done") < summary.index("### In Progress") < summary.index(
        "### Blocked")


def test_facts_land_in_their_sections() -> None:
    s = _sections(summarize_locally(_turns(), budget_tokens=2_000))
    assert s["Goal"][0].startswith("I want the billing service to retry failed webhooks.")
    assert any(x.startswith("Latest request in these turns: Never deploy") for x in s["Goal"])
    rules = " ".join(s["Constraints & Preferences"])
    assert "Please keep the public API unchanged." in rules
    assert "I prefer small commits." in rules and "Never deploy on Fridays." in rules
    assert any("exponential backoff instead of a fixed delay" in x for x in s["Key Decisions"])
    assert any(x.startswith("Which queue do we use for the retries? →") and "Redis" in x
               for x in s["Resolved Questions"])
    assert any("staging config sets WEBHOOK_TIMEOUT=30" in x for x in s["Pending User Asks"])
    files = " ".join(s["Relevant Files"])
    assert "services/billing/retry.py (written)" in files
    assert "services/billing/webhooks.py (read)" in files
    critical = "\n".join(s["Critical Context"])
    assert ("FAILED tests/test_webhooks.py::test_retry - TimeoutError: webhook endpoint did "
            "not answer") in critical
    assert "URL: https://docs.example.com/webhooks" in critical
    assert "Config: WEBHOOK_TIMEOUT=30" in critical
    assert "Command: git push origin feature/retries" in critical
    assert "Command: pytest -q tests/test_webhooks.py" in critical
    assert any("retry counter" in x for x in s["Remaining Work"])
    done = " ".join(s["Progress/Done"])
    assert "write_file path=services/billing/retry.py" in done
    assert "read_file: 1 call" in done
    blocked = " ".join(s["Progress/Blocked"])
    assert "terminal command=pytest -q tests/test_webhooks.py → FAILED" in blocked
    assert any(x.startswith("Last step in these turns: Understood") for x in
               s["Progress/In Progress"])
    tools = s["Tools & Patterns"]
    assert "terminal ×1 (1 failed)" in tools and "read_file ×1" in tools


def test_it_is_deterministic() -> None:
    assert summarize_locally(_turns(), budget_tokens=2_000) == summarize_locally(
        _turns(), budget_tokens=2_000)


def test_output_stays_within_the_budget() -> None:
    turns: list[dict] = []
    for k in range(400):
        turns += [user(f"Please never touch legacy/module_{k}.py and keep tests green {k}."),
                  assistant("", [call(f"c{k}", "terminal", command=f"make test-{k}")]),
                  tool(f"c{k}", f"ERROR: target test-{k} failed in build/out_{k}.log\n" * 3),
                  assistant(f"We decided to skip module {k} for now.")]
    for budget in (2_000, 3_000, 12_000):
        summary = summarize_locally(turns, budget_tokens=budget)
        assert estimate_tokens_rough(summary) <= budget
        assert re.findall(r"^## (.+)$", summary, flags=re.MULTILINE) == list(TEMPLATE_SECTIONS)
    # The newest of a crowded kind are preferred, and every kind keeps some room.
    s = _sections(summarize_locally(turns, budget_tokens=2_000))
    assert any("module_399" in x for x in s["Constraints & Preferences"])
    assert s["Relevant Files"] and s["Critical Context"] and s["Key Decisions"]


def test_previous_summary_is_merged_not_nested() -> None:
    first = summarize_locally(_turns(), budget_tokens=2_000)
    later = [assistant("Checked staging: it sets WEBHOOK_TIMEOUT to 30 seconds in the "
                       "staging config, as you asked."),
             user("Great, thanks."),
             assistant("", [call("c9", "terminal", command="pytest -q")]),
             tool("c9", "12 passed")]
    second = summarize_locally(later, budget_tokens=2_000, previous_summary=first)
    s = _sections(second)
    assert second.count("## Goal") == 1
    assert s["Goal"][0].startswith("I want the billing service")  # kept from before
    assert sum(x.startswith("Latest request in these turns:") for x in s["Goal"]) == 1
    assert "Never deploy on Fridays." in " ".join(s["Constraints & Preferences"])
    # The open ask was answered by the new turns: it moved to the resolved list.
    assert not any("WEBHOOK_TIMEOUT" in x for x in s.get("Pending User Asks", []))
    assert any("staging config sets WEBHOOK_TIMEOUT=30" in x and "→" in x
               for x in s["Resolved Questions"])
    assert "terminal ×2 (1 failed)" in s["Tools & Patterns"]


def test_focus_topic_wins_a_tight_budget() -> None:
    turns: list[dict] = []
    for k in range(300):
        topic = "payments" if k == 7 else "ui"
        # One shape for all (the topic late in the line): an old line of a crowd of
        # look-alikes, which only the focus can bring back.
        turns += [user(f"Note {k}: always log request ids {k} in the {topic} code."),
                  assistant(f"Noted {k}.")]
    plain = summarize_locally(turns, budget_tokens=2_000)
    focused = summarize_locally(turns, budget_tokens=2_000, focus_topic="payments")
    assert "in the payments code" not in plain
    assert "in the payments code" in focused
    assert "Focus of this compaction: payments" in focused


def test_secrets_are_redacted() -> None:
    key = "sk-" + "A1b2C3d4" * 5
    turns = [user(f"use api_key={key} and password: hunter2hunter2 for the test"),
             assistant("ok")]
    summary = summarize_locally(turns, budget_tokens=2_000)
    assert key not in summary and "hunter2hunter2" not in summary
    assert "[REDACTED]" in summary
    assert redact_secrets("Authorization: Bearer abcdefghijklmnop123") == (
        "Authorization: Bearer [REDACTED]")


def test_multimodal_and_empty_turns() -> None:
    turns = [{"role": "user", "content": [
        {"type": "text", "text": "What is in this screenshot of app/ui/login.tsx?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
        assistant(None, [call("x", "vision")]), tool("x", ""), assistant("")]
    s = _sections(summarize_locally(turns, budget_tokens=2_000))
    assert "app/ui/login.tsx" in " ".join(s["Relevant Files"])
    assert summarize_locally([], budget_tokens=2_000).count("(none)") >= 10


def test_reading_a_file_that_contains_errors_is_not_a_failure() -> None:
    code = "def f():\n    raise ValueError('bad input')\n" * 10
    turns = [assistant("", [call("r", "read_file", path="src/f.py")]), tool("r", code),
             assistant("", [call("m", "read_file", path="src/missing.py")]),
             tool("m", "Error: no such file or directory: src/missing.py")]
    s = _sections(summarize_locally(turns, budget_tokens=2_000))
    blocked = " ".join(s.get("Progress/Blocked", []))
    assert "src/missing.py" in blocked and "src/f.py" not in blocked
    assert not any("bad input" in x for x in s.get("Critical Context", []))


_PLAIN_FACTS = ("Use port 5433 for the test DB.", "Our deadline is friday_qz9.",
                "I'm wondering whether the cron_zz7 job still runs",
                "我们用 Postgres 而不是 MySQL。")


def test_what_the_user_said_is_kept_while_the_budget_has_room() -> None:
    # Statements no pattern recognises (no "must", no "?", no path), early in a long
    # middle of look-alike steps: they are kept while there is room.
    turns: list[dict] = [user("Let us clean up the repository."), assistant("Sure.")]
    for k, fact in enumerate(_PLAIN_FACTS):
        turns += [user(fact), assistant(f"Noted {k}.")]
    for k in range(30):
        turns += [user(f"step {k} refactor src/mod{k}.py"), assistant(f"done {k}")]
    s = _sections(summarize_locally(turns, budget_tokens=2_000))
    critical = s["Critical Context"]
    for fact in _PLAIN_FACTS:
        assert f"User said: {fact}" in critical
    # A series of look-alike lines competes by recency: the newest of it are the ones kept.
    steps = [x for x in critical if x.startswith("User said: step")]
    assert steps and "step 28" in steps[-1]  # step 29 is the latest request (Goal)


def test_user_lines_never_make_a_summary_of_small_turns_bigger_than_them() -> None:
    turns = [m for k in range(8) for m in (user(f"ask {k}: fix the bug"),
                                           assistant(f"answer {k} fix the bug"))]
    summary = summarize_locally(turns, budget_tokens=2_000)
    said = sum(len(x) for x in _sections(summary).get("Critical Context", []))
    assert said <= sum(len(str(m["content"])) for m in turns) // 4


def test_a_title_does_not_end_a_sentence() -> None:
    assert sentences("Pixel's crate came from Sr. Costa. Dr. Sousa is my manager! Ok.") == [
        "Pixel's crate came from Sr. Costa.", "Dr. Sousa is my manager!", "Ok."]
    assert sentences("Mrs. Lee 来了。好的") == ["Mrs. Lee 来了。", "好的"]
    # Nor an initial, "e.g." or a time (before a capital letter, a time's stop may).
    assert sentences("Do you have a favorite J.K. Rowling book? I met J. R. R. Tolkien's "
                     "grandson at the U.S. embassy, e.g. at 5 p.m. on Friday. We left "
                     "at 6 p.m. Then we ate.") == [
        "Do you have a favorite J.K. Rowling book?", "I met J. R. R. Tolkien's grandson "
        "at the U.S. embassy, e.g. at 5 p.m. on Friday.", "We left at 6 p.m.", "Then we ate."]


def test_cjk_sentences_split_without_spaces() -> None:
    turns = [user("先看看项目。"), assistant("", [call("r", "read_file", path="README.md")]),
             tool("r", "项目说明\n" * 200),
             user("项目介绍一下。回答请用中文，不要用英文。我们用 Postgres 而不是 MySQL。"),
             assistant("好的。"), user("继续。")]
    s = _sections(summarize_locally(turns, budget_tokens=2_000))
    assert "回答请用中文，不要用英文。" in s["Constraints & Preferences"]
    # The sentence no pattern took is kept; the one taken as a preference is not repeated.
    assert s["Critical Context"] == ["User said: 项目介绍一下。 我们用 Postgres 而不是 MySQL。"]


def test_a_line_unlike_the_crowd_outlives_its_look_alikes() -> None:
    # A retention bench's live coding sessions lost every fact the assistant stated
    # ("the … worker retries three times") to the thirtieth "Step 30: refactor src/…"
    # and "E AssertionError: assert 4 == 40": look-alikes decay together, whatever
    # component or number they name.
    turns: list[dict] = []
    for k in range(300):
        topic = "payments" if k == 7 else ("ui", "auth", "billing")[k % 3]
        turns += [user(f"Note {k}: the {topic} code must always log request ids {k}."),
                  assistant(f"Noted {k}.")]
        if k == 9:
            turns.append(assistant("The export worker retries three times before giving up."))
    s = summarize_locally(turns, budget_tokens=2_000)
    assert "payments code must always" in s
    assert "export worker retries three times" in s
    assert "Note 299: the" in s and "Note 20: the" not in s  # the crowd: its newest
    # … and written without spaces.
    turns = []
    for k in range(600):
        topic = "支付模块" if k == 7 else "界面"
        turns += [user(f"第{k}条：{topic}的代码必须总是记录请求编号。"), assistant(f"好的 {k}。")]
    assert "支付模块的代码" in summarize_locally(turns, budget_tokens=2_000)


def test_a_cjk_focus_topic_wins_a_tight_budget() -> None:
    turns: list[dict] = []
    for k in range(600):  # more rules than the budget holds: the oldest are left out
        topic = "支付模块" if k == 7 else "界面"
        # One shape for all, as in the test above: the topic comes late.
        turns += [user(f"第{k}条：必须总是记录请求编号，{topic}的代码也一样。"),
                  assistant(f"好的 {k}。")]
    plain = summarize_locally(turns, budget_tokens=2_000)
    focused = summarize_locally(turns, budget_tokens=2_000, focus_topic="支付模块")
    assert "支付模块的代码" not in plain
    assert "支付模块的代码" in focused


def test_a_cjk_question_is_resolved_by_its_answer() -> None:
    turns = [user("数据库端口是多少？"), assistant("数据库端口是 5432。"),
             user("缓存的过期时间呢？"), assistant("好的。")]
    s = _sections(summarize_locally(turns, budget_tokens=2_000))
    assert any(x.startswith("数据库端口是多少？ →") and "5432" in x
               for x in s["Resolved Questions"])
    assert "缓存的过期时间呢？" in s["Pending User Asks"]


def test_a_sentence_repeated_in_a_request_is_quoted_once() -> None:
    # Seen by hand: a pasted paragraph repeated a dozen times filled the Goal line.
    filler = "Here is some background about my week, which was busy with errands."
    turns = [user(f"I adopted a beagle named Biscuit in March 2024. {filler} {filler} {filler}"),
             assistant("", [call("c1", "memory", action="add", content="Beagle: Biscuit")]),
             tool("c1", '{"success": true}'), assistant("Saved.")]
    goal = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000))["Goal"]
    line = next(item for item in goal if "Biscuit" in item)
    assert line.count(filler) == 1


def test_a_models_placeholder_is_an_empty_section_not_an_item() -> None:
    text = ("## Goal\n- Fix the build\n## Resolved Questions\n- None\n## Pending User Asks\n"
            "- N/A\n## Remaining Work\n- [ ] (none)\n## Critical Context\n- none.\n"
            "- None of the tests ran\n")
    assert parse_summary_sections(text) == {"Goal": ["Fix the build"],
                                            "Critical Context": ["None of the tests ran"]}
