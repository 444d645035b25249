"""``mnemo skills``: list the installed skills and read one, as the model would.

``list`` shows every skill of ``$MNEMO_HOME/skills`` and ``skills.external_dirs`` (with
the problems found, such as a broken front matter); ``view`` prints a skill's SKILL.md,
going through the same lookup as the model's ``skill_view`` tool.
"""

from __future__ import annotations

import json

import click

from mnemo.cli.common import CliState, echo_json, pass_state
from mnemo.errors import UsageError
from mnemo.prompt import catalog_for, skill_view

__all__ = ["skills"]


@click.group()
def skills() -> None:
    """List and read skills (folders with a SKILL.md under $MNEMO_HOME/skills/)."""


@skills.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print skills and problems as JSON.")
@pass_state
def list_skills(state: CliState, as_json: bool) -> None:
    """List every skill: name, category, where it comes from, description.

    Skills are folders with a SKILL.md under $MNEMO_HOME/skills/<category>/<name>/ and
    the folders in skills.external_dirs; a local skill wins over an external one of the
    same name. A SKILL.md whose front matter is broken is listed as a problem and left
    out of the prompt until it is fixed.
    """
    catalog = catalog_for(state.home, state.config)
    ordered = sorted(catalog.skills, key=lambda s: (s.category, s.name))
    if as_json:
        echo_json({"skills": [s.to_dict() for s in ordered],
                   "problems": [p.to_dict() for p in catalog.problems]})
        return
    if not ordered:
        click.echo(f"no skills in {state.home.skills_dir} "
                   "(a skill is a folder <category>/<name>/ with a SKILL.md)")
    category = None
    for skill in ordered:
        if skill.category != category:
            category = skill.category
            about = catalog.categories.get(category)
            click.echo(f"{category}:" + (f" {about}" if about else ""))
        notes = []
        if skill.source != "local":
            notes.append(f"from {skill.source}")
        if skill.platforms:
            notes.append(f"only on {', '.join(skill.platforms)}")
        suffix = f"  [{'; '.join(notes)}]" if notes else ""
        click.echo(f"  {skill.name}: {skill.description}{suffix}")
    for problem in catalog.problems:
        click.echo(f"problem: {problem.path}: {problem.message}", err=True)


def _for_people(error: str, state: CliState) -> str:
    """The model-facing error of ``skill_view`` reworded for a person at the terminal."""
    where = f"{state.home.skills_dir}/<category>/<name>/SKILL.md"
    for model_words, cli_words in (
        ("pass a skill name from <available_skills>", "give the name of a skill"),
        ("use a name listed in <available_skills>", "see `mnemo skills list` for the names"),
        ("carry on without one", f"add one as {where}"),
        ("; ask the user to check it", "; check that file's permissions"),
    ):
        error = error.replace(model_words, cli_words)
    if not any(w in error for w in ("mnemo skills list", "add one as")):
        error += " (`mnemo skills list` shows the names)"
    return error


@skills.command("view")
@click.argument("name")
@click.option("--file", "file_path", default=None,
              help="Show this supporting file of the skill instead of SKILL.md.")
@pass_state
def view(state: CliState, name: str, file_path: str | None) -> None:
    """Print the full SKILL.md of skill NAME (what skill_view returns to the model)."""
    result = json.loads(skill_view(name, file_path=file_path, home=state.home,
                                   config=state.config))
    if not result["success"]:
        raise UsageError(_for_people(str(result["error"]), state))
    for warning in result.get("warnings", []):
        click.echo(f"warning: {warning}", err=True)
    content = result["content"]
    click.echo(content, nl=not content.endswith("\n"))
