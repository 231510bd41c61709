"""Whether a statement's auditors disagree: their codings compared pair by pair with the
library's extraction F1 and the deployment's match settings, on request for the one statement
the review screen shows (two or three small payloads, never stored)."""

from __future__ import annotations

from itertools import combinations
from typing import Any

from audit.models import Feedback, Speaker
from evalsite.match_settings import match_settings
from metrics.families.extraction import calculate_statement_f1
from metrics.families.interauditor import symmetric_mean


def statement_disagreement(*, statement_id: int) -> dict[str, Any] | None:
    """None when fewer than two auditors coded the statement or they all agree (symmetric
    F1 = 1 for every pair); else {"f1": the lowest pair's symmetric F1, "n_auditors",
    "auditors": usernames, "pairs": [{auditor_a, auditor_b, f1}]}."""
    # The codings as they are now (what the reviewer and an adjudication see), in auditor id
    # order, so each pair's first auditor is the one with the smaller id.
    codings = list(
        Feedback.objects.filter(
            statement_id=statement_id,
            status__in=(Feedback.Status.SUBMITTED, Feedback.Status.APPROVED),
            statement__speaker__type=Speaker.Type.SUBJECT,
            adjudication__isnull=True,  # a merge of codings is not another coder
        )
        .order_by("auditor_id")
        .values_list("auditor_id", "auditor__username", "edited_extraction")
    )
    if len({auditor_id for auditor_id, _, _ in codings}) < 2:
        return None
    pairs = [
        {"auditor_a": a[1], "auditor_b": b[1], "f1": _symmetric_f1(a[2], b[2])}
        for a, b in combinations(codings, 2)
    ]
    lowest = min(pair["f1"] for pair in pairs)
    if lowest >= 1.0:
        return None
    return {
        "f1": lowest,
        "n_auditors": len(codings),
        "auditors": sorted(name for _, name, _ in codings),
        "pairs": pairs,
    }


def _symmetric_f1(a: dict | None, b: dict | None) -> float:
    """The mean of F1(a→b) and F1(b→a): each coding scored with the other as the reference."""
    settings = match_settings()
    ab = calculate_statement_f1(a, b, settings=settings).aggregate_micro_f1
    ba = calculate_statement_f1(b, a, settings=settings).aggregate_micro_f1
    mean = symmetric_mean(ab, ba)
    if mean is None:  # F1 scores are finite by construction; refuse to rank a broken one
        raise ValueError("non-finite F1 between two codings of one statement")
    return mean
