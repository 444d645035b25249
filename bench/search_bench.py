"""Session search latency and hit rate at 10k, 100k and 1M stored messages; import speed.

One database grows through the sizes (10k → 100k → 1M messages, in sessions of 40–160
messages). The text is generated from a fixed seed to look like agent work: user asks,
assistant answers and tool calls, tool outputs with paths, error codes and numbers,
words drawn from a Zipf distribution over an everyday + programming vocabulary, and
about 2% of the messages in Chinese.

At each size the queries are *sampled from the stored rows* (so every one has an answer
in the database), run through ``SessionStore.search`` (limit 10), and reported as
p50/p95 latency next to the hit rate — the share of queries whose results hold an answer:

* ``words``     2–3 words of middling frequency taken from one message (hit: a result
                holding all of them — in random text many messages do, so which one
                cannot be asked for);
* ``rare``      a file path taken from one message (hit: a result holding that path);
* ``question``  "how did we fix the <w1> <w2> error?" with two words of one user message
                (hit: a result holding both);
* ``cjk``       1, 2 or 4 Chinese characters cut from a Chinese message (hit: a message
                holding them);
* ``hostile``   quotes, operators and punctuation (no answer; must neither fail nor be
                slow);

and two more ways the agent searches, with the ``words`` and ``rare`` queries:

* ``in-session``  ``search(q, session_id=<the answer's session>)`` (hit: as above);
* ``agent``       ``search(q, exclude_active_of=<another session>)``, what
                  ``session_search`` runs for an agent with a live session;
* ``tool``        the ``session_search`` tool end to end (limit 3, neighbours, JSON), hit
                  when the answer is among the listed messages or their context.

Import throughput is measured both ways the store is used: ``append_messages`` with one
transaction per session (an import) and ``append_message`` per message (the agent).

    .venv/bin/python bench/search_bench.py [--sizes 10000,100000,1000000] [--queries 60]

The 1M step takes a few minutes and about 1 GB of disk in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from mnemo.sessions import SessionStore, session_search


def _words(text: str) -> list[str]:
    return text.split()


_WORDS = _words("""
time year people way day man thing woman life child world school state family student
group country problem hand part place case week company system program question work
government number night point home water room mother area money story fact month lot
right study book eye job word business issue side kind head house service friend father
power hour game line end member law car city community name president team minute idea
kid body information back parent face others level office door health person art war
history party result change morning reason research girl guy moment air teacher force
education foot boy age policy music market sense nation plan college interest death
experience effect class control care field development role effort rate heart drug show
leader light voice wife police mind price report decision son view relationship town
road arm difference value building action model season society tax director position
player record paper space ground form event official matter center couple site project
activity star table need court oil situation cost industry figure street image phone
data picture practice piece land product doctor wall patient worker news test movie
north love support technology step baby computer type attention film tree source
organization hair window evidence population site garden river camping hiking painting
pottery adoption counseling marathon guitar concert recipe dinner birthday vacation
beach mountain museum library festival coffee breakfast holiday wedding puppy kitten
server client request response database query index cache config deploy build release
branch commit merge test fixture module package import export function class method
variable parameter argument return value error exception warning timeout retry backoff
socket connection port host address token session cookie header payload schema
migration table column row transaction lock thread process worker queue job task
memory disk file path folder directory permission user group owner script command shell
terminal output input stream buffer encoding unicode parser lexer compiler runtime
container image volume network proxy gateway endpoint route handler middleware logger
metric trace span latency throughput benchmark profile regression bug fix patch review
pipeline workflow cluster node replica shard partition backup restore snapshot archive
kubernetes docker postgres sqlite redis nginx python rust typescript javascript golang
pytest mypy ruff webpack vite react django flask fastapi celery kafka grafana
""")
_VERBS = _words("""
fixed broke added removed renamed updated checked tested deployed reverted moved found
missed wrote read parsed loaded saved started stopped restarted configured installed
upgraded debugged profiled measured refactored merged reviewed planned visited painted
cooked watched joined finished tried learned asked answered compared replaced
""")
_FILLER = _words("""
the a to of and in is it that for on with as was this we i you be at by not are have
but from or they an will my all would there their so can if about just what which when
out up one me more also some could them than then into only its over like our after
""")
_CJK_WORDS = _words("""
部署 数据库 服务器 配置 错误 超时 连接 用户 文件 路径 测试 版本 升级 日志 缓存 索引
查询 事务 会议 周末 孩子 学校 电影 音乐 旅行 爬山 咖啡 早餐 生日 假期 医生 公司
项目 需求 接口 权限 备份 恢复 网络 端口 内存 进程 线程 队列 任务 报告 问题 解决
""")


class TextGen:
    """Deterministic, realistic-looking agent transcripts."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.vocab = _WORDS
        self.weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(self.vocab))]
        self.cum = list(_accumulate(self.weights))

    def words(self, n: int) -> list[str]:
        return self.rng.choices(self.vocab, cum_weights=self.cum, k=n)

    def sentence(self) -> str:
        content = self.words(self.rng.randint(3, 9))
        filler = self.rng.choices(_FILLER, k=self.rng.randint(3, 8))
        verb = self.rng.choice(_VERBS)
        mixed = [*content, *filler, verb]
        self.rng.shuffle(mixed)
        return " ".join(mixed).capitalize() + self.rng.choice([".", ".", "?", "!"])

    def path(self) -> str:
        parts = self.rng.sample(self.vocab[200:], 3)
        return f"src/{parts[0]}/{parts[1]}_{parts[2]}.py"

    def code(self) -> str:
        return f"E{self.rng.randint(1000, 9999)}"

    def cjk(self) -> str:
        return "，".join(
            "".join(self.rng.choices(_CJK_WORDS, k=self.rng.randint(3, 8))) for _ in range(2)
        ) + "。"

    def message(self, index: int) -> dict[str, Any]:
        rng = self.rng
        if rng.random() < 0.02:
            return {"role": "user" if index % 2 == 0 else "assistant", "content": self.cjk()}
        kind = index % 4
        if kind == 0:
            return {"role": "user", "content": " ".join(self.sentence() for _ in range(
                rng.randint(1, 3)))}
        if kind == 1:
            args = json.dumps({"path": self.path(), "pattern": " ".join(self.words(2))})
            return {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{index}", "type": "function",
                "function": {"name": rng.choice(["read_file", "search", "run", "patch"]),
                             "arguments": args}}]}
        if kind == 2:
            lines = [f"{self.path()}:{rng.randint(1, 900)}: {self.code()} "
                     f"{' '.join(self.words(rng.randint(4, 10)))}"
                     for _ in range(rng.randint(1, 6))]
            return {"role": "tool", "tool_call_id": f"call_{index - 1}",
                    "content": "\n".join(lines)}
        return {"role": "assistant", "content": " ".join(self.sentence() for _ in range(
            rng.randint(2, 5)))}


