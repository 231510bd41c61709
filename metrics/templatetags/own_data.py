"""Tags that drop the own-data cards into any template with one line, reading stored rows only:

    {% load own_data %}
    {% whole_family_cards run "run" %}  {% whole_family_cards run "system" %}

The cards are those of the registry's families computed whole (``metrics.registry.WHOLE``) at
that scope, in registry order; a new one needs no new tag.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from metrics.cards import whole_family_card
from metrics.registry import FAMILIES, WHOLE

register = template.Library()


@register.simple_tag(takes_context=True)
def whole_family_cards(context: template.Context, run: Any, scope: str) -> SafeString:
    """Every whole family's card at this scope; admins-only cards for admins only."""
    request = context.get("request")
    user = getattr(request, "user", None)
    html = []
    for name in WHOLE:
        family = FAMILIES[name]
        if family.scope != scope:
            continue
        card = whole_family_card(family, run=run, user=user) if user else None
        # On the dashboard one status poll redraws every card ("watched"): none polls itself.
        own = {"card": card, "watched": context.get("watched", False)}
        html.append(render_to_string(family.card, own, request=request))
    return mark_safe("".join(html))  # the card templates escape what they show
