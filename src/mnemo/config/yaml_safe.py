"""Parsing ``config.yaml`` with bounds, so a hostile or broken file fails fast.

PyYAML's safe loader already refuses arbitrary objects, but two shapes still cost far
more than the file's size: an *alias bomb* (``b: [*a, *a, …]``, ``c: [*b, *b, …]`` —
a few hundred bytes that expand to billions of nodes when anything walks the result)
and nesting so deep that the recursive composer overflows the stack. A config file
needs neither, so the document is composed first and measured before anything is
built from it: at most ``MAX_DEPTH`` levels, ``MAX_ALIASES`` alias uses, and
``MAX_NODES`` nodes counting every alias as the size of what it points to (counted with
memoisation, so the measurement itself stays linear in the file).

Errors are ``YamlTooComplex`` (a ``ValueError``) with a one-line reason; the loader
turns them into ``ConfigError``.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["MAX_ALIASES", "MAX_DEPTH", "MAX_NODES", "YamlTooComplex", "safe_load_bounded"]

MAX_NODES = 100_000
MAX_ALIASES = 100
MAX_DEPTH = 64
MAX_BYTES = 1_000_000


class YamlTooComplex(ValueError):
    """The document is larger, deeper or more aliased than a config file can be."""


class _BoundedLoader(yaml.SafeLoader):
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise YamlTooComplex(f"more than {MAX_ALIASES} aliases (*name); a config "
                                     "file needs few, if any")
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise YamlTooComplex(f"nested more than {MAX_DEPTH} levels deep")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """Nodes in ``node`` with every alias expanded, without expanding anything."""
    known = memo.get(id(node))
    if known is not None:
        return known
    memo[id(node)] = 1  # a node reached again while being measured: count it once
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    memo[id(node)] = size
    if size > MAX_NODES:
        raise YamlTooComplex(f"it expands to more than {MAX_NODES:,} values (an alias "
                             "bomb?); write the values out instead of nesting aliases")
    return size


def safe_load_bounded(text: str) -> Any:
    """``yaml.safe_load`` within the bounds above; raises ``YamlTooComplex`` or YAMLError."""
    if len(text) > MAX_BYTES:
        raise YamlTooComplex(f"it is {len(text):,} characters long; a config file is a "
                             f"few kilobytes (at most {MAX_BYTES:,})")
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, {})
        return loader.construct_document(node)
    finally:
        loader.dispose()
