"""Session search latency at 10k, 100k and 1M stored messages, and import throughput.

One database grows through the sizes (10k → 100k → 1M messages, in sessions of 40–160
messages). The text is generated from a fixed seed to look like agent work: user asks,
assistant answers and tool calls, tool outputs with paths, error codes and numbers,
words drawn from a Zipf distribution over an everyday + programming vocabulary, and
about 2% of the messages in Chinese. At each size a fixed mix of queries runs through
``SessionStore.search`` (the ranking ``session_search`` uses) and p50/p95 latency is
reported per kind of query:

* ``words``     two or three content words of middling frequency;
* ``rare``      an identifier or a rare word (a path, an error code);
* ``question``  a natural-language question ("how did we fix the … error?");
* ``cjk``       Chinese queries of 1, 2 and 4 characters;
* ``hostile``   quotes, operators and punctuation (must neither fail nor be slow).

Import throughput is measured both ways the store is used: ``append_messages`` with one
transaction per session (an import) and ``append_message`` per message (the agent).

    .venv/bin/python bench/search_bench.py [--sizes 10000,100000,1000000] [--queries 60]

The 1M step takes a few minutes and about 1 GB of disk in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mnemo.sessions import SessionStore


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


def make_queries(gen: TextGen, per_kind: int) -> dict[str, list[str]]:
    rng = random.Random(11)
    mid = gen.vocab[30:300]
    rare = gen.vocab[350:]
    return {
        "words": [" ".join(rng.sample(mid, rng.randint(2, 3))) for _ in range(per_kind)],
        "rare": [rng.choice([gen.path(), gen.code(), rng.choice(rare)]) for _ in range(per_kind)],
        "question": [
            f"how did we fix the {rng.choice(mid)} {rng.choice(rare)} error last week?"
            for _ in range(per_kind)
        ],
        "cjk": [
            rng.choice(_CJK_WORDS)[0] if i % 3 == 0 else
            rng.choice(_CJK_WORDS) if i % 3 == 1 else
            rng.choice(_CJK_WORDS) + rng.choice(_CJK_WORDS)
            for i in range(per_kind)
        ],
        "hostile": [
            rng.choice(['"unbalanced', "AND OR NOT", "foo* -bar:baz", "(((", "c++ -> ::",
                        "NEAR(a b)", "'; DROP TABLE messages; --", "🎉🔥", "a\"b\"c"])
            for _ in range(per_kind)
        ],
    }


def measure(store: SessionStore, queries: dict[str, list[str]]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    for kind, items in queries.items():
        for q in items:
            start = time.perf_counter()
            store.search(q, limit=10)
            times.setdefault(kind, []).append(1000 * (time.perf_counter() - start))
    return times


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def run(sizes: list[int], per_kind: int, folder: Path, say: Callable[[str], None]) -> None:
    gen = TextGen()
    store = SessionStore(folder / "state.db")
    queries = make_queries(gen, per_kind)
    have, build_seconds = 0, 0.0
    rows: list[str] = []
    for size in sizes:
        say(f"building {size:,} messages…")
        have, seconds = grow(store, gen, size, have)
        build_seconds += seconds
        measure(store, {k: v[:3] for k, v in queries.items()})  # warm the page cache
        times = measure(store, queries)
        everything = [t for v in times.values() for t in v]
        db_mb = sum(p.stat().st_size for p in folder.glob("state.db*")) / 1e6
        cells = "  ".join(f"{pct(v, .5):6.1f}/{pct(v, .95):6.1f}" for v in times.values())
        rows.append(f"{size:>9,}  {pct(everything, .5):7.1f} {pct(everything, .95):7.1f}  "
                    f"{cells}  {have / build_seconds:9,.0f}  {db_mb:8.0f}")
        say(rows[-1])
    single = single_append_rate(store, gen)
    store.close()
    kinds = "  ".join(f"{k:>13}" for k in queries)
    print(f"\nsearch latency in ms (p50 / p95), {per_kind} queries per kind, limit 10\n")
    header = (f"{'messages':>9}  {'p50':>7} {'p95':>7}  {kinds}  {'import/s':>9}  "
              f"{'db MB':>8}")
    print(header)
    print("-" * len(header))
    for row in rows:
        print(row)
    print(f"\nimport/s: append_messages, one transaction per session (cumulative build)."
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
