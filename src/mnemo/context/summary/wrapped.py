"""Items a model wrapped over lines, joined back before a summary is parsed.

The embedded 0.5B model, rewriting the previous summary with a few new turns, copies its
long lines wrapped at about 65 characters, a piece now and then under a bullet of its
own and words dropped at the breaks ("- … I started pottery and" / "hiked the Gerês
trail with Pixel and Joana. I finished reading "A"; "- … I started pottery" / "• Lisbon
with my friend Joana."). Parsed line by line, every piece would be an item, and the next
rewrite would copy the pieces on. ``unwrapped`` joins them: a line goes on the item
before it when it is no heading and no new item (a bullet of another kind than the
item's counts as none), and the line before stopped without a stop — and it starts in
lower case, or follows a comma, a word no sentence ends on (``DANGLING``), or a line at
least ``_WRAPPED_CHARS`` long. A joined item whose last sentence stops short loses that
piece ("… when I was ten. My best friend"). A summary written one item a line (the local
summariser's, a model's that does not wrap) comes out as it was.
"""

from __future__ import annotations

import re

from mnemo.context.textscan import sentences

__all__ = ["DANGLING", "unwrapped"]

# Words a sentence does not end on: a line that does was cut there.
DANGLING = frozenset(("and", "or", "but", "the", "a", "an", "to", "of", "in", "on", "at",
                      "for", "with", "from", "by", "that", "which", "who", "my", "your",
                      "his", "her", "their", "its", "our"))
_WRAPPED_CHARS = 50
_ITEM_START = re.compile(r"^(?:#|[-*•] |\[[ x]\] |\d+[.)] )")
_BULLET = re.compile(r"^([-*•]) ")


def unwrapped(text: str) -> str:
    """``text`` with the lines that go on an item joined to it (see the module
    docstring); a "•" item becomes a "-" item."""
    out: list[str] = []
    joined: set[int] = set()
    bullet = ""  # the bullet of the item being written
    for raw in text.splitlines():
        line = raw.strip()
        before = out[-1] if out else ""
        mark = _BULLET.match(line)
        piece = line[mark.end():] if mark and mark.group(1) != bullet else line
        if (piece and before and not _ITEM_START.match(piece) and not before.startswith("#")
                and before[-1:] not in ".!?…:)]" and (
                    piece[0].islower() or before[-1:] == ","
                    or before.rsplit(" ", 1)[-1].lower() in DANGLING
                    or len(before) >= _WRAPPED_CHARS)):
            out[-1] = f"{before} {piece}"
            joined.add(len(out) - 1)
            continue
        bullet = mark.group(1) if mark else ""
        out.append(f"- {line[mark.end():]}" if mark else line)
    for at in joined:
        pieces = sentences(out[at])
        if len(pieces) > 1 and pieces[-1][-1:] not in ".!?…\"'”’)]":
            out[at] = " ".join(pieces[:-1])
    return "\n".join(out)
