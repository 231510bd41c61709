"""The editor's long choice lists, written in one pass each: a far statement's editor offers
every earlier item to delete (over a thousand in a long discussion) and every known person in
each person picker of each event, and a template loop costs tens of microseconds per option.

    {% load editor_options %}
    {% options editor.people value %}            <option value="..." selected>label</option>...
    {% options editor.people value multi=True %} selected where the id is in the list `value`
    {% options editor.deletable None show_ids=True %}  label (id)
    {% titled_options titled value %}            <option title="definition">code</option>...
    {% checkboxes name editor.people value %}    <label class="opt"><input type="checkbox" ...
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

register = template.Library()


def _chosen(ident: Any, value: Any, multi: bool) -> bool:
    """As the template said it: `ident == value`, or `ident in value` for a list."""
    if not multi:
        return bool(ident == value)
    return isinstance(value, (list, tuple, set)) and ident in value


@register.simple_tag
def options(
    items: Iterable[tuple[Any, str]], value: Any, *, multi: bool = False, show_ids: bool = False
) -> SafeString:
    """One <option> per (id, label), the chosen ones selected; `show_ids` adds "(id)"."""
    shape = (
        '<option value="{}"{}>{} ({})</option>' if show_ids else '<option value="{}"{}>{}</option>'
    )
    return format_html_join(
        "",
        shape,
        (
            (ident, " selected" if _chosen(ident, value, multi) else "", label)
            + ((ident,) if show_ids else ())
            for ident, label in items
        ),
    )


@register.simple_tag
def titled_options(items: Iterable[tuple[str, str]], value: Any) -> SafeString:
    """One <option> per (choice, title) of a code list, the value's selected; the choice is
    the option's value and text."""
    return format_html_join(
        "",
        "<option{}{}>{}</option>",
        (
            (
                format_html(' title="{}"', title) if title else "",
                " selected" if value == choice else "",
                choice,
            )
            for choice, title in items
        ),
    )


@register.simple_tag
def checkboxes(name: str, items: Iterable[tuple[Any, str]], value: Any) -> SafeString:
    """One labelled checkbox per (id, label), ticked where the id is in the list `value`."""
    return format_html_join(
        "",
        '<label class="opt"><input type="checkbox" name="{}" value="{}"{}> {}</label>',
        (
            (name, ident, " checked" if _chosen(ident, value, True) else "", label)
            for ident, label in items
        ),
    )
