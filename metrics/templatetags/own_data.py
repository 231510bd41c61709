"""Tags that drop the own-data cards into any template with one line, reading stored rows only:

{% load own_data %}
{% review_savings_card run %}  {% calibration_card run %}  {% interauditor_card %}
"""

from __future__ import annotations

from typing import Any

from django import template

from evalsite.access import is_admin
from metrics.own_data import cards

register = template.Library()


@register.inclusion_tag("metrics/cards/_review_savings.html")
def review_savings_card(run) -> dict[str, Any]:
    return {"card": cards.review_savings_card(run) if run else None}


@register.inclusion_tag("metrics/cards/_calibration.html")
def calibration_card(run) -> dict[str, Any]:
    return {"card": cards.calibration_card(run) if run else None}


@register.inclusion_tag("metrics/cards/_interauditor.html", takes_context=True)
def interauditor_card(context) -> dict[str, Any]:
    """Admins only: it names auditors and how well each agrees with the ground truth."""
    request = context.get("request")
    user = getattr(request, "user", None)
    return {"card": cards.interauditor_card() if user and is_admin(user) else None}
