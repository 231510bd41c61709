"""The coding guidelines' Markdown as safe HTML: markdown-it-py renders, nh3 sanitises.

markdown-it-py renders CommonMark (headings, paragraphs, emphasis, code spans and blocks,
lists, block quotes, rules, links) plus GitHub's tables, with raw HTML off: an author's
``<script>`` shows as text. nh3 (the ammonia sanitiser) then keeps only the tags below and
links to http(s), mailto or the site's own pages, each with ``rel="nofollow noopener
noreferrer"``. An image shows as a link to it, named by its alt text: the page loads nothing
from elsewhere (the site's CSP would refuse it anyway). Two independent layers, so a gap in
one is not a hole.

``render_markdown`` returns ``Html``, a ``str`` whose ``__html__`` tells templates it is safe:
the renderer and sanitiser, not the author's text, are what is trusted.
"""

from __future__ import annotations

from functools import cache

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

TAGS = frozenset(
    {"p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "s", "code", "pre"}
    | {"ul", "ol", "li", "blockquote", "a", "table", "thead", "tbody", "tr", "th", "td"}
)
ATTRIBUTES = {"a": {"href"}, "ol": {"start"}, "th": {"style"}, "td": {"style"}}
URL_SCHEMES = frozenset({"http", "https", "mailto"})


class Html(str):
    """Markup made by this module from sanitised HTML: safe to put in a page as it is."""

    def __html__(self) -> str:
        return str(self)


def _image_as_link(
    renderer: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    image = tokens[idx]
    src = str(image.attrGet("src") or "")
    alt = renderer.renderInlineAsText(image.children or [], options, env) or src
    return f'<a href="{escapeHtml(src)}">{escapeHtml(alt)}</a>'


@cache
def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    parser.add_render_rule("image", _image_as_link)
    return parser


def render_markdown(source: str) -> Html:
    """The guidelines' Markdown as HTML (NUL characters dropped, as the editor saves them)."""
    html = _parser().render(source.replace("\x00", ""))
    cleaned = nh3.clean(
        html,
        tags=set(TAGS),
        attributes={tag: set(names) for tag, names in ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        link_rel="nofollow noopener noreferrer",
        filter_style_properties={"text-align"},
        strip_comments=True,
    )
    return Html(cleaned.strip())
