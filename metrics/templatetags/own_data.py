"""Tags that drop the own-data cards (and the "auditors disagree" marker) into any template
with one line, reading stored rows only:

    {% load own_data %}
    {% review_savings_card run %}  {% calibration_card run %}  {% interauditor_card %}
    {% auditors_disagree statement %}
"""

from __future__ import annotations

from typing import Any

from django import template

from evalsite.access import is_admin
from metrics.own_data import cards
from metrics.own_data.agreement import statement_disagreement

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


@register.inclusion_tag("metrics/cards/_auditors_disagree.html")
def auditors_disagree(statement) -> dict[str, Any]:
    """The per-statement marker: computed on request from the statement's two or three codings."""
    return {"disagreement": statement_disagreement(statement) if statement else None}
