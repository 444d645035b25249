"""``LosslessContextEngine`` (``context.engine: lcm``): compaction that loses nothing (C16).

The engine compacts like the built-in compressor — same trigger, same head and tail
boundaries, same summariser with its fallback and cooldown, same C12 repairs, same report
— because it *is* the compressor's ``compress``: it overrides the two hooks of that
template (``_keep_cleared``, ``_summary_header``) and ``_finish``. What differs is what a
compaction leaves behind:

* the summarised span becomes one **summary node** (``lcm_nodes.py``): the summary with a
  header naming a node id and the tools that bring the originals back;
* an old tool output cleared by step 1 becomes a **tool-output node** the same way;
* every original stays in the session archive (the agent stores each message as it
  happens, and ``SessionStore.sync_live`` archives what leaves the live context), and
  the node's stored message points at them (``meta["replaces"]``);
* when an older summary node falls into a new span, the new node summarises the older
  node's summary together with the new turns (the text is never nested) and the older
  node becomes one of its children: summaries of summaries, a tree the model can walk
  down with ``context_expand``.

``context_grep`` (``lcm_grep.py``) and ``context_expand`` (``lcm_expand.py``) read the
archive through a ``SessionIndex`` (``lcm_index.py``) that maps node ids to their
messages; it is read from the store when a session starts and again when the session has
grown since.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from mnemo.context.compressor import ContextCompressor
from mnemo.context.engine import Summarizer
from mnemo.context.lcm_expand import CONTEXT_EXPAND_SCHEMA, context_expand
from mnemo.context.lcm_grep import CONTEXT_GREP_SCHEMA, context_grep
from mnemo.context.lcm_index import SessionIndex, build_index
from mnemo.context.lcm_nodes import (
    NodeKind,
    Span,
    new_node_id,
    node_of,
    summary_node_header,
    with_tool_node,
)
from mnemo.context.repair import Origins
from mnemo.context.report import Draft
from mnemo.errors import MnemoError
from mnemo.messages import Message
from mnemo.sessions import SessionStore
from mnemo.tokens import estimate_message_tokens_rough

if TYPE_CHECKING:
    from mnemo.config import MnemoConfig
    from mnemo.home import Home

__all__ = ["LosslessContextEngine"]

log = logging.getLogger("mnemo.context")

_TOOLS = {"context_grep": context_grep, "context_expand": context_expand}


class LosslessContextEngine(ContextCompressor):
    """The ``lcm`` engine: the compressor's compaction, with every original recoverable.

    ``sessions`` is the store the agent writes the session to (``from_config`` opens
    ``$MNEMO_HOME/state.db``); the other settings are ``ContextCompressor``'s.
    """

    # Its summaries are nodes made at compaction time (C16); background preparation (C17)
    # is the compressor's only, for now.
    background_capable = False

    def __init__(self, *, context_length: int, sessions: SessionStore | None = None,
                 **settings: Any) -> None:
        super().__init__(context_length=context_length, **settings)
        self.sessions = sessions
        self._owns_store = False
        self.session_id: str | None = None
        self.last_node_id: str | None = None
        self._index: SessionIndex | None = None
        self._made: dict[str, NodeKind] = {}  # nodes this engine put in an output
        self._pending: dict[str, NodeKind] = {}  # made by the running compress call
        self._live_nodes: list[str] = []

    @classmethod
    def from_config(
        cls,
        config: MnemoConfig,
        *,
        home: Home,
        summarizer: Summarizer | None = None,
        context_length: int,
        model: str = "",
    ) -> Self:
        engine = super().from_config(config, home=home, summarizer=summarizer,
                                     context_length=context_length, model=model)
        from mnemo.storage.factory import open_session_store

        engine.sessions = open_session_store(config, home)
        engine._owns_store = True
        return engine

    @property
    def name(self) -> str:
        return "lcm"

    def close(self) -> None:
        """Close the session store if this engine opened it (``from_config``)."""
        if self.sessions is not None and self._owns_store:
            self.sessions.close()

    # -- sessions -------------------------------------------------------------------------

    def on_session_start(self, session_id: str) -> None:
        super().on_session_start(session_id)
        self.session_id = session_id
        self._forget_nodes()
        if self.sessions is None:
            return
        try:
            self._index = build_index(self.sessions, session_id)
        except MnemoError as exc:  # the tools report it when they are used
            log.warning("lcm: cannot read session %s from the archive (%s)", session_id, exc)

    def on_session_reset(self) -> None:
        super().on_session_reset()
        self.session_id = None
        self._forget_nodes()

    def _forget_nodes(self) -> None:
        self._index = None
        self._made.clear()
        self._pending.clear()
        self._live_nodes = []
        self.last_node_id = None

    def get_status(self) -> dict[str, Any]:
        status = super().get_status()
        counts = self._index.counts() if self._index is not None else {}
        known = set(self._index.nodes) if self._index is not None else set()
        made_only = [k for n, k in self._made.items() if n not in known]
        status.update({
            "session_id": self.session_id,
            "archive": self.sessions.location if self.sessions is not None else None,
            "nodes": counts.get("nodes", 0) + len(made_only),
            "summary_nodes": counts.get("summary_nodes", 0) + made_only.count("summary"),
            "tool_output_nodes": (counts.get("tool_output_nodes", 0)
                                  + made_only.count("tool_output")),
            "live_nodes": len(self._live_nodes),
            "last_node_id": self.last_node_id,
        })
        return status

    # -- tools ----------------------------------------------------------------------------

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [copy.deepcopy(CONTEXT_GREP_SCHEMA), copy.deepcopy(CONTEXT_EXPAND_SCHEMA)]

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        tool = _TOOLS.get(name)
        if tool is None:
            return super().handle_tool_call(name, args)
        given: Any = args  # the model's arguments, whatever their type
        if not isinstance(given, dict):
            return _error(f"{name} takes an object of arguments, e.g. "
                          f"{json.dumps(_EXAMPLES[name])}")
        if self.sessions is None:
            return _error("the lcm engine has no session archive; it is built with "
                          "create_engine (context.engine: lcm) or given sessions=")
        if self.session_id is None:
            return _error(f"{name} works inside a session and none is active; start one "
                          "first")
        try:
            result = tool(args, store=self.sessions, index=self.index())
        except MnemoError as exc:
            log.warning("lcm: %s failed (%s)", name, exc)
            return _error(f"the session archive could not be read ({exc}); answer from "
                          "the summary and say the details are unavailable")
        return json.dumps(result, ensure_ascii=False)

    def index(self) -> SessionIndex:
        """The node index of the current session, read again if the session has grown."""
        assert self.sessions is not None and self.session_id is not None
        if self._index is None or self._index.stale(self.sessions):
            self._index = build_index(self.sessions, self.session_id)
        return self._index

    # -- compress: the compressor's steps, with nodes ------------------------------------

    def compress(
        self,
        messages: Sequence[Message],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
    ) -> list[Message]:
        self._pending = {}
        return super().compress(messages, current_tokens, focus_topic)

    def _keep_cleared(self, draft: Draft, indices: list[int]) -> None:
        """Cleared outputs that stay in the context become tool-output nodes (keeping the
        lines that say what failed, as the compressor does)."""
        for i in indices:
            draft.pruned_list[i] = with_tool_node(draft.pruned_list[i],
                                                  self._node_id("tool_output"))
            draft.tokens[i] = estimate_message_tokens_rough(draft.pruned_list[i])
        super()._keep_cleared(draft, indices)

    def revise(self, messages: Sequence[Message]) -> list[Message] | None:
        """Nothing: a summary node stays the text it was made with, which the session's
        archive and the node tree record (C16); a correction reaches the summary at the
        next compaction, as the turns kept whole after it."""
        return None

    def _summary_header(self, covered: int, span: Span) -> str:
        """The summary node's header: its id, what it stands for, its child nodes."""
        return summary_node_header(self._node_id("summary"), covered, span.child_nodes)

    def _node_id(self, kind: NodeKind) -> str:
        known = self._index.nodes if self._index is not None else {}
        taken = {*known, *self._made, *self._pending}
        node_id = new_node_id(taken)
        self._pending[node_id] = kind
        return node_id

    def _finish(self, draft: Draft, out: list[Message],
                origins: Origins | None) -> list[Message]:
        """The compressor's report and progress guard, then which nodes made it out."""
        result = super()._finish(draft, out, origins)
        live: list[str] = []
        for message in result:
            found = node_of(message)
            if found is None:
                continue
            node_id, kind = found
            live.append(node_id)
            if node_id in self._pending:
                self._made[node_id] = kind
                if kind == "summary":
                    self.last_node_id = node_id
                    log.log(self._level, "lcm: summary node %s stands for %d messages",
                            node_id, len(self.last_report.removed) if self.last_report else 0)
        self._pending = {}
        self._live_nodes = live
        return result


_EXAMPLES = {"context_grep": {"pattern": "ENOSPC"},
             "context_expand": {"node_id": "n1a2b3c4d"}}


def _error(message: str) -> str:
    return json.dumps({"success": False, "error": message}, ensure_ascii=False)
