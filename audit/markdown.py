"""A small, safe Markdown renderer for the coding guidelines (pure Python, no dependency).

The subset: headings (``#`` to ``######``), paragraphs, ``**strong**``, ``*emphasis*`` and
``_emphasis_``, inline ``code``, fenced code blocks (```), bulleted (``-``/``*``) and numbered
(``1.``) lists, horizontal rules (``---``) and links ``[text](https://...)`` with http(s)
addresses only. Everything else is text: every character of the input is HTML-escaped before
any markup is added, so no HTML of the author's ever reaches the page (a ``<script>`` shows as
text, a ``javascript:`` link as its brackets).

``render_markdown`` returns ``Html``, a ``str`` whose ``__html__`` tells templates it is safe:
the renderer, not the author's text, is what is trusted.
"""

from __future__ import annotations

import re
from html import escape

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
BULLET = re.compile(r"^\s{0,3}[-*+]\s+(.*)$")
NUMBERED = re.compile(r"^\s{0,3}\d{1,9}[.)]\s+(.*)$")
RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
FENCE = re.compile(r"^\s{0,3}```")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\[([^\]\n]{1,500})\]\((https?://[^\s()<>\"]{1,2000})\)")
STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
EMPHASIS = re.compile(r"(?<![*\w])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![*\w])")
UNDERSCORE = re.compile(r"(?<![\w])_(?=\S)(.+?)(?<=\S)_(?![\w])")
SLOT = re.compile("\x00(\\d+)\x00")


class Html(str):
    """Markup made by this module from escaped text: safe to put in a page as it is."""

    def __html__(self) -> str:
        return str(self)


def render_inline(text: str) -> str:
    """One line's text with the inline markup; every character of ``text`` escaped."""
    slots: list[str] = []

    def keep(html: str) -> str:
        slots.append(html)
        return f"\x00{len(slots) - 1}\x00"

    text = text.replace("\x00", "")
    # Code spans first (nothing inside them is markup), then links (their addresses are kept
    # whole), then emphasis on what is left.
    text = CODE_SPAN.sub(lambda m: keep(f"<code>{escape(m[1])}</code>"), text)

    def link(match: re.Match) -> str:
        label = _emphasis(escape(match[1]))
        href = escape(match[2], quote=True)
        return keep(f'<a href="{href}" rel="nofollow noopener noreferrer">{label}</a>')

    text = LINK.sub(link, text)
    text = _emphasis(escape(text))
    return SLOT.sub(lambda m: slots[int(m[1])], text)


def _emphasis(escaped: str) -> str:
    escaped = STRONG.sub(r"<strong>\1</strong>", escaped)
    escaped = EMPHASIS.sub(r"<em>\1</em>", escaped)
    return UNDERSCORE.sub(r"<em>\1</em>", escaped)


def render_markdown(source: str) -> Html:
    """The guidelines' Markdown as HTML (see the module's docstring for the subset)."""
    out: list[str] = []
    paragraph: list[tuple[str, bool]] = []  # (line, ends in a hard break)
    items: list[str] = []
    list_tag = ""
    code: list[str] | None = None

    def flush_paragraph() -> None:
        if paragraph:
            # Lines of a paragraph run on (a soft break); two trailing spaces or a backslash
            # end a line with <br>, as in CommonMark.
            parts = [render_inline(text) + ("<br>" if hard else "") for text, hard in paragraph]
            parts[-1] = render_inline(paragraph[-1][0])
            out.append("<p>" + "\n".join(parts) + "</p>")
            paragraph.clear()

    def flush_list() -> None:
        nonlocal list_tag
        if items:
            body = "".join(f"<li>{render_inline(item)}</li>" for item in items)
            out.append(f"<{list_tag}>{body}</{list_tag}>")
            items.clear()
        list_tag = ""

    for line in source.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if code is not None:
            if FENCE.match(line):
                out.append("<pre><code>" + escape("\n".join(code)) + "</code></pre>")
                code = None
            else:
                code.append(line.replace("\x00", ""))
            continue
        if FENCE.match(line):
            flush_paragraph()
            flush_list()
            code = []
            continue
        if not line.strip():
            flush_paragraph()
            flush_list()
            continue
        heading = HEADING.match(line)
        if heading:
            flush_paragraph()
            flush_list()
            level = len(heading[1])
            out.append(f"<h{level}>{render_inline(heading[2])}</h{level}>")
            continue
        if RULE.match(line):
            flush_paragraph()
            flush_list()
            out.append("<hr>")
            continue
        bullet, numbered = BULLET.match(line), NUMBERED.match(line)
        if bullet or numbered:
            flush_paragraph()
            tag = "ul" if bullet else "ol"
            if list_tag and list_tag != tag:
                flush_list()
            list_tag = tag
            items.append((bullet or numbered)[1])  # type: ignore[index]
            continue
        if items:  # an indented continuation of the last item
            if line.startswith((" ", "\t")):
                items[-1] += " " + line.strip()
                continue
            flush_list()
        text = line.strip()
        hard = line.endswith("  ") or text.endswith("\\")
        paragraph.append((text.removesuffix("\\").rstrip(), hard))
    if code is not None:  # an unclosed fence runs to the end
        out.append("<pre><code>" + escape("\n".join(code)) + "</code></pre>")
    flush_paragraph()
    flush_list()
    return Html("\n".join(out))
