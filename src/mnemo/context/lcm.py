"""``LosslessContextEngine`` (``context.engine: lcm``): compaction that loses nothing (C16).

The engine compacts like the built-in compressor — same trigger, same head and tail
boundaries, same summariser with its fallback and cooldown, same C12 repairs, same report
— and is built on it. What differs is what a compaction leaves behind:

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

``context_grep`` and ``context_expand`` (``lcm_tools.py``) read the archive through a
``SessionIndex`` (``lcm_index.py``) that maps node ids to their messages; it is read from
the store when a session starts and again when the session has grown since.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from mnemo.context.assembly import assemble, sanitize_tool_pairs
from mnemo.context.boundaries import find_head_end, find_tail_start, system_offset
from mnemo.context.compressor import (
    _MIN_MIDDLE_TOKENS,
    ContextCompressor,
    _check_messages,
    _Draft,
)
from mnemo.context.engine import Summarizer
from mnemo.context.lcm_index import SessionIndex, build_index
from mnemo.context.lcm_nodes import (
    NodeKind,
    new_node_id,
    node_of,
    summary_node_header,
    take_apart_span,
    with_tool_node,
)
from mnemo.context.lcm_tools import (
    CONTEXT_EXPAND_SCHEMA,
    CONTEXT_GREP_SCHEMA,
    context_expand,
    context_grep,
)
from mnemo.context.markers import strip_fallback_notice
from mnemo.context.prompt import summary_budget
from mnemo.context.pruning import prune_tool_results
from mnemo.errors import MnemoError
from mnemo.messages import Message
from mnemo.sessions import SessionStore
from mnemo.tokens import estimate_message_tokens_rough, estimate_tokens_rough

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
        engine.sessions = SessionStore(home.state_db)
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
            "archive": str(self.sessions.path) if self.sessions is not None else None,
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
        return [dict(CONTEXT_GREP_SCHEMA), dict(CONTEXT_EXPAND_SCHEMA)]

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

    # -- compress -------------------------------------------------------------------------

    def compress(
        self,
        messages: Sequence[Message],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
    ) -> list[Message]:
        _check_messages(messages)
        focus_topic = (focus_topic or "").strip() or None
        self._pending = {}
        n = len(messages)
        original_tokens = [estimate_message_tokens_rough(m) for m in messages]
        tokens_before = sum(original_tokens)
        tokens = list(original_tokens)
        # Step 1: old tool output (the originals stay in the archive).
        pruned_list, pruned = prune_tool_results(messages, tokens, self.tail_token_budget)
        for i in pruned:
            tokens[i] = estimate_message_tokens_rough(pruned_list[i])
        # Steps 2 and 3: the boundaries of the span.
        system_end = system_offset(pruned_list)
        head_end = find_head_end(pruned_list, self.protect_first_n)
        tail_start = find_tail_start(pruned_list, tokens, head_end, self.tail_token_budget)
        kept = [i for i in pruned if not head_end <= i < tail_start]
        inside = [i for i in pruned if head_end <= i < tail_start]
        self._make_tool_nodes(messages, pruned_list, tokens, kept)
        middle = list(messages[head_end:tail_start])
        span = take_apart_span(middle)
        middle_tokens = sum(original_tokens[head_end:tail_start])
        log.log(self._level, "lcm compress start: %d messages, ~%s tokens (reported: %s, "
                "threshold: %s); span: %d messages, ~%s tokens, %d earlier node(s); %d old "
                "tool outputs cleared", n, f"{tokens_before:,}", current_tokens,
                f"{self.threshold_tokens:,}", len(middle), f"{middle_tokens:,}",
                len(span.child_nodes), len(pruned))
        draft = _Draft(messages, tokens_before, pruned, focus_topic, pruned_list, tokens)
        if not span.turns or middle_tokens <= _MIN_MIDDLE_TOKENS:
            draft.skipped_reason = (
                "nothing to summarise: the conversation fits in the protected head and tail"
                if not span.turns else "nothing to summarise: the span is too small to be "
                "worth a summary node")
            return self._pruned_only(draft, inside)
        # Step 4: the summary node, folding in the summaries of the nodes in the span.
        node_id = self._node_id("summary")
        header = summary_node_header(node_id, len(middle), span.child_nodes)
        budget = summary_budget(middle_tokens, self.max_summary_tokens)
        outcome = self._summarise(span.turns, span.previous, focus_topic,
                                  budget - estimate_tokens_rough(header),
                                  self._pre_compress_text(middle), len(middle))
        draft.calls = outcome.calls
        if outcome.body is None:  # auth or network failure: leave everything as it was
            draft.skipped_reason = outcome.skipped
            draft.pruned = []
            return self._finish(draft, [dict(m) for m in messages],  # type: ignore[misc]
                                list(range(n)))
        # Step 5: the list put back together so that an API accepts it (C11, C12).
        out, origins = assemble(pruned_list, system_end, head_end, tail_start,
                                f"{header}\n\n{outcome.body}")
        out, origins, _, draft.stubs = sanitize_tool_pairs(out, origins)
        if draft.count(out, origins) >= sum(tokens):
            draft.skipped_reason = "the summary would not be smaller than the turns it replaces"
            return self._pruned_only(draft, inside)
        self._previous_summary = strip_fallback_notice(outcome.body)
        draft.summary = outcome.body
        draft.fallback = outcome.fallback
        return self._finish(draft, out, origins)

    def _make_tool_nodes(self, messages: Sequence[Message], pruned_list: list[Message],
                         tokens: list[int], indices: list[int]) -> None:
        """Cleared outputs that stay in the context become tool-output nodes (keeping
        the lines that say what failed, as the compressor does)."""
        for i in indices:
            pruned_list[i] = with_tool_node(pruned_list[i], self._node_id("tool_output"))
            tokens[i] = estimate_message_tokens_rough(pruned_list[i])
        self._note_failures(messages, pruned_list, tokens, indices)

    def _pruned_only(self, draft: _Draft, rest: list[int]) -> list[Message]:
        """No summary this time: the outputs cleared inside the span stay too, as nodes."""
        self._make_tool_nodes(draft.messages, draft.pruned_list, draft.tokens, rest)
        return self._finish_pruned_only(draft)

    def _node_id(self, kind: NodeKind) -> str:
        known = self._index.nodes if self._index is not None else {}
        taken = {*known, *self._made, *self._pending}
        node_id = new_node_id(taken)
        self._pending[node_id] = kind
        return node_id

    def _finish(self, draft: _Draft, out: list[Message],
                origins: list[int | None]) -> list[Message]:
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
