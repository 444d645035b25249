"""Which archived messages each node of a session stands for, read from the session store.

The agent stores the engine's output with ``SessionStore.sync_live``: every message that
left the live context is archived, and each new message is stored with
``meta["replaces"]`` = the ids archived in its gap. One gap can hold more than one new
message — a tool output cleared at the end of the head sits next to the summary node —
so the originals are shared out here: a tool result goes to the cleared copy with its
``tool_call_id``, a system message to the new system message, everything else to the
summary node (or the first replacement when there is none). The result is a tree: a node's
children are its originals, and an original may itself be an older node.

``build_index`` reads the session once, page by page, keeping only ids, roles, positions
and the replacement links; ``SessionIndex.stale`` tells when messages were added since.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from mnemo.context.lcm_nodes import NodeKind, node_of
from mnemo.context.markers import SYSTEM_ROLES
from mnemo.sessions import SessionStore, StoredMessage

__all__ = ["NodeRecord", "SessionIndex", "build_index"]

_PAGE = 1_000


@dataclass(frozen=True)
class NodeRecord:
    """One node as stored: its message, and whether that message is still live."""

    node_id: str
    kind: NodeKind
    message_id: int
    active: bool


@dataclass(frozen=True)
class _Row:
    role: str
    tool_call_id: str | None
    position: float
    compacted: bool


@dataclass
class SessionIndex:
    """The nodes of one session and the archived messages each stands for."""

    session_id: str
    message_count: int
    nodes: dict[str, NodeRecord] = field(default_factory=dict)
    node_at: dict[int, str] = field(default_factory=dict)  # message id -> node id
    owner: dict[int, int] = field(default_factory=dict)  # archived id -> its replacement's id
    children: dict[int, list[int]] = field(default_factory=dict)  # replacement -> originals

    def stale(self, store: SessionStore) -> bool:
        """True when messages were stored since this index was read."""
        return store.count_messages(self.session_id) != self.message_count

    def node_path(self, message_id: int) -> list[str]:
        """The nodes a message is inside, outermost first (empty: in no node)."""
        path: list[str] = []
        seen: set[int] = set()
        current = self.owner.get(message_id)
        while current is not None and current not in seen:
            seen.add(current)
            node_id = self.node_at.get(current)
            if node_id is not None:
                path.append(node_id)
            current = self.owner.get(current)
        return path[::-1]

    def counts(self) -> dict[str, int]:
        kinds = [r.kind for r in self.nodes.values()]
        return {
            "nodes": len(kinds),
            "summary_nodes": kinds.count("summary"),
            "tool_output_nodes": kinds.count("tool_output"),
            "live_nodes": sum(1 for r in self.nodes.values() if r.active),
            "archived_messages": len(self.owner),
        }


def build_index(store: SessionStore, session_id: str) -> SessionIndex:
    """Read the whole session (archived messages included) into a ``SessionIndex``."""
    count = store.count_messages(session_id)
    index = SessionIndex(session_id=session_id, message_count=count)
    rows: dict[int, _Row] = {}
    groups: dict[tuple[int, ...], list[int]] = defaultdict(list)
    offset = 0
    while True:
        page = store.read_session(session_id, offset, _PAGE, include_archived=True)
        for message in page:
            rows[message.id] = _Row(message.role, message.tool_call_id, message.position,
                                    message.compacted)
            _note_node(index, message)
            replaces = message.meta.get("replaces")
            if isinstance(replaces, list) and replaces:
                groups[tuple(int(i) for i in replaces)].append(message.id)
        if len(page) < _PAGE:
            break
        offset += _PAGE
    for originals, replacements in groups.items():
        _share_out(index, rows, originals, replacements)
    _adopt_orphans(index, rows)
    for replacement, owned in index.children.items():
        owned.sort(key=lambda i: rows[i].position)
        index.children[replacement] = owned
    return index


def _note_node(index: SessionIndex, message: StoredMessage) -> None:
    found = node_of(message.to_message()) if _may_be_node(message) else None
    if found is None:
        return
    node_id, kind = found
    known = index.nodes.get(node_id)
    # Only a message stored as a replacement (sync_live gives it a "replaces" list, empty
    # when its gap archived nothing) is the node; a later identical copy does not take
    # it over.
    if known is not None or "replaces" not in message.meta:
        return
    index.nodes[node_id] = NodeRecord(node_id, kind, message.id, message.active)
    index.node_at[message.id] = node_id


def _may_be_node(message: StoredMessage) -> bool:
    """A cheap test before ``node_of``: most messages are not nodes."""
    return "replaces" in message.meta and message.role in ("tool", "user", "assistant")


def _share_out(index: SessionIndex, rows: dict[int, _Row], originals: tuple[int, ...],
               replacements: list[int]) -> None:
    """Give each original of one gap to the replacement that stands for it."""
    replacements = sorted(replacements, key=lambda i: rows[i].position)
    by_call: dict[str, int] = {}
    system: int | None = None
    default: int | None = None
    for rid in replacements:
        row = rows[rid]
        if row.role == "tool" and row.tool_call_id:
            by_call.setdefault(row.tool_call_id, rid)
        elif row.role in SYSTEM_ROLES:
            system = rid if system is None else system
        elif index.node_at.get(rid) is not None and default is None:
            default = rid
    if default is None:
        others = [r for r in replacements if r not in by_call.values() and r != system]
        default = others[0] if others else replacements[0]
    for oid in originals:
        original = rows.get(oid)
        if original is None:  # not in this session: nothing to attach it to
            continue
        if original.role == "tool" and original.tool_call_id in by_call:
            target = by_call[original.tool_call_id]
        elif original.role in SYSTEM_ROLES and system is not None:
            target = system
        else:
            target = default
        index.owner[oid] = target
        index.children.setdefault(target, []).append(oid)


def _adopt_orphans(index: SessionIndex, rows: dict[int, _Row]) -> None:
    """Archived messages that no node claims go to the node that most likely took them.

    ``sync_live`` names what each replacement replaces (``replaces``) and lines repeated
    runs up with the compaction's shape, so this is rare; it remains a safety net for
    archives written by older versions and for edits made outside mnemo. Such messages
    left the context in a compaction all the same, and ``context_expand`` only opens
    nodes. A tool result goes to a cleared copy of itself
    (same ``tool_call_id``) that claims nothing; anything else to the summary node just
    before it. Only a node stored after the message can take it, so the tree has no
    cycles.
    """
    summaries = sorted((rows[r.message_id].position, r.message_id)
                       for r in index.nodes.values() if r.kind == "summary")
    empty_tool_nodes: dict[str, list[int]] = defaultdict(list)  # by tool_call_id
    for record in index.nodes.values():
        call_id = rows[record.message_id].tool_call_id
        if record.kind == "tool_output" and call_id and record.message_id not in index.children:
            empty_tool_nodes[call_id].append(record.message_id)
    for mid, row in sorted(rows.items()):
        current = index.owner.get(mid)
        if not row.compacted or current in index.node_at:
            continue
        copies = [n for n in empty_tool_nodes.get(row.tool_call_id or "", []) if n > mid]
        if row.role == "tool" and copies:
            target: int | None = copies[0]
            empty_tool_nodes[row.tool_call_id or ""].remove(copies[0])
        else:
            target = _summary_before(summaries, mid, row.position)
        if target is None:
            continue
        if current is not None:
            index.children[current].remove(mid)
        index.owner[mid] = target
        index.children.setdefault(target, []).append(mid)


def _summary_before(summaries: list[tuple[float, int]], mid: int, position: float) -> int | None:
    """The summary node stored after message ``mid`` that sits closest before it (or,
    failing that, the first one after it)."""
    later = [(p, nid) for p, nid in summaries if nid > mid]
    before = [nid for p, nid in later if p <= position]
    if before:
        return before[-1]
    return later[0][1] if later else None
