"""Threat scanning for text that reaches the model: memory, context files, recalled text.

See ``patterns.py`` for what is detected and ``scanner.py`` for how.
"""

from mnemo.security.patterns import INVISIBLE_CHARS, PATTERN_IDS
from mnemo.security.scanner import MAX_SCAN_CHARS, Finding, Scope, scan

__all__ = ["INVISIBLE_CHARS", "MAX_SCAN_CHARS", "PATTERN_IDS", "Finding", "Scope", "scan"]
