"""The editor's long choice lists, written in one pass each: a far statement's editor offers
every earlier item to delete and every known person in each person picker of each event, and
as template loops and partials they cost the editor most of its render (docs/performance.md,
"Speed machinery").

    {% load editor_options %}
    {% options editor.people value %}            <option value="..." selected>label</option>...
    {% options editor.people value multi=True %} selected where the id is in the list `value`
    {% options editor.deletable None show_ids=True %}  label (id)
    {% titled_options titled value %}            <option title="definition">code</option>...
    {% checkboxes name editor.people value %}    <label class="opt"><input type="checkbox" ...

and the editor's fields built on them, one tag call each instead of a partial (an event has a
dozen; a statement's coding about 90 in all):

    {% enum_select name value choices titled invalid=... required=... %}
    {% person_select name editor.people value invalid=... required=... %}
    {% person_checklist name label editor.people value invalid=... %}
    {% people_list editor.people %}              the editor's one list of its people

A page running scripts builds the people once per editor, not once per picker and checklist
(over a hundred of each on a big statement): a picker's select holds only the person chosen
and a checklist only the people ticked; person-picker.js and editor-big.js copy the rest from
`people_list` when they are opened. Without scripts the whole lists are in <noscript>, which a
browser running scripts reads as text.
"""

from __future__ import annotations

import html as stdlib_html
from collections.abc import Iterable
from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


def escape(value: Any) -> str:
    """Django's `escape` without the SafeString it wraps each piece in (the same text, for over
    a thousand options far down a long discussion); the joined result is marked safe once."""
    return stdlib_html.escape(str(value))


def _chosen(ident: Any, value: Any, multi: bool) -> bool:
    """As the template said it: `ident == value`, or `ident in value` for a list."""
    if not multi:
        return bool(ident == value)
    return isinstance(value, (list, tuple, set)) and ident in value


def _mark(on: bool, word: str) -> str:
    return f" {word}" if on else ""


@register.simple_tag
def options(
    items: Iterable[tuple[Any, str]], value: Any, *, multi: bool = False, show_ids: bool = False
) -> SafeString:
    """One <option> per (id, label), the chosen ones selected; `show_ids` adds "(id)"."""
    html = []
    for ident, label in items:
        text = f"{escape(label)} ({escape(ident)})" if show_ids else escape(label)
        chosen = _mark(_chosen(ident, value, multi), "selected")
        html.append(f'<option value="{escape(ident)}"{chosen}>{text}</option>')
    return mark_safe("".join(html))  # every value above is escaped


@register.simple_tag
def titled_options(items: Iterable[tuple[str, str]], value: Any) -> SafeString:
    """One <option> per (choice, title) of a code list, the value's selected; the choice is
    the option's value and text."""
    html = []
    for choice, title in items:
        titled = f' title="{escape(title)}"' if title else ""
        chosen = _mark(value == choice, "selected")
        html.append(f"<option{titled}{chosen}>{escape(choice)}</option>")
    return mark_safe("".join(html))  # every value above is escaped


@register.simple_tag
def checkboxes(name: str, items: Iterable[tuple[Any, str]], value: Any) -> SafeString:
    """One labelled checkbox per (id, label), ticked where the id is in the list `value`."""
    html = []
    for ident, label in items:
        ticked = _mark(_chosen(ident, value, True), "checked")
        html.append(
            f'<label class="opt"><input type="checkbox" name="{escape(name)}" '
            f'value="{escape(ident)}"{ticked}> {escape(label)}</label>'
        )
    return mark_safe("".join(html))  # every value above is escaped


def _attrs(*, invalid: Any = False, required: Any = False) -> str:
    return _mark(bool(invalid), 'aria-invalid="true"') + _mark(bool(required), "required")


@register.simple_tag
def enum_select(
    name: str,
    value: Any,
    choices: Iterable[str],
    titled: Iterable[tuple[str, str]],
    *,
    invalid: Any = False,
    required: Any = False,
) -> SafeString:
    """A code list's select: "—" first unless required; a stored value that is not one of the
    codes (a draft may hold one) stays, selected, so saving does not drop it."""
    blank = "" if required else '<option value="">—</option>'
    stray = f"<option selected>{escape(value)}</option>" if value and value not in choices else ""
    return mark_safe(
        f'<select name="{escape(name)}"{_attrs(invalid=invalid, required=required)}>'
        f"{blank}{titled_options(titled, value)}{stray}</select>"
    )  # every value above is escaped


@register.simple_tag
def people_list(people: Iterable[tuple[Any, str]]) -> SafeString:
    """The editor's people, once: "—" (no one), then each person, as the pickers list them."""
    return mark_safe(
        f'<template data-people><option value="">—</option>{options(people, None)}</template>'
    )  # every value above is escaped


@register.simple_tag
def person_select(
    name: str,
    people: Iterable[tuple[Any, str]],
    value: Any,
    *,
    invalid: Any = False,
    required: Any = False,
) -> SafeString:
    """One person (an event's who, spouse or child; a bond's partner): "—" for no one. Without
    scripts the plain select of everyone (in <noscript>); with them the picker's select, which
    holds the person chosen only and stays disabled (not sent) until person-picker.js takes it."""
    people = list(people)
    name_, attrs = escape(name), _attrs(invalid=invalid, required=required)
    chosen = [(ident, label) for ident, label in people if _chosen(ident, value, False)]
    return mark_safe(
        f'<noscript><select name="{name_}"{attrs}><option value="">—</option>'
        f"{options(people, value)}</select></noscript>"
        f'<select name="{name_}" data-person-picker hidden disabled{attrs}>'
        f'<option value="">—</option>{options(chosen, value)}</select>'
    )  # every value above is escaped


@register.simple_tag
def person_checklist(
    name: str, label: str, people: Iterable[tuple[Any, str]], value: Any, *, invalid: Any = False
) -> SafeString:
    """Several people (an event's relationship targets or triangles): the chosen ones as chips
    in a summary that opens on a searchable checklist; a hidden empty input rides along so
    "nobody" is posted too. The list holds the people ticked, and the others in <noscript>:
    with scripts, editor-big.js lists everyone when it opens."""
    people = list(people)
    name_, label_ = escape(name), escape(label)
    ticked = [(ident, person) for ident, person in people if _chosen(ident, value, True)]
    others = [(ident, person) for ident, person in people if not _chosen(ident, value, True)]
    chips = "".join(f'<span class="chip">{escape(person)}</span>' for _, person in ticked)
    return mark_safe(
        f'<span class="ed-label" id="{name_}-label">{label_}</span>'
        f'<details class="multi" data-multi="{name_}"{_attrs(invalid=invalid)}>'
        f'<summary aria-describedby="{name_}-label"><span class="visually-hidden">{label_}: '
        f'</span><span class="chips">{chips}</span><span class="none muted">none</span></summary>'
        f'<div class="checklist" role="group" aria-labelledby="{name_}-label">'
        f'<input type="search" data-multi-search placeholder="Search people…" '
        f'aria-label="Search people for {label_}">{checkboxes(name, ticked, value)}'
        f"<noscript>{checkboxes(name, others, value)}</noscript></div>"
        f'</details><input type="hidden" name="{name_}" value="">'
    )  # every value above is escaped
