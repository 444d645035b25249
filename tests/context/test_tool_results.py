"""A tool output read in place (``summary/results.py``): the same reading as the
summariser's view of it gives, only the view's windows read, and a near-copy — the same
output behind another first line — found without reading or hashing it again. Work is
counted (blocks, characters, hashes), not timed."""

from __future__ import annotations

import random
from typing import ClassVar

import pytest
from convgen import sample_log

from mnemo.context.failures import best_error_lines, error_lines, is_logged_error
from mnemo.context.markers import PRUNED_TOOL_PLACEHOLDER
from mnemo.context.prompt import CONTENT_HEAD, CONTENT_MAX, CONTENT_TAIL, truncate_for_summary
from mnemo.context.pruning import prune_tool_results
from mnemo.context.summary.blockscan import BLOCK, BLOCKS
from mnemo.context.summary.reading import CACHE, Result, read_result
from mnemo.context.summary.results import RESTS, RestCache, view_error_lines
from mnemo.context.textscan import one_line

KINDS = ("read", "run", "other")


def _expected(text: str, kind: str) -> Result:
    """What reading the summariser's view of ``text`` gives, written out plainly (the
    reading before ``results.py``): every line of the view scanned."""
    view = truncate_for_summary(text)
    if view.startswith(PRUNED_TOOL_PLACEHOLDER):
        kept = [ln for ln in view.split("\n")[2:] if ln.strip()]
        return Result(tuple(kept), one_line(kept[0], 200) if kept and kind != "read" else "")
    lines = error_lines(view)
    if kind == "read":
        head = error_lines(view.lstrip()[:300].split("\n", 1)[0])
        logged = [ln for ln in lines if is_logged_error(ln)]
        return Result(tuple(best_error_lines(head + logged, 3)),
                      one_line(head[0], 200) if head else "")
    return Result(tuple(best_error_lines(lines, 3)),
                  one_line(best_error_lines(lines, 1)[0], 200) if lines else "")


@pytest.fixture(autouse=True)
def _cold() -> None:
    CACHE.clear()
    BLOCKS.clear()
    RESTS.clear()


