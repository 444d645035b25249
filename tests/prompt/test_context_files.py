"""Context files (B4): which file wins, the walk to the git root, front matter, the cap."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemo.prompt import build_context_files_prompt, find_context_files, load_context_files
from mnemo.prompt.context_files import find_git_root, truncate_content
from mnemo.prompt.front_matter import split_front_matter


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _names(cwd: Path) -> tuple[str, list[str]]:
    kind, paths = find_context_files(cwd)
    return kind, [p.name for p in paths]


# -- discovery --------------------------------------------------------------------------


def test_nothing_found_gives_empty_text(project: Path) -> None:
    assert find_context_files(project) == ("", [])
    assert build_context_files_prompt(project) == ""


@pytest.mark.parametrize("name", [".mnemo.md", "MNEMO.md", ".hermes.md", "HERMES.md"])
def test_each_mnemo_name_is_found_in_cwd(project: Path, name: str) -> None:
    _write(project / name, "Use tabs.")
    assert _names(project) == ("mnemo", [name])
    assert "Use tabs." in build_context_files_prompt(project)


def test_mnemo_names_in_priority_order(project: Path) -> None:
    for name in ("HERMES.md", ".hermes.md", "MNEMO.md", ".mnemo.md"):
        _write(project / name, name)
    assert _names(project) == ("mnemo", [".mnemo.md"])
    (project / ".mnemo.md").unlink()
    assert _names(project) == ("mnemo", ["MNEMO.md"])
    (project / "MNEMO.md").unlink()
    assert _names(project) == ("mnemo", [".hermes.md"])
    (project / ".hermes.md").unlink()
    assert _names(project) == ("mnemo", ["HERMES.md"])


@pytest.mark.parametrize("name", [".mnemo.md", "MNEMO.md", ".hermes.md", "HERMES.md"])
def test_mnemo_file_found_up_to_the_git_root(project: Path, name: str) -> None:
    (project / ".git").mkdir()
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    _write(project / name, "root rules")
    kind, paths = find_context_files(deep)
    assert (kind, paths) == ("mnemo", [project / name])
    # Shown with its name (it is not below cwd), and loaded.
    assert "## " + name in build_context_files_prompt(deep)


def test_nearer_mnemo_file_wins_over_one_higher_up(project: Path) -> None:
    (project / ".git").mkdir()
    _write(project / ".mnemo.md", "root")
    _write(project / "sub" / "HERMES.md", "sub")
    assert find_context_files(project / "sub")[1] == [project / "sub" / "HERMES.md"]


def test_walk_stops_at_the_git_root(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    repo = outer / "repo"
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    (repo / ".git").write_text("gitdir: elsewhere\n")  # a worktree's .git is a file
    _write(outer / ".mnemo.md", "outside the repo")
    if find_git_root(outer) is not None:
        pytest.skip("the temp folder is inside a git repository")
    assert find_git_root(deep) == repo
    assert find_context_files(deep) == ("", [])
    _write(repo / "MNEMO.md", "repo root")
    assert find_context_files(deep)[1] == [repo / "MNEMO.md"]


def test_outside_a_repo_only_cwd_is_searched(tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    child = parent / "child"
    child.mkdir(parents=True)
    if find_git_root(child) is not None:
        pytest.skip("the temp folder is inside a git repository")
    _write(parent / ".mnemo.md", "parent rules")
    assert find_context_files(child) == ("", [])
    assert find_context_files(parent)[0] == "mnemo"


@pytest.mark.parametrize(("names", "kind", "winner"), [
    (["AGENTS.md", "agents.md"], "agents", "AGENTS.md"),
    (["agents.md"], "agents", "agents.md"),
    (["CLAUDE.md", "claude.md"], "claude", "CLAUDE.md"),
    (["claude.md"], "claude", "claude.md"),
])
def test_agents_and_claude_names(project: Path, names: list[str], kind: str,
                                 winner: str) -> None:
    for name in names:
        _write(project / name, name)
    assert _names(project) == (kind, [winner])


@pytest.mark.parametrize("name", ["AGENTS.md", "CLAUDE.md", ".cursorrules"])
def test_cwd_only_kinds_are_not_searched_upwards(project: Path, name: str) -> None:
    (project / ".git").mkdir()
    _write(project / name, "rules")
    (project / "sub").mkdir()
    assert find_context_files(project / "sub") == ("", [])


def test_cursor_rules_and_mdc_files_load_together(project: Path) -> None:
    _write(project / ".cursorrules", "rule zero")
    _write(project / ".cursor" / "rules" / "b.mdc", "---\nglobs: '*.py'\n---\nrule b")
    _write(project / ".cursor" / "rules" / "a.mdc", "rule a")
    _write(project / ".cursor" / "rules" / "notes.txt", "not a rule")
    kind, paths = find_context_files(project)
    assert kind == "cursor"
    assert [p.name for p in paths] == [".cursorrules", "a.mdc", "b.mdc"]
    text = build_context_files_prompt(project)
    assert "## .cursor/rules/a.mdc" in text and "rule b" in text and "globs" not in text
    assert text.index("rule zero") < text.index("rule a") < text.index("rule b")


def test_only_mdc_files_are_enough_for_the_cursor_kind(project: Path) -> None:
    _write(project / ".cursor" / "rules" / "only.mdc", "rule")
    assert _names(project) == ("cursor", ["only.mdc"])


@pytest.mark.parametrize(("present", "expected"), [
    ([".mnemo.md", "AGENTS.md", "CLAUDE.md", ".cursorrules"], "mnemo"),
    (["AGENTS.md", "CLAUDE.md", ".cursorrules"], "agents"),
    (["CLAUDE.md", ".cursorrules"], "claude"),
    ([".cursorrules"], "cursor"),
])
def test_one_kind_is_loaded_first_match_wins(project: Path, present: list[str],
                                             expected: str) -> None:
    for name in present:
        _write(project / name, f"CONTENT OF {name}")
    result = load_context_files(project)
    assert result.kind == expected
    assert len(result.files) == 1
    for name in present:
        assert (f"CONTENT OF {name}" in result.text) == (name == result.files[0].name)


def test_mnemo_file_above_cwd_beats_agents_md_in_cwd(project: Path) -> None:
    (project / ".git").mkdir()
    _write(project / ".mnemo.md", "from the root")
    _write(project / "sub" / "AGENTS.md", "from sub")
    result = load_context_files(project / "sub")
    assert result.kind == "mnemo" and "from sub" not in result.text


# -- front matter -----------------------------------------------------------------------


def test_front_matter_is_stripped(project: Path) -> None:
    _write(project / "AGENTS.md", "---\nmodel: x\ntools: [a]\n---\n\n# Rules\nUse uv.\n")
    text = build_context_files_prompt(project)
    assert "model: x" not in text and "---" not in text
    assert text.endswith("## AGENTS.md\n\n# Rules\nUse uv.")


def test_unclosed_front_matter_is_kept(project: Path) -> None:
    body = "---\nmodel: x\n# Rules\nUse uv."
    _write(project / "AGENTS.md", body)
    assert build_context_files_prompt(project).endswith(body)


def test_front_matter_split_reports_the_body_line() -> None:
    split = split_front_matter("---\na: 1\nb: 2\n---\nbody\n")
    assert (split.raw, split.body, split.body_line) == ("a: 1\nb: 2\n", "body\n", 5)
    assert split_front_matter("---\n...\nx").body == "x"
    assert split_front_matter("--- not a fence\n---\nx").raw is None
    assert split_front_matter("text\n---\nx\n---\n").raw is None


def test_utf8_bom_is_dropped_not_blocked(project: Path) -> None:
    (project / "AGENTS.md").write_bytes("\ufeff# Rules\r\nUse uv.\r\n".encode())
    result = load_context_files(project)
    assert not result.findings
    assert result.text.endswith("## AGENTS.md\n\n# Rules\nUse uv.")


# -- the cap ----------------------------------------------------------------------------


def test_truncation_keeps_70_percent_head_and_20_percent_tail(project: Path) -> None:
    body = "".join(chr(ord("a") + (i // 1000) % 26) for i in range(50_000))
    assert len(body) == 50_000
    _write(project / "AGENTS.md", body)
    loaded = load_context_files(project).files[0]
    assert loaded.truncated and loaded.original_chars == 50_000
    text = loaded.text
    assert text.startswith(body[:14_000])
    assert text.endswith(body[-4_000:])
    marker = text[14_000:-4_000]
    assert "AGENTS.md" in marker and "32,000" in marker and "50,000" in marker
    assert len(text) <= 20_000
    # Exactly the head and the tail: the marker holds nothing of the cut middle.
    assert text == body[:14_000] + marker + body[-4_000:]
    assert body[14_000:46_000] not in text


def test_truncate_content_numbers_for_other_caps() -> None:
    text = "x" * 10_000
    assert truncate_content(text, "f.md", 10_000) == text
    cut = truncate_content("h" * 3_000 + "m" * 5_000 + "t" * 2_000, "f.md", 5_000)
    assert cut.startswith("h" * 3_000 + "m" * 500 + "\n\n[")
    assert cut.endswith("]\n\n" + "t" * 1_000)
    assert "5,500 of 10,000" in cut


def test_cap_follows_max_chars(project: Path) -> None:
    _write(project / "AGENTS.md", "y" * 3_000)
    assert "cut here" not in build_context_files_prompt(project)
    assert "cut here" in build_context_files_prompt(project, max_chars=2_000)


def test_unreadable_file_is_left_out(project: Path) -> None:
    path = _write(project / "AGENTS.md", "rules")
    path.chmod(0)
    try:
        try:
            path.read_text()
            pytest.skip("running as root: permissions do not apply")
        except PermissionError:
            pass
        assert load_context_files(project).text == ""
    finally:
        path.chmod(0o644)