def _accumulate(values: list[float]) -> list[float]:
    total, out = 0.0, []
    for v in values:
        total += v
        out.append(total)
    return out


def grow(store: SessionStore, gen: TextGen, target: int, have: int) -> tuple[int, float]:
    """Append sessions until ``target`` messages are stored; return (count, seconds)."""
    start = time.perf_counter()
    while have < target:
        n = min(target - have, gen.rng.randint(40, 160))
        sid = store.create_session(source="bench", title=" ".join(gen.words(3)))
        store.append_messages(sid, [gen.message(i) for i in range(n)])
        have += n
    return have, time.perf_counter() - start


def single_append_rate(store: SessionStore, gen: TextGen, n: int = 2000) -> float:
    sid = store.create_session(source="bench-single")
    messages = [gen.message(i) for i in range(n)]
    start = time.perf_counter()
    for m in messages:
        store.append_message(sid, m)
    return n / (time.perf_counter() - start)


@dataclass(frozen=True)
class Query:
    """One query with what counts as an answer to it."""

    text: str
    needle: str | None = None  # a result holding this text answers it
    words: tuple[str, ...] = ()  # or a result holding all these words
    session_id: str | None = None  # where the message it was taken from lives

    def found(self, hits: list[tuple[int, str]]) -> bool:
        """Whether (message id, text) results hold an answer."""
        if self.needle is not None:
            return any(self.needle in text for _, text in hits)
        return any(set(self.words) <= set(re.findall(r"[a-z]+", text.lower()))
                   for _, text in hits)

    @property
    def checked(self) -> bool:
        return self.needle is not None or bool(self.words)