def _at(position: int, line: str, filler: str = "ok line\n", size: int = 20_000) -> str:
    """A text of about ``size`` characters with ``line`` starting at ``position``."""
    before = (filler * (position // len(filler) + 1))[:position]
    after = filler * ((size - position) // len(filler) + 1)
    return (before + line + "\n" + after)[:size]


def _tricky() -> list[str]:
    tail_start = 20_000 - CONTENT_TAIL
    texts = [
        # An error line cut by the head's end, and one whose start the tail cuts off.
        _at(CONTENT_HEAD - 6, "KeyError: 'cut at the marker'", size=20_000),
        _at(CONTENT_HEAD - 30, "E   AssertionError: the head ends in me", size=20_000),
        _at(19_970 - CONTENT_TAIL - 4, "ValueError: the tail starts in me", size=19_970),
        _at(tail_start, "FAILED tests/t.py::test_x", size=20_000),
        # A traceback whose header is in the head and whose frames run past the cut:
        # in the view its exception line is the marker's.
        _at(CONTENT_HEAD - 200, "Traceback (most recent call last):\n" + "  frame\n" * 400
            + "QuotaExceeded: over", size=30_000),
        # The same with the whole traceback in the tail.
        _at(30_000 - 300, "Traceback (most recent call last):\n  frame\nQuota: over",
            size=30_000),
        # CRLF line ends, and letters whose lower case is longer ("İ").
        "# call_9\r\n" + "fine line\r\n" * 300 + "KeyError: 'x'\r\n" + "fine\r\n" * 2000,
        "# call_9\n" + "İstanbul ok\n" * 500 + "fatal: İ lost\n" + "İ fine\n" * 2000,
        "İ first\n" + "ok\n" * 3000 + "ERROR boot\n" + "ok\n" * 10,
        # First lines that say something: an error, a traceback header, leading space,
        # no line break early on, a line of exactly 300 characters.
        "Error: no such file\n" + "ok line\n" * 3000,
        "Traceback (most recent call last):\n  frame\nKeyError: 'x'\n" + "ok\n" * 3000,
        "\n  Error: leading space\n" + "ok line\n" * 3000,
        "x" * 5000 + "\nKeyError: 'y'\n" + "ok\n" * 3000,
        "y" * 300 + "\nKeyError: 'z'\n" + "ok\n" * 3000,
        "z" * 296 + "Error\nok\n" + "ok\n" * 3000,
        # Sizes around a block and the view's cap, and cleared output.
        "# c\n" + "ok\n" * (BLOCK // 3) + "panic: at the edge",
        "# c\n" + "ok line\n" * 740 + "exit code 2",
        f"{PRUNED_TOOL_PLACEHOLDER}\nterminal command=pytest (9,000 chars)\nKeyError: 'k'",
    ]
    texts += [f"# call_{seed}\n{sample_log(seed, 100 + 90 * seed)}" for seed in range(12)]
    return texts


def test_the_same_reading_as_the_view_gives() -> None:
    for text in _tricky():
        assert view_error_lines(text) == error_lines(truncate_for_summary(text))
        for kind in KINDS:
            assert read_result(text, kind) == _expected(text, kind), (text[:40], kind)


def test_a_near_copy_reads_the_same_as_itself_read_cold() -> None:
    bodies = [sample_log(seed, 700) for seed in range(4)] + [t.split("\n", 1)[1] for t in _tricky()]
    heads = ["# call_1", "# call_22", "Error: disk full", "$ pytest -q", "   padded"]
    for body in bodies:
        for head in heads:
            text = f"{head}\n{body}"
            for kind in KINDS:
                assert read_result(text, kind) == _expected(text, kind), (head, kind)


def test_a_near_copy_is_one_lookup() -> None:
    """The same output behind another first line of the same length: its blocks are not
    sliced, hashed or read again, and nor is the text itself hashed."""

    class Counted(str):
        hashed = 0

        def __hash__(self) -> int:
            Counted.hashed += 1
            return super().__hash__()

    body = sample_log(3, 900)
    assert len(body) > 2 * (CONTENT_HEAD + CONTENT_TAIL)
    first = read_result(f"# call_101\n{body}", "run")
    assert first.keep and RESTS.misses == 1
    looked_up = BLOCKS.hits + BLOCKS.misses
    chars = CACHE.chars
    for i in range(102, 130):
        again = Counted(f"# call_{i}\n{body}")
        assert read_result(again, "run") == first
    assert BLOCKS.hits + BLOCKS.misses == looked_up  # no block looked at
    assert (RESTS.misses, RESTS.hits) == (1, 28)
    assert CACHE.chars == chars and Counted.hashed == 0  # nothing read, nothing hashed
    # A first line that may hold an error is read, not assumed away.
    text = f"# call_1 Error: gone\n{body}"
    failed = read_result(text, "run")
    assert failed == _expected(text, "run") and "call_1 Error: gone" in view_error_lines(text)
    assert RESTS.hits == 28


def test_only_the_windows_of_a_long_output_are_read() -> None:
    text = f"# call_1\n{sample_log(5, 20_000)}"
    assert len(text) > 50 * (CONTENT_HEAD + CONTENT_TAIL)
    read_result(text, "other")
    rest = CONTENT_HEAD - len("# call_1\n") + CONTENT_TAIL
    # Each window's blocks once (less the odd last line too short to keep): the head
    # after the first line and the tail — not the 600 KB between them.
    assert rest - 2 * 128 <= BLOCKS.chars <= rest
    assert RESTS.chars == rest
    assert CACHE.misses == 1 and CACHE.chars == CONTENT_MAX  # one message, its view read


def test_the_rests_kept_are_bounded_in_characters() -> None:
    cache = RestCache(limit_chars=20_000)
    for seed in range(12):
        text = f"# call_{seed}\n{sample_log(seed, 600)}"
        found, where = cache.find(text)
        assert found is None and where is not None
        cache.read(text, where)
        assert cache.kept_chars <= 20_000
    newest = f"# call_99\n{sample_log(11, 600)}"
    assert cache.find(newest)[0] is not None  # the newest stays
    assert len(cache) < 12


def test_pruning_hashes_only_outputs_that_may_be_copies() -> None:
    """Duplicates are found by length and ends first: a unique output is not hashed."""

    class Counted(str):
        hashed: ClassVar[set[str]] = set()

        def __hash__(self) -> int:
            Counted.hashed.add(self[:1])
            return super().__hash__()

    def tool(i: int, text: str) -> dict[str, object]:
        return {"role": "tool", "tool_call_id": f"c{i}", "content": Counted(text)}

    big = "line of output\n" * 100
    same_ends = big[:700] + "X" + big[701:]
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    for i in range(6):
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{i}", "type": "function",
             "function": {"name": "read_file", "arguments": f'{{"path": "f{i}.py"}}'}}]})
        # c0 and c4 are the same output; c2 has c0's length and ends, not its text.
        text = big if i in (0, 4) else same_ends if i == 2 else f"{i}{big}"
        messages.append(tool(i, text))
    messages.append({"role": "assistant", "content": "done"})
    tokens = [10] * len(messages)
    result, pruned = prune_tool_results(messages, tokens, 20)  # type: ignore[arg-type]
    assert Counted.hashed == {"l"}  # c0, c2 and c4, which share a key; no other output
    assert pruned == [2, 4, 6, 8, 10]  # all old but the newest, c5 in the tail budget
    assert result[2]["content"].endswith("(1,500 chars; identical to a later result)")
    assert result[6]["content"].endswith("(1,500 chars)")  # c2: same ends, another text
    assert result[10]["content"].endswith("(1,500 chars)")  # c4: the newest copy
    assert result[12] is messages[12]


def test_random_outputs_read_as_their_views() -> None:
    """Outputs of random sizes, lines and first lines, errors and tracebacks anywhere
    (across the cuts too), each read twice behind other first lines: always the
    reading of the view."""
    r = random.Random(12)
    pieces = ["ok", "  frame", "Traceback (most recent call last):", "KeyError: 'k'",
              "E   AssertionError: a", "FAILED t.py::x", "İstanbul", "x\r", "", "   ",
              "    raise ValueError('v')", "2 failed, 3 passed", "exit code 3", "fine " * 30]
    firsts = ["# call_1", "# call_2", "# call_12", "# call_34", "$ make", "Error: no",
              "  lead", "", "x" * 299, "Traceback (most recent call last):"]
    for _ in range(60):
        size = r.choice((300, BLOCK, 5_000, CONTENT_MAX, 9_000, 40_000))
        lines: list[str] = []
        while sum(len(x) + 1 for x in lines) < size:
            lines.append(r.choice(pieces) if r.random() < 0.3 else f"line {len(lines)}")
        body = "\n".join(lines)
        for first in r.sample(firsts, 5):
            text = f"{first}\n{body}"
            for kind in KINDS:
                assert read_result(text, kind) == _expected(text, kind), (first, kind)
    assert RESTS.hits > 20  # kept rests were used (near-copies, other kinds of call)
