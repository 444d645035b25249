"""``mnemo skills list|view`` driven through the real entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from mnemo.cli.main import cli
from mnemo.home import Home


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _skill(root: Path, category: str, name: str, front_matter: str, body: str = "") -> Path:
    folder = root / category / name
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\n{front_matter}---\n{body}", encoding="utf-8")
    return path


def _install(home: Home) -> None:
    _skill(home.skills_dir, "dev", "code-review", "name: code-review\n"
           "description: Review a change thoroughly\n", "# Review\n1. Read the diff.\n")
    _skill(home.skills_dir, "ops", "deploy", "name: deploy\ndescription: Ship it\n"
           "platforms: [telegram]\n")
    _skill(home.skills_dir, "ops", "broken", "name: [oops\n")


def test_list_shows_skills_by_category_and_problems(mnemo_home: Home) -> None:
    _install(mnemo_home)
    code, out, err = run("skills", "list")
    assert code == 0
    assert out.splitlines() == [
        "dev:",
        "  code-review: Review a change thoroughly",
        "ops:",
        "  deploy: Ship it  [only on telegram]",
    ]
    assert "problem:" in err and "broken" in err and "front matter" in err


def test_list_json(mnemo_home: Home, tmp_path: Path) -> None:
    _install(mnemo_home)
    external = tmp_path / "shared"
    _skill(external, "team", "release", "name: release\ndescription: Cut a release\n")
    mnemo_home.config_file.write_text(f"skills:\n  external_dirs: ['{external}']\n")
    code, out, _ = run("skills", "list", "--json")
    assert code == 0
    data = json.loads(out)
    assert [s["name"] for s in data["skills"]] == ["code-review", "deploy", "release"]
    assert data["skills"][2]["source"] == str(external)
    assert len(data["problems"]) == 1


def test_list_with_no_skills_says_where_to_put_them(mnemo_home: Home) -> None:
    code, out, _ = run("skills", "list")
    assert code == 0 and "no skills in" in out and "SKILL.md" in out


def test_view_prints_the_skill(mnemo_home: Home) -> None:
    _install(mnemo_home)
    code, out, _ = run("skills", "view", "code-review")
    assert code == 0
    assert out == (mnemo_home.skills_dir / "dev" / "code-review" / "SKILL.md").read_text()


def test_view_unknown_name_suggests_close_ones(mnemo_home: Home) -> None:
    _install(mnemo_home)
    code, out, err = run("skills", "view", "code-reveiw")
    assert code == 2 and out == ""
    assert err.startswith("error: no skill named 'code-reveiw'; did you mean: code-review?")
    assert "mnemo skills list" in err


def test_help_texts() -> None:
    for args in (["skills", "--help"], ["skills", "list", "--help"],
                 ["skills", "view", "--help"]):
        code, out, _ = run(*args)
        assert code == 0 and "SKILL.md" in out


def test_console_script_in_a_subprocess(mnemo_home: Home) -> None:
    _install(mnemo_home)
    exe = Path(sys.executable).with_name("mnemo")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "mnemo.cli.main"]
    env = {**os.environ, "MNEMO_HOME": str(mnemo_home.root)}
    listed = subprocess.run([*command, "skills", "list", "--json"], env=env,
                            capture_output=True, text=True, check=False, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert "code-review" in [s["name"] for s in json.loads(listed.stdout)["skills"]]
    viewed = subprocess.run([*command, "skills", "view", "code-review"], env=env,
                            capture_output=True, text=True, check=False, timeout=60)
    assert viewed.returncode == 0 and "1. Read the diff." in viewed.stdout