_PATH = re.compile(r"src/\w+/\w+\.py")
_HAN = re.compile(r"[\u4e00-\u9fff]+")


class Row(NamedTuple):
    """A stored message as the query sampler sees it."""

    id: int
    session_id: str
    role: str
    text: str


def sample_rows(store: SessionStore, rng: random.Random, n: int) -> list[Row]:
    """``n`` random stored messages (id, session, role, indexed text)."""
    with closing(sqlite3.connect(store.path)) as conn:
        top = conn.execute("SELECT max(id) FROM messages").fetchone()[0] or 0
        picked = sorted(rng.sample(range(1, top + 1), min(n, top)))
        rows = conn.execute(
            f"SELECT id, session_id, role, coalesce(search_text, content, '') FROM messages "
            f"WHERE id IN ({', '.join('?' for _ in picked)})", picked).fetchall()
    return [Row(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]


def make_queries(store: SessionStore, gen: TextGen, per_kind: int,
                 seed: int) -> dict[str, list[Query]]:
    """Queries whose answers are in the database (sampled from its rows)."""
    rng = random.Random(seed)
    rows = sample_rows(store, rng, 400 * per_kind)
    middling = set(gen.vocab[30:300])
    queries: dict[str, list[Query]] = {k: [] for k in ("words", "rare", "question", "cjk")}
    for row in rows:
        words = [w for w in dict.fromkeys(re.findall(r"[a-z]+", row.text.lower()))
                 if w in middling]
        if len(queries["words"]) < per_kind and len(words) >= 3:
            picked = rng.sample(words, rng.randint(2, 3))
            queries["words"].append(Query(" ".join(picked), words=tuple(picked),
                                          session_id=row.session_id))
        elif (len(queries["question"]) < per_kind and row.role == "user"
              and len(words) >= 2):
            w1, w2 = rng.sample(words, 2)
            queries["question"].append(Query(f"how did we fix the {w1} {w2} error last week?",
                                             words=(w1, w2), session_id=row.session_id))
        paths = _PATH.findall(row.text)
        if len(queries["rare"]) < per_kind and paths:
            path = rng.choice(paths)
            queries["rare"].append(Query(path, needle=path, session_id=row.session_id))
        runs = [r for r in _HAN.findall(row.text) if len(r) >= 4]
        if len(queries["cjk"]) < per_kind and runs:
            run = rng.choice(runs)
            size = (1, 2, 4)[len(queries["cjk"]) % 3]
            start = rng.randrange(0, len(run) - size + 1)
            piece = run[start:start + size]
            queries["cjk"].append(Query(piece, needle=piece, session_id=row.session_id))
    queries["hostile"] = [
        Query(rng.choice(['"unbalanced', "AND OR NOT", "foo* -bar:baz", "(((", "c++ -> ::",
                          "NEAR(a b)", "'; DROP TABLE messages; --", "🎉🔥", "a\"b\"c"]))
        for _ in range(per_kind)
    ]
    return queries


@dataclass
class Timing:
    ms: list[float] = field(default_factory=list)
    hits: int = 0
    checked: int = 0

    def cell(self) -> str:
        rate = f"{100 * self.hits / self.checked:3.0f}%" if self.checked else "   -"
        return f"{pct(self.ms, .5):5.1f}/{pct(self.ms, .95):5.1f} {rate}"


def _timed(fn: Callable[[], list[tuple[int, str]]]) -> tuple[float, list[tuple[int, str]]]:
    start = time.perf_counter()
    out = fn()
    return 1000 * (time.perf_counter() - start), out


def _tool_hits(out: str) -> list[tuple[int, str]]:
    result = json.loads(out)
    return [(m["message_id"], " ".join([m["content"], *m.get("tool_calls", [])]))
            for group in result.get("results", [])
            for match in group["matches"] for m in match["context"]]


def measure(store: SessionStore, queries: dict[str, list[Query]],
            other_session: str) -> dict[str, Timing]:
    """Latency and hit rate of every query kind, then of the agent's ways to search."""
    out: dict[str, Timing] = {}

    def record(kind: str, query: Query, fn: Callable[[], list[tuple[int, str]]]) -> None:
        ms, hits = _timed(fn)
        timing = out.setdefault(kind, Timing())
        timing.ms.append(ms)
        if query.checked:
            timing.checked += 1
            timing.hits += query.found(hits)

    def plain(q: Query, **kwargs: Any) -> Callable[[], list[tuple[int, str]]]:
        return lambda: [(h.message_id, h.content) for h in store.search(q.text, limit=10,
                                                                        **kwargs)]

    for kind, items in queries.items():
        for q in items:
            record(kind, q, plain(q))
    for q in [*queries["words"], *queries["rare"]]:
        record("in-session", q, plain(q, session_id=q.session_id))
        record("agent", q, plain(q, exclude_active_of=other_session))
        record("tool", q, lambda q=q: _tool_hits(session_search(
            q.text, store=store, current_session_id=other_session)))
    return out


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def run(sizes: list[int], per_kind: int, folder: Path, say: Callable[[str], None]) -> None:
    gen = TextGen()
    store = SessionStore(folder / "state.db")
    agent_session = store.create_session(source="bench-agent")  # the "current" session
    have, build_seconds = 0, 0.0
    table: list[tuple[int, dict[str, Timing], float, float]] = []
    for size in sizes:
        say(f"building {size:,} messages…")
        have, seconds = grow(store, gen, size, have)
        build_seconds += seconds
        queries = make_queries(store, gen, per_kind, seed=size)
        measure(store, {k: v[:3] for k, v in queries.items()}, agent_session)  # warm up
        timings = measure(store, queries, agent_session)
        db_mb = sum(p.stat().st_size for p in folder.glob("state.db*")) / 1e6
        table.append((size, timings, have / build_seconds, db_mb))
        say(f"{size:,}: " + "  ".join(f"{k} {t.cell()}" for k, t in timings.items()))
    single = single_append_rate(store, gen)
    store.close()
    kinds = list(table[0][1])
    print(f"\nsearch latency p50/p95 in ms and hit rate, {per_kind} queries per kind "
          f"(in-session, agent, tool: the words and rare queries), limit 10 (tool: 3)\n")
    header = f"{'messages':>9}  " + "  ".join(f"{k:>16}" for k in kinds)
    print(header)
    print("-" * len(header))
    for size, timings, _, _ in table:
        print(f"{size:>9,}  " + "  ".join(f"{timings[k].cell():>16}" for k in kinds))
    print(f"\n{'messages':>9}  {'p50 ms':>7}  {'p95 ms':>7}  {'import msg/s':>12}  {'db MB':>6}")
    for size, timings, rate, db_mb in table:
        everything = [t for k in ("words", "rare", "question", "cjk", "hostile")
                      for t in timings[k].ms]
        print(f"{size:>9,}  {pct(everything, .5):7.1f}  {pct(everything, .95):7.1f}  "
              f"{rate:12,.0f}  {db_mb:6.0f}")
    print(f"\nimport msg/s: append_messages, one transaction per session (cumulative build)."
          f"\nappend_message, one transaction per message (the agent's path): "
          f"{single:,.0f} messages/s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000",
                        help="comma-separated message counts (ascending)")
    parser.add_argument("--queries", type=int, default=60, help="queries per kind")
    parser.add_argument("--dir", type=Path, default=None,
                        help="where to build the database (default: a temporary folder)")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    if args.dir:
        args.dir.mkdir(parents=True, exist_ok=True)
        run(sizes, args.queries, args.dir, say)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            run(sizes, args.queries, Path(tmp), say)
    return 0


if __name__ == "__main__":
    sys.exit(main())
