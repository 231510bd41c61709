"""What benchmark_round_trips reads from an editor page: the fields a browser posts and the
elements it builds (a <noscript>'s content is text to a browser running scripts)."""

from __future__ import annotations

from tests.bench.round_trips import editor_fields, page_figures

PAGE = (
    '<form data-autosave><input type="hidden" name="version" value="3">'
    '<noscript><select name="who"><option value="">—</option><option value="-1">Ann</option>'
    '<option value="-2" selected>Bob</option></select></noscript>'
    '<select name="who" data-person-picker hidden disabled><option value="">—</option>'
    '<option value="-2" selected>Bob</option></select>'
    '<input type="checkbox" name="targets" value="-1" checked><input type="checkbox" '
    'name="targets" value="-2" disabled checked></form>'
)


def test_page_figures_count_what_a_browser_running_scripts_builds():
    figures = page_figures(PAGE)
    assert figures["bytes"] == len(PAGE.encode())
    # the form, the <noscript> (its select is text), 3 inputs, a select and its 2 options
    assert figures == {**figures, "elements": 8, "select": 1, "option": 2, "input": 3}


def test_editor_fields_are_what_a_browser_posts():
    # A disabled control posts nothing; <noscript> holds the control a browser without scripts
    # shows (and posts).
    assert editor_fields(PAGE) == {"version": "3", "who": "-2", "targets": "-1"}
