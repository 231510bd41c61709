"""The guidelines' Markdown renderer: CommonMark renders, nothing of the author's HTML does."""

import re

import pytest

from audit.definitions import (
    DIRECTION_DEFINITIONS,
    EVENT_KIND_DEFINITIONS,
    RELATIONSHIP_DEFINITIONS,
    SARF_VARIABLE_DEFINITIONS,
    definitions_markdown,
)
from audit.markdown import Html, render_markdown
from metrics.families.payload.schema import DIRECTIONS, EVENT_KINDS, RELATIONSHIPS, SARF_VARIABLES


def test_the_subset_renders():
    html = render_markdown(
        "# Title\n\nSome **bold**, *em*, _em_ and `code`.\n\n- one\n- two\n\n1. first\n"
        "2. second\n\n```\nx = 1\n```\n\n---\n[the spec](https://example.org/a?b=1&c=2)"
    )
    assert "<h1>Title</h1>" in html
    assert "<strong>bold</strong>" in html and html.count("<em>em</em>") == 2
    assert "<code>code</code>" in html
    assert "<ul>\n<li>one</li>\n<li>two</li>\n</ul>" in html
    assert "<ol>\n<li>first</li>\n<li>second</li>\n</ol>" in html
    assert "<pre><code>x = 1\n</code></pre>" in html and "<hr>" in html
    assert '<a href="https://example.org/a?b=1&amp;c=2" rel="nofollow noopener noreferrer">' in html


def test_quotes_tables_and_site_links_render_too():
    html = render_markdown(
        "> quoted\n\n| code | meaning |\n|---|---|\n| `up` | more |\n\n[home](/)"
    )
    assert "<blockquote>\n<p>quoted</p>\n</blockquote>" in html
    assert "<th>code</th>" in html and "<td><code>up</code></td>" in html
    assert '<a href="/" rel="nofollow noopener noreferrer">home</a>' in html


def test_an_image_is_a_link_to_it_not_a_load():
    html = render_markdown("![the chart](https://e.org/chart.png)")
    assert html == (
        '<p><a href="https://e.org/chart.png" rel="nofollow noopener noreferrer">the chart</a></p>'
    )


def test_a_paragraph_runs_on_across_lines_unless_a_line_ends_in_a_hard_break():
    html = render_markdown("Code what is said, not what\nyou guess.\nA new line  \nand\\\nanother.")
    assert (
        html == "<p>Code what is said, not what\nyou guess.\nA new line<br>\nand<br>\nanother.</p>"
    )


@pytest.mark.parametrize(
    "source",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "[x](javascript:alert(1))",
        '[x](https://e.org/"onmouseover="alert(1))',
        "`<b>` **<i>x</i>**",
        "```\n<script>\n```",
        "# <svg onload=alert(1)>",
        "- <iframe src=//e.org>",
        "[x](vbscript:msgbox(1))",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        "![x](javascript:alert(1))",
        '![x"onerror="alert(1)](https://e.org/a.png)',
        "<a href=javascript:alert(1)>x</a>",
        "[x](JaVaScRiPt:alert(1))",
        "[x](java\tscript:alert(1))",
        "[x]: javascript:alert(1)\n\n[x]",
        "<!-- <script> -->",
        "| <script> | b |\n|---|---|\n| <img src=x onerror=alert(1)> | c |",
    ],
)
def test_no_html_of_the_author_reaches_the_page(source):
    html = render_markdown(source)
    assert "<script" not in html and "<img" not in html and "<iframe" not in html
    assert "<svg" not in html and "<i>" not in html and "<b>" not in html
    assert 'href="javascript' not in html.lower() and 'href="vbscript' not in html.lower()
    assert 'href="data:' not in html and "<!--" not in html
    assert not re.search(r"<[^>]*\son\w+=", html)  # no event handler attribute in any tag


def test_the_result_is_marked_safe_for_templates_and_nul_is_dropped():
    html = render_markdown("a\x00b")
    assert isinstance(html, Html) and html.__html__() == "<p>ab</p>"


def test_code_and_links_keep_their_characters():
    html = render_markdown("`a*b*c` [x](https://e.org/a_b_c*d*)")
    assert "<code>a*b*c</code>" in html
    assert 'href="https://e.org/a_b_c*d*"' in html


def test_snake_case_is_not_emphasis():
    assert "<em>" not in render_markdown("relationship_targets and pair_bonds")


def test_every_code_has_a_definition_and_the_markdown_lists_them():
    assert set(SARF_VARIABLE_DEFINITIONS) == set(SARF_VARIABLES)
    assert set(DIRECTION_DEFINITIONS) == set(DIRECTIONS)
    assert set(RELATIONSHIP_DEFINITIONS) == set(RELATIONSHIPS)
    assert set(EVENT_KIND_DEFINITIONS) == set(EVENT_KINDS)
    text = definitions_markdown()
    for code in [*RELATIONSHIPS, *EVENT_KINDS, *DIRECTIONS]:
        assert f"`{code}`" in text


def test_code_definition_per_field():
    from audit.definitions import code_definition

    assert code_definition("relationship", "cutoff") == RELATIONSHIP_DEFINITIONS["cutoff"]
    assert code_definition("anxiety", "up") == DIRECTION_DEFINITIONS["up"]
    assert code_definition("kind", "shift") == EVENT_KIND_DEFINITIONS["shift"]
    assert code_definition("gender", "male") == ""
